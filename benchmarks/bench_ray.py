"""Benchmark: the Ray backend (pate_study.learning.distributed) against the in-process loop, side by side.

Default mode, on this machine, one process, in this order:

* **ensemble**: notebook 04's 50 embedding teachers (:func:`audioset.teachers.train_teachers`, stacked, with
  ``backend`` / ``teachers_per_task``): ``--pool`` teacher-pool clips of synthetic 128-d embeddings with
  ``--labels`` labels (the "big" subset's shape: ~7.2k clips, 161 labels), MLP(256), batch 64, balanced
  sampler, mixup, ``--teacher-steps`` steps with an evaluation (validation split of 200 clips) every 100,
  then every teacher's scores on ``--queries`` eval clips. Shards of ``--teachers-per-task`` teachers (5
  tasks of 10 by default).
* **sweep**: a 20-point Table 5.4 student sweep (:func:`audioset.pipeline.train_students`: n in {2000, 5000}
  x th_e in {0.2, 0.3, 0.4, 0.5, adaptive} x th_c in {None, 0.6}) on synthetic 50-teacher votes, one task
  per point, students of ``--student-steps`` steps (05's student recipe); the releases and their privacy
  (:func:`audioset.release.released_labels`) are computed once, in this process, and not timed.

Each runs (a) locally, one stack of all teachers (today's path; ensemble only), (b) locally with the same
shard plan as Ray, (c) on a fresh local Ray instance with 1 CPU (one worker) and (d) with 2 CPUs (two
workers), cold (first tasks start the workers) and, for the ensemble, again on the warm workers. Local runs
use 1 torch thread (as a Ray worker does: Ray sets OMP_NUM_THREADS to the task's CPUs); a local one-stack
run with the machine's default threads comes last. The sharded results must be identical on every
backend (checked). Ray's start-up (``ray.init``) is reported apart; the Ray timings include starting the
worker processes (cold). Ray's overhead per task: 50 empty tasks through ``map_shards`` on the warm
instance, and (Ray 1 worker - local sharded) / tasks.

``--logmel``: seconds per training iteration of the thesis's log-Mel teacher (ResNet-18 at the thesis
widths, 1001 x 64 log-Mel, batch 64, 153 classes, mixup, Adam) on ``--device`` through
:func:`audioset.teachers.train_logmel_teachers`: two runs of ``--steps A B`` iterations, (t_B - t_A) / (B - A)
(start-up and the final evaluation cancel; a first untimed run of A iterations warms up), for each
``--teachers-stacked`` count stacked on the device; then the wall time of the thesis's full setting on 1, 4, 16 such
devices (assumptions printed).

  python benchmarks/bench_ray.py                                   # ensemble + sweep, local vs Ray 1/2 workers
  python benchmarks/bench_ray.py --logmel --device cpu --steps 1 2
  python benchmarks/bench_ray.py --logmel --device cuda --steps 5 25 --teachers-stacked 1 4   # on a GPU machine
"""

from __future__ import annotations

import argparse
import logging
import math
import platform
import time
import warnings

import numpy as np
import torch

from pate_study.experiments.audioset import data as as_data
from pate_study.experiments.audioset import pipeline, release_privacy
from pate_study.learning import distributed
from pate_study.learning.partitions import make_partitions


def synthetic_embeddings(n: int, labels: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """128-d Gaussian clips whose labels depend on them (Zipf label frequencies, >= 1 label per clip)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 128)).astype(np.float32)
    freq = 1.0 / np.arange(1, labels + 1)
    logits = X @ rng.normal(size=(128, labels)) / 4 + np.log(freq / freq.sum() * 2)[None]
    Y = rng.random((n, labels)) < 1 / (1 + np.exp(-logits))
    Y[np.arange(n), rng.choice(labels, n, p=freq / freq.sum())] = True
    return X, Y.astype(np.float32)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _noop(i: int) -> dict:
    return {"i": i}


def bench_backends(args: argparse.Namespace) -> None:
    import os

    import ray

    from pate_study.experiments.audioset import teachers as at
    from pate_study.experiments.audioset.votes import synthetic_votes

    X, Y = synthetic_embeddings(args.pool + 200 + args.queries, args.labels, 0)
    Xt, Yt, Q, QY = X[: args.pool + 200], Y[: args.pool + 200] > 0.5, X[args.pool + 200 :], Y[args.pool + 200 :] > 0.5
    val = np.arange(args.pool, args.pool + 200)
    size = args.pool // args.teachers
    parts = make_partitions(args.pool, args.teachers, size, seed=0)
    spec = at.TeacherSpec(hidden=(256,), batch_size=64, steps=args.teacher_steps, eval_every=100)
    cv = synthetic_votes(args.teachers, n_pool=5000, n_test=2000, n_labels=args.labels, seed=0)
    feats = np.random.default_rng(1).normal(size=(7000, 128)).astype(np.float32)
    labels = np.concatenate([cv.pool_labels, cv.test_labels]).astype(np.float32)
    feats += 2.0 * labels @ np.random.default_rng(2).normal(size=(args.labels, 128)).astype(np.float32) / 4  # learnable
    student = at.TeacherSpec(hidden=(256,), batch_size=64, steps=args.student_steps, eval_every=100)
    privacy, releases = release_privacy.released_labels(
        cv, [2000, 5000], [0.2, 0.3, 0.4, 0.5, "adaptive"], [None, 0.6], delta=1e-8, seed=0
    )  # the privacy side is not distributed: once
    tpt = args.teachers_per_task
    n_tasks = math.ceil(args.teachers / tpt)

    def ensemble(backend: str, per_task):
        os.environ["PATE_STUDY_CACHE"] = _fresh_cache()  # every run computes
        inputs = as_data.EnsembleInputs(Xt, Yt, parts, val, Q, QY, 0, "bench", np.arange(args.pool))
        return pipeline.train_ensemble(
            inputs, spec, curve_clips=200, device="cpu", backend=backend, teachers_per_task=per_task
        )

    def sweep(backend: str):
        return pipeline.train_students(
            privacy, releases, feats[:5000], feats[5000:], cv.test_labels, student, seeds=(0,), backend=backend
        )

    print(
        f"machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads by default; "
        f"torch {torch.__version__}, ray {ray.__version__}"
    )
    print(
        f"ensemble: {args.teachers} teachers x {size} clips, MLP(128-256-{args.labels}), {args.teacher_steps} steps "
        f"of 64, {args.queries} queries; shards of {tpt} ({n_tasks} tasks)"
    )
    print(
        "sweep: 20 students (n x th_e x th_c), "
        f"{args.student_steps} steps each, 5000 pool / 2000 test clips, {args.labels} labels; one task per point"
    )
    rows = {}
    default_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    at.train_teachers(
        Xt,
        Yt,
        make_partitions(200, 2, 50, seed=0),
        val,
        Q[:10],
        QY[:10],
        spec.replace(steps=2),
        curve_clips=10,
        device="cpu",
    )  # warm-up (imports, allocator), not timed
    one, t_one = timed(lambda: ensemble("local", None))
    rows["local, one stack (today), 1 thread"] = (t_one, None)
    ref, t_ref = timed(lambda: ensemble("local", tpt))
    ref_sweep, t_sweep = timed(lambda: sweep("local"))
    rows["local, same shards, 1 thread"] = (t_ref, t_sweep)
    overhead = {}
    for workers in (1, 2):
        _, t_init = timed(lambda: distributed.connect(num_cpus=workers))
        votes, t_ens = timed(lambda: ensemble("ray", tpt))
        table, t_sw = timed(lambda: sweep("ray"))
        assert np.array_equal(votes.class_ap, ref.class_ap), "Ray teachers differ from the local ones"
        assert table.equals(ref_sweep), "Ray sweep differs from the local one"
        rows[f"ray, {workers} worker{'s' if workers > 1 else ''}, cold (init {t_init:.0f} s apart)"] = (t_ens, t_sw)
        rows[f"ray, {workers} worker{'s' if workers > 1 else ''}, warm workers"] = (
            timed(lambda: ensemble("ray", tpt))[1],
            None,
        )
        shards = [distributed.Shard(f"noop {i}", {"i": i}) for i in range(50)]
        _, t_noop = timed(lambda: distributed.map_shards(_noop, shards, backend="ray", progress=False))
        overhead[workers] = t_noop / 50
        ray.shutdown()
    torch.set_num_threads(default_threads)
    rows[f"local, one stack, {default_threads} threads"] = (timed(lambda: ensemble("local", None))[1], None)
    base_e, base_s = rows["local, same shards, 1 thread"]
    print(f"\n{'run':48s} {'ensemble s':>11s} {'ratio':>6s} {'sweep s':>9s} {'ratio':>6s}")
    for name, (te, ts) in rows.items():
        sweep_cols = f"{ts:9.1f} {base_s / ts:6.2f}" if ts is not None else f"{'-':>9s} {'':6s}"
        print(f"{name:48s} {te:11.1f} {base_e / te:6.2f} {sweep_cols}")
    print("ratio: local-same-shards time / this time (> 1: faster); cold: includes starting the worker processes")
    r1e, r1s = rows[[k for k in rows if k.startswith("ray, 1 worker, cold")][0]]
    w1e = rows["ray, 1 worker, warm workers"][0]
    print(
        f"Ray overhead per task: {1000 * overhead[1]:.0f} ms (1 worker), {1000 * overhead[2]:.0f} ms (2 workers) "
        f"for an empty task on warm workers (50 tasks); ensemble (ray 1 worker warm - local shards) / {n_tasks} "
        f"tasks = {(w1e - base_e) / n_tasks:.2f} s, cold: {(r1e - base_e) / n_tasks:.2f} s; sweep (cold) / 20 tasks "
        f"= {(r1s - base_s) / 20:.2f} s"
    )
    print(
        f"per-teacher cost (local, one stack, 1 thread): {t_one / args.teachers:.2f} s; votes and students identical "
        "on every backend with the same shards: yes (asserted)"
    )


def _fresh_cache():
    import tempfile

    return tempfile.mkdtemp(prefix="bench-ray-cache-")  # a fresh cache: every run computes


# ----------------------------------------------------------------------------- log-Mel teacher iteration time
def logmel_seconds_per_iteration(
    device: str | None = None,
    *,
    teachers: int = 1,
    steps: tuple[int, int] = (5, 25),
    architecture: str = "resnet18",
    frames: int = 1001,
    classes: int = 153,
    batch_size: int = 64,
    width_scale: int = 1,
    seed: int = 0,
) -> dict:
    """Seconds per training iteration of ``teachers`` stacked log-Mel teachers on ``device`` (None: choose):
    two runs of ``steps[0]`` and ``steps[1]`` iterations of :func:`audioset.teachers.train_logmel_teachers`,
    (t1 - t0) / (steps[1] - steps[0]). Thesis recipe: batch 64, lr 1e-4, mixup 1.0, random sampler (the
    sampler's cost is host-side and small), 1001 x 64 log-Mel, 153 classes; synthetic clips (speed does not
    depend on the values)."""
    from pate_study.core.device import choose_device, describe_device
    from pate_study.experiments.audioset import data as as_data
    from pate_study.experiments.audioset import teachers as at
    from pate_study.learning.partitions import Partitions

    a, b = steps
    if not 0 < a < b:
        raise ValueError(f"steps={steps}: expected 0 < A < B")
    dev = choose_device(device)
    per = 2 * batch_size
    X, Y = as_data.synthetic_log_mel_clips(teachers * per + 8, classes, frames=frames, seed=seed)
    parts = Partitions(np.arange(teachers * per).reshape(teachers, per))
    times = []
    for s in (a, a, b):  # the first run is a warm-up (cuDNN autotuning, allocator): on an H100 it made t_A > t_B
        spec = at.TeacherSpec(
            lr=1e-4, batch_size=batch_size, steps=s, eval_every=s, sampler="random", mixup_alpha=1.0, dropout=0.5
        )
        _, _, seconds = at.train_logmel_teachers(
            architecture,
            X[:-8],
            Y[:-8],
            parts,
            np.zeros(0, np.int64),
            X[-8:],
            Y[-8:],
            spec,
            width_scale=width_scale,
            seed=seed,
            device=str(dev),
        )
        times.append(seconds)
    times = times[1:]
    per_it = (times[1] - times[0]) / (b - a)
    return {
        "device": describe_device(dev),
        "teachers": teachers,
        "architecture": architecture,
        "frames": frames,
        "batch": batch_size,
        "seconds_per_iteration": per_it,
        "seconds_per_teacher_iteration": per_it / teachers,
        "runs": dict(zip((a, b), times)),
    }


def thesis_estimate(
    seconds_per_teacher_iteration: float,
    *,
    teachers: int = 50,
    iterations: int = 10_000,
    students: int = 18,
    devices=(1, 4, 16),
    clip_bytes: int = 1001 * 64 * 2,
) -> list[dict]:
    """Wall time of the thesis's full setting from a measured per-teacher iteration time (assumptions in
    benchmarks/README.md): teachers and students are independent tasks of ``iterations`` iterations each
    (students: Table 5.4's 18 configurations, each assumed to cost one teacher), spread evenly over the
    devices (makespan = ceil(tasks / devices) tasks per device run back to back, or stacked at the same
    per-teacher cost); Ray's per-task overhead (< 1 s) is negligible; the noise sweeps run on cached votes."""
    out = []
    for g in devices:
        per_device = math.ceil(teachers / g) + math.ceil(students / g)
        hours = per_device * iterations * seconds_per_teacher_iteration / 3600
        out.append(
            {
                "devices": g,
                "tasks_per_device": per_device,
                "hours": hours,
                "input_MB_per_s_per_device": 64 * clip_bytes / seconds_per_teacher_iteration / 1e6,
            }
        )
    return out


def bench_logmel(args: argparse.Namespace) -> None:
    for t in args.teachers_stacked:
        r = logmel_seconds_per_iteration(args.device, teachers=t, steps=tuple(args.steps))
        print(
            f"{r['device']}: {t} x {r['architecture']} ({r['frames']}x64, batch {r['batch']}): "
            f"{r['seconds_per_iteration']:.3f} s per iteration, {r['seconds_per_teacher_iteration']:.3f} s per "
            f"teacher-iteration (runs {r['runs']})"
        )
    print(
        "\nthesis setting (50 ResNet teachers x 10,000 iterations of 64 + 18 students of the same cost), "
        "from the last line's per-teacher iteration time:"
    )
    for e in thesis_estimate(r["seconds_per_teacher_iteration"]):
        print(
            f"  {e['devices']:>2d} device(s): {e['tasks_per_device']:>3d} runs each, {e['hours']:8.1f} h; each device "
            f"reads {e['input_MB_per_s_per_device']:.1f} MB/s of float16 log-Mel"
        )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--teachers", type=int, default=50)
    p.add_argument("--teachers-per-task", type=int, default=10)
    p.add_argument("--pool", type=int, default=7200)
    p.add_argument("--queries", type=int, default=9000)
    p.add_argument("--labels", type=int, default=161)
    p.add_argument("--teacher-steps", type=int, default=300)
    p.add_argument("--student-steps", type=int, default=300)
    p.add_argument("--logmel", action="store_true", help="time the log-Mel ResNet teacher instead")
    p.add_argument("--device", default=None, help="cpu | cuda | None (choose)")
    p.add_argument("--steps", type=int, nargs=2, default=[5, 25])
    p.add_argument("--teachers-stacked", dest="teachers_stacked", type=int, nargs="+", default=[1])
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore", message="the best order")  # order 2 at the grid edge, as in notebook 05
    bench_logmel(args) if args.logmel else bench_backends(args)


if __name__ == "__main__":
    main()
