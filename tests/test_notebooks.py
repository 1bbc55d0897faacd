"""Every notebook runs with its smoke profile through papermill, and the scalars it records are checked.

Each notebook needs a ``parameters`` cell, ``configs/<stem>/{smoke,paper}.yaml`` and an entry in CHECKS below
that asserts what the notebook recorded (not only that it ran).
"""
import json
import math

import nbformat
import papermill
import pytest

from pate_study.outputs import read_scalars
from pate_study.runner import RUNNER_PARAMETERS, execute_notebook, list_notebooks, load_parameters
from pate_study.paths import NOTEBOOKS_DIR


def check_primer(scalars: dict, params: dict) -> None:
    """00_dp_primer: the continuous and integer-order minima of Eq. (4.11) and the audit."""
    T, gamma, delta = params["n_queries"], params["gamma"], params["delta"]
    fig5 = scalars["make2021-fig5"]
    closed_eps = 2 * T * gamma**2 + 2 * math.sqrt(2 * T * gamma**2 * math.log(1 / delta))
    closed_lam = math.sqrt(math.log(1 / delta) / (2 * T * gamma**2))
    assert fig5["epsilon_star"] == pytest.approx(closed_eps, rel=1e-6)
    assert fig5["lambda_star"] == pytest.approx(closed_lam, rel=1e-4)
    curve_at_integers = [(2 * T * gamma**2 * l * (l + 1) - math.log(delta)) / l for l in range(1, 9)]
    best = min(range(8), key=curve_at_integers.__getitem__)
    assert fig5["epsilon_integer_orders"] == pytest.approx(curve_at_integers[best], rel=1e-9)
    assert fig5["order_integer"] == best + 1
    assert fig5["epsilon_integer_orders"] >= fig5["epsilon_star"]
    laplace = scalars["laplace_mechanism"]
    assert laplace["max_abs_privacy_loss"] <= laplace["epsilon"] + 1e-9
    # |loss| <= epsilon, so its standard error is at most epsilon / sqrt(n): allow five of them
    tolerance = 5 * laplace["epsilon"] / math.sqrt(params["loss_samples"])
    assert laplace["empirical_loss_mean"] == pytest.approx(laplace["theoretical_loss_mean"], abs=tolerance)
    audit = scalars["audit"]
    assert audit["lnmax_lower_bound"] <= audit["lnmax_claimed"]
    assert audit["broken_lower_bound"] > audit["broken_claimed"], "the audit must catch the halved noise"


def _check_accounting(scalars: dict, params: dict) -> None:
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


def _check_verdicts(scalars: dict, items: list) -> None:
    """Every comparison the notebook makes carries a verdict of pate_study.verdicts."""
    from pate_study.verdicts import VERDICTS
    for item in items:
        assert scalars[item]["verdict"] in VERDICTS, item
        assert scalars[item]["verdict_rule"], item


def check_ecg(scalars: dict, params: dict) -> None:
    """01_ecg_student_privacy: accounting, one row per student, verdicts, both designs."""
    _check_accounting(scalars, params)
    n_levels = len(params["rhos"]) + int(params["include_no_noise"])
    assert scalars["make2021-table1"]["n_students"] == n_levels * params["n_students"]
    assert scalars["scale"]["n_teachers"] <= params["n_teachers"]
    assert len(scalars["scale"]["designs"]) == 1 + int(params["alt_design"])
    _check_verdicts(scalars, ["make2021-fig8", "make2021-fig9", "make2021-fig10", "make2021-fig11", "make2021-table1",
                              "visca2021-fig4.15", "visca2021-fig4.16", "visca2021-table4.1"])
    fig11 = scalars["make2021-fig11"]
    assert fig11["epsilon_ind_star"] <= fig11["epsilon_ind_integer"]
    assert 0 <= fig11["n_students_on_integer_bound"] <= fig11["n_students"]


def check_web(scalars: dict, params: dict) -> None:
    """02_web_requests: accounting, verdicts, Sosa's tables filled for every ensemble size, hypotheses recorded."""
    _check_accounting(scalars, params)
    _check_verdicts(scalars, ["make2021-fig13", "make2021-fig14", "make2021-fig15", "visca2021-fig4.13",
                              "sosa2021-table4.1", "sosa2021-table4.2", "sosa2021-fig4.4"])
    table42 = scalars["sosa2021-table4.2"]
    ours = [r for r in table42["rows"] if isinstance(r.get("ours_teacher_epsilon"), (int, float))]  # NaN is stored as "nan"
    assert {r["n_teachers"] for r in ours} == set(params["sosa_teachers"])
    assert len(ours) == len(params["sosa_teachers"]) * (len(params["sosa_scales"]) + int(params["include_no_noise"]))
    assert all(r["verdict"] for r in table42["rows"] if isinstance(r.get("paper_teacher_epsilon"), (int, float)))
    assert len(table42["setting_hypotheses"]) == 4
    validation = scalars["validation_rows"]
    for level, row in validation.items():
        if isinstance(row, dict):  # the share of anomalous validation rows is the pool's (stratified)
            assert abs(row["validation_positive_share"] - validation["pool_positive_share"]) < 0.01, level


CHECKS = {"00_dp_primer": check_primer, "01_ecg_student_privacy": check_ecg, "02_web_requests": check_web}


def test_every_notebook_has_a_check_configs_and_a_parameters_cell():
    stems = list_notebooks()
    assert "00_dp_primer" in stems
    for stem in stems:
        assert stem in CHECKS, f"add a check of {stem}'s recorded scalars to CHECKS"
        nb = nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{stem} needs exactly one cell tagged 'parameters'"
        declared = papermill.inspect_notebook(str(NOTEBOOKS_DIR / f"{stem}.ipynb"))  # what papermill can parse
        for profile in ("smoke", "paper"):
            params = load_parameters(stem, profile)
            for name in list(params) + list(RUNNER_PARAMETERS):
                assert name in declared, f"{stem}: papermill cannot find parameter {name!r} in the parameters cell"


@pytest.mark.notebook
@pytest.mark.parametrize("stem", list_notebooks())
def test_notebook_smoke_profile_records_checked_values(stem, tmp_path):
    output_dir = tmp_path / "figures" / stem
    executed = execute_notebook(stem, "smoke", output_dir, build_dir=tmp_path / "build", html=False)
    nb = nbformat.read(executed, as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    scalars = read_scalars(output_dir)
    assert scalars["_provenance"]["profile"] == "smoke"
    recorded = json.loads(next(output_dir.glob("*.provenance.json")).read_text())["parameters"]
    assert recorded == {**load_parameters(stem, "smoke"), "profile": "smoke", "output_dir": str(output_dir)}
    CHECKS[stem](scalars, load_parameters(stem, "smoke"))
    for sidecar in output_dir.glob("*.provenance.json"):
        assert json.loads(sidecar.read_text())["profile"] == "smoke"
