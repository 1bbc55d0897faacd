"""File-level primitives shared by ``data_recipes`` and ``pate_study``: one-line errors, the folders named by
environment variables, content hashes, atomic writes, and write failures reported as one line.

Imports go one way: ``pate_study`` imports these from here (``pate_study.core.env``, ``pate_study.core.errors`` and
``pate_study.core.io`` re-export them), ``data_recipes`` imports nothing from ``pate_study``. Standard library only,
so the recipes' command line and ``pate_study.core.env`` stay light.

Folders. ``PATE_STUDY_DATA`` (prepared data), ``PATE_STUDY_CACHE`` (trained ensembles, teacher votes) and
``PATE_STUDY_MIRROR`` (pre-downloaded source files) are read only through :func:`env_folder`, which checks the
value before anything is written or read there: a path that is (or lies below) a regular file, or a mirror that
does not exist, raises :class:`EnvPathError`, a one-line error naming the variable, the problem and the fix.
:func:`check_writable` tells, before long work starts, whether a folder can take new files.

Writes. Everything prepared or cached is written through :func:`atomic_write`: to a temporary file in the same
folder, then renamed over the target, so a reader sees the old file or the complete new one, never a partial one.
A write that fails for lack of space or permission (``ENOSPC``, ``EROFS``, ``EACCES``, numpy's ``"N requested
and M written"``, torch's ``"enforce fail at inline_container.cc"``) raises :class:`WriteFailedError`: one line
naming the variable that chose the folder, the path, the bytes needed and the bytes free; the old file is kept.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

__all__ = [
    "DATA_ENV",
    "CACHE_ENV",
    "MIRROR_ENV",
    "EnvPathError",
    "FolderNotWritableError",
    "WriteFailedError",
    "one_line",
    "describe_path",
    "shown_path",
    "env_folder",
    "data_dir",
    "cache_dir",
    "mirror_dir",
    "variable_for",
    "check_writable",
    "free_bytes",
    "no_room",
    "write_failure",
    "sha256_file",
    "atomic_write",
    "atomic_write_text",
    "replace_folder",
]

DATA_ENV = "PATE_STUDY_DATA"
CACHE_ENV = "PATE_STUDY_CACHE"
MIRROR_ENV = "PATE_STUDY_MIRROR"
_REPO = Path(__file__).resolve().parents[1]
_CHUNK = 1 << 20
#: errno values that mean "this folder cannot take the file" (space, quota, read-only, permission, file size)
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG}


# --------------------------------------------------------------------------------------------------- messages
def one_line(message: object) -> str:
    """``message`` as a single line: blank lines dropped, the others stripped and joined with ``"; "``.

    Parser errors from pandas or xml carry embedded newlines; joined here, every error the CLIs print
    stays on one line (so ``2>err.txt; head -1`` or a log grep sees the whole message).
    """
    return "; ".join(part.strip() for part in str(message).splitlines() if part.strip())


def shown_path(path: str | os.PathLike) -> str:
    """``path`` as a log line shows it: relative to the working folder when it lies inside it (a checkout's
    ``data/`` reads the same on every machine, and a notebook's executed copy names no machine's folders), else as
    given."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def describe_path(path: Path) -> str:
    """What is at ``path`` when it is not what was expected: a folder, a regular file, a symbolic link that loops or
    points nowhere, or something else (for one-line messages)."""
    path = Path(path)
    if not path.is_symlink() and not path.exists():
        return "nothing (missing)"
    if path.is_symlink():
        try:
            path.resolve(strict=True)
        except RuntimeError:
            return "a symbolic link that loops"
        except OSError as exc:
            return (
                "a symbolic link that loops"
                if "loop" in str(exc).lower()
                else f"a symbolic link to a missing {os.readlink(path)}"
            )
    if path.is_dir():
        return "a folder"
    return "a regular file" if path.is_file() else "not a regular file"


class EnvPathError(ValueError):
    """An environment variable names a path that cannot be used as the folder it stands for."""


class FolderNotWritableError(EnvPathError):
    """A data or cache folder cannot take new files (read-only, no permission, no space); found before work."""


class WriteFailedError(OSError):
    """Writing a file failed for lack of space or permission; the previous file is kept (message: one line)."""

    def __init__(self, message: str, path: Path, needed: int | None):
        super().__init__(one_line(message))
        self.path, self.needed = path, needed


# ---------------------------------------------------------------------------------------------------- folders
def _in_checkout() -> bool:
    return (_REPO / "pyproject.toml").is_file()


def _file_in_the_way(path: Path) -> Path | None:
    """The path itself or its nearest existing ancestor when that is not a folder, else None."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


def env_folder(variable: str, default: Path | None, *, must_exist: bool = False) -> Path | None:
    """The folder named by ``$variable`` (``~`` expanded), else ``default``; checked before use.

    Unset or empty: ``default`` (which may be None). Set: the path must be absolute (a relative one would name
    one folder when data are prepared from the repository root and another when a notebook in ``notebooks/``
    loads them, which then silently gets a stand-in), and a folder, or not exist yet with no regular file among
    its existing ancestors (it is created on first write); with ``must_exist`` it must already be a folder.
    EnvPathError otherwise, naming the variable.
    """
    value = os.environ.get(variable, "")
    if not value.strip():
        return default
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise EnvPathError(
            f"{variable}={value}: a relative path names another folder from each working folder "
            f"(make runs in the repository root, JupyterLab in notebooks/); give an absolute path, "
            f"e.g. {variable}={Path.cwd() / path}"
        )
    if path.is_symlink() and not path.exists():  # a link that loops or points nowhere: never "no such folder"
        raise EnvPathError(
            f"{variable}={value}: {describe_path(path)}, expected a folder; point {variable} at a folder "
            f"(or unset it to use the default)"
        )
    blocker = _file_in_the_way(path)
    if blocker is not None:
        where = "is a regular file" if blocker == path else f"lies below the regular file {blocker}"
        raise EnvPathError(
            f"{variable}={value}: {where}, expected a folder; point {variable} at a folder "
            f"(or unset it to use the default)"
        )
    if must_exist and not path.is_dir():
        raise EnvPathError(f"{variable}={value}: no such folder; point {variable} at an existing folder (or unset it)")
    return path


def data_dir() -> Path:
    """Prepared data: ``$PATE_STUDY_DATA``, else ``<repo>/data`` in a checkout, else ``~/.cache/pate_study/data``."""
    default = _REPO / "data" if _in_checkout() else Path.home() / ".cache" / "pate_study" / "data"
    return env_folder(DATA_ENV, default)


def cache_dir() -> Path:
    """Trained ensembles and votes: ``$PATE_STUDY_CACHE``, else ``<repo>/.cache/pate_study``."""
    return env_folder(CACHE_ENV, _REPO / ".cache" / "pate_study")


def mirror_dir() -> Path | None:
    """The mirror of source files, ``$PATE_STUDY_MIRROR`` (None when unset); it must be an existing folder."""
    return env_folder(MIRROR_ENV, None, must_exist=True)


def variable_for(path: str | os.PathLike) -> str:
    """How the user chooses the folder of ``path``: ``PATE_STUDY_CACHE=<dir>`` or ``PATE_STUDY_DATA=<dir>`` when
    ``path`` lies in one of them (named as the variable even when it is unset and the default applies), else
    ``"folder <parent>"``. Used in messages, so that the fix (point the variable elsewhere) is obvious."""
    path = Path(path).absolute()
    for variable, folder in ((CACHE_ENV, cache_dir), (DATA_ENV, data_dir)):
        try:
            root = folder().absolute()
        except EnvPathError:
            continue
        if path == root or root in path.parents:
            return f"{variable}={root}"
    return f"folder {path.parent}"


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor or ".")


def free_bytes(path: str | os.PathLike) -> int | None:
    """Bytes free for new files on the file system holding ``path`` (its nearest existing ancestor)."""
    try:
        return shutil.disk_usage(_nearest_existing(Path(path).absolute())).free
    except OSError:
        return None


def check_writable(folder: str | os.PathLike, *, label: str | None = None, needed: int = 0, margin: int = 0) -> Path:
    """Make sure ``folder`` exists and can take a new file of ``needed`` bytes, with at least ``margin`` bytes
    free (a reserve kept before work whose output size is not known yet); return it.

    Tried for real (a temporary file created and removed), so a read-only mount, a folder without write
    permission or a full disk is found *before* the long work whose result would go there. Raises
    :class:`FolderNotWritableError` naming ``label`` (default: :func:`variable_for`), the reason and the fix;
    a shortfall below ``margin`` is named as the margin, never as the size of a file.
    """
    folder = Path(folder)
    label = label or variable_for(folder / "x")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".write-check-", dir=folder)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise FolderNotWritableError(
            f"{label}: cannot create files in {folder} ({exc.strerror or exc}); make it "
            "writable or point the variable at a writable folder"
        ) from None
    free = free_bytes(folder)
    if free is not None and needed and free < needed:
        raise FolderNotWritableError(
            f"{label}: {folder} has {free:,} bytes free, {needed:,} needed; free space "
            "or point the variable at a folder on a larger disk"
        )
    if free is not None and margin and free < margin:
        raise FolderNotWritableError(
            f"{label}: {folder} has {free:,} bytes free, less than the {margin:,}-byte "
            "margin kept free for new files (their sizes are not known before the work); "
            "free space or point the variable at a folder on a larger disk"
        )
    return folder


# ---------------------------------------------------------------------------------------------------- writing
def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def no_room(exc: BaseException, folder: Path, written: int = 0) -> bool:
    """Whether a write error means "the folder cannot take the file" rather than a bug in the writer."""
    if isinstance(exc, OSError) and (exc.errno in _NO_ROOM or "requested and" in str(exc) or "short write" in str(exc)):
        return True  # numpy's tofile: "OSError: 95125 requested and 32704 written" (errno None)
    text = str(exc)
    if "inline_container" in text or "file write failed" in text:
        return True  # torch.save's zip writer on a full disk
    free = free_bytes(folder)
    return isinstance(exc, OSError) and free is not None and free <= max(written, 1 << 16)


def write_failure(path: Path, exc: BaseException, needed: int | None, written: int = 0) -> WriteFailedError:
    """The one-line :class:`WriteFailedError` for a failed write of ``path`` (see :func:`atomic_write`)."""
    free = free_bytes(path.parent)
    if not needed:  # numpy says how much one write wanted: "95125 requested and 32704 written"
        match = re.search(r"(\d+) requested and (\d+) written", str(exc))
        needed = int(match.group(1)) if match else None
    reason = getattr(exc, "strerror", None) or one_line(exc).split(";")[0][:120] or type(exc).__name__
    size = f"{needed:,} bytes needed" if needed else f"at least {written:,} bytes needed" if written else "size unknown"
    room = f", {free:,} free" if free is not None else ""
    return WriteFailedError(
        f"{variable_for(path)}: cannot write {path} ({reason}; {size}{room}); free space or "
        "point the variable at a writable folder with room; the previous content is kept",
        path,
        needed,
    )


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None], *, needed: int | None = None) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it over ``path`` (atomic on POSIX).

    An exception in ``write``, or an empty result, leaves ``path`` as it was and removes the temporary file.
    ``needed``: the least number of bytes a complete file has (a lower bound the caller knows: array bytes,
    text length); a smaller result is a short write, lost by a writer that ignored a failed flush. A failure for
    lack of space or permission raises :class:`WriteFailedError` (one line: variable, path, the bytes needed
    when known, else at least what had been written, and the bytes free).
    """
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp" + path.suffix, dir=path.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        write(tmp)
        size = tmp.stat().st_size
        if size == 0:
            raise OSError(f"refusing to replace {path}: the new content is empty")
        if needed is not None and size < needed:  # C writers (numpy's tofile) can lose a failed flush silently
            raise OSError(errno.EIO, f"short write: {size:,} of at least {needed:,} bytes reached the disk")
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        os.replace(tmp, path)
    except (OSError, RuntimeError) as exc:
        written = tmp.stat().st_size if tmp is not None and tmp.exists() else 0
        if isinstance(exc, WriteFailedError) or not no_room(exc, path.parent, written):
            raise
        raise write_failure(path, exc, needed, written) from exc
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """:func:`atomic_write` of a UTF-8 text."""
    data = text.encode("utf-8")
    return atomic_write(path, lambda tmp: tmp.write_bytes(data), needed=len(data))


def replace_folder(
    new: str | os.PathLike,
    final: str | os.PathLike,
    *,
    marker: str | None = None,
    discard: Callable[[Path, Path], bool] | None = None,
) -> Path:
    """Swap the complete folder ``new`` in for ``final`` (directory renames; the old folder is deleted only
    once the new one is in place, and put back if the second rename fails). Returns ``final``.

    ``marker``: a suffix; the file ``.old-<name>-<pid><marker>`` is written beside the old folder before it is
    moved aside and removed after it is deleted, so that a later run can tell a swap of its own cut short from a
    folder of the user's that happens to have such a name (only marked folders are removed as left-overs).
    ``discard(old, final)``: removes the moved-aside folder instead of deleting it whole (a tool that owns its
    output folder file by file keeps what it did not write: :func:`pate_study.core.owned.discard_moved_aside`);
    it returns whether the folder is gone, and when it is not, the folder and its marker stay."""
    new, final = Path(new), Path(final)
    old = None
    if final.exists():
        old = final.with_name(f".old-{final.name}-{os.getpid()}")
        if old.exists():
            raise FileExistsError(f"{old} is in the way of swapping in {final}; move it away and run again")
        if marker:
            old.with_name(old.name + marker).write_text(
                f"moved aside by process {os.getpid()} while {final} was replaced\n"
            )
        os.replace(final, old)
    try:
        os.replace(new, final)
    except OSError:
        if old is not None:
            os.replace(old, final)
            if marker:
                old.with_name(old.name + marker).unlink(missing_ok=True)
        raise
    if old is not None:
        if discard is None:
            shutil.rmtree(old, ignore_errors=True)
        else:
            discard(old, final)
        if marker and not old.exists():
            old.with_name(old.name + marker).unlink(missing_ok=True)
    return final
