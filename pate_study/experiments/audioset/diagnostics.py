"""What the teachers' figures describe (Muschiol 2021 Figs 5.1-5.12, A.1-A.5): training curves over teachers,
per-class AP and its ranks, micro-averaged PR/ROC curves, and the sampler statistics of Fig 5.9. Pure functions of
a :class:`~.teachers.TeacherRun` or of arrays; nothing here trains.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import precision_recall_curve, roc_curve

from pate_study.experiments.audioset.teachers import TeacherRun
from pate_study.learning.metrics import average_precision_per_class
from pate_study.learning.samplers import LabelBalancedStream, PermutationStream


def curves(run: TeacherRun | pd.DataFrame, metric: str = "mAP", split: str = "curve") -> pd.DataFrame:
    """``step x teacher`` table of one metric from a run's history (or a history frame itself); a teacher
    stopped early has NaN after its last evaluation."""
    h = run.history if isinstance(run, TeacherRun) else run
    h = h[(h.split == split) & (h.metric == metric)]
    return h.pivot_table(index="step", columns="teacher", values="value")


def curve_stats(run: TeacherRun | pd.DataFrame, metric: str = "mAP", split: str = "curve") -> pd.DataFrame:
    """Per step, over the teachers (the one place the notebook's curves are summarised): ``mean``, ``min``,
    ``max`` of ``metric`` over the teachers still training at that step, and ``teachers`` (how many; fewer
    once early stopping removed some). Index: step."""
    c = curves(run, metric, split)
    return pd.DataFrame(
        {"mean": c.mean(axis=1), "min": c.min(axis=1), "max": c.max(axis=1), "teachers": c.notna().sum(axis=1)}
    )


def curve_wobble(run: TeacherRun | pd.DataFrame, metric: str = "mAP", split: str = "curve") -> float:
    """Mean absolute change of the teachers' mean curve between evaluations (Fig 5.8's "stabler")."""
    return float(curve_stats(run, metric, split)["mean"].diff().abs().mean())


def per_class_ap(labels: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Average precision per class; NaN for classes without a positive clip."""
    return average_precision_per_class(labels, scores)


def ranked_classes(ap: np.ndarray, k: int = 10) -> dict[str, np.ndarray]:
    """Class indices of the ``k`` best, ``k`` medium (centred on the median rank) and ``k`` worst
    classes by AP (NaN classes ignored); Muschiol Figs A.2-A.5 do not say how "medium" is chosen."""
    ok = np.flatnonzero(np.isfinite(ap))
    order = ok[np.argsort(-ap[ok], kind="stable")]
    k = min(k, max(1, order.size // 3))
    mid = order.size // 2
    return {"best": order[:k], "medium": order[max(0, mid - k // 2) : max(0, mid - k // 2) + k], "worst": order[-k:]}


def micro_curves(labels: np.ndarray, scores: np.ndarray) -> dict[str, np.ndarray]:
    """Micro-averaged PR and ROC curves (all clip-class pairs pooled; the thesis does not state its averaging)."""
    y, s = np.asarray(labels, bool).ravel(), np.asarray(scores, float).ravel()
    precision, recall, _ = precision_recall_curve(y, s)
    fpr, tpr, _ = roc_curve(y, s)
    return {"precision": precision, "recall": recall, "fpr": fpr, "tpr": tpr}


def min_clips_per_class(labels: np.ndarray) -> int:
    """Fewest clips of any class (bal_train has at least ~59 per class: a nearly flat distribution)."""
    return int(np.asarray(labels, bool).sum(0).min())


def class_occurrences(labels: np.ndarray, batches: np.ndarray) -> np.ndarray:
    """Per-class number of positive labels over the drawn ``batches`` (``int [iterations, batch]``
    clip indices): the quantity of Muschiol Fig 5.9 (class occurrences in 1,000 iterations)."""
    labels = np.asarray(labels, dtype=bool)
    batches = np.asarray(batches)
    if batches.ndim != 2 or batches.size == 0:
        raise ValueError(f"batches of shape {batches.shape}: expected [iterations, batch_size] clip indices")
    if batches.min() < 0 or batches.max() >= len(labels):
        raise ValueError(f"batches: indices must lie in [0, {len(labels)})")
    return labels[batches.ravel()].sum(0).astype(np.int64)


def top_class(counts: np.ndarray, names) -> tuple[str, int]:
    """Name and count of the most frequent class."""
    i = int(np.argmax(counts))
    return str(names[i]), int(counts[i])


def sampler_batches(
    labels: np.ndarray, ids: np.ndarray, kind: str, *, iterations: int = 1000, batch_size: int = 64, seed: int = 0
) -> np.ndarray:
    """``int [iterations, batch_size]`` clip ids drawn from the rows ``ids`` by the ``"balanced"``
    sampler (Muschiol §4.4.2, :class:`pate_study.learning.samplers.LabelBalancedStream`) or ``"random"``
    (successive random permutations, :class:`pate_study.learning.samplers.PermutationStream`)."""
    ids = np.asarray(ids, dtype=np.int64)
    if kind == "balanced":
        stream = LabelBalancedStream(np.asarray(labels)[ids], ids, rng=np.random.default_rng(seed))
        draw = stream.draw
    elif kind == "random":
        perm = PermutationStream(ids, torch.Generator().manual_seed(int(seed)))

        def draw(k):
            return perm.draw(k).numpy()
    else:
        raise ValueError(f"sampler={kind!r}: expected 'balanced' or 'random'")
    return np.stack([draw(batch_size) for _ in range(iterations)])


def sampler_statistics(
    labels: np.ndarray, ids: np.ndarray, *, iterations: int = 1000, batch_size: int = 64, seed: int = 0
) -> pd.DataFrame:
    """Fig 5.9: per-class occurrences in ``iterations`` batches of ``batch_size`` for the balanced and
    the random sampler over the same rows; one row per class (``balanced``, ``random`` counts) and
    the class's count in the rows themselves (``in_partition``)."""
    Y = np.asarray(labels, bool)
    counts = {
        k: class_occurrences(Y, sampler_batches(Y, ids, k, iterations=iterations, batch_size=batch_size, seed=seed))
        for k in ("balanced", "random")
    }
    return pd.DataFrame({"class_index": np.arange(Y.shape[1]), "in_partition": Y[np.asarray(ids)].sum(0), **counts})


def occurrence_spread(counts: np.ndarray) -> float:
    """Spread of per-class occurrence counts: max / median over classes that occur (Fig 5.9's "tighter")."""
    c = np.asarray(counts, float)
    c = c[c > 0]
    return float(c.max() / np.median(c)) if c.size else float("nan")


def log_count_sd(counts: np.ndarray) -> float:
    """A second spread of per-class occurrence counts: the sd (ddof 1) of their logs over the classes that occur."""
    c = np.asarray(counts, float)
    c = c[c > 0]
    return float(np.log(c).std(ddof=1)) if c.size > 1 else float("nan")


def sampler_spreads(
    labels: np.ndarray, ids: np.ndarray, *, iterations: int = 1000, batch_size: int = 64, seeds=(0, 1, 2, 3, 4)
) -> pd.DataFrame:
    """Fig 5.9's spreads over sampler seeds (the random source behind them): per seed and sampler
    (:func:`sampler_statistics`), max / median occurrence (:func:`occurrence_spread`) and the sd of the log counts
    (:func:`log_count_sd`). One row per seed: ``seed``, ``balanced``, ``random``, ``balanced_log_sd``,
    ``random_log_sd``."""
    rows = []
    for s in seeds:
        occ = sampler_statistics(labels, ids, iterations=iterations, batch_size=batch_size, seed=int(s))
        rows.append(
            {
                "seed": int(s),
                **{k: occurrence_spread(occ[k]) for k in ("balanced", "random")},
                **{f"{k}_log_sd": log_count_sd(occ[k]) for k in ("balanced", "random")},
            }
        )
    return pd.DataFrame(rows)


def final_curve_means(histories: dict, keys) -> dict:
    """Per key, the mean over teachers of the last recorded curve-sample mAP and AUC (Fig 5.4's final values);
    ``histories[key]`` is a history frame or a tuple starting with one."""
    out = {}
    for key in keys:
        h = histories[key][0] if isinstance(histories[key], tuple) else histories[key]
        out[key] = {m: float(curve_stats(h, m)["mean"].iloc[-1]) for m in ("mAP", "auc")}
    return out
