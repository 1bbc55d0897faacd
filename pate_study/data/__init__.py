"""Datasets: prepared real data (from :mod:`data_recipes`) or a synthetic stand-in with the same schema.

Every loader takes ``data`` = ``"auto"`` (real data if prepared, or preparable from the mirror
``$PATE_STUDY_MIRROR``; else the synthetic stand-in), ``"real"`` (error with the command that
prepares it) or ``"synthetic"``, and returns a small dataclass whose ``.source`` is a
:class:`DataSource` stamped on every output.

Modules: :mod:`.pate2018` (vote matrices), :mod:`.web` (CSIC 2010 / ECML-PKDD 2007 /
Malicious URLs), :mod:`.ecg` (MIT-BIH heartbeats), :mod:`.audioset` (VGGish embeddings and label
subsets), :mod:`.deeplog` (HDFS log-key sequences). Shared helpers: :func:`resolve_source`,
:func:`disjoint_partitions`.
"""
from __future__ import annotations

import json
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

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

    ``auto``: the prepared folder if it exists; else, when the mirror holds the files, prepare
    from the mirror (no network) and return it; else None. ``real``: the same, but
    FileNotFoundError (naming ``make data-<name>``) instead of None. ``synthetic``: None.
    A corrupt mirror copy raises (never silently replaced by synthetic data).
    """
    _check_data(data)
    if data == "synthetic":
        return None
    import data_recipes

    recipe = data_recipes.get_recipe(name)
    if recipe.is_prepared():
        return data_recipes.prepared_dir(name)
    if recipe.mirror_variant() is not None:
        logger.info("preparing %s from the mirror", name)
        return data_recipes.run_recipe(recipe, network=False)
    if data == "real":
        raise FileNotFoundError(
            f"dataset {name!r} is not prepared and not in the mirror ($PATE_STUDY_MIRROR). Prepare it with "
            f"`make data-{name}` (or `python -m data_recipes prepare {name}`). How to get it: {recipe.how_to_get}")
    logger.info("%s not available; using the synthetic stand-in", name)
    return None


def read_manifest(folder: Path) -> dict:
    """MANIFEST.json of a prepared folder."""
    return json.loads((Path(folder) / "MANIFEST.json").read_text())


def manifest_origin(manifest: dict) -> str:
    """'mirror', 'network' or 'mirror+network' from a manifest's sources."""
    return "+".join(sorted({s["origin"] for s in manifest.get("sources", [])}))


def disjoint_partitions(n_items: int, n_parts: int, size: int | None = None, *, seed: int | np.random.Generator,
                        allow_overlap: bool = False) -> list[np.ndarray]:
    """Random partitions of ``range(n_items)`` into ``n_parts`` index arrays of equal ``size``.

    Default ``size``: the largest feasible disjoint size, ``n_items // n_parts``. PATE's privacy
    analysis (Papernot et al. 2017 §3) needs each record in at most one teacher's data, so a
    ``size`` with ``n_parts * size > n_items`` raises ValueError unless ``allow_overlap=True``;
    then each part is an independent sample without replacement (records shared between
    teachers) and a warning says the privacy analysis no longer holds.
    """
    if n_items < 1 or n_parts < 1:
        raise ValueError(f"n_items={n_items}, n_parts={n_parts}: both must be >= 1")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if size is None:
        size = n_items // n_parts
        if size == 0:
            raise ValueError(f"n_parts={n_parts} exceeds n_items={n_items}: no disjoint partition is possible")
    if size < 1:
        raise ValueError(f"size={size}: expected >= 1")
    if n_parts * size <= n_items:
        perm = rng.permutation(n_items)
        return [np.sort(perm[i * size:(i + 1) * size]) for i in range(n_parts)]
    if not allow_overlap:
        raise ValueError(f"size={size}: {n_parts} disjoint parts of {size} need {n_parts * size} items but only "
                         f"{n_items} exist; the largest disjoint size is {n_items // n_parts} "
                         "(pass allow_overlap=True to sample overlapping parts, which breaks PATE's privacy analysis)")
    if size > n_items:
        raise ValueError(f"size={size} exceeds n_items={n_items}")
    warnings.warn(f"overlapping partitions ({n_parts} x {size} > {n_items} items): records are shared between "
                  "teachers, so PATE's per-record privacy analysis (one record changes at most one teacher) "
                  "does not hold", UserWarning, stacklevel=2)
    return [np.sort(rng.choice(n_items, size=size, replace=False)) for _ in range(n_parts)]


__all__ = ["DATA_CHOICES", "DataSource", "disjoint_partitions", "resolve_source"]
