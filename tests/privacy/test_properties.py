"""Property tests (hypothesis): bounds are ordered, monotone in queries, finite on edge cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pate_study.privacy import moments, multilabel, rdp
from pate_study.privacy.accounting import OrderAtGridEdgeWarning, paper2018_orders
from pate_study.privacy.options import Accounting

ORDERS = paper2018_orders()
SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def vote_arrays(draw, max_queries=12, max_classes=12, max_teachers=500):
    """Vote histograms: every row splits the same number of teachers over the classes."""
    n_q = draw(st.integers(1, max_queries))
    n_c = draw(st.integers(1, max_classes))
    teachers = draw(st.integers(1, max_teachers))
    cuts = np.sort(draw(arrays(np.int64, (n_q, n_c - 1), elements=st.integers(0, teachers))), axis=1)
    edges = np.concatenate([np.zeros((n_q, 1), np.int64), cuts, np.full((n_q, 1), teachers)], axis=1)
    return np.diff(edges, axis=1)


sigmas = st.floats(0.5, 200.0)
gammas = st.floats(0.005, 2.0)


@SETTINGS
@given(vote_arrays(), sigmas)
def test_gnmax_dependent_below_independent(votes, sigma):
    dep = rdp.rdp_gnmax(votes, sigma, ORDERS)
    assert np.all(np.isfinite(dep)) and np.all(dep >= 0)
    assert np.all(dep <= ORDERS / sigma**2 * (1 + 1e-12))


@SETTINGS
@given(vote_arrays(), gammas, st.sampled_from(["theorem", "reference_code"]), st.sampled_from(["sum", "approx"]))
def test_lnmax_dependent_below_independent(votes, gamma, cond, variant):
    lam = np.arange(1, 9.0)
    dep = moments.logmgf_lnmax(votes, gamma, lam, cond, variant)
    assert np.all(np.isfinite(dep)) and np.all(dep >= 0)
    assert np.all(dep <= moments.logmgf_data_independent(gamma, lam) * (1 + 1e-12))
    dep_rdp = rdp.rdp_pure_dp(rdp.lnmax_logq(votes, gamma, variant), 2 * gamma, ORDERS, cond)
    assert np.all(dep_rdp <= rdp.rdp_pure_dp_data_independent(2 * gamma, ORDERS) * (1 + 1e-12))


@SETTINGS
@given(vote_arrays(), st.floats(0.0, 600.0), st.floats(1.0, 200.0))
def test_threshold_dependent_below_independent(votes, threshold, sigma1):
    dep = rdp.rdp_threshold(votes.max(axis=1), threshold, sigma1, ORDERS)
    assert np.all(np.isfinite(dep)) and np.all(dep >= 0)
    assert np.all(dep <= ORDERS / (2 * sigma1**2) * (1 + 1e-12))


@SETTINGS
@given(
    arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(2, 20)), elements=st.floats(0, 1)),
    st.floats(0.01, 2.0),
    st.one_of(st.floats(0.0, 1.0), st.just("adaptive")),
)
def test_multilabel_dependent_below_independent(fractions, sigma, threshold):
    logq = multilabel.multilabel_logq(fractions, threshold, sigma)
    assert np.all(logq <= 0)
    slope = multilabel.multilabel_slope(sigma, fractions.shape[1])
    dep = rdp.rdp_data_dependent(logq, slope, ORDERS)
    assert np.all(np.isfinite(dep)) and np.all(dep <= slope * ORDERS * (1 + 1e-12))


@SETTINGS
@given(vote_arrays(max_queries=20), sigmas, st.sampled_from(["basic", "improved"]))
def test_epsilon_non_decreasing_in_queries(votes, sigma, conversion):
    eps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        for k in range(1, len(votes) + 1):
            eps.append(
                rdp.gnmax_epsilon(
                    sigma=sigma, delta=1e-5, votes=votes[:k], accounting=Accounting(conversion=conversion)
                ).epsilon
            )
        eps_m = [
            moments.moments_epsilon(gamma=0.05, delta=1e-5, votes=votes[:k]).epsilon for k in range(1, len(votes) + 1)
        ]
    assert np.all(np.diff(eps) >= -1e-12)
    assert np.all(np.diff(eps_m) >= -1e-12)


@SETTINGS
@given(vote_arrays(), sigmas)
def test_total_equals_sum_of_per_query(votes, sigma):
    logq = rdp.gnmax_logq(votes, sigma)
    per_query = rdp.rdp_data_dependent(logq, 1 / sigma**2, ORDERS)
    np.testing.assert_allclose(
        rdp.total_rdp_data_dependent(logq, 1 / sigma**2, ORDERS), per_query.sum(axis=0), rtol=1e-10, atol=1e-300
    )


EDGE_CASES = {
    "unanimous": np.tile([250, 0, 0, 0, 0, 0, 0, 0, 0, 0], (50, 1)),
    "all_tied": np.tile([25] * 10, (50, 1)),
    "10000_teachers": np.tile([10000, 0, 0], (50, 1)),
    "one_class": np.full((50, 1), 250),
    "two_way_tie": np.tile([125, 125, 0], (50, 1)),
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
@pytest.mark.parametrize("conversion", ["basic", "improved"])
def test_edge_cases_finite(case, conversion):
    votes = EDGE_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        results = [
            rdp.gnmax_epsilon(sigma=40, delta=1e-5, votes=votes, accounting=Accounting(conversion=conversion)),
            rdp.gnmax_epsilon(sigma=0.5, delta=1e-5, votes=votes, accounting=Accounting(conversion=conversion)),
            rdp.lnmax_rdp_epsilon(gamma=0.05, delta=1e-5, votes=votes, accounting=Accounting(conversion=conversion)),
            rdp.confident_gnmax_epsilon(
                threshold=200,
                sigma1=50,
                sigma2=40,
                delta=1e-5,
                votes=votes,
                accounting=Accounting(conversion=conversion),
                rng=0,
            ),
            moments.moments_epsilon(gamma=0.05, delta=1e-5, votes=votes),
            moments.moments_epsilon(gamma=0.05, delta=1e-5, votes=votes, q_condition="reference_code"),
            moments.moments_epsilon(gamma=2.0, delta=1e-5, votes=votes, q_condition="reference_code"),
            moments.moments_epsilon(gamma=0.05, delta=1e-5, votes=votes, accounting=Accounting("continuous")),
        ]
    for r in results:
        assert np.isfinite(r.epsilon) and r.epsilon >= 0
        assert np.all(np.isfinite(r.curve)) and np.all(np.isfinite(r.rdp_or_logmgf))


def test_one_class_costs_nothing_per_query():
    votes = EDGE_CASES["one_class"]
    assert np.all(rdp.rdp_gnmax(votes, 40, ORDERS) == 0)
    assert np.all(moments.logmgf_lnmax(votes, 0.05) == 0)


@SETTINGS
@given(vote_arrays(), gammas, st.sampled_from(["theorem", "reference_code"]))
def test_pure_dp_total_equals_sum_of_per_query(votes, gamma, cond):
    logq = rdp.lnmax_logq(votes, gamma)
    per_query = rdp.rdp_pure_dp(logq, 2 * gamma, ORDERS, cond)
    np.testing.assert_allclose(
        rdp.total_rdp_pure_dp(logq, 2 * gamma, ORDERS, cond), per_query.sum(axis=0), rtol=1e-10, atol=1e-300
    )


@SETTINGS
@given(
    arrays(np.float64, st.integers(1, 30), elements=st.floats(-3000.0, -1e-12)),
    st.floats(-60.0, 60.0),
    st.floats(-60.0, 60.0),
)
def test_log_mix_equals_numpy_logaddexp(logq, log_a, log_b):
    # the SIMD-friendly log-sum-exp of rdp._log_mix against np.logaddexp, including exp arguments below −700
    n = len(logq)
    log1q = np.log1p(-np.exp(logq))
    la, lb = np.full(n, log_a), np.full(n, log_b)
    am1 = ORDERS - 1.0
    x = log1q[:, None] + la[:, None] * am1
    y = logq[:, None] + lb[:, None] * am1
    expected = np.logaddexp(x, y) / am1
    scale = (np.abs(x) + np.abs(y)) / am1  # rounding of x and y themselves
    got = rdp._log_mix(logq, log1q, la, lb, am1)
    assert np.all(np.abs(got - expected) <= 1e-13 * np.abs(expected) + 4e-16 * scale)
