"""Audio Set II, the learning side: notebook 04's teachers voting on the query pool, and students trained on
the released labels (Muschiol 2021 §4.3, §5.4, Table 5.4, Figs 5.17-5.19).

Teachers are notebook 04's (:mod:`pate_study.experiments.audioset_teachers`, the one place teachers are
trained): the same clip features (:func:`~pate_study.experiments.audioset_teachers.clip_features`), the same
cut of the subset's bal_train clips (:func:`~pate_study.experiments.audioset_teachers.pool_split`: 80 % teacher
pool, 10 % validation split for checkpoint selection; its 10 % "student" part is unused here, because the
query pool comes from the eval clips, issue 11), the same disjoint partitions
(:func:`~pate_study.experiments.audioset_teachers.teacher_partitions` with
:func:`~pate_study.experiments.audioset_teachers.run_seed`) and the same recipe
(:class:`~pate_study.experiments.audioset_teachers.TeacherSpec`: label-balanced sampler, mixup, a step
schedule, the best checkpoint by validation mAP) through
:func:`~pate_study.experiments.audioset_teachers.train_teachers`. That function returns the probabilities of
teacher 0 only, so each teacher is one call on a one-teacher partition (its own seed); a ``scores`` output of
``train_teachers`` would let one stacked call per ensemble do it. Each teacher predicts every eval clip of the
subset once (query pool and test set); the per-teacher probabilities are cached on disk
(:mod:`pate_study.core.cache`, keyed with the resolved device), so re-runs and the offline sweeps never retrain. The test set
selects nothing: checkpoints are chosen on the bal_train validation split.

Students get the same recipe (the thesis, §5.4: "The best parameters evaluated for the training of an
individual teacher were transferred to the training of the student models"): one ``train_teachers`` call on
the answered pool queries with their **released** labels, 10 % of those (released labels, never true ones) as
the validation split for checkpoint selection, scored on the test set only. Decision threshold ½: a released
label is on with probability Φ((m − th_e)/σ_e), which exceeds ½ exactly when m > th_e, so a student that
estimates that probability and thresholds it at ½ imitates the noise-free aggregate's rule; no labels of any
split choose it.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

import numpy as np
import torch

from pate_study.core import cache
from pate_study.learning import metrics
from pate_study.data import audioset
from pate_study.experiments import audioset_teachers as at
from pate_study.experiments.audioset_multilabel import CachedVotes, noise_free_release, query_test_split

logger = logging.getLogger(__name__)

__all__ = ["STUDENT_THRESHOLD", "teacher_spec", "one_teacher_probabilities", "teacher_probabilities", "teacher_votes", "train_student",
           "reference_rows", "student_diagnostics"]

#: decision threshold of every student (see the module docstring).
STUDENT_THRESHOLD = 0.5


def teacher_spec(**settings: Any) -> at.TeacherSpec:
    """Notebook 04's :class:`~pate_study.experiments.audioset_teachers.TeacherSpec` from a config's keys
    (``hidden``, ``dropout``, ``lr``, ``batch_size``, ``steps``, ``eval_every``, ``sampler``, ``mixup_alpha``)."""
    unknown = sorted(set(settings) - set(at.TeacherSpec.__dataclass_fields__))
    if unknown:
        raise ValueError(f"teacher settings {unknown}: expected keys of TeacherSpec "
                         f"{sorted(at.TeacherSpec.__dataclass_fields__)}")
    return at.TeacherSpec().replace(**settings)


def one_teacher_probabilities(X: np.ndarray, Y: np.ndarray, train_rows: np.ndarray, val: np.ndarray,
                              queries: np.ndarray, query_labels: np.ndarray, spec: at.TeacherSpec, *, seed: int,
                              curve_clips: int = 100, name: str = "") -> tuple[np.ndarray, int]:
    """One teacher on ``train_rows`` by :func:`~pate_study.experiments.audioset_teachers.train_teachers` (seed
    ``seed``, selection on ``val``): its probabilities on ``queries`` (float32 ``[n_queries, C]``) and its
    selected step. The unit both backends run, so local and Ray give the same teacher."""
    from pate_study.learning.partitions import Partitions

    run = at.train_teachers(X, Y, Partitions(np.asarray(train_rows, dtype=np.int64)[None]), val, queries, query_labels,
                            spec, seed=int(seed), curve_clips=curve_clips, name=name)
    return run.probs0.astype(np.float32), int(run.best_step[0])


def teacher_probabilities(X: np.ndarray, Y: np.ndarray, partitions: Any, val: np.ndarray, queries: np.ndarray,
                          query_labels: np.ndarray, spec: at.TeacherSpec, *, seed: int, curve_clips: int = 100,
                          cache_dir: Any = None, name: str = "", backend: str = "local",
                          teachers_per_task: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(float32 [T, n_queries, C], int [T])``: each teacher of ``partitions`` trained by
    :func:`one_teacher_probabilities` (seed ``seed·100 + i``, selection on ``val``), its probabilities on
    ``queries`` and its selected step; cached on disk.

    ``query_labels`` only feed ``train_teachers``'s per-teacher scores and its recorded curves
    (``curve_clips`` clips); no checkpoint is selected on them. ``backend="ray"``: the teachers in tasks of
    ``teachers_per_task`` (:func:`pate_study.experiments.audioset_distributed.sharded_teacher_probabilities`);
    each teacher's seed is fixed before scheduling, so the result is the local one exactly.
    """
    train = np.asarray(partitions.train, dtype=np.int64)
    # the teachers run on train_teachers' default device (None), locally or in the cluster's tasks
    key = cache.cache_key("teacher-probabilities", device=cache.resolved_device(None, backend), X=np.asarray(X),
                          Y=np.asarray(Y), train=train, val=np.asarray(val), queries=np.asarray(queries),
                          spec=repr(spec), seed=int(seed), unit="one teacher per call, seed 100 seed + i")
    n_teachers, n_queries = train.shape[0], len(queries)
    state = cache.load("teacher-probabilities", key, cache_dir, expect={
        "probabilities": cache.CacheExpectation((n_teachers, n_queries, np.asarray(Y).shape[1]), "float32"),
        "best_step": cache.CacheExpectation((n_teachers,), "int64")})
    if state is not None:
        logger.info("loaded cached teacher probabilities %s (%s)",
                    cache.entry_path("teacher-probabilities", key, cache_dir), name)
        return state["probabilities"].numpy(), state["best_step"].numpy()
    seeds = [int(seed) * 100 + i for i in range(train.shape[0])]
    if backend == "local" and teachers_per_task is None:
        done = [one_teacher_probabilities(X, Y, train[i], val, queries, query_labels, spec, seed=seeds[i],
                                          curve_clips=curve_clips, name=f"{name} teacher {i}")
                for i in range(train.shape[0])]
    else:
        from pate_study.experiments.audioset_distributed import sharded_teacher_probabilities

        done = sharded_teacher_probabilities(X, Y, train, val, queries, query_labels, spec, seeds=seeds,
                                             curve_clips=curve_clips, name=name, backend=backend,
                                             teachers_per_task=teachers_per_task, cache_dir=cache_dir)
    probs, best_step = np.stack([p for p, _ in done]), np.asarray([b for _, b in done], dtype=np.int64)
    cache.store("teacher-probabilities", key, {"probabilities": torch.from_numpy(probs),
                                               "best_step": torch.from_numpy(best_step)}, cache_dir, name=name)
    return probs, best_step


def teacher_votes(teacher_counts: Sequence[int], spec: at.TeacherSpec, *, data: str = "auto", subset: str = "big",
                  min_pool: int = 5000, pool_fraction: float = 0.5, student_fraction: float = 0.2,
                  val_fraction: float = 0.1, curve_clips: int = 100, steps_by_count: dict | None = None,
                  seed: int = 0, cache_dir: Any = None, backend: str = "local",
                  teachers_per_task: int | None = None) -> tuple[dict[int, CachedVotes], dict]:
    """Notebook 04's ensembles of ``subset`` (1 = the single model on the whole teacher pool, 10, 20, 50) and
    their :class:`CachedVotes` on the eval clips, split by :func:`query_test_split` into query pool and test.
    ``steps_by_count``: ``{T: steps}`` overriding ``spec.steps`` for those teacher counts (the single model
    sees T times a teacher's data and needs more steps before its validation mAP peaks).

    Returns ``({T: CachedVotes}, info)`` with the data description, split sizes, the pool/test features,
    ``steps`` and ``best_step`` per teacher count (selected step of every teacher). ``backend`` /
    ``teachers_per_task``: see :func:`teacher_probabilities` (same votes on every backend).
    """
    ds = audioset.load(data, subset=subset, seed=seed)
    bal, ev = ds.splits["bal_train"], ds.splits["eval"]
    X, Y = at.clip_features(bal), bal.labels
    split = at.pool_split(len(Y), student_fraction=student_fraction, val_fraction=val_fraction, seed=seed)
    pool, test = query_test_split(len(ev.labels), min_pool=min_pool, pool_fraction=pool_fraction, seed=seed)
    x_eval = at.clip_features(ev)
    order = np.concatenate([pool, test])
    queries, query_labels = x_eval[order], ev.labels[order]
    label = f"real Audio Set embeddings ({ds.source.description})" if ds.source.kind == "real" \
        else f"synthetic stand-in for Audio Set ({ds.source.description})"
    prior = Y[split.teacher].mean(0)
    out, steps, best_steps = {}, {}, {}
    for t in teacher_counts:
        parts = at.teacher_partitions(split, t, seed=at.run_seed(seed, subset, t))
        spec_t = spec.replace(steps=int((steps_by_count or {}).get(t, spec.steps)))
        p, best_steps[t] = teacher_probabilities(X, Y, parts, split.val, queries, query_labels, spec_t,
                                                 seed=at.run_seed(seed, subset, t), curve_clips=curve_clips,
                                                 cache_dir=cache_dir, name=f"{subset} {t}", backend=backend,
                                                 teachers_per_task=teachers_per_task)
        steps[t] = spec_t.steps
        p = np.clip(p.astype(np.float64), 0.0, 1.0)
        out[t] = CachedVotes(p[:, :len(pool)], ev.labels[pool], p[:, len(pool):], ev.labels[test], prior,
                             tuple(ds.class_names), ds.source.kind)
    info = {"data": label, "kind": ds.source.kind, "n_labels": Y.shape[1], "teacher_pool": len(split.teacher),
            "validation": len(split.val), "query_pool": len(pool), "test": len(test), "pool_index": pool,
            "test_index": test, "pool_features": x_eval[pool], "test_features": x_eval[test], "steps": steps,
            "best_step": best_steps}
    return out, info


def train_student(x_pool: np.ndarray, labels: np.ndarray, answered: np.ndarray, x_test: np.ndarray,
                  y_test: np.ndarray, spec: at.TeacherSpec, *, val_fraction: float = 0.1, seed: int = 0,
                  name: str = "student") -> dict:
    """A student with the teachers' recipe on the answered queries' released ``labels``: 10 % of them
    (released labels) select its checkpoint; test mAP and macro/micro F1 at :data:`STUDENT_THRESHOLD`."""
    from pate_study.learning.partitions import Partitions

    idx = np.flatnonzero(np.asarray(answered, dtype=bool))
    if idx.size < 10:
        raise ValueError(f"answered: only {idx.size} answered queries; a student needs at least 10")
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction={val_fraction}: expected a fraction in (0, 1)")
    idx = np.random.default_rng(seed).permutation(idx)
    n_val = max(1, int(round(val_fraction * idx.size)))
    val, tr = np.sort(idx[:n_val]), np.sort(idx[n_val:])
    run = at.train_teachers(x_pool, np.asarray(labels, dtype=bool), Partitions(tr[None]), val, x_test, y_test, spec,
                            seed=seed, curve_clips=1, name=name)
    scores = run.probs0.astype(np.float64)
    r = metrics.multilabel_report(y_test, scores >= STUDENT_THRESHOLD, scores)
    return {"map": r["mAP"], "macro_f1": r["macro_f1"], "micro_f1": r["micro_f1"], "n_train": int(tr.size),
            "labels_per_query": float(np.asarray(labels, bool)[tr].sum(1).mean()), "best_step": int(run.best_step[0])}


def student_diagnostics(cv: CachedVotes, x_pool: np.ndarray, x_test: np.ndarray, n: int, threshold: Any,
                        spec: at.TeacherSpec, *, seed: int = 0) -> list[dict]:
    """Why are the students weak? The same student on the first ``n`` pool queries with (i) their true labels
    (non-private; the ceiling of this recipe and n), (ii) the noise-free aggregate's labels at ``threshold``
    (σ = 0: what noise costs), beside the released labels' label density in the rows of Table 5.4."""
    from pate_study.experiments.audioset_multilabel import vote_fractions

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
