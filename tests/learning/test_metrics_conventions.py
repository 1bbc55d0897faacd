"""Macro precision/recall over all classes vs over predicted classes (the two readings of Muschiol 2021 Table 5.2)."""

import numpy as np
import pytest
from sklearn import metrics as skm

from pate_study.learning.metrics import macro_precision_recall_all_classes, macro_precision_recall_predicted_classes

#: 4 samples, 4 classes. Class 0: predicted twice, both right (P 1, R 1). Class 1: predicted once, right, one of
#: two positives found (P 1, R 1/2). Class 2: never predicted, one positive (P 0 by zero_division, R 0).
#: Class 3: predicted once, wrong, no positive (P 0, R 0 by zero_division).
Y = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
P = np.array([[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]])


def test_all_classes_by_hand_and_equal_to_sklearn_macro():
    out = macro_precision_recall_all_classes(Y, P)
    assert out == {
        "precision": pytest.approx((1 + 1 + 0 + 0) / 4),
        "recall": pytest.approx((1 + 0.5 + 0 + 0) / 4),
        "n_classes": 4,
    }
    assert out["precision"] == pytest.approx(skm.precision_score(Y, P, average="macro", zero_division=0))
    assert out["recall"] == pytest.approx(skm.recall_score(Y, P, average="macro", zero_division=0))


def test_predicted_classes_by_hand():
    out = macro_precision_recall_predicted_classes(Y, P)  # classes 0, 1, 3
    assert out == {"precision": pytest.approx(2 / 3), "recall": pytest.approx(1.5 / 3), "n_classes": 3}


def test_few_predicted_classes_bound_all_class_precision():
    # Table 5.2's situation: 161 classes, 6 predicted (perfectly): averaged over all, precision = 6/161 < 0.04
    rng = np.random.default_rng(0)
    y = (rng.random((300, 161)) < 0.05).astype(int)
    p = np.zeros_like(y)
    p[:, :6] = y[:, :6]
    p[0, :6] = 1
    y[0, :6] = 1
    every = macro_precision_recall_all_classes(y, p)
    predicted = macro_precision_recall_predicted_classes(y, p)
    assert predicted == {"precision": 1.0, "recall": 1.0, "n_classes": 6}
    assert every["precision"] == pytest.approx(6 / 161) and every["recall"] == pytest.approx(6 / 161)
    # identity: non-predicted classes add 0 to the all-class precision sum
    q = (rng.random((50, 20)) < 0.2).astype(int)
    t = (rng.random((50, 20)) < 0.2).astype(int)
    a, b = macro_precision_recall_all_classes(t, q), macro_precision_recall_predicted_classes(t, q)
    assert a["precision"] == pytest.approx(b["precision"] * b["n_classes"] / a["n_classes"])


def test_no_predicted_class_and_bad_input():
    out = macro_precision_recall_predicted_classes(Y, np.zeros_like(Y))
    assert np.isnan(out["precision"]) and np.isnan(out["recall"]) and out["n_classes"] == 0
    assert macro_precision_recall_all_classes(Y, np.zeros_like(Y))["precision"] == 0.0
    with pytest.raises(ValueError, match="^y_true, y_pred: expected equal shapes"):
        macro_precision_recall_all_classes(Y, P[:, :3])
    with pytest.raises(ValueError, match="^y_pred: expected 0/1"):
        macro_precision_recall_predicted_classes(Y, P * 0.7)
    with pytest.raises(ValueError, match="^y_true: expected a non-empty 2-d"):
        macro_precision_recall_all_classes(Y[0], P[0])


def test_present_classes_convention_drops_every_zero_over_zero_class_and_no_other():
    """One convention for both Audio Set tables (Definition 2): precision over the predicted classes, recall over the
    true classes, F1 over the classes true or predicted; a class neither true nor predicted is dropped (0/0)."""
    from pate_study.learning import metrics

    y = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]], bool)  # class 2 never true, class 3 never anything
    p = np.array([[1, 0, 1, 0], [0, 0, 0, 0], [0, 0, 1, 0]], bool)  # class 1 true but never predicted
    s = metrics.macro_scores_present_classes(y, p)
    # precision: class 0 (1/1), class 2 (0/2) -> 0.5; recall: class 0 (1/2), class 1 (0/1) -> 0.25
    # F1: classes 0 (2/3), 1 (0), 2 (0) -> 2/9; class 3 (0/0 everywhere) dropped
    assert s == {"precision": pytest.approx(0.5), "recall": pytest.approx(0.25), "f1": pytest.approx(2 / 9)}
    counts = metrics.macro_scores_from_counts((y & p).sum(0), (~y & p).sum(0), (y & ~p).sum(0))
    assert counts["recall_true"] == pytest.approx(0.25) and counts["f1_present"] == pytest.approx(2 / 9)
    assert counts["recall_predicted"] == pytest.approx(0.25)  # over the predicted classes 0 (1/2) and 2 (0)
    empty = metrics.macro_scores_present_classes(y[:0], p[:0])
    assert all(np.isnan(v) for v in empty.values())
