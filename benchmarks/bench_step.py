"""Benchmark: notebook 04's training step against the bare stacked step, side by side in one process.

Three ways to train the same stack of embedding-MLP teachers with
:func:`pate_study.experiments.audioset.teachers.train_teachers` (the call notebook 04 makes), on synthetic 128-d
embeddings with Zipf-like labels (``bench_ensemble.synthetic_embeddings``; speed does not depend on the values):

* **bare stacked step**: the random sampler (successive permutations), no mixup, one evaluation at the end --
  forward, loss, backward and the fused Adam step of every teacher, and nothing else;
* **recipe, training only**: notebook 04's balanced sampler (Muschiol 2021 §4.4.2) and mixup (§4.4.3), one
  evaluation at the end -- the sampler's and mixup's cost on top of the bare step;
* **notebook 04's step**: the recipe with an evaluation every ``eval_every`` steps on the validation split and
  the curve clips (mAP and AUC per teacher) -- what a step of the notebook costs;
* with ``--compile``, **the recipe's training step compiled** (``TeacherSpec.compile_step``: ``torch.compile``, CUDA
  graphs on CUDA); compilation happens in the warm-up and in the first steps of each run, which the slope cancels.

Each row's time per step is the slope ``(t_B - t_A) / (B - A)`` of two runs of ``A`` and ``B`` steps (both
multiples of ``eval_every``), so initialisation, the final evaluation and the test-set scoring cancel; the best of
``--repeats`` pairs is kept. Sizes default to notebook 04's paper profile for its big-subset 10-teacher ensemble
(``configs/04_audioset_teachers/paper.yaml``: MLP (128, 128), lr 3e-3, batch 64, balanced sampler, mixup 1.0, an
evaluation every 100 steps; 621 clips per teacher, a validation split of 780 clips, 800 curve clips) with the thesis's
153 labels. The matmul FLOPs of one bare step (``bench_ensemble.matmul_flops_per_sample``) against the float32
``torch.mm(4096²)`` peak measured in the same run give its % of peak.

  python benchmarks/bench_step.py --threads 1                    # 10 teachers, notebook 04's paper recipe
  python benchmarks/bench_step.py --threads 1 --teachers 50 --samples 124
  python benchmarks/bench_step.py --device cuda --steps 1000 3000  # on a GPU machine
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ensemble import matmul_flops_per_sample, matmul_peak, synthetic_embeddings, timed  # noqa: E402 - after this folder is put first on sys.path

from pate_study.core.device import choose_device, describe_device, tune_cpu_allocator  # noqa: E402 - after this folder is put first on sys.path
from pate_study.experiments.audioset.teachers import TeacherSpec, train_teachers  # noqa: E402 - after this folder is put first on sys.path
from pate_study.learning.partitions import Partitions  # noqa: E402 - after this folder is put first on sys.path


def seconds_per_step(run, steps: tuple[int, int], repeats: int, device: torch.device) -> float:
    """Best over ``repeats`` of ``(t_B - t_A) / (B - A)`` for ``run(n_steps)`` (each run :func:`timed`)."""
    best = float("inf")
    for _ in range(repeats):
        t_a, t_b = (timed(lambda: run(n), device) for n in steps)
        best = min(best, (t_b - t_a) / (steps[1] - steps[0]))
    return best


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teachers", type=int, default=10)
    ap.add_argument("--samples", type=int, default=621, help="training clips per teacher")
    ap.add_argument("--labels", type=int, default=153)
    ap.add_argument("--val", type=int, default=780, help="validation clips (shared by the teachers)")
    ap.add_argument("--curve", type=int, default=800, help="curve clips scored at every evaluation")
    ap.add_argument("--hidden", type=int, nargs="+", default=[128, 128])
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument(
        "--steps",
        type=int,
        nargs=2,
        default=[200, 1000],
        metavar=("A", "B"),
        help="the two run lengths of the slope (multiples of --eval-every)",
    )
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument(
        "--compile",
        action="store_true",
        help="add a row: the recipe's training step through torch.compile (TeacherSpec.compile_step)",
    )
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    if any(s % args.eval_every for s in args.steps) or args.steps[0] >= args.steps[1]:
        ap.error(f"--steps {args.steps}: expected A < B, both multiples of --eval-every {args.eval_every}")
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = choose_device(args.device)
    if dev.type == "cpu":
        tune_cpu_allocator()
    n, m = args.teachers, args.samples
    X, Y = synthetic_embeddings(n * m + args.val + args.curve, 128, args.labels, args.seed)
    parts = Partitions(np.arange(n * m).reshape(n, m))
    val = np.arange(n * m, n * m + args.val)
    X_test, Y_test = X[n * m + args.val :], Y[n * m + args.val :]
    recipe = TeacherSpec(
        hidden=tuple(args.hidden),
        lr=args.lr,
        batch_size=args.batch_size,
        eval_every=args.eval_every,
        sampler="balanced",
        mixup_alpha=1.0,
        patience=None,
    )
    specs = {
        "bare stacked step (random sampler, no mixup)": recipe.replace(sampler="random", mixup_alpha=None),
        "recipe, training only (balanced sampler, mixup)": recipe,
        f"notebook 04's step (recipe + evaluation every {args.eval_every})": recipe,
    }
    if args.compile:
        specs["recipe, training only, compiled step"] = recipe.replace(compile_step=True)

    def runner(spec: TeacherSpec, evaluate: bool):
        def run(steps: int) -> None:
            train_teachers(
                X,
                Y,
                parts,
                val,
                X_test,
                Y_test,
                spec.replace(steps=steps, eval_every=spec.eval_every if evaluate else steps),
                seed=args.seed,
                curve_clips=args.curve,
                device=str(dev),
            )

        return run

    for spec in {getattr(spec, "compile_step", False): spec for spec in specs.values()}.values():  # warm-up: imports,
        runner(spec, True)(args.eval_every)  # first calls and compilation are not part of the comparison
    peak_before = matmul_peak(device=dev)
    per_step = {
        name: seconds_per_step(runner(spec, evaluate=name.startswith("notebook")), tuple(args.steps), args.repeats, dev)
        for name, spec in specs.items()
    }
    peak = max(peak_before, matmul_peak(device=dev))
    step_flops = matmul_flops_per_sample((128, *args.hidden, args.labels)) * args.batch_size * n
    bare = next(iter(per_step.values()))
    result = {
        "device": describe_device(dev),
        "torch": torch.__version__,
        "teachers": n,
        "samples": m,
        "labels": args.labels,
        "hidden": args.hidden,
        "batch_size": args.batch_size,
        "val": args.val,
        "curve": args.curve,
        "eval_every": args.eval_every,
        "steps": args.steps,
        "peak_gflops": peak,
        "step_gflop": step_flops / 1e9,
        "ms_per_step": {k: 1e3 * v for k, v in per_step.items()},
    }
    print(
        f"# {n} embedding teachers x {m} clips, MLP 128-{'-'.join(map(str, args.hidden))}-{args.labels}, batch "
        f"{args.batch_size}; validation {args.val} + curve {args.curve} clips; slope of {args.steps[0]} and "
        f"{args.steps[1]} steps, best of {args.repeats}"
    )
    print(
        f"# device {result['device']}, torch {torch.__version__}; matmul peak {peak:.1f} GFLOP/s (before "
        f"{peak_before:.1f}); {step_flops / 1e9:.3f} GFLOP of matmuls per step of all teachers"
    )
    print(f"{'row':<62}{'ms/step':>9}{'vs bare':>9}{'% peak':>8}")
    for name, t in per_step.items():
        print(f"{name:<62}{1e3 * t:>9.2f}{t / bare:>8.2f}x{100 * step_flops / t / 1e9 / peak:>7.1f}%")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
