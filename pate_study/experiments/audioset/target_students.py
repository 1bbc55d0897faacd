"""The target procedure's students, many releases in few stacked calls, with the optional self-training step.

A student (Muschiol 2021 §5.4: the teachers' recipe, here on its fixed schedule and kept at the last step, as
:mod:`.students`) learns the released labels of the answered queries. Every student of a call trains on its own
rows and labels: the releases are laid end to end (features repeated, one block of rows per student) so that one
:func:`pate_study.learning.training.train_stacked` call trains them all, each with its own seeds; students with the
same number of training rows share a call (:func:`stacked_students` groups them).

The semi-supervised option (:mod:`pate_study.learning.semisupervised`: pseudo-labels on the unanswered pool rows,
Lee 2013 with FixMatch's confidence threshold) trains a second student per release on every pool row; it reads
only released labels, public features and the first student's scores, so it costs no ε.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Sequence

import numpy as np

from pate_study.core.device import choose_device
from pate_study.experiments.audioset.students import student_training_seeds
from pate_study.experiments.audioset.teachers import TeacherSpec, stacked_probabilities, teacher_stack
from pate_study.learning.semisupervised import LabelledPool, self_training_set
from pate_study.learning.training import train_stacked

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class StudentTask:
    """One student to train: its training ``rows`` (indices into the features), their ``labels`` (``bool [len(rows),
    C]``: released labels or pseudo-labels, never a true label of the pool) and its training ``seed``."""

    rows: np.ndarray
    labels: np.ndarray
    seed: int

    def __post_init__(self) -> None:
        rows, labels = np.asarray(self.rows, dtype=np.int64), np.asarray(self.labels, dtype=bool)
        if rows.ndim != 1 or rows.size < 1 or labels.ndim != 2 or labels.shape[0] != rows.size:
            raise ValueError(f"rows {rows.shape}, labels {labels.shape}: expected [m] rows and [m, C] labels")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "labels", labels)


def _one_call(x: np.ndarray, tasks: Sequence[StudentTask], scored: np.ndarray, spec: TeacherSpec) -> np.ndarray:
    """The students of ``tasks`` (equal row counts) in one stacked call; their probabilities on ``scored``."""
    m = tasks[0].rows.size
    X = np.concatenate([x[t.rows] for t in tasks]).astype(np.float32)
    Y = np.concatenate([t.labels for t in tasks]).astype(np.float32)
    rows = np.arange(len(tasks) * m, dtype=np.int64).reshape(len(tasks), m)
    seeds = student_training_seeds([t.seed for t in tasks])
    dev = choose_device(None)
    model, config = teacher_stack(x.shape[1], Y.shape[1], seeds, spec, dev, last=True)
    res = train_stacked(model, X, Y, rows, rows[:, :1], config, seeds, device=dev, progress=False, desc="students")
    return stacked_probabilities(model, res.params, model.source(scored, "scored"), len(scored))


def stacked_students(
    x: np.ndarray, tasks: Sequence[StudentTask], scored: np.ndarray, spec: TeacherSpec
) -> list[np.ndarray]:
    """Every student of ``tasks`` trained for ``spec.steps`` steps (kept at the last step), those with the same
    number of rows in one stacked call; returns each student's probabilities ``float32 [len(scored), C]`` in the
    order of ``tasks``. Each student gets the training seeds a student trained alone with its seed gets
    (:func:`.students.student_training_seeds`); the stacked arithmetic is not bitwise that of a student alone."""
    x = np.asarray(x, dtype=np.float32)
    scored = np.asarray(scored, dtype=np.float32)
    out: list[np.ndarray | None] = [None] * len(tasks)
    for m in sorted({t.rows.size for t in tasks}):
        idx = [i for i, t in enumerate(tasks) if t.rows.size == m]
        probs = _one_call(x, [tasks[i] for i in idx], scored, spec)
        for i, p in zip(idx, probs):
            out[i] = p
    return out  # type: ignore[return-value]


def self_training_tasks(
    pools: Sequence[LabelledPool], pool_scores: Sequence[np.ndarray], seeds: Sequence[int], *, keep: float
) -> tuple[list[StudentTask], list[dict[str, float]]]:
    """The second students: per release, every pool row with its released label or pseudo-label
    (:func:`pate_study.learning.semisupervised.self_training_set` from the first student's ``pool_scores``)."""
    tasks, summaries = [], []
    for pool, scores, seed in zip(pools, pool_scores, seeds):
        rows, targets, summary = self_training_set(pool, scores, keep=keep)
        tasks.append(StudentTask(rows, targets, int(seed)))
        summaries.append(summary)
    return tasks, summaries
