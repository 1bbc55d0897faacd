"""Rényi-DP analysis of PATE aggregators (Papernot et al. 2018, "Scalable private learning with PATE").

For a student: Rényi differential privacy (RDP, Mironov 2017) describes a
mechanism by a curve RDP(α) over orders α > 1. Curves of successive queries
simply *add up* order by order (composition), and the summed curve is turned
into an (ε, δ) guarantee at the end (``accounting.epsilon_curve``).

PATE's noisy argmax has a data-independent curve (it holds for any votes) and
a much smaller *data-dependent* one when the teachers agree: if the released
label is almost surely the plurality label (probability of anything else ≤ q),
Theorem 6 of Papernot et al. 2018 bounds the divergence by a function of q.

Implemented here, vectorised over queries × orders and in log space:

* log q for GNMax (Proposition 7, union bound over classes, capped at 1 − 1/m)
  and for LNMax (Papernot et al. 2017, Lemma 4, the same cap).
* Data-independent RDP: GNMax α/σ² (Proposition 8; l2 sensitivity √2), the
  threshold step α/(2σ1²) (sensitivity 1), pure ε-DP min(αε²/2, ε) (Bun &
  Steinke 2016, Prop. 1.4 + trivial bound), the Laplace mechanism (Mironov
  2017, Proposition 6).
* Data-dependent RDP (Theorem 6 with Proposition 10's orders μ2 = √(−log q / s),
  μ1 = μ2 + 1, for any mechanism whose data-independent RDP is s·α), used for
  GNMax (s = 1/σ²), the confident-GNMax threshold (s = 1/(2σ1²), q =
  min(Pr[answered], 1 − Pr[answered])) and the multi-label bounds (which may cap
  with a different slope, ``cap_slope``, and use the variant of Muschiol 2021
  Eq. 4.8 as printed, :data:`THEOREM6_VARIANTS`).
* Data-dependent RDP of a pure ε-DP mechanism (Papernot et al. 2017, Theorem 3
  restated for RDP; valid when q ≤ 1/(e^ε + 1)) for LNMax.
* Composed totals without [queries × orders] arrays: :func:`total_rdp_data_dependent`
  and :func:`total_rdp_pure_dp` charge the queries where the data-dependent bound
  cannot apply in one step and process the rest in blocks of about 2¹⁶ values
  (the per-query functions ``rdp_data_dependent``, ``rdp_pure_dp``, ``rdp_gnmax``,
  ``rdp_threshold`` remain for inspection).
* Accountants: :func:`gnmax_epsilon`, :func:`lnmax_rdp_epsilon`,
  :func:`confident_gnmax_epsilon` (charged "expected": step 1 + Pr[answered] ·
  step 2, as in the paper's tables; or "realized": step 2 only on the queries
  actually answered).

Pitfalls avoided (reference-values.md §5): the q condition is checked, never
assumed; 1 − e^ε q ≤ 0 cannot produce NaN (the term is dropped); q is capped
so log q ≤ 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import log_ndtr, ndtr

from ._logmath import log1mexp
from ._validation import (
    as_generator,
    check_choice,
    check_counts,
    check_delta,
    check_n_queries,
    check_orders,
    check_positive,
)
from .accounting import CONVERSIONS, PrivacySpent, parse_orders, spent_from_curve

__all__ = [
    "gnmax_logq",
    "lnmax_logq",
    "threshold_logpr",
    "rdp_linear_data_independent",
    "rdp_gnmax_data_independent",
    "rdp_threshold_data_independent",
    "rdp_pure_dp_data_independent",
    "rdp_laplace_mechanism",
    "rdp_data_dependent",
    "rdp_gnmax",
    "rdp_threshold",
    "rdp_pure_dp",
    "total_rdp_pure_dp",
    "compose",
    "step2_weights",
    "total_rdp_data_dependent",
    "resolve_rdp_orders",
    "gnmax_epsilon",
    "lnmax_rdp_epsilon",
    "confident_gnmax_epsilon",
    "Q_CONDITIONS",
    "Q_VARIANTS",
    "COSTS",
    "THEOREM6_VARIANTS",
]

Q_CONDITIONS = ("theorem", "reference_code")
Q_VARIANTS = ("sum", "approx")
COSTS = ("expected", "realized")
_SQRT2 = np.sqrt(2.0)
_CHUNK_ROWS = 1024
_TABLE_MAX_GAP = 1 << 20
_EXP_FLOOR = -700.0


# ----------------------------------------------------------------- q bounds


def _argmax_gaps(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row index arrays of the (first) argmax and the gaps n* − n_j (0 at the argmax)."""
    rows = np.arange(len(counts))
    idx = np.argmax(counts, axis=1)
    return (rows, idx), counts[rows, idx][:, None] - counts


def _cap_logq(logq: np.ndarray, n_classes: int) -> np.ndarray:
    """Cap log q at log(1 − 1/m) (−inf for a single class)."""
    with np.errstate(divide="ignore"):
        cap = np.log1p(-1.0 / n_classes) if n_classes > 1 else -np.inf
    return np.minimum(logq, cap)


def _row_logsumexp(terms: np.ndarray) -> np.ndarray:
    """log Σ_j exp(terms[:, j]) per row (rows hold at least one finite entry)."""
    top = terms.max(axis=1)
    return top + np.log(np.exp(terms - top[:, None]).sum(axis=1))


def _gaussian_gap_tails(gaps: np.ndarray, scale: float) -> np.ndarray:
    """Φ̄(g/scale) for non-negative integer-valued gaps g.

    Vote gaps take at most max(g) + 1 distinct values, so Φ̄ is evaluated once per
    value and looked up (the same float64 operations as evaluating it per entry,
    hence bit-identical, and several times faster than 10⁶ calls of ``ndtr``).
    """
    gmax = float(gaps.max()) if gaps.size else 0.0
    if gmax > _TABLE_MAX_GAP:
        return ndtr(-(gaps / scale))
    table = ndtr(-(np.arange(int(gmax) + 1, dtype=np.float64) / scale))
    return table[gaps if gaps.dtype == np.intp else gaps.astype(np.intp)]


def gnmax_logq(votes: Any, sigma: float) -> np.ndarray:
    """log q for GNMax, Papernot et al. 2018 Proposition 7 (union bound).

    log q = logsumexp_{j ≠ j*} log Φ̄((n* − n_j)/(√2 σ)), capped at log(1 − 1/m).
    Summed in linear space where that is exact to rounding, in log space on the
    rows where the sum would underflow. Returns ``float[n_queries]``.
    """
    return _gnmax_logq(check_counts(votes, keep_integers=True), check_positive("sigma", sigma))


def _gnmax_logq(counts: np.ndarray, sigma: float) -> np.ndarray:
    """:func:`gnmax_logq` on validated counts (integer or float array)."""
    if counts.shape[1] == 1:
        return np.full(len(counts), -np.inf)
    argmax, gaps = _argmax_gaps(counts)
    scale = _SQRT2 * sigma
    tail = _gaussian_gap_tails(gaps, scale)
    tail[argmax] = 0.0
    total = tail.sum(axis=1)
    tiny = total < 1e-250
    with np.errstate(divide="ignore"):
        logq = np.log(total)
    if np.any(tiny):
        terms = log_ndtr(-(gaps[tiny] / scale))
        terms[np.arange(terms.shape[0]), argmax[1][tiny]] = -np.inf
        logq[tiny] = _row_logsumexp(terms)
    return _cap_logq(logq, counts.shape[1])


def lnmax_logq(votes: Any, gamma: float, variant: str = "sum") -> np.ndarray:
    """log q for LNMax, Papernot et al. 2017 Lemma 4 (in log space).

    ``variant="sum"``: q = Σ_{j≠j*} (2 + γ(n* − n_j)) / (4 exp(γ(n* − n_j))).
    ``variant="approx"``: the cruder (m − 1) × the term of the runner-up (the
    smallest gap), as in the 2017 code's ``_approx`` function.
    Both are capped at 1 − 1/m. Returns ``float[n_queries]``.
    """
    counts = check_counts(votes, keep_integers=True)
    gamma = check_positive("gamma", gamma)
    check_choice("variant", variant, Q_VARIANTS)
    return _lnmax_logq(counts, gamma, variant)


def _lnmax_logq(counts: np.ndarray, gamma: float, variant: str) -> np.ndarray:
    """:func:`lnmax_logq` on validated counts and parameters."""
    m = counts.shape[1]
    if m == 1:
        return np.full(len(counts), -np.inf)
    argmax, gaps = _argmax_gaps(counts)
    g = gamma * gaps
    terms = np.log(2.0 + g) - np.log(4.0) - g
    terms[argmax] = -np.inf
    if variant == "sum":
        logq = _row_logsumexp(terms)
    else:
        logq = np.log(m - 1.0) + np.max(terms, axis=1)
    return _cap_logq(logq, m)


def threshold_logpr(check_values: Any, threshold: float, sigma1: float) -> np.ndarray:
    """log Pr[answered] of the confident-GNMax check: log Φ̄((T − v)/σ1) (Papernot et al. 2018, §4.2).

    ``check_values`` is max_c n_c (Algorithm 1) or max_c(n_c − |E| p_c) (Algorithm 2).
    """
    v = np.atleast_1d(np.asarray(check_values, dtype=np.float64))
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError("check_values: expected a non-empty 1-D array of finite values")
    sigma1 = check_positive("sigma1", sigma1)
    return log_ndtr((v - float(threshold)) / sigma1)


# ------------------------------------------------------ data-independent RDP


def resolve_rdp_orders(orders: Any) -> np.ndarray:
    """Parse an order spec (see ``accounting.parse_orders``) and require orders > 1."""
    parsed = parse_orders(orders)
    if isinstance(parsed, str):
        raise ValueError("orders: 'continuous' is only available for the 2017 moments accountant")
    return check_orders(parsed, 1.0)


def rdp_linear_data_independent(slope: float, orders: Any) -> np.ndarray:
    """RDP s·α of a Gaussian mechanism with s = Δ₂²/(2σ²) (Mironov 2017, Proposition 7)."""
    return check_positive("slope", slope) * check_orders(orders, 1.0)


def rdp_gnmax_data_independent(sigma: float, orders: Any) -> np.ndarray:
    """GNMax data-independent RDP α/σ² (Papernot et al. 2018, Proposition 8; l2 sensitivity √2)."""
    return rdp_linear_data_independent(1.0 / check_positive("sigma", sigma) ** 2, orders)


def rdp_threshold_data_independent(sigma1: float, orders: Any) -> np.ndarray:
    """Threshold-check data-independent RDP α/(2σ1²) (sensitivity 1; Papernot et al. 2018, §4.2)."""
    return rdp_linear_data_independent(0.5 / check_positive("sigma1", sigma1) ** 2, orders)


def rdp_pure_dp_data_independent(epsilon: float, orders: Any) -> np.ndarray:
    """RDP of any ε-DP mechanism: min(αε²/2, ε) (Bun & Steinke 2016, Prop. 1.4; Mironov 2017, Prop. 3 remark)."""
    eps = check_positive("epsilon", epsilon)
    a = check_orders(orders, 1.0)
    return np.minimum(0.5 * eps * eps * a, eps)


def rdp_laplace_mechanism(epsilon: float, orders: Any) -> np.ndarray:
    """Exact RDP of the Laplace mechanism with Δ/b = ε (Mironov 2017, Proposition 6).

    RDP(α) = 1/(α−1) · log( α/(2α−1) e^{(α−1)ε} + (α−1)/(2α−1) e^{−αε} ).
    """
    eps = check_positive("epsilon", epsilon)
    a = check_orders(orders, 1.0)
    log_s = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * eps, np.log((a - 1) / (2 * a - 1)) - a * eps)
    return log_s / (a - 1)


# -------------------------------------------------------- data-dependent RDP

#: Theorem 6 variants: ``"paper2018"`` (Papernot et al. 2018 Theorem 6 + Proposition 10, as in their code) and
#: ``"muschiol_printed"`` (Muschiol 2021 Eq. 4.8 literally: B(q̃, μ2, ε2) and the printed condition).
THEOREM6_VARIANTS = ("paper2018", "muschiol_printed")
#: Target number of float64 values in one [rows × orders] block (512 KiB per temporary). Small blocks
#: stay in cache, and keep the block's 2-column matrix product (:func:`_log_mix`) under OpenBLAS's
#: single-thread size limit: a threaded product on shared cores was up to 6× slower in measurements.
_BLOCK_ELEMENTS = 1 << 16


def _block_rows(n_orders: int) -> int:
    """Rows per block: about ``_BLOCK_ELEMENTS`` / n_orders (221 at the 296 paper2018 orders), in [64, 1024]."""
    return max(64, min(_CHUNK_ROWS, _BLOCK_ELEMENTS // max(int(n_orders), 1)))


def _check_logq(logq: Any) -> np.ndarray:
    logq = np.atleast_1d(np.asarray(logq, dtype=np.float64))
    if logq.ndim != 1 or np.any(np.isnan(logq)) or np.any(logq > 0):
        raise ValueError("logq: expected a 1-D array of log-probabilities (<= 0, no NaN)")
    return logq


def _check_weights(weights: Any, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights: expected {n} finite non-negative weights")
    return w


def _theorem6_scalars(logq: np.ndarray, slope: float, variant: str = "paper2018") -> tuple[np.ndarray, ...]:
    """Per-query quantities of Theorem 6 with the orders μ2 = √(−log q / s), μ1 = μ2 + 1 (Proposition 10).

    Returns (μ_cut, valid, log(1−q), log A, log B), A and B per unit (α − 1): the
    Theorem 6 term is used for the ``valid`` queries at the orders α < μ_cut.

    ``"paper2018"`` (Papernot et al. 2018, Theorem 6 and their code): ε_i = s·μ_i,
    B = e^{ε1}/q^{1/(μ1−1)}, μ_cut = μ1; valid where μ2 > 1, −log q > ε2 and
    log q ≤ (μ2−1)ε2 − μ2(log(1 + 1/(μ1−1)) + log(1 + 1/(μ2−1))).

    ``"muschiol_printed"`` (Muschiol 2021, Eq. 4.8 and the sentence under it, literally):
    B(q̃, μ2, ε2) = e^{ε2}/q̃^{1/(μ2−1)}; "μ1 ≥ λ", so μ_cut = the next float above μ1;
    valid where μ2 > 1 and q̃ ≤ e^{(μ1−1)ε2}/(μ2/(μ1−1) · μ2/(μ2−1))^{μ2} (and −log q̃ > ε2,
    which μ2 > 1 implies for these μ2, ε2 and which keeps A defined).
    """
    if variant not in THEOREM6_VARIANTS:
        raise ValueError(f"variant: expected one of {list(THEOREM6_VARIANTS)}, got {variant!r}")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu2 = np.sqrt(-logq / slope)
        mu1 = mu2 + 1.0
        eps1 = slope * mu1
        eps2 = slope * mu2
        valid = np.isfinite(logq) & (mu2 > 1.0) & (-logq > eps2)
        log1q = log1mexp(logq)
        log_a = log1q - log1mexp((logq + eps2) * (1.0 - 1.0 / mu2))
        if variant == "paper2018":
            valid &= logq <= (mu2 - 1.0) * eps2 - mu2 * (np.log1p(1.0 / (mu1 - 1.0)) + np.log1p(1.0 / (mu2 - 1.0)))
            log_b = eps1 - logq / (mu1 - 1.0)
            mu_cut = mu1
        else:
            valid &= logq <= (mu1 - 1.0) * eps2 - mu2 * (np.log(mu2 / (mu1 - 1.0)) + np.log(mu2 / (mu2 - 1.0)))
            log_b = eps2 - logq / (mu2 - 1.0)
            mu_cut = np.nextafter(mu1, np.inf)
    return mu_cut, valid, log1q, log_a, log_b


def _log_mix(logq, log1q, log_a, log_b, am1, buffers=None) -> np.ndarray:
    """log((1−q)·e^{(α−1)·log A} + q·e^{(α−1)·log B}) / (α−1) for rows × orders, ``[b, K]`` (am1 = α − 1).

    The expression of Papernot et al. 2018 Theorem 6 and, with log A = log((1−q)/(1 − e^ε q)) and
    log B = ε, of the pure-DP bound (Papernot et al. 2017 Theorem 3). The log-sum-exp of
    x = log(1−q) + (α−1)log A and y = log q + (α−1)log B is numpy's own ``logaddexp`` formula,
    max(x, y) + log1p(exp(min(x, y) − max(x, y))), written with separate in-place ufuncs because
    numpy's exp and log1p are SIMD-vectorised and ``np.logaddexp`` is not (about 5× slower here);
    x and y come from one small matrix product [[log A, log(1−q)], [log B, log q]] · [[α−1], [1]].
    ``buffers``: optional (flat float64 array of ≥ 2·b·K values, one of ≥ b·K values) for scratch.
    log(1−q), log A, log B and log q must be finite (the caller selects such rows).
    """
    b, k = len(logq), len(am1)
    size = b * k
    if buffers is None:
        xy, d = np.empty((2 * b, k)), np.empty((b, k))
    else:
        xy, d = buffers[0][: 2 * size].reshape(2 * b, k), buffers[1][:size].reshape(b, k)
    coef = np.empty((2 * b, 2))
    coef[:b, 0], coef[:b, 1], coef[b:, 0], coef[b:, 1] = log_a, log1q, log_b, logq
    np.matmul(coef, np.vstack((am1, np.ones(k))), out=xy)
    x, y = xy[:b], xy[b:]
    np.minimum(x, y, out=d)
    np.maximum(x, y, out=x)
    d -= x  # −|x − y|
    if size and d.min() < _EXP_FLOOR:
        # exp is 0 below −745 and < 1e−304 below −700; numpy's SIMD exp takes a slow scalar path
        # on such arguments, so they are clamped and their result set to 0.
        below = d < _EXP_FLOOR
        np.maximum(d, _EXP_FLOOR, out=d)
        np.exp(d, out=d)
        np.copyto(d, 0.0, where=below)
    else:
        np.exp(d, out=d)
    np.log1p(d, out=d)
    x += d
    x /= am1
    return x


def _clip_rdp(dep: np.ndarray, base: np.ndarray) -> np.ndarray:
    """min(dep, base) floored at 0, in place (two fast passes; ``np.clip`` with an array bound is slower)."""
    np.minimum(dep, base, out=dep)
    np.maximum(dep, 0.0, out=dep)
    return dep


def _theorem6_raw(logq, log1q, log_a, log_b, orders) -> np.ndarray:
    """Theorem 6 bound log((1−q)A^{α−1} + qB^{α−1})/(α−1), ``[b, K]``, without checking its conditions."""
    with np.errstate(invalid="ignore"):
        return _log_mix(logq, log1q, log_a, log_b, np.asarray(orders, dtype=np.float64) - 1.0)


def _resolve_cap(slope: float, cap_slope: Any) -> float:
    return slope if cap_slope is None else check_positive("cap_slope", cap_slope)


def rdp_data_dependent(
    logq: Any, slope: float, orders: Any, *, cap_slope: float | None = None, variant: str = "paper2018"
) -> np.ndarray:
    """Data-dependent RDP per query × order, Papernot et al. 2018 Theorem 6 + Proposition 10.

    For a mechanism whose data-independent RDP is s·α and an upper bound q on
    Pr[output ≠ most likely output], with μ2 = √(−log q / s), μ1 = μ2 + 1,
    ε_i = s·μ_i: where the conditions hold (see :func:`_theorem6_scalars`) and
    α < μ1, RDP(α) = min(c·α, log((1−q)A^{α−1} + qB^{α−1})/(α−1)), floored at 0, with
    A = (1−q)/(1 − (q e^{ε2})^{(μ2−1)/μ2}), B = e^{ε1}/q^{1/(μ1−1)};
    elsewhere c·α. q = 0 (log q = −inf) gives 0. Returns ``float[n_queries, n_orders]``.

    The cap slope c is s unless ``cap_slope`` is given (Muschiol 2021 Eq. 4.8 caps with
    λ/σ² while its μ's and ε's use nλ/(2σ²)); ``variant="muschiol_printed"`` uses that
    thesis's printed B(q̃, μ2, ε2) and condition instead (see :func:`_theorem6_scalars`).
    Materialises the full array: for a composed total use :func:`total_rdp_data_dependent`.
    """
    logq = _check_logq(logq)
    slope = check_positive("slope", slope)
    cap = _resolve_cap(slope, cap_slope)
    orders = check_orders(orders, 1.0)
    base = cap * orders
    out = np.broadcast_to(base, (len(logq), len(orders))).copy()
    out[np.isneginf(logq)] = 0.0
    mu_cut, valid, log1q, log_a, log_b = _theorem6_scalars(logq, slope, variant)
    rows = np.flatnonzero(valid)
    am1 = orders - 1.0
    for start in range(0, len(rows), _block_rows(len(orders))):
        r = rows[start : start + _block_rows(len(orders))]
        dep = _log_mix(logq[r], log1q[r], log_a[r], log_b[r], am1)
        _clip_rdp(dep, base)
        out[r] = np.where(orders[None, :] >= mu_cut[r][:, None], base, dep)
    return out


def _blocked_total(logq, w, orders, base, scalars) -> np.ndarray:
    """Σ_i w_i · RDP_i(α) of a "log-mix" bound without materialising [n_queries, n_orders].

    ``scalars`` = (cut, valid, log(1−q), log A, log B) per query (see :func:`_log_mix`): the
    bound min(base, max(0, log-mix)) applies to ``valid`` queries at the orders α < cut; every
    other query with log q > −inf is charged ``base`` (in one step), log q = −inf costs 0.
    Valid queries are sorted by their cut and processed in blocks of about ``_BLOCK_ELEMENTS``
    values, each only over the orders below the block's largest cut; the ``base`` charged above
    each query's cut is added in one step from cumulative weights.
    """
    cut, valid, log1q, log_a, log_b = scalars
    finite = ~np.isneginf(logq)
    total = base * float(np.sum(w[finite & ~valid]))
    rows = np.flatnonzero(valid & (w > 0))
    if rows.size == 0:
        return total
    rows = rows[np.argsort(cut[rows], kind="stable")]
    c, wr = cut[rows], w[rows]
    cum_w = np.concatenate(([0.0], np.cumsum(wr)))
    total += base * cum_w[np.searchsorted(c, orders, side="right")]  # queries with cut <= α
    lq, l1, la, lb = logq[rows], log1q[rows], log_a[rows], log_b[rows]
    am1 = orders - 1.0
    step = _block_rows(len(orders))
    rows_max = min(step, len(rows))
    buffers = (np.empty(2 * rows_max * len(orders)), np.empty(rows_max * len(orders)))
    for start in range(0, len(rows), step):
        r = slice(start, start + step)
        k = int(np.searchsorted(orders, c[r][-1], side="left"))  # orders below the block's largest cut
        if k == 0:
            continue
        dep = _clip_rdp(_log_mix(lq[r], l1[r], la[r], lb[r], am1[:k], buffers), base[:k])
        # Rows are sorted by cut: every row of the block applies at orders below its smallest cut;
        # only the columns j0..k−1 need the per-row mask (the rest is charged above via cum_w).
        j0 = int(np.searchsorted(orders, c[r][0], side="left"))
        if j0 < k:
            np.copyto(dep[:, j0:], 0.0, where=orders[j0:k] >= c[r][:, None])
        total[:k] += np.einsum("i,ij->j", wr[r], dep)  # faster than BLAS gemv here
    return total


def total_rdp_data_dependent(
    logq: Any, slope: float, orders: Any, weights: Any = None, *, cap_slope: float | None = None,
    variant: str = "paper2018",
) -> np.ndarray:
    """Σ_queries w_i · RDP_i(α) of :func:`rdp_data_dependent`, without materialising [n_queries, n_orders].

    Queries where Theorem 6 does not apply contribute w_i · c·α in one step;
    the others are processed in blocks, only over the orders α < max μ1 of the block.
    """
    logq = _check_logq(logq)
    slope = check_positive("slope", slope)
    cap = _resolve_cap(slope, cap_slope)
    orders = check_orders(orders, 1.0)
    w = _check_weights(weights, len(logq))
    return _blocked_total(logq, w, orders, cap * orders, _theorem6_scalars(logq, slope, variant))


def rdp_gnmax(votes: Any, sigma: float, orders: Any) -> np.ndarray:
    """Per-query data-dependent GNMax RDP ``[n_queries, n_orders]`` (Theorem 6 with Proposition 7's q)."""
    return rdp_data_dependent(gnmax_logq(votes, sigma), 1.0 / check_positive("sigma", sigma) ** 2, orders)


def _threshold_logq(check_values: Any, threshold: float, sigma1: float) -> np.ndarray:
    logpr = threshold_logpr(check_values, threshold, sigma1)
    v = np.atleast_1d(np.asarray(check_values, dtype=np.float64))
    log_not = log_ndtr((float(threshold) - v) / sigma1)
    return np.minimum(logpr, log_not)


def rdp_threshold(check_values: Any, threshold: float, sigma1: float, orders: Any) -> np.ndarray:
    """Per-query data-dependent RDP of the threshold check (Papernot et al. 2018, §4.2 + Theorem 6).

    Theorem 6 with s = 1/(2σ1²) (σ → √2 σ1) and q = min(Pr[answered], 1 − Pr[answered]).
    """
    sigma1 = check_positive("sigma1", sigma1)
    return rdp_data_dependent(_threshold_logq(check_values, threshold, sigma1), 0.5 / sigma1**2, orders)


def _pure_dp_scalars(logq: np.ndarray, eps: float, q_condition: str) -> tuple[np.ndarray, ...]:
    """(cut = +inf, valid, log(1−q), log A, log B) of the pure-DP bound (Papernot et al. 2017 Theorem 3).

    A = (1−q)/(1 − e^ε q), B = e^ε; valid where ``q_condition`` holds (see :func:`rdp_pure_dp`).
    """
    if q_condition == "theorem":
        ok = logq <= -np.log1p(np.exp(eps))
    else:
        ok = (logq < np.log(0.5)) & (logq + eps < 0)
    ok &= np.isfinite(logq)
    with np.errstate(divide="ignore", invalid="ignore"):
        log1q = log1mexp(logq)
        log_a = log1q - log1mexp(np.where(ok, eps + logq, -1.0))
    return np.full(len(logq), np.inf), ok, log1q, log_a, np.full(len(logq), eps)


def _pure_dp_base(eps: float, orders: np.ndarray) -> np.ndarray:
    return np.minimum(0.5 * eps * eps * orders, eps)


def rdp_pure_dp(logq: Any, epsilon: float, orders: Any, q_condition: str = "theorem") -> np.ndarray:
    """Data-dependent RDP of an ε-DP mechanism, ``[n_queries, n_orders]``.

    Papernot et al. 2017 Theorem 3 restated for RDP (the 2017 log-MGF at moment
    λ is λ × this at α = λ + 1): RDP(α) = min(αε²/2, ε, T(α)) with
    T(α) = log((1−q)((1−q)/(1−e^ε q))^{α−1} + q e^{ε(α−1)})/(α−1),
    the middle term used only where the condition holds:
    ``"theorem"``: q ≤ 1/(e^ε + 1) (= (e^{2γ}−1)/(e^{4γ}−1) for ε = 2γ);
    ``"reference_code"``: q < 0.5 (the 2017 code; dropped where e^ε q ≥ 1).
    Materialises the full array: for a composed total use :func:`total_rdp_pure_dp`.
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    logq = _check_logq(logq)
    eps = check_positive("epsilon", epsilon)
    orders = check_orders(orders, 1.0)
    base = _pure_dp_base(eps, orders)
    out = np.broadcast_to(base, (len(logq), len(orders))).copy()
    out[np.isneginf(logq)] = 0.0
    _, ok, log1q, log_a, log_b = _pure_dp_scalars(logq, eps, q_condition)
    rows = np.flatnonzero(ok)
    am1 = orders - 1.0
    for start in range(0, len(rows), _block_rows(len(orders))):
        r = rows[start : start + _block_rows(len(orders))]
        dep = _log_mix(logq[r], log1q[r], log_a[r], log_b[r], am1)
        out[r] = _clip_rdp(dep, base)
    return out


def total_rdp_pure_dp(
    logq: Any, epsilon: float, orders: Any, q_condition: str = "theorem", weights: Any = None
) -> np.ndarray:
    """Σ_queries w_i · RDP_i(α) of :func:`rdp_pure_dp` (Papernot et al. 2018 §3, composition by Mironov 2017 Prop. 1), without materialising [n_queries, n_orders].

    Queries where the condition fails contribute min(αε²/2, ε) in one step; the
    others are processed in blocks of about 2²⁰ values.
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    logq = _check_logq(logq)
    eps = check_positive("epsilon", epsilon)
    orders = check_orders(orders, 1.0)
    w = _check_weights(weights, len(logq))
    return _blocked_total(logq, w, orders, _pure_dp_base(eps, orders), _pure_dp_scalars(logq, eps, q_condition))


def compose(per_query: Any, weights: Any = None) -> np.ndarray:
    """RDP composition: sum per-query curves ``[n_queries, n_orders]`` order by order (Mironov 2017, Prop. 1).

    ``weights`` (``[n_queries]``) gives an expected cost Σ w_i RDP_i(α).
    """
    arr = np.asarray(per_query, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if weights is None:
        return arr.sum(axis=0)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (arr.shape[0],):
        raise ValueError(f"weights: expected shape ({arr.shape[0]},), got {w.shape}")
    return w @ arr


# ------------------------------------------------------------- accountants


def step2_weights(cost: str, logpr: np.ndarray, answered: Any, rng: Any, draw_check) -> np.ndarray:
    """Per-query weights of the second step of a two-step (check, then answer) mechanism.

    ``cost="expected"``: Pr[answered] = exp(logpr) (Papernot et al. 2018, §4.2
    tables). ``cost="realized"``: the answered mask, given or drawn by
    ``draw_check(generator)`` from ``rng`` (the same draw the aggregator makes).
    """
    check_choice("cost", cost, COSTS)
    n = len(logpr)
    if cost == "expected":
        if answered is not None:
            raise ValueError("answered: only used with cost='realized'")
        return np.exp(logpr)
    if answered is None:
        if rng is None:
            raise ValueError("rng: cost='realized' needs an answered mask or a seed to draw the check noise")
        answered = draw_check(as_generator(rng))
    answered = np.asarray(answered)
    if answered.shape != (n,) or answered.dtype != bool:
        raise ValueError(f"answered: expected a boolean mask of shape ({n},)")
    return answered.astype(np.float64)




def _mode(n_queries: Any, votes: Any) -> tuple[int, np.ndarray | None]:
    if (n_queries is None) == (votes is None):
        raise ValueError("n_queries/votes: expected exactly one of n_queries (data-independent) or votes (data-dependent)")
    if votes is not None:
        counts = check_counts(votes, keep_integers=True)
        return len(counts), counts
    return check_n_queries(n_queries), None


def gnmax_epsilon(
    *,
    sigma: float,
    delta: float,
    n_queries: int | None = None,
    votes: Any = None,
    orders: Any = "paper2018",
    conversion: str = "basic",
) -> PrivacySpent:
    """(ε, δ) of GNMax answering every query (Papernot et al. 2018, Prop. 8 / Theorem 6; RDP composition).

    Give ``n_queries`` for the data-independent bound (α/σ² per query) or
    ``votes`` (``int[n_queries, n_classes]``) for the data-dependent one.
    """
    sigma = check_positive("sigma", sigma)
    delta = check_delta(delta)
    check_choice("conversion", conversion, CONVERSIONS)
    n, counts = _mode(n_queries, votes)
    grid = resolve_rdp_orders(orders)
    slope = 1.0 / sigma**2
    if counts is None:
        total = n * slope * grid
    else:
        total = total_rdp_data_dependent(_gnmax_logq(counts, sigma), slope, grid)
    return spent_from_curve(
        grid, total, delta, conversion, accountant="rdp2018", mechanism="gnmax", n_queries=n,
        data_dependent=counts is not None, sigma=sigma,
    )


def lnmax_rdp_epsilon(
    *,
    gamma: float,
    delta: float,
    n_queries: int | None = None,
    votes: Any = None,
    orders: Any = "paper2018",
    conversion: str = "basic",
    q_condition: str = "theorem",
    q_variant: str = "sum",
) -> PrivacySpent:
    """(ε, δ) of LNMax in the RDP framework (Papernot et al. 2018 §3: pure ε = 2γ per query).

    Data-independent: min(αε²/2, ε) per query; data-dependent: :func:`rdp_pure_dp`
    with the LNMax q of :func:`lnmax_logq`, summed block-wise by :func:`total_rdp_pure_dp`.
    """
    gamma = check_positive("gamma", gamma)
    delta = check_delta(delta)
    check_choice("conversion", conversion, CONVERSIONS)
    n, counts = _mode(n_queries, votes)
    grid = resolve_rdp_orders(orders)
    eps = 2.0 * gamma
    if counts is None:
        total = n * rdp_pure_dp_data_independent(eps, grid)
    else:
        check_choice("q_variant", q_variant, Q_VARIANTS)
        total = total_rdp_pure_dp(_lnmax_logq(counts, gamma, q_variant), eps, grid, q_condition)
    return spent_from_curve(
        grid, total, delta, conversion, accountant="rdp2018", mechanism="lnmax", n_queries=n,
        data_dependent=counts is not None, gamma=gamma,
        **({"q_condition": q_condition, "q_variant": q_variant} if counts is not None else {}),
    )


def confident_gnmax_epsilon(
    *,
    threshold: float,
    sigma1: float,
    sigma2: float,
    delta: float,
    n_queries: int | None = None,
    votes: Any = None,
    orders: Any = "paper2018",
    conversion: str = "basic",
    cost: str | None = None,
    answered: Any = None,
    rng: Any = None,
    check_values: Any = None,
) -> PrivacySpent:
    """(ε, δ) of confident GNMax (Papernot et al. 2018, Algorithm 1, §4.2; Theorem 6).

    Data-dependent (``votes``), per query: the threshold step (Theorem 6 with
    σ → √2σ1, q = min(Pr[answered], 1 − Pr[answered])) plus the GNMax step
    (Theorem 6 with σ2), charged

    * ``cost="expected"`` (default): step 1 + Pr[answered] · step 2, as in the
      paper's tables; ``expected_answered`` = Σ Pr[answered];
    * ``cost="realized"``: step 2 only on answered queries, from ``answered``
      (a boolean mask, e.g. ``Aggregation.answered``) or, if not given, from
      running the check with ``rng`` exactly as :func:`aggregators.confident_gnmax` does.

    Data-independent (``n_queries``): every query charged both steps,
    α/(2σ1²) + α/σ2² (``cost="all_answered"``). ``check_values`` overrides
    max_c n_c for the check (interactive GNMax: max_c(n_c − |E| p_c)).
    """
    from .aggregators import confident_check  # local import: aggregators does not import rdp

    sigma1 = check_positive("sigma1", sigma1)
    sigma2 = check_positive("sigma2", sigma2)
    threshold = float(threshold)
    if not np.isfinite(threshold):
        raise ValueError(f"threshold: expected a finite number, got {threshold}")
    delta = check_delta(delta)
    check_choice("conversion", conversion, CONVERSIONS)
    n, counts = _mode(n_queries, votes)
    grid = resolve_rdp_orders(orders)
    s1, s2 = 0.5 / sigma1**2, 1.0 / sigma2**2
    params = {"threshold": threshold, "sigma1": sigma1, "sigma2": sigma2}
    if counts is None:
        if cost is not None or answered is not None:
            raise ValueError("cost: expected/realized costs need votes; with n_queries every query is charged both steps")
        total = n * (s1 + s2) * grid
        return spent_from_curve(
            grid, total, delta, conversion, accountant="rdp2018", mechanism="confident-gnmax", n_queries=n,
            data_dependent=False, cost="all_answered", expected_answered=float(n), **params,
        )
    cost = "expected" if cost is None else check_choice("cost", cost, COSTS)
    values = np.asarray(counts.max(axis=1) if check_values is None else check_values, dtype=np.float64)
    if values.shape != (n,):
        raise ValueError(f"check_values: expected shape ({n},), got {values.shape}")
    logpr = threshold_logpr(values, threshold, sigma1)
    step1 = total_rdp_data_dependent(_threshold_logq(values, threshold, sigma1), s1, grid)
    weights = step2_weights(
        cost, logpr, answered, rng, lambda gen: confident_check(values, threshold, sigma1, gen)
    )
    step2 = total_rdp_data_dependent(_gnmax_logq(counts, sigma2), s2, grid, weights)
    return spent_from_curve(
        grid, step1 + step2, delta, conversion, accountant="rdp2018", mechanism="confident-gnmax", n_queries=n,
        data_dependent=True, cost=cost, expected_answered=float(weights.sum()), **params,
        **({"n_answered": int(weights.sum())} if cost == "realized" else {}),
    )
