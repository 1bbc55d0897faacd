"""Notebook 04's findings text, each sentence computed from this run's records."""

from __future__ import annotations

import pandas as pd

from pate_study.experiments.audioset.teacher_claims.curves import teacher_maps
from pate_study.experiments.audioset.teacher_claims.models import scale_range, thesis_baseline_maps
from pate_study.reporting.registry import published


def _margin(record: dict, name: str, fmt: str = ".3f") -> str:
    """``margin ± tolerance`` of a recorded :class:`SeedComparison` (``n/a`` when the run did not compare)."""
    if f"{name}_margin" not in record:
        return "n/a"
    return f"{record[name + '_margin']:+{fmt}} ± {record[name + '_tolerance']:{fmt}}"


def teacher_findings(
    table41: pd.DataFrame,
    runs: dict,
    ablation: dict,
    records: dict[str, dict],
    teacher_counts,
    steps: int,
    min_clips: int,
    synthetic_clips: bool,
) -> list[str]:
    """Notebook 04's findings, each computed from this run: ``records`` are the items' recorded dicts (keys
    "fig5.1", "fig5.7"-"fig5.12", "figA.1"; "fig5.4" and "fig5.6" when recorded); ``min_clips``: fewest bal_train
    clips of a class (:func:`.diagnostics.min_clips_per_class`)."""
    row = table41.query("block == 'big' and data_set == 'baseline'").iloc[0]
    pub, raw = published("muschiol2021-fig5.1")["values"], thesis_baseline_maps()
    mean = {k: float(teacher_maps(r).mean()) for k, r in runs.items()}  # over every replicate's teachers
    r57, r58, r59, r510, r511, r512 = (
        records[k] for k in ("fig5.7", "fig5.8", "fig5.9", "fig5.10", "fig5.11", "fig5.12")
    )
    return [
        f"* **Data.** {row.overall_size_ours:,} big bal_train clips and {row.test_size_ours:,} eval clips with "
        f"{row.class_number_ours} classes, {row.overall_size_ours / row.overall_size_thesis:.1%} of the thesis' "
        f"{row.overall_size_thesis:,} clips: real data at reduced scale; every size in Table 4.1 is not comparable by "
        "construction.",
        f"* **Teachers.** Big: mean teacher mAP {mean['big', 1]:.3f} (baseline), "
        + ", ".join(f"{mean['big', t]:.3f} ({t})" for t in teacher_counts[1:])
        + f"; small: {mean['small', 1]:.3f} (baseline), "
        + ", ".join(f"{mean['small', t]:.3f} ({t})" for t in teacher_counts[1:])
        + ". Fewer clips per teacher give weaker teachers, as in the thesis "
        + ("(monotone here)." if records["fig5.1"]["fewer_clips_lower_map"] else "(not monotone here: see Fig 5.1)."),
        f"* **Against the thesis' numbers** (Fig 5.1 text ~{pub['small_baseline_map_approx']} small / "
        f"~{pub['big_baseline_map_approx']} big; its tables {raw['small']} / {raw['big']}): our baselines "
        f"{mean['small', 1]:.3f} / {mean['big', 1]:.3f}. Not comparable: our teachers see 128-d clip "
        "embeddings (VGGish, trained by Google on YouTube-8M, i.e. already a strong pretrained audio representation) "
        "instead of log-Mel images through an ImageNet ResNet, train on "
        + "{:.1%}-{:.1%}".format(*scale_range(table41))
        + " of the clips, and are selected on a validation split instead of the test set (the thesis' choice is "
        "optimistic by construction).",
        f"* **Ablations** (the first {r57['teachers_per_seed']} teachers of {r57['seeds']} replicate big-10 ensembles "
        "per arm, each replicate its own pool split, partitions and training seeds; each difference is the mean over "
        "replicates of the paired difference, ± the half-width of its 95 % t-interval over replicates). **Mixup**: "
        f"final mAP {r57['final_margin']:+.3f} ± {r57['final_tolerance']:.3f} "
        f"({r57['verdict_slight_improvement']} with 'a slight improvement'), first evaluation "
        f"{r57['first_eval_margin']:+.3f} ± {r57['first_eval_tolerance']:.3f} ({r57['verdict_learns_faster_early']} "
        f"with 'helps to learn faster' early). **Balanced vs random sampler**: first evaluation "
        f"{r58['first_eval_margin']:+.3f} ± {r58['first_eval_tolerance']:.3f}, final {r58['final_margin']:+.3f} ± "
        f"{r58['final_tolerance']:.3f} (bal_train is already balanced; Fig 5.9 spread max/median "
        f"{r59['spread_balanced']:.1f} balanced vs {r59['spread_random']:.1f} random, top class "
        f"{r59['top_class_balanced']}).",
        f"* **Batch size** (64 against the best other): {_margin(r510, 'equal_steps')} at equal steps "
        f"({r510['verdict_equal_steps']}), {_margin(r510, 'equal_epochs')} at equal epochs "
        f"({r510['verdict_equal_epochs']}). **Learning rate** (lowest against the best other, "
        f"{r512.get('compared_lr', float('nan')):g}): final mAP {_margin(r512, 'final')} within {steps} steps with "
        f"early stopping ({r512.get('verdict_lowest_rate_best_recipe_schedule', r512['verdict'])} with 'the lowest "
        "rate performs best')"
        + (
            f", {_margin(r512, 'thesis_length')} against the recipe's rate at the thesis's length, "
            f"{r512['thesis_length_steps']} steps without early stopping ({r512['verdict_lowest_rate_best']}; "
            f"{100 * r512['lowest_rate_share_selecting_last_step']:.0f} % of its teachers still improving at the end, "
            f"mAP change per 1,000 steps at its end {r512['lowest_rate_end_slope_per_1000_steps']:+.4f} "
            "[{:+.4f}, {:+.4f}]".format(*r512["lowest_rate_end_slope_interval"])
            + (": cut off)" if r512["lowest_rate_cut_off"] else ")")
            if "thesis_length_margin" in r512
            else ""
        )
        + "; selected step "
        + (
            f"{_margin(r512, 'thesis_length_best_step', '.0f')} at the thesis's length"
            if "thesis_length_best_step_margin" in r512
            else _margin(r512, "best_step", ".0f")
        )
        + " "
        f"({r512.get('verdict_larger_rates_converge_earlier', r512['verdict'])} with 'larger rates converge earlier').",
        "* **Per class** (big baseline): Spearman rho(training clips, AP) = "
        f"{records['figA.1']['spearman_counts_ap']:.2f}; "
        f"the training counts of bal_train are nearly flat (≥ {min_clips} clips per class), so the thesis' 'no "
        "correlation' is tested on a much narrower range here.",
        "* **Log-Mel CNNs (Figs 5.4/5.5)** ran "
        + (
            "on synthetic clips only: their curves are not evidence about Audio Set."
            if synthetic_clips
            else "on real raw audio."
        )
        + (
            f" Training work per clip at the thesis's widths, VGG / ResNet up to "
            f"{records['fig5.4']['resnet_training_time_advantage_max_factor']:.2f}x "
            f"({records['fig5.4']['verdict_speed']} with 'up to five times', checked analytically on counted work, "
            "not time: not evidence)."
            if "resnet_training_time_advantage_max_factor" in records.get("fig5.4", {})
            else ""
        ),
        *(
            [
                "* **Similar teachers (Fig 5.6)**: the Wald test that big 10's teachers have equal final mAP "
                f"(covariance from a shared bootstrap of the test clips) gives χ² = "
                f"{records['fig5.6']['heterogeneity_statistic']:.1f} on {records['fig5.6']['heterogeneity_df']} df, "
                f"p = {records['fig5.6']['heterogeneity_p_value']:.2g} ({records['fig5.6']['verdict']} with 'no "
                "significant difference'; a failure to reject would not prove the teachers equal)."
            ]
            if "heterogeneity_p_value" in records.get("fig5.6", {})
            else []
        ),
        f"* **Adaptive class weights (Fig 5.11)** change the big-10 final mAP by {-r511['final_margin']:+.3f} ± "
        f"{r511['final_tolerance']:.3f} (AUC "
        f"{ablation['adaptive weights'].auc.mean() - ablation['recipe'].auc.mean():+.3f}) with weights spread up to "
        f"{r511['largest_weight_ratio_between_classes']:.1f}x between classes: {r511['verdict']} with the thesis' "
        "'no positive effect'.",
    ]
