"""Student training from aggregated teacher labels.

PATE's student (Papernot et al. 2017 §2.3) is trained on public (here: possibly locally
privatised) queries labelled by the noisy aggregator; only answered queries are used (a
confident aggregator may return "no answer"). Sources:

* Sosa (2021) / MAKE 2021: the student is trained on the queries' features -- original features
  in Sosa §4.2.1, privatised ones in the MAKE reading -- so :func:`train_student` takes both and a
  ``features`` switch; its decision threshold maximises Youden's J on a held-out split (200 samples).
* Muschiol (2021) §4.4.2-4.4.3 for multi-label: the batch-balancing sampler and mixup
  (:mod:`pate_study.learning.samplers`; :class:`BatchBalancedSampler` and :func:`mixup_pairs` are re-exported
  here); Adam; best checkpoint kept.

:func:`fit_model` trains one ``nn.Module`` with the package's one training loop
(:func:`pate_study.learning.training.train_stacked` with ``N = 1``): Adam, early stopping on a validation split
or a step schedule, best parameters restored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from pate_study.core.device import autocast, choose_device
from pate_study.learning.samplers import BatchBalancedSampler, mixup_pairs
from pate_study.learning.stacked import StackedModule
from pate_study.learning.train_config import TASKS, TrainConfig, teacher_seeds
from pate_study.learning.training import train_stacked
from pate_study.learning.voting import youden_threshold

logger = logging.getLogger(__name__)

__all__ = [
    "BatchBalancedSampler",
    "mixup_pairs",
    "FitResult",
    "fit_model",
    "predict_scores",
    "StudentResult",
    "train_student",
]


@dataclass
class FitResult:
    """A trained single model: ``epochs`` run, best validation loss (nan without a validation split),
    ``history`` (validation loss per evaluation), ``steps`` run, and the loop's tidy ``frame``."""

    model: nn.Module
    epochs: int
    best_val_loss: float
    history: list[float] = field(default_factory=list)
    steps: int = 0
    frame: pd.DataFrame | None = None


def fit_model(
    model: nn.Module,
    X: Any,
    y: Any,
    task: str,
    X_val: Any = None,
    y_val: Any = None,
    *,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    batch_size: int = 64,
    max_epochs: int = 50,
    patience: int = 5,
    sampler: str = "random",
    mixup_alpha: float | None = None,
    seed: int = 0,
    device: str | torch.device | None = None,
    progress: bool = False,
    **training: Any,
) -> FitResult:
    """Train ``model`` with the package's one loop (:func:`pate_study.learning.training.train_stacked`, ``N = 1``).

    Adam; epochs with early stopping on the validation loss (best parameters restored) by default, or
    a step schedule (``max_steps``, ``eval_every``, ... in ``training``, see
    :class:`pate_study.learning.train_config.TrainConfig`). ``sampler``: "random" or "balanced"
    (:class:`pate_study.learning.samplers.LabelBalancedStream`, multi-label / multi-class); ``mixup_alpha``
    enables mixup (multi-class labels become one-hot). Without a validation split the final
    parameters are kept.
    """
    if task not in TASKS:
        raise ValueError(f"task={task!r}: expected one of {TASKS}")
    config = TrainConfig(
        task=task,
        lr=lr,
        weight_decay=weight_decay,
        batch_size=batch_size,
        max_epochs=max_epochs,
        patience=patience,
        sampler=sampler,
        mixup_alpha=mixup_alpha,
        **training,
    )
    dev = choose_device(device)
    X = np.asarray(X, dtype=np.float32)
    y = np.asarray(y)
    if X.ndim < 2 or X.shape[0] == 0 or y.shape[0] != X.shape[0]:
        raise ValueError(f"X, y: expected the same non-zero number of rows, got X {X.shape} and y {y.shape}")
    has_val = X_val is not None and y_val is not None and len(y_val) > 0
    n, n_val = X.shape[0], (len(y_val) if has_val else 0)
    if has_val:
        X_val = np.asarray(X_val, dtype=np.float32)
        if X_val.shape[1:] != X.shape[1:] or X_val.shape[0] != n_val:
            raise ValueError(f"X_val: expected shape [{n_val}, {', '.join(map(str, X.shape[1:]))}], got {X_val.shape}")
        X = np.concatenate([X, X_val])
        y = np.concatenate([y, np.asarray(y_val).astype(y.dtype)])
    seeds = teacher_seeds(seed, 1)
    stacked = StackedModule([model], seeds, device=dev)
    result = train_stacked(
        stacked,
        X,
        y,
        np.arange(n)[None],
        n + np.arange(n_val)[None],
        config,
        seeds,
        device=dev,
        progress=progress,
        desc="fit",
    )
    state = {name: t[0] for name, t in zip(stacked.param_names + stacked.buffer_names, result.params + result.buffers)}
    model.load_state_dict(state)
    model.eval()
    val = result.history.query("split == 'validation' and metric == 'loss'")["value"].tolist()
    best = float(result.best_score[0]) if has_val and config.select_on == "loss" else float("nan")
    return FitResult(model, int(result.epochs[0]), best, val, int(result.steps[0]), result.history)


@torch.no_grad()
def predict_scores(
    model: nn.Module, X: Any, task: str, batch_size: int = 4096, device: str | torch.device | None = None
) -> np.ndarray:
    """Probabilities: binary ``[n]`` (sigmoid), multiclass ``[n, C]`` (softmax), multilabel ``[n, L]``."""
    dev = choose_device(device)
    model = model.to(dev).eval()
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float32))
    outs = []
    for start in range(0, Xt.shape[0], batch_size):
        with autocast(dev):
            outs.append(model(Xt[start : start + batch_size].to(dev)).float().cpu())
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


def train_student(
    model_fn: Callable[[], nn.Module],
    X_clean: Any,
    labels: Any,
    task: str,
    *,
    answered: Any | None = None,
    X_private: Any | None = None,
    features: str = "clean",
    X_val: Any = None,
    y_val: Any = None,
    X_threshold: Any = None,
    y_threshold: Any = None,
    seed: int = 0,
    **fit_kw: Any,
) -> StudentResult:
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
        threshold = (
            youden_threshold(yt, s)
            if task == "binary"
            else np.array([youden_threshold(yt[:, j], s[:, j]) for j in range(yt.shape[1])])
        )
    elif task == "binary":
        threshold = 0.5
    return StudentResult(fit.model, threshold, int(mask.sum()), fit)
