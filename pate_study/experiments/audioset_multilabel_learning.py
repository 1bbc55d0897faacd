"""Audio Set II, the learning side: embedding teachers' cached votes on the query pool, and students
trained on the released labels (Muschiol 2021 §4.3, §5.4, Table 5.4, Figs 5.17-5.19).

Teachers: 1, 10, 20, 50 embedding MLPs on disjoint partitions of the subset's bal_train teacher pool
(:func:`pate_study.experiments.audioset_teachers.pool_split`, 80 %), trained by the stacked ensemble of
:mod:`pate_study.ensemble` for a fixed number of optimiser steps (``steps``; epochs = ⌈steps·batch /
partition⌉, no early stopping, so neither the pool nor the test set selects anything). They predict every
eval clip of the subset once (pool and test set); :func:`pate_study.ensemble.cached_teacher_votes` caches
the per-teacher probabilities, so re-runs and parameter sweeps never retrain.

Students: an MLP per configuration on the answered pool queries with their released binary labels;
10 % of those (released labels, never true ones) are held out for early stopping and for the decision
threshold (the global one maximising micro F1 on them); scored on the test set only.
"""
from __future__ import annotations

import dataclasses
import logging
import math
from typing import Any, Sequence

import numpy as np

from pate_study import ensemble, metrics, student
from pate_study.data import audioset
from pate_study.experiments import audioset_teachers
from pate_study.experiments.audioset_multilabel import CachedVotes, query_test_split
from pate_study.models import EmbeddingMLP

logger = logging.getLogger(__name__)

__all__ = ["TeacherSettings", "embedding_features", "teacher_votes", "StudentSettings", "train_student",
           "reference_rows"]


@dataclasses.dataclass(frozen=True)
class TeacherSettings:
    """Embedding-teacher recipe (the thesis's ResNet recipe does not apply to embeddings; documented choices)."""

    steps: int = 1500
    hidden: tuple[int, ...] = (256,)
    dropout: float = 0.2
    lr: float = 1e-3
    batch_size: int = 64


def embedding_features(split: audioset.Split) -> np.ndarray:
    """Clip feature: the mean of the real (non-padded) 128-d embedding frames, mapped from uint8 to [−1, 1]
    by a fixed affine map (no statistic of private data)."""
    emb = split.embeddings.astype(np.float32)
    frames = np.maximum(split.n_frames.astype(np.float32), 1.0)
    mean = emb.sum(axis=1) / frames[:, None]
    return mean / 127.5 - 1.0


def teacher_votes(teacher_counts: Sequence[int], *, data: str = "auto", subset: str = "big",
                  settings: TeacherSettings = TeacherSettings(), min_pool: int = 5000, pool_fraction: float = 0.5,
                  seed: int = 0, cache_dir: Any = None, progress: bool = False, backend: str = "local",
                  teachers_per_task: int | None = None) -> tuple[dict[int, CachedVotes], dict]:
    """Train (or load from the cache) each ensemble and return its :class:`CachedVotes` on pool and test.

    Returns ``({T: CachedVotes}, info)`` with ``info`` the data description and split sizes.
    ``backend="ray"`` / ``teachers_per_task``: each ensemble in shards of teachers, one Ray task each
    (:func:`pate_study.experiments.audioset_distributed.sharded_teacher_votes`).
    """
    ds = audioset.load(data, subset=subset, seed=seed)
    bal, ev = ds.splits["bal_train"], ds.splits["eval"]
    split = audioset_teachers.pool_split(len(bal.labels), seed=seed)
    x_teach = embedding_features(bal)[split.teacher]
    y_teach = bal.labels[split.teacher]
    pool, test = query_test_split(len(ev.labels), min_pool=min_pool, pool_fraction=pool_fraction, seed=seed)
    x_eval = embedding_features(ev)
    queries = x_eval[np.concatenate([pool, test])]
    n_labels = y_teach.shape[1]
    label = f"{ds.source.kind} Audio Set embeddings ({ds.source.description})" if ds.source.kind == "real" \
        else f"synthetic stand-in for Audio Set ({ds.source.description})"
    out = {}
    for t in teacher_counts:
        size = len(x_teach) // t
        if size < 1:
            raise ValueError(f"teacher_counts: {t} teachers but only {len(x_teach)} teacher-pool clips")
        parts = ensemble.make_partitions(len(x_teach), t, size, seed=seed)
        epochs = max(1, math.ceil(settings.steps * settings.batch_size / size))
        config = ensemble.EnsembleConfig(task="multilabel", in_features=x_teach.shape[1], n_outputs=n_labels,
                                         hidden=settings.hidden, dropout=settings.dropout, lr=settings.lr,
                                         batch_size=settings.batch_size, max_epochs=epochs, patience=epochs,
                                         allow_empty_labels=True)  # rare classes may miss a small teacher pool
        if backend != "local" or teachers_per_task is not None:  # cluster path (issue 15)
            from pate_study.experiments.audioset_distributed import sharded_teacher_votes

            votes = sharded_teacher_votes(x_teach, y_teach, parts, config, queries, seed=seed, backend=backend,
                                          teachers_per_task=teachers_per_task, cache_dir=cache_dir, progress=progress)
        else:
            votes = ensemble.cached_teacher_votes(x_teach, y_teach, parts, config, queries, seed=seed,
                                                  cache_dir=cache_dir, progress=progress)
        p = np.clip(votes.probabilities.astype(np.float64), 0.0, 1.0)
        out[t] = CachedVotes(p[:, :len(pool)], ev.labels[pool], p[:, len(pool):], ev.labels[test],
                             y_teach.mean(0), tuple(ds.class_names), ds.source.kind)
    info = {"data": label, "kind": ds.source.kind, "n_labels": n_labels, "teacher_pool": len(x_teach),
            "query_pool": len(pool), "test": len(test), "pool_index": pool, "test_index": test,
            "pool_features": x_eval[pool], "test_features": x_eval[test]}
    return out, info


@dataclasses.dataclass(frozen=True)
class StudentSettings:
    """Student recipe: the teachers' MLP, early stopping on held-out released labels."""

    hidden: tuple[int, ...] = (256,)
    dropout: float = 0.2
    lr: float = 1e-3
    batch_size: int = 64
    max_epochs: int = 60
    patience: int = 8
    val_fraction: float = 0.1


def _best_threshold(y: np.ndarray, scores: np.ndarray, grid: np.ndarray = np.linspace(0.05, 0.95, 19)) -> float:
    """Global decision threshold maximising micro F1 of ``scores`` against ``y``."""
    best, best_f1 = 0.5, -1.0
    for th in grid:
        f1 = metrics.multilabel_report(y, scores >= th)["micro_f1"]
        if f1 > best_f1:
            best, best_f1 = float(th), f1
    return best


def train_student(x_pool: np.ndarray, labels: np.ndarray, answered: np.ndarray, x_test: np.ndarray,
                  y_test: np.ndarray, *, settings: StudentSettings = StudentSettings(), seed: int = 0) -> dict:
    """Train a student on the answered queries' released labels; mAP, macro/micro F1 on the test set."""
    idx = np.flatnonzero(answered)
    if idx.size < 10:
        raise ValueError(f"answered: only {idx.size} answered queries; a student needs at least 10")
    rng = np.random.default_rng(seed)
    idx = rng.permutation(idx)
    n_val = max(1, int(round(settings.val_fraction * idx.size)))
    val, tr = idx[:n_val], idx[n_val:]
    model = EmbeddingMLP(labels.shape[1], in_features=x_pool.shape[1], hidden=settings.hidden,
                         dropout=settings.dropout)
    student.fit_model(model, x_pool[tr], labels[tr].astype(np.float32), "multilabel", x_pool[val],
                      labels[val].astype(np.float32), lr=settings.lr, batch_size=settings.batch_size,
                      max_epochs=settings.max_epochs, patience=settings.patience, seed=seed,
                      allow_empty_labels=True)  # released labels may never switch some classes on
    th = _best_threshold(labels[val], student.predict_scores(model, x_pool[val], "multilabel"))
    scores = student.predict_scores(model, x_test, "multilabel")
    r = metrics.multilabel_report(y_test, scores >= th, scores)
    return {"map": r["mAP"], "macro_f1": r["macro_f1"], "micro_f1": r["micro_f1"], "student_threshold": th,
            "n_train": int(tr.size)}


def reference_rows(single: CachedVotes, aggregate: CachedVotes, threshold_single: Any,
                   threshold_aggregate: Any) -> list[dict]:
    """Beside Table 5.4: the single model on all data, the non-private aggregate of the ensemble (averaged
    probabilities; F1 at the threshold Table 5.1 selected on the pool) and the class-prior baseline
    (scores = the teachers' training label frequencies), all on the test set."""
    from pate_study.experiments.audioset_multilabel import noise_free_release

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
