"""Each notebook's settings are written once: in its study's contract (:mod:`pate_study.core.contract`).

For a notebook whose manifest names a contract (``configs/<stem>/notebook.yaml``, ``contract:``):

- its parameters cell declares the runner's names and one mapping of overrides, nothing else, in at most 8 lines
  besides comments;
- the cell's defaults are the paper profile's (``configs/<stem>/paper.yaml`` holds no override), so Run All in
  JupyterLab gives the run ``make figures`` gives;
- no profile file restates a default of the contract (each override differs from the paper value);
- the notebooks' cells pass at most 20 keywords as ``name=name`` in all (the settings are read from the contract).

The notebooks whose settings are still a parameters cell of their own are listed, with why, in
``NOT_YET_A_CONTRACT``; the list only shrinks.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from pate_study.core.contract import StudyContract
from pate_study.tooling.notebook_runner.configs import OVERRIDES, load_parameters, notebook_parameters
from pate_study.tooling.notebook_runner.layout import PROFILES, RUNNER_PARAMETERS
from pate_study.tooling.notebook_runner.manifest import load_manifest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: notebooks whose settings are not a contract yet, and why
NOT_YET_A_CONTRACT: dict[str, str] = {}
#: the most lines a contract notebook's parameters cell holds besides comments
PARAMETERS_CELL_LINES = 8
#: the most ``name=name`` keyword echoes in all of the notebooks' cells
ECHO_LIMIT = 20
#: the names a contract notebook's parameters cell declares
CELL_NAMES = {*RUNNER_PARAMETERS, "seed", "data", OVERRIDES}
CONTRACT_NOTEBOOKS = [p for p in NOTEBOOKS if p.stem not in NOT_YET_A_CONTRACT]


def profiles(stem: str) -> list[str]:
    """The profile files of notebook ``stem`` (``paper``, ``smoke``, ``gpu``: those of :data:`PROFILES` it has)."""
    return [p for p in PROFILES if (REPO / "configs" / stem / f"{p}.yaml").exists()]


def echoes(path: Path) -> int:
    """The keywords passed as ``name=name`` in the code cells of notebook ``path``."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    count = 0
    for cell in (c for c in cells if c["cell_type"] == "code"):
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            count += isinstance(node, ast.keyword) and isinstance(node.value, ast.Name) and node.arg == node.value.id
    return count


def parameters_cell_lines(path: Path) -> int:
    """The lines of notebook ``path``'s parameters cell besides comments and blank lines."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    cell = next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    return sum(1 for line in "".join(cell["source"]).splitlines() if line.strip() and not line.lstrip().startswith("#"))


def test_the_not_yet_list_names_real_notebooks_without_a_contract():
    stems = {p.stem for p in NOTEBOOKS}
    assert set(NOT_YET_A_CONTRACT) <= stems
    for stem in NOT_YET_A_CONTRACT:
        assert load_manifest(stem).contract is None, f"{stem} has a contract now: take it off NOT_YET_A_CONTRACT"


@pytest.mark.parametrize("path", CONTRACT_NOTEBOOKS, ids=lambda p: p.stem)
def test_a_contract_notebook_declares_the_runner_names_and_its_overrides_only(path):
    contract = load_manifest(path.stem).contract
    assert contract is not None and issubclass(contract, StudyContract), f"{path.stem}: its manifest names no contract"
    assert set(notebook_parameters(path)) <= CELL_NAMES
    assert parameters_cell_lines(path) <= PARAMETERS_CELL_LINES


@pytest.mark.parametrize("path", CONTRACT_NOTEBOOKS, ids=lambda p: p.stem)
def test_run_all_gives_the_paper_profile(path):
    """The cell's defaults equal paper.yaml's values, and paper.yaml overrides nothing."""
    declared = notebook_parameters(path)
    paper = load_parameters(path.stem, "paper")
    assert set(paper) <= set(declared) - {OVERRIDES}, f"{path.stem}: paper.yaml overrides {set(paper) - set(declared)}"
    for name, value in paper.items():
        assert declared[name] == value, f"{path.stem}: {name} = {declared[name]!r}, paper {value!r}"
    assert declared[OVERRIDES] == {}


@pytest.mark.parametrize("path", CONTRACT_NOTEBOOKS, ids=lambda p: p.stem)
def test_no_profile_restates_a_default_of_the_contract(path):
    contract = load_manifest(path.stem).contract
    paper = contract().as_record()
    declared = notebook_parameters(path)
    for profile in profiles(path.stem):
        overrides = {k: v for k, v in load_parameters(path.stem, profile).items() if k not in declared}
        restated = {
            k for k, v in contract.from_overrides(overrides).as_record().items() if k in overrides and v == paper[k]
        }
        assert not restated, f"configs/{path.stem}/{profile}.yaml restates the paper profile's {sorted(restated)}"


def test_the_notebooks_echo_few_keywords():
    counts = {p.stem: echoes(p) for p in NOTEBOOKS}
    assert sum(counts.values()) <= ECHO_LIMIT, counts


def test_the_echo_count_sees_an_echo_and_the_cell_count_skips_comments(tmp_path):
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["# a comment\n", "seed = 0\n"]},
            {"cell_type": "code", "metadata": {}, "source": ["f(seed=seed, data=x)\n"]},
        ]
    }
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert echoes(path) == 1 and parameters_cell_lines(path) == 1
