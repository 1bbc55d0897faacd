"""Notebook 05's appendix tables A.1 to A.3 (the claims of Tables 5.1 to 5.3 at other sizes) and Fig A.6 (the
releases' prediction counts of the least frequent classes).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from pate_study.experiments.audioset.release_claims.common import (
    ENSEMBLE_POOL,
    POOL,
    claims_or_scale_verdict,
    claims_rows,
    scale_verdict,
)
from pate_study.experiments.audioset.release_claims.noise_free import (
    ensemble_claims,
    threshold_trend_verdict,
    trend_verdict_table_5_2,
)
from pate_study.experiments.audioset.thesis_tables import tolerance_summary
from pate_study.experiments.audioset.verdict_rules import judged
from pate_study.learning.metrics import PRESENT_CLASSES
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim
from pate_study.reporting.verdicts import combine


def appendix_claims_record(
    t51: pd.DataFrame, t52: pd.DataFrame, t53: pd.DataFrame, kind: str, tolerance: dict | None = None
) -> dict[str, Any]:
    """Table A.2 (small subset): the trend verdicts on :data:`pate_study.learning.metrics.PRESENT_CLASSES` and every
    ensemble claim's verdict."""
    claims = ensemble_claims(t51, t52, t53, kind=kind, tolerance=tolerance)
    rec = dict(
        trend=trend_verdict_table_5_2(t52, tolerance).verdict if "recall_true" in t52 else "not comparable",
        claims={r.claim: r.verdict for r in claims.itertuples()},
    )
    if kind == "synthetic" or "recall_true" not in t52:
        return rec
    v = combine(
        {
            "precision up, recall down with th_e": threshold_trend_verdict(t52, tolerance=tolerance),
            "precision up, recall down with more teachers": trend_verdict_table_5_2(t52, tolerance),
        },
        context=f"small subset (15 classes); convention: {PRESENT_CLASSES}; values not comparable: "
        "embedding-MLP teachers on the released bal_train embeddings vs the thesis's ResNets on 76,656 "
        "crawled clips",
    )
    return dict(
        **rec, all_classes_trend_th_e=threshold_trend_verdict(t52, "precision", "recall").verdict, **v.as_record()
    )


def appendix_records(
    t51: pd.DataFrame,
    t52: pd.DataFrame,
    t53: pd.DataFrame,
    kind: str,
    scale: dict,
    tolerance: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Tables A.1-A.3 (small subset): A.1 carries Table 5.1's claims checked on the small subset, A.2
    :func:`appendix_claims_record`, A.3 the confidence check's claim; each with the values' scale beside.
    ``tolerance``: the small subset's :func:`~pate_study.experiments.audioset.thesis_tables.score_tolerance` (its
    summary recorded under A.1)."""
    claims = ensemble_claims(t51, t52, t53, kind=kind, tolerance=tolerance)
    a1 = claims[claims["claim"].str.startswith(("no ensemble", "raw mAP", "the ensemble"))]
    a3 = claims[claims["claim"].str.startswith("the confidence check")]
    a1_rec = dict(
        claims={r.claim: f"{r.verdict}: {r.ours}" for r in a1.itertuples()},
        score_tolerance=tolerance_summary(tolerance),
        **claims_or_scale_verdict(a1, kind, "muschiol2021-tableA.1", scale).as_record(),
        **claims_rows(a1),
    )
    return {
        "muschiol2021-tableA.1": a1_rec,
        "muschiol2021-tableA.2": appendix_claims_record(t51, t52, t53, kind, tolerance),
        "muschiol2021-tableA.3": {
            **claims_or_scale_verdict(a3, kind, "muschiol2021-tableA.3", scale).as_record(),
            **claims_rows(a3),
        },
    }


FIG_A_6_FIXED = Claim(
    "no prediction of the least frequent classes at a fixed th_e",
    "Muschiol 2021, App. A on Fig A.6: for the “big 50” experiment “no predictions are made for the less frequent "
    "labels at all ... not in a way that 20%, 40%, or 60% of the teachers of the ensemble agree on such a label”",
    "the largest ensemble's positive predictions of the 5 least frequent pool classes, per fixed th_e, noise-free",
    "level",
    ENSEMBLE_POOL,
    boundary=0.0,
)
FIG_A_6_ADAPTIVE = Claim(
    "the adaptive threshold predicts some of them",
    "Muschiol 2021, App. A on Fig A.6: “Only for the adaptive threshold mechanism tends to predict some classes”",
    "the largest ensemble's positive predictions of the 5 least frequent pool classes, adaptive th_e, noise-free",
    "level",
    ENSEMBLE_POOL,
    boundary=0.0,
    negated=True,
)


def rare_count_estimate(draws: dict[str, Any] | None, label: str, value: float) -> unc.Estimate:
    """A count of Fig A.6 with the percentile interval of its pool-query bootstrap (``draws[label]``:
    :func:`~pate_study.experiments.audioset.thesis_tables.rare_prediction_draws`; the teachers' training seeds named as
    not replicated), or over the replicate ensembles combined with it
    (:func:`~pate_study.experiments.audioset.thesis_tables.replicated_rare_draws`: the mean count over the ensembles),
    clipped to ``[0, ∞)`` where a count lies (the t part of a combined interval can reach below 0 on three ensembles).
    Without the draws: unbounded (inconclusive)."""
    if not draws or label not in draws:
        return unc.unreplicated(float(value), [POOL, unc.TEACHER_SEED])
    d = draws[label]
    if "values" in d:  # replicate ensembles (thesis_tables.replicated_rare_draws)
        estimate = unc.combined_interval(d["values"], d["draws"], [unc.TEACHER_SEED], resampled=POOL)
    else:
        estimate = unc.from_bootstrap(d["value"], d["draws"], sources=[POOL], unreplicated=[unc.TEACHER_SEED])
    return estimate.within(0.0, math.inf)  # a count


def prediction_counts_record(
    pc: pd.DataFrame, kind: str, scale: dict, draws: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Fig A.6: how many times the largest ensemble predicts the least frequent classes, per threshold, judged on
    the thesis's two sentences (:data:`FIG_A_6_FIXED`: none at any fixed th_e, the count 0 with no tolerance -- "no
    predictions" is exact; :data:`FIG_A_6_ADAPTIVE`: some with the adaptive one, the count not 0) on the percentile
    interval of the pool-query bootstrap (``draws``:
    :func:`~pate_study.experiments.audioset.thesis_tables.rare_prediction_draws`; the rarest classes chosen again in
    each resample). Without ``draws`` every claim is inconclusive (nothing resampled)."""
    rare = pc[pc["group"] == "least frequent"]
    fixed = [c for c in pc.columns if c.startswith("predicted_") and c != "predicted_adaptive"]
    at_fixed = int(rare[fixed].to_numpy().sum())
    at_adaptive = int(rare["predicted_adaptive"].sum()) if "predicted_adaptive" in rare else 0
    v = scale_verdict(
        kind, "prediction counts", **scale, extra="counted on our query pool, not the thesis's student set"
    )
    intervals: dict[str, list[float]] = {}
    if kind != "synthetic":
        steps = {
            c.removeprefix("predicted_"): rare_count_estimate(draws, c.removeprefix("predicted_"), rare[c].sum())
            for c in fixed
        }
        adaptive = rare_count_estimate(draws, "adaptive", at_adaptive) if "predicted_adaptive" in rare else None
        note = ", ".join(f"th_e {th}: {int(rare[f'predicted_{th}'].sum())}" for th in steps)
        claims = {
            FIG_A_6_FIXED.name: judged(FIG_A_6_FIXED, list(steps.values()), note=note),
            FIG_A_6_ADAPTIVE.name: judged(FIG_A_6_ADAPTIVE, adaptive, note=f"adaptive: {at_adaptive}"),
        }
        intervals = {th: [e.low, e.high] for th, e in [*steps.items(), ("adaptive", adaptive)] if e is not None}
        v = combine(claims, context=f"Values not comparable: {v.reason}")
    return dict(
        rare_classes_never_predicted_at_0_6=int((rare["predicted_0.6"] == 0).sum()),
        rare_predictions_fixed=at_fixed,
        rare_predictions_adaptive=at_adaptive,
        rare_predictions_interval=intervals,
        **v.as_record(),
    )
