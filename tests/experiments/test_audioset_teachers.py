"""The Audio Set teacher studies (notebook 04) on tiny synthetic data: training through the one loop,
evaluation cadence, reproducibility, per-class checkpoints, the log-Mel CNN path and bad input."""
import numpy as np
import pytest

from pate_study.data import audioset
from pate_study.experiments.audioset import data as as_data
from pate_study.experiments.audioset import diagnostics, pipeline, tables, teachers, votes
from pate_study.experiments.audioset import teacher_verdicts
from pate_study.learning.partitions import Partitions


@pytest.fixture(scope="module")
def tiny():
    splits = audioset.synthetic(300, 120, n_classes=6, seed=1)
    X, Y = as_data.clip_features(splits["bal_train"]), splits["bal_train"].labels
    Xt, Yt = as_data.clip_features(splits["eval"]), splits["eval"].labels
    split = as_data.pool_split(len(Y), seed=0)
    return X, Y, Xt, Yt, split


SPEC = teachers.TeacherSpec(hidden=(16,), dropout=0.0, steps=12, eval_every=4, batch_size=16)


def test_teachers_train_with_cadence_and_reproduce(tiny):
    X, Y, Xt, Yt, split = tiny
    parts = as_data.teacher_partitions(split, 3, seed=0)
    assert parts.train.shape == (3, len(split.teacher) // 3)
    run = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC, seed=0, curve_clips=50)
    for kind in ("validation", "curve"):
        steps = sorted(run.history.query("split == @kind and metric == 'mAP'").step.unique())
        assert steps == [4, 8, 12]
    assert run.class_ap.shape == (3, 6) and run.probabilities.shape == (3, len(Yt), 6)
    assert np.all((run.map > 0) & (run.map <= 1)) and set(run.best_step) <= {4, 8, 12}
    np.testing.assert_array_equal(run.train_counts, Y[parts.train].sum(1))
    again = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC, seed=0, curve_clips=50)
    np.testing.assert_array_equal(run.class_ap, again.class_ap)
    other = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC, seed=1, curve_clips=50)
    assert not np.array_equal(run.class_ap, other.class_ap)


def test_checkpoints_are_prefixes_of_one_run(tiny):
    X, Y, Xt, Yt, split = tiny
    rows = split.teacher[:60]
    ap = teachers.checkpoint_class_ap(X, Y, rows, Xt, Yt, SPEC, [6, 12], seed=3)
    full = teachers.train_teachers(X, Y, Partitions(rows[None]), np.zeros(0, np.int64), Xt, Yt,
                                SPEC.replace(eval_every=12), seed=3, curve_clips=1, last=True)
    np.testing.assert_allclose(ap[1], full.class_ap[0])
    assert not np.allclose(ap[0], ap[1], equal_nan=True)


def test_logmel_cnn_teachers_run_through_the_loop():
    X, Y = as_data.synthetic_log_mel_clips(40, 3, frames=16, seed=0)
    split = as_data.pool_split(len(Y), seed=0)
    parts = as_data.teacher_partitions(split, 1)
    spec = teachers.TeacherSpec(steps=2, eval_every=1, batch_size=8, mixup_alpha=1.0)
    history, stamp, seconds = teachers.train_logmel_teachers("resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec,
                                                          width_scale=16, head=(8,), seed=0, device="cpu")
    assert stamp == "random init" and seconds > 0
    assert sorted(history.query("split == 'curve'").step.unique()) == [1, 2]


def test_bad_input_and_helpers(tiny):
    *_, split = tiny
    with pytest.raises(ValueError, match="more teachers than the"):
        as_data.teacher_partitions(split, len(split.teacher) + 1)
    with pytest.raises(ValueError, match="logmel_data"):
        as_data.load_logmel_clips("mirror")
    y = as_data.synthetic_siren(duration_s=1.0)
    spectrum = np.abs(np.fft.rfft(y))
    peak_hz = np.argmax(spectrum) * 44_100 / len(y)
    assert 650 <= peak_hz <= 1500 and np.abs(y).max() <= 0.3 + 1e-6
    groups = diagnostics.ranked_classes(np.array([0.9, np.nan, 0.1, 0.5, 0.7, 0.3, 0.2, 0.8]), k=2)
    assert groups["best"].tolist() == [0, 7] and groups["worst"].tolist() == [6, 2]
    assert groups["medium"].tolist() == [4, 3]
    assert diagnostics.occurrence_spread(np.array([0, 1, 2, 10])) == 5.0


def test_table_4_1_on_synthetic_data_is_not_comparable():
    datasets = as_data.load_subsets("synthetic", n_synthetic=(400, 200))
    table = tables.table_4_1(datasets, teacher_counts=(1, 10))
    assert len(table) == 4 and set(table.verdict) == {"not comparable"}
    big = table.query("block == 'big'")
    assert (big.individual_teacher_train_ours.to_numpy() == big.overall_teacher_train_ours.to_numpy() // [1, 10]).all()
    assert (table.overall_teacher_train_ours + table.student_train_size_ours + table.validation_size_ours
            == table.overall_size_ours).all()


# ----------------------------------------------------------------------------- adaptive weights, device, curves
def test_adaptive_class_weights_arm_trains_and_traces_its_weights(tiny):
    X, Y, Xt, Yt, split = tiny
    parts = as_data.teacher_partitions(split, 2, seed=0)
    plain = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC, seed=0, curve_clips=50)
    adaptive = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC.replace(class_weights="adaptive"),
                                    seed=0, curve_clips=50)
    assert plain.weight_trace is None
    trace = adaptive.weight_trace
    assert sorted(trace.step.unique()) == [4, 8, 12] and set(trace.teacher) == {0, 1}
    assert ((trace["min"] >= 0.25 - 1e-9) & (trace["max"] <= 4 + 1e-9)).all() and (trace["max"] > trace["min"]).any()
    # identical up to the first evaluation (plain BCE until then), different afterwards
    first = "step == 4 and split != 'train'"
    assert plain.history.query(first).equals(adaptive.history.query(first))
    assert not np.array_equal(plain.class_ap, adaptive.class_ap)
    # weight 1 everywhere (max_weight = 1) is exactly the plain run
    ones = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC.replace(class_weights="adaptive", weight_max=1.0),
                                seed=0, curve_clips=50)
    np.testing.assert_array_equal(ones.class_ap, plain.class_ap)
    assert ones.history.equals(plain.history)
    with pytest.raises(ValueError, match="class_weights"):
        SPEC.replace(class_weights="sigmoid")


def test_device_none_chooses_and_cpu_gives_the_same_run(tiny):
    X, Y, Xt, Yt, split = tiny
    parts = as_data.teacher_partitions(split, 2, seed=0)
    cpu = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC, seed=0, curve_clips=50, device="cpu")
    chosen = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC, seed=0, curve_clips=50, device=None)
    import torch

    if not torch.cuda.is_available():
        np.testing.assert_array_equal(cpu.class_ap, chosen.class_ap)
    assert np.isfinite(chosen.map).all()


def test_early_stopping_and_curve_stats(tiny):
    X, Y, Xt, Yt, split = tiny
    parts = as_data.teacher_partitions(split, 3, seed=0)
    run = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC.replace(steps=60, eval_every=4, patience=1, lr=0.05),
                               seed=0, curve_clips=50)
    stats = diagnostics.curve_stats(run)
    c = diagnostics.curves(run)
    np.testing.assert_allclose(stats["mean"], c.mean(axis=1))
    np.testing.assert_array_equal(stats["teachers"], c.notna().sum(axis=1))
    assert (stats["min"] <= stats["mean"]).all() and (stats["mean"] <= stats["max"]).all()
    assert stats["teachers"].iloc[-1] < 3  # patience 1 at a large learning rate stops teachers early
    assert diagnostics.curve_wobble(run) == pytest.approx(float(stats["mean"].diff().abs().mean()))
    same = diagnostics.curve_stats(run.history)  # a history frame works too (the log-Mel arms)
    assert same.equals(stats)


def test_logmel_cnn_teachers_are_bit_reproducible():
    X, Y = as_data.synthetic_log_mel_clips(40, 3, frames=16, seed=0)
    split = as_data.pool_split(len(Y), seed=0)
    parts = as_data.teacher_partitions(split, 2)
    spec = teachers.TeacherSpec(steps=3, eval_every=1, batch_size=8, mixup_alpha=1.0, dropout=0.5)
    runs = [teachers.train_logmel_teachers("resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec, width_scale=16,
                                        head=(8,), seed=0, device="cpu")[0] for _ in range(2)]
    assert runs[0].equals(runs[1])
    import torch

    assert not torch.are_deterministic_algorithms_enabled() and not torch.backends.mkldnn.deterministic  # restored


def test_verdict_helpers():
    assert teacher_verdicts.adaptive_weights_verdict(0.20, 0.205).verdict == "inconclusive"  # inside ±0.01, both ways
    assert teacher_verdicts.adaptive_weights_verdict(0.205, 0.20).verdict == "inconclusive"
    assert teacher_verdicts.adaptive_weights_verdict(0.20, 0.15).verdict == "agrees"  # "no positive effect" includes harm
    assert teacher_verdicts.adaptive_weights_verdict(0.20, 0.25).verdict == "differs"
    assert teacher_verdicts.siren_verdict("synthetic siren ...", (1001, 64)).verdict == "not comparable"
    assert teacher_verdicts.siren_verdict("real: Audio Set clip x", (1001, 64)).verdict == "not comparable"
    assert teacher_verdicts.class_curve_verdict(0.8, 0.3, "best").verdict == "not comparable"
    final = {"resnet18": {"mAP": 0.3, "auc": 0.9}, "vgg11": {"mAP": 0.35, "auc": 0.8}}
    assert teacher_verdicts.architecture_verdict(final).verdict == "agrees"
    final["vgg11"]["auc"] = 0.95
    assert teacher_verdicts.architecture_verdict(final).verdict == "differs"
    assert teacher_verdicts.thesis_baseline_maps() == {"small": 0.486, "big": 0.268}
    assert diagnostics.min_clips_per_class(np.array([[1, 0], [1, 1], [0, 1], [1, 1]])) == 3


def test_votes_are_cached_and_keyed_by_the_resolved_device(tiny, tmp_path, monkeypatch):
    """A CPU run's cached votes are not reused by a CUDA-requested run in the same folder, and a shard's key differs
    by device (the one cache, :mod:`pate_study.core.cache`)."""
    import torch

    X, Y, Xt, Yt, split = tiny
    inputs = as_data.EnsembleInputs(X, Y, as_data.teacher_partitions(split, 2, seed=0), split.val, Xt, Yt, 0, "t",
                                    split.teacher)
    spec = SPEC.replace(steps=4, eval_every=2)
    kw = dict(curve_clips=10, cache_dir=tmp_path)
    monkeypatch.setenv("PATE_STUDY_DEVICE", "cpu")
    first = pipeline.cached_ensemble_votes(inputs, spec, **kw)
    again = pipeline.cached_ensemble_votes(inputs, spec, **kw)
    np.testing.assert_array_equal(first.probabilities, again.probabilities)
    assert first.probabilities.shape == (2, len(Yt), Y.shape[1])
    assert len(list(tmp_path.glob(f"{votes.VOTES_KIND}-*.pt"))) == 1
    if not torch.cuda.is_available():  # a CUDA-requested run misses the CPU entry (and says CUDA is missing)
        monkeypatch.setenv("PATE_STUDY_DEVICE", "cuda")
        with pytest.raises(ValueError, match="CUDA"):
            pipeline.cached_ensemble_votes(inputs, spec, **kw)
    key = {d: votes.votes_key(X, Y, inputs.partitions, split.val, Xt, Yt, spec, seed=0, curve_clips=10, device=d)
           for d in ("cpu", "cuda") if d == "cpu" or torch.cuda.is_available()}
    monkeypatch.setenv("PATE_STUDY_DEVICE", "cpu")
    assert key["cpu"] != votes.votes_key(X, Y, inputs.partitions, split.val, Xt, Yt, spec, seed=0, curve_clips=10,
                                         backend="ray")  # the cluster's choice is its own device label
    keys = {device: [s.key for s in pipeline.plan_shards(inputs.partitions, 1, 0, "data", device, "t")[1]]
            for device in ("cpu", "cuda")}
    assert not set(keys["cpu"]) & set(keys["cuda"]) and len(set(keys["cpu"])) == 2
