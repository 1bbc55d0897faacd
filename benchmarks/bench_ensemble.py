"""Benchmark: N teachers trained as one batched computation vs the loop of N single models.

Two settings (``--mode``):

* ``web`` (default; below): 250 Sosa (2021) web teachers, epochs, dense and sparse first layer;
* ``embedding``: the Audio Set embedding teachers -- 50 teachers, 128-d input, MLP(512, 512),
  160 labels, multi-label BCE, Adam, batch 64, a step schedule of ``--target-steps`` (10,000, the
  thesis's ~10,000 iterations) optimiser steps. Both methods run the package's one training loop
  (:func:`pate_study.learning.training.train_stacked`): stacked (:func:`pate_study.learning.ensemble.train_ensemble`) vs
  once per teacher (:func:`pate_study.learning.ensemble.train_ensemble_loop`), side by side in one process. They
  run ``--steps`` steps (default 500) and the time is extrapolated linearly to ``--target-steps``
  (each step does the same work; the report states the measured steps); the loop runs
  ``--loop-teachers`` teachers and is scaled to ``--teachers``. No validation split and one
  evaluation at the end (training loss only), so both do exactly the same work. Data: synthetic
  128-d Gaussian embeddings with 1-3 labels per clip, Zipf-distributed label frequencies (speed does
  not depend on the values). FLOPs per sample and step as below (matmuls only).

The web setting:

Setting of Sosa (2021): 250 teachers, 930 samples each, 500 TF-IDF inputs, the
500-512-128-1 net (322,305 parameters), Adam. Data are synthetic TF-IDF-like rows (Zipf-distributed
token ids, l1-normalised, about --tokens non-zeros per row); speed does not depend on the values.
Early stopping is off (no validation split) so every method does exactly the same work.

FLOP count (stated, matmuls only; elementwise work, Adam and data movement are not counted):
  per sample and epoch = 2*S (forward) + 2*S (weight gradients) + 2*(S - S1) (input gradients,
  not needed for the first layer), where S = sum_l in_l*out_l and S1 = in_1*out_1.
  achieved GFLOP/s = teachers * samples * epochs * that / wall time of the whole training call.
The sparse path is reported with the same dense-equivalent count (so its "GFLOP/s" is a speed,
not work done). Peak = best of 5 float32 torch.mm(4096 x 4096) calls, measured before and after
the runs in the same process with torch.get_num_threads() threads; the larger is reported.
The loop is timed on --loop-teachers teachers and scaled linearly to --teachers (each loop
teacher is independent, so its time is linear in the number of teachers).

  python benchmarks/bench_ensemble.py                    # full: 250 teachers x 20 epochs
  python benchmarks/bench_ensemble.py --teachers 20 --epochs 2 --samples 200   # quick
  python benchmarks/bench_ensemble.py --mode embedding --steps 500   # 50 embedding teachers, extrapolated
  python benchmarks/bench_ensemble.py --mode embedding --steps 10000 --loop-teachers 50   # no extrapolation
  python benchmarks/bench_ensemble.py --mode embedding --profile paper --device cuda   # notebook 04's paper recipe

Floor of any exact sparse path (also printed): the same training steps with the first layer's own
work removed. Its output h1 = X W1 + b1 is a fixed random [N, B, hidden] tensor; everything that
follows is done exactly as in training: bias, ReLU, the 512x128 and 128x1 layers forward and
backward, the loss, the gradient with respect to h1 (which any path needs to form W1's gradient)
and the fused Adam step over all parameters (W1's gradient a zero buffer: exact Adam moves every
parameter). A sparse first layer can only add to this, so dense time / floor time bounds the
speed-up of any exact sparse path (generously: the floor skips initialisation and thresholds).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pate_study.core.device import choose_device, describe_device, tune_cpu_allocator  # noqa: E402 - after the checkout is put first on sys.path
from pate_study.learning.ensemble import EnsembleConfig, train_ensemble, train_ensemble_loop  # noqa: E402 - after the checkout is put first on sys.path
from pate_study.learning.losses import per_teacher_loss  # noqa: E402 - after the checkout is put first on sys.path
from pate_study.learning.optimiser import adam_kwargs  # noqa: E402 - after the checkout is put first on sys.path
from pate_study.learning.partitions import Partitions, make_partitions  # noqa: E402 - after the checkout is put first on sys.path
from pate_study.learning.stacked import hidden_layers, init_stacked_params  # noqa: E402 - after the checkout is put first on sys.path
from pate_study.learning.train_config import teacher_seeds  # noqa: E402 - after the checkout is put first on sys.path


def matmul_peak(
    n: int = 4096, repeats: int = 5, device: torch.device | None = None, dtype: torch.dtype = torch.float32
) -> float:
    """Best GFLOP/s of ``repeats`` ``torch.mm`` calls on n x n matrices in ``dtype`` (2 n^3 FLOPs each)."""
    device = device or torch.device("cpu")
    g = torch.Generator().manual_seed(0)
    a, b = (torch.rand(n, n, generator=g).to(device, dtype) for _ in range(2))
    return best_rate(lambda: torch.mm(a, b), 2 * n**3, device, repeats)


def best_rate(fn, flops: float, device: torch.device, repeats: int) -> float:
    """Best GFLOP/s of ``repeats`` timed calls of ``fn`` (:func:`timed`), after one untimed call."""
    fn()
    return max(flops / timed(fn, device) / 1e9 for _ in range(repeats))


def synthetic_tfidf(n_rows: int, n_features: int, tokens: int, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n_rows), tokens)
    cols = np.minimum(rng.zipf(1.2, size=n_rows * tokens) - 1, n_features - 1)
    X = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(n_rows, n_features))
    X.sum_duplicates()
    X = sp.csr_matrix(X.multiply(1.0 / np.maximum(np.asarray(X.sum(1)), 1e-12))).astype(np.float32)
    w = rng.normal(size=n_features)
    score = np.asarray(X @ w).ravel()
    y = (score > np.quantile(score, 0.95)).astype(np.int64)  # 5% positives, as in Sosa's data
    return X, y


def matmul_flops_per_sample(sizes: tuple[int, ...]) -> int:
    s = [a * b for a, b in zip(sizes[:-1], sizes[1:])]
    return 2 * sum(s) + 2 * sum(s) + 2 * (sum(s) - s[0])


def sparse_path_floor(
    config: EnsembleConfig, n_teachers: int, samples: int, epochs: int, seed: int, device: torch.device
) -> float:
    """Seconds for ``epochs`` of training steps without the first layer's own work (see the module docstring)."""
    weights, biases = init_stacked_params(config, teacher_seeds(seed, n_teachers))
    params = [p.to(device).requires_grad_() for p in (*weights, *biases)]
    n_layers = len(weights)
    opt = torch.optim.Adam(params, **adam_kwargs(config.lr, config.weight_decay, device))
    g = torch.Generator(device=device).manual_seed(seed)
    width = config.layer_sizes[1]
    h1_full = torch.randn(n_teachers, config.batch_size, width, generator=g, device=device)
    target_full = (torch.rand(n_teachers, config.batch_size, 1, generator=g, device=device) < 0.05).float()
    w1_grad = torch.zeros_like(params[0])

    def run() -> None:
        for _ in range(epochs):
            for start in range(0, samples, config.batch_size):
                bsz = min(config.batch_size, samples - start)
                h1 = h1_full[:, :bsz].clone().requires_grad_()  # stands for X W1 (its gradient is needed)
                z = hidden_layers(h1 + params[n_layers], params[1:n_layers], params[n_layers + 1 :])
                loss = per_teacher_loss(z, target_full[:, :bsz], config.task).sum()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                params[0].grad = w1_grad
                opt.step()

    return timed(run, device)


def timed(fn, device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t


def synthetic_embeddings(n_rows: int, dim: int, n_labels: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian ``[n, dim]`` embeddings; 1-3 labels per row with Zipf-like label frequencies."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, dim)).astype(np.float32)
    freq = 1.0 / np.arange(1, n_labels + 1)
    Y = np.zeros((n_rows, n_labels), dtype=np.float32)
    for k in range(3):
        rows = np.arange(n_rows) if k == 0 else np.flatnonzero(rng.random(n_rows) < 0.4)
        Y[rows, rng.choice(n_labels, size=rows.size, p=freq / freq.sum())] = 1
    return X, Y


def embedding_main(args: argparse.Namespace) -> dict:
    """The issue-10 setting: stacked vs loop of single models, step schedule (see the module docstring)."""
    dev = choose_device(args.device)
    if dev.type == "cpu":
        tune_cpu_allocator()
    n, m, steps = args.teachers, args.samples, args.steps
    X, Y = synthetic_embeddings(n * m, 128, args.labels, args.seed)
    parts = make_partitions(n * m, n, m, seed=args.seed)
    cfg = EnsembleConfig(
        task="multilabel",
        in_features=128,
        n_outputs=args.labels,
        hidden=tuple(args.hidden),
        batch_size=args.batch_size,
        max_steps=steps,
        eval_every=steps,
        selection="last",
        lr=args.lr,
        sampler=args.sampler,
        mixup_alpha=args.mixup_alpha,
        allow_empty_labels=True,
    )
    flops_per_sample = matmul_flops_per_sample(cfg.layer_sizes)
    step_flops = flops_per_sample * args.batch_size * n  # one optimiser step of all teachers
    k = min(args.loop_teachers, n)
    # warm-up (first-call library initialisation is not part of the comparison)
    warm = EnsembleConfig(**{**cfg.to_dict(), "max_steps": 3, "eval_every": 3})
    train_ensemble(X, Y, Partitions(parts.train[:2]), warm, device=dev, progress=False)
    train_ensemble_loop(X, Y, Partitions(parts.train[:1]), warm, device=dev, progress=False)
    peak_before = matmul_peak(device=dev)
    t_stack = timed(lambda: train_ensemble(X, Y, parts, cfg, seed=args.seed, device=dev, progress=False), dev)
    t_loop_k = timed(
        lambda: train_ensemble_loop(X, Y, Partitions(parts.train[:k]), cfg, seed=args.seed, device=dev, progress=False),
        dev,
    )
    peak = max(peak_before, matmul_peak(device=dev))
    t_loop = t_loop_k * n / k
    scale = args.target_steps / steps

    def gf(t: float) -> float:
        return step_flops * steps / t / 1e9

    result = {
        "mode": "embedding",
        "device": describe_device(dev),
        "torch": torch.__version__,
        "profile": args.profile,
        "hidden": list(cfg.hidden),
        "lr": cfg.lr,
        "sampler": cfg.sampler,
        "mixup_alpha": cfg.mixup_alpha,
        "python": platform.python_version(),
        "teachers": n,
        "samples": m,
        "labels": args.labels,
        "batch_size": args.batch_size,
        "measured_steps": steps,
        "target_steps": args.target_steps,
        "loop_teachers_run": k,
        "params_per_teacher": cfg.n_parameters(),
        "flops_per_sample_step": flops_per_sample,
        "peak_gflops": peak,
        "peak_gflops_before": peak_before,
        "stacked_s": t_stack,
        "loop_s": t_loop,
        "stacked_s_target": t_stack * scale,
        "loop_s_target": t_loop * scale,
        "stacked_gflops": gf(t_stack),
        "loop_gflops": gf(t_loop),
        "speedup_stacked_vs_loop": t_loop / t_stack,
        "stacked_ms_per_step": 1e3 * t_stack / steps,
        "loop_ms_per_teacher_step": 1e3 * t_loop_k / (k * steps),
    }
    print(
        f"# {n} embedding teachers x {m} clips, {'-'.join(map(str, cfg.layer_sizes))} ({cfg.n_parameters():,} params), "
        f"multi-label BCE, Adam, batch {args.batch_size}, {cfg.sampler} sampler, mixup {cfg.mixup_alpha}"
        + (f" (notebook 04 {args.profile} profile)" if args.profile else "")
        + f"; measured {steps} steps, extrapolated to "
        f"{args.target_steps:,}" + (f"; loop: {k} teachers run, scaled to {n}" if k < n else "")
    )
    print(
        f"# device {result['device']}, torch {torch.__version__}; matmul peak {peak:.1f} GFLOP/s (before "
        f"{peak_before:.1f}); {step_flops / 1e9:.2f} GFLOP of matmuls per step of all teachers"
    )
    print(
        f"{'method':<40}{'measured s':>11}{f'{args.target_steps} steps s':>16}{'GFLOP/s':>9}{'% peak':>8}{'vs loop':>9}"
    )
    for name, t in (
        (f"loop of {n} single models" + (" (scaled)" if k < n else ""), t_loop),
        ("stacked (one loop, N teachers)", t_stack),
    ):
        print(f"{name:<40}{t:>11.1f}{t * scale:>16.0f}{gf(t):>9.1f}{100 * gf(t) / peak:>7.0f}%{t_loop / t:>8.1f}x")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


def apply_notebook_profile(args: argparse.Namespace, parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Fill the embedding recipe from notebook 04's config (explicit flags on the command line win)."""
    import yaml

    path = Path(__file__).resolve().parents[1] / "configs" / "04_audioset_teachers" / f"{args.profile}.yaml"
    cfg = yaml.safe_load(path.read_text())
    given = {a.split("=")[0] for a in argv if a.startswith("--")}
    for flag, key in (
        ("--hidden", "hidden"),
        ("--lr", "learning_rate"),
        ("--batch-size", "batch_size"),
        ("--sampler", "sampler"),
        ("--mixup-alpha", "mixup_alpha"),
        ("--target-steps", "steps"),
    ):
        if flag not in given:
            if key not in cfg:
                parser.error(f"--profile {args.profile}: {path} has no {key!r}")
            setattr(args, flag.lstrip("-").replace("-", "_"), cfg[key])


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("web", "embedding"), default="web")
    ap.add_argument("--teachers", type=int, default=None, help="web: 250; embedding: 50")
    ap.add_argument("--samples", type=int, default=None, help="training samples per teacher (web: 930; embedding: 229)")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--steps", type=int, default=500, help="embedding: optimiser steps actually run")
    ap.add_argument("--target-steps", type=int, default=10_000, help="embedding: steps the times are scaled to")
    ap.add_argument("--labels", type=int, default=160, help="embedding: number of labels")
    ap.add_argument("--batch-size", type=int, default=None, help="web: 256; embedding: 64")
    ap.add_argument("--features", type=int, default=500)
    ap.add_argument(
        "--tokens",
        type=int,
        default=28,
        help="Zipf token draws per synthetic URL; 28 gives ~14.6 distinct non-zeros per row, the mean "
        "measured on CSIC 2010 request URLs with pate_study.learning.features.url_tfidf",
    )
    ap.add_argument(
        "--loop-teachers",
        type=int,
        default=None,
        help="teachers actually run by the loop (scaled); web: 25, embedding: 10",
    )
    ap.add_argument("--hidden", type=int, nargs="+", default=[512, 512], help="embedding: hidden widths")
    ap.add_argument("--lr", type=float, default=1e-3, help="embedding: Adam learning rate")
    ap.add_argument("--sampler", choices=("random", "balanced"), default="random", help="embedding: row sampler")
    ap.add_argument("--mixup-alpha", type=float, default=None, help="embedding: mixup Beta parameter (default off)")
    ap.add_argument(
        "--profile",
        choices=("smoke", "paper", "gpu"),
        default=None,
        help="embedding: take hidden, lr, batch size, sampler, mixup and --target-steps from "
        "configs/04_audioset_teachers/<profile>.yaml (the notebook's teacher recipe)",
    )
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch.set_num_threads (default: torch's); on a machine shared with other jobs 1 thread "
        "avoids OpenMP threads waiting for each other",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    web = args.mode == "web"
    if args.profile:
        apply_notebook_profile(args, ap, sys.argv[1:] if argv is None else list(argv))
    if args.threads:
        torch.set_num_threads(args.threads)
    for name, web_default, emb_default in (
        ("teachers", 250, 50),
        ("samples", 930, 229),
        ("batch_size", 256, 64),
        ("loop_teachers", 25, 10),
    ):
        if getattr(args, name) is None:
            setattr(args, name, web_default if web else emb_default)
    if not web:
        return embedding_main(args)

    dev = choose_device(args.device)
    if dev.type == "cpu":
        tune_cpu_allocator()
    n_rows = args.teachers * args.samples
    X, y = synthetic_tfidf(n_rows, args.features, args.tokens, args.seed)
    parts = make_partitions(n_rows, args.teachers, args.samples, seed=args.seed)
    base = dict(
        task="binary", in_features=args.features, hidden=(512, 128), batch_size=args.batch_size, max_epochs=args.epochs
    )
    dense_cfg, sparse_cfg = EnsembleConfig(**base), EnsembleConfig(**base, sparse_input=True)
    flops_per_sample = matmul_flops_per_sample(dense_cfg.layer_sizes)
    total_flops = flops_per_sample * n_rows * args.epochs

    # warm-up (first-call library initialisation is not part of the comparison)
    wparts = make_partitions(n_rows, 2, min(args.samples, 64), seed=1)
    for cfg in (dense_cfg, sparse_cfg):
        train_ensemble(X, y, wparts, EnsembleConfig(**{**cfg.to_dict(), "max_epochs": 1}), device=dev, progress=False)
    train_ensemble_loop(
        X, y, wparts, EnsembleConfig(**{**dense_cfg.to_dict(), "max_epochs": 1}), device=dev, progress=False
    )
    peak_before = matmul_peak(device=dev)
    t_dense = timed(lambda: train_ensemble(X, y, parts, dense_cfg, seed=args.seed, device=dev, progress=False), dev)
    t_sparse = timed(lambda: train_ensemble(X, y, parts, sparse_cfg, seed=args.seed, device=dev, progress=False), dev)
    t_floor = sparse_path_floor(sparse_cfg, args.teachers, args.samples, args.epochs, args.seed, dev)
    k = min(args.loop_teachers, args.teachers)
    sub = Partitions(parts.train[:k])
    t_loop_k = timed(lambda: train_ensemble_loop(X, y, sub, dense_cfg, seed=args.seed, device=dev, progress=False), dev)
    t_loop = t_loop_k * args.teachers / k
    peak = max(peak_before, matmul_peak(device=dev))

    def gf(t: float) -> float:
        return total_flops / t / 1e9

    rows = [
        ("loop (nn.Sequential x N)" + (f", {k} run, scaled" if k < args.teachers else ""), t_loop),
        ("vectorised dense (baddbmm)", t_dense),
        ("vectorised sparse (embedding_bag)", t_sparse),
    ]
    result = {
        "device": describe_device(dev),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "teachers": args.teachers,
        "samples": args.samples,
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "params_per_teacher": dense_cfg.n_parameters(),
        "nnz_per_row": X.nnz / n_rows,
        "flops_per_sample_epoch": flops_per_sample,
        "total_gflop": total_flops / 1e9,
        "peak_gflops": peak,
        "loop_s": t_loop,
        "loop_teachers_run": k,
        "dense_s": t_dense,
        "sparse_s": t_sparse,
        "dense_gflops": gf(t_dense),
        "dense_fraction_of_peak": gf(t_dense) / peak,
        "speedup_dense_vs_loop": t_loop / t_dense,
        "speedup_sparse_vs_dense": t_dense / t_sparse,
        "sparse_floor_s": t_floor,
        "exact_sparse_speedup_bound": t_dense / t_floor,
    }
    print(
        f"# {args.teachers} teachers x {args.samples} samples x {args.epochs} epochs, batch {args.batch_size}, "
        f"{dense_cfg.n_parameters():,} params/teacher, {X.nnz / n_rows:.1f} non-zeros/row"
    )
    print(
        f"# device {result['device']}, torch {torch.__version__}; matmul peak {peak:.1f} GFLOP/s "
        f"(before {peak_before:.1f}); {total_flops / 1e9:.0f} GFLOP of matmuls per method"
    )
    print(f"{'method':<44}{'time s':>9}{'GFLOP/s':>10}{'% peak':>8}{'vs loop':>9}")
    for name, t in rows:
        print(f"{name:<44}{t:>9.1f}{gf(t):>10.1f}{100 * gf(t) / peak:>7.0f}%{t_loop / t:>8.1f}x")
    print(f"{'floor: steps without the first layer':<44}{t_floor:>9.1f}")
    print(
        f"sparse vs dense: {t_dense / t_sparse:.2f}x faster; bound for any exact sparse path: "
        f"dense / floor = {t_dense / t_floor:.2f}x"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
