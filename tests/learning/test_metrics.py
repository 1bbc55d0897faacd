import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn import metrics as skm

from pate_study.learning.metrics import (
    average_precision_per_class,
    binary_report,
    mean_average_precision,
    mean_roc_auc,
    multiclass_report,
    multilabel_report,
    resampled_average_precision,
    tpr_tnr,
)
from pate_study.reporting import uncertainty as unc


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


def _rankdata_ap_auc(Y, S):
    """The definitions through scipy's rankdata (three rankings per column), as the package computed them before
    the one-sort path: AP from 'min' ranks of all scores and of the positives' scores, AUC from average ranks."""
    Y, S = np.asarray(Y, dtype=bool), np.asarray(S, dtype=float)
    n, n_pos = S.shape[0], Y.sum(0)
    all_ge = n + 1 - rankdata(S, method="min", axis=0)
    pos_ge = n + 1 - rankdata(np.where(Y, S, -np.inf), method="min", axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = np.where(Y, pos_ge / all_ge, 0.0).sum(0) / np.where(n_pos > 0, n_pos, np.nan)
        auc = ((rankdata(S, method="average", axis=0) * Y).sum(0) - n_pos * (n_pos + 1) / 2) / np.where(
            (n_pos > 0) & (n - n_pos > 0), n_pos * (n - n_pos), np.nan
        )
    return ap, auc


@pytest.mark.parametrize("k", [1, 2, 7, 70])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_sort_ap_and_auc_equal_the_rankdata_definitions_bit_for_bit(k, dtype):
    """One sort per column gives the same AP and AUC as three rankdata calls, to the last bit (ties, a class
    without positives, one with only positives, float32 scores, stacked teachers); also the means."""
    from pate_study.learning.metrics import (
        average_precision_and_roc_auc_per_class,
        average_precision_per_class,
        mean_average_precision_and_roc_auc,
        roc_auc_per_class,
    )

    rng = np.random.default_rng(k)
    for trial in range(20):
        n = int(rng.integers(1, 150))
        S = rng.random((4, n, k)).astype(dtype)
        if trial % 2:
            S = (np.round(S * 5) / 5).astype(dtype)  # many ties
        Y = rng.random((4, n, k)) < rng.random()
        Y[0, :, 0] = False
        Y[1, :, -1] = True
        ap, auc = average_precision_and_roc_auc_per_class(Y, S)  # stacked [4, n, k]
        for i in range(4):
            ref_ap, ref_auc = _rankdata_ap_auc(Y[i], S[i])
            for got in (ap[i], average_precision_per_class(Y[i], S[i])):
                assert np.array_equal(got, ref_ap, equal_nan=True)
            for got in (auc[i], roc_auc_per_class(Y[i], S[i])):
                assert np.array_equal(got, ref_auc, equal_nan=True)
            means = mean_average_precision_and_roc_auc(Y[i], S[i])
            assert np.array_equal(means, (mean_average_precision(Y[i], S[i]), mean_roc_auc(Y[i], S[i])), equal_nan=True)
            assert np.array_equal(
                means,
                (
                    np.nanmean(ref_ap) if np.isfinite(ref_ap).any() else np.nan,
                    np.nanmean(ref_auc) if np.isfinite(ref_auc).any() else np.nan,
                ),
                equal_nan=True,
            )


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_one_sort_ap_and_auc_with_signed_zeros_tiny_and_huge_scores(dtype):
    """Scores are keyed exactly (column + i * score): logits of both signs, -0.0 beside 0.0 (equal, a tie), values
    far below and above the column index all rank as the rankdata definitions rank them."""
    from pate_study.learning.metrics import average_precision_and_roc_auc_per_class

    rng = np.random.default_rng(7)
    n, k = 300, 40
    S = rng.standard_normal((3, n, k)) * 10.0 ** rng.integers(-30, 30, size=(3, n, k)).clip(
        np.log10(np.finfo(dtype).tiny), np.log10(np.finfo(dtype).max) - 1
    )
    S[:, :20] = 0.0
    S[:, 20:40] = -0.0
    S = S.astype(dtype)
    Y = rng.random((3, n, k)) < 0.2
    ap, auc = average_precision_and_roc_auc_per_class(Y, S)
    for i in range(3):
        ref_ap, ref_auc = _rankdata_ap_auc(Y[i], S[i])
        assert np.array_equal(ap[i], ref_ap, equal_nan=True) and np.array_equal(auc[i], ref_auc, equal_nan=True)


def test_ap_and_auc_with_non_finite_scores_follow_rankdata():
    from pate_study.learning.metrics import average_precision_and_roc_auc_per_class

    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=bool)
    S = np.array([[0.2, np.nan], [-np.inf, 0.1], [0.9, 0.4], [0.5, 0.3]])
    ap, auc = average_precision_and_roc_auc_per_class(Y, S)
    ref_ap, ref_auc = _rankdata_ap_auc(Y, S)
    assert np.array_equal(ap, ref_ap, equal_nan=True) and np.array_equal(auc, ref_auc, equal_nan=True)
    assert np.isnan(ap[1]) and np.isnan(auc[1])  # a NaN score makes its column NaN


def test_resampled_average_precision_is_the_resampled_rows_ap():
    """AP of every class on every bootstrap resample from row multiplicities (one product per class) equals
    average_precision_per_class on the resampled rows: duplicated rows, ties and classes a resample misses (NaN)."""
    rng = np.random.default_rng(0)
    y = rng.random((300, 12)) < 0.05
    y[:, 0] = False  # a class with no positive at all
    s = np.round(rng.random((300, 12)) + 0.3 * y, 2).astype(np.float32)  # rounded: many ties
    rows = unc.bootstrap_rows(300, 30, 1)
    fast = resampled_average_precision(y, s, unc.bootstrap_weights(rows))
    slow = np.stack([average_precision_per_class(y[r], s[r]) for r in rows])
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(slow))
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)
    assert np.isnan(fast[:, 0]).all() and np.isnan(slow).any()
    with pytest.raises(ValueError, match="weights"):
        resampled_average_precision(y, s, np.ones((2, 299)))
    with pytest.raises(ValueError, match="multiplicities"):
        resampled_average_precision(y, s, np.full((2, 300), 0.5))
