"""The Audio Set teacher studies (notebook 04) on tiny synthetic data: training through the one loop,
evaluation cadence, reproducibility, per-class checkpoints, the log-Mel CNN path and bad input."""

import numpy as np
import pandas as pd
import pytest

from pate_study.data import audioset
from pate_study.experiments.audioset import data as as_data
from pate_study.experiments.audioset import diagnostics, pipeline, shards, teachers, thesis_tables, votes
from pate_study.experiments.audioset.teacher_claims import ablations as teacher_ablations
from pate_study.experiments.audioset.teacher_claims import classes as teacher_classes
from pate_study.experiments.audioset.teacher_claims import curves as teacher_curves
from pate_study.experiments.audioset.teacher_claims import models
from pate_study.experiments.audioset.teacher_claims import sampler as teacher_sampler
from pate_study.experiments.audioset.teacher_claims import seeds as teacher_seeds
from pate_study.learning import metrics
from pate_study.learning.partitions import Partitions
from pate_study.reporting import uncertainty as unc


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


@pytest.mark.parametrize("spec", [SPEC, SPEC.replace(class_weights="adaptive", mixup_alpha=0.4)])
def test_checkpoints_from_one_run_equal_one_run_per_checkpoint(tiny, spec):
    """One run scored at its evaluations gives, bit for bit, what a separate run stopped at each checkpoint gives
    (checkpoints in any order, not multiples of one another; with adaptive class weights the probe passes the
    recipe's own hook on, which without a validation split leaves the weights alone, in both)."""
    X, Y, Xt, Yt, split = tiny
    rows = split.teacher[:60]
    checkpoints = [12, 6, 9]
    ap = teachers.checkpoint_class_ap(X, Y, rows, Xt, Yt, spec, checkpoints, seed=3)
    for got, s in zip(ap, checkpoints):
        alone = teachers.train_teachers(
            X,
            Y,
            Partitions(rows[None]),
            np.zeros(0, np.int64),
            Xt,
            Yt,
            spec.replace(steps=s, eval_every=s),
            seed=3,
            curve_clips=1,
            last=True,
        )
        np.testing.assert_array_equal(got, alone.class_ap[0])
    assert not np.allclose(ap[0], ap[1], equal_nan=True)
    with pytest.raises(ValueError, match="checkpoints"):
        teachers.checkpoint_class_ap(X, Y, rows, Xt, Yt, spec, [], seed=3)


def test_logmel_cnn_teachers_run_through_the_loop():
    X, Y = as_data.synthetic_log_mel_clips(40, 3, frames=16, seed=0)
    split = as_data.pool_split(len(Y), seed=0)
    parts = as_data.teacher_partitions(split, 1)
    spec = teachers.TeacherSpec(steps=2, eval_every=1, batch_size=8, mixup_alpha=1.0)
    history, stamp, seconds = teachers.train_logmel_teachers(
        "resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec, width_scale=16, head=(8,), seed=0, device="cpu"
    )
    assert stamp == "random init" and seconds > 0
    assert sorted(history.query("split == 'curve'").step.unique()) == [1, 2]


def test_bad_input_and_helpers(tiny):
    *_, split = tiny
    with pytest.raises(ValueError, match="more teachers than the"):
        as_data.teacher_partitions(split, len(split.teacher) + 1)
    with pytest.raises(ValueError, match=r'logmel\["data"\]'):
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
    table = thesis_tables.table_4_1(datasets, teacher_counts=(1, 10))
    assert len(table) == 4 and set(table.verdict) == {"not comparable"}
    big = table.query("block == 'big'")
    assert (big.individual_teacher_train_ours.to_numpy() == big.overall_teacher_train_ours.to_numpy() // [1, 10]).all()
    assert (
        table.overall_teacher_train_ours + table.student_train_size_ours + table.validation_size_ours
        == table.overall_size_ours
    ).all()


# ----------------------------------------------------------------------------- adaptive weights, device, curves
def test_adaptive_class_weights_arm_trains_and_traces_its_weights(tiny):
    X, Y, Xt, Yt, split = tiny
    parts = as_data.teacher_partitions(split, 2, seed=0)
    plain = teachers.train_teachers(X, Y, parts, split.val, Xt, Yt, SPEC, seed=0, curve_clips=50)
    adaptive = teachers.train_teachers(
        X, Y, parts, split.val, Xt, Yt, SPEC.replace(class_weights="adaptive"), seed=0, curve_clips=50
    )
    assert plain.weight_trace is None
    trace = adaptive.weight_trace
    assert sorted(trace.step.unique()) == [4, 8, 12] and set(trace.teacher) == {0, 1}
    assert ((trace["min"] >= 0.25 - 1e-9) & (trace["max"] <= 4 + 1e-9)).all() and (trace["max"] > trace["min"]).any()
    # identical up to the first evaluation (plain BCE until then), different afterwards
    first = "step == 4 and split != 'train'"
    assert plain.history.query(first).equals(adaptive.history.query(first))
    assert not np.array_equal(plain.class_ap, adaptive.class_ap)
    # weight 1 everywhere (max_weight = 1) is exactly the plain run
    ones = teachers.train_teachers(
        X, Y, parts, split.val, Xt, Yt, SPEC.replace(class_weights="adaptive", weight_max=1.0), seed=0, curve_clips=50
    )
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
    run = teachers.train_teachers(
        X,
        Y,
        parts,
        split.val,
        Xt,
        Yt,
        SPEC.replace(steps=60, eval_every=4, patience=1, lr=0.05),
        seed=0,
        curve_clips=50,
    )
    stats = diagnostics.curve_stats(run)
    c = diagnostics.curves(run)
    np.testing.assert_allclose(stats["mean"], c.mean(axis=1))
    np.testing.assert_array_equal(stats["teachers"], c.notna().sum(axis=1))
    assert (stats["min"] <= stats["mean"]).all() and (stats["mean"] <= stats["max"]).all()
    assert stats["teachers"].iloc[-1] < 3  # patience 1 at a large learning rate stops teachers early
    assert diagnostics.curve_wobble(run) == pytest.approx(float(stats["mean"].diff().abs().mean()))
    same = diagnostics.curve_stats(run.history)  # a history frame works too (the log-Mel arms)
    assert same.equals(stats)


@pytest.mark.slow
def test_logmel_cnn_teachers_are_bit_reproducible():
    X, Y = as_data.synthetic_log_mel_clips(40, 3, frames=16, seed=0)
    split = as_data.pool_split(len(Y), seed=0)
    parts = as_data.teacher_partitions(split, 2)
    spec = teachers.TeacherSpec(steps=3, eval_every=1, batch_size=8, mixup_alpha=1.0, dropout=0.5)
    runs = [
        teachers.train_logmel_teachers(
            "resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec, width_scale=16, head=(8,), seed=0, device="cpu"
        )[0]
        for _ in range(2)
    ]
    assert runs[0].equals(runs[1])
    import torch

    assert not torch.are_deterministic_algorithms_enabled() and not torch.backends.mkldnn.deterministic  # restored


def test_verdict_helpers():
    assert models.siren_verdict("synthetic siren ...", (1001, 64)).verdict == "not comparable"
    assert models.siren_verdict("real: Audio Set clip x", (1001, 64)).verdict == "not comparable"
    assert teacher_classes.class_curve_verdict(0.8, 0.3, "best").verdict == "not comparable"

    def cnn(values: dict[str, list[tuple[float, float]]]) -> dict:
        """log-Mel arms whose teachers end at (mAP, AUC) on the curve sample."""
        out = {}
        for arch, finals in values.items():
            rows = [(4, t, "curve", m, v) for t, f in enumerate(finals) for m, v in zip(("mAP", "auc"), f)]
            out[arch, "random init"] = (pd.DataFrame(rows, columns=["step", "teacher", "split", "metric", "value"]),)
        return out

    resnet = {"resnet18": [(0.30, 0.90), (0.31, 0.91), (0.29, 0.905)]}
    vgg_better_map = {"vgg11": [(0.35, 0.80), (0.36, 0.81), (0.355, 0.805)]}
    logmel = cnn({**resnet, **vgg_better_map})
    assert models.architecture_verdict(logmel, ["resnet18", "vgg11"]).verdict == "agrees"
    logmel = cnn({**resnet, "vgg11": [(0.35, 0.95), (0.36, 0.96), (0.355, 0.955)]})  # VGG's AUC the better
    assert models.architecture_verdict(logmel, ["resnet18", "vgg11"]).verdict == "differs"
    logmel = cnn({"resnet18": [(0.30, 0.90)], "vgg11": [(0.35, 0.80)]})  # one teacher each: no spread measured
    assert models.architecture_verdict(logmel, ["resnet18", "vgg11"]).verdict == "inconclusive"
    assert models.thesis_baseline_maps() == {"small": 0.486, "big": 0.268}
    assert diagnostics.min_clips_per_class(np.array([[1, 0], [1, 1], [0, 1], [1, 1]])) == 3


def test_votes_are_cached_and_keyed_by_the_resolved_device(tiny, tmp_path, monkeypatch):
    """A CPU run's cached votes are not reused by a CUDA-requested run in the same folder, and a shard's key differs
    by device (the one cache, :mod:`pate_study.core.cache`)."""
    import torch

    X, Y, Xt, Yt, split = tiny
    inputs = as_data.EnsembleInputs(
        X, Y, as_data.teacher_partitions(split, 2, seed=0), split.val, Xt, Yt, 0, "t", split.teacher
    )
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
    key = {
        d: votes.votes_key(X, Y, inputs.partitions, split.val, Xt, Yt, spec, seed=0, curve_clips=10, device=d)
        for d in ("cpu", "cuda")
        if d == "cpu" or torch.cuda.is_available()
    }
    monkeypatch.setenv("PATE_STUDY_DEVICE", "cpu")
    assert key["cpu"] != votes.votes_key(
        X, Y, inputs.partitions, split.val, Xt, Yt, spec, seed=0, curve_clips=10, backend="ray"
    )  # the cluster's choice is its own device label
    keys = {
        device: [s.key for s in pipeline.plan_shards(inputs.partitions, 1, 0, "data", device, "t")[1]]
        for device in ("cpu", "cuda")
    }
    assert not set(keys["cpu"]) & set(keys["cuda"]) and len(set(keys["cpu"])) == 2


# ----------------------------------------------------------------------------- ablations: seeds, tolerance, arms
def fake_arm(final_by_seed, first_by_seed=None, *, n=2, best_step_by_seed=None, spec=SPEC):
    """A TeacherRun of ``len(final_by_seed)`` seed replicates of ``n`` teachers each, with the given per-replicate
    final mAP, first-evaluation curve mAP (step 4) and selected step."""
    seeds = len(final_by_seed)
    rep = np.repeat(np.arange(seeds), n)
    final = np.repeat(np.asarray(final_by_seed, float), n)
    first = np.repeat(np.asarray(final_by_seed if first_by_seed is None else first_by_seed, float), n)
    best = np.repeat(np.asarray(best_step_by_seed or [12] * seeds, float), n)
    rows = [(4, t, "curve", "mAP", first[t]) for t in range(seeds * n)]
    rows += [(12, t, "curve", "mAP", final[t]) for t in range(seeds * n)]
    history = pd.DataFrame(rows, columns=["step", "teacher", "split", "metric", "value"])
    t = seeds * n
    return teachers.TeacherRun(
        "arm",
        t,
        spec,
        history,
        best,
        final,
        np.full(t, 0.8),
        np.zeros((t, 3)),
        np.zeros((t, 1, 3), np.float32),
        np.zeros((t, 3)),
        0.0,
        None,
        rep,
    )


def test_seed_comparison_tolerance_from_the_spread_the_same_both_ways():
    a = np.array([0.20, 0.21, 0.22])
    c = teacher_seeds.seed_comparison(a, a - 0.02)  # the same +0.02 on every seed: a zero-width interval, no floor
    assert c.margin == pytest.approx(0.02) and c.tolerance == pytest.approx(0.0, abs=1e-12)
    assert c.claim("a > b", "x").verdict == "agrees"
    assert teacher_seeds.seed_comparison(a, a - 0.0001).claim("a > b", "x").verdict == "agrees"
    assert "over 3 replicates of teacher training seed" in c.claim("a > b", "x").evidence
    assert teacher_seeds.seed_comparison(a - 0.02, a).claim("a > b", "x").verdict == "differs"
    # mean +0.01 but the seeds disagree (+0.03, -0.01, +0.01): half-width t(0.975, 2)·0.02/√3 ≈ 0.0497
    b = a - np.array([0.03, -0.01, 0.01])
    c = teacher_seeds.seed_comparison(a, b)
    assert c.tolerance == pytest.approx(4.302653 * 0.02 / np.sqrt(3), rel=1e-5)
    assert c.claim("a > b", "x").verdict == "inconclusive"
    assert teacher_seeds.seed_comparison(b, a).claim("a > b", "x").verdict == "inconclusive"  # both ways
    assert teacher_seeds.seed_comparison(b, a).tolerance == c.tolerance
    # just inside / just outside the measured tolerance, both directions
    spread = np.array([-0.01, 0.0, 0.01])  # sd 0.01: tolerance t(0.975, 2)·0.01/√3 ≈ 0.0248 for any mean
    tol = teacher_seeds.seed_comparison(a, a - spread).tolerance
    for margin, verdict in (
        (tol + 1e-4, "agrees"),
        (tol - 1e-4, "inconclusive"),
        (-tol + 1e-4, "inconclusive"),
        (-tol - 1e-4, "differs"),
    ):  # the paired t-interval lies wholly above / across / below 0
        assert teacher_seeds.seed_comparison(a, a - spread - margin).claim("r", "x").verdict == verdict
    with pytest.raises(ValueError, match=r'ablation\["seeds"\]'):
        teacher_seeds.seed_comparison([0.2], [0.1])


def test_ablation_differences_inside_the_seed_spread_are_inconclusive():
    # mixup ahead by 0.008 on average,
    # but one seed of three has it behind: inside the seed spread
    ablation = {
        "recipe": fake_arm([0.20, 0.19, 0.21], [0.05, 0.05, 0.05]),
        "no mixup": fake_arm([0.18, 0.20, 0.196], [0.03, 0.031, 0.029]),
    }
    rec = teacher_ablations.mixup_record(ablation)
    assert rec["final_margin"] == pytest.approx(0.008) and rec["final_tolerance"] > 0.008
    assert rec["verdict_slight_improvement"] == "inconclusive"
    assert rec["verdict_learns_faster_early"] == "agrees" and rec["verdict"] == "inconclusive"
    assert rec["seeds"] == 3 and rec["teachers_per_seed"] == 2
    # learning slower early with mixup contradicts "helps to learn faster" whatever the final mAP says
    ablation["no mixup"] = fake_arm([0.18, 0.20, 0.196], [0.06, 0.059, 0.061])
    rec = teacher_ablations.mixup_record(ablation)
    assert rec["verdict_learns_faster_early"] == "differs" and rec["verdict"] == "differs"
    assert rec["first_eval_step"] == 4 and rec["first_eval_map_no_mixup"] == pytest.approx(0.06)


def test_batch_size_is_compared_at_equal_steps_and_at_equal_epochs():
    arms = teachers.ablation_settings(SPEC, [8, 16], [SPEC.lr], [SPEC.hidden])
    assert arms["batch 8"] == {"batch_size": 8}
    assert arms["batch 8, equal epochs"] == {"batch_size": 8, "steps": 24, "eval_every": 8}  # SPEC: 12 steps of 16
    assert "batch 16" not in arms and "batch 16, equal epochs" not in arms  # the recipe's own batch
    # batch 16 (the recipe here) ahead at equal steps, behind once batch 8 sees as many clips
    ablation = {
        "recipe": fake_arm([0.20, 0.21, 0.22]),
        "batch 8": fake_arm([0.15, 0.16, 0.17]),
        "batch 8, equal epochs": fake_arm([0.23, 0.24, 0.25]),
    }
    rec = teacher_ablations.batch_size_record(
        ablation, {8: "batch 8", 16: "recipe"}, {8: "batch 8, equal epochs", 16: "recipe"}, recipe_batch=16
    )
    assert rec["verdict_equal_steps"] == "agrees" and rec["verdict_equal_epochs"] == "differs"
    assert rec["verdict"] == "differs" and "equal epochs" in rec["verdict_rule"]
    assert rec["equal_steps_margin"] == pytest.approx(0.05) and rec["equal_epochs_margin"] == pytest.approx(-0.03)
    assert rec["map_batch_8_equal_epochs"] == pytest.approx(0.24) and rec["best_batch_equal_epochs"] == 8


def test_learning_rate_claims_lowest_best_and_larger_converge_earlier():
    ablation = {
        "lr 0.0001": fake_arm([0.17, 0.18, 0.175], best_step_by_seed=[12, 12, 12]),
        "recipe": fake_arm([0.18, 0.19, 0.185], best_step_by_seed=[4, 8, 4]),
        "lr 0.001": fake_arm([0.16, 0.17, 0.165], best_step_by_seed=[8, 8, 8]),
    }
    rec = teacher_ablations.learning_rate_record(ablation, {1e-4: "lr 0.0001", 3e-3: "recipe", 1e-3: "lr 0.001"}, 12)
    assert rec["compared_lr"] == 3e-3 and rec["best_lr"] == 3e-3
    assert rec["verdict_lowest_rate_best"] == "differs"
    assert rec["best_step_margin"] == pytest.approx(12 - 16 / 3) and rec["best_step_tolerance"] >= SPEC.eval_every
    assert rec["verdict"] == "differs"


def test_learning_rate_at_the_thesis_length_decides_the_lowest_rate_claim():
    short = {
        "lr 0.0001": fake_arm([0.03, 0.03, 0.031], best_step_by_seed=[8, 8, 8]),
        "recipe": fake_arm([0.18, 0.19, 0.185], best_step_by_seed=[4, 8, 4]),
    }
    long_arms = {1e-4: "lr 0.0001, thesis length", 3e-3: "lr 0.003, thesis length"}
    # the slow rate catches up when trained for the thesis's length: the recipe-schedule gap no longer decides
    close = {
        **short,
        "lr 0.0001, thesis length": fake_arm([0.171, 0.172, 0.170]),
        "lr 0.003, thesis length": fake_arm([0.177, 0.173, 0.178]),
    }
    rec = teacher_ablations.learning_rate_record(close, {1e-4: "lr 0.0001", 3e-3: "recipe"}, 12, long_arms)
    assert rec["verdict_lowest_rate_best_recipe_schedule"] == "differs"
    # the end slope of the lowest rate (curve mAP from step 4 to 12, per 1,000 steps) and whether it was cut off
    assert rec["lowest_rate_end_slope_per_1000_steps"] == pytest.approx(0.0)
    assert rec["lowest_rate_cut_off"] is True  # every lr 1e-4 teacher selects its last step
    assert rec["verdict_lowest_rate_best"] == "inconclusive"
    # what the cut-off reason prints keeps its rows: the end slope, and the estimate of a claim that cut_off rebuilt
    # (a 'differs' of a run still improving: inconclusive, without steps)
    printed = dict((k, e) for k, e, _ in rec["printed_replicates"].estimates)
    assert set(printed) == {"lowest rate end slope per 1000 steps"}
    behind = {**close, "lr 0.0001, thesis length": fake_arm([0.160, 0.161, 0.162])}
    rec_behind = teacher_ablations.learning_rate_record(behind, {1e-4: "lr 0.0001", 3e-3: "recipe"}, 12, long_arms)
    assert rec_behind["verdict_lowest_rate_best"] == "inconclusive" and "cut off" in rec_behind["verdict_reason"]
    printed = dict((k, e) for k, e, _ in rec_behind["printed_replicates"].estimates)
    assert set(printed) == {"lowest rate end slope per 1000 steps"}
    rows = dict((k, e) for k, e, _ in rec_behind["verdict_replicates"].estimates)
    cut = [e for k, e in rows.items() if k.startswith("lowest rate best/")]
    assert len(cut) == 1 and cut[0].render().split(" over ")[0] in rec_behind["verdict_reason"]
    assert rec["map_lr_thesis_length"] == {"0.0001": pytest.approx(0.171), "0.003": pytest.approx(0.176)}
    # at the thesis's length the slow rate selects its last step (12), the recipe's rate earlier: converges earlier
    close["lr 0.003, thesis length"] = fake_arm([0.177, 0.173, 0.178], best_step_by_seed=[4, 4, 8])
    rec = teacher_ablations.learning_rate_record(close, {1e-4: "lr 0.0001", 3e-3: "recipe"}, 12, long_arms)
    assert rec["verdict_larger_rates_converge_earlier"] == "agrees"
    assert rec["thesis_length_best_step_margin"] == pytest.approx(12 - 16 / 3)
    ahead = {**close, "lr 0.0001, thesis length": fake_arm([0.20, 0.21, 0.205])}
    rec = teacher_ablations.learning_rate_record(ahead, {1e-4: "lr 0.0001", 3e-3: "recipe"}, 12, long_arms)
    assert rec["verdict_lowest_rate_best"] == "agrees"
    # the arms: the lowest rate and the recipe's at min(10,000, 10x the recipe's steps), no early stopping
    arms = teachers.ablation_settings(SPEC, [SPEC.batch_size], [1e-4, SPEC.lr], [list(SPEC.hidden)])
    length = teachers.thesis_length(SPEC)
    assert length["steps"] == min(teachers.THESIS_ITERATIONS, 10 * SPEC.steps) and length["patience"] is None
    assert arms["lr 0.0001, thesis length"] == {"lr": 1e-4, **length}
    assert arms[f"lr {SPEC.lr:g}, thesis length"]["lr"] == SPEC.lr


def test_ablation_arms_replicate_the_partitions_and_the_training_seeds():
    """Replicate r of every arm is the first teachers of replicate ensemble r (its own pool split, partitions and
    training seeds), the same in every arm: arms compare replicate by replicate, over partition AND seed."""
    ds = audioset.load("synthetic", subset="big", seed=0, n_synthetic=(400, 160))
    stack = pipeline.replicate_stack(ds, "big", 3, (4, 5, 6))
    arms = {"recipe": {}, "no mixup": {"mixup_alpha": None}}
    out = pipeline.ablation_arms(stack, SPEC, arms, n_teachers=2, curve_clips=40)
    for run in out.values():
        assert run.n_teachers == 6 and list(run.replicate) == [0, 0, 1, 1, 2, 2]
        assert not np.allclose(run.map[:2], run.map[2:4])
    parts = [m.partitions.train[:2] for m in stack.members]
    np.testing.assert_array_equal(out["recipe"].train_counts[4:], ds.splits["bal_train"].labels[parts[2]].sum(1))
    assert not np.array_equal(parts[0], parts[1])  # the partitions are replicated, not only the seeds
    assert teacher_seeds.replicate_values(out["recipe"]).shape == (3,)
    with pytest.raises(ValueError, match="n_teachers"):
        pipeline.ablation_arms(stack, SPEC, arms, n_teachers=4)


# ----------------------------------------------------------------------------- Figs A.2/A.3: curves over evaluations
@pytest.mark.slow
def test_class_curves_cover_every_evaluation_and_meet_the_selected_checkpoint(tiny):
    X, Y, Xt, Yt, split = tiny
    rows = split.teacher[:80]
    spec = SPEC.replace(steps=24, patience=2)
    run = teachers.train_teachers(X, Y, Partitions(rows[None]), split.val, Xt, Yt, spec, seed=2, curve_clips=40)
    steps = teachers.evaluation_steps(run.history)
    assert steps == sorted(run.history.query("split == 'curve'").step.unique().tolist()) and len(steps) >= 3
    ap = teachers.checkpoint_class_ap(X, Y, rows, Xt, Yt, spec, steps, seed=2)
    assert ap.shape == (len(steps), Y.shape[1])
    inputs = as_data.EnsembleInputs(
        X=X,
        Y=Y,
        partitions=Partitions(rows[None]),
        val=split.val,
        X_test=Xt,
        Y_test=Yt,
        seed=2,
        name="one",
        teacher_pool=rows,
    )
    got_steps, got = teachers.class_ap_at_evaluations(inputs, run, spec)
    assert got_steps == steps
    np.testing.assert_array_equal(got, ap)
    # the curve at the selected (best validation) step IS the selected checkpoint (prefix runs of the same teacher)
    np.testing.assert_allclose(ap[steps.index(int(run.best_step[0]))], run.class_ap[0])
    # headline values come from the selected checkpoint, not from the last evaluation
    curves_ = {"baseline": (steps + [steps[-1] + 4], np.vstack([ap, ap[-1:] * 0.5])), "big 10": (steps, ap * 0.8)}
    selected = {"baseline": (run.class_ap[0], run.best_step[0]), "big 10": (run.class_ap[0] * 0.8, run.best_step[0])}
    groups = {k: diagnostics.ranked_classes(v[0], k=2) for k, v in selected.items()}
    a2, a3 = teacher_classes.class_curve_records(curves_, selected, groups, [f"c{i}" for i in range(6)])
    assert a2["best_classes_ap_approx"] == pytest.approx(run.class_ap[0][groups["baseline"]["best"]].mean())
    assert a2["curve_at_selected_max_abs_diff"] == pytest.approx(0, abs=1e-12)
    assert a2["evaluations"] == len(steps) + 1 and len(a2["best_classes_ap_curve"]) == len(steps) + 1
    assert a3["best_classes_ap_decrease_vs_baseline_pct"] == pytest.approx(20)
    # without the test clips nothing is resampled: one teacher on one test set decides nothing
    assert a3["verdict"] == a2["verdict"] == "inconclusive" and "not replicated" in a3["verdict_reason"]


@pytest.mark.slow
def test_class_ap_claims_need_the_teachers_replicated_and_read_a_paired_bootstrap():
    """Figs A.2 / A.3 over replicate models (each its own teacher 0) and a paired bootstrap of the test clips: decided
    either way over three replicates; one model per set leaves its training seed unreplicated, which the claims
    name as behind their number, so the same scores cannot decide (inconclusive, the seed named)."""
    rng = np.random.default_rng(0)
    y = rng.random((400, 6)) < 0.3

    def models(noise):  # three replicate models per set: [G, n, C]
        return np.stack([y + rng.normal(0, noise, y.shape) for _ in range(3)])

    names = [f"c{i}" for i in range(6)]

    def records(test):
        selected = {
            k: (np.stack([metrics.average_precision_per_class(v[0], p) for p in v[1]]), 12) for k, v in test.items()
        }
        groups = {k: diagnostics.ranked_classes(v[0][0], k=2) for k, v in selected.items()}
        curves_ = {k: ([12], v[0][:1]) for k, v in selected.items()}
        return teacher_classes.class_curve_records(curves_, selected, groups, names, test, n_boot=50)

    test = {"baseline": (y, models(0.3)), "big 10": (y, models(1.5))}
    worst, drop = teacher_classes.class_ap_estimates(
        {k: (np.stack([metrics.average_precision_per_class(y, p) for p in v[1]]), 12) for k, v in test.items()},
        None,
        test,
        n_boot=50,
        seed=1,
    )
    assert drop.method == "t-interval + percentile bootstrap" and drop.n_replicates == 3 and drop.low > 0
    assert unc.TEACHER_SEED in drop.sources and not drop.unreplicated
    a2, a3 = records(test)
    assert a3["verdict"] == "agrees" and a2["verdict"] == "agrees"  # sharp scores: every class's AP far above 0.1
    swapped = {"baseline": test["big 10"], "big 10": test["baseline"]}
    assert records(swapped)[1]["verdict"] == "differs"  # the drop wholly negative
    one = {k: (v[0], v[1][:1]) for k, v in test.items()}  # one model per set: the seed is not replicated
    a2, a3 = records(one)
    assert a3["verdict"] == a2["verdict"] == "inconclusive"
    assert "not replicated, so undecided: teacher training seed and partition" in a3["verdict_reason"]


def test_cnn_speed_options_are_checked_and_stamped():
    """Notebook 04's ``logmel_run["speed"]``: unknown keys and bad values name themselves; options that change the
    numbers are stamped, none gives the stamp every committed figure carries."""
    assert teachers.cnn_speed_options(None) == {} and teachers.cnn_speed_options({}) == {}
    with pytest.raises(ValueError, match=r'logmel_run\["speed"\]: unknown option\(s\) \[\'channels_last\'\]'):
        teachers.cnn_speed_options({"channels_last": True})
    with pytest.raises(ValueError, match="memory_format='nhwc'"):
        teachers.cnn_speed_options({"memory_format": "nhwc"})
    with pytest.raises(ValueError, match="autocast_dtype='float16'"):
        teachers.cnn_speed_options({"autocast_dtype": "float16"})
    with pytest.raises(ValueError, match="compiled='yes'"):
        teachers.cnn_speed_options({"compiled": "yes"})
    assert teachers.speed_stamp({"memory_format": "contiguous", "compiled": False}) == ""
    assert (
        teachers.speed_stamp({"memory_format": "channels_last", "autocast_dtype": "bfloat16", "compiled": True})
        == "; speed: memory_format channels_last, autocast_dtype bfloat16, compiled True"
    )
    assert (
        teachers.logmel_stamp("synthetic clips", 16, [64], 30, 2, {})
        == "synthetic clips; width / 16, head (64,), 30 steps, 2 teachers"
    )
    assert teachers.logmel_stamp("s", 1, None, 3, 1, {"autocast_dtype": "bfloat16"}).endswith(
        "head None, 3 steps, 1 teachers; speed: autocast_dtype bfloat16"
    )


@pytest.mark.slow
@pytest.mark.usefixtures("two_torch_threads")  # channels-last training is refused on one CPU thread
@pytest.mark.parametrize("teachers_per_task", [None, 1])  # in this process; in shards (one task per teacher)
def test_cnn_speed_options_reach_the_teachers_and_key_the_shards(teachers_per_task, tmp_path, monkeypatch):
    """``speed`` reaches :func:`train_logmel_teachers` in this process and through the shards, and keys the shards'
    cache: a run with channels_last is not served the contiguous run's cached shards."""
    seen = []

    def spy(*args, **kwargs):
        seen.append({k: kwargs[k] for k in teachers.CNN_SPEED_OPTIONS if k in kwargs})
        return teachers.train_logmel_teachers(*args, **kwargs)

    monkeypatch.setattr(pipeline, "train_logmel_teachers", spy)
    monkeypatch.setattr(shards, "train_logmel_teachers", spy)
    X, Y = as_data.synthetic_log_mel_clips(40, 3, frames=16, seed=0)
    split = as_data.pool_split(len(Y), seed=0)
    parts = as_data.teacher_partitions(split, 2)
    spec = teachers.TeacherSpec(steps=2, eval_every=1, batch_size=8, dropout=0.0)
    kw = dict(width_scale=16, head=(8,), seed=0, device="cpu", teachers_per_task=teachers_per_task, cache_dir=tmp_path)
    plain = pipeline.train_logmel_ensemble("resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec, **kw)
    fast = pipeline.train_logmel_ensemble(
        "resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec, **kw, speed={"memory_format": "channels_last"}
    )
    per_call = 1 if teachers_per_task is None else 2  # shards of one teacher: one call each; a cached shard: none
    assert seen == [{}] * per_call + [{"memory_format": "channels_last"}] * per_call
    columns = ["step", "teacher", "split", "metric"]  # the same evaluations (values move: convolutions in NHWC
    pd.testing.assert_frame_equal(plain[0][columns], fast[0][columns])  # sum in another order, within 2 steps)
    with pytest.raises(ValueError, match=r'logmel_run\["speed"\]'):
        pipeline.train_logmel_ensemble(
            "resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec, **kw, speed={"bf16": True}
        )


def test_cnn_teachers_train_with_the_embedding_teachers_settings(monkeypatch):
    """The log-Mel CNN teachers take the recipe's early stopping and adaptive class weights as the embedding teachers
    do (:func:`teachers.teacher_config`), instead of dropping them."""
    calls = []

    def spy(*args, **kwargs):
        calls.append((args[5], kwargs.get("on_evaluate")))
        return train_stacked(*args, **kwargs)

    train_stacked = teachers.train_stacked
    monkeypatch.setattr(teachers, "train_stacked", spy)
    X, Y = as_data.synthetic_log_mel_clips(40, 3, frames=16, seed=0)
    split = as_data.pool_split(len(Y), seed=0)
    parts = as_data.teacher_partitions(split, 1)
    spec = teachers.TeacherSpec(steps=2, eval_every=1, batch_size=8, patience=4, class_weights="adaptive")
    teachers.train_logmel_teachers(
        "resnet18", X, Y, parts, split.val, X[:10], Y[:10], spec, width_scale=16, head=(8,), seed=0, device="cpu"
    )
    ((config, hook),) = calls
    assert config == teachers.teacher_config(spec) and config.step_patience == 4
    assert isinstance(hook, teachers.AdaptiveClassWeights) and len(hook.trace) == 2  # one entry per evaluation


def test_sampler_claim_reads_the_spread_over_sampler_seeds():
    occ = pd.DataFrame(
        {"class": ["a", "b", "c"], "balanced": [10, 12, 14], "random": [5, 12, 20], "in_partition": [1, 2, 3]}
    )
    one = teacher_sampler.sampler_record(occ, 10, 4)
    assert one["verdict"] == "inconclusive"  # one sampler seed: no spread measured
    tighter = pd.DataFrame(
        {
            "seed": [0, 1, 2],
            "balanced": [1.2, 1.25, 1.22],
            "random": [1.6, 1.65, 1.62],
            "balanced_log_sd": [0.1] * 3,
            "random_log_sd": [0.2] * 3,
        }
    )
    assert teacher_sampler.sampler_record(occ, 10, 4, tighter)["verdict"] == "agrees"
    looser = tighter.assign(balanced=[1.7, 1.72, 1.71])
    rec = teacher_sampler.sampler_record(occ, 10, 4, looser)
    assert rec["verdict"] == "differs" and "over 3 replicates of sampler seed" in rec["verdict_estimate"]
    ((key, log_sd, _),) = rec["printed_replicates"].estimates  # the sd ratio the reason prints, with its rows
    assert log_sd.render(".3f") in rec["verdict_reason"] and log_sd.value == pytest.approx(0.5)
    close = tighter.assign(balanced=[1.5, 1.7, 1.6])
    assert teacher_sampler.sampler_record(occ, 10, 4, close)["verdict"] == "inconclusive"
    labels = np.random.default_rng(0).random((60, 4)) < 0.3
    spreads = diagnostics.sampler_spreads(labels, np.arange(60), iterations=5, batch_size=8, seeds=[0, 1])
    assert list(spreads.columns) == ["seed", "balanced", "random", "balanced_log_sd", "random_log_sd"]
    assert len(spreads) == 2
    occ, rec = teacher_sampler.sampler_item(labels, np.arange(60), list("abcd"), iterations=5, batch_size=8, seed=3)
    assert list(occ["class"]) == list("abcd") and rec["sampler_seeds"] == [3, 4, 5, 6, 7]


@pytest.mark.slow
def test_no_correlation_claim_differs_only_when_the_class_bootstrap_excludes_zero():
    """Fig A.1 over three replicate single models (each its own counts and AP) and a bootstrap of the classes:
    no relation, inconclusive; a clear one, differs; one model alone leaves its seed unreplicated: undecided."""
    rng = np.random.default_rng(0)
    counts = np.stack([rng.integers(50, 200, 120).astype(float) for _ in range(3)])
    names = [f"c{i}" for i in range(120)]
    unrelated = teacher_classes.class_ap_record(rng.random((3, 120)), counts, names)
    low, high = unrelated["spearman_interval"]
    assert unrelated["verdict"] == "inconclusive" and low < 0 < high
    ap = counts / 400 + rng.normal(0, 0.02, counts.shape)
    related = teacher_classes.class_ap_record(ap, counts, names)
    assert related["verdict"] == "differs" and "bootstrap resamples of classes" in related["verdict_estimate"]
    alone = teacher_classes.class_ap_record(ap[0], counts[0], names)
    assert alone["verdict"] == "inconclusive" and "teacher training seed" in alone["verdict_reason"]


def test_micro_curve_claims_read_intervals_over_teachers_and_test_clips():
    """Figs 5.2 / 5.3 over three replicate single models per subset (and the teachers of the largest count): decided
    either way; one single model per subset leaves its seed unreplicated, which both claims name: undecided."""
    from types import SimpleNamespace

    rng = np.random.default_rng(0)
    y = {s: rng.random((300, 5)) < 0.3 for s in ("big", "small")}
    noise = {"big": 0.3, "small": 1.5}

    def probs(s):
        return y[s] + rng.normal(0, noise[s], (300, 5))

    def run(maps, p):
        return SimpleNamespace(map=np.asarray(maps, float), probabilities=p[None])

    def replicates(s, maps=(0.5, 0.51, 0.49)):
        return [run([m], probs(s)) for m in maps]

    runs = {(s, 1): replicates(s) for s in ("big", "small")}
    runs.update({(s, 10): [run([0.30, 0.31, 0.29, 0.30], probs(s))] for s in ("big", "small")})
    auc = {(s, t): teacher_curves.micro_auc(y[s], probs(s)) for s in ("big", "small") for t in (1, 10)}
    r52, r53 = teacher_curves.micro_curve_records(runs, auc, ("big", "small"), [1, 10], y, n_boot=50)
    assert r52["verdict"] == "agrees" and r53["verdict"] == "agrees"
    assert r53["micro_auc_difference_interval"][0] > 0
    runs[("big", 10)] = [run([0.6, 0.62, 0.61], probs("big"))]  # a small-partition teacher above the baseline
    r52, _ = teacher_curves.micro_curve_records(runs, auc, ("big", "small"), [1, 10])
    assert r52["verdict"] == "differs"
    swapped = {"big": y["small"], "small": y["big"]}
    runs2 = {**runs, ("big", 1): runs["small", 1], ("small", 1): runs["big", 1]}
    assert (
        teacher_curves.micro_curve_records(runs2, auc, ("big", "small"), [1, 10], swapped, n_boot=50)[1]["verdict"]
        == "differs"
    )
    assert teacher_curves.micro_curve_records(runs, auc, ("big", "small"), [1, 10])[1]["verdict"] == "inconclusive"
    one = {**runs, ("big", 1): runs["big", 1][:1], ("small", 1): runs["small", 1][:1]}
    r52, r53 = teacher_curves.micro_curve_records(one, auc, ("big", "small"), [1, 10], y, n_boot=50)
    assert r52["verdict"] == r53["verdict"] == "inconclusive"
    assert "teacher training seed" in r53["verdict_reason"]


def test_a_run_cut_off_before_the_lowest_rate_converged_cannot_say_it_is_behind():
    from pate_study.reporting.verdicts import Verdict

    behind = Verdict("differs", "r", "lowest rate behind")
    assert teacher_ablations.cut_off(behind, 0.0, 1e-4).verdict == "differs"  # converged: the difference stands
    cut = teacher_ablations.cut_off(behind, 0.6, 1e-4)
    assert cut.verdict == "inconclusive" and cut.reason.startswith("cut off: 60 % of the lr 0.0001 teachers")
    ahead = Verdict("agrees", "r")
    assert teacher_ablations.cut_off(ahead, 1.0, 1e-4) is ahead  # a lower bound that already clears the other rate


def test_teacher_spec_from_a_notebooks_flat_parameters():
    """Notebooks 04 and 05 declare the recipe as teacher_<field>; one function reads it for both."""
    params = {f"teacher_{name}": getattr(teachers.TeacherSpec(), name) for name in teachers.RECIPE_PARAMETERS}
    params["teacher_hidden"] = [16, 8]
    spec = teachers.teacher_spec_from_parameters({**params, "unrelated": 1})
    assert spec.hidden == (16, 8) and spec.lr == teachers.TeacherSpec().lr
