"""The linter, as configured in pyproject.toml's ``[tool.ruff]``, finds nothing in the package, the data recipes, the
tests, the benchmarks, the notebooks or the instructors' material: a finding is fixed, or justified in the
configuration or by a ``noqa`` with its reason on the same line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: a ``noqa`` that names its codes and then says nothing more
BARE_NOQA = re.compile(r"#\s*noqa(?::\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)?\s*$")


def test_ruff_finds_nothing():
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_noqa_says_why():
    sources = [p for root in ("pate_study", "data_recipes", "tests", "benchmarks") for p in (REPO / root).rglob("*.py")]
    bare = [
        f"{p.relative_to(REPO)}:{i}"
        for p in sources
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if BARE_NOQA.search(line)
    ]
    assert not bare, "a noqa without its reason on the line:\n" + "\n".join(bare)


def test_the_bare_noqa_pattern():
    assert BARE_NOQA.search("x = 1  # noqa: E731")
    assert BARE_NOQA.search("x = 1  # noqa")
    assert not BARE_NOQA.search("import a  # noqa: F401 - the exercise cells call it")
