"""The lecturer's light venv (``make lab-light``: the core and the ``lab`` extra, no torch) as a student's machine
without network has it: the labs' package calls import, and the released votes a lecturer copied beside the labs are
prepared from that copy (checksums verified) with every download failing and no mirror named. The browser run of the
labs in this venv is ``tests/tooling/test_lab_browser.py``; the site built in it, ``tests/tooling/test_site.py``."""

import json
import os
import shutil
import subprocess

import pytest

from pate_study.tooling.labcheck import OFFLINE_ENV

#: Run by the light venv's Python in the students' folder: load the lab's votes as the lab does, say what came.
LOAD_AS_THE_LAB_DOES = """
import json, sys
from pathlib import Path
import pate_study.tooling.exercises  # the exercise checks import without torch
from pate_study.experiments import primer
rows = primer.load_votes("mnist", data="auto", n_rows=640, seed=0, prepare=True, students_folder=Path.cwd())
print(json.dumps({"kind": rows.source.kind, "rows": len(rows.counts), "notice": rows.notice,
                  "torch": "torch" in sys.modules}))
"""


def _released_votes():
    mirror = os.environ.get("PATE_STUDY_MIRROR", "")
    folder = os.path.join(mirror, "pate2018-votes") if mirror else ""
    if not folder or not os.path.isdir(folder):
        pytest.skip("needs the released votes in $PATE_STUDY_MIRROR/pate2018-votes (the mirror .ci/run names)")
    return folder


def _offline_env(data):
    env = {k: v for k, v in os.environ.items() if k not in ("PATE_STUDY_MIRROR", "PYTHONPATH")}
    return {**env, **OFFLINE_ENV, "PATE_STUDY_DATA": str(data), "no_proxy": "", "NO_PROXY": ""}


@pytest.mark.light
def test_the_light_venv_prepares_votes_copied_beside_the_labs_offline_without_torch(light_lab, tmp_path):
    students = tmp_path / "labs"
    shutil.copytree(_released_votes(), students / "pate2018-votes")
    run = subprocess.run(
        [str(light_lab), "-c", LOAD_AS_THE_LAB_DOES],
        cwd=students,
        env=_offline_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    assert loaded == {**loaded, "kind": "real", "rows": 640, "torch": False}, loaded
    assert (tmp_path / "data" / "pate2018-votes" / "mnist.npy").is_file()


@pytest.mark.light
def test_without_votes_and_network_the_light_lab_names_the_light_fixes(light_lab, tmp_path):
    """No copy, no network: the stand-in, and a box naming what works in this venv, not make data-votes (torch)."""
    students = tmp_path / "labs"
    students.mkdir()
    run = subprocess.run(
        [str(light_lab), "-c", LOAD_AS_THE_LAB_DOES],
        cwd=students,
        env=_offline_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    assert loaded["kind"] == "synthetic" and "SYNTHETIC" in loaded["notice"]
    assert "python -m data_recipes prepare pate2018-votes" in loaded["notice"] and "`labs/`" in loaded["notice"]
    assert "make data-votes" not in loaded["notice"]
