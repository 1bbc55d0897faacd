"""Option objects for the keyword tails the multi-label accountants share, and the enumerations of their choices.

The confident mechanisms of :mod:`~pate_study.privacy.topk_vote` and :mod:`~pate_study.privacy.multiwinner` (and
the GNThreshold family of :mod:`~pate_study.privacy.multilabel`) take the same groups of parameters:

* :class:`ConfidenceCheck`: the noisy check that decides whether a query (or a label) is answered at all:
  its threshold th_c, its Gaussian noise σ_c and, for checks on several vote fractions, the rule and the number
  of top values compared (Papernot et al. 2018, Algorithm 1; Muschiol 2021, Definition 12). Passing one selects
  the confident variant; passing none, the plain one: one object instead of a pair of keywords that must be
  given together or not at all.
* :class:`Charge`: how the answering step of a two-step mechanism is charged: ``Cost.REALIZED`` (the guarantee
  of a run: the queries ``answered``, or a run of the check re-drawn from ``rng``) or ``Cost.EXPECTED`` (weighted
  by Pr[answered]: an expected cost, not a guarantee).
* :class:`Accounting`: the grid of orders and the RDP -> (ε, δ) conversion (basic, Mironov 2017 Prop. 3;
  improved, Canonne, Kamath & Steinke 2020 Prop. 12) that :func:`~pate_study.privacy.accounting.account` uses:
  the one way every accountant takes them (``accounting=``, default :data:`DEFAULT_ACCOUNTING`).

Each object is a small frozen dataclass that checks its fields when it is built, against the one table of ranges
:data:`~pate_study.privacy._validation.PARAMETER_CONSTRAINTS` that the command line reads too, so a bad value is
refused where it is written, with a one-line message naming the field. None can be changed through the object once
built (an array of orders is kept as a tuple of floats), so one instance serves as a default value.

The enumerations are :class:`enum.StrEnum`: each member equals its string (``QBound.UNION == "union"``), so the
strings the accountants accepted before still work, and a misspelt choice is refused naming the parameter.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np

from pate_study.privacy._validation import PARAMETER_KINDS, check_parameter

__all__ = [
    "Accounting",
    "Bound",
    "Charge",
    "ConfidenceCheck",
    "ConfidenceRule",
    "Conversion",
    "Cost",
    "NoiseConvention",
    "QBound",
    "TauComposition",
    "Threshold",
    "DEFAULT_ACCOUNTING",
    "choice",
]


class Conversion(enum.StrEnum):
    """RDP -> (ε, δ): ``BASIC`` (Mironov 2017, Prop. 3) or ``IMPROVED`` (Canonne, Kamath & Steinke 2020, Prop. 12;
    Balle et al. 2020, Theorem 21)."""

    BASIC = "basic"
    IMPROVED = "improved"


class Cost(enum.StrEnum):
    """How a two-step mechanism's second step is charged: ``REALIZED`` (only where a run answered: the guarantee
    of that run) or ``EXPECTED`` (weighted by Pr[answered], Papernot et al. 2018 Table 2: not a guarantee)."""

    EXPECTED = "expected"
    REALIZED = "realized"


class ConfidenceRule(enum.StrEnum):
    """A multi-label confidence check (Muschiol 2021, Definition 12): ``MAX`` compares the largest vote fraction
    with th_c, ``PRINTED`` each of the top-n values m_(j) − th (the definition as printed)."""

    MAX = "max"
    PRINTED = "printed"


class Threshold(enum.StrEnum):
    """A GNThreshold release threshold that is not a number: ``ADAPTIVE``, computed from the query's own vote
    fractions (Muschiol 2021, Definition 11), so charged by its own sensitivity (a number, or one per query, is a
    fixed threshold)."""

    ADAPTIVE = "adaptive"


class Bound(enum.StrEnum):
    """Which data-independent bound caps GNThreshold's data-dependent one (Muschiol 2021): ``THEOREM12``
    (nλ/(2σ²)), ``VOTE_FRACTION`` (per-label sensitivity 1/T of vote fractions: nλ/(2T²σ²)), ``EQ4_8`` (the λ/σ²
    of Eq. 4.8 as printed), ``EQ4_8_CORRECTED`` (Eq. 4.8 with its typos corrected) and ``GNMAX_SLOPE`` (the
    multi-class GNMax slope λ/σ²; Papernot et al. 2018)."""

    THEOREM12 = "theorem12"
    VOTE_FRACTION = "vote_fraction"
    EQ4_8 = "eq4_8"
    EQ4_8_CORRECTED = "eq4_8_corrected"
    GNMAX_SLOPE = "gnmax_slope"


class QBound(enum.StrEnum):
    """τ voting's q (Dziedzic et al. 2023): the ``UNION`` bound over labels, or the ``EXACT`` 1 − Π_i (1 − Φ̄_i)."""

    UNION = "union"
    EXACT = "exact"


class TauComposition(enum.StrEnum):
    """τ voting's data-dependent bound: one Theorem 6 bound per query (``JOINT``, the paper's analysis) or one per
    label, summed (``PER_LABEL``; Mironov 2017 Prop. 1, the labels' noises being independent)."""

    JOINT = "joint"
    PER_LABEL = "per_label"


class NoiseConvention(enum.StrEnum):
    """Where σ is added to a binary vote count: on the sum S_i (``SUM``) or on each of the two counts (T − S_i, S_i)
    of a 2-class argmax (``TWO_COUNTS``, the Dziedzic et al. 2023 / Papernot et al. 2018 pipeline)."""

    SUM = "sum"
    TWO_COUNTS = "two_counts"


def choice(name: str, value: Any, kind: type[enum.StrEnum]) -> enum.StrEnum:
    """``value`` (a member of ``kind`` or its string) as the member; a ValueError naming ``name`` and the choices."""
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{name}: expected one of {[m.value for m in kind]}, got {value!r}") from None


@dataclasses.dataclass(frozen=True)
class ConfidenceCheck:
    """The noisy confidence check of a confident mechanism: answer only where the checked vote statistic plus
    N(0, σ²) reaches ``threshold`` (Papernot et al. 2018, Algorithm 1; Muschiol 2021, Definition 12).

    ``threshold``: th_c, in the same units as the statistic checked (vote counts for Binary voting, vote fractions
    for top-k votes), fixed before seeing the votes; ``sigma``: the check's noise σ_c (σ1 of Algorithm 1);
    ``rule`` and ``top_n``: which vote fractions a multi-label check compares (:class:`ConfidenceRule`; ``top_n``
    is read by the ``PRINTED`` rule only). Checked when built: the threshold and σ against
    :data:`~pate_study.privacy._validation.PARAMETER_CONSTRAINTS`, ``top_n`` a positive integer.
    """

    threshold: float
    sigma: float
    rule: ConfidenceRule = ConfidenceRule.MAX
    top_n: int = 4

    def __post_init__(self) -> None:
        kinds = PARAMETER_KINDS
        threshold = check_parameter("check.threshold", self.threshold, kinds["confidence_threshold"])
        object.__setattr__(self, "threshold", threshold)
        object.__setattr__(self, "sigma", check_parameter("check.sigma", self.sigma, kinds["sigma_confidence"]))
        object.__setattr__(self, "rule", choice("check.rule", self.rule, ConfidenceRule))
        if isinstance(self.top_n, bool):
            raise ValueError(f"check.top_n: expected an integer >= 1 (top labels compared), got {self.top_n!r}")
        object.__setattr__(self, "top_n", check_parameter("check.top_n", self.top_n, kinds["top_n"]))

    def as_params(self) -> dict[str, Any]:
        """The check's parameters as the accountants record them (``confidence_threshold``, ``sigma_confidence``,
        ``rule``, ``top_n``), plain strings and numbers."""
        return {
            "confidence_threshold": self.threshold,
            "sigma_confidence": self.sigma,
            "rule": self.rule.value,
            "top_n": self.top_n,
        }


@dataclasses.dataclass(frozen=True, eq=False)
class Charge:
    """How the answering step of a two-step (check, then answer) mechanism is charged.

    ``cost``: :class:`Cost` (``REALIZED`` by default, the guarantee of a run); with ``REALIZED``, ``answered`` (a
    boolean array of what the run answered) or ``rng`` (a seed or Generator: the check re-drawn exactly as the
    release draws it); ``EXPECTED`` uses neither (an expected cost, not a guarantee).
    """

    cost: Cost = Cost.REALIZED
    answered: Any = None
    rng: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "cost", choice("charge.cost", self.cost, Cost))


def confidence_check_of(check: Any) -> ConfidenceCheck:
    """``check`` when it is a :class:`ConfidenceCheck`, else a one-line refusal naming ``check``."""
    if not isinstance(check, ConfidenceCheck):
        raise ValueError(
            f"check: expected a ConfidenceCheck(threshold, sigma, rule, top_n) (pate_study.privacy.options), "
            f"got {type(check).__name__}"
        )
    return check


def charge_of(charge: Any) -> Charge:
    """``charge`` when it is a :class:`Charge`, else a one-line refusal naming ``charge``."""
    if not isinstance(charge, Charge):
        raise ValueError(f"charge: expected a Charge(cost, answered, rng), got {type(charge).__name__}")
    return charge


@dataclasses.dataclass(frozen=True)
class Accounting:
    """The order grid and the conversion an accountant uses (:func:`~pate_study.privacy.accounting.account`).

    ``orders``: a named grid (``"paper2018"``, ``"int:A:B"``; ``"continuous"`` for the moments accountant only), an
    int L (the orders 1..L, the moments accountant's λ) or an increasing array of Rényi orders, checked by the
    accountant, which knows its order's lower end; an array is kept as a tuple of floats (the same doubles), so
    the object cannot be changed through an array it was given. ``conversion``: :class:`Conversion`.
    """

    orders: Any = "paper2018"
    conversion: Conversion = Conversion.BASIC

    def __post_init__(self) -> None:
        object.__setattr__(self, "conversion", choice("conversion", self.conversion, Conversion))
        object.__setattr__(self, "orders", _frozen_orders(self.orders))


def _frozen_orders(orders: Any) -> str | int | tuple[float, ...]:
    """``orders`` as an immutable value: a non-empty name, an int, or a 1-D array of numbers as a tuple of floats
    (each the float64 the accountants read, so the grid is unchanged); anything else refused naming ``orders``."""
    if isinstance(orders, str):
        if not orders.strip():
            raise ValueError("orders: expected a named grid ('paper2018', 'int:A:B') or an array of orders, got ''")
        return orders
    if isinstance(orders, (int, np.integer)) and not isinstance(orders, bool):
        return int(orders)
    try:
        grid = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"orders: expected a named grid or a 1-D array of numbers, got {orders!r}"[:200]) from None
    if grid.ndim != 1:
        raise ValueError(f"orders: expected a 1-D array of orders, got shape {grid.shape}")
    return tuple(grid.tolist())


#: The accounting every accountant uses unless told otherwise: Papernot et al. 2018's grid, basic conversion.
DEFAULT_ACCOUNTING = Accounting()
