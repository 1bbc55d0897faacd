"""Audio Set II pipeline on crafted and synthetic votes: set-up, noise-free tables, sweeps, accounting."""

import math
import warnings

import numpy as np
import pytest

from pate_study.experiments.audioset import data as as_data
from pate_study.experiments.audioset import release, release_frontier, release_privacy, thesis_tables, votes
from pate_study.experiments.audioset.release_claims import appendix, noise_free, student_figures
from pate_study.experiments.audioset.release_claims import common as release_common
from pate_study.experiments.audioset.release_claims import findings as release_findings
from pate_study.experiments.audioset.release_claims import students as release_students
from pate_study.experiments.audioset.release_claims import sweeps as release_sweeps
from pate_study.reporting import uncertainty as unc

warnings.filterwarnings("ignore", message=".*edge of the order range.*")


def _cv(probs, labels):
    probs = np.asarray(probs, dtype=float)
    labels = np.asarray(labels, dtype=bool)
    return votes.CachedVotes(
        probs, labels, probs, labels, labels.mean(0), tuple(f"c{i}" for i in range(labels.shape[1])), "synthetic"
    )


# ----------------------------------------------------------------------------- set-up and bad input
def test_query_test_split_holds_min_pool_and_is_disjoint_and_seeded():
    pool, test = as_data.query_test_split(7722, min_pool=5000, seed=3)
    assert len(pool) == 5000 and len(test) == 2722
    assert not np.intersect1d(pool, test).size and len(np.union1d(pool, test)) == 7722
    again, _ = as_data.query_test_split(7722, min_pool=5000, seed=3)
    assert np.array_equal(pool, again)
    half, _ = as_data.query_test_split(12000, min_pool=5000, seed=0)
    assert len(half) == 6000  # about half when half is enough


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.full((2, 3, 4), 1.5), "expected probabilities in"),
        (np.full((2, 3, 4), np.nan), "NaN"),
        (np.zeros((3, 4)), "3-D"),
        (np.array([[["a"]]]), "numeric"),
    ],
)
def test_bad_probabilities_give_one_clear_error(bad, match):
    with pytest.raises(ValueError, match=match):
        votes.check_probabilities(bad)


def test_cached_votes_rejects_wrong_label_shape():
    with pytest.raises(ValueError, match="pool_labels"):
        votes.CachedVotes(
            np.zeros((2, 3, 4)),
            np.zeros((3, 5), bool),
            np.zeros((2, 1, 4)),
            np.zeros((1, 4), bool),
            np.zeros(4),
            ("a",) * 4,
            "synthetic",
        )


def test_vote_fractions_average_probabilities_or_votes():
    p = np.array([[[0.9, 0.2]], [[0.4, 0.6]]])
    assert np.allclose(votes.vote_fractions(p), [[0.65, 0.4]])
    assert np.allclose(votes.vote_fractions(p, "binary"), [[0.5, 0.5]])


# ----------------------------------------------------------------------------- crafted votes
def test_unanimous_votes_release_the_votes_and_pass_every_check():
    m = np.array([[1.0, 0.0, 1.0, 0.0, 0.0]])
    for th in (0.2, 0.6, "adaptive"):
        assert np.array_equal(release.noise_free_release(m, th), m > 0.5)
    assert release.noise_free_confident(m, 0.2, 0.6, "max").all()
    # printed rule: top-4 of m - th_e are 0.8, 0.8, -0.2, -0.2: not all >= 0.6
    assert not release.noise_free_confident(m, 0.2, 0.6, "printed").any()


def test_votes_exactly_at_threshold_are_off_and_max_rule_is_inclusive():
    m = np.full((1, 4), 0.4)
    assert not release.noise_free_release(m, 0.4).any()  # Definition 10: strictly above th
    assert release.noise_free_confident(m, 0.4, 0.4, "max").all()  # check: >= th_c


def test_adaptive_gap_ties_take_the_gap_at_higher_probabilities():
    # gaps 0.4 (0.9->0.5) and 0.4 (0.5->0.1): the higher one wins, th = 0.5 + 0.2 = 0.7
    m = np.array([[0.9, 0.5, 0.1]])
    assert np.array_equal(release.noise_free_release(m, "adaptive"), [[True, False, False]])
    # the thesis's worked example: [0, .1, .8, 1, 0] -> th 0.45
    ex = np.array([[0.0, 0.1, 0.8, 1.0, 0.0]])
    assert np.array_equal(release.noise_free_release(ex, "adaptive"), [[False, False, True, True, False]])


def test_confidence_rules_differ_in_th_e_dependence():
    # 4 labels at 0.9: the printed rule passes th_c = 0.6 with th_e = 0.2 (0.7 >= 0.6) but not with 0.4
    m = np.array([[0.9, 0.9, 0.9, 0.9, 0.0, 0.0], [0.9, 0.1, 0.0, 0.0, 0.0, 0.0]])
    y = m > 0.5
    ens = {10: _cv(np.broadcast_to(m, (10,) + m.shape), y)}
    t53 = thesis_tables.table_5_3(ens, thresholds=(0.2, 0.4), confidences=(0.6,))
    v = noise_free.confidence_rule_verdict(t53).set_index("rule")
    assert bool(v.loc["max", "answered_share_independent_of_th_e"])
    assert not bool(v.loc["printed", "answered_share_independent_of_th_e"])


# ----------------------------------------------------------------------------- tables
def test_table_5_1_selects_best_f1_threshold_and_perfect_teachers_score_one():
    y = np.eye(6, dtype=bool)[np.arange(40) % 6]
    cv = _cv(np.broadcast_to(y * 0.9 + 0.05, (3, 40, 6)), y)
    t51 = thesis_tables.table_5_1({3: cv})
    row = t51.iloc[0]
    assert row["ensemble_f1"] == pytest.approx(1.0) and row["map_raw"] == pytest.approx(1.0)
    assert row["teacher_avg_f1"] == pytest.approx(1.0)
    t52 = thesis_tables.table_5_2({3: cv})
    assert t52["f1"].max() == pytest.approx(row["ensemble_f1"])


def test_table_5_1_drops_absent_classes_like_tables_5_2_and_5_3_and_keeps_the_all_classes_value_beside():
    """Classes 3-5 have no label and no prediction in the pool: on the present classes (PRESENT_CLASSES) perfect
    teachers score 1, averaged over all six classes 0.5; the best threshold is chosen on the present classes."""
    y = np.zeros((40, 6), dtype=bool)
    y[np.arange(40), np.arange(40) % 3] = True
    cv = _cv(np.broadcast_to(y * 0.9 + 0.05, (3, 40, 6)), y)
    row = thesis_tables.table_5_1({3: cv}).iloc[0]
    assert row["ensemble_f1"] == pytest.approx(1.0) and row["teacher_avg_f1"] == pytest.approx(1.0)
    assert row["ensemble_f1_all_classes"] == pytest.approx(0.5) and row["teacher_avg_f1_all_classes"] == 0.5
    assert row["ensemble_precision"] == row["ensemble_recall"] == pytest.approx(1.0)
    synthetic = votes.synthetic_votes(10, n_pool=300, n_test=20, n_labels=15, seed=1)
    t52 = thesis_tables.table_5_2({10: synthetic})
    best = thesis_tables.table_5_1({10: synthetic}, t52=t52).iloc[0]
    assert best["ensemble_f1"] == pytest.approx(t52["f1_present"].max())
    assert best["ensemble_threshold"] == t52.loc[t52["f1_present"].idxmax(), "threshold"]


def test_prediction_counts_picks_most_and_least_frequent():
    cv = votes.synthetic_votes(10, n_pool=400, n_test=20, n_labels=15, seed=0)
    pc = thesis_tables.prediction_counts(cv, k=3)
    assert list(pc["group"]) == ["most frequent"] * 3 + ["least frequent"] * 3
    assert pc["labels"].iloc[0] >= pc["labels"].iloc[-1]
    # higher threshold, never more predictions
    assert (pc["predicted_0.2"] >= pc["predicted_0.6"]).all()


def _rare_votes(rare_voters: int, n_teachers=10, n=600, classes=13, seed=0):
    """One label per pool query, class c on a share falling with c (classes 7-12 rare, each on enough queries that
    no resample loses one); every teacher votes 0.9 on the labelled class of the frequent ones, ``rare_voters``
    teachers on that of a rare one."""
    rng = np.random.default_rng(seed)
    weights = np.r_[np.full(7, 30.0), np.arange(12, 6, -1)]
    cls = rng.choice(classes, n, p=weights / weights.sum())
    y = np.eye(classes, dtype=bool)[cls]
    probs = np.zeros((n_teachers, n, classes))
    for t in range(n_teachers):
        voters = np.where(cls < 7, True, t < rare_voters)
        probs[t, np.arange(n), cls] = np.where(voters, 0.9, 0.0)
    return _cv(probs, y)


def _fig_a_6(cv, n_boot=60, replicates=3):
    """Fig A.6's record over ``replicates`` replicate ensembles (the votes scaled by 0.95, 1.0, 1.05: the same
    structure, other values) on the same pool."""
    reps = [_cv(cv.pool_probabilities * f, cv.pool_labels) for f in (1.0, 0.95, 1.05)[:replicates]]
    pc = thesis_tables.prediction_counts(reps[0])
    draws = thesis_tables.replicated_rare_draws(reps, n_boot=n_boot, seed=1)
    rec = appendix.prediction_counts_record(pc, "real", dict(teacher_pool=6214, n_labels=13), draws)
    return rec, draws


def test_fig_a_6_agrees_when_only_the_adaptive_threshold_predicts_the_rare_classes():
    """One teacher in ten votes for a rare class: below every fixed th_e (0.2-0.6), above the adaptive one (the
    query's median vote is 0): no prediction at a fixed th_e in any resample of any replicate ensemble, some with
    the adaptive one in all. One ensemble alone leaves the teachers unreplicated: undecided."""
    rec, draws = _fig_a_6(_rare_votes(1))
    assert rec["verdict"] == "agrees", rec["verdict_reason"]
    assert rec["rare_predictions_fixed"] == 0 and rec["rare_predictions_adaptive"] > 0
    assert rec["rare_predictions_interval"]["0.2"] == [0.0, 0.0] and rec["rare_predictions_interval"]["adaptive"][0] > 0
    assert draws["adaptive"]["draws"].shape == (60, 3)
    one = _fig_a_6(_rare_votes(1), replicates=1)[0]
    assert one["verdict"] == "inconclusive" and "teacher training seed and partition" in one["verdict_reason"]


def test_fig_a_6_differs_when_a_fixed_threshold_predicts_them_or_the_adaptive_one_does_not():
    every = _fig_a_6(_rare_votes(10))[0]  # every teacher votes: predicted at every threshold
    assert every["verdict"] == "differs" and every["rare_predictions_interval"]["0.6"][0] > 0
    assert "no prediction of the least frequent classes at a fixed th_e: differs" in every["verdict_reason"]
    none = _fig_a_6(_rare_votes(0))[0]  # no teacher votes: never predicted, not even with the adaptive threshold
    assert none["verdict"] == "differs" and none["rare_predictions_interval"]["adaptive"] == [0.0, 0.0]
    assert "the adaptive threshold predicts some of them: differs" in none["verdict_reason"]


def test_fig_a_6_count_interval_never_reaches_below_zero():
    """A rare class predicted by one replicate ensemble only (counts 0, 0 and some): the t part of the combined
    interval reaches below 0 on three ensembles, but a count cannot; the interval is clipped to [0, ∞) and the
    clip is kept in its derivation, so the claim "no prediction" stays undecided rather than read off a negative
    end."""
    draws = {"0.2": {"values": np.array([0.0, 0.0, 12.0]), "draws": np.tile([0.0, 0.0, 12.0], (40, 1))}}
    raw = unc.combined_interval(draws["0.2"]["values"], draws["0.2"]["draws"], [unc.TEACHER_SEED], resampled="pool")
    assert raw.low < 0
    clipped = appendix.rare_count_estimate(draws, "0.2", 12)
    assert clipped.low == 0.0 and clipped.high == raw.high and clipped.value == raw.value
    assert ("clip", 0.0, math.inf) in clipped.derivation.transforms


def test_fig_a_6_is_inconclusive_without_the_pool_bootstrap():
    cv = _rare_votes(1)
    rec = appendix.prediction_counts_record(
        thesis_tables.prediction_counts(cv), "real", dict(teacher_pool=6214, n_labels=13)
    )
    assert rec["verdict"] == "inconclusive"


# ----------------------------------------------------------------------------- sweeps and accounting
def test_noise_sweep_epsilon_falls_with_sigma_and_never_exceeds_data_independent():
    cv = votes.synthetic_votes(50, n_pool=300, n_test=20, n_labels=10, seed=2)
    sw = release.noise_sweep(cv, [0.1, 0.3], thresholds=(0.4, "adaptive"), n_account=200)
    noisy = sw[sw["sigma_e"] > 0]
    assert (noisy["epsilon"] <= noisy["epsilon_data_independent"] + 1e-9).all()
    assert (noisy["epsilon_reference"] >= noisy["epsilon_data_independent"]).all()  # Theorem 12 is T^2 looser
    for _, sub in noisy.groupby("threshold"):
        assert sub.sort_values("sigma_e")["epsilon_data_independent"].is_monotonic_decreasing


def test_confident_realised_cost_at_most_data_independent_and_answered_share_matches():
    cv = votes.synthetic_votes(50, n_pool=300, n_test=20, n_labels=10, seed=3)
    cs = release.confidence_sweep(cv, 0.4, 0.6, [0.3], [0.6], n_account=200)
    assert (cs["epsilon"] <= cs["epsilon_data_independent"] + 1e-9).all()
    assert 0 <= cs["answered_pct"].iloc[0] <= 100


def test_table_5_4_privacy_reports_theorem12_far_above_vote_fraction():
    cv = votes.synthetic_votes(50, n_pool=300, n_test=20, n_labels=10, seed=4)
    r = release_privacy.table_5_4_privacy(cv, 200, 0.4, None)
    assert r["eps_data_dependent"] <= r["eps_data_independent"] + 1e-9 < r["eps_theorem12_data_independent"]
    assert r["labels"].shape == (200, 10) and r["answered"].all()
    rc = release_privacy.table_5_4_privacy(cv, 200, "adaptive", 0.6)
    assert not rc["labels"][~rc["answered"]].any()


def test_q_histogram_counts_every_query_once():
    cv = votes.synthetic_votes(50, n_pool=250, n_test=20, n_labels=8, seed=5)
    h = release_privacy.q_histogram(cv, 0.2, n_account=250)
    for _, sub in h.groupby("threshold"):
        assert sub["n_queries"].sum() == 250


def test_multiwinner_sweep_runs_every_mechanism_on_the_same_votes():
    cv = votes.synthetic_votes(20, n_pool=120, n_test=10, n_labels=6, seed=6)
    mw, released = release_frontier.multiwinner_sweep(cv, [0.3], n_account=100)
    assert set(mw["mechanism"]) == {"gnthreshold", "binary", "tau", "powerset"}
    assert all(v.shape == (100, 6) for v in released.values())
    assert np.isfinite(mw["epsilon"]).all()
    assert (mw["epsilon"] <= mw["epsilon_data_independent"] + 1e-6).all()


def test_findings_are_computed_from_the_tables():
    cv = votes.synthetic_votes(50, n_pool=200, n_test=20, n_labels=8, seed=7)
    sw = release.noise_sweep(cv, [0.3], thresholds=(0.4,), n_account=150)
    b = release_privacy.bounds_side_by_side(cv, 0.4, 0.3, n_account=150)
    mw, _ = release_frontier.multiwinner_sweep(cv, [0.3], n_account=100)
    import pandas as pd

    text = release_findings.findings(sw, pd.DataFrame(), mw, b)
    assert any("th_e=0.4" in s for s in text) and any("theorem12" in s for s in text)


# ----------------------------------------------------------------------------- verdicts on the thesis's readings
def _t51(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["n_teachers", "map_raw", "ensemble_f1", "teacher_avg_f1"])


def _narrow_draws(values: dict, sd: float = 0.002, n: int = 200, replicates: int = 3) -> dict:
    """Per replicate ensemble, each difference and its bootstrap draws around it (a stand-in for
    :func:`.thesis_tables.replicated_tolerance`'s; ``replicates=1``: one ensemble,
    :func:`.thesis_tables.score_tolerance`'s draws alone)."""
    rng = np.random.default_rng(0)
    if replicates == 1:
        return {"draws": {k: v + sd * rng.standard_normal(n) for k, v in values.items()}}
    reps = {k: v + sd * rng.standard_normal(replicates) for k, v in values.items()}
    return {
        "draws": {k: reps[k][None] + sd * rng.standard_normal((n, replicates)) for k in values},
        "values": reps,
    }


def test_ensemble_claims_check_each_direction_on_the_pool_bootstrap_and_synthetic_is_not_comparable():
    import pandas as pd

    t51 = _t51(
        [("baseline", 0.30, 0.25, np.nan), ("10", 0.22, 0.20, 0.15), ("20", 0.20, 0.18, 0.12), ("50", 0.21, 0.17, 0.18)]
    )
    t52 = pd.DataFrame({"n_teachers": ["10", "20", "50"], "threshold": ["0.2"] * 3, "f1": [0.2, 0.18, 0.17]})
    t53 = pd.DataFrame(
        {
            "rule": ["max"] * 3,
            "n_teachers": ["10", "20", "50"],
            "threshold": ["0.2"] * 3,
            "f1_conf06": [0.25, 0.20, np.nan],
        }
    )
    values = {
        **{f"mAP 1 - {t}": 0.30 - m for t, m in ((10, 0.22), (20, 0.20), (50, 0.21))},
        **{f"best F1 1 - {t}": 0.25 - f for t, f in ((10, 0.20), (20, 0.18), (50, 0.17))},
        "mAP 10 - 20": 0.02,
        "mAP 20 - 50": -0.01,
        **{f"best F1 - average teacher F1 {t}": d for t, d in ((10, 0.05), (20, 0.06), (50, -0.01))},
        "F1 with check / without 10": 1.25,
        "F1 with check / without 20": 1.11,
    }
    tol = _narrow_draws(values)
    c = noise_free.ensemble_claims(t51, t52, t53, tolerance=tol).set_index("claim")
    v = c["verdict"]
    assert v.filter(like="no ensemble beats").item() == "agrees"
    assert v.filter(like="raw mAP falls").item() == "differs"  # 0.20 -> 0.21 rises beyond the resample spread
    assert v.filter(like="beats its average").item() == "differs"  # 50 teachers: 0.17 < 0.18
    assert v.filter(like="confidence check").item() == "agrees"  # NaN (nothing answered) is left out
    assert "bootstrap resamples of query-pool examples" in c["verdict_estimate"].iloc[0]
    assert "3 replicates of teacher training seed and partition" in c["verdict_estimate"].iloc[0]
    # one ensemble per count: the pool resampled, the teachers not: every directional claim undecided
    one = noise_free.ensemble_claims(t51, t52, t53, tolerance=_narrow_draws(values, replicates=1))
    assert set(one["verdict"]) == {"inconclusive"} and "teacher training seed" in one["verdict_reason"].iloc[0]
    # the same numbers without the draws: nothing resampled, every directional claim inconclusive
    assert set(noise_free.ensemble_claims(t51, t52, t53)["verdict"]) == {"inconclusive"}
    # a spread wider than every difference: inconclusive, never agrees or differs
    wide = _narrow_draws(values, sd=1.0)
    assert set(noise_free.ensemble_claims(t51, t52, t53, tolerance=wide)["verdict"]) == {"inconclusive"}
    t53_none = t53.assign(f1_conf06=np.nan)
    assert noise_free.ensemble_claims(t51, t52, t53_none).iloc[-1]["verdict"] == "not comparable"
    assert set(noise_free.ensemble_claims(t51, t52, t53, kind="synthetic")["verdict"]) == {"not comparable"}


def test_saving_contrast_verdict_needs_a_saving_at_04_but_none_at_02_and_the_adaptive_half_is_analytic():
    import pandas as pd

    def sweep(r02, r04, rad):
        return pd.DataFrame(
            {
                "threshold": ["0.2", "0.4", "adaptive"],
                "sigma_e": [0.3] * 3,
                "epsilon": [100 * r02, 100 * r04, 100 * rad],
                "epsilon_data_independent": [100.0] * 3,
            }
        )

    v, ratio = release_sweeps.saving_contrast_verdict(sweep(1.0, 0.6, 0.7), n_labels=10)
    assert v.verdict == "agrees" and ratio["0.4"] == pytest.approx(0.6)
    # the adaptive half is what the mathematics says (no saving once the threshold's sensitivity is charged), never
    # read off the sweep: neither a saving in the data nor one of rounding size turns it into agrees
    assert "a saving with the adaptive threshold: differs, analytic" in v.reason
    v, _ = release_sweeps.saving_contrast_verdict(sweep(1.0, 0.6, 1.0 - 1e-14), n_labels=10)
    assert "a saving with the adaptive threshold: differs, analytic" in v.reason
    v, _ = release_sweeps.saving_contrast_verdict(sweep(1.0, 1.0, 1.0), n_labels=161)
    assert v.verdict == "differs" and "161 per-label factors" in v.reason  # no saving at 0.4: the claim differs
    assert "a saving with the adaptive threshold: differs, analytic" in v.reason  # not counted as evidence
    v, _ = release_sweeps.saving_contrast_verdict(sweep(0.5, 0.6, 0.7), n_labels=10)
    assert v.verdict == "differs" and "161" not in v.reason
    # a saving within the printed precision of ε (one decimal) at th_e 0.2 still counts as none
    v, _ = release_sweeps.saving_contrast_verdict(sweep(0.9996, 0.6, 0.7), n_labels=10)
    assert v.verdict == "agrees"
    assert (
        release_sweeps.saving_contrast_verdict(sweep(1.0, 0.6, 0.7), n_labels=10, kind="synthetic")[0].verdict
        == "not comparable"
    )


def test_q_average_is_the_thesis_own_inconsistency_not_a_difference_of_ours():
    import pandas as pd

    ours = pd.DataFrame({"th_e": ["0.2", "0.4", "adaptive"], "q_average": [1.0, 1.0, 1.0]})
    v, table = release_students.q_average_verdict(ours)
    below = table.set_index("th_e")["thesis_below_floor"]
    # 0.747 >= 1 - Phi(0.8/0.3)^153 = 0.444; 0.148 < 1 - Phi(2)^153 = 0.970; 0.034 < 1 - Phi(1/0.3)^153 = 0.064
    assert not below["0.2"] and below["0.4"] and below["adaptive"]
    assert (v.verdict, v.basis) == ("not comparable", "source inconsistency") and "0.970" in v.reason
    assert v.reason.startswith("the source's own inconsistency")
    # with far less noise the floors vanish and nothing is flagged
    assert release_students.q_average_verdict(ours, sigma_e=0.01)[0].verdict == "agrees"


def test_student_claim_reads_the_units_of_the_best_student_paired_with_the_single_models():
    """The best student's replicate units (teacher ensemble, release draw, student seed) paired with the single
    model of the same replicate seed: decided either way; a seed summary alone, or one single model, leaves the
    teachers unreplicated: undecided."""

    def row(m, sd=0.002, n=3):
        units = [m - sd, m, m + sd][:n]
        return {"map": m, "map_sd": sd, "n_seeds": n, "map_units": units, "map_clusters": list(range(n))}

    single = {"map": 0.28, "map_units": [0.279, 0.28, 0.281], "map_clusters": [0, 1, 2]}
    assert release_students.student_claim(row(0.04), single).verdict == "agrees"
    assert release_students.student_claim(row(0.30), single).verdict == "differs"
    assert release_students.student_claim(row(0.27, sd=0.02), single).verdict == "inconclusive"  # inside the units
    assert release_students.student_claim(row(0.04), 0.28).verdict == "inconclusive"  # one single model
    summary = {"map": 0.04, "map_sd": 0.002, "n_seeds": 3}
    assert release_students.student_claim(summary, single).verdict == "inconclusive"  # seeds only
    assert release_students.student_claim(row(0.04), single, kind="synthetic").verdict == "not comparable"


@pytest.mark.slow
def test_audit_passes_sound_claims_and_catches_half_noise_and_the_adaptive_as_fixed_accounting():
    aud = release_privacy.gnthreshold_audit([0.3], n_samples=200_000, seed=0)
    ok = aud[aud["mechanism"] == "as implemented"]
    sound = ok[~ok["claim"].str.startswith(("thesis", "wrong"))]
    assert set(aud["release"]) == {
        "GNThreshold th_e=0.5",
        "GNThreshold adaptive (Def. 11)",
        "adaptive-k (private)",
        "top-k vote (k=1, 3 teachers x 3 labels, δ=0.1)",
    }
    assert not sound["violation"].any() and (sound["empirical_epsilon_lower"] > 0).all()
    assert (sound["empirical_epsilon_lower"] <= sound["claimed_epsilon"]).all()
    broken = aud[aud["mechanism"] != "as implemented"]
    assert len(broken) == 3 and broken["violation"].all()
    as_fixed = ok[ok["claim"].str.startswith("thesis")].iloc[0]
    assert as_fixed["violation"] and as_fixed["empirical_epsilon_lower"] > as_fixed["claimed_epsilon"]


def test_adaptive_rules_compare_at_equal_epsilon_and_definition_11_is_charged():
    cv = votes.synthetic_votes(50, n_pool=300, n_test=20, n_labels=10, seed=8)
    rules = release_privacy.adaptive_rules(cv, 0.3, n_account=200, delta=1e-8)
    budget = rules["budget_epsilon"].iloc[0]
    fixed = rules[rules["rule"].str.startswith("fixed")]
    np.testing.assert_allclose(fixed["epsilon"], budget)
    ak = rules[rules["rule"].str.startswith("adaptive-k")].iloc[0]
    assert ak["epsilon"] <= budget * (1 + 1e-9)
    d11 = rules[rules["rule"].str.startswith("Definition 11")]
    at_sigma = d11[np.isclose(d11["sigma"], 0.3)].iloc[0]
    assert at_sigma["epsilon"] > 10 * budget and at_sigma["epsilon_threshold_as_fixed"] < at_sigma["epsilon"]
    matched = d11[~np.isclose(d11["sigma"], 0.3)].iloc[0]
    assert matched["epsilon"] == pytest.approx(budget, rel=1e-9) and matched["sigma"] > 10 * 0.3


def test_adaptive_rows_are_sound_with_the_thesis_value_beside_and_orders_go_below_two():
    cv = votes.synthetic_votes(50, n_pool=300, n_test=20, n_labels=10, seed=9)
    sw = release.noise_sweep(cv, [0.3], thresholds=(0.4, "adaptive"), n_account=200)
    row = sw[(sw["threshold"] == "adaptive") & (sw["sigma_e"] > 0)].iloc[0]
    fixed = sw[(sw["threshold"] == "0.4") & (sw["sigma_e"] > 0)].iloc[0]
    assert row["epsilon_threshold_as_fixed"] < row["epsilon"] and np.isnan(fixed["epsilon_threshold_as_fixed"])
    r = release_privacy.table_5_4_privacy(
        cv, 300, 0.4, None, sigma_e=0.1
    )  # slope·N well above log(1/δ): best order < 2
    assert r["order"] < 2 and r["eps_data_dependent"] < r["eps_thesis_grid"]


def test_confidence_claims_label_the_epsilon_halves_analytic_and_leave_one_draw_undecided():
    import pandas as pd

    sweep = pd.DataFrame(
        {
            "threshold": ["0.4", "0.4", "0.4"],
            "sigma_e": [0.0, 0.1, 0.3],
            "f1": [0.2, 0.1, 0.1],
            "epsilon": [np.inf, 100.0, 50.0],
        }
    )
    fixed = pd.DataFrame({"sigma_c": [0.6, 0.6], "sigma_e": [0.1, 0.3], "f1": [0.2, 0.15], "epsilon": [150.0, 60.0]})
    adaptive = fixed.assign(epsilon=[70.0, 30.0])
    c = release_sweeps.confidence_claims(sweep, fixed, adaptive)
    # F1 from one release-noise draw per point: no interval, inconclusive; the ε halves analytic
    assert list(c["verdict"]) == ["inconclusive", "agrees", "agrees"]
    assert list(c["verdict_basis"].fillna("data")) == ["data", "analytic", "analytic"]
    assert "not replicated: release-noise draw" in c["verdict_reason"].iloc[0]
    assert c["verdict_reason"].iloc[1].startswith("analytic: holds for any data")
    c = release_sweeps.confidence_claims(sweep, fixed.assign(f1=[0.05, 0.15]), adaptive.assign(epsilon=[150.0, 60.0]))
    assert list(c["verdict"]) == ["inconclusive", "agrees", "differs"]
    assert "q̃ ≈ 1" in c["verdict_reason"].iloc[2]
    assert set(release_sweeps.confidence_claims(sweep, fixed, adaptive, kind="synthetic")["verdict"].iloc[:1]) == {
        "not comparable"
    }


def test_scale_verdict_names_the_thesis_scale_of_the_subset():
    assert "76,656" in release_common.scale_verdict("real", "x", teacher_pool=1013, n_labels=15).reason
    assert "274k" in release_common.scale_verdict("real", "x", teacher_pool=6214, n_labels=161).reason


def test_adaptive_privacy_verdict_checks_the_direction():
    import pandas as pd

    t54 = pd.DataFrame(
        {
            "n_samples": [2000] * 3,
            "th_e": ["0.2", "0.4", "adaptive"],
            "th_c": ["None"] * 3,
            "eps_data_dependent": [900.0, 950.0, 1.8e6],
        }
    )
    v = student_figures.adaptive_privacy_verdict(t54)
    assert (v.verdict, v.basis) == ("differs", "analytic") and "2e+03×" in v.reason
    t54.loc[2, "eps_data_dependent"] = 500.0  # treated as fixed (not a guarantee) the numbers would say otherwise
    assert student_figures.adaptive_privacy_verdict(t54).verdict == "agrees"
    assert student_figures.adaptive_privacy_verdict(t54, kind="synthetic").verdict == "not comparable"
