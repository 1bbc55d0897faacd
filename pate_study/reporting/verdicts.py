"""Verdicts for every "paper vs ours" comparison, computed by a stated rule.

A comparison of a published value with ours ends in one of three verdicts:

- ``agrees``: ours lies within the published spread, or within a stated tolerance of the published value;
- ``differs``: it does not, and the notebook explains why (``reason``);
- ``not comparable``: scale, data or definition differ, so the two numbers do not measure the same thing
  (``reason`` says which). No comparison on a different quantity may be called ``agrees``;
- ``inconclusive``: the difference that decides a direction lies inside the stated tolerance (the same tolerance
  both ways), so neither agrees nor differs can be said.

Notebooks record a verdict beside the numbers it judges, under the registry id::

    v = verdicts.within_tolerance(paper=0.94, ours=0.91, atol=0.05, quantity="TNR")
    out.record("make2021-fig13", tnr=0.91, **v.as_record())

``figures/INDEX.md`` shows the verdict, its rule and its reason, and where the verdict was read off an interval
(:mod:`pate_study.reporting.claims` on a :class:`pate_study.reporting.uncertainty.Estimate`) ours as "estimate [low,
high] over N replicates of SOURCES"; a test fails when an item with published values and a regenerated status has
none. A verdict's ``basis`` says what decided it: ``"data"`` (our measurement), ``"analytic"`` (it follows from the
mechanism's mathematics for any data: never counted as evidence, :func:`combine` leaves it out of the outcome) or
``"source inconsistency"`` (the source contradicts itself: not a difference of ours).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .uncertainty import Estimate

VERDICTS = ("agrees", "differs", "not comparable", "inconclusive")

#: What decided a verdict: our data, the mechanism's mathematics (any data), or the source's own inconsistency.
BASES = ("data", "analytic", "source inconsistency")


@dataclass(frozen=True)
class Verdict:
    """One judged comparison: the verdict, the rule that produced it, and why (required unless it agrees).

    ``estimate``: the interval the rule read (:mod:`pate_study.reporting.uncertainty`), if any; ``evidence``: its
    rendering, "estimate [low, high] over N replicates of SOURCES" (set from ``estimate`` when not given; for a
    combined verdict, every claim's, named); ``basis``: one of :data:`BASES`."""

    verdict: str
    rule: str
    reason: str = ""
    basis: str = "data"
    estimate: Estimate | None = None
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r}, expected one of {list(VERDICTS)}")
        if not self.rule:
            raise ValueError("rule must state how the verdict was reached")
        if self.verdict != "agrees" and not self.reason:
            raise ValueError(f"a verdict of {self.verdict!r} needs a reason")
        if self.basis not in BASES:
            raise ValueError(f"basis={self.basis!r}, expected one of {list(BASES)}")
        if self.estimate is not None and not self.evidence:
            object.__setattr__(self, "evidence", self.estimate.render())

    def as_record(self) -> dict[str, str]:
        """Keys for ``NotebookOutputs.record``: ``verdict``, ``verdict_rule``, ``verdict_reason``, and where they
        apply ``verdict_estimate`` (the rendered interval(s)) and ``verdict_basis`` (when not ``"data"``)."""
        out = {"verdict": self.verdict, "verdict_rule": self.rule, "verdict_reason": self.reason}
        if self.evidence:
            out["verdict_estimate"] = self.evidence
        if self.basis != "data":
            out["verdict_basis"] = self.basis
        return out


def _finite(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}={value!r}: expected a finite number")
    return value


def within_tolerance(
    paper: float, ours: float, *, rtol: float = 0.0, atol: float = 0.0, quantity: str = "value", why_differs: str = ""
) -> Verdict:
    """``agrees`` when ``|ours - paper| <= atol + rtol * |paper|`` (the rule of ``numpy.isclose``), else ``differs``.

    ``why_differs`` is the notebook's explanation, used as the reason when the values differ.
    """
    paper, ours = _finite("paper", paper), _finite("ours", ours)
    if rtol < 0 or atol < 0 or (rtol == 0 and atol == 0):
        raise ValueError(f"rtol={rtol}, atol={atol}: state a tolerance (non-negative, not both 0)")
    rule = f"{quantity}: |ours - paper| <= {atol:g} + {rtol:g}·|paper|"
    if abs(ours - paper) <= atol + rtol * abs(paper):
        return Verdict("agrees", rule)
    return Verdict("differs", rule, why_differs or f"ours {ours:.4g} vs paper {paper:.4g}")


def within_range(
    low: float, high: float, ours: float, *, quantity: str = "value", slack: float = 0.0, why_differs: str = ""
) -> Verdict:
    """``agrees`` when ours lies in the published range ``[low - slack, high + slack]`` (e.g. a printed spread)."""
    low, high, ours = _finite("low", low), _finite("high", high), _finite("ours", ours)
    if high < low:
        raise ValueError(f"low={low} > high={high}: expected low <= high")
    rule = f"{quantity}: ours in paper's [{low:g}, {high:g}]" + (f" ± {slack:g}" if slack else "")
    if low - slack <= ours <= high + slack:
        return Verdict("agrees", rule)
    return Verdict("differs", rule, why_differs or f"ours {ours:.4g} outside [{low:.4g}, {high:.4g}]")


def not_comparable(reason: str, *, rule: str = "scale, data or definition differ") -> Verdict:
    """The two numbers do not measure the same thing; ``reason`` says which of scale, data or definition differs."""
    return Verdict("not comparable", rule, reason)


def differs(reason: str, *, rule: str) -> Verdict:
    """A qualitative statement of the paper that our run contradicts (``rule`` states the test applied)."""
    return Verdict("differs", rule, reason)


def agrees(*, rule: str) -> Verdict:
    """A qualitative statement of the paper that our run confirms (``rule`` states the test applied)."""
    return Verdict("agrees", rule)


def inconclusive(reason: str, *, rule: str) -> Verdict:
    """The deciding difference lies inside the tolerance: neither direction can be claimed (``reason`` gives it)."""
    return Verdict("inconclusive", rule, reason)


def direction(margin: float, tolerance: float, *, rule: str, reason: str) -> Verdict:
    """A directional claim decided by a signed ``margin`` (positive: the claim holds) with one ``tolerance`` for
    both directions: ``agrees`` when ``margin > tolerance``, ``differs`` when ``margin < -tolerance``, else
    ``inconclusive``. ``reason`` (the measured numbers) is kept for the two verdicts that need one."""
    margin, tolerance = _finite("margin", margin), _finite("tolerance", tolerance)
    if tolerance < 0:
        raise ValueError(f"tolerance={tolerance}: expected >= 0")
    rule = f"{rule} (margin beyond ±{tolerance:g})"
    if margin > tolerance:
        return Verdict("agrees", rule)
    if margin < -tolerance:
        return Verdict("differs", rule, reason)
    return Verdict("inconclusive", rule, f"{reason} (margin {margin:+.3g} within ±{tolerance:g})")


def _label(v: Verdict) -> str:
    return v.verdict if v.basis == "data" else f"{v.verdict}, {v.basis}"


def combine(verdicts: dict[str, Verdict], *, context: str = "") -> Verdict:
    """One item's verdict from its claims' (name -> verdict): ``differs`` if any claim differs, else ``inconclusive``
    if any is, else ``agrees`` if any agrees, else ``not comparable``, read over the claims decided by data only
    (an analytic claim or the source's own inconsistency is never evidence); when no claim is decided by data, over
    the others, and the result keeps their basis. The reason lists every claim's verdict, then ``context`` (e.g. the
    scale difference); the evidence lists every claim's interval, named."""
    if not verdicts:
        raise ValueError("combine needs at least one claim")
    evidence = {n: v for n, v in verdicts.items() if v.basis == "data"}
    deciding = evidence or verdicts
    found = {v.verdict for v in deciding.values()}
    for outcome in ("differs", "inconclusive", "agrees", "not comparable"):
        if outcome in found:
            break
    basis = (
        "data"
        if evidence
        else ("analytic" if any(v.basis == "analytic" for v in verdicts.values()) else "source inconsistency")
    )
    parts = "; ".join(f"{name}: {_label(v)}" + (f" ({v.reason})" if v.reason else "") for name, v in verdicts.items())
    rule = " AND ".join(f"[{name}] {v.rule}" for name, v in verdicts.items())
    reason = parts + (f". {context}" if context else "")
    intervals = "; ".join(f"{name}: {v.evidence}" for name, v in verdicts.items() if v.evidence)
    return Verdict(outcome, rule, reason, basis=basis, evidence=intervals)
