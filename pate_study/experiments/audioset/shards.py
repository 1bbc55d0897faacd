"""The units a cluster runs: one shard of an ensemble, of the log-Mel CNN teachers, or one Table 5.4 student.

Each unit is a module-level function of plain, picklable data (arrays, numbers, strings, a frozen
:class:`~.teachers.TeacherSpec`) that returns plain data (nested dicts of arrays, numbers and strings: what
:func:`pate_study.learning.distributed.map_shards` caches and Ray ships back), so it runs the same in this process and
in a Ray worker. :mod:`.pipeline` plans the shards and picks the backend; the functions here only compute one shard
and put the shards' results back together (:func:`assemble_run`).

Determinism: shard ``k`` of a plan trains its teachers' partitions (cut from the partitions drawn before
scheduling) with :func:`pate_study.learning.distributed.shard_seed` -- ``seed`` itself when there is one shard, so one
shard reproduces the local result exactly. With several shards the teachers of a shard are one stack (dropout masks come
from one generator per stack), so results depend on the shard plan and on nothing else: not the backend, not the
number of workers, not finishing order. Each shard also draws its own ``curve_clips`` eval sample for the training
curves (final scores use every eval clip).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.students import train_student
from pate_study.experiments.audioset.teachers import TeacherRun, TeacherSpec, train_logmel_teachers, train_teachers
from pate_study.learning import distributed
from pate_study.learning.partitions import Partitions


def shard_plan(n_teachers: int, teachers_per_task: int | None, seed: int) -> list[tuple[range, int]]:
    """The shard plan: (teacher range, shard seed) per shard, fixed before anything is scheduled."""
    ranges = distributed.shard_ranges(n_teachers, teachers_per_task)
    return [(r, distributed.shard_seed(seed, k, len(ranges))) for k, r in enumerate(ranges)]


def history_state(h: pd.DataFrame) -> dict[str, Any]:
    """A per-teacher table (training history, weight trace) as plain columns (what the cache can hold)."""
    return {
        c: (h[c].to_numpy() if pd.api.types.is_numeric_dtype(h[c]) else h[c].astype(str).tolist()) for c in h.columns
    }


def by_teacher(tables: Sequence[dict], plan: Sequence[tuple[range, int]]) -> pd.DataFrame:
    """The shards' per-teacher tables (columns as plain arrays) as one, each shard's ``teacher`` ids offset to the
    ensemble's."""
    frames = [pd.DataFrame(t).assign(teacher=lambda f, a=r.start: f["teacher"] + a) for (r, _), t in zip(plan, tables)]
    return pd.concat(frames, ignore_index=True)


def run_state(run: TeacherRun) -> dict[str, Any]:
    """A :class:`~.teachers.TeacherRun` as plain data (the spec and name stay with the caller)."""
    return {
        "history": history_state(run.history),
        "best_step": run.best_step,
        "map": run.map,
        "auc": run.auc,
        "class_ap": run.class_ap,
        "probabilities": run.probabilities,
        "train_counts": run.train_counts,
        "seconds": run.seconds,
        "weight_trace": None if run.weight_trace is None else history_state(run.weight_trace),
    }


def assemble_run(name: str, spec: TeacherSpec, parts: Sequence[dict], plan: Sequence[tuple[range, int]]) -> TeacherRun:
    """One :class:`~.teachers.TeacherRun` from the shards' :func:`run_state` results, in teacher order."""

    def cat(k):
        return np.concatenate([p[k] for p in parts])

    traces = None  # adaptive class weights (Fig 5.11): per-teacher rows, like the histories
    if all(p.get("weight_trace") is not None for p in parts):
        traces = by_teacher([p["weight_trace"] for p in parts], plan)
    return TeacherRun(
        name,
        int(plan[-1][0].stop),
        spec,
        by_teacher([p["history"] for p in parts], plan),
        cat("best_step"),
        cat("map"),
        cat("auc"),
        cat("class_ap"),
        cat("probabilities"),
        cat("train_counts"),
        float(sum(p["seconds"] for p in parts)),
        traces,
    )


def teacher_run_shard(
    X: np.ndarray,
    Y: np.ndarray,
    val: np.ndarray,
    X_test: np.ndarray,
    Y_test: np.ndarray,
    spec: TeacherSpec,
    train_rows: np.ndarray,
    seed: int,
    curve_clips: int,
    name: str,
    last: bool,
    device: str | None = None,
    val_rows: np.ndarray | None = None,
    train_seeds: np.ndarray | None = None,
) -> dict[str, Any]:
    """One shard of an ensemble: :func:`~.teachers.train_teachers` on the shard's partitions, as plain data.
    Replicate ensembles stacked (:class:`.pipeline.ReplicateStack`): the shard's own validation rows ``val_rows``
    (one row per teacher, instead of the shared ``val``) and its teachers' ``train_seeds``."""
    run = train_teachers(
        X,
        Y,
        Partitions(np.asarray(train_rows)),
        val if val_rows is None else val_rows,
        X_test,
        Y_test,
        spec,
        seed=seed,
        curve_clips=curve_clips,
        name=name,
        last=last,
        device=device,
        train_seeds=train_seeds,
    )
    return run_state(run)


def rows_of(X: Any, rows: np.ndarray) -> np.ndarray:
    """``X[rows]`` as an in-memory float32 array; ``X`` may be a path of a ``.npy`` on shared storage (memory-mapped:
    only these rows are read)."""
    if isinstance(X, (str, os.PathLike)):
        X = np.load(X, mmap_mode="r")
    return np.asarray(X[rows], dtype=np.float32)


def logmel_shard(
    architecture: str,
    X: Any,
    Y: np.ndarray,
    val: np.ndarray,
    X_test: Any,
    Y_test: np.ndarray,
    spec: TeacherSpec,
    width_scale: int,
    head: Any,
    weights: Any,
    device: str | None,
    train_rows: np.ndarray,
    seed: int,
    speed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One shard of :func:`~.teachers.train_logmel_teachers` on only the rows the shard needs (its partitions and
    the validation rows; indices remapped, so batches and results are unchanged); ``speed``: its speed options
    (:func:`~.teachers.cnn_speed_options`)."""
    train_rows, val = np.asarray(train_rows, np.int64), np.asarray(val, np.int64)
    rows = np.unique(np.concatenate([train_rows.ravel(), val]))
    test = rows_of(X_test, np.arange(len(Y_test)))
    history, stamp, seconds = train_logmel_teachers(
        architecture,
        rows_of(X, rows),
        np.asarray(Y)[rows],
        Partitions(np.searchsorted(rows, train_rows)),
        np.searchsorted(rows, val),
        test,
        Y_test,
        spec,
        width_scale=width_scale,
        head=None if head is None else tuple(head),
        weights=weights,
        seed=seed,
        device=device,
        **(speed or {}),
    )
    return {"history": history_state(history), "stamp": stamp, "seconds": seconds}


def student_point(
    pool_features: np.ndarray,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    spec: TeacherSpec,
    seeds: Sequence[int],
    name: str,
    labels: np.ndarray,
    answered: np.ndarray,
) -> list[dict[str, Any]]:
    """The students of one Table 5.4 / frontier point: :func:`~.students.train_student` on the released labels of the
    answered queries, one per student seed of ``seeds`` (one stacked call; the same students in every process and on
    every backend)."""
    return train_student(
        pool_features[: len(labels)], labels, answered, test_features, test_labels, spec, seeds=seeds, name=name
    )
