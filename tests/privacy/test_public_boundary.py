"""One way to call the privacy library: the order grid and the conversion only through an
:class:`~pate_study.privacy.options.Accounting`, and each public function's parameter constraints declared beside it
(:func:`~pate_study.privacy._boundary.constrained`) and checked once, where the call enters the library."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import numpy as np
import pytest

import pate_study.privacy as privacy
from pate_study.privacy import _boundary, moments, rdp, selection
from pate_study.privacy._validation import PARAMETER_KINDS
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting, Conversion

#: The public functions that keep ``orders``: each evaluates a curve at the orders it is given (the axis of its
#: result, or of the curve it converts), which is not an accounting setting.
CURVE_FUNCTIONS = {
    "epsilon_curve": "converts an RDP curve given at these orders; the conversion comes in accounting",
    "logmgf_lnmax": "the 2017 log-MGF at these moments",
    "rdp_data_dependent": "Theorem 6's curve at these orders",
    "rdp_gnmax": "GNMax's data-dependent curve at these orders",
    "rdp_pure_dp": "a pure-DP mechanism's data-dependent curve at these orders",
    "rdp_threshold": "the threshold check's curve at these orders",
}
#: Functions of the modules that return a result without accounting one: they relabel a result they are given.
RESULT_TRANSFORMS = {"expected_cost", "with_optimum"}
#: The default Accounting each accountant may have: the RDP grid, or the moments accountant's own.
DEFAULTS = {"moments_epsilon": moments.MOMENTS_ACCOUNTING}
MODULES = (
    "accounting",
    "adaptive_k",
    "aggregators",
    "audit",
    "exact_profile",
    "mechanisms",
    "moments",
    "multilabel",
    "multiwinner",
    "rdp",
    "rdp_curves",
    "selection",
    "smooth_sensitivity",
    "topk_vote",
)


def public_functions() -> dict[str, object]:
    """Every public callable of the package (``_EXPORTS``) that is a function, by name."""
    found = {}
    for names in privacy._EXPORTS.values():
        for name in names:
            value = getattr(privacy, name)
            if inspect.isfunction(value):
                found[name] = value
    return found


def module_functions() -> dict[str, object]:
    """Every function a privacy module lists in ``__all__``, by module-qualified name."""
    found = {}
    for module_name in MODULES:
        module = importlib.import_module(f"pate_study.privacy.{module_name}")
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                found[f"{module_name}.{name}"] = value
    return found


def returns_a_result(fn) -> bool:
    annotation = str(inspect.signature(fn).return_annotation)
    return "PrivacySpent" in annotation or "ExpectedCost" in annotation


# ------------------------------------------------------------------------------------------ accounting only


def test_no_public_function_takes_orders_or_conversion_but_the_curve_functions():
    for name, fn in public_functions().items():
        parameters = inspect.signature(fn).parameters
        assert "conversion" not in parameters, f"{name}: the conversion comes in accounting=Accounting(...)"
        if "orders" in parameters:
            assert name in CURVE_FUNCTIONS, f"{name}: the order grid comes in accounting=Accounting(...)"
    assert set(CURVE_FUNCTIONS) <= set(public_functions())


def test_every_accountant_takes_one_accounting_keyword_with_an_immutable_default():
    accountants = {n: f for n, f in public_functions().items() if returns_a_result(f)}
    assert len(accountants) >= 15, sorted(accountants)
    for name, fn in {**accountants, "epsilon_curve": privacy.epsilon_curve}.items():
        parameter = inspect.signature(fn).parameters.get("accounting")
        assert parameter is not None, f"{name}: an accountant takes accounting=Accounting(...)"
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameter.default is DEFAULTS.get(name, DEFAULT_ACCOUNTING), name


def test_the_modules_accountants_follow_the_same_rule():
    for name, fn in module_functions().items():
        parameters = inspect.signature(fn).parameters
        short = name.split(".")[1]
        if short in RESULT_TRANSFORMS:
            continue
        assert "conversion" not in parameters, name
        if returns_a_result(fn):
            assert "accounting" in parameters and "orders" not in parameters, name
        if "accounting" in parameters:
            assert parameters["accounting"].default is DEFAULTS.get(short, DEFAULT_ACCOUNTING), name


def test_no_default_can_be_changed_through_the_function():
    for name, fn in {**public_functions(), **module_functions()}.items():
        for parameter in inspect.signature(fn).parameters.values():
            default = parameter.default
            assert not isinstance(default, (list, dict, set, np.ndarray)), (name, parameter.name)
            if dataclasses.is_dataclass(default):
                assert type(default).__dataclass_params__.frozen, (name, parameter.name)


def test_the_former_keywords_are_refused():
    with pytest.raises(TypeError, match="orders"):
        rdp.gnmax_epsilon(sigma=40.0, delta=1e-5, n_queries=10, orders=[2.0, 8.0])
    with pytest.raises(TypeError, match="conversion"):
        rdp.gnmax_epsilon(sigma=40.0, delta=1e-5, n_queries=10, conversion="improved")
    with pytest.raises(ValueError, match=r"^accounting: expected an Accounting\(orders, conversion\), got dict"):
        rdp.gnmax_epsilon(sigma=40.0, delta=1e-5, n_queries=10, accounting={"orders": [2.0]})


def test_an_accounting_cannot_be_changed_through_an_array_it_was_given():
    grid = np.array([2.0, 8.0, 64.0])
    accounting = Accounting(grid, Conversion.IMPROVED)
    grid[0] = 1.0
    assert accounting.orders == (2.0, 8.0, 64.0) and hash(accounting) == hash(Accounting([2.0, 8.0, 64.0], "improved"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        accounting.orders = (3.0,)
    with pytest.raises(ValueError, match=r"^orders: expected a 1-D array of orders, got shape \(1, 2\)"):
        Accounting([[2.0, 3.0]])
    assert Accounting(8).orders == 8 and Accounting("int:2:64").orders == "int:2:64"


def test_the_moments_accountant_takes_its_tail_bound_only():
    """The 2017 tail bound is the basic conversion at order λ + 1: ``MOMENTS_ACCOUNTING`` says so, and a conversion
    it cannot honour is refused in one line, not dropped."""
    assert moments.MOMENTS_ACCOUNTING == Accounting(8, Conversion.BASIC)
    spent = moments.moments_epsilon(gamma=0.05, delta=1e-5, n_queries=1000)
    assert spent.conversion == "moments" and spent.epsilon == pytest.approx(20.7565, abs=1e-4)
    with pytest.raises(ValueError, match=r"^accounting.conversion: the moments accountant converts with its tail"):
        moments.moments_epsilon(gamma=0.05, delta=1e-5, n_queries=1000, accounting=Accounting(8, "improved"))


def test_accountants_whose_orders_come_with_the_curves_refuse_other_orders():
    one = rdp.gnmax_epsilon(sigma=40.0, delta=1e-6, n_queries=100)
    improved = selection.selection_spent([one, one], delta=1e-6, accounting=Accounting(conversion="improved"))
    assert improved.conversion == "improved" and np.array_equal(improved.orders, one.orders)
    for call in (
        lambda a: selection.selection_spent([one, one], delta=1e-6, accounting=a),
        lambda a: selection.random_stopping_spent(one, distribution="poisson", mu=3.0, delta=1e-6, accounting=a),
        lambda a: privacy.epsilon_curve([2.0, 3.0], [0.1, 0.2], 1e-5, accounting=a),
    ):
        with pytest.raises(ValueError, match=r"^accounting.orders: the orders here are those of the given RDP"):
            call(Accounting([2.0, 3.0]))


# --------------------------------------------------------------------------------- constraints declared once


def test_every_public_parameter_with_a_known_kind_declares_its_constraint():
    missing = []
    for name, fn in public_functions().items():
        declared = getattr(fn, "__parameter_constraints__", {})
        for parameter in inspect.signature(fn).parameters:
            if parameter in PARAMETER_KINDS and parameter not in declared:
                missing.append(f"{name}({parameter})")
    assert not missing, "declare with @constrained(...): " + ", ".join(missing)


def test_every_declaration_names_a_parameter_and_a_known_check():
    for name, fn in {**public_functions(), **module_functions()}.items():
        declared = getattr(fn, "__parameter_constraints__", {})
        parameters = inspect.signature(fn).parameters
        for parameter, kind in declared.items():
            assert parameter in parameters, (name, parameter)
            assert callable(kind) or kind in _boundary.CHECKS, (name, parameter, kind)


def test_a_declared_constraint_refuses_and_accepts():
    assert rdp.gnmax_epsilon.__parameter_constraints__["sigma"] == "noise_scale"
    with pytest.raises(ValueError, match=r"^sigma: expected a finite number > 0, got 0"):
        rdp.gnmax_epsilon(sigma=0, delta=1e-5, n_queries=10)
    with pytest.raises(ValueError, match=r"^n_queries: expected a positive integer"):
        rdp.gnmax_epsilon(sigma=40.0, delta=1e-5, n_queries=2.5)
    spent = rdp.gnmax_epsilon(sigma=np.float32(40.0), delta="1e-5", n_queries=100.0)  # converted, as checked
    assert spent.epsilon == rdp.gnmax_epsilon(sigma=40.0, delta=1e-5, n_queries=100).epsilon
    assert spent.details["sigma"] == 40.0 and type(spent.details["sigma"]) is float and spent.n_queries == 100


def test_constraints_are_checked_once_where_the_call_enters(monkeypatch):
    seen = []

    def counted(name, value):
        seen.append(name)
        return float(value)

    @_boundary.constrained(x=counted)
    def inner(x):
        return x

    @_boundary.constrained(x=counted)
    def outer(x):
        return inner(x) + inner(x=2 * x)

    monkeypatch.setattr(_boundary.inspect, "signature", None)  # read when decorated, never per call
    assert outer(1) == 3.0 and seen == ["x"]
    assert inner(x=5) == 5.0 and seen == ["x", "x"]
    assert outer.__parameter_constraints__ == {"x": counted}


def test_a_declaration_that_does_not_fit_its_function_fails_at_import():
    with pytest.raises(TypeError, match="unknown kinds"):
        _boundary.constrained(sigma="a noise scale")
    with pytest.raises(TypeError, match="has no parameter"):
        _boundary.constrained(sigma="noise_scale")(lambda delta: delta)
    with pytest.raises(ValueError, match="^delta: expected a number in the open interval"):
        _boundary.constrained(delta="delta")(lambda delta=2.0: delta)
