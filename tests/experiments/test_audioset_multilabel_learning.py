"""Audio Set II learning side: notebook 04's teachers voting on the eval clips (cached), and students."""
import numpy as np
import pytest

from pate_study.experiments import audioset_multilabel_learning as al

TINY = dict(hidden=(8,), steps=4, eval_every=2, lr=1e-3)


def test_teacher_spec_takes_teacherspec_keys_only():
    assert al.teacher_spec(**TINY).steps == 4
    with pytest.raises(ValueError, match="teacher settings"):
        al.teacher_spec(epochs=3)


def test_teacher_votes_split_the_eval_clips_and_reuse_the_cache(tmp_path):
    spec = al.teacher_spec(**TINY)
    kw = dict(data="synthetic", min_pool=300, curve_clips=20, cache_dir=tmp_path, steps_by_count={1: 6})
    votes, info = al.teacher_votes([1, 3], spec, **kw)
    assert set(votes) == {1, 3} and info["steps"] == {1: 6, 3: 4}
    assert not np.intersect1d(info["pool_index"], info["test_index"]).size
    cv = votes[3]
    assert cv.pool_probabilities.shape == (3, info["query_pool"], info["n_labels"])
    assert cv.test_probabilities.shape == (3, info["test"], info["n_labels"])
    assert info["best_step"][3].shape == (3,) and (info["best_step"][3] <= 4).all()
    again, _ = al.teacher_votes([3], spec, **kw)  # loaded from the cache: identical
    np.testing.assert_array_equal(again[3].pool_probabilities, cv.pool_probabilities)
    assert len(list(tmp_path.glob("teacher-probabilities-*.pt"))) == 2


def test_train_student_scores_the_test_set_and_rejects_too_few_answers():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 5)).astype(np.float32)
    y = np.zeros((120, 3), bool)
    y[np.arange(120), rng.integers(0, 3, 120)] = True
    spec = al.teacher_spec(**TINY)
    s = al.train_student(x, y, np.ones(120, bool), x[:40], y[:40], spec)
    assert 0 <= s["map"] <= 1 and s["n_train"] == 108 and s["labels_per_query"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="answered"):
        al.train_student(x, y, np.arange(120) < 5, x[:40], y[:40], spec)
