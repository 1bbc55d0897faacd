"""``make handout``: what students get instead of a clone, without the solutions (pate_study.tooling.labcopies)."""

import json
import re
import zipfile

import pytest

from pate_study.core.paths import NOTEBOOKS_DIR, REPO_ROOT
from pate_study.tooling import labcopies


@pytest.fixture
def votes(tmp_path):
    """A stand-in for the released votes' folder (the handout copies it as it is; the recipe checks it later)."""
    folder = tmp_path / "mirror" / "pate2018-votes"
    folder.mkdir(parents=True)
    for name in ("mnist", "svhn", "adult"):
        (folder / f"{name}_250_teachers.npy").write_bytes(b"released votes")
    return folder


def test_the_handout_has_the_labs_the_package_and_the_light_requirements_and_no_solutions(tmp_path, votes, monkeypatch):
    folder = labcopies.handout(tmp_path / "out", votes)
    names = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert {"00_dp_primer.ipynb", "07_pate2018_lab.ipynb", "requirements.txt", "README.md", "pyproject.toml"} <= names
    assert {
        "pate_study/tooling/exercises.py",
        "data_recipes/pate2018.py",
        "pate2018-votes/mnist_250_teachers.npy",
    } <= names
    assert not [n for n in names if n.startswith(("instructors/", "tests/", "figures/", "notebooks/", "docs/"))]
    assert not [n for n in names if "solution" in n.lower() or "__pycache__" in n]
    for stem in labcopies.TEACHING_NOTEBOOKS:
        assert (folder / f"{stem}.ipynb").read_bytes() == (NOTEBOOKS_DIR / f"{stem}.ipynb").read_bytes()
    listed = [line for line in (folder / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    assert "jupyterlab>=4.0" in listed and not [line for line in listed if re.match(r"(torch|ray|papermill)\b", line)]
    readme = (folder / "README.md").read_text()
    assert "pip install -r requirements.txt" in readme and "included here" in readme
    with zipfile.ZipFile(tmp_path / "out" / "pate_study-labs.zip") as zipped:
        assert {n.removeprefix("pate_study-labs/") for n in zipped.namelist()} >= names
    monkeypatch.delenv("PATE_STUDY_MIRROR", raising=False)  # no mirror, no --votes: no votes this time
    again = labcopies.handout(tmp_path / "out")  # its own previous handout is replaced
    assert not (again / "pate2018-votes").exists() and "not included" in (again / "README.md").read_text()


def test_the_labs_never_point_at_the_solutions():
    for stem in labcopies.TEACHING_NOTEBOOKS:
        cells = json.loads((NOTEBOOKS_DIR / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        text = "".join("".join(c["source"]) for c in cells)
        assert "instructors/" not in text and "solution" not in text.lower(), stem


def test_a_folder_of_the_users_is_never_replaced_and_bad_votes_are_one_line(tmp_path):
    mine = tmp_path / "out" / "pate_study-labs"
    mine.mkdir(parents=True)
    (mine / "notes.md").write_text("mine")
    with pytest.raises(ValueError, match="not a handout this tool wrote"):
        labcopies.handout(tmp_path / "out")
    assert (mine / "notes.md").read_text() == "mine"
    assert labcopies.main(["--handout", str(tmp_path / "other"), "--votes", str(tmp_path / "nowhere")]) == 2
    assert not (tmp_path / "other" / "pate_study-labs").exists()
    assert labcopies.main(["--votes", str(tmp_path)]) == 2  # --votes without --handout


def test_make_handout_site_and_lab_light_use_the_light_path():
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")

    def recipe(target):
        return re.search(rf"^{target}:(.*)\n((?:\t.*\n)+)", makefile, re.M)

    assert "pate_study.tooling.labcopies --handout" in recipe("handout").group(2)
    site = recipe("site")
    assert "SITE_STAMP" in site.group(1) and "$(LAB_VENV)/bin/python -m pate_study.tooling.site" in site.group(2)
    assert "$(STAMP)" not in site.group(1), "make site must not need the full (torch) venv"
    assert "data_recipes prepare pate2018-votes" in recipe("lab-light").group(2)
    assert '-e ".[site]"' in makefile and '-e ".[lab]"' in makefile
