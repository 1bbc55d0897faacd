"""Many Audio Set students in ONE stacked model: students of different releases (other labels, other answered
queries) trained together, so that a whole sweep of notebook 05 (Table 5.4, the σ sweeps of Figs 5.17-5.19, a
release per replicate teacher ensemble) costs one training loop instead of one per release.

Each student is the one :func:`.students.train_student` trains (the teachers' recipe on its release's answered
queries, its released labels, kept at the last step, the training seeds of its student seed), scored the same way:
test mAP, and macro/micro F1 at the rate-matched thresholds of its own training pool
(:func:`.students.rate_matched_thresholds`). How they share one stack: the pool queries of every distinct release
form one block of a training set laid end to end (the block's rows carry that release's labels), and each student
trains on the answered rows of its own block (:func:`.teachers.train_teachers` with one row set per student, of
different sizes when a confidence check answered different queries; each student's balanced sampler reads only its
rows). Every student is scored on every pool query and the test set in one pass and reads its own rows. As for any
stack, dropout masks come from one stream per stack, so a student's numbers depend on its seed and on the stack it
is trained in (not bitwise those of the student trained alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pate_study.experiments.audioset.students import student_row, student_training_seeds
from pate_study.experiments.audioset.teachers import TeacherSpec, train_teachers


@dataclass(frozen=True)
class Release:
    """One release's student data: ``labels`` ``bool [n, C]`` released on the first ``n`` pool queries and
    ``answered`` ``bool [n]`` (the queries a student trains on)."""

    labels: np.ndarray
    answered: np.ndarray


def train_release_students(
    x_pool: np.ndarray,
    releases: Sequence[Release],
    students: Sequence[tuple[int, int]],
    x_test: np.ndarray,
    y_test: np.ndarray,
    spec: TeacherSpec,
    *,
    boot_rows: np.ndarray | None = None,
    name: str = "students",
) -> list[dict]:
    """One student per ``(release index, student seed)`` of ``students``, all in one stacked call, in that order:
    per student the row :func:`.students.train_student` gives (``map``, ``macro_f1``, ``micro_f1``, ``n_train``,
    ``labels_per_query``, ``steps``, ``seed``; ``map_boot`` with ``boot_rows``). ``x_pool``: the pool queries'
    features (at least as many rows as the longest release); ``releases``: :class:`Release` per release."""
    if not students:
        return []
    x_pool = np.asarray(x_pool, dtype=np.float32)
    sizes = [len(r.labels) for r in releases]
    if max(sizes) > len(x_pool):
        raise ValueError(f"releases: a release of {max(sizes)} queries, but x_pool holds {len(x_pool)}")
    trained = [np.flatnonzero(np.asarray(r.answered, dtype=bool)) for r in releases]
    short = [i for i, t in enumerate(trained) if t.size < 10 and any(k == i for k, _ in students)]
    if short:
        raise ValueError(f"answered: release {short[0]} answered {trained[short[0]].size} queries; a student needs 10")
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    X = np.concatenate([x_pool[:n] for n in sizes])
    Y = np.concatenate([np.asarray(r.labels, dtype=bool) for r in releases])
    rows = [offsets[k] + trained[k] for k, _ in students]
    scored = np.concatenate([x_pool[: max(sizes)], np.asarray(x_test, dtype=np.float32)])
    y_scored = np.concatenate([np.zeros((max(sizes), Y.shape[1]), bool), np.asarray(y_test, dtype=bool)])
    run = train_teachers(
        X,
        Y,
        rows,
        np.stack([r[:1] for r in rows]),
        scored,
        y_scored,
        spec,
        curve_clips=1,
        name=name,
        last=True,
        train_seeds=student_training_seeds([s for _, s in students]),
    )
    out = []
    for (k, seed), probabilities in zip(students, run.probabilities):
        scores = probabilities.astype(np.float64)
        tr, released = trained[k], np.asarray(releases[k].labels, dtype=bool)
        out.append(student_row(scores[tr], released[tr], scores[max(sizes) :], y_test, spec, seed, boot_rows))
    return out
