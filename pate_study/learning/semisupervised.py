"""A semi-supervised step for PATE students: pseudo-labels on the unlabelled public pool (self-training).

PATE's students learn from few labelled queries and many unlabelled public examples (Papernot et al. 2017, §3.2:
semi-supervised GANs; Papernot et al. 2018, §5: virtual adversarial training). The simplest such step is
pseudo-labelling (Lee 2013, "Pseudo-Label: the simple and efficient semi-supervised learning method for deep
neural networks", ICML workshop; §3: an unlabelled example takes the class the network predicts, and the network
is retrained on labelled and pseudo-labelled data), kept only where the prediction is confident (Sohn et al. 2020,
"FixMatch", §3.2: a pseudo-label counts only above a confidence threshold). For multi-label targets a per-class
score threshold replaces the arg max: class c is assigned to an unlabelled example whose score exceeds θ_c.

Here θ_c matches rates (:func:`confident_thresholds`): class c is assigned on the unanswered rows as often as the
release assigned it on the answered ones, times ``1 − confidence`` (fewer, surer pseudo-labels), so the
pseudo-labels keep the release's label distribution (the distribution alignment of Berthelot et al. 2020,
"ReMixMatch", ICLR, §3.1). The thresholds are read on the unanswered rows' scores, not on the first student's own
training rows, where it has fitted the released labels and its scores say little about unseen rows. The second
student trains on the answered rows with their **released** labels and the unanswered rows with their
pseudo-labels (:func:`self_training_set`).

Privacy: every input is a released label, a public feature or a score of a student trained on them, so the step
is post-processing of the release (Dwork & Roth 2014, Proposition 2.1) and costs no ε. It never takes a true label
of the pool: :class:`LabelledPool` holds the released labels of the answered rows and nothing else, and refuses a
label matrix for any other row.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["LabelledPool", "rate_matched_thresholds", "confident_thresholds", "pseudo_labels", "self_training_set"]


def rate_matched_thresholds(train_scores: Any, released: Any) -> np.ndarray:
    """Per-class decision thresholds ``[C]``: class c is predicted (score > θ_c) on the student's training rows as
    often as the release labelled it there, θ_c = the (1 − r_c) quantile of the training scores of class c with r_c
    the released label rate (classes never released: θ_c = +inf, never predicted). Reads no true label."""
    s = np.asarray(train_scores, dtype=np.float64)
    r = np.asarray(released, dtype=bool)
    if s.ndim != 2 or s.shape != r.shape:
        raise ValueError(f"train_scores {s.shape} and released {r.shape}: expected two equal [n, C] shapes")
    rate = r.mean(0)
    th = np.array([np.quantile(s[:, c], 1.0 - rate[c], method="higher") for c in range(s.shape[1])])
    return np.where(rate > 0, th, np.inf)


def confident_thresholds(scores: Any, released: Any, confidence: float) -> np.ndarray:
    """Per-class thresholds ``[C]`` at which class c is assigned on the rows of ``scores`` (``[m, C]``, e.g. the
    unanswered rows) at the rate the release assigned it (``released``: ``bool [n, C]``, the answered rows) times
    ``1 − confidence`` (``confidence`` in [0, 1): 0 matches the rate, larger keeps only the surest share); classes
    never released are never assigned (+inf)."""
    c = float(confidence)
    if not 0.0 <= c < 1.0:
        raise ValueError(f"confidence={confidence!r}: expected a number in [0, 1)")
    s = np.asarray(scores, dtype=np.float64)
    r = np.asarray(released, dtype=bool)
    if s.ndim != 2 or r.ndim != 2 or s.shape[1] != r.shape[1] or s.shape[0] < 1:
        raise ValueError(f"scores {s.shape} and released {r.shape}: expected [m, C] and [n, C] with the same C")
    rate = r.mean(0) * (1.0 - c)
    th = np.array([np.quantile(s[:, k], 1.0 - rate[k], method="higher") for k in range(s.shape[1])])
    return np.where(rate > 0, th, np.inf)


def pseudo_labels(scores: Any, thresholds: Any) -> np.ndarray:
    """``bool [n, C]``: class c assigned where the score exceeds θ_c (Lee 2013 §3 with per-class thresholds)."""
    s = np.asarray(scores, dtype=np.float64)
    th = np.asarray(thresholds, dtype=np.float64)
    if s.ndim != 2 or th.shape != (s.shape[1],):
        raise ValueError(f"scores {s.shape}, thresholds {th.shape}: expected [n, C] and [C]")
    return s > th


@dataclasses.dataclass(frozen=True)
class LabelledPool:
    """What a student may learn from: the pool's ``n_pool`` public examples (by row), the ``answered`` rows and the
    ``released`` labels of those rows (``bool [len(answered), C]``). A label matrix of any other shape (e.g. the
    pool's true labels, one row per pool example) is refused: the semi-supervised step cannot receive one."""

    n_pool: int
    answered: np.ndarray
    released: np.ndarray

    def __post_init__(self) -> None:
        a = np.asarray(self.answered, dtype=np.int64)
        y = np.asarray(self.released)
        if a.ndim != 1 or a.size == 0 or np.unique(a).size != a.size:
            raise ValueError("answered: expected distinct pool rows (a non-empty 1-d array)")
        if a.min() < 0 or a.max() >= int(self.n_pool):
            raise ValueError(f"answered: expected rows in [0, {int(self.n_pool)})")
        if y.dtype != bool or y.ndim != 2 or y.shape[0] != a.size:
            raise ValueError(
                f"released: expected the released labels of the {a.size} answered rows (bool [{a.size}, C]), got "
                f"{y.dtype} {y.shape}; the pool's other labels are never an input"
            )
        object.__setattr__(self, "answered", a)
        object.__setattr__(self, "released", y)
        object.__setattr__(self, "n_pool", int(self.n_pool))

    @property
    def unanswered(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.n_pool), self.answered)


def self_training_set(pool: LabelledPool, scores: Any, *, keep: float = 1.0) -> tuple[np.ndarray, np.ndarray, dict]:
    """The second student's training set: the answered rows with their released labels and the most confident
    unanswered rows with pseudo-labels, ``round(keep · n_pool)`` rows in all (a fixed size, so that students of
    releases with different numbers of answered rows train side by side). ``scores`` ``[n_pool, C]``: the first
    student's scores on every pool row. An unanswered row's confidence is its largest score (FixMatch's mask, Sohn
    et al. 2020 §3.2, at the row level); its pseudo-labels are its arg max class and every class above
    :func:`confident_thresholds` (rate-matched on the unanswered rows). Returns (rows, targets ``bool [rows, C]``,
    a summary: pseudo-labelled rows, pseudo-labels per such row, released labels per answered row)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape != (pool.n_pool, pool.released.shape[1]):
        raise ValueError(f"scores: expected [{pool.n_pool}, {pool.released.shape[1]}] (every pool row), got {s.shape}")
    total = int(round(float(keep) * pool.n_pool))
    if not 0.0 < float(keep) <= 1.0 or total < pool.answered.size:
        raise ValueError(
            f"keep={keep!r}: expected a fraction in (0, 1] of the {pool.n_pool} pool rows, at least the "
            f"{pool.answered.size} answered ones"
        )
    rest = pool.unanswered
    extra = rest[np.argsort(-s[rest].max(1), kind="stable")[: total - pool.answered.size]]
    targets = pseudo_labels(s[extra], confident_thresholds(s[rest], pool.released, 0.0)) if extra.size else None
    rows = np.concatenate([pool.answered, extra])
    labels = np.concatenate([pool.released, np.zeros((extra.size, s.shape[1]), bool)])
    if extra.size:
        targets[np.arange(extra.size), s[extra].argmax(1)] = True
        labels[pool.answered.size :] = targets
    summary = {
        "n_pseudo": int(extra.size),
        "pseudo_labels_per_row": float(targets.sum(1).mean()) if extra.size else 0.0,
        "released_labels_per_row": float(pool.released.sum(1).mean()),
    }
    return rows, labels, summary
