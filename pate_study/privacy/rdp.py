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
  min(Pr[answered], 1 − Pr[answered])) and the multi-label bounds.
* Data-dependent RDP of a pure ε-DP mechanism (Papernot et al. 2017, Theorem 3
  restated for RDP; valid when q ≤ 1/(e^ε + 1)) for LNMax.
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
]

Q_CONDITIONS = ("theorem", "reference_code")
Q_VARIANTS = ("sum", "approx")
COSTS = ("expected", "realized")
_SQRT2 = np.sqrt(2.0)
_CHUNK_ROWS = 4096


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


def gnmax_logq(votes: Any, sigma: float) -> np.ndarray:
    """log q for GNMax, Papernot et al. 2018 Proposition 7 (union bound).

    log q = logsumexp_{j ≠ j*} log Φ̄((n* − n_j)/(√2 σ)), capped at log(1 − 1/m).
    Summed in linear space where that is exact to rounding, in log space on the
    rows where the sum would underflow. Returns ``float[n_queries]``.
    """
    counts = check_counts(votes)
    sigma = check_positive("sigma", sigma)
    if counts.shape[1] == 1:
        return np.full(len(counts), -np.inf)
    argmax, gaps = _argmax_gaps(counts)
    z = gaps / (_SQRT2 * sigma)
    tail = ndtr(-z)
    tail[argmax] = 0.0
    total = tail.sum(axis=1)
    tiny = total < 1e-250
    with np.errstate(divide="ignore"):
        logq = np.log(total)
    if np.any(tiny):
        terms = log_ndtr(-z[tiny])
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
    counts = check_counts(votes)
    gamma = check_positive("gamma", gamma)
    check_choice("variant", variant, Q_VARIANTS)
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


def _theorem6_scalars(logq: np.ndarray, slope: float) -> tuple[np.ndarray, ...]:
    """Per-query quantities of Theorem 6 with Proposition 10's μ1, μ2.

    Returns (μ1, valid, log(1−q), log A per unit (α−1), log B per unit (α−1)).
    ``valid`` holds where μ2 > 1, −log q > ε2 and
    log q ≤ (μ2−1)ε2 − μ2(log(1 + 1/(μ1−1)) + log(1 + 1/(μ2−1))).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu2 = np.sqrt(-logq / slope)
        mu1 = mu2 + 1.0
        eps1 = slope * mu1
        eps2 = slope * mu2
        valid = (
            np.isfinite(logq)
            & (mu2 > 1.0)
            & (-logq > eps2)
            & (logq <= (mu2 - 1.0) * eps2 - mu2 * (np.log1p(1.0 / (mu1 - 1.0)) + np.log1p(1.0 / (mu2 - 1.0))))
        )
        log1q = log1mexp(logq)
        log_a = log1q - log1mexp((logq + eps2) * (1.0 - 1.0 / mu2))
        log_b = eps1 - logq / (mu1 - 1.0)
    return mu1, valid, log1q, log_a, log_b


def _theorem6_raw(logq, log1q, log_a, log_b, orders) -> np.ndarray:
    """Theorem 6 bound log((1−q)A^{α−1} + qB^{α−1})/(α−1), ``[b, K]``, without checking its conditions."""
    am1 = orders - 1.0
    x = np.multiply.outer(log_a, am1)
    x += log1q[:, None]
    y = np.multiply.outer(log_b, am1)
    y += logq[:, None]
    np.logaddexp(x, y, out=x)
    x /= am1
    return x


def _theorem6_block(logq, mu1, log1q, log_a, log_b, slope, orders) -> np.ndarray:
    """Theorem 6 bound, min'd with s·α where α < μ1, for a block of valid queries ``[b, K]``."""
    base = slope * orders
    dep = _theorem6_raw(logq, log1q, log_a, log_b, orders)
    np.minimum(dep, base, out=dep)
    np.maximum(dep, 0.0, out=dep)
    beyond = orders[None, :] >= mu1[:, None]
    dep[beyond] = np.broadcast_to(base, dep.shape)[beyond]
    return dep


def rdp_data_dependent(logq: Any, slope: float, orders: Any) -> np.ndarray:
    """Data-dependent RDP per query × order, Papernot et al. 2018 Theorem 6 + Proposition 10.

    For a mechanism whose data-independent RDP is s·α and an upper bound q on
    Pr[output ≠ most likely output], with μ2 = √(−log q / s), μ1 = μ2 + 1,
    ε_i = s·μ_i: where the conditions hold (see :func:`_theorem6_scalars`) and
    α < μ1, RDP(α) = min(s·α, log((1−q)A^{α−1} + qB^{α−1})/(α−1)) with
    A = (1−q)/(1 − (q e^{ε2})^{(μ2−1)/μ2}), B = e^{ε1}/q^{1/(μ1−1)};
    elsewhere s·α. q = 0 (log q = −inf) gives 0. Returns ``float[n_queries, n_orders]``.
    """
    logq = np.atleast_1d(np.asarray(logq, dtype=np.float64))
    if logq.ndim != 1 or np.any(np.isnan(logq)) or np.any(logq > 0):
        raise ValueError("logq: expected a 1-D array of log-probabilities (<= 0, no NaN)")
    slope = check_positive("slope", slope)
    orders = check_orders(orders, 1.0)
    out = np.broadcast_to(slope * orders, (len(logq), len(orders))).copy()
    out[np.isneginf(logq)] = 0.0
    mu1, valid, log1q, log_a, log_b = _theorem6_scalars(logq, slope)
    rows = np.flatnonzero(valid)
    for start in range(0, len(rows), _CHUNK_ROWS):
        r = rows[start : start + _CHUNK_ROWS]
        out[r] = _theorem6_block(logq[r], mu1[r], log1q[r], log_a[r], log_b[r], slope, orders)
    return out


def total_rdp_data_dependent(logq: Any, slope: float, orders: Any, weights: Any = None) -> np.ndarray:
    """Σ_queries w_i · RDP_i(α) of :func:`rdp_data_dependent`, without materialising [n_queries, n_orders].

    Queries where Theorem 6 does not apply contribute w_i · s·α in one step;
    the others are processed in blocks, only over the orders α < max μ1.
    """
    logq = np.atleast_1d(np.asarray(logq, dtype=np.float64))
    if logq.ndim != 1 or np.any(np.isnan(logq)) or np.any(logq > 0):
        raise ValueError("logq: expected a 1-D array of log-probabilities (<= 0, no NaN)")
    slope = check_positive("slope", slope)
    orders = check_orders(orders, 1.0)
    w = np.ones_like(logq) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != logq.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights: expected {logq.shape[0]} finite non-negative weights")
    base = slope * orders
    mu1, valid, log1q, log_a, log_b = _theorem6_scalars(logq, slope)
    nonzero = ~np.isneginf(logq)
    total = base * float(np.sum(w[nonzero & ~valid]))
    rows = np.flatnonzero(valid & (w > 0))
    rows = rows[np.argsort(mu1[rows], kind="stable")]  # blocks of similar μ1 need fewer orders
    for start in range(0, len(rows), _CHUNK_ROWS):
        r = rows[start : start + _CHUNK_ROWS]
        k = int(np.searchsorted(orders, mu1[r].max(), side="left"))
        total[k:] += base[k:] * float(np.sum(w[r]))
        if k:
            block = _theorem6_block(logq[r], mu1[r], log1q[r], log_a[r], log_b[r], slope, orders[:k])
            total[:k] += w[r] @ block
    return total


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


def rdp_pure_dp(logq: Any, epsilon: float, orders: Any, q_condition: str = "theorem") -> np.ndarray:
    """Data-dependent RDP of an ε-DP mechanism, ``[n_queries, n_orders]``.

    Papernot et al. 2017 Theorem 3 restated for RDP (the 2017 log-MGF at moment
    λ is λ × this at α = λ + 1): RDP(α) = min(αε²/2, ε, T(α)) with
    T(α) = log((1−q)((1−q)/(1−e^ε q))^{α−1} + q e^{ε(α−1)})/(α−1),
    the middle term used only where the condition holds:
    ``"theorem"``: q ≤ 1/(e^ε + 1) (= (e^{2γ}−1)/(e^{4γ}−1) for ε = 2γ);
    ``"reference_code"``: q < 0.5 (the 2017 code; dropped where e^ε q ≥ 1).
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    logq = np.atleast_1d(np.asarray(logq, dtype=np.float64))
    if logq.ndim != 1 or np.any(np.isnan(logq)) or np.any(logq > 0):
        raise ValueError("logq: expected a 1-D array of log-probabilities (<= 0, no NaN)")
    eps = check_positive("epsilon", epsilon)
    orders = check_orders(orders, 1.0)
    base = np.minimum(0.5 * eps * eps * orders, eps)
    out = np.broadcast_to(base, (len(logq), len(orders))).copy()
    out[np.isneginf(logq)] = 0.0
    if q_condition == "theorem":
        ok = logq <= -np.log1p(np.exp(eps))
    else:
        ok = (logq < np.log(0.5)) & (logq + eps < 0)
    ok &= np.isfinite(logq)
    rows = np.flatnonzero(ok)
    if rows.size:
        lq = logq[rows][:, None]
        am1 = orders[None, :] - 1.0
        log1q = log1mexp(lq)
        log_t = np.logaddexp(log1q + (log1q - log1mexp(eps + lq)) * am1, lq + eps * am1)
        out[rows] = np.maximum(np.minimum(base, log_t / am1), 0.0)
    return out


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
        counts = check_counts(votes)
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
        total = total_rdp_data_dependent(gnmax_logq(counts, sigma), slope, grid)
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
    with the LNMax q of :func:`lnmax_logq`.
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
        total = compose(rdp_pure_dp(lnmax_logq(counts, gamma, q_variant), eps, grid, q_condition))
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
    values = counts.max(axis=1) if check_values is None else np.asarray(check_values, dtype=np.float64)
    if values.shape != (n,):
        raise ValueError(f"check_values: expected shape ({n},), got {values.shape}")
    logpr = threshold_logpr(values, threshold, sigma1)
    step1 = total_rdp_data_dependent(_threshold_logq(values, threshold, sigma1), s1, grid)
    weights = step2_weights(
        cost, logpr, answered, rng, lambda gen: confident_check(values, threshold, sigma1, gen)
    )
    step2 = total_rdp_data_dependent(gnmax_logq(counts, sigma2), s2, grid, weights)
    return spent_from_curve(
        grid, step1 + step2, delta, conversion, accountant="rdp2018", mechanism="confident-gnmax", n_queries=n,
        data_dependent=True, cost=cost, expected_answered=float(weights.sum()), **params,
        **({"n_answered": int(weights.sum())} if cost == "realized" else {}),
    )
