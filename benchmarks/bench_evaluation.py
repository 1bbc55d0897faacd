"""Two costs of the training loop on the CPU, old and new side by side in one run (ratios; same values asserted).

1. **Evaluation**: per-teacher AP and ROC-AUC of every class (``pate_study.learning.metrics``), as the training loop
   scores each teacher's validation rows: one sort per column (``average_precision_and_roc_auc_per_class``, now) against
   the three scipy ``rankdata`` calls per column of the same definitions (before;
   `metrics.average_precision_and_roc_auc_by_ranks`). Settings: notebook 04's validation at the thesis's size (3,430
   clips x 153 labels, float32 probabilities, ~2% positives), at its paper profile's size (780 clips, 10 teachers: one
   evaluation of ``benchmarks/bench_step.py``'s stack), and the ECG teachers' (40 beats x 5 classes, many calls).
2. **Adam's step with denormal moments**: one fused Adam step over the ECG students' stacked parameters (10 MLPs
   187-128-64-5, 326k parameters) whose moments have decayed into the denormal range (zero-padded inputs give
   zero gradients), with and without ``pate_study.learning.optimiser.flush_denormal_on_cpu``; and, as the reference, the
   same step with ordinary (normal-range) moments.

Every timing is the best of ``--repeats`` runs. Run from the repository root: ``python benchmarks/bench_evaluation.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from pate_study.learning.metrics import (
    average_precision_and_roc_auc_by_ranks,
    average_precision_and_roc_auc_per_class,
)
from pate_study.learning.optimiser import adam_kwargs, flush_denormal_on_cpu


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def evaluation_rows(repeats: int) -> list[str]:
    rng = np.random.default_rng(0)
    rows = []
    for label, n, k, calls, positive in (
        ("04 validation, 3,430 x 153, one teacher", 3430, 153, 1, 0.02),
        ("04 paper, 780 x 153, 10 teachers", 780, 153, 10, 0.02),
        ("ECG teachers, 40 x 5, 200 teachers", 40, 5, 200, 0.2),
    ):
        S = [rng.random((n, k)).astype(np.float32) for _ in range(calls)]
        Y = [rng.random((n, k)) < positive for _ in range(calls)]
        for y, s in zip(Y, S):
            new, old = average_precision_and_roc_auc_per_class(y, s), average_precision_and_roc_auc_by_ranks(y, s)
            assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(new, old)), "values differ"
        t_old = best_of(repeats, lambda: [average_precision_and_roc_auc_by_ranks(y, s) for y, s in zip(Y, S)])
        t_new = best_of(repeats, lambda: [average_precision_and_roc_auc_per_class(y, s) for y, s in zip(Y, S)])
        rows.append(f"{label:<44} {t_old * 1e3:10.1f} {t_new * 1e3:10.1f} {t_old / t_new:7.2f}x")
    return rows


def adam_rows(repeats: int, steps: int = 50) -> list[str]:
    shapes = [(10, 187, 128), (10, 128, 64), (10, 64, 5), (10, 1, 128), (10, 1, 64), (10, 1, 5)]
    device = torch.device("cpu")

    def step_time(grad_scale: float, flush: bool) -> float:
        torch.manual_seed(0)
        params = [torch.randn(s, requires_grad=True) for s in shapes]
        opt = torch.optim.Adam(params, **adam_kwargs(1e-3, 0.0, device))
        for p in params:
            p.grad = torch.randn(p.shape) * grad_scale  # 1e-20: second moments ~1e-40, denormal
        opt.step()

        def run():
            for _ in range(steps):
                if flush:
                    with flush_denormal_on_cpu(device):
                        opt.step()
                else:
                    opt.step()

        return best_of(repeats, run) / steps

    plain, denormal, flushed = step_time(1.0, False), step_time(1e-20, False), step_time(1e-20, True)
    return [
        f"{'normal moments (reference)':<44} {plain * 1e3:10.3f} {'':>10}",
        f"{'denormal moments, flushed (now) vs kept':<44} {denormal * 1e3:10.3f} {flushed * 1e3:10.3f} "
        f"{denormal / flushed:7.2f}x",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}; best of {args.repeats}"
    )
    print(f"{'AP + AUC per class':<44} {'before ms':>10} {'now ms':>10} {'ratio':>8}")
    for row in evaluation_rows(args.repeats):
        print(row)
    print(f"{'fused Adam step, ECG students (326k params)':<44} {'kept ms':>10} {'now ms':>10} {'ratio':>8}")
    for row in adam_rows(args.repeats):
        print(row)


if __name__ == "__main__":
    main()
