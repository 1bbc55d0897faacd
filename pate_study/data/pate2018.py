"""PATE 2018 teacher vote matrices (Papernot et al. 2018): MNIST, SVHN, Adult; 250 teachers.

``load(data, *, seed)`` returns :class:`Votes`: ``counts`` {dataset: int64 [n_queries, n_classes]},
each row summing to 250. Synthetic stand-in: Dirichlet-multinomial votes with a mostly-confident
ensemble (same shapes).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import data_recipes
from data_recipes.pate2018 import N_TEACHERS, SHAPES, validate_votes
from pate_study.core.env import MIRROR_ENV
from pate_study.data import DataSource, manifest_origin, read_manifest, resolve_source

NAME = "pate2018-votes"


@dataclass(frozen=True)
class Votes:
    """counts: {"mnist", "svhn", "adult"} -> int64 [n_queries, n_classes]; rows sum to n_teachers."""

    counts: dict[str, np.ndarray]
    n_teachers: int
    source: DataSource


def synthetic(*, seed: int = 0, scale: float = 1.0) -> dict[str, np.ndarray]:
    """Vote histograms of the published shapes (times ``scale``): each query has a true class that
    gets a Beta(8, 1.5)-distributed share of the votes, the rest spread by a Dirichlet(0.3)."""
    rng = np.random.default_rng(seed)
    out = {}
    for key, (rows, cols) in SHAPES.items():
        n = max(1, int(rows * scale))
        top = rng.integers(cols, size=n)
        share = rng.beta(8.0, 1.5, size=n)
        rest = rng.dirichlet(np.full(cols - 1, 0.3), size=n)
        p = np.zeros((n, cols))
        p[np.arange(n), top] = share
        others = np.array([[c for c in range(cols) if c != t] for t in top])
        p[np.arange(n)[:, None], others] = (1 - share)[:, None] * rest
        out[key] = np.stack([rng.multinomial(N_TEACHERS, row / row.sum()) for row in p]).astype(np.int64)
    return out


def load(data: str = "auto", *, seed: int = 0, synthetic_scale: float = 1.0) -> Votes:
    """Load the vote matrices (validated: integral, non-negative, rows summing to 250)."""
    folder = resolve_source(NAME, data)
    if folder is None:
        counts = synthetic(seed=seed, scale=synthetic_scale)
        desc = f"seed {seed}, " + ", ".join(f"{k} {v.shape[0]:,}x{v.shape[1]}" for k, v in counts.items())
        return Votes(counts, N_TEACHERS, DataSource("synthetic", "PATE 2018 votes", desc, f"seed {seed}"))
    manifest = read_manifest(folder)
    counts = {
        k: validate_votes(np.load(folder / f"{k}.npy"), where=str(folder / f"{k}.npy"), n_classes=c)
        for k, (_, c) in SHAPES.items()
    }
    desc = ", ".join(f"{k} {v.shape[0]:,}x{v.shape[1]}" for k, v in counts.items()) + f", {N_TEACHERS} teachers"
    return Votes(
        counts,
        N_TEACHERS,
        DataSource("real", "PATE 2018 votes", desc, manifest.get("scale", "full"), manifest_origin(manifest)),
    )


def prepare(students_folder: Path | None = None) -> str | None:
    """Prepare the released votes the way ``make data-votes`` does (mirror first, then the official URL, each file
    verified); None when they are ready, else the one-line reason they cannot be had (offline, download failure).

    ``students_folder``: the folder the labs run in. When it holds a copy of the released files in
    ``pate2018-votes/`` (the layout of a mirror: a lecturer copies or links that folder there), that copy is
    prepared first, without the network, and checked against the same SHA-256 values: a kernel restart picks it up,
    where a changed ``PATE_STUDY_MIRROR`` would need JupyterLab itself restarted (a kernel inherits the server's
    environment)."""
    reasons = []
    copy = students_folder / data_recipes.get_recipe(NAME).folder if students_folder is not None else None
    if copy is not None and copy.is_dir():
        try:
            with _as_mirror(students_folder):
                data_recipes.prepare(NAME, network=False)
            return None
        except (data_recipes.NotAvailableError, data_recipes.DataError, OSError) as err:
            reasons.append(f"the copy in {copy.name}/: {type(err).__name__}: {err}")
    try:
        data_recipes.prepare(NAME, network=True)
    except (data_recipes.NotAvailableError, data_recipes.DataError, OSError) as err:
        return "; ".join([*reasons, f"{type(err).__name__}: {err}"])
    return None


@contextmanager
def _as_mirror(folder: Path):
    """``folder`` as the mirror (``PATE_STUDY_MIRROR``) while the block runs; the previous value restored after."""
    saved = os.environ.get(MIRROR_ENV)
    os.environ[MIRROR_ENV] = str(Path(folder).resolve())
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(MIRROR_ENV, None)
        else:
            os.environ[MIRROR_ENV] = saved
