"""Labels to training targets (the package's one conversion, :func:`as_targets`) and the per-teacher losses of the
training loop: BCE with logits (Muschiol 2021 Eq. 2.2), its positive-class weighted form (Eq. 4.9), cross-entropy."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from pate_study.learning.train_config import TASKS


def as_targets(
    y: Any,
    task: str,
    n_outputs: int,
    n_rows: int,
    device: torch.device | str = "cpu",
    *,
    soft: bool = False,
    name: str = "y",
) -> torch.Tensor:
    """Labels -> training targets, checked (the one conversion of the package).

    binary: 0/1 ``[n]`` -> float ``[n, 1]``; multiclass: class indices ``[n]`` -> int64 ``[n]``, or float
    ``[n, C]`` (one-hot / soft) as given, or one-hot when ``soft`` (mixup); multilabel: ``[n, L]`` in
    [0, 1] -> float.
    """
    y = np.asarray(y.detach().cpu() if isinstance(y, torch.Tensor) else y)
    if y.ndim == 0 or y.shape[0] != n_rows:
        raise ValueError(f"{name}: expected {n_rows} rows (one per sample of X), got shape {y.shape}")
    if task == "binary":
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or not np.isin(y, (0, 1)).all():
            raise ValueError(f"{name}: a binary task expects a 1-d array of 0/1 labels")
        return torch.as_tensor(y.astype(np.float32), device=device).unsqueeze(-1)
    if task == "multiclass":
        if y.ndim == 2:
            if y.shape[1] != n_outputs or (y < 0).any():
                raise ValueError(f"{name}: multiclass targets as a matrix must be [n, {n_outputs}] non-negative")
            return torch.as_tensor(y.astype(np.float32), device=device)
        if (
            y.ndim != 1
            or y.size
            and (
                not np.issubdtype(y.dtype, np.integer)
                and not np.all(y == np.round(y))
                or y.min() < 0
                or y.max() >= n_outputs
            )
        ):
            raise ValueError(f"{name}: a multiclass task expects 1-d integer labels in [0, {n_outputs})")
        if soft:
            return torch.as_tensor(np.eye(n_outputs, dtype=np.float32)[y.astype(np.int64)], device=device)
        return torch.as_tensor(y.astype(np.int64), device=device)
    if task != "multilabel":
        raise ValueError(f"task={task!r}: expected one of {TASKS}")
    if y.ndim != 2 or y.shape[1] != n_outputs:
        raise ValueError(f"{name}: a multilabel task expects shape [n, {n_outputs}], got {y.shape}")
    if y.size and (y.min() < 0 or y.max() > 1):
        raise ValueError(f"{name}: multilabel targets must lie in [0, 1]")
    return torch.as_tensor(y.astype(np.float32), device=device)


def weighted_bce_with_logits(logits: torch.Tensor, target: torch.Tensor, pos_weight: torch.Tensor) -> torch.Tensor:
    """Elementwise BCE with positive-class weights, Muschiol (2021) Eq. (4.9):
    ``-(p_c t log sigmoid(z) + (1 - t) log(1 - sigmoid(z)))``, written as plain BCE (Eq. 2.2) plus
    ``(p_c - 1) t softplus(-z)``, so that ``p = 1`` gives exactly the unweighted loss and gradient (the added
    term and its gradient are exact zeros). ``pos_weight`` broadcasts against ``logits`` (``[N, 1, k]``)."""
    bce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
    return bce + (pos_weight - 1.0) * target * F.softplus(-logits)


def per_teacher_loss(
    logits: torch.Tensor, target: torch.Tensor, task: str, pos_weight: torch.Tensor | None = None
) -> torch.Tensor:
    """Mean loss of each teacher over its batch: ``logits [N, B, k]`` -> ``[N]``.

    BCE with logits (Muschiol 2021 Eq. 2.2) for binary/multilabel -- with ``pos_weight`` ``[N, 1, k]``
    the positive-class weighted BCE of Eq. (4.9) (:func:`weighted_bce_with_logits`), still the mean over
    the ``|t|`` outputs; cross-entropy for integer multiclass targets; ``-sum_c t_c log softmax_c`` for
    float (one-hot, soft or mixed) multiclass targets.
    """
    logits = logits.float()
    if pos_weight is not None and task != "multiclass":
        return weighted_bce_with_logits(logits, target, pos_weight).mean(dim=(1, 2))
    if task == "multiclass":
        n, bsz, k = logits.shape
        if target.is_floating_point():
            return -(target * F.log_softmax(logits, -1)).sum(-1).mean(1)
        return F.cross_entropy(logits.reshape(n * bsz, k), target.reshape(-1), reduction="none").view(n, bsz).mean(1)
    return F.binary_cross_entropy_with_logits(logits, target, reduction="none").mean(dim=(1, 2))
