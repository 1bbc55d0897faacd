"""File helpers shared by the whole project: content hashes and atomic writes.

Everything the project prepares or caches (prepared data, trained ensembles, figures, tables) is written
through :func:`atomic_write`: to a temporary file in the same folder, then renamed over the target, so a
reader sees the old file or the complete new one, never a partial one.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

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
