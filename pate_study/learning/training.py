"""The one training loop of the package: ``N`` stacked models (teachers) or a single model (``N = 1``).

:func:`train_stacked` trains any stacked model of :mod:`pate_study.learning.stacked` -- the explicit MLP (dense or
sparse first layer) or any ``nn.Module`` through ``torch.func`` -- on per-teacher row sets. Every
ensemble (:func:`pate_study.learning.ensemble.train_ensemble`,
:func:`pate_study.learning.ensemble.train_module_ensemble`),
the loop of single models used as reference and baseline, and the student trainer
(:func:`pate_study.learning.student.fit_model`) call it. What it does, per step, for all teachers at once:

1. rows: each teacher draws ``batch_size`` rows of its own partition from its own stream
   (:mod:`pate_study.learning.samplers`: shuffled cycles, or Muschiol 2021 §4.4.2's label-balanced sampler);
2. optional mixup (Muschiol 2021 §4.4.3), coefficients from each teacher's own generator -- in the step schedule
   rows and coefficients come in blocks of :data:`~pate_study.learning.samplers.PLAN_STEPS` steps
   (:func:`step_plan`: one host draw per teacher and block, one copy to the device, one slice per step);
3. loss per teacher (BCE with logits, Muschiol Eq. 2.2, for binary and multi-label; cross-entropy for
   multi-class; soft cross-entropy for mixed one-hot targets), summed over teachers -- the teachers'
   parameters are disjoint, so each gets exactly its own gradient;
4. one fused Adam step over the stacked tensors (Adam is elementwise, so each teacher's slice is
   updated exactly as by its own optimiser).

Schedules (:class:`~pate_study.learning.train_config.TrainConfig`):

* **epochs** (``max_steps=None``; ECG and web): one shuffled pass over the partition per epoch, an
  evaluation after every epoch and early stopping with ``patience`` epochs on the selection score;
* **steps** (``max_steps`` set; the Audio Set default, the thesis trains ~10,000 iterations of batch 64
  and keeps the best checkpoint): ``max_steps`` optimiser steps of ``batch_size`` rows per teacher, an
  evaluation every ``eval_every`` steps and at the last, the best checkpoint kept, early stopping only
  when ``step_patience`` (in evaluations) is set.

Evaluation records per-teacher loss, mAP and macro ROC-AUC (:mod:`pate_study.learning.metrics`) on each
teacher's validation rows and, when given, on a shared ``test`` set, into a tidy history
(``pandas.DataFrame``: step, teacher, split, metric, value), plus the mean training loss since the
previous evaluation (split "train"). The checkpoint of each teacher is selected on its **validation**
split by default (``select_on``: loss, mAP or auc); ``selection="test"`` selects on the shared test set,
as Muschiol (2021) apparently did (its best checkpoints and early stopping read the official Audio Set eval set,
which is also its reported test set) -- offered as an explicitly labelled option,
optimistic by construction, never the default; ``selection="last"`` keeps the final parameters.
A teacher that never got a finite score keeps its final parameters (e.g. no validation rows).

The loop in parts (each one screen): :func:`train_stacked` builds the run's fixed inputs
(:class:`LoopInputs`: targets, row ids, samplers) and its one mutable state (:class:`LoopState`: live and
selected parameters, optimiser, active teachers, scores, history), then runs one of two schedules,
:func:`run_epochs` or :func:`run_steps`; both call :func:`train_step` and, at each evaluation,
:func:`evaluation_point` (:func:`evaluate_active`, the ``on_evaluate`` hook, :func:`select_checkpoints`,
early stopping).

A teacher whose early stopping fires is removed from the stack (parameters, buffers and Adam state
compacted), so stopped teachers cost nothing.

Per-class loss weights (binary and multi-label tasks): ``class_weights`` sets positive-class weights
``p`` of Muschiol (2021) Eq. (4.9) per teacher (``[k]`` or ``[N, k]``; None: plain BCE, Eq. 2.2), and
an ``on_evaluate`` hook, called after every evaluation with an
:class:`~pate_study.learning.class_weights.EvaluationEvent` (the scores and the validation probabilities of every active
teacher), may return new weights that apply from the next step on -- e.g.
:class:`~pate_study.learning.class_weights.AdaptiveClassWeights`, the performance-adaptive weights of §5.1.3
(:func:`~pate_study.learning.class_weights.adaptive_class_weights`). Evaluation losses stay unweighted, so scores are
comparable across arms.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from pate_study.core.device import autocast
from pate_study.learning.class_weights import EvaluationEvent, check_class_weights
from pate_study.learning.evaluation import evaluate_stacked, label_truth, record_stacked_losses
from pate_study.learning.losses import as_targets, per_teacher_loss
from pate_study.learning.optimiser import adam_kwargs, compact_optimizer, flush_denormal_on_cpu
from pate_study.learning.samplers import (
    PLAN_STEPS,
    LabelBalancedStream,
    PermutationStream,
    index_plan,
    label_matrix,
    mix_pairs,
    mixup_coefficients,
)
from pate_study.learning.stacked import StackedPass
from pate_study.learning.train_config import HISTORY_COLUMNS, TrainConfig, TrainResult

logger = logging.getLogger(__name__)


def ragged_rows(train_rows: Any) -> list[np.ndarray] | None:
    """``train_rows`` as one int64 array per teacher when they are given as a list of 1-d arrays of different sizes
    (ragged: the step schedule only; each teacher's sampler reads its own rows), else None (a rectangular
    ``[N, m]`` array, the usual case)."""
    if isinstance(train_rows, np.ndarray) or not isinstance(train_rows, (list, tuple)):
        return None
    rows = [np.asarray(r, dtype=np.int64) for r in train_rows]
    if not rows or any(r.ndim != 1 or r.size < 1 for r in rows):
        raise ValueError("train_rows: expected one non-empty 1-d int array of row ids per teacher")
    return rows if len({r.size for r in rows}) > 1 else None


def _check_rows(train_rows: Any, val_rows: np.ndarray, n_rows: int) -> tuple[Any, np.ndarray]:
    ragged = ragged_rows(train_rows)
    if ragged is not None:
        n = len(ragged)
        flat = np.concatenate(ragged)
        if flat.min() < 0 or flat.max() >= n_rows:
            raise ValueError(f"train_rows: row ids must lie in [0, {n_rows}) (the rows of X)")
        _, val_rows = _check_rows(np.zeros((n, 1), np.int64), val_rows, n_rows)
        return ragged, val_rows
    train_rows = np.asarray(train_rows, dtype=np.int64)
    if train_rows.ndim != 2 or train_rows.shape[0] < 1 or train_rows.shape[1] < 1:
        raise ValueError(f"train_rows: expected int [n_teachers, size >= 1], got shape {train_rows.shape}")
    n = train_rows.shape[0]
    val_rows = (
        np.zeros((n, 0), dtype=np.int64)
        if val_rows is None or np.size(val_rows) == 0
        else np.asarray(val_rows, dtype=np.int64)
    )
    if val_rows.ndim != 2 or val_rows.shape[0] != n:
        raise ValueError(f"val_rows: expected int [{n}, size], got shape {val_rows.shape}")
    for name, a in (("train_rows", train_rows), ("val_rows", val_rows)):
        if a.size and (a.min() < 0 or a.max() >= n_rows):
            raise ValueError(f"{name}: row ids must lie in [0, {n_rows}) (the rows of X), got [{a.min()}, {a.max()}]")
    return train_rows, val_rows


def _check_labels_present(y: np.ndarray, train_rows: Any, task: str, allow_empty: bool) -> None:
    if task != "multilabel" or allow_empty:
        return
    flat = np.concatenate(list(train_rows)) if isinstance(train_rows, list) else train_rows
    present = (np.asarray(y)[np.unique(flat)] > 0).any(0)
    if not present.all():
        empty = np.flatnonzero(~present)
        raise ValueError(
            f"y: labels {empty[:10].tolist()}{' ...' if empty.size > 10 else ''} ({empty.size} of "
            f"{present.size}) have no positive clip in any teacher's training rows; drop them from the "
            "label subset, or pass allow_empty_labels=True"
        )


def _streams(config: TrainConfig, y: np.ndarray, train_rows: Any, seeds: np.ndarray) -> list[Any]:
    if config.sampler == "random":
        return [
            PermutationStream(train_rows[i], torch.Generator().manual_seed(int(seeds[i, 1])))
            for i in range(len(train_rows))
        ]
    streams = []
    for i in range(len(train_rows)):
        rng = np.random.default_rng([int(s) for s in seeds[i]] + [0])
        streams.append(
            LabelBalancedStream(
                label_matrix(y[train_rows[i]], "y"), train_rows[i], rng, name=f"y of teacher {i}'s training rows"
            )
        )
    return streams


@dataclass(frozen=True)
class LoopInputs:
    """What one :func:`train_stacked` run reads and never changes: the model, its data and targets, the
    per-teacher row ids (device tensors), samplers and mixup generators, the settings and the hook."""

    model: Any
    source: Any
    config: TrainConfig
    device: torch.device
    mixed_precision: bool | None
    n_outputs: int
    target: torch.Tensor  # training targets of every row (soft one-hot under mixup)
    eval_target: torch.Tensor  # evaluation targets (hard labels)
    train_idx: torch.Tensor  # [N, m] each teacher's training rows (ragged rows: [N, 0], see train_sizes)
    val_idx: torch.Tensor  # [N, m_val] its validation rows
    val_truth: np.ndarray | None  # [N, m_val, k] their 0/1 labels (None: no validation rows)
    test_set: tuple | None  # (source, rows, targets, truth) of the shared test set
    streams: list[Any]  # per-teacher row streams (pate_study.learning.samplers)
    mix_rngs: list[np.random.Generator] | None
    on_evaluate: Callable[[EvaluationEvent], Any] | None
    loss_fn: Callable[..., torch.Tensor]  # step_loss, or its torch.compile-d version (TrainConfig.compile_step)
    train_sizes: np.ndarray  # [N] each teacher's number of training rows

    @property
    def n_train(self) -> int:
        return int(self.train_idx.shape[1])

    @property
    def n_val(self) -> int:
        return int(self.val_idx.shape[1])


@dataclass
class LoopState:
    """Everything the loop changes, in one place. Rows of ``params``, ``buffers``, ``pos_weight`` and
    ``train_loss_sum`` belong to the **active** teachers (``active``: their ids); ``best`` (selected
    checkpoints), ``best_score``, ``best_step``, ``bad``, ``epochs`` and ``steps`` are full-size (all ``N``)."""

    params: list[torch.Tensor]
    buffers: list[torch.Tensor]
    opt: torch.optim.Adam
    active: torch.Tensor
    pos_weight: torch.Tensor | None
    best: list[torch.Tensor]
    best_score: torch.Tensor
    best_step: np.ndarray
    bad: torch.Tensor
    epochs: np.ndarray
    steps: np.ndarray
    train_loss_sum: torch.Tensor
    train_loss_count: int = 0
    history: list[tuple] = dataclasses.field(default_factory=list)


def _test_set(model: Any, test: tuple[Any, Any] | None, task: str, k: int, device: torch.device) -> tuple | None:
    """The shared test set as (source, all rows, targets, 0/1 truth), or None."""
    if test is None:
        return None
    X_test, y_test = test
    source = model.source(X_test, "test[0] (X_test)")
    target = as_targets(y_test, task, k, source.n_rows, device, name="test[1] (y_test)")
    return source, torch.arange(source.n_rows, device=device), target, label_truth(np.asarray(y_test), task, k)


def _selection_label(config: TrainConfig, has_test: bool) -> str:
    """How checkpoints are chosen, as the result labels it (and the warning for test-set selection)."""
    if config.selection == "test" and not has_test:
        raise ValueError("selection='test': pass test=(X_test, y_test) to select checkpoints on it")
    if config.selection == "test":
        logger.warning("checkpoints are selected on the test set (selection='test'): scores on it are optimistic")
    return {
        "validation": f"per-teacher validation {config.select_on}",
        "test": f"TEST-SET {config.select_on} (as Muschiol 2021; optimistic, not a held-out estimate)",
        "last": "final parameters",
    }[config.selection]


def _initial_weights(
    class_weights: Any, on_evaluate: Any, task: str, n: int, k: int, device: torch.device
) -> torch.Tensor | None:
    """Positive-class weights ``[N, 1, k]`` of Eq. (4.9) on the device (None: plain BCE)."""
    if (class_weights is not None or on_evaluate is not None) and task == "multiclass":
        raise ValueError(
            "class_weights / on_evaluate: per-class positive weights (Muschiol Eq. 4.9) need a binary or "
            "multilabel task, got task='multiclass'"
        )
    if class_weights is None:
        return None
    return torch.as_tensor(check_class_weights(class_weights, n, k, "class_weights"), device=device).unsqueeze(1)


def _targets(
    y: np.ndarray, config: TrainConfig, k: int, n_rows: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """The targets of every row on the device: for training (soft one-hot under mixup) and for evaluation (hard
    labels; the same tensor where they agree), by :func:`pate_study.learning.losses.as_targets`."""
    mix = config.mixup_alpha is not None
    target = as_targets(y, config.task, k, n_rows, device, soft=mix)
    if not mix or config.task != "multiclass" or y.ndim == 2:
        return target, target
    return target, as_targets(y, config.task, k, n_rows, device)


def _mix_rngs(config: TrainConfig, seeds: np.ndarray) -> list[np.random.Generator] | None:
    """Each teacher's mixup generator, seeded with its row of ``seeds`` and a 1 (the label-balanced row stream of
    :func:`_streams` adds a 0 instead), or None without mixup."""
    if config.mixup_alpha is None:
        return None
    return [np.random.default_rng([int(s) for s in seeds[i]] + [1]) for i in range(len(seeds))]


def _initial_state(
    model: Any, config: TrainConfig, n: int, pos_weight: torch.Tensor | None, device: torch.device
) -> LoopState:
    """The state of a run of ``n`` teachers before its first step: trainable copies of the model's initial parameters
    and buffers, their Adam optimiser (:func:`pate_study.learning.optimiser.adam_kwargs`), every teacher active, the
    initial tensors as the selected checkpoints, no score yet."""
    params = [p.detach().clone().requires_grad_() for p in model.params()]
    buffers = [b.detach().clone() for b in model.buffers()]
    return LoopState(
        params,
        buffers,
        torch.optim.Adam(params, **adam_kwargs(config.lr, config.weight_decay, device)),
        torch.arange(n),
        pos_weight,
        [p.detach().clone() for p in params] + [b.clone() for b in buffers],
        torch.full((n,), float("inf"), dtype=torch.float64),
        np.full(n, -1, dtype=np.int64),
        torch.zeros(n, dtype=torch.int64),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        torch.zeros(n, dtype=torch.float64, device=device),
    )


def mixup_for_active(run: LoopInputs, state: LoopState, shape: int | tuple[int, ...]) -> torch.Tensor | None:
    """Mixup coefficients ``[n_active, *shape]`` on the device from each active teacher's own generator (None: no
    mixup)."""
    if run.mix_rngs is None:
        return None
    return mixup_coefficients(run.config.mixup_alpha, [run.mix_rngs[int(i)] for i in state.active], shape, run.device)


def step_loss(
    model: Any,
    params: Sequence[torch.Tensor],
    buffers: Sequence[torch.Tensor],
    source: Any,
    rows: torch.Tensor,
    target: torch.Tensor,
    lam: torch.Tensor | None,
    keep: Sequence[torch.Tensor] | None,
    pos_weight: torch.Tensor | None,
    task: str,
    device: torch.device,
    amp: bool | None,
) -> torch.Tensor:
    """Per-teacher training loss ``[n_active]`` of one step: the rows' targets (mixed with ``lam`` under mixup), the
    forward pass (autocast as ``amp`` says; dropout masks ``keep`` drawn beforehand, or drawn by the model when None)
    and :func:`~pate_study.learning.losses.per_teacher_loss`. The targets are gathered with one ``index_select`` (the
    same values as ``target[rows]``, a third of its time on the CPU)."""
    t = target.index_select(0, rows.reshape(-1)).view(*rows.shape, *target.shape[1:])
    if lam is not None:
        t = mix_pairs(t, lam)
    with autocast(device, amp):
        z = model.forward(
            params, buffers, source, rows, training=True, mix=lam, **({} if keep is None else {"keep": keep})
        )
    return per_teacher_loss(z, t, task, pos_weight)


def compiled_step_loss(model: Any, device: torch.device) -> Callable[..., torch.Tensor]:
    """:func:`step_loss` through ``torch.compile`` (CUDA: ``mode="reduce-overhead"``, CUDA graphs; otherwise
    inductor's default mode). Only for models whose dropout masks can be drawn outside the compiled graph
    (``dropout_masks``: :class:`pate_study.learning.stacked.StackedMLP`); a ``torch.Generator`` inside breaks it."""
    if not hasattr(model, "dropout_masks"):
        raise ValueError(
            f"compile_step=True: only the stacked MLP (StackedMLP) is compiled, got {type(model).__name__}"
        )
    return torch.compile(step_loss, mode="reduce-overhead" if device.type == "cuda" else None, dynamic=False)


def train_step(run: LoopInputs, state: LoopState, rows: torch.Tensor, lam: torch.Tensor | None) -> None:
    """One optimiser step of every active teacher on its ``rows`` (``[n_active, B]``) with mixup coefficients
    ``lam`` (``[n_active, B]`` or None): the summed per-teacher loss (:func:`step_loss`), one fused Adam step; the
    losses are added to the running training loss."""
    keep = run.model.dropout_masks(*rows.shape) if run.config.compile_step else None
    per = run.loss_fn(
        run.model,
        state.params,
        state.buffers,
        run.source,
        rows,
        run.target,
        lam,
        keep,
        state.pos_weight,
        run.config.task,
        run.device,
        run.mixed_precision,
    )
    loss = per.sum()
    state.opt.zero_grad(set_to_none=True)
    loss.backward()
    with flush_denormal_on_cpu(run.device):
        state.opt.step()
    state.train_loss_sum.add_(per.detach())
    state.train_loss_count += 1


def _record_train_loss(state: LoopState, at_step: int, device: torch.device) -> None:
    """The mean training loss since the previous evaluation into the history (split "train"), then reset."""
    ids = state.active.numpy()
    if state.train_loss_count:
        tl = (state.train_loss_sum / state.train_loss_count).cpu().numpy()
        state.history.extend((at_step, int(t), "train", "loss", float(v)) for t, v in zip(ids, tl))
    state.train_loss_sum = torch.zeros(len(ids), dtype=torch.float64, device=device)
    state.train_loss_count = 0


def evaluate_active(run: LoopInputs, state: LoopState, at_step: int) -> tuple[dict, np.ndarray | None]:
    """Scores of the active teachers (split -> metric -> ``[n_active]``) on their validation rows and the
    shared test set, recorded in the history; also the validation probabilities when a hook wants them."""
    ids = state.active.numpy()
    scores = {}
    if run.n_val or run.test_set is not None:
        run.model.set_training(False)
    stacked = StackedPass(run.model, state.params, state.buffers)
    if run.n_val:
        vidx = run.val_idx[state.active.to(run.device)]
        scores["validation"] = evaluate_stacked(
            stacked,
            run.source,
            vidx,
            run.eval_target[vidx],
            run.val_truth[ids],
            run.config.task,
            run.device,
            run.mixed_precision,
            keep_probs=run.on_evaluate is not None,
        )
    val_probs = scores["validation"].pop("probs", None) if run.n_val else None
    if run.test_set is not None:
        ts, trows, ttarget, ttruth = run.test_set
        scores["test"] = evaluate_stacked(
            stacked,
            ts,
            trows,
            ttarget,
            ttruth,
            run.config.task,
            run.device,
            run.mixed_precision,
        )
    for split, vals in scores.items():
        for metric, v in vals.items():
            state.history.extend((at_step, int(t), split, metric, float(x)) for t, x in zip(ids, v))
    return scores, val_probs


def _apply_hook(run: LoopInputs, state: LoopState, at_step: int, scores: dict, val_probs: np.ndarray | None) -> None:
    """Call ``on_evaluate``; new class weights it returns apply from the next step on."""
    ids = state.active.numpy()
    event = EvaluationEvent(
        at_step,
        ids.copy(),
        scores,
        val_probs,
        run.val_truth[ids] if run.n_val else None,
        None if state.pos_weight is None else state.pos_weight[:, 0].cpu().numpy(),
        tuple(p.detach() for p in state.params),
    )
    new_weights = run.on_evaluate(event)
    if new_weights is not None:
        state.pos_weight = torch.as_tensor(
            check_class_weights(new_weights, len(ids), run.n_outputs, "on_evaluate's return"), device=run.device
        ).unsqueeze(1)


def select_checkpoints(run: LoopInputs, state: LoopState, scores: dict, at_step: int) -> torch.Tensor | None:
    """Keep each active teacher's parameters where its selection score improved
    (:func:`~pate_study.learning.evaluation.record_stacked_losses`); returns the early-stopping mask over the active
    teachers (None: nothing selected this time)."""
    config = run.config
    if config.selection == "last" or config.selection not in scores:
        return None
    raw = scores[config.selection][config.select_on]
    score = torch.as_tensor(raw if config.select_on == "loss" else -raw, dtype=torch.float64)
    before = state.best_score.clone()
    patience = config.step_patience if config.step_schedule else config.patience
    stop = record_stacked_losses(
        score, state.active, state.best_score, state.bad, patience, state.best, state.params + state.buffers
    )
    state.best_step[(state.best_score != before).numpy()] = at_step
    return stop


def _drop_stopped(state: LoopState, stop: torch.Tensor, device: torch.device) -> None:
    """Remove the stopped teachers from the stack: parameters, buffers, Adam moments and running losses."""
    keep = (~stop).nonzero().squeeze(1)
    state.active = state.active[keep]
    if state.active.numel() == 0:
        return
    kd = keep.to(device)
    new = [p.detach()[kd].clone().requires_grad_() for p in state.params]
    state.opt = compact_optimizer(state.opt, state.params, new, kd)
    state.params, state.buffers = new, [b[kd].clone() for b in state.buffers]
    state.train_loss_sum = state.train_loss_sum[kd]
    if state.pos_weight is not None:
        state.pos_weight = state.pos_weight[kd]


def evaluation_point(run: LoopInputs, state: LoopState, at_step: int) -> bool:
    """One evaluation: history, hook, checkpoint selection, early stopping; True when every teacher stopped."""
    _record_train_loss(state, at_step, run.device)
    scores, val_probs = evaluate_active(run, state, at_step)
    if run.on_evaluate is not None:
        _apply_hook(run, state, at_step, scores, val_probs)
    stop = select_checkpoints(run, state, scores, at_step)
    if stop is None or not stop.any():
        return False
    _drop_stopped(state, stop, run.device)
    return state.active.numel() == 0


def run_epochs(run: LoopInputs, state: LoopState, *, progress: bool, desc: str) -> None:
    """The epoch schedule (ECG, web): per epoch one pass over each teacher's partition in its stream's order,
    then an evaluation; early stopping after ``patience`` epochs without a better selection score."""
    config, device = run.config, run.device
    total = 0
    bar = tqdm(range(config.max_epochs), desc=f"{desc} {len(state.epochs)} (epochs)", disable=not progress)
    for _epoch in bar:
        run.model.set_training(True)
        if config.sampler == "random":
            positions = torch.stack([run.streams[int(i)].order() for i in state.active]).to(device)
            order = torch.gather(run.train_idx[state.active.to(device)], 1, positions)
        else:
            order = torch.as_tensor(
                np.stack([run.streams[int(i)].draw(run.n_train) for i in state.active]), device=device
            )
        for start in range(0, run.n_train, config.batch_size):
            rows = order[:, start : start + config.batch_size]
            train_step(run, state, rows, mixup_for_active(run, state, rows.shape[1]))
            total += 1
        state.epochs[state.active.numpy()] += 1
        state.steps[state.active.numpy()] = total
        if evaluation_point(run, state, total):
            break
        bar.set_postfix(active=int(state.active.numel()))


def step_plan(run: LoopInputs, state: LoopState) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The next :data:`~pate_study.learning.samplers.PLAN_STEPS` steps of every active teacher, drawn at once from
    its own streams and moved to the device once: rows ``[n_active, PLAN_STEPS, B]`` and mixup coefficients of the
    same shape (None without mixup). A step reads one slice of each."""
    rows = index_plan([run.streams[int(i)] for i in state.active], run.config.batch_size).to(run.device)
    return rows, mixup_for_active(run, state, tuple(rows.shape[1:]))


def run_steps(run: LoopInputs, state: LoopState, *, progress: bool, desc: str) -> None:
    """The step schedule (Audio Set): ``max_steps`` steps of ``batch_size`` rows per teacher from its stream,
    an evaluation every ``eval_every`` steps and at the last; early stopping only with ``step_patience``.
    Rows and mixup coefficients come in blocks (:func:`step_plan`); a teacher that stops leaves the block too."""
    config = run.config
    every = config.evaluation_interval
    bar = tqdm(total=config.max_steps, desc=f"{desc} {len(state.steps)} (steps)", disable=not progress)
    run.model.set_training(True)
    for total in range(1, config.max_steps + 1):
        at = (total - 1) % PLAN_STEPS
        if at == 0:
            rows, lam = step_plan(run, state)
        train_step(run, state, rows[:, at], None if lam is None else lam[:, at])
        state.steps[state.active.numpy()] = total
        if total % every == 0 or total == config.max_steps:
            before = state.active
            done = evaluation_point(run, state, total)
            run.model.set_training(True)
            bar.update(every if total % every == 0 else total % every)
            bar.set_postfix(active=int(state.active.numel()))
            if done:
                break
            if state.active.numel() < before.numel():
                keep = torch.isin(before, state.active).to(run.device)
                rows, lam = rows[keep], None if lam is None else lam[keep]
    bar.close()
    state.epochs[:] = state.steps * config.batch_size // run.train_sizes


def _result(run: LoopInputs, state: LoopState, selection: str) -> TrainResult:
    """The selected checkpoints as a :class:`~pate_study.learning.train_config.TrainResult`; teachers without a finite
    selection score (and all under ``selection="last"``) keep their final parameters."""
    config, best, active = run.config, state.best, state.active
    final = active.to(best[0].device) if best else active
    never = torch.isinf(state.best_score)
    if config.selection == "last" or never.any():
        rows_keep = never[active] if config.selection != "last" else torch.ones(active.numel(), dtype=torch.bool)
        sel = rows_keep.nonzero().squeeze(1)
        if sel.numel():
            for target_t, live in zip(best, state.params + state.buffers):
                target_t.index_copy_(0, final[sel.to(final.device)], live.detach()[sel.to(live.device)])
            state.best_step[active[sel].numpy()] = -1
    best_np = state.best_score.numpy().copy()
    if config.select_on != "loss":
        best_np = -best_np
    best_np[never.numpy() | (config.selection == "last")] = np.nan
    n_p = len(state.params)
    frame = pd.DataFrame(state.history, columns=list(HISTORY_COLUMNS))
    return TrainResult(
        [t.detach().cpu() for t in best[:n_p]],
        [t.cpu() for t in best[n_p:]],
        state.epochs,
        state.steps,
        best_np,
        state.best_step,
        frame,
        selection,
    )


def train_stacked(
    model: Any,
    X: Any,
    y: Any,
    train_rows: np.ndarray,
    val_rows: np.ndarray | None,
    config: TrainConfig,
    seeds: np.ndarray,
    *,
    device: torch.device,
    test: tuple[Any, Any] | None = None,
    progress: bool = True,
    mixed_precision: bool | None = None,
    desc: str = "train",
    class_weights: Any = None,
    on_evaluate: Callable[[EvaluationEvent], Any] | None = None,
) -> TrainResult:
    """Train the ``N`` stacked models of ``model`` (:class:`pate_study.learning.stacked.StackedMLP` or
    :class:`pate_study.learning.stacked.StackedModule`) on their own rows; see the module docstring.

    ``X``: inputs ``[n, ...]`` (numpy, torch, or scipy.sparse for the MLP); ``y``: labels for
    ``config.task``; ``train_rows``: int ``[N, m]`` row ids of each teacher's training data (or, on the step
    schedule, a list of ``N`` 1-d arrays of different sizes: each teacher's sampler draws from its own rows);
    ``val_rows``: int ``[N, m_val]`` (or None) its validation rows; ``seeds``: ``[N, 3]``
    (:func:`pate_study.learning.train_config.teacher_seeds`); ``test``: optional shared ``(X_test, y_test)``
    evaluated by every teacher; ``class_weights``: initial positive-class weights (Eq. 4.9) ``[k]`` or ``[N, k]`` (None:
    plain BCE); ``on_evaluate``: a hook called after every evaluation with an
    :class:`~pate_study.learning.class_weights.EvaluationEvent`, returning None or new class weights (see the module
    docstring).
    """
    source = model.source(X, "X")
    n_rows = source.n_rows
    train_rows, val_rows = _check_rows(train_rows, val_rows, n_rows)
    ragged = isinstance(train_rows, list)
    if ragged and not config.step_schedule:
        raise ValueError(
            "train_rows: teachers with training sets of different sizes need the step schedule (max_steps)"
        )
    n = len(train_rows)
    seeds = np.asarray(seeds)
    if seeds.shape != (n, 3):
        raise ValueError(f"seeds: expected [{n}, 3] (teacher_seeds(seed, {n})), got shape {seeds.shape}")
    y_np = np.asarray(y.detach().cpu() if isinstance(y, torch.Tensor) else y)
    k = int(model.n_outputs) if getattr(model, "n_outputs", None) is not None else _infer_outputs(model, source, device)
    target, eval_target = _targets(y_np, config, k, n_rows, device)
    _check_labels_present(y_np, train_rows, config.task, config.allow_empty_labels)
    pos_weight = _initial_weights(class_weights, on_evaluate, config.task, n, k, device)
    test_set = _test_set(model, test, config.task, k, device)
    selection = _selection_label(config, test_set is not None)
    run = LoopInputs(
        model,
        source,
        config,
        device,
        mixed_precision,
        k,
        target,
        eval_target,
        torch.zeros((n, 0), dtype=torch.int64, device=device) if ragged else torch.as_tensor(train_rows, device=device),
        torch.as_tensor(val_rows, device=device),
        label_truth(y_np, config.task, k)[val_rows] if val_rows.shape[1] else None,
        test_set,
        _streams(config, y_np, train_rows, seeds),
        _mix_rngs(config, seeds),
        on_evaluate,
        compiled_step_loss(model, device) if config.compile_step else step_loss,
        np.array([len(r) for r in train_rows], dtype=np.int64),
    )
    state = _initial_state(model, config, n, pos_weight, device)
    schedule = run_steps if config.step_schedule else run_epochs
    schedule(run, state, progress=progress, desc=desc)
    return _result(run, state, selection)


@torch.no_grad()
def _infer_outputs(model: Any, source: Any, device: torch.device) -> int:
    p = [t[:1] for t in model.params()]
    b = [t[:1] for t in model.buffers()]
    model.set_training(False)
    z = model.forward(p, b, source, torch.zeros(1, 1, dtype=torch.int64, device=device), training=False)
    return int(z.shape[-1])
