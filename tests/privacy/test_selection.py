"""The selection accountant (privacy.selection): composition of fixed candidates and the random-stopping bounds of
Papernot & Steinke 2022 (Theorems 2 and 6), against closed forms, dp-accounting, properties and exact Rényi
divergences of best-of-K mechanisms enumerated on a small discrete instance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pate_study.privacy import selection
from pate_study.privacy.accounting import account
from pate_study.privacy.options import Accounting
from pate_study.privacy.rdp import gnmax_epsilon
from pate_study.privacy.topk_vote import topk_epsilon

ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 8.0, 10.0, 16.0, 32.0, 64.0, 128.0])


def gaussian_rdp(sigma: float) -> np.ndarray:
    return ORDERS / (2.0 * sigma**2)


def curve(
    rdp: np.ndarray, basis: str = "worst case over every neighbouring pair, both ways"
) -> selection.DataIndependentRdp:
    """One run's curve, declared to hold for every neighbouring pair both ways (what the bounds need)."""
    return selection.DataIndependentRdp(ORDERS, rdp, mechanism="test mechanism", basis=basis)


# ------------------------------------------------------------------------------------------- composition


def test_composition_of_identical_runs_is_k_times_one_run():
    one = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, accounting=Accounting(ORDERS))
    both = selection.selection_spent([one] * 7, delta=1e-6, warn=False)
    np.testing.assert_allclose(both.rdp_or_logmgf, 7 * one.rdp_or_logmgf, rtol=1e-12)
    assert both.epsilon > one.epsilon
    assert both.details["largest_candidate_epsilon"] == pytest.approx(one.epsilon)
    assert both.details["n_candidates"] == 7


def test_composition_sums_per_order():
    curves = np.array([[0.1, 0.2, 0.3], [1.0, 2.0, 4.0]])
    np.testing.assert_allclose(selection.compose_candidates(curves), [1.1, 2.2, 4.3])


def test_composition_refuses_mixed_grids_and_bad_curves():
    a = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=10, accounting=Accounting(ORDERS))
    b = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=10, accounting=Accounting(ORDERS[1:]))
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
    np.testing.assert_allclose(selection.truncated_negative_binomial_rdp(curve(rdp), 1.0, gamma), expected, rtol=1e-12)


# ------------------------------------------------------------------------------------------ dp-accounting


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("gamma", [0.2, 0.01])
def test_truncated_negative_binomial_matches_dp_accounting(eta, gamma):
    rpa = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    rdp = gaussian_rdp(2.0)
    mean = selection.truncated_negative_binomial_mean(eta, gamma)
    ref = rpa._compute_rdp_repeat_and_select(list(ORDERS), list(rdp), mean, eta)
    np.testing.assert_allclose(
        selection.truncated_negative_binomial_rdp(curve(rdp), eta, gamma), ref, rtol=1e-8, atol=1e-8
    )


@pytest.mark.parametrize("mu", [1.5, 10.0])
def test_poisson_at_most_dp_accounting(mu):
    # ours applies monotonicity in the order (dp-accounting does not for Poisson): equal or smaller, and equal
    # wherever the formula is already monotone (higher orders)
    rpa = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    rdp = gaussian_rdp(2.0)
    ref = np.array(rpa._compute_rdp_repeat_and_select(list(ORDERS), list(rdp), mu, np.inf))
    ours = selection.poisson_rdp(curve(rdp), mu)
    assert np.all(ours <= ref + 1e-12)
    np.testing.assert_allclose(ours[ORDERS >= 3], ref[ORDERS >= 3], rtol=1e-9)


# ---------------------------------------------------------------------------------------------- properties


@pytest.mark.parametrize("bound", ["tnb", "poisson"])
def test_bounds_above_one_run_and_monotone(bound):
    rdp = gaussian_rdp(4.0)
    small, large = (
        (selection.truncated_negative_binomial_rdp(curve(rdp), 1.0, g) for g in (0.5, 0.01))
        if bound == "tnb"
        else (selection.poisson_rdp(curve(rdp), m) for m in (2.0, 50.0))
    )
    assert np.all(small >= rdp)
    assert np.all(np.diff(small) >= 0) and np.all(np.diff(large) >= 0)
    assert np.all(large >= small)  # more runs on average, more privacy cost


def test_random_stopping_is_far_below_composition_for_many_runs():
    one = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, accounting=Accounting(ORDERS))
    stop = selection.random_stopping_spent(
        one, distribution="truncated_negative_binomial", eta=1.0, mean=30.0, delta=1e-6, warn=False
    )
    composed = selection.selection_spent([one] * 30, delta=1e-6, warn=False)
    assert one.epsilon < stop.epsilon < composed.epsilon
    assert stop.details["expected_runs"] == pytest.approx(30.0)


def test_random_stopping_bad_input_names_the_parameter():
    one = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, accounting=Accounting(ORDERS))
    with pytest.raises(ValueError, match="distribution"):
        selection.random_stopping_spent(one, distribution="poison", mu=2.0, delta=1e-6)
    with pytest.raises(ValueError, match="mu"):
        selection.random_stopping_spent(one, distribution="poisson", delta=1e-6)
    with pytest.raises(ValueError, match="eta/gamma/mean"):
        selection.random_stopping_spent(one, distribution="truncated_negative_binomial", eta=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="gamma"):
        selection.truncated_negative_binomial_rdp(curve(gaussian_rdp(1.0)), 1.0, 1.5)
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
    bound = selection.truncated_negative_binomial_rdp(curve(one_run_rdp()), eta, gamma)
    assert np.all(exact <= bound + 1e-12), (exact, bound)


@pytest.mark.parametrize("mu", [1.0, 5.0, 40.0])
def test_poisson_exact_at_or_below_theorem6(mu):
    exact = exact_rdp(lambda x: np.exp(mu * (np.asarray(x) - 1.0)))
    bound = selection.poisson_rdp(curve(one_run_rdp()), mu)
    assert np.all(exact <= bound + 1e-12), (exact, bound)


def test_exact_divergence_of_best_of_k_grows_with_k():
    # the instance is not trivial: picking the best of more runs leaks more than one run at high orders
    assert exact_rdp(lambda x: x**20)[-1] > one_run_rdp()[-1]


def test_selection_spent_converts_with_account():
    curves = [
        account(
            gaussian_rdp(s),
            delta=1e-5,
            accounting=Accounting(ORDERS),
            accountant="rdp2018",
            mechanism="gaussian",
            n_queries=1,
            data_dependent=False,
            warn=False,
        )
        for s in (1.0, 2.0)
    ]
    both = selection.selection_spent(curves, delta=1e-5, accounting=Accounting(conversion="improved"), warn=False)
    np.testing.assert_allclose(both.rdp_or_logmgf, gaussian_rdp(1.0) + gaussian_rdp(2.0))
    assert both.conversion == "improved"


# ------------------------------------------- the theorems' assumption: a guarantee for every pair, both ways

#: a two-outcome run Q (outcome 1 is the better score): P[Q = 1] on a dataset D and on a neighbour D'
P_ONE, P_ONE_NEIGHBOUR = 0.001, 0.05


def bernoulli(p: float) -> np.ndarray:
    return np.array([1.0 - p, p])


def one_direction_rdp() -> np.ndarray:
    """D_α(Q(D) ‖ Q(D')) only: what a data-dependent analysis of D gives (one dataset, one direction)."""
    return np.array([renyi(bernoulli(P_ONE), bernoulli(P_ONE_NEIGHBOUR), a) for a in ORDERS])


def both_directions_rdp() -> np.ndarray:
    forward = one_direction_rdp()
    backward = np.array([renyi(bernoulli(P_ONE_NEIGHBOUR), bernoulli(P_ONE), a) for a in ORDERS])
    return np.maximum(forward, backward)


def best_of_random_k_divergence(pgf) -> np.ndarray:
    """Exact D_λ(A(D) ‖ A(D')) of the best of K runs (same direction as the one-direction curve): the best of
    K two-outcome runs is 1 unless every run gave 0, P = 1 − E[(1 − p)^K]."""
    a, b = (bernoulli(1.0 - float(pgf(1.0 - p))) for p in (P_ONE, P_ONE_NEIGHBOUR))
    return np.array([renyi(a, b, lam) for lam in ORDERS])


def test_a_one_direction_curve_gives_a_bound_below_the_exact_best_of_k_divergence():
    """Why the bounds refuse a data-dependent curve: Theorem 2 evaluated on D's one-direction curve (even wrongly
    declared data-independent) falls far below the exact divergence of the best-of-K mechanism in that very
    direction; on the curve over both directions (the guarantee the theorem assumes) it is above it."""
    eta, gamma = 1.0, 0.01  # geometric, E[K] = 100
    exact = best_of_random_k_divergence(lambda x: selection.truncated_negative_binomial_pgf(x, eta, gamma))
    lying = selection.truncated_negative_binomial_rdp(curve(one_direction_rdp(), basis="one direction"), eta, gamma)
    assert np.min(lying / exact) < 0.2  # unsound: a fifth of the exact divergence, or less
    sound = selection.truncated_negative_binomial_rdp(curve(both_directions_rdp()), eta, gamma)
    assert np.all(sound >= exact)


def data_dependent_run():
    """What a data-dependent accountant returns for the one-direction curve of D."""
    return account(
        one_direction_rdp(),
        delta=1e-6,
        accounting=Accounting(ORDERS),
        accountant="rdp2018",
        mechanism="two-outcome run",
        n_queries=1,
        data_dependent=True,
        warn=False,
    )


@pytest.mark.parametrize(
    "distribution, params", [("truncated_negative_binomial", {"eta": 1.0, "gamma": 0.01}), ("poisson", {"mu": 20.0})]
)
@pytest.mark.filterwarnings("ignore::pate_study.privacy.accounting.OrderAtGridEdgeWarning")
def test_random_stopping_refuses_a_data_dependent_curve(distribution, params):
    with pytest.raises(ValueError, match=r"^one_run: a data-dependent RDP curve .*every pair of neighbouring"):
        selection.random_stopping_spent(data_dependent_run(), distribution=distribution, delta=1e-6, **params)
    votes = np.array([[90, 5, 5], [40, 35, 25]])
    with pytest.raises(ValueError, match="^one_run: a data-dependent"):
        selection.random_stopping_spent(
            gnmax_epsilon(sigma=40.0, delta=1e-6, votes=votes, accounting=Accounting(ORDERS)),
            distribution=distribution,
            delta=1e-6,
            **params,
        )


def test_the_bounds_take_only_a_declared_data_independent_curve():
    """The raw curve alone says nothing about the pairs it covers: the bounds take a DataIndependentRdp."""
    for bound, args in ((selection.truncated_negative_binomial_rdp, (1.0, 0.01)), (selection.poisson_rdp, (20.0,))):
        with pytest.raises(ValueError, match="^one_run: expected a DataIndependentRdp"):
            bound(one_direction_rdp(), *args)
        with pytest.raises(ValueError, match="^one_run: a data-dependent"):
            bound(data_dependent_run(), *args)


def test_a_realised_cost_is_not_one_runs_guarantee():
    realised = account(
        gaussian_rdp(4.0),
        delta=1e-6,
        accounting=Accounting(ORDERS),
        accountant="rdp2018",
        mechanism="confident-gnmax",
        n_queries=10,
        data_dependent=False,
        cost="realized",
        warn=False,
    )
    with pytest.raises(ValueError, match="^one_run: a realised cost"):
        selection.random_stopping_spent(realised, distribution="poisson", mu=3.0, delta=1e-6)


@pytest.mark.filterwarnings("ignore::pate_study.privacy.accounting.OrderAtGridEdgeWarning")
def test_a_data_independent_result_and_its_declared_curve_give_the_same_guarantee():
    """The documented ways in: a data-independent PrivacySpent as is (here the top-k vote release), or the curve
    wrapped with the reason it holds for every pair."""
    one = topk_epsilon(
        k=2, n_teachers=50, sigma=8.0, delta=1e-6, n_queries=100, n_labels=10, accounting=Accounting(ORDERS)
    )
    direct = selection.random_stopping_spent(
        one, distribution="truncated_negative_binomial", eta=1.0, mean=10.0, delta=1e-6, warn=False
    )
    wrapped = selection.DataIndependentRdp(
        ORDERS, one.rdp_or_logmgf, mechanism="topk-vote", basis="Gaussian, l2 sensitivity sqrt(2k)/T", n_queries=100
    )
    declared = selection.random_stopping_spent(
        wrapped, distribution="truncated_negative_binomial", eta=1.0, mean=10.0, delta=1e-6, warn=False
    )
    assert direct.epsilon == pytest.approx(declared.epsilon, rel=1e-12)
    assert not direct.data_dependent and direct.details["one_run_epsilon"] == pytest.approx(one.epsilon, rel=1e-12)
    assert declared.details["basis"] == "Gaussian, l2 sensitivity sqrt(2k)/T"


# ------------------------------------------------------------------------ the bounds' own ranges and inputs


def test_poisson_below_one_run_on_average_is_refused_naming_mu():
    """Theorem 6's log(μ)/(λ − 1) takes the bound below 0 for small μ (it returned negative RDP before)."""
    for mu in (0.5, 0.01, 1e-300):
        with pytest.raises(ValueError, match=r"^mu: expected a finite mean number of runs >= 1"):
            selection.poisson_rdp(curve(gaussian_rdp(4.0)), mu)
    assert np.all(selection.poisson_rdp(curve(gaussian_rdp(4.0)), 1.0) >= gaussian_rdp(4.0))


def test_the_number_of_runs_is_a_whole_number():
    with pytest.raises(ValueError, match=r"^k: expected whole numbers of runs >= 1, got 1.5"):
        selection.truncated_negative_binomial_pmf(1.5, 1.0, 0.1)
    for bad in (0, np.nan, np.inf, [1, 2, 2.5]):
        with pytest.raises(ValueError, match="^k: "):
            selection.truncated_negative_binomial_pmf(bad, 1.0, 0.1)
    assert selection.truncated_negative_binomial_pmf(2.0, 1.0, 0.1) == pytest.approx(0.1 * 0.9)


def test_astronomical_numbers_of_runs_cost_no_loop():
    """P[K = k] in closed form: k = 10^15 answers at once (the product over l < k was a loop and an array)."""
    p = selection.truncated_negative_binomial_pmf([1e15, 10**18, 10**30], 0.5, 0.3)
    assert np.all(p == 0.0)
    with pytest.raises(ValueError, match=r"^mean: expected an expected number of runs from"):
        selection.truncated_negative_binomial_gamma(-0.5, 1e300)


@pytest.mark.parametrize(
    "distribution, params, name",
    [
        ("poisson", {"mu": 2.0, "eta": 1.0}, "eta"),
        ("poisson", {"mu": 2.0, "mean": 5.0}, "mean"),
        ("truncated_negative_binomial", {"eta": 1.0, "mean": 5.0, "mu": 5.0}, "mu"),
    ],
)
def test_a_parameter_of_the_other_distribution_is_refused_not_ignored(distribution, params, name):
    one = gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, accounting=Accounting(ORDERS))
    with pytest.raises(ValueError, match=rf"^{name}: not a parameter of distribution='{distribution}'"):
        selection.random_stopping_spent(one, distribution=distribution, delta=1e-6, **params)


def _spent():
    return gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100, accounting=Accounting(ORDERS))


#: (call, the parameter its one-line message must name): wrong types, empty and non-finite values, huge counts
BAD_SELECTION_INPUTS = [
    (lambda: selection.compose_candidates("0.1, 0.2"), "rdp_curves"),
    (lambda: selection.compose_candidates([]), "rdp_curves"),
    (lambda: selection.compose_candidates([[None, 0.1]]), "rdp_curves"),
    (lambda: selection.compose_candidates([[0.1, 1j]]), "rdp_curves"),
    (lambda: selection.compose_candidates(np.zeros((2, 0))), "rdp_curves"),
    (lambda: selection.selection_spent(None, delta=1e-6), "candidates"),
    (lambda: selection.selection_spent(_spent(), delta=1e-6), "candidates"),
    (lambda: selection.selection_spent([_spent(), "x"], delta=1e-6), r"candidates\[1\]"),
    (lambda: selection.truncated_negative_binomial_mean("1", 0.5), "eta"),
    (lambda: selection.truncated_negative_binomial_mean(1.0, None), "gamma"),
    (lambda: selection.truncated_negative_binomial_mean(True, 0.5), "eta"),
    (lambda: selection.truncated_negative_binomial_mean(10**400, 0.5), "eta"),
    (lambda: selection.truncated_negative_binomial_gamma(1.0, np.nan), "mean"),
    (lambda: selection.truncated_negative_binomial_gamma(1.0, 1.0 + 1e-15), "mean"),
    (lambda: selection.truncated_negative_binomial_pgf([0.5, np.nan], 1.0, 0.5), "x"),
    (lambda: selection.truncated_negative_binomial_pgf(2.0, 1.0, 0.5), "x"),
    (lambda: selection.truncated_negative_binomial_pmf(None, 1.0, 0.5), "k"),
    (lambda: selection.rdp_delta(ORDERS, gaussian_rdp(1.0), "1"), "epsilon"),
    (lambda: selection.rdp_delta("2, 3", [0.1, 0.2], 1.0), "orders"),
    (lambda: selection.rdp_delta([2.0, 3.0], [0.1], 1.0), "rdp"),
    (lambda: selection.poisson_rdp(curve(gaussian_rdp(1.0)), "2"), "mu"),
    (lambda: selection.poisson_rdp(curve(gaussian_rdp(1.0)), np.inf), "mu"),
    (lambda: selection.DataIndependentRdp(ORDERS, gaussian_rdp(1.0), mechanism="", basis="b"), "mechanism"),
    (lambda: selection.DataIndependentRdp(ORDERS, gaussian_rdp(1.0), mechanism="m", basis=None), "basis"),
    (lambda: selection.DataIndependentRdp(ORDERS, -gaussian_rdp(1.0), mechanism="m", basis="b"), "rdp"),
    (lambda: selection.DataIndependentRdp(ORDERS[::-1], gaussian_rdp(1.0), mechanism="m", basis="b"), "orders"),
    (
        lambda: selection.DataIndependentRdp(ORDERS, gaussian_rdp(1.0), mechanism="m", basis="b", n_queries=0),
        "n_queries",
    ),
    (lambda: selection.random_stopping_spent(None, distribution="poisson", mu=2.0, delta=1e-6), "one_run"),
    (lambda: selection.random_stopping_spent(_spent(), distribution="poisson", mu=2.0, delta=2.0), "delta"),
    (
        lambda: selection.random_stopping_spent(
            _spent(), distribution="poisson", mu=2.0, delta=1e-6, accounting=Accounting(conversion="x")
        ),
        "conversion",
    ),
]


@pytest.mark.parametrize("call, name", BAD_SELECTION_INPUTS, ids=range(len(BAD_SELECTION_INPUTS)))
def test_bad_input_to_the_selection_accountant_is_one_line_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: ") as err:
        call()
    assert "\n" not in str(err.value)
