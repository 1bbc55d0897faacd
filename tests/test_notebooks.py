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


CHECKS = {"00_dp_primer": check_primer}


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
    CHECKS[stem](scalars, load_parameters(stem, "smoke"))
    for sidecar in output_dir.glob("*.provenance.json"):
        assert json.loads(sidecar.read_text())["profile"] == "smoke"
