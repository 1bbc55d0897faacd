"""DeepLog model inputs: vocabulary, padding and masking, the balanced subset, and clear errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest

from pate_study.data import deeplog


def _vocab():
    return deeplog.build_vocabulary([np.array([5, 22, 5]), np.array([9, 11])], [np.array([26])])


def test_vocabulary_encodes_keys_from_one_and_round_trips():
    v = _vocab()
    assert v.keys == (5, 9, 11, 22, 26) and v.size == 5
    np.testing.assert_array_equal(v.encode([22, 5, 26]), [4, 1, 5])
    np.testing.assert_array_equal(v.decode(v.encode([22, 5, 26])), [22, 5, 26])
    with pytest.raises(ValueError, match="0 is padding"):
        v.decode([0, 1])


def test_padding_and_mask():
    v = _vocab()
    p = deeplog.pad_sequences([np.array([5, 22, 5]), np.array([9])], v, max_len=4)
    np.testing.assert_array_equal(p.tokens, [[1, 4, 1, 0], [2, 0, 0, 0]])
    np.testing.assert_array_equal(p.lengths, [3, 1])
    np.testing.assert_array_equal(p.mask, [[True, True, True, False], [True, False, False, False]])
    # a sequence exactly at the limit is accepted and fills the row
    full = deeplog.pad_sequences([np.array([5, 9, 11, 26])], v, max_len=4)
    assert full.mask.all() and (full.tokens > 0).all()


@pytest.mark.parametrize(
    "seqs, max_len, match",
    [
        ([np.array([5, 9]), np.array([], dtype=np.int64)], 4, r"sequence 1: empty"),
        ([np.array([5, 99])], 4, r"sequence 0: unknown log key 99"),
        ([np.array([5, 9, 11, 22, 26])], 4, r"sequence 0: length 5 exceeds the model limit max_len=4"),
        ([np.array([5])], 0, r"max_len"),
    ],
)
def test_bad_input_gives_a_clear_error(seqs, max_len, match):
    with pytest.raises(ValueError, match=match):
        deeplog.pad_sequences(seqs, _vocab(), max_len=max_len)


def test_empty_vocabulary_is_an_error():
    with pytest.raises(ValueError, match="no log keys"):
        deeplog.build_vocabulary([np.array([], dtype=np.int64)])


def test_balanced_subset_is_balanced_shuffled_and_drops_long_sessions():
    normal = [np.array([5] * n) for n in (3, 4, 5, 60)]
    abnormal = [np.array([9] * n) for n in (2, 3, 70, 80, 4)]
    s = deeplog.balanced_subset(normal, abnormal, 6, max_len=10, seed=0)
    assert len(s.sequences) == 6 and s.labels.sum() == 3
    assert s.excluded_normal == 1 and s.excluded_abnormal == 2
    assert all(len(x) <= 10 for x in s.sequences)
    assert all((x[0] == 9) == bool(y) for x, y in zip(s.sequences, s.labels))  # labels follow their sequences
    again = deeplog.balanced_subset(normal, abnormal, 6, max_len=10, seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(s.sequences, again.sequences))
    with pytest.raises(ValueError, match="only 3 available"):
        deeplog.balanced_subset(normal, abnormal, 8, max_len=10, seed=0)
    with pytest.raises(ValueError, match="even number"):
        deeplog.balanced_subset(normal, abnormal, 5, max_len=10, seed=0)
