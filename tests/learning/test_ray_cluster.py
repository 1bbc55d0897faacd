"""The Ray backend on a real two-node cluster on this machine (Ray's own test cluster, ray.cluster_utils.Cluster:
a head node and a second worker node, each its own raylet and object store, 1 CPU each, talking over this
machine's own address), and the bounded failure of a dead RAY_ADDRESS.

What a cluster adds over one local node, tested here: tasks spread over two nodes give the same votes as the local
backend; a worker node killed mid-run has its tasks retried on the other node, the shards finished before stay
cached and are not recomputed, and the result is identical; a task that fails for good raises ShardError naming
it, with the finished shards cached. The time from the kill to the retried shard's start is logged and recorded
(see docs/ray.md). Bounded: every run waits at most RUN_LIMIT_S; the module costs about a minute of CI time,
most of it starting the two nodes.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs the 'ray' extra: pip install -e '.[ray]'")
pytestmark = pytest.mark.ray
from ray.cluster_utils import Cluster  # noqa: E402 - only once importorskip found ray

from pate_study.core.io import hash_inputs, load_cache_entry  # noqa: E402 - only once importorskip found ray
from pate_study.experiments.audioset import data as as_data  # noqa: E402 - only once importorskip found ray
from pate_study.experiments.audioset import pipeline, teachers  # noqa: E402 - only once importorskip found ray
from pate_study.learning import distributed  # noqa: E402 - only once importorskip found ray
from pate_study.learning.partitions import make_partitions  # noqa: E402 - only once importorskip found ray

logger = logging.getLogger(__name__)
RUN_LIMIT_S = 180  # no map_shards call here may take longer (the machine may be shared and slow)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_args(**resources) -> dict:
    """One CPU, no dashboard, and the metrics agent's port given up front: the raylet then does not wait for the
    agent to write it (a wait that times out on a loaded machine and makes the node abort at start)."""
    return {"num_cpus": 1, "metrics_agent_port": _free_port(), **resources}


def _start_cluster():
    """Ray's test cluster with a head and a worker node, started as :func:`pate_study.learning.distributed._start_local`
    starts a local instance on a busy machine: Ray's longer start-up waits, and a start that times out (Ray 2.60
    waits a fixed 30 s for each node to register) shut down and tried again, up to ``START_ATTEMPTS`` times."""
    for name, value in distributed.RAY_START_SETTINGS.items():
        os.environ.setdefault(name, value)
    for attempt in range(1, distributed.START_ATTEMPTS + 1):
        c = Cluster()
        try:
            c.add_node(**_node_args(), include_dashboard=False)
            return c, c.add_node(**_node_args(resources={"second_node": 1}))
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for a start-up timeout
            c.shutdown()
            if attempt == distributed.START_ATTEMPTS or not distributed._is_start_timeout(exc):
                raise
            logger.warning("the test cluster did not start in time (%s): trying again", exc)
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def cluster():
    """A head node and a worker node; yields (cluster, worker node). This module's functions go by value."""
    if ray.is_initialized():
        ray.shutdown()
    c, worker = _start_cluster()
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        ray.init(address=c.address, logging_level=logging.WARNING)
        c.wait_for_nodes()
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        yield c, worker
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        ray.shutdown()
        c.shutdown()


def _bounded(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a thread, failing the test if it takes longer than RUN_LIMIT_S."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(RUN_LIMIT_S)
    assert not thread.is_alive(), f"the run took longer than {RUN_LIMIT_S} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def _marked_shard(x, i, marker_dir, seconds):
    """Records (node, start time) of every attempt, works ``seconds``, returns a value only ``x`` and ``i`` fix."""
    node = ray.get_runtime_context().get_node_id()
    Path(marker_dir, f"start-{i}-{time.time():.3f}-{node}").write_text("")
    time.sleep(seconds)
    return {"y": np.asarray(x) * (i + 1), "node": node}


# ------------------------------------------------------------------------------------------------ dead head
def test_a_dead_ray_address_fails_within_the_bound_naming_the_variable(monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT_S", 2.0)
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    was_up = ray.is_initialized()
    if was_up:
        pytest.skip("Ray is initialised in this process; connect() would reuse it")
    start = time.monotonic()
    with pytest.raises(
        ConnectionError,
        match=rf"^RAY_ADDRESS=127\.0\.0\.1:{port}: no Ray head node answers .* "
        r"within 2 s \(Connection refused\); start a head node",
    ):
        distributed.connect()
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("address", ["ray://127.0.0.1:{port}", "127.0.0.1:{port}"])
def test_check_reachable_is_bounded_for_both_address_forms(address):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(ConnectionError, match="address=.*no Ray head node answers"):
        distributed.check_reachable(address.format(port=port), label="address", timeout_s=1.0)
    assert time.monotonic() - start < 5


def test_an_unknown_host_fails_at_once():
    with pytest.raises(ConnectionError, match=r"RAY_ADDRESS=no-such-head\.invalid:6379: unknown host"):
        distributed.check_reachable("no-such-head.invalid:6379", timeout_s=30)


def test_a_live_address_passes_and_symbolic_ones_are_left_to_ray():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        distributed.check_reachable(f"127.0.0.1:{server.getsockname()[1]}", timeout_s=2)
    distributed.check_reachable("auto", timeout_s=0.1)
    distributed.check_reachable("local", timeout_s=0.1)


# ------------------------------------------------------------------------------------------------ equivalence
def test_same_votes_as_the_local_backend_with_tasks_on_both_nodes(cluster, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 8)).astype(np.float32)
    Y = (X @ rng.normal(size=(8, 4)) + rng.normal(scale=0.5, size=(240, 4))) > 0.5
    Y[:, 0] |= ~Y.any(1)
    parts = make_partitions(180, 4, 40, seed=1)
    spec = teachers.TeacherSpec(hidden=(8,), steps=4, eval_every=2, batch_size=8)
    inputs = as_data.EnsembleInputs(
        X[:200], Y[:200], parts, np.arange(180, 200), X[200:], Y[200:], 3, "tiny", np.arange(180)
    )
    kw = dict(curve_clips=10, teachers_per_task=1)
    local = pipeline.cached_ensemble_votes(inputs, spec, cache_dir=tmp_path / "local", **kw)
    on_cluster = _bounded(
        pipeline.cached_ensemble_votes, inputs, spec, cache_dir=tmp_path / "cluster", backend="ray", **kw
    )
    np.testing.assert_array_equal(on_cluster.probabilities, local.probabilities)
    np.testing.assert_array_equal(on_cluster.best_step, local.best_step)
    assert not np.array_equal(local.probabilities[0], local.probabilities[1])
    # the same plan's tasks do reach both nodes (two 1-CPU nodes, four 1-CPU tasks working at once)
    shards = [distributed.Shard(f"s{i}", {"i": i, "marker_dir": str(tmp_path), "seconds": 2.0}) for i in range(4)]
    results = _bounded(
        distributed.map_shards, _marked_shard, shards, shared={"x": np.ones(2)}, backend="ray", progress=False
    )
    assert len({r["node"] for r in results}) == 2


# ------------------------------------------------------------------------------------------------ faults
def _fails_for_good_on_shard_2(x, i):
    if i == 2:
        raise ValueError("shard 2 cannot be computed")
    return {"y": np.asarray(x) * i}


def test_a_task_failing_for_good_is_named_and_the_finished_shards_stay_cached(cluster, tmp_path):
    keys = [hash_inputs(test="cluster failure", i=i) for i in range(4)]
    shards = [distributed.Shard(f"teachers {i}", {"i": i}, key=keys[i]) for i in range(4)]
    with pytest.raises(distributed.ShardError, match=r"shard 'teachers 2' failed \(.*cannot be computed.*3 finished"):
        _bounded(
            distributed.map_shards,
            _fails_for_good_on_shard_2,
            shards,
            shared={"x": np.ones(3)},
            backend="ray",
            cache_dir=tmp_path,
            progress=False,
        )
    for i in (0, 1, 3):
        assert load_cache_entry(distributed.shard_cache_path(keys[i], tmp_path))["result"]["y"].tolist() == [i] * 3
    assert not distributed.shard_cache_path(keys[2], tmp_path).exists()


def test_a_worker_node_killed_mid_run_has_its_task_retried_elsewhere_with_the_identical_result(cluster, tmp_path):
    """Kill the second node while it runs a shard: Ray reschedules the shard on the head node (the task's
    retries cover a dead node), the shards finished before the kill are not run again, every result is the local
    one, and the time from the kill to the retry's start is recorded."""
    c, worker = cluster
    markers = tmp_path / "markers"
    markers.mkdir()
    keys = [hash_inputs(test="node killed", i=i) for i in range(4)]
    shards = [
        distributed.Shard(f"s{i}", {"i": i, "marker_dir": str(markers), "seconds": 3.0}, key=keys[i]) for i in range(4)
    ]
    shared = {"x": np.arange(3.0)}
    out: dict = {}
    runner = threading.Thread(
        target=lambda: out.update(
            result=distributed.map_shards(
                _marked_shard,
                shards,
                shared=shared,
                backend="ray",
                cache_dir=tmp_path / "cache",
                max_retries=2,
                progress=False,
            )
        ),
        daemon=True,
    )
    runner.start()
    deadline = time.monotonic() + RUN_LIMIT_S
    on_worker = []
    while not on_worker and time.monotonic() < deadline:
        on_worker = [p for p in markers.iterdir() if p.name.endswith(worker.node_id)]
        time.sleep(0.05)
    assert on_worker, "no shard started on the second node"
    killed_shard = int(on_worker[0].name.split("-")[1])
    killed_at = time.time()
    c.remove_node(worker, allow_graceful=False)
    runner.join(RUN_LIMIT_S)
    assert not runner.is_alive() and "result" in out, "the run did not finish after the node was killed"
    starts = sorted(p.name for p in markers.iterdir() if p.name.startswith(f"start-{killed_shard}-"))
    assert len(starts) == 2, starts  # the attempt on the killed node and the retry on the head
    retry_start = float(starts[-1].split("-")[2])
    rescheduled_s = retry_start - killed_at
    logger.warning("shard s%d rescheduled %.1f s after its node was killed", killed_shard, rescheduled_s)
    print(f"\nray rescheduling: shard s{killed_shard} restarted {rescheduled_s:.1f} s after its node was killed")
    assert 0 < rescheduled_s < RUN_LIMIT_S
    local = distributed.map_shards(
        _marked_shard,
        [distributed.Shard(s.name, {**s.args, "seconds": 0.0, "marker_dir": str(tmp_path)}) for s in shards],
        shared=shared,
        backend="local",
        progress=False,
    )
    for got, want in zip(out["result"], local):
        np.testing.assert_array_equal(got["y"], want["y"])
    finished_before = [
        i
        for i in range(4)
        if i != killed_shard and len([p for p in markers.iterdir() if p.name.startswith(f"start-{i}-")]) == 1
    ]
    assert len(finished_before) == 3  # nothing but the killed shard ran twice
    for key in keys:
        assert load_cache_entry(distributed.shard_cache_path(key, tmp_path / "cache")) is not None
    c.add_node(**_node_args(resources={"second_node": 1}))  # leave two nodes for any later test
