"""Release-noise replicates on cached votes: stacked draws, their scores and bootstrap, the claims judged on them."""

import warnings

import numpy as np
import pandas as pd
import pytest

from pate_study.experiments.audioset import release, votes
from pate_study.experiments.audioset.release_claims import sweeps as release_sweeps
from pate_study.learning import metrics
from pate_study.privacy import aggregators

warnings.filterwarnings("ignore", message=".*edge of the order range.*")


def test_one_stacked_draw_is_the_single_release():
    m = np.random.default_rng(0).uniform(size=(30, 6))
    one = aggregators.gnthreshold(m, 0.4, 0.3, np.random.default_rng(5)).labels
    stacked = aggregators.gnthreshold(release.stacked_draws(m, 1), 0.4, 0.3, np.random.default_rng(5)).labels
    np.testing.assert_array_equal(one, stacked)
    many = aggregators.gnthreshold(release.stacked_draws(m, 4), 0.4, 0.3, np.random.default_rng(5)).labels
    draws = many.reshape(4, 30, 6)
    assert not all(np.array_equal(draws[0], d) for d in draws[1:])  # independent draws, not copies


@pytest.mark.parametrize("n_draws", [0, 1.5, -2])
def test_stacked_draws_refuses_a_bad_count(n_draws):
    with pytest.raises(ValueError, match="release_draws"):
        release.stacked_draws(np.zeros((2, 2)), n_draws)


def test_draw_scores_equal_prf_per_draw_and_the_full_sample_resample():
    rng = np.random.default_rng(1)
    y = rng.uniform(size=(40, 7)) < 0.3
    labels = rng.uniform(size=(3, 40, 7)) < 0.3
    answered = rng.uniform(size=(3, 40)) < 0.7
    labels &= answered[:, :, None]
    ones = np.ones((1, 40))  # a "resample" that is the sample itself
    s = release.draw_scores(y, labels, answered, ones)
    for r in range(3):
        ok = answered[r]
        ref = release.prf(y[ok], labels[r][ok])
        for key in ("precision", "recall", "f1", "micro_f1"):
            assert s[key][r] == pytest.approx(ref[key])
        assert s["f1_present"][r] == pytest.approx(metrics.macro_scores_present_classes(y[ok], labels[r][ok])["f1"])
    np.testing.assert_allclose(s["f1_boot"][0], s["f1"])
    np.testing.assert_allclose(s["f1_present_boot"][0], s["f1_present"])


def test_a_draw_with_nothing_answered_scores_nan_not_zero():
    y = np.ones((5, 3), bool)
    labels = np.zeros((2, 5, 3), bool)
    answered = np.array([[False] * 5, [True] * 5])
    s = release.draw_scores(y, labels, answered, np.ones((1, 5)))
    assert np.isnan(s["f1"][0]) and s["f1"][1] == 0.0


def _cv(seed=2, n_teachers=50):
    return votes.synthetic_votes(n_teachers, n_pool=300, n_test=20, n_labels=10, seed=seed)


def test_sweeps_carry_every_draw_and_the_interval_over_them():
    cv = _cv()
    sw = release.noise_sweep(cv, [0.3], thresholds=(0.4,), n_account=200, n_draws=5, n_boot=20)
    noisy = sw[sw["sigma_e"] > 0].iloc[0]
    assert noisy["n_draws"] == 5 and noisy["f1_draws"].shape == (5,) and noisy["f1_boot"].shape == (20, 5)
    assert noisy["f1"] == pytest.approx(np.mean(noisy["f1_draws"]))
    assert noisy["f1_low"] < noisy["f1"] < noisy["f1_high"]
    cs = release.confidence_sweep(cv, 0.4, 0.6, [0.3], [0.6], n_account=200, n_draws=4, n_boot=10)
    row = cs.iloc[0]
    assert row["epsilon"] == pytest.approx(row["epsilon_draws"].max())
    assert row["epsilon"] >= row["epsilon_min"]
    assert (cs["epsilon"] <= cs["epsilon_data_independent"] + 1e-9).all()
    assert not set(release.DRAW_COLUMNS) & set(release.summary(cs).columns)


def test_sweeps_are_seeded_and_one_draw_without_resamples_is_the_old_single_release():
    cv = _cv(3)
    a = release.confidence_sweep(cv, 0.4, 0.6, [0.3], [0.6], n_account=200, n_draws=3, n_boot=5, seed=4)
    b = release.confidence_sweep(cv, 0.4, 0.6, [0.3], [0.6], n_account=200, n_draws=3, n_boot=5, seed=4)
    np.testing.assert_array_equal(a["f1_draws"].iloc[0], b["f1_draws"].iloc[0])
    one = release.confidence_sweep(cv, 0.4, 0.6, [0.3], [0.6], n_account=200, seed=4)
    m = votes.vote_fractions(cv.pool_probabilities)[:200]
    rel = aggregators.confident_gnthreshold(m, 0.4, 0.3, 0.6, 0.6, np.random.default_rng([4, 0, 0]), rule="max")
    assert one["f1"].iloc[0] == pytest.approx(
        release.prf(cv.pool_labels[:200][rel.answered], rel.labels[rel.answered])["f1"]
    )


def _f1_frames(plain_f1, conf_f1, n_boot=30, spread=0.002, seed=0, ensembles=1):
    """A plain sweep (th_e 0.4) and two confident sweeps with the given per-draw present-class F1, the draws nested
    in ``ensembles`` replicate teacher ensembles (``draw_replicate``, as :func:`release.replicate_sweeps` gives)."""
    rng = np.random.default_rng(seed)

    def row(values, **extra):
        values = np.asarray(values, float)
        boot = values[None] + rng.normal(0, spread, (n_boot, len(values)))
        nested = {"draw_replicate": np.arange(len(values)) % ensembles} if ensembles > 1 else {}
        return {
            **nested,
            "sigma_e": 0.3,
            "f1": values.mean(),
            "f1_present": values.mean(),
            "epsilon": 1.0,
            "f1_draws": values,
            "f1_boot": boot,
            "f1_present_draws": values,
            "f1_present_boot": boot,
            **extra,
        }

    plain = pd.DataFrame([row(plain_f1, threshold="0.4")])
    conf = pd.DataFrame([row(conf_f1, sigma_c=0.6, threshold="0.4")])
    adaptive = pd.DataFrame([row(conf_f1, sigma_c=0.6, threshold="adaptive") | {"epsilon": 2.0}])
    return plain, conf, adaptive


def _raises(frames):
    claims = release_sweeps.confidence_claims(*frames)
    return claims.iloc[0]


def test_check_doubles_f1_agrees_when_every_ensemble_and_draw_about_doubles_it():
    """Fig 5.14's "F1 about doubles" at its printed precision (2 ± 0.5), over three replicate ensembles' draws."""
    r = _raises(_f1_frames([0.20, 0.21, 0.19, 0.20, 0.205, 0.2], [0.40, 0.41, 0.39, 0.40, 0.395, 0.4], ensembles=3))
    assert r["verdict"] == "agrees", r.to_dict()
    assert "teacher training seed and partition" in r["verdict_estimate"]


def test_check_doubles_f1_differs_when_the_ratio_is_clearly_not_two():
    """A gain of 10 % "raises" F1 (the old rule, > 1, agreed) but does not double it: differs; so does a fall."""
    r = _raises(_f1_frames([0.20, 0.21, 0.19, 0.20, 0.205, 0.2], [0.22, 0.231, 0.209, 0.22, 0.2255, 0.22], ensembles=3))
    assert r["verdict"] == "differs"
    r = _raises(_f1_frames([0.40, 0.41, 0.39, 0.40, 0.395, 0.4], [0.20, 0.21, 0.19, 0.20, 0.205, 0.2], ensembles=3))
    assert r["verdict"] == "differs"
    assert "release-noise draw" in r["verdict_estimate"] and "bootstrap" in r["verdict_estimate"]


def test_check_doubles_f1_needs_the_teachers_replicated():
    """One ensemble's draws measure the release noise, not the teachers the claim is about: undecided."""
    r = _raises(_f1_frames([0.20, 0.21, 0.19, 0.20, 0.205], [0.40, 0.41, 0.39, 0.40, 0.395]))
    assert r["verdict"] == "inconclusive" and "teacher training seed and partition" in r["verdict_reason"]


def test_check_doubles_f1_is_inconclusive_inside_the_noise():
    r = _raises(_f1_frames([0.20, 0.30, 0.10, 0.25, 0.15, 0.2], [0.41, 0.21, 0.61, 0.31, 0.49, 0.4], ensembles=3))
    assert r["verdict"] == "inconclusive"


def test_one_draw_is_inconclusive_whatever_the_ratio():
    r = _raises(_f1_frames([0.1], [0.9]))
    assert r["verdict"] == "inconclusive"
