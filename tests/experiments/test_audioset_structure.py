"""The Audio Set package imports in one direction: no cycle between its modules, no import hidden inside a function
(unless a comment on that line says which import-time cost it avoids), no other module's private name, and only
:mod:`pate_study.experiments.audioset.pipeline` reaches the cluster code (:mod:`pate_study.learning.distributed`) to
choose where an ensemble runs. Its units of work (:mod:`~pate_study.experiments.audioset.shards`) pickle."""

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

import pate_study.experiments.audioset as package
from pate_study.experiments.audioset import shards, teachers
from pate_study.learning.partitions import Partitions

ROOT = Path(package.__file__).parent
MODULES = sorted(p.stem for p in ROOT.glob("*.py") if p.stem != "__init__")


def _tree(module: str) -> tuple[ast.Module, list[str]]:
    text = (ROOT / f"{module}.py").read_text()
    return ast.parse(text), text.splitlines()


def _imported_siblings(tree: ast.Module) -> dict[str, list[str]]:
    """Sibling module -> names imported from it (relative imports and absolute ones of this package)."""
    out: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1:
                target = base.split(".")[0] if base else None
            elif base.startswith("pate_study.experiments.audioset."):
                target = base.split(".")[3]
            else:
                continue
            if target is None:  # from . import x
                for a in node.names:
                    out.setdefault(a.name, [])
            else:
                out.setdefault(target, []).extend(a.name for a in node.names)
    return out


def test_modules_import_each_other_without_a_cycle():
    graph = {m: set(_imported_siblings(_tree(m)[0])) & set(MODULES) for m in MODULES}
    state: dict[str, str] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = "open"
        for n in sorted(graph[m]):
            assert state.get(n) != "open", f"import cycle: {' -> '.join(path + [m, n])}"
            if n not in state:
                visit(n, path + [m])
        state[m] = "done"

    for m in MODULES:
        if m not in state:
            visit(m, [])
    # only the notebooks' section modules (the top of the package) may import the pipeline
    above = [m for m in MODULES if not m.endswith("_sections")]
    assert graph["teachers"] <= {"data"} and "pipeline" not in set().union(*(graph[m] for m in above))


@pytest.mark.slow
def test_no_import_inside_a_function_without_its_reason_and_no_private_names():
    for m in MODULES:
        tree, lines = _tree(m)
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        assert "#" in lines[node.lineno - 1], f"{m}.py:{node.lineno}: import inside {fn.name}()"
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_") and a.name != "__future__"]
                assert not private or node.module == "__future__", f"{m}.py:{node.lineno} imports private {private}"


def test_only_the_pipeline_chooses_where_ensembles_run():
    for m in MODULES:
        tree = _tree(m)[0]
        calls_map = any(isinstance(n, ast.Attribute) and n.attr == "map_shards" for n in ast.walk(tree))
        takes_backend = any(
            a.arg == "backend"
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef)
            for a in n.args.args + n.args.kwonlyargs
        )
        assert calls_map == (m == "pipeline"), m
        # votes: the backend is part of the device label; the notebooks' sections hand the parameter on to the pipeline
        assert not takes_backend or m in ("pipeline", "votes") or m.endswith("_sections"), m


def test_a_shard_and_its_result_pickle_and_give_the_local_run():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)).astype(np.float32)
    Y = rng.random((60, 3)) < 0.4
    spec = teachers.TeacherSpec(hidden=(4,), steps=2, eval_every=1, batch_size=8)
    args = dict(
        X=X,
        Y=Y,
        val=np.arange(50, 60),
        X_test=X[:20],
        Y_test=Y[:20],
        spec=spec,
        train_rows=np.arange(40).reshape(2, 20),
        seed=3,
        curve_clips=5,
        name="t",
        last=False,
        device="cpu",
    )
    fn, kwargs = pickle.loads(pickle.dumps((shards.teacher_run_shard, args)))
    result = pickle.loads(pickle.dumps(fn(**kwargs)))
    run = shards.assemble_run("t", spec, [result], shards.shard_plan(2, None, 3))
    local = teachers.train_teachers(
        X,
        Y,
        Partitions(np.arange(40).reshape(2, 20)),
        np.arange(50, 60),
        X[:20],
        Y[:20],
        spec,
        seed=3,
        curve_clips=5,
        name="t",
        device="cpu",
    )
    np.testing.assert_array_equal(run.probabilities, local.probabilities)
    assert run.history.equals(local.history)
