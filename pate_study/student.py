"""Student training from aggregated teacher labels.

PATE's student (Papernot et al. 2017 §2.3) is trained on public (here: possibly locally
privatised) queries labelled by the noisy aggregator; only answered queries are used (a
confident aggregator may return "no answer"). Sources:

* Sosa (2021) / MAKE 2021: the student is trained on the queries' features -- original features
  in Sosa §4.2.1, privatised ones in the MAKE reading -- so :func:`train_student` takes both and a
  ``features`` switch; its decision threshold maximises Youden's J on a held-out split (200 samples).
* Muschiol (2021) §4.4.2-4.4.3 for multi-label: the batch-balancing sampler
  (:class:`BatchBalancedSampler`) and mixup (:func:`mixup_pairs`); Adam; best checkpoint kept.

:func:`fit_model` is the generic single-model trainer (Adam, early stopping on a validation
split, best parameters restored), used by the student and usable for any ``nn.Module`` teacher
(e.g. :class:`pate_study.models.ResNetLogMel`) in a loop.
"""
from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from pate_study.device import autocast, choose_device
from pate_study.ensemble import TASKS, EarlyStopping, youden_threshold

logger = logging.getLogger(__name__)

__all__ = [
    "BatchBalancedSampler", "mixup_pairs", "FitResult", "fit_model", "predict_scores", "StudentResult",
    "train_student",
]


class BatchBalancedSampler(torch.utils.data.Sampler[int]):
    """Muschiol (2021) §4.4.2: draw a label uniformly, then a clip carrying that label.

    Keeps ``id_by_label`` (per-label shuffled lists of sample ids) and ``next_label`` (a shuffled
    list of all labels). For each sample: pop a label from ``next_label``, pop an id from that
    label's list; an exhausted list is refilled with its original content and reshuffled. A label
    counts as present where ``labels > 0`` (so mixed targets work). Labels without any sample are
    skipped. ``num_samples`` ids are produced per iteration (default: number of rows).
    """

    def __init__(self, labels: Any, num_samples: int | None = None, seed: int = 0) -> None:
        Y = np.asarray(labels)
        if Y.ndim == 1:  # class indices -> one-hot
            Y = np.eye(int(Y.max()) + 1)[Y]
        if Y.ndim != 2 or Y.shape[0] == 0:
            raise ValueError(f"labels: expected [n, n_labels] (or 1-d class indices), got shape {np.shape(labels)}")
        self._ids = [np.flatnonzero(Y[:, j] > 0) for j in range(Y.shape[1])]
        self._labels = np.array([j for j, ids in enumerate(self._ids) if ids.size > 0])
        if self._labels.size == 0:
            raise ValueError("labels: no label has a positive sample")
        self.num_samples = int(num_samples or Y.shape[0])
        self._rng = np.random.default_rng(seed)
        self._pool: dict[int, list[int]] = {}
        self._next: list[int] = []

    def _pop_label(self) -> int:
        if not self._next:
            self._next = list(self._rng.permutation(self._labels))
        return int(self._next.pop())

    def _pop_id(self, label: int) -> int:
        pool = self._pool.get(label)
        if not pool:
            pool = list(self._rng.permutation(self._ids[label]))
            self._pool[label] = pool
        return int(pool.pop())

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.num_samples):
            yield self._pop_id(self._pop_label())

    def __len__(self) -> int:
        return self.num_samples


def mixup_pairs(x: torch.Tensor, y: torch.Tensor, alpha: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Mixup (Zhang et al. 2018) as in Muschiol (2021) §4.4.3: sample i is mixed with sample i+1
    (cyclically) of the batch, ``x = b x_i + (1-b) x_{i+1}``, ``y`` likewise, ``b ~ Beta(alpha, alpha)``
    drawn per sample. alpha is not stated in the thesis (PANNs used 1.0)."""
    if alpha <= 0:
        raise ValueError(f"alpha={alpha!r}: expected a positive Beta parameter")
    n = x.shape[0]
    g = np.random.default_rng(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
    lam = torch.as_tensor(g.beta(alpha, alpha, size=n), dtype=x.dtype, device=x.device)
    perm = torch.roll(torch.arange(n, device=x.device), -1)
    lx = lam.view(-1, *([1] * (x.dim() - 1)))
    ly = lam.view(-1, *([1] * (y.dim() - 1))).to(y.dtype) if y.is_floating_point() else None
    if ly is None:
        raise ValueError("y: mixup needs float targets (one-hot or multi-label)")
    return lx * x + (1 - lx) * x[perm], ly * y + (1 - ly) * y[perm]


def _loss(logits: torch.Tensor, y: torch.Tensor, task: str) -> torch.Tensor:
    logits = logits.float()
    if task == "multiclass":
        return F.cross_entropy(logits, y) if not y.is_floating_point() else -(y * F.log_softmax(logits, -1)).sum(-1).mean()
    return F.binary_cross_entropy_with_logits(logits.reshape(y.shape), y)


@dataclass
class FitResult:
    model: nn.Module
    epochs: int
    best_val_loss: float
    history: list[float] = field(default_factory=list)


def _targets(y: Any, task: str, n_outputs: int, device: torch.device) -> torch.Tensor:
    y = np.asarray(y)
    if task == "multiclass":
        if y.ndim == 1:
            return torch.as_tensor(y.astype(np.int64), device=device)
        return torch.as_tensor(y.astype(np.float32), device=device)
    if task == "binary":
        return torch.as_tensor(y.astype(np.float32).reshape(-1, 1), device=device)
    return torch.as_tensor(y.astype(np.float32), device=device)


def fit_model(model: nn.Module, X: Any, y: Any, task: str, X_val: Any = None, y_val: Any = None, *,
              lr: float = 1e-3, weight_decay: float = 0.0, batch_size: int = 64, max_epochs: int = 50,
              patience: int = 5, sampler: str = "random", mixup_alpha: float | None = None, seed: int = 0,
              device: str | torch.device | None = None, progress: bool = False) -> FitResult:
    """Train ``model`` with Adam; early stopping on the validation loss (best parameters restored).

    ``sampler``: "random" (a fresh permutation per epoch) or "balanced" (:class:`BatchBalancedSampler`,
    multi-label / multi-class); ``mixup_alpha`` enables mixup (needs float targets: multi-label, or
    multi-class labels are one-hot encoded). Without a validation split the final parameters are kept.
    """
    if task not in TASKS:
        raise ValueError(f"task={task!r}: expected one of {TASKS}")
    if sampler not in ("random", "balanced"):
        raise ValueError(f"sampler={sampler!r}: expected 'random' or 'balanced'")
    dev = choose_device(device)
    torch.manual_seed(seed)  # nn.Dropout draws from the global generator; keep it seeded
    gen = torch.Generator().manual_seed(seed)
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float32), device=dev)
    y_arr = np.asarray(y)
    n_out = None
    if task == "multiclass" and mixup_alpha is not None and y_arr.ndim == 1:
        with torch.no_grad():
            n_out = model.to(dev)(Xt[:1]).shape[-1]
        y_arr = np.eye(n_out, dtype=np.float32)[y_arr]
    Yt = _targets(y_arr, task, n_out or 0, dev)
    if Xt.shape[0] != Yt.shape[0] or Xt.shape[0] == 0:
        raise ValueError(f"X, y: expected the same non-zero number of rows, got {Xt.shape[0]} and {Yt.shape[0]}")
    has_val = X_val is not None and y_val is not None and len(y_val) > 0
    if has_val:
        Xv = torch.as_tensor(np.asarray(X_val, dtype=np.float32), device=dev)
        Yv = _targets(y_val, task, 0, dev)
    model = model.to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    bal = BatchBalancedSampler(y_arr, seed=seed) if sampler == "balanced" else None
    stopper, history, epoch = EarlyStopping(patience), [], 0
    for epoch in tqdm(range(1, max_epochs + 1), desc="fit", disable=not progress):
        model.train()
        order = torch.as_tensor(list(iter(bal)), device=dev) if bal else torch.randperm(Xt.shape[0], generator=gen).to(dev)
        for start in range(0, order.numel(), batch_size):
            idx = order[start:start + batch_size]
            xb, yb = Xt[idx], Yt[idx]
            if mixup_alpha is not None:
                xb, yb = mixup_pairs(xb, yb, mixup_alpha, gen)
            with autocast(dev):
                out = model(xb)
            loss = _loss(out, yb, task)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if not has_val:
            continue
        model.eval()
        with torch.no_grad(), autocast(dev):
            vl = float(_loss(model(Xv), Yv, task))
        history.append(vl)
        if stopper.update(vl, lambda: copy.deepcopy(model.state_dict())):
            break
    if stopper.state is not None:
        model.load_state_dict(stopper.state)
    model.eval()
    return FitResult(model, epoch, stopper.best if has_val else float("nan"), history)


@torch.no_grad()
def predict_scores(model: nn.Module, X: Any, task: str, batch_size: int = 4096,
                   device: str | torch.device | None = None) -> np.ndarray:
    """Probabilities: binary ``[n]`` (sigmoid), multiclass ``[n, C]`` (softmax), multilabel ``[n, L]``."""
    dev = choose_device(device)
    model = model.to(dev).eval()
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float32))
    outs = []
    for start in range(0, Xt.shape[0], batch_size):
        with autocast(dev):
            outs.append(model(Xt[start:start + batch_size].to(dev)).float().cpu())
    z = torch.cat(outs)
    if task == "multiclass":
        return torch.softmax(z, -1).numpy()
    p = torch.sigmoid(z).numpy()
    return p.reshape(-1) if task == "binary" else p


@dataclass
class StudentResult:
    model: nn.Module
    threshold: float | np.ndarray | None
    n_train: int
    fit: FitResult


def train_student(model_fn: Callable[[], nn.Module], X_clean: Any, labels: Any, task: str, *,
                  answered: Any | None = None, X_private: Any | None = None, features: str = "clean",
                  X_val: Any = None, y_val: Any = None, X_threshold: Any = None, y_threshold: Any = None,
                  seed: int = 0, **fit_kw: Any) -> StudentResult:
    """Train a student on the aggregated ``labels`` of the answered queries.

    ``features``: "clean" (train on ``X_clean``, Sosa 2021 §4.2.1) or "privatised" (train on
    ``X_private``, the noisy vectors the teachers saw). ``answered``: boolean mask of answered
    queries (default: all; unanswered rows must not be used). Binary students get a Youden-J
    threshold on (``X_threshold``, ``y_threshold``) -- Sosa's 200 held-out samples -- else 0.5;
    multi-label students get one Youden threshold per label. ``fit_kw`` goes to :func:`fit_model`.
    """
    if features not in ("clean", "privatised"):
        raise ValueError(f"features={features!r}: expected 'clean' or 'privatised'")
    X = X_clean if features == "clean" else X_private
    if X is None:
        raise ValueError("X_private: required when features='privatised'")
    X = np.asarray(X, dtype=np.float32)
    labels = np.asarray(labels)
    if labels.shape[0] != X.shape[0]:
        raise ValueError(f"labels: expected {X.shape[0]} rows (one per query), got {labels.shape[0]}")
    mask = np.ones(X.shape[0], dtype=bool) if answered is None else np.asarray(answered, dtype=bool)
    if mask.shape != (X.shape[0],):
        raise ValueError(f"answered: expected a boolean mask of length {X.shape[0]}")
    if not mask.any():
        raise ValueError("answered: no query was answered; nothing to train the student on")
    torch.manual_seed(seed)
    model = model_fn()
    fit = fit_model(model, X[mask], labels[mask], task, X_val, y_val, seed=seed, **fit_kw)
    threshold: float | np.ndarray | None = None
    if X_threshold is not None and y_threshold is not None and task in ("binary", "multilabel"):
        s = predict_scores(fit.model, X_threshold, task, device=fit_kw.get("device"))
        yt = np.asarray(y_threshold)
        threshold = youden_threshold(yt, s) if task == "binary" else np.array(
            [youden_threshold(yt[:, j], s[:, j]) for j in range(yt.shape[1])])
    elif task == "binary":
        threshold = 0.5
    return StudentResult(fit.model, threshold, int(mask.sum()), fit)
