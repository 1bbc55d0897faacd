"""Papernot et al. 2017 moments accountant for Laplace noisy max (LNMax).

For a student: PATE's first paper ("Semi-supervised knowledge transfer for deep
learning from private training data", ICLR 2017) tracks the log moment
generating function α(λ) of the privacy loss (Abadi et al. 2016). Per query
and moment λ:

* data-independent (Theorem 2 / Visca 2021 Eq. 4.10): α(λ) ≤ 2γ²λ(λ+1);
* data-dependent (Theorem 3, with q from Lemma 4): α(λ) ≤
  log((1−q)((1−q)/(1−e^{2γ}q))^λ + q e^{2γλ}) when q < (e^{2γ}−1)/(e^{4γ}−1),
  and always ≤ 2γλ (the pure (2γ, 0)-DP bound). The per-query bound is the
  minimum of the three, as in the reference code.

The moments of T queries add up, and ε = min_λ (Σα(λ) − ln δ)/λ (Visca 2021
Eq. 4.9). Orders are either the reference code's integers λ = 1..L (L = 8) or
continuous λ. For the data-independent bound the continuous optimum has a
closed form (Visca 2021 §4.2.1): λ* = √(ln(1/δ)/(2Tγ²)),
ε* = 2Tγ² + 2√(2Tγ² ln(1/δ)). For the data-dependent bound "continuous" means
a fine log-spaced grid of λ followed by scipy's bounded scalar minimisation
between the grid neighbours of the best grid point.

The thesis's "ε_dep > ε_ind" (Visca 2021, Table 4.1) compares an integer-λ
data-dependent bound with a continuous-λ data-independent one: on the same
grid data-dependent ≤ data-independent always holds (Visca 2021 Table 4.1's median 20.41 is the
data-independent bound at the integer λ = 2, 20.4078, above the continuous-λ ε*_ind = 20.2696).

The data-dependent log-MGF at moment λ equals λ × the RDP of
``rdp.rdp_pure_dp`` at order λ + 1 with ε = 2γ; it is computed that way, so the
2017 and 2018 analyses share one implementation. The accountant sums it over
queries with ``rdp.total_rdp_pure_dp`` (blocks, never [queries × orders] at once,
which matters for ``orders="continuous"``: 1200 orders) and computes log q once.

Its orders and conversion come, as every accountant's, in an :class:`~pate_study.privacy.options.Accounting`:
:data:`MOMENTS_ACCOUNTING` by default, the reference code's λ = 1..8 and the 2017 tail bound
ε = min_λ (Σα(λ) − ln δ)/λ. That bound is the basic conversion (Mironov 2017, Prop. 3) at RDP order λ + 1 of
Σα(λ)/λ, so the accountant takes ``Conversion.BASIC`` and refuses ``"improved"`` (an RDP accountant,
:func:`~pate_study.privacy.rdp.lnmax_rdp_epsilon`, converts LNMax's curve with it).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import check_choice, check_counts, check_positive
from pate_study.privacy.accounting import (
    OrderAtGridEdgeWarning,
    PrivacySpent,
    account,
    parse_orders,
    query_mode,
    resolve_moment_orders,
    with_optimum,
)
from pate_study.privacy.options import Accounting, Conversion
from pate_study.privacy.rdp import Q_VARIANTS, lnmax_logq
from pate_study.privacy.rdp_curves import Q_CONDITIONS, rdp_pure_dp, total_rdp_pure_dp

__all__ = [
    "lnmax_q",
    "theorem3_q_limit",
    "logmgf_data_independent",
    "logmgf_lnmax",
    "moments_closed_form",
    "moments_epsilon",
    "DEFAULT_MOMENTS",
    "MOMENTS_ACCOUNTING",
    "CONTINUOUS_RANGE",
]

#: Largest integer moment of the 2017 reference code.
DEFAULT_MOMENTS = 8
#: The moments accountant's orders and conversion: λ = 1..8 and the 2017 tail bound, i.e. the basic conversion at
#: order λ + 1 (module docstring); ``Accounting(orders="continuous")`` searches λ on :data:`CONTINUOUS_RANGE`.
MOMENTS_ACCOUNTING = Accounting(orders=DEFAULT_MOMENTS, conversion=Conversion.BASIC)
#: λ range searched by ``orders="continuous"`` in the data-dependent case.
CONTINUOUS_RANGE = (1e-3, 1e4)
_CONTINUOUS_POINTS = 1200


@constrained(gamma="positive")
def lnmax_q(votes: Any, gamma: float, variant: str = "sum") -> np.ndarray:
    """q ≥ Pr[LNMax ≠ plurality] per query, Papernot et al. 2017 Lemma 4 (see ``rdp.lnmax_logq``)."""
    return np.exp(lnmax_logq(votes, gamma, variant))


@constrained(gamma="positive")
def theorem3_q_limit(gamma: float) -> float:
    """Condition of Papernot et al. 2017 Theorem 3: q < (e^{2γ}−1)/(e^{4γ}−1) = 1/(e^{2γ}+1)."""
    return float(1.0 / (np.exp(2.0 * gamma) + 1.0))


def _logmgf_data_independent(gamma: float, lam: np.ndarray) -> np.ndarray:
    """2γ²λ(λ+1) at the moments ``lam`` (checked)."""
    return 2.0 * gamma**2 * lam * (lam + 1.0)


@constrained(gamma="positive")
def logmgf_data_independent(gamma: float, orders: Any = DEFAULT_MOMENTS) -> np.ndarray:
    """Per-query data-independent log-MGF 2γ²λ(λ+1) (Papernot et al. 2017 Theorem 2; Visca 2021 Eq. 4.10) at the
    moments ``orders`` (the axis of the result: an int L for 1..L, ``"int:A:B"`` or an array of λ > 0)."""
    return _logmgf_data_independent(gamma, resolve_moment_orders(orders))


@constrained(gamma="positive")
def logmgf_lnmax(
    votes: Any,
    gamma: float,
    orders: Any = DEFAULT_MOMENTS,
    q_condition: str = "theorem",
    q_variant: str = "sum",
) -> np.ndarray:
    """Per-query data-dependent log-MGF ``[n_queries, n_orders]`` (Papernot et al. 2017 Theorem 3 + Lemma 4).

    min{2γ²λ(λ+1), log((1−q)((1−q)/(1−e^{2γ}q))^λ + q e^{2γλ}), 2γλ}, the
    middle term only where ``q_condition`` holds: ``"theorem"`` (q <
    (e^{2γ}−1)/(e^{4γ}−1)) or ``"reference_code"`` (q < 0.5, the 2017 code).
    ``q_variant`` is ``"sum"`` (Lemma 4) or ``"approx"`` ((m−1) × runner-up term).
    ``orders``: the moments λ it is evaluated at, the axis of the result (an int L for 1..L, ``"int:A:B"`` or an
    array of λ > 0), not an accounting setting.
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    check_choice("q_variant", q_variant, Q_VARIANTS)
    lam = resolve_moment_orders(orders)
    logq = lnmax_logq(votes, gamma, q_variant)
    return lam * rdp_pure_dp(logq, 2.0 * gamma, lam + 1.0, q_condition)


@constrained(n_queries="count", gamma="positive", delta="delta")
def moments_closed_form(n_queries: int, gamma: float, delta: float) -> tuple[float, float]:
    """Continuous-λ optimum of the data-independent bound (Visca 2021 §4.2.1, Eq. 4.11).

    Returns (ε*, λ*) with λ* = √(ln(1/δ)/(2Tγ²)), ε* = 2Tγ² + 2√(2Tγ² ln(1/δ)).
    """
    a = 2.0 * n_queries * gamma**2
    log_inv_delta = -np.log(delta)
    return float(a + 2.0 * np.sqrt(a * log_inv_delta)), float(np.sqrt(log_inv_delta / a))


def _continuous_refine(total_fn, grid: np.ndarray, curve: np.ndarray, delta: float) -> tuple[float, float]:
    """Bounded minimisation of (Σα(λ) − ln δ)/λ between the grid neighbours of the best grid point."""
    from scipy.optimize import minimize_scalar  # imported on first use (fast CLI start)

    i = int(np.argmin(curve))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]

    def f(lam: float) -> float:
        return float((total_fn(np.array([lam]))[0] - np.log(delta)) / lam)

    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10 * max(1.0, hi)})
    if res.fun <= curve[i]:
        return float(res.fun), float(res.x)
    return float(curve[i]), float(grid[i])


@constrained(gamma="positive", delta="delta", n_queries="count", accounting="moments_accounting")
def moments_epsilon(
    *,
    gamma: float,
    delta: float,
    n_queries: int | None = None,
    votes: Any = None,
    accounting: Accounting = MOMENTS_ACCOUNTING,
    q_condition: str = "theorem",
    q_variant: str = "sum",
    continuous_range: tuple[float, float] = CONTINUOUS_RANGE,
) -> PrivacySpent:
    """(ε, δ) of T LNMax queries with the Papernot et al. 2017 moments accountant.

    Give ``n_queries`` (data-independent, Σ = T·2γ²λ(λ+1)) or ``votes``
    (data-dependent, Σ of :func:`logmgf_lnmax`). ``accounting``: :data:`MOMENTS_ACCOUNTING` (λ = 1..8 as in the
    reference code) or an Accounting with other moments: an int L (λ = 1..L), ``"int:A:B"``, an array of λ > 0, or
    ``"continuous"`` (closed form for the data-independent case; fine grid on ``continuous_range`` + bounded
    minimisation for the data-dependent case), and the basic conversion (module docstring).
    ε = min_λ (Σα(λ) − ln δ)/λ (Visca 2021 Eq. 4.9 / 4.11 / 4.13).
    """
    check_choice("q_condition", q_condition, Q_CONDITIONS)
    check_choice("q_variant", q_variant, Q_VARIANTS)
    n, counts = query_mode(n_queries, votes, lambda v: check_counts(v, keep_integers=True))
    continuous = isinstance(parse_orders(accounting.orders), str)
    details: dict = {"gamma": gamma, "orders_spec": "continuous" if continuous else "grid"}
    if counts is not None:
        details.update(q_condition=q_condition, q_variant=q_variant)

    logq = None if counts is None else lnmax_logq(counts, gamma, q_variant)  # once, not per λ

    def total_fn(lam: np.ndarray) -> np.ndarray:
        # Σ over queries of logmgf_lnmax, summed block-wise (never [n_queries, n_orders] at once).
        if logq is None:
            return n * _logmgf_data_independent(gamma, lam)
        return lam * total_rdp_pure_dp(logq, 2.0 * gamma, lam + 1.0, q_condition)

    common = {
        "accountant": "moments2017",
        "mechanism": "lnmax",
        "n_queries": n,
        "data_dependent": counts is not None,
        **details,
    }
    if not continuous:
        return account(total_fn, delta=delta, accounting=accounting, **common)

    lo, hi = (check_positive("continuous_range", v) for v in continuous_range)
    if not lo < hi:
        raise ValueError(f"continuous_range: expected (low, high) with low < high, got {continuous_range}")
    grid = np.geomspace(lo, hi, _CONTINUOUS_POINTS)
    if counts is None:
        eps_star, lam_star = moments_closed_form(n, gamma, delta)
        grid = np.unique(np.append(grid, lam_star))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        spent = account(total_fn, delta=delta, accounting=Accounting(grid, Conversion.BASIC), **common)
    if counts is None:
        return with_optimum(spent, eps_star, lam_star, "closed_form")
    eps, lam = _continuous_refine(total_fn, grid, spent.curve, delta)
    return with_optimum(spent, eps, lam, "moments")
