import numpy as np
import pytest
import torch

from pate_study.learning.models import mlp
from pate_study.learning.student import BatchBalancedSampler, fit_model, mixup_pairs, predict_scores, train_student


def test_balanced_sampler_equalises_labels():
    Y = np.zeros((1000, 3))
    Y[:900, 0] = 1
    Y[900:990, 1] = 1
    Y[990:, 2] = 1
    ids = list(BatchBalancedSampler(Y, num_samples=3000, seed=0))
    counts = Y[ids].sum(0)
    assert len(ids) == 3000 and np.allclose(counts, 1000, atol=1)
    assert ids == list(BatchBalancedSampler(Y, num_samples=3000, seed=0))
    with pytest.raises(ValueError):
        BatchBalancedSampler(np.zeros((4, 2)))


def test_mixup_pairs_convex_and_reproducible():
    x = torch.arange(8.0).view(4, 2)
    y = torch.eye(4)
    xm, ym = mixup_pairs(x, y, 0.4, torch.Generator().manual_seed(0))
    xm2, _ = mixup_pairs(x, y, 0.4, torch.Generator().manual_seed(0))
    assert torch.equal(xm, xm2)
    torch.testing.assert_close(ym.sum(1), torch.ones(4))
    assert ((xm >= torch.minimum(x, x.roll(-1, 0)) - 1e-6) & (xm <= torch.maximum(x, x.roll(-1, 0)) + 1e-6)).all()


def test_student_uses_only_answered_queries_and_learns(separable):
    X, y = separable
    Xtr, ytr, Xv, yv, Xt, yt = X[:600], y[:600], X[600:800], y[600:800], X[800:1000], y[800:1000]
    labels = ytr.copy()
    answered = np.ones(600, dtype=bool)
    answered[:100] = False
    labels[:100] = 1 - labels[:100]  # wrong labels on unanswered rows must not matter
    res = train_student(
        lambda: mlp(20, (16,), 1),
        Xtr,
        labels,
        "binary",
        answered=answered,
        X_val=Xv,
        y_val=yv,
        X_threshold=Xt,
        y_threshold=yt,
        max_epochs=15,
        lr=1e-2,
        seed=0,
    )
    assert res.n_train == 500 and 0.0 < res.threshold < 1.0
    s = predict_scores(res.model, X[1000:], "binary")
    assert np.mean((s >= res.threshold) == y[1000:]) > 0.95
    with pytest.raises(ValueError, match="X_private"):
        train_student(lambda: mlp(20, (4,), 1), Xtr, labels, "binary", features="privatised")


def test_fit_model_multilabel_balanced_mixup_deterministic():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 10)).astype(np.float32)
    Y = (X[:, :3] > 0.8).astype(np.float32)
    outs = []
    for _ in range(2):
        torch.manual_seed(0)  # fit_model seeds training, not the model's initialisation
        r = fit_model(
            mlp(10, (8,), 3),
            X,
            Y,
            "multilabel",
            X[:50],
            Y[:50],
            max_epochs=3,
            sampler="balanced",
            mixup_alpha=1.0,
            seed=5,
        )
        outs.append(predict_scores(r.model, X, "multilabel"))
    assert outs[0].shape == (300, 3)
    np.testing.assert_array_equal(outs[0], outs[1])
