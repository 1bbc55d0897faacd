"""What several notebooks' smoke checks share: closed forms of the PATE 2018 accountant, the primer lab's checks,
the student-privacy accounting invariants and verdict records."""

import math

import pytest


def normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def paper2018_orders() -> list[float]:
    """2, 2.5, ..., 100 and 100 log-spaced orders in [100, 500] (the 2018 scripts' grid, duplicates dropped)."""
    return sorted({2 + 0.5 * i for i in range(197)} | {100 * 5 ** (k / 99) for k in range(100)})


def rdp_gnss(beta: float, sigma: float, order: float) -> float:
    """Papernot et al. 2018 Theorem 23, closed form."""
    return order * math.exp(2 * beta) / sigma**2 + (beta * order - 0.5 * math.log(1 - 2 * order * beta)) / (order - 1)


def check_primer_lab(scalars: dict, params: dict) -> None:
    """00_dp_primer, sections 1-7: closed forms and invariants of what each lab section records."""
    ratio = scalars["pate_study-primer-laplace-ratio"]
    assert ratio["max_abs_log_ratio"] == pytest.approx(ratio["epsilon"], rel=1e-9)  # bounded by ε, and attained
    gauss = scalars["gaussian_mechanism"]
    for eps, tail in gauss["loss_tail_probability"].items():  # sigma = sensitivity = 1
        assert tail == pytest.approx(normal_cdf(0.5 - float(eps)), rel=1e-9)
    low, high = gauss["log_ratio_range"]
    assert low < -1 and high > 1, "the Gaussian log-ratio must leave the Laplace band on the plotted range"
    assert scalars["moments_vs_rdp"]["max_abs_difference"] < 1e-9  # log-MGF(λ)/λ = RDP(λ + 1)
    agg = scalars["pate_study-primer-aggregators"]
    T, sigma, delta, gamma = agg["n_queries"], params["sigma"], params["delta"], params["gamma"]
    for alpha, value in agg["gnmax_rdp_one_answer"].items():
        assert value == pytest.approx(float(alpha) / sigma**2)
    gn_ind = min(T * a / sigma**2 + math.log(1 / delta) / (a - 1) for a in paper2018_orders())
    assert agg["gnmax_independent"] == pytest.approx(gn_ind, rel=1e-9)
    assert agg["gnmax_dependent"] <= agg["gnmax_independent"] + 1e-9
    closed = 2 * T * gamma**2 + 2 * math.sqrt(2 * T * gamma**2 * math.log(1 / delta))
    assert agg["lnmax_independent"] == pytest.approx(closed, rel=1e-9)
    integer = min((2 * T * gamma**2 * order * (order + 1) - math.log(delta)) / order for order in range(1, 9))
    assert agg["lnmax_moments_2017"] <= integer + 1e-9
    assert 0 <= agg["confident_answered"] <= T
    for key in ("lnmax_label_agreement", "gnmax_label_agreement"):
        assert 0.0 <= agg[key] <= 1.0
    release = scalars["pate_study-primer-smooth-sensitivity"]
    gnss = rdp_gnss(params["ss_beta"], params["ss_sigma"], params["ss_order"])
    assert release["rdp_gnss"] == pytest.approx(gnss, rel=1e-9)
    assert release["expected_epsilon"] == pytest.approx(release["epsilon_data_dependent"] + gnss, rel=1e-9)
    assert release["epsilon_std"] == pytest.approx(release["smooth_sensitivity"] * params["ss_sigma"], rel=1e-9)
    rows = scalars["local_dp"]["rows"]
    assert [r["rho"] for r in rows] == pytest.approx(params["rhos"])
    for r in rows:
        assert r["epsilon"] == pytest.approx(2 * r["rho"])
        assert r["noise_std"] == pytest.approx(math.sqrt(2) / r["rho"])
        assert r["epsilon_audited_lower_bound"] <= r["epsilon"] and not r["violation"]


def check_accounting(scalars: dict, params: dict) -> None:
    """What the student-privacy notebooks recorded about their accounting (the formulas are tested in
    tests/experiments and tests/privacy; here: the recorded run respects them)."""
    accounting = scalars["accounting"]
    assert accounting["max_dependent_minus_independent_same_grid"] <= 1e-9
    assert accounting["max_continuous_minus_integer"] <= 1e-9
    assert accounting["max_abs_theorem_minus_reference_q"] >= 0
    assert 1 <= scalars["scale"]["n_queries"] <= params["student_queries"]
    levels = {f"{r:g}" for r in params["rhos"]} | ({"no noise"} if params["include_no_noise"] else set())
    assert set(scalars["noise_over_mean_coordinate"]) == levels
    assert set(scalars["linear_readout_snr_bound"]) == levels


def check_verdicts(scalars: dict, items: list) -> None:
    """Every comparison the notebook makes carries a verdict of pate_study.reporting.verdicts."""
    from pate_study.reporting.verdicts import VERDICTS

    for item in items:
        assert scalars[item]["verdict"] in VERDICTS, item
        assert scalars[item]["verdict_rule"], item
