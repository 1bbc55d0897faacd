"""Output folders owned file by file: a tool lists, in a manifest inside the folder, every file it wrote there,
and removes or replaces only those; anything else in the folder is the user's and is kept (or the work refused).

A marker alone ("this tool wrote this folder once") does not say that the tool owns everything in the folder now:
a user may have added notes, a figure of their own, a whole subfolder since. So the figures runner
(:mod:`pate_study.tooling.notebook_runner.staging`: ``figures/<stem>/`` and ``figures/<stem>/<profile>/``) and the site
(:mod:`pate_study.tooling.site`: ``--out`` and its source tree) both keep the list of what they wrote:

* :func:`write_manifest` records the files (relative paths, one per line under a header naming the tool);
* :func:`read_manifest` reads it back, refusing a manifest that is a folder, a link, unreadable, of another tool,
  or that names a path outside the folder (a forged list can never make the tool delete elsewhere);
* :func:`folder_entries` lists what is in a folder now (files and links, never following a link), so a caller can
  tell the tool's files from the user's (:func:`not_written`);
* :func:`remove_written` removes the listed files only, and the folders those removals emptied;
* :func:`keep_in` puts the user's files into a replacement folder (hard links, else copies) before it is swapped in;
* :func:`discard_moved_aside` removes a folder moved aside by a swap, file by file, keeping anything the tool did
  not write that is not also in the folder that replaced it.

Every failure is an :class:`OwnedFolderError`: one line naming the path and the cause.
"""

from __future__ import annotations

import errno
import filecmp
import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Iterable

from data_recipes.files import atomic_write_text, describe_path, one_line

__all__ = [
    "OwnedFolderError",
    "describe_path",
    "shown_files",
    "manifest_header",
    "read_manifest",
    "write_manifest",
    "folder_entries",
    "not_written",
    "remove_written",
    "keep_in",
    "discard_moved_aside",
    "io_error_line",
]

#: How many of the user's files a message names before it says how many more there are.
SHOWN_FILES = 3


class OwnedFolderError(ValueError):
    """An output folder the tool will not use as it is, or a write that failed there (message: one line)."""


def io_error_line(exc: OSError, action: str = "cannot write", where: object = None) -> str:
    """One line for an ``OSError``: the path it names and the cause (``No space left on device``, ``Permission
    denied``, ``Not a directory``, ``Too many levels of symbolic links``, ...); an error that already is one line
    naming its path (:class:`~data_recipes.files.WriteFailedError`) as it is. ``where``: what to name when the
    error names no path (a write through an open file: "a file in <where>")."""
    if exc.filename is None and exc.strerror is None:
        return one_line(exc) or type(exc).__name__
    where = exc.filename if exc.filename is not None else f"a file in {where}" if where is not None else "a file"
    cause = exc.strerror or one_line(exc) or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        cause += "; free space and run again"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        cause += "; make it writable or choose another folder"
    return f"{where}: {action} ({cause})"


def manifest_header(tool: str) -> str:
    """The manifest's first line: which tool wrote the files listed under it."""
    return f"# files written here by {tool}, one per line; any other file in this folder is not the tool's"


def _safe_relative(text: str, manifest: Path) -> str:
    """A listed path as a clean relative POSIX path inside the folder; OwnedFolderError otherwise."""
    path = PurePosixPath(text)
    if path.is_absolute() or not path.parts or any(part in ("", ".", "..") for part in path.parts):
        raise OwnedFolderError(
            f"{manifest}: lists {text[:80]!r}, not a path inside its folder; the list was not written by this tool "
            "(move it away and run again)"
        )
    return path.as_posix()


def read_manifest(folder: Path, name: str, tool: str) -> frozenset[str] | None:
    """The files ``tool`` recorded in ``folder/name`` (relative POSIX paths), or None when there is no manifest.

    Refused (OwnedFolderError naming the manifest): a folder, a link or anything but a regular file in its place,
    an unreadable file, a first line other than :func:`manifest_header` of ``tool``, a listed path outside the
    folder."""
    path = Path(folder) / name
    if not path.is_symlink() and not path.exists():
        return None
    if path.is_symlink() or not path.is_file():
        raise OwnedFolderError(
            f"{path}: {describe_path(path)} where {tool} keeps the list of the files it wrote; move it away and run "
            "again (nothing was changed)"
        )
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else one_line(exc)
        raise OwnedFolderError(f"{path}: unreadable ({cause}); move it away and run again") from None
    if not lines or lines[0] != manifest_header(tool):
        raise OwnedFolderError(
            f"{path}: not the list of files {tool} writes (its first line differs); move it away and run again "
            "(nothing was changed)"
        )
    return frozenset(_safe_relative(line, path) for line in lines[1:] if line.strip())


def write_manifest(folder: Path, name: str, tool: str, files: Iterable[str]) -> Path:
    """Record ``files`` (relative POSIX paths) as written by ``tool`` in ``folder/name`` (atomically)."""
    listed = sorted({str(f) for f in files} - {name})
    return atomic_write_text(Path(folder) / name, "\n".join([manifest_header(tool), *listed]) + "\n")


def folder_entries(folder: Path, skip: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(files, empty folders) under ``folder`` as relative POSIX paths: regular files, links (never followed, a link
    to a folder included) and anything else that is not a folder, then the folders with nothing in them.
    ``skip``: top-level names left out (a manifest, other profiles' subfolders). A folder that cannot be listed
    raises OwnedFolderError naming it."""
    folder = Path(folder)
    skipped = set(skip)
    files: list[str] = []
    empty: list[str] = []

    def failed(exc: OSError) -> None:
        raise OwnedFolderError(io_error_line(exc, "cannot list the folder")) from None

    for root, dirs, names in _walk(folder, failed):
        rel_root = Path(root).relative_to(folder)
        if rel_root == Path("."):
            dirs[:] = [d for d in dirs if d not in skipped]
            names = [n for n in names if n not in skipped]
        links = [d for d in dirs if (Path(root) / d).is_symlink()]
        dirs[:] = sorted(d for d in dirs if d not in links)
        files += [(rel_root / n).as_posix() for n in sorted([*names, *links])]
        if not dirs and not names and not links and rel_root != Path("."):
            empty.append(rel_root.as_posix())
    return sorted(files), sorted(empty)


def _walk(folder: Path, on_error):
    return os.walk(folder, topdown=True, onerror=on_error, followlinks=False)


def not_written(folder: Path, written: frozenset[str] | None, skip: Iterable[str] = ()) -> list[str]:
    """The files under ``folder`` (see :func:`folder_entries`) that ``written`` does not list: the user's."""
    files, _ = folder_entries(folder, skip)
    return [f for f in files if written is None or f not in written]


def shown_files(names: list[str]) -> str:
    """``a, b, c and 4 more`` for a message."""
    head = ", ".join(names[:SHOWN_FILES])
    return head + (f" and {len(names) - SHOWN_FILES} more" if len(names) > SHOWN_FILES else "")


def _inside(folder: Path, rel: str) -> Path | None:
    """``folder/rel`` when no folder on the way is a link (so removing it cannot reach outside), else None."""
    path = Path(folder)
    for part in PurePosixPath(rel).parts[:-1]:
        path = path / part
        if path.is_symlink() or not path.is_dir():
            return None
    return path / PurePosixPath(rel).name


def remove_written(folder: Path, written: Iterable[str]) -> None:
    """Remove the files ``written`` lists from ``folder`` (a file already gone is skipped; a listed name that is now
    a folder, or lies behind a link, is left), then the folders those removals emptied."""
    folder = Path(folder)
    parents: set[Path] = set()
    for rel in sorted(written):
        path = _inside(folder, rel)
        if path is None or not (path.is_symlink() or path.exists()) or (path.is_dir() and not path.is_symlink()):
            continue
        try:
            path.unlink()
        except OSError as exc:
            raise OwnedFolderError(io_error_line(exc, "cannot remove this tool's previous file")) from None
        parents.update(p for p in path.parents if p != folder and folder in p.parents)
    for parent in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        try:
            parent.rmdir()  # only when empty: a folder still holding the user's files stays
        except OSError:
            pass


def keep_in(source: Path, target: Path, files: Iterable[str], empty: Iterable[str] = ()) -> None:
    """Put ``files`` of ``source`` (the user's) into ``target`` at the same relative paths, as hard links (the same
    file, no copy) or, across file systems, copies with their metadata; links are kept as links. ``empty``: empty
    folders recreated. A path ``target`` already holds is refused (OwnedFolderError): nothing is overwritten."""
    source, target = Path(source), Path(target)
    for rel in empty:
        (target / rel).mkdir(parents=True, exist_ok=True)
    for rel in files:
        src, dst = source / rel, target / rel
        if dst.exists() or dst.is_symlink():
            raise OwnedFolderError(f"{src}: the new outputs have a file of this name; move yours away and run again")
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst, follow_symlinks=False)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise
                shutil.copy2(src, dst, follow_symlinks=False)
        except OSError as exc:
            raise OwnedFolderError(io_error_line(exc, "cannot keep this file in the new outputs")) from None


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` hold the same thing: one file (hard links), equal bytes, or links to the same place."""
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    if (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino):
        return True
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)
    return a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)


def discard_moved_aside(old: Path, final: Path, written: frozenset[str] | None, manifest: str) -> bool:
    """Remove ``old``, a folder a swap moved aside for ``final``, file by file: a file goes when ``written`` lists
    it (the tool's; so is the list itself, ``manifest``), when it is the same file as ``final``'s at that path (kept
    there by :func:`keep_in`), or, for a folder from before manifests (``written`` None), when ``final`` has a file
    of that name (the run replaced it). Anything else stays, and so does ``old`` then. Returns whether ``old`` is
    gone."""
    old, final = Path(old), Path(final)
    files, _ = folder_entries(old, skip=[manifest])
    owned = [manifest]
    for rel in files:
        mine = written is not None and rel in written
        replaced = written is None and ((final / rel).exists() or (final / rel).is_symlink())
        if mine or replaced or _same_file(old / rel, final / rel):
            owned.append(rel)
    remove_written(old, owned)
    for root, dirs, names in sorted(os.walk(old, topdown=False), key=lambda entry: -len(Path(entry[0]).parts)):
        try:
            Path(root).rmdir()  # empty folders of the old tree, deepest first
        except OSError:
            pass
    return not old.exists()
