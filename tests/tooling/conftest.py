"""Fixtures of the tooling's tests: the runner pointed at folders of a test's own (its layout), stand-in manifests for
stand-in notebooks, and the light venv ``.venv-lab`` (no torch) the labs and the site run in."""

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from pate_study.core.paths import REPO_ROOT
from pate_study.tooling.notebook_runner import layout


@pytest.fixture
def point_layout(monkeypatch):
    """``point_layout(figures=..., build=..., root=...)``: the whole runner reads those folders until the test ends
    (every other folder stays this repository's)."""

    def point(**folders):
        monkeypatch.setattr(layout, "LAYOUT", dataclasses.replace(layout.LAYOUT, **folders))
        return layout.LAYOUT

    return point


@pytest.fixture
def write_manifests():
    """``write_manifests(configs, stems, waits_for)``: a manifest without datasets for each of ``stems`` under
    ``configs`` (``waits_for``: ``{stem: {other: why}}``)."""
    return write_stand_in_manifests


def write_stand_in_manifests(configs, stems, waits_for=None):
    """A manifest without datasets for each of ``stems`` under ``configs`` (``waits_for``: ``{stem: {other: why}}``)."""
    for stem in stems:
        (configs / stem).mkdir(parents=True, exist_ok=True)
        lines = ["datasets: []"]
        for other, why in (waits_for or {}).get(stem, {}).items():
            lines += ["waits_for:"] if len(lines) == 1 else []
            lines.append(f"  {other}: {why}")
        (configs / stem / "notebook.yaml").write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------ the light venv (.venv-lab)
LIGHT_VENV = REPO_ROOT / ".venv-lab"
#: Run in the light venv: exit status 0 when torch cannot be imported there.
NO_TORCH = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is not None)"


def light_python(target: str) -> Path:
    """``.venv-lab/bin/python`` after ``make <target>`` (``lab-venv``: the core and the lab extra; ``site-venv``: the
    site extra added): nothing to do when it is up to date, else pip installs the light lists from the package
    registry (a few minutes the first time). Skips, saying why, where make or pip cannot; fails when torch is there."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make on this machine: the light venv is built by make lab-venv")
    built = subprocess.run([make, "-s", target], cwd=REPO_ROOT, capture_output=True, text=True, timeout=3600)
    if built.returncode != 0:
        last = (built.stderr or built.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"make {target} could not build the light venv .venv-lab: {last[0][:300]}")
    python = LIGHT_VENV / "bin" / "python"
    assert subprocess.run([python, "-c", NO_TORCH]).returncode == 0, "torch is installed in the light venv"
    return python


@pytest.fixture(scope="session")
def light_lab() -> Path:
    """The light venv's interpreter with the lab extra (what ``make lab-light`` gives a lecturer)."""
    return light_python("lab-venv")


@pytest.fixture(scope="session")
def light_site() -> Path:
    """The light venv's interpreter with the site extra (what ``make site`` builds the site with)."""
    return light_python("site-venv")
