"""Notebook 04's claims on the teachers' curves: Fig 5.1 (mAP against the partition size), Figs 5.2 and 5.3
(micro-averaged PR and ROC curves) and Fig 5.6 (how alike the teachers of one ensemble are).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.teacher_claims.models import thesis_baseline_maps
from pate_study.experiments.audioset.verdict_rules import TEACHER, judged
from pate_study.learning.metrics import average_precision_per_class, resampled_average_precision, roc_auc_per_class
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim, judge
from pate_study.reporting.registry import published
from pate_study.reporting.verdicts import combine

FIG_5_1 = Claim(
    "fewer clips, lower mAP",
    "Muschiol 2021, §5.1 / Fig 5.1: the smaller each teacher's partition, the lower its mAP",
    "mean teacher mAP(T) − mean teacher mAP(next larger T), each subset (Welch over the ensembles' teachers)",
    "every-step",
    TEACHER,
)


def teacher_maps(runs: Any) -> np.ndarray:
    """Every teacher's final mAP over the replicate ensembles of one (subset, T) (``runs``: a list of
    :class:`.teachers.TeacherRun`, or one): each teacher one draw of its partition and training seed (a single model
    replicated over its seeds, a replicate ensemble's teachers over their own partitions)."""
    runs = runs if isinstance(runs, (list, tuple)) else [runs]
    return np.concatenate([np.asarray(r.map, float) for r in runs])


def _summary(runs: Any) -> tuple[float, float, int]:
    m = teacher_maps(runs)
    return float(m.mean()), float(m.std(ddof=1)) if m.size > 1 else float("nan"), int(m.size)


def teacher_curves_record(runs: dict, subsets, teacher_counts, table41: pd.DataFrame) -> dict[str, Any]:
    """Fig 5.1: the baselines' mAP beside the thesis's (not comparable: models, inputs, scale), and whether fewer
    clips per teacher give a lower mean teacher mAP at every step up in the teacher count (:data:`FIG_5_1`: Welch
    intervals over the teachers of every replicate ensemble of the two counts, :func:`teacher_maps`; a single model
    enters with its replicates, or as one run -- its seed named as not replicated, the step undecided -- when it has
    one). ``runs[subset, T]``: the replicate ensembles (a list) or one run."""
    pub = published("muschiol2021-fig5.1")["values"]
    ours_small, ours_big = float(teacher_maps(runs["small", 1]).mean()), float(teacher_maps(runs["big", 1]).mean())
    raw = thesis_baseline_maps()
    pools = table41.query("data_set == 'baseline'").set_index("block")
    why = (
        f"the thesis' ~{pub['small_baseline_map_approx']} / ~{pub['big_baseline_map_approx']} are read off its curves "
        f"of ResNets on log-Mel of {pools.individual_teacher_train_thesis['small']:,}/"
        f"{pools.individual_teacher_train_thesis['big']:,} clips, selected on the test set; ours are embedding MLPs on "
        f"{pools.individual_teacher_train_ours['small']:,}/{pools.individual_teacher_train_ours['big']:,} clips "
        f"selected on validation; its own tables print {raw['small']} / {raw['big']}"
    )

    drops = [
        unc.welch_difference(_summary(runs[s, a]), _summary(runs[s, b]), TEACHER)
        for s in subsets
        for a, b in zip(teacher_counts, teacher_counts[1:])
    ]
    ordered = all(d.value > 0 for d in drops)
    steps = ", ".join(
        f"{s}: " + " > ".join(f"{teacher_maps(runs[s, t]).mean():.3f}" for t in teacher_counts) for s in subsets
    )
    v = judged(FIG_5_1, drops, note=f"mean teacher mAP {steps}")
    v = combine(
        {"fewer clips, lower mAP": v},
        context=(
            f"Values not comparable: small baseline mAP {ours_small:.3f} vs ~{pub['small_baseline_map_approx']}, big "
            f"{ours_big:.3f} vs ~{pub['big_baseline_map_approx']}: {why}"
        ),
    )

    def auc(reps):
        reps = reps if isinstance(reps, (list, tuple)) else [reps]
        return float(np.mean([r.auc[0] for r in reps]))

    return dict(
        small_baseline_map_approx=ours_small,
        big_baseline_map_approx=ours_big,
        small_baseline_auc=auc(runs["small", 1]),
        big_baseline_auc=auc(runs["big", 1]),
        **{
            f"{s}_{t}_mean_teacher_map": float(teacher_maps(runs[s, t]).mean()) for s in subsets for t in teacher_counts
        },
        fewer_clips_lower_map=bool(ordered),
        **v.as_record(),
    )


FIG_5_2 = Claim(
    "the baseline teacher beats a small-partition teacher",
    "Muschiol 2021, Fig 5.2: the baseline "
    "teacher's PR curve lies above a teacher of the largest ensemble, on both subsets",
    "baseline mAP − mean mAP of the largest ensemble's teachers, each subset",
    "every-step",
    TEACHER,
)
FIG_5_3 = Claim(
    "micro ROC-AUC of the big baseline above the small one's",
    "Muschiol 2021, Fig 5.3",
    "micro ROC-AUC big baseline − small baseline",
    "direction",
    (unc.TEACHER_SEED, unc.TEST_SET),
)


def micro_auc(labels: np.ndarray, probs: np.ndarray) -> float:
    """Micro-averaged ROC-AUC: the AUC of every (clip, class) pair pooled (Mann-Whitney, ties averaged)."""
    return float(roc_auc_per_class(np.asarray(labels).reshape(-1, 1), np.asarray(probs).reshape(-1, 1))[0])


def micro_auc_difference(test: dict, *, n_boot: int = 200, seed: int = 0) -> unc.Estimate:
    """Fig 5.3's difference, micro ROC-AUC big baseline − small baseline. ``test[subset]``: the labels and the
    baseline's probabilities ``[n, C]``, or one per replicate single model ``[G, n, C]`` (the two subsets' replicates
    paired by replicate seed): per replicate the difference on the full test sets and on independent bootstraps of
    the two test sets (resamples from ``seed`` and ``seed + 1``, the same rows for every replicate), combined by
    :func:`pate_study.reporting.uncertainty.combined_interval` (t over the replicates, the test bootstrap); one
    model per subset: the bootstrap alone, its training seed named as not replicated."""
    probs = {s: np.asarray(test[s][1]) for s in ("big", "small")}
    probs = {s: p[None] if p.ndim == 2 else p for s, p in probs.items()}
    g = min(p.shape[0] for p in probs.values())
    values = [
        micro_auc(test["big"][0], probs["big"][k]) - micro_auc(test["small"][0], probs["small"][k]) for k in range(g)
    ]
    rows = {s: unc.bootstrap_rows(len(test[s][0]), n_boot, seed + i) for i, s in enumerate(("big", "small"))}
    draws = np.array(
        [
            [
                micro_auc(test["big"][0][rb], probs["big"][k][rb])
                - micro_auc(test["small"][0][rs], probs["small"][k][rs])
                for k in range(g)
            ]
            for rb, rs in zip(rows["big"], rows["small"])
        ]
    )
    return unc.combined_interval(values, draws, [unc.TEACHER_SEED])


def micro_curve_records(
    runs: dict,
    auc_micro: dict,
    subsets,
    teacher_counts,
    test_labels: dict | None = None,
    *,
    n_boot: int = 200,
    seed: int = 0,
) -> tuple[dict, dict]:
    """Figs 5.2 / 5.3: the baseline teacher beats the largest ensemble's teachers on both subsets (:data:`FIG_5_2`:
    Welch intervals over the replicate single models and that count's teachers of every replicate,
    :func:`teacher_maps`), and the big baseline's micro ROC-AUC exceeds the small one's (:data:`FIG_5_3`: over the
    replicate single models and a bootstrap of both test sets, :func:`micro_auc_difference`, ``test_labels[subset]``;
    without them unbounded, inconclusive). ``runs[subset, T]``: the replicate ensembles (a list) or one run;
    ``auc_micro``: the figure's values (first replicates)."""
    t_max = teacher_counts[-1]
    steps = [unc.welch_difference(_summary(runs[s, 1]), _summary(runs[s, t_max]), TEACHER) for s in subsets]
    v2 = judged(
        FIG_5_2,
        steps,
        note=", ".join(
            f"{s}: baseline {teacher_maps(runs[s, 1]).mean():.3f} vs mean {teacher_maps(runs[s, t_max]).mean():.3f}"
            for s in subsets
        ),
    )

    def baselines(s):
        reps = runs[s, 1] if isinstance(runs[s, 1], (list, tuple)) else [runs[s, 1]]
        return np.stack([r.probabilities[0] for r in reps])

    if test_labels is not None and {"big", "small"} <= set(subsets):
        diff = micro_auc_difference(
            {s: (test_labels[s], baselines(s)) for s in ("big", "small")}, n_boot=n_boot, seed=seed
        )
    else:
        diff = unc.unreplicated(auc_micro["big", 1] - auc_micro["small", 1], [unc.TEST_SET, unc.TEACHER_SEED])
    v3 = judged(FIG_5_3, diff, note=f"micro ROC-AUC big {auc_micro['big', 1]:.3f}, small {auc_micro['small', 1]:.3f}")

    def first(reps):
        return reps[0] if isinstance(reps, (list, tuple)) else reps

    fig52 = dict(
        **{f"{s}_{t}_teacher0_map": float(first(runs[s, t]).map[0]) for s in subsets for t in teacher_counts},
        **v2.as_record(),
    )
    fig53 = dict(
        **{f"{s}_{t}_micro_auc": auc_micro[s, t] for s in subsets for t in teacher_counts},
        micro_auc_difference_interval=[diff.low, diff.high],
        **v3.as_record(),
    )
    return fig52, fig53


#: Fig 5.6's claim, as the thesis states it: no significant difference between the teachers of "big 10" (their
#: final mAPs equal up to the finite test set's noise), judged by a heterogeneity test at the usual 5 %.
FIG_5_6 = Claim(
    "no significant difference between the teachers",
    'Muschiol 2021, §5.1.2 / Fig 5.6: "all teachers of the possible ensemble have similar learning progress and '
    "maximum scores ... There is no significant difference between the teachers if the training parameters remain the "
    'same"',
    "the teachers' final test mAPs",
    "homogeneity",
    (unc.TEACHER_SEED, unc.TEST_SET),
)


def teacher_map_draws(labels: np.ndarray, probs: np.ndarray, *, n_boot: int = 100, seed: int = 0) -> tuple:
    """Every teacher's final mAP on the full test set ``[T]`` and on ``n_boot`` bootstrap resamples of the test
    clips ``[n_boot, T]`` (the same rows for every teacher, from ``seed``: the teachers' estimates are correlated
    through the shared test set, which the draws' covariance carries). ``probs``: ``[T, n_test, C]``, ``labels``:
    ``[n_test, C]``; needs ``T >= 2``."""
    probs, labels = np.asarray(probs), np.asarray(labels)
    if probs.ndim != 3 or probs.shape[0] < 2 or probs.shape[1] != labels.shape[0]:
        raise ValueError(
            f"teacher_map_draws: expected probs [T >= 2, n_test, C] over labels' {labels.shape[0]} test clips, "
            f"got {probs.shape}"
        )
    full = np.nanmean(average_precision_per_class(np.broadcast_to(labels, probs.shape), probs), axis=-1)
    weights = unc.bootstrap_weights(unc.bootstrap_rows(labels.shape[0], n_boot, seed))
    with warnings.catch_warnings():  # a class without a positive in a resample is NaN, left out of its mAP
        warnings.simplefilter("ignore", RuntimeWarning)
        draws = np.stack([np.nanmean(resampled_average_precision(labels, p, weights), axis=1) for p in probs], axis=1)
    return full, draws


def similar_teachers_record(
    run, labels: np.ndarray | None = None, *, n_boot: int = 100, seed: int = 0
) -> dict[str, Any]:
    """Fig 5.6: "no significant difference between the teachers" (:data:`FIG_5_6`), judged as the thesis states it,
    by the Wald chi-squared test that the ``T`` teachers' final mAPs are equal
    (:func:`pate_study.reporting.uncertainty.heterogeneity_test`; their covariance from ``n_boot`` shared bootstrap
    resamples of the test clips, :func:`teacher_map_draws`): *differs* when it finds a significant difference at 5 %,
    *agrees* when it does not (a failure to reject: the rule says how little it can detect). The teachers are the
    ensemble's replicates of partition and training seed. Without ``labels`` nothing is resampled: not evaluable.
    Range and mean of the final mAP / AUC recorded beside."""
    final = np.asarray(run.map, float)
    test, extra = None, {}
    if labels is not None and run.probabilities is not None and len(run.probabilities) >= 2:
        full, draws = teacher_map_draws(labels, run.probabilities, n_boot=n_boot, seed=seed)
        test = unc.heterogeneity_test(full, draws, [unc.TEST_SET], groups=[f"teacher {i}" for i in range(full.size)])
        extra = {
            "heterogeneity_statistic": float(test.statistic),
            "heterogeneity_df": int(test.df),
            "heterogeneity_p_value": float(test.p_value),
            "n_boot": n_boot,
        }
    v = judge(
        FIG_5_6,
        test,
        note=f"final mAP {final.min():.3f}-{final.max():.3f} (mean {final.mean():.3f}) over {final.size} teachers",
    )
    return dict(
        map_min=float(final.min()),
        map_max=float(final.max()),
        map_mean=float(final.mean()),
        auc_min=float(run.auc.min()),
        auc_max=float(run.auc.max()),
        **extra,
        **v.as_record(),
    )
