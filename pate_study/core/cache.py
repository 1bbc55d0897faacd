"""The one on-disk cache of the package: trained ensembles, teacher votes and probabilities, Ray shards.

One key scheme for every entry (:func:`cache_key`): a SHA-256 (:func:`pate_study.core.io.hash_inputs`) of

* the entry's **kind** (what is stored: "ensemble", "votes", "modules", "audioset-votes", "shard", ...),
* its **inputs** (data, partitions, configuration, seed, method: whatever determines the result),
* the **code version** (:data:`CODE_VERSION`: bumped when the training code changes what an entry means),
* the **resolved device** (:func:`resolved_device`: "cpu" or "cuda", never ``None``), so that a run on a GPU
  after a run on the CPU in the same cache folder trains its own models instead of reusing the CPU ones
  (bfloat16 autocast and CUDA kernels give other parameters than the CPU's float32).

Storage and verification are :mod:`pate_study.core.io`'s: a ``torch.save`` payload written to a temporary file and
renamed into place, then a JSON sidecar with its SHA-256 and size (:func:`pate_study.core.io.save_cache_entry`);
an entry that fails verification is discarded and recomputed (:func:`pate_study.core.io.load_cache_entry`). So the
cache never holds a partial or corrupt result. The folder is :func:`pate_study.core.io.default_cache_dir`
(``$PATE_STUDY_CACHE``) unless a ``cache_dir`` is given.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import torch

from pate_study.core.device import choose_device
from pate_study.core.io import CacheExpectation, default_cache_dir, hash_inputs, load_cache_entry, save_cache_entry

logger = logging.getLogger(__name__)

__all__ = [
    "CODE_VERSION",
    "CLUSTER_CHOICE",
    "CacheExpectation",
    "resolved_device",
    "cache_key",
    "entry_path",
    "load",
    "store",
    "cached",
]

#: bump when the training or querying code changes what a cached entry means (part of every key)
CODE_VERSION = 2
#: the device label of Ray tasks that pick a GPU where the cluster has one (``device=None`` on a cluster)
CLUSTER_CHOICE = "ray: cuda where the cluster has GPUs, else cpu"

T = TypeVar("T")


def resolved_device(device: str | torch.device | None, backend: str = "local") -> str:
    """The device a computation runs on, as it enters a key: "cpu" or "cuda".

    ``device=None`` resolves as :func:`pate_study.core.device.choose_device` does (``$PATE_STUDY_DEVICE``, else
    CUDA when available); requesting "cuda" where CUDA is missing raises there, as the training would. On a
    Ray cluster (``backend != "local"``) ``None`` is decided by the cluster (:data:`CLUSTER_CHOICE`)."""
    if device is None and backend != "local":
        return CLUSTER_CHOICE
    return choose_device(device).type


def cache_key(kind: str, *, device: str, **inputs: Any) -> str:
    """SHA-256 (hex) of ``kind``, the ``inputs``, :data:`CODE_VERSION` and the resolved ``device``.

    ``device``: a label from :func:`resolved_device` ("cpu", "cuda" or :data:`CLUSTER_CHOICE`); a torch
    device is reduced to its type. ``None`` is refused: an unresolved device would let a GPU run reuse CPU
    results (resolve it first)."""
    if device is None:
        raise ValueError("device=None: resolve the device first (pate_study.core.cache.resolved_device)")
    label = device.type if isinstance(device, torch.device) else str(device)
    if label not in ("cpu", "cuda", CLUSTER_CHOICE):
        raise ValueError(f"device={device!r}: expected 'cpu', 'cuda' or pate_study.core.cache.CLUSTER_CHOICE")
    # the scheme's own parts and the inputs under separate prefixes, so no input name can stand in for them
    return hash_inputs(
        **{f"input {name}": value for name, value in inputs.items()},
        **{"cache kind": kind, "cache code version": CODE_VERSION, "cache device": label},
    )


def entry_path(kind: str, key: str, cache_dir: str | Path | None = None) -> Path:
    """Where the entry ``key`` of ``kind`` lives: ``<cache_dir>/<kind>-<first 32 hex digits>.pt``."""
    return Path(cache_dir or default_cache_dir()) / f"{kind}-{key[:32]}.pt"


def load(
    kind: str, key: str, cache_dir: str | Path | None = None, expect: dict[str, CacheExpectation] | None = None
) -> dict[str, Any] | None:
    """The verified payload of the entry, or None (absent, or rejected as partial / corrupt and deleted).

    ``expect``: what the key declares the entry's tensors to be (shape, dtype, finite): an entry and its checksum
    sidecar replaced together pass the checksum, so the declared output is checked too
    (:func:`pate_study.core.io.load_cache_entry`). The sidecar must name this ``kind`` and this full ``key``: the
    file name holds only the key's first 32 hex digits, and an entry copied with its sidecar under another key's
    name would otherwise be served as this one."""
    return load_cache_entry(entry_path(kind, key, cache_dir), expect=expect, meta={"kind": kind, "key": key})


def store(kind: str, key: str, payload: dict[str, Any], cache_dir: str | Path | None = None, **meta: Any) -> Path:
    """Write the entry atomically (temporary file, rename, SHA-256 sidecar last); ``meta`` goes to the sidecar."""
    return save_cache_entry(entry_path(kind, key, cache_dir), payload, {"kind": kind, "key": key, **meta})


def cached(
    kind: str,
    key: str,
    compute: Callable[[], T],
    *,
    to_state: Callable[[T], dict[str, Any]],
    from_state: Callable[[dict[str, Any]], T],
    cache_dir: str | Path | None = None,
    expect: dict[str, CacheExpectation] | None = None,
    **meta: Any,
) -> T:
    """The entry ``key`` of ``kind`` if the cache holds a verified one (meeting ``expect``, see :func:`load`),
    else ``compute()``, stored.

    ``to_state`` / ``from_state``: the result as a payload of tensors and builtins (what
    ``torch.load(weights_only=True)`` reads) and back."""
    state = load(kind, key, cache_dir, expect)
    if state is not None:
        logger.info("loaded cached %s %s", kind, entry_path(kind, key, cache_dir))
        return from_state(state)
    result = compute()
    store(kind, key, to_state(result), cache_dir, **meta)
    return result
