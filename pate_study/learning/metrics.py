"""Evaluation metrics of the source documents, via scikit-learn, with a majority-class baseline.

* binary (Sosa 2021 Table 4.1): TPR (recall of the positive class), TNR (specificity), accuracy,
  balanced accuracy;
* multi-class (MAKE 2021 ECG): accuracy, balanced accuracy, per-class recall, macro/micro P/R/F1;
* multi-label (Muschiol 2021 §5): macro/micro P/R/F1 over thresholded labels, mAP (mean over
  classes of average precision, classes without positives skipped) and mean ROC-AUC.

Every report includes the same metrics for the majority-class baseline (binary / multi-class:
always the most frequent class of ``y_true`` -- or of ``y_train`` when given; multi-label: each
label set to its majority value, scores constant) so that a number can always be judged against
the trivial predictor (MAKE 2021 §4.2 reports small utility losses on inputs that are nearly pure noise, which
only a majority-class baseline can put in context).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn import metrics as skm

logger = logging.getLogger(__name__)

__all__ = [
    "tpr_tnr",
    "binary_report",
    "multiclass_report",
    "multilabel_report",
    "mean_average_precision",
    "mean_roc_auc",
    "mean_average_precision_and_roc_auc",
    "average_precision_per_class",
    "roc_auc_per_class",
    "average_precision_and_roc_auc_per_class",
    "majority_class",
    "macro_precision_recall_all_classes",
    "macro_precision_recall_predicted_classes",
]


def _labels_1d(y: Any, name: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-d array of labels, got shape {y.shape}")
    return y


def _same_length(a: np.ndarray, b: np.ndarray, na: str, nb: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{na} and {nb}: expected the same number of samples, got {a.shape[0]} and {b.shape[0]}")


def majority_class(y: Any) -> Any:
    """Most frequent label (smallest on ties)."""
    vals, counts = np.unique(_labels_1d(y, "y"), return_counts=True)
    return vals[np.argmax(counts)]


def tpr_tnr(y_true: Any, y_pred: Any) -> tuple[float, float]:
    """(TPR, TNR) for 0/1 labels; nan where the class is absent from ``y_true``."""
    y_true, y_pred = _labels_1d(y_true, "y_true"), _labels_1d(y_pred, "y_pred")
    _same_length(y_true, y_pred, "y_true", "y_pred")
    pos, neg = y_true == 1, y_true == 0
    tpr = float(np.mean(y_pred[pos] == 1)) if pos.any() else float("nan")
    tnr = float(np.mean(y_pred[neg] == 0)) if neg.any() else float("nan")
    return tpr, tnr


def _binary_core(y_true: np.ndarray, y_pred: np.ndarray, scores: np.ndarray | None) -> dict[str, float]:
    tpr, tnr = tpr_tnr(y_true, y_pred)
    out = {
        "accuracy": float(skm.accuracy_score(y_true, y_pred)),
        "tpr": tpr,
        "tnr": tnr,
        "balanced_accuracy": float(np.nanmean([tpr, tnr])),
        "precision": float(skm.precision_score(y_true, y_pred, zero_division=0)),
        "f1": float(skm.f1_score(y_true, y_pred, zero_division=0)),
    }
    if scores is not None and np.unique(y_true).size == 2:
        out["roc_auc"] = float(skm.roc_auc_score(y_true, scores))
        out["average_precision"] = float(skm.average_precision_score(y_true, scores))
    return out


def binary_report(y_true: Any, y_pred: Any, scores: Any | None = None, y_train: Any | None = None) -> dict[str, Any]:
    """Binary metrics of ``y_pred`` (0/1) and of the majority-class baseline (``"baseline"``)."""
    y_true, y_pred = _labels_1d(y_true, "y_true").astype(int), _labels_1d(y_pred, "y_pred").astype(int)
    _same_length(y_true, y_pred, "y_true", "y_pred")
    if not (np.isin(y_true, (0, 1)).all() and np.isin(y_pred, (0, 1)).all()):
        raise ValueError("y_true, y_pred: expected 0/1 labels")
    s = None if scores is None else np.asarray(scores, dtype=float)
    maj = majority_class(y_true if y_train is None else y_train)
    base = np.full_like(y_true, maj)
    report = _binary_core(y_true, y_pred, s)
    report["baseline"] = {
        "majority_class": int(maj),
        **_binary_core(y_true, base, np.zeros(len(y_true)) if s is not None else None),
    }
    return report


def _prf(y_true: np.ndarray, y_pred: np.ndarray, labels: np.ndarray | None = None) -> dict[str, float]:
    out = {}
    for avg in ("macro", "micro"):
        p, r, f, _ = skm.precision_recall_fscore_support(y_true, y_pred, average=avg, labels=labels, zero_division=0)
        out.update({f"{avg}_precision": float(p), f"{avg}_recall": float(r), f"{avg}_f1": float(f)})
    return out


def multiclass_report(
    y_true: Any, y_pred: Any, n_classes: int | None = None, y_train: Any | None = None
) -> dict[str, Any]:
    """Accuracy, balanced accuracy, per-class recall, macro/micro P/R/F1, and the majority baseline."""
    y_true, y_pred = _labels_1d(y_true, "y_true"), _labels_1d(y_pred, "y_pred")
    _same_length(y_true, y_pred, "y_true", "y_pred")
    labels = np.arange(n_classes) if n_classes is not None else np.union1d(y_true, y_pred)

    def core(pred: np.ndarray) -> dict[str, Any]:
        rec = skm.recall_score(y_true, pred, labels=labels, average=None, zero_division=0)
        present = np.isin(labels, y_true)
        return {
            "accuracy": float(skm.accuracy_score(y_true, pred)),
            "balanced_accuracy": float(rec[present].mean()),
            "per_class_recall": {
                int(c) if np.issubdtype(labels.dtype, np.integer) else c: float(r) for c, r in zip(labels, rec)
            },
            **_prf(y_true, pred, labels),
        }

    maj = majority_class(y_true if y_train is None else y_train)
    report = core(y_pred)
    report["baseline"] = {
        "majority_class": maj.item() if hasattr(maj, "item") else maj,
        **core(np.full_like(y_true, maj)),
    }
    return report


def _check_scores(y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    Y, S = np.asarray(y_true), np.asarray(scores)
    if not np.issubdtype(S.dtype, np.floating):
        S = S.astype(float)
    if Y.ndim < 2 or Y.shape != S.shape:
        raise ValueError(f"y_true, scores: expected equal shapes [..., n, n_labels], got {Y.shape} and {S.shape}")
    return Y.astype(bool), S


def _positives(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column (``batch * k + class``, the row of ``S``'s columns laid out ``[C, n]`` in :func:`_ap_auc_sums`) and
    row of every positive of ``Y: [..., n, k]``."""
    n, k = Y.shape[-2:]
    flat = np.flatnonzero(Y)
    return (flat // (n * k)) * k + flat % k, (flat // k) % n


def _column_keys(column: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Keys ordering finite scores first by ``column`` (an integer array), then by score, exactly, with -0.0 equal
    to 0.0: for scores of at most 32 bits, the int64 ``column * 2**32 + m``, where ``m`` is the float32 bit pattern
    read as a signed integer with negative floats' magnitudes negated (order-preserving, both zeros 0); for float64,
    the complex ``column + i * score`` (numpy orders complex numbers by real part, then imaginary part; slower to
    search)."""
    if scores.dtype.itemsize > 4:
        return column + 1j * scores.astype(np.float64)
    bits = np.ascontiguousarray(scores, dtype=np.float32).view(np.int32)
    sign = bits >> 31  # 0, or -1 for a negative float
    return (column.astype(np.int64) << 32) + (((bits & 0x7FFFFFFF) ^ sign) - sign)  # + or - the magnitude's bits


def _ap_auc_sums(Y: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From one sort of each column (axis -2) of finite scores ``S`` with labels ``Y``: per column, the sum
    over positives of ``#positives scoring >= s / #rows scoring >= s`` (average precision's numerator, added in the
    rows' own order, as ``np.where(Y, ratio, 0).sum(-2)`` adds it) and the sum of the positives' ranks (1-based,
    ascending, ties averaged, as scipy's ``rankdata(method="average")``).

    Only the positives are looked up: with every score keyed by (column, score) (:func:`_column_keys`), the sorted
    columns laid end to end are one sorted array, and one binary search per positive finds the rows scoring below
    and at most its score in its own column (the positives in ascending order of their keys, so that successive
    searches stay near each other); a search among the positives' sorted keys counts the column's positives below
    it. Counts and ranks are integers and half-integers, so they equal what separate ``rankdata``
    calls give, and the rank sum is exact in any order; the AP numerator is summed from an ``[..., n, k]`` array as
    numpy sums the reference's (numpy's order of additions depends on the layout), so it is the same to the last
    bit."""
    batch, (n, k) = S.shape[:-2], S.shape[-2:]
    St = np.ascontiguousarray(np.swapaxes(S, -1, -2)).reshape(-1, n)  # [C, n]: each column's scores contiguous
    n_columns = St.shape[0]
    keys = _column_keys(np.arange(n_columns)[:, None], np.sort(St, axis=-1)).reshape(-1)
    col, row = _positives(Y)
    query = _column_keys(col, St[col, row])
    order = np.argsort(query)  # searched in ascending order: each search starts near the last (numpy's hint)
    col, row, query = col[order], row[order], query[order]
    start = col * n
    below = np.searchsorted(keys, query, side="left") - start
    through = np.searchsorted(keys, query, side="right") - start
    positives = np.bincount(col, minlength=n_columns)
    positives_below = np.searchsorted(query, query, side="left") - (np.cumsum(positives) - positives)[col]
    by_row = np.zeros(St.shape)  # each positive's ratio at its row, summed as numpy sums [..., n, k] over rows
    by_row[col, row] = (positives[col] - positives_below) / (n - below)
    ap_sum = np.swapaxes(by_row.reshape(*batch, k, n), -1, -2).copy().sum(-2)
    rank_sum = np.bincount(col, weights=(below + through - 1) / 2.0 + 1.0, minlength=n_columns)
    return ap_sum, rank_sum.reshape(*batch, k)


def _ap_auc_rank_sums(Y: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sums of :func:`_ap_auc_sums` from three scipy ``rankdata`` calls per column (axis -2): AP's numerator
    from 'min' ranks of all scores and of the positives' scores, the positives' rank sum from average ranks.
    Defined for non-finite scores too (scipy's conventions: a NaN column gives NaN)."""
    S = S.astype(float)
    all_ge = S.shape[-2] + 1 - rankdata(S, method="min", axis=-2)
    pos_ge = S.shape[-2] + 1 - rankdata(np.where(Y, S, -np.inf), method="min", axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap_sum = np.where(Y, pos_ge / all_ge, 0.0).sum(-2)
    return ap_sum, (rankdata(S, method="average", axis=-2) * Y).sum(-2)


def _ap_auc_from_sums(Y: np.ndarray, ap_sum: np.ndarray, rank_sum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AP = numerator / #positives, AUC = (rank sum − n⁺(n⁺+1)/2) / (n⁺ n⁻) (Mann-Whitney); NaN where undefined."""
    n_pos = Y.sum(-2)
    n_neg = Y.shape[-2] - n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = ap_sum / np.where(n_pos > 0, n_pos, np.nan)
        auc = (rank_sum - n_pos * (n_pos + 1) / 2) / np.where((n_pos > 0) & (n_neg > 0), n_pos * n_neg, np.nan)
    return ap, auc


def average_precision_and_roc_auc_by_ranks(y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`average_precision_and_roc_auc_per_class` through scipy's ``rankdata`` (three rankings per column):
    the same values, slower; the path for non-finite scores, and the baseline ``benchmarks/bench_evaluation.py``
    times the one-sort path against."""
    Y, S = _check_scores(y_true, scores)
    return _ap_auc_from_sums(Y, *_ap_auc_rank_sums(Y, S))


def average_precision_and_roc_auc_per_class(y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`average_precision_per_class` and :func:`roc_auc_per_class` from one sort per column (the same
    values, bit for bit, as :func:`average_precision_and_roc_auc_by_ranks`). ``y_true``, ``scores``: ``[n, k]``, or
    stacked ``[..., n, k]`` (e.g. ``[N teachers, n, k]``; each slice exactly as on its own) -> two ``[..., k]``
    arrays. Non-finite scores take the rank path (scipy's conventions: a NaN column is NaN)."""
    Y, S = _check_scores(y_true, scores)
    sums = _ap_auc_sums(Y, S) if np.isfinite(S).all() else _ap_auc_rank_sums(Y, S)
    return _ap_auc_from_sums(Y, *sums)


def resampled_average_precision(y_true: Any, scores: Any, weights: Any) -> np.ndarray:
    """Average precision of every class on every bootstrap resample of the rows: ``y_true`` / ``scores`` ``[n, C]``
    (finite scores), ``weights`` ``[B, n]`` each resample's row multiplicities
    (:func:`pate_study.reporting.uncertainty.bootstrap_weights`) -> ``[B, C]``, NaN where a resample holds no positive
    of the class. The same number :func:`average_precision_per_class` gives on the resampled rows (a row drawn k times
    counts k times; equal scores form one threshold): AP = Σ_i w_i y_i · W⁺(s_i) / W(s_i) / Σ_i w_i y_i, with W(s) the
    weight of the rows scoring ≥ s and W⁺(s) that of the positive ones. Per class, with the 0/1 matrix ``M`` of
    "row j scores ≥ positive k", ``W(s_k)`` for every resample is one matrix product ``weights @ M`` (integer counts,
    exact in float32), so B resamples cost one product per class instead of B sorts (equal to the resampled rows' AP
    up to float rounding)."""
    Y, S = _check_scores(y_true, scores)
    W = np.asarray(weights)
    if Y.ndim != 2 or W.ndim != 2 or W.shape[1] != Y.shape[0]:
        raise ValueError(
            f"y_true, scores [n, C] and weights [B, n]: got {Y.shape}, {S.shape} and {W.shape} (one weight per row)"
        )
    if not np.isfinite(S).all():
        raise ValueError("scores: expected finite scores (non-finite ones take average_precision_per_class)")
    if W.size and (W.min() < 0 or W.max() >= 2**24 or not np.array_equal(W, np.round(W))):
        raise ValueError("weights: expected non-negative integer row multiplicities below 2**24")
    W32 = W.astype(np.float32)
    out = np.full((W.shape[0], Y.shape[1]), np.nan)
    for c in range(Y.shape[1]):
        pos = np.flatnonzero(Y[:, c])
        if pos.size == 0:
            continue
        at_least = (S[:, c][:, None] >= S[pos, c][None, :]).astype(np.float32)  # [n, P]: row j scores >= positive k
        every = (W32 @ at_least).astype(np.float64)  # W(s_k) per resample
        positive = (W32[:, pos] @ at_least[pos]).astype(np.float64)  # W⁺(s_k)
        drawn = W[:, pos].astype(np.float64)
        total = drawn.sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            terms = np.where(drawn > 0, drawn * positive / every, 0.0)  # every > 0 wherever the positive is drawn
            out[:, c] = np.where(total > 0, terms.sum(1) / total, np.nan)
    return out


def average_precision_per_class(y_true: Any, scores: Any) -> np.ndarray:
    """Average precision of every class at once (NaN where a class has no positive).

    AP = mean over the class's positives of the precision at that positive's score threshold,
    ``#positives scoring >= s / #clips scoring >= s``: sklearn's uninterpolated step-wise AP
    (ties form one threshold), computed from one sort per column instead of one per class.
    Stacked inputs ``[..., n, k]`` as in :func:`average_precision_and_roc_auc_per_class`.
    """
    return average_precision_and_roc_auc_per_class(y_true, scores)[0]


def roc_auc_per_class(y_true: Any, scores: Any) -> np.ndarray:
    """ROC-AUC of every class at once (Mann-Whitney: mean ranks, ties averaged); NaN where a class
    lacks positives or negatives. Equal to sklearn's ``roc_auc_score`` per class. Stacked inputs
    ``[..., n, k]`` as in :func:`average_precision_and_roc_auc_per_class`."""
    return average_precision_and_roc_auc_per_class(y_true, scores)[1]


def _mean_over_classes(values: np.ndarray) -> float:
    """Mean over the classes with a finite value (NaN when none has one)."""
    return float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")


def mean_average_precision(y_true: Any, scores: Any) -> float:
    """mAP: mean over classes with at least one positive of the average precision (sklearn's definition)."""
    return _mean_over_classes(average_precision_per_class(y_true, scores))


def mean_roc_auc(y_true: Any, scores: Any) -> float:
    """Mean over classes with both positives and negatives of the ROC-AUC (sklearn's definition)."""
    return _mean_over_classes(roc_auc_per_class(y_true, scores))


def mean_average_precision_and_roc_auc(y_true: Any, scores: Any) -> tuple[float, float]:
    """(:func:`mean_average_precision`, :func:`mean_roc_auc`) from one sort per column (the same values)."""
    ap, auc = average_precision_and_roc_auc_per_class(y_true, scores)
    return _mean_over_classes(ap), _mean_over_classes(auc)


def multilabel_report(
    y_true: Any, y_pred: Any, scores: Any | None = None, y_train: Any | None = None
) -> dict[str, Any]:
    """Macro/micro P/R/F1 of 0/1 label matrices; mAP and mean ROC-AUC when ``scores`` are given;
    the baseline predicts each label's majority value (from ``y_train`` when given)."""
    Y, P = np.asarray(y_true).astype(int), np.asarray(y_pred).astype(int)
    if Y.ndim != 2 or Y.shape != P.shape:
        raise ValueError(f"y_true, y_pred: expected equal 2-d shapes [n, n_labels], got {Y.shape} and {P.shape}")

    def core(pred: np.ndarray, sc: np.ndarray | None) -> dict[str, Any]:
        out = {"subset_accuracy": float(skm.accuracy_score(Y, pred)), **_prf(Y, pred)}
        if sc is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out["mAP"] = mean_average_precision(Y, sc)
                out["mean_roc_auc"] = mean_roc_auc(Y, sc)
        return out

    ref = Y if y_train is None else np.asarray(y_train).astype(int)
    maj = (ref.mean(0) > 0.5).astype(int)
    base = np.broadcast_to(maj, Y.shape).copy()
    report = core(P, None if scores is None else np.asarray(scores, dtype=float))
    report["baseline"] = core(base, np.broadcast_to(ref.mean(0), Y.shape).astype(float) if scores is not None else None)
    return report


# ------------------------------------------------ macro precision/recall: two averaging conventions
# Muschiol 2021 Table 5.2 prints macro precision/recall without saying over which classes it averages. Both
# conventions are given as separate functions; scikit-learn computes the per-class values underneath.


def _per_class_precision_recall(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-class precision, recall (``zero_division=0``) and number of positive predictions of 0/1 matrices
    ``[n_samples, n_classes]`` (sklearn's ``precision_recall_fscore_support(average=None)``)."""
    Y, P = np.asarray(y_true), np.asarray(y_pred)
    for name, arr in (("y_true", Y), ("y_pred", P)):
        if arr.ndim != 2 or arr.size == 0:
            raise ValueError(
                f"{name}: expected a non-empty 2-d 0/1 array [n_samples, n_classes], got shape {arr.shape}"
            )
        if arr.dtype == object or not np.all((arr == 0) | (arr == 1)):
            raise ValueError(f"{name}: expected 0/1 (or boolean) label indicators; threshold scores first")
    if Y.shape != P.shape:
        raise ValueError(f"y_true, y_pred: expected equal shapes [n_samples, n_classes], got {Y.shape} and {P.shape}")
    Y, P = Y.astype(int), P.astype(int)
    precision, recall, _, _ = skm.precision_recall_fscore_support(Y, P, average=None, zero_division=0)
    return precision, recall, P.sum(axis=0)


def macro_precision_recall_all_classes(y_true: Any, y_pred: Any) -> dict[str, float]:
    """Macro precision and recall averaged over *all* classes; a class with no positive prediction has precision 0
    and a class with no positive label recall 0 (sklearn's ``average="macro"``, ``zero_division=0``).

    With few predicted classes precision is bounded by (number of predicted classes)/(number of classes).
    Returns ``{"precision", "recall", "n_classes"}``.
    """
    precision, recall, _ = _per_class_precision_recall(y_true, y_pred)
    return {"precision": float(np.mean(precision)), "recall": float(np.mean(recall)), "n_classes": int(len(precision))}


def macro_precision_recall_predicted_classes(y_true: Any, y_pred: Any) -> dict[str, float]:
    """Macro precision and recall averaged over the classes with at least one positive prediction only (the same
    classes for both); NaN for both when no class is predicted. Returns ``{"precision", "recall", "n_classes"}``
    with ``n_classes`` the number of predicted classes averaged over."""
    precision, recall, n_predicted = _per_class_precision_recall(y_true, y_pred)
    kept = n_predicted > 0
    if not kept.any():
        return {"precision": float("nan"), "recall": float("nan"), "n_classes": 0}
    return {
        "precision": float(np.mean(precision[kept])),
        "recall": float(np.mean(recall[kept])),
        "n_classes": int(kept.sum()),
    }


def macro_scores_from_counts(tp: Any, fp: Any, fn: Any) -> dict[str, np.ndarray]:
    """Macro P/R/F1 of multi-label predictions from per-class counts ``[..., n_classes]`` (true positives, false
    positives, false negatives; weighted counts allowed, e.g. a bootstrap resample's row multiplicities), vectorised
    over the leading axes: ``precision``/``recall``/``f1`` averaged over *all* classes with ``zero_division=0``
    (the values of scikit-learn's ``precision_recall_fscore_support(average="macro", zero_division=0)``; per-class
    F1 = 2 tp / (2 tp + fp + fn)), and ``precision_predicted``/``recall_predicted`` averaged over the classes with a
    positive prediction (NaN where none is predicted; :func:`macro_precision_recall_predicted_classes`), and the
    one convention both Audio Set tables are judged on (:data:`PRESENT_CLASSES`): ``recall_true`` averaged over the
    classes with a positive label, ``f1_present`` over the classes with a positive label or prediction (with
    ``precision_predicted``: every 0/0 class dropped, no other)."""
    tp, fp, fn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn))

    def ratio(a, b):
        return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)

    precision, recall, f1 = ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2 * tp, 2 * tp + fp + fn)

    def over(values: np.ndarray, kept: np.ndarray) -> np.ndarray:
        n = kept.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, (values * kept).sum(-1) / np.maximum(n, 1), np.nan)

    predicted, true = (tp + fp) > 0, (tp + fn) > 0
    return {
        "precision": precision.mean(-1),
        "recall": recall.mean(-1),
        "f1": f1.mean(-1),
        "precision_predicted": over(precision, predicted),
        "recall_predicted": over(recall, predicted),
        "recall_true": over(recall, true),
        "f1_present": over(f1, predicted | true),
    }


#: The convention of the Audio Set tables' verdicts (Muschiol 2021, Definition 2: per-class precision and recall,
#: averaged over classes), with the classes the definition leaves undefined stated: a class's precision counts where
#: it is predicted, its recall where it is true, its F1 where it is either (every 0/0 class dropped, in every table).
PRESENT_CLASSES = (
    "precision over the predicted classes, recall over the true classes, F1 over the classes true or "
    "predicted in the scored set (0/0 classes dropped; Muschiol 2021, Definition 2)"
)


def macro_scores_present_classes(y_true: Any, y_pred: Any) -> dict[str, float]:
    """Macro P/R/F1 of 0/1 label matrices on :data:`PRESENT_CLASSES`: ``{"precision", "recall", "f1"}`` (NaN
    where no class qualifies, e.g. an empty answered set)."""
    Y, P = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    if Y.shape != P.shape or Y.ndim != 2:
        raise ValueError(f"y_true, y_pred: expected equal shapes [n_samples, n_classes], got {Y.shape} and {P.shape}")
    s = macro_scores_from_counts((Y & P).sum(0), (~Y & P).sum(0), (Y & ~P).sum(0))
    return {
        "precision": float(s["precision_predicted"]),
        "recall": float(s["recall_true"]),
        "f1": float(s["f1_present"]),
    }
