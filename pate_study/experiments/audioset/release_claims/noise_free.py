"""Notebook 05's noise-free tables, Tables 5.1 to 5.3: the setup, the ensembles' claims, the trends over the
teachers and the confidence threshold, the F1 convention the thesis's numbers imply, the confidence rule.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.release_claims.common import (
    ENSEMBLE_POOL,
    claims_or_scale_verdict,
    claims_rows,
    judged_claim_row,
    pool_estimate,
    pool_min_estimate,
    scale_prefix,
)
from pate_study.experiments.audioset.thesis_tables import tolerance_summary
from pate_study.experiments.audioset.verdict_rules import judged
from pate_study.learning.metrics import PRESENT_CLASSES
from pate_study.reporting.claims import Claim
from pate_study.reporting.registry import published
from pate_study.reporting.verdicts import Verdict, combine


def confidence_rule_verdict(t53: pd.DataFrame, item_id: str = "muschiol2021-table5.3") -> pd.DataFrame:
    """Which confidence rule reproduces the thesis's answered shares: per rule, (i) whether the answered
    share is the same for every th_e (as printed), (ii) mean |ours − printed| of the answered percentages."""
    paper = pd.DataFrame(published(item_id)["rows"])
    out = []
    for rule, sub in t53.groupby("rule", sort=False):
        cols = [c for c in sub.columns if c.startswith("answered_pct_")]
        constant = bool(all(sub.groupby("n_teachers")[c].nunique().max() == 1 for c in cols))
        merged = sub.merge(paper, on=["n_teachers", "threshold"], suffixes=("", "_paper"))
        diffs = np.concatenate([(merged[c] - merged[f"{c}_paper"]).abs().dropna().to_numpy(float) for c in cols])
        out.append(
            {
                "rule": rule,
                "answered_share_independent_of_th_e": constant,
                "mean_abs_diff_answered_pct": float(diffs.mean()) if diffs.size else np.nan,
            }
        )
    return pd.DataFrame(out)


TEACHER_TREND = Claim(
    "precision up, recall down with more teachers",
    "Muschiol 2021, §5.2 / Table 5.2: more teachers give higher precision and lower recall",
    f"per fixed threshold and step 10 → 20 → 50 teachers: precision rise, recall fall ({PRESENT_CLASSES})",
    "every-step",
    ENSEMBLE_POOL,
)


def trend_verdict_table_5_2(
    t52: pd.DataFrame,
    tolerance: dict | None = None,
    precision: str = "precision_predicted",
    recall: str = "recall_true",
) -> Verdict:
    """The thesis's Table 5.2 reading: for every fixed threshold, more teachers give higher precision and lower
    recall (Muschiol §5.2, §6). Checked on our rows (teacher counts > 1), every step (10 → 20 → 50 teachers) on the
    percentile interval of that step's bootstrap draws (:func:`pool_estimate`; :data:`TEACHER_TREND`), on one
    convention, :data:`pate_study.learning.metrics.PRESENT_CLASSES` (``precision`` / ``recall`` name the columns)."""
    fixed = t52[(t52["threshold"] != "adaptive") & (t52["n_teachers"] != "baseline")].copy()
    fixed["t"] = fixed["n_teachers"].astype(int)
    steps, text = [], []
    for th, sub in fixed.groupby("threshold"):
        sub = sub.sort_values("t")
        for col, key, sign in ((precision, precision, -1.0), (recall, recall, 1.0)):
            v = sub[col].to_numpy(float)
            for (lo, hi), a, b in zip(zip(sub["t"], sub["t"].iloc[1:]), v, v[1:]):
                steps.append(pool_estimate(tolerance, f"{key} {lo} - {hi}: {th}", a - b, sign))
            text.append(f"th_e {th} {col} " + " → ".join(f"{x:.3f}" for x in v))
    return judged(TEACHER_TREND, steps, note="; ".join(text))


ENSEMBLE_CLAIMS = {
    "single": Claim(
        "no ensemble beats the single model on all data (best-threshold F1 and raw mAP)",
        "Muschiol 2021, Table 5.1 / §5.2: the single model on all data above every ensemble",
        f"min over ensembles and over (best F1, raw mAP) of single model − ensemble (F1: {PRESENT_CLASSES})",
        "direction",
        ENSEMBLE_POOL,
    ),
    "map falls": Claim(
        "raw mAP falls as teachers get more and smaller partitions",
        "Muschiol 2021, Table 5.1: 0.219 > 0.199 > 0.186 for 10 > 20 > 50 teachers",
        "raw mAP(T) − raw mAP(next larger T)",
        "every-step",
        ENSEMBLE_POOL,
    ),
    "beats teacher": Claim(
        "the ensemble beats its average teacher (F1 at the ensemble's best threshold)",
        "Muschiol 2021, Table 5.1: 0.228 vs 0.167, 0.204 vs 0.136, 0.173 vs 0.112",
        f"ensemble best-threshold F1 − its average teacher's F1 at that threshold ({PRESENT_CLASSES})",
        "every-step",
        ENSEMBLE_POOL,
    ),
    "check": Claim(
        "the confidence check (th_c = 0.6) raises F1 on the answered queries (th_e = 0.2)",
        "Muschiol 2021, Table 5.3: +35 % (10 teachers) to +64 % (50 teachers)",
        f"F1 with the check / F1 without, per teacher count ({PRESENT_CLASSES})",
        "every-step",
        ENSEMBLE_POOL,
        boundary=1.0,
    ),
}


def ensemble_claims(
    t51: pd.DataFrame, t52: pd.DataFrame, t53: pd.DataFrame, kind: str = "real", tolerance: dict | None = None
) -> pd.DataFrame:
    """The thesis's qualitative readings of Tables 5.1-5.3 (§5.2, §5.5; :data:`ENSEMBLE_CLAIMS`), each judged on our
    tables with the percentile interval of the pool bootstrap (``tolerance``:
    :func:`~pate_study.experiments.audioset.thesis_tables.score_tolerance`, whose draws every difference reads; without
    it every claim is inconclusive): the directions are comparable even where the values are not (different teachers and
    scale); on the synthetic stand-in (``kind="synthetic"``) every claim is *not comparable*. F1 of the confidence check
    on :data:`pate_study.learning.metrics.PRESENT_CLASSES`."""
    base = t51[t51["n_teachers"] == "baseline"]
    ens = t51[t51["n_teachers"] != "baseline"].copy()
    ens["t"] = ens["n_teachers"].astype(int)
    ens = ens.sort_values("t")
    rows = []
    if len(base) and len(ens):
        b_f1, b_map = float(base["ensemble_f1"].iloc[0]), float(base["map_raw"].iloc[0])
        best_f1, best_map = float(ens["ensemble_f1"].max()), float(ens["map_raw"].max())
        keys = [f"{w} 1 - {t}" for t in ens["t"] for w in ("mAP", "best F1")]
        values = [
            b_map - m if w == "mAP" else b_f1 - f
            for m, f in zip(ens["map_raw"], ens["ensemble_f1"])
            for w in ("mAP", "best F1")
        ]
        rows.append(
            judged_claim_row(
                ENSEMBLE_CLAIMS["single"],
                "baseline F1 0.256 / mAP 0.268 above every ensemble (Table 5.1)",
                f"baseline F1 {b_f1:.3f} / mAP {b_map:.3f}; best ensemble F1 {best_f1:.3f} / mAP {best_map:.3f}",
                pool_min_estimate(tolerance, keys, values),
                kind,
            )
        )
        maps = ens["map_raw"].to_numpy(float)
        steps = [
            pool_estimate(tolerance, f"mAP {a} - {b}", x - y)
            for (a, b), x, y in zip(zip(ens["t"], ens["t"].iloc[1:]), maps, maps[1:])
        ]
        rows.append(
            judged_claim_row(
                ENSEMBLE_CLAIMS["map falls"],
                "0.219 > 0.199 > 0.186 for 10 > 20 > 50 teachers",
                " > ".join(f"{m:.3f}" for m in maps) + f" for {', '.join(map(str, ens['t']))}",
                steps or None,
                kind,
            )
        )
        gaps = [
            pool_estimate(tolerance, f"best F1 - average teacher F1 {t}", a - b)
            for t, a, b in zip(ens["t"], ens["ensemble_f1"], ens["teacher_avg_f1"])
        ]
        rows.append(
            judged_claim_row(
                ENSEMBLE_CLAIMS["beats teacher"],
                "0.228 vs 0.167, 0.204 vs 0.136, 0.173 vs 0.112",
                ", ".join(f"{a:.3f} vs {b:.3f}" for a, b in zip(ens["ensemble_f1"], ens["teacher_avg_f1"])),
                gaps,
                kind,
            )
        )
    conf = t53[(t53["rule"] == "max") & (t53["threshold"] == "0.2")].set_index("n_teachers")
    column = "f1_present" if "f1_present" in t52 else "f1"
    plain = t52[t52["threshold"] == "0.2"].set_index("n_teachers")[column]
    gains = {
        t: float(conf.loc[t, f"{column}_conf06"] / plain.loc[t])
        for t in conf.index
        if t in plain.index and plain.loc[t] > 0
    }
    ok = {t: g for t, g in gains.items() if np.isfinite(g)}
    ours = ", ".join(f"{t}: {100 * (g - 1):+.0f} %" for t, g in ok.items()) or "no query passes the check"
    rows.append(
        judged_claim_row(
            ENSEMBLE_CLAIMS["check"],
            "+35 % (10 teachers) to +64 % (50 teachers), Table 5.3",
            ours,
            [pool_estimate(tolerance, f"F1 with check / without {t}", g) for t, g in ok.items()] or None,
            kind,
        )
    )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- notebook 05: one record per item
def setup_record(info: dict, spec, teacher_counts) -> tuple[str, dict[str, Any]]:
    """Notebook 05's data stamp (what every output says it was computed from) and its recorded set-up: split sizes,
    the replicate ensembles' seeds per teacher count, mean selected step and the share of teachers whose best
    checkpoint was their last step (still improving)."""
    seeds = info.get("replicate_seeds", {})
    replicated = [t for t in teacher_counts if len(seeds.get(t, ())) > 1]
    replicas = (
        f"{len(seeds[replicated[0]])} replicate ensembles (seeds {list(seeds[replicated[0]])}) of {replicated} "
        "teachers, one of the others"
        if replicated
        else "one ensemble per teacher count"
    )
    data = (
        f"{scale_prefix(info)}{info['data']}; notebook 04's teachers (teacher pool {info['teacher_pool']:,} bal_train "
        f"clips, validation "
        f"{info['validation']:,}; up to {spec.steps} steps (early stop: {spec.patience} evaluations), {spec.sampler} "
        f"sampler, mixup {spec.mixup_alpha}; {replicas}); query pool {info['query_pool']:,}, test {info['test']:,} "
        "eval clips"
    )
    record = dict(
        data=data,
        kind=info["kind"],
        n_labels=info["n_labels"],
        teacher_pool=info["teacher_pool"],
        validation=info["validation"],
        query_pool=info["query_pool"],
        test=info["test"],
        teacher_counts=list(teacher_counts),
        replicate_seeds={t: list(seeds.get(t, ())) for t in teacher_counts},
        mean_best_step={t: float(np.mean(info["best_step"][t])) for t in teacher_counts},
        share_best_at_last_step={t: float(np.mean(info["best_step"][t] == info["steps"][t])) for t in teacher_counts},
    )
    return data, record


def _claim_row(claims: pd.DataFrame, text: str) -> pd.Series:
    return claims[claims["claim"].str.startswith(text)].iloc[0]


def table_5_1_record(
    t51: pd.DataFrame, claims: pd.DataFrame, kind: str, scale: dict, tolerance: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Table 5.1: the single model's and the best ensemble's mAP / F1 (F1 on
    :data:`pate_study.learning.metrics.PRESENT_CLASSES`, stated as ``f1_convention``), the claims' verdicts
    (:func:`ensemble_claims`),
    the measured tolerance they were judged with
    (:func:`~pate_study.experiments.audioset.thesis_tables.score_tolerance`) and the values' verdict
    (:func:`scale_verdict`)."""
    judged = claims[claims["claim"].str.startswith(("no ensemble", "raw mAP", "the ensemble"))]
    return dict(
        score_tolerance=tolerance_summary(tolerance),
        baseline_map=float(t51["map_raw"].iloc[0]),
        max_ensemble_map=float(t51["map_raw"].iloc[1:].max()),
        baseline_f1=float(t51["ensemble_f1"].iloc[0]),
        max_ensemble_f1=float(t51["ensemble_f1"].iloc[1:].max()),
        f1_convention=PRESENT_CLASSES,
        claim_ensemble_below_single_model=_claim_row(claims, "no ensemble beats")["verdict"],
        claim_ensemble_beats_average_teacher=_claim_row(claims, "the ensemble beats")["verdict"],
        claim_map_falls_with_teachers=_claim_row(claims, "raw mAP falls")["verdict"],
        **claims_or_scale_verdict(judged, kind, "Table 5.1 values", scale).as_record(),
        **claims_rows(judged),
    )


def implied_convention(t52: pd.DataFrame, item_id: str = "muschiol2021-table5.2") -> dict[str, Any]:
    """Which macro-precision convention the thesis's printed precision implies. Averaged over *all* classes with a
    class without prediction scored 0 (:func:`pate_study.learning.metrics.macro_precision_recall_all_classes`),
    precision <= (predicted classes) / (classes); so a printed precision p needs at least ⌈p · C⌉ predicted
    classes. Beside it: how many classes our ensemble of the same size predicts at that threshold
    (``n_predicted_classes``), and whether our precision, per convention, moves with th_e as the printed one does."""
    paper = pd.DataFrame(published(item_id)["rows"])
    n_classes = int(t52["n_classes"].iloc[0]) if "n_classes" in t52 else 161
    fixed = paper[paper["threshold"] != "adaptive"]
    top = fixed.loc[fixed["precision"].idxmax()]
    ours = t52[(t52["n_teachers"].astype(str) == str(top["n_teachers"])) & (t52["threshold"] == str(top["threshold"]))]
    n_pred = int(ours["n_predicted_classes"].iloc[0]) if len(ours) else -1

    def rises(col: str, frame: pd.DataFrame) -> bool:
        f = frame[frame["threshold"] != "adaptive"].copy()
        f["th"] = f["threshold"].astype(float)
        return bool(
            all(
                np.all(np.diff(g.sort_values("th")[col].to_numpy(float)) > 0)
                for _, g in f[f["n_teachers"].astype(str) != "baseline"].groupby("n_teachers")
            )
        )

    return dict(
        thesis_max_precision=float(top["precision"]),
        at=f"{top['n_teachers']} teachers, th_e {top['threshold']}",
        classes_needed_all_classes=int(math.ceil(float(top["precision"]) * n_classes)),
        n_classes=n_classes,
        ours_predicted_classes_there=n_pred,
        thesis_precision_rises_with_th_e=rises("precision", paper),
        ours_all_classes_rises_with_th_e=rises("precision", t52),
        ours_predicted_classes_rises_with_th_e=rises("precision_predicted", t52),
        implied="predicted classes only"
        if (rises("precision", paper) and rises("precision_predicted", t52) and not rises("precision", t52))
        else "undecided",
    )


THRESHOLD_TREND = Claim(
    "precision up, recall down with th_e",
    "Muschiol 2021, §5.2 / Table 5.2: a higher ensemble threshold gives higher precision and lower recall",
    f"per teacher count and step th_e 0.2 → 0.4 → 0.6: precision rise, recall fall ({PRESENT_CLASSES})",
    "every-step",
    ENSEMBLE_POOL,
)


def threshold_trend_verdict(
    t52: pd.DataFrame,
    precision: str = "precision_predicted",
    recall: str = "recall_true",
    tolerance: dict | None = None,
) -> Verdict:
    """The thesis's reading of Table 5.2 along th_e (§5.2; :data:`THRESHOLD_TREND`): a higher ensemble threshold
    gives higher precision and lower recall, per teacher count (10, 20, 50), fixed thresholds 0.2 < 0.4 < 0.6, every
    step on the percentile interval of its bootstrap draws (:func:`pool_estimate`), on
    :data:`pate_study.learning.metrics.PRESENT_CLASSES` (``precision`` / ``recall`` name the columns)."""
    f = t52[(t52["threshold"] != "adaptive") & (t52["n_teachers"].astype(str) != "baseline")].copy()
    f["th"] = f["threshold"].astype(float)
    steps, text = [], []
    for t, g in f.groupby("n_teachers"):
        g = g.sort_values("th")
        pairs = list(zip(g["threshold"], g["threshold"].iloc[1:]))
        for col, sign in ((precision, 1.0), (recall, -1.0)):
            v = g[col].to_numpy(float)
            steps += [
                pool_estimate(tolerance, f"{col} {t}: {hi} - {lo}", b - a, sign)
                for (lo, hi), a, b in zip(pairs, v, v[1:])
            ]
        text.append(
            f"{t}: P "
            + " → ".join(f"{x:.3f}" for x in g[precision])
            + ", R "
            + " → ".join(f"{x:.3f}" for x in g[recall])
        )
    return judged(THRESHOLD_TREND, steps, note="; ".join(text))


def table_5_2_record(t52: pd.DataFrame, tolerance: dict | None = None) -> dict[str, Any]:
    """Table 5.2 judged on one stated convention, :data:`pate_study.learning.metrics.PRESENT_CLASSES` (Definition
    2; the same for Table 5.3): its reading along th_e (:func:`threshold_trend_verdict`) and along the teacher count
    (:func:`trend_verdict_table_5_2`). Beside it, recorded, not judged: the convention the thesis's printed precision
    implies (:func:`implied_convention`) and the directions on the all-classes convention (without intervals)."""
    conv = implied_convention(t52)
    along_th = threshold_trend_verdict(t52, tolerance=tolerance)
    along_t = trend_verdict_table_5_2(t52, tolerance)
    v = combine(
        {"precision up, recall down with th_e": along_th, "precision up, recall down with more teachers": along_t},
        context=(
            f"Convention (one for Tables 5.2 and 5.3): {PRESENT_CLASSES}. The thesis prints precision "
            f"{conv['thesis_max_precision']:.3f} at {conv['at']}; averaged over all {conv['n_classes']} "
            f"classes that needs ≥ {conv['classes_needed_all_classes']} predicted classes, ours predicts "
            f"{conv['ours_predicted_classes_there']} there (the thesis's own Fig A.6: the big-50 ensemble "
            "predicts none of the rare classes), so its precision is over the predicted classes"
        ),
    )
    return dict(
        best_f1=float(t52["f1"].max()),
        convention=conv,
        convention_judged=PRESENT_CLASSES,
        all_classes_trend_th_e=threshold_trend_verdict(t52, "precision", "recall").verdict,
        all_classes_trend_teachers=trend_verdict_table_5_2(t52, None, "precision", "recall").verdict,
        predicted_classes_trend_th_e=threshold_trend_verdict(t52, recall="recall_predicted").verdict,
        present_classes_trend_th_e=along_th.verdict,
        present_classes_trend_teachers=along_t.verdict,
        **v.as_record(),
    )


def table_5_3_record(t53: pd.DataFrame, claims: pd.DataFrame, kind: str, scale: dict) -> dict[str, Any]:
    """Table 5.3: which confidence rule gives an answered share independent of th_e (:func:`confidence_rule_verdict`),
    the check's F1 claim and the values' verdict."""
    r = confidence_rule_verdict(t53).set_index("rule")
    reproduces = (
        "max"
        if r.loc["max", "answered_share_independent_of_th_e"]
        and not r.loc["printed", "answered_share_independent_of_th_e"]
        else "undecided"
    )
    c_conf = _claim_row(claims, "the confidence check")
    judged = claims[claims["claim"].str.startswith("the confidence check")]
    v = claims_or_scale_verdict(
        judged,
        kind,
        "answered shares and F1 values",
        scale,
        extra="the answered share depends on how confident the teachers are; which rule gives a share "
        "independent of th_e holds by construction (max rule), not by our data",
    )
    return dict(
        rule_reproducing_constant_answered_share=reproduces,
        max_rule_constant=bool(r.loc["max", "answered_share_independent_of_th_e"]),
        printed_rule_constant=bool(r.loc["printed", "answered_share_independent_of_th_e"]),
        max_rule_abs_diff_answered_pct=float(r.loc["max", "mean_abs_diff_answered_pct"]),
        printed_rule_abs_diff_answered_pct=float(r.loc["printed", "mean_abs_diff_answered_pct"]),
        claim_check_raises_f1=c_conf["verdict"],
        claim_check_raises_f1_ours=c_conf["ours"],
        **v.as_record(),
        **claims_rows(judged),
    )
