"""The Audio Set studies end to end: ensembles → votes → students. The only module that picks where things run.

One module of over 800 lines on purpose: every choice between this process and Ray (and the shard plans and cache
keys that make both give the same numbers) stays in one place, so no other module needs to know the backend.

Every entry point takes ``backend="local"`` (in this process) or ``"ray"`` and ``teachers_per_task`` (teachers
trained together as one stacked computation in one task; None: all of them in one task). Locally with
``teachers_per_task=None`` an ensemble is one :func:`.teachers.train_teachers` call; otherwise the ensemble is cut
into the shards of :func:`.shards.shard_plan` and mapped by :func:`pate_study.learning.distributed.map_shards` over
:mod:`.shards`' units (every shard cached under a key of :mod:`pate_study.core.cache`).

* :func:`teacher_ensembles` -- notebook 04's ensembles (1 = the single model, 10, 20, 50 per subset), one per
  replicate seed (a notebook's ``teacher_replicates``): the replicate ensembles of a teacher count are ONE stacked
  model (:class:`ReplicateStack`, :func:`train_stack`), each with its own seed, pool split, partitions and training
  seeds; every replicate's votes are stored in the votes cache under its own key (:mod:`.votes`);
* :func:`ensemble_votes` -- notebook 05's votes: the same ensembles (same inputs, recipe and seeds, so the same
  cache keys), read from the cache when notebook 04 trained them, else trained through the same call;
* :func:`replicate_eval_votes` -- for the target procedure: per replicate ensemble, every teacher's vote
  probabilities on any eval clips it asks for, with the replicate seeds, the rows' labels and features (cached:
  the same entries as notebooks 04 and 05; ``replicates=[0]`` is seed 0's single ensemble, the one the notebooks
  reported on before replicates);
* :func:`train_logmel_ensemble` -- notebook 04's log-Mel CNN teachers (the GPU path; one GPU per task on Ray; the
  clips may be a path on shared storage, each task reads only its rows);
* :func:`student_sweep` -- notebook 05's Table 5.4 students, one task per (n, th_e, th_c) point.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.core import cache
from pate_study.data import audioset
from pate_study.experiments.audioset.data import (
    EnsembleInputs,
    first_teachers,
    query_test_split,
    replicate_members,
    replicate_seeds,
)
from pate_study.experiments.audioset.release_frontier import frontier_releases
from pate_study.experiments.audioset.release_privacy import released_labels, sigma_releases
from pate_study.experiments.audioset.shards import (
    assemble_run,
    by_teacher,
    logmel_shard,
    shard_plan,
    student_point,
    teacher_run_shard,
)
from pate_study.experiments.audioset.student_stacks import Release, train_release_students
from pate_study.experiments.audioset.students import seed_summary
from pate_study.experiments.audioset.teachers import (
    TeacherRun,
    TeacherSpec,
    cnn_speed_options,
    train_logmel_teachers,
    train_teachers,
)
from pate_study.experiments.audioset.votes import (
    CachedVotes,
    EnsembleVotes,
    load_votes,
    split_votes,
    store_votes,
    votes_key,
)
from pate_study.learning import distributed
from pate_study.learning.partitions import Partitions
from pate_study.learning.train_config import teacher_seeds

logger = logging.getLogger(__name__)


def _identity(value: Any) -> Any:
    """What identifies an input in a cache key: the array itself, or for a path on shared storage its path, size
    and modification time (hashing ~140 GB of clips per run is not an option; replacing the file changes the key)."""
    if isinstance(value, (str, os.PathLike)):
        st = os.stat(value)
        return {"path": os.path.abspath(value), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    return value


def plan_shards(
    partitions: Any,
    teachers_per_task: int | None,
    seed: int,
    data_key: str,
    device: str,
    label: str,
    per_teacher: dict[str, np.ndarray] | None = None,
) -> tuple[list[tuple[range, int]], list[distributed.Shard]]:
    """The plan and one :class:`pate_study.learning.distributed.Shard` per entry: the shard's training partitions and
    seed, cached under (``data_key``, partitions, seed) on the resolved ``device`` (:mod:`pate_study.core.cache`).
    ``per_teacher``: further arrays with one row per teacher (a replicate stack's validation rows and training
    seeds), cut like the partitions and part of each shard's data and key."""
    plan = shard_plan(partitions.n_teachers, teachers_per_task, seed)
    extra = per_teacher or {}
    shards = []
    for r, s in plan:
        data = {"train_rows": partitions.train[r.start : r.stop], "seed": s}
        data.update({k: np.asarray(v)[r.start : r.stop] for k, v in extra.items()})
        key = cache.cache_key("shard", device=device, data=data_key, **data)
        shards.append(distributed.Shard(f"{label} {r.start}-{r.stop - 1}", data, units=len(r), key=key))
    return plan, shards


# ----------------------------------------------------------------------------- ensembles and their votes
def _train_rows(
    i: EnsembleInputs,
    spec: TeacherSpec,
    *,
    curve_clips: int,
    last: bool,
    device: str | None,
    backend: str,
    teachers_per_task: int | None,
    address: str | None,
    cache_dir: Any,
    progress: bool,
    val_rows: np.ndarray | None = None,
    train_seeds: np.ndarray | None = None,
) -> TeacherRun:
    """One stacked :func:`.teachers.train_teachers` call on ``i`` in this process, or its teachers in shards of
    ``teachers_per_task`` (one task each on Ray), assembled in teacher order. ``val_rows`` / ``train_seeds``: one
    row per teacher (a :class:`ReplicateStack`), else ``i.val`` shared and the seeds of ``i.seed``."""
    if backend == "local" and teachers_per_task is None:
        return train_teachers(
            i.X,
            i.Y,
            i.partitions,
            i.val if val_rows is None else val_rows,
            i.X_test,
            i.Y_test,
            spec,
            seed=i.seed,
            curve_clips=curve_clips,
            name=i.name,
            last=last,
            device=device,
            train_seeds=train_seeds,
        )
    shared = {
        "X": i.X,
        "Y": i.Y,
        "val": np.asarray(i.val, np.int64),
        "X_test": i.X_test,
        "Y_test": i.Y_test,
        "spec": spec,
        "curve_clips": int(curve_clips),
        "name": i.name,
        "last": bool(last),
    }
    where = cache.resolved_device(device, backend)
    data_key = cache.cache_key(
        "shard data",
        device=where,
        **{k: v for k, v in shared.items() if k not in ("name", "spec")},
        spec=repr(spec),
        method="audioset.teachers.train_teachers shard",
    )
    per_teacher = {}
    if val_rows is not None:
        per_teacher["val_rows"] = np.asarray(val_rows, np.int64)
    if train_seeds is not None:
        per_teacher["train_seeds"] = np.asarray(train_seeds, np.uint32)
    plan, shards = plan_shards(
        i.partitions, teachers_per_task, i.seed, data_key, where, i.name or "teachers", per_teacher
    )
    parts = distributed.map_shards(
        teacher_run_shard,
        shards,
        shared={**shared, "device": device},
        backend=backend,
        address=address,
        device=device,
        cache_dir=cache_dir,
        desc=f"train {i.name or 'teachers'}",
        progress=progress,
    )
    return assemble_run(i.name, spec, parts, plan)


def train_ensemble(
    inputs: EnsembleInputs,
    spec: TeacherSpec,
    *,
    curve_clips: int = 2000,
    last: bool = False,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    address: str | None = None,
    cache_dir: Any = None,
    keep_votes: bool = False,
    progress: bool = True,
) -> TeacherRun:
    """One ensemble: one :func:`.teachers.train_teachers` call in this process, or its teachers in shards of
    ``teachers_per_task`` (one task each on Ray), assembled in teacher order. ``keep_votes``: store every
    teacher's probabilities on ``inputs.X_test`` in the votes cache (:func:`.votes.store_votes`, key
    :func:`.votes.votes_key`), where :func:`ensemble_votes` finds them."""
    i = inputs
    run = _train_rows(
        i,
        spec,
        curve_clips=curve_clips,
        last=last,
        device=device,
        backend=backend,
        teachers_per_task=teachers_per_task,
        address=address,
        cache_dir=cache_dir,
        progress=progress,
    )
    if keep_votes:
        key = ensemble_votes_key(
            i,
            spec,
            curve_clips=curve_clips,
            last=last,
            device=device,
            backend=backend,
            teachers_per_task=teachers_per_task,
        )
        store_votes(key, EnsembleVotes(run.probabilities, run.best_step), cache_dir, name=i.name)
    return run


def ensemble_votes_key(inputs: EnsembleInputs, spec: TeacherSpec, **settings: Any) -> str:
    """The votes cache key of the ensemble ``inputs`` describes, trained alone (:func:`.votes.votes_key` of its
    data, partitions, validation rows and seed; ``settings`` the training call's: ``curve_clips``, ``last``,
    ``device``, ``backend``, ``teachers_per_task``). Storing and loading read this one key."""
    i = inputs
    return votes_key(i.X, i.Y, i.partitions, i.val, i.X_test, i.Y_test, spec, seed=i.seed, **settings)


@dataclasses.dataclass(frozen=True)
class ReplicateStack:
    """``G`` replicate ensembles of one subset and teacher count (:func:`.data.replicate_members`: each with its own
    seed, pool split, partitions and training seeds) trained as ONE stacked model of ``G·T`` teachers: the
    partitions laid end to end (replicate ``g`` = teachers ``g·T ... (g+1)·T − 1``), each teacher's own validation
    rows (its replicate's) and training seeds (:func:`pate_study.learning.train_config.teacher_seeds` of its replicate's
    seed, exactly those the ensemble would get trained alone). The stack's dropout stream and curve sample come from
    the first replicate's seed (:class:`pate_study.learning.stacked.StackedMLP`), so a replicate's numbers depend on
    the stack it was trained in; one replicate alone is :func:`train_ensemble`'s ensemble, bit for bit."""

    members: tuple[EnsembleInputs, ...]
    replicate_seeds: tuple[int, ...]

    def __post_init__(self) -> None:
        m = self.members
        if not m or len(self.replicate_seeds) != len(m):
            raise ValueError(
                f"members: expected one replicate ensemble per seed of {self.replicate_seeds}, got {len(m)}"
            )
        shapes = {(x.partitions.train.shape, len(x.val), x.X.shape, x.X_test.shape) for x in m}
        if len(shapes) != 1:
            raise ValueError(f"members: the replicate ensembles must share their shapes, got {sorted(shapes)}")
        if len({x.seed for x in m}) != len(m):
            raise ValueError(f"members: expected one seed per replicate, got {[x.seed for x in m]}")

    @property
    def n_teachers(self) -> int:
        """Teachers per replicate ensemble (T)."""
        return int(self.members[0].partitions.n_teachers)

    @property
    def seeds(self) -> tuple[int, ...]:
        """The replicate seeds (a notebook's ``teacher_replicates["seeds"]``; each member's ensemble seed derives
        from its replicate seed, :func:`.data.run_seed`)."""
        return tuple(int(s) for s in self.replicate_seeds)

    def stacked_inputs(self) -> EnsembleInputs:
        """What the one stacked call trains: the first replicate's inputs with every replicate's partitions."""
        first = self.members[0]
        parts = Partitions(np.concatenate([x.partitions.train for x in self.members]))
        return dataclasses.replace(first, partitions=parts, name=f"{first.name} x {len(self.members)} replicates")

    def val_rows(self) -> np.ndarray:
        """``[G·T, m]``: every teacher's validation rows (its replicate's)."""
        return np.concatenate([np.tile(np.asarray(x.val, np.int64), (self.n_teachers, 1)) for x in self.members])

    def train_seeds(self) -> np.ndarray:
        """``[G·T, 3]``: every teacher's (init, shuffle, dropout) seeds, its replicate's."""
        return np.concatenate([teacher_seeds(x.seed, self.n_teachers) for x in self.members])

    def votes_key(self, g: int, spec: TeacherSpec, **kw: Any) -> str:
        """The votes cache key of replicate ``g`` (:func:`.votes.votes_key`; one replicate alone: the key of
        :func:`train_ensemble`'s ensemble)."""
        if len(self.members) == 1:
            return ensemble_votes_key(self.members[0], spec, **kw)
        i = self.stacked_inputs()
        return votes_key(
            i.X,
            i.Y,
            i.partitions,
            self.val_rows(),
            i.X_test,
            i.Y_test,
            spec,
            seed=i.seed,
            train_seeds=self.train_seeds(),
            replicate=g,
            **kw,
        )


def split_stacked_run(run: TeacherRun, stack: ReplicateStack) -> list[TeacherRun]:
    """The stacked run of ``stack`` cut into its ``G`` replicate ensembles (teacher ids from 0 in each, the
    replicate's own name)."""
    t = stack.n_teachers
    out = []
    for g, member in enumerate(stack.members):
        lo, hi = g * t, (g + 1) * t

        def own(frame: pd.DataFrame | None) -> pd.DataFrame | None:
            if frame is None:
                return None
            keep = frame[(frame["teacher"] >= lo) & (frame["teacher"] < hi)]
            return keep.assign(teacher=keep["teacher"] - lo).reset_index(drop=True)

        out.append(
            dataclasses.replace(
                run,
                name=member.name,
                n_teachers=t,
                history=own(run.history),
                best_step=run.best_step[lo:hi],
                map=run.map[lo:hi],
                auc=run.auc[lo:hi],
                class_ap=run.class_ap[lo:hi],
                probabilities=run.probabilities[lo:hi],
                train_counts=run.train_counts[lo:hi],
                weight_trace=own(run.weight_trace),
                replicate=None,
            )
        )
    return out


def train_stack(
    stack: ReplicateStack,
    spec: TeacherSpec,
    *,
    curve_clips: int = 2000,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    address: str | None = None,
    cache_dir: Any = None,
    keep_votes: bool = False,
    progress: bool = True,
) -> list[TeacherRun]:
    """The replicate ensembles of ``stack``, trained as one stacked model (one replicate: :func:`train_ensemble`),
    one :class:`.teachers.TeacherRun` each. ``keep_votes``: every replicate's probabilities on the eval clips stored
    under its own key (:meth:`ReplicateStack.votes_key`), where :func:`ensemble_votes` and
    :func:`replicate_eval_votes` find them."""
    if len(stack.members) == 1:
        run = train_ensemble(
            stack.members[0],
            spec,
            curve_clips=curve_clips,
            device=device,
            backend=backend,
            teachers_per_task=teachers_per_task,
            address=address,
            cache_dir=cache_dir,
            keep_votes=keep_votes,
            progress=progress,
        )
        return [run]
    run = _train_rows(
        stack.stacked_inputs(),
        spec,
        curve_clips=curve_clips,
        last=False,
        device=device,
        backend=backend,
        teachers_per_task=teachers_per_task,
        address=address,
        cache_dir=cache_dir,
        progress=progress,
        val_rows=stack.val_rows(),
        train_seeds=stack.train_seeds(),
    )
    runs = split_stacked_run(run, stack)
    if keep_votes:
        kw = dict(curve_clips=curve_clips, device=device, backend=backend, teachers_per_task=teachers_per_task)
        for g, r in enumerate(runs):
            store_votes(stack.votes_key(g, spec, **kw), EnsembleVotes(r.probabilities, r.best_step), cache_dir, r.name)
    return runs


def replicate_stack(
    ds: audioset.AudioSetEmbeddings,
    subset: str,
    n_teachers: int,
    seeds: Sequence[int],
    *,
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
) -> ReplicateStack:
    """The :class:`ReplicateStack` of ``subset``'s ``n_teachers``-teacher ensembles, one per seed of ``seeds``
    (:func:`.data.replicate_members`)."""
    members = replicate_members(
        ds, subset, n_teachers, seeds, student_fraction=student_fraction, val_fraction=val_fraction
    )
    return ReplicateStack(tuple(members), tuple(int(s) for s in seeds))


def replicated_seeds(
    seeds: Sequence[int],
    n_teachers: int,
    replicate_counts: Sequence[int] | Mapping[str, Sequence[int]] | None,
    subset: str = "",
) -> tuple[int, ...]:
    """The seeds a teacher count of ``subset`` is trained with: every seed of ``seeds`` when ``n_teachers`` is one of
    ``replicate_counts`` (a list for every subset, or ``{subset: counts}``; None: every count), else the first seed
    only (one ensemble, its seed named as not replicated)."""
    counts = replicate_counts.get(subset, ()) if isinstance(replicate_counts, Mapping) else replicate_counts
    if counts is None or int(n_teachers) in {int(c) for c in counts}:
        return tuple(seeds)
    return tuple(seeds[:1])


def teacher_ensembles(
    datasets: dict[str, audioset.AudioSetEmbeddings],
    spec: TeacherSpec,
    teacher_counts: Sequence[int],
    *,
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
    curve_clips: int = 2000,
    seed: int = 0,
    replicates: Sequence[int] | None = None,
    replicate_counts: Sequence[int] | Mapping[str, Sequence[int]] | None = None,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    cache_dir: Any = None,
) -> tuple[dict[tuple[str, int], list[TeacherRun]], dict[tuple[str, int], list[EnsembleInputs]]]:
    """Notebook 04's ensembles: per subset of ``datasets`` and teacher count, its replicate ensembles (one per seed
    of ``replicates``, :func:`.data.replicate_seeds`; only the first for a count not in ``replicate_counts``,
    :func:`replicated_seeds`), trained as one stacked model (:func:`train_stack`, votes kept for notebook 05).
    Returns ``({(subset, T): [run per replicate]}, {(subset, T): [inputs per replicate]})``."""
    runs, inputs = {}, {}
    seeds = replicate_seeds(replicates, seed)
    for subset, ds in datasets.items():
        for t in teacher_counts:
            stack = replicate_stack(
                ds,
                subset,
                t,
                replicated_seeds(seeds, t, replicate_counts, subset),
                student_fraction=student_fraction,
                val_fraction=val_fraction,
            )
            inputs[subset, t] = list(stack.members)
            runs[subset, t] = train_stack(
                stack,
                spec,
                curve_clips=curve_clips,
                device=device,
                backend=backend,
                teachers_per_task=teachers_per_task,
                cache_dir=cache_dir,
                keep_votes=True,
            )
    return runs, inputs


def stack_votes(
    stack: ReplicateStack,
    spec: TeacherSpec,
    *,
    curve_clips: int = 2000,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    cache_dir: Any = None,
) -> list[EnsembleVotes]:
    """Every replicate's votes on the eval clips from the votes cache, or the stack trained by :func:`train_stack`
    (the call notebook 04 makes, so the same keys) and stored."""
    kw = dict(curve_clips=curve_clips, device=device, backend=backend, teachers_per_task=teachers_per_task)
    t, i = stack.n_teachers, stack.members[0]
    found = [
        load_votes(stack.votes_key(g, spec, **kw), t, len(i.X_test), i.Y.shape[1], cache_dir)
        for g in range(len(stack.members))
    ]
    if all(f is not None for f in found):
        return found
    logger.info("%s: no cached votes (notebook 04 not run with these settings); training the ensembles", i.name)
    runs = train_stack(stack, spec, cache_dir=cache_dir, keep_votes=True, **kw)
    return [EnsembleVotes(r.probabilities, r.best_step) for r in runs]


def cached_ensemble_votes(
    inputs: EnsembleInputs,
    spec: TeacherSpec,
    *,
    curve_clips: int = 2000,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    cache_dir: Any = None,
) -> EnsembleVotes:
    """The ensemble's votes on ``inputs.X_test`` from the votes cache, or trained by :func:`train_ensemble` (the
    call notebook 04 makes, so the same key) and stored."""
    i = inputs
    key = ensemble_votes_key(
        i, spec, curve_clips=curve_clips, device=device, backend=backend, teachers_per_task=teachers_per_task
    )
    found = load_votes(key, i.partitions.n_teachers, len(i.X_test), i.Y.shape[1], cache_dir)
    if found is not None:
        return found
    logger.info("%s: no cached votes (notebook 04 not run with these settings); training the ensemble", i.name)
    run = train_ensemble(
        i,
        spec,
        curve_clips=curve_clips,
        device=device,
        backend=backend,
        teachers_per_task=teachers_per_task,
        cache_dir=cache_dir,
        keep_votes=True,
    )
    return EnsembleVotes(run.probabilities, run.best_step)


def ensemble_votes(
    teacher_counts: Sequence[int],
    spec: TeacherSpec,
    *,
    data: str = "auto",
    subset: str = "big",
    min_pool: int = 5000,
    pool_fraction: float = 0.5,
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
    curve_clips: int = 2000,
    seed: int = 0,
    replicates: Sequence[int] | None = None,
    replicate_counts: Sequence[int] | Mapping[str, Sequence[int]] | None = None,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    cache_dir: Any = None,
) -> tuple[dict[int, list[CachedVotes]], dict]:
    """Notebook 04's ensembles of ``subset`` (1 = the single model on the whole teacher pool, 10, 20, 50), one per
    replicate seed (:func:`teacher_ensembles`' seeds: ``replicates``, ``replicate_counts``), and their
    :class:`.votes.CachedVotes` on the eval clips, cut by :func:`.data.query_test_split` (seeded by ``seed``, the
    same cut for every replicate) into query pool and test set (:func:`stack_votes`: notebook 04's cached votes
    when it ran with the same settings).

    Returns ``({T: [CachedVotes per replicate]}, info)`` with the data description, split sizes, the pool/test
    features, the replicate seeds per teacher count (``replicate_seeds``), the schedule ``steps`` and ``best_step``
    per teacher count (``[G, T]``: the selected step of every teacher of every replicate).
    """
    ds = audioset.load(data, subset=subset, seed=seed)
    ev = ds.splits["eval"]
    pool, test = query_test_split(len(ev.labels), min_pool=min_pool, pool_fraction=pool_fraction, seed=seed)
    label = (
        f"real Audio Set embeddings ({ds.source.description})"
        if ds.source.kind == "real"
        else f"synthetic stand-in for Audio Set ({ds.source.description})"
    )
    seeds = replicate_seeds(replicates, seed)
    out, best_steps, used, first = {}, {}, {}, None
    for t in teacher_counts:
        stack = replicate_stack(
            ds,
            subset,
            t,
            replicated_seeds(seeds, t, replicate_counts, subset),
            student_fraction=student_fraction,
            val_fraction=val_fraction,
        )
        found = stack_votes(
            stack,
            spec,
            curve_clips=curve_clips,
            device=device,
            backend=backend,
            teachers_per_task=teachers_per_task,
            cache_dir=cache_dir,
        )
        first = stack.members[0]
        used[t] = stack.seeds
        best_steps[t] = np.stack([v.best_step for v in found])
        out[t] = [
            split_votes(v, ev.labels, pool, test, m.Y[m.teacher_pool].mean(0), ds.class_names, ds.source.kind)
            for v, m in zip(found, stack.members)
        ]  # each replicate's class prior: the label frequencies of its own teacher pool
    info = {
        "data": label,
        "kind": ds.source.kind,
        "n_labels": ds.splits["bal_train"].labels.shape[1],
        "teacher_pool": None if first is None else len(first.teacher_pool),
        "validation": None if first is None else len(first.val),
        "query_pool": len(pool),
        "test": len(test),
        "pool_index": pool,
        "test_index": test,
        "pool_features": first.X_test[pool] if first else None,
        "test_features": first.X_test[test] if first else None,
        "replicate_seeds": used,
        "steps": {t: spec.steps for t in teacher_counts},
        "best_step": best_steps,
    }
    return out, info


@dataclasses.dataclass(frozen=True)
class ReplicateVotes:
    """The replicate teacher ensembles' votes on requested eval clips (:func:`replicate_eval_votes`):
    ``seeds`` (one per replicate ensemble, in order), ``rows`` (indices into the subset's eval clips),
    ``probabilities`` (one float32 ``[T, len(rows), C]`` per replicate: every teacher at its selected checkpoint),
    ``best_step`` (``[G, T]``), the rows' true ``labels`` ``[len(rows), C]`` and clip ``features``
    ``[len(rows), 128]`` (:func:`.data.clip_features`), the ``class_names``, the data ``kind`` ("real" or
    "synthetic") and its one-line ``stamp``, and each replicate's ``train_label_rate`` ``[G, C]`` (the label
    frequencies of its own teacher pool: the class prior)."""

    seeds: tuple[int, ...]
    rows: np.ndarray
    probabilities: tuple[np.ndarray, ...]
    best_step: np.ndarray
    labels: np.ndarray
    features: np.ndarray
    class_names: tuple[str, ...]
    kind: str
    stamp: str
    train_label_rate: np.ndarray

    @property
    def n_teachers(self) -> int:
        return int(self.probabilities[0].shape[0])


def replicate_eval_votes(
    spec: TeacherSpec,
    replicates: Sequence[int],
    rows: Sequence[int] | None = None,
    *,
    n_teachers: int = 50,
    data: str = "auto",
    subset: str = "big",
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
    curve_clips: int = 2000,
    seed: int = 0,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    cache_dir: Any = None,
) -> ReplicateVotes:
    """Per replicate ensemble (one per seed of ``replicates``: its own pool split, partitions and training seeds,
    :func:`.data.replicate_members`), every teacher's vote probabilities on the eval clips ``rows`` of ``subset``
    (None: all of them, in order), with the rows' labels and features: the teachers of notebooks 04 and 05
    (:func:`teacher_ensembles` with the same recipe ``spec``, ``curve_clips``, ``seed`` (the notebooks' ``seed``:
    it draws the synthetic stand-in) and device settings trains them as one stacked model and caches each
    replicate's votes on every eval clip; read from that cache here, or trained through the same call and stored).
    ``replicates=[0]`` gives seed 0's single ensemble, the one notebooks 04 and 05 reported on before replicates
    (the same cache entry). The eval clips are never read by a teacher's training or checkpoint
    selection, so any split of them (query pool, validation, reporting) may be cut on top.

    How the target procedure uses it (the notebooks' parameters give the recipe and the seeds)::

        spec, _ = release_sections.teacher_recipes(config)              # notebook 05's teacher_* settings
        rv = pipeline.replicate_eval_votes(spec, config.teacher_replicates.seeds, rows, curve_clips=config.curve_clips)
        for seed, probs in zip(rv.seeds, rv.probabilities):              # probs: [T, len(rows), C]
            m = probs.mean(0)                                            # this ensemble's averaged votes
    """
    if n_teachers < 1:
        raise ValueError(f"n_teachers={n_teachers}: expected a positive teacher count")
    seeds = replicate_seeds(replicates, seed)
    ds = audioset.load(data, subset=subset, seed=seed)
    n_eval = len(ds.splits["eval"].labels)
    chosen = np.arange(n_eval) if rows is None else np.asarray(rows, dtype=np.int64)
    if chosen.ndim != 1 or (chosen.size and (chosen.min() < 0 or chosen.max() >= n_eval)):
        raise ValueError(f"rows: expected indices into the {n_eval} eval clips of {subset!r}, got {np.shape(rows)}")
    stack = replicate_stack(ds, subset, n_teachers, seeds, student_fraction=student_fraction, val_fraction=val_fraction)
    found = stack_votes(
        stack,
        spec,
        curve_clips=curve_clips,
        device=device,
        backend=backend,
        teachers_per_task=teachers_per_task,
        cache_dir=cache_dir,
    )
    m = stack.members[0]
    return ReplicateVotes(
        seeds=stack.seeds,
        rows=chosen,
        probabilities=tuple(np.ascontiguousarray(v.probabilities[:, chosen]) for v in found),
        best_step=np.stack([v.best_step for v in found]),
        labels=np.asarray(m.Y_test)[chosen],
        features=m.X_test[chosen],
        class_names=tuple(ds.class_names),
        kind=ds.source.kind,
        stamp=ds.source.stamp(),
        train_label_rate=np.stack([x.Y[x.teacher_pool].mean(0) for x in stack.members]),
    )


# ----------------------------------------------------------------------------- log-Mel CNN teachers
def train_logmel_ensemble(
    architecture: str,
    X: Any,
    Y: np.ndarray,
    partitions: Any,
    val: np.ndarray,
    X_test: Any,
    Y_test: np.ndarray,
    spec: TeacherSpec,
    *,
    width_scale: int = 1,
    head: Any = None,
    weights: Any = None,
    seed: int = 0,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    address: str | None = None,
    cache_dir: Any = None,
    progress: bool = True,
    speed: Any = None,
) -> tuple[pd.DataFrame, str, float]:
    """:func:`.teachers.train_logmel_teachers` in this process, or in shards of ``teachers_per_task`` teachers, one
    task each (one GPU when ``device="cuda"``). ``X`` / ``X_test``: arrays (through the object store) or paths of
    ``.npy`` files every node can read (each task reads only its rows). ``speed``: the CNNs' speed options
    (:func:`.teachers.cnn_speed_options`; part of a shard's cache key, as they change the numbers). Returns
    (history, weights stamp, seconds)."""
    speed = cnn_speed_options(speed)
    if backend == "local" and teachers_per_task is None:
        return train_logmel_teachers(
            architecture,
            X,
            Y,
            partitions,
            val,
            X_test,
            Y_test,
            spec,
            width_scale=width_scale,
            head=head,
            weights=weights,
            seed=seed,
            device=device,
            **speed,
        )
    shared = {
        "architecture": architecture,
        "X": X,
        "Y": np.asarray(Y),
        "val": np.asarray(val, np.int64),
        "X_test": X_test,
        "Y_test": np.asarray(Y_test),
        "spec": spec,
        "width_scale": int(width_scale),
        "head": None if head is None else list(head),
        "weights": None if weights is None else str(weights),
        "device": device,
        "speed": speed,
    }
    key_parts = {
        k: _identity(v) if k in ("X", "X_test") else v
        for k, v in shared.items()
        if k not in ("device", "spec") and not (k == "speed" and not v)
    }  # no options: the keys as before
    where = cache.resolved_device(device, backend)
    data_key = cache.cache_key(
        "shard data", device=where, **key_parts, spec=repr(spec), method="audioset.teachers.train_logmel_teachers shard"
    )
    plan, shards = plan_shards(partitions, teachers_per_task, seed, data_key, where, f"{architecture} teachers")
    parts = distributed.map_shards(
        logmel_shard,
        shards,
        shared=shared,
        backend=backend,
        address=address,
        device=device,
        cache_dir=cache_dir,
        desc=f"train {architecture}",
        progress=progress,
    )
    return by_teacher([p["history"] for p in parts], plan), parts[0]["stamp"], float(sum(p["seconds"] for p in parts))


# ----------------------------------------------------------------------------- notebook 05: Table 5.4 students
def replicate_units(n_ensembles: int, seeds: Sequence[int]) -> list[tuple[int, int]]:
    """The replicate units of a student sweep: ``R = max(G, S)`` units for ``G`` replicate teacher ensembles and the
    ``S`` student seeds of ``seeds``; unit ``r`` releases from ensemble ``r mod G`` with its own release-noise draw
    (release seed ``seed + r``) and trains one student with seed ``seeds[r mod S]``. With as many ensembles as
    seeds every unit is one replicate of all three sources (teachers, release noise, student seed); one ensemble:
    the units replicate the release noise and the student seed, the teachers named as not replicated."""
    if n_ensembles < 1 or len(seeds) < 1:
        raise ValueError(f"n_ensembles={n_ensembles}, seeds={list(seeds)}: expected at least one of each")
    n = max(int(n_ensembles), len(seeds))
    return [(r % int(n_ensembles), int(seeds[r % len(seeds)])) for r in range(n)]


def train_students(
    privacy: Sequence[dict],
    releases: Sequence[dict],
    pool_features: np.ndarray,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    spec: TeacherSpec,
    *,
    seeds: Sequence[int] | None = (0, 1, 2),
    student_seeds: Sequence[int] | None = None,
    keys: Sequence[str] = ("n_samples", "th_e", "th_c"),
    backend: str = "local",
    address: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Students on released labels; rows = privacy row | student scores | seed, release by release. Either one
    student per release and seed of ``seeds``, or, with ``student_seeds`` (one per release), one student per release
    with its own seed (the replicate units of :func:`replicate_units`). In this process every student of the call
    is ONE stacked model (:func:`.student_stacks.train_release_students`); on Ray one task per release."""
    per_release = (
        [[int(s)] for s in student_seeds] if student_seeds is not None else [[int(s) for s in seeds]] * len(releases)
    )
    if not per_release or min(len(x) for x in per_release) < 1 or len(per_release) != len(releases):
        raise ValueError("seeds: expected at least one student seed (and one per release with student_seeds)")

    def label(p):  # unique per release: the replicate unit's draw names the releases of one setting apart
        shown = [k for k in (*keys, "release_draw") if k in p]
        return ", ".join(f"{k}={p[k]}" for k in dict.fromkeys(shown))

    if backend == "local":
        students = [(i, st) for i, ss in enumerate(per_release) for st in ss]
        rows = train_release_students(
            pool_features,
            [Release(r["labels"], r["answered"]) for r in releases],
            students,
            test_features,
            test_labels,
            spec,
            name=f"{len(students)} students",
        )
        return pd.DataFrame([privacy[i] | row for (i, _), row in zip(students, rows)])
    shards = [
        distributed.Shard(label(p), dict(a, seeds=ss, name=f"students {label(p)}"))
        for p, a, ss in zip(privacy, releases, per_release)
    ]
    shared = {"pool_features": pool_features, "test_features": test_features, "test_labels": test_labels, "spec": spec}
    out = distributed.map_shards(
        student_point, shards, shared=shared, backend=backend, address=address, desc="students", progress=progress
    )
    return pd.DataFrame([p | s for p, per_seed in zip(privacy, out) for s in per_seed])


def unit_summary(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """:func:`.students.seed_summary` of student rows that carry their replicate unit (``release_draw``) and teacher
    ensemble (``replicate``): ``n_seeds`` counts the units (each a replicate of the sources it varies), and beside
    the mean ``map`` its per-unit values ``map_units`` and their ensembles ``map_clusters`` (what
    :func:`.verdict_rules.student_estimate` reads as a clustered interval over the ensembles)."""
    out = seed_summary(rows, keys)
    if "release_draw" not in rows or "replicate" not in rows:
        return out
    g = rows.groupby(list(keys), sort=False, dropna=False)
    out["n_seeds"] = g["release_draw"].nunique().to_numpy()
    out["map_units"] = [list(map(float, v)) for v in g["map"].agg(list)]
    out["map_clusters"] = [list(map(int, v)) for v in g["replicate"].agg(list)]
    return out


def student_sweep(
    cvs: CachedVotes | Sequence[CachedVotes],
    pool_features: np.ndarray,
    test_features: np.ndarray,
    sizes: Sequence[int],
    thresholds: Sequence[Any],
    confidences: Sequence[Any],
    spec: TeacherSpec,
    *,
    delta: float,
    seed: int = 0,
    seeds: Sequence[int] = (0, 1, 2),
    backend: str = "local",
    address: str | None = None,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 5.4 over the replicate units of :func:`replicate_units` (``cvs``: the replicate ensembles of big T_max,
    or one): per unit ``r`` the releases and their privacy (:func:`.release_privacy.released_labels` on ensemble ``r mod
    G`` with release seed ``seed + r``) and one student per release with seed ``seeds[r mod S]``, every student in one
    stacked call (:func:`train_students`). Returns (one row per release: scores averaged over the units with their
    spread and per-unit values, :func:`unit_summary`; one row per student with ``replicate`` and
    ``release_draw``)."""
    cvs = [cvs] if isinstance(cvs, CachedVotes) else list(cvs)
    privacy, releases, student_seeds = [], [], []
    for r, (g, st) in enumerate(replicate_units(len(cvs), seeds)):
        p, rel = released_labels(cvs[g], sizes, thresholds, confidences, delta=delta, seed=seed + r)
        privacy += [dict(row, replicate=g, release_draw=r) for row in p]
        releases += rel
        student_seeds += [st] * len(rel)
    rows = train_students(
        privacy,
        releases,
        pool_features,
        test_features,
        cvs[0].test_labels,
        spec,
        student_seeds=student_seeds,
        backend=backend,
        address=address,
        progress=progress,
    )
    return unit_summary(rows, ["n_samples", "th_e", "th_c"]), rows


def ablation_arms(
    stack: ReplicateStack,
    spec: TeacherSpec,
    arms: dict[str, dict],
    *,
    n_teachers: int,
    curve_clips: int = 2000,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
) -> dict[str, TeacherRun]:
    """Notebook 04's ablations (Figs 5.7-5.12): per arm, with ``spec`` changed by the arm's settings
    (``{"no mixup": {"mixup_alpha": None}, ...}``), the first ``n_teachers`` teachers of every replicate ensemble of
    ``stack`` (its own pool split, partitions and training seeds: :func:`.data.replicate_members`), all in ONE stacked
    call (replicate ``r`` is teachers ``r·n_teachers ...``). Every arm trains the same teachers on the same
    partitions with the same seeds, so arms compare replicate by replicate, and the replicates are draws of the
    teachers' training seed AND partition. Each run's ``replicate`` names every teacher's replicate."""
    if not 1 <= n_teachers <= stack.n_teachers:
        raise ValueError(f'n_teachers (ablation["teachers"])={n_teachers}: expected 1 to {stack.n_teachers}')
    first = ReplicateStack(
        tuple(dataclasses.replace(m, partitions=first_teachers(m.partitions, n_teachers)) for m in stack.members),
        stack.replicate_seeds,
    )
    replicate = np.repeat(np.arange(len(first.members)), first.n_teachers)
    inputs = first.stacked_inputs()
    val, seeds = first.val_rows(), first.train_seeds()
    return {
        name: dataclasses.replace(
            _train_rows(
                dataclasses.replace(inputs, name=name),
                spec.replace(**settings),
                curve_clips=curve_clips,
                last=False,
                device=device,
                backend=backend,
                teachers_per_task=teachers_per_task,
                address=None,
                cache_dir=None,
                progress=True,
                val_rows=val,
                train_seeds=seeds,
            ),
            replicate=replicate,
        )
        for name, settings in arms.items()
    }


def logmel_arms(
    architectures,
    X: Any,
    Y: np.ndarray,
    partitions: Any,
    val: np.ndarray,
    test: np.ndarray,
    spec: TeacherSpec,
    *,
    imagenet_weights: dict | None = None,
    width_scale: int = 1,
    head: Any = None,
    seed: int = 0,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    speed: Any = None,
) -> dict[tuple[str, str], tuple[pd.DataFrame, str, float]]:
    """Notebook 04's log-Mel CNN arms (Figs 5.4 / 5.5): every architecture from random initialisation, and from
    ImageNet weights where ``imagenet_weights`` names a state dict for it; tested on the rows ``test``; ``speed``:
    the CNNs' speed options (:func:`.teachers.cnn_speed_options`). Returns
    ``{(architecture, "random init" | "ImageNet"): (history, weights stamp, seconds)}``; the seconds are logged."""
    out, head = {}, None if head is None else tuple(head)
    for arch in architectures:
        for init, weights in (("random init", None), ("ImageNet", (imagenet_weights or {}).get(arch))):
            if init == "ImageNet" and not weights:
                continue
            out[arch, init] = train_logmel_ensemble(
                arch,
                X,
                Y,
                partitions,
                val,
                X[test],
                Y[test],
                spec,
                width_scale=width_scale,
                head=head,
                weights=weights,
                seed=seed,
                device=device,
                backend=backend,
                teachers_per_task=teachers_per_task,
                speed=speed,
            )
    logger.info(
        "log-Mel CNN training seconds (volatile, not recorded): %s", {k: round(v[2], 1) for k, v in out.items()}
    )
    return out


def multiwinner_students(
    mw: pd.DataFrame,
    mw_labels: dict,
    pool_features: np.ndarray,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    spec: TeacherSpec,
    *,
    sigma_e: float = 0.3,
    seeds: Sequence[int] = (0,),
) -> pd.DataFrame:
    """Beyond the thesis: students per mechanism of :func:`.release_frontier.multiwinner_sweep` on its released labels
    at ``sigma_e`` (the largest σ_e of the sweep when it did not run ``sigma_e``), one per seed and averaged
    (:func:`.students.seed_summary`), with the mechanism's ε beside; every student in one stacked call
    (:func:`train_students`)."""
    privacy, releases = [], []
    for mech in ("gnthreshold", "binary", "tau", "powerset"):
        key = (mech, sigma_e) if (mech, sigma_e) in mw_labels else (mech, float(mw["sigma_e"].iloc[-1]))
        labels = mw_labels[key]
        row = mw[(mw["mechanism"] == mech) & (mw["sigma_e"] == key[1])].iloc[0]
        privacy.append(
            {
                "mechanism": mech,
                "sigma_e": key[1],
                "epsilon": row["epsilon"],
                "epsilon_data_independent": row["epsilon_data_independent"],
                "release_f1": row["f1"],
            }
        )
        releases.append({"labels": labels, "answered": np.ones(len(labels), bool)})
    rows = train_students(
        privacy, releases, pool_features, test_features, test_labels, spec, seeds=seeds, keys=["mechanism"]
    )
    return seed_summary(rows, ["mechanism", "sigma_e"])


def frontier_students(
    cv: CachedVotes,
    pool_features: np.ndarray,
    test_features: np.ndarray,
    settings: Sequence[dict],
    spec: TeacherSpec,
    *,
    n_queries: int,
    delta: float,
    seed: int = 0,
    seeds: Sequence[int] = (0, 1, 2),
    backend: str = "local",
    address: str | None = None,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The privacy-utility frontier on the same teachers: every release of :func:`.release_frontier.frontier_releases`
    (data-independent ε) and a student per release and student seed (:func:`train_students`). Returns (one row per
    release, scores averaged over seeds with their spread; one row per student)."""
    privacy, releases = frontier_releases(cv, settings, n_queries, delta=delta, seed=seed)
    keys = ["mechanism", "sigma_e", "k", "th_e"]
    rows = train_students(
        privacy,
        releases,
        pool_features,
        test_features,
        cv.test_labels,
        spec,
        seeds=seeds,
        keys=keys,
        backend=backend,
        address=address,
        progress=progress,
    )
    return seed_summary(rows, keys), rows


def sigma_students(
    cvs: CachedVotes | Sequence[CachedVotes],
    pool_features: np.ndarray,
    test_features: np.ndarray,
    points: Sequence[tuple[Any, Any, Sequence[str]]],
    sigmas_e: Sequence[float],
    sigmas_c: Sequence[float],
    spec: TeacherSpec,
    *,
    n_queries: int,
    delta: float,
    seed: int = 0,
    seeds: Sequence[int] = (0, 1, 2),
    backend: str = "local",
    address: str | None = None,
    progress: bool = False,
    table54_rows: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Figs 5.17-5.19 over the thesis's σ ranges: for each ``(item, th_e, th_cs)`` of ``points`` (th_c None: no
    check; the figures' configurations, e.g. :data:`.release_claims.student_figures.STUDENT_FIGURES`), the releases of
    :func:`.release_privacy.sigma_releases` on the first ``n_queries`` pool queries, per replicate unit of
    :func:`replicate_units` (as :func:`student_sweep`: ensemble ``r mod G``, release seed ``seed + r``, student seed
    ``seeds[r mod S]``), and one student per release, all in one stacked call; one row per release (unit means,
    spread and per-unit values, :func:`unit_summary`). A point at Table 5.4's own noise (σ_e 0.3, σ_c 0.6) is the
    release Table 5.4 made with the same seed: its students are taken from ``table54_rows`` (:func:`student_sweep`'s
    rows) instead of being trained again."""

    def parse(x):
        return x if x == "adaptive" else float(x)

    cvs = [cvs] if isinstance(cvs, CachedVotes) else list(cvs)
    privacy, releases, student_seeds, reused = [], [], [], []
    for r, (g, st) in enumerate(replicate_units(len(cvs), seeds)):
        for item, th, thcs in points:
            thc = None if thcs[0] is None else float(thcs[0])
            p, rel = sigma_releases(cvs[g], n_queries, parse(th), thc, sigmas_e, sigmas_c, delta=delta, seed=seed + r)
            for row, a in zip(p, rel):
                row = dict(row, item=item, replicate=g, release_draw=r)
                same = _table54_student(table54_rows, row, r)
                if same is not None:
                    reused.append(row | same)
                    continue
                privacy.append(row)
                releases.append(a)
                student_seeds.append(st)
    keys = ["item", "sigma_e", "sigma_c"]
    rows = train_students(
        privacy,
        releases,
        pool_features,
        test_features,
        cvs[0].test_labels,
        spec,
        student_seeds=student_seeds,
        keys=keys,
        backend=backend,
        address=address,
        progress=progress,
    )
    rows = pd.concat([rows, pd.DataFrame(reused)], ignore_index=True) if reused else rows
    order = {(p["item"], p["sigma_e"], str(p["sigma_c"])): i for i, p in enumerate(privacy + reused)}
    rows = rows.iloc[
        np.argsort(
            [order[(a, b, str(c))] for a, b, c in zip(rows["item"], rows["sigma_e"], rows["sigma_c"])], kind="stable"
        )
    ]
    return unit_summary(rows.reset_index(drop=True), keys)


def _table54_student(rows: pd.DataFrame | None, point: dict, unit: int) -> dict | None:
    """The Table 5.4 student of replicate unit ``unit`` whose release is the σ-sweep ``point``'s (Table 5.4 releases at
    σ_e 0.3 and σ_c 0.6, :func:`.release_privacy.table_5_4_privacy`'s defaults, with the same seed): its scores, or
    None."""
    if rows is None or not np.isclose(point["sigma_e"], 0.3):
        return None
    if point["th_c"] != "None" and not np.isclose(point["sigma_c"], 0.6):
        return None
    hit = rows[
        (rows["n_samples"] == point["n_samples"])
        & (rows["th_e"] == point["th_e"])
        & (rows["th_c"].astype(str) == str(point["th_c"]))
        & (rows["release_draw"] == unit)
    ]
    if len(hit) != 1:
        return None
    scores = ("map", "macro_f1", "micro_f1", "n_train", "labels_per_query", "steps", "seed")
    return {k: hit.iloc[0][k] for k in scores}
