"""Multi-label accounting (Muschiol 2021): Eq. 4.8 as printed vs corrected, and when the data-dependent bound helps."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

from pate_study.privacy import multilabel, rdp
from pate_study.privacy._validation import ThresholdRangeWarning
from pate_study.privacy.accounting import OrderAtGridEdgeWarning
from pate_study.privacy.options import Bound, Charge, ConfidenceCheck, ConfidenceRule, Threshold

THESIS_BOUNDS = ("theorem12", "eq4_8", "eq4_8_corrected", "gnmax_slope")
ORDERS = np.array([1.25, 1.5, 2.0, 2.5, 3.0, 3.25, 4.0, 6.0])


def _theorem6_reference(q, mu2, eps1, eps2, cap, order, printed):
    """One order of Papernot et al. 2018 Theorem 6 (or Muschiol's Eq. 4.8 as printed), from the formulas as written."""
    mu1 = mu2 + 1.0
    a = (1 - q) / (1 - (q * math.exp(eps2)) ** ((mu2 - 1) / mu2))
    if printed:  # B(q̃, μ2, ε2) and the printed condition, "μ1 ≥ λ"
        b = math.exp(eps2) / q ** (1 / (mu2 - 1))
        ok = (
            q <= 1
            and mu1 >= order
            and mu2 > 1
            and (q <= math.exp((mu1 - 1) * eps2) / ((mu2 / (mu1 - 1)) * (mu2 / (mu2 - 1))) ** mu2)
        )
    else:  # B(q̃, μ1, ε1) and Papernot's condition, α < μ1
        b = math.exp(eps1) / q ** (1 / (mu1 - 1))
        ok = (
            mu1 > order
            and mu2 > 1
            and -math.log(q) > eps2
            and (q <= math.exp((mu2 - 1) * eps2) / ((mu1 / (mu1 - 1)) * (mu2 / (mu2 - 1))) ** mu2)
        )
    if not ok:
        return cap * order
    dep = math.log((1 - q) * a ** (order - 1) + q * b ** (order - 1)) / (order - 1)
    return max(min(dep, cap * order), 0.0)


def test_eq4_8_printed_corrected_and_gnmax_slope_follow_their_formulas():
    # Three labels at distance 4 from the threshold (th = −3, outside [0, 1], the only way to reach the
    # Theorem 6 branch of the thesis's bounds at all, see the next test), σ = 1.
    sigma, n = 1.0, 3
    q = 1 - norm.cdf(4.0) ** n
    mu2_thm14 = math.sqrt(2 * sigma**2 * math.log(1 / q) / n)  # Theorem 14
    eps = lambda mu: n * mu / (2 * sigma**2)  # noqa: E731  Theorem 12's ε at order μ
    mu2_gnmax = sigma * math.sqrt(math.log(1 / q))  # Papernot et al. 2018 Prop. 10 with 1/σ²
    expected = {
        "eq4_8": [
            _theorem6_reference(q, mu2_thm14, eps(mu2_thm14 + 1), eps(mu2_thm14), 1 / sigma**2, a, True) for a in ORDERS
        ],
        "eq4_8_corrected": [
            _theorem6_reference(q, mu2_thm14, eps(mu2_thm14 + 1), eps(mu2_thm14), 1 / sigma**2, a, False)
            for a in ORDERS
        ],
        "theorem12": [
            _theorem6_reference(q, mu2_thm14, eps(mu2_thm14 + 1), eps(mu2_thm14), n / (2 * sigma**2), a, False)
            for a in ORDERS
        ],
        "gnmax_slope": [
            _theorem6_reference(q, mu2_gnmax, (mu2_gnmax + 1) / sigma**2, mu2_gnmax / sigma**2, 1 / sigma**2, a, False)
            for a in ORDERS
        ],
    }
    # threshold -3 (below every vote fraction) makes every label's q computable in closed form; it warns by design
    with pytest.warns(ThresholdRangeWarning):
        got = {
            b: multilabel.rdp_gnthreshold(np.ones((1, n)), -3.0, sigma, ORDERS, bound=b, n_teachers=2)[0]
            for b in expected
        }  # n = 3 <= 2T² = 8: the cap λ/σ² is valid
    for b in expected:
        np.testing.assert_allclose(got[b], expected[b], rtol=1e-12, err_msg=b)
    # the cases differ: the printed B(μ2, ε2) is not Papernot's B(μ1, ε1), and the cap is λ/σ², not nλ/(2σ²)
    assert np.any(np.abs(got["eq4_8"] - got["eq4_8_corrected"]) > 1e-3)
    assert np.any(got["eq4_8_corrected"] < ORDERS / sigma**2 - 1e-6)  # Theorem 6 branch reached
    assert not np.allclose(got["gnmax_slope"], got["eq4_8_corrected"])
    # data-independent: the cap
    assert multilabel.multilabel_slope(sigma, n, "eq4_8", 2) == multilabel.multilabel_slope(sigma, n, "gnmax_slope", 2)
    assert multilabel.theorem6_params(sigma, n, "eq4_8", 2) == (n / 2, 1.0, "muschiol_printed")


@pytest.mark.parametrize("n_labels", [2, 5, 153])
def test_thesis_bounds_data_dependent_equals_data_independent(n_labels):
    # Review finding: with fractions and thresholds in [0, 1], −log q̃ never exceeds the slope, μ2 ≤ 1,
    # and Theorem 6 never applies for theorem12 / eq4_8 (either reading) / gnmax_slope.
    fractions = np.random.default_rng(n_labels).random((500, n_labels))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        for sigma in (0.05, 0.1, 0.3):
            for bound in THESIS_BOUNDS:
                assert not multilabel.theorem6_possible(sigma, n_labels, bound)
                ind = multilabel.gnthreshold_epsilon(
                    sigma=sigma, delta=1e-8, n_queries=500, n_labels=n_labels, bound=bound
                )
                for th in (0.0, 0.2, 0.5):
                    dep = multilabel.gnthreshold_epsilon(
                        sigma=sigma, delta=1e-8, fractions=fractions, threshold=th, bound=bound
                    )
                    np.testing.assert_allclose(dep.rdp_or_logmgf, ind.rdp_or_logmgf, rtol=1e-13)
                    assert dep.epsilon == pytest.approx(ind.epsilon, rel=1e-13)


def test_theorem6_possible_worst_case_and_vote_fraction_savings():
    orders = np.geomspace(1.01, 500, 60)
    for n in (2, 3, 5, 20, 153, 527):
        for sigma in np.geomspace(0.005, 0.75, 15):
            for bound in THESIS_BOUNDS:
                assert not multilabel.theorem6_possible(sigma, n, bound), (n, sigma, bound)
                # the worst case itself (every label at distance 1) is charged the data-independent cap
                slope, cap, _ = multilabel.theorem6_params(sigma, n, bound)
                got = multilabel.rdp_gnthreshold(np.ones((1, n)), 0.0, sigma, orders, bound=bound)[0]
                np.testing.assert_allclose(got, cap * orders, rtol=1e-13)
    # the check is not vacuous: one label, a large σ, or the vote-fraction slope can get below the cap
    assert multilabel.theorem6_possible(0.1, 1, "theorem12")
    assert multilabel.theorem6_possible(1.0, 2, "theorem12")
    assert multilabel.theorem6_possible(0.1, 5, "vote_fraction", n_teachers=50)
    # vote_fraction: n = 5, σ = 0.1, T = 50, 500 queries, δ = 1e-8
    fractions = np.random.default_rng(0).random((500, 5))
    kw = dict(sigma=0.1, delta=1e-8, bound="vote_fraction", n_teachers=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        ind = multilabel.gnthreshold_epsilon(n_queries=500, n_labels=5, **kw)
        dep = multilabel.gnthreshold_epsilon(fractions=fractions, threshold=0.0, **kw)
    assert ind.order == 2 and ind.epsilon == pytest.approx(500 * 2 * 5 / (2 * 50**2 * 0.01) + math.log(1e8))
    assert dep.epsilon < 0.85 * ind.epsilon


def test_q_tilde_does_not_underflow_to_zero():
    # log Φ(z) is −0 in float64 for z ≳ 37.5: q̃ = 1 − ΠΦ must stay > 0 (else the query is charged nothing)
    for sigma in (0.02, 0.01, 0.002):
        logq = multilabel.multilabel_logq(np.ones((1, 3)), 0.0, sigma)[0]
        expected = math.log(3) + norm.logsf(1 / sigma)  # q̃ = 3 Φ̄(1/σ) to within 1e-300 relative
        assert logq == pytest.approx(expected, rel=1e-12)
        rdp_q = multilabel.rdp_gnthreshold(np.ones((1, 3)), 0.0, sigma, [2.0, 3.0], bound="theorem12")[0]
        np.testing.assert_allclose(rdp_q, 3 / (2 * sigma**2) * np.array([2.0, 3.0]))
    lp, lnot = multilabel.confidence_logpr(np.ones((1, 4)), 0.0, ConfidenceCheck(0.0, 0.01, ConfidenceRule.PRINTED, 4))
    assert lnot[0] == pytest.approx(math.log(4) + norm.logsf(100.0), rel=1e-12) and lp[0] <= 0


def test_adaptive_threshold_and_its_printed_check_are_charged():
    m = np.random.default_rng(2).random((50, 6))
    kw = dict(
        fractions=m,
        sigma=0.3,
        delta=1e-8,
        bound=Bound.VOTE_FRACTION,
        n_teachers=50,
        charge=Charge(answered=np.ones(50, dtype=bool)),
    )
    printed, top = ConfidenceCheck(0.3, 0.6, ConfidenceRule.PRINTED), ConfidenceCheck(0.3, 0.6, ConfidenceRule.MAX)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        fixed = multilabel.confident_gnthreshold_epsilon(threshold=0.4, check=printed, **kw)
        adaptive = multilabel.confident_gnthreshold_epsilon(threshold=Threshold.ADAPTIVE, check=printed, **kw)
        adaptive_max = multilabel.confident_gnthreshold_epsilon(threshold=Threshold.ADAPTIVE, check=top, **kw)
    top_n = multilabel.UNCHARGED_LEAKS[2]
    assert "adaptive" in top_n and "sorting moves each checked value by at most" in top_n
    # the adaptive threshold and the printed check with it are charged now (threshold sensitivity), not listed
    for r in (fixed, adaptive, adaptive_max):
        assert top_n not in r.details["uncharged_leaks"]
        assert multilabel.UNCHARGED_LEAKS[0] not in r.details["uncharged_leaks"]
    fixed_max = multilabel.confident_gnthreshold_epsilon(threshold=0.4, check=top, **kw)
    assert adaptive.epsilon > fixed.epsilon and adaptive_max.epsilon > fixed_max.epsilon


def test_total_with_cap_and_variant_equals_sum_of_per_query():
    rng = np.random.default_rng(3)
    logq = -rng.exponential(8.0, 3000)
    logq[:5] = -np.inf
    orders = np.geomspace(1.1, 300, 400)
    for variant in rdp.THEOREM6_VARIANTS:
        for cap in (None, 0.05):
            per = rdp.rdp_data_dependent(logq, 0.2, orders, cap_slope=cap, variant=variant)
            w = rng.random(len(logq))
            tot = rdp.total_rdp_data_dependent(logq, 0.2, orders, w, cap_slope=cap, variant=variant)
            np.testing.assert_allclose(tot, w @ per, rtol=1e-12)
