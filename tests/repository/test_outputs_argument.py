"""One position for a notebook's outputs: every function of the package that takes the notebook's
:class:`~pate_study.reporting.outputs.NotebookOutputs` takes it as its last parameter (a section of only keywords
takes it as its last keyword), so a reader never looks for it."""

from __future__ import annotations

import ast

from pate_study.core.paths import REPO_ROOT


def _outputs_parameters(function: ast.FunctionDef) -> list[str]:
    every = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    return [a.arg for a in every if a.annotation is not None and "NotebookOutputs" in ast.unparse(a.annotation)]


def misplaced(source: str) -> list[str]:
    """The functions of ``source`` whose NotebookOutputs parameter is not their last one (by name and line)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef) or not _outputs_parameters(node):
            continue
        positional = [a.arg for a in node.args.posonlyargs + node.args.args]
        keywords = [a.arg for a in node.args.kwonlyargs]
        (name,) = _outputs_parameters(node)
        if name != (keywords[-1] if name in keywords else positional[-1]):
            found.append(f"{node.name}:{node.lineno}")
    return found


def test_the_notebook_outputs_are_every_functions_last_parameter():
    found = {
        str(path.relative_to(REPO_ROOT)): misplaced(path.read_text(encoding="utf-8"))
        for path in sorted((REPO_ROOT / "pate_study").rglob("*.py"))
    }
    assert {path: names for path, names in found.items() if names} == {}


def test_the_rule_takes_the_last_positional_or_keyword_and_refuses_one_first():
    source = (
        "def a(study, out: NotebookOutputs, *, data): ...\n"
        "def b(*, n=1, out: NotebookOutputs): ...\n"
        "def c(out: NotebookOutputs, fig): ...\n"
        "def d(*, out: NotebookOutputs, n=1): ...\n"
    )
    assert misplaced(source) == ["c:3", "d:4"]
