"""The votes: every teacher's probabilities on the eval clips, the one array notebook 05 reads (Muschiol 2021
§4.2, Definition 10).

An ensemble is trained once, by one stacked call (:func:`.teachers.train_teachers`); its probabilities on the
subset's eval clips (``float32 [T, n_eval, C]``) and the selected step of every teacher are cached here
(:mod:`pate_study.core.cache`, kind :data:`VOTES_KIND`), keyed by what determines them (:func:`votes_key`: data,
partitions, validation rows, recipe, seed, curve sample, shard plan; the code version and the resolved device come
with every key of :mod:`pate_study.core.cache`). Notebook 04 stores them when it trains its ensembles; notebook 05 asks
for the same key and so reads 04's teachers, or trains them through the same call when run alone
(:func:`.pipeline.ensemble_votes`).

On a Ray cluster with ``device=None`` the device part of the key is :data:`pate_study.core.cache.CLUSTER_CHOICE` (the
cluster decides per task), not the device the tasks got: a Ray run and a local run never share an entry.

:class:`CachedVotes` is that array cut into the query pool and the test set (:func:`.data.query_test_split`),
with the true labels; everything of notebook 05 runs offline on it.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pate_study.core import cache

logger = logging.getLogger(__name__)

#: the cache kind of an ensemble's votes
VOTES_KIND = "audioset-votes"


@dataclasses.dataclass(frozen=True)
class EnsembleVotes:
    """What the cache holds for one ensemble: ``probabilities`` float32 ``[T, n_clips, C]`` (every teacher on every
    eval clip, at its selected checkpoint) and ``best_step`` int64 ``[T]``."""

    probabilities: np.ndarray
    best_step: np.ndarray


def votes_key(
    X: np.ndarray,
    Y: np.ndarray,
    partitions: Any,
    val: np.ndarray,
    X_test: np.ndarray,
    Y_test: np.ndarray,
    spec: Any,
    *,
    seed: int,
    curve_clips: int,
    last: bool = False,
    device: str | None = None,
    backend: str = "local",
    teachers_per_task: int | None = None,
    train_seeds: np.ndarray | None = None,
    replicate: int | None = None,
) -> str:
    """The cache key of the votes of :func:`.teachers.train_teachers` with these arguments: every input that
    changes the probabilities (the shard plan ``teachers_per_task`` too: the teachers of a shard share one
    stack's random streams), the code version and the resolved device (:func:`pate_study.core.cache.resolved_device`:
    ``device`` as training resolves it; on Ray with ``device=None`` the cluster's choice). Replicate ensembles
    trained as one stack (:class:`.pipeline.ReplicateStack`): ``partitions``, ``val`` (one row per teacher) and
    ``train_seeds`` are the whole stack's, ``replicate`` the ensemble's place in it (each ensemble has its own
    entry); both None for an ensemble trained alone (the keys as before replicates)."""
    stacked = {} if train_seeds is None else {"train_seeds": np.asarray(train_seeds, dtype=np.uint32)}
    if replicate is not None:
        stacked["replicate"] = int(replicate)
    return cache.cache_key(
        VOTES_KIND,
        device=cache.resolved_device(device, backend),
        X=np.asarray(X),
        Y=np.asarray(Y),
        train=np.asarray(partitions.train, dtype=np.int64),
        val=np.asarray(val, dtype=np.int64),
        X_test=np.asarray(X_test),
        Y_test=np.asarray(Y_test),
        spec=repr(spec),
        seed=int(seed),
        curve_clips=int(curve_clips),
        last=bool(last),
        teachers_per_task=teachers_per_task,
        **stacked,
    )


def load_votes(
    key: str, n_teachers: int, n_clips: int, n_labels: int, cache_dir: str | Path | None = None
) -> EnsembleVotes | None:
    """The cached votes of ``key`` (checked against the declared shapes and dtypes), or None."""
    state = cache.load(
        VOTES_KIND,
        key,
        cache_dir,
        expect={
            "probabilities": cache.CacheExpectation((n_teachers, n_clips, n_labels), "float32"),
            "best_step": cache.CacheExpectation((n_teachers,), "int64"),
        },
    )
    if state is None:
        return None
    logger.info("loaded cached votes %s", cache.entry_path(VOTES_KIND, key, cache_dir))
    return EnsembleVotes(state["probabilities"].numpy(), state["best_step"].numpy())


def store_votes(key: str, votes: EnsembleVotes, cache_dir: str | Path | None = None, name: str = "") -> Path:
    """Write the votes of ``key`` (atomically, verified: :func:`pate_study.core.cache.store`)."""
    payload = {
        "probabilities": torch.from_numpy(np.ascontiguousarray(votes.probabilities, dtype=np.float32)),
        "best_step": torch.from_numpy(np.asarray(votes.best_step, dtype=np.int64)),
    }
    return cache.store(VOTES_KIND, key, payload, cache_dir, name=name)


@dataclasses.dataclass(frozen=True)
class CachedVotes:
    """Per-teacher probabilities on the query pool and the test set, with the true labels.

    ``pool_probabilities`` ``float[T, n_pool, L]``, ``pool_labels`` ``bool[n_pool, L]``,
    ``test_probabilities`` ``float[T, n_test, L]``, ``test_labels`` ``bool[n_test, L]``;
    ``train_label_rate`` ``float[L]``: label frequencies of the teachers' training data (class prior).
    """

    pool_probabilities: np.ndarray
    pool_labels: np.ndarray
    test_probabilities: np.ndarray
    test_labels: np.ndarray
    train_label_rate: np.ndarray
    class_names: tuple[str, ...]
    data: str

    def __post_init__(self) -> None:
        check_probabilities(self.pool_probabilities, "pool_probabilities")
        check_probabilities(self.test_probabilities, "test_probabilities")
        for name, p, y in (
            ("pool", self.pool_probabilities, self.pool_labels),
            ("test", self.test_probabilities, self.test_labels),
        ):
            if np.shape(y) != p.shape[1:]:
                raise ValueError(f"{name}_labels: expected shape {p.shape[1:]} (queries x labels), got {np.shape(y)}")
        if self.pool_probabilities.shape[0] != self.test_probabilities.shape[0]:
            raise ValueError("test_probabilities: expected the same number of teachers as pool_probabilities")

    @property
    def n_teachers(self) -> int:
        """Number of teachers T."""
        return int(self.pool_probabilities.shape[0])


def check_probabilities(probabilities: Any, name: str = "probabilities") -> np.ndarray:
    """Validate per-teacher probabilities ``[n_teachers, n_queries, n_labels]``: finite, in [0, 1]."""
    arr = np.asarray(probabilities)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name}: expected a numeric array [n_teachers, n_queries, n_labels], got dtype {arr.dtype}")
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(
            f"{name}: expected a non-empty 3-D array [n_teachers, n_queries, n_labels], got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: found NaN or inf; expected teacher probabilities in [0, 1]")
    if arr.min() < 0 or arr.max() > 1:
        raise ValueError(
            f"{name}: values in [{arr.min():.3g}, {arr.max():.3g}]; expected probabilities in [0, 1] "
            f"(apply a sigmoid to logits first)"
        )
    return arr


def split_votes(
    votes: EnsembleVotes,
    labels: np.ndarray,
    pool: np.ndarray,
    test: np.ndarray,
    train_label_rate: np.ndarray,
    class_names,
    data: str,
) -> CachedVotes:
    """An ensemble's votes on the eval clips cut into the query pool (rows ``pool``) and the test set (``test``),
    with the true ``labels`` of the eval clips (clipped to [0, 1] in float64, as the aggregators read them)."""
    p = np.clip(np.asarray(votes.probabilities, dtype=np.float64), 0.0, 1.0)
    labels = np.asarray(labels)
    return CachedVotes(
        p[:, pool], labels[pool], p[:, test], labels[test], np.asarray(train_label_rate), tuple(class_names), data
    )


def synthetic_teacher_probabilities(
    labels: np.ndarray,
    n_teachers: int,
    *,
    skill: float = 2.0,
    prior_logit: float = -2.5,
    teacher_noise: float = 1.0,
    shared_noise: float = 1.5,
    seed: int = 0,
) -> np.ndarray:
    """Synthetic stand-in teachers: sigmoid(prior + skill·y + e + N(0, teacher_noise²)) per teacher and label,
    with e ~ N(0, shared_noise²) shared by all teachers (the hard clips every teacher gets wrong, so that
    averaging does not make a large ensemble perfect). ``skill`` falls with the partition size in real
    ensembles; the notebook stamps outputs from these as synthetic.
    """
    rng = np.random.default_rng(seed)
    y = np.asarray(labels, dtype=np.float64)
    shared = rng.normal(0.0, shared_noise, size=y.shape)
    logits = prior_logit + skill * y[None] + shared[None] + rng.normal(0.0, teacher_noise, size=(n_teachers,) + y.shape)
    return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)


def synthetic_votes(
    n_teachers: int,
    *,
    n_pool: int = 1200,
    n_test: int = 600,
    n_labels: int = 30,
    mean_labels: float = 2.0,
    seed: int = 0,
) -> CachedVotes:
    """A synthetic :class:`CachedVotes` (Zipf label frequencies, ~``mean_labels`` labels per query);
    skill falls with T as ``2.4 / T**0.15`` (bigger ensembles, smaller partitions)."""
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, n_labels + 1)
    p = np.minimum(0.9, freq * mean_labels / freq.sum())

    def labels(n: int) -> np.ndarray:
        y = rng.random((n, n_labels)) < p
        y[np.arange(n), rng.choice(n_labels, size=n, p=freq / freq.sum())] = True
        return y

    pool, test = labels(n_pool), labels(n_test)
    skill = 2.4 / n_teachers**0.15
    return CachedVotes(
        synthetic_teacher_probabilities(pool, n_teachers, skill=skill, seed=seed + 1),
        pool,
        synthetic_teacher_probabilities(test, n_teachers, skill=skill, seed=seed + 2),
        test,
        p.astype(np.float64),
        tuple(f"class {i}" for i in range(n_labels)),
        "synthetic",
    )


def vote_fractions(probabilities: Any, vote: str = "probability") -> np.ndarray:
    """Averaged vote m = (1/T) Σ_t f_t (Muschiol Definition 10): of probabilities, or of 0/1 votes at 0.5."""
    p = check_probabilities(probabilities)
    if vote not in ("probability", "binary"):
        raise ValueError(f"vote={vote!r}: expected 'probability' (Definition 10) or 'binary' (votes at 0.5)")
    if vote == "binary":
        return (p >= 0.5).mean(0, dtype=np.float64)
    return p.mean(0, dtype=np.float64)
