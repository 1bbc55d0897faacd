"""Recipe: teacher vote histograms released with Papernot et al. 2018, "Scalable Private Learning with PATE".

The files were released with the paper's code (tensorflow/privacy ``research/pate_2018``,
whose ``ICLR2018`` scripts read ``data/{mnist,svhn,adult}_250_teachers.npy``); the public
copies fetched here sit in the GitHub repository frhrdr/patepy,
``test_application/pate2018_test_data/`` (commit c1c0c5e). SHA-256 values: the project's
datasets README.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from data_recipes.framework import Fetched, MalformedDataError, Recipe, SourceFile, Variant, atomic_save_npy, require
from data_recipes.npyfile import NpyFileError, load_npy
from data_recipes.votes import check_counts

_BASE = (
    "https://raw.githubusercontent.com/frhrdr/patepy/c1c0c5ec7d042283a661685729ed89bb0b50a32f/"
    "test_application/pate2018_test_data/"
)

#: dataset -> (rows, classes) as published
SHAPES = {"mnist": (9000, 10), "svhn": (26032, 10), "adult": (16281, 2)}
N_TEACHERS = 250
_SHA = {
    "mnist": "da4832fc6613b515a54918d4fa32fdeffca4e8330f576d77a273fa1ecdd0a423",
    "svhn": "96b6497af4304283e666b7e963c8f4b86ef3355b34b2d6f9b250666d8d9dde3f",
    "adult": "0b725d5d95b476f71f3ba74fcc879fc4a92e1d73690d2eabbf7645358ef15174",
}
FILES = tuple(
    SourceFile(f"{k}_250_teachers.npy", urls=(_BASE + f"{k}_250_teachers.npy",), sha256=_SHA[k]) for k in SHAPES
)


def validate_votes(
    votes: np.ndarray, *, where: str, n_classes: int | None = None, n_teachers: int = N_TEACHERS
) -> np.ndarray:
    """Check a vote-count matrix and return it as int64 (MalformedDataError otherwise).

    Requirements: 2-D, finite, non-negative, integral values, every row summing to ``n_teachers``
    (each of the 250 teachers casts exactly one vote per query, Papernot et al. 2018 §2), and
    ``n_classes`` columns when given. The value checks are the privacy API's own
    (:func:`data_recipes.votes.check_counts`, the check the privacy accountants use), so a file accepted here is
    accepted there.
    """
    require(np.ndim(votes) == 2, f"{where}: expected a 2-D vote matrix, got shape {np.shape(votes)}")
    try:
        counts = check_counts(votes, name=where, keep_integers=True, n_teachers=n_teachers)
    except ValueError as exc:
        raise MalformedDataError(str(exc)) from exc
    if n_classes is not None:
        require(counts.shape[1] == n_classes, f"{where}: expected {n_classes} columns (classes), got {counts.shape[1]}")
    return counts.astype(np.int64)


def _prepare(fetched: Mapping[str, Fetched], out: Path, variant: Variant) -> dict:
    counts = {}
    for key, (rows, cols) in SHAPES.items():
        f = fetched[f"{key}_250_teachers.npy"]
        try:
            arr = load_npy(f.path)
        except NpyFileError as exc:
            raise MalformedDataError(str(exc)) from exc
        require(arr.shape == (rows, cols), f"{f.path}: expected shape {(rows, cols)}, got {arr.shape}")
        votes = validate_votes(arr, where=str(f.path), n_classes=cols)
        atomic_save_npy(out / f"{key}.npy", votes)
        counts[key] = {"queries": rows, "classes": cols, "unanimous": int((votes.max(axis=1) == N_TEACHERS).sum())}
    return counts


def _verify(out: Path) -> None:
    for key, shape in SHAPES.items():
        arr = np.load(out / f"{key}.npy")
        require(arr.shape == shape and arr.dtype == np.int64, f"{out}/{key}.npy: bad prepared array")


def _measure(out: Path) -> dict[str, int]:
    """Queries per prepared vote matrix."""
    return {
        key: int(np.load(out / f"{key}.npy", mmap_mode="r").shape[0])
        for key in SHAPES
        if (out / f"{key}.npy").is_file()
    }


RECIPE = Recipe(
    name="pate2018-votes",
    folder="pate2018-votes",
    version="1",
    title="PATE 2018 teacher vote histograms (MNIST, SVHN, Adult; 250 teachers)",
    variants=(Variant("full", FILES, "full", sizes={k: rows for k, (rows, _) in SHAPES.items()}),),
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get=(
        "downloaded automatically from github.com/frhrdr/patepy "
        "(test_application/pate2018_test_data/); or place the three .npy files in "
        "$PATE_STUDY_MIRROR/pate2018-votes/"
    ),
    licence="Apache 2.0 (tensorflow/privacy)",
)
