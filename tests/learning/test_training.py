"""The one training loop: samplers, mixup, step schedule, evaluation cadence, checkpoint selection, bad input."""

import numpy as np
import pytest
import torch
import torch._dynamo.utils

from pate_study.learning.ensemble import EnsembleConfig, train_ensemble, train_ensemble_loop, train_module_ensemble
from pate_study.learning.ensemble_cache import cached_ensemble, cached_module_ensemble, cached_module_votes
from pate_study.learning.losses import as_targets, per_teacher_loss
from pate_study.learning.models import EmbeddingMLP
from pate_study.learning.partitions import Partitions, make_partitions
from pate_study.learning.samplers import (
    PLAN_STEPS,
    LabelBalancedStream,
    PermutationStream,
    index_plan,
    mix_pairs,
    mixup_coefficients,
)
from pate_study.learning.stacked import StackedMLP
from pate_study.learning.student import fit_model
from pate_study.learning.train_config import HISTORY_COLUMNS, TrainConfig, teacher_seeds
from pate_study.learning.training import train_stacked


def _multilabel(n=900, d=12, labels=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    Y = (X @ rng.normal(size=(d, labels)) > 0.8).astype(np.float32)
    Y[np.arange(n), rng.integers(0, labels, n)] = 1  # every clip has at least one label
    return X, Y


# ------------------------------------------------------------------------------------------
# sampler
# ------------------------------------------------------------------------------------------
def test_balanced_stream_draws_each_label_equally_often_per_cycle():
    Y = np.zeros((100, 4))
    Y[:85, 0] = 1
    Y[85:95, 1] = 1
    Y[95:, 2] = 1
    Y[[3, 97], 3] = 1  # multi-label rows: row 3 is in lists 0 and 3, row 97 in 2 and 3
    stream = LabelBalancedStream(Y, rng=0)
    labels = stream.draw_labels(4 * 25)
    for cycle in labels.reshape(25, 4):  # every cycle of next_label is a permutation of the labels
        assert sorted(cycle.tolist()) == [0, 1, 2, 3]
    ids = LabelBalancedStream(Y, rng=1).draw(4000)
    counts = Y[ids].sum(0)
    assert counts[1] == 1000 and counts[2] >= 1000 and counts[3] >= 1000  # each label drawn 1,000 times
    assert set(ids[np.isin(ids, np.flatnonzero(Y[:, 3]))].tolist()) == {3, 97}


def test_balanced_stream_refills_exhausted_lists_with_a_reshuffle():
    Y = np.zeros((7, 2))
    Y[:3, 0] = 1
    Y[3:, 1] = 1
    stream = LabelBalancedStream(Y, ids=np.arange(100, 107), rng=3)
    ids = stream.draw(60)
    of_label0 = ids[ids < 103]
    assert of_label0.size == 30
    for block in of_label0.reshape(10, 3):  # consecutive refills of label 0's list: permutations of it
        assert sorted(block.tolist()) == [100, 101, 102]
    assert len({tuple(b) for b in of_label0.reshape(10, 3).tolist()}) > 1  # reshuffled, not repeated
    again = LabelBalancedStream(Y, ids=np.arange(100, 107), rng=3).draw(60)
    assert np.array_equal(ids, again)


def _popped_one_by_one(Y, ids, seed, chunks):
    """Muschiol (2021) §4.4.2 written out plainly: per chunk, pop its labels from ``next_label``, then serve the labels
    in ascending order, each popping its ids one by one; an exhausted list is refilled with
    ``rng.permutation(original)``. The stream's definition, against which the vectorised draws are checked."""
    rng = np.random.default_rng(seed)
    by_label = {j: ids[np.flatnonzero(Y[:, j])] for j in range(Y.shape[1]) if Y[:, j].any()}
    present = np.array(sorted(by_label))
    next_label, left, out = [], {j: [] for j in by_label}, []
    for k in chunks:
        labels = []
        for _ in range(k):
            if not next_label:
                next_label = list(rng.permutation(present))
            labels.append(next_label.pop(0))
        served = np.empty(k, dtype=np.int64)
        for label in sorted(set(labels)):
            for position in [i for i, lab in enumerate(labels) if lab == label]:
                if not left[label]:
                    left[label] = list(rng.permutation(by_label[label]))
                served[position] = left[label].pop(0)
        out.append(served)
    return np.concatenate(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_balanced_stream_equals_popping_one_by_one(seed):
    """The vectorised draw (one slice per label, all refills of a label in one ``Generator.permuted`` call) gives the
    same ids, in the same order, as popping one at a time -- rare labels refilled many times within a chunk included."""
    rng = np.random.default_rng(seed)
    Y = rng.random((40, 9)) < np.linspace(0.02, 0.5, 9)
    Y[0, 0] = True  # label 0 has a single row: refilled at every draw of it
    ids = rng.permutation(1000)[:40]
    chunks = [int(c) for c in rng.integers(1, 300, size=6)]
    stream = LabelBalancedStream(Y, ids, rng=seed)
    got = np.concatenate([stream.draw(k) for k in chunks])
    assert np.array_equal(got, _popped_one_by_one(Y, ids, seed, chunks))


def test_index_plan_is_the_streams_next_batches():
    streams = [PermutationStream(np.arange(10) + 100 * i, torch.Generator().manual_seed(i)) for i in range(3)]
    plan = index_plan(streams, batch_size=4, steps=5)
    assert plan.shape == (3, 5, 4) and plan.dtype == torch.int64
    for i in range(3):
        expected = PermutationStream(np.arange(10) + 100 * i, torch.Generator().manual_seed(i)).draw(20)
        assert torch.equal(plan[i].reshape(-1), expected)
    Y = np.eye(3)[np.arange(30) % 3]
    balanced = index_plan([LabelBalancedStream(Y, rng=7)], batch_size=6)
    assert balanced.shape == (1, PLAN_STEPS, 6)
    assert np.array_equal(balanced[0].reshape(-1).numpy(), LabelBalancedStream(Y, rng=7).draw(6 * PLAN_STEPS))
    with pytest.raises(ValueError, match="batch_size"):
        index_plan(streams, batch_size=0)


def test_mixup_block_equals_one_draw_per_step():
    """Drawing a block of steps at once gives each teacher the coefficients it would draw step by step."""
    block = mixup_coefficients(0.4, [np.random.default_rng(3), np.random.default_rng(4)], (5, 8))
    rngs = [np.random.default_rng(3), np.random.default_rng(4)]
    steps = torch.stack([mixup_coefficients(0.4, rngs, 8) for _ in range(5)], dim=1)
    assert block.shape == (2, 5, 8) and torch.equal(block, steps)


def test_balanced_stream_skips_empty_labels_and_rejects_no_labels():
    Y = np.zeros((5, 3))
    Y[:, 1] = 1
    assert set(LabelBalancedStream(Y, rng=0).draw(20).tolist()) <= set(range(5))
    assert LabelBalancedStream(Y, rng=0).labels.tolist() == [1]
    with pytest.raises(ValueError, match="no label has a positive row"):
        LabelBalancedStream(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="ids"):
        LabelBalancedStream(Y, ids=np.arange(4))


def test_permutation_stream_cycles_through_every_row_in_any_chunking():
    s = PermutationStream(np.arange(10, 20), torch.Generator().manual_seed(0))
    drawn = s.draw(30)
    for cycle in drawn.view(3, 10):
        assert sorted(cycle.tolist()) == list(range(10, 20))
    chunked = PermutationStream(np.arange(10), torch.Generator().manual_seed(0))
    batches = torch.cat([chunked.draw(k) for k in (3, 9, 1, 7)])
    assert torch.equal(batches, PermutationStream(np.arange(10), torch.Generator().manual_seed(0)).draw(20))


# ------------------------------------------------------------------------------------------
# mixup
# ------------------------------------------------------------------------------------------
def test_mixup_gives_convex_combinations_of_inputs_and_targets():
    rngs = [np.random.default_rng(i) for i in range(3)]
    lam = mixup_coefficients(1.0, rngs, 8)
    assert lam.shape == (3, 8) and ((lam >= 0) & (lam <= 1)).all()
    x = torch.randn(3, 8, 5)
    y = (torch.rand(3, 8, 4) > 0.5).float()
    xm, ym = mix_pairs(x, lam), mix_pairs(y, lam)
    partner = torch.roll(x, -1, dims=1)
    torch.testing.assert_close(xm, lam[..., None] * x + (1 - lam[..., None]) * partner)
    assert ((ym >= 0) & (ym <= 1)).all()
    torch.testing.assert_close(ym, lam[..., None] * y + (1 - lam[..., None]) * torch.roll(y, -1, dims=1))
    # a teacher's coefficients depend only on its own generator
    again = mixup_coefficients(1.0, [np.random.default_rng(1)], 8)
    torch.testing.assert_close(again[0], lam[1])
    with pytest.raises(ValueError, match="mixup_alpha"):
        mixup_coefficients(0.0, rngs, 8)
    with pytest.raises(ValueError, match="float"):
        mix_pairs(torch.arange(4).view(1, 4), lam[:1, :4])


@pytest.mark.parametrize("sparse", [False, True])
def test_mlp_mixup_after_the_first_layer_equals_mixing_the_inputs(sparse):
    """StackedMLP mixes the first (affine) layer's output: the same as mixing the input rows."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.random(40, 10, density=0.3, random_state=0, format="csr", dtype=np.float32)
    model = StackedMLP((10, 8, 3), teacher_seeds(0, 2), sparse_input=sparse)
    params = model.params()
    rows = torch.as_tensor(rng.permutation(40)[:12].reshape(2, 6))
    lam = mixup_coefficients(1.0, [np.random.default_rng(5), np.random.default_rng(6)], 6)
    z = model.forward(params, [], model.source(X), rows, training=True, mix=lam)
    dense = torch.as_tensor(X.toarray())[rows]
    mixed = mix_pairs(dense, lam).reshape(12, 10).numpy()
    z_ref = model.forward(params, [], model.source(mixed, sparse=False), torch.arange(12).view(2, 6), training=True)
    torch.testing.assert_close(z, z_ref, atol=1e-5, rtol=1e-5)


def test_soft_multiclass_targets_and_loss():
    t = as_targets(np.array([0, 2, 1]), "multiclass", 3, 3, soft=True)
    assert t.shape == (3, 3) and t.sum(1).tolist() == [1, 1, 1]
    z = torch.randn(1, 3, 3)
    hard = per_teacher_loss(z, torch.tensor([[0, 2, 1]]), "multiclass")
    torch.testing.assert_close(per_teacher_loss(z, t[None], "multiclass"), hard)


# ------------------------------------------------------------------------------------------
# schedules, evaluation, checkpoint selection
# ------------------------------------------------------------------------------------------
STEP = dict(task="multilabel", in_features=12, n_outputs=5, hidden=(16,), batch_size=16, lr=1e-2)


def test_step_schedule_evaluation_cadence_and_reproducibility():
    X, Y = _multilabel()
    parts = make_partitions(800, 3, 120, val_size=40, seed=0)
    cfg = EnsembleConfig(**STEP, max_steps=70, eval_every=20, sampler="balanced", mixup_alpha=1.0)
    a = train_ensemble(X[:800], Y[:800], parts, cfg, seed=4, progress=False, test=(X[800:], Y[800:]))
    b = train_ensemble(X[:800], Y[:800], parts, cfg, seed=4, progress=False, test=(X[800:], Y[800:]))
    h = a.history
    assert tuple(h.columns) == HISTORY_COLUMNS
    assert sorted(h.step.unique().tolist()) == [20, 40, 60, 70]  # every 20 steps and the last
    assert set(h.split) == {"train", "validation", "test"} and set(h.metric) == {"loss", "mAP", "auc"}
    assert len(h.query("split == 'validation' and metric == 'mAP'")) == 4 * 3
    assert h.equals(b.history)
    for w1, w2 in zip(a.weights + a.biases, b.weights + b.biases):
        assert torch.equal(w1, w2)
    assert (a.steps == 70).all() and set(a.best_step.tolist()) <= {20, 40, 60, 70}
    c = train_ensemble(X[:800], Y[:800], parts, cfg, seed=5, progress=False)
    assert not torch.equal(c.weights[0], a.weights[0])


def test_best_checkpoint_is_the_one_with_the_recorded_best_validation_score():
    X, Y = _multilabel(seed=1)
    parts = make_partitions(900, 3, 150, val_size=60, seed=1)
    cfg = EnsembleConfig(**{**STEP, "lr": 5e-2}, max_steps=120, eval_every=10)
    ens = train_ensemble(X, Y, parts, cfg, seed=0, progress=False)
    val = ens.history.query("split == 'validation' and metric == 'loss'")
    best = val.loc[val.groupby("teacher").value.idxmin()].set_index("teacher")
    np.testing.assert_allclose(ens.best_val_loss, best.value.sort_index().to_numpy(), rtol=1e-12)
    assert np.array_equal(ens.best_step, best.step.sort_index().to_numpy())
    # the kept parameters give that validation loss again
    p = ens.probabilities(X)
    for i in range(3):
        rows = parts.val[i]
        q = np.clip(p[i, rows], 1e-7, 1 - 1e-7)
        bce = -(Y[rows] * np.log(q) + (1 - Y[rows]) * np.log(1 - q)).mean()
        assert bce == pytest.approx(ens.best_val_loss[i], rel=1e-4)
    assert ens.selection == "per-teacher validation loss"


def test_selection_on_the_test_set_is_explicit_and_labelled(caplog):
    X, Y = _multilabel()
    parts = make_partitions(800, 2, 100, val_size=20, seed=0)
    cfg = EnsembleConfig(**STEP, max_steps=20, eval_every=10, selection="test", select_on="mAP")
    with pytest.raises(ValueError, match="selection='test'"):
        train_ensemble(X[:800], Y[:800], parts, cfg, progress=False)
    ens = train_ensemble(X[:800], Y[:800], parts, cfg, progress=False, test=(X[800:], Y[800:]))
    assert "TEST-SET" in ens.selection and "optimistic" in caplog.text
    test_map = ens.history.query("split == 'test' and metric == 'mAP'").groupby("teacher").value.max()
    np.testing.assert_allclose(ens.best_val_loss, test_map.to_numpy())
    assert EnsembleConfig(**STEP).selection == "validation"  # never the default


def test_step_schedule_equals_epoch_schedule_when_batches_align():
    """Same shuffling stream: E epochs of m/B batches == E*m/B steps (no validation, final parameters)."""
    X, Y = _multilabel()
    parts = make_partitions(900, 3, 64, seed=2)
    epochs = train_ensemble(X, Y, parts, EnsembleConfig(**STEP, max_epochs=3), seed=1, progress=False)
    steps = train_ensemble(X, Y, parts, EnsembleConfig(**STEP, max_steps=12, selection="last"), seed=1, progress=False)
    for a, b in zip(epochs.weights + epochs.biases, steps.weights + steps.biases):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert (steps.epochs == 3).all() and (steps.best_step == -1).all()


def test_stack_and_loop_agree_with_balanced_sampler_and_mixup():
    X, Y = _multilabel()
    parts = make_partitions(800, 3, 100, val_size=30, seed=0)
    cfg = EnsembleConfig(**STEP, max_steps=40, eval_every=10, sampler="balanced", mixup_alpha=0.4)
    v = train_ensemble(X[:800], Y[:800], parts, cfg, seed=2, progress=False)
    lp = train_ensemble_loop(X[:800], Y[:800], parts, cfg, seed=2, progress=False)
    np.testing.assert_allclose(v.probabilities(X[800:]), lp.probabilities(X[800:]), atol=1e-5)
    assert np.array_equal(v.best_step, lp.best_step)


def test_module_ensemble_step_schedule_stack_matches_loop():
    X, Y = _multilabel(n=700)
    X3 = X.reshape(700, 2, 6)
    parts = make_partitions(600, 3, 100, val_size=30, seed=0)
    kw = dict(max_steps=30, eval_every=10, sampler="balanced", mixup_alpha=1.0, batch_size=16, progress=False)

    def model_fn():
        return EmbeddingMLP(5, in_features=6, hidden=(16,), dropout=0.0)

    a = train_module_ensemble(model_fn, X3[:600], Y[:600], parts, "multilabel", vectorised=True, **kw)
    b = train_module_ensemble(model_fn, X3[:600], Y[:600], parts, "multilabel", vectorised=False, **kw)
    np.testing.assert_allclose(a.probabilities(X3[600:]), b.probabilities(X3[600:]), atol=1e-5)
    assert sorted(a.history.step.unique().tolist()) == [10, 20, 30]
    assert a.probabilities(X3[600:]).shape == (3, 100, 5)


def test_fit_model_step_schedule_is_the_same_loop():
    X, Y = _multilabel()
    from pate_study.learning.models import mlp

    torch.manual_seed(0)
    r = fit_model(
        mlp(12, (16,), 5),
        X[:700],
        Y[:700],
        "multilabel",
        X[700:],
        Y[700:],
        max_steps=30,
        eval_every=10,
        batch_size=16,
        sampler="balanced",
        mixup_alpha=1.0,
        seed=1,
    )
    assert r.steps == 30 and len(r.history) == 3 and r.best_val_loss == min(r.history)
    assert set(r.frame.teacher) == {0}


# ------------------------------------------------------------------------------------------
# bad input: one-line errors naming the parameter
# ------------------------------------------------------------------------------------------
def test_bad_input_names_the_parameter():
    X, Y = _multilabel(n=200)
    parts = make_partitions(200, 2, 50, val_size=10, seed=0)
    with pytest.raises(ValueError, match=r"n_teachers=300 .* exceeds the 200 available"):
        make_partitions(200, 300, 1)
    empty = Y.copy()
    empty[:, 3] = 0
    with pytest.raises(ValueError, match=r"y: labels \[3\] .* no positive clip"):
        train_ensemble(X, empty, parts, EnsembleConfig(**STEP, max_steps=2), progress=False)
    train_ensemble(X, empty, parts, EnsembleConfig(**STEP, max_steps=2, allow_empty_labels=True), progress=False)
    with pytest.raises(ValueError, match="^y: "):
        train_ensemble(X, Y[:150], parts, EnsembleConfig(**STEP, max_steps=2), progress=False)
    with pytest.raises(ValueError, match="test"):
        train_ensemble(X, Y, parts, EnsembleConfig(**STEP, max_steps=2), progress=False, test=(X[:10, :5], Y[:10]))
    with pytest.raises(ValueError, match=r"test\[1\]"):
        train_ensemble(X, Y, parts, EnsembleConfig(**STEP, max_steps=2), progress=False, test=(X[:10], Y[:9]))
    with pytest.raises(ValueError, match="sampler"):
        TrainConfig(task="binary", sampler="balanced")
    with pytest.raises(ValueError, match="max_steps"):
        TrainConfig(max_steps=0)
    with pytest.raises(ValueError, match="selection"):
        TrainConfig(selection="best")
    with pytest.raises(ValueError, match="partitions"):
        train_ensemble(X, Y, Partitions(np.arange(400).reshape(2, 200)), EnsembleConfig(**STEP), progress=False)
    nolabel = Y.copy()
    nolabel[parts.train[1]] = 0
    nolabel[parts.train[0], :] = 1
    with pytest.raises(ValueError, match="teacher 1"):
        train_ensemble(X, nolabel, parts, EnsembleConfig(**STEP, max_steps=2, sampler="balanced"), progress=False)


def test_history_and_module_probabilities_survive_the_cache(tmp_path):

    X, Y = _multilabel(n=500)
    parts = make_partitions(400, 2, 80, val_size=20, seed=0)
    cfg = EnsembleConfig(**STEP, max_steps=10, eval_every=5)
    a, key = cached_ensemble(X[:400], Y[:400], parts, cfg, cache_dir=tmp_path, progress=False)
    b, key2 = cached_ensemble(X[:400], Y[:400], parts, cfg, cache_dir=tmp_path, progress=False)
    assert key == key2 and b.history.equals(a.history) and np.array_equal(a.best_step, b.best_step)
    X3 = X.reshape(500, 2, 6)

    def model_fn():
        return EmbeddingMLP(5, in_features=6, hidden=(8,), dropout=0.0)

    kw = dict(max_steps=6, eval_every=3, cache_dir=tmp_path, progress=False)
    v1 = cached_module_votes(model_fn, X3[:400], Y[:400], parts, "multilabel", X3[400:], **kw)
    files = set(tmp_path.glob("*.pt"))
    v2 = cached_module_votes(model_fn, X3[:400], Y[:400], parts, "multilabel", X3[400:], **kw)
    assert set(tmp_path.glob("*.pt")) == files  # nothing retrained or re-queried
    assert v1.probabilities.shape == (2, 100, 5) and np.array_equal(v1.probabilities, v2.probabilities)


def test_a_cached_module_ensemble_is_keyed_by_its_settings_however_they_are_passed(tmp_path):
    """Training settings as keywords or as one TrainConfig (batch size 64 unless set) name the same entry; run
    keywords (seed) change it; a misspelt keyword is refused by TrainConfig before anything is trained."""
    X, Y = _multilabel(n=300)
    parts = make_partitions(300, 2, 60, val_size=20, seed=0)

    def model_fn():
        return EmbeddingMLP(5, in_features=6, hidden=(4,), dropout=0.0)

    X3 = X.reshape(300, 2, 6)
    common = dict(cache_dir=tmp_path, progress=False)
    _, key = cached_module_ensemble(model_fn, X3, Y, parts, "multilabel", max_steps=2, eval_every=2, **common)
    config = TrainConfig(task="multilabel", batch_size=64, max_steps=2, eval_every=2)
    _, same = cached_module_ensemble(model_fn, X3, Y, parts, "multilabel", config=config, **common)
    _, other = cached_module_ensemble(model_fn, X3, Y, parts, "multilabel", config=config, seed=1, **common)
    assert same == key != other
    with pytest.raises(TypeError, match="max_step"):
        cached_module_ensemble(model_fn, X3, Y, parts, "multilabel", max_step=2, **common)


@pytest.mark.parametrize("sampler, mixup_alpha", [("random", None), ("balanced", 1.0)])
def test_step_patience_stops_teachers_and_the_stack_still_matches_the_loop(sampler, mixup_alpha):
    """Teachers stop at different evaluations, inside a block of the index plan (evaluations every 5 steps, blocks
    of PLAN_STEPS): the teachers left must go on with their own rows and mixup coefficients, as each does alone."""
    X, Y = _multilabel(n=600, seed=3)
    Y = np.where(np.random.default_rng(0).random(Y.shape) < 0.3, 1 - Y, Y)  # noisy: validation loss turns up
    parts = make_partitions(600, 4, 60, val_size=40, seed=0)
    cfg = EnsembleConfig(
        **{**STEP, "lr": 5e-2},
        max_steps=200,
        eval_every=5,
        step_patience=2,
        allow_empty_labels=True,
        sampler=sampler,
        mixup_alpha=mixup_alpha,
    )
    v = train_ensemble(X, Y, parts, cfg, seed=0, progress=False)
    lp = train_ensemble_loop(X, Y, parts, cfg, seed=0, progress=False)
    assert v.steps.min() < 200 and np.array_equal(v.steps, lp.steps)
    assert len(set(v.steps.tolist())) > 1 and (v.steps % PLAN_STEPS != 0).any()  # stopped apart, inside blocks
    assert (v.best_step <= v.steps).all() and (v.steps - v.best_step == 10).all()  # stopped 2 evaluations later
    np.testing.assert_allclose(v.probabilities(X), lp.probabilities(X), atol=1e-5)


def test_single_model_with_data_dependent_control_flow_trains():
    """fit_model (N = 1) must accept any forward, e.g. a sequence model that checks its input (vmap cannot)."""
    import torch

    from pate_study.learning.student import fit_model

    class Checked(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 1)

        def forward(self, x):
            if bool((x.abs().sum(dim=1) == 0).any()):
                raise ValueError("x: a row is all zeros")
            return self.linear(x)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 4)).astype(np.float32) + 0.1
    y = (X[:, 0] > 0).astype(np.int64)
    fit = fit_model(Checked(), X, y, "binary", max_epochs=2, batch_size=16, seed=0)
    assert fit.epochs == 2 and isinstance(fit.model, Checked)


@pytest.mark.slow
def test_compiled_step_draws_the_same_and_selects_the_same_checkpoints():
    """compile_step: the forward and loss through torch.compile (inductor on the CPU), dropout masks drawn outside
    the graph from the stack's generator -- the same draws as the eager step, so only rounding differs (fused
    kernels): the same selected checkpoints, probabilities within 1e-4. Models without ``dropout_masks`` refuse."""
    X, Y = _multilabel(n=500)
    parts = make_partitions(400, 2, 150, val_size=40, seed=0)
    cfg = dict(**{**STEP, "dropout": 0.5}, max_steps=40, eval_every=10, sampler="balanced", mixup_alpha=1.0)
    eager = train_ensemble(X[:400], Y[:400], parts, EnsembleConfig(**cfg), seed=1, progress=False)
    counters = torch._dynamo.utils.counters
    graphs, breaks = counters["stats"]["unique_graphs"], sum(counters["graph_break"].values())
    compiled = train_ensemble(X[:400], Y[:400], parts, EnsembleConfig(**cfg, compile_step=True), seed=1, progress=False)
    assert counters["stats"]["unique_graphs"] > graphs  # compiled, not run eagerly
    assert sum(counters["graph_break"].values()) == breaks  # in one graph: dropout masks drawn outside it
    assert np.array_equal(eager.best_step, compiled.best_step)
    np.testing.assert_allclose(compiled.probabilities(X[400:]), eager.probabilities(X[400:]), atol=1e-4)
    assert not np.array_equal(
        compiled.probabilities(X[400:]),
        train_ensemble(
            X[:400], Y[:400], parts, EnsembleConfig(**{**cfg, "dropout": 0.0}), seed=1, progress=False
        ).probabilities(X[400:]),
    )
    with pytest.raises(ValueError, match="compile_step"):
        train_module_ensemble(
            lambda: EmbeddingMLP(5, in_features=12, hidden=(8,)),
            X[:400],
            Y[:400],
            parts,
            task="multilabel",
            max_steps=2,
            eval_every=2,
            compile_step=True,
            progress=False,
        )
    with pytest.raises(ValueError, match="compile_step"):
        TrainConfig(compile_step="yes")


# ------------------------------------------------------------------------------------------
# training sets of different sizes in one stack (students of releases that answered different queries)
# ------------------------------------------------------------------------------------------
def test_teachers_with_training_sets_of_different_sizes_train_in_one_stack():
    """Ragged rows: each teacher's sampler reads only its own rows; without dropout every teacher of the stack is the
    teacher trained alone (to float rounding), and its completed passes count its own rows. The epoch schedule,
    which walks rows in lock-step, refuses them in one line."""
    X, Y = _multilabel()
    rows = [np.arange(0, 100), np.arange(100, 160), np.arange(200, 330)]
    config = TrainConfig(
        task="multilabel",
        lr=1e-2,
        batch_size=16,
        max_steps=30,
        eval_every=10,
        sampler="balanced",
        mixup_alpha=0.4,
        selection="last",
        allow_empty_labels=True,
    )
    seeds = teacher_seeds(3, 3)
    cpu = torch.device("cpu")
    res = train_stacked(StackedMLP((12, 8, 5), seeds), X, Y, rows, None, config, seeds, device=cpu, progress=False)
    for i, r in enumerate(rows):
        one = seeds[i : i + 1]
        alone = train_stacked(StackedMLP((12, 8, 5), one), X, Y, r[None], None, config, one, device=cpu, progress=False)
        for a, b in zip(res.params, alone.params):
            torch.testing.assert_close(a[i : i + 1], b, rtol=1e-5, atol=1e-5)
    assert res.epochs.tolist() == [30 * 16 // 100, 30 * 16 // 60, 30 * 16 // 130]
    with pytest.raises(ValueError, match="step schedule"):
        train_stacked(
            StackedMLP((12, 8, 5), seeds),
            X,
            Y,
            rows,
            None,
            TrainConfig(task="multilabel", batch_size=16, max_epochs=1, allow_empty_labels=True),
            seeds,
            device=cpu,
            progress=False,
        )
