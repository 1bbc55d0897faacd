"""Benchmark: the log-Mel CNN teachers' speed options and how several teachers share one device, side by side.

One run, on ``--device``, for each architecture of ``--architectures`` (ResNet-18/34, VGG-11/19 of
:func:`pate_study.learning.models.logmel_model`), a bare training step of the teachers' loop (the forward of
:class:`pate_study.learning.stacked.StackedModule`, the per-teacher BCE of
:func:`pate_study.learning.losses.per_teacher_loss`, backward, one Adam step with
:func:`~pate_study.learning.optimiser.adam_kwargs`; no sampler, mixup or evaluation, which are host-side and the same
for every variant):

* **one teacher** under each speed option of ``StackedModule``: today's path (CUDA: the loop's bf16 autocast;
  CPU: float32), ``channels_last``, ``bf16`` (``autocast_dtype="bfloat16"``; on the CPU the only way to get it),
  ``compiled`` (``torch.compile``; compile time reported apart), and ``channels_last + bf16 + compiled``;
* **``--teachers`` teachers sharing the device** (today's options and channels_last): stacked (one ``vmap``-ed
  ``StackedModule``), one after another (one single-teacher module and Adam each, stepped in turn) and, on CUDA
  only, one after another with each teacher on its own CUDA stream.

Each row: median seconds of ``--steps`` timed steps after ``--warmup`` untimed ones (compilation, cuDNN autotuning,
allocator); the timed steps are interleaved (one step of every variant of an architecture in turn, ``--steps``
rounds), so that a load that changes during the run -- this machine is shared -- reaches every row alike; training
clips/s (``teachers x batch / step``, as the "training clips/s" column of the thesis-setting entry of
benchmarks/HISTORY.md), the ratio to today's one-teacher row, and the FLOP rate as a % of the device's peak measured in
the same run (:func:`matmul_peak`, :func:`conv_peak`; float32 rows against the float32 peak, bf16 rows against the bf16
peak). FLOPs of a step are counted by ``torch.utils.flop_counter.FlopCounterMode`` (convolutions and matrix products,
forward and backward) on one teacher and multiplied by the number of teachers.

  OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_cnn.py --device cpu               # reduced sizes, see --help
  python benchmarks/bench_cnn.py --device cuda --width-scale 1 --frames 1001 --batch 64 --teachers 4 --steps 20
"""

from __future__ import annotations

import argparse
import logging
import statistics
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from bench_ensemble import (
    best_rate,
    matmul_peak,
    timed,
)  # the script's folder is on sys.path; it adds the repository root
from torch.utils.flop_counter import FlopCounterMode
from tqdm import tqdm

from pate_study.core.device import autocast, choose_device, describe_device, use_mixed_precision
from pate_study.experiments.audioset.teachers import deterministic_kernels
from pate_study.learning.losses import per_teacher_loss
from pate_study.learning.models import logmel_model
from pate_study.learning.optimiser import adam_kwargs
from pate_study.learning.stacked import StackedModule

logger = logging.getLogger(__name__)

OPTIONS = {  # one-teacher variants: StackedModule keyword arguments
    "today": {},
    "channels_last": {"memory_format": "channels_last"},
    "bf16": {"autocast_dtype": "bfloat16"},
    "compiled": {"compiled": True},
    "channels_last + bf16 + compiled": {
        "memory_format": "channels_last",
        "autocast_dtype": "bfloat16",
        "compiled": True,
    },
}


# ----------------------------------------------------------------------------- the device's peak
def conv_peak(
    device: torch.device, dtype: torch.dtype, batch: int, channels: int = 256, size: int = 56, repeats: int = 5
) -> float:
    """Best GFLOP/s of a 3x3, stride-1 ``channels -> channels`` convolution on ``[batch, channels, size, size]``
    in ``dtype``, channels-last (the layout both oneDNN and cuDNN prefer; ``2 * batch * size^2 * channels^2 * 9``
    FLOPs): the best a ResNet/VGG body layer can do on this device."""
    g = torch.Generator().manual_seed(0)
    x = (
        torch.rand(batch, channels, size, size, generator=g)
        .to(device, dtype)
        .contiguous(memory_format=torch.channels_last)
    )
    w = (
        torch.rand(channels, channels, 3, 3, generator=g)
        .to(device, dtype)
        .contiguous(memory_format=torch.channels_last)
    )
    flops = 2 * batch * size * size * channels * channels * 9
    with torch.no_grad():
        return best_rate(lambda: torch.nn.functional.conv2d(x, w, padding=1), flops, device, repeats)


# ----------------------------------------------------------------------------- one training step
@dataclass
class Setup:
    """The sizes of one run: log-Mel ``frames x 64``, ``classes`` labels, ``batch`` clips per teacher."""

    device: torch.device
    frames: int
    batch: int
    classes: int
    width_scale: int

    def model(self, architecture: str, seed: int) -> torch.nn.Module:
        """One teacher; heads divided by ``width_scale`` too (the thesis's at ``width_scale=1``)."""
        head = (512, 256) if architecture.startswith("resnet") else (4096, 4096)
        torch.manual_seed(seed)
        return logmel_model(
            architecture,
            self.classes,
            width_scale=self.width_scale,
            head=tuple(max(1, h // self.width_scale) for h in head),
        )

    def data(self, teachers: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        X = torch.randn(teachers * self.batch, self.frames, 64, generator=g)
        Y = (torch.rand(teachers, self.batch, self.classes, generator=g) < 0.05).float()
        return X, Y.to(self.device)


class Trainer:
    """``StackedModule`` of ``teachers`` copies + Adam: ``step()`` is one training step of every teacher on its
    own ``batch`` rows (the loop's ``train_step`` without mixup)."""

    def __init__(self, setup: Setup, architecture: str, teachers: int, options: dict, seed: int = 0) -> None:
        self.setup = setup
        seeds = np.arange(3 * teachers, dtype=np.uint32).reshape(teachers, 3) + 3 * seed
        self.model = StackedModule(
            [setup.model(architecture, int(s)) for s in seeds[:, 0]], seeds, device=setup.device, **options
        )
        X, self.Y = setup.data(teachers, seed)
        self.source = self.model.source(X)
        self.rows = torch.arange(teachers * setup.batch, device=setup.device).reshape(teachers, setup.batch)
        self.params = [p.detach().clone().requires_grad_() for p in self.model.params()]
        self.buffers = self.model.buffers()
        self.opt = torch.optim.Adam(self.params, **adam_kwargs(1e-4, 0.0, setup.device))
        self.model.set_training(True)

    def step(self) -> None:
        with autocast(self.setup.device):  # the loop's autocast: bf16 on CUDA, nothing on the CPU
            z = self.model.forward(self.params, self.buffers, self.source, self.rows, training=True)
        loss = per_teacher_loss(z, self.Y, "multilabel").sum()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()


def warm_up(step: Callable[[], None], device: torch.device, n: int) -> float:
    """Seconds of ``n`` untimed steps (compilation, cuDNN autotuning, the allocator's first blocks)."""
    return timed(lambda: [step() for _ in range(n)], device)


def step_flops(setup: Setup, architecture: str) -> int:
    """FLOPs of one teacher's training step (forward + backward convolutions and matrix products), counted by
    ``torch.utils.flop_counter.FlopCounterMode`` on the uncompiled float32 path (the same arithmetic in every
    variant)."""
    tr = Trainer(
        Setup(torch.device("cpu"), setup.frames, setup.batch, setup.classes, setup.width_scale), architecture, 1, {}
    )
    counter = FlopCounterMode(display=False)
    with counter:
        tr.step()
    return int(counter.get_total_flops())


def one_after_another(trainers: list[Trainer]) -> Callable[[], None]:
    def step() -> None:
        for t in trainers:
            t.step()

    return step


def on_streams(trainers: list[Trainer], device: torch.device) -> Callable[[], None]:
    """Each teacher's step issued on its own CUDA stream (``torch.cuda.Stream``; the host still issues them in
    turn, the GPU may overlap their kernels)."""
    streams = [torch.cuda.Stream(device) for _ in trainers]

    def step() -> None:
        main = torch.cuda.current_stream(device)
        for t, s in zip(trainers, streams):
            s.wait_stream(main)
            with torch.cuda.stream(s):
                t.step()
        for s in streams:
            main.wait_stream(s)

    return step


# ----------------------------------------------------------------------------- the table
def row_dtype(device: torch.device, options: dict) -> torch.dtype:
    """What a row computes its convolutions in: bf16 under either autocast, else float32."""
    return torch.bfloat16 if options.get("autocast_dtype") or use_mixed_precision(device) else torch.float32


def interleaved_medians(
    steps: dict[str, Callable[[], None]], device: torch.device, warmup: int, rounds: int
) -> dict[str, tuple[float, float | None, str | None]]:
    """Per variant: (warm-up seconds, median step seconds, error). Every variant is warmed up first (compilation,
    autotuning), then ``rounds`` rounds each time one step of every variant in turn, so that a load that changes
    during the run (a shared machine) reaches every variant alike; a variant that fails is reported, not timed."""
    out: dict[str, tuple[float, float | None, str | None]] = {}
    live = {}
    for name, step in steps.items():
        try:
            warm = warm_up(step, device, warmup)
            live[name] = step
            out[name] = (warm, None, None)
        except (RuntimeError, torch.OutOfMemoryError) as exc:  # a variant the device cannot run: say so
            logger.warning("%s: %s", name, str(exc).splitlines()[0][:200])
            out[name] = (0.0, None, str(exc).splitlines()[0][:80])
    times: dict[str, list[float]] = {name: [] for name in live}
    for _ in tqdm(range(rounds), desc="rounds", leave=False):
        for name, step in live.items():
            times[name].append(timed(step, device))
    for name in live:
        out[name] = (out[name][0], statistics.median(times[name]), None)
    return out


def bench_architecture(setup: Setup, architecture: str, args: argparse.Namespace, peaks: dict) -> list[dict]:
    """All variants of one architecture, timed interleaved (:func:`interleaved_medians`)."""
    dev = setup.device
    flops = step_flops(setup, architecture)
    n = args.teachers
    steps: dict[str, Callable[[], None]] = {}
    meta: dict[str, tuple[int, dict]] = {}
    for name in args.variants:
        steps[name] = Trainer(setup, architecture, 1, OPTIONS[name]).step
        meta[name] = (1, OPTIONS[name])
    for name in args.sharing_variants:
        options = OPTIONS[name]
        steps[f"{name}, {n} stacked (vmap)"] = Trainer(setup, architecture, n, options).step
        singles = [Trainer(setup, architecture, 1, options, seed=i) for i in range(n)]
        steps[f"{name}, {n} one after another"] = one_after_another(singles)
        if dev.type == "cuda":
            steps[f"{name}, {n} on CUDA streams"] = on_streams(singles, dev)
        for key in list(steps)[-(3 if dev.type == "cuda" else 2) :]:
            meta[key] = (n, options)
    measured = interleaved_medians(steps, dev, args.warmup, args.steps)
    rows = []
    for name, (warm, t, error) in measured.items():
        teachers, options = meta[name]
        row = {
            "architecture": architecture,
            "variant": name,
            "teachers": teachers,
            "warmup_s": warm,
            "gflop_per_teacher_step": flops / 1e9,
        }
        if error is not None:
            rows.append({**row, "error": error})
            continue
        dtype = row_dtype(dev, options)
        gflops = teachers * flops / t / 1e9
        rows.append(
            {
                **row,
                "step_s": t,
                "clips_per_s": teachers * setup.batch / t,
                "gflops": gflops,
                "dtype": "bf16" if dtype == torch.bfloat16 else "fp32",
                "pct_matmul": 100 * gflops / peaks[("matmul", dtype)],
                "pct_conv": 100 * gflops / peaks[("conv", dtype)],
            }
        )
    today = next((r for r in rows if r["variant"] == "today" and "step_s" in r), None)
    for r in rows:
        if today is not None and "step_s" in r:
            r["vs_today"] = r["clips_per_s"] / today["clips_per_s"]
    return rows


def print_table(rows: list[dict]) -> None:
    print(
        f"\n{'architecture':<13}{'variant':<40}{'dtype':>6}{'step ms':>10}{'clips/s':>9}{'vs today':>9}"
        f"{'GFLOP/s':>9}{'% mm':>7}{'% conv':>7}{'warm-up s':>10}"
    )
    for r in rows:
        if "error" in r:
            print(f"{r['architecture']:<13}{r['variant']:<40}  failed: {r['error']}")
            continue
        print(
            f"{r['architecture']:<13}{r['variant']:<40}{r['dtype']:>6}{1000 * r['step_s']:>10.1f}"
            f"{r['clips_per_s']:>9.1f}{r.get('vs_today', float('nan')):>8.2f}x{r['gflops']:>9.1f}"
            f"{r['pct_matmul']:>6.1f}%{r['pct_conv']:>6.1f}%{r['warmup_s']:>10.1f}"
        )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default=None, help="cpu | cuda | None (choose)")
    p.add_argument("--architectures", nargs="+", default=["resnet18", "resnet34", "vgg11", "vgg19"])
    p.add_argument("--width-scale", type=int, default=8, help="divides every width (1: the thesis's networks)")
    p.add_argument("--frames", type=int, default=101, help="log-Mel frames (the thesis: 1001)")
    p.add_argument("--batch", type=int, default=16, help="clips per teacher and step (the thesis: 64)")
    p.add_argument("--classes", type=int, default=153)
    p.add_argument("--teachers", type=int, default=3, help="teachers sharing the device")
    p.add_argument("--steps", type=int, default=10, help="timed rounds (one step of every row each; median)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps per row (compilation happens here)")
    p.add_argument("--variants", nargs="+", default=list(OPTIONS), choices=list(OPTIONS))
    p.add_argument("--sharing-variants", nargs="+", default=["today", "channels_last"], choices=list(OPTIONS))
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore", message=".*does not have a deterministic implementation.*")
    dev = choose_device(args.device)
    # every compiled single-teacher module recompiles the shared code object of StackedModule's call (guards on the
    # module): allow one per compiled trainer of an architecture, so that none falls back to eager silently
    compiled_trainers = sum(OPTIONS[v].get("compiled", False) for v in args.variants) + args.teachers * sum(
        OPTIONS[v].get("compiled", False) for v in args.sharing_variants
    )
    torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, compiled_trainers + 2)
    setup = Setup(dev, args.frames, args.batch, args.classes, args.width_scale)
    peak_batch = 32 if dev.type == "cuda" else 4
    peaks = {
        (kind, dtype): fn(dev, dtype)
        for dtype in (torch.float32, torch.bfloat16)
        for kind, fn in (
            ("matmul", lambda d, t: matmul_peak(device=d, dtype=t)),
            ("conv", lambda d, t: conv_peak(d, t, peak_batch)),
        )
    }
    print(
        f"# device {describe_device(dev)}, torch {torch.__version__}; log-Mel {args.frames} x 64, batch {args.batch} "
        f"per teacher, {args.classes} classes, width / {args.width_scale} (heads too); median of {args.steps} steps "
        f"after {args.warmup}"
    )
    print(
        "# peaks measured now (GFLOP/s): "
        + ", ".join(
            f"{kind} {'bf16' if dtype == torch.bfloat16 else 'fp32'} {v:.0f}" for (kind, dtype), v in peaks.items()
        )
    )
    rows = []
    for arch in args.architectures:
        torch._dynamo.reset()  # compiled variants: a fresh cache per architecture (recompile limit, stacked.py)
        with deterministic_kernels(dev):  # as train_logmel_teachers trains (on the CPU; nothing on CUDA)
            rows += bench_architecture(setup, arch, args, peaks)
        print(f"# {arch}: {rows[-1]['gflop_per_teacher_step']:.2f} GFLOP per teacher-step (FlopCounterMode)")
    print_table(rows)
    print(
        "clips/s: teachers x batch / median step time; vs today: clips/s over the one-teacher 'today' row of the "
        "same architecture; % mm / % conv: GFLOP/s over the matmul / 3x3-conv peak of the row's dtype"
    )


if __name__ == "__main__":
    main()
