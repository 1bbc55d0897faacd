"""Notebook 04's per-class claims: Fig A.1 (AP against the class's clip count), Figs A.2 and A.3 (per-class AP
curves), Figs A.4 and A.5 (per-class ROC AUC against no skill).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import spearmanr

from pate_study.experiments.audioset.diagnostics import per_class_ap, ranked_classes
from pate_study.experiments.audioset.verdict_rules import judged
from pate_study.learning.metrics import resampled_average_precision, roc_auc_per_class
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim
from pate_study.reporting.registry import published
from pate_study.reporting.verdicts import Verdict, combine, not_comparable


def class_curve_verdict(thesis_value: float, ours: float, what: str) -> Verdict:
    """Figs A.2/A.3: per-class AP levels of the thesis' ResNets on log-Mel (274k / 27k clips) against our
    embedding MLPs on 6.2k / 0.6k clips: a different model, input and scale, so not comparable."""
    return not_comparable(
        f"{what}: {ours:.3f} here vs ~{thesis_value} in the thesis; embedding MLPs on 128-d VGGish clip "
        "embeddings of a few thousand clips vs ResNets on log-Mel of 274k / 27k clips",
        rule="per-class AP levels depend on model, input and data scale",
    )


FIG_A_1 = Claim(
    "no correlation between training clips and AP",
    'Muschiol 2021, Fig A.1: "no correlation" between a class\'s number of training clips and its average precision',
    "Spearman rho(training clips per class, AP per class)",
    "level",
    (unc.TEACHER_SEED, "classes"),
    boundary=0.0,
)


def _spearman(counts: np.ndarray, ap: np.ndarray, rows: np.ndarray | None = None) -> float:
    """Spearman's rho of the classes ``rows`` (None: all) with a finite AP."""
    c, a = (counts, ap) if rows is None else (counts[rows], ap[rows])
    ok = np.isfinite(a)
    with np.errstate(invalid="ignore"):
        return float(spearmanr(c[ok], a[ok]).statistic)


def spearman_estimate(counts: np.ndarray, ap: np.ndarray, *, n_boot: int = 1000, seed: int = 0) -> unc.Estimate:
    """Spearman's rho between per-class training clips and AP, ``counts`` / ``ap`` ``[C]`` for one model or ``[G, C]``
    for the replicate single models (each its own teacher pool's counts), with a bootstrap over the classes
    (``n_boot`` resamples from ``seed``, the same classes for every replicate): over the replicates the t-interval
    combined with it (:func:`pate_study.reporting.uncertainty.combined_interval`), for one model the percentile
    interval with its training seed named as not replicated. The test set is named as not replicated (one set)."""
    counts, ap = np.atleast_2d(np.asarray(counts, float)), np.atleast_2d(np.asarray(ap, float))
    rows = unc.bootstrap_rows(ap.shape[1], n_boot, seed)
    values = [_spearman(c, a) for c, a in zip(counts, ap)]
    draws = np.array([[_spearman(c, a, r) for c, a in zip(counts, ap)] for r in rows], float)
    return unc.combined_interval(values, draws, [unc.TEACHER_SEED], unreplicated=[unc.TEST_SET], resampled="classes")


def class_ap_record(ap: np.ndarray, counts: np.ndarray, names, *, seed: int = 0) -> dict[str, Any]:
    """Fig A.1: "no correlation" between a class's training clips and its AP (:data:`FIG_A_1`): rho = 0, judged on
    the interval over the replicate single models and a bootstrap over classes (:func:`spearman_estimate`;
    ``ap`` / ``counts`` ``[G, C]``, or ``[C]`` for one model). The thesis prints no number, so no band: the
    claim differs when the interval excludes 0 and is otherwise inconclusive (absence of a correlation cannot be
    shown without a margin the thesis does not give). Boing vs male speech AP and clip factors beside."""
    rho = spearman_estimate(counts, ap, seed=seed)
    ap, counts = np.atleast_2d(ap).mean(0), np.atleast_2d(counts).mean(0)  # the replicates' mean per class
    ap_of, n_of = dict(zip(names, ap)), dict(zip(names, counts))
    boing, male = "Boing", "Male speech, man speaking"
    ratio_ap = float(ap_of[boing] / ap_of[male]) if boing in ap_of and ap_of.get(male, 0) > 0 else float("nan")
    ratio_n = float(n_of[male] / max(n_of[boing], 1)) if boing in n_of and male in n_of else float("nan")
    v = judged(FIG_A_1, rho, note=f"rho = {rho.value:.2f}")
    return dict(
        boing_vs_male_speech_ap_factor_approx=ratio_ap,
        male_speech_vs_boing_sample_factor_approx=ratio_n,
        spearman_counts_ap=rho.value,
        spearman_interval=[rho.low, rho.high],
        ap_boing=float(ap_of.get(boing, np.nan)),
        ap_male_speech=float(ap_of.get(male, np.nan)),
        **v.as_record(),
    )


def _group_curve(curve: np.ndarray, idx: np.ndarray) -> list[float]:
    return [float(x) for x in np.nanmean(curve[:, idx], axis=1)]


def _class_curve_summary(curve: np.ndarray, steps, selected: tuple, groups: dict) -> dict[str, Any]:
    """One teacher's per-class AP curve summarised: the selected step and the evaluations, the largest gap between
    the curve at the selected step and the selected checkpoint's AP (0 when the curve is the same run), and per group
    of ``groups`` its mean AP at every evaluation."""
    st, curve, step = [int(x) for x in steps], np.asarray(curve, float), int(selected[1])
    at = curve[st.index(step)] if step in st else np.full(curve.shape[1], np.nan)
    return dict(
        selected_step=step,
        evaluations=len(st),
        last_evaluation_step=st[-1],
        curve_at_selected_max_abs_diff=float(np.nanmax(np.abs(at - np.asarray(selected[0], float)))),
        **{f"{g}_classes_ap_curve": _group_curve(curve, idx) for g, idx in groups.items()},
    )


#: The random sources behind a teacher's per-class AP on the test set: its training seed and partition (the
#: replicate single models, the replicate ensembles' teacher 0) and the test clips.
REPLICATED_TEST = (unc.TEACHER_SEED, unc.TEST_SET)


def class_ap_estimates(
    selected: dict, groups: dict, test: dict | None, *, n_boot: int = 100, seed: int = 0
) -> tuple[unc.Estimate, unc.Estimate]:
    """Figs A.2 / A.3's two numbers with their intervals: the big baseline's worst per-class AP, and the mean AP of
    the 10 best classes (each model's own best 10, ranked on the full test set) baseline − big 10. ``selected[key]``:
    ``(per-class AP [C] or, one per replicate, [G, C], step)``; ``test[key]``: ``(labels, teacher 0's probabilities
    [n, C] or [G, n, C])`` on the same test clips for "baseline" and "big 10". Per replicate (replicate ``g`` of
    both, paired by seed) the two numbers on the full test set and on paired bootstrap resamples of the test clips
    (``n_boot`` from ``seed``, the same rows for all), combined over the replicates
    (:func:`pate_study.reporting.uncertainty.combined_interval`; one replicate: the bootstrap alone, the training
    seed named as not replicated). Without ``test`` (or test sets of different sizes) nothing is resampled:
    unbounded, inconclusive."""
    sel = {k: np.atleast_2d(np.asarray(v[0], float)) for k, v in selected.items()}
    g = min(sel["baseline"].shape[0], sel["big 10"].shape[0])
    best = {k: [ranked_classes(a)["best"] for a in sel[k][:g]] for k in ("baseline", "big 10")}
    worst = [float(np.nanmin(a)) for a in sel["baseline"][:g]]
    drop = [
        float(sel["baseline"][i][best["baseline"][i]].mean() - sel["big 10"][i][best["big 10"][i]].mean())
        for i in range(g)
    ]
    sizes = {len(test[k][0]) for k in ("baseline", "big 10")} if test else set()
    if len(sizes) != 1:
        return (
            unc.unreplicated(float(np.mean(worst)), [unc.TEST_SET, unc.TEACHER_SEED]),
            unc.unreplicated(float(np.mean(drop)), [unc.TEST_SET, unc.TEACHER_SEED]),
        )
    weights = unc.bootstrap_weights(unc.bootstrap_rows(sizes.pop(), n_boot, seed))
    probs = {k: np.asarray(test[k][1]) for k in ("baseline", "big 10")}
    probs = {k: (p[None] if p.ndim == 2 else p)[:g] for k, p in probs.items()}
    ap = {  # [n_boot, G, C]: every replicate on the same resamples (one product per class)
        k: np.stack([resampled_average_precision(test[k][0], p, weights) for p in probs[k]], axis=1)
        for k in ("baseline", "big 10")
    }
    with np.errstate(invalid="ignore"):
        worst_draws = np.nanmin(ap["baseline"], axis=2)
        drop_draws = np.stack(
            [
                np.nanmean(ap["baseline"][:, i, best["baseline"][i]], axis=1)
                - np.nanmean(ap["big 10"][:, i, best["big 10"][i]], axis=1)
                for i in range(g)
            ],
            axis=1,
        )
    return (
        unc.combined_interval(worst, worst_draws, [unc.TEACHER_SEED]),
        unc.combined_interval(drop, drop_draws, [unc.TEACHER_SEED]),
    )


def class_curve_records(
    class_curves: dict,
    selected: dict,
    groups: dict,
    names,
    test: dict | None = None,
    *,
    n_boot: int = 100,
    seed: int = 0,
) -> tuple[dict, dict]:
    """Figs A.2 / A.3 ("baseline" = big 1, "big 10" = its teacher 0). ``class_curves[key]``: ``(steps, per-class test
    AP [K, C])`` at every evaluation of teacher 0 (:func:`.teachers.class_ap_at_evaluations`); ``selected[key]``:
    ``(per-class AP at the selected, best-validation checkpoint, its step)`` -- the headline values, as Table A.1 /
    Fig A.1 use; ``groups``: the best / medium / worst 10 by the selected AP (:func:`.diagnostics.ranked_classes`).
    Claims: every class of the baseline reaches the thesis's floor; a tenth of the data lowers the best classes' AP
    (both directional, on the intervals of :func:`class_ap_estimates`; ``test``, ``n_boot``, ``seed``: its
    bootstrap). ``selected[key][0]`` and ``test[key][1]`` may hold one row per replicate (``[G, C]``, ``[G, n, C]``):
    the curves, groups and the shown values are replicate 0's, the claims read every replicate."""
    sel = {k: np.atleast_2d(np.asarray(v[0], float))[0] for k, v in selected.items()}
    best_b, worst_b = float(sel["baseline"][groups["baseline"]["best"]].mean()), float(np.nanmin(sel["baseline"]))
    best_10 = float(sel["big 10"][groups["big 10"]["best"]].mean())
    worst_10 = float(sel["big 10"][groups["big 10"]["worst"]].mean())
    pub_a2, pub_a3 = published("muschiol2021-figA.2")["values"], published("muschiol2021-figA.3")["values"]
    scale_a2 = class_curve_verdict(
        pub_a2["best_classes_ap_approx"], best_b, "mean AP of the 10 best classes, big baseline"
    ).reason
    scale_a3 = class_curve_verdict(
        pub_a3["best_classes_ap_approx"], best_10, "mean AP of the 10 best classes, big 10"
    ).reason
    floor = pub_a2["worst_classes_ap_min"]
    worst, drop = class_ap_estimates(selected, groups, test, n_boot=n_boot, seed=seed)
    claim2 = Claim(
        "every class reaches the thesis's floor",
        f'Muschiol 2021, Fig A.2: "at least an average precision of {floor:g} is achieved for every class"',
        "big baseline, selected checkpoint: the worst class's AP",
        "direction",
        REPLICATED_TEST,
        boundary=float(floor),
        printed=repr(float(floor)),
    )
    claim3 = Claim(
        "a tenth of the data lowers the best classes' AP",
        "Muschiol 2021, Fig A.3 against Fig A.2",
        "mean AP of the 10 best classes at the selected checkpoints: big baseline − big 10",
        "direction",
        REPLICATED_TEST,
    )
    v2 = combine(
        {claim2.name: judged(claim2, worst, note=f"worst class AP {worst_b:.3f}")},
        context=f"Values not comparable: {scale_a2}",
    )
    v3 = combine(
        {claim3.name: judged(claim3, drop, note=f"best classes' AP big 10 {best_10:.3f} vs baseline {best_b:.3f}")},
        context=f"Values not comparable: {scale_a3}",
    )

    a2 = dict(
        best_classes_ap_approx=best_b,
        worst_classes_ap_min=worst_b,
        worst_class_ap_interval=[worst.low, worst.high],
        best_classes=[names[i] for i in groups["baseline"]["best"][:3]],
        **_class_curve_summary(*class_curves["baseline"][::-1], selected["baseline"], groups["baseline"]),
        **v2.as_record(),
    )
    a3 = dict(
        best_classes_ap_approx=best_10,
        worst_classes_ap_approx=worst_10,
        best_classes_ap_drop_interval=[drop.low, drop.high],
        best_classes_ap_decrease_vs_baseline_pct=float(100 * (1 - best_10 / best_b)),
        **_class_curve_summary(*class_curves["big 10"][::-1], selected["big 10"], groups["big 10"]),
        **v3.as_record(),
    )
    return a2, a3


#: Figs A.4 / A.5: a skilful class has ROC-AUC above the thesis's no-skill value (§2.1.3: "An AUC of <= 0.5
#: describes a model without any skill"; 0.5 is exact by definition, not a printed measurement).
NO_SKILL_AUC = 0.5

FIG_A_4 = Claim(
    "every plotted class shows skill",
    'Muschiol 2021, Fig A.4: "For the total training data, even the medium and worse performing classes offer a clear '
    'bump in the top-left direction for all classes"',
    "big baseline: the smallest ROC-AUC over the plotted best, medium and worst 10 classes",
    "direction",
    (unc.TEACHER_SEED, unc.TEST_SET),
    boundary=NO_SKILL_AUC,
)
FIG_A_5_SKILL = Claim(
    "the best and medium classes show skill",
    'Muschiol 2021, Fig A.5: "Only the worst class graphs for the “big 10” training data set are close to '
    'the diagonal, a no-skill classifier"',
    "big 10: the smallest ROC-AUC over each teacher's best and medium 10 classes",
    "direction",
    (unc.TEACHER_SEED, unc.TEST_SET),
    boundary=NO_SKILL_AUC,
)
FIG_A_5_WORST = Claim(
    "only the worst classes are near the diagonal",
    FIG_A_5_SKILL.sentence,
    "big 10: mean ROC-AUC of each teacher's medium 10 classes − its worst 10 (closer to the diagonal)",
    "direction",
    (unc.TEACHER_SEED, unc.TEST_SET),
)


def class_roc_statistics(
    labels: np.ndarray, probs: np.ndarray, rows: np.ndarray | None = None, groups: dict | None = None
) -> dict[str, float]:
    """One teacher's Figs A.4 / A.5 statistics on the test clips ``rows`` (None: all): classes ranked by AP on the
    full test set (``groups``, else :func:`.diagnostics.ranked_classes` here; fixed across resamples), then on
    ``rows`` the mean ROC-AUC per group, the smallest AUC over all plotted classes and over the best and medium ones,
    and the medium − worst gap. A class without positives or negatives on the resample scores NaN and is skipped."""
    groups = ranked_classes(per_class_ap(labels, probs)) if groups is None else groups
    y, p = (labels, probs) if rows is None else (labels[rows], probs[rows])
    plotted = np.concatenate(list(groups.values()))
    aucs = np.full(labels.shape[1], np.nan)
    with np.errstate(invalid="ignore"):
        aucs[plotted] = roc_auc_per_class(y[:, plotted], p[:, plotted])
    skill = np.concatenate([groups["best"], groups["medium"]])
    mean = {g: float(np.nanmean(aucs[idx])) for g, idx in groups.items()}
    return dict(
        **{f"mean_auc_{g}": m for g, m in mean.items()},
        min_auc_plotted=float(np.nanmin(aucs[plotted])),
        min_auc_best_medium=float(np.nanmin(aucs[skill])),
        medium_minus_worst_auc=mean["medium"] - mean["worst"],
    )


def class_roc_estimates(
    labels: np.ndarray, probs: np.ndarray, *, n_boot: int = 100, seed: int = 0
) -> tuple[dict[str, float], dict[str, unc.Estimate]]:
    """:func:`class_roc_statistics` of teacher 0 (the figure's) and, per statistic, its estimate: over the ``T``
    teachers of ``probs`` ``[T, n_test, C]`` (each ranked on its own AP) and ``n_boot`` paired resamples of the test
    clips (:func:`pate_study.reporting.uncertainty.combined_interval`); one teacher: the bootstrap alone, its training
    seed named as not replicated."""
    probs = np.asarray(probs)
    probs = probs[None] if probs.ndim == 2 else probs
    groups = [ranked_classes(per_class_ap(labels, p)) for p in probs]
    full = [class_roc_statistics(labels, p, groups=g) for p, g in zip(probs, groups)]
    rows = unc.bootstrap_rows(labels.shape[0], n_boot, seed)
    draws = [[class_roc_statistics(labels, p, r, g) for p, g in zip(probs, groups)] for r in rows]
    sources = [unc.TEACHER_SEED]
    est = {
        k: unc.combined_interval([f[k] for f in full], np.array([[d[k] for d in row] for row in draws]), sources)
        for k in ("min_auc_plotted", "min_auc_best_medium", "medium_minus_worst_auc")
    }
    return full[0], est


def class_roc_record(
    labels: np.ndarray, probs: np.ndarray, key: str, *, n_boot: int = 100, seed: int = 0
) -> dict[str, Any]:
    """Figs A.4 / A.5 on intervals (classes ranked by AP, :func:`.diagnostics.ranked_classes`). ``"baseline"``
    (:data:`FIG_A_4`): the smallest AUC over the plotted classes > 0.5, over the replicate single models (``probs``
    ``[G, n_test, C]``: one per replicate seed) and a bootstrap of the test clips. ``"big 10"``
    (:data:`FIG_A_5_SKILL`, :data:`FIG_A_5_WORST`): the best and medium classes all above 0.5, and the worst 10
    closer to the diagonal than the medium 10 (mean AUC medium − worst > 0); over the ensemble's teachers
    (``probs`` ``[T, n_test, C]``) and a bootstrap of the test clips. The worst 10 are ranked on the same test clips
    they are scored on (their AUC is biased low; the claims read the best / medium ones and a gap).

    Recorded: each judged statistic's estimate (the mean over the teachers or replicate models) beside its interval,
    and the plotted teacher's own value (teacher 0, the figure's) as ``<statistic>_figure_teacher``; the per-group
    mean AUCs are the plotted teacher's."""
    figure, est = class_roc_estimates(labels, probs, n_boot=n_boot, seed=seed)
    rec = {k: v for k, v in figure.items() if k not in est}
    if key == "baseline":
        v = judged(FIG_A_4, est["min_auc_plotted"], note=f"smallest plotted AUC {figure['min_auc_plotted']:.3f}")
    else:
        v = combine(
            {
                FIG_A_5_SKILL.name: judged(
                    FIG_A_5_SKILL, est["min_auc_best_medium"], note=f"teacher 0: {figure['min_auc_best_medium']:.3f}"
                ),
                FIG_A_5_WORST.name: judged(
                    FIG_A_5_WORST,
                    est["medium_minus_worst_auc"],
                    note=f"teacher 0: medium {figure['mean_auc_medium']:.3f} vs worst {figure['mean_auc_worst']:.3f}",
                ),
            }
        )
    judged_values = {k: e.value for k, e in est.items()}
    intervals = {f"{k}_interval": [e.low, e.high] for k, e in est.items()}
    figure_teacher = {f"{k}_figure_teacher": figure[k] for k in est}
    return dict(**rec, **judged_values, **intervals, **figure_teacher, n_boot=n_boot, **v.as_record())
