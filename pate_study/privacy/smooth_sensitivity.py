"""Smooth sensitivity of the data-dependent ε (Papernot et al. 2018, Appendix B), to release it privately.

For a student: a data-dependent ε is computed from the private votes, so
publishing it leaks a little. Papernot et al. 2018 release it with the
"Gaussian noise with smooth sensitivity" (GNSS) mechanism: add
SS_β · N(0, σ_ss²) to the data-dependent RDP at one order α, where SS_β is the
β-smooth sensitivity (Nissim, Raskhodnikova & Smith 2007): the largest local
sensitivity at distance d from the actual votes, discounted by e^{−βd}.

Implemented (GNMax and the confident-GNMax threshold, at a single order α):

* log q0: below q0 the data-dependent GNMax bound beats the data-independent
  α/σ² (root of the difference by Brent's method), :func:`logq0_gnmax`; it
  depends on (σ, α) only and is cached.
* Conditions C5–C6 (Appendix B.4.2), on which Algorithms 3–5 rely:
  :func:`check_conditions`; the GNMax functions check them first and raise
  (or warn, or skip, as asked) when they fail.
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

The walk of Algorithms 4–5 is vectorised over queries: every step moves one
vote in all queries still walking (at most T steps of numpy work on
[queries, classes], in blocks of queries).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import numpy as np
from scipy.optimize import brentq

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import as_generator, check_choice, check_counts
from pate_study.privacy.accounting import external_stacklevel
from pate_study.privacy.rdp import rdp_threshold
from pate_study.privacy.rdp_curves import gaussian_tail_logsf, gnmax_logq_counts, theorem6_bound, theorem6_terms

__all__ = [
    "CONDITION_CHECKS",
    "SmoothSensitivityConditionsWarning",
    "check_conditions",
    "logq0_gnmax",
    "local_sensitivity_bounds_gnmax",
    "local_sensitivity_bounds_threshold",
    "smooth_sensitivity",
    "rdp_gnss",
    "SmoothSensitivityRelease",
    "smooth_sensitivity_release",
]

_SQRT2 = np.sqrt(2.0)
#: What to do when conditions C5–C6 fail: raise ValueError, warn, or skip the check.
CONDITION_CHECKS = ("raise", "warn", "skip")
_QUERY_BLOCK = 4096
_CHECK_POINTS = 4000


class SmoothSensitivityConditionsWarning(UserWarning):
    """Conditions C5–C6 of Papernot et al. 2018 (Appendix B.4.2) fail: the local-sensitivity bounds are unproven."""


def _dd_bound(logq: Any, sigma: float, order: float) -> np.ndarray:
    """Theorem 6 GNMax bound at one order for an array of log q, without checking its conditions."""
    lq = np.atleast_1d(np.asarray(logq, dtype=np.float64))
    return theorem6_bound(lq, theorem6_terms(lq, 1.0 / sigma**2), np.array([float(order)]))[:, 0]


def _dd_valid(logq: float, sigma: float, order: float) -> bool:
    """Conditions of Theorem 6 (Lemma 9) at ``order``: μ1 ≥ α and the bound on log q."""
    mu1, valid, *_ = theorem6_terms(np.array([logq]), 1.0 / sigma**2)
    return bool(valid[0] and mu1[0] >= order)


def _check_order(order: Any) -> float:
    try:
        order = float(order)
    except (TypeError, ValueError):
        raise ValueError(f"order: expected an order > 1, got {order!r}") from None
    if not (np.isfinite(order) and order > 1):
        raise ValueError(f"order: expected an order > 1, got {order}")
    return order


@constrained(sigma="noise_scale")
def logq0_gnmax(sigma: float, order: float) -> float:
    """log q0 for GNMax at one order (Papernot et al. 2018, Appendix B.4).

    The largest log q below which the Theorem 6 bound is smaller than α/σ².
    Start from the natural upper bound min(−(1 + 1/σ)², −((α − 1)/σ)², −1/σ²)
    (μ2 ≥ σ + 1, μ1 > α, μ2 ≥ 1); if the data-dependent bound already wins
    there, that is q0; else bracket the crossing and solve with Brent's method.
    Depends on (σ, α) only: cached per pair.
    """
    return _logq0_cached(sigma, _check_order(order))


@functools.lru_cache(maxsize=1024)
def _logq0_cached(sigma: float, order: float) -> float:
    di = order / sigma**2
    logub = min(-((1.0 + 1.0 / sigma) ** 2), -(((order - 1.0) / sigma) ** 2), -1.0 / sigma**2)
    if not _dd_valid(logub, sigma, order):
        raise ValueError(f"sigma/order: Theorem 6 does not apply at the natural bound for sigma={sigma}, order={order}")
    if _dd_bound(logub, sigma, order)[0] < di:
        return float(logub)
    loglb = 2.0 * logub
    while _dd_bound(loglb, sigma, order)[0] > di:
        loglb *= 1.5
        if loglb < -1e5:
            raise ValueError(f"sigma/order: no crossing found for sigma={sigma}, order={order}")
    root = brentq(lambda x: _dd_bound(x, sigma, order)[0] - di, loglb, logub, xtol=1e-14, rtol=1e-14)
    return float(root)


def _rdp_piecewise(logq: np.ndarray, sigma: float, order: float, logq0: float) -> np.ndarray:
    """β(q): the Theorem 6 bound below q0, α/σ² above, 0 at q = 0 (Papernot et al. 2018, Appendix B.4)."""
    logq = np.asarray(logq, dtype=np.float64)
    out = np.full(logq.shape, order / sigma**2)
    out[np.isneginf(logq)] = 0.0
    below = np.isfinite(logq) & (logq < logq0)
    if np.any(below):
        out[below] = _dd_bound(logq[below], sigma, order)
    return out


def _log_neighbour_q(logq: np.ndarray, sigma: float, m: int, sign: float) -> np.ndarray:
    """log B_u (sign = +1) or log B_l (sign = −1): worst q of a neighbouring vote vector (Prop. 13).

    With q = (m−1) Φ̄(w) for equal gaps (w = gap/(√2σ)), one teacher moves the
    gap by 2, i.e. w by √2/σ: B = (m−1) Φ̄(w ∓ √2/σ), capped at 1.
    """
    logq = np.asarray(logq, dtype=np.float64)
    out = np.full(logq.shape, -np.inf)
    f = np.isfinite(logq)
    log_m1 = np.log(m - 1.0)
    from scipy.special import ndtri_exp  # imported on first use (fast package import)

    w = -ndtri_exp(np.minimum(logq[f] - log_m1, 0.0))
    out[f] = np.minimum(log_m1 + gaussian_tail_logsf(w - sign * _SQRT2 / sigma, 1.0), 0.0)
    return out


def _local_sensitivity(logq: np.ndarray, sigma: float, m: int, order: float, logq0: float, logq1: float) -> np.ndarray:
    """Algorithm 3: upper bound on the local sensitivity of β at vote vectors with these log q."""
    logq = np.asarray(logq, dtype=np.float64)
    logq = np.where((logq1 <= logq) & (logq <= logq0), logq1, logq)
    beta = _rdp_piecewise(logq, sigma, order, logq0)
    up = _rdp_piecewise(_log_neighbour_q(logq, sigma, m, +1.0), sigma, order, logq0)
    down = _rdp_piecewise(_log_neighbour_q(logq, sigma, m, -1.0), sigma, order, logq0)
    return np.maximum(up - beta, beta - down)


def _non_decreasing(values: np.ndarray, rtol: float = 1e-9) -> bool:
    """True when consecutive values never drop by more than rtol × their magnitude (rounding noise)."""
    scale = np.maximum(np.abs(values[:-1]), np.abs(values[1:]))
    return bool(np.all(np.diff(values) >= -rtol * scale - 1e-300))


@constrained(sigma="noise_scale", n_classes="count")
def check_conditions(sigma: float, n_classes: int, order: float) -> tuple[bool, bool]:
    """Conditions C5 and C6 of Papernot et al. 2018, Appendix B.4.2, checked numerically; returns (C5, C6).

    β(q) is the Theorem 6 GNMax bound at ``order`` (without its conditions).
    C5: β is non-decreasing on (0, q0]. C6: β(B_u(q)) − β(q) is non-decreasing on
    (0, B_l(q0)]. Algorithms 3–5 (the walk towards the plateau) are proven only
    when both hold. The 2018 code checks them with a symbolic derivative and a
    bounded scalar minimiser; here both functions are evaluated on a grid of
    4000 values of log q, log-spaced in −log q from −log q0 to 10⁴·(−log q0),
    and drops larger than 1e-9 relative count as decreases. Cached per (σ, m, α).
    """
    return _check_conditions_cached(sigma, n_classes, _check_order(order))


@functools.lru_cache(maxsize=1024)
def _check_conditions_cached(sigma: float, m: int, order: float) -> tuple[bool, bool]:
    if m < 2:
        return True, True
    logq0 = _logq0_cached(sigma, order)
    grid = -np.geomspace(1e4 * -logq0, -logq0, _CHECK_POINTS)  # increasing log q up to log q0
    with np.errstate(all="ignore"):
        beta = _dd_bound(grid, sigma, order)
        cond5 = bool(np.all(np.isfinite(beta))) and _non_decreasing(beta)
        if not cond5:
            return False, False
        logbl_q0 = float(_log_neighbour_q(np.array([logq0]), sigma, m, -1.0)[0])
        grid6 = -np.geomspace(1e4 * -logbl_q0, -logbl_q0, _CHECK_POINTS)
        delta = _dd_bound(_log_neighbour_q(grid6, sigma, m, +1.0), sigma, order) - _dd_bound(grid6, sigma, order)
        cond6 = bool(np.all(np.isfinite(delta))) and _non_decreasing(delta)
    return cond5, cond6


def _require_conditions(sigma: float, m: int, order: float, conditions: str) -> None:
    check_choice("conditions", conditions, CONDITION_CHECKS)
    if conditions == "skip" or m < 2:
        return
    c5, c6 = check_conditions(sigma, m, order)
    if c5 and c6:
        return
    failed = "C5" if not c5 else "C6"
    msg = (
        f"sigma/order: condition {failed} of Papernot et al. 2018 (Appendix B.4.2) does not hold for "
        f"sigma={sigma}, {m} classes, order={order}; the smooth-sensitivity bounds are not proven here"
    )
    if conditions == "raise":
        raise ValueError(msg + " (pass conditions='warn' or 'skip' to compute them anyway)")
    warnings.warn(msg, SmoothSensitivityConditionsWarning, stacklevel=external_stacklevel())


def _ls_walk(
    counts: np.ndarray, t: int, sigma: float, order: float, logq0: float, logq1: float, plateau: float
) -> np.ndarray:
    """Algorithms 4–5 for a block of queries: local-sensitivity bounds ``[n, t]`` at distances 0..t−1.

    Rows start from the votes sorted in descending order. A row whose log q lies in
    [log q1, log q0] is on the plateau at every distance. Otherwise one vote moves per
    step between the top two classes, towards the plateau: from the runner-up to the
    top while log q > log q0 (and the runner-up has votes), from the top to the
    runner-up while log q < log q1; each step's local sensitivity is recorded, and
    every distance after a row stops walking gets the plateau value.
    """
    m = counts.shape[1]
    v = -np.sort(-counts, axis=1)
    res = np.full((len(v), t), plateau)
    logq = gnmax_logq_counts(v, sigma)
    walking = ~((logq1 <= logq) & (logq <= logq0))
    rows = np.flatnonzero(walking)
    res[rows, 0] = _local_sensitivity(logq[rows], sigma, m, order, logq0, logq1)
    increase_gap = logq > logq0
    for d in range(1, t):
        walking &= (increase_gap & (logq > logq0) & (v[:, 1] > 0)) | (~increase_gap & (logq < logq1))
        rows = np.flatnonzero(walking)
        if rows.size == 0:
            break
        step = np.where(increase_gap[rows], 1.0, -1.0)
        sub = v[rows]
        sub[:, 0] += step
        sub[:, 1] -= step
        sub = -np.sort(-sub, axis=1)
        v[rows] = sub
        logq[rows] = gnmax_logq_counts(sub, sigma)
        res[rows, d] = _local_sensitivity(logq[rows], sigma, m, order, logq0, logq1)
    return res


def _gnmax_setup(sigma: float, order: Any, m: int, conditions: str) -> tuple[float, float, float, float, float]:
    order = _check_order(order)
    _require_conditions(sigma, m, order, conditions)
    logq0 = logq0_gnmax(sigma, order)
    logq1 = float(_log_neighbour_q(np.array([logq0]), sigma, m, -1.0)[0])
    plateau = float(_local_sensitivity(np.array([logq1]), sigma, m, order, logq0, logq1)[0])
    return sigma, order, logq0, logq1, plateau


@constrained(n_teachers="count", sigma="noise_scale")
def local_sensitivity_bounds_gnmax(
    votes: Any, n_teachers: int, sigma: float, order: float, conditions: str = "raise"
) -> np.ndarray:
    """Local sensitivity of the GNMax data-dependent RDP at distances d = 0..T−1 (Papernot et al. 2018, Algs 3–5).

    From the sorted votes, move one vote at a time between the top two classes
    towards the plateau log q ∈ [log q1, log q0] (where the bound is flat at its
    maximum local sensitivity); every distance past the walk gets the plateau value.
    ``conditions``: what to do when C5–C6 fail (:func:`check_conditions`):
    ``"raise"`` (ValueError), ``"warn"`` or ``"skip"``.
    """
    counts = check_counts(votes, n_teachers=n_teachers)
    if counts.shape[0] != 1:
        raise ValueError(f"votes: expected the vote counts of one query, got shape {np.shape(votes)}")
    t = n_teachers
    m = counts.shape[1]
    if m < 2:
        return np.zeros(t)
    sigma, order, logq0, logq1, plateau = _gnmax_setup(sigma, order, m, conditions)
    return _ls_walk(counts, t, sigma, order, logq0, logq1, plateau)[0]


@constrained(n_teachers="count", threshold="threshold", sigma1="noise_scale")
def local_sensitivity_bounds_threshold(
    max_vote: float, n_teachers: int, threshold: float, sigma1: float, order: float
) -> np.ndarray:
    """Local sensitivity of the threshold-step RDP at distances d = 0..T−1 (Papernot et al. 2018, Appendix B.5).

    The RDP β(v) depends on the votes only through v = max vote ∈ {0..T}, and one
    teacher moves v by at most 1, so the local sensitivity at a vote vector with
    max vote v is LS(v) = max(|β(v+1) − β(v)|, |β(v) − β(v−1)|). Vote vectors at
    distance ≤ d have max votes in [v* − d, v* + d]: the bound at distance d is
    max LS(v) over that range (non-decreasing in d; its β-smooth maximum equals
    max_v e^{−β|v − v*|} LS(v)).
    """
    t = n_teachers
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
    return np.maximum.accumulate(np.maximum(up, down))


@constrained(beta="positive")
def smooth_sensitivity(local_sensitivities: Any, beta: float) -> float:
    """β-smooth sensitivity max_d e^{−βd} LS(d) (Nissim, Raskhodnikova & Smith 2007, Def. 2.1; Papernot et al. 2018
    §B)."""
    ls = np.asarray(local_sensitivities, dtype=np.float64)
    return float(np.max(ls * np.exp(-beta * np.arange(len(ls)))))


@constrained(beta="positive", sigma="noise_scale")
def rdp_gnss(beta: float, sigma: float, order: float) -> float:
    """RDP of the GNSS release f(X) + SS_β(X)·N(0, σ²) (Papernot et al. 2018, Theorem 23).

    For 1 < α < 1/(2β): α e^{2β}/σ² + (βα − ½ log(1 − 2αβ))/(α − 1).
    """
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


@constrained(n_teachers="count", sigma="noise_scale", beta="positive", sigma_ss="noise_scale", delta="delta")
def smooth_sensitivity_release(
    votes: Any,
    n_teachers: int,
    sigma: float,
    order: float,
    beta: float,
    sigma_ss: float,
    delta: float,
    rng: Any,
    conditions: str = "raise",
) -> SmoothSensitivityRelease:
    """Release the data-dependent RDP of GNMax over all queries with GNSS (Papernot et al. 2018, §B, Thm 23).

    The local sensitivity of the sum at distance d is bounded by the sum of
    per-query bounds; SS_β is its discounted maximum; the release adds
    SS_β·N(0, σ_ss²) and is charged ``rdp_gnss`` at the same order.
    ``conditions``: what to do when C5–C6 fail (see :func:`local_sensitivity_bounds_gnmax`).
    """
    counts = check_counts(votes, n_teachers=n_teachers)
    gnss = rdp_gnss(beta, sigma_ss, order)
    t = n_teachers
    ls_total = np.zeros(t)
    m = counts.shape[1]
    if m < 2:
        rdp_total = 0.0
    else:
        sigma, order, logq0, logq1, plateau = _gnmax_setup(sigma, order, m, conditions)
        rdp_total = 0.0
        for start in range(0, len(counts), _QUERY_BLOCK):
            block = counts[start : start + _QUERY_BLOCK]
            ls_total += _ls_walk(block, t, sigma, order, logq0, logq1, plateau).sum(axis=0)
            rdp_total += float(_rdp_piecewise(gnmax_logq_counts(block, sigma), sigma, order, logq0).sum())
    ss = smooth_sensitivity(ls_total, beta)
    z = float(as_generator(rng).standard_normal())
    conv = -np.log(delta) / (order - 1.0)
    mean = rdp_total + gnss
    released = mean + ss * sigma_ss * z
    return SmoothSensitivityRelease(
        order=float(order),
        rdp_data_dependent=float(rdp_total),
        rdp_gnss=gnss,
        smooth_sensitivity=ss,
        beta=float(beta),
        sigma_ss=sigma_ss,
        released_rdp=float(released),
        delta=delta,
        epsilon=float(released + conv),
        expected_epsilon=float(mean + conv),
        epsilon_std=float(ss * sigma_ss),
    )
