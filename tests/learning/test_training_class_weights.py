"""Per-class loss weights in the one training loop (Muschiol 2021 Eq. 4.9) and the adaptive rule of §5.1.3."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from pate_study.learning.class_weights import AdaptiveClassWeights, EvaluationEvent, adaptive_class_weights
from pate_study.learning.losses import per_teacher_loss, weighted_bce_with_logits
from pate_study.learning.stacked import StackedMLP
from pate_study.learning.train_config import TrainConfig, teacher_seeds
from pate_study.learning.training import train_stacked


def _data(n=600, d=10, labels=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    Y = (X @ rng.normal(size=(d, labels)) > 0.7).astype(np.float32)
    Y[np.arange(n), rng.integers(0, labels, n)] = 1
    return X, Y


def _train(X, Y, n_teachers=3, seed=0, mixup=1.0, **kw):
    seeds = teacher_seeds(seed, n_teachers)
    rows = np.arange(n_teachers * 120).reshape(n_teachers, 120)
    val = np.tile(np.arange(500, 600), (n_teachers, 1))
    model = StackedMLP((X.shape[1], 16, Y.shape[1]), seeds, dropout=0.2)
    cfg = TrainConfig(
        task="multilabel",
        lr=1e-2,
        batch_size=16,
        max_steps=30,
        eval_every=10,
        sampler="balanced",
        mixup_alpha=mixup,
        select_on="mAP",
    )
    return train_stacked(model, X, Y, rows, val, cfg, seeds, device=torch.device("cpu"), progress=False, **kw)


# ------------------------------------------------------------------------------------------ the loss
def test_weighted_bce_is_eq_4_9_and_exactly_plain_bce_at_weight_one():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(2, 5, 3, generator=g) * 4
    t = torch.rand(2, 5, 3, generator=g)  # soft (mixed) targets too
    p = torch.tensor([[[0.5, 2.0, 7.0]], [[1.0, 1.0, 3.0]]])
    y = torch.sigmoid(z.double())
    eq49 = -(p.double() * t.double() * torch.log(y) + (1 - t.double()) * torch.log(1 - y))
    torch.testing.assert_close(weighted_bce_with_logits(z, t, p).double(), eq49, rtol=1e-5, atol=1e-6)
    plain = F.binary_cross_entropy_with_logits(z, t, reduction="none")
    assert torch.equal(weighted_bce_with_logits(z, t, torch.ones(2, 1, 3)), plain)
    assert torch.equal(per_teacher_loss(z, t, "multilabel", torch.ones(2, 1, 3)), per_teacher_loss(z, t, "multilabel"))
    # a larger weight on a class raises the loss exactly by (p - 1) t softplus(-z) on that class
    w = torch.ones(2, 1, 3)
    w[0, 0, 1] = 3.0
    diff = (per_teacher_loss(z, t, "multilabel", w) - per_teacher_loss(z, t, "multilabel")) * 3
    torch.testing.assert_close(diff[0], (2.0 * t[0, :, 1] * F.softplus(-z[0, :, 1])).sum() / 5)
    assert diff[1] == 0


# ------------------------------------------------------------------------------------------ the adaptive rule
def test_adaptive_weights_follow_the_stated_rule():
    ap = np.array([[0.5, 0.7, 0.3, np.nan], [0.4, 0.4, 0.4, 0.4]])
    w = adaptive_class_weights(ap, max_weight=4.0, temperature=0.1)
    expected = 4.0 ** np.tanh((0.5 - np.array([0.5, 0.7, 0.3])) / 0.1)
    np.testing.assert_allclose(w[0, :3], expected, rtol=1e-12)
    assert w[0, 3] == 1.0  # no AP (no positive validation clip): weight 1
    assert w[0, 1] < w[0, 0] == 1.0 < w[0, 2]  # worse class -> larger weight; the class at the mean -> 1
    np.testing.assert_array_equal(w[1], np.ones(4))  # equal APs -> no weighting
    extreme = adaptive_class_weights(np.array([0.0, 1.0, 1.0, 1.0]), max_weight=4.0, temperature=0.01)
    assert extreme.max() <= 4.0 and extreme.min() >= 0.25 and extreme[0] == pytest.approx(4.0)
    np.testing.assert_array_equal(adaptive_class_weights(ap, max_weight=1.0), np.ones_like(ap))
    with pytest.raises(ValueError, match="max_weight"):
        adaptive_class_weights(ap, max_weight=0.5)
    with pytest.raises(ValueError, match="temperature"):
        adaptive_class_weights(ap, temperature=0.0)


# ------------------------------------------------------------------------------------------ in the loop
def test_constant_unit_weights_equal_the_unweighted_run_exactly():
    X, Y = _data()
    plain = _train(X, Y)
    ones = _train(X, Y, class_weights=np.ones(Y.shape[1]), on_evaluate=lambda e: np.ones(e.class_weights.shape))
    assert plain.history.equals(ones.history)
    for a, b in zip(plain.params, ones.params):
        assert torch.equal(a, b)


def test_hook_sees_each_evaluation_and_its_weights_change_training_per_teacher():
    X, Y = _data()
    k = Y.shape[1]
    events = []

    def hook(event: EvaluationEvent):
        events.append(event)
        w = np.ones((len(event.teachers), k))
        w[0] = 5.0  # only teacher 0 is weighted
        return w

    plain = _train(X, Y)
    weighted = _train(X, Y, on_evaluate=hook)
    assert [e.step for e in events] == [10, 20, 30]
    assert events[0].class_weights is None and events[1].class_weights[0].tolist() == [5.0] * k
    assert events[0].val_probs.shape == (3, 100, k) and events[0].val_truth.shape == (3, 100, k)
    np.testing.assert_array_equal(events[0].val_truth[1], Y[500:600] > 0.5)
    assert set(events[0].scores) == {"validation"} and "probs" not in events[0].scores["validation"]
    # the validation probabilities are the ones the recorded mAP was computed from
    from pate_study.learning.metrics import mean_average_precision

    h = plain.history.query("split == 'validation' and metric == 'mAP' and step == 10").set_index("teacher").value
    assert mean_average_precision(events[0].val_truth[2], events[0].val_probs[2]) == pytest.approx(h[2], abs=1e-12)
    # up to the first evaluation both runs are the same; afterwards teacher 0 differs, teachers 1 and 2 do not
    assert plain.history.query("step == 10").equals(weighted.history.query("step == 10"))
    assert not torch.equal(plain.params[0][0], weighted.params[0][0])
    for a, b in zip(plain.params, weighted.params):
        assert torch.equal(a[1:], b[1:])


def test_adaptive_hook_weights_come_from_validation_ap():
    X, Y = _data(seed=2)
    hook = AdaptiveClassWeights(max_weight=3.0, temperature=0.05)
    seen = []
    res = _train(X, Y, on_evaluate=lambda e: seen.append(e) or hook(e))
    from pate_study.learning.metrics import average_precision_per_class

    ap = average_precision_per_class(seen[0].val_truth[1], seen[0].val_probs[1])
    np.testing.assert_allclose(
        seen[1].class_weights[1], adaptive_class_weights(ap, max_weight=3.0, temperature=0.05), rtol=1e-6
    )
    assert len(hook.trace) == 9 and all(1 / 3 - 1e-9 <= r["min"] <= r["max"] <= 3 + 1e-9 for r in hook.trace)
    assert not np.allclose(seen[1].class_weights, 1.0)  # the weights did change
    assert res.history.query("split == 'validation'").value.notna().all()


def test_bad_class_weights_name_the_parameter():
    X, Y = _data()
    with pytest.raises(ValueError, match="class_weights: expected finite positive"):
        _train(X, Y, class_weights=np.ones(Y.shape[1] + 1))
    with pytest.raises(ValueError, match="class_weights: expected finite positive"):
        _train(X, Y, class_weights=-np.ones(Y.shape[1]))
    with pytest.raises(ValueError, match="on_evaluate's return"):
        _train(X, Y, on_evaluate=lambda e: np.ones(2))
