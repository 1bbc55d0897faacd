"""The smoke check of notebooks/04_audioset_teachers.ipynb: what it must have recorded (not only that it ran)."""

from pate_study.reporting.verdicts import VERDICTS


def check(scalars: dict, params: dict) -> None:
    """04_audioset_teachers: sizes consistent with the split rule, metrics in range, every item judged."""
    t41 = scalars["muschiol2021-table4.1"]
    assert t41["rows"] == 2 * len(params["teacher_counts"]) and t41["small_classes"] == 15
    assert t41["big_teacher_pool"] == t41["big_clips"] - round(params["student_fraction"] * t41["big_clips"])
    assert scalars["muschiol2021-fig2.1"]["frames"] == 1001 and scalars["muschiol2021-fig2.1"]["mel_bands"] == 64
    fig59 = scalars["muschiol2021-fig5.9"]
    assert fig59["iterations"] == params["sampler_iterations"] and fig59["spread_balanced"] >= 1
    fig51 = scalars["muschiol2021-fig5.1"]
    for subset in ("small", "big"):
        for t in params["teacher_counts"]:
            assert 0.0 <= fig51[f"{subset}_{t}_mean_teacher_map"] <= 1.0
    assert 0.0 <= scalars["muschiol2021-fig5.6"]["map_min"] <= scalars["muschiol2021-fig5.6"]["map_max"] <= 1.0
    assert scalars["muschiol2021-fig5.10"]["best_batch"] in params["ablation_batch_sizes"]
    assert scalars["muschiol2021-fig5.12"]["best_lr"] in params["ablation_learning_rates"]
    a2 = scalars["muschiol2021-figA.2"]
    assert 0.0 <= a2["worst_classes_ap_min"] <= a2["best_classes_ap_approx"] <= 1.0
    for item in ("muschiol2021-figA.4", "muschiol2021-figA.5"):
        assert all(0.0 <= scalars[item][f"mean_auc_{g}"] <= 1.0 for g in ("best", "medium", "worst"))
    assert scalars["muschiol2021-fig5.5"]["pretrained_arm_run"] == bool(params.get("imagenet_weights"))
    fig511 = scalars["muschiol2021-fig5.11"]
    assert 0.0 <= fig511["map_adaptive"] <= 1.0 and 0.0 <= fig511["map_plain"] <= 1.0
    assert 1.0 <= fig511["largest_weight_ratio_between_classes"] <= fig511["weight_max"] ** 2 + 1e-9
    assert scalars["muschiol2021-fig2.1"]["verdict"] == "not comparable"  # an illustration of one clip
    for key, values in scalars.items():
        if key.startswith("muschiol2021-"):
            assert values["verdict"] in VERDICTS, key
            assert not any(k.startswith("seconds") for k in values), f"{key}: timings belong in benchmarks"
    assert scalars["findings"]["n_lines"] >= 5
