"""Smooth sensitivity (Papernot et al. 2018, App. B): vectorised walk, cached log q0, conditions C5–C6, threshold
values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.special import erfc, erfcinv

from pate_study.privacy import rdp
from pate_study.privacy import smooth_sensitivity as ss


def _loop_ls_gnmax(votes, t, sigma, order):
    """Algorithms 4–5 for one query, written as a plain loop over distances (reference for the vectorised walk)."""
    m = len(votes)
    logq0 = ss.logq0_gnmax(sigma, order)
    logq1 = float(ss._log_neighbour_q(np.array([logq0]), sigma, m, -1.0)[0])

    def ls(logq):
        return float(ss._local_sensitivity(np.array([logq]), sigma, m, order, logq0, logq1)[0])

    res = [ls(logq1)] * t
    v = sorted((float(x) for x in votes), reverse=True)
    logq = float(rdp.gnmax_logq(v, sigma)[0])
    if logq1 <= logq <= logq0:
        return np.array(res)
    res[0] = ls(logq)
    up = logq > logq0
    d = 0
    while d + 1 < t and ((up and logq > logq0 and v[1] > 0) or (not up and logq < logq1)):
        d += 1
        v[0], v[1] = (v[0] + 1, v[1] - 1) if up else (v[0] - 1, v[1] + 1)
        v.sort(reverse=True)
        logq = float(rdp.gnmax_logq(v, sigma)[0])
        res[d] = ls(logq)
    return np.array(res)


@pytest.mark.slow
def test_vectorised_walk_and_release_equal_the_loop():
    rng = np.random.default_rng(7)
    t, sigma, order = 60, 8.0, 5.0
    p = rng.dirichlet(np.full(4, 0.4), size=150)
    votes = np.stack([rng.multinomial(t, row) for row in p])
    votes[:3] = [[60, 0, 0, 0], [30, 30, 0, 0], [20, 20, 20, 0]]
    per_query = np.stack([_loop_ls_gnmax(v, t, sigma, order) for v in votes])
    for v, expected in zip(votes[:20], per_query[:20]):
        np.testing.assert_allclose(ss.local_sensitivity_bounds_gnmax(v, t, sigma, order), expected, rtol=1e-12)
    rel = ss.smooth_sensitivity_release(votes, t, sigma, order, 0.04, 5.0, 1e-5, 0)
    assert rel.smooth_sensitivity == pytest.approx(ss.smooth_sensitivity(per_query.sum(axis=0), 0.04), rel=1e-12)
    logq0 = ss.logq0_gnmax(sigma, order)
    logq = rdp.gnmax_logq(votes, sigma)
    loop_rdp = sum(order / sigma**2 if lq >= logq0 else float(ss._dd_bound(lq, sigma, order)[0]) for lq in logq)
    assert rel.rdp_data_dependent == pytest.approx(loop_rdp, rel=1e-12)


def test_logq0_is_computed_once_per_sigma_and_order(monkeypatch):
    calls = []
    real = ss.brentq

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ss, "brentq", counting)
    ss._logq0_cached.cache_clear()
    votes = np.tile([200, 30, 20], (40, 1))
    ss.smooth_sensitivity_release(votes, 250, 40.0, 20.0, 0.02, 10.0, 1e-5, 0)
    ss.smooth_sensitivity_release(votes, 250, 40.0, 20.0, 0.02, 10.0, 1e-5, 1)
    assert len(calls) == 1  # one root search for (σ, α) = (40, 20), not one per query or per call
    assert ss.logq0_gnmax(40, 20) == pytest.approx(-3.15687305, abs=5e-9)


def _beta(logq, sigma, order):
    """Theorem 6 GNMax bound at one order, without its conditions (float64, formulas as printed)."""
    q = math.exp(logq)
    mu2 = sigma * math.sqrt(-logq)
    mu1 = mu2 + 1
    e1, e2 = mu1 / sigma**2, mu2 / sigma**2
    a = (1 - q) / (1 - (q * math.exp(e2)) ** ((mu2 - 1) / mu2))
    b = math.exp(e1) / q ** (1 / (mu1 - 1))
    return math.log((1 - q) * a ** (order - 1) + q * b ** (order - 1)) / (order - 1)


def _bu(logq, sigma, m):
    return math.log((m - 1) / 2 * erfc(erfcinv(2 * math.exp(logq) / (m - 1)) - 1 / sigma))


def test_conditions_c5_c6_checked():
    assert ss.check_conditions(40, 10, 20) == (True, True)
    assert ss.check_conditions(0.5, 3, 1.5) == (True, True)  # the reference-values case
    # σ = 40, 10 classes, α = 100: β(B_u(q)) − β(q) falls between log q = −20.5 and −10 (C6 fails)
    delta = [_beta(_bu(lq, 40, 10), 40, 100) - _beta(lq, 40, 100) for lq in (-20.5, -10.0)]
    assert delta[1] < 0.5 * delta[0] and -10.0 < ss.logq0_gnmax(40, 100)
    assert ss.check_conditions(40, 10, 100) == (True, False)
    votes = [200, 30, 20, 0, 0, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="C6"):
        ss.local_sensitivity_bounds_gnmax(votes, 250, 40, 100)
    with pytest.raises(ValueError, match="C6"):
        ss.smooth_sensitivity_release(np.array([votes]), 250, 40, 100, 0.004, 10, 1e-5, 0)
    with pytest.warns(ss.SmoothSensitivityConditionsWarning, match="C6") as record:
        warned = ss.local_sensitivity_bounds_gnmax(votes, 250, 40, 100, conditions="warn")
    assert record[0].filename == __file__
    np.testing.assert_array_equal(warned, ss.local_sensitivity_bounds_gnmax(votes, 250, 40, 100, conditions="skip"))
    with pytest.raises(ValueError, match="conditions"):
        ss.local_sensitivity_bounds_gnmax(votes, 250, 40, 20, conditions="ignore")


def test_threshold_local_sensitivity_values():
    t, threshold, sigma1, order = 30, 20.0, 4.0, 8.0
    beta = rdp.rdp_threshold(np.arange(t + 1.0), threshold, sigma1, [order])[:, 0]
    # a teacher moves the max vote v by at most 1: LS at v is the larger step to v ± 1
    ls_at = [max(abs(beta[min(v + 1, t)] - beta[v]), abs(beta[v] - beta[max(v - 1, 0)])) for v in range(t + 1)]
    for v_star in (0, 12, 20, 30):
        got = ss.local_sensitivity_bounds_threshold(v_star, t, threshold, sigma1, order)
        expected = [max(ls_at[v] for v in range(max(v_star - d, 0), min(v_star + d, t) + 1)) for d in range(t)]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
        assert np.all(np.diff(got) >= 0) and got.max() > 0
        discounted = max(math.exp(-0.1 * abs(v - v_star)) * ls_at[v] for v in range(t + 1))
        assert ss.smooth_sensitivity(got, 0.1) == pytest.approx(discounted, rel=1e-12)


def test_release_reference_and_reproducible():
    votes = np.tile([230, 20, 0], (30, 1))
    rel = ss.smooth_sensitivity_release(votes, 250, 40, 20, 0.02, 10, 1e-5, 0)
    assert rel.expected_epsilon == pytest.approx(rel.rdp_data_dependent + rel.rdp_gnss + np.log(1e5) / 19)
    assert rel.epsilon_std == pytest.approx(rel.smooth_sensitivity * 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = ss.smooth_sensitivity_release(votes, 250, 40, 20, 0.02, 10, 1e-5, 0)
    assert again.epsilon == rel.epsilon
