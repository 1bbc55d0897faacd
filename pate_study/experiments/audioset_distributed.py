"""The Audio Set studies on a cluster: teacher shards and student sweeps through :mod:`pate_study.learning.distributed`.

Three entry points, each with ``backend="local"`` (in this process) or ``"ray"`` and ``teachers_per_task``
(teachers trained together as one stacked computation in one task; None: all of them in one task):

* :func:`train_teachers_sharded` -- notebook 04's ensembles (:func:`audioset_teachers.train_teachers`
  delegates here when its ``backend`` is not "local" or ``teachers_per_task`` is set), and
  :func:`train_logmel_teachers_sharded` its log-Mel CNN teachers (the GPU path; one GPU per task; the clips
  may be a path on shared storage, each task reads only its rows);
* :func:`sharded_teacher_probabilities` -- notebook 05's per-teacher probabilities on the query pool
  (:func:`audioset_multilabel_learning.teacher_probabilities` delegates here likewise; each teacher keeps its
  own seed there, so every plan gives the local result);
* :func:`student_sweep` -- notebook 05's Table 5.4 students, one task per (n, th_e, th_c) point.

Determinism: shard ``k`` of a plan trains its teachers' partitions (cut from the partitions drawn before
scheduling) with :func:`pate_study.learning.distributed.shard_seed` -- ``seed`` itself when there is one shard, so
``teachers_per_task=None`` on Ray reproduces the local result exactly. With several shards the teachers of a
shard are one stack (dropout masks come from one generator per stack), so results depend on the shard plan
(``teachers_per_task``) and on nothing else: not the backend, not the number of workers, not finishing order.
In notebook 04 each shard also draws its own ``curve_clips`` eval sample for the training curves (final
scores use every eval clip).
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.core import cache
from pate_study.learning import distributed

logger = logging.getLogger(__name__)

__all__ = ["train_teachers_sharded", "train_logmel_teachers_sharded", "sharded_teacher_probabilities", "released_labels", "train_students", "student_sweep"]


def _plan(n_teachers: int, teachers_per_task: int | None, seed: int) -> list[tuple[range, int]]:
    """The shard plan: (teacher range, shard seed) per shard, fixed before anything is scheduled."""
    ranges = distributed.shard_ranges(n_teachers, teachers_per_task)
    return [(r, distributed.shard_seed(seed, k, len(ranges))) for k, r in enumerate(ranges)]


def _teacher_shards(partitions, teachers_per_task: int | None, seed: int, data_key: str, device: str,
                    label: str) -> tuple[list[tuple[range, int]], list]:
    """The plan and one :class:`pate_study.learning.distributed.Shard` per entry: the shard's training partitions and seed,
    cached under (``data_key``, partitions, seed) on the resolved ``device`` (:mod:`pate_study.core.cache`)."""
    plan = _plan(partitions.n_teachers, teachers_per_task, seed)
    shards = [distributed.Shard(f"{label} {r.start}-{r.stop - 1}",
                                {"train_rows": partitions.train[r.start:r.stop], "seed": s}, units=len(r),
                                key=cache.cache_key("shard", device=device, data=data_key,
                                                    train_rows=partitions.train[r.start:r.stop], seed=s))
              for r, s in plan]
    return plan, shards


def _spec_dict(spec) -> dict[str, Any]:
    """A :class:`audioset_teachers.TeacherSpec` as plain values (hashable, picklable, cacheable)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(spec).items()}


def _identity(value: Any) -> Any:
    """What identifies an input in a cache key: the array itself, or for a path on shared storage its path, size
    and modification time (hashing ~140 GB of clips per run is not an option; replacing the file changes the key)."""
    import os

    if isinstance(value, (str, os.PathLike)):
        st = os.stat(value)
        return {"path": os.path.abspath(value), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    return value


# ----------------------------------------------------------------------------- notebook 04: teacher runs
def teacher_run_shard(X: np.ndarray, Y: np.ndarray, val: np.ndarray, X_test: np.ndarray, Y_test: np.ndarray,
                      spec: dict, train_rows: np.ndarray, seed: int, curve_clips: int, name: str,
                      last: bool, device: str | None = None) -> dict[str, Any]:
    """One shard of :func:`audioset_teachers.train_teachers` (its local path on the shard's partitions)."""
    from pate_study.learning.partitions import Partitions
    from pate_study.experiments import audioset_teachers as at

    run = at.train_teachers(X, Y, Partitions(np.asarray(train_rows)), val, X_test, Y_test, at.TeacherSpec(**spec),
                            seed=seed, curve_clips=curve_clips, name=name, last=last, device=device)
    return {"history": _history_state(run.history), "best_step": run.best_step, "map": run.map, "auc": run.auc, "class_ap": run.class_ap, "probs0": run.probs0,
            "train_counts": run.train_counts, "seconds": run.seconds,
            "weight_trace": None if run.weight_trace is None else
            {c: run.weight_trace[c].to_numpy() for c in run.weight_trace.columns}}


def train_teachers_sharded(X: np.ndarray, Y: np.ndarray, partitions, val: np.ndarray, X_test: np.ndarray,
                           Y_test: np.ndarray, spec, *, seed: int = 0, curve_clips: int = 2000, name: str = "",
                           last: bool = False, device: str | None = None, backend: str = "ray",
                           teachers_per_task: int | None = None, address: str | None = None, cache_dir: Any = None,
                           progress: bool = True):
    """:func:`audioset_teachers.train_teachers` with its teachers cut into shards of ``teachers_per_task``,
    each trained (and cached) as one task; the per-teacher results assembled in teacher order."""
    from pate_study.experiments.audioset_teachers import TeacherRun

    shared = {"X": X, "Y": Y, "val": np.asarray(val, np.int64), "X_test": X_test, "Y_test": Y_test,
              "spec": _spec_dict(spec), "curve_clips": int(curve_clips), "name": name, "last": bool(last)}
    where = cache.resolved_device(device, backend)
    data_key = cache.cache_key("shard data", device=where, **{k: v for k, v in shared.items() if k != "name"},
                               method="audioset_teachers.train_teachers shard")
    plan, shards = _teacher_shards(partitions, teachers_per_task, seed, data_key, where, name or "teachers")
    parts = distributed.map_shards(teacher_run_shard, shards, shared={**shared, "device": device}, backend=backend,
                                   address=address, device=device, cache_dir=cache_dir,
                                   desc=f"train {name or 'teachers'}", progress=progress)
    cat = lambda k: np.concatenate([p[k] for p in parts])  # noqa: E731
    traces = None  # adaptive class weights (Fig 5.11): per-teacher rows, like the histories
    if all(p.get("weight_trace") is not None for p in parts):
        traces = _by_teacher([p["weight_trace"] for p in parts], plan)
    return TeacherRun(name, partitions.n_teachers, spec, _by_teacher([p["history"] for p in parts], plan),
                      cat("best_step"),
                      cat("map"), cat("auc"), cat("class_ap"), parts[0]["probs0"], cat("train_counts"),
                      float(sum(p["seconds"] for p in parts)), traces)


# ----------------------------------------------------------------------------- notebook 04: log-Mel CNN teachers
def _history_state(h: pd.DataFrame) -> dict[str, Any]:
    """A training history as plain columns (what the cache can hold)."""
    return {"step": h["step"].to_numpy(np.int64), "teacher": h["teacher"].to_numpy(np.int64),
            "split": h["split"].astype(str).tolist(), "metric": h["metric"].astype(str).tolist(),
            "value": h["value"].to_numpy(np.float64)}


def _by_teacher(tables: Sequence[dict], plan: Sequence[tuple[range, int]]) -> pd.DataFrame:
    """The shards' per-teacher tables (histories, weight traces; columns as plain arrays) as one, each shard's
    ``teacher`` ids offset to the ensemble's."""
    frames = [pd.DataFrame(t).assign(teacher=lambda f, a=r.start: f["teacher"] + a) for (r, _), t in zip(plan, tables)]
    return pd.concat(frames, ignore_index=True)


def _rows_of(X: Any, rows: np.ndarray) -> np.ndarray:
    """``X[rows]`` as an in-memory float32 array; ``X`` may be a path of a ``.npy`` on shared storage (memory-mapped:
    only these rows are read)."""
    import os

    if isinstance(X, (str, os.PathLike)):
        X = np.load(X, mmap_mode="r")
    return np.asarray(X[rows], dtype=np.float32)


def logmel_shard(architecture: str, X: Any, Y: np.ndarray, val: np.ndarray, X_test: Any, Y_test: np.ndarray,
                 spec: dict, width_scale: int, head: Any, weights: Any, device: str | None, train_rows: np.ndarray,
                 seed: int) -> dict[str, Any]:
    """One shard of :func:`audioset_teachers.train_logmel_teachers` (its local path) on only the rows the shard
    needs (its partitions and the validation rows; indices remapped, so batches and results are unchanged)."""
    from pate_study.learning.partitions import Partitions
    from pate_study.experiments import audioset_teachers as at

    train_rows, val = np.asarray(train_rows, np.int64), np.asarray(val, np.int64)
    rows = np.unique(np.concatenate([train_rows.ravel(), val]))
    test = _rows_of(X_test, np.arange(len(Y_test)))
    history, stamp, seconds = at.train_logmel_teachers(
        architecture, _rows_of(X, rows), np.asarray(Y)[rows], Partitions(np.searchsorted(rows, train_rows)),
        np.searchsorted(rows, val), test, Y_test, at.TeacherSpec(**spec), width_scale=width_scale,
        head=None if head is None else tuple(head), weights=weights, seed=seed, device=device)
    return {"history": _history_state(history), "stamp": stamp, "seconds": seconds}


def train_logmel_teachers_sharded(architecture: str, X: Any, Y: np.ndarray, partitions, val: np.ndarray, X_test: Any,
                                  Y_test: np.ndarray, spec, *, width_scale: int = 1, head: Any = None,
                                  weights: Any = None, seed: int = 0, device: str | None = None, backend: str = "ray",
                                  teachers_per_task: int | None = None, address: str | None = None,
                                  cache_dir: Any = None, progress: bool = True) -> tuple[pd.DataFrame, str, float]:
    """:func:`audioset_teachers.train_logmel_teachers` in shards of ``teachers_per_task`` teachers, one task each
    (one GPU when ``device="cuda"``). ``X`` / ``X_test``: arrays (through the object store) or paths of ``.npy``
    files every node can read (each task reads only its rows). Returns (history, weights stamp, summed seconds)."""
    shared = {"architecture": architecture, "X": X, "Y": np.asarray(Y), "val": np.asarray(val, np.int64),
              "X_test": X_test, "Y_test": np.asarray(Y_test), "spec": _spec_dict(spec), "width_scale": int(width_scale),
              "head": None if head is None else list(head), "weights": None if weights is None else str(weights),
              "device": device}
    key_parts = {k: _identity(v) if k in ("X", "X_test") else v for k, v in shared.items() if k != "device"}
    where = cache.resolved_device(device, backend)
    data_key = cache.cache_key("shard data", device=where, **key_parts,
                               method="audioset_teachers.train_logmel_teachers shard")
    plan, shards = _teacher_shards(partitions, teachers_per_task, seed, data_key, where, f"{architecture} teachers")
    parts = distributed.map_shards(logmel_shard, shards, shared=shared, backend=backend, address=address,
                                   device=device, cache_dir=cache_dir, desc=f"train {architecture}", progress=progress)
    return _by_teacher([p["history"] for p in parts], plan), parts[0]["stamp"], float(sum(p["seconds"] for p in parts))


# ----------------------------------------------------------------------------- notebook 05: query-pool probabilities
def probability_shard(X: np.ndarray, Y: np.ndarray, train: np.ndarray, val: np.ndarray, queries: np.ndarray,
                      query_labels: np.ndarray, spec: dict, curve_clips: int, name: str, teachers: list[int],
                      seeds: list[int]) -> list[tuple[np.ndarray, int]]:
    """Teachers ``teachers`` of notebook 05's ensemble, one after another, each by
    :func:`audioset_multilabel_learning.one_teacher_probabilities` with its own seed (the local unit)."""
    from pate_study.experiments import audioset_teachers as at
    from pate_study.experiments.audioset_multilabel_learning import one_teacher_probabilities

    return [one_teacher_probabilities(X, Y, train[i], val, queries, query_labels, at.TeacherSpec(**spec), seed=s,
                                      curve_clips=curve_clips, name=f"{name} teacher {i}")
            for i, s in zip(teachers, seeds)]


def sharded_teacher_probabilities(X: np.ndarray, Y: np.ndarray, train: np.ndarray, val: np.ndarray,
                                  queries: np.ndarray, query_labels: np.ndarray, spec, *, seeds: Sequence[int],
                                  curve_clips: int = 100, name: str = "", backend: str = "ray",
                                  teachers_per_task: int | None = None, address: str | None = None,
                                  cache_dir: Any = None, progress: bool = True) -> list[tuple[np.ndarray, int]]:
    """Notebook 05's per-teacher ``(probabilities, selected step)`` with the teachers in tasks of
    ``teachers_per_task`` (None: one task); each teacher keeps the seed given in ``seeds``, so the result equals
    the local loop's whatever the plan. Every shard is cached; results come back in teacher order."""
    train = np.asarray(train, dtype=np.int64)
    shared = {"X": X, "Y": Y, "train": train, "val": np.asarray(val, np.int64), "queries": queries,
              "query_labels": query_labels, "spec": _spec_dict(spec), "curve_clips": int(curve_clips), "name": name}
    where = cache.resolved_device(None, backend)  # the probability shards train on the default device
    data_key = cache.cache_key("shard data", device=where, **{k: v for k, v in shared.items() if k != "name"},
                               method="audioset_multilabel_learning.one_teacher_probabilities shard")
    shards = []
    for r in distributed.shard_ranges(train.shape[0], teachers_per_task):
        args = {"teachers": list(r), "seeds": [int(seeds[i]) for i in r]}
        shards.append(distributed.Shard(f"{name or 'teachers'} {r.start}-{r.stop - 1}", args, units=len(r),
                                        key=cache.cache_key("shard", device=where, data=data_key, **args)))
    parts = distributed.map_shards(probability_shard, shards, shared=shared, backend=backend, address=address,
                                   cache_dir=cache_dir, desc=f"{name or 'teachers'} probabilities", progress=progress)
    return [tuple(t) for part in parts for t in part]


# ----------------------------------------------------------------------------- notebook 05: Table 5.4 students
def student_point(pool_features: np.ndarray, test_features: np.ndarray, test_labels: np.ndarray, spec: dict,
                  val_fraction: float, seed: int, name: str, labels: np.ndarray, answered: np.ndarray) -> dict[str, Any]:
    """One sweep point: :func:`audioset_multilabel_learning.train_student` on the released labels of the answered
    queries (seeded: the same student in every process and on every backend)."""
    from pate_study.experiments import audioset_teachers as at
    from pate_study.experiments.audioset_multilabel_learning import train_student

    return train_student(pool_features[:len(labels)], labels, answered, test_features, test_labels,
                         at.TeacherSpec(**spec), val_fraction=val_fraction, seed=seed, name=name)


def released_labels(cv, sizes: Sequence[int], thresholds: Sequence[Any], confidences: Sequence[Any], *,
                    delta: float, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Table 5.4's releases: per (n, th_e, th_c), in loop order, the privacy row of
    :func:`audioset_multilabel.table_5_4_privacy` and the released ``labels`` / ``answered`` mask."""
    from pate_study.experiments.audioset_multilabel import table_5_4_privacy

    privacy, releases = [], []
    for n in sizes:
        for th in thresholds:
            for thc in confidences:
                r = table_5_4_privacy(cv, n, th, thc, delta=delta, seed=seed)
                privacy.append({k: v for k, v in r.items() if k not in ("answered", "labels")})
                releases.append({"labels": r["labels"], "answered": r["answered"]})
    return privacy, releases


def train_students(privacy: Sequence[dict], releases: Sequence[dict], pool_features: np.ndarray,
                   test_features: np.ndarray, test_labels: np.ndarray, spec, *, val_fraction: float = 0.1,
                   seed: int = 0, backend: str = "local", address: str | None = None,
                   progress: bool = False) -> pd.DataFrame:
    """One student per release (one task per point on Ray); rows = privacy row | student scores, in order."""
    shards = [distributed.Shard(f"n={p['n_samples']}, th_e={p['th_e']}, th_c={p['th_c']}",
                                dict(a, name=f"student n={p['n_samples']} th_e={p['th_e']} th_c={p['th_c']}"))
              for p, a in zip(privacy, releases)]
    shared = {"pool_features": pool_features, "test_features": test_features, "test_labels": test_labels,
              "spec": _spec_dict(spec), "val_fraction": float(val_fraction), "seed": seed}
    students = distributed.map_shards(student_point, shards, shared=shared, backend=backend, address=address,
                                      desc="students", progress=progress)
    return pd.DataFrame([p | s for p, s in zip(privacy, students)])


def student_sweep(cv, pool_features: np.ndarray, test_features: np.ndarray, sizes: Sequence[int],
                  thresholds: Sequence[Any], confidences: Sequence[Any], spec, *, delta: float, seed: int = 0,
                  val_fraction: float = 0.1, backend: str = "local", address: str | None = None,
                  progress: bool = False) -> pd.DataFrame:
    """Table 5.4 as notebook 05's cell builds it: the releases and their privacy (:func:`released_labels`,
    in this process) and a student on each (:func:`train_students`, one task per point on Ray)."""
    privacy, releases = released_labels(cv, sizes, thresholds, confidences, delta=delta, seed=seed)
    return train_students(privacy, releases, pool_features, test_features, cv.test_labels, spec,
                          val_fraction=val_fraction, seed=seed, backend=backend, address=address, progress=progress)
