"""The Audio Set studies end to end: ensembles → votes → students. The only module that picks where things run.

Every entry point takes ``backend="local"`` (in this process) or ``"ray"`` and ``teachers_per_task`` (teachers
trained together as one stacked computation in one task; None: all of them in one task). Locally with
``teachers_per_task=None`` an ensemble is one :func:`.teachers.train_teachers` call; otherwise the ensemble is cut
into the shards of :func:`.shards.shard_plan` and mapped by :func:`pate_study.learning.distributed.map_shards` over
:mod:`.shards`' units (every shard cached under a key of :mod:`pate_study.core.cache`).

* :func:`teacher_ensembles` -- notebook 04's ensembles (1 = the single model, 10, 20, 50 per subset); their votes
  are stored in the votes cache (:mod:`.votes`);
* :func:`ensemble_votes` -- notebook 05's votes: the same ensembles (same inputs, recipe and seeds, so the same
  cache key), read from the cache when notebook 04 trained them, else trained through the same call;
* :func:`train_logmel_ensemble` -- notebook 04's log-Mel CNN teachers (the GPU path; one GPU per task on Ray; the
  clips may be a path on shared storage, each task reads only its rows);
* :func:`student_sweep` -- notebook 05's Table 5.4 students, one task per (n, th_e, th_c) point.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.core import cache
from pate_study.data import audioset
from pate_study.learning import distributed
from pate_study.reporting import uncertainty as unc

from .data import EnsembleInputs, ensemble_inputs, query_test_split
from .release import frontier_releases, released_labels, sigma_releases
from .shards import assemble_run, by_teacher, logmel_shard, shard_plan, student_point, teacher_run_shard
from .students import seed_summary, train_student
from .teachers import (
    TeacherRun,
    TeacherSpec,
    cnn_speed_options,
    replicated_partitions,
    train_logmel_teachers,
    train_teachers,
)
from .votes import CachedVotes, EnsembleVotes, load_votes, split_votes, store_votes, votes_key

logger = logging.getLogger(__name__)


def _identity(value: Any) -> Any:
    """What identifies an input in a cache key: the array itself, or for a path on shared storage its path, size
    and modification time (hashing ~140 GB of clips per run is not an option; replacing the file changes the key)."""
    if isinstance(value, (str, os.PathLike)):
        st = os.stat(value)
        return {"path": os.path.abspath(value), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    return value


def plan_shards(
    partitions: Any, teachers_per_task: int | None, seed: int, data_key: str, device: str, label: str
) -> tuple[list[tuple[range, int]], list[distributed.Shard]]:
    """The plan and one :class:`pate_study.learning.distributed.Shard` per entry: the shard's training partitions and
    seed, cached under (``data_key``, partitions, seed) on the resolved ``device`` (:mod:`pate_study.core.cache`)."""
    plan = shard_plan(partitions.n_teachers, teachers_per_task, seed)
    shards = [
        distributed.Shard(
            f"{label} {r.start}-{r.stop - 1}",
            {"train_rows": partitions.train[r.start : r.stop], "seed": s},
            units=len(r),
            key=cache.cache_key(
                "shard", device=device, data=data_key, train_rows=partitions.train[r.start : r.stop], seed=s
            ),
        )
        for r, s in plan
    ]
    return plan, shards


# ----------------------------------------------------------------------------- ensembles and their votes
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
    if backend == "local" and teachers_per_task is None:
        run = train_teachers(
            i.X,
            i.Y,
            i.partitions,
            i.val,
            i.X_test,
            i.Y_test,
            spec,
            seed=i.seed,
            curve_clips=curve_clips,
            name=i.name,
            last=last,
            device=device,
        )
    else:
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
        plan, shards = plan_shards(i.partitions, teachers_per_task, i.seed, data_key, where, i.name or "teachers")
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
        run = assemble_run(i.name, spec, parts, plan)
    if keep_votes:
        key = votes_key(
            i.X,
            i.Y,
            i.partitions,
            i.val,
            i.X_test,
            i.Y_test,
            spec,
            seed=i.seed,
            curve_clips=curve_clips,
            last=last,
            device=device,
            backend=backend,
            teachers_per_task=teachers_per_task,
        )
        store_votes(key, EnsembleVotes(run.probabilities, run.best_step), cache_dir, name=i.name)
    return run


def teacher_ensembles(
    datasets: dict[str, audioset.AudioSetEmbeddings],
    spec: TeacherSpec,
    teacher_counts: Sequence[int],
    *,
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
    curve_clips: int = 2000,
    seed: int = 0,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    cache_dir: Any = None,
) -> tuple[dict[tuple[str, int], TeacherRun], dict[tuple[str, int], EnsembleInputs]]:
    """Notebook 04's ensembles: per subset of ``datasets`` and teacher count, its inputs
    (:func:`.data.ensemble_inputs`) and its run (:func:`train_ensemble`, votes kept for notebook 05). Returns
    ``({(subset, T): run}, {(subset, T): inputs})``."""
    runs, inputs = {}, {}
    for subset, ds in datasets.items():
        for t in teacher_counts:
            inputs[subset, t] = ensemble_inputs(
                ds, subset, t, student_fraction=student_fraction, val_fraction=val_fraction, seed=seed
            )
            runs[subset, t] = train_ensemble(
                inputs[subset, t],
                spec,
                curve_clips=curve_clips,
                device=device,
                backend=backend,
                teachers_per_task=teachers_per_task,
                cache_dir=cache_dir,
                keep_votes=True,
            )
    return runs, inputs


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
    key = votes_key(
        i.X,
        i.Y,
        i.partitions,
        i.val,
        i.X_test,
        i.Y_test,
        spec,
        seed=i.seed,
        curve_clips=curve_clips,
        device=device,
        backend=backend,
        teachers_per_task=teachers_per_task,
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
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    cache_dir: Any = None,
) -> tuple[dict[int, CachedVotes], dict]:
    """Notebook 04's ensembles of ``subset`` (1 = the single model on the whole teacher pool, 10, 20, 50) and
    their :class:`.votes.CachedVotes` on the eval clips, cut by :func:`.data.query_test_split` into query pool and
    test set (:func:`cached_ensemble_votes`: notebook 04's cached votes when it ran with the same settings).

    Returns ``({T: CachedVotes}, info)`` with the data description, split sizes, the pool/test features, the
    schedule ``steps`` and ``best_step`` per teacher count (selected step of every teacher).
    """
    ds = audioset.load(data, subset=subset, seed=seed)
    ev = ds.splits["eval"]
    pool, test = query_test_split(len(ev.labels), min_pool=min_pool, pool_fraction=pool_fraction, seed=seed)
    label = (
        f"real Audio Set embeddings ({ds.source.description})"
        if ds.source.kind == "real"
        else f"synthetic stand-in for Audio Set ({ds.source.description})"
    )
    out, best_steps, inputs = {}, {}, None
    for t in teacher_counts:
        inputs = ensemble_inputs(ds, subset, t, student_fraction=student_fraction, val_fraction=val_fraction, seed=seed)
        votes = cached_ensemble_votes(
            inputs,
            spec,
            curve_clips=curve_clips,
            device=device,
            backend=backend,
            teachers_per_task=teachers_per_task,
            cache_dir=cache_dir,
        )
        best_steps[t] = votes.best_step
        prior = inputs.Y[inputs.teacher_pool].mean(0)  # label frequencies of the teacher pool (class prior)
        out[t] = split_votes(votes, ev.labels, pool, test, prior, ds.class_names, ds.source.kind)
    info = {
        "data": label,
        "kind": ds.source.kind,
        "n_labels": ds.splits["bal_train"].labels.shape[1],
        "teacher_pool": None if inputs is None else len(inputs.teacher_pool),
        "validation": None if inputs is None else len(inputs.val),
        "query_pool": len(pool),
        "test": len(test),
        "pool_index": pool,
        "test_index": test,
        "pool_features": inputs.X_test[pool] if inputs else None,
        "test_features": inputs.X_test[test] if inputs else None,
        "steps": {t: spec.steps for t in teacher_counts},
        "best_step": best_steps,
    }
    return out, info


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
def train_students(
    privacy: Sequence[dict],
    releases: Sequence[dict],
    pool_features: np.ndarray,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    spec: TeacherSpec,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    keys: Sequence[str] = ("n_samples", "th_e", "th_c"),
    backend: str = "local",
    address: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """One student per release and seed of ``seeds``, the seeds of a release in one stacked call (one task per
    release on Ray; fixed schedule, see :mod:`.students`); rows = privacy row | student scores | seed, release by
    release, seeds in order."""
    if len(seeds) < 1:
        raise ValueError("seeds: expected at least one student seed")
    seeds = [int(s) for s in seeds]

    def label(p):
        return ", ".join(f"{k}={p[k]}" for k in keys if k in p)

    shards = [
        distributed.Shard(label(p), dict(a, seeds=seeds, name=f"students {label(p)}"))
        for p, a in zip(privacy, releases)
    ]
    shared = {"pool_features": pool_features, "test_features": test_features, "test_labels": test_labels, "spec": spec}
    students = distributed.map_shards(
        student_point, shards, shared=shared, backend=backend, address=address, desc="students", progress=progress
    )
    return pd.DataFrame([p | s for p, per_seed in zip(privacy, students) for s in per_seed])


def student_sweep(
    cv: CachedVotes,
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
    """Table 5.4: the releases and their privacy (:func:`.release.released_labels` with the release seed ``seed``,
    in this process) and a student per release and student seed (:func:`train_students`). Returns (one row per
    release: scores averaged over seeds with their spread, :func:`.students.seed_summary`; one row per student)."""
    privacy, releases = released_labels(cv, sizes, thresholds, confidences, delta=delta, seed=seed)
    rows = train_students(
        privacy,
        releases,
        pool_features,
        test_features,
        cv.test_labels,
        spec,
        seeds=seeds,
        backend=backend,
        address=address,
        progress=progress,
    )
    return seed_summary(rows, ["n_samples", "th_e", "th_c"]), rows


def ablation_arms(
    inputs: EnsembleInputs,
    spec: TeacherSpec,
    arms: dict[str, dict],
    *,
    n_teachers: int,
    seeds: int = 1,
    curve_clips: int = 2000,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
) -> dict[str, TeacherRun]:
    """Notebook 04's ablations (Figs 5.7-5.12): per arm, with ``spec`` changed by the arm's settings
    (``{"no mixup": {"mixup_alpha": None}, ...}``), the first ``n_teachers`` teachers of ``inputs`` trained
    ``seeds`` times over, all in ONE stacked call (:func:`.teachers.replicated_partitions`: replicate ``r`` is
    teachers ``r·n_teachers ...``, the same partitions with its own training seeds, the same in every arm, so arms
    compare replicate by replicate). Each run's ``replicate`` names every teacher's replicate."""
    parts = replicated_partitions(inputs.partitions, n_teachers, seeds)
    tiled = dataclasses.replace(inputs, partitions=parts)
    replicate = np.repeat(np.arange(seeds), n_teachers)
    return {
        name: dataclasses.replace(
            train_ensemble(
                dataclasses.replace(tiled, name=name),
                spec.replace(**settings),
                curve_clips=curve_clips,
                device=device,
                backend=backend,
                teachers_per_task=teachers_per_task,
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
    """Beyond the thesis: students per mechanism of :func:`.release.multiwinner_sweep` on its released labels at
    ``sigma_e`` (the largest σ_e of the sweep when it did not run ``sigma_e``), one per seed and averaged
    (:func:`.students.seed_summary`), with the mechanism's ε beside."""
    rows = []
    for mech in ("gnthreshold", "binary", "tau", "powerset"):
        key = (mech, sigma_e) if (mech, sigma_e) in mw_labels else (mech, float(mw["sigma_e"].iloc[-1]))
        labels = mw_labels[key]
        row = mw[(mw["mechanism"] == mech) & (mw["sigma_e"] == key[1])].iloc[0]
        for st in train_student(
            pool_features[: len(labels)],
            labels,
            np.ones(len(labels), bool),
            test_features,
            test_labels,
            spec,
            seeds=seeds,
            name=f"students {mech}",
        ):
            rows.append(
                {
                    "mechanism": mech,
                    "sigma_e": key[1],
                    "epsilon": row["epsilon"],
                    "epsilon_data_independent": row["epsilon_data_independent"],
                    "release_f1": row["f1"],
                    **st,
                }
            )
    return seed_summary(pd.DataFrame(rows), ["mechanism", "sigma_e"])


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
    """The privacy-utility frontier on the same teachers: every release of :func:`.release.frontier_releases`
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


def frontier_target_students(
    cv: CachedVotes,
    pool_features: np.ndarray,
    test_features: np.ndarray,
    frontier: pd.DataFrame,
    spec: TeacherSpec,
    *,
    n_queries: int,
    delta: float,
    epsilon_max: float = 300.0,
    release_draws: int = 3,
    seeds: Sequence[int] = (0, 1, 2),
    n_boot: int = 100,
    seed: int = 0,
) -> pd.DataFrame:
    """The students the target is judged on (:func:`.students.frontier_targets` with ``target_rows``): every
    candidate release of ``frontier`` (:func:`frontier_students`' summary) whose data-independent ε is within
    ``epsilon_max``, released ``release_draws`` times (release seeds ``seed``, ``seed + 1``, ...: draw 0 is the
    frontier's own release) with a student per seed of ``seeds`` on each draw (one stacked call per draw), every
    student scored on the test set and on ``n_boot`` resamples of its rows (seeded by ``seed``; the same rows for
    every student, :func:`.students.bootstrap_map`). Runs in this process (the students carry their resamples'
    mAP). Returns one row per (candidate, draw, student seed): the release's privacy row, ``release_draw``, the
    student's scores and ``map_boot``."""
    if int(release_draws) != release_draws or release_draws < 1:
        raise ValueError(f"release_draws (target_release_draws): expected a positive integer, got {release_draws!r}")
    within = frontier[frontier["epsilon"] <= epsilon_max]
    settings = [{k: r[k] for k in ("mechanism", "sigma_e", "k", "th_e")} for r in within.to_dict("records")]
    if not settings:
        return pd.DataFrame()
    rows = unc.bootstrap_rows(len(cv.test_labels), int(n_boot), int(seed))
    out = []
    for draw in range(int(release_draws)):
        privacy, releases = frontier_releases(cv, settings, n_queries, delta=delta, seed=int(seed) + draw)
        for p, r in zip(privacy, releases):
            per_seed = train_student(
                pool_features[: len(r["labels"])],
                r["labels"],
                r["answered"],
                test_features,
                cv.test_labels,
                spec,
                seeds=[int(s) for s in seeds],
                name=f"target student {p['mechanism']} σ_e {p['sigma_e']:g} draw {draw}",
                boot_rows=rows,
            )
            out += [p | {"release_draw": draw} | s for s in per_seed]
    return pd.DataFrame(out)


def sigma_students(
    cv: CachedVotes,
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
) -> pd.DataFrame:
    """Figs 5.17-5.19 over the thesis's σ ranges: for each ``(item, th_e, th_cs)`` of ``points`` (th_c None: no
    check; the figures' configurations, e.g. :data:`.release_claims.student_figures.STUDENT_FIGURES`), the releases of
    :func:`.release.sigma_releases` on the first ``n_queries`` pool queries and a student per release and seed; one row
    per release (seed means and spread, :func:`.students.seed_summary`)."""

    def parse(x):
        return x if x == "adaptive" else float(x)

    privacy, releases = [], []
    for item, th, thcs in points:
        thc = None if thcs[0] is None else float(thcs[0])
        p, r = sigma_releases(cv, n_queries, parse(th), thc, sigmas_e, sigmas_c, delta=delta, seed=seed)
        privacy += [dict(row, item=item) for row in p]
        releases += r
    keys = ["item", "sigma_e", "sigma_c"]
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
    return seed_summary(rows, keys)
