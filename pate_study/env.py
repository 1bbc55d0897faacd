"""Folders named by environment variables, checked in one place.

``PATE_STUDY_DATA`` (prepared data), ``PATE_STUDY_CACHE`` (trained ensembles, teacher votes) and
``PATE_STUDY_MIRROR`` (pre-downloaded source files) are read only through :func:`env_folder`, which
checks the value before anything is written or read there: a path that is (or lies below) a regular
file, or a mirror that does not exist, raises :class:`EnvPathError`, a one-line error naming the
variable, the problem and the fix (instead of a raw ``FileExistsError`` deep inside ``mkdir``).

Light on purpose (standard library only): imported by ``data_recipes`` and ``pate_study.privacy``'s
neighbours without pulling numpy or torch.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATA_ENV", "CACHE_ENV", "MIRROR_ENV", "EnvPathError", "env_folder", "data_dir", "cache_dir",
           "mirror_dir"]

DATA_ENV = "PATE_STUDY_DATA"
CACHE_ENV = "PATE_STUDY_CACHE"
MIRROR_ENV = "PATE_STUDY_MIRROR"
_REPO = Path(__file__).resolve().parents[1]


class EnvPathError(ValueError):
    """An environment variable names a path that cannot be used as the folder it stands for."""


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

    Unset or empty: ``default`` (which may be None). Set: the path must be a folder, or not exist yet
    with no regular file among its existing ancestors (it is created on first write); with
    ``must_exist`` it must already be a folder. EnvPathError otherwise, naming the variable.
    """
    value = os.environ.get(variable, "")
    if not value.strip():
        return default
    path = Path(value).expanduser()
    blocker = _file_in_the_way(path)
    if blocker is not None:
        where = "is a regular file" if blocker == path else f"lies below the regular file {blocker}"
        raise EnvPathError(f"{variable}={value}: {where}, expected a folder; point {variable} at a folder "
                           f"(or unset it to use the default)")
    if must_exist and not path.is_dir():
        raise EnvPathError(f"{variable}={value}: no such folder; point {variable} at an existing folder "
                           f"(or unset it)")
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
