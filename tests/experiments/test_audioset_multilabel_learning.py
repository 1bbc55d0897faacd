"""Audio Set II learning side: notebook 04's teachers voting on the eval clips (cached), and students."""

import numpy as np
import pytest

from pate_study.data import audioset
from pate_study.experiments.audioset import pipeline, students, teachers, votes

TINY = dict(hidden=(8,), steps=4, eval_every=2, lr=1e-3)


def test_teacher_spec_takes_teacherspec_keys_only():
    assert teachers.teacher_spec(**TINY).steps == 4
    with pytest.raises(ValueError, match="teacher settings"):
        teachers.teacher_spec(epochs=3)


def test_ensemble_votes_split_the_eval_clips_and_reuse_the_cache(tmp_path):
    spec = teachers.teacher_spec(**TINY)
    kw = dict(data="synthetic", min_pool=300, curve_clips=20, cache_dir=tmp_path)
    ensembles, info = pipeline.ensemble_votes([1, 3], spec, **kw)
    assert set(ensembles) == {1, 3} and info["steps"] == {1: 4, 3: 4}
    assert not np.intersect1d(info["pool_index"], info["test_index"]).size
    assert [len(ensembles[t]) for t in (1, 3)] == [1, 1]  # no replicate seeds: one ensemble per teacher count
    cv = ensembles[3][0]
    assert cv.pool_probabilities.shape == (3, info["query_pool"], info["n_labels"])
    assert cv.test_probabilities.shape == (3, info["test"], info["n_labels"])
    assert info["best_step"][3].shape == (1, 3) and (info["best_step"][3] <= 4).all()
    again, _ = pipeline.ensemble_votes([3], spec, **kw)  # loaded from the cache: identical
    np.testing.assert_array_equal(again[3][0].pool_probabilities, cv.pool_probabilities)
    assert len(list(tmp_path.glob(f"{votes.VOTES_KIND}-*.pt"))) == 2


def test_05_after_04_reads_its_votes_without_training(tmp_path, monkeypatch):
    """Notebook 04's ensembles (:func:`pipeline.teacher_ensembles`) store their votes; notebook 05's
    (:func:`pipeline.ensemble_votes`, same settings) reads them: no training call, the same teachers (every
    teacher's eval probabilities of 04's runs, cut into pool and test)."""
    calls = []
    real = pipeline.train_teachers
    monkeypatch.setattr(pipeline, "train_teachers", lambda *a, **k: calls.append(k["name"]) or real(*a, **k))
    spec = teachers.teacher_spec(**TINY)
    datasets = {"big": audioset.load("synthetic", subset="big", seed=0)}
    runs, _ = pipeline.teacher_ensembles(datasets, spec, [1, 3], curve_clips=20, cache_dir=tmp_path)
    assert calls == ["big 1", "big 3"]
    ensembles, info = pipeline.ensemble_votes(
        [1, 3], spec, data="synthetic", subset="big", min_pool=300, curve_clips=20, cache_dir=tmp_path
    )
    assert calls == ["big 1", "big 3"]  # 05 trained nothing
    for t in (1, 3):
        np.testing.assert_array_equal(
            ensembles[t][0].pool_probabilities,
            runs["big", t][0].probabilities[:, info["pool_index"]].astype(np.float64),
        )
        np.testing.assert_array_equal(info["best_step"][t][0], runs["big", t][0].best_step)
    # another recipe is another ensemble: trained through the same call
    pipeline.ensemble_votes(
        [3], spec.replace(steps=6), data="synthetic", subset="big", min_pool=300, curve_clips=20, cache_dir=tmp_path
    )
    assert calls == ["big 1", "big 3", "big 3"]


def test_train_student_scores_the_test_set_and_rejects_too_few_answers():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 5)).astype(np.float32)
    y = np.zeros((120, 3), bool)
    y[np.arange(120), rng.integers(0, 3, 120)] = True
    spec = teachers.teacher_spec(**TINY)
    s = students.train_student(x, y, np.ones(120, bool), x[:40], y[:40], spec)[0]
    assert 0 <= s["map"] <= 1 and s["n_train"] == 120 and s["labels_per_query"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="answered"):
        students.train_student(x, y, np.arange(120) < 5, x[:40], y[:40], spec)
