"""Run independent pieces of work (teacher shards, sweep points) in-process or on a Ray cluster.

The engine is **Ray** (https://docs.ray.io; ``pip install -e ".[ray]"``): tasks with resource requests,
retries and an object store. Nothing here schedules, retries or moves data by hand; this module only
decides *what* the pieces are and *where their results go*:

* :class:`Shard`: one piece of work, its keyword arguments (seeds and partitions are fixed here, before
  anything is scheduled), a display name for progress and errors, its size in ``units`` (teachers or
  sweep points, for the progress bar) and its ``key`` in the verified cache.
* :func:`map_shards`: ``fn(**shared, **shard.args)`` for every shard, results returned **in shard order**
  (never in finishing order), with ``backend="local"`` (a plain loop in this process: the default) or
  ``backend="ray"`` (one Ray task per shard requesting one GPU when ``device="cuda"`` -- or ``None``
  on a cluster with GPUs -- else ``cpus_per_task`` CPUs). The same shards give the same results on both backends.
* Cache: a shard with a ``key`` (made by :func:`pate_study.core.cache.cache_key`, which holds the resolved device) is
  looked up in the verified cache (:mod:`pate_study.core.cache`) before scheduling,
  and its result is written there by the **driver** as soon as it arrives (:func:`pate_study.core.cache.store`:
  temporary file + rename, SHA-256 sidecar written last), so the cache never holds a partial entry, a retried
  task never writes twice, the workers need no write access to the cache, and a run that fails keeps every
  finished shard for the rerun.
* Faults: Ray retries a task whose worker died (killed, out of memory) up to ``max_retries`` times, and one
  that raised one of ``retry_exceptions`` (transient errors: ``RuntimeError`` covers CUDA out-of-memory,
  ``OSError`` lost files/connections). Bad input (``ValueError``, ``TypeError``) is not retried. A shard that
  still fails makes the run raise :class:`ShardError` naming it, after the other running shards finished and
  were cached.
* Data: ``shared`` values (the same for every shard) go through Ray's object store once (``ray.put``) --
  right for the embedding studies (a few MB of 128-d features). Large inputs (the log-Mel clips of the
  thesis's setting, ~280 GB as float32) must not: pass a **path** on storage every node can read (str or
  ``os.PathLike`` values are passed as they are, and the shard function opens them, e.g. ``numpy.load(...,
  mmap_mode="r")``). The cache folder is the driver's (``$PATE_STUDY_CACHE``).
* Cluster: ``address`` (or ``$RAY_ADDRESS``) connects to an existing cluster (``ray start --head``, KubeRay;
  ``ray://HEAD:10001`` needs the ``ray`` extra, which brings ``ray[client]``; see docs/ray.md); an address where
  nothing answers fails within :data:`CONNECT_TIMEOUT_S` (30 s) naming the variable. Without an address a local
  instance is started on 127.0.0.1 without dashboard and stopped at exit.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from pate_study.core import cache
from pate_study.core.io import default_cache_dir

logger = logging.getLogger(__name__)

__all__ = [
    "BACKENDS",
    "CONNECT_TIMEOUT_S",
    "RETRY_EXCEPTIONS",
    "Shard",
    "ShardError",
    "check_backend",
    "check_reachable",
    "connect",
    "local_ray",
    "shard_ranges",
    "shard_seed",
    "shard_cache_path",
    "map_shards",
]

BACKENDS = ("local", "ray")
#: how long :func:`connect` waits for a cluster address to accept connections before it fails
CONNECT_TIMEOUT_S = 30.0
# transient failures worth a retry (CUDA out-of-memory is a RuntimeError; lost files or connections OSError)
RETRY_EXCEPTIONS: tuple[type[BaseException], ...] = (RuntimeError, OSError, MemoryError)


@dataclass(frozen=True)
class Shard:
    """One independent piece of work: ``fn(**shared, **args)``; ``name`` appears in progress and errors,
    ``units`` is its size for the progress bar (teachers, sweep points), ``key`` its cache key (None: not cached)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    units: int = 1
    key: str | None = None


class ShardError(RuntimeError):
    """A shard failed for good (after Ray's retries); the message names it and says what stayed cached."""


def check_backend(backend: str) -> str:
    """``backend`` unchanged, or a one-line ValueError saying what is allowed and how to install Ray."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: expected one of {BACKENDS} ('ray' needs `pip install -e \".[ray]\"`)")
    return backend


def shard_ranges(n_items: int, per_shard: int | None) -> list[range]:
    """Consecutive index ranges of at most ``per_shard`` items (None: one range of all ``n_items``)."""
    if n_items < 1:
        raise ValueError(f"n_items={n_items}: expected at least one item to shard")
    if per_shard is None:
        return [range(n_items)]
    if int(per_shard) != per_shard or per_shard < 1:
        raise ValueError(f"teachers_per_task={per_shard!r}: expected a positive integer or None (all in one task)")
    return [range(a, min(a + int(per_shard), n_items)) for a in range(0, n_items, int(per_shard))]


def shard_seed(seed: int, index: int, n_shards: int) -> int:
    """Seed of shard ``index`` of ``n_shards``: ``seed`` itself for a single shard (so one shard is exactly the
    unsharded computation), else a 32-bit draw of ``numpy.random.SeedSequence([seed, index])`` -- fixed by
    (seed, shard plan) alone, never by the backend, the number of workers or the order tasks finish in."""
    if n_shards == 1:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1)[0])


def shard_cache_path(key: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Where the verified cache keeps the result of the shard with ``key``."""
    return cache.entry_path("shard", key, cache_dir)


# --------------------------------------------------------------------------------------------
# connecting
# --------------------------------------------------------------------------------------------
def connect(address: str | None = None, *, num_cpus: int | None = None, num_gpus: int | None = None) -> str:
    """Connect to Ray once per process and return the address in use.

    ``address`` or ``$RAY_ADDRESS`` (e.g. ``"ray://head:10001"`` or ``"head:6379"``): an existing cluster.
    Neither: a local instance on 127.0.0.1 without dashboard (``num_cpus``/``num_gpus``: its resources;
    default: the machine's). An already initialised Ray (a test's, a notebook's) is reused as it is.
    """
    try:
        import ray  # optional dependency (extra "ray"): imported only when backend="ray" is used
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("backend='ray' needs Ray: pip install -e \".[ray]\" (or pip install 'ray>=2.9')") from exc
    if ray.is_initialized():
        return ray.get_runtime_context().gcs_address
    label = "address" if address else "RAY_ADDRESS"
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        check_reachable(address, label=label, timeout_s=CONNECT_TIMEOUT_S)
        logger.info("connecting to the Ray cluster at %s", address)
        try:
            ray.init(address=address, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as exc:  # wrong kind of server, version mismatch
            raise ConnectionError(
                f"{label}={address}: Ray could not connect ({_first_line(exc)}); {_CONNECT_FIX.format(label=label)}"
            ) from exc
        return ray.get_runtime_context().gcs_address
    return _start_local(num_cpus, num_gpus)


_CONNECT_FIX = (
    "start a head node there (`ray start --head`, docs/ray.md), point {label} at a running one, "
    "or unset it to run on a local instance"
)


def _host_port(address: str, label: str = "RAY_ADDRESS") -> tuple[str, int] | None:
    """``(host, port)`` of a cluster address (``ray://host:10001``, ``host:6379``, ``[::1]:6379``), or None for
    Ray's symbolic addresses (``auto``, ``local``) that name no socket; ValueError naming ``label`` (the
    variable or argument the address came from) when the port is not a number from 1 to 65535."""
    rest = address.split("://", 1)[1] if "://" in address else address
    if rest in ("auto", "local") or ":" not in rest:
        return None
    host, _, port = rest.rpartition(":")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(
            f"{label}={address}: port {port!r} is not a port number (1 to 65535); expected host:port "
            "or ray://host:port, e.g. 127.0.0.1:6379"
        )
    return host.strip("[]"), int(port)


def check_reachable(address: str, *, label: str = "RAY_ADDRESS", timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fail within ``timeout_s`` when nothing accepts connections at a cluster address.

    ``ray.init`` on an address where no head node runs retries without end ("Failed to connect to GCS"), and
    ignores SIGTERM while it does; a plain TCP connection tried here first (again every half second until the
    deadline, for a head node that is still starting) turns that into one ConnectionError naming ``label``
    (``RAY_ADDRESS`` when the address came from the environment), the address and the fix.
    """
    target = _host_port(address, label)
    if target is None:
        return
    deadline = time.monotonic() + timeout_s
    reason = "no answer"
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection(target, timeout=max(0.1, min(5.0, left))):
                return
        except socket.gaierror as exc:
            raise ConnectionError(
                f"{label}={address}: unknown host {target[0]!r} ({exc.strerror}); {_CONNECT_FIX.format(label=label)}"
            ) from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
        if time.monotonic() + 0.5 >= deadline:
            raise ConnectionError(
                f"{label}={address}: no Ray head node answers at {target[0]}:{target[1]} within "
                f"{timeout_s:g} s ({reason}); {_CONNECT_FIX.format(label=label)}"
            )
        time.sleep(0.5)


#: Ray's own settings (``RAY_<name>`` environment variables, read by its processes at start-up) given more time
#: than Ray's defaults for a local instance on a busy machine, unless the environment sets them already: how long
#: the raylet may take to register with the GCS (Ray's ``raylet_start_wait_time_s``) and a worker process to
#: register with its raylet (``worker_register_timeout_seconds``, default 60 s).
RAY_START_SETTINGS = {"RAY_raylet_start_wait_time_s": "120", "RAY_worker_register_timeout_seconds": "180"}
#: How many times a local instance is started before :func:`_start_local` gives up. Ray 2.60's ``ray.init`` waits a
#: fixed 30 s for the new node to appear in the GCS (``ray/_private/node.py``, not configurable): under a load of
#: 5-8 on two cores that wait ran out while the node was still starting, so a timed-out start is tried again.
START_ATTEMPTS = 3


def _start_local(num_cpus: int | None, num_gpus: int | None) -> str:
    """``ray.init`` of a local instance: no dashboard, node address 127.0.0.1 requested (Ray 2.60 maps it to the
    machine's address, ``services.resolve_ip_for_localhost``; its token authentication guards the ports), with
    :data:`RAY_START_SETTINGS`; a start that times out (a busy machine) is shut down and tried again, up to
    :data:`START_ATTEMPTS` times, each with a warning; then a RuntimeError says what happened and what to do."""
    import ray  # optional dependency (extra "ray"): imported only when backend="ray" is used

    for name, value in RAY_START_SETTINGS.items():
        os.environ.setdefault(name, value)
    for attempt in range(1, START_ATTEMPTS + 1):
        logger.info("starting a local Ray instance (no dashboard)")
        try:
            ray.init(
                address="local",
                num_cpus=num_cpus,
                num_gpus=num_gpus,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                logging_level=logging.WARNING,
            )
            return ray.get_runtime_context().gcs_address
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for a start-up timeout
            if not _is_start_timeout(exc):
                raise
            ray.shutdown()  # the half-started processes
            if attempt == START_ATTEMPTS:
                raise RuntimeError(
                    f"a local Ray instance did not start in {START_ATTEMPTS} tries (each time its "
                    f"node did not register within Ray's wait: {_first_line(exc)}); the machine is "
                    "probably too busy: try again when it is quieter, or set RAY_ADDRESS to a "
                    "running cluster"
                ) from exc
            logger.warning(
                "the local Ray instance did not start in time (%s); the machine is busy: trying again (%d of %d)",
                _first_line(exc),
                attempt + 1,
                START_ATTEMPTS,
            )
    raise AssertionError("unreachable")


def _is_start_timeout(exc: BaseException) -> bool:
    """Whether ``ray.init`` failed because the new node was slow to start (Ray's messages of 2.x), not for a
    reason a retry cannot fix."""
    text = str(exc)
    return isinstance(exc, TimeoutError) or "timed out during startup" in text or "Timed out after" in text


@contextmanager
def local_ray(num_cpus: int | None = 2, num_gpus: int | None = None) -> Iterator[str]:
    """A fresh local Ray instance for the duration of a ``with`` block (tests, benchmarks), whatever
    ``$RAY_ADDRESS`` says; yields its address (give it to other processes as ``RAY_ADDRESS``) and shuts it down."""
    import ray  # optional dependency (extra "ray"): imported only when backend="ray" is used

    if ray.is_initialized():
        raise RuntimeError("local_ray: Ray is already initialised in this process; call ray.shutdown() first")
    address = _start_local(num_cpus, num_gpus)
    try:
        yield address
    finally:
        ray.shutdown()


# --------------------------------------------------------------------------------------------
# payloads: what a shard returns and the cache stores (torch.load(weights_only=True) reads it back)
# --------------------------------------------------------------------------------------------
def _to_state(obj: Any) -> Any:

    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj)) if obj.dtype != object else [_to_state(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _to_state(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_state(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _from_state(obj: Any) -> Any:

    if isinstance(obj, torch.Tensor):
        return obj.numpy()
    if isinstance(obj, dict):
        return {k: _from_state(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_from_state(v) for v in obj]
    return obj


def _run_shard(fn: Callable[..., Any], args: dict[str, Any], **shared: Any) -> Any:
    """What a task runs: the shard function on the shared inputs and its own arguments (``shared`` are
    top-level keyword arguments, so Ray resolves their object references before the call). Arrays from
    the object store are read-only views; the shard functions never write into their inputs, so torch's
    warning about non-writable arrays is silenced here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable", category=UserWarning)
        return _to_state(fn(**shared, **args))


# --------------------------------------------------------------------------------------------
# mapping
# --------------------------------------------------------------------------------------------
def map_shards(
    fn: Callable[..., Any],
    shards: Sequence[Shard],
    *,
    shared: dict[str, Any] | None = None,
    backend: str = "local",
    address: str | None = None,
    device: str | None = "cpu",
    cpus_per_task: float = 1,
    max_retries: int = 2,
    retry_exceptions: Sequence[type[BaseException]] | bool = RETRY_EXCEPTIONS,
    cache_dir: str | os.PathLike | None = None,
    desc: str = "shards",
    progress: bool = True,
) -> list[Any]:
    """``fn(**shared, **shard.args)`` for every shard; results in shard order (arrays as numpy arrays).

    ``fn`` must return nested dicts/lists of arrays, numbers and strings (what the cache can hold) and
    must be importable by the workers (a module-level function of an installed package). See the module
    docstring for backends, resources, retries, caching and data placement.
    """
    check_backend(backend)
    shared = dict(shared or {})
    names = [s.name for s in shards]
    if len(set(names)) != len(names):
        raise ValueError(f"shards: names must be unique (they name the shard in errors), got {names}")
    results: list[Any] = [None] * len(shards)
    todo = []
    for i, s in enumerate(shards):
        state = cache.load("shard", s.key, cache_dir) if s.key else None
        if state is not None:
            results[i] = _from_state(state["result"])
        else:
            todo.append(i)
    total = sum(s.units for s in shards)
    bar = tqdm(total=total, initial=total - sum(shards[i].units for i in todo), desc=desc, disable=not progress)

    def finish(i: int, state: Any, seconds: float) -> None:
        s = shards[i]
        if s.key:
            cache.store("shard", s.key, {"result": state}, cache_dir, name=s.name, seconds=round(seconds, 3))
        results[i] = _from_state(state)
        bar.update(s.units)

    failed: list[tuple[str, BaseException]] = []
    start = time.perf_counter()
    try:
        if backend == "local":
            for i in todo:
                t0 = time.perf_counter()
                try:
                    state = _run_shard(fn, shards[i].args, **shared)
                except Exception as exc:  # noqa: BLE001 - re-raised below with the shard's name
                    failed.append((shards[i].name, exc))
                    break
                finish(i, state, time.perf_counter() - t0)
        elif todo:
            failed = _map_ray(
                fn,
                shards,
                todo,
                shared,
                finish,
                address=address,
                device=device,
                cpus_per_task=cpus_per_task,
                max_retries=max_retries,
                retry_exceptions=retry_exceptions,
            )
    finally:
        bar.close()
    if failed:
        done = sum(r is not None for r in results)
        where = (
            f"; the {done} finished shard(s) are cached in {Path(cache_dir or default_cache_dir())}, rerun to resume"
            if any(s.key for s in shards)
            else ""
        )
        name, exc = failed[0]
        raise ShardError(
            f"{desc}: shard {name!r} failed ({type(exc).__name__}: {_first_line(exc)})"
            + (f" and {len(failed) - 1} more: {[n for n, _ in failed[1:]]}" if len(failed) > 1 else "")
            + where
        ) from exc
    logger.info(
        "%s: %d shard(s) on backend %s in %.1f s (%d from the cache)",
        desc,
        len(shards),
        backend,
        time.perf_counter() - start,
        len(shards) - len(todo),
    )
    return results


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "cause", None) or exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def _map_ray(
    fn: Callable[..., Any],
    shards: Sequence[Shard],
    todo: list[int],
    shared: dict[str, Any],
    finish: Callable[[int, Any, float], None],
    *,
    address: str | None,
    device: str | None,
    cpus_per_task: float,
    max_retries: int,
    retry_exceptions: Sequence[type[BaseException]] | bool,
) -> list[tuple[str, BaseException]]:
    """Submit one Ray task per shard in ``todo``, collect them as they finish (``ray.wait``), hand each result
    to ``finish`` (cache + progress); returns the shards that failed for good with their errors."""
    import ray  # optional dependency (extra "ray"): imported only when backend="ray" is used

    connect(address)
    # the same inputs for every shard: into the object store once (paths stay paths: big data is read by the task)
    refs = {
        k: (v if isinstance(v, (str, os.PathLike, int, float, bool, type(None))) else ray.put(v))
        for k, v in shared.items()
    }
    if device is None:  # "choose": a GPU per task where the cluster has GPUs
        device = "cuda" if ray.cluster_resources().get("GPU", 0) >= 1 else "cpu"
    resources = {"num_gpus": 1} if str(device).startswith("cuda") else {"num_cpus": cpus_per_task}
    retry = list(retry_exceptions) if not isinstance(retry_exceptions, bool) else retry_exceptions
    task = ray.remote(max_retries=max_retries, retry_exceptions=retry, **resources)(_run_shard)
    pending = {}
    for i in todo:
        pending[task.options(name=f"pate_study: {shards[i].name}").remote(fn, shards[i].args, **refs)] = (
            i,
            time.perf_counter(),
        )
    failed = []
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            i, t0 = pending.pop(ref)
            try:
                state = ray.get(ref)
            except (ray.exceptions.RayTaskError, ray.exceptions.RayError) as exc:
                logger.error("shard %s failed for good: %s", shards[i].name, _first_line(exc))
                failed.append((shards[i].name, exc))
                continue
            finish(i, state, time.perf_counter() - t0)
    return failed
