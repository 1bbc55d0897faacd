"""A claim judged only on an interval over every random source its own rule needs (notebooks 01, 02 and 03).

A :class:`~pate_study.reporting.claims.Claim` names the random sources behind our number (``sources``); an
:class:`~pate_study.reporting.uncertainty.Estimate` names the sources its interval covers and those it leaves out
(``unreplicated``). When an estimate leaves out a source that its claim names, its interval does not measure a
variation the claim says matters, so it cannot decide the claim either way: :func:`judge_with_sources` returns
*inconclusive* with that reason instead of reading the interval, and the interval is not judged (the verdict has no
judged step, so an item combining it keeps it inconclusive: :func:`pate_study.reporting.verdicts.combine`); the
interval is still shown, over the sources it covers, with its replicate rows (``Verdict.shown``). A source
that a study names as not replicated but that its claim does not need (the data draw both arms of a paired
comparison share, for example) is shown and does not hold the verdict back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pate_study.reporting.claims import Claim, judge
from pate_study.reporting.uncertainty import Estimate
from pate_study.reporting.verdicts import Verdict


def keyed_estimates(estimate: Any) -> tuple[tuple[str, Estimate], ...]:
    """The estimates of one estimate, a sequence or a mapping of steps (``None`` entries left out), keyed as
    :func:`pate_study.reporting.claims.judge` names its steps: a mapping's labels, else ``step i`` (one estimate:
    ``estimate``)."""
    if isinstance(estimate, Mapping):
        return tuple((str(k), e) for k, e in estimate.items() if isinstance(e, Estimate))
    if isinstance(estimate, Sequence) and not isinstance(estimate, str):
        found = [e for e in estimate if isinstance(e, Estimate)]
    else:
        found = [estimate] if isinstance(estimate, Estimate) else []
    return (("estimate", found[0]),) if len(found) == 1 else tuple((f"step {i + 1}", e) for i, e in enumerate(found))


def estimates_of(estimate: Any) -> list[Estimate]:
    """The estimates of one estimate, a sequence or a mapping of steps (``None`` entries left out)."""
    return [e for _, e in keyed_estimates(estimate)]


def missing_sources(claim: Claim, estimate: Any) -> tuple[str, ...]:
    """The sources ``claim`` names that some estimate of ``estimate`` leaves out (its ``unreplicated``), in order."""
    return tuple(dict.fromkeys(s for e in estimates_of(estimate) for s in e.unreplicated if s in claim.sources))


def judge_with_sources(claim: Claim, estimate: Any, *, note: str = "", quantifier: str | None = None) -> Verdict:
    """:func:`pate_study.reporting.claims.judge`, unless an estimate leaves out a source the claim names
    (:func:`missing_sources`): then *inconclusive*, the reason naming the sources and our value, the interval not
    read."""
    missing = missing_sources(claim, estimate)
    if not missing:
        return judge(claim, estimate, note=note, quantifier=quantifier)
    shown = keyed_estimates(estimate)
    values = ", ".join(f"{e.value:.4g}" for _, e in shown)
    return Verdict(
        "inconclusive",
        claim.rule(quantifier, max(1, len(shown)))
        + "; an interval that leaves out a source the claim depends on decides nothing (inconclusive)",
        f"not decided: the interval leaves out {', '.join(missing)}, which this claim's number depends on and no"
        f" replicate of this run varies (ours {values}{'; ' + note if note else ''})",
        evidence="; ".join(e.render() if len(shown) == 1 else f"{k}: {e.render()}" for k, e in shown),
        shown=shown,
    )
