"""Both teacher-ensemble families (:mod:`pate_study.learning.ensemble`) through one cached-or-train path.

:func:`cached_ensemble` and :func:`cached_module_ensemble` return a trained ensemble from :mod:`pate_study.core.cache`
or train and store it; :func:`cached_teacher_votes` and :func:`cached_module_votes` do the same for its votes on a set
of queries. Every entry is keyed by the data, the partitions, the configuration, the seed, the method, the cache's code
version and the resolved device, and is written to a temporary file, verified and renamed into place by the cache.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pate_study.core import cache
from pate_study.learning.ensemble import (
    EnsembleConfig,
    ModuleEnsemble,
    TeacherEnsemble,
    module_train_config,
    query_ensemble,
    train_ensemble,
    train_ensemble_loop,
    train_module_ensemble,
)
from pate_study.learning.partitions import Partitions
from pate_study.learning.train_config import TrainConfig
from pate_study.learning.voting import TeacherVotes, votes_from_probabilities

logger = logging.getLogger(__name__)


def _data_inputs(
    X: Any, y: Any, partitions: Partitions, seed: int, method: str, test: tuple[Any, Any] | None
) -> dict[str, Any]:
    """What every ensemble's key holds besides its model and training settings."""
    parts = dict(
        X=X,
        y=np.asarray(y),
        train=partitions.train,
        val=partitions.val,
        threshold=partitions.threshold,
        seed=int(seed),
        method=method,
    )
    if test is not None:
        parts["test"] = [np.asarray(test[0]), np.asarray(test[1])]
    return parts


def _cached_or_train(
    kind: str,
    inputs: dict[str, Any],
    device: str | torch.device | None,
    train: Callable[[], Any],
    from_state: Callable[[dict[str, Any]], Any],
    cache_dir: str | Path | None,
) -> tuple[Any, str]:
    """``(ensemble, key)``: the cached ensemble of ``kind`` for ``inputs`` on the resolved ``device``, or
    ``train()``'s, stored (:func:`pate_study.core.cache.cached`)."""
    key = cache.cache_key(kind, device=cache.resolved_device(device), **inputs)
    ens = cache.cached(kind, key, train, to_state=lambda e: e.state(), from_state=from_state, cache_dir=cache_dir)
    return ens, key


def _cached_votes(
    ensemble_key: str,
    queries: Any,
    compute: Callable[[], TeacherVotes],
    device: str | torch.device | None,
    cache_dir: str | Path | None,
) -> TeacherVotes:
    """The votes of the ensemble ``ensemble_key`` on ``queries``, cached like the ensemble."""
    key = cache.cache_key("votes", device=cache.resolved_device(device), ensemble=ensemble_key, queries=queries)
    n_queries = int(queries.shape[0])  # dense arrays and sparse TF-IDF matrices alike
    # [N, Q] (binary, multiclass) or [N, Q, L] (multilabel): the rank depends on the task, the query count does not
    expect = {name: cache.CacheExpectation((None, n_queries, ...)) for name in ("probabilities", "teacher_votes")}
    return cache.cached(
        "votes",
        key,
        compute,
        to_state=TeacherVotes.state,
        from_state=TeacherVotes.from_state,
        cache_dir=cache_dir,
        expect=expect,
        ensemble_key=ensemble_key,
    )


def _check_method(method: str) -> str:
    if method not in ("vectorised", "loop"):
        raise ValueError(f"method={method!r}: expected 'vectorised' or 'loop'")
    return method


def cached_ensemble(
    X: Any,
    y: Any,
    partitions: Partitions,
    config: EnsembleConfig,
    seed: int = 0,
    method: str = "vectorised",
    cache_dir: str | Path | None = None,
    device: str | torch.device | None = None,
    progress: bool = True,
    test: tuple[Any, Any] | None = None,
) -> tuple[TeacherEnsemble, str]:
    """Load the trained ensemble for these inputs from the cache, or train and store it.

    Returns ``(ensemble, key)``; ``method`` is "vectorised" or "loop" (part of the key, with the device).
    """
    train = train_ensemble if _check_method(method) == "vectorised" else train_ensemble_loop
    inputs = {**_data_inputs(X, y, partitions, seed, method, test), "config": config.to_dict()}
    return _cached_or_train(
        "ensemble",
        inputs,
        device,
        lambda: train(X, y, partitions, config, seed=seed, device=device, progress=progress, test=test),
        TeacherEnsemble.from_state,
        cache_dir,
    )


def cached_teacher_votes(
    X: Any,
    y: Any,
    partitions: Partitions,
    config: EnsembleConfig,
    queries: Any,
    seed: int = 0,
    method: str = "vectorised",
    cache_dir: str | Path | None = None,
    device: str | torch.device | None = None,
    progress: bool = True,
    test: tuple[Any, Any] | None = None,
) -> TeacherVotes:
    """Teacher votes (and per-teacher probabilities) on ``queries`` for the ensemble defined by (data,
    partitions, config, seed), training and querying only what is not already cached."""
    inputs = {**_data_inputs(X, y, partitions, seed, _check_method(method), test), "config": config.to_dict()}
    key = cache.cache_key("ensemble", device=cache.resolved_device(device), **inputs)

    def compute() -> TeacherVotes:
        ens, _ = cached_ensemble(X, y, partitions, config, seed, method, cache_dir, device, progress, test)
        return query_ensemble(ens, queries, device=device)

    return _cached_votes(key, queries, compute, device, cache_dir)


def _module_inputs(
    model_fn: Callable[[], torch.nn.Module],
    X: Any,
    y: Any,
    partitions: Partitions,
    task: str,
    config: TrainConfig,
    seed: int,
    vectorised: bool,
    test: tuple[Any, Any] | None,
) -> dict[str, Any]:
    return {
        **_data_inputs(np.asarray(X), y, partitions, seed, "vectorised" if vectorised else "loop", test),
        "architecture": repr(model_fn()),
        "task": task,
        "config": config.to_dict(),
    }


def cached_module_ensemble(
    model_fn: Callable[[], torch.nn.Module],
    X: Any,
    y: Any,
    partitions: Partitions,
    task: str,
    *,
    config: TrainConfig | None = None,
    seed: int = 0,
    vectorised: bool = True,
    test: tuple[Any, Any] | None = None,
    cache_dir: str | Path | None = None,
    device: str | torch.device | None = None,
    progress: bool = True,
    mixed_precision: bool | None = None,
    **training: Any,
) -> tuple[ModuleEnsemble, str]:
    """:func:`train_module_ensemble` through the cache; returns ``(ensemble, key)``. The key includes
    ``repr(model_fn())`` (the architecture), the data, partitions, training settings, seed, method and device."""
    cfg = module_train_config(task, config, training)
    inputs = _module_inputs(model_fn, X, y, partitions, task, cfg, seed, vectorised, test)
    return _cached_or_train(
        "modules",
        inputs,
        device,
        lambda: train_module_ensemble(
            model_fn,
            X,
            y,
            partitions,
            task,
            config=cfg,
            seed=seed,
            device=device,
            progress=progress,
            mixed_precision=mixed_precision,
            vectorised=vectorised,
            test=test,
        ),
        lambda state: ModuleEnsemble.from_state(state, model_fn),
        cache_dir,
    )


def cached_module_votes(
    model_fn: Callable[[], torch.nn.Module],
    X: Any,
    y: Any,
    partitions: Partitions,
    task: str,
    queries: Any,
    *,
    multilabel_vote_threshold: float = 0.5,
    cache_dir: str | Path | None = None,
    device: str | torch.device | None = None,
    **kw: Any,
) -> TeacherVotes:
    """Per-teacher probabilities and votes of a module ensemble on ``queries``, cached like
    :func:`cached_teacher_votes` (``kw``: :func:`cached_module_ensemble`'s settings)."""
    cfg = module_train_config(
        task,
        kw.pop("config", None),
        {k: kw.pop(k) for k in list(kw) if k in {f.name for f in dataclasses.fields(TrainConfig)}},
    )
    inputs = _module_inputs(
        model_fn, X, y, partitions, task, cfg, kw.get("seed", 0), kw.get("vectorised", True), kw.get("test")
    )
    key = cache.cache_key("modules", device=cache.resolved_device(device), **inputs)

    def compute() -> TeacherVotes:
        ens, _ = cached_module_ensemble(
            model_fn, X, y, partitions, task, config=cfg, cache_dir=cache_dir, device=device, **kw
        )
        return votes_from_probabilities(
            task, ens.probabilities(queries, device=device), ens.thresholds, multilabel_vote_threshold
        )

    return _cached_votes(f"{key}-vote{multilabel_vote_threshold!r}", queries, compute, device, cache_dir)
