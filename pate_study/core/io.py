"""File helpers shared by the whole project: content hashes, atomic writes and the verified cache.

Everything the project prepares or caches (prepared data, trained ensembles, figures, tables) is written
through :func:`atomic_write`: to a temporary file in the same folder, then renamed over the target, so a
reader sees the old file or the complete new one, never a partial one.

The cache (trained ensembles, teacher outputs; :mod:`pate_study.learning.ensemble`) stores ``torch.save`` payloads
keyed by :func:`hash_inputs` (SHA-256 of data, partitions, configuration, seed and method) in
:func:`default_cache_dir`; every entry has a JSON sidecar with the SHA-256 and size of its payload, and an
entry that fails verification (or is not what its key declares: :class:`CacheExpectation`) is discarded and
recomputed (:func:`load_cache_entry`). A cache that cannot take new entries (read-only, full) is reported on the
first miss, before the work, and costs the entry, never the computed result (:func:`save_cache_entry`).

The file primitives (hashes, atomic writes, write failures as one line) are defined in :mod:`data_recipes.files`,
which the recipes share; they are re-exported here under their usual names.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from data_recipes.files import (
    FolderNotWritableError,
    WriteFailedError,
    atomic_write,
    atomic_write_text,
    check_writable,
    one_line,
    replace_folder,
    sha256_file,
    variable_for,
)
from pate_study.core.env import cache_dir

logger = logging.getLogger(__name__)

__all__ = [
    "CACHE_FORMAT",
    "CacheExpectation",
    "WriteFailedError",
    "sha256_file",
    "atomic_write",
    "atomic_write_text",
    "replace_folder",
    "default_cache_dir",
    "hash_inputs",
    "cache_writable",
    "save_cache_entry",
    "load_cache_entry",
]

CACHE_FORMAT = 1  # bump when the training algorithm changes what a cached entry means
_MIN_FREE = 16 << 20  # a cache with less room than this is reported as full before the work starts


# --------------------------------------------------------------------------------------------
# the verified cache of trained ensembles and their outputs
# --------------------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    """``$PATE_STUDY_CACHE`` if set, else ``<repo>/.cache/pate_study`` (git-ignored); checked by
    :mod:`pate_study.core.env`."""
    return cache_dir()


def _hash_update(h: Any, obj: Any) -> None:
    import numpy as np  # with torch, on first use (see above)
    import scipy.sparse as sp  # with torch, on first use (see above)
    import torch  # heavy (~1 s): only the cache needs it, and light tools (runner, registry) import this module

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


@dataclass(frozen=True)
class CacheExpectation:
    """What a cache key declares one tensor of its entry to be: ``shape`` (``None`` entries match any length;
    a last entry ``...`` allows any further dimensions; ``None`` alone: any shape), ``dtype`` (a numpy or torch dtype
    name such as ``"float32"``; None: any) and
    ``finite`` (no NaN or infinity). Checked by :func:`load_cache_entry` *after* the checksum, because an entry
    and its sidecar can be replaced together: the checksum proves the bytes are the ones written, not that
    they are what the key promises."""

    shape: tuple[Any, ...] | None = None  # ints, None (any length) and a last ... (any further dimensions)
    dtype: str | None = None
    finite: bool = True


def _payload_bytes(payload: Any) -> int:
    """Bytes of tensor and array data in ``payload``: a lower bound of what ``torch.save`` writes."""
    import numpy as np  # with torch, on first use (see above)
    import torch  # heavy (~1 s): only the cache needs it, and light tools (runner, registry) import this module

    if isinstance(payload, torch.Tensor):
        return payload.element_size() * payload.nelement()
    if isinstance(payload, np.ndarray):
        return payload.nbytes
    if isinstance(payload, dict):
        return sum(_payload_bytes(v) for v in payload.values())
    if isinstance(payload, (list, tuple)):
        return sum(_payload_bytes(v) for v in payload)
    return 0


def cache_writable(folder: str | os.PathLike | None = None) -> bool:
    """Whether the cache ``folder`` (default :func:`default_cache_dir`) can take new entries; when it cannot
    (read-only, no permission, full), one warning names ``$PATE_STUDY_CACHE``, the reason and that the results
    computed now will not be stored. Called on every cache miss, i.e. *before* the training it would store."""
    folder = Path(folder or default_cache_dir())
    try:
        check_writable(folder, label=variable_for(folder / "x"), margin=_MIN_FREE)
    except FolderNotWritableError as exc:
        logger.warning("%s; results computed now will be returned but not cached", exc)
        return False
    return True


def save_cache_entry(path: str | Path, payload: dict[str, Any], meta: dict[str, Any] | None = None) -> Path | None:
    """``torch.save`` ``payload`` to ``path`` (temp file + ``os.replace``) and write ``path.json``
    with its SHA-256 and size; the sidecar is written last, so a missing sidecar marks a partial entry.

    A cache that cannot take the entry (read-only, full: :class:`WriteFailedError`; a folder or other non-file
    at the entry's path) costs the cache entry, never the result: one warning names the variable, the path and
    the bytes needed (or what is in the way), whatever was there is kept, and None is returned instead of the path.
    """
    import torch  # heavy (~1 s): only the cache needs it, and light tools (runner, registry) import this module

    path = Path(path)
    side_path = path.with_suffix(path.suffix + ".json")
    for target in (path, side_path):
        if target.exists() and not target.is_file():
            logger.warning(
                "%s: cannot write the cache entry %s: %s is in the way (%s); the result is used but not "
                "cached; remove it to cache again",
                variable_for(path),
                path,
                target,
                _what_is(target),
            )
            return None
    try:
        atomic_write(path, lambda tmp: torch.save(payload, tmp), needed=_payload_bytes(payload))
        side = {"sha256": sha256_file(path), "size": path.stat().st_size, "format": CACHE_FORMAT, **(meta or {})}
        atomic_write_text(side_path, json.dumps(side, indent=1))
    except OSError as exc:  # WriteFailedError (full, read-only) or anything else the file system refuses
        logger.warning(
            "%s; the result is used but not cached",
            exc
            if isinstance(exc, WriteFailedError)
            else f"{variable_for(path)}: cannot write the cache entry {path} ({exc.strerror or one_line(exc)})",
        )
        return None
    return path


def _what_is(path: Path) -> str:
    """``"a folder"``, ``"a symbolic link"``, ... for messages about something in the way of a file."""
    if path.is_symlink():
        return "a symbolic link"
    return "a folder" if path.is_dir() else "not a regular file"


def _shape_matches(shape: tuple[int, ...], declared: tuple[Any, ...]) -> bool:
    """Whether ``shape`` fits ``declared`` (see :class:`CacheExpectation`): equal rank, or at least the declared
    leading sizes when it ends in ``...``; a ``None`` size matches any."""
    open_rank = bool(declared) and declared[-1] is Ellipsis
    sizes = declared[:-1] if open_rank else declared
    rank_ok = len(shape) >= len(sizes) if open_rank else len(shape) == len(sizes)
    return rank_ok and all(w is None or w == h for w, h in zip(sizes, shape))


def _check_expected(payload: Any, expect: Mapping[str, CacheExpectation]) -> str | None:
    """Why ``payload`` is not what ``expect`` declares (None when it is)."""
    import numpy as np  # with torch, on first use (see above)
    import torch  # heavy (~1 s): only the cache needs it, and light tools (runner, registry) import this module

    for name, want in expect.items():
        value: Any = payload
        for part in name.split("."):
            if not isinstance(value, dict) or part not in value:
                return f"{name!r} missing"
            value = value[part]
        if not isinstance(value, (torch.Tensor, np.ndarray)):
            return f"{name!r} is a {type(value).__name__}, expected an array"
        shape = tuple(value.shape)
        if want.shape is not None and not _shape_matches(shape, tuple(want.shape)):
            return f"{name!r} has shape {shape}, the key declares {tuple(want.shape)}"
        dtype = str(value.dtype).removeprefix("torch.")
        if want.dtype is not None and dtype != np.dtype(str(want.dtype).removeprefix("torch.")).name:
            return f"{name!r} has dtype {dtype}, the key declares {want.dtype}"
        tensor = torch.as_tensor(value)
        if want.finite and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            return f"{name!r} holds NaN or infinite values"
    return None


def load_cache_entry(
    path: str | Path, *, expect: Mapping[str, CacheExpectation] | None = None, meta: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """Verified payload at ``path``, or ``None`` when absent.

    A partial or corrupt entry (missing sidecar, size or SHA-256 mismatch, any error while loading: a pickle
    that ``weights_only`` refuses, a truncated zip), one whose sidecar names another entry (``meta``: the fields
    the sidecar must hold, e.g. the kind and full key whose file name this is: an entry copied with its sidecar
    under another key's name passes the checksum) or one that is not what its key declares (``expect``: the
    shape, dtype and finiteness of named tensors, dotted names for nested dicts) is logged and reported as
    absent, so it is recomputed; it is deleted when the cache is writable, and left with a warning when not.
    On a miss the cache's writability is checked (:func:`cache_writable`) before the caller starts the work.
    """
    import torch  # heavy (~1 s): only the cache needs it, and light tools (runner, registry) import this module

    path = Path(path)
    side_path = path.with_suffix(path.suffix + ".json")
    if not path.exists() and not side_path.exists():
        cache_writable(path.parent)
        return None
    reason = None
    try:
        side = json.loads(side_path.read_text())
        wrong = [name for name, value in (meta or {}).items() if isinstance(side, dict) and side.get(name) != value]
        if not isinstance(side, dict) or side.get("format") != CACHE_FORMAT:
            reason = f"format {side.get('format') if isinstance(side, dict) else side!r} != {CACHE_FORMAT}"
        elif wrong:
            reason = (
                "its sidecar belongs to another entry ("
                + ", ".join(f"{name} {str(side.get(name))[:64]!r}, expected {str(meta[name])[:64]!r}" for name in wrong)
                + ")"
            )
        elif not path.exists() or path.stat().st_size != side["size"]:
            reason = "size mismatch (truncated or partial write)"
        elif sha256_file(path) != side["sha256"]:
            reason = "SHA-256 mismatch"
        else:
            payload = torch.load(path, map_location="cpu", weights_only=True)
            reason = _check_expected(payload, expect) if expect else None
            if reason is None:
                return payload
    except Exception as exc:  # noqa: BLE001 - every way a load can fail is a rejected entry, recomputed
        reason = f"unreadable ({type(exc).__name__}: {one_line(exc)[:200]})"
    logger.warning("cache entry %s rejected: %s; it will be recomputed", path, reason)
    for p in (path, side_path):
        try:
            p.unlink(missing_ok=True)
        except OSError as exc:
            logger.warning(
                "cannot remove the rejected cache entry %s (%s, %s); it stays and is ignored",
                p,
                exc.strerror or exc,
                variable_for(p),
            )
    cache_writable(path.parent)
    return None
