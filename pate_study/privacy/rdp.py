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
  GNMax (s = 1/σ²) and the confident-GNMax threshold (s = 1/(2σ1²), q =
  min(Pr[answered], 1 − Pr[answered])); the data-dependent RDP of a pure ε-DP
  mechanism (Papernot et al. 2017, Theorem 3 restated for RDP; valid when
  q ≤ 1/(e^ε + 1)) for LNMax. Both, and their composed totals
  (:func:`total_rdp_data_dependent`, :func:`total_rdp_pure_dp`: blocks of about
  2¹⁶ values, deterministic sums), live in :mod:`~pate_study.privacy.rdp_curves`,
  shared with the multi-label modules, and are re-exported here.
* Accountants: :func:`gnmax_epsilon`, :func:`lnmax_rdp_epsilon`,
  :func:`confident_gnmax_epsilon` (charged "realized" by default: step 2 only
  on the queries actually answered, the guarantee of the run; or "expected":
  step 1 + Pr[answered] · step 2, as in the paper's Table 2, returned as an
  :class:`~pate_study.privacy.accounting.ExpectedCost`, not a guarantee). Each
  builds its composed curve and hands it to
  :func:`~pate_study.privacy.accounting.account`.

Pitfalls avoided (docs/reference-values.md §5): the q condition is checked, never
assumed; 1 − e^ε q ≤ 0 cannot produce NaN (the term is dropped); q is capped
so log q ≤ 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import as_generator, check_choice, check_counts, check_orders, warn_threshold_range
from pate_study.privacy.accounting import (
    ExpectedCost,
    PrivacySpent,
    account,
    expected_cost,
    query_mode,
    resolve_rdp_orders,
)
from pate_study.privacy.aggregators import confident_check
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting, Cost
from pate_study.privacy.rdp_curves import (
    Q_CONDITIONS,
    THEOREM6_VARIANTS,
    argmax_gaps,
    cap_logq,
    gaussian_tail_logsf,
    gnmax_logq_counts,
    log_mix,
    pure_dp_base,
    rdp_data_dependent,
    rdp_pure_dp,
    row_logsumexp,
    total_rdp_data_dependent,
    total_rdp_pure_dp,
)

__all__ = [
    "gnmax_logq",
    "lnmax_logq",
    "threshold_logpr",
    "threshold_logq",
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

Q_VARIANTS = ("sum", "approx")
#: the choices of ``cost=`` (:class:`~pate_study.privacy.options.Cost`, one place for them)
COSTS = tuple(c.value for c in Cost)
#: Kept for callers of the former private name (tests): the log-sum-exp of Theorem 6, ``rdp_curves.log_mix``.
_log_mix = log_mix


# ----------------------------------------------------------------- q bounds


@constrained(sigma="noise_scale")
def gnmax_logq(votes: Any, sigma: float) -> np.ndarray:
    """log q for GNMax, Papernot et al. 2018 Proposition 7 (union bound).

    log q = logsumexp_{j ≠ j*} log Φ̄((n* − n_j)/(√2 σ)), capped at log(1 − 1/m).
    Summed in linear space where that is exact to rounding, in log space on the
    rows where the sum would underflow (``rdp_curves.gnmax_logq_counts``). Returns ``float[n_queries]``.
    """
    return gnmax_logq_counts(check_counts(votes, keep_integers=True), sigma)


@constrained(gamma="positive")
def lnmax_logq(votes: Any, gamma: float, variant: str = "sum") -> np.ndarray:
    """log q for LNMax, Papernot et al. 2017 Lemma 4 (in log space).

    ``variant="sum"``: q = Σ_{j≠j*} (2 + γ(n* − n_j)) / (4 exp(γ(n* − n_j))).
    ``variant="approx"``: the cruder (m − 1) × the term of the runner-up (the
    smallest gap), as in the 2017 code's ``_approx`` function.
    Both are capped at 1 − 1/m. Returns ``float[n_queries]``.
    """
    counts = check_counts(votes, keep_integers=True)
    check_choice("variant", variant, Q_VARIANTS)
    return _lnmax_logq(counts, gamma, variant)


def _lnmax_logq(counts: np.ndarray, gamma: float, variant: str) -> np.ndarray:
    """:func:`lnmax_logq` on validated counts and parameters."""
    m = counts.shape[1]
    if m == 1:
        return np.full(len(counts), -np.inf)
    argmax, gaps = argmax_gaps(counts)
    g = gamma * gaps
    terms = np.log(2.0 + g) - np.log(4.0) - g
    terms[argmax] = -np.inf
    if variant == "sum":
        logq = row_logsumexp(terms)
    else:
        logq = np.log(m - 1.0) + np.max(terms, axis=1)
    return cap_logq(logq, np.log1p(-1.0 / m))


@constrained(threshold="threshold", sigma1="noise_scale")
def threshold_logpr(check_values: Any, threshold: float, sigma1: float, name: str = "check_values") -> np.ndarray:
    """log Pr[answered] of the confident-GNMax check: log Φ̄((T − v)/σ1) (Papernot et al. 2018, §4.2).

    ``check_values`` is max_c n_c (Algorithm 1) or max_c(n_c − |E| p_c) (Algorithm 2); ``name`` is what an
    error message calls them (the caller's own parameter, e.g. ``"votes"`` when they are the votes' maxima).
    """
    v = np.atleast_1d(np.asarray(check_values, dtype=np.float64))
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"{name}: expected a non-empty 1-D array of finite values")
    return gaussian_tail_logsf(float(threshold) - v, sigma1)


@constrained(threshold="threshold", sigma1="noise_scale")
def threshold_logq(check_values: Any, threshold: float, sigma1: float) -> np.ndarray:
    """log q of the threshold check: log min(Pr[answered], 1 − Pr[answered]) (Papernot et al. 2018, §4.2)."""
    logpr = threshold_logpr(check_values, threshold, sigma1)
    v = np.atleast_1d(np.asarray(check_values, dtype=np.float64))
    return np.minimum(logpr, gaussian_tail_logsf(v - float(threshold), sigma1))


# ------------------------------------------------------ data-independent RDP


# The curves below are evaluated at the orders they are given (each > 1): ``orders`` is the axis of the result,
# not an accounting setting.


@constrained(slope="positive")
def rdp_linear_data_independent(slope: float, orders: Any) -> np.ndarray:
    """RDP s·α of a Gaussian mechanism with s = Δ₂²/(2σ²) (Mironov 2017, Proposition 7), at ``orders``."""
    return slope * check_orders(orders, 1.0)


@constrained(sigma="noise_scale")
def rdp_gnmax_data_independent(sigma: float, orders: Any) -> np.ndarray:
    """GNMax data-independent RDP α/σ² (Papernot et al. 2018, Proposition 8; l2 sensitivity √2), at ``orders``."""
    return rdp_linear_data_independent(1.0 / sigma**2, orders)


@constrained(sigma1="noise_scale")
def rdp_threshold_data_independent(sigma1: float, orders: Any) -> np.ndarray:
    """Threshold-check data-independent RDP α/(2σ1²) (sensitivity 1; Papernot et al. 2018, §4.2), at ``orders``."""
    return rdp_linear_data_independent(0.5 / sigma1**2, orders)


@constrained(epsilon="positive")
def rdp_pure_dp_data_independent(epsilon: float, orders: Any) -> np.ndarray:
    """RDP of any ε-DP mechanism: min(αε²/2, ε) (Bun & Steinke 2016, Prop. 1.4; Mironov 2017, Prop. 3 remark), at
    ``orders``."""
    a = check_orders(orders, 1.0)
    return np.minimum(0.5 * epsilon * epsilon * a, epsilon)


@constrained(epsilon="positive")
def rdp_laplace_mechanism(epsilon: float, orders: Any) -> np.ndarray:
    """Exact RDP of the Laplace mechanism with Δ/b = ε (Mironov 2017, Proposition 6), at ``orders``.

    RDP(α) = 1/(α−1) · log( α/(2α−1) e^{(α−1)ε} + (α−1)/(2α−1) e^{−αε} ).
    """
    eps = epsilon
    a = check_orders(orders, 1.0)
    log_s = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * eps, np.log((a - 1) / (2 * a - 1)) - a * eps)
    return log_s / (a - 1)


# -------------------------------------------------------- data-dependent RDP


@constrained(sigma="noise_scale")
def rdp_gnmax(votes: Any, sigma: float, orders: Any) -> np.ndarray:
    """Per-query data-dependent GNMax RDP ``[n_queries, n_orders]`` (Theorem 6 with Proposition 7's q), evaluated at
    ``orders`` (the axis of the result)."""
    return rdp_data_dependent(gnmax_logq(votes, sigma), 1.0 / sigma**2, orders)


@constrained(threshold="threshold", sigma1="noise_scale")
def rdp_threshold(check_values: Any, threshold: float, sigma1: float, orders: Any) -> np.ndarray:
    """Per-query data-dependent RDP of the threshold check (Papernot et al. 2018, §4.2 + Theorem 6), evaluated at
    ``orders`` (the axis of the result).

    Theorem 6 with s = 1/(2σ1²) (σ → √2 σ1) and q = min(Pr[answered], 1 − Pr[answered]).
    """
    return rdp_data_dependent(threshold_logq(check_values, threshold, sigma1), 0.5 / sigma1**2, orders)


def compose(per_query: Any, weights: Any = None) -> np.ndarray:
    """RDP composition: sum per-query curves ``[n_queries, n_orders]`` order by order (Mironov 2017, Prop. 1).

    ``weights`` (``[n_queries]``) gives an expected cost Σ w_i RDP_i(α).
    Summed row after row (``np.add.reduce`` along axis 0 of a C-contiguous copy), so the
    result does not depend on memory layout or BLAS threads.
    """
    arr = np.ascontiguousarray(np.asarray(per_query, dtype=np.float64))
    if arr.ndim == 1:
        arr = arr[None, :]
    if weights is None:
        return np.add.reduce(arr, axis=0)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (arr.shape[0],):
        raise ValueError(f"weights: expected shape ({arr.shape[0]},), got {w.shape}")
    return np.add.reduce(arr * w[:, None], axis=0)


# ------------------------------------------------------------- accountants


def step2_weights(cost: str, logpr: np.ndarray, answered: Any, rng: Any, draw_check) -> np.ndarray:
    """Per-query (or per-label, for any shape of ``logpr``) weights of the second step of a two-step
    (check, then answer) mechanism.

    ``cost="expected"``: Pr[answered] = exp(logpr) (Papernot et al. 2018, §4.2
    tables). ``cost="realized"``: the answered mask, given or drawn by
    ``draw_check(generator)`` from ``rng`` (the same draw the aggregator makes).
    """
    check_choice("cost", cost, COSTS)
    if cost == "expected":
        if answered is not None:
            raise ValueError("answered: only used with cost='realized'")
        return np.exp(logpr)
    if answered is None:
        if rng is None:
            raise ValueError(
                "rng: cost='realized' (the guarantee of one run) needs the run's answered mask or the "
                "seed of its check noise; cost='expected' gives an expected cost, not a guarantee"
            )
        answered = draw_check(as_generator(rng))
    answered = np.asarray(answered)
    if answered.shape != np.shape(logpr) or answered.dtype != bool:
        raise ValueError(f"answered: expected a boolean mask of shape {np.shape(logpr)} (one entry per check)")
    return answered.astype(np.float64)


@constrained(sigma="noise_scale", delta="delta", n_queries="count", accounting="accounting")
def gnmax_epsilon(
    *,
    sigma: float,
    delta: float,
    n_queries: int | None = None,
    votes: Any = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """(ε, δ) of GNMax answering every query (Papernot et al. 2018, Prop. 8 / Theorem 6; RDP composition).

    Give ``n_queries`` for the data-independent bound (α/σ² per query) or
    ``votes`` (``int[n_queries, n_classes]``) for the data-dependent one; ``accounting``: the order grid and the
    conversion.
    """
    n, counts = query_mode(n_queries, votes, lambda v: check_counts(v, keep_integers=True))
    slope = 1.0 / sigma**2

    def total(grid: np.ndarray) -> np.ndarray:
        if counts is None:
            return n * slope * grid
        return total_rdp_data_dependent(gnmax_logq_counts(counts, sigma), slope, grid)

    return account(
        total,
        delta=delta,
        accounting=accounting,
        accountant="rdp2018",
        mechanism="gnmax",
        n_queries=n,
        data_dependent=counts is not None,
        sigma=sigma,
    )


@constrained(gamma="positive", delta="delta", n_queries="count", accounting="accounting")
def lnmax_rdp_epsilon(
    *,
    gamma: float,
    delta: float,
    n_queries: int | None = None,
    votes: Any = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
    q_condition: str = "theorem",
    q_variant: str = "sum",
) -> PrivacySpent:
    """(ε, δ) of LNMax in the RDP framework (Papernot et al. 2018 §3: pure ε = 2γ per query).

    Data-independent: min(αε²/2, ε) per query; data-dependent: :func:`rdp_pure_dp`
    with the LNMax q of :func:`lnmax_logq`, summed block-wise by :func:`total_rdp_pure_dp`.
    ``accounting``: the order grid and the conversion.
    """
    n, counts = query_mode(n_queries, votes, lambda v: check_counts(v, keep_integers=True))
    eps = 2.0 * gamma
    if counts is not None:
        check_choice("q_variant", q_variant, Q_VARIANTS)
        check_choice("q_condition", q_condition, Q_CONDITIONS)

    def total(grid: np.ndarray) -> np.ndarray:
        if counts is None:
            return n * pure_dp_base(eps, grid)
        return total_rdp_pure_dp(_lnmax_logq(counts, gamma, q_variant), eps, grid, q_condition)

    return account(
        total,
        delta=delta,
        accounting=accounting,
        accountant="rdp2018",
        mechanism="lnmax",
        n_queries=n,
        data_dependent=counts is not None,
        gamma=gamma,
        **({"q_condition": q_condition, "q_variant": q_variant} if counts is not None else {}),
    )


@constrained(
    threshold="threshold",
    sigma1="noise_scale",
    sigma2="noise_scale",
    delta="delta",
    n_queries="count",
    accounting="accounting",
)
def confident_gnmax_epsilon(
    *,
    threshold: float,
    sigma1: float,
    sigma2: float,
    delta: float,
    n_queries: int | None = None,
    votes: Any = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
    cost: str | None = None,
    answered: Any = None,
    rng: Any = None,
    check_values: Any = None,
) -> PrivacySpent | ExpectedCost:
    """(ε, δ) of confident GNMax (Papernot et al. 2018, Algorithm 1, §4.2; Theorem 6).

    Data-dependent (``votes``), per query: the threshold step (Theorem 6 with
    σ → √2σ1, q = min(Pr[answered], 1 − Pr[answered])) plus the GNMax step
    (Theorem 6 with σ2), charged

    * ``cost="realized"`` (the default with ``votes``: the (ε, δ) guarantee of the run): step 2 only on the
      queries answered, from ``answered`` (a boolean mask, e.g. ``Aggregation.answered``) or, if not given,
      from running the check with ``rng`` exactly as :func:`aggregators.confident_gnmax` does; one of the
      two is needed. ``expected_answered`` (and ``details["n_answered"]``) is then the number answered;
    * ``cost="expected"``: step 1 + Pr[answered] · step 2, the average of the data-dependent cost over runs
      of the check. This is what Papernot et al. 2018 print in Table 2 (their ``smooth_sensitivity_table.py``
      weights step 2 by the data-dependent Pr[answered]): an expected cost, not a guarantee for any run, so
      it is returned as an :class:`~pate_study.privacy.accounting.ExpectedCost` (``expected_epsilon``,
      ``note``; no ``epsilon``); ``expected_answered`` = Σ Pr[answered].

    Data-independent (``n_queries``): every query charged both steps,
    α/(2σ1²) + α/σ2² (``cost="all_answered"``). ``check_values`` overrides
    max_c n_c for the check (interactive GNMax: max_c(n_c − |E| p_c)). ``accounting``: the order grid and the
    conversion.
    """
    n, counts = query_mode(n_queries, votes, lambda v: check_counts(v, keep_integers=True))
    warn_threshold_range(
        "threshold",
        threshold,
        0.0,
        float(counts[0].sum()) if counts is not None else np.inf,
        "max_c n_c, the largest vote count of a query",
    )
    s1, s2 = 0.5 / sigma1**2, 1.0 / sigma2**2
    common = {
        "delta": delta,
        "accounting": accounting,
        "accountant": "rdp2018",
        "mechanism": "confident-gnmax",
        "n_queries": n,
        "threshold": threshold,
        "sigma1": sigma1,
        "sigma2": sigma2,
    }
    if counts is None:
        if cost is not None or answered is not None:
            raise ValueError(
                "cost: expected/realized costs need votes; with n_queries every query is charged both steps"
            )
        return account(
            lambda grid: n * (s1 + s2) * grid,
            data_dependent=False,
            cost="all_answered",
            expected_answered=float(n),
            **common,
        )
    cost = "realized" if cost is None else check_choice("cost", cost, COSTS)
    values = np.asarray(counts.max(axis=1) if check_values is None else check_values, dtype=np.float64)
    if values.shape != (n,):
        raise ValueError(f"check_values: expected shape ({n},), got {values.shape}")
    logpr = threshold_logpr(values, threshold, sigma1)
    weights = step2_weights(cost, logpr, answered, rng, lambda gen: confident_check(values, threshold, sigma1, gen))

    def total(grid: np.ndarray) -> np.ndarray:
        step1 = total_rdp_data_dependent(threshold_logq(values, threshold, sigma1), s1, grid)
        return step1 + total_rdp_data_dependent(gnmax_logq_counts(counts, sigma2), s2, grid, weights)

    spent = account(
        total,
        data_dependent=True,
        cost=cost,
        expected_answered=math.fsum(weights.tolist()),
        **({"n_answered": int(weights.sum())} if cost == "realized" else {}),
        **common,
    )
    return expected_cost(spent) if cost == "expected" else spent
