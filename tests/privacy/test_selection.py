"""The selection accountant (privacy.selection): composition of fixed candidates and the random-stopping bounds of
Papernot & Steinke 2022 (Theorems 2 and 6), against closed forms, dp-accounting, properties and exact Rényi
divergences of best-of-K mechanisms enumerated on a small discrete instance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pate_study.privacy import selection
from pate_study.privacy.accounting import account
from pate_study.privacy.rdp import gnmax_epsilon

ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 8.0, 10.0, 16.0, 32.0, 64.0, 128.0])


def gaussian_rdp(sigma: float) -> np.ndarray:
    return ORDERS / (2.0 * sigma**2)


# ------------------------------------------------------------------------------------------- composition


def test_composition_of_identical_runs_is_k_times_one_run():
    one = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, orders=ORDERS)
    both = selection.selection_spent([one] * 7, delta=1e-6, warn=False)
    np.testing.assert_allclose(both.rdp_or_logmgf, 7 * one.rdp_or_logmgf, rtol=1e-12)
    assert both.epsilon > one.epsilon
    assert both.details["largest_candidate_epsilon"] == pytest.approx(one.epsilon)
    assert both.details["n_candidates"] == 7


def test_composition_sums_per_order():
    curves = np.array([[0.1, 0.2, 0.3], [1.0, 2.0, 4.0]])
    np.testing.assert_allclose(selection.compose_candidates(curves), [1.1, 2.2, 4.3])


def test_composition_refuses_mixed_grids_and_bad_curves():
    a = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=10, orders=ORDERS)
    b = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=10, orders=ORDERS[1:])
    with pytest.raises(ValueError, match=r"candidates\[1\]"):
        selection.selection_spent([a, b], delta=1e-6)
    with pytest.raises(ValueError, match="candidates"):
        selection.selection_spent([], delta=1e-6)
    with pytest.raises(ValueError, match="rdp_curves"):
        selection.compose_candidates([[0.1, np.nan]])


# ------------------------------------------------------------------------- the distribution of the runs


@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("gamma", [0.3, 0.05])
def test_truncated_negative_binomial_pmf_mean_and_pgf(eta, gamma):
    k = np.arange(1, 6000)
    p = selection.truncated_negative_binomial_pmf(k, eta, gamma)
    assert math.fsum(p.tolist()) == pytest.approx(1.0, abs=1e-10)
    mean = selection.truncated_negative_binomial_mean(eta, gamma)
    assert math.fsum((k * p).tolist()) == pytest.approx(mean, rel=1e-9)
    x = np.array([0.0, 0.3, 0.9, 1.0])
    np.testing.assert_allclose(
        selection.truncated_negative_binomial_pgf(x, eta, gamma),
        [math.fsum((p * xi**k).tolist()) for xi in x],
        rtol=1e-9,
        atol=1e-15,
    )
    assert selection.truncated_negative_binomial_gamma(eta, mean) == pytest.approx(gamma, rel=1e-9)


def test_special_cases_of_the_mean():
    # η = 1 is the geometric distribution P[K = k] = γ(1 − γ)^{k−1}, mean 1/γ (Papernot & Steinke 2022, §2)
    assert selection.truncated_negative_binomial_mean(1.0, 0.1) == pytest.approx(10.0, rel=1e-12)
    k = np.arange(1, 5)
    np.testing.assert_allclose(selection.truncated_negative_binomial_pmf(k, 1.0, 0.1), 0.1 * 0.9 ** (k - 1))
    # η = 0 is the logarithmic distribution, mean (1/γ − 1)/log(1/γ)
    assert selection.truncated_negative_binomial_mean(0.0, 0.1) == pytest.approx(9.0 / math.log(10.0), rel=1e-12)


def test_geometric_bound_closed_form():
    # Theorem 2 at η = 1 with E[K] = 1/γ: ε + 2 min_λ̂[(1 − 1/λ̂)ε(λ̂) + log(1/γ)/λ̂] + log(1/γ)/(λ − 1)
    rdp = gaussian_rdp(3.0)
    gamma = 0.02
    hat = np.min((1 - 1 / ORDERS) * rdp + math.log(1 / gamma) / ORDERS)
    raw = rdp + 2 * hat + math.log(1 / gamma) / (ORDERS - 1)
    expected = np.minimum.accumulate(raw[::-1])[::-1]
    np.testing.assert_allclose(selection.truncated_negative_binomial_rdp(ORDERS, rdp, 1.0, gamma), expected, rtol=1e-12)


# ------------------------------------------------------------------------------------------ dp-accounting


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("gamma", [0.2, 0.01])
def test_truncated_negative_binomial_matches_dp_accounting(eta, gamma):
    rpa = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    rdp = gaussian_rdp(2.0)
    mean = selection.truncated_negative_binomial_mean(eta, gamma)
    ref = rpa._compute_rdp_repeat_and_select(list(ORDERS), list(rdp), mean, eta)
    np.testing.assert_allclose(
        selection.truncated_negative_binomial_rdp(ORDERS, rdp, eta, gamma), ref, rtol=1e-8, atol=1e-8
    )


@pytest.mark.parametrize("mu", [1.5, 10.0])
def test_poisson_at_most_dp_accounting(mu):
    # ours applies monotonicity in the order (dp-accounting does not for Poisson): equal or smaller, and equal
    # wherever the formula is already monotone (higher orders)
    rpa = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    rdp = gaussian_rdp(2.0)
    ref = np.array(rpa._compute_rdp_repeat_and_select(list(ORDERS), list(rdp), mu, np.inf))
    ours = selection.poisson_rdp(ORDERS, rdp, mu)
    assert np.all(ours <= ref + 1e-12)
    np.testing.assert_allclose(ours[ORDERS >= 3], ref[ORDERS >= 3], rtol=1e-9)


# ---------------------------------------------------------------------------------------------- properties


@pytest.mark.parametrize("bound", ["tnb", "poisson"])
def test_bounds_above_one_run_and_monotone(bound):
    rdp = gaussian_rdp(4.0)
    small, large = (
        (selection.truncated_negative_binomial_rdp(ORDERS, rdp, 1.0, g) for g in (0.5, 0.01))
        if bound == "tnb"
        else (selection.poisson_rdp(ORDERS, rdp, m) for m in (2.0, 50.0))
    )
    assert np.all(small >= rdp)
    assert np.all(np.diff(small) >= 0) and np.all(np.diff(large) >= 0)
    assert np.all(large >= small)  # more runs on average, more privacy cost


def test_random_stopping_is_far_below_composition_for_many_runs():
    one = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, orders=ORDERS)
    stop = selection.random_stopping_spent(
        one, distribution="truncated_negative_binomial", eta=1.0, mean=30.0, delta=1e-6, warn=False
    )
    composed = selection.selection_spent([one] * 30, delta=1e-6, warn=False)
    assert one.epsilon < stop.epsilon < composed.epsilon
    assert stop.details["expected_runs"] == pytest.approx(30.0)


def test_random_stopping_bad_input_names_the_parameter():
    one = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, orders=ORDERS)
    with pytest.raises(ValueError, match="distribution"):
        selection.random_stopping_spent(one, distribution="poison", mu=2.0, delta=1e-6)
    with pytest.raises(ValueError, match="mu"):
        selection.random_stopping_spent(one, distribution="poisson", delta=1e-6)
    with pytest.raises(ValueError, match="eta/gamma/mean"):
        selection.random_stopping_spent(one, distribution="truncated_negative_binomial", eta=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="gamma"):
        selection.truncated_negative_binomial_rdp(ORDERS, gaussian_rdp(1.0), 1.0, 1.5)
    with pytest.raises(ValueError, match="eta"):
        selection.truncated_negative_binomial_mean(-1.0, 0.5)


# ------------------------------------------------------------------ exact best-of-K on a discrete instance

#: one run Q: a score in {0, 1, 2, 3} (higher is better) with these probabilities on two neighbouring inputs
P_D = np.array([0.10, 0.20, 0.30, 0.40])
P_D2 = np.array([0.25, 0.30, 0.25, 0.20])


def renyi(p: np.ndarray, q: np.ndarray, order: float) -> float:
    """Exact Rényi divergence of two distributions on a finite set, in log space."""
    return float(np.logaddexp.reduce(order * np.log(p) + (1 - order) * np.log(q)) / (order - 1))


def best_of(p: np.ndarray, pgf) -> np.ndarray:
    """Distribution of the best score of K runs: P[max ≤ t] = E[F(t)^K] = pgf(F(t)); with P[K = 0] = pgf(0) > 0
    (Poisson) the empty output comes first."""
    cdf = np.concatenate([[0.0], np.cumsum(p)])
    cdf[-1] = 1.0
    g = pgf(cdf)
    return np.diff(g) if g[0] == 0 else np.concatenate([[g[0]], np.diff(g)])


def one_run_rdp() -> np.ndarray:
    return np.array([max(renyi(P_D, P_D2, a), renyi(P_D2, P_D, a)) for a in ORDERS])


def exact_rdp(pgf) -> np.ndarray:
    a, b = best_of(P_D, pgf), best_of(P_D2, pgf)
    return np.array([max(renyi(a, b, lam), renyi(b, a, lam)) for lam in ORDERS])


@pytest.mark.parametrize("k", [2, 5, 20])
def test_fixed_k_best_of_k_exact_at_or_below_composition(k):
    exact = exact_rdp(lambda x: x**k)
    bound = selection.compose_candidates(np.tile(one_run_rdp(), (k, 1)))
    assert np.all(exact <= bound + 1e-12)


@pytest.mark.parametrize("eta", [0.0, 1.0, 2.0, -0.5])
@pytest.mark.parametrize("gamma", [0.5, 0.05])
def test_truncated_negative_binomial_exact_at_or_below_theorem2(eta, gamma):
    exact = exact_rdp(lambda x: selection.truncated_negative_binomial_pgf(x, eta, gamma))
    bound = selection.truncated_negative_binomial_rdp(ORDERS, one_run_rdp(), eta, gamma)
    assert np.all(exact <= bound + 1e-12), (exact, bound)


@pytest.mark.parametrize("mu", [1.0, 5.0, 40.0])
def test_poisson_exact_at_or_below_theorem6(mu):
    exact = exact_rdp(lambda x: np.exp(mu * (np.asarray(x) - 1.0)))
    bound = selection.poisson_rdp(ORDERS, one_run_rdp(), mu)
    assert np.all(exact <= bound + 1e-12), (exact, bound)


def test_exact_divergence_of_best_of_k_grows_with_k():
    # the instance is not trivial: picking the best of more runs leaks more than one run at high orders
    assert exact_rdp(lambda x: x**20)[-1] > one_run_rdp()[-1]


def test_selection_spent_converts_with_account():
    curves = [
        account(
            gaussian_rdp(s),
            delta=1e-5,
            orders=ORDERS,
            accountant="rdp2018",
            mechanism="gaussian",
            n_queries=1,
            data_dependent=False,
            warn=False,
        )
        for s in (1.0, 2.0)
    ]
    both = selection.selection_spent(curves, delta=1e-5, conversion="improved", warn=False)
    np.testing.assert_allclose(both.rdp_or_logmgf, gaussian_rdp(1.0) + gaussian_rdp(2.0))
    assert both.conversion == "improved"
