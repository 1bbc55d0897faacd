"""Device choice for the learning code: CUDA when available, else CPU.

``PATE_STUDY_DEVICE`` ("cpu" or "cuda") overrides the automatic choice wherever a function takes
``device=None``: the test suite sets it to "cpu" (its exactness checks are CPU float32 results; a GPU run of
it on an H100 failed one of them by bf16 rounding), and a user can keep a GPU machine's notebooks on the CPU.

Mixed precision (bfloat16 autocast) is used only on CUDA; on the CPU every
computation stays in float32 so that results are bit-for-bit reproducible
for a given seed and thread count.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os

import torch

logger = logging.getLogger(__name__)

#: environment variable that overrides ``device=None`` (see the module docstring)
DEVICE_VARIABLE = "PATE_STUDY_DEVICE"

__all__ = [
    "DEVICE_VARIABLE",
    "choose_device",
    "use_mixed_precision",
    "autocast",
    "describe_device",
    "tune_cpu_allocator",
]


def choose_device(device: str | torch.device | None = None) -> torch.device:
    """Return ``device`` as a :class:`torch.device`; ``None`` means ``$PATE_STUDY_DEVICE`` when set, else CUDA
    if available, else CPU.

    Raises ValueError when CUDA is requested but not available.
    """
    if device is None:
        forced = os.environ.get(DEVICE_VARIABLE, "").strip()
        if forced:
            if forced not in ("cpu", "cuda"):
                raise ValueError(
                    f"{DEVICE_VARIABLE}={forced!r}: expected 'cpu' or 'cuda' (or unset: CUDA when available)"
                )
            if forced == "cuda" and not torch.cuda.is_available():
                raise ValueError(
                    f"{DEVICE_VARIABLE}=cuda: CUDA was requested but this machine has none "
                    f"(torch.cuda.is_available() is False); set {DEVICE_VARIABLE}=cpu or unset it"
                )
            return choose_device(forced)
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: CUDA was requested but torch.cuda.is_available() is False")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r}: expected 'cpu' or 'cuda'")
    return dev


def use_mixed_precision(device: torch.device, requested: bool | None = None) -> bool:
    """Mixed precision is on by default on CUDA and never on CPU."""
    if device.type != "cuda":
        return False
    return True if requested is None else bool(requested)


def autocast(device: torch.device, enabled: bool | None = None):
    """Context manager: bfloat16 autocast on CUDA (when enabled), a no-op on CPU."""
    if use_mixed_precision(device, enabled):
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def describe_device(device: torch.device) -> str:
    """One-line description of ``device`` for provenance stamps and benchmark tables."""
    if device.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(device)}"
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"cpu:{model} ({torch.get_num_threads()} threads)"


_ALLOCATOR_TUNED = False


def tune_cpu_allocator(threshold_bytes: int = 1 << 30) -> bool:
    """Keep large freed blocks in glibc's heap instead of returning them to the OS.

    Batched ensemble training allocates and frees tensors of tens of MB every step; with glibc's
    default (blocks above 32 MB are ``mmap``-ed fresh each time) every step pays page faults for
    them, which on a 2-core machine roughly halves the throughput of :mod:`pate_study.learning.ensemble`.
    Raising ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` (``mallopt(3)``) removes that cost at the
    price of a larger resident set. Process-wide, idempotent; returns False where glibc is absent.
    """
    global _ALLOCATOR_TUNED
    if _ALLOCATOR_TUNED:
        return True
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # from <malloc.h>
        ok = bool(libc.mallopt(m_mmap_threshold, int(threshold_bytes))) and bool(
            libc.mallopt(m_trim_threshold, int(threshold_bytes))
        )
    except (OSError, AttributeError):
        ok = False
    _ALLOCATOR_TUNED = ok
    logger.debug("tune_cpu_allocator: %s", "applied" if ok else "not available")
    return ok
