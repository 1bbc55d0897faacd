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
- ``"every-step"``: a direction at every step (one estimate per step).
- ``"homogeneity"``: "no significant difference between the k groups" (Muschiol 2021, Fig 5.6), judged by the test
  the sentence names, at the source's 5 % (``significance``): a
  :func:`~pate_study.reporting.uncertainty.heterogeneity_test` (Wald chi-squared of equal means, the covariance of
  the k estimates from a shared-test-set bootstrap): *differs* when it finds a significant difference, *agrees*
  ("no significant difference found") when it does not -- a failure to reject, whose power the rule states.

Any claim may be judged at several steps (a sequence of estimates, or a mapping ``{step label: estimate}``): its
``quantifier`` says how they combine -- ``"every"`` (it holds at every step) or ``"some"`` (it holds "in some
cases") -- and one multiplicity rule decides the family (:func:`pate_study.reporting.verdicts.judge_family`,
Holm's step-down on the side chance can get wrong, named in the rule text). A direction's boundary is ``strict``
("lower than": an exact tie, a gap of 0 [0, 0], *differs*) or not ("at most": a tie *agrees*); a claim that does
not say (``None``) leaves a tie inconclusive.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from pate_study.reporting import checks
from pate_study.reporting.uncertainty import ONE_RUN_METHOD, Estimate, HeterogeneityTest
from pate_study.reporting.verdicts import (
    BASES,
    QUANTIFIERS,
    Region,
    Step,
    Verdict,
    family_rule_text,
    judge_family,
    not_comparable,
)

KINDS = ("level", "range", "direction", "ratio", "every-step", "one-run", "homogeneity")
SIDES = ("above", "below")
#: The kinds whose boundary has a side (and so may be strict).
DIRECTED = ("direction", "ratio", "every-step")


def printed_number(printed: str) -> tuple[Decimal, Decimal]:
    """``(value, unit of the last printed digit)`` of a printed number, exactly: a leading "~" / "≈" / "about", a
    trailing "×" or "x", thousands separators and spaces are ignored; a trailing "%" divides both by 100 (so "35 %"
    is 0.35 with unit 0.01)."""
    checks.text(printed, "printed", what="the source's printed text of a number, e.g. '0.104'")
    text = printed.strip()
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
    is exact, e.g. 0 or 1); ``basis``: one of :data:`~pate_study.reporting.verdicts.BASES`; ``negated``: a level or
    range that must *not* hold; ``strict``: for a direction, ratio or every-step claim, whether the boundary is
    strict ("lower than", "above": a tie differs), not strict ("at most", "at least": a tie agrees) or not stated
    (``None``: a tie is inconclusive); ``quantifier``: ``"every"`` or ``"some"`` step, when judged at several;
    ``significance``: the level of a homogeneity claim's test (the source's; 5 % when it names none)."""

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
    strict: bool | None = None
    quantifier: str = "every"
    significance: float = 0.05

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for field_ in ("name", "sentence", "quantity"):
            checks.text(
                getattr(self, field_),
                f"Claim {field_}",
                what="a non-empty string (a Claim needs a name, the source's sentence and the quantity ours measures)",
            )
        where = f"Claim {self.name!r}"
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind={self.kind!r}, expected one of {list(KINDS)}")
        if self.side not in SIDES:
            raise ValueError(f"{where}: side={self.side!r}, expected one of {list(SIDES)}")
        if self.basis not in BASES:
            raise ValueError(f"{where}: basis={self.basis!r}, expected one of {list(BASES)}")
        if self.quantifier not in QUANTIFIERS:
            raise ValueError(f"{where}: quantifier={self.quantifier!r}, expected one of {list(QUANTIFIERS)}")
        set_(self, "sources", checks.names(self.sources, f"{where}: sources"))
        checks.flag(self.negated, f"{where}: negated")
        if self.strict is not None:
            checks.flag(self.strict, f"{where}: strict")
            if self.kind not in DIRECTED:
                raise ValueError(
                    f"{where}: strict applies to a {', '.join(DIRECTED)} claim (a boundary with a side), not a"
                    f" {self.kind}"
                )
        sig = checks.number(self.significance, f"{where}: significance")
        if not 0 < sig < 1:
            raise ValueError(
                f"{where}: significance={sig:g}, expected a test level strictly between 0 and 1, e.g. 0.05"
            )
        printed_text = "the source's printed text of the number, a string such as '0.104'"
        checks.text(self.printed, f"{where}: printed", empty=True, what=printed_text)
        checks.text(self.printed_upper, f"{where}: printed_upper", empty=True, what=printed_text)
        if self.boundary is None:
            if self.kind in ("level", "range", "one-run"):
                raise ValueError(f"{where}: a {self.kind} claim needs its printed value (boundary)")
            set_(self, "boundary", 1.0 if self.kind == "ratio" else 0.0)
        set_(self, "boundary", checks.number(self.boundary, f"{where}: boundary"))
        if self.upper is not None:
            set_(self, "upper", checks.number(self.upper, f"{where}: upper"))
        if self.negated and self.kind not in ("level", "range"):
            raise ValueError(f"{where}: only a level or range can be negated (a direction has a side)")
        if self.kind == "range" and (self.upper is None or self.upper < self.boundary):
            raise ValueError(f"{where}: a range needs upper >= boundary, got {self.boundary}, {self.upper}")
        if self.kind == "homogeneity" and self.quantifier != "every":
            raise ValueError(f"{where}: a homogeneity claim is one test, not judged at some step")
        for text, value in ((self.printed, self.boundary), (self.printed_upper, self.upper)):
            if text and (
                value is None
                or not math.isclose(float(printed_number(text)[0]), float(value), rel_tol=1e-9, abs_tol=1e-12)
            ):
                raise ValueError(f"{where}: printed {text!r} is not the claim's number {value}")

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

    def region(self) -> Region:
        """Where the claim holds and where it fails on our quantity (:class:`~pate_study.reporting.verdicts.Region`):
        a level or range holds inside its band (closed) and fails wholly outside it; a direction holds beyond
        ``b ± h`` on its side and fails beyond it on the other, the boundary itself on the side ``strict`` gives it
        (a strict claim fails at a tie, a claim "at most"/"at least" holds there, an unstated one neither)."""
        if self.kind == "homogeneity":
            return Region(significance=float(self.significance))
        lo, hi = self.band()
        inf = math.inf
        if self.kind == "one-run":
            return Region(agree=((lo, hi, True, True),), contains=True)
        if self.kind in ("level", "range"):
            inside = ((lo, hi, True, True),)
            outside = ((-inf, lo, False, False), (hi, inf, False, False))
            return Region(outside, inside) if self.negated else Region(inside, outside)
        b, h = float(self.boundary), self.tolerance
        tie_agrees, tie_differs = self.strict is False, self.strict is True
        if self.side == "above":
            return Region(((b + h, inf, tie_agrees, False),), ((-inf, b - h, False, tie_differs),))
        return Region(((-inf, b - h, False, tie_agrees),), ((b + h, inf, tie_differs, False),))

    def rule(self, quantifier: str | None = None, steps: int = 1) -> str:
        """The rule in words, as INDEX.md shows it (``steps`` judged, combined by ``quantifier``)."""
        quantifier = quantifier or self.quantifier
        b, h = float(self.boundary), self.tolerance
        pm = f" ± {h:g} (printed precision)" if h else ""
        where = f" at {quantifier} step" if steps > 1 or self.kind == "every-step" else ""
        if self.kind == "homogeneity":
            return (
                f"{self.quantity}: no significant difference between the groups, judged by the Wald chi-squared test"
                f" of equal means (k − 1 df; the covariance of the k estimates from a shared-test-set bootstrap;"
                f" Cochran's Q generalised to correlated estimates) at {self.significance * 100:g} % as the source"
                " states it:"
                " differs when the test finds a significant difference, agrees when it does not ('no significant"
                " difference found': a failure to reject, not a proof of equal means -- the test detects only"
                " differences of a few standard errors of the test set's noise)"
            )
        if self.kind == "one-run":
            return (
                f"{self.quantity}: the printed {b:g}{pm} is one run of the mechanism{where}: agrees when it lies wholly"
                " inside the range one run falls in over our draws, differs when wholly outside, else inconclusive"
            )
        tie = ""
        if self.kind == "level":
            target = f"{'≠' if self.negated else '='} {b:g}{pm}"
        elif self.kind == "range":
            hu = self.tolerance_upper
            target = f"{'outside' if self.negated else 'in'} [{b:g}, {float(self.upper):g}]" + (
                f" widened by {h:g} / {hu:g} (printed precision)" if h or hu else ""
            )
        else:
            sign = {("above", False): "≥", ("below", False): "≤", ("above", True): ">", ("below", True): "<"}
            symbol = sign.get((self.side, self.strict), ">" if self.side == "above" else "<")
            tie = {True: "; a tie at the boundary differs (strict)", False: "; a tie at the boundary agrees"}.get(
                self.strict, ""
            )
            target = f"{symbol} {b:g}{pm}"
        return (
            f"{self.quantity} {target}{where}: agrees / differs only when the whole interval is on one side, else"
            f" inconclusive{tie if self.kind in DIRECTED else ''}"
        )


def _steps(estimate: Any) -> list[tuple[str, Any]]:
    """``(label, estimate)`` per step: a mapping's keys, a sequence's positions ("step 1", ...), or one unlabelled."""
    if isinstance(estimate, Mapping):
        items = [(str(k), e) for k, e in estimate.items()]
    elif isinstance(estimate, Sequence) and not isinstance(estimate, str):
        items = [(f"step {i + 1}", e) for i, e in enumerate(estimate)]
    else:
        items = [("", estimate)]
    bad = [label for label, e in items if not isinstance(e, (Estimate, HeterogeneityTest))]
    if bad:
        raise ValueError(
            f"estimate{f'[{bad[0]!r}]' if bad[0] else ''}: expected an Estimate (pate_study.reporting.uncertainty), got"
            f" {type(dict(items)[bad[0]]).__name__}"
        )
    return items


def judge(
    claim: Claim,
    estimate: Estimate | HeterogeneityTest | Sequence[Estimate] | Mapping[str, Estimate] | None,
    *,
    note: str = "",
    quantifier: str | None = None,
) -> Verdict:
    """The verdict of ``claim`` on our ``estimate``: one :class:`~pate_study.reporting.uncertainty.Estimate`, or its
    steps (a sequence, or a mapping ``{step label: estimate}``, e.g. ``{"ρ = 1": e1, ...}``), combined by
    ``quantifier`` (default the claim's: ``"every"`` or ``"some"``) under the family rule
    (:func:`pate_study.reporting.verdicts.judge_family`); a homogeneity claim reads a
    :class:`~pate_study.reporting.uncertainty.HeterogeneityTest`. ``None`` (or no step) when this run did not
    evaluate it: *not comparable*, "not evaluable on this run". ``note``: what the numbers are, kept in the reason.
    An analytic or inconsistent claim is refused here (:func:`analytic`, :func:`source_inconsistency`)."""
    if not isinstance(claim, Claim):
        raise ValueError(f"claim: expected a Claim, got {type(claim).__name__}")
    checks.text(note, "note", empty=True)
    quantifier = claim.quantifier if quantifier is None else checks.choice(quantifier, "quantifier", QUANTIFIERS)
    if claim.basis != "data":
        raise ValueError(f"Claim {claim.name!r} has basis {claim.basis!r}: use analytic() or source_inconsistency()")
    if estimate is None or (
        isinstance(estimate, (Sequence, Mapping)) and not isinstance(estimate, str) and not estimate
    ):
        return not_comparable(f"not evaluable on this run{': ' + note if note else ''}", rule=claim.rule(quantifier))
    items = _steps(estimate)
    for label, e in items:
        is_test = isinstance(e, HeterogeneityTest)
        if is_test != (claim.kind == "homogeneity"):
            raise ValueError(
                f"Claim {claim.name!r}: a {claim.kind} claim reads "
                + ("a heterogeneity_test()" if claim.kind == "homogeneity" else "an Estimate, not a test")
            )
        if claim.kind == "one-run" and e.method != ONE_RUN_METHOD:
            raise ValueError(f"Claim {claim.name!r}: a one-run claim reads one_run_range(), not a {e.method}")
    if claim.kind == "homogeneity" and len(items) != 1:
        raise ValueError(f"Claim {claim.name!r}: a homogeneity claim reads one test, got {len(items)}")
    region = claim.region()
    steps = [
        Step(
            f"{claim.name}/{label}" if label else claim.name,
            claim.name,
            label,
            e,
            region,
            quantifier=quantifier,
            kind=claim.kind,
        )
        for label, e in items
    ]
    family = judge_family(steps)
    outcome = family.groups[claim.name]
    judged = family.steps
    single = len(items) == 1 and not items[0][0]
    named = isinstance(estimate, Mapping)  # a sequence's steps are shown in order, unnamed (their keys: "step i")
    evidence = "; ".join(f"{s.step}: {s.estimate.render()}" if named else s.estimate.render() for s in judged)
    per_step = ", ".join(
        (f"{s.step}: " if named else "")
        + s.outcome
        + (f" (alone: {s.outcome_alone})" if s.outcome != s.outcome_alone else "")
        for s in judged
    )
    if claim.kind == "homogeneity":
        test = judged[0].estimate
        found = "a significant difference found" if outcome == "differs" else "no significant difference found"
        reason = f"{found} (p = {test.p_value:.2g} vs {claim.significance:g})" + (f"; {note}" if note else "")
    elif outcome == "agrees":
        reason = ""
    else:
        reason = (
            f"ours {evidence}"
            + (f" ({note})" if note else "")
            + ("" if len(judged) == 1 else f"; per step: {per_step}")
        )
    rule = claim.rule(quantifier, len(items))
    if family_rule_text(family.multiplicity):
        rule += f"; {family_rule_text(family.multiplicity)}"
    return Verdict(
        outcome,
        rule,
        reason,
        estimate=items[0][1] if single and isinstance(items[0][1], Estimate) else None,
        evidence=evidence,
        steps=judged,
        decided_by=family.decided_by[claim.name],
        multiplicity=family.multiplicity,
    )


def analytic(claim: Claim, holds: bool, derivation: str, *, illustration: Estimate | None = None) -> Verdict:
    """A claim that follows from the mechanism's mathematics for any data, checked analytically: ``holds`` is what
    the mathematics says of the source's claim, ``derivation`` why. The verdict (agrees when the claim holds,
    differs when the mathematics contradicts it) is labelled "analytic: holds for any data" and has basis
    ``"analytic"``, so it is never counted as evidence; ``illustration``: our run's number, shown, not judged."""
    if not isinstance(claim, Claim):
        raise ValueError(f"claim: expected a Claim, got {type(claim).__name__}")
    holds = checks.flag(holds, "holds")
    checks.text(derivation, "derivation", what="why the mathematics decides the claim")
    if illustration is not None and not isinstance(illustration, Estimate):
        raise ValueError(f"illustration: expected an Estimate or None, got {type(illustration).__name__}")
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
    if not isinstance(claim, Claim):
        raise ValueError(f"claim: expected a Claim, got {type(claim).__name__}")
    checks.text(explanation, "explanation", what="how the source contradicts itself")
    return Verdict(
        "not comparable",
        f"the source's numbers checked against its own stated setting: {claim.quantity}",
        f"the source's own inconsistency, not a difference of ours: {explanation}",
        basis="source inconsistency",
    )
