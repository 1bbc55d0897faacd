"""Audio Set students (Muschiol 2021 §5.4, Table 5.4, Figs 5.17-5.19): trained on the released labels of the
answered pool queries, scored on the test set only.

Students get the teachers' recipe (the thesis, §5.4: "The best parameters evaluated for the training of an
individual teacher were transferred to the training of the student models"): one
:func:`.teachers.train_teachers` call on the answered pool queries with their **released** labels, 10 % of those
(released labels, never true ones) as the validation split for checkpoint selection. Decision threshold ½: a
released label is on with probability Φ((m − th_e)/σ_e), which exceeds ½ exactly when m > th_e, so a student
that estimates that probability and thresholds it at ½ imitates the noise-free aggregate's rule; no labels of any
split choose it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pate_study.learning import metrics
from pate_study.learning.partitions import Partitions

from .release import noise_free_release
from .teachers import TeacherSpec, train_teachers
from .votes import CachedVotes, vote_fractions

#: decision threshold of every student (see the module docstring).
STUDENT_THRESHOLD = 0.5


def train_student(x_pool: np.ndarray, labels: np.ndarray, answered: np.ndarray, x_test: np.ndarray,
                  y_test: np.ndarray, spec: TeacherSpec, *, val_fraction: float = 0.1, seed: int = 0,
                  name: str = "student") -> dict:
    """A student with the teachers' recipe on the answered queries' released ``labels``: 10 % of them
    (released labels) select its checkpoint; test mAP and macro/micro F1 at :data:`STUDENT_THRESHOLD`."""
    idx = np.flatnonzero(np.asarray(answered, dtype=bool))
    if idx.size < 10:
        raise ValueError(f"answered: only {idx.size} answered queries; a student needs at least 10")
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction={val_fraction}: expected a fraction in (0, 1)")
    idx = np.random.default_rng(seed).permutation(idx)
    n_val = max(1, int(round(val_fraction * idx.size)))
    val, tr = np.sort(idx[:n_val]), np.sort(idx[n_val:])
    run = train_teachers(x_pool, np.asarray(labels, dtype=bool), Partitions(tr[None]), val, x_test, y_test, spec,
                            seed=seed, curve_clips=1, name=name)
    scores = run.probabilities[0].astype(np.float64)
    r = metrics.multilabel_report(y_test, scores >= STUDENT_THRESHOLD, scores)
    return {"map": r["mAP"], "macro_f1": r["macro_f1"], "micro_f1": r["micro_f1"], "n_train": int(tr.size),
            "labels_per_query": float(np.asarray(labels, bool)[tr].sum(1).mean()), "best_step": int(run.best_step[0])}


def student_diagnostics(cv: CachedVotes, x_pool: np.ndarray, x_test: np.ndarray, n: int, threshold: Any,
                        spec: TeacherSpec, *, seed: int = 0) -> list[dict]:
    """Why are the students weak? The same student on the first ``n`` pool queries with (i) their true labels
    (non-private; the ceiling of this recipe and n), (ii) the noise-free aggregate's labels at ``threshold``
    (σ = 0: what noise costs), beside the released labels' label density in the rows of Table 5.4."""
    m = vote_fractions(cv.pool_probabilities[:, :n])
    rows = []
    for what, labels in (("true pool labels (non-private)", cv.pool_labels[:n]),
                         (f"noise-free {cv.n_teachers}-teacher labels, th_e={threshold}", noise_free_release(m, threshold))):
        s = train_student(x_pool[:n], labels, np.ones(n, bool), x_test, cv.test_labels, spec, seed=seed, name=what)
        rows.append({"student_labels": what, "n_samples": n, **s})
    return rows


def reference_rows(single: CachedVotes, aggregate: CachedVotes, threshold_single: Any,
                   threshold_aggregate: Any) -> list[dict]:
    """Beside Table 5.4: the single model on all data, the non-private aggregate of the ensemble (averaged
    probabilities; F1 at the threshold Table 5.1 selected on the pool) and the class-prior baseline
    (scores = the teachers' training label frequencies; F1 at ½), all on the test set."""
    rows = []
    for name, cv, th in (("single model, all data (non-private)", single, threshold_single),
                         (f"{aggregate.n_teachers}-teacher aggregate, no noise (non-private)", aggregate,
                          threshold_aggregate)):
        m = cv.test_probabilities.mean(0)
        r = metrics.multilabel_report(cv.test_labels, noise_free_release(m, th), m)
        rows.append({"reference": name, "map": r["mAP"], "macro_f1": r["macro_f1"], "micro_f1": r["micro_f1"]})
    y = aggregate.test_labels
    prior = np.broadcast_to(aggregate.train_label_rate, y.shape).astype(float)
    r = metrics.multilabel_report(y, prior >= 0.5, prior)
    rows.append({"reference": "class prior (training label frequencies)", "map": r["mAP"], "macro_f1": r["macro_f1"],
                 "micro_f1": r["micro_f1"]})
    return rows
