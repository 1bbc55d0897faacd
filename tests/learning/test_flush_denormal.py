"""The training loop's Adam step flushes denormals to zero on the CPU (speed) without changing what it trains."""

import contextlib

import numpy as np
import pytest
import torch

from pate_study.learning import optimiser, training
from pate_study.learning.ensemble import EnsembleConfig, train_ensemble
from pate_study.learning.partitions import make_partitions


def test_flush_denormal_is_scoped_and_restored():
    assert not optimiser.flush_denormal_enabled()  # torch's default
    with optimiser.flush_denormal_on_cpu(torch.device("cpu")):
        assert optimiser.flush_denormal_enabled() == torch.set_flush_denormal(True)  # on where the CPU supports it
    assert not optimiser.flush_denormal_enabled()
    torch.set_flush_denormal(True)
    try:  # an enclosing setting is kept, not reset to the default
        with optimiser.flush_denormal_on_cpu(torch.device("cpu")):
            pass
        assert optimiser.flush_denormal_enabled()
    finally:
        torch.set_flush_denormal(False)
    with optimiser.flush_denormal_on_cpu(torch.device("meta")):  # not the CPU: nothing changes
        assert not optimiser.flush_denormal_enabled()


def _train_with_zero_columns():
    """Students whose first 40 of 48 input columns are always 0 (like ECG beats' zero padding): those weights get
    zero gradients, so their Adam moments decay through the denormal range over the 1,200 steps."""
    rng = np.random.default_rng(0)
    X = np.zeros((600, 48), dtype=np.float32)
    X[:, 40:] = rng.normal(size=(600, 8))
    y = (X[:, 40:].sum(1) > 0).astype(np.int64) + (X[:, 41] > 1)
    parts = make_partitions(600, 3, 100, seed=1)
    cfg = EnsembleConfig(
        task="multiclass", in_features=48, n_outputs=3, hidden=(16, 8), batch_size=10, max_epochs=120, patience=1000
    )
    ens = train_ensemble(X, y, parts, cfg, seed=2, progress=False)
    return ens


@pytest.fixture
def one_intra_op_thread():
    """Flushing sets the calling thread's floating-point mode (MXCSR on x86); torch's intra-op worker threads keep
    their own, so the bit-level claim is checked where every step runs on the calling thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_flushing_denormals_leaves_the_trained_ensemble_unchanged(monkeypatch, one_intra_op_thread):
    denormal_moments = []
    original_step = torch.optim.Adam.step

    def spy_step(self, *a, **kw):  # counts denormal Adam moments from their bits (immune to flushing)
        out = original_step(self, *a, **kw)
        bits = [s[k].view(torch.int32) for s in self.state.values() for k in ("exp_avg", "exp_avg_sq")]
        denormal_moments.append(sum(int((((b & 0x7F800000) == 0) & ((b & 0x7FFFFF) != 0)).sum()) for b in bits))
        return out

    monkeypatch.setattr(torch.optim.Adam, "step", spy_step)
    flushed = _train_with_zero_columns()
    assert sum(denormal_moments) == 0  # flushed: no denormal moment survives a step
    denormal_moments.clear()
    monkeypatch.setattr(training, "flush_denormal_on_cpu", lambda device: contextlib.nullcontext())
    kept = _train_with_zero_columns()
    assert sum(denormal_moments) > 0  # the case is real: without flushing, moments go denormal
    for a, b in zip([*flushed.weights, *flushed.biases], [*kept.weights, *kept.biases]):
        assert torch.equal(a, b)
    assert np.array_equal(flushed.epochs, kept.epochs)
