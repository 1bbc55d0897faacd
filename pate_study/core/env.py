"""Folders named by environment variables, checked in one place.

``PATE_STUDY_DATA`` (prepared data), ``PATE_STUDY_CACHE`` (trained ensembles, teacher votes) and
``PATE_STUDY_MIRROR`` (pre-downloaded source files) are read only through :func:`env_folder`, which
checks the value before anything is written or read there: a path that is (or lies below) a regular
file, or a mirror that does not exist, raises :class:`EnvPathError`, a one-line error naming the
variable, the problem and the fix (instead of a raw ``FileExistsError`` deep inside ``mkdir``);
:func:`check_writable` finds a read-only or full folder before long work starts.

Defined in :mod:`data_recipes.files` (standard library only; shared with the recipes, which import nothing
from ``pate_study``); this module is their name inside the study package.
"""

from __future__ import annotations

from data_recipes.files import (
    CACHE_ENV,
    DATA_ENV,
    MIRROR_ENV,
    EnvPathError,
    FolderNotWritableError,
    cache_dir,
    check_writable,
    data_dir,
    env_folder,
    mirror_dir,
    variable_for,
)

__all__ = [
    "DATA_ENV",
    "CACHE_ENV",
    "MIRROR_ENV",
    "EnvPathError",
    "FolderNotWritableError",
    "env_folder",
    "data_dir",
    "cache_dir",
    "mirror_dir",
    "check_writable",
    "variable_for",
]
