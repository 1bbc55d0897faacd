"""Notebook 04's Fig 5.9: the balanced sampler's class occurrence per batch against the random sampler's, over
sampler seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.diagnostics import (
    occurrence_spread,
    sampler_spreads,
    sampler_statistics,
    top_class,
)
from pate_study.experiments.audioset.verdict_rules import judged
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim
from pate_study.reporting.replicates import printed_rows

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
            "printed_replicates": printed_rows({"sd of log counts, balanced / random": log_sd}),
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
