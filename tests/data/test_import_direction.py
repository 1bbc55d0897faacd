"""Imports go one way: ``pate_study`` may import ``data_recipes`` (the file-level primitives live there), never
the reverse; no module of either imports another module's private (underscore) name; imports inside functions
in ``data_recipes`` are only the heavy or optional ones, each with a comment saying why."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted((REPO / "data_recipes").rglob("*.py"))


def _imports(path: Path):
    """(module imported, names imported, line, inside a function) for every import statement of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno, id(node) in in_function
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            yield base, [a.name for a in node.names], node.lineno, id(node) in in_function


def test_the_walker_sees_relative_and_absolute_imports():
    found = {module for module, *_ in _imports(REPO / "data_recipes" / "framework.py")}
    assert "data_recipes.files" in found and "hashlib" in found


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_data_recipes_import_nothing_from_pate_study(path):
    bad = [f"{path.name}:{line} imports {module}" for module, _, line, _ in _imports(path)
           if module == "pate_study" or module.startswith("pate_study.")]
    assert not bad, bad


@pytest.mark.parametrize("path", RECIPES + sorted((REPO / "pate_study").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(REPO)))
def test_no_private_name_imported_from_another_package(path):
    """``from X import _name`` across the two packages' boundaries (a private name of data_recipes in pate_study or
    of pate_study in data_recipes) would tie one to the other's internals."""
    own = path.relative_to(REPO).parts[0]
    bad = [f"{line}: from {module} import {name}" for module, names, line, _ in _imports(path)
           for name in names if name.startswith("_") and not name.startswith("__")
           and module.split(".")[0] in ("pate_study", "data_recipes") and module.split(".")[0] != own]
    assert not bad, bad


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_imports_inside_recipe_functions_are_heavy_or_optional_and_say_so(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    bad = [f"{path.name}:{line}: {lines[line - 1].strip()}" for _, _, line, inside in _imports(path)
           if inside and "#" not in lines[line - 1]]
    assert not bad, bad
