"""The one cache: its key holds kind, inputs, code version and the resolved device; a CUDA-requested run never
reuses what a CPU run stored in the same folder."""

import numpy as np
import pytest
import torch

from pate_study.core import cache
from pate_study.learning.ensemble import EnsembleConfig
from pate_study.learning.ensemble_cache import cached_ensemble, cached_teacher_votes
from pate_study.learning.partitions import make_partitions

CUDA = torch.cuda.is_available()


def _small():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    parts = make_partitions(250, 3, 50, val_size=10, seed=1)
    cfg = EnsembleConfig(task="binary", in_features=8, hidden=(8,), batch_size=16, max_epochs=2)
    return X[:250], y[:250], parts, cfg, X[250:]


def test_every_part_of_the_key_changes_it():
    base = cache.cache_key("ensemble", device="cpu", x=np.arange(3), seed=0)
    assert base == cache.cache_key("ensemble", device="cpu", x=np.arange(3), seed=0)
    others = [
        cache.cache_key("ensemble", device="cuda", x=np.arange(3), seed=0),
        cache.cache_key("votes", device="cpu", x=np.arange(3), seed=0),
        cache.cache_key("ensemble", device="cpu", x=np.arange(4), seed=0),
        cache.cache_key("ensemble", device="cpu", x=np.arange(3), seed=1),
        cache.cache_key("ensemble", device=cache.CLUSTER_CHOICE, x=np.arange(3), seed=0),
    ]
    assert len({base, *others}) == 1 + len(others)
    assert cache.cache_key("ensemble", device=torch.device("cpu"), x=np.arange(3), seed=0) == base


def test_the_code_version_is_part_of_the_key(monkeypatch):
    before = cache.cache_key("ensemble", device="cpu", seed=0)
    monkeypatch.setattr(cache, "CODE_VERSION", cache.CODE_VERSION + 1)
    assert cache.cache_key("ensemble", device="cpu", seed=0) != before


def test_an_unresolved_or_unknown_device_is_refused():
    with pytest.raises(ValueError, match="resolve the device first"):
        cache.cache_key("ensemble", device=None, seed=0)
    with pytest.raises(ValueError, match="expected 'cpu', 'cuda'"):
        cache.cache_key("ensemble", device="tpu", seed=0)


def test_the_device_is_resolved_as_the_training_resolves_it(monkeypatch):
    monkeypatch.setenv("PATE_STUDY_DEVICE", "cpu")
    assert cache.resolved_device(None) == "cpu"
    assert cache.resolved_device("cpu") == "cpu"
    assert cache.resolved_device(None, backend="ray") == cache.CLUSTER_CHOICE  # the cluster decides
    assert cache.resolved_device("cpu", backend="ray") == "cpu"
    monkeypatch.setenv("PATE_STUDY_DEVICE", "cuda")
    if CUDA:
        assert cache.resolved_device(None) == "cuda"
    else:
        with pytest.raises(ValueError, match="CUDA"):
            cache.resolved_device(None)


def test_cpu_then_cuda_requested_run_in_one_folder_does_not_reuse(tmp_path):
    X, y, parts, cfg, _ = _small()
    cpu, key_cpu = cached_ensemble(X, y, parts, cfg, cache_dir=tmp_path, device="cpu", progress=False)
    again, key_again = cached_ensemble(X, y, parts, cfg, cache_dir=tmp_path, device="cpu", progress=False)
    assert key_again == key_cpu and np.array_equal(again.epochs, cpu.epochs)  # the CPU entry is reused on the CPU
    assert len(list(tmp_path.glob("ensemble-*.pt"))) == 1
    if not CUDA:  # without a GPU, the CUDA-requested run must try to train (and say CUDA is missing), not load
        with pytest.raises(ValueError, match="CUDA"):
            cached_ensemble(X, y, parts, cfg, cache_dir=tmp_path, device="cuda", progress=False)
        with pytest.raises(ValueError, match="CUDA"):
            cached_teacher_votes(X, y, parts, cfg, X[:5], cache_dir=tmp_path, device="cuda", progress=False)
        return
    _, key_cuda = cached_ensemble(X, y, parts, cfg, cache_dir=tmp_path, device="cuda", progress=False)
    assert key_cuda != key_cpu and len(list(tmp_path.glob("ensemble-*.pt"))) == 2


def test_cached_returns_the_stored_result_and_writes_a_verified_entry(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"a": torch.arange(4)}

    key = cache.cache_key("demo", device="cpu", n=4)
    first = cache.cached("demo", key, compute, to_state=dict, from_state=dict, cache_dir=tmp_path)
    second = cache.cached("demo", key, compute, to_state=dict, from_state=dict, cache_dir=tmp_path)
    assert len(calls) == 1 and torch.equal(first["a"], second["a"])
    path = cache.entry_path("demo", key, tmp_path)
    assert path.exists() and path.with_suffix(".pt.json").exists()
    path.write_bytes(path.read_bytes()[:10])  # a truncated entry is rejected and recomputed
    cache.cached("demo", key, compute, to_state=dict, from_state=dict, cache_dir=tmp_path)
    assert len(calls) == 2
