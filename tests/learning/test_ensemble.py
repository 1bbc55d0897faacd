import numpy as np
import pytest
import scipy.sparse as sp
import torch

from pate_study.core.io import load_cache_entry, save_cache_entry
from pate_study.learning.ensemble import EnsembleConfig, query_ensemble, train_ensemble, train_ensemble_loop
from pate_study.learning.ensemble_cache import cached_teacher_votes
from pate_study.learning.evaluation import EarlyStopping, record_stacked_losses
from pate_study.learning.partitions import Partitions, make_partitions
from pate_study.learning.train_config import teacher_seeds
from pate_study.learning.voting import TeacherVotes, vote_counts, youden_threshold

CFG = dict(in_features=20, hidden=(16, 8), batch_size=32, max_epochs=12, patience=2, lr=5e-3)


def _setup(separable, n_teachers=6):
    X, y = separable
    parts = make_partitions(len(y) - 400, n_teachers, 150, val_size=40, threshold_size=60, seed=1)
    return X, y, parts, X[-400:], y[-400:]


def test_partitions_disjoint_and_validated():
    p = make_partitions(1000, 5, 100, val_size=20, threshold_size=30, seed=0)
    assert p.train.shape == (5, 100) and p.val.shape == (5, 20) and p.threshold.shape == (5, 30)
    allidx = np.concatenate([p.train.ravel(), p.val.ravel(), p.threshold.ravel()])
    assert np.unique(allidx).size == allidx.size
    with pytest.raises(ValueError, match="overlap"):
        Partitions(np.array([[0, 1], [1, 2]])).validate(10)
    with pytest.raises(ValueError, match="exceeds"):
        make_partitions(100, 5, 30)
    # MAKE 2021's 200 ECG teachers x 5,000 beats cannot be disjoint over 109,446 beats
    with pytest.raises(ValueError, match="largest disjoint size per teacher is 547"):
        make_partitions(109_446, 200, 5000)
    again = make_partitions(1000, 5, 100, val_size=20, threshold_size=30, seed=0)
    assert (again.train == p.train).all() and (again.threshold == p.threshold).all()


def test_teacher_seeds_distinct_and_reproducible():
    a, b = teacher_seeds(7, 4), teacher_seeds(7, 4)
    assert a.shape == (4, 3) and np.array_equal(a, b)
    assert len({tuple(r) for r in a}) == 4


def test_vote_counts():
    v = np.array([[0, 1, 2], [0, 1, 1], [2, 1, 0]])
    c = vote_counts(v, 3)
    assert c.dtype == np.int64 and c.tolist() == [[2, 0, 1], [0, 3, 0], [1, 1, 1]]
    with pytest.raises(ValueError):
        vote_counts(v, 2)


def test_youden_threshold_picks_separating_point():
    y = np.array([0, 0, 0, 1, 1, 1])
    s = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    t = youden_threshold(y, s)
    assert 0.3 < t <= 0.7


@pytest.mark.slow
def test_vectorised_learns_agrees_with_loop_and_is_deterministic(separable):
    X, y, parts, Xq, yq = _setup(separable)
    cfg = EnsembleConfig(task="binary", **CFG)
    ev = train_ensemble(X, y, parts, cfg, seed=3, progress=False)
    ev2 = train_ensemble(X, y, parts, cfg, seed=3, progress=False)
    el = train_ensemble_loop(X, y, parts, cfg, seed=3, progress=False)
    vv, vv2, vl = (query_ensemble(e, Xq) for e in (ev, ev2, el))
    # shapes and dtypes of the interface
    assert vv.probabilities.shape == (6, 400) and vv.probabilities.dtype == np.float32
    assert vv.teacher_votes.shape == (6, 400) and vv.teacher_votes.dtype == np.int8
    assert vv.counts.shape == (400, 2) and (vv.counts.sum(1) == 6).all()
    assert ev.thresholds.shape == (6,)
    # determinism: same seed -> identical votes
    assert np.array_equal(vv.teacher_votes, vv2.teacher_votes)
    assert np.array_equal(vv.probabilities, vv2.probabilities)
    # learns: each teacher > 0.85, the plurality vote > 0.95
    assert (vv.teacher_votes == yq).mean(1).min() > 0.85
    assert (vv.counts.argmax(1) == yq).mean() > 0.95
    # agrees with the loop (same seeds, partitions, batches, early stopping)
    assert np.array_equal(ev.epochs, el.epochs)
    np.testing.assert_allclose(vv.probabilities, vl.probabilities, atol=1e-4)
    np.testing.assert_allclose(ev.thresholds, el.thresholds, atol=1e-4)
    assert (vv.teacher_votes == vl.teacher_votes).mean() > 0.995
    # a different seed gives different teachers
    ev3 = train_ensemble(X, y, parts, cfg, seed=4, progress=False)
    assert not np.allclose(query_ensemble(ev3, Xq).probabilities, vv.probabilities)


def test_early_stopping_varies_per_teacher_and_still_agrees(separable):
    """Teachers stop at different epochs (stack compaction) and still match the loop."""
    X, y, parts, Xq, _ = _setup(separable, n_teachers=5)
    rng = np.random.default_rng(0)
    y_noisy = np.where(rng.random(len(y)) < 0.3, 1 - y, y)  # noise makes validation loss turn up
    cfg = EnsembleConfig(task="binary", **{**CFG, "max_epochs": 25, "patience": 1, "lr": 2e-2})
    ev = train_ensemble(X, y_noisy, parts, cfg, seed=0, progress=False)
    el = train_ensemble_loop(X, y_noisy, parts, cfg, seed=0, progress=False)
    assert ev.epochs.min() < cfg.max_epochs and len(set(ev.epochs.tolist())) > 1
    assert np.array_equal(ev.epochs, el.epochs)
    np.testing.assert_allclose(ev.best_val_loss, el.best_val_loss, rtol=1e-5)
    np.testing.assert_allclose(query_ensemble(ev, Xq).probabilities, query_ensemble(el, Xq).probabilities, atol=1e-4)


def test_sparse_and_dense_paths_agree():
    rng = np.random.default_rng(0)
    X = sp.random(1500, 30, density=0.15, random_state=1, format="csr", dtype=np.float32)
    y = (np.asarray(X @ rng.normal(size=30)).ravel() > 0).astype(int)
    parts = make_partitions(1500, 4, 200, val_size=50, threshold_size=50, seed=0)
    base = dict(task="binary", in_features=30, hidden=(16,), batch_size=25, max_epochs=4, patience=2)
    d = train_ensemble(X, y, parts, EnsembleConfig(**base), seed=1, progress=False)
    s = train_ensemble(X, y, parts, EnsembleConfig(**base, sparse_input=True), seed=1, progress=False)
    assert np.array_equal(d.epochs, s.epochs)
    for a, b in zip(d.weights + d.biases, s.weights + s.biases):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def _grad_fn_names(t: torch.Tensor) -> set[str]:
    """Names of every node in the autograd graph behind ``t``."""
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.add(type(node).__name__)
        stack.extend(fn for fn, _ in node.next_functions)
    return names


def test_sparse_first_layer_does_not_copy_its_gradient():
    """An in-place bias add on the embedding_bag view put CopySlices in the graph, which clones the
    whole [N*B, out] gradient every backward (about a quarter of a sparse step, benchmarks/HISTORY.md)."""
    from pate_study.learning.stacked import as_inputs as _as_inputs
    from pate_study.learning.stacked import first_layer as _first_layer

    X = sp.random(40, 30, density=0.2, random_state=0, format="csr", dtype=np.float32)
    inputs = _as_inputs(X, 30, sparse=True, device=torch.device("cpu"))
    W = torch.randn(3, 30, 8, requires_grad=True)
    b = torch.randn(3, 1, 8, requires_grad=True)
    idx = torch.arange(24).view(3, 8)
    h = _first_layer(inputs, idx, W, b, sparse=True)
    names = _grad_fn_names(h)
    assert "EmbeddingBagBackward0" in names and "CopySlices" not in names, names
    dense = torch.as_tensor(X.toarray())[idx]
    torch.testing.assert_close(h, torch.baddbmm(b, dense, W), atol=1e-5, rtol=1e-5)


def test_multiclass_and_multilabel_votes(separable):
    X, _, parts, Xq, _ = _setup(separable, n_teachers=3)
    w = np.random.default_rng(1).normal(size=(20, 3))
    yc = np.argmax(X @ w, axis=1)
    cfg = EnsembleConfig(task="multiclass", n_outputs=3, **{**CFG, "max_epochs": 4})
    v = query_ensemble(train_ensemble(X, yc, parts, cfg, seed=0, progress=False), Xq)
    assert v.counts.shape == (400, 3) and v.counts.dtype == np.int64 and (v.counts.sum(1) == 3).all()
    assert v.teacher_votes.shape == (3, 400) and v.probabilities.shape == (3, 400, 3)
    ym = (X @ w > 0).astype(np.float32)
    cfg = EnsembleConfig(task="multilabel", n_outputs=3, **{**CFG, "max_epochs": 4})
    v = query_ensemble(train_ensemble(X, ym, parts, cfg, seed=0, progress=False), Xq)
    assert v.counts is None and v.probabilities.shape == (3, 400, 3) and v.teacher_votes.dtype == np.int8
    assert v.fractions.shape == (400, 3) and ((v.fractions >= 0) & (v.fractions <= 1)).all()
    np.testing.assert_allclose(v.mean_probabilities, v.probabilities.mean(0), atol=1e-6)


def test_bad_inputs_raise(separable):
    X, y, parts, _, _ = _setup(separable)
    with pytest.raises(ValueError, match="columns"):
        train_ensemble(X[:, :5], y, parts, EnsembleConfig(task="binary", **CFG), progress=False)
    with pytest.raises(ValueError, match="0/1"):
        train_ensemble(X, y + 2, parts, EnsembleConfig(task="binary", **CFG), progress=False)
    with pytest.raises(ValueError, match="task"):
        EnsembleConfig(task="regression")


def test_cache_roundtrip_and_rejects_truncated_file(separable, tmp_path, caplog):
    X, y, parts, Xq, _ = _setup(separable, n_teachers=3)
    cfg = EnsembleConfig(task="binary", **{**CFG, "max_epochs": 3})
    v1 = cached_teacher_votes(X, y, parts, cfg, Xq, seed=0, cache_dir=tmp_path, progress=False)
    files = sorted(tmp_path.glob("*.pt"))
    assert len(files) == 2 and all(f.with_suffix(".pt.json").exists() for f in files)
    v2 = cached_teacher_votes(X, y, parts, cfg, Xq, seed=0, cache_dir=tmp_path, progress=False)
    assert np.array_equal(v1.teacher_votes, v2.teacher_votes)
    # truncate the votes entry: it must be rejected (not loaded) and recomputed
    votes_file = next(f for f in files if f.name.startswith("votes-"))
    data = votes_file.read_bytes()
    votes_file.write_bytes(data[: len(data) // 2])
    assert load_cache_entry(votes_file) is None
    assert "rejected" in caplog.text and not votes_file.exists()
    v3 = cached_teacher_votes(X, y, parts, cfg, Xq, seed=0, cache_dir=tmp_path, progress=False)
    assert np.array_equal(v1.probabilities, v3.probabilities)
    # same size, flipped byte: SHA-256 mismatch
    path = tmp_path / "x.pt"
    save_cache_entry(path, {"a": torch.arange(100)})
    raw = bytearray(path.read_bytes())
    raw[-20] ^= 0xFF
    path.write_bytes(bytes(raw))
    assert load_cache_entry(path) is None
    # payload without sidecar (partial write) is rejected too
    save_cache_entry(path, {"a": torch.arange(3)})
    path.with_suffix(".pt.json").unlink()
    assert load_cache_entry(path) is None


def test_votes_state_roundtrip():
    v = TeacherVotes(
        "binary", np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int8), counts=np.zeros((3, 2), np.int64)
    )
    w = TeacherVotes.from_state(v.state())
    assert w.task == "binary" and w.counts.dtype == np.int64 and w.fractions is None


@pytest.mark.slow
def test_module_ensemble_vmap_matches_loop_with_batchnorm():
    from pate_study.learning.ensemble import train_module_ensemble
    from pate_study.learning.models import ResNetLogMel
    from pate_study.learning.voting import votes_from_probabilities

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 16, 8)).astype(np.float32)
    y = rng.integers(0, 2, 400)
    X[y == 1, :, :4] += 1.5
    parts = make_partitions(300, 3, 60, val_size=20, threshold_size=20, seed=0)

    def model_fn():
        return ResNetLogMel(1, blocks=(1, 1), base_width=4, head=(8,), dropout=0.0)

    kw = dict(max_epochs=4, patience=2, batch_size=20, lr=1e-2, progress=False)
    ev = train_module_ensemble(model_fn, X, y, parts, "binary", vectorised=True, **kw)
    el = train_module_ensemble(model_fn, X, y, parts, "binary", vectorised=False, **kw)
    pv, pl = ev.probabilities(X[300:]), el.probabilities(X[300:])
    assert pv.shape == (3, 100) and np.array_equal(ev.epochs, el.epochs)
    np.testing.assert_allclose(pv, pl, atol=5e-3)  # conv kernels differ between vmap and loop
    v = votes_from_probabilities("binary", pv, ev.thresholds)
    assert v.counts.shape == (100, 2) and (v.counts.sum(1) == 3).all()
    assert (v.counts.argmax(1) == y[300:]).mean() > 0.9


def test_early_stopping_rule_single_and_stacked_agree():
    losses = [1.0, 0.8, 0.8, 0.9, 0.7, 0.75, 0.71, 0.72]  # equal is not an improvement
    single = EarlyStopping(patience=3)
    stops = [single.update(v, lambda v=v: v) for v in losses]
    assert stops.index(True) == 7 and single.best == 0.7 and single.state == 0.7 and single.bad == 3
    best_loss, bad = torch.full((2,), float("inf"), dtype=torch.float64), torch.zeros(2, dtype=torch.int64)
    best, active = [torch.zeros(2, 1)], torch.arange(2)
    for epoch, v in enumerate(losses):
        vl = torch.tensor([v, 0.5], dtype=torch.float64)
        stop = record_stacked_losses(vl, active, best_loss, bad, 3, best, [torch.full((2, 1), float(epoch))])
    assert stop.tolist() == [True, True] and best_loss.tolist() == [0.7, 0.5]
    assert best[0][:, 0].tolist() == [4.0, 0.0]  # teacher 0 kept epoch 4's parameters, teacher 1 epoch 0's
