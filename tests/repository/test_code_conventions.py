"""Conventions a reader of the repository relies on, counted on the files themselves.

- Notebooks are thin: parameters, one package call, a figure, recorded scalars or prose per cell; the study
  notebooks 01-06 hold fewer than 150 code lines each (comments and blank lines excluded), the labs (the primer
  and 07) fewer than 300 (their exercise cells hold the student's own code). No ``def`` or ``class`` outside an
  exercise cell (one the student fills in: it says ``# your code``).
- A study notebook makes one package call per working cell, counted as top-level statements (:mod:`ast`, so
  a call spread over several lines is one statement and ``a; b`` on one line is two): at most two per cell (the
  call and the line that shows what it returns), no ``:=`` to pack calls into one statement, no code line over
  120 columns in any cell. The parameters cell is counted apart (parameters); a cell of imports only, and the
  set-up cell that builds ``out = NotebookOutputs.for_notebook(...)`` (imports plus a few set-up statements), are
  exempt, and so is a lab's exercise cell (it says ``# your code``: the student's own code), which keeps the width
  limit. Notebooks not yet in this form are listed, each with why, in ``NOT_YET_ONE_CALL_PER_CELL``.
- Docstrings and comments cite sources and equations, never the project's issue tracker, which a reader of the
  repository cannot open.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
LAB_NOTEBOOKS = {"00_dp_primer", "07_pate2018_lab"}
STUDY_LIMIT, LAB_LIMIT = 150, 300
EXERCISE_MARK = "# your code"
ISSUE_REFERENCE = re.compile(r"\b[Ii]ssues? #?\d+\b|\(#\d+\)")
#: Places a reader of the repository cannot open: the planners' extractions ("notes §4.4", "notes/x.md") and the
#: numbered source files they were made from ("seed 004").
UNOPENABLE_REFERENCE = re.compile(r"\bnotes ?§|\bnotes/[a-z]+\d{4}[\w.-]*\.md\b|\b[Ss]eeds? 0\d\d\b")
#: one package call per working cell: the call, and the line that shows what it returns
STATEMENT_LIMIT, LINE_WIDTH = 2, 120
#: parameters the parameters cell declares (one a line, a long mapping wrapped over two counting once; 05 declares 28)
PARAMETER_LIMIT = 30
#: statements besides imports in the set-up cell: ``out = NotebookOutputs(...)`` and what goes with it (the
#: parameters it records, logging, the plot style, the study's configuration)
SETUP_LIMIT = 5
#: notebooks the one-call-per-cell rules do not check yet, and why (every other notebook must keep to them)
NOT_YET_ONE_CALL_PER_CELL: dict[str, str] = {}


def code_cells(path: Path) -> list[str]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def notebook_code_cells(path: Path) -> list[dict]:
    """The code cells of a notebook, each as ``{"source": str, "tags": list}``."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [
        {"source": "".join(c["source"]), "tags": c.get("metadata", {}).get("tags", [])}
        for c in notebook["cells"]
        if c["cell_type"] == "code"
    ]


def is_setup(statements: list[ast.stmt]) -> bool:
    """The set-up cell: the one that binds ``out = NotebookOutputs(...)`` or ``NotebookOutputs.for_notebook(...)``."""

    def builds_outputs(func: ast.expr) -> bool:
        owner = func.value if isinstance(func, ast.Attribute) else func
        return getattr(owner, "id", None) == "NotebookOutputs"

    return any(
        isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and builds_outputs(s.value.func) for s in statements
    )


def cell_problems(source: str, tags: list) -> list[str]:
    """What breaks the one-call-per-cell rules in one code cell (empty when nothing does)."""
    first = next((line for line in source.splitlines() if line.strip()), "")[:60]
    problems = [
        f"line over {LINE_WIDTH} columns ({len(line)}): {line[:60]}..."
        for line in source.splitlines()
        if len(line) > LINE_WIDTH
    ]
    if "parameters" in tags:
        declared = len(ast.parse(source).body)
        if declared > PARAMETER_LIMIT:
            problems.append(f"parameters cell of {declared} parameters (limit {PARAMETER_LIMIT})")
        return problems
    if EXERCISE_MARK in source:  # a lab's exercise cell holds the student's own code: only the width applies
        return problems
    statements = ast.parse(source).body
    if any(isinstance(node, ast.NamedExpr) for node in ast.walk(ast.Module(statements, []))):
        problems.append(f"an assignment expression (:=) packs statements into one: {first}")
    working = [s for s in statements if not isinstance(s, (ast.Import, ast.ImportFrom))]
    if is_setup(statements):
        if len(working) > SETUP_LIMIT:
            problems.append(f"set-up cell with {len(working)} statements besides imports (limit {SETUP_LIMIT})")
    elif working and len(statements) > STATEMENT_LIMIT:
        problems.append(f"{len(statements)} statements (limit {STATEMENT_LIMIT}) in the cell starting {first!r}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_one_package_call_per_cell(path):
    if path.stem in NOT_YET_ONE_CALL_PER_CELL:
        pytest.skip(f"{path.stem}: {NOT_YET_ONE_CALL_PER_CELL[path.stem]}")
    problems = [p for cell in notebook_code_cells(path) for p in cell_problems(cell["source"], cell["tags"])]
    assert not problems, f"{path.name}: move the logic into pate_study/ (one call per cell):\n" + "\n".join(problems)


def test_the_not_yet_list_names_existing_notebooks():
    assert set(NOT_YET_ONE_CALL_PER_CELL) <= {p.stem for p in NOTEBOOKS}
    assert {"01_ecg_student_privacy", "02_web_requests", "03_deeplog_synthetic"}.isdisjoint(NOT_YET_ONE_CALL_PER_CELL)


def test_statement_counter_counts_statements_not_lines():
    """One call over five lines is one statement; three on one line with semicolons are three; a walrus, a wide
    line and a long parameters cell are caught; imports-only and set-up cells are exempt."""
    spread = "section = study.section(\n    run,\n    out,\n    gamma=gamma,\n)\nsection\n"
    assert cell_problems(spread, []) == []
    packed = "a = f(); b = g(); a"
    assert cell_problems(packed, []) == ["3 statements (limit 2) in the cell starting 'a = f(); b = g(); a'"]
    walrus = "show(a := f(), b := g())"
    assert cell_problems(walrus, [])[0].startswith("an assignment expression (:=)")
    assert cell_problems("x = 1\n" + "y" * 121 + " = 2\n", [])[0].startswith("line over 120 columns (125)")
    assert cell_problems("import a\nimport b\nfrom c import d\n", []) == []
    setup = "import logging\nfrom x import NotebookOutputs\nout = NotebookOutputs('n', d)\nlogging.x()\nstyle()\n"
    assert cell_problems(setup, []) == []
    assert cell_problems(setup + "config = f()\nmore()\n", []) == []
    assert cell_problems(setup + "a()\nb()\nc()\n", []) == ["set-up cell with 6 statements besides imports (limit 5)"]
    exercise = (
        f"def f(x):\n    return None  {EXERCISE_MARK}\n\nresult = f(1)\ncaught = None\ncheck(f, result, caught)\n"
    )
    assert cell_problems(exercise, []) == []
    assert cell_problems(exercise.replace(EXERCISE_MARK, "# a comment"), []) != []
    parameters = "".join(f"p{i} = {i}  # a comment\n" for i in range(31)) + "# only a comment\n\n"
    assert cell_problems(parameters, ["parameters"]) == ["parameters cell of 31 parameters (limit 30)"]
    wrapped = "".join(f"p{i} = {i}\n" for i in range(29)) + 'm = {"a": [1, 2],\n     "b": 3}\n'
    assert cell_problems(wrapped, ["parameters"]) == []  # 30 parameters over 31 lines
    assert cell_problems(parameters, []) != []  # outside the parameters cell, 31 statements


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_thin(path):
    limit = LAB_LIMIT if path.stem in LAB_NOTEBOOKS else STUDY_LIMIT
    total = sum(code_lines(cell) for cell in code_cells(path))
    assert total < limit, f"{path.name}: {total} code lines, the limit is {limit}: move logic into pate_study/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_definitions_outside_exercise_cells(path):
    defining = [
        cell.splitlines()[0]
        for cell in code_cells(path)
        if re.search(r"^\s*(def|class) ", cell, re.M) and EXERCISE_MARK not in cell
    ]
    assert not defining, (
        f"{path.name} defines functions or classes in cells starting {defining}: put them in the package"
    )


def test_counting_rules_on_a_toy_notebook(tmp_path):
    """The counters themselves: comments and blanks are not code; an exercise cell may define."""
    cells = ["# a comment\n\nx = 1\ny = 2\n", "def f():\n    return 1  # your code\n", "def g():\n    pass\n"]
    path = tmp_path / "toy.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": c} for c in cells]}))
    assert [code_lines(c) for c in code_cells(path)] == [2, 2, 2]
    assert [bool(re.search(r"^\s*(def|class) ", c, re.M)) and EXERCISE_MARK not in c for c in code_cells(path)] == [
        False,
        False,
        True,
    ]


def project_sources() -> list[Path]:
    roots = ("pate_study", "data_recipes", "tests", "benchmarks")
    return [p for root in roots for p in sorted((REPO / root).rglob("*.py"))] + NOTEBOOKS


def matches_in_sources(pattern: re.Pattern) -> list[str]:
    """``path: match`` for every match of ``pattern`` in the project's sources (this file left out: it names them)."""
    return [
        f"{p.relative_to(REPO)}: {m.group(0)}"
        for p in project_sources()
        if p.name != Path(__file__).name
        for m in pattern.finditer(p.read_text(encoding="utf-8"))
    ]


def test_no_issue_tracker_references():
    found = matches_in_sources(ISSUE_REFERENCE)
    assert not found, "cite the source or the reason, not the issue tracker:\n" + "\n".join(found)


def test_no_reference_a_reader_cannot_open():
    found = matches_in_sources(UNOPENABLE_REFERENCE)
    assert not found, "cite the paper or thesis by section, or a file in the repository:\n" + "\n".join(found)


def test_unopenable_reference_pattern():
    for text in ("notes §9.2 item 8", "see notes/sosa2021-web-requests.md", "seed 004, §4.2.3"):
        assert UNOPENABLE_REFERENCE.search(text), text
    for text in ("Muschiol 2021 §4.2.3", "release notes", "seed 0 of the run", "notes=''", "notes/mine.md"):
        assert not UNOPENABLE_REFERENCE.search(text), text


def architecture_page_modules(page: str) -> set[str]:
    """The module paths named by the one-line-per-module block of docs/architecture.md: a line whose first word
    ends in ``/`` opens a folder at its indentation (two spaces a level); every ``*.py`` on a line belongs to the
    folder it opens, or else to the innermost folder above it."""
    block = page.split("One line per module:", 1)[1].split("```", 2)[1]
    folders: list[tuple[int, str]] = []
    named: set[str] = set()
    for line in block.splitlines():
        words = line.split()
        if not words:
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        folders = [(d, f) for d, f in folders if d < depth]
        if words[0].endswith("/"):
            folders.append((depth, words[0]))
        prefix = "".join(f for _, f in folders)
        named |= {prefix + w.rstrip(":,") for w in words if re.fullmatch(r"[\w]+\.py[:,]?", w)}
    return named


def test_architecture_page_names_every_module_by_its_path():
    """docs/architecture.md has one line per module, found by its path (a bare file name such as ``figures.py`` is
    shared by several modules): a module added without a line there fails here, and so does a line for a module
    that no longer exists."""
    named = architecture_page_modules((REPO / "docs" / "architecture.md").read_text(encoding="utf-8"))
    existing = {
        str(p.relative_to(REPO))
        for root in ("pate_study", "data_recipes")
        for p in (REPO / root).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    modules = {m for m in existing if not m.endswith("__init__.py")}
    assert not modules - named, "add a line to docs/architecture.md for: " + ", ".join(sorted(modules - named))
    assert not named - existing, "docs/architecture.md names modules that do not exist: " + ", ".join(
        sorted(named - existing)
    )


def test_architecture_page_parser_reads_nested_folders():
    page = (
        "One line per module:\n\n```\npkg/\n  a.py b.py   two\n  sub/  c.py: with the folder\n"
        "    d.py  deeper\n  e.py\n```\n"
    )
    assert architecture_page_modules(page) == {"pkg/a.py", "pkg/b.py", "pkg/sub/c.py", "pkg/sub/d.py", "pkg/e.py"}


#: an absolute path of one machine: a home, root's home, a temporary or a work folder (``/tmp/x``, ``/work/x``, ...)
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:tmp|work|root|home|Users|mnt|scratch)/[\w.-]+")
#: committed files that are not text a reader reads (figures, arrays)
BINARY_SUFFIXES = {".png", ".pdf", ".npy", ".npz", ".gz", ".zip", ".jpg", ".jpeg", ".svg", ".pt", ".pkl"}


def committed_text_files(repo: Path) -> list[Path]:
    """Every file git tracks that a reader opens as text (README, docs, code, configs, executed notebooks with
    their outputs, tables); without git (an unpacked archive), every file outside caches, builds and venvs."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
        files = [repo / name for name in listed.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        skipped = {".git", ".venv", ".venv-lab", ".cache", "build", "data", "__pycache__", "smoke", ".pytest_cache"}
        files = [p for p in repo.rglob("*") if not skipped & set(p.relative_to(repo).parts)]
    this_file = Path(__file__).resolve()
    return sorted(
        p for p in files if p.is_file() and p.suffix.lower() not in BINARY_SUFFIXES and p.resolve() != this_file
    )


def machine_paths(text: str) -> list[str]:
    return MACHINE_PATH.findall(text)


def test_machine_path_pattern_finds_paths_and_spares_ordinary_text():
    assert machine_paths("see /tmp/fc29/pate_study/x.py:3 and PATE_STUDY_MIRROR=/work/shared/datasets") == [
        "/tmp/fc29",
        "/work/shared",
    ]
    assert machine_paths("cd ~/work/pate; ../shared/docs; https://example.org/home/page; a/tmp/b; $TMPDIR/x") == []


def test_no_absolute_machine_path_in_committed_text():
    """Docs, code, configs, tables and executed notebooks (warnings included) name no folder of one machine: a
    reader's machine has none of them. Write ``<checkout>``, ``<mirror>``, ``$(mktemp -d)`` or a relative path."""
    found = [
        f"{p.relative_to(REPO)}: {hit}"
        for p in committed_text_files(REPO)
        for hit in machine_paths(p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, "absolute machine paths:\n" + "\n".join(found[:40])
