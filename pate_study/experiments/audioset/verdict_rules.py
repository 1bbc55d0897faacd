"""What both Audio Set notebooks' verdicts share (:mod:`.teacher_claims` for notebook 04, :mod:`.release_claims`
for notebook 05): the random sources behind each kind of number, the estimates built from what the pipeline keeps
(:mod:`pate_study.reporting.uncertainty`), and the judge every claim goes through
(:func:`pate_study.reporting.claims.judge`). No constant tolerance: an interval over the replicates the pipeline
has, or, where it has none, an unbounded one (inconclusive) with the missing source named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim, judge
from pate_study.reporting.verdicts import Verdict, inconclusive, not_comparable
from pate_study.reporting.verdicts import direction as _direction

#: The random sources behind an embedding teacher's score (one run per teacher: partition and training seed).
TEACHER = (unc.TEACHER_SEED,)
#: Behind a noise-free ensemble's score on the query pool: its teachers' seeds and partitions, and the finite pool.
ENSEMBLE = (unc.TEACHER_SEED, unc.TEST_SET)
#: Behind a student's mean mAP: student seeds (replicated), the release-noise draw the seeds share, the teachers,
#: and the test set (neither replicated by the pipeline yet).
STUDENT = (unc.STUDENT_SEED,)
STUDENT_UNREPLICATED = (unc.RELEASE_NOISE, unc.TEACHER_SEED, unc.TEST_SET)


def direction(margin: float, tolerance: float, *, rule: str, reason: str) -> Verdict:
    """:func:`pate_study.reporting.verdicts.direction` for callers that hold a margin and a measured half-width:
    *not comparable* when this run has no finite margin (a profile that did not run one of the compared settings),
    *inconclusive* when no spread was measured (``tolerance`` not finite: a single replicate)."""
    if not np.isfinite(margin):
        return not_comparable(f"not evaluable on this run: {reason}", rule=rule)
    if not np.isfinite(tolerance):
        return inconclusive(f"{reason} (one replicate: no spread measured)", rule=rule)
    return _direction(margin, tolerance, rule=rule, reason=reason)


def seed_tolerance(sd_a: float, n_a: int, sd_b: float = 0.0, n_b: int = 1) -> float:
    """The half-width of the 95 % Welch t-interval (:func:`pate_study.reporting.uncertainty.welch_difference`) of a
    difference of two seed means (sd with ddof 1 over ``n_a`` / ``n_b`` seeds; ``n_b = 1`` with ``sd_b = 0``
    compares a mean with a constant), ``inf`` when neither side measured a spread."""
    e = unc.welch_difference((0.0, sd_a, int(n_a)), (0.0, sd_b if n_b >= 2 else float("nan"), int(n_b)), STUDENT)
    return float(e.high - e.value)


def student_estimate(row: Any, column: str = "map") -> unc.Estimate:
    """A student table row's mean ``column`` over its seeds as an estimate (t-interval from ``<column>_sd`` and
    ``n_seeds``); the release-noise draw, teachers and test set are named as not replicated."""
    sd = row.get(f"{column}_sd", float("nan")) if hasattr(row, "get") else float("nan")
    n = row.get("n_seeds", 1) if hasattr(row, "get") else 1
    n = 1 if n is None or (isinstance(n, float) and math.isnan(n)) else int(n)
    return unc.t_interval_from_summary(float(row[column]), float(sd), n, STUDENT, unreplicated=STUDENT_UNREPLICATED)


def student_difference(a: Any, b: Any, column: str = "map") -> unc.Estimate:
    """``a[column] − b[column]`` of two student rows (independent seeds; Welch), the shared sources named as not
    replicated."""

    def summary(r: Any) -> tuple[float, float, int]:
        n = r.get("n_seeds", 1)
        n = 1 if n is None or (isinstance(n, float) and math.isnan(n)) else int(n)
        return float(r[column]), float(r.get(f"{column}_sd", float("nan"))), n

    return unc.welch_difference(summary(a), summary(b), STUDENT, unreplicated=STUDENT_UNREPLICATED)


def relative(estimate: unc.Estimate, base: float) -> unc.Estimate:
    """``estimate / base`` for a positive constant ``base`` (e.g. a difference relative to the level it moves)."""
    return estimate.map(lambda x: x / base)


def judged(claim: Claim, estimate: unc.Estimate | Sequence[unc.Estimate] | None, note: str = "") -> Verdict:
    """:func:`pate_study.reporting.claims.judge`, with a step this run did not evaluate (None) left out and the
    claim *not comparable* when no step is left."""
    steps = [estimate] if isinstance(estimate, unc.Estimate) else [e for e in (estimate or []) if e is not None]
    if not steps:
        return judge(claim, None, note=note)
    return judge(claim, steps if not isinstance(estimate, unc.Estimate) else estimate, note=note)


def synthetic(claim: Claim) -> Verdict:
    """A direction on synthetic stand-in teachers says nothing about Audio Set: *not comparable*."""
    return not_comparable(
        "synthetic stand-in teachers: a direction on them says nothing about Audio Set", rule=claim.rule()
    )
