"""Teacher outputs -> votes: the interface between trained ensembles and :mod:`pate_study.privacy`.

* :class:`TeacherVotes` -- per-teacher probabilities, per-teacher votes and their aggregates;
* :func:`votes_from_probabilities` -- the voting rules: binary, a teacher votes 1 iff its probability
  reaches its own threshold (Youden's J on its threshold split, Sosa 2021 §4.1, :func:`youden_threshold`);
  multi-class, the argmax class (PATE's n_j(x), Papernot et al. 2017 Eq. 1, :func:`vote_counts`);
  multi-label, each label with probability >= ``multilabel_vote_threshold``, plus the averaged
  probabilities of Muschiol (2021) Def. 10.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from sklearn.metrics import roc_curve

logger = logging.getLogger(__name__)

__all__ = ["TeacherVotes", "vote_counts", "youden_threshold", "votes_from_probabilities"]

VOTE_TASKS = ("binary", "multiclass", "multilabel")


@dataclass
class TeacherVotes:
    """Teacher outputs on the student queries -- the interface to :mod:`pate_study.privacy`.

    * ``probabilities``: float32, binary ``[N, Q]``, multiclass ``[N, Q, C]``, multilabel ``[N, Q, L]``.
    * ``teacher_votes``: binary int8 ``[N, Q]`` (1 iff probability >= the teacher's threshold);
      multiclass int64 ``[N, Q]`` (argmax class); multilabel int8 ``[N, Q, L]`` (probability >=
      ``multilabel_vote_threshold``).
    * ``counts``: int64 ``[Q, C]`` vote counts (binary: C = 2, column 1 = positive votes);
      ``None`` for multilabel.
    * ``fractions``: multilabel float64 ``[Q, L]`` share of teachers voting 1;
      ``mean_probabilities``: multilabel float64 ``[Q, L]`` averaged probabilities (Muschiol 2021 Def. 10).
    """

    task: str
    probabilities: np.ndarray
    teacher_votes: np.ndarray
    counts: np.ndarray | None = None
    fractions: np.ndarray | None = None
    mean_probabilities: np.ndarray | None = None

    def state(self) -> dict[str, Any]:
        return {
            k: (torch.as_tensor(v) if isinstance(v, np.ndarray) else v) for k, v in dataclasses.asdict(self).items()
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> TeacherVotes:
        return cls(**{k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in state.items()})


def vote_counts(teacher_votes: np.ndarray, n_classes: int) -> np.ndarray:
    """``int[N, Q]`` class votes -> ``int64[Q, n_classes]`` counts (PATE's n_j(x), Papernot 2017 Eq. 1)."""
    v = np.asarray(teacher_votes)
    if v.ndim != 2 or v.size and (v.min() < 0 or v.max() >= n_classes):
        raise ValueError(f"teacher_votes: expected int [n_teachers, n_queries] with values in [0, {n_classes})")
    q = v.shape[1]
    flat = v.T.astype(np.int64) + (np.arange(q)[:, None] * n_classes)
    return np.bincount(flat.ravel(), minlength=q * n_classes).reshape(q, n_classes)


def youden_threshold(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Threshold maximising Youden's J = TPR - FPR on the ROC curve (Sosa 2021 §4.1).

    Returns 0.5 (with a warning) when ``y_true`` holds a single class.
    """
    y_true = np.asarray(y_true)
    if np.unique(y_true).size < 2:
        logger.warning("youden_threshold: only one class in the threshold split; using 0.5")
        return 0.5
    fpr, tpr, thr = roc_curve(y_true, scores)
    j = tpr - fpr
    k = int(np.argmax(j[1:]) + 1)  # thr[0] is +inf (predict nothing positive)
    return float(min(thr[k], 1.0))


def votes_from_probabilities(
    task: str, probabilities: np.ndarray, thresholds: np.ndarray | None = None, multilabel_vote_threshold: float = 0.5
) -> TeacherVotes:
    """Turn per-teacher probabilities (``[N, Q]`` binary, ``[N, Q, k]`` otherwise) into :class:`TeacherVotes`."""
    p = np.asarray(probabilities, dtype=np.float32)
    n = p.shape[0]
    if task == "binary":
        th = np.full(n, 0.5) if thresholds is None else np.asarray(thresholds)
        votes = (p >= th[:, None]).astype(np.int8)
        return TeacherVotes("binary", p, votes, counts=vote_counts(votes, 2))
    if task == "multiclass":
        votes = p.argmax(-1).astype(np.int64)
        return TeacherVotes("multiclass", p, votes, counts=vote_counts(votes, p.shape[-1]))
    if task != "multilabel":
        raise ValueError(f"task={task!r}: expected one of {VOTE_TASKS}")
    votes = (p >= multilabel_vote_threshold).astype(np.int8)
    return TeacherVotes(
        "multilabel",
        p,
        votes,
        fractions=votes.mean(0, dtype=np.float64),
        mean_probabilities=p.mean(0, dtype=np.float64),
    )
