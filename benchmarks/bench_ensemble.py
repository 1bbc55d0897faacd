"""Benchmark: N web teachers trained as one batched computation vs the plain loop of N models.

Setting of issue 4 / Sosa (2021): 250 teachers, 930 samples each, 500 TF-IDF inputs, the
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
from pate_study.device import choose_device, describe_device, tune_cpu_allocator  # noqa: E402
from pate_study.ensemble import (  # noqa: E402
    EnsembleConfig, Partitions, _adam_kwargs, _forward, _per_teacher_loss, init_stacked_params, make_partitions,
    teacher_seeds, train_ensemble, train_ensemble_loop,
)


def matmul_peak(n: int = 4096, repeats: int = 5, device: torch.device | None = None) -> float:
    """Best float32 GFLOP/s of ``repeats`` ``torch.mm`` calls on n x n matrices (2 n^3 FLOPs each)."""
    device = device or torch.device("cpu")
    g = torch.Generator().manual_seed(0)
    a = torch.rand(n, n, generator=g).to(device)
    b = torch.rand(n, n, generator=g).to(device)
    best = 0.0
    for _ in range(repeats + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        torch.mm(a, b)
        if device.type == "cuda":
            torch.cuda.synchronize()
        best = max(best, 2 * n ** 3 / (time.perf_counter() - t) / 1e9)
    return best


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


def sparse_path_floor(config: EnsembleConfig, n_teachers: int, samples: int, epochs: int, seed: int,
                      device: torch.device) -> float:
    """Seconds for ``epochs`` of training steps without the first layer's own work (see the module docstring)."""
    weights, biases = init_stacked_params(config, teacher_seeds(seed, n_teachers))
    params = [p.to(device).requires_grad_() for p in (*weights, *biases)]
    n_layers = len(weights)
    opt = torch.optim.Adam(params, **_adam_kwargs(config, device))
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
                z = _forward(h1 + params[n_layers], params[1:n_layers], params[n_layers + 1:])
                loss = _per_teacher_loss(z, target_full[:, :bsz], config.task).sum()
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


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teachers", type=int, default=250)
    ap.add_argument("--samples", type=int, default=930, help="training samples per teacher")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--features", type=int, default=500)
    ap.add_argument("--tokens", type=int, default=28,
                    help="Zipf token draws per synthetic URL; 28 gives ~14.6 distinct non-zeros per row, the mean "
                         "measured on CSIC 2010 request URLs with pate_study.features.url_tfidf")
    ap.add_argument("--loop-teachers", type=int, default=25, help="teachers actually run by the loop (scaled)")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)

    dev = choose_device(args.device)
    if dev.type == "cpu":
        tune_cpu_allocator()
    n_rows = args.teachers * args.samples
    X, y = synthetic_tfidf(n_rows, args.features, args.tokens, args.seed)
    parts = make_partitions(n_rows, args.teachers, args.samples, seed=args.seed)
    base = dict(task="binary", in_features=args.features, hidden=(512, 128), batch_size=args.batch_size,
                max_epochs=args.epochs)
    dense_cfg, sparse_cfg = EnsembleConfig(**base), EnsembleConfig(**base, sparse_input=True)
    flops_per_sample = matmul_flops_per_sample(dense_cfg.layer_sizes)
    total_flops = flops_per_sample * n_rows * args.epochs

    # warm-up (first-call library initialisation is not part of the comparison)
    wparts = make_partitions(n_rows, 2, min(args.samples, 64), seed=1)
    for cfg in (dense_cfg, sparse_cfg):
        train_ensemble(X, y, wparts, EnsembleConfig(**{**cfg.to_dict(), "max_epochs": 1}), device=dev, progress=False)
    train_ensemble_loop(X, y, wparts, EnsembleConfig(**{**dense_cfg.to_dict(), "max_epochs": 1}), device=dev, progress=False)
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
        "device": describe_device(dev), "torch": torch.__version__, "python": platform.python_version(),
        "teachers": args.teachers, "samples": args.samples, "epochs": args.epochs, "batch_size": args.batch_size,
        "params_per_teacher": dense_cfg.n_parameters(), "nnz_per_row": X.nnz / n_rows,
        "flops_per_sample_epoch": flops_per_sample, "total_gflop": total_flops / 1e9, "peak_gflops": peak,
        "loop_s": t_loop, "loop_teachers_run": k, "dense_s": t_dense, "sparse_s": t_sparse,
        "dense_gflops": gf(t_dense), "dense_fraction_of_peak": gf(t_dense) / peak,
        "speedup_dense_vs_loop": t_loop / t_dense, "speedup_sparse_vs_dense": t_dense / t_sparse,
        "sparse_floor_s": t_floor, "exact_sparse_speedup_bound": t_dense / t_floor,
    }
    print(f"# {args.teachers} teachers x {args.samples} samples x {args.epochs} epochs, batch {args.batch_size}, "
          f"{dense_cfg.n_parameters():,} params/teacher, {X.nnz / n_rows:.1f} non-zeros/row")
    print(f"# device {result['device']}, torch {torch.__version__}; matmul peak {peak:.1f} GFLOP/s "
          f"(before {peak_before:.1f}); {total_flops / 1e9:.0f} GFLOP of matmuls per method")
    print(f"{'method':<44}{'time s':>9}{'GFLOP/s':>10}{'% peak':>8}{'vs loop':>9}")
    for name, t in rows:
        print(f"{name:<44}{t:>9.1f}{gf(t):>10.1f}{100 * gf(t) / peak:>7.0f}%{t_loop / t:>8.1f}x")
    print(f"{'floor: steps without the first layer':<44}{t_floor:>9.1f}")
    print(f"sparse vs dense: {t_dense / t_sparse:.2f}x faster; bound for any exact sparse path: "
          f"dense / floor = {t_dense / t_floor:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
