"""Adam over stacked teachers: one fused kernel (:func:`adam_kwargs`; Adam is elementwise, so each teacher's slice is
updated as by its own optimiser), compaction when teachers stop (:func:`compact_optimizer`), and flushing denormal
floats on the CPU (:func:`flush_denormal_on_cpu`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch


def compact_optimizer(
    opt: torch.optim.Adam, old: list[torch.Tensor], new: list[torch.Tensor], keep: torch.Tensor
) -> torch.optim.Adam:
    """New Adam over ``new`` (= ``old`` rows ``keep``) carrying over the kept rows' moments."""
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    new_opt = torch.optim.Adam(new, **group)
    for po, pn in zip(old, new):
        st = opt.state.get(po)
        if st:
            new_opt.state[pn] = {
                k: (v[keep].clone() if torch.is_tensor(v) and v.dim() > 0 else (v.clone() if torch.is_tensor(v) else v))
                for k, v in st.items()
            }
    return new_opt


def _fused_adam_available(device: torch.device) -> bool:
    """Fused Adam exists on CUDA and, since torch 2.4, on the CPU."""
    if device.type == "cuda":
        return True
    major, minor = (int(v) for v in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 4)


def flush_denormal_enabled() -> bool:
    """Whether the calling thread's CPU flushes denormal floats to zero (a denormal times 2 comes out 0)."""
    return bool((torch.tensor([1e-39], dtype=torch.float32) * 2.0).item() == 0.0)


@contextlib.contextmanager
def flush_denormal_on_cpu(device: torch.device) -> Iterator[None]:
    """Within the block, the calling thread flushes denormal float32 values to zero on the CPU (x86 FTZ/DAZ,
    :func:`torch.set_flush_denormal`); the previous setting is restored after it. Nothing changes on a GPU.

    Why: Adam's moments of a parameter whose gradient is (near) zero decay geometrically
    (m <- 0.9 m, v <- 0.999 v; Kingma & Ba 2015, Algorithm 1) and pass through the denormal range, where
    every x86 floating-point operation takes a slow microcode path: measured 14 ms against 0.8 ms for one
    fused Adam step over the ECG students' 326k parameters, and half of a student run in notebook 01.
    What it can change: a moment below 1.2e-38 becomes 0. A first moment that small moves a parameter by at most
    lr * 1.2e-38 / (1 - 0.9) / eps = 1.2e-32 (bias correction, eps = 1e-8, Adam's default), below the rounding
    step of any float32 parameter larger than about 1e-25; a second moment that small has sqrt(v) < 1.1e-19, lost
    against eps in float32 either way. So the trained parameters, votes and tables stay the same (checked:
    ``tests/learning/test_flush_denormal.py``, ``tests/learning/test_legacy_votes.py`` and notebooks 01-03's
    outputs, benchmarks/HISTORY.md). It applies to the calling thread only: with more intra-op threads, the others
    keep denormals (slower there, same values).
    """
    if device.type != "cpu":
        yield
        return
    before = flush_denormal_enabled()
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


def adam_kwargs(lr: float, weight_decay: float, device: torch.device) -> dict[str, Any]:
    """One fused Adam kernel over the stacked tensors (elementwise, so per-teacher exact)."""
    kw: dict[str, Any] = {"lr": lr, "weight_decay": weight_decay}
    kw["fused" if _fused_adam_available(device) else "foreach"] = True
    return kw
