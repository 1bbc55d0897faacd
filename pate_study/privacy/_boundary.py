"""The public boundary of the privacy library: each public function declares its parameters' constraints beside its
definition, and they are checked once, where a call enters the library.

In the manner of scikit-learn's ``validate_params`` (``sklearn.utils._param_validation``)::

    @constrained(sigma="noise_scale", delta="delta", n_queries="count", accounting="accounting")
    def gnmax_epsilon(*, sigma, delta, n_queries=None, votes=None, accounting=DEFAULT_ACCOUNTING): ...

Each keyword names a parameter of the function and a kind of :data:`CHECKS` (or, for a quantity only one module
has, a check function of that module): an entry of the one table of ranges
:data:`~pate_study.privacy._validation.PARAMETER_CONSTRAINTS` (``"noise_scale"``, ``"delta"``, ``"count"``,
``"threshold"``, ...), or a named check of a value that is not a number in a range (``"positive"``, a threshold
that may be ``"adaptive"``, an :class:`~pate_study.privacy.options.Accounting`, a confidence check, a charge). The
messages are the library's one-line ValueErrors, naming the parameter and what was expected.

* The declaration is kept on the function as ``__parameter_constraints__`` (parameter -> kind), read by the tests
  that every public function declares a constraint for each parameter named in
  :data:`~pate_study.privacy._validation.PARAMETER_KINDS`.
* The signature is read once, when the function is decorated: a call only looks up the declared names, by position
  or keyword, and replaces each argument by its checked value (a float noise scale, an int count), as the hand
  checks did. Defaults are checked once, at decoration; a parameter whose default is None may be left None (its
  function says what None means, e.g. ``n_queries=None`` when votes are given).
* Checked once: a call made while another checked call runs (an accountant calling
  :func:`~pate_study.privacy.accounting.account`, a release calling a curve) is not checked again, as scikit-learn's
  ``prefer_skip_nested_validation``: what the outer function passes on it has checked, or computed itself. So the
  functions below the boundary need no checks of their own for what the boundary covers, and a checked function
  declares every parameter it passes on unchanged to another one (the audits declare the sampling parameters
  they hand to :func:`~pate_study.privacy.audit.audit_mechanism`).

Constraints between parameters (give ``n_queries`` or the votes; a bound that needs the number of teachers) and
checks of data arrays against their shapes stay in the functions, which know them.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from types import MappingProxyType
from typing import Any, Callable, TypeVar

from pate_study.privacy._validation import (
    PARAMETER_CONSTRAINTS,
    check_delta,
    check_fixed_threshold,
    check_n_queries,
    check_noise_scale,
    check_positive,
    check_probability,
    check_threshold_number,
    check_threshold_value,
)
from pate_study.privacy.options import (
    DEFAULT_ACCOUNTING,
    Accounting,
    Conversion,
    Threshold,
    charge_of,
    choice,
    confidence_check_of,
)

__all__ = ["CHECKS", "check_moments_accounting", "constrained"]

F = TypeVar("F", bound=Callable[..., Any])
#: A check of one parameter: (its name, the value given) -> the checked value, or a ValueError naming it.
Check = Callable[[str, Any], Any]

#: True while a checked call runs (per thread and task): the calls it makes are not checked again.
_INSIDE_CHECKED_CALL = contextvars.ContextVar("pate_study_privacy_inside_checked_call", default=False)


def _interval(kind: str) -> Check:
    """The check of the table entry ``kind``: :meth:`~pate_study.privacy._validation.Interval.check`."""
    return PARAMETER_CONSTRAINTS[kind].check


def _count(name: str, value: Any) -> int:
    """A positive integer count (queries, labels, teachers) within the table's ``count`` entry."""
    return check_n_queries(value, name)


def _delta(name: str, value: Any) -> float:
    """A δ in the open interval (0, 1), the table's ``delta`` entry."""
    return check_delta(value, name)


def _label_threshold(name: str, value: Any) -> Any:
    """A multi-label release threshold: :attr:`~pate_study.privacy.options.Threshold.ADAPTIVE` (its string, kept
    as given), or finite numbers (one, or one per query) within the table's ``threshold`` entry."""
    if isinstance(value, str):
        choice(name, value, Threshold)
        return value
    return check_threshold_value(name, value)


def _accounting(name: str, value: Any) -> Accounting:
    """An :class:`~pate_study.privacy.options.Accounting` (its fields were checked when it was built)."""
    if not isinstance(value, Accounting):
        raise ValueError(f"{name}: expected an Accounting(orders, conversion), got {type(value).__name__}")
    return value


def check_moments_accounting(name: str, value: Any) -> Accounting:
    """An Accounting the 2017 moments accountant can honour: its tail bound ε = min_λ (α(λ) − ln δ)/λ (Abadi et al.
    2016, Theorem 2) is the basic conversion (Mironov 2017, Prop. 3) at RDP order λ + 1 of α(λ)/λ, so the
    conversion must be basic; the orders are its moments λ."""
    accounting = _accounting(name, value)
    if accounting.conversion is not Conversion.BASIC:
        raise ValueError(
            f"{name}.conversion: the moments accountant converts with its tail bound (Abadi et al. 2016, Theorem 2), "
            f"the basic conversion at order lambda + 1; expected 'basic', got {accounting.conversion.value!r} "
            "(the RDP accountants take 'improved')"
        )
    return accounting


def _orders_text(orders: Any) -> str:
    """An Accounting's orders in a one-line message (a grid by its size and ends, not every order)."""
    if isinstance(orders, tuple) and orders:
        return f"a grid of {len(orders)} orders from {orders[0]:g} to {orders[-1]:g}"
    return repr(orders)


def _curve_accounting(name: str, value: Any) -> Accounting:
    """An Accounting for an accountant whose orders come with the curves it is given (candidates' RDP, one run's
    curve, an RDP curve and its orders): only the conversion is read, so other orders than the default are refused,
    not dropped."""
    accounting = _accounting(name, value)
    if accounting.orders != DEFAULT_ACCOUNTING.orders:
        raise ValueError(
            f"{name}.orders: the orders here are those of the given RDP curves; give Accounting(conversion=...) "
            f"with the default orders, got {_orders_text(accounting.orders)}"
        )
    return accounting


def _confidence_check(name: str, value: Any) -> Any:
    """A :class:`~pate_study.privacy.options.ConfidenceCheck` (checked when built)."""
    return confidence_check_of(value)


def _charge(name: str, value: Any) -> Any:
    """A :class:`~pate_study.privacy.options.Charge`."""
    return charge_of(value)


#: Kind -> check ``(parameter name, value) -> checked value``: every entry of the table of ranges, with the checks
#: the library has always made for noise scales (finite and > 0 first), counts (a positive integer first), δ and
#: thresholds (finite first), and the named checks of values that are not a number in a range.
CHECKS: dict[str, Check] = {
    **{kind: _interval(kind) for kind in PARAMETER_CONSTRAINTS},
    "noise_scale": check_noise_scale,
    "count": _count,
    "delta": _delta,
    "threshold": check_threshold_value,
    "label_threshold": _label_threshold,
    "fixed_threshold": check_fixed_threshold,
    "threshold_number": check_threshold_number,
    "positive": check_positive,
    "probability": check_probability,
    "accounting": _accounting,
    "moments_accounting": check_moments_accounting,
    "curve_accounting": _curve_accounting,
    "confidence_check": _confidence_check,
    "charge": _charge,
}

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def constrained(**declared: str | Check) -> Callable[[F], F]:
    """Declare the constraint of each named parameter of a public function, checked once where a call enters the
    library (module docstring): a kind of :data:`CHECKS`, or a check ``(name, value) -> checked value`` of the
    function's own module for a quantity only it has (as scikit-learn accepts a callable constraint). An unknown
    kind, a name that is not a parameter or a default that its own constraint refuses is an error of the
    declaration, raised when the module is imported."""
    unknown = {name: kind for name, kind in declared.items() if not callable(kind) and kind not in CHECKS}
    if unknown:
        raise TypeError(f"constrained: unknown kinds {unknown}; expected kinds of CHECKS {sorted(CHECKS)}")

    def decorate(fn: F) -> F:
        parameters = inspect.signature(fn).parameters
        missing = sorted(set(declared) - set(parameters))
        if missing:
            raise TypeError(f"constrained: {fn.__qualname__} has no parameter {missing}")
        plan = []
        for position, (name, parameter) in enumerate(parameters.items()):
            if name not in declared:
                continue
            check = declared[name] if callable(declared[name]) else CHECKS[declared[name]]
            optional = parameter.default is None
            if parameter.default is not inspect.Parameter.empty and not optional:
                check(name, parameter.default)
            plan.append((name, position if parameter.kind in _POSITIONAL else None, check, optional))
        steps = tuple(plan)

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if _INSIDE_CHECKED_CALL.get():
                return fn(*args, **kwargs)
            for name, position, check, optional in steps:
                if position is not None and position < len(args):
                    if not (optional and args[position] is None):
                        args = (*args[:position], check(name, args[position]), *args[position + 1 :])
                elif name in kwargs and not (optional and kwargs[name] is None):
                    kwargs[name] = check(name, kwargs[name])
            token = _INSIDE_CHECKED_CALL.set(True)
            try:
                return fn(*args, **kwargs)
            finally:
                _INSIDE_CHECKED_CALL.reset(token)

        checked.__parameter_constraints__ = MappingProxyType(dict(declared))
        return checked  # type: ignore[return-value]

    return decorate
