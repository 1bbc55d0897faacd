"""Computations behind ``notebooks/07_pate2018_lab.ipynb``, a second lab on the teacher votes released with
Papernot et al. (2018): confident GNMax's answered queries (expected and realised), the basic and improved
RDP conversions, data-dependent against data-independent ε, and Theorem 6's q over a whole vote matrix.

The lab's settings are one contract, :class:`Lab2Config` (defaults: Papernot et al. 2018 Table 2's MNIST setting, the
paper profile). The accountants are in :mod:`pate_study.privacy`; the lab's checks in
:mod:`pate_study.tooling.exercises` (``check_lab2_*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
import pandas as pd

from pate_study.core.contract import OPEN_UNIT, POSITIVE, Range, StudyContract
from pate_study.privacy import confident_gnmax, confident_gnmax_epsilon, gnmax_logq
from pate_study.privacy.options import Accounting
from pate_study.privacy.rdp import threshold_logpr


@dataclass(frozen=True)
class Lab2Config(StudyContract):
    """The second lab's settings; the defaults are Papernot et al. 2018 Table 2's MNIST setting (their
    ``generate_table.sh``: 640 queries, T = 200, σ1 = 150, σ2 = 40, δ = 10⁻⁵), the paper profile."""

    votes_dataset: Literal["mnist", "svhn", "adult"] = "mnist"  # the released vote matrix the lab reads
    n_queries: Annotated[int, Range(1, 100_000)] = 640  # Q: the first Q student queries
    threshold: Annotated[float, POSITIVE] = 200.0  # T, the confidence check's threshold
    sigma1: Annotated[float, POSITIVE] = 150.0  # the check's noise
    sigma2: Annotated[float, POSITIVE] = 40.0  # the answer's noise
    delta: Annotated[float, OPEN_UNIT] = 1e-5
    n_runs: Annotated[int, Range(1, 20_000)] = 20  # runs of the noisy check (seeds seed .. seed + n_runs - 1)
    q_cutoff: Annotated[float, OPEN_UNIT] = 1e-3  # Theorem 6's q below which a query is nearly free


def expected_answered(counts: np.ndarray, *, threshold: float, sigma1: float) -> float:
    """Σ_i Pr[max_j n_ij + N(0, σ1²) ≥ T] = Σ_i Φ((max_j n_ij − T)/σ1) (Papernot et al. 2018, Algorithm 1)."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.size == 0:
        raise ValueError(
            f"counts: expected a non-empty 2-D array [n_queries, n_classes] of vote counts, got shape {counts.shape}"
        )
    return float(np.exp(threshold_logpr(counts.max(axis=1), threshold, sigma1, name="counts")).sum())


def realised_answered(
    counts: np.ndarray, *, threshold: float, sigma1: float, sigma2: float, n_runs: int, seed: int
) -> np.ndarray:
    """How many queries confident GNMax answers in each of ``n_runs`` runs (seeds ``seed`` .. ``seed + n_runs − 1``)."""
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1, got {n_runs}")
    return np.array(
        [
            int(confident_gnmax(counts, threshold, sigma1, sigma2, np.random.default_rng(seed + k)).answered.sum())
            for k in range(int(n_runs))
        ]
    )


#: What each row of :func:`conversions` charges: the data-dependent rows are Table 2's expected cost.
CONVERSION_COSTS = {
    "data-dependent": "expected (Table 2), not a guarantee",
    "data-independent": "guarantee: every query charged both steps",
}


def conversions(counts: np.ndarray, *, threshold: float, sigma1: float, sigma2: float, delta: float) -> pd.DataFrame:
    """Confident GNMax's ε on these votes, data-dependent and data-independent, with the basic (Mironov 2017,
    Prop. 3) and the improved (Canonne, Kamath & Steinke 2020, Prop. 12) conversion, and the order each picks.

    The data-dependent rows are Papernot et al. 2018 Table 2's *expected* cost (step 2 weighted by Pr[answered]:
    ``cost="expected"``, read from ``expected_epsilon``), not the guarantee of a run; the ``cost`` column says so
    on every row. The data-independent rows charge every query both steps: a guarantee."""
    rows = []
    for conversion in ("basic", "improved"):
        for mode, kwargs in (
            ("data-dependent", {"votes": counts, "cost": "expected"}),
            ("data-independent", {"n_queries": len(counts)}),
        ):
            spent = confident_gnmax_epsilon(
                threshold=threshold,
                sigma1=sigma1,
                sigma2=sigma2,
                delta=delta,
                accounting=Accounting(conversion=conversion),
                **kwargs,
            )
            value = spent.expected_epsilon if mode == "data-dependent" else spent.epsilon
            rows.append(
                {
                    "conversion": conversion,
                    "analysis": mode,
                    "epsilon": value,
                    "order": spent.order,
                    "cost": CONVERSION_COSTS[mode],
                }
            )
    return pd.DataFrame(rows)


def log10_q(counts: np.ndarray, *, sigma: float) -> np.ndarray:
    """log₁₀ of Theorem 6's q for GNMax on every vote row (Papernot et al. 2018, Prop. 7)."""
    return gnmax_logq(counts, sigma) / np.log(10.0)
