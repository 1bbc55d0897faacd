"""The shared Rényi-DP math of every accountant: log-space helpers, q bounds, Theorem 6, composed curves.

For a student: every PATE accountant in this package does the same three things.
(1) It bounds, per query, the probability q that the noisy answer differs from the
most likely one (a union bound over classes or labels, in log space). (2) It turns
q into a per-order RDP curve with Papernot et al. 2018 Theorem 6 (or, for a pure
ε-DP mechanism, Papernot et al. 2017 Theorem 3), capped by the data-independent
curve. (3) It adds the curves of all queries order by order (RDP composition,
Mironov 2017 Proposition 1). This module holds (1)–(3) once, public, for
``rdp``, ``moments``, ``multilabel``, ``multiwinner`` and ``smooth_sensitivity``;
the last step, curve → (ε, δ), is :func:`pate_study.privacy.accounting.account`.

Deterministic sums: a composed total must not depend on how the votes
lie in memory, on SIMD alignment or on thread counts, or tables written from it
differ in the last digit between hosts. Here:

* inputs are made C-contiguous before any row reduction, so that numpy's
  pairwise row sums always see the same layout (a Fortran-ordered copy would
  otherwise be summed in another order);
* no BLAS call touches a result (BLAS kernels differ by CPU and thread count):
  the two affine terms of Theorem 6 are formed with elementwise multiply/add;
* totals over queries are accumulated block by block with ``np.add.reduce``
  along axis 0 of a C-contiguous block (row after row, in query order within a
  block, blocks in a fixed order), and scalar weight sums use ``math.fsum``
  (exactly rounded, order-free).

Elementwise transcendental functions (numpy's SIMD ``exp``/``log1p``, scipy's
``log_ndtr``) are deterministic on one machine but may differ by an ulp between
CPU generations; that part is outside any summation order.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import check_choice, check_orders

__all__ = [
    "THEOREM6_VARIANTS",
    "Q_CONDITIONS",
    "log1mexp",
    "row_logsumexp",
    "log_prod_ndtr",
    "cap_logq",
    "gaussian_tail_logsf",
    "argmax_gaps",
    "gnmax_logq_counts",
    "check_logq",
    "check_weights",
    "Theorem6Terms",
    "theorem6_terms",
    "pure_dp_terms",
    "log_mix",
    "theorem6_bound",
    "per_query_rdp",
    "total_rdp",
    "rdp_data_dependent",
    "total_rdp_data_dependent",
    "rdp_pure_dp",
    "total_rdp_pure_dp",
    "pure_dp_base",
]

#: Theorem 6 variants: ``"paper2018"`` (Papernot et al. 2018 Theorem 6 + Proposition 10, as in their code) and
#: ``"muschiol_printed"`` (Muschiol 2021 Eq. 4.8 literally: B(q̃, μ2, ε2) and the printed condition).
THEOREM6_VARIANTS = ("paper2018", "muschiol_printed")
#: Conditions of the pure-DP data-dependent bound: the theorem's q ≤ 1/(e^ε + 1), or the 2017 code's q < 0.5.
Q_CONDITIONS = ("theorem", "reference_code")

_SQRT2 = math.sqrt(2.0)
_CHUNK_ROWS = 1024
_TABLE_MAX_GAP = 1 << 20
_EXP_FLOOR = -700.0
_TINY_COMPLEMENT = 4e-18
#: Target number of float64 values in one [rows × orders] block (512 KiB per temporary): blocks stay in cache.
_BLOCK_ELEMENTS = 1 << 16


def _special():
    """scipy.special, imported on first use (keeps ``import pate_study.privacy`` and the CLI's --help fast)."""
    import scipy.special  # ~0.3 s at import time: only computations that need it pay it

    return scipy.special


# ------------------------------------------------------------------ log space


def log1mexp(x: np.ndarray | float) -> np.ndarray:
    """Return log(1 − exp(x)) for x ≤ 0, elementwise and numerically stable.

    Uses log(−expm1(x)) near 0 and log1p(−exp(x)) further away (Mächler 2012,
    "Accurately computing log(1 − exp(−|a|))"). Returns −inf at x = 0 and NaN
    for x > 0 (the caller masks those entries).
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        near = x > -0.6931471805599453
        out = np.where(near, np.log(-np.expm1(np.minimum(x, 0.0))), np.log1p(-np.exp(np.minimum(x, 0.0))))
    return np.where(x > 0, np.nan, out)


def row_logsumexp(terms: np.ndarray) -> np.ndarray:
    """log Σ_j exp(terms[:, j]) per row (rows hold at least one finite entry); rows summed C-contiguously."""
    terms = np.ascontiguousarray(terms)
    top = terms.max(axis=1)
    return top + np.log(np.exp(terms - top[:, None]).sum(axis=1))


def log_prod_ndtr(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log Π_i Φ(z_i), log(1 − Π_i Φ(z_i))) per row of ``z``, accurate when the product is within 1e-17 of 1.

    log Φ(z) underflows to −0 for z ≳ 37.5, which would make 1 − Π Φ exactly 0
    (log q = −inf, a query charged nothing). Where −Σ log Φ(z_i) < 4e-18, the
    complement is Σ_i Φ̄(z_i) up to a relative error below 2e-18, computed as
    logsumexp_i log Φ̄(z_i).
    """
    sp = _special()
    z = np.ascontiguousarray(z, dtype=np.float64)
    log_p_all = sp.log_ndtr(z).sum(axis=1)
    log_not = log1mexp(np.minimum(log_p_all, 0.0))
    tiny = log_p_all > -_TINY_COMPLEMENT
    if np.any(tiny):
        log_not[tiny] = row_logsumexp(sp.log_ndtr(-z[tiny]))
    return log_p_all, log_not


def cap_logq(logq: np.ndarray, log_cap: float | np.ndarray) -> np.ndarray:
    """min(log q, log_cap, 0): a union bound is a probability bound only up to 1 (docs/reference-values.md §5,
    a pitfall)."""
    return np.minimum(np.minimum(logq, log_cap), 0.0)


def gaussian_tail_logsf(distances: np.ndarray, scale: float) -> np.ndarray:
    """log Φ̄(d/scale) elementwise (log of the Gaussian upper tail), in log space."""
    return _special().log_ndtr(-(np.asarray(distances, dtype=np.float64) / scale))


# ----------------------------------------------------------------- q bounds


def argmax_gaps(counts: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Row index arrays of the (first) argmax and the gaps n* − n_j (0 at the argmax), C-contiguous."""
    rows = np.arange(len(counts))
    idx = np.argmax(counts, axis=1)
    return (rows, idx), np.ascontiguousarray(counts[rows, idx][:, None] - counts)


def _gaussian_gap_tails(gaps: np.ndarray, scale: float) -> np.ndarray:
    """Φ̄(g/scale) for non-negative integer-valued gaps g.

    Vote gaps take at most max(g) + 1 distinct values, so Φ̄ is evaluated once per
    value and looked up (the same float64 operations as evaluating it per entry,
    hence bit-identical, and several times faster than 10⁶ calls of ``ndtr``).
    """
    ndtr = _special().ndtr
    gmax = float(gaps.max()) if gaps.size else 0.0
    if gmax > _TABLE_MAX_GAP or (gaps.dtype.kind == "f" and not np.all(gaps == np.floor(gaps))):
        return ndtr(-(gaps / scale))
    table = ndtr(-(np.arange(int(gmax) + 1, dtype=np.float64) / scale))
    return table[gaps if gaps.dtype == np.intp else gaps.astype(np.intp)]


def gnmax_logq_counts(counts: np.ndarray, sigma: float, n_candidates_log: float | None = None) -> np.ndarray:
    """log q of GNMax on validated counts ``[n, m]``, Papernot et al. 2018 Proposition 7 (union bound).

    log q = log Σ_{j ≠ j*} Φ̄((n* − n_j)/(√2 σ)), capped at log(1 − 1/M) where M is the
    number of candidate outputs: m, or e^{n_candidates_log} when the candidates include
    classes not listed in ``counts`` (they have 0 votes; powerset voting, ``multiwinner``),
    whose e^{n_candidates_log} − m terms Φ̄(n*/(√2σ)) are added in log space.
    Summed in linear space where that is exact to rounding, in log space on the rows
    where the sum would underflow. Returns ``float[n]``.
    """
    counts = np.ascontiguousarray(counts)
    n, m = counts.shape
    scale = _SQRT2 * sigma
    if m == 1 and n_candidates_log is None:
        return np.full(n, -np.inf)
    argmax, gaps = argmax_gaps(counts)
    tail = _gaussian_gap_tails(gaps, scale)
    tail[argmax] = 0.0
    total = tail.sum(axis=1)
    tiny = total < 1e-250
    with np.errstate(divide="ignore"):
        logq = np.log(total)
    if np.any(tiny):
        terms = gaussian_tail_logsf(gaps[tiny], scale)
        terms[np.arange(terms.shape[0]), argmax[1][tiny]] = -np.inf
        logq[tiny] = row_logsumexp(terms) if m > 1 else -np.inf
    if n_candidates_log is None:
        with np.errstate(divide="ignore"):
            return cap_logq(logq, math.log1p(-1.0 / m))
    # zero-vote candidates: (M − m) · Φ̄(n*/(√2σ)), M = e^{n_candidates_log} ≥ m
    log_extra = _log_minus(n_candidates_log, math.log(m)) + gaussian_tail_logsf(counts[argmax], scale)
    logq = np.logaddexp(logq, log_extra)
    return cap_logq(logq, float(log1mexp(-n_candidates_log)))


def _log_minus(log_a: float, log_b: float) -> float:
    """log(e^a − e^b) for a ≥ b (−inf when equal)."""
    if log_a == log_b:
        return -math.inf
    return log_a + float(log1mexp(log_b - log_a))


# ---------------------------------------------------------- validation of q


def check_logq(logq: Any) -> np.ndarray:
    """Validate a 1-D array of log-probabilities (≤ 0, no NaN)."""
    logq = np.ascontiguousarray(np.atleast_1d(np.asarray(logq, dtype=np.float64)))
    if logq.ndim != 1 or np.any(np.isnan(logq)) or np.any(logq > 0):
        raise ValueError("logq: expected a 1-D array of log-probabilities (<= 0, no NaN)")
    return logq


def check_weights(weights: Any, n: int) -> np.ndarray:
    """Validate per-query weights (finite, ≥ 0); ``None`` means all ones."""
    if weights is None:
        return np.ones(n)
    w = np.ascontiguousarray(np.asarray(weights, dtype=np.float64))
    if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights: expected {n} finite non-negative weights")
    return w


# ---------------------------------------------------------------- Theorem 6


class Theorem6Terms(NamedTuple):
    """Per-query scalars of a "log-mix" bound (see :func:`log_mix`): it applies to ``valid`` rows at orders <
    ``cut``."""

    cut: np.ndarray
    valid: np.ndarray
    log1q: np.ndarray
    log_a: np.ndarray
    log_b: np.ndarray


def theorem6_terms(logq: np.ndarray, slope: float, variant: str = "paper2018") -> Theorem6Terms:
    """Per-query quantities of Theorem 6 with the orders μ2 = √(−log q / s), μ1 = μ2 + 1 (Proposition 10).

    For a mechanism with data-independent RDP s·α. Returns (μ_cut, valid, log(1−q), log A, log B),
    A and B per unit (α − 1): the Theorem 6 term is used for the ``valid`` queries at orders α < μ_cut.

    ``"paper2018"`` (Papernot et al. 2018, Theorem 6 and their code): ε_i = s·μ_i,
    B = e^{ε1}/q^{1/(μ1−1)}, μ_cut = μ1; valid where μ2 > 1, −log q > ε2 and
    log q ≤ (μ2−1)ε2 − μ2(log(1 + 1/(μ1−1)) + log(1 + 1/(μ2−1))).

    ``"muschiol_printed"`` (Muschiol 2021, Eq. 4.8 and the sentence under it, literally):
    B(q̃, μ2, ε2) = e^{ε2}/q̃^{1/(μ2−1)}; "μ1 ≥ λ", so μ_cut = the next float above μ1;
    valid where μ2 > 1 and q̃ ≤ e^{(μ1−1)ε2}/(μ2/(μ1−1) · μ2/(μ2−1))^{μ2} (and −log q̃ > ε2,
    which μ2 > 1 implies for these μ2, ε2 and which keeps A defined).
    """
    check_choice("variant", variant, THEOREM6_VARIANTS)
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
    return Theorem6Terms(mu_cut, valid, log1q, log_a, log_b)


def pure_dp_terms(logq: np.ndarray, eps: float, q_condition: str) -> Theorem6Terms:
    """(cut = +inf, valid, log(1−q), log A, log B) of the pure-DP bound (Papernot et al. 2017 Theorem 3).

    A = (1−q)/(1 − e^ε q), B = e^ε; valid where ``q_condition`` holds: ``"theorem"``
    q ≤ 1/(e^ε + 1); ``"reference_code"`` q < 0.5 and e^ε q < 1 (the 2017 code).
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    if q_condition == "theorem":
        ok = logq <= -np.log1p(np.exp(eps))
    else:
        ok = (logq < np.log(0.5)) & (logq + eps < 0)
    ok &= np.isfinite(logq)
    with np.errstate(divide="ignore", invalid="ignore"):
        log1q = log1mexp(logq)
        log_a = log1q - log1mexp(np.where(ok, eps + logq, -1.0))
    return Theorem6Terms(np.full(len(logq), np.inf), ok, log1q, log_a, np.full(len(logq), eps))


def pure_dp_base(eps: float, orders: np.ndarray) -> np.ndarray:
    """Data-independent RDP of an ε-DP mechanism, min(αε²/2, ε) (Bun & Steinke 2016, Prop. 1.4; trivial bound)."""
    return np.minimum(0.5 * eps * eps * orders, eps)


def _block_rows(n_orders: int) -> int:
    """Rows per block: about ``_BLOCK_ELEMENTS`` / n_orders (221 at the 296 paper2018 orders), in [64, 1024]."""
    return max(64, min(_CHUNK_ROWS, _BLOCK_ELEMENTS // max(int(n_orders), 1)))


def log_mix(logq, log1q, log_a, log_b, am1, buffers=None) -> np.ndarray:
    """log((1−q)·e^{(α−1)·log A} + q·e^{(α−1)·log B}) / (α−1) for rows × orders, ``[b, K]`` (am1 = α − 1).

    The expression of Papernot et al. 2018 Theorem 6 and, with log A = log((1−q)/(1 − e^ε q)) and
    log B = ε, of the pure-DP bound (Papernot et al. 2017 Theorem 3). The log-sum-exp of
    x = log(1−q) + (α−1)log A and y = log q + (α−1)log B is numpy's own ``logaddexp`` formula,
    max(x, y) + log1p(exp(min(x, y) − max(x, y))), written with separate in-place ufuncs because
    numpy's exp and log1p are SIMD-vectorised and ``np.logaddexp`` is not (about 5× slower here).
    x and y are formed with elementwise multiply and add (not a BLAS product, whose kernels
    round differently on different CPUs). ``buffers``: optional (flat float64 array of ≥ 2·b·K
    values, one of ≥ b·K values) for scratch. log(1−q), log A, log B and log q must be finite.
    """
    b, k = len(logq), len(am1)
    size = b * k
    if buffers is None:
        xy, d = np.empty((2 * b, k)), np.empty((b, k))
    else:
        xy, d = buffers[0][: 2 * size].reshape(2 * b, k), buffers[1][:size].reshape(b, k)
    x, y = xy[:b], xy[b:]
    np.multiply(np.asarray(log_a)[:, None], am1[None, :], out=x)
    x += np.asarray(log1q)[:, None]
    np.multiply(np.asarray(log_b)[:, None], am1[None, :], out=y)
    y += np.asarray(logq)[:, None]
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


def theorem6_bound(logq: np.ndarray, terms: Theorem6Terms, orders: np.ndarray) -> np.ndarray:
    """The Theorem 6 expression log((1−q)A^{α−1} + qB^{α−1})/(α−1), ``[b, K]``, without checking its conditions."""
    with np.errstate(invalid="ignore"):
        return log_mix(logq, terms.log1q, terms.log_a, terms.log_b, np.asarray(orders, dtype=np.float64) - 1.0)


def per_query_rdp(logq: np.ndarray, terms: Theorem6Terms, orders: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Per-query RDP ``[n_queries, n_orders]`` of a log-mix bound capped by ``base`` (floored at 0).

    Valid rows at orders < cut get min(base, max(0, log-mix)); other rows with log q > −inf
    get ``base``; log q = −inf (the answer is certain) gets 0. Materialises the full array.
    """
    out = np.broadcast_to(base, (len(logq), len(orders))).copy()
    out[np.isneginf(logq)] = 0.0
    rows = np.flatnonzero(terms.valid)
    am1 = orders - 1.0
    step = _block_rows(len(orders))
    for start in range(0, len(rows), step):
        r = rows[start : start + step]
        dep = _clip_rdp(log_mix(logq[r], terms.log1q[r], terms.log_a[r], terms.log_b[r], am1), base)
        out[r] = np.where(orders[None, :] >= terms.cut[r][:, None], base, dep)
    return out


def total_rdp(
    logq: np.ndarray, weights: np.ndarray, orders: np.ndarray, base: np.ndarray, terms: Theorem6Terms
) -> np.ndarray:
    """Σ_i w_i · RDP_i(α) of :func:`per_query_rdp` without materialising [n_queries, n_orders].

    Every query with log q > −inf that the bound does not cover is charged ``base`` in one
    step; valid queries are sorted by their cut (stable) and processed in blocks of about
    ``_BLOCK_ELEMENTS`` values, each only over the orders below the block's largest cut; the
    ``base`` charged above each query's cut is added from cumulative weights. Sums are
    deterministic (module docstring): ``math.fsum`` for weights, sequential ``np.cumsum``,
    and each block's column sums by ``np.add.reduce`` along axis 0 (row after row).
    """
    finite = ~np.isneginf(logq)
    total = base * math.fsum(weights[finite & ~terms.valid].tolist())
    rows = np.flatnonzero(terms.valid & (weights > 0))
    if rows.size == 0:
        return total
    rows = rows[np.argsort(terms.cut[rows], kind="stable")]
    c, wr = terms.cut[rows], weights[rows]
    unit = bool(np.all(wr == 1.0))
    cum_w = np.concatenate(([0.0], np.cumsum(wr)))
    total = total + base * cum_w[np.searchsorted(c, orders, side="right")]  # queries with cut <= α
    lq, l1, la, lb = logq[rows], terms.log1q[rows], terms.log_a[rows], terms.log_b[rows]
    am1 = orders - 1.0
    step = _block_rows(len(orders))
    rows_max = min(step, len(rows))
    buffers = (np.empty(2 * rows_max * len(orders)), np.empty(rows_max * len(orders)))
    for start in range(0, len(rows), step):
        r = slice(start, start + step)
        k = int(np.searchsorted(orders, c[r][-1], side="left"))  # orders below the block's largest cut
        if k == 0:
            continue
        dep = _clip_rdp(log_mix(lq[r], l1[r], la[r], lb[r], am1[:k], buffers), base[:k])
        # Rows are sorted by cut: every row of the block applies at orders below its smallest cut;
        # only the columns j0..k−1 need the per-row mask (the rest is charged above via cum_w).
        j0 = int(np.searchsorted(orders, c[r][0], side="left"))
        if j0 < k:
            np.copyto(dep[:, j0:], 0.0, where=orders[j0:k] >= c[r][:, None])
        if not unit:
            dep *= wr[r][:, None]
        total[:k] += np.add.reduce(dep, axis=0)
    return total


@constrained(slope="positive", cap_slope="positive")
def rdp_data_dependent(
    logq: Any, slope: float, orders: Any, *, cap_slope: float | None = None, variant: str = "paper2018"
) -> np.ndarray:
    """Data-dependent RDP per query × order, Papernot et al. 2018 Theorem 6 + Proposition 10.

    For a mechanism whose data-independent RDP is s·α and an upper bound q on
    Pr[output ≠ most likely output], with μ2 = √(−log q / s), μ1 = μ2 + 1,
    ε_i = s·μ_i: where the conditions hold (see :func:`theorem6_terms`) and
    α < μ1, RDP(α) = min(c·α, log((1−q)A^{α−1} + qB^{α−1})/(α−1)), floored at 0, with
    A = (1−q)/(1 − (q e^{ε2})^{(μ2−1)/μ2}), B = e^{ε1}/q^{1/(μ1−1)};
    elsewhere c·α. q = 0 (log q = −inf) gives 0. Returns ``float[n_queries, n_orders]``.

    The cap slope c is s unless ``cap_slope`` is given (Muschiol 2021 Eq. 4.8 caps with
    λ/σ² while its μ's and ε's use nλ/(2σ²)); ``variant="muschiol_printed"`` uses that
    thesis's printed B(q̃, μ2, ε2) and condition instead (see :func:`theorem6_terms`).
    Materialises the full array: for a composed total use :func:`total_rdp_data_dependent`. ``orders``: where the
    curve is evaluated (the axis of the result, each > 1), not an accounting setting.
    """
    logq = check_logq(logq)
    orders = check_orders(orders, 1.0)
    base = (slope if cap_slope is None else cap_slope) * orders
    return per_query_rdp(logq, theorem6_terms(logq, slope, variant), orders, base)


@constrained(slope="positive", cap_slope="positive")
def total_rdp_data_dependent(
    logq: Any,
    slope: float,
    orders: Any,
    weights: Any = None,
    *,
    cap_slope: float | None = None,
    variant: str = "paper2018",
) -> np.ndarray:
    """Σ_queries w_i · RDP_i(α) of :func:`rdp_data_dependent` (Mironov 2017 Prop. 1), without [n_queries, n_orders].

    Queries where Theorem 6 does not apply contribute w_i · c·α in one step;
    the others are processed in blocks, only over the orders α < max μ1 of the block.
    """
    logq = check_logq(logq)
    cap = slope if cap_slope is None else cap_slope
    orders = check_orders(orders, 1.0)
    w = check_weights(weights, len(logq))
    return total_rdp(logq, w, orders, cap * orders, theorem6_terms(logq, slope, variant))


@constrained(epsilon="positive")
def rdp_pure_dp(logq: Any, epsilon: float, orders: Any, q_condition: str = "theorem") -> np.ndarray:
    """Data-dependent RDP of an ε-DP mechanism, ``[n_queries, n_orders]``.

    Papernot et al. 2017 Theorem 3 restated for RDP (the 2017 log-MGF at moment
    λ is λ × this at α = λ + 1): RDP(α) = min(αε²/2, ε, T(α)) with
    T(α) = log((1−q)((1−q)/(1−e^ε q))^{α−1} + q e^{ε(α−1)})/(α−1),
    the middle term used only where the condition holds:
    ``"theorem"``: q ≤ 1/(e^ε + 1) (= (e^{2γ}−1)/(e^{4γ}−1) for ε = 2γ);
    ``"reference_code"``: q < 0.5 (the 2017 code; dropped where e^ε q ≥ 1).
    Materialises the full array: for a composed total use :func:`total_rdp_pure_dp`. ``orders``: where the curve
    is evaluated (the axis of the result, each > 1), not an accounting setting.
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    logq = check_logq(logq)
    orders = check_orders(orders, 1.0)
    return per_query_rdp(logq, pure_dp_terms(logq, epsilon, q_condition), orders, pure_dp_base(epsilon, orders))


@constrained(epsilon="positive")
def total_rdp_pure_dp(
    logq: Any, epsilon: float, orders: Any, q_condition: str = "theorem", weights: Any = None
) -> np.ndarray:
    """Σ_queries w_i · RDP_i(α) of :func:`rdp_pure_dp` (Papernot et al. 2018 §3; Mironov 2017 Prop. 1), blocked.

    Queries where the condition fails contribute min(αε²/2, ε) in one step; the
    others are processed in blocks.
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    logq = check_logq(logq)
    orders = check_orders(orders, 1.0)
    w = check_weights(weights, len(logq))
    return total_rdp(logq, w, orders, pure_dp_base(epsilon, orders), pure_dp_terms(logq, epsilon, q_condition))
