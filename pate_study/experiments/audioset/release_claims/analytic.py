"""Notebook 05's break-even q~ of the data-dependent bound (Fig 5.16's claim, checked analytically and labelled so)
and the q~ histograms of Figs 5.16, A.12 and A.13.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pate_study.experiments.audioset import bound_forensics
from pate_study.experiments.audioset.release import DELTA
from pate_study.experiments.audioset.release_claims.common import scale_verdict
from pate_study.privacy import multilabel
from pate_study.privacy.options import Accounting, Bound
from pate_study.reporting.claims import Claim, analytic
from pate_study.reporting.verdicts import Verdict, combine

Q_SHARE_EDGE = 0.1


#: Fig 5.16's reading (§5.3): the ε of 1,000 queries like a bucket's flattens between q̃ = 10⁻² and 10⁻¹, the
#: break-even of the data-dependent analysis. It depends on the setting only (σ_e, labels, teachers, queries, δ), so
#: it is checked analytically (:func:`pate_study.experiments.audioset.bound_forensics.break_even_q`), never on our
#: votes.
BREAK_EVEN = Claim(
    "break-even q̃ between 10⁻² and 10⁻¹",
    "Muschiol 2021, §5.3 (Fig 5.16): the curve flattens between 10^-2 and 10^-1; the break-even of the PATE "
    "data-dependent privacy analysis",
    "break-even q̃ (data-dependent ε of 1,000 identical queries at 0.99× and at 0.5× the data-independent), "
    "at most 0.1 and",
    "range",
    boundary=0.01,
    upper=0.1,
    basis="analytic",
)

#: the shares of the data-independent ε whose break-even q̃ the claim reads: where the analysis first pays, and
#: where it halves the cost
BREAK_EVEN_RATIOS = (0.99, 0.5)


def break_even_verdict(
    sigma_e: float,
    *,
    n_labels: int,
    n_teachers: int,
    n_queries: int = 1000,
    delta: float = DELTA,
    label: str = "",
    context: str = "",
) -> tuple[Verdict, dict[str, float]]:
    """Fig 5.16's break-even claim (:data:`BREAK_EVEN`) checked analytically at our setting: the q̃ at which the
    data-dependent ε (vote-fraction bound, the one under which Papernot et al. 2018 Theorem 6 can apply) of
    ``n_queries`` identical queries falls to each share of :data:`BREAK_EVEN_RATIOS` of the data-independent ε;
    agrees when both lie in [0.01, 0.1], differs otherwise; labelled analytic (:func:`claims.analytic`). Under
    Theorem 12 as printed the analysis never pays (no break-even), which the derivation says. Returns the verdict
    and the break-even values (``break_even_q_099``, ``break_even_q_050``); ``context`` follows the reason."""
    kw = dict(
        sigma=sigma_e,
        n_labels=n_labels,
        n_queries=n_queries,
        delta=delta,
        n_teachers=n_teachers,
        accounting=Accounting(orders=multilabel.extended_orders()),
    )
    q = {r: bound_forensics.break_even_q(r, bound=Bound.VOTE_FRACTION, **kw) for r in BREAK_EVEN_RATIOS}
    printed_bound = bound_forensics.break_even_q(BREAK_EVEN_RATIOS[0], bound=Bound.THEOREM12, **kw)
    holds = all(np.isfinite(x) and BREAK_EVEN.boundary <= x <= BREAK_EVEN.upper for x in q.values())
    shown = ", ".join(f"{r:g}× at q̃ = {x:.3g}" for r, x in q.items())
    derivation = (
        f"ε of {n_queries:,} queries with the same q̃ is a function of q̃, σ_e = {sigma_e:g}, {n_labels} labels, "
        f"{n_teachers} teachers and δ = {delta:g} only (Papernot et al. 2018 Theorem 6 with Muschiol 2021 "
        f"Theorem 13's q̃, vote-fraction bound, composed and converted); it falls to {shown} of the "
        f"data-independent ε; under Theorem 12 as printed it "
        + (
            "never falls below it (no break-even)"
            if not np.isfinite(printed_bound)
            else f"falls at {printed_bound:.3g}"
        )
    )
    name = BREAK_EVEN.name + (f" ({label})" if label else "")
    verdict = combine({name: analytic(BREAK_EVEN, holds, derivation)}, context=context)
    return verdict, {
        "break_even_q_099": float(q[BREAK_EVEN_RATIOS[0]]),
        "break_even_q_050": float(q[BREAK_EVEN_RATIOS[1]]),
    }


def q_histogram_record(
    h: pd.DataFrame,
    sigma_e: float,
    item: str,
    kind: str,
    n_labels: int,
    scale: dict,
    *,
    n_teachers: int | None = None,
    n_queries: int = 1000,
    delta: float = DELTA,
) -> dict[str, Any]:
    """Figs 5.16, A.12, A.13: the share of queries with q̃ ≥ 0.1, the bucket ε range, and the floor of q̃ that
    Theorem 13 allows at th_e = 0.4 (:func:`pate_study.privacy.multilabel.min_logq`): why the thesis's low-q̃ buckets
    are empty here by construction. With ``n_teachers`` the break-even claim is checked analytically at this setting
    (:func:`break_even_verdict`; Figs A.12/A.13 "as Fig 5.16" at their σ_e), the bucket values not comparable beside
    it; without, not comparable."""
    occupied = h[h["n_queries"] > 0]
    floor = float(np.exp(multilabel.min_logq(0.4, sigma_e, n_labels)))
    context = scale_verdict(
        kind,
        item,
        **scale,
        extra=f"with σ_e = {sigma_e} on vote fractions over {n_labels} "
        f"labels q̃ ≥ {floor:.3f} at th_e = 0.4 for any votes (min_logq), so the low-q̃ buckets "
        "the thesis fills are empty here by construction",
    )
    record: dict[str, Any] = dict(
        share_q_above_0_1=float(h[h["q_low"] >= Q_SHARE_EDGE]["n_queries"].sum() / h["n_queries"].sum()),
        min_bucket_epsilon=float(occupied["epsilon_1000"].min()),
        max_bucket_epsilon=float(occupied["epsilon_1000"].max()),
        q_floor_th04=floor,
    )
    if n_teachers is None:
        return record | context.as_record()
    label = "" if item.endswith("fig5.16") else f"as Fig 5.16, σ_e = {sigma_e:g}"
    verdict, values = break_even_verdict(
        sigma_e,
        n_labels=n_labels,
        n_teachers=n_teachers,
        n_queries=n_queries,
        delta=delta,
        label=label,
        context=f"Bucket values not comparable: {context.reason}",
    )
    return record | values | verdict.as_record()
