"""The rules that turn notebook 04's numbers (teachers on the released VGGish embeddings) into verdicts against
Muschiol 2021 (agrees, differs, inconclusive, not comparable; :mod:`pate_study.reporting.verdicts`): Table 4.1, the
teachers' curves, the ablations and the per-class figures. Each function states its rule; none reads a number typed
in: the thesis's values come from :func:`pate_study.reporting.registry.published`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from pate_study.learning.metrics import average_precision_per_class, roc_auc_per_class
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim, analytic, printed_half_unit
from pate_study.reporting.registry import published
from pate_study.reporting.verdicts import Verdict, combine, not_comparable, within_tolerance

from .diagnostics import (
    curve_wobble,
    curves,
    final_curve_means,
    occurrence_spread,
    per_class_ap,
    ranked_classes,
    sampler_spreads,
    sampler_statistics,
    top_class,
)
from .teachers import thesis_length_arms
from .verdict_rules import TEACHER, judged


def table_4_1_verdict(subset: str, label: str, paper: dict, ours: dict, kind: str) -> Verdict:
    """Sizes: not comparable (the thesis' crawled ~343k / ~96k clips vs the released bal_train
    embeddings); class number: must agree for "small" (15); for "big" ours is a documented rule."""
    if kind != "real":
        return not_comparable("synthetic stand-in data: sizes are of the stand-in, not of Audio Set")
    scale = (
        f"{ours['overall_size']:,} bal_train clips here vs {paper['overall_size']:,} crawled clips in the thesis "
        f"({ours['overall_size'] / paper['overall_size']:.1%}); test {ours['test_size']:,} official eval clips of "
        f"the subset vs {paper['test_size']:,} (the thesis' crawl lost removed videos)"
    )
    classes = within_tolerance(
        paper["class_number"],
        ours["class_number"],
        atol=printed_half_unit(str(paper["class_number"])),  # a printed count: half its last digit
        quantity="class number",
    )
    if classes.verdict == "agrees":
        return not_comparable(
            f"class number agrees ({ours['class_number']}); sizes differ by construction: {scale}",
            rule="class number exact; sizes not comparable (different clip sources)",
        )
    return not_comparable(
        f"class number {ours['class_number']} vs {paper['class_number']} (the thesis lists no "
        f"classes; ours is the documented ontology rule); {scale}",
        rule="class number exact; sizes not comparable (different clip sources)",
    )


def siren_verdict(source: str, shape: tuple[int, ...]) -> Verdict:
    """Fig 2.1 is an illustration of one (unnamed) siren clip: a synthetic stand-in cannot agree with it, and
    a real clip is another clip; the format (1001 frames x 64 bands for 10 s) holds by construction of
    the features, so it is stated, not counted as agreement."""
    fmt = f"{shape[0]} frames x {shape[1]} Mel bands (1001 x 64 for a 10 s clip by construction of the features)"
    if source.startswith("synthetic"):
        return not_comparable(
            f"synthetic stand-in siren, not the thesis' real clip; {fmt}",
            rule="an illustration of a clip: a stand-in cannot agree with it",
        )
    return not_comparable(
        f"a real Siren clip of Audio Set, not necessarily the thesis' (which it does not name); {fmt}",
        rule="an illustration of a clip: a different clip cannot agree with it",
    )


def thesis_baseline_maps() -> dict[str, float]:
    """The baseline teachers' mAP printed in the thesis' tables: small from Table A.1, big from Table 5.1
    (its Fig 5.1 text says ~0.65 / ~0.35 instead; notes §9)."""
    small = {r["n_teachers"]: r for r in published("muschiol2021-tableA.1")["rows"]}["baseline"]["map"]
    big = {r["n_teachers"]: r for r in published("muschiol2021-table5.1")["rows"]}["baseline"]["map_raw"]
    return {"small": float(small), "big": float(big)}


def scale_range(table41: pd.DataFrame) -> tuple[float, float]:
    """Smallest and largest ratio of our bal_train clips to the thesis' clips over the subsets (Table 4.1)."""
    r = table41.groupby("block").ratio_ours_to_thesis.first()
    return float(r.min()), float(r.max())


@dataclass(frozen=True)
class SeedComparison:
    """Two ablation arms compared seed replicate by seed replicate: ``a`` / ``b`` the arms' statistic per replicate
    (mean over the replicate's teachers), ``estimate`` the paired t-interval of ``a − b``
    (:func:`pate_study.reporting.uncertainty.paired_difference`); ``margin`` its mean and ``tolerance`` its
    half-width (recorded)."""

    a: np.ndarray
    b: np.ndarray
    estimate: unc.Estimate

    @property
    def margin(self) -> float:
        return self.estimate.value

    @property
    def tolerance(self) -> float:
        return self.estimate.half_width

    def as_record(self, name: str) -> dict[str, Any]:
        """``{name}_margin``, ``{name}_tolerance`` (the interval's half-width), ``{name}_interval`` and the per-seed
        differences ``{name}_per_seed``."""
        return {
            f"{name}_margin": self.margin,
            f"{name}_tolerance": self.tolerance,
            f"{name}_interval": [self.estimate.low, self.estimate.high],
            f"{name}_per_seed": [float(x) for x in self.a - self.b],
        }

    def claim(self, rule: str, reason: str, sentence: str = "Muschiol 2021, §5.1") -> Verdict:
        """The verdict of the claim ``a − b > 0`` (``rule``: the quantity) on the paired interval
        (:func:`pate_study.reporting.claims.judge`); ``reason``: the measured numbers."""
        claim = Claim(rule, sentence, rule, "direction", TEACHER)
        per_seed = ", ".join(f"{x:+.4f}" for x in self.a - self.b)
        return judged(claim, self.estimate, note=f"{reason}; per seed {per_seed}")


def seed_comparison(a: np.ndarray, b: np.ndarray) -> SeedComparison:
    """The rule every ablation of notebook 04 is decided by. Arms ``A`` and ``B`` train the same partitions with the
    same training seeds in replicate ``r`` (:func:`.pipeline.ablation_arms`), so they are compared as pairs:
    ``d_r = a_r − b_r`` (``a`` / ``b``: the statistic per replicate, :func:`replicate_values`), and the claim reads the
    95 % t-interval of the mean of ``d`` over the ``R`` replicates (no floor: the interval alone decides, *agrees* /
    *differs* only when it lies wholly on one side of 0). Needs ``R >= 2`` (one seed measures no spread)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(
            f"seed_comparison: expected two arms' values over the same >= 2 seed replicates (the notebook's "
            f'ablation["seeds"] >= 2), got shapes {a.shape} and {b.shape}'
        )
    return SeedComparison(a, b, unc.paired_difference(a, b, TEACHER))


def replicate_values(run: Any, what: str = "final") -> np.ndarray:
    """One ablation arm's statistic per seed replicate (``run.replicate``; None: one replicate), each the mean over the
    replicate's teachers: ``"final"`` mAP on the test set at the selected checkpoint, ``"first"`` curve-sample mAP at
    the first evaluation, ``"best_step"`` the selected step."""
    rep = np.zeros(run.n_teachers, int) if run.replicate is None else np.asarray(run.replicate)
    if what == "first":
        c = curves(run)
        per = c.iloc[0].reindex(range(run.n_teachers)).to_numpy(float)
    elif what in ("final", "best_step"):
        per = np.asarray(run.map if what == "final" else run.best_step, float)
    else:
        raise ValueError(f"what={what!r}: expected 'final', 'first' or 'best_step'")
    return np.array([float(np.nanmean(per[rep == r])) for r in np.unique(rep)])


def _best_other(ablation: dict, arms: dict, keep) -> Any:
    """The key of ``arms`` (value -> arm name) other than ``keep`` whose arm has the highest mean final mAP."""
    others = [k for k in arms if k != keep]
    return max(others, key=lambda k: replicate_values(ablation[arms[k]]).mean()) if others else None


def class_curve_verdict(thesis_value: float, ours: float, what: str) -> Verdict:
    """Figs A.2/A.3: per-class AP levels of the thesis' ResNets on log-Mel (274k / 27k clips) against our
    embedding MLPs on 6.2k / 0.6k clips: a different model, input and scale, so not comparable."""
    return not_comparable(
        f"{what}: {ours:.3f} here vs ~{thesis_value} in the thesis; embedding MLPs on 128-d VGGish clip "
        "embeddings of a few thousand clips vs ResNets on log-Mel of 274k / 27k clips",
        rule="per-class AP levels depend on model, input and data scale",
    )


FIG_5_4_MAP = Claim(
    "VGG slightly higher mAP",
    'Muschiol 2021, §5.1.2 / Fig 5.4: "For the VGG the AUC is worse, while the overall mAP is slightly better"',
    "final curve-sample mAP, VGG-11/19 teachers − ResNet-18/34 teachers (Welch over the teachers)",
    "direction",
    (unc.TEACHER_SEED,),
)
FIG_5_4_AUC = Claim(
    "VGG worse AUC",
    FIG_5_4_MAP.sentence,
    "final curve-sample AUC, ResNet-18/34 teachers − VGG-11/19 teachers (Welch over the teachers)",
    "direction",
    (unc.TEACHER_SEED,),
)


def family_finals(logmel: dict, architectures, metric: str) -> dict[str, np.ndarray]:
    """Per family ("vgg", "resnet"), every random-init teacher's last recorded curve-sample ``metric`` over the
    family's architectures (``logmel[(architecture, init)] = (history, ...)``)."""
    out: dict[str, list[float]] = {"vgg": [], "resnet": []}
    for a in architectures:
        family = next((f for f in out if a.startswith(f)), None)
        if family is None or (a, "random init") not in logmel:
            continue
        c = curves(logmel[a, "random init"][0], metric)
        out[family] += [float(c[t].dropna().iloc[-1]) for t in c.columns if c[t].notna().any()]
    return {f: np.asarray(v, float) for f, v in out.items()}


def architecture_verdict(logmel: dict, architectures) -> Verdict:
    """Fig 5.4 on real log-Mel clips: the thesis' VGGs reach "slightly higher mAP" (:data:`FIG_5_4_MAP`) but a worse
    AUC (:data:`FIG_5_4_AUC`) than its ResNets; each a Welch interval of the families' difference over their teachers
    (:func:`family_finals`; a family of one teacher enters as a constant, both of one: unbounded)."""

    def summary(x: np.ndarray) -> tuple[float, float, int]:
        return float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else float("nan"), int(x.size)

    claims = {}
    for claim, metric, sign in ((FIG_5_4_MAP, "mAP", 1), (FIG_5_4_AUC, "auc", -1)):
        fam = family_finals(logmel, architectures, metric)
        if not fam["vgg"].size or not fam["resnet"].size:
            claims[claim.name] = judged(claim, None, note="needs both VGG and ResNet arms")
            continue
        first, second = (fam["vgg"], fam["resnet"])[::sign]
        est = unc.welch_difference(summary(first), summary(second), claim.sources)
        claims[claim.name] = judged(
            claim, est, note=f"VGG {fam['vgg'].mean():.3f} vs ResNet {fam['resnet'].mean():.3f} ({metric})"
        )
    return combine(claims)


# ----------------------------------------------------------------------------- notebook 04: one record per item
def table_4_1_record(table41: pd.DataFrame) -> dict[str, Any]:
    """Table 4.1's recorded sizes and its verdict (sizes of different clip sources are not comparable)."""
    row = table41.query("block == 'big' and data_set == 'baseline'").iloc[0]
    small = table41.query("block == 'small'")
    v = not_comparable(
        f"{row.overall_size_ours:,} big bal_train clips here vs {row.overall_size_thesis:,} crawled clips; "
        f"{row.class_number_ours} vs {row.class_number_thesis} classes (ours: an ontology rule); per-row verdicts in "
        "the table",
        rule="sizes of different clip sources are not comparable; class number exact",
    )
    return dict(
        big_clips=int(row.overall_size_ours),
        big_classes=int(row.class_number_ours),
        big_test=int(row.test_size_ours),
        big_teacher_pool=int(row.overall_teacher_train_ours),
        small_clips=int(small.overall_size_ours.iloc[0]),
        small_classes=int(small.class_number_ours.iloc[0]),
        rows=len(table41),
        **v.as_record(),
    )


#: Sampler seeds Fig 5.9's spreads are replicated over (cheap: a sampler draws indices only).
SAMPLER_SEEDS = 5

FIG_5_9 = Claim(
    "balanced draws the classes more evenly",
    "Muschiol 2021, §4.4.2 / Fig 5.9: the balanced sampler's class occurrences are tighter than random sampling's",
    "(max/median occurrence, balanced) / (random's), geometric mean over sampler seeds",
    "ratio",
    (unc.SAMPLER_SEED,),
    side="below",
)


def sampler_record(
    occ: pd.DataFrame, iterations: int, batch_size: int, spreads: pd.DataFrame | None = None
) -> dict[str, Any]:
    """Fig 5.9 (§4.4.2): the balanced sampler's occurrences are tighter (max/median) than the random one's, judged
    on the ratio's interval over sampler seeds (``spreads``: :func:`.diagnostics.sampler_spreads`; without it one
    seed, inconclusive); its top class is recorded (not judged: it follows from the subset's class counts).
    ``occ``: :func:`.diagnostics.sampler_statistics` of the figure's seed with a ``class`` column."""
    spread = {k: occurrence_spread(occ[k]) for k in ("balanced", "random", "in_partition")}
    top_bal, top_bal_n = top_class(occ.balanced.to_numpy(), occ["class"].to_numpy())
    top_rand, _ = top_class(occ.random.to_numpy(), occ["class"].to_numpy())
    if spreads is not None and len(spreads) >= 2:
        ratio = unc.ratio_of_paired(spreads["balanced"], spreads["random"], FIG_5_9.sources)
        log_sd = unc.ratio_of_paired(spreads["balanced_log_sd"], spreads["random_log_sd"], FIG_5_9.sources)
        extra = {
            "spread_ratio_interval": [ratio.low, ratio.high],
            "sampler_seeds": [int(x) for x in spreads["seed"]],
            "log_count_sd_ratio": log_sd.value,
            "log_count_sd_ratio_interval": [log_sd.low, log_sd.high],
        }
        second = f"; sd of log counts, balanced / random: {log_sd.render('.3f')}"
    else:
        ratio = unc.unreplicated(spread["balanced"] / spread["random"], FIG_5_9.sources)
        extra, second = {}, ""
    v = judged(
        FIG_5_9,
        ratio,
        note=f"max/median occurrence balanced {spread['balanced']:.2f} vs random "
        f"{spread['random']:.2f} at the figure's seed{second}; on bal_train, already "
        "balanced (the thesis sampled its crawl of the unbalanced set), a weaker test of "
        "the same direction",
    )
    return dict(
        spread_balanced=spread["balanced"],
        spread_random=spread["random"],
        spread_partition=spread["in_partition"],
        top_class_balanced=top_bal,
        top_class_balanced_count=top_bal_n,
        top_class_random=top_rand,
        iterations=iterations,
        batch_size=batch_size,
        spread_ratio=ratio.value,
        **extra,
        classes_never_drawn_balanced=int((occ.balanced == 0).sum()),
        classes_never_drawn_random=int((occ.random == 0).sum()),
        **v.as_record(),
    )


FIG_5_1 = Claim(
    "fewer clips, lower mAP",
    "Muschiol 2021, §5.1 / Fig 5.1: the smaller each teacher's partition, the lower its mAP",
    "mean teacher mAP(T) − mean teacher mAP(next larger T), each subset (Welch over the ensembles' teachers)",
    "every-step",
    TEACHER,
)


def sampler_item(
    labels: np.ndarray,
    ids: np.ndarray,
    class_names,
    *,
    iterations: int,
    batch_size: int,
    seed: int,
    n_seeds: int = SAMPLER_SEEDS,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Fig 5.9 in one call: the figure's occurrences at ``seed`` (:func:`.diagnostics.sampler_statistics`, with a
    ``class`` column) and its record (:func:`sampler_record`) over ``n_seeds`` sampler seeds ``seed, seed + 1, ...``
    (:func:`.diagnostics.sampler_spreads`)."""
    occ = sampler_statistics(labels, ids, iterations=iterations, batch_size=batch_size, seed=seed)
    occ = occ.assign(**{"class": list(class_names)})
    spreads = sampler_spreads(
        labels, ids, iterations=iterations, batch_size=batch_size, seeds=range(seed, seed + n_seeds)
    )
    return occ, sampler_record(occ, iterations, batch_size, spreads)


def teacher_curves_record(runs: dict, subsets, teacher_counts, table41: pd.DataFrame) -> dict[str, Any]:
    """Fig 5.1: the baselines' mAP beside the thesis's (not comparable: models, inputs, scale), and whether fewer
    clips per teacher give a lower mean teacher mAP at every step up in the teacher count (:data:`FIG_5_1`; the
    teachers of an ensemble are its replicates of partition and training seed, the single baseline enters as a
    constant)."""
    pub = published("muschiol2021-fig5.1")["values"]
    ours_small, ours_big = runs["small", 1].map[0], runs["big", 1].map[0]
    raw = thesis_baseline_maps()
    pools = table41.query("data_set == 'baseline'").set_index("block")
    why = (
        f"the thesis' ~{pub['small_baseline_map_approx']} / ~{pub['big_baseline_map_approx']} are read off its curves "
        f"of ResNets on log-Mel of {pools.individual_teacher_train_thesis['small']:,}/"
        f"{pools.individual_teacher_train_thesis['big']:,} clips, selected on the test set; ours are embedding MLPs on "
        f"{pools.individual_teacher_train_ours['small']:,}/{pools.individual_teacher_train_ours['big']:,} clips "
        f"selected on validation; its own tables print {raw['small']} / {raw['big']}"
    )

    def summary(run) -> tuple[float, float, int]:
        m = np.asarray(run.map, float)
        return float(m.mean()), float(m.std(ddof=1)) if m.size > 1 else float("nan"), int(m.size)

    drops = [
        unc.welch_difference(summary(runs[s, a]), summary(runs[s, b]), TEACHER)
        for s in subsets
        for a, b in zip(teacher_counts, teacher_counts[1:])
    ]
    ordered = all(d.value > 0 for d in drops)
    steps = ", ".join(f"{s}: " + " > ".join(f"{runs[s, t].map.mean():.3f}" for t in teacher_counts) for s in subsets)
    v = judged(FIG_5_1, drops, note=f"mean teacher mAP {steps}")
    v = combine(
        {"fewer clips, lower mAP": v},
        context=(
            f"Values not comparable: small baseline mAP {ours_small:.3f} vs ~{pub['small_baseline_map_approx']}, big "
            f"{ours_big:.3f} vs ~{pub['big_baseline_map_approx']}: {why}"
        ),
    )
    return dict(
        small_baseline_map_approx=float(ours_small),
        big_baseline_map_approx=float(ours_big),
        small_baseline_auc=float(runs["small", 1].auc[0]),
        big_baseline_auc=float(runs["big", 1].auc[0]),
        **{f"{s}_{t}_mean_teacher_map": float(runs[s, t].map.mean()) for s in subsets for t in teacher_counts},
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
    (unc.TEST_SET,),
)


def micro_auc(labels: np.ndarray, probs: np.ndarray) -> float:
    """Micro-averaged ROC-AUC: the AUC of every (clip, class) pair pooled (Mann-Whitney, ties averaged)."""
    return float(roc_auc_per_class(np.asarray(labels).reshape(-1, 1), np.asarray(probs).reshape(-1, 1))[0])


def micro_auc_difference(test: dict, *, n_boot: int = 200, seed: int = 0) -> unc.Estimate:
    """Fig 5.3's difference, micro ROC-AUC big baseline − small baseline, with the percentile interval of independent
    bootstraps of the two test sets (``test[subset]``: labels and the baseline's probabilities; resamples from
    ``seed`` and ``seed + 1``); the baselines' training seeds are named as not replicated."""
    value = micro_auc(*test["big"]) - micro_auc(*test["small"])
    draws = [
        np.array(
            [micro_auc(test[s][0][r], test[s][1][r]) for r in unc.bootstrap_rows(len(test[s][0]), n_boot, seed + i)]
        )
        for i, s in enumerate(("big", "small"))
    ]
    return unc.from_bootstrap(value, draws[0] - draws[1], unreplicated=[unc.TEACHER_SEED])


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
    Welch intervals over that ensemble's teachers, the single baseline a constant), and the big baseline's micro
    ROC-AUC exceeds the small one's (:data:`FIG_5_3`: a bootstrap of both test sets, ``test_labels[subset]``; without
    them unbounded, inconclusive)."""
    t_max = teacher_counts[-1]

    def summary(run) -> tuple[float, float, int]:
        m = np.asarray(run.map, float)
        return float(m.mean()), float(m.std(ddof=1)) if m.size > 1 else float("nan"), int(m.size)

    steps = [unc.welch_difference(summary(runs[s, 1]), summary(runs[s, t_max]), TEACHER) for s in subsets]
    v2 = judged(
        FIG_5_2,
        steps,
        note=", ".join(
            f"{s}: baseline {runs[s, 1].map[0]:.3f} vs mean {runs[s, t_max].map.mean():.3f}" for s in subsets
        ),
    )
    if test_labels is not None and {"big", "small"} <= set(subsets):
        diff = micro_auc_difference(
            {s: (test_labels[s], runs[s, 1].probabilities[0]) for s in ("big", "small")}, n_boot=n_boot, seed=seed
        )
    else:
        diff = unc.unreplicated(auc_micro["big", 1] - auc_micro["small", 1], [unc.TEST_SET, unc.TEACHER_SEED])
    v3 = judged(FIG_5_3, diff, note=f"micro ROC-AUC big {auc_micro['big', 1]:.3f}, small {auc_micro['small', 1]:.3f}")
    fig52 = dict(
        **{f"{s}_{t}_teacher0_map": float(runs[s, t].map[0]) for s in subsets for t in teacher_counts}, **v2.as_record()
    )
    fig53 = dict(
        **{f"{s}_{t}_micro_auc": auc_micro[s, t] for s in subsets for t in teacher_counts},
        micro_auc_difference_interval=[diff.low, diff.high],
        **v3.as_record(),
    )
    return fig52, fig53


#: Fig 5.6's claim: the teachers of "big 10" differ no more than the finite test set alone makes them differ.
FIG_5_6 = Claim(
    "no significant difference between the teachers",
    'Muschiol 2021, §5.1.2 / Fig 5.6: "all teachers of the possible ensemble have similar learning progress and '
    "maximum scores ... There is no significant difference between the teachers if the training parameters remain the "
    'same"',
    "between-teacher spread of final mAP / the spread the test set's noise alone gives (mean of d_i² / v_i over the "
    "teachers; 1 when the teachers do not differ)",
    "level",
    (unc.TEACHER_SEED, unc.TEST_SET),
    boundary=1.0,
)


def teacher_spread_ratios(labels: np.ndarray, probs: np.ndarray, *, n_boot: int = 100, seed: int = 0) -> np.ndarray:
    """Per teacher ``z_i = d_i² / v_i``: ``d_i`` its final mAP minus the ensemble's mean on the full test set, ``v_i``
    the variance of that deviation over ``n_boot`` paired bootstrap resamples of the test clips (every teacher scored on
    the same rows, from ``seed``). If the teachers' true mAPs are equal, ``E[z_i] ≈ 1`` (the deviation is test-set
    noise alone; Cochran 1954's heterogeneity statistic per member); a teacher that truly differs has ``z_i > 1``.
    ``probs``: ``[T, n_test, C]``, ``labels``: ``[n_test, C]``; needs ``T >= 2``."""
    probs, labels = np.asarray(probs), np.asarray(labels)
    if probs.ndim != 3 or probs.shape[0] < 2 or probs.shape[1] != labels.shape[0]:
        raise ValueError(
            f"teacher_spread_ratios: expected probs [T >= 2, n_test, C] over labels' {labels.shape[0]} test clips, "
            f"got {probs.shape}"
        )
    full = np.nanmean(average_precision_per_class(np.broadcast_to(labels, probs.shape), probs), axis=-1)
    rows = unc.bootstrap_rows(labels.shape[0], n_boot, seed)
    draws = np.concatenate(
        [  # a few resamples x every teacher in one stacked call
            np.nanmean(
                average_precision_per_class(
                    np.broadcast_to(labels[chunk][:, None], (len(chunk), *probs.shape)), probs[:, chunk].swapaxes(0, 1)
                ),
                axis=-1,
            )
            for chunk in np.array_split(rows, max(1, n_boot // 4))
        ]
    )
    dev = draws - draws.mean(1, keepdims=True)  # [n_boot, T]: each teacher's deviation on the same resample
    v = dev.var(0, ddof=1)
    return (full - full.mean()) ** 2 / np.maximum(v, np.finfo(float).tiny)


def similar_teachers_record(
    run, labels: np.ndarray | None = None, *, n_boot: int = 100, seed: int = 0
) -> dict[str, Any]:
    """Fig 5.6: "no significant difference between the teachers" (:data:`FIG_5_6`): the mean over the teachers of
    :func:`teacher_spread_ratios` (a t-interval over the teachers, the replicates of partition and training seed; the
    test set enters through each ``v_i``), judged at 1 with no margin (the thesis prints none): *differs* when the
    interval lies wholly above 1 (the teachers differ beyond the test set's noise), else *inconclusive* (agreement
    would need a margin the thesis does not print, as for Fig A.1). Without ``labels`` nothing is resampled:
    unbounded, inconclusive. Range and mean of the final mAP / AUC recorded beside."""
    final = np.asarray(run.map, float)
    if labels is not None and run.probabilities is not None and len(run.probabilities) >= 2:
        z = teacher_spread_ratios(labels, run.probabilities, n_boot=n_boot, seed=seed)
        est = unc.t_interval(z, FIG_5_6.sources).within(0.0, math.inf)  # a ratio of squares: never below 0
        extra = {"spread_ratio_per_teacher": [float(x) for x in z], "n_boot": n_boot}
    else:
        est, extra = None, {}
    v = judged(
        FIG_5_6,
        est,
        note=f"final mAP {final.min():.3f}-{final.max():.3f} (mean {final.mean():.3f}) over {final.size} teachers; "
        "a ratio at 1 cannot agree without a margin the thesis does not print",
    )
    return dict(
        map_min=float(final.min()),
        map_max=float(final.max()),
        map_mean=float(final.mean()),
        auc_min=float(run.auc.min()),
        auc_max=float(run.auc.max()),
        spread_ratio=est.value if est else float("nan"),
        spread_ratio_interval=[est.low, est.high] if est else None,
        **extra,
        **v.as_record(),
    )


def _arm_map(ablation: dict, name: str) -> float:
    return float(ablation[name].map.mean())


def _seeds_record(ablation: dict, name: str) -> dict[str, Any]:
    run = ablation[name]
    seeds = 1 if run.replicate is None else int(np.unique(run.replicate).size)
    return {"seeds": seeds, "teachers_per_seed": run.n_teachers // seeds}


def mixup_record(ablation: dict) -> dict[str, Any]:
    """Fig 5.7, §5.1.3's two claims on mixup, each decided by :func:`seed_comparison`: "a slight improvement can be
    seen ... if the mixup technique is applied" (final mAP with mixup − without > 0) and "especially in the early
    stages of the training, mixup helps to learn faster" (curve-sample mAP at the first evaluation with − without
    > 0); the item's verdict combines both (:func:`pate_study.reporting.verdicts.combine`)."""
    with_, without = ablation["recipe"], ablation["no mixup"]
    final = seed_comparison(replicate_values(with_), replicate_values(without))
    early = seed_comparison(replicate_values(with_, "first"), replicate_values(without, "first"))
    step = int(curves(with_).index[0])
    v_final = final.claim(
        '"slight improvement": final mAP with mixup − without > 0',
        f"final mAP {final.a.mean():.3f} with vs {final.b.mean():.3f} without",
    )
    v_early = early.claim(
        f'"mixup helps to learn faster" early: mAP at the first evaluation (step {step}) with mixup − without > 0',
        f"first-evaluation mAP {early.a.mean():.3f} with vs {early.b.mean():.3f} without",
    )
    v = combine(
        {"slight improvement": v_final, "learns faster early": v_early},
        context="mixup on 128-d clip embeddings of embedding MLPs, not on log-Mel images of ResNets",
    )
    return dict(
        map_mixup=float(final.a.mean()),
        map_no_mixup=float(final.b.mean()),
        first_eval_map_mixup=float(early.a.mean()),
        first_eval_map_no_mixup=float(early.b.mean()),
        first_eval_step=step,
        verdict_slight_improvement=v_final.verdict,
        verdict_learns_faster_early=v_early.verdict,
        **final.as_record("final"),
        **early.as_record("first_eval"),
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def sampler_arm_record(ablation: dict) -> dict[str, Any]:
    """Fig 5.8: the thesis's direction, "the classifier learns much slower with the random sampling technique" (§5.1):
    curve-sample mAP at the first evaluation, balanced − random > 0, decided by :func:`seed_comparison`. On
    bal_train, already balanced, a weaker test of the same direction; oscillation and final mAP are recorded beside."""
    bal, rnd = ablation["recipe"], ablation["random sampler"]
    early = seed_comparison(replicate_values(bal, "first"), replicate_values(rnd, "first"))
    final = seed_comparison(replicate_values(bal), replicate_values(rnd))
    osc = {k: curve_wobble(ablation[k]) for k in ("recipe", "random sampler")}
    v = early.claim(
        "balanced sampling learns faster: first-evaluation mAP balanced − random > 0",
        f"first-evaluation mAP balanced {early.a.mean():.3f} vs random {early.b.mean():.3f}; final mAP "
        f"balanced − random {final.margin:+.3f} (± {final.tolerance:.3f}); on bal_train, already balanced (the "
        "thesis sampled its crawl of the unbalanced set, where Speech has 1M labels), a weaker test of the "
        "same direction",
    )
    return dict(
        map_balanced=float(final.a.mean()),
        map_random=float(final.b.mean()),
        first_eval_map_balanced=float(early.a.mean()),
        first_eval_map_random=float(early.b.mean()),
        mean_abs_curve_change_balanced=osc["recipe"],
        mean_abs_curve_change_random=osc["random sampler"],
        **early.as_record("first_eval"),
        **final.as_record("final"),
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def batch_size_record(ablation: dict, by_arm: dict, by_arm_epochs: dict, recipe_batch: int = 64) -> dict[str, Any]:
    """Fig 5.10: "the batch size of 64 achieves the best mAP" (the recipe's batch is 64), compared twice, each by
    :func:`seed_comparison` against the best other batch: at equal STEPS (``by_arm``: batch size -> arm name; a
    larger batch sees more clips per step, batch 64 eight times batch 8's) and at equal EPOCHS (``by_arm_epochs``: the
    same clips seen, :func:`.teachers.equal_epochs`; the recipe's own batch maps to the recipe arm in both). Both
    comparisons are recorded; the item's verdict combines them."""
    rec, claims = {}, {}
    for label, arms in (("equal_steps", by_arm), ("equal_epochs", by_arm_epochs)):
        by_batch = {b: float(replicate_values(ablation[a]).mean()) for b, a in arms.items()}
        rec.update(
            {f"map_batch_{b}" + ("" if label == "equal_steps" else "_equal_epochs"): m for b, m in by_batch.items()}
        )
        other = _best_other(ablation, arms, recipe_batch)
        if recipe_batch not in arms or other is None:
            claims[label] = not_comparable(
                "not evaluable on this run: one batch size only",
                rule=f"final mAP at batch {recipe_batch} − the best other batch > 0 ({label.replace('_', ' ')})",
            )
            continue
        c = seed_comparison(replicate_values(ablation[arms[recipe_batch]]), replicate_values(ablation[arms[other]]))
        rec.update(c.as_record(label))
        claims[label] = c.claim(
            f"final mAP at batch {recipe_batch} − the best other batch ({other}) > 0 at {label.replace('_', ' ')}",
            ", ".join(f"batch {b}: {m:.3f}" for b, m in by_batch.items()),
        )
        rec[f"best_batch_{label}"] = int(max(by_batch, key=by_batch.get))
    v = combine(
        {
            "batch 64 best at equal steps": claims["equal_steps"],
            "batch 64 best at equal epochs": claims["equal_epochs"],
        },
        context="the thesis compares over iterations (equal steps); at equal epochs every batch sees the same clips",
    )
    best = rec.get("best_batch_equal_steps", recipe_batch)
    return dict(
        rec,
        best_batch=best,
        best_batch_size=best,
        verdict_equal_steps=claims["equal_steps"].verdict,
        verdict_equal_epochs=claims["equal_epochs"].verdict,
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def final_slope(run: Any, per_steps: int = 1000) -> unc.Estimate:
    """How fast an arm still improves at its end: per seed replicate, the mean over its teachers of the curve-sample
    mAP change between the last two evaluations, per ``per_steps`` steps; a t-interval over the replicates
    (:func:`pate_study.reporting.uncertainty.t_interval`; one replicate: unbounded). A slope whose interval lies wholly
    above 0 is a run cut off while still improving."""
    c = curves(run.history)
    if len(c) < 2:
        return unc.unreplicated(0.0, TEACHER)
    steps = c.index.to_numpy(float)
    per = (c.iloc[-1] - c.iloc[-2]).reindex(range(run.n_teachers)).to_numpy(float) * per_steps / (steps[-1] - steps[-2])
    rep = np.zeros(run.n_teachers, int) if run.replicate is None else np.asarray(run.replicate)
    return unc.t_interval([float(np.nanmean(per[rep == r])) for r in np.unique(rep)], TEACHER)


def cut_off(v: Verdict, still_improving: float, lr: float, slope: unc.Estimate | None = None) -> Verdict:
    """A claim in favour of the lowest rate judged on a run cut off before it converged: when some of its teachers
    still improve at their last step (``still_improving``: their share) or its end slope (:func:`final_slope`) lies
    wholly above 0, its final mAP and selected step are lower bounds of the converged ones, so a *differs* (the lowest
    rate behind) is not shown and becomes *inconclusive*, marked cut off, the slope and its interval in the reason;
    an *agrees* stands (the bound already clears the other rate). Running the rate to convergence instead is outside
    the paper profile's time budget (the thesis-length arm already trains 10,000 steps)."""
    rising = slope is not None and slope.low > 0
    if v.verdict != "differs" or (still_improving <= 0 and not rising):
        return v
    at_end = f"; mAP change per 1,000 steps at its end {slope.render('.4f')}" if slope is not None else ""
    return Verdict(
        "inconclusive",
        v.rule,
        f"cut off: {100 * still_improving:.0f} % of the lr {lr:g} teachers still "
        f"improve at their last step{at_end}, so its numbers are lower bounds of the converged ones; {v.reason}",
        basis=v.basis,
        estimate=v.estimate,
        evidence=v.evidence,
    )


def learning_rate_record(ablation: dict, by_arm: dict, steps: int, long_arms: dict | None = None) -> dict[str, Any]:
    """Fig 5.12, §5.1.3: "learning rates greater than 0.0001 let the model converge early, but the best performance
    is reached with the lowest evaluated learning rate". Two claims, each by :func:`seed_comparison`: final mAP at the
    lowest rate − the other's > 0, and the selected (best validation) step at the lowest rate − at the other's > 0
    (converges later; floor: one evaluation spacing). Both are judged at the thesis's length where the run has those
    arms (``long_arms``: the lowest rate and the recipe's over :data:`.teachers.THESIS_ITERATIONS` steps without early
    stopping, :func:`.teachers.thesis_length`), since on the recipe's schedule (``by_arm``: learning rate -> arm name,
    against the best other rate) early stopping ends the slow rate near the class prior long before it converges;
    the recipe-schedule verdicts are recorded beside (``verdict_*_recipe_schedule``)."""
    by_lr = {lr: float(replicate_values(ablation[a]).mean()) for lr, a in by_arm.items()}
    low, other = min(by_lr), _best_other(ablation, by_arm, min(by_lr))
    best = max(by_lr, key=by_lr.get)
    rec = dict(
        **{f"map_lr_{lr:g}": m for lr, m in by_lr.items()},
        **{
            f"best_step_lr_{lr:g}": float(replicate_values(ablation[a], "best_step").mean()) for lr, a in by_arm.items()
        },
        best_lr=float(best),
        recommended_learning_rate=float(best),
    )
    if other is None:
        v = not_comparable(
            "not evaluable on this run: one learning rate only",
            rule="final mAP at the lowest learning rate − the best other > 0",
        )
        return dict(rec, **v.as_record())
    lo, hi = ablation[by_arm[low]], ablation[by_arm[other]]
    final = seed_comparison(replicate_values(lo), replicate_values(hi))
    conv = seed_comparison(replicate_values(lo, "best_step"), replicate_values(hi, "best_step"))
    v_short = final.claim(
        f"final mAP at the lowest rate ({low:g}) − the best other rate ({other:g}) > 0 on the recipe's "
        f"schedule (at most {steps} steps, early stopping)",
        ", ".join(f"lr {lr:g}: {m:.3f}" for lr, m in by_lr.items())
        + f" (lr {low:g}: mean selected step {conv.a.mean():.0f}"
        + (
            f", then early stopping after {lo.spec.patience} evaluations without a better validation mAP)"
            if lo.spec.patience
            else f" of {steps}, no early stopping)"
        ),
    )
    v_conv = conv.claim(
        f"larger rates converge earlier: selected step at {low:g} − at {other:g} > 0",
        f"mean selected step {conv.a.mean():.0f} at {low:g} vs {conv.b.mean():.0f} at {other:g} of at most {steps}",
    )
    extra: dict[str, Any] = {}
    long_arms = {lr: a for lr, a in (long_arms or {}).items() if a in ablation}
    v_best = v_short
    if len(long_arms) == 2:
        (l_lr, l_arm), (o_lr, o_arm) = sorted(long_arms.items())
        long_lo, long_hi = ablation[l_arm], ablation[o_arm]
        long = seed_comparison(replicate_values(long_lo), replicate_values(long_hi))
        n_long = int(long_lo.spec.steps)
        still = float(np.mean(np.asarray(long_lo.best_step) >= n_long))
        v_best = long.claim(
            f"final mAP at the lowest rate ({l_lr:g}) − the recipe's ({o_lr:g}) > 0 at the thesis's length "
            f"({n_long} steps, no early stopping)",
            f"lr {l_lr:g}: {long.a.mean():.3f}, lr {o_lr:g}: {long.b.mean():.3f} after {n_long} steps; "
            f"{100 * still:.0f} % of the lr {l_lr:g} teachers select their last step (still improving)",
        )
        long_conv = seed_comparison(replicate_values(long_lo, "best_step"), replicate_values(long_hi, "best_step"))
        v_conv_short, v_conv = (
            v_conv,
            long_conv.claim(
                f"larger rates converge earlier: selected step at {l_lr:g} − at {o_lr:g} > 0 at the thesis's length",
                f"mean selected step {long_conv.a.mean():.0f} at {l_lr:g} vs {long_conv.b.mean():.0f} at {o_lr:g} of "
                f"{n_long}",
            ),
        )
        slope = final_slope(long_lo)
        v_best, v_conv = cut_off(v_best, still, l_lr, slope), cut_off(v_conv, still, l_lr, slope)
        extra = dict(
            **long.as_record("thesis_length"),
            **long_conv.as_record("thesis_length_best_step"),
            map_lr_thesis_length={f"{l_lr:g}": float(long.a.mean()), f"{o_lr:g}": float(long.b.mean())},
            thesis_length_steps=n_long,
            lowest_rate_share_selecting_last_step=still,
            lowest_rate_end_slope_per_1000_steps=slope.value,
            lowest_rate_end_slope_interval=[slope.low, slope.high],
            lowest_rate_cut_off=bool(still > 0 or slope.low > 0),
            verdict_lowest_rate_best_recipe_schedule=v_short.verdict,
            verdict_larger_rates_converge_earlier_recipe_schedule=v_conv_short.verdict,
        )
    v = combine(
        {"lowest rate best": v_best, "larger rates converge earlier": v_conv},
        context=""
        if len(long_arms) == 2
        else "no thesis-length arms in this run: the final mAP is compared "
        "on the recipe's schedule, where early stopping may decide it as much as the rate",
    )
    return dict(
        rec,
        compared_lr=float(other),
        verdict_lowest_rate_best=v_best.verdict,
        verdict_larger_rates_converge_earlier=v_conv.verdict,
        **final.as_record("final"),
        **conv.as_record("best_step"),
        **extra,
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def adaptive_weights_record(ablation: dict, weight_max: float, weight_temperature: float) -> dict[str, Any]:
    """Fig 5.11: plain BCE against adaptive class weights, "no positive effect": final mAP plain − adaptive > 0 by
    :func:`seed_comparison` (the rule of :func:`adaptive_weights_verdict` with the tolerance from the seeds)."""
    trace = ablation["adaptive weights"].weight_trace
    spread = float((trace["max"] / trace["min"]).max()) if trace is not None and len(trace) else 1.0
    c = seed_comparison(replicate_values(ablation["recipe"]), replicate_values(ablation["adaptive weights"]))
    v = c.claim(
        'plain BCE final mAP − adaptive-weight final mAP > 0 ("no positive effect")',
        f"adaptive class weights change the final mAP by {-c.margin:+.3f} (embedding MLPs, validation-based weights)",
    )
    return dict(
        map_plain=float(c.a.mean()),
        map_adaptive=float(c.b.mean()),
        auc_plain=float(ablation["recipe"].auc.mean()),
        auc_adaptive=float(ablation["adaptive weights"].auc.mean()),
        weight_max=weight_max,
        weight_temperature=weight_temperature,
        largest_weight_ratio_between_classes=spread,
        weights_from="validation per-class AP",
        **c.as_record("final"),
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


FIG_5_4_SPEED = Claim(
    "ResNets train up to five times faster than VGG",
    'Muschiol 2021, §5.1.2: "The thesis mainly uses Resnets as their training time is up to five times lower than for '
    "a comparable VGG net. This primarily originates from the additional parameters in the model that require "
    'additional calculation for the gradients"',
    "training work per clip VGG / ResNet (FLOPs of one forward and backward pass), the larger of the comparable "
    "pairs VGG-11 / ResNet-18 and VGG-19 / ResNet-34, at the thesis's widths on its 1001 x 64 input",
    "range",
    (),
    boundary=1.0,
    upper=5.0,
    printed_upper="5",  # the thesis writes "five": an integer, its unit 1
)


def work_ratio(flops: dict[str, float]) -> unc.Estimate | None:
    """The "up to" factor of :data:`FIG_5_4_SPEED`: the larger of VGG-11 / ResNet-18 and VGG-19 / ResNet-34 over the
    pairs counted (:func:`.teachers.training_flops`), exact (no random source); None without a comparable pair."""
    pairs = [(v, r) for v, r in (("vgg11", "resnet18"), ("vgg19", "resnet34")) if v in flops and r in flops]
    return unc.exact(max(flops[v] / flops[r] for v, r in pairs)) if pairs else None


def speed_verdict(flops: dict[str, float] | None) -> Verdict:
    """:data:`FIG_5_4_SPEED` checked analytically on :func:`work_ratio`: the counted work of the architectures at the
    thesis's widths follows from their layers for any data, so the check is labelled "analytic: holds for any data"
    and never counts as evidence (:func:`pate_study.reporting.claims.analytic`); it holds when the ratio lies in
    [1, 5] widened by half the printed "five"'s last digit. The thesis states training *time* on its (unstated) GPU;
    the work is the cause it names, a measured time differs between runs of the same seed (recorded scalars may
    not) and on a CPU measures other hardware: the derivation says so. Without a comparable pair: not comparable."""
    ratio = None if flops is None else work_ratio(flops)
    if ratio is None:
        return judged(FIG_5_4_SPEED, None, note="needs a VGG and its comparable ResNet")
    lo, hi = FIG_5_4_SPEED.band()
    per = ", ".join(f"{a} {f / 1e9:.1f}" for a, f in flops.items())
    return analytic(
        FIG_5_4_SPEED,
        lo <= ratio.value <= hi,
        f"VGG / ResNet training work per clip up to {ratio.value:.2f}x (GFLOP per clip and step: {per}), against "
        f"the printed 'up to five times' ([{lo:g}, {hi:g}] with its precision); counted work, not time: the thesis "
        "times its GPU (hardware not stated), and equal work can take unequal time on other hardware",
    )


def architecture_record(
    logmel: dict,
    architectures,
    synthetic_clips: bool,
    ablation: dict,
    ablation_hidden,
    hidden,
    flops: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Fig 5.4: the log-Mel CNNs' final mAP / AUC per architecture (random init; :func:`.pipeline.logmel_arms`'s
    runs); on synthetic clips not comparable, on real clips :func:`architecture_verdict` (intervals over teachers).
    Beside them the embedding MLPs' analogue: the final mAP of each width of the ablations (``ablation_hidden``; the
    recipe's own width ``hidden`` is the "recipe" arm). ``flops``: each architecture's training work per clip at the
    thesis's widths (:func:`.teachers.training_flops`), for "ResNets train up to five times faster"
    (:func:`speed_verdict`); the item's verdict combines both claims."""
    final_cnn = {a: v for (a, _), v in final_curve_means(logmel, [(a, "random init") for a in architectures]).items()}
    mlp_analogue = {
        "-".join(map(str, h)): _arm_map(ablation, f"MLP {tuple(h)}" if list(h) != list(hidden) else "recipe")
        for h in ablation_hidden
    }
    curves_v = (
        not_comparable(
            "synthetic log-Mel clips at reduced width on the CPU: the code path, not the thesis' experiment",
            rule="different data",
        )
        if synthetic_clips
        else architecture_verdict(logmel, architectures)
    )
    speed_v = speed_verdict(flops)
    ratio = None if flops is None else work_ratio(flops)
    v = combine({"curves (mAP / AUC)": curves_v, FIG_5_4_SPEED.name: speed_v})
    timing = (
        {}
        if ratio is None
        else {
            "resnet_training_time_advantage_max_factor": ratio.value,
            "training_gflop_per_clip": {a: f / 1e9 for a, f in flops.items()},
        }
    )
    return dict(
        **timing,
        verdict_curves=curves_v.verdict,
        verdict_speed=speed_v.verdict,
        **{f"final_map_{a}": final_cnn[a]["mAP"] for a in final_cnn},
        **{f"final_auc_{a}": final_cnn[a]["auc"] for a in final_cnn},
        synthetic_clips=synthetic_clips,
        mlp_analogue=mlp_analogue,
        **v.as_record(),
    )


def transfer_record(logmel: dict, arms) -> dict[str, Any]:
    """Fig 5.5: without ImageNet weights (no network here) only the random-init arm's code path runs. ``arms``: the
    keys of ``logmel`` plotted (one architecture, each initialisation)."""
    pretrained_run, weights = any(k[1] == "ImageNet" for k in arms), [logmel[k][1] for k in arms]
    v = not_comparable(
        "no ImageNet weights file here (no network) and synthetic clips: only the random-init arm's code path runs"
        if not pretrained_run
        else "reduced-width models on this machine's clips",
        rule="different data",
    )
    return dict(pretrained_arm_run=pretrained_run, weights=weights, **v.as_record())


FIG_A_1 = Claim(
    "no correlation between training clips and AP",
    'Muschiol 2021, Fig A.1: "no correlation" between a class\'s number of training clips and its average precision',
    "Spearman rho(training clips per class, AP per class)",
    "level",
    ("classes",),
    boundary=0.0,
)


def spearman_estimate(counts: np.ndarray, ap: np.ndarray, *, n_boot: int = 1000, seed: int = 0) -> unc.Estimate:
    """Spearman's rho between per-class training clips and AP with the percentile interval of a bootstrap over the
    classes (``n_boot`` resamples from ``seed``); the teacher's seed and the test set are named as not replicated."""
    ok = np.isfinite(ap)
    c, a = np.asarray(counts, float)[ok], np.asarray(ap, float)[ok]
    rows = unc.bootstrap_rows(len(a), n_boot, seed)
    with np.errstate(invalid="ignore"):
        draws = np.array([spearmanr(c[r], a[r]).statistic for r in rows], float)
    return unc.from_bootstrap(
        float(spearmanr(c, a).statistic), draws, sources=FIG_A_1.sources, unreplicated=[unc.TEACHER_SEED, unc.TEST_SET]
    )


def class_ap_record(ap: np.ndarray, counts: np.ndarray, names, *, seed: int = 0) -> dict[str, Any]:
    """Fig A.1: "no correlation" between a class's training clips and its AP (:data:`FIG_A_1`): rho = 0, judged on
    the bootstrap interval over classes (:func:`spearman_estimate`). The thesis prints no number, so no band: the
    claim differs when the interval excludes 0 and is otherwise inconclusive (absence of a correlation cannot be
    shown without a margin the thesis does not give). Boing vs male speech AP and clip factors beside."""
    rho = spearman_estimate(counts, ap, seed=seed)
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


#: The random sources behind one teacher's per-class AP on the test set.
ENSEMBLE_TEST = (unc.TEST_SET,)


def class_ap_estimates(
    selected: dict, groups: dict, test: dict | None, *, n_boot: int = 100, seed: int = 0
) -> tuple[unc.Estimate, unc.Estimate]:
    """Figs A.2 / A.3's two numbers with their intervals: the big baseline's worst per-class AP, and the mean AP of
    the 10 best classes (ranked once, on the full test set) baseline − big 10. ``test[key]``: ``(labels, teacher 0's
    probabilities)`` on the same test clips for "baseline" and "big 10": a paired percentile bootstrap of the test
    clips (``n_boot`` resamples from ``seed``). Without ``test`` (or with test sets of different sizes) nothing is
    resampled: unbounded, inconclusive. The teacher's own training seed is not replicated (one teacher 0 per set)."""
    sel = {k: np.asarray(v[0], float) for k, v in selected.items()}
    best = {k: groups[k]["best"] for k in ("baseline", "big 10")}
    worst = float(np.nanmin(sel["baseline"]))
    drop = float(sel["baseline"][best["baseline"]].mean() - sel["big 10"][best["big 10"]].mean())
    sizes = {len(test[k][0]) for k in ("baseline", "big 10")} if test else set()
    if len(sizes) != 1:
        return (
            unc.unreplicated(worst, [unc.TEST_SET, unc.TEACHER_SEED]),
            unc.unreplicated(drop, [unc.TEST_SET, unc.TEACHER_SEED]),
        )
    rows = unc.bootstrap_rows(sizes.pop(), n_boot, seed)
    ap = {
        k: np.stack([average_precision_per_class(test[k][0][r], test[k][1][r]) for r in rows])
        for k in ("baseline", "big 10")
    }
    worst_draws = np.nanmin(ap["baseline"], axis=1)
    drop_draws = np.nanmean(ap["baseline"][:, best["baseline"]], axis=1) - np.nanmean(
        ap["big 10"][:, best["big 10"]], axis=1
    )
    return (
        unc.from_bootstrap(worst, worst_draws, unreplicated=[unc.TEACHER_SEED]),
        unc.from_bootstrap(drop, drop_draws, unreplicated=[unc.TEACHER_SEED]),
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
    bootstrap)."""
    sel = {k: np.asarray(v[0], float) for k, v in selected.items()}
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
        ENSEMBLE_TEST,
        boundary=float(floor),
        printed=repr(float(floor)),
    )
    claim3 = Claim(
        "a tenth of the data lowers the best classes' AP",
        "Muschiol 2021, Fig A.3 against Fig A.2",
        "mean AP of the 10 best classes at the selected checkpoints: big baseline − big 10",
        "direction",
        ENSEMBLE_TEST,
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
    (unc.TEST_SET,),
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
    (:data:`FIG_A_4`): the smallest AUC over the plotted classes > 0.5 (one teacher by design: a bootstrap of the
    test clips). ``"big 10"`` (:data:`FIG_A_5_SKILL`, :data:`FIG_A_5_WORST`): the best and medium classes all above
    0.5, and the worst 10 closer to the diagonal than the medium 10 (mean AUC medium − worst > 0); over the
    ensemble's teachers (``probs`` ``[T, n_test, C]``) and a bootstrap of the test clips. The worst 10 are ranked on
    the same test clips they are scored on (their AUC is biased low; the claims read the best / medium ones and a
    gap)."""
    if key == "baseline":
        probs = np.asarray(probs)
        probs = probs[:1] if probs.ndim == 3 else probs
    rec, est = class_roc_estimates(labels, probs, n_boot=n_boot, seed=seed)
    if key == "baseline":
        v = judged(FIG_A_4, est["min_auc_plotted"], note=f"smallest plotted AUC {rec['min_auc_plotted']:.3f}")
    else:
        v = combine(
            {
                FIG_A_5_SKILL.name: judged(
                    FIG_A_5_SKILL, est["min_auc_best_medium"], note=f"teacher 0: {rec['min_auc_best_medium']:.3f}"
                ),
                FIG_A_5_WORST.name: judged(
                    FIG_A_5_WORST,
                    est["medium_minus_worst_auc"],
                    note=f"teacher 0: medium {rec['mean_auc_medium']:.3f} vs worst {rec['mean_auc_worst']:.3f}",
                ),
            }
        )
    intervals = {f"{k}_interval": [e.low, e.high] for k, e in est.items()}
    return dict(**rec, **intervals, n_boot=n_boot, **v.as_record())


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
    mean = {k: float(r.map.mean()) for k, r in runs.items()}
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
        f"{runs['small', 1].map[0]:.3f} / {runs['big', 1].map[0]:.3f}. Not comparable: our teachers see 128-d clip "
        "embeddings (VGGish, trained by Google on YouTube-8M, i.e. already a strong pretrained audio representation) "
        "instead of log-Mel images through an ImageNet ResNet, train on "
        + "{:.1%}-{:.1%}".format(*scale_range(table41))
        + " of the clips, and are selected on a validation split instead of the test set (the thesis' choice is "
        "optimistic by construction).",
        f"* **Ablations** ({r57['teachers_per_seed']} teachers of big 10 x {r57['seeds']} training seeds per arm; each "
        "difference is the mean over seeds of the paired difference, ± the half-width of its 95 % t-interval over "
        f"seeds). **Mixup**: final mAP {r57['final_margin']:+.3f} ± {r57['final_tolerance']:.3f} "
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
                "* **Similar teachers (Fig 5.6)**: their spread of final mAP is "
                f"{records['fig5.6']['spread_ratio']:.2f} times what the test set's noise alone gives "
                "[{:.2f}, {:.2f}]".format(*records["fig5.6"]["spread_ratio_interval"])
                + f" ({records['fig5.6']['verdict']} with 'no significant difference'; without a printed margin "
                "it cannot agree)."
            ]
            if records.get("fig5.6", {}).get("spread_ratio_interval")
            else []
        ),
        f"* **Adaptive class weights (Fig 5.11)** change the big-10 final mAP by {-r511['final_margin']:+.3f} ± "
        f"{r511['final_tolerance']:.3f} (AUC "
        f"{ablation['adaptive weights'].auc.mean() - ablation['recipe'].auc.mean():+.3f}) with weights spread up to "
        f"{r511['largest_weight_ratio_between_classes']:.1f}x between classes: {r511['verdict']} with the thesis' "
        "'no positive effect'.",
    ]


def ablation_records(
    ablation: dict, spec, batch_sizes, learning_rates, weight_max: float, weight_temperature: float
) -> list[tuple[str, list[str], str, dict]]:
    """Notebook 04's ablation items in order (Figs 5.7, 5.8, 5.10, 5.12, 5.11): ``(item, arms plotted, title,
    record)``; the arms of batch size and learning rate are the recipe's own (``spec``) or ``"batch b"`` (equal
    steps), ``"batch b, equal epochs"`` / ``"lr x"`` (:func:`.teachers.ablation_settings`)."""
    batch_arms = {b: ("recipe" if b == spec.batch_size else f"batch {b}") for b in batch_sizes}
    epoch_arms = {b: ("recipe" if b == spec.batch_size else f"batch {b}, equal epochs") for b in batch_sizes}
    lr_arms = {lr: ("recipe" if lr == spec.lr else f"lr {lr:g}") for lr in learning_rates}
    long_arms = {lr: a for lr, a in thesis_length_arms(spec, learning_rates).items() if a in ablation}
    batch_plotted = list(dict.fromkeys([*batch_arms.values(), *epoch_arms.values()]))
    return [
        ("muschiol2021-fig5.7", ["recipe", "no mixup"], "mixup", mixup_record(ablation)),
        (
            "muschiol2021-fig5.8",
            ["recipe", "random sampler"],
            "balanced vs random sampler",
            sampler_arm_record(ablation),
        ),
        (
            "muschiol2021-fig5.10",
            batch_plotted,
            "batch size",
            batch_size_record(ablation, batch_arms, epoch_arms, spec.batch_size),
        ),
        (
            "muschiol2021-fig5.12",
            [*lr_arms.values(), *long_arms.values()],
            "learning rate",
            learning_rate_record(ablation, lr_arms, spec.steps, long_arms),
        ),
        (
            "muschiol2021-fig5.11",
            ["recipe", "adaptive weights"],
            "plain BCE vs adaptive class weights",
            adaptive_weights_record(ablation, weight_max, weight_temperature),
        ),
    ]
