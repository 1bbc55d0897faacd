"""DeepLog synthetic-sequence study: Hamming distance on crafted pairs, listing location, generators keep
lengths and padding, models mask padding, and the guarantee table's arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from pate_study.core.contract import ContractError
from pate_study.data import DataSource
from pate_study.data import deeplog as deeplog_data
from pate_study.experiments import deeplog as ex
from pate_study.experiments.deeplog import generators as dg
from pate_study.experiments.deeplog import verdicts as dv
from pate_study.learning.sequence_models import Seq2SeqAutoencoder, SequenceClassifier
from pate_study.privacy.mechanisms import exponential_mechanism_log_probs
from pate_study.reporting import uncertainty as unc


def test_normalised_hamming_on_crafted_pairs():
    a = np.array([[1, 2, 3, 4, 0, 0], [5, 5, 0, 0, 0, 0], [1, 2, 3, 4, 5, 6]])
    b = np.array([[1, 9, 3, 9, 0, 0], [5, 5, 0, 0, 0, 0], [6, 5, 4, 3, 2, 1]])
    d = ex.normalised_hamming(a, b, np.array([4, 2, 6]))
    np.testing.assert_allclose(d, [0.5, 0.0, 1.0])
    # padding is ignored even when it differs
    b2 = b.copy()
    b2[1, 3] = 7
    assert ex.normalised_hamming(a, b2, np.array([4, 2, 6]))[1] == 0.0
    with pytest.raises(ValueError, match="same shape"):
        ex.normalised_hamming(a, b[:, :5], np.array([4, 2, 6]))
    with pytest.raises(ValueError, match="lengths"):
        ex.normalised_hamming(a, b, np.array([4, 0, 6]))


def test_token_edit_distance():
    assert ex.token_edit_distance([1, 2, 3], [1, 2, 3]) == 0
    assert ex.token_edit_distance("23 23 21".split(), "23 21".split()) == 1
    assert ex.token_edit_distance([], [1, 2]) == 2


def test_locate_listing_finds_the_block_and_flags_a_dropped_token():
    sessions = [np.array(s) for s in ([1, 2], [3, 4, 5], [6, 7], [3, 4, 5], [8])]
    published = [{"sequence": "3 4 5"}, {"sequence": "6"}, {"sequence": "3 4 5"}]
    t = ex.locate_listing(published, sessions, [np.array([6])])
    assert list(t["file_row"]) == [1, 2, 3]
    assert list(t["exact"]) == [True, False, True]
    assert list(t["token_edit_distance"]) == [0, 1, 0]
    assert list(t["occurrences_in_file"]) == [2, 0, 2] and t["occurrences_in_other_file"][1] == 1
    none = ex.locate_listing([{"sequence": "9 9"}], sessions, [])  # not in the file: compared with the first rows
    assert list(none["file_row"]) == [0] and not none["exact"].any()


def _padded(rows, max_len=6):
    vocab = deeplog_data.Vocabulary(tuple(range(1, 6)))
    return deeplog_data.pad_sequences([np.array(r) for r in rows], vocab, max_len)


def test_per_symbol_generators_keep_length_and_padding():
    p = _padded([[1, 2, 3], [5, 5, 5, 5, 5, 5], [4]])
    lp = exponential_mechanism_log_probs(ex.cosine_utility(np.eye(5)), epsilon=1.0, sensitivity=2.0)
    y = ex.per_symbol_sequences(lp, p, np.random.default_rng(0))
    assert ((y > 0) == p.mask).all() and y.max() <= 5
    # at a huge ε the exponential mechanism on cosine similarity returns the symbol itself
    lp_big = exponential_mechanism_log_probs(ex.cosine_utility(np.eye(5)), epsilon=1e4, sensitivity=2.0)
    np.testing.assert_array_equal(ex.per_symbol_sequences(lp_big, p, np.random.default_rng(0)), p.tokens)


def test_measured_sensitivity_of_a_cosine_table_is_at_most_two():
    rng = np.random.default_rng(0)
    u = ex.cosine_utility(rng.normal(size=(28, 16)))
    assert np.allclose(np.diag(u), 1.0) and 0 < ex.measured_sensitivity(u) <= 2.0
    opposite = ex.cosine_utility(np.array([[1.0, 0.0], [-1.0, 0.0]]))
    assert ex.measured_sensitivity(opposite) == pytest.approx(2.0)


def test_models_ignore_padding():
    torch.manual_seed(0)
    clf = SequenceClassifier(5, embedding_dim=4, hidden=6, cell="gru").eval()
    ae = Seq2SeqAutoencoder(5, embedding_dim=4, hidden=6).eval()
    short = torch.tensor([[1, 2, 3, 0, 0, 0]])
    longer = torch.tensor([[1, 2, 3, 0, 0, 0, 0, 0, 0]])
    with torch.no_grad():
        assert torch.allclose(clf(short), clf(longer))
        z = ae.encode(short)
        assert torch.allclose(z, ae.encode(longer))
        assert float(z.abs().sum()) == pytest.approx(1.0, abs=1e-6)  # unit-l1 latent
        assert ae(short).shape == (1, 6, 5)  # one row of K logits per input position
    with pytest.raises(ValueError, match="empty sequence"):
        clf(torch.tensor([[0, 0, 0]]))
    with pytest.raises(ValueError, match="cell"):
        SequenceClassifier(5, cell="transformer")


def test_latent_generators_keep_length_and_padding():
    torch.manual_seed(0)
    ae = Seq2SeqAutoencoder(5, embedding_dim=4, hidden=6).eval()
    p = _padded([[1, 2, 3], [5, 5, 5, 5, 5, 5], [4]])
    probs = ex.output_probabilities(ae, p)
    assert probs.shape == (3, 6, 5) and np.allclose(probs.sum(-1), 1.0)
    for y in (
        ex.noisy_latent_sequences(ae, p, 1.0, np.random.default_rng(0)),
        ex.exponential_output_sequences(probs, p.lengths, 1.0, np.random.default_rng(0)),
        ex.noisy_output_sequences(probs, p.lengths, 1.0, np.random.default_rng(0)),
    ):
        assert y.shape == p.tokens.shape and ((y > 0) == p.mask).all() and y.max() <= 5


def test_only_what_is_released_is_computed():
    """The savings are exact: a causal decoder's first L steps do not depend on how many steps follow (so groups
    are decoded to their own longest length), a row-wise function over distinct rows in length order equals it
    over every row, and the drawn sequences keep each released length."""
    torch.manual_seed(0)
    ae = Seq2SeqAutoencoder(5, embedding_dim=4, hidden=6).eval()
    z = np.abs(np.random.default_rng(0).normal(size=(4, 6)))
    z /= z.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(dg.decode_log_probs(ae, z, 7)[:, :3], dg.decode_log_probs(ae, z, 3), atol=1e-12)
    tokens = _padded([[1, 2, 3], [5, 5, 5, 5, 5, 5], [1, 2, 3], [4]]).tokens
    clf = SequenceClassifier(5, embedding_dim=4, hidden=6).eval()
    np.testing.assert_array_equal(ex.runs.classify_unique(clf, tokens), ex.models.classify(clf, tokens))
    lengths = np.array([6, 1, 3, 2])
    y = dg.decoded_draws(ae, z, lengths, 6, np.random.default_rng(0))
    assert y.shape == (4, 6) and ((y > 0) == deeplog_data.padding_mask(lengths, 6)).all()


def test_guarantee_table_arithmetic():
    u = ex.cosine_utility(np.random.default_rng(1).normal(size=(6, 3)))
    g = ex.guarantee_table(
        [1.0, 10.0],
        lengths=np.array([10, 20, 30]),
        vocabulary_size=6,
        idea1_utility=u,
        measured_delta_u=ex.measured_sensitivity(u),
        latent_dim=8,
    ).set_index(["idea", "epsilon"])
    assert g.attrs["median_length"] == 20 and g.attrs["max_length"] == 30
    krr = g.loc[(ex.KRR, 10.0)]
    assert krr["epsilon_symbol"] == pytest.approx(10.0) and krr["epsilon_released_test_set"] == pytest.approx(300.0)
    assert krr["epsilon_sequence_median_length"] == pytest.approx(200.0)
    idea2 = g.loc[(ex.IDEA2, 1.0)]
    assert idea2["epsilon_symbol"] == pytest.approx(30.0) and idea2["epsilon_released_test_set"] == pytest.approx(30.0)
    for idea in (ex.IDEA3, ex.IDEA5):
        row = g.loc[(idea, 10.0)]
        assert row["epsilon_released_test_set"] == pytest.approx(10.0) and row["epsilon_symbol"] == pytest.approx(10.0)
    assert g.loc[(ex.IDEA4, 10.0)]["epsilon_released_test_set"] == pytest.approx(300.0)
    # the exponential mechanism's exact per-symbol ε never exceeds its nominal ε
    for idea in (ex.IDEA1_MEASURED, ex.IDEA1_ANALYTIC):
        assert (g.loc[idea]["epsilon_symbol"] <= g.loc[idea].index.values + 1e-12).all()
    # k-RR uses no trained model: the training split is not touched (ε = 0); every other idea trains on it (∞)
    assert g.loc[ex.KRR]["epsilon_training_sequences"].eq(0).all()
    assert (g.drop(index=ex.KRR, level="idea")["epsilon_training_sequences"] == math.inf).all()
    # adjacencies: Hamming 1 costs ε for per-symbol mechanisms (not L·ε), L·ε when every position reads the sequence;
    # the length is released, so replace-one of any length is ∞ for every idea
    assert krr["epsilon_hamming1_test_set"] == pytest.approx(10.0)
    assert krr["epsilon_replace_one_same_length"] == pytest.approx(300.0)
    assert g.loc[(ex.IDEA2, 1.0)]["epsilon_hamming1_test_set"] == pytest.approx(30.0)
    assert (g["epsilon_replace_one_any_length"] == math.inf).all()
    # the thesis's order (noise, then normalise): Δ₁ ≤ 2·latent_dim for a tanh state, ε' = latent_dim·ε
    assert g.loc[(ex.IDEA3, 10.0)]["epsilon_sequence_thesis_order"] == pytest.approx(80.0)
    assert np.isnan(g.loc[(ex.KRR, 10.0)]["epsilon_sequence_thesis_order"])
    summary = ex.guarantee_summary(g.reset_index())
    assert list(summary["idea"]) == list(ex.IDEAS)
    assert summary.set_index("idea").loc[ex.KRR, "training sequences"] == "ε = 0 (not used)"


def test_the_guarantee_over_model_seeds_is_the_worst_seeds():
    """Idea 1's mechanism is built on each seed's embedding, so its exact ε differs by seed: the table keeps the
    largest, which holds for every seed's mechanism; the other ideas do not depend on the seed."""
    rng = np.random.default_rng(0)
    tables = []
    for _ in range(2):
        u = ex.cosine_utility(rng.normal(size=(5, 3)))
        tables.append(
            ex.guarantee_table(
                [1.0, 10.0],
                lengths=np.array([3, 5]),
                vocabulary_size=5,
                idea1_utility=u,
                measured_delta_u=ex.measured_sensitivity(u),
                latent_dim=4,
            )
        )
    worst = ex.worst_over_seeds(tables)
    column = "epsilon_symbol"
    np.testing.assert_array_equal(worst[column], np.maximum(tables[0][column], tables[1][column]))
    assert not np.array_equal(tables[0][column], tables[1][column])  # the seeds' Idea 1 differ
    krr = worst["idea"] == ex.KRR
    np.testing.assert_array_equal(worst.loc[krr, column], tables[0].loc[krr, column])
    assert worst.attrs == tables[0].attrs
    # each seed's own test split has its own lengths: the worst guarantee is at the longest
    longer = ex.guarantee_table(
        [1.0, 10.0],
        lengths=np.array([3, 7]),
        vocabulary_size=5,
        idea1_utility=u,
        measured_delta_u=ex.measured_sensitivity(u),
        latent_dim=4,
    )
    assert ex.worst_over_seeds([tables[0], longer]).attrs["max_length"] == 7
    with pytest.raises(ValueError, match="same ideas"):
        ex.worst_over_seeds([tables[0], tables[1].iloc[::-1]])


def _summary(rows):
    return pd.DataFrame(rows, columns=["idea", "epsilon", "accuracy", "hamming"])


def _runs(eps, acc, ham, jitter=(0.0,), ideas=ex.IDEAS):
    """One row per idea, ε and repeat; repeat r shifts accuracy and Hamming by ``jitter[r]`` (a noise draw)."""
    return pd.DataFrame(
        [(i, e, r, a + j, h - j) for i in ideas for e, a, h in zip(eps, acc, ham) for r, j in enumerate(jitter)],
        columns=["idea", "epsilon", "repeat", "accuracy", "hamming"],
    )


EPS = [1.0, 10.0, 30.0, 100.0, 1000.0]
HAM = [0.95, 0.9, 0.2, 0.1, 0.0]
JITTER = (-0.002, 0.0, 0.002)


def _draws(eps, acc, ham, *, sd=0.002, n_seeds=3, n_draws=3, ideas=ex.IDEAS, seed=0):
    """One row per idea, ε, model seed and noise draw: the given mean accuracy and Hamming distance plus independent
    normal noise (``sd``) per row, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    rows = [
        (i, e, s, r, a + rng.normal(0, sd), h + rng.normal(0, sd))
        for i in ideas
        for e, a, h in zip(eps, acc, ham)
        for s in range(n_seeds)
        for r in range(n_draws)
    ]
    return pd.DataFrame(rows, columns=["idea", "epsilon", "model_seed", "repeat", "accuracy", "hamming"])


def _copies(runs, n_seeds=3):
    """``runs`` (one seed) repeated for ``n_seeds`` model seeds with the same values."""
    return pd.concat([runs.assign(model_seed=s) for s in range(n_seeds)], ignore_index=True)


def test_fig43_claims_agree_when_every_interval_is_on_the_thesis_side():
    runs = _draws(EPS, [0.49, 0.49, 0.94, 0.95, 0.998], HAM)
    v = ex.idea_verdicts(runs, control_accuracy=0.998, highlighted_epsilon=100.0)["visca2021-fig4.3"]
    assert v.verdict == "agrees" and "t-interval of cluster means" in v.evidence and "not replicated" not in v.evidence
    assert "replicates of model training seed, balanced subset and its train/validation/test split" in v.evidence
    assert "whole grid (ε ≤ 1000): inconclusive" in v.reason  # at ε = 1000 the gap to the control is 0 ± noise


def test_fig43_differs_when_the_gap_to_the_control_is_exactly_zero():
    """Idea 1 at ε = 100 returns the original symbols: accuracy equals the control's in every draw, a gap of exactly
    0 [0, 0]: the strict "lower than the control" is false there, so the claim differs (a tie decided by the strict
    claim; the previous rule left it inconclusive)."""
    runs = _copies(_runs(EPS, [0.49, 0.49, 0.94, 0.998, 0.998], HAM, (0.0, 0.0, 0.0)))
    v = ex.idea_verdicts(runs, control_accuracy=0.998, highlighted_epsilon=100.0)["visca2021-fig4.3"]
    assert v.verdict == "differs" and "below the control: differs" in v.reason and "ε = 100: differs" in v.reason
    assert "a tie at the boundary differs (strict)" in v.rule
    assert "all three agree on ε ≤ 30 at most" in v.reason


def test_fig43_summary_shows_each_claim_on_every_range_not_only_the_combined_cut():
    """The rises/falls claims compare a range's two ends, so they can fail on a sub-range where the per-step "below
    the control" still agrees: the summary names each claim's verdict per range (ε ≤ 10, 30, 100, 1000)."""
    runs = _draws(EPS, [0.49, 0.5, 0.49, 0.95, 0.998], HAM)
    v = ex.idea_verdicts(runs, control_accuracy=0.998, highlighted_epsilon=100.0)["visca2021-fig4.3"]
    assert "each claim on ε ≤ 10, 30, 100, 1000 (from ε = 1)" in v.reason
    assert "accuracy rises: agrees, inconclusive, agrees, agrees" in v.reason
    assert "Hamming falls: agrees, agrees, agrees, agrees" in v.reason
    assert "below the control: agrees, agrees, agrees, inconclusive" in v.reason
    assert "all three agree on ε ≤ 100 at most" in v.reason


def test_findings_phrases_read_the_ends_the_peak_and_the_seed_of_the_floor():
    s = _summary([(ex.IDEA4, 0.1, 0.478, 0.6), (ex.IDEA4, 30.0, 0.796, 0.3), (ex.IDEA4, 3000.0, 0.784, 0.2)])
    assert ex.accuracy_course(s, ex.IDEA4) == "rises from 0.478 at ε = 0.1 to 0.784 at ε = 3000 (peak 0.796 at ε = 30)"
    peak_last = _summary([(ex.IDEA4, 0.1, 0.5, 0.6), (ex.IDEA4, 30.0, 0.7, 0.3)])
    assert ex.accuracy_course(peak_last, ex.IDEA4) == "rises from 0.500 at ε = 0.1 to 0.700 at ε = 30"
    below = _summary([(ex.IDEA2, 1.0, 0.5, 0.5), (ex.IDEA2, 100.0, 0.792, 0.163)])
    note = ex.reconstruction_note(0.212, below, ex.IDEA2, 100.0)
    assert "model seed 0's" in note and "0.212" in note and "0.163, is below it, so it is no floor" in note
    assert "floor for every" not in note
    above = _summary([(ex.IDEA2, 1.0, 0.5, 0.5), (ex.IDEA2, 100.0, 0.792, 0.25)])
    assert "0.250, is not below it" in ex.reconstruction_note(0.212, above, ex.IDEA2, 100.0)


def test_fig47_names_its_trend_statistic():
    runs = _runs(EPS, [0.5, 0.6, 0.7, 0.8, 0.9], HAM, JITTER)
    v = ex.idea_verdicts(runs, control_accuracy=0.99)["visca2021-fig4.7"]
    assert "Spearman's rho of the mean with the release ε: accuracy +1.00, Hamming -1.00" in v.reason


def test_fig43_differs_when_the_idea_beats_the_control_in_every_draw():
    runs = _copies(_runs(EPS, [0.49, 0.49, 0.94, 0.999, 0.999], HAM, (0.0, 0.0005, 0.001)))
    v = ex.idea_verdicts(runs, control_accuracy=0.998, highlighted_epsilon=100.0)["visca2021-fig4.3"]
    assert v.verdict == "differs" and "below the control: differs" in v.reason


def test_one_model_seed_decides_nothing_its_seed_and_subset_left_out():
    """One model seed (one subset and split): the intervals cover the noise draws only, and leave out the training
    seed and the data's draw that every claim depends on, so no claim is decided, even where the draws agree."""
    runs = _runs(EPS, [0.49, 0.49, 0.94, 0.95, 0.998], HAM, JITTER)
    v = ex.idea_verdicts(runs, control_accuracy=0.998, highlighted_epsilon=100.0)["visca2021-fig4.3"]
    assert v.verdict == "inconclusive" and "leaves out model training seed, balanced subset" in v.reason
    fig44 = ex.idea_verdicts(runs, control_accuracy=0.998)["visca2021-fig4.4"]  # 0.1 vs 0.4: far, yet not decided
    assert fig44.verdict == "inconclusive" and "leaves out model training seed" in fig44.reason


def test_fig46_claims_agree_when_both_fall_and_differ_when_accuracy_rises():
    falls = _draws(EPS, [0.9, 0.8, 0.7, 0.6, 0.5], HAM)
    assert ex.idea_verdicts(falls, control_accuracy=0.99)["visca2021-fig4.6"].verdict == "agrees"
    rises = _draws(EPS, [0.5, 0.6, 0.7, 0.8, 0.9], HAM)
    v = ex.idea_verdicts(rises, control_accuracy=0.99)["visca2021-fig4.6"]
    assert v.verdict == "differs" and "accuracy falls: differs" in v.reason and "Hamming falls: agrees" in v.reason
    assert "accuracy rises as ε grows" in v.reason


def test_fig44_claim_agrees_above_04_and_differs_below_on_its_interval():
    above = _draws(EPS, [0.5] * 5, [0.9, 0.8, 0.7, 0.6, 0.5])
    assert ex.idea_verdicts(above, control_accuracy=0.99)["visca2021-fig4.4"].verdict == "agrees"
    below = _draws(EPS, [0.5] * 5, [0.9, 0.8, 0.7, 0.2, 0.2])
    v = ex.idea_verdicts(below, control_accuracy=0.99)["visca2021-fig4.4"]
    assert v.verdict == "differs" and "reconstruction error" in v.reason and "t-interval" in v.evidence
    edge = _draws(EPS, [0.5] * 5, [0.9, 0.8, 0.7, 0.42, 0.42])  # 0.42 ± noise inside 0.4's printed ± 0.05
    assert ex.idea_verdicts(edge, control_accuracy=0.99)["visca2021-fig4.4"].verdict == "inconclusive"


def test_fig45_claim_agrees_at_half_and_differs_above_at_every_step():
    half = _draws([0.1, 1.0, 100.0], [0.5] * 3, [0.5] * 3, sd=0.0005)
    assert ex.idea_verdicts(half, control_accuracy=0.99)["visca2021-fig4.5"].verdict == "agrees"
    lifted = _draws([0.1, 1.0, 100.0], [0.5, 0.5, 0.6], [0.5] * 3, sd=0.0005)
    v = ex.idea_verdicts(lifted, control_accuracy=0.99)["visca2021-fig4.5"]
    assert v.verdict == "differs" and "per step: ε = 0.1: agrees, ε = 1: agrees, ε = 100: differs" in v.reason


def test_fig45_reason_uses_the_length_permutation_and_fig47_is_not_comparable():
    rows = _draws([0.1, 1.0, 100.0], [0.6] * 3, [0.5] * 3)
    lt = pd.DataFrame(
        {("mean", "original lengths"): [0.49, 0.62, 0.6], ("mean", "permuted lengths"): [0.5, 0.51, 0.5]},
        index=[ex.KRR, ex.IDEA3, ex.IDEA5],
    )
    v = ex.idea_verdicts(rows, control_accuracy=0.99, length_test=lt)
    assert (
        v["visca2021-fig4.5"].verdict == "differs" and "carried by the released length" in v["visca2021-fig4.5"].reason
    )
    lt[("mean", "permuted lengths")] = [0.5, 0.62, 0.6]
    v = ex.idea_verdicts(rows, control_accuracy=0.99, length_test=lt)
    assert "not the length" in v["visca2021-fig4.5"].reason
    assert v["visca2021-fig4.7"].verdict == "not comparable"


def _seeded_runs(eps, acc, ham, shifts, jitter=JITTER, ideas=ex.IDEAS):
    """:func:`_runs` once per model seed ``s``, its accuracy and Hamming shifted by ``shifts[s]`` (the seed's
    effect, shared by all its draws), with a ``model_seed`` column."""
    return pd.concat(
        [
            _runs(eps, [a + d for a in acc], [h - d for h in ham], jitter, ideas).assign(model_seed=s)
            for s, d in enumerate(shifts)
        ],
        ignore_index=True,
    )


SHIFTS = (-0.001, 0.0, 0.001)


def test_cluster_means_interval_is_the_t_interval_of_the_seed_means():
    values = np.array([0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.2, 0.2, 0.2])
    seeds = np.repeat([0, 1, 2], 3)
    est = dv._cluster_means_interval(values, seeds)
    ref = unc.t_interval([0.2, 0.6, 0.2], dv.IDEA_SOURCES)
    assert (est.value, est.low, est.high, est.n_replicates) == pytest.approx((ref.value, ref.low, ref.high, 3))
    assert est.sources == (dv.MODEL_SEED, dv.DATA_SPLIT, unc.RELEASE_NOISE) and not est.unreplicated
    assert est.cluster_sources == dv.SEED_SOURCES and est.n_units == 9
    one = dv._cluster_means_interval(values, np.zeros(9))  # one seed: the draws, the seed and its data named
    assert one.n_replicates == 9 and one.unreplicated == dv.SEED_SOURCES


def test_verdicts_over_model_seeds_name_the_seed_as_replicated_and_agree_or_differ():
    agree = _seeded_runs(EPS, [0.49, 0.49, 0.94, 0.95, 0.998], HAM, SHIFTS)
    v = ex.idea_verdicts(agree, control_accuracy={0: 0.997, 1: 0.998, 2: 0.999}, highlighted_epsilon=100.0)
    f43 = v["visca2021-fig4.3"]
    assert (
        f43.verdict == "agrees"
        and "3 replicates of model training seed, balanced subset and its train/validation/test split with 9"
        " replicates of release-noise draw in all nested"
        in f43.evidence
    )
    assert "not replicated" not in f43.evidence
    falls = _seeded_runs(EPS, [0.9, 0.8, 0.7, 0.6, 0.5], HAM, SHIFTS)
    assert ex.idea_verdicts(falls, control_accuracy=0.99)["visca2021-fig4.6"].verdict == "agrees"
    rises = _seeded_runs(EPS, [0.5, 0.6, 0.7, 0.8, 0.9], HAM, SHIFTS)
    v46 = ex.idea_verdicts(rises, control_accuracy=0.99)["visca2021-fig4.6"]
    assert v46.verdict == "differs" and "accuracy falls: differs" in v46.reason
    below = _seeded_runs(EPS, [0.5] * 5, [0.9, 0.8, 0.7, 0.2, 0.2], SHIFTS)
    assert ex.idea_verdicts(below, control_accuracy=0.99)["visca2021-fig4.4"].verdict == "differs"


def test_the_spread_between_model_seeds_widens_the_interval_past_a_decision():
    """Two seeds whose Hamming at ε = 100 is 0.46 and 0.52 with tiny draw noise: the draws pooled as if independent
    would put 0.49 ± 0.01 above 0.4's band (agrees); over the seeds' means (1 degree of freedom) it is inconclusive."""
    runs = _seeded_runs(EPS, [0.5] * 5, [0.9, 0.8, 0.7, 0.49, 0.49], (0.03, -0.03))
    v = ex.idea_verdicts(runs, control_accuracy=0.99)["visca2021-fig4.4"]
    assert v.verdict == "inconclusive" and "2 replicates of model training seed" in v.evidence
    pooled = unc.t_interval(runs.loc[(runs.idea == ex.IDEA2) & (runs.epsilon == 100.0), "hamming"], ["pooled"])
    assert pooled.low > 0.45  # what pooling the nested draws would have decided


def test_gap_to_control_reads_each_seeds_own_control():
    """Idea 1 at ε ≥ 100 returns the original symbols: each seed's draws score exactly that seed's control, a gap of
    exactly 0 (the strict "lower than the control" fails: differs); scored against one mean control instead, the
    seeds' controls would not cancel."""
    controls = {0: 0.99, 1: 0.995, 2: 0.998}
    runs = pd.concat(
        [_runs(EPS, [0.49, 0.49, 0.94, c, c], HAM, (0.0, 0.0, 0.0)).assign(model_seed=s) for s, c in controls.items()],
        ignore_index=True,
    )
    gap = dv.gap_to_control(runs, ex.IDEA1_MEASURED, 100.0, controls)
    assert (gap.value, gap.low, gap.high) == pytest.approx((0.0, 0.0, 0.0))
    v = ex.idea_verdicts(runs, control_accuracy=controls, highlighted_epsilon=100.0)["visca2021-fig4.3"]
    assert v.verdict == "differs" and "below the control: differs" in v.reason
    below = dv.gap_to_control(runs, ex.IDEA1_MEASURED, 30.0, controls)
    assert below.low > 0 and below.n_replicates == 3


def _seed_splits(error_rates, n=1600, seed=0):
    """Per model seed its own test split (labels) and its control's predictions, wrong on a share ``error_rate``."""
    rng = np.random.default_rng(seed)
    labels = [rng.integers(0, 2, n) for _ in error_rates]
    return labels, [np.where(rng.random(n) < p, 1 - y, y) for y, p in zip(labels, error_rates)]


DUP = {"test_share_seen_in_train": 0.79}
UNSEEN = {"unseen_sequences": 300, "unseen_accuracy": 0.995, "unseen_abnormal_share": 0.8, "seen_accuracy": 1.0}


def test_control_estimate_over_model_seeds_each_on_its_own_test_split():
    """Each model seed draws its own subset and split: the seeds' accuracies are independent replicates of the seed,
    the data's draw and the test examples together, so their t-interval covers all three."""
    labels, predictions = _seed_splits((0.0295, 0.030, 0.0305), n=50000)  # three seeds, each ≈ 0.97
    near = ex.control_accuracy_estimate(labels, predictions, n_boot=200, seed=0)
    assert near.method == "t-interval" and near.n_replicates == 3
    assert near.sources == dv.SEED_SOURCES and not near.unreplicated
    assert ex.control_verdict(near, UNSEEN, DUP).verdict == "agrees"
    labels, predictions = _seed_splits((0.002, 0.003, 0.002))  # ≈ 0.998 in every seed
    high = ex.control_accuracy_estimate(labels, predictions, n_boot=200, seed=0)
    v = ex.control_verdict(high, UNSEEN, DUP)
    assert v.verdict == "differs" and "balanced subset" in v.evidence and "do not explain" in v.reason
    v = ex.control_verdict(high, {**UNSEEN, "unseen_accuracy": 0.97}, DUP)
    assert "sufficient explanation" in v.reason
    with pytest.raises(ValueError, match="predictions"):
        ex.control_accuracy_estimate(labels, predictions[:2], n_boot=10, seed=0)


def test_a_control_on_one_shared_split_or_one_seed_leaves_the_datas_draw_out_and_decides_nothing():
    labels = np.array([0, 1] * 800)
    wrong = np.random.default_rng(0).random((3, 1600)) < 0.002
    shared = ex.control_accuracy_estimate(labels, np.where(wrong, 1 - labels, labels), n_boot=200, seed=0)
    assert shared.method == "t-interval + percentile bootstrap" and shared.unreplicated == (dv.DATA_SPLIT,)
    one = ex.control_accuracy_estimate(labels, np.where(np.arange(1600) < 3, 1 - labels, labels), n_boot=200, seed=0)
    assert one.method == "percentile bootstrap" and one.value == pytest.approx(1597 / 1600)
    assert one.unreplicated == dv.SEED_SOURCES
    for estimate in (shared, one):  # 0.998 against 0.97, yet without the data's draw replicated: not decided
        v = ex.control_verdict(estimate, UNSEEN, DUP)
        assert v.verdict == "inconclusive" and "leaves out" in v.reason and "balanced subset" in v.reason
    exact = ex.control_verdict(unc.exact(0.97), UNSEEN, DUP)  # no random source: inside the printed ± 0.005
    assert exact.verdict == "agrees"
    with pytest.raises(ValueError, match="predictions"):
        ex.control_accuracy_estimate(labels, np.zeros((2, 5)), n_boot=10, seed=0)


@pytest.mark.slow
def test_each_model_seed_draws_its_own_subset_and_split_and_the_first_keeps_the_single_design():
    logs = deeplog_data.load("synthetic", seed=0)
    config = ex.DeepLogConfig(n_sequences=200, n_model_seeds=2)
    first, second = ex.prepare_replicates(logs, config)
    single = ex.prepare(logs, config)
    np.testing.assert_array_equal(first.test.padded.tokens, single.test.padded.tokens)
    assert not np.array_equal(first.test.padded.tokens, second.test.padded.tokens)
    assert first.counts["test_size"] == second.counts["test_size"] and first.vocabulary.size == second.vocabulary.size
    assert "one subset and split per model seed (2)" in ex.data_description(first, config)


def test_reach_table_is_grid_limited():
    s = _summary([(i, e, a, 0.5) for i in ex.IDEAS for e, a in ((3.0, 0.5), (10.0, 0.99))])
    s["epsilon_released_test_set"] = s["epsilon"] * 46
    s["epsilon_hamming1_test_set"] = s["epsilon"]
    r = ex.reach_table(s, 0.95).set_index("idea").loc[ex.KRR]
    assert r["plotted ε"] == 10.0 and r["Hamming-1 ε"] == 10.0 and r["released-set ε"] == 460.0
    assert r["previous grid ε (not reached)"] == 3.0 and r["accuracy there"] == 0.5 and "grid-limited" in r["bound"]


def test_length_only_rule():
    train = ex.Split(_padded([[1, 2], [1, 2], [1, 2, 3], [4]]), np.array([0, 0, 1, 1]), [])
    test = ex.Split(_padded([[5, 5], [5, 5, 5], [5, 5, 5, 5]]), np.array([0, 1, 1]), [])
    # lengths 2 -> 0, 3 -> 1, unseen 4 -> overall majority (tie -> 1)
    assert ex.length_only_accuracy(train, test) == 1.0


def test_config_rejects_bad_values():
    with pytest.raises(ContractError, match="test_fraction"):
        ex.DeepLogConfig(test_fraction=0.9, val_fraction=0.2)
    with pytest.raises(ValueError, match="epsilons"):
        ex.DeepLogConfig(epsilons=(0.0, 1.0))
    with pytest.raises(ValueError, match="n_model_seeds"):
        ex.DeepLogConfig(n_model_seeds=0)


def test_shortened_run_finds_one_run_printed_shorter():
    assert ex.shortened_run([5, 23, 23, 21], [5, 23, 23, 23, 21]) == (23, 3, 2)
    assert ex.shortened_run([5, 23, 23, 23, 21], [5, 23, 23, 23, 21]) is None  # equal: nothing shortened
    assert ex.shortened_run([5, 23, 23, 21], [5, 23, 21]) is None  # printed longer
    assert ex.shortened_run([5, 23, 21], [5, 23, 23, 21, 21]) is None  # two runs differ
    assert ex.shortened_run([5, 22, 21], [5, 23, 21]) is None  # a different token


def _listing(rows):
    return pd.DataFrame(rows, columns=["line", "paper", "file_row", "ours", "exact", "token_edit_distance"])


def test_listing_verdict_agrees_on_exact_lines_and_names_the_shortened_run():
    real = DataSource("real", "DeepLog HDFS", "test", "full", "mirror")
    sessions = [np.array(s) for s in ([5, 23, 23, 23, 21], [23, 23, 23], [4])]
    exact = _listing([(1, "5 23 23 23 21", 0, "5 23 23 23 21", True, 0)])
    assert ex.listing_verdict(exact, real, sessions).verdict == "agrees"
    shortened = _listing([(1, "5 23 23 21", 0, "5 23 23 23 21", False, 1), (2, "23 23", 1, "23 23 23", False, 1)])
    v = ex.listing_verdict(shortened, real, sessions)
    assert v.verdict == "differs" and 'run "23 23 23" printed as "23 23"' in v.reason
    assert "every one of the 2 runs of 23 in this file has length 3" in v.reason and "slip" not in v.reason
    other = _listing([(1, "5 22 21", 0, "5 23 21", False, 1)])
    assert "transcription slip" in ex.listing_verdict(other, real, sessions).reason  # not a shortened run


def test_the_contract_reads_overrides_and_names_a_bad_one():
    config = ex.DeepLogConfig.from_overrides({"seed": 3, "hidden": 8, "epsilons": [0.1, 1], "n_repeats": 2})
    assert (config.seed, config.hidden, config.epsilons, config.n_repeats) == (3, 8, (0.1, 1.0), 2)
    assert config.n_model_seeds == 3 and config.max_epochs == 60  # the paper profile where the overrides are silent
    with pytest.raises(ContractError, match="epsilons: expected a non-empty"):
        ex.DeepLogConfig.from_overrides({"epsilons": []})
    with pytest.raises(ContractError, match="hiden: not a field of DeepLogConfig; did you mean hidden"):
        ex.DeepLogConfig.from_overrides({"hiden": 8})


def test_accuracies_and_distances_keep_their_intervals_inside_zero_one():
    """Two seeds' t-interval on near-perfect accuracies reaches past 1; the estimate stops at 1."""
    labels = np.zeros(200, dtype=int)
    predictions = np.zeros((2, 200), dtype=int)
    predictions[0, :1] = 1
    est = dv.control_accuracy_estimate(labels, predictions, n_boot=50, seed=0)
    assert est.high <= 1.0 and est.low <= est.value <= est.high
