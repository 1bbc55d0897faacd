"""Notebook 05 (smoke profile) with ``backend="ray"`` against a local Ray instance started here.

Kept apart from tests/learning/test_distributed_ray.py so that module stays fast. Notebook 05 runs every Audio Set
path that goes through Ray in a notebook: single ensembles per teacher count, the replicate ensembles as stacked
shards, their votes, and the release draws beside them. Notebook 04's own Ray paths (teachers per count, sharded with
``teachers_per_task``, and the log-Mel CNNs) are compared with the local backend value by value in
tests/learning/test_distributed_ray.py; its whole smoke run on Ray (about 2 minutes) is left out of the suite. Both
notebooks must still take a ``backend`` setting, in their parameters cell or as a field of their study's contract
(checked below: the test fails, not skips, if a notebook loses it).
"""

import dataclasses
import json

import papermill
import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs the 'ray' extra: pip install -e '.[ray]'")

from pate_study.core.paths import NOTEBOOKS_DIR  # noqa: E402 - only once importorskip found ray
from pate_study.learning import distributed  # noqa: E402 - only once importorskip found ray
from pate_study.reporting.outputs import read_scalars  # noqa: E402 - only once importorskip found ray
from pate_study.tooling.notebook_runner.execution import execute_notebook  # noqa: E402 - only once importorskip found ray
from pate_study.tooling.notebook_runner.manifest import load_manifest  # noqa: E402 - only once importorskip found ray

STEMS = ["05_audioset_multilabel"]
BACKEND_STEMS = ["04_audioset_teachers", "05_audioset_multilabel"]
#: The most one cell of a smoke run may take here (the slowest takes well under a minute on two busy cores): a
#: cell stuck on a cluster that lost its workers fails the test instead of hanging the suite.
CELL_LIMIT_S = 600


def notebook_has_backend(stem: str) -> bool:
    """Whether notebook ``stem`` takes a ``backend`` setting: its parameters cell declares it, or its study's
    contract (``configs/<stem>/notebook.yaml``) has it as a field."""
    contract = load_manifest(stem).contract
    if contract is not None:
        return "backend" in {f.name for f in dataclasses.fields(contract)}
    return "backend" in papermill.inspect_notebook(str(NOTEBOOKS_DIR / f"{stem}.ipynb"))


@pytest.fixture(scope="module")
def ray_address():
    """A local Ray instance (2 CPUs, no dashboard) for the module; on a busy machine its start is given Ray's
    longer waits and tried again (:func:`pate_study.learning.distributed._start_local`)."""
    with distributed.local_ray(num_cpus=2) as address:
        yield address


@pytest.mark.parametrize("stem", BACKEND_STEMS)
def test_audioset_notebooks_declare_a_backend(stem):
    assert notebook_has_backend(stem), f"{stem}: its parameters cell or its contract must declare `backend`"


@pytest.mark.notebook
@pytest.mark.parametrize("stem", STEMS)
def test_audioset_notebook_smoke_runs_on_ray(stem, ray_address, tmp_path, monkeypatch):
    """The notebook's smoke profile with backend="ray"; the kernel joins this module's instance (RAY_ADDRESS)."""
    assert notebook_has_backend(stem), f"{stem}: its parameters cell must declare `backend`"
    monkeypatch.setenv("RAY_ADDRESS", ray_address)
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path / "cache"))
    output_dir = tmp_path / "figures" / stem
    execute_notebook(
        stem,
        "smoke",
        output_dir,
        build_dir=tmp_path / "build",
        html=False,
        extra_parameters={"backend": "ray"},
        cell_timeout_s=CELL_LIMIT_S,
    )
    scalars = read_scalars(output_dir)
    assert scalars["_provenance"]["profile"] == "smoke"
    recorded = json.loads(next(output_dir.glob("*.provenance.json")).read_text())["parameters"]
    assert recorded["backend"] == "ray"
