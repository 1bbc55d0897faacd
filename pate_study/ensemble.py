"""Teacher ensembles trained and queried as one batched computation.

PATE (Papernot et al. 2017, §2) trains ``N`` teachers on disjoint partitions of the private
data and releases only noisy aggregates of their votes. The sources trained the teachers one
by one (Sosa 2021 Algorithm 3: 250 networks on four GPUs). Here all ``N`` multilayer
perceptrons are held as stacked parameters ``W_l: [N, in, out]``, ``b_l: [N, 1, out]`` and a
training step for all teachers is a handful of batched matmuls (``torch.baddbmm``) plus one
fused Adam step over the stacked tensors. Adam is elementwise, so each teacher's slice is
updated exactly as if it had its own optimiser.

Each teacher ``i`` has

* its own disjoint partition (``Partitions.train[i]``), validation split (``Partitions.val[i]``,
  for early stopping) and threshold split (``Partitions.threshold[i]``, Sosa's 800 held-out
  samples used to pick a Youden threshold for binary tasks);
* its own initialisation and shuffling seeds, derived from ``(seed, i)`` with
  ``numpy.random.SeedSequence(seed).spawn(N)`` so that the plain loop (:func:`train_ensemble_loop`)
  and the vectorised path (:func:`train_ensemble`) start from the same weights and see the same
  batches, and therefore produce the same votes up to floating-point tolerance.

Per-teacher early stopping (patience on the teacher's own validation loss): the best-so-far
parameters of each teacher are kept (masked copy of its slice); a teacher that has gone
``patience`` epochs without improvement is removed from the stack (its parameters and Adam state
are compacted away), so stopped teachers cost nothing. Dropout masks in the vectorised path come
from one generator for the whole stack, so the loop/vectorised agreement holds for ``dropout=0``.

Sparse TF-IDF input: with ``sparse_input=True`` the first layer is computed with
``torch.nn.functional.embedding_bag`` over the non-zero entries of each row (per-sample weights =
TF-IDF values), which replaces the ``[B, 500] x [500, 512]`` dense product by ``nnz x 512`` work.

Other architectures (the log-Mel ResNet, the embedding MLP): :func:`train_module_ensemble` stacks
any ``nn.Module`` with ``torch.func.stack_module_state`` and runs one ``vmap``-ed step for all
teachers (BatchNorm running statistics are per-teacher buffers), with the same seeds, batches
and early-stopping rule, and a plain-loop mode as reference.

The vote array is the interface to :mod:`pate_study.privacy` (see :class:`TeacherVotes`).
Trained ensembles and their outputs are cached on disk (:func:`cached_teacher_votes`), keyed by a
SHA-256 of data, partitions, configuration, seed and method; every entry has a JSON sidecar with
the SHA-256 of its payload, and an entry that fails verification is discarded and recomputed.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_curve
from tqdm.auto import tqdm

from pate_study.device import autocast, choose_device, tune_cpu_allocator
from pate_study.io import atomic_write, atomic_write_text, sha256_file

logger = logging.getLogger(__name__)

__all__ = [
    "TASKS", "EnsembleConfig", "Partitions", "make_partitions", "teacher_seeds", "init_stacked_params",
    "TeacherEnsemble", "TeacherVotes", "train_ensemble", "train_ensemble_loop", "query_ensemble",
    "youden_threshold", "vote_counts", "default_cache_dir", "hash_inputs", "save_cache_entry",
    "load_cache_entry", "cached_ensemble", "cached_teacher_votes", "CACHE_FORMAT", "ModuleEnsemble",
    "train_module_ensemble", "votes_from_probabilities", "copy_module_to_meta", "EarlyStopping",
    "record_stacked_losses",
]

TASKS = ("binary", "multiclass", "multilabel")
CACHE_FORMAT = 1  # bump when the training algorithm changes what a cached entry means


# --------------------------------------------------------------------------------------------
# configuration and partitions
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EnsembleConfig:
    """Architecture and training settings shared by all teachers of an ensemble.

    ``task``: "binary" (one logit, votes after a per-teacher threshold), "multiclass"
    (``n_outputs`` logits, vote = argmax) or "multilabel" (``n_outputs`` independent logits).
    Defaults follow Sosa (2021): 500 TF-IDF inputs, 500-512-128-1 (322,305 parameters).
    Learning rate, batch size and patience are not stated in the sources (documented choices).
    """

    task: str = "binary"
    in_features: int = 500
    n_outputs: int = 1
    hidden: tuple[int, ...] = (512, 128)
    dropout: float = 0.0
    lr: float = 1e-3
    weight_decay: float = 0.0
    batch_size: int = 128
    max_epochs: int = 20
    patience: int = 3
    sparse_input: bool = False
    multilabel_vote_threshold: float = 0.5

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task={self.task!r}: expected one of {TASKS}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        for name in ("in_features", "n_outputs", "batch_size", "max_epochs", "patience"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name}={v!r}: expected a positive integer")
        if any(h < 1 for h in self.hidden):
            raise ValueError(f"hidden={self.hidden!r}: expected positive widths")
        if self.task == "binary" and self.n_outputs != 1:
            raise ValueError(f"n_outputs={self.n_outputs}: a binary task has exactly one output (a logit)")
        if self.task == "multiclass" and self.n_outputs < 2:
            raise ValueError(f"n_outputs={self.n_outputs}: a multiclass task needs at least 2 classes")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout!r}: expected a probability in [0, 1)")
        if not self.lr > 0:
            raise ValueError(f"lr={self.lr!r}: expected a positive learning rate")
        if not 0.0 < self.multilabel_vote_threshold < 1.0:
            raise ValueError(f"multilabel_vote_threshold={self.multilabel_vote_threshold!r}: expected a value in (0, 1)")

    @property
    def layer_sizes(self) -> tuple[int, ...]:
        return (self.in_features, *self.hidden, self.n_outputs)

    def n_parameters(self) -> int:
        """Parameters of one teacher (weights and biases)."""
        s = self.layer_sizes
        return sum(a * b + b for a, b in zip(s[:-1], s[1:]))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        return d


@dataclass(frozen=True)
class Partitions:
    """Per-teacher index sets into the teachers' data: ``int64 [n_teachers, size]`` each.

    ``train``: the teacher's own training partition; ``val``: its early-stopping split (may
    have 0 columns: no early stopping); ``threshold``: its decision-threshold split (binary tasks;
    may have 0 columns: threshold 0.5). All sets are disjoint within and across teachers
    (checked by :meth:`validate`).
    """

    train: np.ndarray
    val: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    threshold: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))

    def __post_init__(self) -> None:
        n = np.asarray(self.train).shape[0] if np.ndim(self.train) == 2 else -1
        if n < 1:
            raise ValueError("partitions.train: expected an int array of shape [n_teachers, train_size]")
        for name in ("train", "val", "threshold"):
            a = np.asarray(getattr(self, name), dtype=np.int64)
            if a.size == 0:
                a = np.zeros((n, 0), dtype=np.int64)
            if a.ndim != 2 or a.shape[0] != n:
                raise ValueError(f"partitions.{name}: expected shape [{n}, size], got {a.shape}")
            object.__setattr__(self, name, a)
        if self.train.shape[1] < 1:
            raise ValueError("partitions.train: every teacher needs at least one training sample")

    @property
    def n_teachers(self) -> int:
        return int(self.train.shape[0])

    def validate(self, n_samples: int) -> None:
        """Raise ValueError unless every index is in ``[0, n_samples)`` and all sets are disjoint."""
        allidx = np.concatenate([self.train.ravel(), self.val.ravel(), self.threshold.ravel()])
        if allidx.size and (allidx.min() < 0 or allidx.max() >= n_samples):
            raise ValueError(f"partitions: indices must lie in [0, {n_samples}), got [{allidx.min()}, {allidx.max()}]")
        if np.unique(allidx).size != allidx.size:
            raise ValueError("partitions: teacher index sets overlap; PATE's analysis needs disjoint partitions")


def make_partitions(n_samples: int, n_teachers: int, train_size: int, val_size: int = 0,
                    threshold_size: int = 0, seed: int | Sequence[int] = 0,
                    pool: np.ndarray | None = None) -> Partitions:
    """Draw disjoint per-teacher train/val/threshold index sets from ``pool`` (default: all samples).

    Sosa (2021) §4.1: 930 training samples and 800 threshold samples per teacher.
    """
    pool = np.arange(n_samples) if pool is None else np.asarray(pool, dtype=np.int64)
    per = train_size + val_size + threshold_size
    if n_teachers < 1 or train_size < 1 or val_size < 0 or threshold_size < 0:
        raise ValueError("n_teachers and train_size must be >= 1, val_size and threshold_size >= 0")
    if n_teachers * per > pool.size:
        raise ValueError(f"make_partitions: {n_teachers} teachers x {per} samples = {n_teachers * per} "
                         f"exceeds the {pool.size} available samples; the largest disjoint size per teacher is "
                         f"{pool.size // n_teachers} (PATE's analysis needs each record in at most one teacher's data)")
    rng = np.random.default_rng(seed)
    blocks = rng.permutation(pool)[: n_teachers * per].reshape(n_teachers, per)
    return Partitions(blocks[:, :train_size], blocks[:, train_size:train_size + val_size],
                      blocks[:, train_size + val_size:])


def teacher_seeds(seed: int, n_teachers: int) -> np.ndarray:
    """``uint32 [n_teachers, 3]``: (init, shuffle, dropout) seeds of each teacher from ``SeedSequence(seed).spawn``."""
    children = np.random.SeedSequence(seed).spawn(n_teachers)
    return np.stack([c.generate_state(3) for c in children])


def init_stacked_params(config: EnsembleConfig, seeds: np.ndarray) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Stacked initial weights ``[N, in, out]`` and biases ``[N, 1, out]``.

    Each teacher is drawn with its own ``torch.Generator`` (init seed) from torch's default
    ``nn.Linear`` initialisation, U(-1/sqrt(in), 1/sqrt(in)) for weights and biases.
    """
    sizes = config.layer_sizes
    n = seeds.shape[0]
    weights = [torch.empty(n, a, b) for a, b in zip(sizes[:-1], sizes[1:])]
    biases = [torch.empty(n, 1, b) for b in sizes[1:]]
    for i in range(n):
        g = torch.Generator().manual_seed(int(seeds[i, 0]))
        for W, b in zip(weights, biases):
            bound = 1.0 / float(np.sqrt(W.shape[1]))
            W[i] = (torch.rand(W.shape[1:], generator=g) * 2 - 1) * bound
            b[i] = (torch.rand(b.shape[1:], generator=g) * 2 - 1) * bound
    return weights, biases


# --------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------
@dataclass
class _Inputs:
    dense: torch.Tensor | None = None
    indptr: torch.Tensor | None = None
    indices: torch.Tensor | None = None
    values: torch.Tensor | None = None
    n_rows: int = 0
    n_cols: int = 0

    def rows_dense(self, idx: torch.Tensor) -> torch.Tensor:
        """Dense rows ``idx`` (any shape) -> ``[*idx.shape, n_cols]``."""
        if self.dense is not None:
            return torch.index_select(self.dense, 0, idx.reshape(-1)).view(*idx.shape, self.n_cols)
        flat = idx.reshape(-1)
        cols, vals, offsets, lengths = self.gather(flat, None)
        out = torch.zeros(flat.numel(), self.n_cols, dtype=torch.float32, device=flat.device)
        row_of = torch.repeat_interleave(torch.arange(flat.numel(), device=flat.device), lengths)
        out[row_of, cols] = vals
        return out.view(*idx.shape, self.n_cols)

    def gather(self, rows: torch.Tensor, block: torch.Tensor | None):
        """Non-zeros of CSR ``rows``; column ids shifted by ``block * n_cols`` per row when given."""
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        offsets = torch.cumsum(lengths, 0) - lengths
        total = int(lengths.sum())
        pos = torch.repeat_interleave(starts - offsets, lengths, output_size=total) + torch.arange(total, device=rows.device)
        cols = self.indices[pos]
        if block is not None:
            cols = cols + torch.repeat_interleave(block * self.n_cols, lengths, output_size=total)
        return cols, self.values[pos], offsets, lengths


def _as_inputs(X: Any, n_features: int, sparse: bool, device: torch.device, name: str = "X") -> _Inputs:
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        shape = X.shape
    else:
        if isinstance(X, torch.Tensor):
            X = X.detach().cpu().numpy()
        X = np.asarray(X)
        shape = X.shape
    if len(shape) != 2 or shape[1] != n_features:
        raise ValueError(f"{name}: expected a 2-d array with {n_features} columns, got shape {shape}")
    if sparse:
        csr = sp.csr_matrix(X, dtype=np.float32)
        csr.sort_indices()
        return _Inputs(indptr=torch.as_tensor(csr.indptr.astype(np.int64), device=device),
                       indices=torch.as_tensor(csr.indices.astype(np.int64), device=device),
                       values=torch.as_tensor(csr.data, device=device), n_rows=shape[0], n_cols=shape[1])
    dense = X.toarray() if sp.issparse(X) else X
    dense = torch.as_tensor(np.ascontiguousarray(dense, dtype=np.float32), device=device)
    if not torch.isfinite(dense).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    return _Inputs(dense=dense, n_rows=shape[0], n_cols=shape[1])


def _as_targets(y: Any, config: EnsembleConfig, n_rows: int, device: torch.device) -> torch.Tensor:
    y = np.asarray(y.detach().cpu() if isinstance(y, torch.Tensor) else y)
    if y.shape[0] != n_rows:
        raise ValueError(f"y: expected {n_rows} rows (one per sample of X), got {y.shape[0]}")
    if config.task == "binary":
        if y.ndim != 1 or not np.isin(y, (0, 1)).all():
            raise ValueError("y: a binary task expects a 1-d array of 0/1 labels")
        return torch.as_tensor(y.astype(np.float32), device=device).unsqueeze(-1)
    if config.task == "multiclass":
        if y.ndim != 1 or y.min() < 0 or y.max() >= config.n_outputs:
            raise ValueError(f"y: a multiclass task expects 1-d integer labels in [0, {config.n_outputs})")
        return torch.as_tensor(y.astype(np.int64), device=device)
    if y.ndim != 2 or y.shape[1] != config.n_outputs:
        raise ValueError(f"y: a multilabel task expects shape [n, {config.n_outputs}]")
    return torch.as_tensor(y.astype(np.float32), device=device)


# --------------------------------------------------------------------------------------------
# the batched network
# --------------------------------------------------------------------------------------------
def _first_layer(inputs: _Inputs, idx: torch.Tensor, W: torch.Tensor, b: torch.Tensor, sparse: bool) -> torch.Tensor:
    """First layer for teacher batches ``idx: [N, B]`` -> ``[N, B, out]``."""
    n, bsz = idx.shape
    if not sparse:
        return torch.baddbmm(b, inputs.rows_dense(idx), W)
    block = torch.arange(n, device=idx.device).repeat_interleave(bsz)
    cols, vals, offsets, _ = inputs.gather(idx.reshape(-1), block)
    h = F.embedding_bag(cols, W.reshape(n * W.shape[1], W.shape[2]), offsets, mode="sum",
                        per_sample_weights=vals.to(W.dtype))
    # Out of place on purpose: an in-place add on this view makes autograd record CopySlices and
    # clone the whole [N*B, out] gradient in the backward (measured: 25% of a sparse step).
    return h.view(n, bsz, -1) + b


def _forward(h: torch.Tensor, weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor],
             dropout: float = 0.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """Remaining layers: ReLU (and dropout) after each hidden layer, ``baddbmm`` for the linear maps."""
    for W, b in zip(weights, biases):
        h = torch.relu_(h)  # h is always a fresh intermediate; in place saves an allocation
        if dropout > 0 and generator is not None:
            keep = torch.rand(h.shape, generator=generator, device=h.device) >= dropout
            h = h * keep / (1.0 - dropout)
        h = torch.baddbmm(b, h, W)
    return h


def _per_teacher_loss(logits: torch.Tensor, target: torch.Tensor, task: str) -> torch.Tensor:
    """Mean loss of each teacher over its batch: ``logits [N, B, k]`` -> ``[N]``."""
    logits = logits.float()
    if task == "multiclass":
        n, bsz, k = logits.shape
        return F.cross_entropy(logits.reshape(n * bsz, k), target.reshape(-1), reduction="none").view(n, bsz).mean(1)
    return F.binary_cross_entropy_with_logits(logits, target, reduction="none").mean(dim=(1, 2))


# --------------------------------------------------------------------------------------------
# trained ensembles and their votes
# --------------------------------------------------------------------------------------------
@dataclass
class TeacherEnsemble:
    """Trained teachers as stacked parameters (CPU tensors) plus per-teacher training facts."""

    config: EnsembleConfig
    weights: list[torch.Tensor]
    biases: list[torch.Tensor]
    epochs: np.ndarray  # epochs each teacher trained before stopping
    best_val_loss: np.ndarray  # nan where there was no validation split
    thresholds: np.ndarray | None = None  # binary: per-teacher decision threshold on the probability

    @property
    def n_teachers(self) -> int:
        return int(self.weights[0].shape[0])

    @torch.no_grad()
    def logits(self, X: Any, chunk_size: int = 1024, device: str | torch.device | None = None) -> torch.Tensor:
        """Logits of every teacher on every row of ``X``: ``float32 [N, Q, k]`` on the CPU (one pass)."""
        dev = choose_device(device)
        inputs = _as_inputs(X, self.config.in_features, sparse=False, device=dev, name="X")
        Ws = [W.to(dev) for W in self.weights]
        bs = [b.to(dev) for b in self.biases]
        out = []
        for start in tqdm(range(0, inputs.n_rows, chunk_size), desc="query teachers", leave=False,
                          disable=inputs.n_rows <= chunk_size):
            x = inputs.dense[start:start + chunk_size]
            with autocast(dev):
                h = torch.matmul(x.unsqueeze(0), Ws[0]) + bs[0]
                h = _forward(h, Ws[1:], bs[1:])
            out.append(h.float().cpu())
        return torch.cat(out, dim=1) if out else torch.zeros(self.n_teachers, 0, self.config.n_outputs)

    def probabilities(self, X: Any, **kw: Any) -> np.ndarray:
        """Sigmoid (binary: ``[N, Q]``; multilabel: ``[N, Q, L]``) or softmax (``[N, Q, C]``) outputs."""
        z = self.logits(X, **kw)
        if self.config.task == "multiclass":
            return torch.softmax(z, dim=-1).numpy()
        p = torch.sigmoid(z).numpy()
        return p[..., 0] if self.config.task == "binary" else p

    def own_probabilities(self, X: Any, rows: np.ndarray, device: str | torch.device | None = None) -> np.ndarray:
        """Member ``i``'s outputs on its own rows ``X[rows[i]]`` only (``rows``: int ``[N, m]``), as in
        :meth:`probabilities`: binary ``[N, m]``, multiclass/multilabel ``[N, m, k]``. N times less work than
        :meth:`probabilities` on all rows when each member has rows of its own (students' validation sets)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.ndim != 2 or rows.shape[0] != self.n_teachers:
            raise ValueError(f"rows: expected int [{self.n_teachers}, m], got shape {rows.shape}")
        dev = choose_device(device)
        inputs = _as_inputs(X, self.config.in_features, sparse=False, device=dev, name="X")
        z = _own_logits(self, inputs, rows, dev)
        if self.config.task == "multiclass":
            return torch.softmax(z, dim=-1).numpy()
        p = torch.sigmoid(z).numpy()
        return p[..., 0] if self.config.task == "binary" else p

    def state(self) -> dict[str, Any]:
        """Plain dict of tensors / builtins (loadable with ``torch.load(weights_only=True)``)."""
        return {"config": self.config.to_dict(), "weights": [w.contiguous() for w in self.weights],
                "biases": [b.contiguous() for b in self.biases], "epochs": torch.as_tensor(self.epochs),
                "best_val_loss": torch.as_tensor(self.best_val_loss),
                "thresholds": None if self.thresholds is None else torch.as_tensor(self.thresholds)}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> TeacherEnsemble:
        cfg = dict(state["config"])
        cfg["hidden"] = tuple(cfg["hidden"])
        th = state["thresholds"]
        return cls(EnsembleConfig(**cfg), list(state["weights"]), list(state["biases"]),
                   state["epochs"].numpy(), state["best_val_loss"].numpy(), None if th is None else th.numpy())


@dataclass
class TeacherVotes:
    """Teacher outputs on the student queries -- the interface to :mod:`pate_study.privacy`.

    * ``probabilities``: float32, binary ``[N, Q]``, multiclass ``[N, Q, C]``, multilabel ``[N, Q, L]``.
    * ``teacher_votes``: binary int8 ``[N, Q]`` (1 iff probability >= the teacher's threshold);
      multiclass int64 ``[N, Q]`` (argmax class); multilabel int8 ``[N, Q, L]`` (probability >=
      ``multilabel_vote_threshold``).
    * ``counts``: int64 ``[Q, C]`` vote counts (binary: C = 2, column 1 = positive votes);
      ``None`` for multilabel.
    * ``fractions``: multilabel float64 ``[Q, L]`` share of teachers voting 1;
      ``mean_probabilities``: multilabel float64 ``[Q, L]`` averaged probabilities (Muschiol 2021 Def. 10).
    """

    task: str
    probabilities: np.ndarray
    teacher_votes: np.ndarray
    counts: np.ndarray | None = None
    fractions: np.ndarray | None = None
    mean_probabilities: np.ndarray | None = None

    def state(self) -> dict[str, Any]:
        return {k: (torch.as_tensor(v) if isinstance(v, np.ndarray) else v) for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> TeacherVotes:
        return cls(**{k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in state.items()})


def vote_counts(teacher_votes: np.ndarray, n_classes: int) -> np.ndarray:
    """``int[N, Q]`` class votes -> ``int64[Q, n_classes]`` counts (PATE's n_j(x), Papernot 2017 Eq. 1)."""
    v = np.asarray(teacher_votes)
    if v.ndim != 2 or v.size and (v.min() < 0 or v.max() >= n_classes):
        raise ValueError(f"teacher_votes: expected int [n_teachers, n_queries] with values in [0, {n_classes})")
    q = v.shape[1]
    flat = v.T.astype(np.int64) + (np.arange(q)[:, None] * n_classes)
    return np.bincount(flat.ravel(), minlength=q * n_classes).reshape(q, n_classes)


def youden_threshold(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Threshold maximising Youden's J = TPR - FPR on the ROC curve (Sosa 2021 §4.1).

    Returns 0.5 (with a warning) when ``y_true`` holds a single class.
    """
    y_true = np.asarray(y_true)
    if np.unique(y_true).size < 2:
        logger.warning("youden_threshold: only one class in the threshold split; using 0.5")
        return 0.5
    fpr, tpr, thr = roc_curve(y_true, scores)
    j = tpr - fpr
    k = int(np.argmax(j[1:]) + 1)  # thr[0] is +inf (predict nothing positive)
    return float(min(thr[k], 1.0))


def query_ensemble(ensemble: TeacherEnsemble, X: Any, device: str | torch.device | None = None) -> TeacherVotes:
    """Query all teachers on the student inputs ``X`` in one pass and return the votes."""
    cfg = ensemble.config
    p = ensemble.probabilities(X, device=device)
    if cfg.task == "binary":
        th = np.full(ensemble.n_teachers, 0.5) if ensemble.thresholds is None else ensemble.thresholds
        votes = (p >= th[:, None]).astype(np.int8)
        return TeacherVotes("binary", p.astype(np.float32), votes, counts=vote_counts(votes, 2))
    if cfg.task == "multiclass":
        votes = p.argmax(-1).astype(np.int64)
        return TeacherVotes("multiclass", p.astype(np.float32), votes, counts=vote_counts(votes, cfg.n_outputs))
    votes = (p >= cfg.multilabel_vote_threshold).astype(np.int8)
    return TeacherVotes("multilabel", p.astype(np.float32), votes, fractions=votes.mean(0, dtype=np.float64),
                        mean_probabilities=p.mean(0, dtype=np.float64))


@torch.no_grad()
def _own_logits(ensemble: TeacherEnsemble, inputs: _Inputs, idx: np.ndarray, device: torch.device,
                chunk_size: int = 512) -> torch.Tensor:
    """Logits of teacher ``i`` on its own rows ``idx[i]``: ``[N, m, k]`` (batched, one pass)."""
    Ws = [W.to(device) for W in ensemble.weights]
    bs = [b.to(device) for b in ensemble.biases]
    idx_t = torch.as_tensor(idx, device=device)
    out = []
    for start in range(0, idx_t.shape[1], chunk_size):
        part = idx_t[:, start:start + chunk_size]
        with autocast(device):
            h = _first_layer(inputs, part, Ws[0], bs[0], inputs.dense is None)
            out.append(_forward(h, Ws[1:], bs[1:]).float().cpu())
    return torch.cat(out, dim=1)


def _fit_thresholds(ensemble: TeacherEnsemble, inputs: _Inputs, y: np.ndarray, partitions: Partitions,
                    device: torch.device) -> np.ndarray | None:
    """Per-teacher Youden thresholds on each teacher's own threshold split (Sosa 2021: 800 samples)."""
    if ensemble.config.task != "binary" or partitions.threshold.shape[1] == 0:
        return None
    p = torch.sigmoid(_own_logits(ensemble, inputs, partitions.threshold, device))[..., 0].numpy()
    yv = np.asarray(y)[partitions.threshold]
    return np.array([youden_threshold(yv[i], p[i]) for i in range(partitions.n_teachers)])


# --------------------------------------------------------------------------------------------
# training: vectorised
# --------------------------------------------------------------------------------------------
def _check_common(X: Any, y: Any, partitions: Partitions, config: EnsembleConfig) -> int:
    if not isinstance(config, EnsembleConfig):
        raise ValueError("config: expected an EnsembleConfig")
    if not isinstance(partitions, Partitions):
        raise ValueError("partitions: expected a Partitions (see make_partitions)")
    n_rows = X.shape[0]
    partitions.validate(n_rows)
    return n_rows


@dataclass
class EarlyStopping:
    """The patience rule of every single-model training loop here (and in :mod:`pate_study.student`).

    A validation loss strictly below the best so far resets the count and keeps ``snapshot()`` as
    ``state``; ``patience`` epochs in a row without one stop training. :func:`record_stacked_losses`
    applies the same rule to stacked teachers.
    """

    patience: int
    best: float = float("inf")
    bad: int = 0
    state: Any = None

    def update(self, loss: float, snapshot: Callable[[], Any]) -> bool:
        """Record one epoch's validation loss; True when training should stop."""
        if loss < self.best:
            self.best, self.bad, self.state = loss, 0, snapshot()
            return False
        self.bad += 1
        return self.bad >= self.patience


def record_stacked_losses(val_loss: torch.Tensor, active: torch.Tensor, best_loss: torch.Tensor,
                          bad: torch.Tensor, patience: int, best: Sequence[torch.Tensor],
                          live: Sequence[torch.Tensor]) -> torch.Tensor:
    """:class:`EarlyStopping` for stacked teachers, in place; returns the stop mask over ``active``.

    ``val_loss[j]`` belongs to teacher ``active[j]`` (row ``j`` of every ``live`` tensor); improved
    rows are copied into the full-size ``best`` tensors and ``best_loss``, and ``bad`` counts the
    epochs without improvement per teacher.
    """
    improved = val_loss < best_loss[active]
    rows = improved.nonzero().squeeze(1)
    if rows.numel():
        dev = best[0].device
        ids = active[rows].to(dev)
        for target, source in zip(best, live):
            target.index_copy_(0, ids, source.detach()[rows.to(dev)])
        best_loss[active[rows]] = val_loss[rows]
    bad[active] = torch.where(improved, torch.zeros_like(bad[active]), bad[active] + 1)
    return bad[active] >= patience


def _compact_optimizer(opt: torch.optim.Adam, old: list[torch.Tensor], new: list[torch.Tensor],
                       keep: torch.Tensor) -> torch.optim.Adam:
    """New Adam over ``new`` (= ``old`` rows ``keep``) carrying over the kept rows' moments."""
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    new_opt = torch.optim.Adam(new, **group)
    for po, pn in zip(old, new):
        st = opt.state.get(po)
        if st:
            new_opt.state[pn] = {k: (v[keep].clone() if torch.is_tensor(v) and v.dim() > 0 else
                                     (v.clone() if torch.is_tensor(v) else v)) for k, v in st.items()}
    return new_opt


def _fused_adam_available(device: torch.device) -> bool:
    """Fused Adam exists on CUDA and, since torch 2.4, on the CPU."""
    if device.type == "cuda":
        return True
    major, minor = (int(v) for v in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 4)


def _adam_kwargs(config: EnsembleConfig, device: torch.device) -> dict[str, Any]:
    """One fused Adam kernel over the stacked tensors (elementwise, so per-teacher exact)."""
    kw: dict[str, Any] = {"lr": config.lr, "weight_decay": config.weight_decay}
    kw["fused" if _fused_adam_available(device) else "foreach"] = True
    return kw


def train_ensemble(X: Any, y: Any, partitions: Partitions, config: EnsembleConfig, seed: int = 0,
                   device: str | torch.device | None = None, progress: bool = True,
                   mixed_precision: bool | None = None) -> TeacherEnsemble:
    """Train ``partitions.n_teachers`` teachers at once (stacked parameters, batched matmuls).

    ``X``: ``[n, in_features]`` numpy / torch / scipy.sparse (teachers' data; with
    ``config.sparse_input`` the first layer uses the sparse ``embedding_bag`` path).
    ``y``: labels for the task. Per-teacher early stopping on ``partitions.val``; per-teacher
    Youden thresholds on ``partitions.threshold`` (binary). Mixed precision only on CUDA.
    """
    _check_common(X, y, partitions, config)
    dev = choose_device(device)
    if dev.type == "cpu":
        tune_cpu_allocator()
    inputs = _as_inputs(X, config.in_features, config.sparse_input, dev)
    target = _as_targets(y, config, inputs.n_rows, dev)
    n = partitions.n_teachers
    seeds = teacher_seeds(seed, n)
    W0, b0 = init_stacked_params(config, seeds)
    params = [p.to(dev).requires_grad_() for p in (*W0, *b0)]
    n_layers = len(W0)
    opt = torch.optim.Adam(params, **_adam_kwargs(config, dev))
    shuffle_gens = [torch.Generator().manual_seed(int(s)) for s in seeds[:, 1]]
    drop_gen = torch.Generator(device=dev).manual_seed(int(seeds[0, 2])) if config.dropout > 0 else None
    train_idx = torch.as_tensor(partitions.train, device=dev)
    val_idx = torch.as_tensor(partitions.val, device=dev)
    m, m_val = train_idx.shape[1], val_idx.shape[1]
    best = [p.detach().clone() for p in params]
    best_loss = torch.full((n,), float("inf"), dtype=torch.float64)
    bad = torch.zeros(n, dtype=torch.int64)
    epochs = np.zeros(n, dtype=np.int64)
    active = torch.arange(n)  # teacher ids of the rows currently in the stack
    amp = mixed_precision

    bar = tqdm(range(config.max_epochs), desc=f"train {n} teachers (vectorised)", disable=not progress)
    for _epoch in bar:
        perms = torch.stack([torch.randperm(m, generator=shuffle_gens[int(i)]) for i in active]).to(dev)
        order = torch.gather(train_idx[active.to(dev)], 1, perms)
        for start in range(0, m, config.batch_size):
            idx = order[:, start:start + config.batch_size]
            Ws, bs = params[:n_layers], params[n_layers:]
            with autocast(dev, amp):
                h = _first_layer(inputs, idx, Ws[0], bs[0], config.sparse_input)
                z = _forward(h, Ws[1:], bs[1:], config.dropout, drop_gen)
            loss = _per_teacher_loss(z, target[idx], config.task).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        epochs[active.numpy()] += 1
        if m_val == 0:
            continue
        with torch.no_grad():
            Ws, bs = params[:n_layers], params[n_layers:]
            vidx = val_idx[active.to(dev)]
            with autocast(dev, amp):
                z = _forward(_first_layer(inputs, vidx, Ws[0], bs[0], config.sparse_input), Ws[1:], bs[1:])
            vl = _per_teacher_loss(z, target[vidx], config.task).double().cpu()
        stop = record_stacked_losses(vl, active, best_loss, bad, config.patience, best, params)
        if stop.any():
            keep = (~stop).nonzero().squeeze(1)
            active = active[keep]
            if active.numel() == 0:
                break
            new = [p.detach()[keep.to(dev)].clone().requires_grad_() for p in params]
            opt = _compact_optimizer(opt, params, new, keep.to(dev))
            params = new
        bar.set_postfix(active=int(active.numel()))
    if m_val == 0:  # no early stopping: every teacher keeps its final parameters
        for bp, p in zip(best, params):
            bp.index_copy_(0, active.to(dev), p.detach())
    ens = TeacherEnsemble(config, [b.cpu() for b in best[:n_layers]], [b.cpu() for b in best[n_layers:]],
                          epochs, best_loss.numpy() if m_val else np.full(n, np.nan))
    ens.thresholds = _fit_thresholds(ens, inputs, np.asarray(y), partitions, dev)
    return ens


# --------------------------------------------------------------------------------------------
# training: the plain loop (baseline and correctness reference)
# --------------------------------------------------------------------------------------------
def train_ensemble_loop(X: Any, y: Any, partitions: Partitions, config: EnsembleConfig, seed: int = 0,
                        device: str | torch.device | None = None, progress: bool = True,
                        mixed_precision: bool | None = None) -> TeacherEnsemble:
    """Train the same teachers one after another as separate ``nn.Sequential`` models.

    Same seeds, partitions, initial weights, batch order and early-stopping rule as
    :func:`train_ensemble`; dense input; each teacher has its own ``torch.optim.Adam``.
    """
    from pate_study.models import mlp

    _check_common(X, y, partitions, config)
    dev = choose_device(device)
    if dev.type == "cpu":
        tune_cpu_allocator()
    inputs = _as_inputs(X, config.in_features, False, dev)
    target = _as_targets(y, config, inputs.n_rows, dev)
    n = partitions.n_teachers
    seeds = teacher_seeds(seed, n)
    W0, b0 = init_stacked_params(config, seeds)
    out_W = [torch.empty_like(w) for w in W0]
    out_b = [torch.empty_like(b) for b in b0]
    epochs = np.zeros(n, dtype=np.int64)
    best_losses = np.full(n, np.nan)
    m, m_val = partitions.train.shape[1], partitions.val.shape[1]
    for i in tqdm(range(n), desc=f"train {n} teachers (loop)", disable=not progress):
        model = mlp(config.in_features, config.hidden, config.n_outputs, dropout=0.0).to(dev)
        linears = [mod for mod in model if isinstance(mod, torch.nn.Linear)]
        with torch.no_grad():
            for lin, W, b in zip(linears, W0, b0):
                lin.weight.copy_(W[i].T)
                lin.bias.copy_(b[i, 0])
        opt = torch.optim.Adam(model.parameters(), **_adam_kwargs(config, dev))
        g = torch.Generator().manual_seed(int(seeds[i, 1]))
        g_drop = torch.Generator(device=dev).manual_seed(int(seeds[i, 2])) if config.dropout > 0 else None
        tr = torch.as_tensor(partitions.train[i], device=dev)
        va = torch.as_tensor(partitions.val[i], device=dev)

        def run(x: torch.Tensor, training: bool) -> torch.Tensor:
            h = x
            for k, lin in enumerate(linears):
                if k > 0:
                    h = torch.relu(h)
                    if training and g_drop is not None:
                        h = h * (torch.rand(h.shape, generator=g_drop, device=dev) >= config.dropout) / (1 - config.dropout)
                h = lin(h)
            return h

        def snapshot() -> list[torch.Tensor]:
            return [p.detach().clone() for p in model.parameters()]

        stopper = EarlyStopping(config.patience, state=snapshot())
        for _epoch in range(config.max_epochs):
            order = tr[torch.randperm(m, generator=g).to(dev)]
            for start in range(0, m, config.batch_size):
                idx = order[start:start + config.batch_size]
                with autocast(dev, mixed_precision):
                    z = run(inputs.dense[idx], True)
                loss = _per_teacher_loss(z.unsqueeze(0), target[idx].unsqueeze(0), config.task).sum()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            epochs[i] += 1
            if m_val == 0:
                stopper.state = snapshot()
                continue
            with torch.no_grad(), autocast(dev, mixed_precision):
                vl = float(_per_teacher_loss(run(inputs.dense[va], False).unsqueeze(0),
                                             target[va].unsqueeze(0), config.task).double())
            if stopper.update(vl, snapshot):
                break
        best_losses[i] = stopper.best if m_val else np.nan
        for k in range(len(linears)):
            out_W[k][i] = stopper.state[2 * k].T.cpu()
            out_b[k][i, 0] = stopper.state[2 * k + 1].cpu()
    ens = TeacherEnsemble(config, out_W, out_b, epochs, best_losses)
    ens.thresholds = _fit_thresholds(ens, inputs, np.asarray(y), partitions, dev)
    return ens


# --------------------------------------------------------------------------------------------
# cache
# --------------------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    """``$PATE_STUDY_CACHE`` if set, else ``<repo>/.cache/pate_study`` (git-ignored)."""
    env = os.environ.get("PATE_STUDY_CACHE")
    return Path(env) if env else Path(__file__).resolve().parents[1] / ".cache" / "pate_study"


def _hash_update(h: Any, obj: Any) -> None:
    if sp.issparse(obj):
        c = sp.csr_matrix(obj)
        h.update(f"csr{c.shape}".encode())
        for a in (c.indptr, c.indices, c.data):
            _hash_update(h, a)
    elif isinstance(obj, torch.Tensor):
        _hash_update(h, obj.detach().cpu().numpy())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"nd{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    elif isinstance(obj, (list, tuple)) and obj and isinstance(obj[0], (np.ndarray, torch.Tensor)):
        for a in obj:
            _hash_update(h, a)
    else:
        h.update(json.dumps(obj, sort_keys=True, default=str).encode())


def hash_inputs(**parts: Any) -> str:
    """SHA-256 (hex) over named parts: arrays (dtype, shape, bytes), sparse matrices, JSON-able values."""
    h = hashlib.sha256()
    for name in sorted(parts):
        h.update(name.encode())
        _hash_update(h, parts[name])
    return h.hexdigest()


def save_cache_entry(path: str | Path, payload: dict[str, Any], meta: dict[str, Any] | None = None) -> Path:
    """``torch.save`` ``payload`` to ``path`` (temp file + ``os.replace``) and write ``path.json``
    with its SHA-256 and size; the sidecar is written last, so a missing sidecar marks a partial entry."""
    path = Path(path)
    atomic_write(path, lambda tmp: torch.save(payload, tmp))
    side = {"sha256": sha256_file(path), "size": path.stat().st_size, "format": CACHE_FORMAT, **(meta or {})}
    atomic_write_text(path.with_suffix(path.suffix + ".json"), json.dumps(side, indent=1))
    return path


def load_cache_entry(path: str | Path) -> dict[str, Any] | None:
    """Verified payload at ``path``, or ``None`` when absent. A partial or corrupt entry (missing
    sidecar, size or SHA-256 mismatch, unreadable payload) is logged, deleted and reported as absent."""
    path = Path(path)
    side_path = path.with_suffix(path.suffix + ".json")
    if not path.exists() and not side_path.exists():
        return None
    reason = None
    try:
        side = json.loads(side_path.read_text())
        if side.get("format") != CACHE_FORMAT:
            reason = f"format {side.get('format')} != {CACHE_FORMAT}"
        elif not path.exists() or path.stat().st_size != side["size"]:
            reason = "size mismatch (truncated or partial write)"
        elif sha256_file(path) != side["sha256"]:
            reason = "SHA-256 mismatch"
        else:
            return torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, ValueError, KeyError, RuntimeError, EOFError) as exc:  # json errors are ValueError
        reason = f"unreadable ({type(exc).__name__}: {exc})"
    logger.warning("cache entry %s rejected: %s; it will be recomputed", path, reason)
    for p in (path, side_path):
        if p.exists():
            p.unlink()
    return None


def _ensemble_key(X: Any, y: Any, partitions: Partitions, config: EnsembleConfig, seed: int, method: str) -> str:
    return hash_inputs(X=X, y=np.asarray(y), train=partitions.train, val=partitions.val,
                       threshold=partitions.threshold, config=config.to_dict(), seed=int(seed),
                       method=method, format=CACHE_FORMAT)


def cached_ensemble(X: Any, y: Any, partitions: Partitions, config: EnsembleConfig, seed: int = 0,
                    method: str = "vectorised", cache_dir: str | Path | None = None,
                    device: str | torch.device | None = None, progress: bool = True) -> tuple[TeacherEnsemble, str]:
    """Load the trained ensemble for these inputs from the cache, or train and store it.

    Returns ``(ensemble, key)``; ``method`` is "vectorised" or "loop" (part of the key).
    """
    if method not in ("vectorised", "loop"):
        raise ValueError(f"method={method!r}: expected 'vectorised' or 'loop'")
    key = _ensemble_key(X, y, partitions, config, seed, method)
    path = Path(cache_dir or default_cache_dir()) / f"ensemble-{key[:32]}.pt"
    state = load_cache_entry(path)
    if state is not None:
        logger.info("loaded cached ensemble %s", path)
        return TeacherEnsemble.from_state(state), key
    train = train_ensemble if method == "vectorised" else train_ensemble_loop
    ens = train(X, y, partitions, config, seed=seed, device=device, progress=progress)
    save_cache_entry(path, ens.state(), {"kind": "ensemble", "key": key})
    return ens, key


def cached_teacher_votes(X: Any, y: Any, partitions: Partitions, config: EnsembleConfig, queries: Any,
                         seed: int = 0, method: str = "vectorised", cache_dir: str | Path | None = None,
                         device: str | torch.device | None = None, progress: bool = True) -> TeacherVotes:
    """Teacher votes on ``queries`` for the ensemble defined by (data, partitions, config, seed),
    training and querying only what is not already cached. Aggregator and noise sweeps reuse them."""
    cache_dir = Path(cache_dir or default_cache_dir())
    key = _ensemble_key(X, y, partitions, config, seed, method)
    vkey = hash_inputs(ensemble=key, queries=queries, format=CACHE_FORMAT)
    vpath = cache_dir / f"votes-{vkey[:32]}.pt"
    state = load_cache_entry(vpath)
    if state is not None:
        return TeacherVotes.from_state(state)
    ens, _ = cached_ensemble(X, y, partitions, config, seed, method, cache_dir, device, progress)
    votes = query_ensemble(ens, queries, device=device)
    save_cache_entry(vpath, votes.state(), {"kind": "votes", "key": vkey, "ensemble_key": key})
    return votes


# --------------------------------------------------------------------------------------------
# any nn.Module (ResNet on log-Mel, embedding MLP): torch.func stacking + vmap
# --------------------------------------------------------------------------------------------
@dataclass
class ModuleEnsemble:
    """``N`` copies of one architecture with stacked parameters and buffers (``torch.func``).

    ``predict`` runs all teachers in one ``vmap``-ed pass (eval mode: BatchNorm running statistics,
    no dropout). Votes: :func:`votes_from_probabilities`.
    """

    task: str
    base: torch.nn.Module  # architecture on the "meta" device (no storage)
    params: dict[str, torch.Tensor]
    buffers: dict[str, torch.Tensor]
    epochs: np.ndarray
    best_val_loss: np.ndarray
    thresholds: np.ndarray | None = None

    @property
    def n_teachers(self) -> int:
        return int(next(iter(self.params.values())).shape[0])

    @torch.no_grad()
    def logits(self, X: Any, chunk_size: int = 256, device: str | torch.device | None = None) -> torch.Tensor:
        """``float32 [N, Q, k]`` logits of every teacher (one batched pass per chunk)."""
        from torch.func import functional_call, vmap
        dev = choose_device(device)
        p = {k: v.to(dev) for k, v in self.params.items()}
        b = {k: v.to(dev) for k, v in self.buffers.items()}
        self.base.eval()
        X = torch.as_tensor(np.asarray(X, dtype=np.float32))
        f = vmap(lambda pp, bb, x: functional_call(self.base, (pp, bb), (x,)), in_dims=(0, 0, None))
        out = []
        for start in range(0, X.shape[0], chunk_size):
            with autocast(dev):
                out.append(f(p, b, X[start:start + chunk_size].to(dev)).float().cpu())
        return torch.cat(out, dim=1)

    def probabilities(self, X: Any, **kw: Any) -> np.ndarray:
        z = self.logits(X, **kw)
        if self.task == "multiclass":
            return torch.softmax(z, -1).numpy()
        p = torch.sigmoid(z).numpy()
        return p[..., 0] if self.task == "binary" else p


def votes_from_probabilities(task: str, probabilities: np.ndarray, thresholds: np.ndarray | None = None,
                             multilabel_vote_threshold: float = 0.5) -> TeacherVotes:
    """Turn per-teacher probabilities into :class:`TeacherVotes` (same rules as :func:`query_ensemble`)."""
    p = np.asarray(probabilities, dtype=np.float32)
    n = p.shape[0]
    if task == "binary":
        th = np.full(n, 0.5) if thresholds is None else np.asarray(thresholds)
        votes = (p >= th[:, None]).astype(np.int8)
        return TeacherVotes("binary", p, votes, counts=vote_counts(votes, 2))
    if task == "multiclass":
        votes = p.argmax(-1).astype(np.int64)
        return TeacherVotes("multiclass", p, votes, counts=vote_counts(votes, p.shape[-1]))
    if task != "multilabel":
        raise ValueError(f"task={task!r}: expected one of {TASKS}")
    votes = (p >= multilabel_vote_threshold).astype(np.int8)
    return TeacherVotes("multilabel", p, votes, fractions=votes.mean(0, dtype=np.float64),
                        mean_probabilities=p.mean(0, dtype=np.float64))


def _module_targets(y: Any, task: str) -> torch.Tensor:
    y = np.asarray(y)
    if task == "multiclass":
        return torch.as_tensor(y.astype(np.int64))
    if task == "binary":
        return torch.as_tensor(y.astype(np.float32)).reshape(-1, 1)
    return torch.as_tensor(y.astype(np.float32))


def _init_modules(model_fn, seeds: np.ndarray) -> list[torch.nn.Module]:
    models = []
    for s in seeds[:, 0]:
        torch.manual_seed(int(s))  # nn.Module initialisers draw from the global generator
        models.append(model_fn())
    return models


def train_module_ensemble(model_fn, X: Any, y: Any, partitions: Partitions, task: str, *, lr: float = 1e-3,
                          weight_decay: float = 0.0, batch_size: int = 64, max_epochs: int = 20, patience: int = 3,
                          seed: int = 0, device: str | torch.device | None = None, progress: bool = True,
                          mixed_precision: bool | None = None, vectorised: bool = True) -> ModuleEnsemble:
    """Train ``N`` copies of ``model_fn()`` (any ``nn.Module``, e.g. :class:`pate_study.models.ResNetLogMel`).

    ``vectorised=True``: parameters and buffers stacked with ``torch.func.stack_module_state`` and
    one ``vmap``-ed forward/backward per step for all teachers (BatchNorm running statistics are
    per-teacher buffers; dropout masks differ per teacher). ``vectorised=False``: the plain loop,
    same seeds and batches. Same early-stopping rule and seeds as :func:`train_ensemble`.
    ``X``: array ``[n, ...]`` of model inputs (e.g. log-Mel ``[n, frames, mels]``).
    """
    from torch.func import functional_call, stack_module_state, vmap

    if task not in TASKS:
        raise ValueError(f"task={task!r}: expected one of {TASKS}")
    if not isinstance(partitions, Partitions):
        raise ValueError("partitions: expected a Partitions (see make_partitions)")
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float32))
    partitions.validate(Xt.shape[0])
    Yt = _module_targets(y, task)
    if Yt.shape[0] != Xt.shape[0]:
        raise ValueError(f"y: expected {Xt.shape[0]} rows, got {Yt.shape[0]}")
    dev = choose_device(device)
    n = partitions.n_teachers
    seeds = teacher_seeds(seed, n)
    models = _init_modules(model_fn, seeds)
    m, m_val = partitions.train.shape[1], partitions.val.shape[1]
    gens = [torch.Generator().manual_seed(int(s)) for s in seeds[:, 1]]
    torch.manual_seed(int(seeds[0, 2]))  # dropout draws from the global generator

    def loss_of(z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:  # z [N, B, k] -> [N]
        return _per_teacher_loss(z, t, "multiclass" if task == "multiclass" else task)

    if not vectorised:
        best_losses = np.full(n, np.nan)
        epochs = np.zeros(n, dtype=np.int64)
        for i in tqdm(range(n), desc=f"train {n} teachers (loop)", disable=not progress):
            model = models[i].to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
            stopper = EarlyStopping(patience)
            for _ in range(max_epochs):
                model.train()
                order = torch.as_tensor(partitions.train[i])[torch.randperm(m, generator=gens[i])]
                for start in range(0, m, batch_size):
                    idx = order[start:start + batch_size]
                    with autocast(dev, mixed_precision):
                        z = model(Xt[idx].to(dev))
                    loss = loss_of(z.unsqueeze(0), Yt[idx].to(dev).unsqueeze(0)).sum()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                epochs[i] += 1
                if m_val == 0:
                    continue
                model.eval()
                va = torch.as_tensor(partitions.val[i])
                with torch.no_grad(), autocast(dev, mixed_precision):
                    vl = float(loss_of(model(Xt[va].to(dev)).unsqueeze(0), Yt[va].to(dev).unsqueeze(0)))
                if stopper.update(vl, lambda: {k: v.detach().clone() for k, v in model.state_dict().items()}):
                    break
            if stopper.state is not None:
                model.load_state_dict(stopper.state)
            best_losses[i] = stopper.best if m_val else np.nan
            models[i] = model.cpu()
        params, buffers = stack_module_state(models)
        base = copy_module_to_meta(models[0])
        ens = ModuleEnsemble(task, base, {k: v.detach() for k, v in params.items()}, dict(buffers), epochs, best_losses)
        ens.thresholds = _module_thresholds(ens, Xt, Yt, partitions, dev)
        return ens

    params, buffers = stack_module_state([mod.to(dev) for mod in models])
    base = copy_module_to_meta(models[0])
    names_p, names_b = list(params), list(buffers)
    plist = [params[k].detach().clone().requires_grad_() for k in names_p]
    blist = [buffers[k].detach().clone() for k in names_b]
    opt = torch.optim.Adam(plist, lr=lr, weight_decay=weight_decay)

    def fwd(pl: list[torch.Tensor], bl: list[torch.Tensor], x: torch.Tensor, in_x: int | None = 0) -> torch.Tensor:
        f = vmap(lambda pp, bb, xx: functional_call(base, (dict(zip(names_p, pp)), dict(zip(names_b, bb))), (xx,)),
                 in_dims=(0, 0, in_x), randomness="different")
        return f(pl, bl, x)

    best_p = [p.detach().clone() for p in plist]
    best_b = [b.clone() for b in blist]
    best_loss = torch.full((n,), float("inf"), dtype=torch.float64)
    bad = torch.zeros(n, dtype=torch.int64)
    epochs = np.zeros(n, dtype=np.int64)
    active = torch.arange(n)
    train_idx, val_idx = torch.as_tensor(partitions.train), torch.as_tensor(partitions.val)
    for _ in tqdm(range(max_epochs), desc=f"train {n} teachers (vmap)", disable=not progress):
        base.train()
        order = torch.stack([train_idx[int(i)][torch.randperm(m, generator=gens[int(i)])] for i in active])
        for start in range(0, m, batch_size):
            idx = order[:, start:start + batch_size]
            with autocast(dev, mixed_precision):
                z = fwd(plist, blist, Xt[idx].to(dev))
            loss = loss_of(z, Yt[idx].to(dev)).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        epochs[active.numpy()] += 1
        if m_val == 0:
            continue
        base.eval()
        vidx = val_idx[active]
        with torch.no_grad(), autocast(dev, mixed_precision):
            vl = loss_of(fwd(plist, blist, Xt[vidx].to(dev)), Yt[vidx].to(dev)).double().cpu()
        stop = record_stacked_losses(vl, active, best_loss, bad, patience, best_p + best_b, plist + blist)
        if stop.any():
            keep = (~stop).nonzero().squeeze(1)
            active = active[keep]
            if active.numel() == 0:
                break
            kd = keep.to(dev)
            new = [p.detach()[kd].clone().requires_grad_() for p in plist]
            opt = _compact_optimizer(opt, plist, new, kd)
            plist, blist = new, [b[kd].clone() for b in blist]
    if m_val == 0:
        best_p, best_b = [p.detach() for p in plist], blist
    ens = ModuleEnsemble(task, base, {k: v.detach().cpu() for k, v in zip(names_p, best_p)},
                         {k: v.cpu() for k, v in zip(names_b, best_b)}, epochs,
                         best_loss.numpy() if m_val else np.full(n, np.nan))
    ens.thresholds = _module_thresholds(ens, Xt, Yt, partitions, dev)
    return ens


def copy_module_to_meta(module: torch.nn.Module) -> torch.nn.Module:
    """Storage-free copy of ``module``'s architecture (for ``torch.func.functional_call``)."""
    import copy
    return copy.deepcopy(module).to("meta")


@torch.no_grad()
def _module_thresholds(ens: ModuleEnsemble, Xt: torch.Tensor, Yt: torch.Tensor, partitions: Partitions,
                       device: torch.device) -> np.ndarray | None:
    if ens.task != "binary" or partitions.threshold.shape[1] == 0:
        return None
    from torch.func import functional_call, vmap
    ens.base.eval()
    p = {k: v.to(device) for k, v in ens.params.items()}
    b = {k: v.to(device) for k, v in ens.buffers.items()}
    idx = torch.as_tensor(partitions.threshold)
    z = vmap(lambda pp, bb, x: functional_call(ens.base, (pp, bb), (x,)))(p, b, Xt[idx].to(device))
    s = torch.sigmoid(z.float())[..., 0].cpu().numpy()
    yv = Yt[idx].squeeze(-1).numpy()
    return np.array([youden_threshold(yv[i], s[i]) for i in range(partitions.n_teachers)])
