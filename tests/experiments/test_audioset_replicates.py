"""Replicate teacher ensembles (notebooks 04 and 05): G ensembles of one teacher count, each with its own seed, pool
split, partitions and training seeds, trained as one stacked model; each replicate's votes cached under its own key
and read back by notebook 05 and by the target procedure (:func:`pipeline.replicate_eval_votes`)."""

import numpy as np
import pytest

from pate_study.data import audioset
from pate_study.experiments.audioset import data as as_data
from pate_study.experiments.audioset import pipeline, teachers, votes
from pate_study.experiments.audioset import students as as_students
from pate_study.experiments.audioset.student_stacks import Release, train_release_students
from pate_study.learning.train_config import teacher_seeds

SPEC = teachers.TeacherSpec(hidden=(8,), dropout=0.5, steps=8, eval_every=4, batch_size=16, patience=1)
SEEDS = (5, 6, 7)


@pytest.fixture(scope="module")
def ds():
    return audioset.load("synthetic", subset="big", seed=0)  # as replicate_eval_votes loads it


def test_replicates_have_their_own_split_partitions_and_seeds(ds):
    stack = pipeline.replicate_stack(ds, "big", 4, SEEDS)
    assert stack.seeds == SEEDS and stack.n_teachers == 4
    vals = [set(m.val) for m in stack.members]
    assert vals[0] != vals[1] and len(vals[0]) == len(vals[1])
    parts = [m.partitions.train for m in stack.members]
    assert not np.array_equal(parts[0], parts[1])
    for m in stack.members:  # disjoint partitions inside a replicate, all from its own teacher pool
        flat = m.partitions.train.ravel()
        assert len(set(flat)) == flat.size and set(flat) <= set(m.teacher_pool)
    np.testing.assert_array_equal(stack.val_rows()[4], stack.members[1].val)
    np.testing.assert_array_equal(stack.train_seeds()[4:8], teacher_seeds(stack.members[1].seed, 4))
    with pytest.raises(ValueError, match="seeds"):
        as_data.replicate_seeds([3, 3], 0)
    assert as_data.replicate_seeds([], 4) == (4,) and as_data.replicate_seeds(None, 0) == (0,)
    assert pipeline.replicated_seeds(SEEDS, 10, [50]) == SEEDS[:1]
    assert pipeline.replicated_seeds(SEEDS, 50, [50]) == SEEDS == pipeline.replicated_seeds(SEEDS, 1, None)
    per_subset = {"big": [1, 50], "small": [1]}
    assert pipeline.replicated_seeds(SEEDS, 50, per_subset, "big") == SEEDS
    assert pipeline.replicated_seeds(SEEDS, 50, per_subset, "small") == SEEDS[:1]


def test_one_stack_trains_every_replicate_and_caches_each(ds, tmp_path):
    stack = pipeline.replicate_stack(ds, "big", 3, SEEDS)
    kw = dict(curve_clips=20, cache_dir=tmp_path)
    runs = pipeline.train_stack(stack, SPEC, keep_votes=True, progress=False, **kw)
    assert [r.n_teachers for r in runs] == [3, 3, 3]
    for r, m in zip(runs, stack.members):
        assert r.probabilities.shape == (3, len(m.X_test), ds.class_names.__len__())
        assert sorted(r.history["teacher"].unique()) == [0, 1, 2]
        np.testing.assert_array_equal(r.train_counts, m.Y[m.partitions.train].sum(1))
    assert not np.array_equal(runs[0].probabilities, runs[1].probabilities)
    assert len(list(tmp_path.glob(f"{votes.VOTES_KIND}-*.pt"))) == 3
    read = pipeline.stack_votes(stack, SPEC, **kw)  # from the cache: no training
    for r, v in zip(runs, read):
        np.testing.assert_array_equal(r.probabilities, v.probabilities)
    rows = np.array([5, 0, 17])
    rv = pipeline.replicate_eval_votes(SPEC, SEEDS, rows, n_teachers=3, data="synthetic", **kw)
    assert rv.seeds == SEEDS and rv.n_teachers == 3 and len(list(tmp_path.glob("*.pt"))) == 3
    for r, p in zip(runs, rv.probabilities):
        np.testing.assert_array_equal(p, r.probabilities[:, rows])
    np.testing.assert_array_equal(rv.labels, stack.members[0].Y_test[rows])
    assert rv.best_step.shape == (3, 3) and rv.train_label_rate.shape == (3, len(ds.class_names))
    with pytest.raises(ValueError, match="rows"):
        pipeline.replicate_eval_votes(SPEC, SEEDS, [10**6], n_teachers=3, data="synthetic", **kw)


def test_one_replicate_is_the_ensemble_trained_alone(ds, tmp_path):
    """Seeds [s]: the ensemble, its votes and its cache entry are those of :func:`pipeline.train_ensemble` (the
    ensembles before replicates; seed 0's are read back as they were cached)."""
    stack = pipeline.replicate_stack(ds, "big", 2, (0,))
    alone = pipeline.train_ensemble(stack.members[0], SPEC, curve_clips=20, cache_dir=tmp_path, keep_votes=True)
    rv = pipeline.replicate_eval_votes(SPEC, [0], n_teachers=2, data="synthetic", curve_clips=20, cache_dir=tmp_path)
    np.testing.assert_array_equal(rv.probabilities[0], alone.probabilities)
    assert len(list(tmp_path.glob(f"{votes.VOTES_KIND}-*.pt"))) == 1


def test_a_replicate_in_a_stack_keeps_its_training_seeds(ds):
    """Without dropout a teacher's arithmetic depends only on its own seeds and rows: replicate g of a stack equals
    its ensemble trained alone (its own seed, split and partitions) to float rounding."""
    spec = SPEC.replace(dropout=0.0, patience=None)
    stack = pipeline.replicate_stack(ds, "big", 2, SEEDS[:2])
    runs = pipeline.train_stack(stack, spec, curve_clips=20, progress=False)
    alone = pipeline.train_ensemble(stack.members[1], spec, curve_clips=20)
    np.testing.assert_allclose(runs[1].probabilities, alone.probabilities, rtol=0, atol=2e-5)
    np.testing.assert_array_equal(runs[1].best_step, alone.best_step)


def test_students_of_different_releases_train_in_one_stack():
    """Students of releases that answered different queries share one stacked model: without dropout each is the
    student :func:`students.train_student` trains alone on its release (to float rounding), in the order asked."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 4)).astype(np.float32)
    xt, yt = rng.normal(size=(50, 4)).astype(np.float32), rng.random((50, 6)) < 0.3
    spec = teachers.TeacherSpec(hidden=(8,), dropout=0.0, lr=0.01, batch_size=16, steps=12, eval_every=12)
    rels = [
        Release(rng.random((100, 6)) < 0.3, np.ones(100, bool)),
        Release(rng.random((80, 6)) < 0.3, rng.random(80) < 0.5),  # a check answered about half
    ]
    rows = train_release_students(x, rels, [(1, 5), (0, 3), (1, 7)], xt, yt, spec)
    assert [r["seed"] for r in rows] == [5, 3, 7] and rows[0]["n_train"] == int(rels[1].answered.sum())
    for row, (k, seed) in zip(rows, [(1, 5), (0, 3), (1, 7)]):
        n = len(rels[k].labels)
        alone = as_students.train_student(x[:n], rels[k].labels, rels[k].answered, xt, yt, spec, seeds=[seed])[0]
        for key in ("map", "macro_f1", "micro_f1", "n_train", "labels_per_query"):
            assert row[key] == pytest.approx(alone[key], abs=1e-6), key
    with pytest.raises(ValueError, match="10"):
        train_release_students(x, [Release(rels[0].labels, np.arange(100) < 3)], [(0, 1)], xt, yt, spec)


def test_replicate_units_pair_ensembles_draws_and_seeds():
    assert pipeline.replicate_units(3, [0, 1, 2]) == [(0, 0), (1, 1), (2, 2)]
    assert pipeline.replicate_units(1, [0, 1, 2]) == [(0, 0), (0, 1), (0, 2)]
    assert pipeline.replicate_units(3, [7]) == [(0, 7), (1, 7), (2, 7)]
    with pytest.raises(ValueError, match="at least one"):
        pipeline.replicate_units(0, [1])


def test_the_students_of_every_release_draw_go_to_ray_as_shards_with_their_own_names(monkeypatch):
    """With replicate units, one setting (n, th_e, th_c) is released once per draw: the Ray shards' names (unique
    by :func:`pate_study.learning.distributed.map_shards`' rule) tell the draws apart."""
    seen = []

    def fake_map_shards(fn, shards, **kw):
        seen.extend(s.name for s in shards)
        assert len(set(seen)) == len(seen), seen
        return [[{"map": 0.1, "seed": s.args["seeds"][0]}] for s in shards]

    monkeypatch.setattr(pipeline.distributed, "map_shards", fake_map_shards)
    setting = {"n_samples": 300, "th_e": 0.4, "th_c": None}
    privacy = [dict(setting, replicate=g, release_draw=r) for r, g in enumerate([0, 1, 0, 1])]
    releases = [{"labels": np.zeros((4, 2), bool), "answered": np.ones(4, bool)} for _ in privacy]
    x = np.zeros((4, 3), np.float32)
    rows = pipeline.train_students(
        privacy, releases, x, x, np.zeros((4, 2), bool), None, student_seeds=[0, 1, 2, 0], backend="ray"
    )
    assert len(seen) == 4 and list(rows["release_draw"]) == [0, 1, 2, 3]
