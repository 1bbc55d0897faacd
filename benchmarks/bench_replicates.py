"""Benchmark: the replicate teacher ensembles of notebooks 04 and 05 as ONE stacked model, against a loop of single
teachers, with the machine's float32 matmul peak measured in the same run.

What runs: ``--replicates`` replicate ensembles of ``--teachers`` embedding-MLP teachers of the big subset, each its own
seed, pool split and partitions (:func:`pate_study.experiments.audioset.pipeline.replicate_stack`), trained exactly as
the notebooks train them (:func:`pate_study.experiments.audioset.pipeline.train_stack`: one
:func:`pate_study.experiments.audioset.teachers.train_teachers` call over every teacher, per-teacher validation rows
and training seeds, balanced sampler, mixup, dropout, an evaluation every ``eval_every`` steps on the validation rows
and the curve sample), with notebook 04's paper recipe (``configs/04_audioset_teachers/paper.yaml``: MLP 128-128,
batch 64, lr 0.003) on ``--steps`` steps and no early stopping, so that both methods do the same work. The loop trains
``--loop-teachers`` of the same teachers one at a time through the same function (a stack of one, its own seeds,
partition and validation rows) and is scaled linearly to the stack's number of teachers (each loop teacher is
independent of the others). Data: the big subset of the prepared Audio Set embeddings when present (``--data auto``),
else the synthetic stand-in of the same shapes.

FLOPs (stated, matmuls only; elementwise work, Adam, sampling and the metrics are not counted): per teacher and
training step ``B·(4·S − 2·S1)`` (forward 2·B·S, weight gradients 2·B·S, input gradients 2·B·(S − S1); ``S`` = Σ
in·out over the layers, ``S1`` the first layer's), per evaluation ``2·S`` per scored row (the teacher's validation rows
and the curve sample), and the final scoring of every eval clip. Peak: the best of 5 float32 ``torch.mm(4096 x 4096)``
calls, before and after the runs, the larger reported; % peak = the method's matmul GFLOP/s over it.

  OMP_NUM_THREADS=1 PYTHONPATH=<checkout> python benchmarks/bench_replicates.py                # 3 x 50, 300 steps
  OMP_NUM_THREADS=1 PYTHONPATH=<checkout> python benchmarks/bench_replicates.py --steps 100 --loop-teachers 2  # quick
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch
import yaml

from pate_study.data import audioset
from pate_study.experiments.audioset import pipeline, teachers
from pate_study.learning.partitions import Partitions

PAPER = Path(__file__).resolve().parents[1] / "configs" / "04_audioset_teachers" / "paper.yaml"


def matmul_peak(n: int = 4096, repeats: int = 5) -> float:
    """Best float32 ``torch.mm(n x n)`` GFLOP/s of ``repeats`` calls."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


def matmul_flops(sizes: tuple[int, ...], batch: int, steps: int, eval_rows: int, n_evals: int, n_test: int) -> float:
    """Matmul FLOPs of one teacher: training steps, evaluations and the final scoring (module docstring)."""
    s = sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    s1 = sizes[0] * sizes[1]
    return steps * batch * (4 * s - 2 * s1) + n_evals * eval_rows * 2 * s + n_test * 2 * s


def paper_spec(steps: int) -> teachers.TeacherSpec:
    """Notebook 04's paper recipe on ``steps`` fixed steps (no early stopping, an evaluation every ``eval_every``)."""
    p = yaml.safe_load(PAPER.read_text())
    return teachers.TeacherSpec(
        hidden=tuple(p["hidden"]),
        dropout=p["dropout"],
        lr=p["learning_rate"],
        batch_size=p["batch_size"],
        steps=steps,
        eval_every=p["eval_every"],
        sampler=p["sampler"],
        mixup_alpha=p["mixup_alpha"],
        patience=None,
    )


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicates", type=int, default=3, help="replicate ensembles stacked (paper: 3)")
    ap.add_argument("--teachers", type=int, default=50, help="teachers per replicate ensemble (paper: 50)")
    ap.add_argument("--steps", type=int, default=300, help="training steps of every teacher (no early stopping)")
    ap.add_argument("--loop-teachers", type=int, default=5, help="teachers the loop runs (scaled to the stack)")
    ap.add_argument("--curve-clips", type=int, default=800, help="curve sample scored at every evaluation (paper: 800)")
    ap.add_argument("--data", default="auto", help="auto | real | synthetic")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 on a shared machine)")
    ap.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = ap.parse_args(argv)
    if min(args.replicates, args.teachers, args.steps, args.loop_teachers) < 1:
        ap.error("--replicates, --teachers, --steps and --loop-teachers: expected positive integers")
    torch.set_num_threads(args.threads)
    spec = paper_spec(args.steps)
    ds = audioset.load(args.data, subset="big", seed=0)
    seeds = tuple(range(1, args.replicates + 1))
    stack = pipeline.replicate_stack(ds, "big", args.teachers, seeds)
    n = args.replicates * args.teachers
    peak = [matmul_peak()]

    t = time.perf_counter()
    pipeline.train_stack(stack, spec, curve_clips=args.curve_clips, progress=False)
    stacked = time.perf_counter() - t

    inputs, val, train_seeds = stack.stacked_inputs(), stack.val_rows(), stack.train_seeds()
    k = min(args.loop_teachers, n)
    t = time.perf_counter()
    for i in range(k):
        teachers.train_teachers(
            inputs.X,
            inputs.Y,
            Partitions(inputs.partitions.train[i : i + 1]),
            val[i],
            inputs.X_test,
            inputs.Y_test,
            spec,
            seed=inputs.seed,
            curve_clips=args.curve_clips,
            train_seeds=train_seeds[i : i + 1],
        )
    loop_per_teacher = (time.perf_counter() - t) / k
    peak.append(matmul_peak())

    sizes = (inputs.X.shape[1], *spec.hidden, inputs.Y.shape[1])
    n_evals = args.steps // spec.eval_every
    per_teacher = matmul_flops(
        sizes, spec.batch_size, args.steps, val.shape[1] + args.curve_clips, n_evals, len(inputs.X_test)
    )
    best = max(peak)

    def rate(seconds: float, teachers_run: int) -> float:
        return per_teacher * teachers_run / seconds / 1e9

    out = {
        "machine": platform.processor() or platform.machine(),
        "threads": args.threads,
        "data": ds.source.kind,
        "recipe": f"MLP {'-'.join(map(str, sizes))}, batch {spec.batch_size}, {args.steps} steps, eval every "
        f"{spec.eval_every} ({val.shape[1]} validation + {args.curve_clips} curve rows), balanced sampler, mixup "
        f"{spec.mixup_alpha}, dropout {spec.dropout}",
        "teachers": n,
        "replicates": args.replicates,
        "peak_gflops": best,
        "stacked_seconds": stacked,
        "stacked_seconds_per_teacher": stacked / n,
        "stacked_gflops": rate(stacked, n),
        "stacked_pct_peak": 100 * rate(stacked, n) / best,
        "loop_teachers_run": k,
        "loop_seconds_per_teacher": loop_per_teacher,
        "loop_gflops": rate(loop_per_teacher, 1),
        "loop_pct_peak": 100 * rate(loop_per_teacher, 1) / best,
        "stacked_speedup_vs_loop": loop_per_teacher * n / stacked,
    }
    print(
        f"# {n} teachers ({args.replicates} replicate ensembles x {args.teachers}), {out['recipe']}; {ds.source.kind} "
        f"data; {args.threads} thread(s); peak {best:.1f} GFLOP/s\n"
        "| method | s per teacher | s for all | GFLOP/s | % peak | vs loop |\n|---|---|---|---|---|---|\n"
        f"| loop of single teachers ({k} run, scaled) | {loop_per_teacher:.3f} | {loop_per_teacher * n:.1f} | "
        f"{out['loop_gflops']:.1f} | {out['loop_pct_peak']:.1f}% | 1.0x |\n"
        f"| one stacked model | {stacked / n:.3f} | {stacked:.1f} | {out['stacked_gflops']:.1f} | "
        f"{out['stacked_pct_peak']:.1f}% | {out['stacked_speedup_vs_loop']:.1f}x |"
    )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
