"""Data recipes: the only code in pate_study that touches the network.

``python -m data_recipes list`` / ``prepare NAME...`` / ``prepare all`` (see ``__main__``).
Each module defines ``RECIPE`` (a :class:`~data_recipes.framework.Recipe`).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from data_recipes.framework import (
    ChecksumError,
    DataError,
    IncompleteDataError,
    MalformedDataError,
    NotAvailableError,
    Recipe,
    data_root,
    mirror_root,
    prepared_dir,
    read_manifest,
    run_recipe,
)

#: recipe name -> module (kept in the order ``prepare all`` runs them)
_MODULES = {
    "pate2018-votes": "pate2018",
    "csic2010": "csic2010",
    "ecml-pkdd2007": "ecml_pkdd2007",
    "malicious-urls": "malicious_urls",
    "ecg-heartbeat": "ecg_heartbeat",
    "audioset": "audioset",
    "audioset-audio": "audioset_audio",
    "deeplog-hdfs": "deeplog_hdfs",
}


def names() -> list[str]:
    """All recipe names."""
    return list(_MODULES)


def get_recipe(name: str) -> Recipe:
    """The recipe called ``name`` (ValueError listing the valid names otherwise)."""
    if name not in _MODULES:
        raise ValueError(f"name={name!r}: unknown dataset; expected one of {', '.join(_MODULES)}")
    return importlib.import_module(f"{__name__}.{_MODULES[name]}").RECIPE


def prepare(
    name: str, *, network: bool = True, force: bool = False, allow_large: bool | None = None, allow_small: bool = False
) -> Path:
    """Prepare dataset ``name`` (skipped when completely prepared, unless ``force``); return its folder.

    An installed folder that is incomplete (:meth:`Recipe.problem`) is prepared again.
    """
    recipe = get_recipe(name)
    if recipe.is_prepared() and not force:
        return prepared_dir(name)
    return run_recipe(recipe, network=network, allow_large=allow_large, allow_small=allow_small)


__all__ = [
    "ChecksumError",
    "DataError",
    "IncompleteDataError",
    "MalformedDataError",
    "NotAvailableError",
    "Recipe",
    "data_root",
    "get_recipe",
    "mirror_root",
    "names",
    "prepare",
    "prepared_dir",
    "read_manifest",
    "run_recipe",
]
