"""Datasets: prepared real data (from :mod:`data_recipes`) or a synthetic stand-in with the same schema.

Every loader takes ``data`` = ``"auto"`` (real data if prepared, or preparable from the mirror
``$PATE_STUDY_MIRROR``; else the synthetic stand-in), ``"real"`` (error with the command that
prepares it) or ``"synthetic"``, and returns a small dataclass whose ``.source`` is a
:class:`DataSource` stamped on every output.

Modules: :mod:`.pate2018` (vote matrices), :mod:`.web` (CSIC 2010 / ECML-PKDD 2007 /
Malicious URLs), :mod:`.ecg` (MIT-BIH heartbeats), :mod:`.audioset` (VGGish embeddings and label
subsets), :mod:`.deeplog` (HDFS log-key sequences). Shared helper: :func:`resolve_source`.
Teacher partitions are drawn in one place, :func:`pate_study.learning.partitions.make_partitions`.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import data_recipes
from data_recipes.files import DATA_ENV, MIRROR_ENV

logger = logging.getLogger(__name__)

DATA_CHOICES = ("auto", "real", "synthetic")


@dataclass(frozen=True)
class DataSource:
    """Provenance of a loaded dataset.

    kind: "real" or "synthetic"; dataset: human name ("CSIC 2010"); description: sizes and
    balance as measured; scale: "full", a sample description, or the synthetic size/seed;
    origin: "mirror"/"network" for real data ("" for synthetic).
    """

    kind: Literal["real", "synthetic"]
    dataset: str
    description: str
    scale: str
    origin: str = ""

    def stamp(self) -> str:
        """One-line provenance, e.g. ``real: CSIC 2010 via mirror, 97,065 requests (25.8% anomalous)``."""
        if self.kind == "synthetic":
            return f"synthetic stand-in for {self.dataset} ({self.description})"
        via = f" via {self.origin}" if self.origin else ""
        scale = "" if self.scale == "full" else f" [{self.scale}]"
        return f"real: {self.dataset}{via}, {self.description}{scale}"


def _check_data(data: str) -> None:
    if data not in DATA_CHOICES:
        raise ValueError(f"data={data!r}: expected one of {DATA_CHOICES}")


def resolve_source(name: str, data: str = "auto") -> Path | None:
    """Folder of the prepared real dataset ``name`` (a data_recipes name), or None for synthetic.

    ``auto``: the prepared folder if it is complete; else, when the mirror holds the files, prepare
    from the mirror (no network) and return it; else None. ``real``: the same, but
    FileNotFoundError (naming ``make data-<name>``) instead of None. ``synthetic``: None.
    A corrupt mirror copy raises (never silently replaced by synthetic data), and so does an
    installed folder that is incomplete against its variant's declared sizes when the mirror
    cannot replace it (``IncompleteDataError`` naming the command that prepares it again).
    """
    _check_data(data)
    if data == "synthetic":
        return None

    recipe = data_recipes.get_recipe(name)
    problem = recipe.problem()
    if problem is None:
        return data_recipes.prepared_dir(name)
    if recipe.mirror_variant() is not None:
        if problem != "not prepared":
            logger.warning(
                "%s: the prepared folder is unusable (%s); preparing it again from the mirror", name, problem
            )
        logger.info("preparing %s from the mirror", name)
        return data_recipes.run_recipe(recipe, network=False)
    if problem != "not prepared":
        raise data_recipes.IncompleteDataError(
            f"{data_recipes.prepared_dir(name)}: the prepared {name} is unusable ({problem}); prepare it again with "
            f"`python -m data_recipes prepare {name} --force` (or `make data-{name}`)"
        )
    if data == "real":
        raise FileNotFoundError(
            f"dataset {name!r} is not prepared and not in the mirror ($PATE_STUDY_MIRROR). Prepare it with "
            f"`make data-{name}` (or `python -m data_recipes prepare {name}`). How to get it: {recipe.how_to_get}"
        )
    configured = [variable for variable in (DATA_ENV, MIRROR_ENV) if os.environ.get(variable)]
    if configured:  # the user pointed at data, and it is not there: say so, never fall back quietly
        # the variables are named, not their folders: this line lands in executed notebooks that are committed
        logger.warning(
            "%s: not prepared in $%s%s; using the synthetic stand-in (outputs are stamped synthetic); "
            "prepare it with `python -m data_recipes prepare %s`",
            name,
            DATA_ENV,
            f" and not in ${MIRROR_ENV}" if MIRROR_ENV in configured else "",
            name,
        )
    else:
        logger.info("%s not available; using the synthetic stand-in", name)
    return None


def read_manifest(folder: Path) -> dict:
    """MANIFEST.json of a prepared folder."""
    return json.loads((Path(folder) / "MANIFEST.json").read_text())


def manifest_origin(manifest: dict) -> str:
    """'mirror', 'network' or 'mirror+network' from a manifest's sources."""
    return "+".join(sorted({s["origin"] for s in manifest.get("sources", [])}))


__all__ = ["DATA_CHOICES", "DataSource", "resolve_source"]
