"""The settings and the result of one run of the package's training loop
(:func:`pate_study.learning.training.train_stacked`): :class:`TrainConfig` (schedules, sampler, mixup, checkpoint
selection; checked when made), :class:`TrainResult`, and each teacher's (init, shuffle, dropout) seeds
(:func:`teacher_seeds`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

TASKS = ("binary", "multiclass", "multilabel")
SAMPLERS = ("random", "balanced")
SELECTIONS = ("validation", "test", "last")
SELECT_ON = ("loss", "mAP", "auc")
HISTORY_COLUMNS = ("step", "teacher", "split", "metric", "value")


@dataclass(frozen=True)
class TrainConfig:
    """Training settings of one stacked run (architecture-free; see the module docstring).

    ``max_steps=None``: epoch schedule (``max_epochs``, ``patience`` epochs). ``max_steps`` set: step
    schedule, evaluation every ``eval_every`` steps (default: ``max(1, max_steps // 20)``), early
    stopping after ``step_patience`` evaluations without improvement (default: none, the best
    checkpoint of all ``max_steps`` is kept). ``sampler``: "random" (shuffled cycles) or "balanced"
    (Muschiol 2021 §4.4.2). ``mixup_alpha``: None (off) or the Beta parameter (the thesis states none;
    :data:`pate_study.learning.samplers.MIXUP_ALPHA_DEFAULT` = 1.0 follows PANNs). ``selection``/``select_on``:
    which split and score pick each teacher's checkpoint. ``allow_empty_labels``: a multi-label column
    with no positive row in any teacher's training rows is an error unless this is set. ``compile_step``: the
    forward and loss of a training step (:func:`pate_study.learning.training.step_loss`) through ``torch.compile`` -- on
    CUDA with ``mode="reduce-overhead"`` (CUDA graphs), elsewhere inductor's default -- for the stacked MLP only; the
    same draws as the eager step, float results equal to rounding (fused kernels), never used by a committed output.
    """

    task: str = "binary"
    lr: float = 1e-3
    weight_decay: float = 0.0
    batch_size: int = 128
    max_epochs: int = 20
    patience: int = 3
    max_steps: int | None = None
    eval_every: int | None = None
    step_patience: int | None = None
    sampler: str = "random"
    mixup_alpha: float | None = None
    selection: str = "validation"
    select_on: str = "loss"
    allow_empty_labels: bool = False
    compile_step: bool = False

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task={self.task!r}: expected one of {TASKS}")
        for name in ("batch_size", "max_epochs", "patience"):
            _check_positive_int(name, getattr(self, name))
        for name in ("max_steps", "eval_every", "step_patience"):
            if getattr(self, name) is not None:
                _check_positive_int(name, getattr(self, name))
        if not self.lr > 0:
            raise ValueError(f"lr={self.lr!r}: expected a positive learning rate")
        if not self.weight_decay >= 0:
            raise ValueError(f"weight_decay={self.weight_decay!r}: expected a non-negative value")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler={self.sampler!r}: expected one of {SAMPLERS}")
        if self.sampler == "balanced" and self.task == "binary":
            raise ValueError("sampler='balanced': needs labels to balance (multiclass or multilabel), task is binary")
        if self.mixup_alpha is not None and not self.mixup_alpha > 0:
            raise ValueError(f"mixup_alpha={self.mixup_alpha!r}: expected a positive Beta parameter or None")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection={self.selection!r}: expected one of {SELECTIONS}")
        if self.select_on not in SELECT_ON:
            raise ValueError(f"select_on={self.select_on!r}: expected one of {SELECT_ON}")
        if not isinstance(self.compile_step, bool):
            raise ValueError(f"compile_step={self.compile_step!r}: expected True or False")

    @property
    def step_schedule(self) -> bool:
        return self.max_steps is not None

    @property
    def evaluation_interval(self) -> int:
        """Steps between evaluations in a step schedule."""
        return int(self.eval_every or max(1, int(self.max_steps or 0) // 20))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name}={value!r}: expected a positive integer")


@dataclass
class TrainResult:
    """What :func:`pate_study.learning.training.train_stacked` returns (tensors on the CPU, leading dimension ``N``).

    ``params``/``buffers``: the selected checkpoint of every teacher; ``epochs``: epochs run (epoch
    schedule; step schedule: completed passes over the partition); ``steps``: optimiser steps run;
    ``best_score``: the selection score of the kept checkpoint (loss: lower is better; mAP/auc: higher;
    nan where none was evaluated); ``best_step``: its step (-1: final parameters kept);
    ``history``: tidy DataFrame (:data:`HISTORY_COLUMNS`); ``selection``: a label of how checkpoints were chosen.
    """

    params: list[torch.Tensor]
    buffers: list[torch.Tensor]
    epochs: np.ndarray
    steps: np.ndarray
    best_score: np.ndarray
    best_step: np.ndarray
    history: pd.DataFrame
    selection: str


def teacher_seeds(seed: int, n_teachers: int) -> np.ndarray:
    """``uint32 [n_teachers, 3]``: (init, shuffle, dropout) seeds of each teacher from ``SeedSequence(seed).spawn``."""
    children = np.random.SeedSequence(seed).spawn(n_teachers)
    return np.stack([c.generate_state(3) for c in children])
