"""Every notebook runs with its smoke profile through papermill, and the scalars it records are checked.

Each notebook needs a ``parameters`` cell, ``configs/<stem>/{smoke,paper}.yaml`` and its own check file
``tests/notebooks/notebook_checks/check_<stem>.py`` whose ``check(scalars, params)`` asserts what the notebook
recorded (not only that it ran); adding a notebook touches no line of this file.
"""

import importlib
import json
import re
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from pate_study.core.paths import CONFIGS_DIR, NOTEBOOKS_DIR, REPO_ROOT
from pate_study.reporting.outputs import read_scalars
from pate_study.tooling.labcheck import PACKAGE_LOG
from pate_study.tooling.notebook_runner.configs import effective_parameters, load_parameters
from pate_study.tooling.notebook_runner.execution import execute_notebook
from pate_study.tooling.notebook_runner.layout import PROFILES, REQUIRED_PROFILES, RUNNER_PARAMETERS, list_notebooks
from pate_study.tooling.notebook_runner.manifest import load_manifest

#: one check file per notebook (``check_<stem>.py``, a function ``check(scalars, params)``), imported as
#: ``notebook_checks.check_<stem>`` (pytest puts this folder on the import path)
CHECKS_DIR = Path(__file__).resolve().parent / "notebook_checks"


def notebook_check(stem: str):
    """The ``check(scalars, params)`` of ``stem``'s check file."""
    return importlib.import_module(f"notebook_checks.check_{stem}").check


def test_every_notebook_has_a_check_configs_and_a_parameters_cell():
    stems = list_notebooks()
    assert "00_dp_primer" in stems
    for stem in stems:
        assert (CHECKS_DIR / f"check_{stem}.py").is_file(), (
            f"add tests/notebooks/notebook_checks/check_{stem}.py with check(scalars, params): what {stem} records"
        )
        nb = nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{stem} needs exactly one cell tagged 'parameters'"
        declared = papermill.inspect_notebook(str(NOTEBOOKS_DIR / f"{stem}.ipynb"))  # what papermill can parse
        optional = [p for p in PROFILES if p not in REQUIRED_PROFILES and (CONFIGS_DIR / stem / f"{p}.yaml").exists()]
        for profile in (*REQUIRED_PROFILES, *optional):  # e.g. 04's gpu.yaml must name real parameters too
            params = load_parameters(stem, profile)  # the cell's names; the others are overrides of the contract
            assert load_manifest(stem).contract is not None, f"{stem}: its manifest names no contract"
            params = {name: v for name, v in params.items() if name in declared}
            for name in list(params) + list(RUNNER_PARAMETERS):
                assert name in declared, f"{stem}: papermill cannot find parameter {name!r} in the parameters cell"


TIMING = re.compile(r"seconds|elapsed|run ?time|wall", re.IGNORECASE)


def recorded_timings(scalars: dict) -> list[str]:
    """Keys (and findings texts) of ``scalars.json`` that carry a measured time: a run's wall time differs between
    runs of the same seed, so it belongs in benchmarks/ and build/timings, not in the recorded scalars."""
    found = []

    def walk(value, path):
        if isinstance(value, dict):
            for key, item in value.items():
                if key != "_provenance":
                    walk(item, f"{path}.{key}" if path else key)
        elif isinstance(value, str) and re.search(r"\*\*Run time\*\*|\b\d+(\.\d+)? s \(shared machine\)", value):
            found.append(path)
        if path and TIMING.search(path.rsplit(".", 1)[-1]):
            found.append(path)

    walk(scalars, "")
    return found


def test_recorded_timings_are_found():
    assert recorded_timings({"a": {"elapsed_seconds": 3.0}, "b": {"x": 1}}) == ["a.elapsed_seconds"]
    assert recorded_timings({"findings": {"text": "* **Run time** of this profile: 106 s (shared machine)."}}) == [
        "findings.text"
    ]
    assert recorded_timings({"a": {"epsilon": 1.0, "seed": 0}, "_provenance": {"date": "x"}}) == []


@pytest.mark.notebook
@pytest.mark.parametrize("stem", list_notebooks())
def test_notebook_smoke_profile_records_checked_values(stem, tmp_path):
    output_dir = tmp_path / "figures" / stem
    executed = execute_notebook(stem, "smoke", output_dir, build_dir=tmp_path / "build", html=False)
    nb = nbformat.read(executed, as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    # what a reader of the executed copy meets: no package log lines in stderr boxes, alt text on every figure
    package_logs = [o["text"] for o in outputs if o.get("name") == "stderr" and PACKAGE_LOG.search(o.get("text", ""))]
    assert not package_logs, (
        "the package logs to stderr in a kernel (pate_study.reporting.session should send it to stdout)"
    )
    missing_alt = [
        i
        for i, o in enumerate(outputs)
        if "image/png" in o.get("data", {}) and not o.get("metadata", {}).get("image/png", {}).get("alt")
    ]
    assert not missing_alt, "figures without alternative text"
    texts = [json.dumps(o.get("text", "")) + json.dumps(o.get("data", {}).get("text/plain", "")) for o in outputs]
    machine_paths = [t[:200] for t in texts if str(REPO_ROOT) in t or sys.prefix in t]
    assert not machine_paths, f"the executed copy shows this machine's paths (a warning's file name?): {machine_paths}"
    scalars = read_scalars(output_dir)
    assert scalars["_provenance"]["profile"] == "smoke"
    recorded = json.loads(next(output_dir.glob("*.provenance.json")).read_text())["parameters"]
    assert recorded == {**effective_parameters(stem, "smoke"), "profile": "smoke", "output_dir": str(output_dir)}
    notebook_check(stem)(scalars, effective_parameters(stem, "smoke"))
    timings = recorded_timings(scalars)
    assert not timings, (
        f"timings in scalars.json (the same seed must give the same bytes; time in benchmarks/): {timings}"
    )
    for sidecar in output_dir.glob("*.provenance.json"):
        assert json.loads(sidecar.read_text())["profile"] == "smoke"
