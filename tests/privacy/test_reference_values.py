"""Every value of docs/reference-values.md, at rtol 1e-6 (or the printed precision when coarser)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from privacy_testutils import assert_printed

from pate_study.privacy import moments, rdp, smooth_sensitivity
from pate_study.privacy.accounting import OrderAtGridEdgeWarning, epsilon_curve, select_order
from pate_study.privacy.options import Accounting

C240 = np.array([240, 5, 5] + [0] * 7)
C150 = np.array([150, 60, 40] + [0] * 7)
ORDERS6 = np.array([2.0, 5, 10, 20, 50, 100])


# ---------------------------------------------------------------- §1 Papernot 2017


def test_lnmax_q_sum_and_approx():
    assert_printed(moments.lnmax_q(C240, 0.05)[0], "2.0477231e-4")
    assert_printed(moments.lnmax_q(C240, 0.05, "approx")[0], "2.4407599e-4")


@pytest.mark.parametrize(
    "counts, expected",
    [
        (C240, ["4.307e-5", "8.841e-5", "1.8684e-4", "4.2317e-4"]),
        (C150, ["0.00733009", "0.01500117", "0.03149505", "0.07014594"]),
    ],
)
def test_logmgf_per_query(counts, expected):
    got = moments.logmgf_lnmax(counts, 0.05, [1, 2, 4, 8])[0]
    for g, e in zip(got, expected):
        assert_printed(g, e)


def test_per_query_pure_dp_is_2gamma():
    # the data-dependent log-MGF never exceeds the pure-DP term 2γλ
    lam = np.arange(1, 9.0)
    assert np.all(moments.logmgf_lnmax(C150, 0.05, lam)[0] <= 2 * 0.05 * lam + 1e-15)


@pytest.mark.parametrize(
    "n, delta, eps, order",
    [(100, 1e-5, "5.3026", 5), (1000, 1e-5, "20.7565", 2), (900, 1e-6, "20.4078", 2)],
)
def test_moments_data_independent_integer(n, delta, eps, order):
    spent = moments.moments_epsilon(gamma=0.05, delta=delta, n_queries=n)
    assert_printed(spent.epsilon, eps)
    assert spent.order == order


@pytest.mark.parametrize(
    "n, delta, eps, lam", [(1000, 1e-5, "20.17427", "1.51743"), (900, 1e-6, "20.26957", "1.75217")]
)
def test_moments_continuous_closed_form(n, delta, eps, lam):
    e, l_ = moments.moments_closed_form(n, 0.05, delta)
    assert_printed(e, eps)
    assert_printed(l_, lam)
    spent = moments.moments_epsilon(gamma=0.05, delta=delta, n_queries=n, accounting=Accounting("continuous"))
    assert_printed(spent.epsilon, eps)
    # the fine grid agrees with the closed form (no grid point beats it)
    assert spent.curve.min() >= spent.epsilon - 1e-12


def test_moments_logmgf_equals_l_times_rdp_at_l_plus_1():
    lam = np.arange(1, 9.0)
    for counts in (C240, C150):
        logmgf = moments.logmgf_lnmax(counts, 0.05, lam)[0]
        rdp_vals = rdp.rdp_pure_dp(rdp.lnmax_logq(counts, 0.05), 0.1, lam + 1)[0]
        np.testing.assert_allclose(logmgf, lam * rdp_vals, rtol=1e-12)


def test_theorem3_condition_value():
    assert_printed(moments.theorem3_q_limit(0.05), "0.47502")
    np.testing.assert_allclose(moments.theorem3_q_limit(0.05), (np.exp(0.1) - 1) / (np.exp(0.2) - 1), rtol=1e-12)


# ---------------------------------------------------------------- §2 Papernot 2018


def test_gnmax_logq_and_rdp():
    assert_printed(rdp.gnmax_logq(C240, 40)[0], "-9.11546641")
    got = rdp.rdp_gnmax(C240, 40, ORDERS6)[0]
    for g, e in zip(got, ["3.58329e-5", "4.07510e-5", "5.34110e-5", "1.15028e-4", "3.47589e-3", "5.95367e-2"]):
        assert_printed(g, e)
    # docs/reference-values.md adds "(data-independent α/1600 at the last two)"; the printed values
    # themselves are below α/1600 (μ1 = 40·√9.115 + 1 ≈ 121.8 > 100, so Theorem 6 applies there).
    assert np.all(got < ORDERS6 / 1600)


def test_gnmax_low_consensus_equals_data_independent():
    assert_printed(rdp.gnmax_logq(C150, 40)[0], "-2.20949878")
    np.testing.assert_allclose(rdp.rdp_gnmax(C150, 40, ORDERS6)[0], ORDERS6 / 1600, rtol=1e-12)


def test_gnmax_extreme_consensus():
    c = np.array([4000, 500, 300, 200, 0])
    assert_printed(rdp.gnmax_logq(c, 100)[0], "-310.37933905")
    assert_printed(rdp.rdp_gnmax(c, 100, [2.0])[0, 0], "1.35e-135")


def test_threshold_step():
    assert_printed(rdp.threshold_logpr([10], 300, 50)[0], "-19.52458321")
    got = rdp.rdp_threshold([10], 300, 50, [2.0, 100.0])[0]
    assert_printed(got[0], "8.8281e-10")
    assert_printed(got[1], "8.0699e-6")
    np.testing.assert_allclose(rdp.rdp_threshold_data_independent(50, [2.0, 100.0]), [4e-4, 2e-2], rtol=1e-12)
    assert_printed(rdp.threshold_logpr([240], 100, 20)[0], "-1.27981e-12")
    assert_printed(rdp.rdp_threshold([240], 100, 20, [2.0])[0, 0], "1.14614e-12")


def test_lnmax_in_rdp_framework():
    assert_printed(rdp.lnmax_logq(C240, 1 / 20)[0], "-8.49361187")
    got = rdp.rdp_pure_dp(rdp.lnmax_logq(C240, 1 / 20), 0.1, ORDERS6)[0]
    for g, e in zip(got, ["4.30717e-5", "4.67109e-5", "5.47345e-5", "8.27553e-5", "5.70520e-4", "1.64235e-2"]):
        assert_printed(g, e)


@pytest.mark.parametrize(
    "n, basic, improved", [(100, "1.7591", "1.4781"), (640, "4.6933", "4.1619"), (1000, "5.9959", "5.3777")]
)
def test_gnmax_data_independent_conversions(n, basic, improved):
    assert_printed(
        rdp.gnmax_epsilon(sigma=40, delta=1e-5, n_queries=n, accounting=Accounting(conversion="basic")).epsilon, basic
    )
    assert_printed(
        rdp.gnmax_epsilon(sigma=40, delta=1e-5, n_queries=n, accounting=Accounting(conversion="improved")).epsilon,
        improved,
    )


def test_paper2018_orders():
    from pate_study.privacy.accounting import paper2018_orders

    o = paper2018_orders()
    assert o[0] == 2 and o[-1] == 500 and np.all(np.diff(o) > 0)
    assert np.count_nonzero(o <= 100) == 197 and len(o) == 296


# ---------------------------------------------------------------- §3 conversions


def test_improved_conversion_reference():
    orders = np.arange(2, 33.0)
    with pytest.warns(OrderAtGridEdgeWarning):
        eps, order, _, edge = select_order(
            orders, epsilon_curve(orders, np.full(31, 1.1), 1e-5, accounting=Accounting(conversion="improved"))
        )
    assert_printed(eps, "1.32783806176")
    assert order == 32 and edge
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        eps_b, _, _, _ = select_order(
            orders, epsilon_curve(orders, np.full(31, 1.1), 1e-5, accounting=Accounting(conversion="basic"))
        )
    assert_printed(eps_b, "1.4714")


# ---------------------------------------------------------------- §4 smooth sensitivity


@pytest.mark.parametrize(
    "sigma, order, expected",
    [
        (40, 10, "-3.68093338"),
        (40, 20, "-3.15687305"),
        (100, 20, "-3.88650765"),
        (250, 10, "-5.50586777"),
        (0.5, 1.5, "-9.0"),
    ],
)
def test_logq0(sigma, order, expected):
    assert_printed(smooth_sensitivity.logq0_gnmax(sigma, order), expected)


def test_local_sensitivity_bounds():
    got = smooth_sensitivity.local_sensitivity_bounds_gnmax([10, 0, 0], 10, 0.5, 1.5)
    expected = ["3.13503646e-17", "1.60178280e-08", "5.90681786e-03"] + ["5.99981308"] * 7
    assert len(got) == 10
    for g, e in zip(got, expected):
        assert_printed(g, e)


def test_rdp_gnss():
    assert_printed(smooth_sensitivity.rdp_gnss(0.0329, 10, 15), "0.35055218")


# ------------------------------------------ thesis values (Visca 2021 §4.2.3, Table 4.1 and its worked examples)


def test_visca_integer_grid_values():
    # the data-independent bound (T·2γ²λ(λ+1) + ln(1/δ))/λ at λ = 1..8 (Papernot et al. 2017 Theorem 2's per-query
    # moment bound) for (T=1000, δ=1e-5) and (T=900, δ=1e-6); λ = 2's 20.4078 is Visca 2021 Table 4.1's median 20.41
    web = ["21.5129", "20.7565", "23.8376", "27.8782", "32.3026", "36.9188", "41.6447", "46.4391"]
    ecg = ["22.8155", "20.4078", "22.6052", "25.9539", "29.7631", "33.8026", "37.9736", "42.2269"]
    for (n, d), vals in (((1000, 1e-5), web), ((900, 1e-6), ecg)):
        curve = moments.moments_epsilon(gamma=0.05, delta=d, n_queries=n).curve
        for g, e in zip(curve, vals):
            assert_printed(g, e)
