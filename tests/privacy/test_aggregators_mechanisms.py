"""Mechanisms and aggregators: seeding, behaviour, what they hand to the accountants."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pate_study.privacy import aggregators as agg
from pate_study.privacy import mechanisms as mech
from pate_study.privacy import rdp


def test_noise_is_seeded_and_scaled():
    a = mech.laplace_noise(200_000, 2.0, 7)
    assert np.array_equal(a, mech.laplace_noise(200_000, 2.0, 7))
    assert not np.array_equal(a, mech.laplace_noise(200_000, 2.0, 8))
    np.testing.assert_allclose(a.std(), np.sqrt(2) * 2.0, rtol=0.02)  # Var Lap(b) = 2b²
    g = mech.gaussian_noise(200_000, 3.0, np.random.default_rng(1))
    np.testing.assert_allclose(g.std(), 3.0, rtol=0.02)


def test_local_laplace_both_parameterisations():
    x = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]])
    a = mech.local_laplace(x, rho=0.5, rng=3)
    b = mech.local_laplace(x, scale=2.0, rng=3)
    np.testing.assert_array_equal(a, b)
    assert mech.local_laplace_epsilon(rho=0.3) == pytest.approx(0.6)
    assert mech.local_laplace_epsilon(scale=10.0) == pytest.approx(0.2)  # Sosa's "student eps" is a scale
    big = mech.local_laplace(np.tile([1.0, 0, 0], (100_000, 1)), rho=1.0, rng=0)
    np.testing.assert_allclose((big - [1.0, 0, 0]).std(axis=0), np.sqrt(2), rtol=0.03)


@pytest.mark.parametrize(
    "x, kwargs, match",
    [
        ([0.5, 0.6], {"rho": 1.0}, "unit l1"),
        ([np.nan, 1.0], {"rho": 1.0}, "finite"),
        ([1.0, 0.0], {}, "rho/scale"),
        ([1.0, 0.0], {"rho": 1.0, "scale": 1.0}, "rho/scale"),
        ([1.0, 0.0], {"rho": -1.0}, "rho"),
        ([1.0, 0.0], {"scale": 0.0}, "scale"),
    ],
)
def test_local_laplace_rejects(x, kwargs, match):
    with pytest.raises(ValueError, match=match):
        mech.local_laplace(x, rng=0, **kwargs)


def test_local_laplace_accepts_tolerance():
    mech.local_laplace([0.5, 0.5 + 1e-9], rho=1.0, rng=0)
    with pytest.raises(ValueError, match="unit l1"):
        mech.local_laplace([0.5, 0.5 + 1e-9], rho=1.0, rng=0, atol=1e-12)


def test_lnmax_gnmax_seeded_and_noise_free_limit(votes_small):
    for fn, kw in ((agg.lnmax, {"gamma": 0.05}), (agg.gnmax, {"sigma": 40.0})):
        r1, r2 = fn(votes_small, rng=5, **kw), fn(votes_small, rng=5, **kw)
        np.testing.assert_array_equal(r1.labels, r2.labels)
        assert r1.answered.all() and r1.n_answered == 3
        np.testing.assert_array_equal(r1.counts, votes_small)
    # negligible noise returns the plurality
    assert agg.lnmax(votes_small[:2], 1e6, 0).labels.tolist() == [0, 0]
    assert agg.gnmax(votes_small[:2], 1e-6, 0).labels.tolist() == [0, 0]


def test_lnmax_label_distribution_matches_lemma():
    # two classes, gap g: Pr[runner-up wins] = (2 + γg)/(4 e^{γg}) exactly (Papernot 2017 Lemma 4, m = 2)
    gamma, g, n = 0.5, 4, 200_000
    labels = agg.lnmax(np.broadcast_to([g, 0], (n, 2)), gamma, 11).labels
    p = (2 + gamma * g) / (4 * np.exp(gamma * g))
    assert stats.binomtest(int((labels == 1).sum()), n, p).pvalue > 1e-3


def test_confident_gnmax(votes_small):
    r = agg.confident_gnmax(votes_small, threshold=200, sigma1=1e-6, sigma2=1e-6, rng=0)
    assert r.answered.tolist() == [True, False, False]
    assert r.labels.tolist() == [0, agg.ABSTAIN, agg.ABSTAIN]
    np.testing.assert_array_equal(r.check_values, [240, 150, 100])
    np.testing.assert_array_equal(r.thresholds, [200, 200, 200])
    # the answered set depends on the seed only through the check noise, not on sigma2
    big = np.tile(votes_small, (500, 1))
    a = agg.confident_gnmax(big, 180, 50, 1.0, 9).answered
    b = agg.confident_gnmax(big, 180, 50, 99.0, 9).answered
    np.testing.assert_array_equal(a, b)
    # realised accounting redraws exactly the aggregator's check
    spent = rdp.confident_gnmax_epsilon(
        threshold=180, sigma1=50, sigma2=40, delta=1e-5, votes=big, cost="realized", rng=9
    )
    assert spent.expected_answered == a.sum()


def test_interactive_gnmax():
    votes = np.array([[9, 1, 0], [5, 5, 0], [0, 0, 10]])
    student = np.array([[0.9, 0.1, 0.0], [0.05, 0.9, 0.05], [1 / 3, 1 / 3, 1 / 3]])
    r = agg.interactive_gnmax(votes, student, threshold=3, sigma1=1e-6, sigma2=1e-6, student_threshold=0.8, rng=0)
    # check values max(n − 10 p): [0, 4.5, 6.67]
    np.testing.assert_allclose(r.check_values, [0.0, 4.5, 10 - 10 / 3])
    assert r.answered.tolist() == [False, True, True]
    assert r.labels.tolist() == [0, 0, 2]  # first: student's own confident label
    assert r.source.tolist() == [agg.SOURCE_STUDENT, agg.SOURCE_TEACHERS, agg.SOURCE_TEACHERS]
    spent = rdp.confident_gnmax_epsilon(
        threshold=3,
        sigma1=5,
        sigma2=5,
        delta=1e-5,
        votes=votes,
        check_values=r.check_values,
        cost="realized",
        answered=r.answered,
    )
    assert spent.expected_answered == 2


def test_adaptive_threshold_worked_example():
    # Muschiol 2021 Def. 11 example: [0.0, 0.1, 0.8, 1.0, 0.0] -> gap 0.8→0.1 -> 0.45
    np.testing.assert_allclose(agg.adaptive_thresholds([[0.0, 0.1, 0.8, 1.0, 0.0]]), [0.45])
    # ties go to the gap at higher probabilities
    np.testing.assert_allclose(agg.adaptive_thresholds([[1.0, 0.5, 0.0]]), [0.75])
    # all-equal votes: d = 0
    np.testing.assert_allclose(agg.adaptive_thresholds([[0.0, 0.0, 0.0]]), [0.0])
    with pytest.raises(ValueError, match="at least 2 labels"):
        agg.adaptive_thresholds([[0.3]])


def test_gnthreshold_family():
    m = np.array([[0.9, 0.1, 0.8, 0.0], [0.5, 0.45, 0.05, 0.0]])
    r = agg.gnthreshold(m, 0.5, 1e-6, 0)
    assert r.labels.tolist() == [[True, False, True, False], [False, False, False, False]]
    ra = agg.gnthreshold_adaptive(m, 1e-6, 0)
    np.testing.assert_allclose(ra.thresholds, [0.45, 0.25])
    assert ra.labels.tolist() == [[True, False, True, False], [True, True, False, False]]
    # printed rule: all top-2 of m − th_e must pass; max rule: only the max
    kw = dict(threshold=0.3, sigma=1e-6, confidence_threshold=0.4, sigma_confidence=1e-6, top_n=2, rng=0)
    printed = agg.confident_gnthreshold(m, rule="printed", **kw)
    mx = agg.confident_gnthreshold(m, rule="max", **kw)
    assert printed.answered.tolist() == [True, False]  # 0.9−0.3, 0.8−0.3 ≥ 0.4 ; 0.45−0.3 < 0.4
    assert mx.answered.tolist() == [True, True]
    assert not printed.labels[1].any()


def test_aggregators_reject_bad_input():
    with pytest.raises(ValueError, match="votes.*non-negative"):
        agg.lnmax([[-1, 2]], 0.05, 0)
    with pytest.raises(ValueError, match="votes.*integer"):
        agg.gnmax([[1.5, 2]], 1.0, 0)
    with pytest.raises(ValueError, match="gamma"):
        agg.lnmax([[1, 2]], 0.0, 0)
    with pytest.raises(ValueError, match="rng"):
        agg.gnmax([[1, 2]], 1.0, None)
    with pytest.raises(ValueError, match="student_probs"):
        agg.interactive_gnmax([[1, 2]], [[0.5, 0.5, 0.0]], 1, 1, 1, 0.5, 0)
    with pytest.raises(ValueError, match="fractions"):
        agg.gnthreshold([[1.5, 0.2]], 0.5, 0.1, 0)
    with pytest.raises(ValueError, match="rule"):
        agg.confident_gnthreshold([[0.5, 0.2]], 0.5, 0.1, 0.5, 0.1, 0, rule="all")
