"""Smooth sensitivity of the data-dependent ε (Papernot et al. 2018, Appendix B), to release it privately.

For a student: a data-dependent ε is computed from the private votes, so
publishing it leaks a little. Papernot et al. 2018 release it with the
"Gaussian noise with smooth sensitivity" (GNSS) mechanism: add
SS_β · N(0, σ_ss²) to the data-dependent RDP at one order α, where SS_β is the
β-smooth sensitivity (Nissim, Raskhodnikova & Smith 2007): the largest local
sensitivity at distance d from the actual votes, discounted by e^{−βd}.

Implemented (GNMax and the confident-GNMax threshold, at a single order α):

* log q0: below q0 the data-dependent GNMax bound beats the data-independent
  α/σ² (root of the difference by Brent's method), :func:`logq0_gnmax`.
* Algorithm 3 / Proposition 13: an upper bound on the local sensitivity of
  the per-query RDP, using the worst-case q of a neighbour (B_u, B_l, for m
  classes with equal gaps), computed in log space.
* Algorithms 4–5: local sensitivity at distance d, walking the votes towards
  the plateau between q1 = B_l(q0) and q0, :func:`local_sensitivity_bounds_gnmax`;
  for the threshold step, by scanning the maximum vote,
  :func:`local_sensitivity_bounds_threshold`.
* Theorem 23: RDP of the GNSS release, :func:`rdp_gnss`.
* :func:`smooth_sensitivity_release`: the full release of the data-dependent RDP
  of GNMax over many queries (sum of per-query local sensitivities, discounted
  max, GNSS noise), with its expected value and standard deviation.

Per-query local sensitivities are computed with a Python loop over queries and
distances (O(queries × teachers)); fine for thousands of queries, not for 10⁶.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtri_exp

from ._validation import as_generator, check_counts, check_delta, check_n_queries, check_positive
from .rdp import _theorem6_raw, _theorem6_scalars, gnmax_logq, rdp_threshold

__all__ = [
    "logq0_gnmax",
    "local_sensitivity_bounds_gnmax",
    "local_sensitivity_bounds_threshold",
    "smooth_sensitivity",
    "rdp_gnss",
    "SmoothSensitivityRelease",
    "smooth_sensitivity_release",
]

_SQRT2 = np.sqrt(2.0)


def _dd_bound(logq: float, sigma: float, order: float) -> float:
    """Theorem 6 GNMax bound at one order without checking its conditions (the caller compares with log q0)."""
    lq = np.array([logq])
    _, _, log1q, log_a, log_b = _theorem6_scalars(lq, 1.0 / sigma**2)
    return float(_theorem6_raw(lq, log1q, log_a, log_b, np.array([order]))[0, 0])


def _dd_valid(logq: float, sigma: float, order: float) -> bool:
    """Conditions of Theorem 6 (Lemma 9) at ``order``: μ1 ≥ α and the bound on log q."""
    mu1, valid, *_ = _theorem6_scalars(np.array([logq]), 1.0 / sigma**2)
    return bool(valid[0] and mu1[0] >= order)


def logq0_gnmax(sigma: float, order: float) -> float:
    """log q0 for GNMax at one order (Papernot et al. 2018, Appendix B.4).

    The largest log q below which the Theorem 6 bound is smaller than α/σ².
    Start from the natural upper bound min(−(1 + 1/σ)², −((α − 1)/σ)², −1/σ²)
    (μ2 ≥ σ + 1, μ1 > α, μ2 ≥ 1); if the data-dependent bound already wins
    there, that is q0; else bracket the crossing and solve with Brent's method.
    """
    sigma = check_positive("sigma", sigma)
    order = float(order)
    if not order > 1:
        raise ValueError(f"order: expected an order > 1, got {order}")
    di = order / sigma**2
    logub = min(-((1.0 + 1.0 / sigma) ** 2), -(((order - 1.0) / sigma) ** 2), -1.0 / sigma**2)
    if not _dd_valid(logub, sigma, order):
        raise ValueError(f"sigma/order: Theorem 6 does not apply at the natural bound for sigma={sigma}, order={order}")
    if _dd_bound(logub, sigma, order) < di:
        return float(logub)
    loglb = 2.0 * logub
    while _dd_bound(loglb, sigma, order) > di:
        loglb *= 1.5
        if loglb < -1e5:
            raise ValueError(f"sigma/order: no crossing found for sigma={sigma}, order={order}")
    root = brentq(lambda x: _dd_bound(x, sigma, order) - di, loglb, logub, xtol=1e-14, rtol=1e-14)
    return float(root)


def _rdp_piecewise(logq: float, sigma: float, order: float, logq0: float) -> float:
    """β(q): the Theorem 6 bound below q0, α/σ² above (Papernot et al. 2018, Appendix B.4)."""
    if logq >= logq0:
        return order / sigma**2
    if np.isneginf(logq):
        return 0.0
    return _dd_bound(logq, sigma, order)


def _log_neighbour_q(logq: float, sigma: float, m: int, sign: float) -> float:
    """log B_u (sign = +1) or log B_l (sign = −1): worst q of a neighbouring vote vector (Prop. 13).

    With q = (m−1) Φ̄(w) for equal gaps (w = gap/(√2σ)), one teacher moves the
    gap by 2, i.e. w by √2/σ: B = (m−1) Φ̄(w ∓ √2/σ), capped at 1.
    """
    if np.isneginf(logq):
        return -np.inf
    log_m1 = np.log(m - 1.0)
    w = -ndtri_exp(min(logq - log_m1, 0.0))
    return float(min(log_m1 + log_ndtr(-(w - sign * _SQRT2 / sigma)), 0.0))


def _local_sensitivity(logq: float, sigma: float, m: int, order: float, logq0: float, logq1: float) -> float:
    """Algorithm 3: upper bound on the local sensitivity of β at a vote vector with this log q."""
    if logq1 <= logq <= logq0:
        logq = logq1
    beta = _rdp_piecewise(logq, sigma, order, logq0)
    up = _rdp_piecewise(_log_neighbour_q(logq, sigma, m, +1.0), sigma, order, logq0)
    down = _rdp_piecewise(_log_neighbour_q(logq, sigma, m, -1.0), sigma, order, logq0)
    return max(up - beta, beta - down)


def local_sensitivity_bounds_gnmax(votes: Any, n_teachers: int, sigma: float, order: float) -> np.ndarray:
    """Local sensitivity of the GNMax data-dependent RDP at distances d = 0..T−1 (Papernot et al. 2018, Algs 3–5).

    From the sorted votes, move one vote at a time between the top two classes
    towards the plateau log q ∈ [log q1, log q0] (where the bound is flat at its
    maximum local sensitivity); every distance past the walk gets the plateau value.
    """
    counts = check_counts(votes)
    if counts.shape[0] != 1:
        raise ValueError(f"votes: expected the vote counts of one query, got shape {np.shape(votes)}")
    t = check_n_queries(n_teachers, name="n_teachers")
    sigma = check_positive("sigma", sigma)
    v = np.sort(counts[0])[::-1].copy()
    m = len(v)
    if m < 2:
        return np.zeros(t)
    logq0 = logq0_gnmax(sigma, order)
    logq1 = _log_neighbour_q(logq0, sigma, m, -1.0)
    plateau = _local_sensitivity(logq1, sigma, m, order, logq0, logq1)
    res = np.full(t, plateau)
    logq = float(gnmax_logq(v, sigma)[0])
    if logq1 <= logq <= logq0:
        return res
    res[0] = _local_sensitivity(logq, sigma, m, order, logq0, logq1)
    increase_gap = logq > logq0
    d = 0
    while d + 1 < t and ((increase_gap and logq > logq0 and v[1] > 0) or (not increase_gap and logq < logq1)):
        d += 1
        if increase_gap:
            v[0] += 1
            v[1] -= 1
        else:
            v[0] -= 1
            v[1] += 1
        v = np.sort(v)[::-1].copy()
        logq = float(gnmax_logq(v, sigma)[0])
        res[d] = _local_sensitivity(logq, sigma, m, order, logq0, logq1)
    return res


def local_sensitivity_bounds_threshold(
    max_vote: float, n_teachers: int, threshold: float, sigma1: float, order: float
) -> np.ndarray:
    """Local sensitivity of the threshold-step RDP at distances d = 0..T−1 (Papernot et al. 2018, Appendix B.5).

    The RDP depends on the votes only through v = max vote ∈ {0..T}; at
    distance d the max vote is within v* ± d and one step moves it by 1.
    """
    t = check_n_queries(n_teachers, name="n_teachers")
    vals = np.arange(t + 1, dtype=np.float64)
    curve = rdp_threshold(vals, threshold, sigma1, np.array([float(order)]))[:, 0]
    step = np.abs(np.diff(curve))
    ls_at = np.zeros(t + 1)
    ls_at[:-1] = step
    ls_at[1:] = np.maximum(ls_at[1:], step)
    v_star = int(round(float(max_vote)))
    if not 0 <= v_star <= t:
        raise ValueError(f"max_vote: expected a value in [0, {t}], got {max_vote}")
    d = np.arange(t)
    up = np.where(v_star + d <= t, ls_at[np.minimum(v_star + d, t)], 0.0)
    down = np.where(v_star - d >= 0, ls_at[np.maximum(v_star - d, 0)], 0.0)
    return np.maximum(up, down)


def smooth_sensitivity(local_sensitivities: Any, beta: float) -> float:
    """β-smooth sensitivity max_d e^{−βd} LS(d) (Nissim, Raskhodnikova & Smith 2007, Def. 2.1; Papernot et al. 2018 §B)."""
    ls = np.asarray(local_sensitivities, dtype=np.float64)
    beta = check_positive("beta", beta)
    return float(np.max(ls * np.exp(-beta * np.arange(len(ls)))))


def rdp_gnss(beta: float, sigma: float, order: float) -> float:
    """RDP of the GNSS release f(X) + SS_β(X)·N(0, σ²) (Papernot et al. 2018, Theorem 23).

    For 1 < α < 1/(2β): α e^{2β}/σ² + (βα − ½ log(1 − 2αβ))/(α − 1).
    """
    beta = check_positive("beta", beta)
    sigma = check_positive("sigma", sigma)
    a = float(order)
    if not 1 < a < 1 / (2 * beta):
        raise ValueError(f"order: expected 1 < order < 1/(2 beta) = {1 / (2 * beta):g}, got {order}")
    return float(a * np.exp(2 * beta) / sigma**2 + (beta * a - 0.5 * np.log1p(-2 * a * beta)) / (a - 1))


@dataclasses.dataclass(frozen=True)
class SmoothSensitivityRelease:
    """A privately released data-dependent GNMax RDP (Papernot et al. 2018, §B and Theorem 23).

    ``released_rdp`` = data-dependent RDP + GNSS cost + SS·σ_ss·Z at ``order``;
    ``epsilon`` its basic (ε, δ) conversion; ``expected_epsilon`` and
    ``epsilon_std`` the mean and standard deviation of that release.
    """

    order: float
    rdp_data_dependent: float
    rdp_gnss: float
    smooth_sensitivity: float
    beta: float
    sigma_ss: float
    released_rdp: float
    delta: float
    epsilon: float
    expected_epsilon: float
    epsilon_std: float

    def to_dict(self) -> dict:
        """Plain dict of the fields."""
        return dataclasses.asdict(self)


def smooth_sensitivity_release(
    votes: Any, n_teachers: int, sigma: float, order: float, beta: float, sigma_ss: float, delta: float, rng: Any
) -> SmoothSensitivityRelease:
    """Release the data-dependent RDP of GNMax over all queries with GNSS (Papernot et al. 2018, §B, Thm 23).

    The local sensitivity of the sum at distance d is bounded by the sum of
    per-query bounds; SS_β is its discounted maximum; the release adds
    SS_β·N(0, σ_ss²) and is charged ``rdp_gnss`` at the same order.
    """
    counts = check_counts(votes)
    delta = check_delta(delta)
    sigma_ss = check_positive("sigma_ss", sigma_ss)
    gnss = rdp_gnss(beta, sigma_ss, order)
    ls_total = np.zeros(check_n_queries(n_teachers, name="n_teachers"))
    logq0 = logq0_gnmax(sigma, order)
    rdp_total = 0.0
    for row in counts:
        ls_total += local_sensitivity_bounds_gnmax(row, n_teachers, sigma, order)
        rdp_total += _rdp_piecewise(float(gnmax_logq(row, sigma)[0]), sigma, order, logq0)
    ss = smooth_sensitivity(ls_total, beta)
    z = float(as_generator(rng).standard_normal())
    conv = -np.log(delta) / (order - 1.0)
    mean = rdp_total + gnss
    released = mean + ss * sigma_ss * z
    return SmoothSensitivityRelease(
        order=float(order), rdp_data_dependent=float(rdp_total), rdp_gnss=gnss, smooth_sensitivity=ss,
        beta=float(beta), sigma_ss=sigma_ss, released_rdp=float(released), delta=delta,
        epsilon=float(released + conv), expected_epsilon=float(mean + conv), epsilon_std=float(ss * sigma_ss),
    )
