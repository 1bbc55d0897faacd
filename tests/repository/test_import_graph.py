"""The import structure the README's architecture section describes, checked on the code itself.

The project's modules are walked with :mod:`ast` (nothing is imported), every import of a project module becomes
an edge, and three rules are checked:

1. no cycle between modules (Tarjan's strongly connected components, via :mod:`graphlib`'s cycle detection);
2. no upward import: each part may import only the parts below it in ``LAYERS``;
3. no import inside a function, except a third-party one marked with a comment on its line saying why (an
   optional dependency such as Ray, or a real import-time cost such as torch in a light module);
4. no module imports another module's private (underscore) name: that would tie it to the other's internals.

This is the project's one import walker; the package-specific rules (only the Audio Set pipeline reaches the
cluster code) read its :func:`graph`.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROJECT_PACKAGES = ("pate_study", "data_recipes")

# A part may import itself and the parts listed for it; a module's part is the longest key prefixing its name.
ALLOWED = {
    "data_recipes": {"data_recipes"},
    "pate_study.core": {"data_recipes"},
    "pate_study.privacy": {"data_recipes", "pate_study.core"},
    "pate_study.data": {"data_recipes", "pate_study.core"},
    "pate_study.learning": {"pate_study.core"},
    "pate_study.reporting": {"pate_study.core"},
    "pate_study.experiments": {
        "pate_study.core",
        "pate_study.privacy",
        "pate_study.data",
        "pate_study.learning",
        "pate_study.reporting",
    },
    "pate_study.tooling": {
        "data_recipes",
        "pate_study.core",
        "pate_study.privacy",
        "pate_study.data",
        "pate_study.learning",
        "pate_study.reporting",
        "pate_study.experiments",
    },
    # the package's __init__ only sets up a Jupyter kernel's display (see its docstring)
    "pate_study": {"pate_study.reporting"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PROJECT_PACKAGES for p in sorted((REPO / package).rglob("*.py"))}


def part_of(module: str) -> str:
    return max((part for part in ALLOWED if module == part or module.startswith(part + ".")), key=len)


def resolve_relative(module: str, path: Path, level: int, target: str | None) -> str:
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - level + 1]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str, path: Path, modules: dict[str, Path]):
    """``(imported module, names taken from it, line, inside a function, has a comment)`` for every import in
    ``path``; ``names`` is empty for ``import x`` and for ``from package import module``."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    in_function.add(id(inner))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(module, path, node.level, node.module) if node.level else node.module
            # "from package import module" imports the module; "from module import name" the module itself
            targets = [
                (f"{base}.{a.name}", "") if f"{base}.{a.name}" in modules else (base, a.name) for a in node.names
            ]
        else:
            continue
        commented = "#" in lines[node.lineno - 1]
        for name, taken in targets:
            yield name, taken, node.lineno, id(node) in in_function, commented


def graph() -> tuple[dict[str, set[str]], list[str], list[str], list[str]]:
    """The project's import edges (module -> modules it imports), and the upward, hidden and private imports."""
    modules = project_modules()
    edges, upward, hidden, private = {m: set() for m in modules}, [], [], []
    for module, path in modules.items():
        for name, taken, line, inside, commented in imports_of(module, path, modules):
            project = name.split(".")[0] in PROJECT_PACKAGES
            where = f"{path.relative_to(REPO)}:{line}"
            if inside and (project or not commented):
                hidden.append(
                    f"{where} imports {name} inside a function" + ("" if project else " without a comment saying why")
                )
            if not project:
                continue
            if taken.startswith("_") and not taken.startswith("__"):
                private.append(f"{where}: from {name} import {taken}")
            target = name if name in modules else name.rsplit(".", 1)[0]
            if target == module or target not in modules:
                continue
            edges[module].add(target)
            source_part, target_part = part_of(module), part_of(target)
            if target_part != source_part and target_part not in ALLOWED[source_part]:
                upward.append(f"{where}: {source_part} imports {target} ({target_part} is not below it)")
    return edges, upward, hidden, private


@pytest.mark.slow
def test_no_import_cycle():
    edges, *_ = graph()
    try:
        tuple(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


@pytest.mark.slow
def test_no_upward_import():
    _, upward, _, _ = graph()
    assert not upward, "\n".join(upward)


@pytest.mark.slow
def test_no_hidden_import_inside_a_function():
    _, _, hidden, _ = graph()
    assert not hidden, "\n".join(hidden)


@pytest.mark.slow
def test_no_private_name_imported_from_another_module():
    *_, private = graph()
    assert not private, "\n".join(private)


@pytest.mark.slow
def test_data_recipes_import_nothing_from_pate_study():
    """The file-level primitives live in data_recipes, which pate_study may import, never the reverse."""
    edges, *_ = graph()
    bad = [
        f"{m} imports {t}"
        for m, targets in edges.items()
        if m.startswith("data_recipes")
        for t in targets
        if t.startswith("pate_study")
    ]
    assert not bad, bad


def test_the_rules_catch_what_they_claim_to(tmp_path, monkeypatch):
    """The checker itself: a cycle, an upward import and a hidden import in a toy tree are all reported."""
    toy = tmp_path / "pate_study"
    (toy / "core").mkdir(parents=True)
    (toy / "learning").mkdir()
    (tmp_path / "data_recipes").mkdir()
    for init in (toy, toy / "core", toy / "learning", tmp_path / "data_recipes"):
        (init / "__init__.py").write_text("")
    (toy / "core" / "a.py").write_text("from ..learning import b\n")
    (toy / "learning" / "b.py").write_text(
        "from ..core import a\nfrom pate_study.core.a import _secret\n\ndef f():\n    import json\n"
    )
    monkeypatch.setattr(__import__(__name__), "REPO", tmp_path)
    edges, upward, hidden, private = graph()
    assert edges["pate_study.learning.b"] == {"pate_study.core.a"}  # relative and absolute imports both seen
    with pytest.raises(graphlib.CycleError):
        tuple(graphlib.TopologicalSorter(edges).static_order())
    assert any("pate_study.core imports pate_study.learning.b" in u for u in upward)
    assert any("json inside a function without a comment" in h for h in hidden)
    assert private == ["pate_study/learning/b.py:2: from pate_study.core.a import _secret"]
