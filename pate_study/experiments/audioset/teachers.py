"""Audio Set teachers (Muschiol 2021 §5.1): the embedding-MLP recipe (:class:`TeacherSpec`), one stacked call per
ensemble (:func:`train_teachers`: every teacher of a partition set trained together by
:func:`pate_study.learning.training.train_stacked`) and the log-Mel CNN teachers (:func:`train_logmel_teachers`).

Everything here runs in this process on one device: cutting an ensemble into shards and choosing local or Ray is
:mod:`.pipeline`'s job (through :mod:`.shards`), so this module knows nothing of either.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch.utils.flop_counter import FlopCounterMode

from pate_study.core.device import choose_device
from pate_study.learning.class_weights import AdaptiveClassWeights
from pate_study.learning.metrics import average_precision_per_class, mean_roc_auc
from pate_study.learning.models import load_imagenet_weights, logmel_model, weights_stamp
from pate_study.learning.stacked import (
    StackedMLP,
    StackedModule,
    autocast_dtype_option,
    compiled_option,
    memory_format_option,
)
from pate_study.learning.train_config import TrainConfig, teacher_seeds
from pate_study.learning.training import train_stacked

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TeacherSpec:
    """Embedding-MLP teacher recipe (Muschiol §5.1.3 transferred to embeddings): ``hidden`` widths,
    ``dropout``, Adam ``lr``, ``batch_size``, a step schedule of ``steps`` with an evaluation every
    ``eval_every`` steps, the ``sampler`` ("balanced" §4.4.2 or "random"), mixup ``mixup_alpha``
    (None: off; not stated in the thesis, 1.0 after PANNs) and the checkpoint criterion on the
    validation split (``select_on``). ``patience``: early stopping after that many evaluations without
    a better validation score (the thesis stops "after a decrease in performance ... is detected";
    None: all ``steps``). ``class_weights``: None (plain BCE, the thesis' final recipe) or "adaptive"
    (§5.1.3, Fig 5.11: :class:`pate_study.learning.class_weights.AdaptiveClassWeights` with ``weight_max`` and
    ``weight_temperature``). ``compile_step``: the training step through ``torch.compile``
    (:class:`pate_study.learning.train_config.TrainConfig`): a speed setting, not part of the recipe, so not in
    its ``repr`` (nor in the cache keys built from it); its results equal the eager step's to rounding."""

    hidden: tuple[int, ...] = (256, 256)
    dropout: float = 0.5
    lr: float = 1e-3
    batch_size: int = 64
    steps: int = 1000
    eval_every: int = 100
    sampler: str = "balanced"
    mixup_alpha: float | None = 1.0
    select_on: str = "mAP"
    patience: int | None = None
    class_weights: str | None = None
    weight_max: float = 4.0
    weight_temperature: float = 0.1
    compile_step: bool = dataclasses.field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.class_weights not in (None, "adaptive"):
            raise ValueError(f"class_weights={self.class_weights!r}: expected None (plain BCE) or 'adaptive' (§5.1.3)")

    def evaluation_hook(self):
        """The ``on_evaluate`` hook of :func:`pate_study.learning.training.train_stacked` for ``class_weights`` (or
        None)."""
        if self.class_weights == "adaptive":
            return AdaptiveClassWeights(self.weight_max, self.weight_temperature)
        return None

    def replace(self, **kw) -> "TeacherSpec":
        return dataclasses.replace(self, **{k: (tuple(v) if k == "hidden" else v) for k, v in kw.items()})


def spec_stamp(spec: TeacherSpec) -> str:
    """The recipe as it is stamped on notebook 04's outputs."""
    return (
        f"embedding MLP {tuple(spec.hidden)}, dropout {spec.dropout}, {spec.steps} steps of {spec.batch_size}"
        + (f" (early stop: {spec.patience} evaluations)" if spec.patience else "")
        + f", {spec.sampler} sampler, mixup {spec.mixup_alpha}"
    )


def teacher_spec(**settings: Any) -> TeacherSpec:
    """A :class:`TeacherSpec` from a config's keys (``hidden``, ``dropout``, ``lr``, ``batch_size``, ``steps``,
    ``eval_every``, ``sampler``, ``mixup_alpha``, ``patience``, ...); ValueError naming unknown keys."""
    unknown = sorted(set(settings) - set(TeacherSpec.__dataclass_fields__))
    if unknown:
        raise ValueError(
            f"teacher settings {unknown}: expected keys of TeacherSpec {sorted(TeacherSpec.__dataclass_fields__)}"
        )
    return TeacherSpec().replace(**settings)


#: the notebooks' parameter names of the teachers' recipe (``teacher_<field>``), as :class:`TeacherSpec` fields
RECIPE_PARAMETERS = (
    "hidden",
    "dropout",
    "lr",
    "batch_size",
    "steps",
    "eval_every",
    "patience",
    "sampler",
    "mixup_alpha",
)


def teacher_spec_from_parameters(parameters: Mapping[str, Any]) -> TeacherSpec:
    """The teachers' recipe from settings named as notebook 05 names them (``teacher_hidden``, ``teacher_lr``, ...:
    each of :data:`RECIPE_PARAMETERS` prefixed ``teacher_``; a record of its contract, as
    :func:`.release_sections.teacher_recipes` passes it)."""
    settings = {name: parameters[f"teacher_{name}"] for name in RECIPE_PARAMETERS}
    return teacher_spec(**{**settings, "hidden": tuple(settings["hidden"])})


@dataclass
class TeacherRun:
    """One trained ensemble: ``history`` (step, teacher, split, metric, value; split "curve" = the fixed eval
    sample scored during training), ``best_step`` per teacher, final per-teacher ``map`` / ``auc`` and per-class
    ``class_ap`` ``[T, C]`` on the full test set at the selected checkpoints, ``probabilities`` (every teacher's
    test-set probabilities, float32 ``[T, n_test, C]``: the votes notebook 05 aggregates) and ``train_counts``
    ``[T, C]`` (positives per teacher); ``seconds``: wall time (volatile: logged, not a result);
    ``weight_trace``: with adaptive class weights, per evaluation and teacher the min / mean / max weight
    (:class:`pate_study.learning.class_weights.AdaptiveClassWeights`); ``replicate``: for the ablations' replicates
    (:func:`.pipeline.ablation_arms`), the replicate of every teacher (int ``[T]``; None: one replicate)."""

    name: str
    n_teachers: int
    spec: TeacherSpec
    history: pd.DataFrame
    best_step: np.ndarray
    map: np.ndarray
    auc: np.ndarray
    class_ap: np.ndarray
    probabilities: np.ndarray
    train_counts: np.ndarray
    seconds: float
    weight_trace: pd.DataFrame | None = None
    replicate: np.ndarray | None = None


def stacked_probabilities(model, params, source, n_rows: int, chunk: int = 2048) -> np.ndarray:
    """Per-teacher probabilities float32 ``[T, n, C]`` of a trained stack on all ``n_rows`` rows of ``source``
    (computed on the model's device, returned on the CPU)."""
    dev = getattr(model, "device", torch.device("cpu"))
    params = [p.to(dev) for p in params]
    out = []
    with torch.no_grad():
        for c0 in range(0, n_rows, chunk):
            rows = torch.arange(c0, min(n_rows, c0 + chunk), device=dev)
            out.append(torch.sigmoid(model.forward(params, [], source, rows, training=False)).float().cpu())
    return torch.cat(out, dim=1).numpy()


def teacher_config(spec: TeacherSpec, *, last: bool = False) -> TrainConfig:
    """The training settings of ``spec`` for every Audio Set teacher, embedding MLP or log-Mel CNN: multi-label, the
    step schedule, sampler and mixup, the checkpoint selected on the validation split with early stopping after
    ``spec.patience`` evaluations (``last=True``: final parameters, no early stopping)."""
    return TrainConfig(
        task="multilabel",
        lr=spec.lr,
        batch_size=spec.batch_size,
        max_steps=spec.steps,
        eval_every=spec.eval_every,
        sampler=spec.sampler,
        mixup_alpha=spec.mixup_alpha,
        selection="last" if last else "validation",
        select_on=spec.select_on,
        step_patience=None if last else spec.patience,
        allow_empty_labels=True,
        compile_step=spec.compile_step,
    )


def teacher_stack(
    n_features: int, n_labels: int, seeds: np.ndarray, spec: TeacherSpec, device: torch.device, *, last: bool = False
) -> tuple[StackedMLP, TrainConfig]:
    """The stacked embedding MLPs of ``spec`` (one per row of ``seeds``, ``[n, 3]``) and the training settings
    :func:`train_teachers` runs them with (:func:`teacher_config`)."""
    model = StackedMLP((n_features, *spec.hidden, n_labels), seeds, dropout=spec.dropout, device=device)
    return model, teacher_config(spec, last=last)


def training_rows(partitions: Any) -> Any:
    """Every teacher's training rows: ``partitions.train`` (``[N, m]``) of a
    :class:`~pate_study.learning.partitions.Partitions`, or a list of 1-d arrays (students on releases that answered
    different numbers of queries, stacked: :mod:`.student_stacks`)."""
    return list(partitions) if isinstance(partitions, (list, tuple)) else partitions.train


def train_teachers(
    X: np.ndarray,
    Y: np.ndarray,
    partitions,
    val: np.ndarray,
    X_test: np.ndarray,
    Y_test: np.ndarray,
    spec: TeacherSpec,
    *,
    seed: int = 0,
    curve_clips: int = 2000,
    name: str = "",
    last: bool = False,
    device: str | None = None,
    train_seeds: np.ndarray | None = None,
) -> TeacherRun:
    """Train one embedding-MLP teacher per partition with :func:`pate_study.learning.training.train_stacked`
    (stacked, step schedule, per-teacher sampler/mixup, shared validation split ``val`` for checkpoint
    selection), recording validation and test-sample ("curve": ``curve_clips`` fixed eval clips) mAP/AUC
    every ``eval_every`` steps; then score every teacher on the full test set. ``last=True`` keeps the
    final parameters (used for per-class curves over iterations). ``device``: "cpu", "cuda" or None
    (:func:`pate_study.core.device.choose_device`: CUDA when available, else the CPU; the same seed gives the
    same CPU results as before). ``spec.class_weights="adaptive"`` updates per-class loss weights at every
    evaluation (Fig 5.11). ``train_seeds``: explicit (init, shuffle, dropout) seeds ``[n_teachers, 3]`` instead of
    :func:`~pate_study.learning.train_config.teacher_seeds` of ``seed``. ``partitions``: a
    :class:`~pate_study.learning.partitions.Partitions`, or one array of rows per teacher (:func:`training_rows`).
    ``val``: the validation rows every teacher
    selects on (``[m]``), or one row of them per teacher (``[n_teachers, m]``: replicate ensembles stacked, each with
    its own pool split). The wall time is logged (and kept in ``seconds``), never recorded as a result."""
    start = time.perf_counter()
    dev = choose_device(device)
    rows = training_rows(partitions)
    n = len(rows)
    seeds = teacher_seeds(seed, n) if train_seeds is None else np.asarray(train_seeds, dtype=np.uint32)
    if seeds.shape != (n, 3):
        raise ValueError(
            f"train_seeds: shape {seeds.shape}, expected ({n}, 3): one (init, shuffle, dropout) row per teacher"
        )
    model, config = teacher_stack(X.shape[1], Y.shape[1], seeds, spec, dev, last=last)
    curve = np.sort(np.random.default_rng(seed).permutation(len(X_test))[:curve_clips])
    val_rows = np.asarray(val, dtype=np.int64)
    if val_rows.ndim == 1:
        val_rows = np.tile(val_rows, (n, 1))
    if val_rows.shape[0] != n:
        raise ValueError(f"val: shape {val_rows.shape}, expected [m] (shared) or [{n}, m] (one row per teacher)")
    res = train_stacked(
        model,
        X,
        Y.astype(np.float32),
        rows,
        val_rows,
        config,
        seeds,
        device=dev,
        test=(X_test[curve], Y_test[curve].astype(np.float32)),
        progress=False,
        desc=name or "teachers",
        on_evaluate=(hook := spec.evaluation_hook()),
    )
    history = res.history.replace({"split": {"test": "curve"}})
    probs = stacked_probabilities(model, res.params, model.source(X_test, "X_test"), len(X_test))
    ap = np.stack([average_precision_per_class(Y_test, p) for p in probs])
    auc = np.array([mean_roc_auc(Y_test, p) for p in probs])
    seconds = time.perf_counter() - start
    logger.info("%s: %d teachers, %d steps on %s in %.1f s", name or "teachers", n, spec.steps, dev, seconds)
    return TeacherRun(
        name,
        n,
        spec,
        history,
        res.best_step,
        np.nanmean(ap, axis=1),
        auc,
        ap,
        probs.astype(np.float32),
        np.stack([Y[r].sum(0) for r in rows]),
        seconds,
        pd.DataFrame(hook.trace) if hook is not None else None,
    )


class ClassAPAtSteps:
    """An ``on_evaluate`` hook (:class:`pate_study.learning.class_weights.EvaluationEvent`) that scores teacher 0 of a
    stack on a test set at the evaluations of ``steps`` -- :func:`stacked_probabilities` of the parameters the
    event carries, then :func:`pate_study.learning.metrics.average_precision_per_class` -- into ``class_ap``
    (step -> ``[C]``); ``inner``: a hook it calls first and whose return (class weights or None) it passes on."""

    def __init__(self, model: StackedMLP, X_test: np.ndarray, Y_test: np.ndarray, steps, inner=None) -> None:
        self.model, self.source, self.Y_test = model, model.source(X_test, "X_test"), Y_test
        self.steps, self.inner, self.class_ap = {int(s) for s in steps}, inner, {}

    def __call__(self, event) -> np.ndarray | None:
        weights = self.inner(event) if self.inner is not None else None
        if event.step in self.steps:
            probs = stacked_probabilities(self.model, event.params, self.source, len(self.Y_test))
            self.class_ap[event.step] = average_precision_per_class(self.Y_test, probs[0])
        return weights


def checkpoint_class_ap(
    X: np.ndarray,
    Y: np.ndarray,
    train_rows: np.ndarray,
    X_test: np.ndarray,
    Y_test: np.ndarray,
    spec: TeacherSpec,
    checkpoints,
    *,
    seed: int = 0,
) -> np.ndarray:
    """Per-class test AP ``[len(checkpoints), C]`` of one teacher after each number of steps in ``checkpoints``
    (Figs A.2/A.3: every evaluation step of the teacher), trained alone (as the baseline is) with final parameters
    and no early stopping, in **one** run of ``max(checkpoints)`` steps evaluated every ``gcd(checkpoints)`` steps
    (:class:`ClassAPAtSteps` scores it at each checkpoint). The same as training one run per checkpoint and
    scoring its final parameters: the loop is deterministic on the CPU and an evaluation draws no random number and
    changes no parameter, so a shorter run is a prefix of a longer one."""
    steps = [int(s) for s in checkpoints]
    if not steps or min(steps) < 1:
        raise ValueError(f"checkpoints={checkpoints!r}: expected positive step counts")
    dev = choose_device(None)
    seeds = teacher_seeds(seed, 1)
    model, config = teacher_stack(
        X.shape[1], Y.shape[1], seeds, spec.replace(steps=max(steps), eval_every=math.gcd(*steps)), dev, last=True
    )
    probe = ClassAPAtSteps(model, X_test, Y_test, steps, spec.evaluation_hook())
    train_stacked(
        model,
        X,
        Y.astype(np.float32),
        np.asarray(train_rows, dtype=np.int64)[None],
        np.zeros((1, 0), np.int64),
        config,
        seeds,
        device=dev,
        progress=False,
        desc="checkpoints",
        on_evaluate=probe,
    )
    return np.stack([probe.class_ap[s] for s in steps])


def evaluation_steps(history: pd.DataFrame, teacher: int = 0) -> list[int]:
    """The steps at which ``teacher`` of a run's ``history`` was evaluated (until it stopped early)."""
    h = history[(history.split == "curve") & (history.metric == "mAP") & (history.teacher == teacher)]
    return sorted(int(s) for s in h.step.unique())


def class_ap_at_evaluations(inputs: Any, run: TeacherRun, spec: TeacherSpec) -> tuple[list[int], np.ndarray]:
    """Figs A.2/A.3: teacher 0 of ``run`` (trained on ``inputs``, an :class:`.data.EnsembleInputs`) scored per class
    on the test set at every step it was evaluated (:func:`evaluation_steps`), by :func:`checkpoint_class_ap` on its
    partition with its training seeds (teacher 0's are the first child of ``SeedSequence(inputs.seed)`` in a stack of
    any size) trained alone. Returns (steps, AP ``[K, C]``). The baseline is such a run itself; a teacher of a larger
    stack is not reproduced bit for bit alone (the stack reduces in another floating-point order)."""
    steps = evaluation_steps(run.history, 0)
    return steps, checkpoint_class_ap(
        inputs.X, inputs.Y, inputs.partitions.train[0], inputs.X_test, inputs.Y_test, spec, steps, seed=int(inputs.seed)
    )


#: The log-Mel CNN teachers' speed options (:class:`~pate_study.learning.stacked.StackedModule`'s), as
#: :func:`train_logmel_teachers` takes them; absent, each is off (the path every committed figure used)
CNN_SPEED_OPTIONS = ("memory_format", "autocast_dtype", "compiled")


def cnn_speed_options(speed: Mapping[str, Any] | None) -> dict[str, Any]:
    """``speed`` (notebook 04's ``logmel_run["speed"]``: e.g. ``{"memory_format": "channels_last", "autocast_dtype":
    "bfloat16", "compiled": True}``) checked -> a plain dict of keyword arguments of :func:`train_logmel_teachers`;
    an unknown key or a bad value is a ValueError naming it. None or ``{}``: every option off."""
    speed = dict(speed or {})
    unknown = sorted(set(speed) - set(CNN_SPEED_OPTIONS))
    if unknown:
        raise ValueError(
            f'logmel_run["speed"]: unknown option(s) {unknown}; expected some of {list(CNN_SPEED_OPTIONS)}'
        )
    memory_format_option(speed.get("memory_format", "contiguous"))
    autocast_dtype_option(speed.get("autocast_dtype"))
    compiled_option(speed.get("compiled", False))
    return speed


def speed_stamp(speed: Mapping[str, Any] | None) -> str:
    """The speed options that change the numbers a run gives (bfloat16 rounds them; another memory layout or a
    compiled graph may sum in another order), for a figure's stamp: ``""`` when all are off."""
    speed = cnn_speed_options(speed)
    parts = [f"{k} {v}" for k, v in speed.items() if v not in (None, False, "contiguous")]
    return "; speed: " + ", ".join(parts) if parts else ""


def logmel_stamp(
    source: str, width_scale: int, head: Any, steps: int, n_teachers: int, speed: Mapping[str, Any] | None = None
) -> str:
    """The log-Mel CNN arms' stamp on notebook 04's Figs 5.4 / 5.5: the clips' source, the width divisor, the head,
    the steps and teachers, and any speed option that changes the numbers (:func:`speed_stamp`)."""
    head = None if head is None else tuple(head)
    return f"{source}; width / {width_scale}, head {head}, {steps} steps, {n_teachers} teachers" + speed_stamp(speed)


def train_logmel_teachers(
    architecture: str,
    X: np.ndarray,
    Y: np.ndarray,
    partitions,
    val: np.ndarray,
    X_test: np.ndarray,
    Y_test: np.ndarray,
    spec: TeacherSpec,
    *,
    width_scale: int = 1,
    head: tuple[int, ...] | None = None,
    weights: str | None = None,
    seed: int = 0,
    device: str | None = None,
    memory_format: str = "contiguous",
    autocast_dtype: str | None = None,
    compiled: bool = False,
) -> tuple[pd.DataFrame, str, float]:
    """Muschiol's log-Mel teachers (:func:`pate_study.learning.models.logmel_model`), stacked with
    :class:`pate_study.learning.stacked.StackedModule` and trained by the same loop (bf16 autocast on CUDA,
    float32 on the CPU). ``weights``: a torchvision ImageNet state dict for every teacher
    (:func:`pate_study.learning.models.load_imagenet_weights`), else random init. ``memory_format``
    ("contiguous" | "channels_last"), ``autocast_dtype`` (None | "bfloat16": bfloat16 autocast on the CPU too)
    and ``compiled`` (``torch.compile`` of the forward) are :class:`~pate_study.learning.stacked.StackedModule`'s
    speed options; the defaults are the path every committed figure used. The training settings are the embedding
    teachers' (:func:`teacher_config`: early stopping after ``spec.patience`` evaluations, adaptive class weights
    with ``spec.class_weights``). Returns the history, the weights stamp and the wall time."""
    start = time.perf_counter()
    cnn_speed_options(
        {"memory_format": memory_format, "autocast_dtype": autocast_dtype, "compiled": compiled}
    )  # fail early, before the models are built
    dev = choose_device(device)
    n = partitions.n_teachers
    seeds = teacher_seeds(seed, n)
    modules = []
    for s in seeds[:, 0]:
        torch.manual_seed(int(s))
        m = logmel_model(architecture, Y.shape[1], width_scale=width_scale, dropout=spec.dropout, head=head)
        if weights:
            load_imagenet_weights(m, weights)
        modules.append(m)
    stamp = weights_stamp(modules[0])
    model = StackedModule(
        modules, seeds, device=dev, memory_format=memory_format, autocast_dtype=autocast_dtype, compiled=compiled
    )
    with deterministic_kernels(dev):
        res = train_stacked(
            model,
            X,
            Y.astype(np.float32),
            partitions.train,
            np.tile(np.asarray(val, np.int64), (n, 1)),
            teacher_config(spec),
            seeds,
            device=dev,
            test=(X_test, Y_test.astype(np.float32)),
            progress=False,
            desc=architecture,
            on_evaluate=spec.evaluation_hook(),
        )
    seconds = time.perf_counter() - start
    logger.info("%s: %d teachers, %d steps on %s in %.1f s", architecture, n, spec.steps, dev, seconds)
    return res.history.replace({"split": {"test": "curve"}}), stamp, seconds


@contextlib.contextmanager
def deterministic_kernels(device):
    """Deterministic kernels for the CNN teachers on the CPU: ``torch.use_deterministic_algorithms`` and
    oneDNN's deterministic mode (``torch.backends.mkldnn``; its convolution backward may otherwise reduce
    across threads in a run-dependent order), restored afterwards. Results still depend on the thread
    count (a different reduction split), which is part of the provenance
    (:func:`pate_study.core.device.describe_device`).
    On CUDA nothing changes (bf16 autocast; cuDNN's choices are not pinned)."""
    if getattr(device, "type", str(device)) != "cpu":
        yield
        return
    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.mkldnn.deterministic,
    )
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.mkldnn.deterministic = True
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.backends.mkldnn.deterministic = before[2]


def equal_epochs(spec: TeacherSpec, batch_size: int) -> dict[str, int]:
    """The settings that train ``batch_size`` on as many clips as the recipe ``spec`` (equal epochs): steps and the
    evaluation spacing scaled by ``spec.batch_size / batch_size`` (batch 8 against 64: 8x the steps), so the patience
    (in evaluations) covers the same number of clips too."""
    ratio = spec.batch_size / batch_size
    return {
        "batch_size": int(batch_size),
        "steps": max(1, round(spec.steps * ratio)),
        "eval_every": max(1, round(spec.eval_every * ratio)),
    }


#: Muschiol 2021 §5.1.3 compares learning rates over about 10,000 iterations (its lowest rate, 1e-4, "reached the best
#: performance" there); notebook 04's recipe stops early within a few thousand steps
THESIS_ITERATIONS = 10_000


def thesis_length(spec: TeacherSpec) -> dict[str, Any]:
    """The settings of a learning-rate arm at the thesis's length: :data:`THESIS_ITERATIONS` steps (10x the recipe's
    when that is fewer: a short profile), no early stopping, 20 evaluations; the selected checkpoint is still the best
    validation one."""
    steps = min(THESIS_ITERATIONS, 10 * spec.steps)
    return {"steps": steps, "eval_every": max(1, steps // 20), "patience": None}


def thesis_length_arms(spec: TeacherSpec, learning_rates) -> dict[float, str]:
    """The learning rates trained again at the thesis's length (:func:`thesis_length`) and their arm names: the
    lowest of ``learning_rates`` and the recipe's own (none when the lowest is the recipe's)."""
    if not learning_rates or min(learning_rates) == spec.lr:
        return {}
    return {lr: f"lr {lr:g}, thesis length" for lr in (min(learning_rates), spec.lr)}


def ablation_settings(spec: TeacherSpec, batch_sizes, learning_rates, hidden) -> dict[str, dict]:
    """Notebook 04's ablation arms (Figs 5.7, 5.8, 5.10-5.12) as changes to the recipe ``spec``: no mixup, the random
    sampler, each batch size that is not the recipe's twice (``"batch b"``: the recipe's steps; ``"batch b, equal
    epochs"``: as many clips as the recipe, :func:`equal_epochs`), each learning rate and width that is not the
    recipe's, the lowest learning rate and the recipe's again at the thesis's length (:func:`thesis_length_arms`),
    adaptive class weights."""
    arms: dict[str, dict] = {"recipe": {}, "no mixup": {"mixup_alpha": None}, "random sampler": {"sampler": "random"}}
    for b in batch_sizes:
        if b != spec.batch_size:
            arms[f"batch {b}"] = {"batch_size": b}
            arms[f"batch {b}, equal epochs"] = equal_epochs(spec, b)
    arms.update({f"lr {lr:g}": {"lr": lr} for lr in learning_rates if lr != spec.lr})
    arms.update(
        {name: {"lr": lr, **thesis_length(spec)} for lr, name in thesis_length_arms(spec, learning_rates).items()}
    )
    arms.update({f"MLP {tuple(h)}": {"hidden": h} for h in hidden if list(h) != list(spec.hidden)})
    arms["adaptive weights"] = {"class_weights": "adaptive"}
    return arms


#: The thesis's log-Mel input: 1001 frames (10 s at a 10 ms hop) x 64 Mel bands (Muschiol 2021, §4.2).
THESIS_FRAMES, THESIS_MELS = 1001, 64


def training_flops(
    architectures,
    *,
    n_classes: int,
    frames: int = THESIS_FRAMES,
    mels: int = THESIS_MELS,
    width_scale: int = 1,
    head: Any = None,
) -> dict[str, float]:
    """Floating-point operations of one training step per clip (forward and backward) of each log-Mel CNN
    (:func:`pate_study.learning.models.logmel_model`; defaults: the thesis's widths and heads on its 1001 x 64
    input), counted by ``torch.utils.flop_counter.FlopCounterMode`` on the meta device (shapes only: nothing is
    computed, nothing timed; convolutions and matrix products counted, element-wise operations not). Deterministic:
    the same architectures give the same numbers on any machine, so they can stand in recorded scalars where a
    measured step time cannot (a time differs between runs of the same seed)."""
    out = {}
    for a in architectures:
        with torch.device("meta"):
            model = logmel_model(a, n_classes, width_scale=width_scale, dropout=0.0, head=head)
            x = torch.zeros(2, frames, mels)  # two clips: the heads' batch norm needs more than one
        with FlopCounterMode(display=False) as counter:
            model(x).sum().backward()
        out[a] = float(counter.get_total_flops()) / 2
    return out
