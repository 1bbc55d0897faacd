"""Shared accounting machinery: order grids, RDP -> (ε, δ) conversion, the result type.

Every accountant in this package ends the same way: a per-order privacy curve
(Rényi-DP values summed over queries, or the 2017 log moment generating
function) is turned into an (ε, δ) guarantee by minimising a conversion
formula over the orders. This module holds that single conversion and
minimisation step, the order grids used by the source papers, and the frozen
:class:`PrivacySpent` result that all accountants return.

Conversions implemented (formulas from the papers, not from code):

* basic  (Mironov 2017, "Rényi differential privacy", Proposition 3):
  ε = min_α  RDP(α) + ln(1/δ)/(α − 1)
* improved (Canonne, Kamath & Steinke 2020, Proposition 12; Balle et al. 2020,
  Theorem 21; the one ``dp_accounting`` uses):
  ε = min_α  RDP(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1), clamped at 0
* moments (Abadi et al. 2016, Theorem 2; Papernot et al. 2017, §3; Visca 2021
  Eq. 4.9): ε = min_λ (α(λ) − ln δ)/λ for a log-MGF α(λ). This is exactly the
  basic conversion at RDP order λ + 1 with RDP = α(λ)/λ, and is computed that
  way here (so the moments accountant's Accounting has the basic conversion).

Every accountant takes its order grid and conversion in one
:class:`~pate_study.privacy.options.Accounting` (``accounting=``; default
:data:`~pate_study.privacy.options.DEFAULT_ACCOUNTING`, Papernot et al. 2018's grid and the basic conversion).

When the minimising order is the first or last order of the grid (or the grid
has a single order), the true optimum may lie outside it; an
:class:`OrderAtGridEdgeWarning` is issued, pointing at the user's call. Ties
at the minimum prefer an interior order (see :func:`select_order`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import warnings
from typing import Any, Callable

import numpy as np

from pate_study.privacy._boundary import check_moments_accounting, constrained
from pate_study.privacy._validation import check_orders
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting, Conversion

__all__ = [
    "OrderAtGridEdgeWarning",
    "PrivacySpent",
    "ExpectedCost",
    "EXPECTED_NOTE",
    "expected_cost",
    "CONVERSIONS",
    "paper2018_orders",
    "integer_orders",
    "parse_orders",
    "epsilon_curve",
    "select_order",
    "warn_grid_edge",
    "external_stacklevel",
    "resolve_rdp_orders",
    "resolve_moment_orders",
    "query_mode",
    "account",
    "with_optimum",
]

logger = logging.getLogger(__name__)

#: the choices of an Accounting's conversion (:class:`~pate_study.privacy.options.Conversion`, one place for them)
CONVERSIONS = tuple(c.value for c in Conversion)
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class OrderAtGridEdgeWarning(UserWarning):
    """The ε-minimising order is the first or the last order of the grid."""


def paper2018_orders() -> np.ndarray:
    """The order grid of the Papernot et al. 2018 scripts, made strictly increasing: 296 orders in [2, 500].

    2, 2.5, …, 100 (197 orders) plus 100 log-spaced orders in [100, 500] without
    the repeated 100. The scripts themselves use
    ``np.concatenate((np.arange(2, 100 + 1, .5), np.logspace(np.log10(100), np.log10(500), num=100)))``:
    298 entries, because ``arange`` runs to 100.5 and 100 appears twice (so that
    grid is not increasing: 100.5 comes before the second 100). This grid drops
    100.5 and the duplicate; the next order above 100 is 100·5^{1/99} ≈ 101.64.
    """
    return np.unique(np.concatenate([np.arange(2.0, 100.0 + 0.25, 0.5), np.geomspace(100.0, 500.0, 100)]))


def integer_orders(first: int, last: int) -> np.ndarray:
    """Integer orders ``first, first + 1, …, last`` as floats (e.g. the 2017 moments 1..8)."""
    if int(first) != first or int(last) != last or first < 1 or last < first:
        raise ValueError(f"orders: expected integers 1 <= first <= last, got {first}:{last}")
    return np.arange(int(first), int(last) + 1, dtype=np.float64)


def parse_orders(spec: Any) -> np.ndarray | str:
    """Parse an order specification.

    ``"int:A:B"`` → integers A..B; ``"paper2018"`` → :func:`paper2018_orders`;
    ``"continuous"`` is returned unchanged (only the 2017 moments accountant
    accepts it); an int ``L`` → 1..L; an array-like is returned as a float array.
    """
    if isinstance(spec, str):
        if spec == "continuous":
            return spec
        if spec == "paper2018":
            return paper2018_orders()
        if spec.startswith("int:"):
            parts = spec.split(":")
            if len(parts) != 3:
                raise ValueError(f"orders: expected 'int:A:B', got {spec!r}")
            try:
                a, b = int(parts[1]), int(parts[2])
            except ValueError:
                raise ValueError(f"orders: expected integers in 'int:A:B', got {spec!r}") from None
            return integer_orders(a, b)
        raise ValueError(f"orders: expected 'int:A:B', 'continuous', 'paper2018' or an array, got {spec!r}")
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        return integer_orders(1, int(spec))
    return np.atleast_1d(np.asarray(spec, dtype=np.float64))


@constrained(delta="delta", accounting="curve_accounting")
def epsilon_curve(orders: Any, rdp: Any, delta: float, *, accounting: Accounting = DEFAULT_ACCOUNTING) -> np.ndarray:
    """Per-order ε of an RDP curve at a given δ.

    ``orders`` are the curve's own (the axis of ``rdp``, each > 1), so ``accounting`` gives the conversion only:
    basic: Mironov 2017 Proposition 3, ε(α) = RDP(α) + ln(1/δ)/(α − 1).
    improved: Canonne–Kamath–Steinke 2020 Proposition 12 / Balle et al. 2020
    Theorem 21, ε(α) = RDP(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1), clamped at 0.
    """
    grid = check_orders(orders, 1.0)
    values = np.asarray(rdp, dtype=np.float64)
    if values.shape != grid.shape:
        raise ValueError(f"rdp: expected shape {grid.shape} (one value per order), got {values.shape}")
    return _epsilon_curve(grid, _nonnegative(values), delta, accounting.conversion)


def _nonnegative(rdp: np.ndarray) -> np.ndarray:
    """``rdp`` when every value is a non-negative number (no NaN); else a refusal naming ``rdp``."""
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("rdp: expected non-negative RDP values (no NaN)")
    return rdp


def _epsilon_curve(orders: np.ndarray, rdp: np.ndarray, delta: float, conversion: Conversion) -> np.ndarray:
    """:func:`epsilon_curve` on a checked grid, curve, δ and conversion."""
    log_delta = np.log(delta)
    if conversion is Conversion.BASIC:
        return rdp - log_delta / (orders - 1.0)
    eps = rdp + np.log1p(-1.0 / orders) - (log_delta + np.log(orders)) / (orders - 1.0)
    return np.maximum(eps, 0.0)


def select_order(orders: np.ndarray, curve: np.ndarray, warn: bool = True) -> tuple[float, float, int, bool]:
    """Minimise a per-order ε curve: return (ε, order, index, at_edge).

    Ties at the minimum (typically the improved conversion clamped at 0 on many
    orders) are broken towards the lowest *interior* order of the grid when one
    ties, else towards the lowest order: a plateau of equal ε that touches the
    first order is not a sign that a wider grid would help, and gives no warning.
    ``at_edge`` is True when the chosen order is the first or last order of the
    grid, which includes a grid of a single order; an
    :class:`OrderAtGridEdgeWarning` is then issued (unless ``warn`` is False).
    """
    curve = np.asarray(curve, dtype=np.float64)
    n = len(orders)
    ties = np.flatnonzero(curve == curve.min())
    interior = ties[(ties > 0) & (ties < n - 1)]
    idx = int(interior[0]) if interior.size else int(ties[0])
    at_edge = bool(n == 1 or idx in (0, n - 1))
    if at_edge and warn:
        warn_grid_edge(float(orders[idx]), float(orders[0]), float(orders[-1]))
    return float(curve[idx]), float(orders[idx]), idx, at_edge


def external_stacklevel() -> int:
    """``stacklevel`` that makes a warning issued by the calling function point at the first frame
    outside the ``pate_study.privacy`` package (the user's call of the public function).

    Call it from the function that calls :func:`warnings.warn`.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    return level


def warn_grid_edge(order: float, first: float, last: float) -> None:
    """Issue an :class:`OrderAtGridEdgeWarning` for a best order at the edge of [first, last].

    The warning points at the caller of the package's public function.
    """
    warnings.warn(
        f"the best order {order:g} is at the edge of the order range [{first:g}, {last:g}]; "
        "a wider range may give a smaller epsilon",
        OrderAtGridEdgeWarning,
        stacklevel=external_stacklevel(),
    )


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class _PerOrderResult:
    """The fields a guarantee (:class:`PrivacySpent`) and an expected cost (:class:`ExpectedCost`) share: the order
    grid, the composed per-order total, the curve minimised and what was accounted. Attributes as
    :class:`PrivacySpent`."""

    order: float
    delta: float
    orders: np.ndarray
    curve: np.ndarray
    rdp_or_logmgf: np.ndarray
    accountant: str
    conversion: str
    n_queries: int
    mechanism: str
    data_dependent: bool
    at_grid_edge: bool = False
    expected_answered: float | None = None
    details: dict = dataclasses.field(default_factory=dict)

    def at_order(self, order: float) -> tuple[float, float]:
        """Return (ε, composed RDP or log-MGF) at a given order of the grid (expected ε and expected RDP for an
        :class:`ExpectedCost`)."""
        hits = np.flatnonzero(np.isclose(self.orders, order, rtol=0, atol=1e-9))
        if hits.size == 0:
            raise ValueError(f"order: {order} is not in the order grid of this result")
        i = int(hits[0])
        return float(self.curve[i]), float(self.rdp_or_logmgf[i])


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class PrivacySpent(_PerOrderResult):
    """An (ε, δ) guarantee with the per-order curve it was minimised from.

    Attributes:
        epsilon: the guarantee, min over orders of ``curve``.
        order: the order attaining it (RDP order α, or moment λ for ``moments2017``).
        delta: the δ of the guarantee.
        orders: the order grid.
        curve: ε at each order after conversion.
        rdp_or_logmgf: the composed per-order total (RDP for ``rdp2018`` and
            ``multilabel2021``, log moment generating function for ``moments2017``).
        accountant: ``"moments2017"``, ``"rdp2018"`` or ``"multilabel2021"``.
        conversion: ``"basic"``, ``"improved"``, ``"moments"`` or ``"closed_form"``.
        n_queries: number of queries accounted.
        mechanism: e.g. ``"lnmax"``, ``"gnmax"``, ``"confident-gnmax"``, ``"gnthreshold"``.
        data_dependent: whether the bound used the vote counts.
        at_grid_edge: whether ``order`` is the first or last order of the grid.
        cost: for two-step mechanisms, ``"realized"`` or ``"all_answered"`` (data-independent: every query
            charged both steps); an expected cost is an :class:`ExpectedCost`, never a ``PrivacySpent``.
            ``"realized"`` is the cost of the transcript this run released: the check on every query, the answer
            only on the queries answered, composed adaptively (Papernot et al. 2018, §4). Read as an (ε, δ)
            guarantee fixed before the run, it is the budget of a Rényi privacy filter that stops the run when
            the realised total would pass it (Feldman & Zrnic 2021, "Individual Privacy Accounting via a Rényi
            Filter"); a bound that holds for every outcome whatever the budget is ``"all_answered"``.
        expected_answered: expected (or realised) number of answered queries.
        details: further parameters and notes (JSON-friendly).
    """

    epsilon: float
    cost: str | None = None

    def to_dict(self, include_curves: bool = False) -> dict:
        """JSON-friendly dict; per-order arrays only when ``include_curves``."""
        return _result_dict(self, {"epsilon": float(self.epsilon)}, include_curves)


def _result_dict(result: Any, head: dict, include_curves: bool) -> dict:
    """The JSON-friendly dict of a :class:`PrivacySpent` or an :class:`ExpectedCost`, ``head`` first."""
    out = {
        **head,
        "order": float(result.order),
        "delta": float(result.delta),
        "n_queries": int(result.n_queries),
        "accountant": result.accountant,
        "conversion": result.conversion,
        "mechanism": result.mechanism,
        "data_dependent": bool(result.data_dependent),
        "order_at_grid_edge": bool(result.at_grid_edge),
        "n_orders": int(len(result.orders)),
        "order_range": [float(result.orders[0]), float(result.orders[-1])],
    }
    if result.cost is not None:
        out["cost"] = result.cost
    if result.expected_answered is not None:
        out["expected_answered"] = float(result.expected_answered)
    out.update({k: _jsonable(v) for k, v in result.details.items()})
    if include_curves:
        out["orders"] = [float(x) for x in result.orders]
        out["curve"] = [float(x) for x in result.curve]
        out["rdp_or_logmgf"] = [float(x) for x in result.rdp_or_logmgf]
    return out


#: the label every expected cost carries.
EXPECTED_NOTE = "expected, not a guarantee"


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class ExpectedCost(_PerOrderResult):
    """An *expected* privacy cost: NOT an (ε, δ) guarantee for any run of the mechanism.

    Two-step (check, then answer) mechanisms charged with their second step weighted by Pr[answered]
    (Papernot et al. 2018, §4.2 tables; Dziedzic et al. 2023's code) give the average of a data-dependent cost
    over runs; a single run can cost more (e.g. confident Binary voting on one label, σ = 0.7, T = 5: expected
    RDP 2.213 at order 3 against an exact Rényi divergence of 3.896 between the two neighbouring inputs). It is
    therefore kept under ``expected_epsilon``, never under ``epsilon``: an :class:`ExpectedCost` has no
    ``epsilon`` attribute, so no code can print it as a guarantee by mistake. Attributes as :class:`PrivacySpent`.
    """

    expected_epsilon: float
    cost: str = "expected"
    note: str = EXPECTED_NOTE

    def to_dict(self, include_curves: bool = False) -> dict:
        """JSON-friendly dict: ``expected_epsilon`` and ``note`` in place of ``epsilon``."""
        return _result_dict(self, {"expected_epsilon": float(self.expected_epsilon), "note": self.note}, include_curves)

    @property
    def epsilon(self) -> float:
        raise AttributeError(
            "epsilon: an expected cost is not a guarantee; read expected_epsilon (labelled '"
            + EXPECTED_NOTE
            + "') or charge the run with cost='realized'"
        )


def expected_cost(spent: PrivacySpent) -> ExpectedCost:
    """``spent`` (computed with the second step weighted by Pr[answered]) relabelled as an :class:`ExpectedCost`."""
    if spent.cost != "expected":
        raise ValueError(f"spent: expected a result charged with cost='expected', got cost={spent.cost!r}")
    shared = {f.name: getattr(spent, f.name) for f in dataclasses.fields(_PerOrderResult)}
    return ExpectedCost(expected_epsilon=float(spent.epsilon), **shared)


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    return v


def resolve_rdp_orders(orders: Any) -> np.ndarray:
    """Parse an order spec (see :func:`parse_orders`) and require orders > 1."""
    parsed = parse_orders(orders)
    if isinstance(parsed, str):
        raise ValueError("orders: 'continuous' is only available for the 2017 moments accountant")
    return check_orders(parsed, 1.0)


def resolve_moment_orders(orders: Any) -> np.ndarray:
    """Parse an order spec (see :func:`parse_orders`) into a grid of moments λ > 0 (the 2017 moments accountant;
    ``"continuous"`` is its own search, not a grid)."""
    parsed = parse_orders(orders)
    if isinstance(parsed, str):
        raise ValueError("orders: expected a grid here, not 'continuous'")
    return check_orders(parsed, 0.0)


def query_mode(
    n_queries: Any, data: Any, check: Callable[[Any], np.ndarray], data_name: str = "votes"
) -> tuple[int, np.ndarray | None]:
    """Data-independent (``n_queries``) or data-dependent (``data``) accounting: exactly one must be given.

    Returns (number of queries, ``check(data)`` or None). ``n_queries`` is the accountant's, checked where the call
    entered the library (``n_queries="count"``, :mod:`~pate_study.privacy._boundary`).
    """
    if (n_queries is None) == (data is None):
        raise ValueError(
            f"n_queries/{data_name}: expected exactly one of n_queries (data-independent) or {data_name} "
            "(data-dependent)"
        )
    if data is not None:
        arr = check(data)
        return len(arr), arr
    return int(n_queries), None


@constrained(delta="delta", n_queries="count", accounting="accounting")
def account(
    total: Callable[[np.ndarray], np.ndarray] | Any,
    *,
    delta: float,
    accounting: Accounting = DEFAULT_ACCOUNTING,
    accountant: str,
    mechanism: str,
    n_queries: int,
    data_dependent: bool,
    warn: bool = True,
    **details: Any,
) -> PrivacySpent:
    """The one path from a composed per-order curve to a result, used by every accountant of the package.

    Resolves ``accounting``'s order grid (orders > 1 for the RDP accountants; moments λ > 0 for
    ``accountant="moments2017"``, whose curve is a 2017 log-MGF), evaluates ``total(grid)`` (the composed RDP or
    log-MGF at each order; an array is taken as is when the orders are already a grid), converts it with
    ``accounting``'s conversion (:func:`epsilon_curve`; the 2017 tail bound, conversion ``"moments"``, is the basic
    conversion at RDP order λ + 1 applied to RDP = log-MGF/λ, so the moments accountant takes ``"basic"`` only) and
    minimises it (:func:`select_order`, grid-edge warning included). ``details`` (parameters, ``cost``,
    ``expected_answered``, notes) are stored on the result.
    """
    moments = accountant == "moments2017"
    if moments:  # the same refusal as at the moments accountant's boundary, for a caller of account itself
        check_moments_accounting("accounting", accounting)
    grid = resolve_moment_orders(accounting.orders) if moments else resolve_rdp_orders(accounting.orders)
    total = np.asarray(total(grid) if callable(total) else total, dtype=np.float64)
    if total.shape != grid.shape:
        raise ValueError(f"total: expected one value per order {grid.shape}, got shape {total.shape}")
    if moments:  # the basic conversion at RDP order λ + 1 of RDP = log-MGF/λ
        curve = _epsilon_curve(grid + 1.0, _nonnegative(total / grid), delta, Conversion.BASIC)
    else:
        curve = _epsilon_curve(grid, _nonnegative(total), delta, accounting.conversion)
    eps, order, _, at_edge = select_order(grid, curve, warn=warn)
    cost = details.pop("cost", None)
    expected_answered = details.pop("expected_answered", None)
    logger.debug("%s %s: eps=%.6g at order %.6g (delta=%g)", accountant, mechanism, eps, order, delta)
    return PrivacySpent(
        epsilon=eps,
        order=order,
        delta=float(delta),
        orders=grid,
        curve=curve,
        rdp_or_logmgf=total,
        accountant=accountant,
        conversion="moments" if moments else accounting.conversion.value,
        n_queries=int(n_queries),
        mechanism=mechanism,
        data_dependent=data_dependent,
        at_grid_edge=at_edge,
        cost=cost,
        expected_answered=expected_answered,
        details=details,
    )


def with_optimum(spent: PrivacySpent, epsilon: float, order: float, conversion: str) -> PrivacySpent:
    """``spent`` with its optimum replaced by one found off the grid (e.g. a closed form or a 1-D minimiser).

    The grid-edge check of :func:`select_order` is applied to the new order (warning included):
    an order at (within 1e-9 relative of) the first or last order of the grid is at the edge.
    """
    grid = spent.orders
    at_edge = bool(order <= grid[0] * (1 + 1e-9) or order >= grid[-1] * (1 - 1e-9))
    if at_edge:
        warn_grid_edge(float(order), float(grid[0]), float(grid[-1]))
    return dataclasses.replace(
        spent, epsilon=float(epsilon), order=float(order), conversion=conversion, at_grid_edge=at_edge
    )
