"""Replicate teacher ensembles (notebooks 04 and 05): G ensembles of one teacher count, each with its own seed, pool
split, partitions and training seeds, trained as one stacked model; each replicate's votes cached under its own key
and read back by notebook 05 and by the target procedure (:func:`pipeline.replicate_eval_votes`)."""

import numpy as np
import pytest

from pate_study.data import audioset
from pate_study.experiments.audioset import data as as_data
from pate_study.experiments.audioset import pipeline, teachers, votes
from pate_study.learning.training import teacher_seeds

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
