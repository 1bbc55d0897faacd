"""No module of the package is over 800 lines without a reason written at its top: its docstring says, in a
paragraph of its own, why it is "one module of over 800 lines on purpose" (a newcomer reads a large module only
knowing why it was kept whole)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pate_study"
LIMIT = 800
REASON = "One module of over 800 lines on purpose:"


def large_modules(root: Path = PACKAGE) -> list[Path]:
    """The package's modules of more than :data:`LIMIT` lines."""
    return sorted(p for p in root.rglob("*.py") if len(p.read_text(encoding="utf-8").splitlines()) > LIMIT)


def states_a_reason(path: Path) -> bool:
    """Whether the module's docstring holds a paragraph that starts with :data:`REASON`."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return any(paragraph.startswith(REASON) for paragraph in docstring.split("\n\n"))


@pytest.mark.parametrize("path", large_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_large_module_says_why_it_is_one(path):
    assert states_a_reason(path), f"{path.relative_to(PACKAGE)}: over {LIMIT} lines; split it or say why ({REASON})"


def test_the_rule_sees_a_large_module_without_a_reason_and_one_with(tmp_path):
    body = "x = 1\n" * (LIMIT + 1)
    (tmp_path / "bare.py").write_text('"""A module."""\n' + body)
    (tmp_path / "kept.py").write_text(f'"""A module.\n\n{REASON} it is one table."""\n' + body)
    (tmp_path / "small.py").write_text('"""Small."""\nx = 1\n')
    found = large_modules(tmp_path)
    assert [p.name for p in found] == ["bare.py", "kept.py"]
    assert [states_a_reason(p) for p in found] == [False, True]
