"""Which training rows each teacher sees, step by step: shuffled cycles, label-balanced batches, mixup.

* :class:`PermutationStream` -- successive random permutations of a teacher's rows, cut into batches
  (an "epoch" is one permutation; in a step schedule batches run across permutation boundaries).
  Permutations come from ``torch.randperm`` with the teacher's own ``torch.Generator``, so an epoch
  schedule and a step schedule whose batch size divides the partition see the same batches.
* :class:`LabelBalancedStream` -- Muschiol (2021) §4.4.2, the batch-balancing sampler: keep
  ``id_by_label`` (per-label shuffled lists of row ids) and ``next_label`` (a shuffled list of all
  labels); for each sample pop a label, then pop an id carrying that label; an exhausted list is
  refilled with its original content and reshuffled. Multi-label aware: a row carrying several
  labels is in several lists; a label counts as present where its target is ``> 0`` (so mixed
  targets work, §4.4.3). Labels without any row are skipped (a teacher's partition rarely holds
  every label). Draws are vectorised per batch: the labels of the batch are taken from
  ``next_label`` at once, then each label's ids in one slice of its list -- the same semantics as
  popping one by one.
* :func:`index_plan` -- the step schedule's index plan: the next :data:`PLAN_STEPS` batches of every teacher in one
  ``[N, steps, B]`` tensor (moved to the device once per block; a step reads one slice of it).
* :class:`BatchBalancedSampler` -- the same stream as a ``torch.utils.data.Sampler``.
* :func:`mixup_coefficients` / :func:`mix_pairs` / :func:`mixup_pairs` -- mixup (Zhang et al. 2018)
  as in Muschiol (2021) §4.4.3: sample ``i`` of a batch is mixed with sample ``i+1`` (cyclically),
  ``x = b x_i + (1-b) x_{i+1}`` and ``y`` likewise, ``b ~ Beta(alpha, alpha)`` per sample.
  **alpha is not stated in the thesis**; it follows PANNs (Kong et al. 2020), whose mixup used
  ``alpha = 1.0`` (:data:`MIXUP_ALPHA_DEFAULT`, our documented choice; every function takes it
  as a parameter).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

__all__ = [
    "MIXUP_ALPHA_DEFAULT",
    "PLAN_STEPS",
    "PermutationStream",
    "LabelBalancedStream",
    "index_plan",
    "BatchBalancedSampler",
    "label_matrix",
    "mixup_coefficients",
    "mix_pairs",
    "mixup_pairs",
]

MIXUP_ALPHA_DEFAULT = 1.0  # PANNs (Kong et al. 2020); Muschiol (2021) §4.4.3 follows PANNs but states no alpha
_NO_IDS = np.zeros(0, dtype=np.int64)


def label_matrix(labels: Any, name: str = "labels") -> np.ndarray:
    """``[n, n_labels]`` presence matrix (``> 0``) from multi-label targets or 1-d class indices."""
    Y = np.asarray(labels.detach().cpu() if isinstance(labels, torch.Tensor) else labels)
    if Y.ndim == 1:
        if Y.size == 0 or not np.issubdtype(Y.dtype, np.integer) or Y.min() < 0:
            raise ValueError(f"{name}: expected non-negative integer class indices or a [n, n_labels] matrix")
        Y = np.eye(int(Y.max()) + 1, dtype=bool)[Y]
    if Y.ndim != 2 or Y.shape[0] == 0:
        raise ValueError(f"{name}: expected [n, n_labels] (or 1-d class indices), got shape {np.shape(labels)}")
    return Y > 0


class PermutationStream:
    """Successive ``torch.randperm`` permutations of ``ids`` drawn with ``generator``.

    :meth:`permutation` returns one full cycle (an epoch); :meth:`draw` returns the next ``k`` ids of
    the endless stream of cycles (a step schedule).
    """

    def __init__(self, ids: Any, generator: torch.Generator) -> None:
        self.ids = torch.as_tensor(np.asarray(ids, dtype=np.int64))
        if self.ids.ndim != 1 or self.ids.numel() == 0:
            raise ValueError("ids: expected a non-empty 1-d array of row ids")
        self.generator = generator
        self._queue = torch.zeros(0, dtype=torch.int64)

    def order(self) -> torch.Tensor:
        """The next cycle as positions into ``ids`` (a ``torch.randperm``)."""
        return torch.randperm(self.ids.numel(), generator=self.generator)

    def permutation(self) -> torch.Tensor:
        return self.ids[self.order()]

    def draw(self, k: int) -> torch.Tensor:
        while self._queue.numel() < k:
            self._queue = torch.cat([self._queue, self.permutation()])
        out, self._queue = self._queue[:k], self._queue[k:]
        return out


class LabelBalancedStream:
    """Muschiol (2021) §4.4.2 batch balancing over the rows ``ids`` with presence matrix ``labels``.

    ``labels``: ``[len(ids), n_labels]`` targets (``> 0`` = present) or 1-d class indices.
    ``rng``: a ``numpy.random.Generator`` (or a seed). :meth:`draw` returns the next ``k`` ids.
    The stream is determined by the seed and the sequence of ``k``.
    """

    def __init__(
        self, labels: Any, ids: Any | None = None, rng: np.random.Generator | int = 0, name: str = "labels"
    ) -> None:
        Y = label_matrix(labels, name)
        ids = np.arange(Y.shape[0]) if ids is None else np.asarray(ids, dtype=np.int64)
        if ids.shape != (Y.shape[0],):
            raise ValueError(f"ids: expected {Y.shape[0]} row ids (one per row of {name}), got shape {ids.shape}")
        self.id_by_label = [ids[np.flatnonzero(Y[:, j])] for j in range(Y.shape[1])]
        self.labels = np.array([j for j, rows in enumerate(self.id_by_label) if rows.size], dtype=np.int64)
        if self.labels.size == 0:
            raise ValueError(
                f"{name}: no label has a positive row, so there is nothing to balance; "
                "check the label subset or use sampler='random'"
            )
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self._next_label = np.zeros(0, dtype=np.int64)
        self._ids_left: dict[int, np.ndarray] = {}

    @staticmethod
    def _take(queue: np.ndarray, source: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """First ``k`` items of ``queue``, refilled with shuffled copies of ``source`` when exhausted. The copies
        needed come from one ``Generator.permuted`` call over rows of ``source``: the same draws, in the same order,
        as one ``Generator.permutation(source)`` per copy."""
        short = k - queue.size
        if short > 0:
            copies = -(-short // source.size)
            refill = (
                rng.permutation(source)
                if copies == 1
                else rng.permuted(source[None].repeat(copies, axis=0), axis=1).reshape(-1)
            )
            queue = np.concatenate([queue, refill]) if queue.size else refill
        return queue[:k], queue[k:]

    def draw_labels(self, k: int) -> np.ndarray:
        """The next ``k`` labels of ``next_label`` (each present label once per cycle)."""
        out, self._next_label = self._take(self._next_label, self.labels, k, self.rng)
        return out

    def draw(self, k: int) -> np.ndarray:
        """The next ``k`` row ids: a label from ``next_label``, then an id from that label's list (labels served
        in ascending order, each its ids in the order the label was drawn)."""
        labels = self.draw_labels(k)
        order = np.argsort(labels, kind="stable")
        uniq, counts = np.unique(labels[order], return_counts=True)
        taken = []
        for label, count in zip(uniq.tolist(), counts.tolist()):
            left = self._ids_left.get(label, _NO_IDS)
            out, self._ids_left[label] = self._take(left, self.id_by_label[label], count, self.rng)
            taken.append(out)
        ids = np.empty(k, dtype=np.int64)
        ids[order] = np.concatenate(taken)
        return ids


#: Batches a stream is drawn at once in the step schedule (one block of the index plan, :func:`index_plan`). Part of the
#: stream's definition: the balanced sampler's one generator serves labels and rows in the order of these draws.
PLAN_STEPS = 32


def index_plan(
    streams: Sequence[PermutationStream | LabelBalancedStream], batch_size: int, steps: int = PLAN_STEPS
) -> torch.Tensor:
    """int64 ``[len(streams), steps, batch_size]``: the next ``steps`` batches of every stream, drawn as one
    ``steps * batch_size`` draw per stream (with :data:`PLAN_STEPS`, the batches the step schedule has always used)."""
    if batch_size < 1 or steps < 1:
        raise ValueError(f"batch_size={batch_size}, steps={steps}: expected positive integers")
    draws = [torch.as_tensor(stream.draw(batch_size * steps)) for stream in streams]
    return torch.stack(draws).view(len(streams), steps, batch_size)


class BatchBalancedSampler(torch.utils.data.Sampler[int]):
    """:class:`LabelBalancedStream` as a ``torch`` sampler: ``num_samples`` ids per iteration
    (default: the number of rows), drawn one batch of ``chunk`` ids at a time."""

    def __init__(self, labels: Any, num_samples: int | None = None, seed: int = 0, chunk: int = 4096) -> None:
        self.stream = LabelBalancedStream(labels, rng=seed)
        self.num_samples = int(num_samples or np.shape(labels)[0])
        self.chunk = int(chunk)

    def __iter__(self) -> Iterator[int]:
        left = self.num_samples
        while left > 0:
            k = min(self.chunk, left)
            yield from self.stream.draw(k).tolist()
            left -= k

    def __len__(self) -> int:
        return self.num_samples


def mixup_coefficients(
    alpha: float, rngs: Sequence[np.random.Generator], shape: int | tuple[int, ...], device: torch.device | None = None
) -> torch.Tensor:
    """``float32 [len(rngs), *shape]`` mixing weights ``b ~ Beta(alpha, alpha)``, one row per teacher, each drawn
    from that teacher's own generator (so a teacher's draws do not depend on how many teachers are stacked with
    it). ``shape``: a batch size, or ``(steps, batch_size)`` for a block of steps (numpy fills an array element by
    element, so one ``(steps, B)`` draw equals ``steps`` draws of ``B``)."""
    if not alpha > 0:
        raise ValueError(f"mixup_alpha={alpha!r}: expected a positive Beta parameter (or None for no mixup)")
    lam = np.stack([rng.beta(alpha, alpha, size=shape) for rng in rngs]).astype(np.float32)
    return torch.as_tensor(lam, device=device)


def mix_pairs(t: torch.Tensor, lam: torch.Tensor, dim: int = 1) -> torch.Tensor:
    """``lam * t_i + (1 - lam) * t_{i+1}`` along ``dim`` (cyclic), ``lam`` broadcast over the trailing dims.

    ``t``: ``[N, B, ...]`` with ``lam: [N, B]`` (``dim=1``) or ``[B, ...]`` with ``lam: [B]`` (``dim=0``).
    """
    if not t.is_floating_point():
        raise ValueError("mixup needs float inputs and targets (one-hot or multi-label), got integer labels")
    w = lam.to(t.dtype).reshape(*lam.shape, *([1] * (t.dim() - lam.dim())))
    return w * t + (1 - w) * torch.roll(t, -1, dims=dim)


def mixup_pairs(
    x: torch.Tensor, y: torch.Tensor, alpha: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mixup of one batch ``x: [B, ...]``, ``y: [B, ...]`` (float targets), ``b`` from a numpy
    generator seeded by ``generator`` (Muschiol 2021 §4.4.3; see the module docstring for alpha)."""
    rng = np.random.default_rng(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
    lam = mixup_coefficients(alpha, [rng], x.shape[0], x.device)[0]
    return mix_pairs(x, lam, dim=0), mix_pairs(y, lam, dim=0)
