"""Benchmark: the Audio Set pipeline rehearsed at the thesis's sizes on synthetic stand-in data.

Sizes (``--scale 1``) are Muschiol 2021's "big 50" setting (Table 4.1: 342,979 clips, 153 labels, teacher pool
308,681 in 50 disjoint partitions of 6,173, a public pool of 34,298 (the thesis's student pool, 34,297), test set
5,960; §2.1: 1.98 labels per clip) and Table 5.4's 18 students (n in {2000, 5000} x th_e in {0.2, 0.4, adaptive}
x th_c in {None, 0.4, 0.6}); the loader reads the layout of Audio Set's unbal_train VGGish embeddings
(2,042,985 segments of release v1, ``data_recipes.audioset.UNBAL_TRAIN_SEGMENTS``; uint8 ``[n, 10, 128]`` as
:class:`pate_study.data.audioset.Split` holds them). The thesis's training clips are the first 342,979 rows of
that layout, its test clips the next 5,960.

Every stage runs in its own Python process (wall time and peak resident memory of that process; the peak
anonymous memory, i.e. what the process allocated rather than file pages it mapped, is sampled from
``/proc/self/status`` every 20 ms), all data live in memory-mapped ``.npy`` files in a temporary folder that is
deleted at the end, and each stage calls the package's public functions:

* ``write``: the synthetic clips (random uint8 embeddings, 9-10 real frames) and labels (Zipf class frequencies,
  1-3 labels per clip, mean about 2), written chunk by chunk;
* ``loader``: random minibatches of 64 clips over the whole unbal_train layout, each turned into clip features
  by :func:`audioset.data.clip_features`, from the page cache (just written) and after the file's pages were
  dropped from it (``posix_fadvise(DONTNEED)`` on the unmapped file, then a fresh mapping: reads from disk; the
  resident bytes before each phase are reported, from util-linux ``fincore``);
* ``features``: :func:`audioset.data.clip_features` on all training and test clips at once (what
  :func:`audioset.pipeline.ensemble_votes` does), written to disk for the next stages;
* ``teachers``: the 50 stacked embedding-MLP teachers (:func:`audioset.teachers.train_teachers`, the thesis's
  head widths 512-256, balanced sampler, mixup 1.0, Adam, batch 64, checkpoint on a validation split), two runs
  of ``A`` and ``B`` steps with a single evaluation each, so (t_B - t_A) / (B - A) is the cost of one step, and a
  third of ``B`` steps with five evaluations (validation split and 2,000 curve clips), for the cost of one;
* ``query``: the 50 teachers' probabilities on the public pool and the test set (``[50, 40,258, 153]`` float32),
  the stacked forward pass of :class:`pate_study.learning.stacked.StackedMLP` at the teachers' initial weights (the cost
  of inference does not depend on the weights' values; ``train_teachers`` keeps the trained ones to itself),
  written into a memory-mapped array. Teachers trained for a few steps on random clips vote about uniformly,
  which leaves the confidence checks with no answered query, so the *vote values* passed on are the package's
  synthetic stand-in teachers (:func:`audioset.votes.synthetic_teacher_probabilities`, the skill of notebook
  05's synthetic path), written over the same array (timed apart, not part of the estimate);
* ``aggregate``: Table 5.4's 18 releases and their privacy (:func:`audioset.release.released_labels`:
  GNThreshold / Confident-GNThreshold with :mod:`pate_study.privacy.multilabel`'s accountants, delta 1e-8);
* ``students``: the 18 students on those releases (:func:`audioset.pipeline.train_students`, the teachers'
  recipe), and one student at ``A`` and ``A + --student-extra`` steps (best of 2) for the cost of a student step.

The last lines extrapolate to the thesis's 10,000 iterations per model from the per-step times measured here
(an extrapolation on this machine, not a measured run): teachers ``fixed + 10,000 x step`` plus an evaluation every
100 steps (notebook 04's cadence), each student ``fixed + 10,000 x step``, plus the clip features, querying and
aggregation as measured. ε and student scores on synthetic data are not results; only time and memory are.

  python benchmarks/bench_scale.py                      # thesis sizes, about 10 minutes on 2 cores
  python benchmarks/bench_scale.py --scale 0.002 --steps 2 4 --out scale.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

logger = logging.getLogger("bench_scale")

# Muschiol 2021, Table 4.1 ("big"; big 50's 90/10 split), §2.1, Table 5.4; Audio Set v1 unbalanced_train_segments.csv
THESIS = {
    "train_clips": 342_979,
    "labels": 153,
    "teachers": 50,
    "teacher_pool": 308_681,
    "public_pool": 34_298,
    "test_clips": 5_960,
    "labels_per_clip": 1.98,
    "students": 18,
    "student_sizes": (2000, 5000),
    "student_thresholds": (0.2, 0.4, "adaptive"),
    "student_confidences": (None, 0.4, 0.6),
    "unbal_clips": 2_042_985,
    "frames": 10,
    "dims": 128,
    "iterations": 10_000,
    "delta": 1e-8,
}
SPEC = {"hidden": (512, 256), "dropout": 0.5, "lr": 1e-3, "batch_size": 64, "sampler": "balanced", "mixup_alpha": 1.0}
STAGES = ("write", "loader", "features", "teachers", "query", "aggregate", "students")
#: Floors under which a small --scale would leave the pipeline nothing to do (stated in the output when used).
FLOORS = {"train_clips": 2500, "test_clips": 300}
CHUNK = 65_536
EVALUATIONS = 5  # the teachers' third run: B steps with this many evaluations, for the cost of one
EVAL_EVERY = 100  # notebook 04's evaluation cadence, used in the estimate
CURVE_CLIPS = 2000  # train_teachers' default curve sample, scored at every evaluation


def sizes(scale: float) -> dict:
    """Clip counts at ``scale`` x the thesis's (teachers, students and labels stay the thesis's), with floors."""
    if not 0 < scale <= 1:
        raise ValueError(f"--scale {scale}: expected a fraction of the thesis sizes in (0, 1]")
    train = max(FLOORS["train_clips"], round(scale * THESIS["train_clips"]))
    test = max(FLOORS["test_clips"], round(scale * THESIS["test_clips"]))
    unbal = max(train + test, round(scale * THESIS["unbal_clips"]))
    floored = [k for k, v in (("train_clips", train), ("test_clips", test)) if v != round(scale * THESIS[k])]
    return {
        "scale": scale,
        "unbal_clips": unbal,
        "train_clips": train,
        "test_clips": test,
        "labels": THESIS["labels"],
        "teachers": THESIS["teachers"],
        "floored": floored,
    }


# ----------------------------------------------------------------------------- memory sampling
class AnonPeak:
    """Peak ``RssAnon`` of this process, sampled from /proc/self/status every ``interval`` s (Linux)."""

    def __init__(self, interval: float = 0.02) -> None:
        self.peak_kib, self._stop, self.interval = 0, threading.Event(), interval
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> int:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, self._read())
            self._stop.wait(self.interval)

    def __enter__(self) -> "AnonPeak":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_kib = max(self.peak_kib, self._read())


# ----------------------------------------------------------------------------- stages (child processes)
def _open(folder: Path, name: str):
    return np.load(folder / f"{name}.npy", mmap_mode="r")


def stage_write(folder: Path, sz: dict, seed: int, **_) -> dict:
    """Synthetic unbal_train layout (uint8 [n, 10, 128], n_frames) and labels of the training + test clips."""
    rng = np.random.default_rng(seed)
    n, d, f = sz["unbal_clips"], THESIS["dims"], THESIS["frames"]
    emb = np.lib.format.open_memmap(folder / "embeddings.npy", mode="w+", dtype=np.uint8, shape=(n, f, d))
    for c0 in range(0, n, CHUNK):
        c1 = min(n, c0 + CHUNK)
        emb[c0:c1] = np.frombuffer(rng.bytes((c1 - c0) * f * d), np.uint8).reshape(c1 - c0, f, d)
    emb.flush()
    del emb
    np.save(folder / "n_frames.npy", rng.integers(9, f + 1, size=n).astype(np.uint8))
    n_lab, c = sz["train_clips"] + sz["test_clips"], sz["labels"]
    freq = 1.0 / np.arange(1, c + 1) ** 0.8
    freq /= freq.sum()
    labels = np.lib.format.open_memmap(folder / "labels.npy", mode="w+", dtype=bool, shape=(n_lab, c))
    for c0 in range(0, n_lab, CHUNK):
        c1 = min(n_lab, c0 + CHUNK)
        block = np.zeros((c1 - c0, c), bool)
        k = rng.integers(1, 4, size=c1 - c0)  # 1-3 labels, mean 2 (thesis: 1.98)
        for j in range(3):
            rows = np.flatnonzero(k > j)
            block[rows, rng.choice(c, size=rows.size, p=freq)] = True
        labels[c0:c1] = block
    labels.flush()
    gib = (n * f * d + n_lab * c) / 2**30
    return {
        "note": f"{n:,} x {f} x {d} uint8 clips + {n_lab:,} x {c} labels = {gib:.2f} GiB on disk",
        "labels_per_clip": float(np.asarray(labels[: min(n_lab, CHUNK)]).sum(1).mean()),
    }


def _batch_features(emb, n_frames, idx):
    from pate_study.data.audioset import Split
    from pate_study.experiments.audioset import data as as_data

    b = len(idx)
    split = Split(
        np.asarray(emb[idx]),
        np.asarray(n_frames[idx]),
        np.zeros((b, 1), bool),
        np.zeros(b, object),
        np.zeros(b),
        np.zeros(b),
    )
    return as_data.clip_features(split)


def _resident_mib(path: Path) -> float | None:
    """Bytes of ``path`` in the page cache (util-linux ``fincore``), or None where it is missing."""
    try:
        out = subprocess.run(
            ["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return int(out.stdout.split()[0]) / 2**20 if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def _mib(value: float | None) -> str:
    return "?" if value is None else f"{value:,.0f}"


def _drop_from_page_cache(path: Path) -> None:
    """Ask the kernel to drop ``path``'s clean pages (works only while no process maps them)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def stage_loader(folder: Path, sz: dict, seed: int, loader_seconds: float = 8.0, **_) -> dict:
    """Random minibatches of 64 over the whole unbal_train layout: from the page cache (the file was just
    written), then from disk (the file's pages dropped, a fresh mapping)."""
    path = folder / "embeddings.npy"
    n_frames = _open(folder, "n_frames")
    rng = np.random.default_rng(seed)
    out = {}
    for kind in ("warm", "cold"):
        if kind == "cold":
            _drop_from_page_cache(path)
        out[f"{kind}_resident_mib_before"] = _resident_mib(path)
        emb = _open(folder, "embeddings")
        _batch_features(emb, n_frames, np.arange(64))  # imports and first-call costs, untimed
        batches, start = 0, time.perf_counter()
        while time.perf_counter() - start < loader_seconds / 2 and batches < 20_000:
            x = _batch_features(emb, n_frames, np.sort(rng.choice(len(emb), size=64, replace=False)))
            assert x.shape == (64, THESIS["dims"])
            batches += 1
        secs = time.perf_counter() - start
        out[f"{kind}_clips_per_s"] = 64 * batches / secs
        out[f"{kind}_batches"] = batches
        del emb  # unmapped, so that its pages can be dropped
    out["note"] = (
        f"batches of 64 random clips of {sz['unbal_clips']:,}: {out['warm_clips_per_s']:,.0f} clips/s from "
        f"the page cache, {out['cold_clips_per_s']:,.0f} clips/s from disk (file resident before: "
        f"{_mib(out['warm_resident_mib_before'])} / {_mib(out['cold_resident_mib_before'])} MiB)"
    )
    return out


def stage_features(folder: Path, sz: dict, **_) -> dict:
    """clip_features on all training + test clips in one call (as teacher_votes does), saved as float32 .npy."""
    from pate_study.data.audioset import Split
    from pate_study.experiments.audioset import data as as_data

    n = sz["train_clips"] + sz["test_clips"]
    emb, n_frames = _open(folder, "embeddings")[:n], _open(folder, "n_frames")[:n]
    split = Split(emb, n_frames, np.zeros((n, 1), bool), np.zeros(n, object), np.zeros(n), np.zeros(n))
    start = time.perf_counter()
    x = as_data.clip_features(split)
    secs = time.perf_counter() - start
    tmp = folder / "features.tmp.npy"
    np.save(tmp, x.astype(np.float32))
    os.replace(tmp, folder / "features.npy")
    return {"clip_features_s": secs, "note": f"clip_features on {n:,} memory-mapped clips in one call: {secs:.1f} s"}


def _pools(sz: dict, seed: int):
    from pate_study.experiments.audioset import data as as_data

    split = as_data.pool_split(sz["train_clips"], student_fraction=0.1, val_fraction=0.01, seed=seed)  # big 50: 90/10
    parts = as_data.teacher_partitions(split, sz["teachers"], seed=as_data.run_seed(seed, "big", sz["teachers"]))
    public = np.sort(np.concatenate([split.val, split.student]))
    return split, parts, public


def _spec(steps: int, eval_every: int | None = None):
    from pate_study.experiments.audioset import teachers as at

    return at.TeacherSpec(**SPEC, steps=int(steps), eval_every=int(eval_every or steps))


def stage_teachers(folder: Path, sz: dict, seed: int, steps: tuple[int, int], **_) -> dict:
    """50 stacked teachers, two runs of A and B steps (one evaluation each): seconds per step of the stack."""
    from pate_study.experiments.audioset import data as as_data
    from pate_study.experiments.audioset import teachers as at

    X, Y = _open(folder, "features"), _open(folder, "labels")
    n_train = sz["train_clips"]
    split, parts, _ = _pools(sz, seed)
    x_test, y_test = X[n_train:], np.asarray(Y[n_train:])
    # untimed warm-up (imports, first-call costs): 2 teachers, 1 step, 100 test clips
    at.train_teachers(
        X[:n_train],
        Y[:n_train],
        as_data.first_teachers(parts, 2),
        split.val,
        x_test[:100],
        y_test[:100],
        _spec(1),
        seed=seed,
        curve_clips=50,
        name="warm-up",
    )
    times = []
    for s in steps:
        start = time.perf_counter()
        run = at.train_teachers(
            X[:n_train],
            Y[:n_train],
            parts,
            split.val,
            x_test,
            y_test,
            _spec(s),
            seed=seed,
            curve_clips=CURVE_CLIPS,
            name=f"scale teachers {s} steps",
        )
        times.append(time.perf_counter() - start)
        assert run.map.shape == (sz["teachers"],)
    per_step = (times[1] - times[0]) / (steps[1] - steps[0])
    every = max(1, steps[1] // EVALUATIONS)  # B steps again, with several evaluations instead of one
    evaluations = -(-steps[1] // every)
    start = time.perf_counter()
    at.train_teachers(
        X[:n_train],
        Y[:n_train],
        parts,
        split.val,
        x_test,
        y_test,
        _spec(steps[1], every),
        seed=seed,
        curve_clips=CURVE_CLIPS,
        name=f"teachers {steps[1]} steps, {evaluations} evaluations",
    )
    per_evaluation = (time.perf_counter() - start - times[1]) / max(1, evaluations - 1)
    return {
        "runs_s": times,
        "steps": list(steps),
        "seconds_per_step": per_step,
        "fixed_s": times[0] - steps[0] * per_step,
        "seconds_per_evaluation": per_evaluation,
        "teacher_pool": len(split.teacher),
        "clips_per_teacher": int(parts.train.shape[1]),
        "validation": len(split.val),
        "note": f"{sz['teachers']} teachers x {parts.train.shape[1]:,} clips, MLP 128-512-256-{sz['labels']}: "
        f"{per_step:.3f} s per step of the stack ((t_B - t_A) / (B - A)); {per_evaluation:.1f} s per "
        f"evaluation (validation {len(split.val):,} + {CURVE_CLIPS:,} curve clips)",
    }


def stage_query(folder: Path, sz: dict, seed: int, **_) -> dict:
    """The stacked forward pass of the 50 teachers on the public pool + test set, into a memory-mapped array."""
    import torch

    from pate_study.experiments.audioset import votes as am
    from pate_study.learning.stacked import StackedMLP
    from pate_study.learning.train_config import teacher_seeds

    X, Y = _open(folder, "features"), _open(folder, "labels")
    n_train, t = sz["train_clips"], sz["teachers"]
    _, _, public = _pools(sz, seed)
    rows = np.concatenate([public, np.arange(n_train, n_train + sz["test_clips"])])
    model = StackedMLP((THESIS["dims"], *SPEC["hidden"], sz["labels"]), teacher_seeds(seed, t), dropout=SPEC["dropout"])
    params = model.params()
    probs = np.lib.format.open_memmap(
        folder / "votes.npy", mode="w+", dtype=np.float32, shape=(t, len(rows), sz["labels"])
    )
    start = time.perf_counter()
    source = model.source(X[rows], "queries")
    with torch.no_grad():
        for c0 in range(0, len(rows), 2048):
            r = torch.arange(c0, min(len(rows), c0 + 2048))
            probs[:, c0 : c0 + len(r)] = torch.sigmoid(model.forward(params, [], source, r, training=False)).numpy()
    probs.flush()
    forward_s = time.perf_counter() - start
    start = time.perf_counter()
    skill = 2.4 / t**0.15  # synthetic_votes's skill for T teachers
    for c0 in range(0, len(rows), 4096):
        c1 = min(len(rows), c0 + 4096)
        probs[:, c0:c1] = am.synthetic_teacher_probabilities(np.asarray(Y[rows[c0:c1]]), t, skill=skill, seed=seed + c0)
    probs.flush()
    np.save(folder / "query_rows.npy", rows)
    return {
        "forward_s": forward_s,
        "standin_votes_s": time.perf_counter() - start,
        "queries": int(len(public)),
        "test": int(sz["test_clips"]),
        "votes_gib": probs.nbytes / 2**30,
        "note": f"{t} teachers x {len(rows):,} clips x {sz['labels']} labels ({probs.nbytes / 2**30:.2f} GiB "
        f"float32 on disk): forward {forward_s:.1f} s; vote values from the synthetic stand-in teachers",
    }


def _cached_votes(folder: Path, sz: dict):
    from pate_study.experiments.audioset import votes as am

    votes, rows, Y = _open(folder, "votes"), np.load(folder / "query_rows.npy"), _open(folder, "labels")
    n_pool = len(rows) - sz["test_clips"]
    y = np.asarray(Y[rows])
    return (
        am.CachedVotes(
            votes[:, :n_pool],
            y[:n_pool],
            votes[:, n_pool:],
            y[n_pool:],
            y[:n_pool].mean(0).astype(np.float64),
            tuple(f"class {i}" for i in range(sz["labels"])),
            "synthetic",
        ),
        rows,
        n_pool,
    )


def _student_sizes(n_pool: int) -> list[int]:
    """Table 5.4's n; on a public pool smaller than the largest n, scaled in proportion (still 18 students)."""
    biggest = max(THESIS["student_sizes"])
    if n_pool >= biggest:
        return list(THESIS["student_sizes"])
    return [max(20, round(n * n_pool / biggest)) for n in THESIS["student_sizes"]]


def stage_aggregate(folder: Path, sz: dict, seed: int, **_) -> dict:
    """Table 5.4's 18 releases and their privacy on the stored votes."""
    import pickle

    from pate_study.experiments.audioset import release_privacy

    cv, _, n_pool = _cached_votes(folder, sz)
    sizes_ = _student_sizes(n_pool)
    start = time.perf_counter()
    privacy, releases = release_privacy.released_labels(
        cv, sizes_, THESIS["student_thresholds"], THESIS["student_confidences"], delta=THESIS["delta"], seed=seed
    )
    secs = time.perf_counter() - start
    with open(folder / "releases.pkl", "wb") as f:
        pickle.dump((privacy, releases), f)
    answered = [float(r["answered"].mean()) for r in releases]
    return {
        "releases": len(releases),
        "student_sizes": sizes_,
        "released_labels_s": secs,
        "answered_fraction_min": min(answered),
        "note": f"{len(releases)} releases (n in {sizes_}) with data-dependent and data-independent ε: {secs:.1f} s",
    }


def stage_students(folder: Path, sz: dict, seed: int, steps: tuple[int, int], student_extra: int = 300, **_) -> dict:
    """The 18 students (A steps each), then one student at A and at A + ``student_extra`` steps (best of 2
    each): seconds per student step."""
    import pickle

    from pate_study.experiments.audioset import pipeline, students

    cv, rows, n_pool = _cached_votes(folder, sz)
    X = _open(folder, "features")
    with open(folder / "releases.pkl", "rb") as f:
        privacy, releases = pickle.load(f)
    pool_x, test_x = np.asarray(X[rows[:n_pool]]), np.asarray(X[rows[n_pool:]])
    start = time.perf_counter()
    table = pipeline.train_students(privacy, releases, pool_x, test_x, cv.test_labels, _spec(steps[0]), seeds=(seed,))
    sweep_s = time.perf_counter() - start
    big = max(range(len(releases)), key=lambda i: releases[i]["answered"].sum())
    rel = releases[big]
    calibration = (steps[0], steps[0] + student_extra)
    times = []
    for s in calibration:  # best of 2: a student step is milliseconds, the fixed part seconds
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            students.train_student(
                pool_x[: len(rel["labels"])],
                rel["labels"],
                rel["answered"],
                test_x,
                cv.test_labels,
                _spec(s),
                seeds=(seed,),
                name=f"scale student {s} steps",
            )
            runs.append(time.perf_counter() - t0)
        times.append(min(runs))
    per_step = (times[1] - times[0]) / (calibration[1] - calibration[0])
    return {
        "students": len(table),
        "sweep_s": sweep_s,
        "steps": list(calibration),
        "calibration_runs_s": times,
        "seconds_per_step": per_step,
        "fixed_s": times[0] - calibration[0] * per_step,
        "note": f"{len(table)} students x {steps[0]} steps: {sweep_s:.1f} s; one student at {calibration[0]} and "
        f"{calibration[1]} steps (best of 2): {per_step * 1e3:.1f} ms per student step",
    }


STAGE_FUNCTIONS = {
    "write": stage_write,
    "loader": stage_loader,
    "features": stage_features,
    "teachers": stage_teachers,
    "query": stage_query,
    "aggregate": stage_aggregate,
    "students": stage_students,
}


def run_child(args: argparse.Namespace) -> None:
    """Child process: one stage; writes {result, wall_s, maxrss_kib, anon_peak_kib} to ``--result``."""
    import torch

    torch.set_num_threads(args.threads)
    sz = sizes(args.scale)
    with AnonPeak() as mem:
        start = time.perf_counter()
        result = STAGE_FUNCTIONS[args.stage](
            Path(args.folder),
            sz,
            seed=args.seed,
            steps=tuple(args.steps),
            loader_seconds=args.loader_seconds,
            student_extra=args.student_extra,
        )
        wall = time.perf_counter() - start
    out = {
        "result": result,
        "wall_s": wall,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "anon_peak_kib": mem.peak_kib,
    }
    Path(args.result).write_text(json.dumps(out, default=float))


# ----------------------------------------------------------------------------- driver
def run_stage(stage: str, folder: Path, args: argparse.Namespace) -> dict:
    result = folder / f"{stage}.result.json"
    cmd = [
        sys.executable,
        __file__,
        "--child",
        stage,
        "--folder",
        str(folder),
        "--result",
        str(result),
        "--scale",
        str(args.scale),
        "--seed",
        str(args.seed),
        "--threads",
        str(args.threads),
        "--loader-seconds",
        str(args.loader_seconds),
        "--student-extra",
        str(args.student_extra),
        "--steps",
        *map(str, args.steps),
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, timeout=args.stage_timeout)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"stage {stage!r} failed (exit {proc.returncode}); command: {' '.join(cmd)}")
    out = json.loads(result.read_text())
    return {
        "stage": stage,
        "process_s": wall,
        "wall_s": out["wall_s"],
        "peak_rss_mib": out["maxrss_kib"] / 1024,
        "peak_anon_mib": out["anon_peak_kib"] / 1024,
        **out["result"],
    }


def estimate(rows: dict, n_iter: int) -> dict:
    """Per-step times measured here, extrapolated to ``n_iter`` iterations per model (not a measured run)."""
    t, s = rows["teachers"], rows["students"]
    teachers = t["fixed_s"] + n_iter * t["seconds_per_step"] + n_iter // EVAL_EVERY * t["seconds_per_evaluation"]
    students = THESIS["students"] * (s["fixed_s"] + n_iter * s["seconds_per_step"])
    once = rows["features"]["wall_s"] + rows["query"]["forward_s"] + rows["aggregate"]["wall_s"]
    return {
        "iterations": n_iter,
        "teachers_s": teachers,
        "students_s": students,
        "features_query_aggregate_s": once,
        "total_s": teachers + students + once,
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scale", type=float, default=1.0, help="fraction of the thesis's clip counts (default 1.0)")
    p.add_argument(
        "--steps",
        type=int,
        nargs=2,
        default=(10, 50),
        metavar=("A", "B"),
        help="training steps of the two timed runs (teachers) / the sweep and calibration (students)",
    )
    p.add_argument("--out", type=Path, help="write the per-stage results and the estimate as JSON here")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads per stage (default 1: on the shared 2-core machine 2 threads were 2.3x slower per step)",
    )
    p.add_argument(
        "--student-extra", type=int, default=300, help="extra steps of the second student calibration run (default 300)"
    )
    p.add_argument("--loader-seconds", type=float, default=8.0, help="seconds of minibatch reads (warm + cold)")
    p.add_argument("--stage-timeout", type=float, default=1200.0, help="seconds before a stage is killed")
    p.add_argument("--workdir", type=Path, default=None, help="parent of the temporary data folder (default: TMPDIR)")
    p.add_argument("--child", choices=STAGES, help=argparse.SUPPRESS)
    p.add_argument("--folder", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        args.stage = args.child
        logging.basicConfig(level=logging.WARNING)
        # its per-release note that the thesis's order grid starts at its best order (2) is not news here
        logging.getLogger("pate_study.experiments.audioset").setLevel(logging.ERROR)
        # nor that Theorem 12's best order for 153 labels is the grid's first (1.001); torch's note that the
        # read-only memory-mapped features become a tensor (they are copied, see pate_study.learning.stacked.as_inputs)
        warnings.filterwarnings("ignore", message=".*is at the edge of the order range.*")
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable.*")
        return run_child(args)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not 0 < args.steps[0] < args.steps[1]:
        raise SystemExit(f"--steps {args.steps[0]} {args.steps[1]}: expected 0 < A < B")
    sz = sizes(args.scale)
    import torch

    header = {
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "threads": args.threads,
        "load_average_start": os.getloadavg(),
        "sizes": sz,
        "thesis": THESIS,
        "teacher_spec": SPEC,
    }
    logger.info("# %s", header["command"])
    logger.info(
        "# %s, %d CPUs, torch %s, %d threads; load average %.1f %.1f %.1f",
        platform.machine(),
        os.cpu_count(),
        torch.__version__,
        args.threads,
        *header["load_average_start"],
    )
    logger.info("# sizes: %s", {k: v for k, v in sz.items() if k != "floored"})
    if sz["floored"]:
        logger.info("# raised to the floor %s so that the pipeline has work: %s", FLOORS, sz["floored"])
    folder = Path(tempfile.mkdtemp(prefix="bench_scale_", dir=args.workdir))
    rows = {}
    try:
        for stage in STAGES:
            rows[stage] = r = run_stage(stage, folder, args)
            logger.info(
                "%-10s %8.1f s  peak RSS %7.0f MiB  peak anon %7.0f MiB  %s",
                stage,
                r["wall_s"],
                r["peak_rss_mib"],
                r["peak_anon_mib"],
                r.get("note", ""),
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    est = estimate(rows, THESIS["iterations"])
    logger.info(
        "extrapolated from the per-step times measured in this run (not a measured run): %d iterations "
        "per model: 50 teachers %.2f h, 18 students %.2f h, features + query + aggregation %.1f min; "
        "total %.2f h on this machine",
        est["iterations"],
        est["teachers_s"] / 3600,
        est["students_s"] / 3600,
        est["features_query_aggregate_s"] / 60,
        est["total_s"] / 3600,
    )
    header["load_average_end"] = os.getloadavg()
    if args.out:
        args.out.write_text(json.dumps({**header, "stages": rows, "estimate": est}, indent=1, default=str))


if __name__ == "__main__":
    main()
