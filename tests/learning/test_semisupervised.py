"""The semi-supervised step (pseudo-labels on the unanswered pool rows): it helps on a constructed instance and never
takes a private label."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from pate_study.experiments.audioset import target_students, teachers
from pate_study.learning import metrics, semisupervised
from pate_study.learning.semisupervised import LabelledPool, confident_thresholds, pseudo_labels, self_training_set


def _clusters(seed=1, n_pool=500, n_answered=60, n_test=500, d=16, c=12, flip=0.3, sep=3.0):
    """A PATE-like instance: 12 classes as Gaussian clusters, 60 answered pool rows whose released labels are wrong
    for 30 % of them (the release's noise), 440 unanswered rows, a test set from the same law."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0, 1, (c, d))
    mu *= sep / np.linalg.norm(mu, axis=1, keepdims=True)

    def draw(n):
        y = rng.integers(0, c, n)
        return (mu[y] + rng.normal(0, 1, (n, d))).astype(np.float32), y

    x_pool, y_pool = draw(n_pool)
    x_test, y_test = draw(n_test)
    answered = np.sort(rng.permutation(n_pool)[:n_answered])
    released = y_pool[answered].copy()
    wrong = rng.random(n_answered) < flip
    released[wrong] = (released[wrong] + rng.integers(1, c, wrong.sum())) % c
    eye = np.eye(c, dtype=bool)
    return x_pool, x_test, eye[y_test], LabelledPool(n_pool, answered, eye[released])


def test_pseudo_labels_help_on_a_constructed_instance():
    """Few noisy released labels over many classes: the second student (released labels + pseudo-labels on the
    unanswered rows) beats the first (released labels only) for every student seed, by 0.03 mAP on average."""
    x_pool, x_test, y_test, pool = _clusters()
    spec = teachers.TeacherSpec(
        hidden=(32,), dropout=0.5, lr=0.01, batch_size=32, steps=200, eval_every=200, sampler="balanced"
    )
    scored = np.concatenate([x_pool, x_test])
    seeds = [0, 1, 2, 3]
    first = target_students.stacked_students(
        x_pool, [target_students.StudentTask(pool.answered, pool.released, s) for s in seeds], scored, spec
    )
    tasks, summary = target_students.self_training_tasks(
        [pool] * len(seeds), [p[: len(x_pool)] for p in first], [s + 10 for s in seeds], keep=1.0
    )
    second = target_students.stacked_students(x_pool, tasks, scored, spec)
    a = np.array([metrics.mean_average_precision(y_test, p[len(x_pool) :]) for p in first])
    b = np.array([metrics.mean_average_precision(y_test, p[len(x_pool) :]) for p in second])
    assert np.all(b > a), (a, b)
    assert b.mean() - a.mean() > 0.03, (a, b)
    assert summary[0]["n_pseudo"] == 440 and summary[0]["pseudo_labels_per_row"] >= 1.0


def test_the_step_never_takes_a_private_label():
    x_pool, _, _, pool = _clusters()
    true_pool_labels = np.zeros((pool.n_pool, pool.released.shape[1]), bool)
    with pytest.raises(ValueError, match="never an input"):
        LabelledPool(pool.n_pool, pool.answered, true_pool_labels)  # one label row per pool row: refused
    with pytest.raises(ValueError, match="bool"):
        LabelledPool(pool.n_pool, pool.answered, pool.released.astype(float))
    # no entry point has a parameter through which a label of an unanswered row could come in
    for fn in (self_training_set, target_students.self_training_tasks):
        assert not {"labels", "y", "y_pool", "true_labels"} & set(inspect.signature(fn).parameters)
    # the answered rows keep their released labels; everything else is a function of the scores alone
    scores = np.random.default_rng(0).random((pool.n_pool, pool.released.shape[1]))
    rows, targets, _ = self_training_set(pool, scores, keep=1.0)
    assert np.array_equal(targets[: pool.answered.size], pool.released)
    assert np.array_equal(rows[: pool.answered.size], pool.answered)
    assert set(rows[pool.answered.size :].tolist()) == set(pool.unanswered.tolist())


def test_pseudo_labels_keep_the_release_rate_and_the_most_confident_rows():
    rng = np.random.default_rng(3)
    released = rng.random((200, 4)) < np.array([0.5, 0.2, 0.05, 0.0])
    pool = LabelledPool(1000, np.arange(200), released)
    scores = rng.random((1000, 4))
    th = confident_thresholds(scores[200:], released, 0.0)
    rate = pseudo_labels(scores[200:], th).mean(0)
    assert rate == pytest.approx(released.mean(0), abs=0.01) and rate[3] == 0  # distribution aligned
    rows, targets, summary = self_training_set(pool, scores, keep=0.5)
    assert rows.size == 500 and summary["n_pseudo"] == 300
    kept = rows[200:]
    assert scores[kept].max(1).min() >= np.delete(scores, np.r_[np.arange(200), kept], axis=0).max(1).max()
    assert targets[200:].any(1).all()  # every pseudo-labelled row carries at least its arg max class
    with pytest.raises(ValueError, match="keep"):
        self_training_set(pool, scores, keep=0.1)  # fewer rows than the answered ones
    with pytest.raises(ValueError, match="confidence"):
        confident_thresholds(scores, released, 1.0)
    assert semisupervised.__all__  # the module names its public functions
