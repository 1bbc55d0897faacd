"""Teacher ensembles: partitions, training (through the one loop), querying, and the on-disk cache.

PATE (Papernot et al. 2017, §2) trains ``N`` teachers on disjoint partitions of the private data and
releases only noisy aggregates of their votes. The sources trained the teachers one by one (Sosa 2021
Algorithm 3: 250 networks on four GPUs); here all ``N`` are trained as one stacked computation by
:func:`pate_study.learning.training.train_stacked` (the package's one training loop), with two stacked models
(:mod:`pate_study.learning.stacked`):

* :func:`train_ensemble` -- MLPs with explicit stacked weights (dense, or sparse TF-IDF first layer via
  ``embedding_bag``): the ECG and web studies (:class:`EnsembleConfig`, :class:`TeacherEnsemble`);
* :func:`train_module_ensemble` -- any ``nn.Module`` (log-Mel ResNet/VGG, the embedding MLP) through
  ``torch.func`` (:class:`ModuleEnsemble`).

``vectorised=False`` / :func:`train_ensemble_loop` run the same loop once per teacher (``N = 1``): the
way the sources trained, the reference the tests compare against and the benchmark's baseline.

Each teacher ``i`` has its own disjoint partition (``Partitions.train[i]``), validation split
(``Partitions.val[i]``: early stopping / checkpoint selection), threshold split
(``Partitions.threshold[i]``: Sosa's 800 held-out samples for a Youden threshold, binary tasks) and
its own initialisation, shuffling and dropout seeds from ``numpy.random.SeedSequence(seed).spawn(N)``
(:func:`teacher_seeds`), so a stack and a loop start from the same weights and see the same batches.

Partitions are drawn in :mod:`pate_study.learning.partitions`. The vote array is the interface to
:mod:`pate_study.privacy` (:mod:`pate_study.learning.voting`). Trained ensembles of both families and their votes are
cached by :mod:`pate_study.learning.ensemble_cache`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from pate_study.core.device import autocast, choose_device, tune_cpu_allocator
from pate_study.learning.partitions import Partitions, check_partitions
from pate_study.learning.stacked import StackedMLP, StackedModule, StackedPass, copy_module_to_meta
from pate_study.learning.train_config import TASKS, TrainConfig, TrainResult, teacher_seeds
from pate_study.learning.training import train_stacked
from pate_study.learning.voting import TeacherVotes, votes_from_probabilities, youden_threshold

logger = logging.getLogger(__name__)

__all__ = [
    "EnsembleConfig",
    "TeacherEnsemble",
    "train_ensemble",
    "train_ensemble_loop",
    "query_ensemble",
    "ModuleEnsemble",
    "train_module_ensemble",
]


# --------------------------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EnsembleConfig(TrainConfig):
    """Architecture and training settings shared by all teachers of an MLP ensemble.

    ``task``: "binary" (one logit, votes after a per-teacher threshold), "multiclass"
    (``n_outputs`` logits, vote = argmax) or "multilabel" (``n_outputs`` independent logits).
    Defaults follow Sosa (2021): 500 TF-IDF inputs, 500-512-128-1 (322,305 parameters).
    The training fields (learning rate, batch size, schedule, sampler, mixup, checkpoint selection)
    are those of :class:`pate_study.learning.train_config.TrainConfig`, which this extends; their defaults are the
    epoch schedule the ECG and web studies use. Learning rate, batch size and patience are not stated
    in the sources (documented choices). Construct with keywords.
    """

    in_features: int = 500
    n_outputs: int = 1
    hidden: tuple[int, ...] = (512, 128)
    dropout: float = 0.0
    sparse_input: bool = False
    multilabel_vote_threshold: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        for name in ("in_features", "n_outputs"):
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
        if not 0.0 < self.multilabel_vote_threshold < 1.0:
            raise ValueError(
                f"multilabel_vote_threshold={self.multilabel_vote_threshold!r}: expected a value in (0, 1)"
            )

    @property
    def layer_sizes(self) -> tuple[int, ...]:
        return (self.in_features, *self.hidden, self.n_outputs)

    def n_parameters(self) -> int:
        """Parameters of one teacher (weights and biases)."""
        s = self.layer_sizes
        return sum(a * b + b for a, b in zip(s[:-1], s[1:]))

    def training(self) -> TrainConfig:
        """The training fields as a :class:`TrainConfig`."""
        names = {f.name for f in dataclasses.fields(TrainConfig)}
        return TrainConfig(**{k: v for k, v in dataclasses.asdict(self).items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        return d


# --------------------------------------------------------------------------------------------
# one loop for every ensemble: stacked, or once per teacher
# --------------------------------------------------------------------------------------------
def _merge(results: list[TrainResult]) -> TrainResult:
    """One-teacher results (teacher ``i`` = ``results[i]``) as one ``N``-teacher result."""
    frames = []
    for i, r in enumerate(results):
        frames.append(r.history.assign(teacher=i))

    def cat(arrays):
        return np.concatenate(arrays)

    return TrainResult(
        [torch.cat(ts) for ts in zip(*(r.params for r in results))],
        [torch.cat(ts) for ts in zip(*(r.buffers for r in results))],
        cat([r.epochs for r in results]),
        cat([r.steps for r in results]),
        cat([r.best_score for r in results]),
        cat([r.best_step for r in results]),
        pd.concat(frames, ignore_index=True) if frames else results[0].history,
        results[0].selection,
    )


def _train_teachers(
    make_model: Callable[[np.ndarray], Any],
    X: Any,
    y: Any,
    partitions: Partitions,
    config: TrainConfig,
    seed: int,
    device: torch.device,
    vectorised: bool,
    progress: bool,
    **kw: Any,
) -> TrainResult:
    """The teachers of ``partitions`` trained by :func:`pate_study.learning.training.train_stacked` from the seeds
    :func:`pate_study.learning.train_config.teacher_seeds` gives: ``vectorised``, all as one stacked model in one
    call; else one after another (``N = 1`` per call: the sources' way, the tests' reference) with the same seeds,
    partitions and selection rule, merged into one result (:func:`_merge`)."""
    seeds = teacher_seeds(seed, partitions.n_teachers)

    def fit(part: Partitions, part_seeds: np.ndarray, **shown: Any) -> TrainResult:
        return train_stacked(
            make_model(part_seeds), X, y, part.train, part.val, config, part_seeds, device=device, **shown, **kw
        )

    if vectorised:
        return fit(partitions, seeds, progress=progress, desc="train teachers (stacked)")
    n = partitions.n_teachers
    in_turn = tqdm(range(n), desc=f"train {n} teachers (loop)", disable=not progress)
    return _merge([fit(partitions.teacher(i), seeds[i : i + 1], progress=False) for i in in_turn])


@torch.no_grad()
def _own_logits(
    stacked: StackedPass, source: Any, idx: np.ndarray, device: torch.device, chunk_size: int = 512
) -> torch.Tensor:
    """Logits of teacher ``i`` on its own rows ``idx[i]``: ``[N, m, k]`` (batched, one pass per chunk)."""
    stacked.model.set_training(False)
    idx_t = torch.as_tensor(idx, device=device)
    out = []
    for start in range(0, idx_t.shape[1], chunk_size):
        with autocast(device):
            out.append(stacked.logits(source, idx_t[:, start : start + chunk_size]).float().cpu())
    return torch.cat(out, dim=1)


@torch.no_grad()
def _shared_logits(
    stacked: StackedPass, source: Any, n_teachers: int, n_outputs: int, device: torch.device, chunk_size: int
) -> torch.Tensor:
    """Logits of every teacher on every row of ``source``: ``float32 [N, Q, k]`` on the CPU."""
    stacked.model.set_training(False)
    out = []
    for start in tqdm(
        range(0, source.n_rows, chunk_size), desc="query teachers", leave=False, disable=source.n_rows <= chunk_size
    ):
        rows = torch.arange(start, min(start + chunk_size, source.n_rows), device=device)
        with autocast(device):
            out.append(stacked.logits(source, rows).float().cpu())
    return torch.cat(out, dim=1) if out else torch.zeros(n_teachers, 0, n_outputs)


def _probabilities(z: torch.Tensor, task: str) -> np.ndarray:
    """Sigmoid (binary: ``[N, Q]``; multilabel: ``[N, Q, L]``) or softmax (``[N, Q, C]``) outputs."""
    if task == "multiclass":
        return torch.softmax(z, dim=-1).numpy()
    p = torch.sigmoid(z).numpy()
    return p[..., 0] if task == "binary" else p


def _youden_thresholds(
    ensemble: TeacherEnsemble | ModuleEnsemble, task: str, X: Any, y: Any, partitions: Partitions, device: torch.device
) -> np.ndarray | None:
    """Per-teacher Youden thresholds of a binary ``ensemble`` on each teacher's own threshold split (Sosa 2021: 800
    samples); None for the other tasks or without threshold rows."""
    if task != "binary" or not partitions.threshold.shape[1]:
        return None
    stacked = ensemble._model(device)
    z = _own_logits(stacked, stacked.model.source(X, "X"), partitions.threshold, device)
    p = torch.sigmoid(z)[..., 0].numpy()
    yv = np.asarray(y)[partitions.threshold]
    return np.array([youden_threshold(yv[i], p[i]) for i in range(partitions.n_teachers)])


def _history_state(history: pd.DataFrame | None) -> dict[str, list] | None:
    return None if history is None else {c: history[c].tolist() for c in history.columns}


def _history_from_state(state: dict[str, list] | None) -> pd.DataFrame | None:
    return None if state is None else pd.DataFrame(state)


@dataclass(kw_only=True)
class _TrainingFacts:
    """What every trained ensemble records besides its parameters (keyword fields)."""

    epochs: np.ndarray
    best_val_loss: np.ndarray
    thresholds: np.ndarray | None = None  # binary: per-teacher decision threshold on the probability
    steps: np.ndarray | None = None
    best_step: np.ndarray | None = None
    history: pd.DataFrame | None = None
    selection: str = ""

    @classmethod
    def _facts(cls, result: TrainResult) -> dict[str, Any]:
        return dict(
            epochs=result.epochs,
            best_val_loss=result.best_score,
            steps=result.steps,
            best_step=result.best_step,
            history=result.history,
            selection=result.selection,
        )

    def _facts_state(self) -> dict[str, Any]:
        def opt(a):
            return None if a is None else torch.as_tensor(a)

        return {
            "epochs": torch.as_tensor(self.epochs),
            "best_val_loss": torch.as_tensor(self.best_val_loss),
            "thresholds": opt(self.thresholds),
            "steps": opt(self.steps),
            "best_step": opt(self.best_step),
            "history": _history_state(self.history),
            "selection": self.selection,
        }

    @staticmethod
    def _facts_from_state(state: dict[str, Any]) -> dict[str, Any]:
        def opt(k):
            return None if state.get(k) is None else state[k].numpy()

        return dict(
            epochs=state["epochs"].numpy(),
            best_val_loss=state["best_val_loss"].numpy(),
            thresholds=opt("thresholds"),
            steps=opt("steps"),
            best_step=opt("best_step"),
            history=_history_from_state(state.get("history")),
            selection=state.get("selection", ""),
        )


# --------------------------------------------------------------------------------------------
# MLP ensembles (ECG, web): explicit stacked weights
# --------------------------------------------------------------------------------------------
@dataclass
class TeacherEnsemble(_TrainingFacts):
    """Trained MLP teachers as stacked parameters (CPU tensors) plus per-teacher training facts.

    ``epochs``/``steps``: what each teacher ran; ``best_val_loss``: its selection score (the validation
    loss by default; nan where there was none); ``best_step``: the step of its kept checkpoint (-1:
    final); ``history``: the tidy training history (:data:`pate_study.learning.train_config.HISTORY_COLUMNS`).
    """

    config: EnsembleConfig
    weights: list[torch.Tensor]
    biases: list[torch.Tensor]

    @property
    def n_teachers(self) -> int:
        return int(self.weights[0].shape[0])

    def _model(self, device: torch.device) -> StackedPass:
        model = StackedMLP(self.config.layer_sizes, np.zeros((1, 3), dtype=np.uint32), device=device)
        return StackedPass(model, [p.to(device) for p in (*self.weights, *self.biases)], [])

    @torch.no_grad()
    def logits(self, X: Any, chunk_size: int = 1024, device: str | torch.device | None = None) -> torch.Tensor:
        """Logits of every teacher on every row of ``X``: ``float32 [N, Q, k]`` on the CPU (one pass)."""
        dev = choose_device(device)
        stacked = self._model(dev)
        source = stacked.model.source(X, "X", sparse=False)
        return _shared_logits(stacked, source, self.n_teachers, self.config.n_outputs, dev, chunk_size)

    def probabilities(self, X: Any, **kw: Any) -> np.ndarray:
        """Sigmoid (binary: ``[N, Q]``; multilabel: ``[N, Q, L]``) or softmax (``[N, Q, C]``) outputs."""
        return _probabilities(self.logits(X, **kw), self.config.task)

    def own_probabilities(self, X: Any, rows: np.ndarray, device: str | torch.device | None = None) -> np.ndarray:
        """Member ``i``'s outputs on its own rows ``X[rows[i]]`` only (``rows``: int ``[N, m]``), as in
        :meth:`probabilities`: binary ``[N, m]``, multiclass/multilabel ``[N, m, k]``. N times less work than
        :meth:`probabilities` on all rows when each member has rows of its own (students' validation sets)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.ndim != 2 or rows.shape[0] != self.n_teachers:
            raise ValueError(f"rows: expected int [{self.n_teachers}, m], got shape {rows.shape}")
        dev = choose_device(device)
        stacked = self._model(dev)
        z = _own_logits(stacked, stacked.model.source(X, "X", sparse=False), rows, dev)
        return _probabilities(z, self.config.task)

    def state(self) -> dict[str, Any]:
        """Plain dict of tensors / builtins (loadable with ``torch.load(weights_only=True)``)."""
        return {
            "config": self.config.to_dict(),
            "weights": [w.contiguous() for w in self.weights],
            "biases": [b.contiguous() for b in self.biases],
            **self._facts_state(),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> TeacherEnsemble:
        cfg = dict(state["config"])
        cfg["hidden"] = tuple(cfg["hidden"])
        return cls(EnsembleConfig(**cfg), list(state["weights"]), list(state["biases"]), **cls._facts_from_state(state))


def _train_mlp(
    X: Any,
    y: Any,
    partitions: Partitions,
    config: EnsembleConfig,
    seed: int,
    device: str | torch.device | None,
    progress: bool,
    mixed_precision: bool | None,
    vectorised: bool,
    test: tuple[Any, Any] | None,
) -> TeacherEnsemble:
    if not isinstance(config, EnsembleConfig):
        raise ValueError("config: expected an EnsembleConfig")
    check_partitions(X, partitions)
    dev = choose_device(device)
    if dev.type == "cpu":
        tune_cpu_allocator()

    def make_model(seeds: np.ndarray) -> StackedMLP:
        return StackedMLP(
            config.layer_sizes, seeds, dropout=config.dropout, sparse_input=config.sparse_input, device=dev
        )

    cfg = config.training()
    result = _train_teachers(
        make_model, X, y, partitions, cfg, seed, dev, vectorised, progress, test=test, mixed_precision=mixed_precision
    )
    L = len(config.layer_sizes) - 1
    ens = TeacherEnsemble(config, result.params[:L], result.params[L:], **TeacherEnsemble._facts(result))
    ens.thresholds = _youden_thresholds(ens, config.task, X, y, partitions, dev)
    return ens


def train_ensemble(
    X: Any,
    y: Any,
    partitions: Partitions,
    config: EnsembleConfig,
    seed: int = 0,
    device: str | torch.device | None = None,
    progress: bool = True,
    mixed_precision: bool | None = None,
    test: tuple[Any, Any] | None = None,
) -> TeacherEnsemble:
    """Train ``partitions.n_teachers`` MLP teachers at once (stacked parameters, batched matmuls).

    ``X``: ``[n, in_features]`` numpy / torch / scipy.sparse (teachers' data; with
    ``config.sparse_input`` the first layer uses the sparse ``embedding_bag`` path).
    ``y``: labels for the task. Schedule, sampler, mixup and checkpoint selection: ``config``'s training
    fields (:class:`pate_study.learning.train_config.TrainConfig`); selection on ``partitions.val`` by default;
    ``test``: an optional shared ``(X_test, y_test)`` evaluated (history) or selected on
    (``selection="test"``). Per-teacher Youden thresholds on ``partitions.threshold`` (binary).
    Mixed precision only on CUDA.
    """
    return _train_mlp(X, y, partitions, config, seed, device, progress, mixed_precision, True, test)


def train_ensemble_loop(
    X: Any,
    y: Any,
    partitions: Partitions,
    config: EnsembleConfig,
    seed: int = 0,
    device: str | torch.device | None = None,
    progress: bool = True,
    mixed_precision: bool | None = None,
    test: tuple[Any, Any] | None = None,
) -> TeacherEnsemble:
    """The same teachers trained one after another (the loop with ``N = 1`` per teacher): same seeds,
    partitions, initial weights, batches and selection rule as :func:`train_ensemble`."""
    return _train_mlp(X, y, partitions, config, seed, device, progress, mixed_precision, False, test)


def query_ensemble(ensemble: TeacherEnsemble, X: Any, device: str | torch.device | None = None) -> TeacherVotes:
    """Query all teachers on the student inputs ``X`` in one pass and return the votes."""
    cfg = ensemble.config
    return votes_from_probabilities(
        cfg.task, ensemble.probabilities(X, device=device), ensemble.thresholds, cfg.multilabel_vote_threshold
    )


# --------------------------------------------------------------------------------------------
# any nn.Module (ResNet on log-Mel, embedding MLP): torch.func stacking + vmap
# --------------------------------------------------------------------------------------------
@dataclass
class ModuleEnsemble(_TrainingFacts):
    """``N`` copies of one architecture with stacked parameters and buffers (``torch.func``).

    ``probabilities`` runs all teachers in one ``vmap``-ed pass (eval mode: BatchNorm running
    statistics, no dropout). Votes: :func:`votes_from_probabilities`. Training facts as in
    :class:`TeacherEnsemble`.
    """

    task: str
    base: torch.nn.Module  # architecture on the "meta" device (no storage)
    params: dict[str, torch.Tensor]
    buffers: dict[str, torch.Tensor]

    @property
    def n_teachers(self) -> int:
        return int(next(iter(self.params.values())).shape[0])

    def _model(self, device: torch.device) -> StackedPass:
        model = StackedModule.from_stacked(self.base, self.params, self.buffers, device)
        return StackedPass(model, model.params(), model.buffers())

    @torch.no_grad()
    def logits(self, X: Any, chunk_size: int = 256, device: str | torch.device | None = None) -> torch.Tensor:
        """``float32 [N, Q, k]`` logits of every teacher (one batched pass per chunk)."""
        dev = choose_device(device)
        stacked = self._model(dev)
        return _shared_logits(stacked, stacked.model.source(X), self.n_teachers, 0, dev, chunk_size)

    def probabilities(self, X: Any, **kw: Any) -> np.ndarray:
        return _probabilities(self.logits(X, **kw), self.task)

    def state(self) -> dict[str, Any]:
        return {"task": self.task, "params": dict(self.params), "buffers": dict(self.buffers), **self._facts_state()}

    @classmethod
    def from_state(cls, state: dict[str, Any], model_fn: Callable[[], torch.nn.Module]) -> ModuleEnsemble:
        return cls(
            state["task"],
            copy_module_to_meta(model_fn()),
            dict(state["params"]),
            dict(state["buffers"]),
            **cls._facts_from_state(state),
        )


def module_train_config(task: str, config: TrainConfig | None, training: dict[str, Any]) -> TrainConfig:
    """The training settings of a module ensemble: ``config`` as given (its task must be ``task``), or a
    :class:`~pate_study.learning.train_config.TrainConfig` of ``task`` with batch size 64 and the keyword settings
    ``training``; never both."""
    if config is None:
        return TrainConfig(**{"task": task, "batch_size": 64, **training})
    if training:
        raise ValueError(f"{sorted(training)}: pass training settings either in config or as keywords, not both")
    if config.task != task:
        raise ValueError(f"config.task={config.task!r} differs from task={task!r}")
    return config


def train_module_ensemble(
    model_fn: Callable[[], torch.nn.Module],
    X: Any,
    y: Any,
    partitions: Partitions,
    task: str,
    *,
    config: TrainConfig | None = None,
    seed: int = 0,
    device: str | torch.device | None = None,
    progress: bool = True,
    mixed_precision: bool | None = None,
    vectorised: bool = True,
    test: tuple[Any, Any] | None = None,
    **training: Any,
) -> ModuleEnsemble:
    """Train ``N`` copies of ``model_fn()`` (any ``nn.Module``, e.g. :class:`pate_study.learning.models.ResNetLogMel`).

    ``vectorised=True``: parameters and buffers stacked with ``torch.func.stack_module_state`` and one
    ``vmap``-ed forward/backward per step for all teachers (BatchNorm running statistics are per-teacher
    buffers; dropout masks differ per teacher). ``vectorised=False``: the same loop once per teacher.
    Training settings: ``config`` (:class:`pate_study.learning.train_config.TrainConfig`), or its fields as keywords
    (``lr``, ``batch_size`` (default 64), ``max_epochs``, ``patience``, ``max_steps``, ``eval_every``,
    ``sampler``, ``mixup_alpha``, ``selection``, ``select_on``, ...). ``X``: array ``[n, ...]`` of model
    inputs (e.g. log-Mel ``[n, frames, mels]``, embeddings ``[n, frames, 128]``); ``test``: optional
    shared ``(X_test, y_test)`` (history; ``selection="test"``).
    """
    if task not in TASKS:
        raise ValueError(f"task={task!r}: expected one of {TASKS}")
    cfg = module_train_config(task, config, training)
    check_partitions(X, partitions)
    dev = choose_device(device)

    made: list[StackedModule] = []

    def make_model(seeds: np.ndarray) -> StackedModule:
        made.append(StackedModule.from_factory(model_fn, seeds, device=dev))
        return made[-1]

    result = _train_teachers(
        make_model, X, y, partitions, cfg, seed, dev, vectorised, progress, test=test, mixed_precision=mixed_precision
    )
    names = made[0]
    ens = ModuleEnsemble(
        task,
        names.base,
        dict(zip(names.param_names, result.params)),
        dict(zip(names.buffer_names, result.buffers)),
        **ModuleEnsemble._facts(result),
    )
    ens.thresholds = _youden_thresholds(ens, task, X, y, partitions, dev)
    return ens
