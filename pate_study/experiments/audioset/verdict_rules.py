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
#: Behind a student's mean mAP: the teachers that labelled its queries (the replicate ensembles), the release-noise
#: draw and the student's training seed -- each replicate unit of :func:`.pipeline.replicate_units` draws all three --
#: and the test set it is scored on (not replicated: one test set).
STUDENT = (unc.TEACHER_SEED, unc.RELEASE_NOISE, unc.STUDENT_SEED)
STUDENT_UNREPLICATED = (unc.TEST_SET,)
#: What a student row's units replicate inside one teacher ensemble (the cluster's nested sources).
STUDENT_UNIT = (unc.RELEASE_NOISE, unc.STUDENT_SEED)


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


def _units(row: Any, column: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A student row's per-unit values of ``column`` and their teacher ensembles (:func:`.pipeline.unit_summary`:
    ``map_units``, ``map_clusters``), or None (a summary without them)."""
    get = row.get if hasattr(row, "get") else (lambda k, d=None: d)
    values, clusters = get(f"{column}_units", None), get(f"{column}_clusters", None)
    if values is None or clusters is None or np.ndim(values) != 1 or len(values) != len(clusters):
        return None
    return np.asarray(values, float), np.asarray(clusters)


def student_estimate(row: Any, column: str = "map") -> unc.Estimate:
    """A student table row's mean ``column`` as an estimate: over its replicate units nested in the teacher ensembles
    that labelled them (``{column}_units`` / ``{column}_clusters``: :func:`pate_study.reporting.uncertainty.
    clustered_interval`, t over the ensemble means with ``G − 1`` df; one ensemble: t over the units, the teachers
    named as not replicated), else from the row's summary (``<column>_sd``, ``n_seeds``; every source but the
    student seed named as not replicated). The test set is named as not replicated."""
    units = _units(row, column)
    if units is not None:
        return unc.clustered_interval(*units, [unc.TEACHER_SEED], STUDENT_UNIT, unreplicated=STUDENT_UNREPLICATED)
    sd = row.get(f"{column}_sd", float("nan")) if hasattr(row, "get") else float("nan")
    n = row.get("n_seeds", 1) if hasattr(row, "get") else 1
    n = 1 if n is None or (isinstance(n, float) and math.isnan(n)) else int(n)
    return unc.t_interval_from_summary(
        float(row[column]),
        float(sd),
        n,
        (unc.STUDENT_SEED,),
        unreplicated=(unc.TEACHER_SEED, unc.RELEASE_NOISE, *STUDENT_UNREPLICATED),
    )


def student_difference(a: Any, b: Any, column: str = "map") -> unc.Estimate:
    """``a[column] − b[column]`` of two student rows: paired by replicate unit when both carry the same units'
    ensembles (unit ``r`` of both shares its teacher ensemble and student seed:
    :func:`pate_study.reporting.uncertainty.clustered_paired_difference`), else Welch over their summaries (the
    sources each summary does not replicate named)."""
    ua, ub = _units(a, column), _units(b, column)
    if ua is not None and ub is not None and ua[1].shape == ub[1].shape and np.array_equal(ua[1], ub[1]):
        return unc.clustered_paired_difference(
            ua[0], ub[0], ua[1], [unc.TEACHER_SEED], STUDENT_UNIT, unreplicated=STUDENT_UNREPLICATED
        )

    def summary(r: Any) -> tuple[float, float, int]:
        n = r.get("n_seeds", 1)
        n = 1 if n is None or (isinstance(n, float) and math.isnan(n)) else int(n)
        return float(r[column]), float(r.get(f"{column}_sd", float("nan"))), n

    return unc.welch_difference(
        summary(a),
        summary(b),
        (unc.STUDENT_SEED,),
        unreplicated=(unc.TEACHER_SEED, unc.RELEASE_NOISE, *STUDENT_UNREPLICATED),
    )


def relative(estimate: unc.Estimate, base: float) -> unc.Estimate:
    """``estimate / base`` for a positive constant ``base`` (e.g. a difference relative to the level it moves)."""
    return estimate.map(lambda x: x / base)


def needs_source(claim: Claim, estimate: unc.Estimate) -> unc.Estimate:
    """``estimate`` as a claim may read it: an interval that leaves out a random source the claim names as behind its
    number (``claim.sources``, e.g. the teachers' training seed and partition) measures less than the claim is
    about and cannot decide it, so it becomes unbounded (:func:`pate_study.reporting.uncertainty.unreplicated`,
    the missing sources named): *inconclusive* unless that source is replicated."""
    missing = _missing(claim, estimate)
    return unc.unreplicated(estimate.value, list(estimate.unreplicated)) if missing else estimate


def _missing(claim: Claim, estimate: Any) -> list[str]:
    """The claim's sources an estimate names as not replicated (also "<source> of one side (a single run)")."""
    return [
        x
        for x in getattr(estimate, "unreplicated", ())
        if any(x == src or x.startswith(f"{src} ") for src in claim.sources)
    ]


def judged(claim: Claim, estimate: unc.Estimate | Sequence[unc.Estimate] | None, note: str = "") -> Verdict:
    """:func:`pate_study.reporting.claims.judge`, with a step this run did not evaluate (None) left out and the
    claim *not comparable* when no step is left; a step whose interval leaves out a source the claim names cannot
    decide it (:func:`needs_source`: unbounded, the missing source named in the reason)."""
    single = isinstance(estimate, unc.Estimate)
    steps = [estimate] if single else [e for e in (estimate or []) if e is not None]
    if not steps:
        return judge(claim, None, note=note)
    kept = [needs_source(claim, e) if isinstance(e, unc.Estimate) else e for e in steps]
    missing = sorted({x for e in steps for x in _missing(claim, e)})
    if missing:
        note = (note + "; " if note else "") + f"not replicated, so undecided: {', '.join(missing)}"
    return judge(claim, kept[0] if single else kept, note=note)


def synthetic(claim: Claim) -> Verdict:
    """A direction on synthetic stand-in teachers says nothing about Audio Set: *not comparable*."""
    return not_comparable(
        "synthetic stand-in teachers: a direction on them says nothing about Audio Set", rule=claim.rule()
    )
