"""The target's splits of the eval clips (query pool, validation, reporting) and the sealed reporting labels."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pate_study.experiments.audioset.data import query_test_split
from pate_study.experiments.audioset.target_splits import SealedLabels, TargetSplits, target_splits


def _paper_split(seed=2026):
    pool, test = query_test_split(7722, min_pool=5000, pool_fraction=0.5, seed=0)
    return pool, test, target_splits(7722, pool, reporting_fraction=0.35, validation_fraction=0.13, seed=seed)


def test_the_reporting_split_comes_from_the_former_pool_and_the_splits_cover_every_clip_once():
    pool, test, s = _paper_split()
    assert s.sizes() == {"query": 4015, "validation": 1004, "reporting": 2703}
    assert np.isin(s.reporting, pool).all()  # never a clip of the former test set, which earlier choices read
    every = np.concatenate([s.query, s.validation, s.reporting])
    assert np.array_equal(np.sort(every), np.arange(7722))
    # fixed by the seed; another seed draws other clips
    assert np.array_equal(s.reporting, _paper_split()[2].reporting)
    assert not np.array_equal(s.reporting, _paper_split(seed=1)[2].reporting)


def test_split_bad_input_is_refused_in_one_line():
    pool = np.arange(100)
    with pytest.raises(ValueError, match="reporting_fraction"):
        target_splits(1000, pool, reporting_fraction=0.2, validation_fraction=0.1, seed=0)  # 200 > 100
    with pytest.raises(ValueError, match="validation_fraction"):
        target_splits(1000, pool, reporting_fraction=0.05, validation_fraction=1.5, seed=0)
    with pytest.raises(ValueError, match="earlier_pool"):
        target_splits(50, pool, reporting_fraction=0.1, validation_fraction=0.1, seed=0)
    with pytest.raises(ValueError, match="overlap"):
        TargetSplits(np.arange(3), np.arange(2, 5), np.arange(5, 6), 0)


@dataclasses.dataclass(frozen=True)
class _Final:
    final: bool = True


def test_sealed_labels_open_only_with_the_final_selection():
    y = np.eye(4, dtype=bool)
    sealed = SealedLabels(y, _Final)
    for not_final in (None, "final", _Final(final=False), object()):
        with pytest.raises(PermissionError, match="selection is final"):
            sealed.open(not_final)
    assert sealed.opened == 0 and "4 clips" in repr(sealed) and "True" not in repr(sealed)
    got = sealed.open(_Final())
    assert np.array_equal(got, y) and sealed.opened == 1
    with pytest.raises(ValueError):
        got[0, 0] = False  # read-only
