"""Evaluation and checkpoint selection inside the training loop: per-teacher loss, mAP and ROC-AUC on own or
shared rows (:func:`evaluate_stacked`), and the patience rule of early stopping, for one score sequence
(:class:`EarlyStopping`) and for stacked teachers (:func:`record_stacked_losses`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from pate_study.core.device import autocast
from pate_study.learning.losses import per_teacher_loss
from pate_study.learning.metrics import mean_average_precision_and_roc_auc
from pate_study.learning.stacked import StackedPass


def label_truth(y: np.ndarray, task: str, n_outputs: int) -> np.ndarray:
    """0/1 ``[n, k]`` truth for mAP/AUC: binary ``[n, 1]``, multiclass one-hot, multilabel ``> 0.5``."""
    if task == "binary":
        return np.asarray(y).reshape(-1, 1) > 0.5
    if task == "multiclass" and np.ndim(y) == 1:
        return np.eye(n_outputs, dtype=bool)[np.asarray(y, dtype=np.int64)]
    return np.asarray(y) > 0.5


def _probabilities(z: torch.Tensor, task: str) -> np.ndarray:
    return (torch.softmax(z, -1) if task == "multiclass" else torch.sigmoid(z)).numpy()


def _score_metrics(truth: np.ndarray, probs: np.ndarray) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mean_average_precision_and_roc_auc(truth, probs)


@torch.no_grad()
def evaluate_stacked(
    stacked: StackedPass,
    source: Any,
    rows: torch.Tensor,
    target: torch.Tensor,
    truth: np.ndarray,
    task: str,
    device: torch.device,
    amp: bool | None,
    max_rows: int = 1 << 16,
    keep_probs: bool = False,
) -> dict[str, np.ndarray]:
    """Per-teacher loss, mAP and AUC of ``stacked`` on ``rows`` (``[N, m]`` own rows or ``[m]`` shared rows).

    ``target``: the rows' targets (``[N, m, ...]`` or ``[m, ...]``); ``truth``: their 0/1 label matrix
    (``[N, m, k]`` or ``[m, k]``). One forward pass for all teachers when ``N * m <= max_rows``; else
    blocks of teachers and chunks of rows (a shared test set of 20,000 clips x 50 teachers), the loss
    then being the row-weighted mean of the chunks' means. ``keep_probs``: also return the
    probabilities ``[N, m, k]`` under "probs" (for an ``on_evaluate`` hook).
    """
    n = stacked.params[0].shape[0]
    shared = rows.dim() == 1
    m = rows.shape[-1]
    k = int(truth.shape[-1])
    block = n if n * m <= max_rows else max(1, min(n, max_rows // max(m, 1)))
    chunk = m if block > 1 or m <= max_rows else max_rows
    out = {"loss": np.zeros(n), "mAP": np.zeros(n), "auc": np.zeros(n)}
    kept = []
    for j0 in range(0, n, block):
        j1 = min(n, j0 + block)
        block_pass = stacked.teachers(j0, j1)
        loss = torch.zeros(j1 - j0, dtype=torch.float64)
        probs = []
        for c0 in range(0, m, chunk):
            r = rows[c0 : c0 + chunk] if shared else rows[j0:j1, c0 : c0 + chunk]
            with autocast(device, amp):
                z = block_pass.logits(source, r)
            t = target[c0 : c0 + chunk] if shared else target[j0:j1, c0 : c0 + chunk]
            if shared:
                t = t.expand(j1 - j0, *t.shape)  # a view: the loss reads the shared targets N times, no copy
            loss += per_teacher_loss(z, t, task).double().cpu() * (r.shape[-1] / m if chunk < m else 1.0)
            probs.append(_probabilities(z.float().cpu(), task))
        out["loss"][j0:j1] = loss.numpy()
        probs = np.concatenate(probs, axis=1) if len(probs) > 1 else probs[0]
        for i in range(j1 - j0):
            tr = truth if shared else truth[j0 + i]
            out["mAP"][j0 + i], out["auc"][j0 + i] = _score_metrics(tr, probs[i].reshape(m, k))
        if keep_probs:
            kept.append(probs.reshape(j1 - j0, m, k))
    if keep_probs:
        return {**out, "probs": np.concatenate(kept, axis=0)}
    return out


@dataclass
class EarlyStopping:
    """The patience rule on one score sequence (lower is better).

    A score strictly below the best so far resets the count and keeps ``snapshot()`` as ``state``;
    ``patience`` evaluations in a row without one stop training. :func:`record_stacked_losses`
    applies the same rule to stacked teachers (the loop uses that one).
    """

    patience: int
    best: float = float("inf")
    bad: int = 0
    state: Any = None

    def update(self, loss: float, snapshot: Callable[[], Any]) -> bool:
        """Record one evaluation's score; True when training should stop."""
        if loss < self.best:
            self.best, self.bad, self.state = loss, 0, snapshot()
            return False
        self.bad += 1
        return self.bad >= self.patience


def record_stacked_losses(
    val_loss: torch.Tensor,
    active: torch.Tensor,
    best_loss: torch.Tensor,
    bad: torch.Tensor,
    patience: int | None,
    best: Sequence[torch.Tensor],
    live: Sequence[torch.Tensor],
) -> torch.Tensor:
    """:class:`EarlyStopping` for stacked teachers, in place; returns the stop mask over ``active``.

    ``val_loss[j]`` (lower is better; nan never improves) belongs to teacher ``active[j]`` (row ``j`` of
    every ``live`` tensor); improved rows are copied into the full-size ``best`` tensors and
    ``best_loss``, and ``bad`` counts the evaluations without improvement per teacher (a nan score
    leaves the count as it is). ``patience=None``: never stop.
    """
    improved = val_loss < best_loss[active]
    rows = improved.nonzero().squeeze(1)
    if rows.numel():
        dev = best[0].device if len(best) else torch.device("cpu")
        ids = active[rows].to(dev)
        for target, source in zip(best, live):
            target.index_copy_(0, ids, source.detach()[rows.to(dev)])
        best_loss[active[rows]] = val_loss[rows]
    counted = ~torch.isnan(val_loss)  # a teacher without a score this time (e.g. no positive label) is not "worse"
    bad[active] = torch.where(improved, torch.zeros_like(bad[active]), bad[active] + counted.to(bad.dtype))
    if patience is None:
        return torch.zeros_like(improved)
    return bad[active] >= patience
