"""The smoke check of notebooks/00_dp_primer.ipynb: what it must have recorded (not only that it ran)."""

import math

import pytest
from notebook_checks.shared import check_primer_lab


def check(scalars: dict, params: dict) -> None:
    """00_dp_primer: the continuous and integer-order minima of Eq. (4.11) and the audit."""
    T, gamma, delta = params["n_queries"], params["gamma"], params["delta"]
    fig5 = scalars["make2021-fig5"]
    closed_eps = 2 * T * gamma**2 + 2 * math.sqrt(2 * T * gamma**2 * math.log(1 / delta))
    closed_lam = math.sqrt(math.log(1 / delta) / (2 * T * gamma**2))
    assert fig5["epsilon_star"] == pytest.approx(closed_eps, rel=1e-6)
    assert fig5["lambda_star"] == pytest.approx(closed_lam, rel=1e-4)
    curve_at_integers = [(2 * T * gamma**2 * order * (order + 1) - math.log(delta)) / order for order in range(1, 9)]
    best = min(range(8), key=curve_at_integers.__getitem__)
    assert fig5["epsilon_integer_orders"] == pytest.approx(curve_at_integers[best], rel=1e-9)
    assert fig5["order_integer"] == best + 1
    assert fig5["epsilon_integer_orders"] >= fig5["epsilon_star"]
    assert fig5["verdict"] == "agrees" and scalars["visca2021-fig4.8"]["verdict"] == "agrees"
    laplace = scalars["laplace_mechanism"]
    assert laplace["max_abs_privacy_loss"] <= laplace["epsilon"] + 1e-9
    # |loss| <= epsilon, so its standard error is at most epsilon / sqrt(n): allow five of them
    tolerance = 5 * laplace["epsilon"] / math.sqrt(params["loss_samples"])
    assert laplace["empirical_loss_mean"] == pytest.approx(laplace["theoretical_loss_mean"], abs=tolerance)
    audit = scalars["audit"]
    assert audit["lnmax_lower_bound"] <= audit["lnmax_claimed"]
    assert audit["broken_lower_bound"] > audit["broken_claimed"], "the audit must catch the halved noise"
    check_primer_lab(scalars, params)
