"""The Ray backend (pate_study.learning.distributed) against a local Ray instance started here.

One instance for the module (2 CPUs, no dashboard, 127.0.0.1), stopped after. Tiny ensembles only: the
machine is small, and the whole module must stay under 90 s.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs the 'ray' extra: pip install -e '.[ray]'")
pytestmark = pytest.mark.ray

from pate_study.core.io import hash_inputs, load_cache_entry  # noqa: E402 - only once importorskip found ray
from pate_study.experiments.audioset import data as as_data  # noqa: E402 - only once importorskip found ray
from pate_study.experiments.audioset import pipeline, teachers  # noqa: E402 - only once importorskip found ray
from pate_study.learning import distributed  # noqa: E402 - only once importorskip found ray
from pate_study.learning.partitions import make_partitions  # noqa: E402 - only once importorskip found ray


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance for this module (2 CPUs, no dashboard); this module's functions go to workers by value."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with distributed.local_ray(num_cpus=2) as address:
            yield address
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def tiny():
    """A tiny multi-label embedding task: 240 rows x 8 features, 4 labels, 4 teachers of 40 rows."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 8)).astype(np.float32)
    W = rng.normal(size=(8, 4))
    Y = (X @ W + rng.normal(scale=0.5, size=(240, 4))) > 0.5
    Y[:, 0] |= ~Y.any(1)
    parts = make_partitions(180, 4, 40, seed=1)
    spec = teachers.TeacherSpec(hidden=(8,), steps=4, eval_every=2, batch_size=8)
    return X[:200], Y[:200], np.arange(180, 200), X[200:], Y[200:], parts, spec


# ------------------------------------------------------------------------------- backend equivalence
def test_ensemble_votes_identical_on_both_backends_for_the_same_plan(local_ray, tiny, tmp_path):
    """An ensemble's votes (every teacher's probabilities): the local call and Ray with one task give the same
    teachers; Ray with 2 teachers per task gives what the same plan gives locally (the plan is part of the key)."""
    X, Y, val, Q, QY, parts, spec = tiny
    inputs = as_data.EnsembleInputs(X, Y, parts, val, Q, QY, 3, "tiny", np.arange(180))
    kw = dict(curve_clips=10)
    local = pipeline.cached_ensemble_votes(inputs, spec, cache_dir=tmp_path / "local", **kw)
    whole = pipeline.cached_ensemble_votes(inputs, spec, cache_dir=tmp_path / "ray1", backend="ray", **kw)
    on_ray = pipeline.cached_ensemble_votes(
        inputs, spec, cache_dir=tmp_path / "ray", backend="ray", teachers_per_task=2, **kw
    )
    plan_local = pipeline.cached_ensemble_votes(inputs, spec, cache_dir=tmp_path / "plan", teachers_per_task=2, **kw)
    assert on_ray.probabilities.shape == (4, 40, 4)
    np.testing.assert_array_equal(whole.probabilities, local.probabilities)
    np.testing.assert_array_equal(whole.best_step, local.best_step)
    np.testing.assert_array_equal(on_ray.probabilities, plan_local.probabilities)
    assert len(list((tmp_path / "ray").glob("shard-*.pt"))) == 2  # two tasks, each cached by the driver
    assert not np.array_equal(local.probabilities[0], local.probabilities[1])  # the check is not vacuous


def test_notebook_04_teachers_identical_on_both_backends(local_ray, tmp_path, monkeypatch):
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path))
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 8)).astype(np.float32)
    Y = rng.random((120, 3)) < 0.4
    Y[:, 0] |= ~Y.any(1)
    split = as_data.pool_split(120, seed=0)
    parts = as_data.teacher_partitions(split, 3, seed=0)
    spec = teachers.TeacherSpec(hidden=(8,), steps=4, eval_every=2, batch_size=8)
    inputs = as_data.EnsembleInputs(X, Y, parts, split.val, X[:40], Y[:40], 5, "tiny", split.teacher)
    kw = dict(curve_clips=30)
    local = pipeline.train_ensemble(inputs, spec, **kw)
    on_ray = pipeline.train_ensemble(inputs, spec, **kw, backend="ray")
    np.testing.assert_array_equal(on_ray.class_ap, local.class_ap)
    np.testing.assert_array_equal(on_ray.probabilities, local.probabilities)
    np.testing.assert_array_equal(on_ray.best_step, local.best_step)
    assert on_ray.history.drop(columns=[]).equals(local.history)
    sharded = pipeline.train_ensemble(inputs, spec, **kw, backend="ray", teachers_per_task=2)
    sharded_local = pipeline.train_ensemble(inputs, spec, **kw, teachers_per_task=2)
    np.testing.assert_array_equal(sharded.class_ap, sharded_local.class_ap)
    assert sorted(sharded.history["teacher"].unique()) == [0, 1, 2]
    assert sharded.train_counts.shape == (3, 3)


@pytest.fixture
def one_torch_thread():
    """CPU convolutions differ in the last bits between thread counts; a Ray task with 1 CPU runs 1 thread."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_notebook_05_teacher_votes_identical_on_both_backends(local_ray, tmp_path, one_torch_thread):
    """pipeline.ensemble_votes(backend="ray"): the per-teacher pool probabilities of 05.
    One torch thread here, as in a 1-CPU Ray task: with 2 threads a few of 211,140 probabilities differed
    in the last bit (6e-8), from the matmuls' thread-dependent summation order."""
    kw = dict(data="synthetic", min_pool=200, seed=0, curve_clips=10)
    spec = teachers.TeacherSpec(hidden=(8,), steps=4, eval_every=2)
    local, _ = pipeline.ensemble_votes([3], spec, **kw, cache_dir=tmp_path / "local")
    on_ray, _ = pipeline.ensemble_votes([3], spec, **kw, cache_dir=tmp_path / "ray", backend="ray")
    np.testing.assert_array_equal(on_ray[3][0].pool_probabilities, local[3][0].pool_probabilities)
    np.testing.assert_array_equal(on_ray[3][0].test_probabilities, local[3][0].test_probabilities)
    assert len(list((tmp_path / "ray").glob("shard-*.pt"))) == 1  # one task, cached by the driver


def test_logmel_teachers_identical_on_ray_with_the_clips_as_a_path(local_ray, tmp_path, monkeypatch, one_torch_thread):
    """The GPU path's shard (here on the CPU, tiny): clips passed as a .npy path, each task reads its rows only."""
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path))
    X, Y = as_data.synthetic_log_mel_clips(40, 3, frames=16, seed=0)
    np.save(tmp_path / "clips.npy", X)
    parts = make_partitions(34, 2, 10, seed=0, pool=np.arange(6, 34))  # rows 6..33, some unused: remapped in the task
    spec = teachers.TeacherSpec(batch_size=4, steps=2, eval_every=2, dropout=0.0)
    kw = dict(width_scale=32, head=(8,), seed=2, device="cpu")
    val = np.arange(0, 4)
    h_local, stamp, _ = pipeline.train_logmel_ensemble("resnet18", X, Y, parts, val, X[34:], Y[34:], spec, **kw)
    h_ray, stamp_ray, _ = pipeline.train_logmel_ensemble(
        "resnet18", str(tmp_path / "clips.npy"), Y, parts, val, X[34:], Y[34:], spec, **kw, backend="ray"
    )
    assert stamp_ray == stamp
    assert h_ray.equals(h_local)


# ------------------------------------------------------------------------------- faults
def _flaky_square(x, i, marker_dir):
    """Raises on the first attempt of shard 1 (a transient fault), squares otherwise."""
    marker = Path(marker_dir) / f"attempt-{i}"
    if i == 1 and not marker.exists():
        marker.write_text("first attempt")
        raise RuntimeError("transient fault on the first attempt")
    return {"y": np.asarray(x) ** 2 + i, "pid": os.getpid()}


def test_a_task_that_raises_once_is_retried_with_the_identical_result(local_ray, tmp_path):
    shards = [
        distributed.Shard(f"s{i}", {"i": i, "marker_dir": str(tmp_path)}, key=hash_inputs(test="retry", i=i))
        for i in range(3)
    ]
    shared = {"x": np.arange(5.0)}
    on_ray = distributed.map_shards(
        _flaky_square, shards, shared=shared, backend="ray", max_retries=1, cache_dir=tmp_path / "ray", progress=False
    )
    assert (tmp_path / "attempt-1").exists()  # the first attempt did raise
    local = distributed.map_shards(_flaky_square, shards, shared=shared, backend="local", cache_dir=tmp_path / "loc")
    for a, b in zip(on_ray, local):
        np.testing.assert_array_equal(a["y"], b["y"])
    assert [r["y"][0] for r in on_ray] == [0.0, 1.0, 2.0]  # shard order, not finishing order


def _fails_on_shard_2(x, i):
    if i == 2:
        raise ValueError("shard 2 cannot be computed")
    return {"y": np.asarray(x) * i}


def _must_not_rerun(x, i):
    if i != 2:
        raise AssertionError(f"shard {i} was cached and must not run again")
    return {"y": np.asarray(x) * i}


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_a_failed_shard_is_named_and_finished_shards_stay_cached(local_ray, tmp_path, backend):
    keys = [hash_inputs(test="failed shard", backend=backend, i=i) for i in range(4)]
    shards = [distributed.Shard(f"teachers {i}", {"i": i}, key=keys[i]) for i in range(4)]
    order = [0, 1, 3, 2] if backend == "local" else range(4)  # locally the loop stops at the failure
    shards = [shards[i] for i in order]
    with pytest.raises(distributed.ShardError, match=r"shard 'teachers 2' failed \(.*ValueError.*cannot be computed"):
        distributed.map_shards(
            _fails_on_shard_2,
            shards,
            shared={"x": np.ones(3)},
            backend=backend,
            max_retries=2,
            cache_dir=tmp_path,
            progress=False,
        )
    for i in (0, 1, 3):
        entry = load_cache_entry(distributed.shard_cache_path(keys[i], tmp_path))
        assert entry is not None and entry["result"]["y"].tolist() == [float(i)] * 3
    assert not distributed.shard_cache_path(keys[2], tmp_path).exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]  # no partial files
    assert len(list(tmp_path.glob("shard-*.pt"))) == 3
    # the rerun computes only the missing shard
    out = distributed.map_shards(
        _must_not_rerun, shards, shared={"x": np.ones(3)}, backend=backend, cache_dir=tmp_path, progress=False
    )
    assert [r["y"][0] for r in out] == [float(i) for i in order]


def test_bad_backend_and_plan_are_one_line_errors():
    with pytest.raises(ValueError, match="backend='spark'.*'local', 'ray'"):
        distributed.map_shards(_fails_on_shard_2, [], backend="spark")
    with pytest.raises(ValueError, match="teachers_per_task=0"):
        distributed.shard_ranges(5, 0)
    assert [list(r) for r in distributed.shard_ranges(5, 2)] == [[0, 1], [2, 3], [4]]
    assert distributed.shard_seed(7, 0, 1) == 7 and distributed.shard_seed(7, 0, 2) != distributed.shard_seed(7, 1, 2)


# --------------------------------------------------------------------------------------- start-up and addresses
def test_an_address_with_a_port_that_is_no_number_names_the_variable():
    with pytest.raises(ValueError, match=r"^RAY_ADDRESS=127\.0\.0\.1:abc: port 'abc' is not a port number"):
        distributed.check_reachable("127.0.0.1:abc")


class _FakeRay:
    """``ray.init`` that times out as Ray 2.60's does on a busy machine ``failures`` times, then starts."""

    def __init__(self, failures: int):
        self.failures, self.inits, self.shutdowns = failures, 0, 0

    def init(self, **kwargs):
        self.inits += 1
        if self.inits <= self.failures:
            raise Exception(
                "The current node timed out during startup. This could happen because some of the "
                "raylet failed to startup or the GCS has become overloaded."
            )

    def shutdown(self):
        self.shutdowns += 1

    def get_runtime_context(self):
        return type("Context", (), {"gcs_address": "127.0.0.1:6379"})()


def test_a_local_start_that_times_out_under_load_is_tried_again_with_more_time(monkeypatch, caplog):
    fake = _FakeRay(failures=distributed.START_ATTEMPTS - 1)
    for name in ("init", "shutdown", "get_runtime_context"):
        monkeypatch.setattr(ray, name, getattr(fake, name))
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in distributed.RAY_START_SETTINGS})
    with caplog.at_level("WARNING"):
        assert distributed._start_local(2, None) == "127.0.0.1:6379"
    assert fake.inits == distributed.START_ATTEMPTS and fake.shutdowns == distributed.START_ATTEMPTS - 1
    assert "did not start in time" in caplog.text and "trying again (2 of 3)" in caplog.text
    assert all(os.environ[name] == value for name, value in distributed.RAY_START_SETTINGS.items())


def test_a_local_start_that_never_comes_up_ends_in_one_clear_error(monkeypatch):
    fake = _FakeRay(failures=99)
    for name in ("init", "shutdown", "get_runtime_context"):
        monkeypatch.setattr(ray, name, getattr(fake, name))
    with pytest.raises(RuntimeError, match=r"did not start in 3 tries .* set RAY_ADDRESS to a running cluster"):
        distributed._start_local(2, None)
    assert fake.inits == distributed.START_ATTEMPTS
