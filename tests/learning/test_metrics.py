import numpy as np
import pytest
from sklearn import metrics as skm

from pate_study.learning.metrics import (
    binary_report, mean_average_precision, mean_roc_auc, multiclass_report, multilabel_report, tpr_tnr,
)


def test_binary_matches_sklearn_on_random_inputs():
    rng = np.random.default_rng(0)
    for _ in range(5):
        y = rng.integers(0, 2, 200)
        p = rng.integers(0, 2, 200)
        s = rng.random(200)
        r = binary_report(y, p, s)
        tn, fp, fn, tp = skm.confusion_matrix(y, p).ravel()
        assert r["tpr"] == pytest.approx(tp / (tp + fn)) and r["tnr"] == pytest.approx(tn / (tn + fp))
        assert r["balanced_accuracy"] == pytest.approx(skm.balanced_accuracy_score(y, p))
        assert r["accuracy"] == pytest.approx(skm.accuracy_score(y, p))
        assert r["roc_auc"] == pytest.approx(skm.roc_auc_score(y, s))
        maj = int(np.bincount(y).argmax())
        assert r["baseline"]["majority_class"] == maj
        assert r["baseline"]["accuracy"] == pytest.approx(np.mean(y == maj))
        assert r["baseline"]["roc_auc"] == pytest.approx(0.5)


def test_tpr_tnr_missing_class_is_nan():
    tpr, tnr = tpr_tnr([0, 0], [0, 1])
    assert np.isnan(tpr) and tnr == 0.5


def test_multiclass_matches_sklearn():
    rng = np.random.default_rng(1)
    y, p = rng.integers(0, 5, 300), rng.integers(0, 5, 300)
    r = multiclass_report(y, p, n_classes=5)
    assert r["balanced_accuracy"] == pytest.approx(skm.balanced_accuracy_score(y, p))
    rec = skm.recall_score(y, p, average=None)
    assert [r["per_class_recall"][c] for c in range(5)] == pytest.approx(list(rec))
    for avg in ("macro", "micro"):
        assert r[f"{avg}_f1"] == pytest.approx(skm.f1_score(y, p, average=avg))
        assert r[f"{avg}_precision"] == pytest.approx(skm.precision_score(y, p, average=avg))
    assert r["baseline"]["accuracy"] == pytest.approx(np.mean(y == np.bincount(y).argmax()))


def test_multilabel_matches_sklearn():
    rng = np.random.default_rng(2)
    Y = (rng.random((150, 6)) < 0.3).astype(int)
    S = rng.random((150, 6))
    P = (S > 0.5).astype(int)
    r = multilabel_report(Y, P, S)
    assert r["macro_f1"] == pytest.approx(skm.f1_score(Y, P, average="macro", zero_division=0))
    assert r["micro_recall"] == pytest.approx(skm.recall_score(Y, P, average="micro"))
    ap = np.mean([skm.average_precision_score(Y[:, j], S[:, j]) for j in range(6)])
    assert r["mAP"] == pytest.approx(ap) and mean_average_precision(Y, S) == pytest.approx(ap)
    auc = np.mean([skm.roc_auc_score(Y[:, j], S[:, j]) for j in range(6)])
    assert mean_roc_auc(Y, S) == pytest.approx(auc)
    assert r["baseline"]["micro_f1"] == 0.0  # all labels below 50% prevalence -> predicts nothing
    with pytest.raises(ValueError):
        multilabel_report(Y, P[:, :3])
