"""File helpers shared by the whole project: content hashes, atomic writes and the verified cache.

Everything the project prepares or caches (prepared data, trained ensembles, figures, tables) is written
through :func:`atomic_write`: to a temporary file in the same folder, then renamed over the target, so a
reader sees the old file or the complete new one, never a partial one.

The cache (trained ensembles, teacher outputs; :mod:`pate_study.ensemble`) stores ``torch.save`` payloads
keyed by :func:`hash_inputs` (SHA-256 of data, partitions, configuration, seed and method) in
:func:`default_cache_dir`; every entry has a JSON sidecar with the SHA-256 and size of its payload, and an
entry that fails verification is discarded and recomputed (:func:`load_cache_entry`).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from .env import cache_dir

logger = logging.getLogger(__name__)

CACHE_FORMAT = 1  # bump when the training algorithm changes what a cached entry means

_CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it over ``path`` (atomic on POSIX).

    An exception in ``write``, or an empty result, leaves ``path`` as it was and removes the temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp" + path.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        if tmp.stat().st_size == 0:
            raise OSError(f"refusing to replace {path}: the new content is empty")
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def replace_folder(new: str | os.PathLike, final: str | os.PathLike) -> Path:
    """Swap the complete folder ``new`` in for ``final`` (directory renames; the old folder is deleted only
    once the new one is in place, and put back if the second rename fails). Returns ``final``."""
    new, final = Path(new), Path(final)
    old = None
    if final.exists():
        old = final.with_name(f".old-{final.name}-{os.getpid()}")
        if old.exists():
            shutil.rmtree(old)
        os.replace(final, old)
    try:
        os.replace(new, final)
    except OSError:
        if old is not None:
            os.replace(old, final)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """:func:`atomic_write` of a UTF-8 text."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# the verified cache of trained ensembles and their outputs
# --------------------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    """``$PATE_STUDY_CACHE`` if set, else ``<repo>/.cache/pate_study`` (git-ignored); checked by :mod:`pate_study.env`."""
    return cache_dir()


def _hash_update(h: Any, obj: Any) -> None:
    import numpy as np
    import scipy.sparse as sp
    import torch

    if sp.issparse(obj):
        c = sp.csr_matrix(obj)
        h.update(f"csr{c.shape}".encode())
        for a in (c.indptr, c.indices, c.data):
            _hash_update(h, a)
    elif isinstance(obj, torch.Tensor):
        _hash_update(h, obj.detach().cpu().numpy())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"nd{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    elif isinstance(obj, (list, tuple)) and obj and isinstance(obj[0], (np.ndarray, torch.Tensor)):
        for a in obj:
            _hash_update(h, a)
    else:
        h.update(json.dumps(obj, sort_keys=True, default=str).encode())


def hash_inputs(**parts: Any) -> str:
    """SHA-256 (hex) over named parts: arrays (dtype, shape, bytes), sparse matrices, JSON-able values."""
    h = hashlib.sha256()
    for name in sorted(parts):
        h.update(name.encode())
        _hash_update(h, parts[name])
    return h.hexdigest()


def save_cache_entry(path: str | Path, payload: dict[str, Any], meta: dict[str, Any] | None = None) -> Path:
    """``torch.save`` ``payload`` to ``path`` (temp file + ``os.replace``) and write ``path.json``
    with its SHA-256 and size; the sidecar is written last, so a missing sidecar marks a partial entry."""
    import torch

    path = Path(path)
    atomic_write(path, lambda tmp: torch.save(payload, tmp))
    side = {"sha256": sha256_file(path), "size": path.stat().st_size, "format": CACHE_FORMAT, **(meta or {})}
    atomic_write_text(path.with_suffix(path.suffix + ".json"), json.dumps(side, indent=1))
    return path


def load_cache_entry(path: str | Path) -> dict[str, Any] | None:
    """Verified payload at ``path``, or ``None`` when absent. A partial or corrupt entry (missing
    sidecar, size or SHA-256 mismatch, unreadable payload) is logged, deleted and reported as absent."""
    import torch

    path = Path(path)
    side_path = path.with_suffix(path.suffix + ".json")
    if not path.exists() and not side_path.exists():
        return None
    reason = None
    try:
        side = json.loads(side_path.read_text())
        if side.get("format") != CACHE_FORMAT:
            reason = f"format {side.get('format')} != {CACHE_FORMAT}"
        elif not path.exists() or path.stat().st_size != side["size"]:
            reason = "size mismatch (truncated or partial write)"
        elif sha256_file(path) != side["sha256"]:
            reason = "SHA-256 mismatch"
        else:
            return torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, ValueError, KeyError, RuntimeError, EOFError) as exc:  # json errors are ValueError
        reason = f"unreadable ({type(exc).__name__}: {exc})"
    logger.warning("cache entry %s rejected: %s; it will be recomputed", path, reason)
    for p in (path, side_path):
        if p.exists():
            p.unlink()
    return None
