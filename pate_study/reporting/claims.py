"""A source's claims as data, judged by one engine on our intervals (:mod:`pate_study.reporting.uncertainty`).

A :class:`Claim` holds the source's sentence, the quantity our estimate measures, the claim's kind, the random
sources behind our number and, where the claim names a number, the source's printed text of it. :func:`judge`
turns a claim and our :class:`~pate_study.reporting.uncertainty.Estimate` into a
:class:`~pate_study.reporting.verdicts.Verdict` by one rule for every kind:

- ``agrees`` only when the *whole* interval lies on the claim's side of its boundary (inside its band),
- ``differs`` only when the whole interval lies on the other side (outside the band),
- ``inconclusive`` otherwise.

The only constant tolerance is the source's printed precision: half the unit of the last digit it printed
(:func:`printed_half_unit`; "0.104" is ±0.0005, "1018.4" ±0.05, "20" ±0.5). The kinds:

- ``"level"``: ours equals the printed value ``p``: band ``[p − h, p + h]``; agrees when the interval lies inside
  it, differs when it lies wholly outside (an equivalence test: Schuirmann 1987's two one-sided tests at the
  interval's level), else inconclusive.
- ``"range"``: ours lies in the printed ``[lo, hi]``: band ``[lo − h_lo, hi + h_hi]``, as for a level.
- a level or range with ``negated=True``: ours lies *outside* the band (e.g. "th_e = 0.4 saves privacy": the saving
  is not 0): agrees when the interval lies wholly outside, differs when wholly inside.
- ``"direction"`` / ``"ratio"``: ours (a signed difference, or a ratio) is above (``side="above"``) or below the
  ``boundary`` (0 for a difference, 1 for a ratio, or a printed number, then widened by its ``h``).
- ``"every-step"``: a direction at every step (one estimate per step): agrees when every step agrees, differs
  when one step differs, else inconclusive.
- ``"one-run"``: the printed value ``p`` is one run's outcome of a randomised mechanism, and ours is the range one
  run falls in (:func:`~pate_study.reporting.uncertainty.one_run_range` over draws of the mechanism's noise):
  agrees when the band ``[p − h, p + h]`` lies wholly inside our range, differs when wholly outside it, else
  inconclusive (the printed value sits at an end).

A claim that follows from the mechanism's mathematics for any data is checked analytically (:func:`analytic`) and
labelled "analytic: holds for any data"; a claim that is the source's own inconsistency is labelled so
(:func:`source_inconsistency`) and is not a *differs* of ours. Neither counts as evidence
(:func:`pate_study.reporting.verdicts.combine`).

How a study uses it (declare the claims next to the pipeline, build each estimate from the replicates the pipeline
already has, judge, combine, record)::

    from pate_study.reporting import uncertainty as unc
    from pate_study.reporting.claims import Claim, judge
    from pate_study.reporting.verdicts import combine

    NOISE_LOWERS_TNR = Claim("noise lowers TNR", "MAKE 2021, §5: noise raises TPR and lowers TNR",
                             "student TNR without noise − with noise", "direction", (unc.STUDENT_SEED,))
    TPR_LEVEL = Claim("TPR at 250 teachers", "Sosa 2021, Table 4.2: TPR > 87 %", "student TPR", "direction",
                      (unc.STUDENT_SEED, unc.TEST_SET), boundary=0.87, printed="87 %")

    tnr = unc.paired_difference(tnr_no_noise_by_seed, tnr_noise_by_seed, NOISE_LOWERS_TNR.sources)
    rows = unc.bootstrap_rows(len(y_test), 1000, seed)                      # one resample set, shared by every arm
    draws = np.array([[tpr(y_test[r], pred[s][r]) for s in seeds] for r in rows])   # [n_boot, R]
    tpr_est = unc.combined_interval([tpr(y_test, pred[s]) for s in seeds], draws, [unc.STUDENT_SEED])
    v = combine({c.name: judge(c, e) for c, e in ((NOISE_LOWERS_TNR, tnr), (TPR_LEVEL, tpr_est))})
    out.record(item_id, tnr=tnr.value, **v.as_record())          # INDEX.md shows v.evidence beside the verdict

Replicates that are models (seeds of a student, a teacher) are more members of the same stack
(:mod:`pate_study.learning.stacked`); noise draws of a release on cached votes are cheap; a number with no
replicate at all is :func:`pate_study.reporting.uncertainty.unreplicated` (inconclusive, the source named). Privacy
numbers computed from fixed inputs are :func:`pate_study.reporting.uncertainty.exact`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .uncertainty import ONE_RUN_METHOD, Estimate
from .verdicts import Verdict, not_comparable

KINDS = ("level", "range", "direction", "ratio", "every-step", "one-run")
SIDES = ("above", "below")


def printed_number(printed: str) -> tuple[Decimal, Decimal]:
    """``(value, unit of the last printed digit)`` of a printed number, exactly: a leading "~" / "≈" / "about", a
    trailing "×" or "x", thousands separators and spaces are ignored; a trailing "%" divides both by 100 (so "35 %"
    is 0.35 with unit 0.01)."""
    text = str(printed).strip()
    percent = text.endswith("%")
    for mark in ("about", "~", "≈", "%", "×", ",", " "):
        text = text.replace(mark, "")
    text = text.rstrip("x")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"printed={printed!r}: expected a printed number such as '0.104' or '1018.4'") from None
    if not number.is_finite():
        raise ValueError(f"printed={printed!r}: expected a finite printed number")
    unit = Decimal(10) ** number.as_tuple().exponent
    scale = Decimal(100) if percent else Decimal(1)
    return number / scale, unit / scale


def printed_half_unit(printed: str) -> float:
    """Half the unit of the last digit of a printed number (the source's precision): "0.104" -> 0.0005,
    "1018.4" -> 0.05, "20" -> 0.5, "1e-4" -> 5e-05, "2.5e3" -> 50, "35 %" -> 0.005 (:func:`printed_number`)."""
    return float(printed_number(printed)[1] / 2)


@dataclass(frozen=True)
class Claim:
    """One claim of a source, as data.

    ``name``: a short label (the key in a combined verdict); ``sentence``: the source's words, with where they stand
    (e.g. "Muschiol 2021, §5.3: ..."); ``quantity``: what our estimate measures; ``kind``: one of :data:`KINDS`;
    ``sources``: the random sources behind our number; ``boundary``: a level's printed value, a range's lower end,
    a direction's or ratio's boundary (default 0, or 1 for a ratio); ``upper``: a range's upper end; ``side``:
    ``"above"`` or ``"below"`` for a direction, ratio or every-step claim; ``printed`` / ``printed_upper``: the
    source's printed text of ``boundary`` / ``upper`` (its half last digit is the only tolerance; empty: the boundary
    is exact, e.g. 0 or 1); ``basis``: ``"data"``, ``"analytic"`` or ``"source inconsistency"``."""

    name: str
    sentence: str
    quantity: str
    kind: str
    sources: tuple[str, ...] = ()
    boundary: float | None = None
    upper: float | None = None
    side: str = "above"
    printed: str = ""
    printed_upper: str = ""
    basis: str = "data"
    negated: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Claim {self.name!r}: kind={self.kind!r}, expected one of {list(KINDS)}")
        if self.side not in SIDES:
            raise ValueError(f"Claim {self.name!r}: side={self.side!r}, expected one of {list(SIDES)}")
        if not (self.name and self.sentence and self.quantity):
            raise ValueError("a Claim needs a name, the source's sentence and the quantity ours measures")
        if self.boundary is None:
            if self.kind in ("level", "range", "one-run"):
                raise ValueError(f"Claim {self.name!r}: a {self.kind} claim needs its printed value (boundary)")
            object.__setattr__(self, "boundary", 1.0 if self.kind == "ratio" else 0.0)
        if self.negated and self.kind not in ("level", "range"):
            raise ValueError(f"Claim {self.name!r}: only a level or range can be negated (a direction has a side)")
        if self.kind == "range" and (self.upper is None or self.upper < self.boundary):
            raise ValueError(f"Claim {self.name!r}: a range needs upper >= boundary, got {self.boundary}, {self.upper}")
        for text, value in ((self.printed, self.boundary), (self.printed_upper, self.upper)):
            if text and not math.isclose(float(printed_number(text)[0]), float(value), rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError(f"Claim {self.name!r}: printed {text!r} is not the claim's number {value}")

    @property
    def tolerance(self) -> float:
        """The source's printed precision on ``boundary`` (0 when the boundary is not a printed number)."""
        return printed_half_unit(self.printed) if self.printed else 0.0

    @property
    def tolerance_upper(self) -> float:
        """The printed precision on a range's ``upper`` end."""
        return printed_half_unit(self.printed_upper) if self.printed_upper else 0.0

    def band(self) -> tuple[float, float]:
        """The claim's band on our quantity: ``[lo, hi]`` for a level or range (widened by printed precision); for
        a direction, ratio or every-step claim the side beyond the boundary (``(b + h, inf)`` above, ``(-inf, b -
        h)`` below) -- the complement, beyond ``b ∓ h`` on the other side, is where it differs."""
        b, h = float(self.boundary), self.tolerance
        if self.kind in ("level", "one-run"):
            return b - h, b + h
        if self.kind == "range":
            return b - h, float(self.upper) + self.tolerance_upper
        return (b + h, math.inf) if self.side == "above" else (-math.inf, b - h)

    def rule(self) -> str:
        """The rule in words, as INDEX.md shows it."""
        b, h = float(self.boundary), self.tolerance
        pm = f" ± {h:g} (printed precision)" if h else ""
        if self.kind == "one-run":
            return (
                f"{self.quantity}: the printed {b:g}{pm} is one run of the mechanism: agrees when it lies wholly inside"
                " the range one run falls in over our draws, differs when wholly outside, else inconclusive"
            )
        if self.kind == "level":
            target = f"{'≠' if self.negated else '='} {b:g}{pm}"
        elif self.kind == "range":
            hu = self.tolerance_upper
            target = f"{'outside' if self.negated else 'in'} [{b:g}, {float(self.upper):g}]" + (
                f" widened by {h:g} / {hu:g} (printed precision)" if h or hu else ""
            )
        else:
            target = f"{'>' if self.side == 'above' else '<'} {b:g}{pm}" + (
                " at every step" if self.kind == "every-step" else ""
            )
        return (
            f"{self.quantity} {target}: agrees / differs only when the whole interval is on one side, else inconclusive"
        )


def _side(claim: Claim, estimate: Estimate) -> str:
    """ "agrees", "differs" or "inconclusive" for one estimate against one claim's band (see the module)."""
    lo, hi = claim.band()
    if claim.kind == "one-run":
        if estimate.method != ONE_RUN_METHOD:
            raise ValueError(f"Claim {claim.name!r}: a one-run claim reads one_run_range(), not a {estimate.method}")
        if estimate.low <= lo and hi <= estimate.high:
            return "agrees"
        return "differs" if hi < estimate.low or lo > estimate.high else "inconclusive"
    if claim.kind in ("level", "range"):
        inside, outside = ("agrees", "differs") if not claim.negated else ("differs", "agrees")
        if lo <= estimate.low and estimate.high <= hi:
            return inside
        if estimate.high < lo or estimate.low > hi:
            return outside
        return "inconclusive"
    b, h = float(claim.boundary), claim.tolerance
    beyond, against = (
        (estimate.low > b + h, estimate.high < b - h)
        if claim.side == "above"
        else (estimate.high < b - h, estimate.low > b + h)
    )
    return "agrees" if beyond else ("differs" if against else "inconclusive")


def judge(claim: Claim, estimate: Estimate | Sequence[Estimate] | None, *, note: str = "") -> Verdict:
    """The verdict of ``claim`` on our ``estimate`` (a sequence of per-step estimates for an every-step claim, or for
    a level, range, direction or ratio that must hold at every step: the every-step rule then applies;
    ``None`` when this run did not evaluate it: *not comparable*, "not evaluable on this run"). ``note``: what the
    numbers are, kept in the reason. An analytic or inconsistent claim is refused here (:func:`analytic`,
    :func:`source_inconsistency`)."""
    if claim.basis != "data":
        raise ValueError(f"Claim {claim.name!r} has basis {claim.basis!r}: use analytic() or source_inconsistency()")
    rule = claim.rule()
    if estimate is None or (isinstance(estimate, Sequence) and not estimate):
        return not_comparable(f"not evaluable on this run{': ' + note if note else ''}", rule=rule)
    steps = list(estimate) if isinstance(estimate, Sequence) else [estimate]
    sides = [_side(claim, e) for e in steps]
    outcome = "differs" if "differs" in sides else ("inconclusive" if "inconclusive" in sides else "agrees")
    evidence = "; ".join(e.render() for e in steps) if len(steps) > 1 else steps[0].render()
    reason = (
        ""
        if outcome == "agrees"
        else (
            f"ours {evidence}"
            + (f" ({note})" if note else "")
            + ("" if len(steps) == 1 else f"; per step: {', '.join(sides)}")
        )
    )
    return Verdict(outcome, rule, reason, estimate=steps[0] if len(steps) == 1 else None, evidence=evidence)


def analytic(claim: Claim, holds: bool, derivation: str, *, illustration: Estimate | None = None) -> Verdict:
    """A claim that follows from the mechanism's mathematics for any data, checked analytically: ``holds`` is what
    the mathematics says of the source's claim, ``derivation`` why. The verdict (agrees when the claim holds,
    differs when the mathematics contradicts it) is labelled "analytic: holds for any data" and has basis
    ``"analytic"``, so it is never counted as evidence; ``illustration``: our run's number, shown, not judged."""
    rule = f"analytic: {claim.quantity} {'>' if claim.side == 'above' else '<'} {float(claim.boundary):g} for any data"
    reason = f"analytic: holds for any data: {derivation}"
    return Verdict(
        "agrees" if holds else "differs",
        rule,
        reason,
        basis="analytic",
        evidence=f"illustration, not evidence: {illustration.render()}" if illustration else "",
    )


def source_inconsistency(claim: Claim, explanation: str) -> Verdict:
    """A claim whose printed numbers contradict the source's own stated setting: *not comparable*, labelled "the
    source's own inconsistency" (basis ``"source inconsistency"``): not a *differs* of ours."""
    return Verdict(
        "not comparable",
        f"the source's numbers checked against its own stated setting: {claim.quantity}",
        f"the source's own inconsistency, not a difference of ours: {explanation}",
        basis="source inconsistency",
    )
