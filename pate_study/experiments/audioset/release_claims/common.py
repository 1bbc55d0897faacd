"""What notebook 05's claims share: the query pool's bootstrap estimates, the thesis's scale and the verdict that
says a reduced scale is not comparable, a claims table's rows and its combined verdict, the stamps of a reduced run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.verdict_rules import judged, synthetic
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim
from pate_study.reporting.replicates import ReplicateRows
from pate_study.reporting.verdicts import Verdict, combine, not_comparable

#: The random source a noise-free table's bootstrap resamples (the pool queries the ensembles are scored on).
POOL = "query-pool examples"
#: Behind a noise-free table's number: the teachers' training seed and partition (the replicate ensembles) and the
#: pool queries it is scored on; an interval without the first cannot decide a claim
#: (:func:`.verdict_rules.needs_source`).
ENSEMBLE_POOL = (unc.TEACHER_SEED, POOL)


def _replicated(tolerance: dict | None, keys: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """The replicate values ``[G]`` and pool draws ``[n_boot, G]`` of ``keys``
    (:func:`~pate_study.experiments.audioset.thesis_tables.replicated_tolerance`; the first ``G`` replicates every key
    has, stacked ``[len(keys), ...]``), or None without replicate values."""
    values = (tolerance or {}).get("values", {}) if isinstance(tolerance, dict) else {}
    draws = tolerance.get("draws", {}) if values else {}
    if not keys or any(np.ndim(values.get(k)) != 1 or k not in draws for k in keys):
        return None
    g = min(len(values[k]) for k in keys)
    return (
        np.stack([np.asarray(values[k], float)[:g] for k in keys]),
        np.stack([np.asarray(draws[k], float).reshape(-1, len(values[k]))[:, :g] for k in keys]),
    )


def _replicated_estimate(values: np.ndarray, draws: np.ndarray) -> unc.Estimate | None:
    """A mean over the replicate ensembles that share the pool: the t-interval over the ``G`` ensembles (``G − 1``
    df) combined with the percentile bootstrap of the pool queries (:func:`pate_study.reporting.uncertainty.
    combined_interval`); one ensemble: the bootstrap alone, the teachers named as not replicated. None when no
    replicate gave a number."""
    ok = np.isfinite(values)
    if not ok.any() or not np.isfinite(draws[:, ok]).any():
        return None
    return unc.combined_interval(values[ok], draws[:, ok], [unc.TEACHER_SEED], resampled=POOL)


def pool_estimate(tolerance: dict | None, key: str, value: float, sign: float = 1.0) -> unc.Estimate | None:
    """``sign · value`` (a difference on our noise-free tables) with its interval: over the replicate teacher
    ensembles and the pool bootstrap when ``tolerance`` holds replicate values
    (:func:`~pate_study.experiments.audioset.thesis_tables.replicated_tolerance`; the estimate's value is then the mean
    of the replicates' own values, :func:`_replicated_estimate`), else the percentile interval of the bootstrap draws
    ``sign · tolerance["draws"][key]`` (:func:`~pate_study.experiments.audioset.thesis_tables.score_tolerance`) with the
    teachers' training seeds named as not replicated. Without draws: unbounded (inconclusive); a NaN value (a step this
    run did not evaluate): None."""
    draws = (tolerance or {}).get("draws", {}) if isinstance(tolerance, dict) else {}
    if not np.isfinite(value):
        return None  # a step this run did not evaluate
    rep = _replicated(tolerance, [key])
    if rep is not None:
        est = _replicated_estimate(sign * rep[0][0], sign * rep[1][0])
        return est if est is not None else unc.unreplicated(sign * value, [POOL, unc.TEACHER_SEED])
    if key not in draws:
        return unc.unreplicated(sign * value, [POOL, unc.TEACHER_SEED])
    return unc.from_bootstrap(
        sign * value, sign * np.asarray(draws[key], float), sources=[POOL], unreplicated=[unc.TEACHER_SEED]
    )


def pool_min_estimate(tolerance: dict | None, keys: list[str], values: list[float]) -> unc.Estimate | None:
    """The smallest of several differences (a claim that must hold for each) with the interval of the
    per-replicate and per-resample minimum (the draws share their resamples; the replicates their seeds)."""
    draws = (tolerance or {}).get("draws", {}) if isinstance(tolerance, dict) else {}
    value = float(np.min(values))
    if not np.isfinite(value):
        return None
    rep = _replicated(tolerance, keys)
    if rep is not None:
        est = _replicated_estimate(np.min(rep[0], axis=0), np.min(rep[1], axis=0))
        return est if est is not None else unc.unreplicated(value, [POOL, unc.TEACHER_SEED])
    if not keys or any(k not in draws for k in keys):
        return unc.unreplicated(value, [POOL, unc.TEACHER_SEED])
    return unc.from_bootstrap(
        value,
        np.min([np.asarray(draws[k], float) for k in keys], axis=0),
        sources=[POOL],
        unreplicated=[unc.TEACHER_SEED],
    )


#: the thesis's teacher pools and class counts (Table 4.1), per subset.
THESIS_SCALE = {
    161: "~274k crawled clips (153 classes, not listed)",
    15: "76,656 crawled clips (15 classes, not listed)",
}


def scale_verdict(
    data: str, what: str, *, teacher_pool: int | None = None, n_labels: int | None = None, extra: str = ""
) -> Verdict:
    """Verdict for numbers of our embedding teachers beside the thesis's ResNet teachers: the same definitions
    on different teachers (embedding MLPs on ``teacher_pool`` bal_train clips, ``n_labels`` classes, vs ImageNet
    ResNets on log-Mel of the thesis's teacher pool of the same subset, Table 4.1), ensembles scored on eval-clip
    queries."""
    if data == "synthetic":
        return not_comparable(f"{what}: synthetic stand-in teachers, not Audio Set")
    pool = f"{teacher_pool:,}" if teacher_pool else "a few thousand"
    labels = n_labels or 161
    thesis = THESIS_SCALE.get(labels, THESIS_SCALE[161] if labels > 15 else THESIS_SCALE[15])
    return not_comparable(
        f"{what}: embedding-MLP teachers on {pool} released bal_train embeddings ({labels} classes) "
        f"vs the thesis's ImageNet ResNets on log-Mel of {thesis}; same definitions, different "
        "teachers, data and scale" + (f"; {extra}" if extra else ""),
        rule="same quantity, different data and teachers",
    )


def judged_claim_row(
    claim: Claim, thesis: str, ours: str, estimate: unc.Estimate | list[unc.Estimate] | None, kind: str = "real"
) -> dict:
    """One claim's row: the claim judged on our ``estimate`` (:func:`.verdict_rules.judged`; None: not evaluable on
    our tables), *not comparable* on synthetic stand-in teachers."""
    v = synthetic(claim) if kind == "synthetic" else judged(claim, estimate, note=f"on our votes: {ours}")
    return {"claim": claim.name, "thesis": thesis, "ours": ours, **v.as_record()}


def _row_verdict(row: pd.Series) -> Verdict:
    """A claim row back as its :class:`~pate_study.reporting.verdicts.Verdict` (basis and interval kept)."""

    def text(key, default=""):
        return row[key] if isinstance(row.get(key), str) and row[key] else default

    return Verdict(
        row["verdict"],
        row["verdict_rule"],
        row["verdict_reason"],
        basis=text("verdict_basis", "data"),
        evidence=text("verdict_estimate"),
    )


def claims_verdict(claims: pd.DataFrame, context: str = "") -> Verdict:
    """An item's verdict from its claims' rows (:func:`pate_study.reporting.verdicts.combine`): ``context`` states
    the scale difference beside it."""
    return combine({r["claim"]: _row_verdict(r) for _, r in claims.iterrows()}, context=context)


def scale_prefix(info: dict) -> str:
    """What every stamp of notebook 05 opens with on real data: "reduced scale" (embedding-MLP teachers on a few
    thousand released clips, not the thesis's ResNets on ~274k crawled ones); nothing on a synthetic stand-in, whose
    own description says what it is."""
    return "real data at reduced scale: " if info.get("kind") == "real" else ""


def small_stamp(info: dict) -> str:
    """The data stamp of the "small" subset's tables (A.1-A.3)."""
    return (
        f"{scale_prefix(info)}{info['data']}; notebook 04's teachers (teacher pool {info['teacher_pool']:,}); "
        f"query pool {info['query_pool']:,}, test {info['test']:,}"
    )


def claims_rows(claims: pd.DataFrame) -> dict[str, ReplicateRows]:
    """``{"claims_replicates": rows}`` for a record: the replicate rows of every estimate the claims' rows judged
    (each key prefixed by its claim, ``<claim>/<step>``), which the item's combined verdict, rebuilt from the rows'
    text (:func:`claims_verdict`), no longer carries; empty when no claim has rows."""
    found = []
    for claim, rows in zip(claims["claim"], claims.get("verdict_replicates", pd.Series(dtype=object))):
        if isinstance(rows, ReplicateRows):
            found += [(f"{claim}/{key}", estimate, levels) for key, estimate, levels in rows.estimates]
    return {"claims_replicates": ReplicateRows(found)} if found else {}


def claims_or_scale_verdict(claims: pd.DataFrame, kind: str, what: str, scale: dict, extra: str = "") -> Verdict:
    """The item's verdict from its claims (:func:`claims_verdict`) with the values' scale difference
    (:func:`scale_verdict`) stated beside it; the scale verdict alone on synthetic stand-ins or without claims."""
    values = scale_verdict(kind, what, **scale, extra=extra)
    if kind == "synthetic" or claims.empty:
        return values
    return claims_verdict(claims, context=f"Values not comparable: {values.reason}")
