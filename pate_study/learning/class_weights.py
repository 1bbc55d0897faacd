"""Per-class loss weights updated at each evaluation (Muschiol 2021 §4.4.4, §5.1.3): the event an ``on_evaluate``
hook of :func:`pate_study.learning.training.train_stacked` sees, the performance-adaptive rule
(:func:`adaptive_class_weights`, a documented decision: the thesis prints no formula) and the hook that applies it."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from pate_study.learning.metrics import average_precision_per_class


@dataclass(frozen=True)
class EvaluationEvent:
    """What an ``on_evaluate`` hook of :func:`pate_study.learning.training.train_stacked` sees after one evaluation.

    ``teachers``: ids of the active teachers (row ``j`` of every array below is teacher ``teachers[j]``);
    ``scores``: split -> metric -> ``[n_active]`` (as recorded in the history); ``val_probs`` /
    ``val_truth``: ``[n_active, m_val, k]`` validation probabilities and 0/1 labels (None without
    validation rows); ``class_weights``: the current positive-class weights ``[n_active, k]`` (None: unweighted);
    ``params``: the active teachers' parameters at this step (stacked tensors, to read, never to change -- e.g. to
    score them on data of the hook's own). The hook returns None (keep the weights) or new weights ``[k]`` or
    ``[n_active, k]`` for the next steps.
    """

    step: int
    teachers: np.ndarray
    scores: dict[str, dict[str, np.ndarray]]
    val_probs: np.ndarray | None
    val_truth: np.ndarray | None
    class_weights: np.ndarray | None
    params: tuple[torch.Tensor, ...] = ()


def adaptive_class_weights(class_ap: np.ndarray, *, max_weight: float = 4.0, temperature: float = 0.1) -> np.ndarray:
    """Performance-adaptive positive-class weights (Muschiol 2021 §5.1.3, bounded as in §4.4.4).

    The thesis states the idea only: weights "updated after a test step ... according to the performance
    of the class", favouring "classes with lousy performance", and (§4.4.4) weights passed "into a
    sigmoid function to bind the weights by a maximum and minimum value". Our rule (a decision, no formula
    is printed): with ``d_c = mean_c'(AP_c') - AP_c`` the class's AP deficit against the teacher's mAP,

        ``p_c = max_weight ** tanh(d_c / temperature)``,

    a sigmoid (``tanh(x) = 2 sigmoid(2x) - 1``) in log space: bounded in ``[1/max_weight, max_weight]``,
    1 for a class at the mean, decreasing in ``AP_c``, all ones when every class scores the same or
    ``max_weight = 1``. Recomputed from the current scores at every evaluation (not accumulated).
    Classes without an AP (NaN: no positive validation clip) keep weight 1. Vectorised over leading axes
    (``class_ap [..., k]``, one row per teacher).
    """
    if not max_weight >= 1:
        raise ValueError(
            f"max_weight={max_weight!r}: expected a bound >= 1 (weights lie in [1/max_weight, max_weight])"
        )
    if not temperature > 0:
        raise ValueError(f"temperature={temperature!r}: expected a positive AP scale")
    ap = np.asarray(class_ap, dtype=np.float64)
    finite = np.isfinite(ap)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a teacher row without any finite AP
        mean = np.nanmean(np.where(finite, ap, np.nan), axis=-1, keepdims=True)
    deficit = np.where(finite, mean - np.where(finite, ap, 0.0), 0.0)
    return np.exp(np.log(max_weight) * np.tanh(deficit / temperature))


class AdaptiveClassWeights:
    """``on_evaluate`` hook of :func:`pate_study.learning.training.train_stacked`: per teacher, per-class AP on its
    validation rows (:func:`pate_study.learning.metrics.average_precision_per_class`) -> :func:`adaptive_class_weights`.

    The thesis scored its classes on the test set; here the validation split is used (the test set is
    never used for training decisions). ``trace`` records per evaluation and teacher the step and the
    min / mean / max weight handed back (for the figure)."""

    def __init__(self, max_weight: float = 4.0, temperature: float = 0.1) -> None:
        adaptive_class_weights(np.zeros(1), max_weight=max_weight, temperature=temperature)  # checks the settings
        self.max_weight, self.temperature = float(max_weight), float(temperature)
        self.trace: list[dict[str, float]] = []

    def __call__(self, event: EvaluationEvent) -> np.ndarray | None:

        if event.val_probs is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ap = np.stack([average_precision_per_class(t, p) for t, p in zip(event.val_truth, event.val_probs)])
        w = adaptive_class_weights(ap, max_weight=self.max_weight, temperature=self.temperature)
        self.trace.extend(
            {
                "step": event.step,
                "teacher": int(t),
                "min": float(r.min()),
                "mean": float(r.mean()),
                "max": float(r.max()),
            }
            for t, r in zip(event.teachers, w)
        )
        return w


def check_class_weights(weights: Any, n: int, k: int, name: str) -> np.ndarray:
    """``[k]`` or ``[n, k]`` finite positive weights -> float32 ``[n, k]``."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape == (k,):
        w = np.broadcast_to(w, (n, k))
    if w.shape != (n, k) or not np.all(np.isfinite(w)) or not np.all(w > 0):
        raise ValueError(
            f"{name}: expected finite positive per-class weights of shape [{k}] or [{n}, {k}] "
            f"(one row per active teacher), got shape {np.shape(weights)}"
        )
    return np.ascontiguousarray(w, dtype=np.float32)
