"""Teachers' disjoint data: per-teacher index sets (train, validation, decision threshold) and how they are drawn.

PATE (Papernot et al. 2017, §2) trains ``N`` teachers on disjoint partitions of the private data; its privacy
analysis needs every record in at most one teacher's data (:meth:`Partitions.validate`). The sources'
sizes: Sosa (2021) §4.1, 930 training and 800 threshold samples per teacher. Every ensemble of the package
(:mod:`pate_study.learning.ensemble`) and every Audio Set teacher run draws its partitions here
(:func:`make_partitions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Partitions", "make_partitions", "check_partitions"]


@dataclass(frozen=True)
class Partitions:
    """Per-teacher index sets into the teachers' data: ``int64 [n_teachers, size]`` each.

    ``train``: the teacher's own training partition; ``val``: its early-stopping / checkpoint-selection
    split (may have 0 columns); ``threshold``: its decision-threshold split (binary tasks; may have 0
    columns: threshold 0.5). All sets are disjoint within and across teachers (checked by :meth:`validate`).
    """

    train: np.ndarray
    val: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    threshold: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))

    def __post_init__(self) -> None:
        n = np.asarray(self.train).shape[0] if np.ndim(self.train) == 2 else -1
        if n < 1:
            raise ValueError("partitions.train: expected an int array of shape [n_teachers, train_size]")
        for name in ("train", "val", "threshold"):
            a = np.asarray(getattr(self, name), dtype=np.int64)
            if a.size == 0:
                a = np.zeros((n, 0), dtype=np.int64)
            if a.ndim != 2 or a.shape[0] != n:
                raise ValueError(f"partitions.{name}: expected shape [{n}, size], got {a.shape}")
            object.__setattr__(self, name, a)
        if self.train.shape[1] < 1:
            raise ValueError("partitions.train: every teacher needs at least one training sample")

    @property
    def n_teachers(self) -> int:
        return int(self.train.shape[0])

    def teacher(self, i: int) -> Partitions:
        """Teacher ``i``'s sets alone (a one-teacher Partitions)."""
        return Partitions(self.train[i : i + 1], self.val[i : i + 1], self.threshold[i : i + 1])

    def validate(self, n_samples: int) -> None:
        """Raise ValueError unless every index is in ``[0, n_samples)`` and all sets are disjoint."""
        allidx = np.concatenate([self.train.ravel(), self.val.ravel(), self.threshold.ravel()])
        if allidx.size and (allidx.min() < 0 or allidx.max() >= n_samples):
            raise ValueError(
                f"partitions: indices must lie in [0, {n_samples}) (the rows of X), "
                f"got [{allidx.min()}, {allidx.max()}]"
            )
        if np.unique(allidx).size != allidx.size:
            raise ValueError("partitions: teacher index sets overlap; PATE's analysis needs disjoint partitions")


def make_partitions(
    n_samples: int,
    n_teachers: int,
    train_size: int,
    val_size: int = 0,
    threshold_size: int = 0,
    seed: int | Sequence[int] = 0,
    pool: np.ndarray | None = None,
) -> Partitions:
    """Draw disjoint per-teacher train/val/threshold index sets from ``pool`` (default: all samples).

    Sosa (2021) §4.1: 930 training samples and 800 threshold samples per teacher.
    """
    pool = np.arange(n_samples) if pool is None else np.asarray(pool, dtype=np.int64)
    per = train_size + val_size + threshold_size
    if n_teachers < 1 or train_size < 1 or val_size < 0 or threshold_size < 0:
        raise ValueError(
            f"n_teachers={n_teachers}, train_size={train_size}: must be >= 1; "
            f"val_size={val_size}, threshold_size={threshold_size}: must be >= 0"
        )
    if n_teachers * per > pool.size:
        raise ValueError(
            f"make_partitions: n_teachers={n_teachers} x {per} samples = {n_teachers * per} "
            f"exceeds the {pool.size} available samples; the largest disjoint size per teacher is "
            f"{pool.size // n_teachers} (PATE's analysis needs each record in at most one teacher's "
            "data): use fewer teachers or smaller partitions"
        )
    rng = np.random.default_rng(seed)
    blocks = rng.permutation(pool)[: n_teachers * per].reshape(n_teachers, per)
    return Partitions(
        blocks[:, :train_size], blocks[:, train_size : train_size + val_size], blocks[:, train_size + val_size :]
    )


def check_partitions(X: Any, partitions: Partitions) -> int:
    """Raise ValueError unless ``partitions`` is a :class:`Partitions` of valid, disjoint rows of ``X`` (an
    array ``[n, ...]``); returns ``n``."""
    if not isinstance(partitions, Partitions):
        raise ValueError("partitions: expected a Partitions (see make_partitions)")
    if not hasattr(X, "shape") or len(X.shape) < 2:
        raise ValueError(
            f"X: expected an array [n, ...] of inputs, got {type(X).__name__} of shape {getattr(X, 'shape', None)}"
        )
    partitions.validate(X.shape[0])
    return int(X.shape[0])
