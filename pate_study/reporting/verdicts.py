"""Verdicts for every "paper vs ours" comparison, computed by a stated rule, and the record a study keeps of them.

A comparison of a published value with ours ends in one of four verdicts:

- ``agrees``: the whole interval of ours lies on the claim's side of its boundary (inside its band);
- ``differs``: the whole interval lies on the other side, and the reason says why;
- ``not comparable``: scale, data or definition differ, so the two numbers do not measure the same thing
  (``reason`` says which). No comparison on a different quantity may be called ``agrees``;
- ``inconclusive``: neither of the above can be said (the interval straddles the boundary).

Claims are judged by :func:`pate_study.reporting.claims.judge` on estimates built by
:mod:`pate_study.reporting.uncertainty`; the older helpers below (:func:`within_tolerance`, :func:`direction`, ...)
judge a single number against a stated tolerance and carry no interval.

Recording a verdict
-------------------
A study records a verdict beside the numbers it judges, under the registry id, and nothing else::

    v = judge(claim, estimates)                       # or combine({...}) of several claims
    out.record("make2021-fig13", tnr=0.91, **v.as_record())

:meth:`Verdict.as_record` returns these keys (``scalars.json`` under the item id; nested the same way when a study
records a verdict under a sub-key, e.g. ``{"noise_tpr": v.as_record()}``):

``verdict``
    one of :data:`VERDICTS`.
``verdict_rule``
    the rule in words; for a claim judged at several steps (or an item combining several claims) it names the
    multiplicity rule too.
``verdict_reason``
    why (empty when it agrees).
``verdict_estimate``
    the rendered interval(s), "value [low, high] over N replicates of SOURCES (method, level)"
    (:meth:`pate_study.reporting.uncertainty.Estimate.render`), every claim's named in a combined verdict.
``verdict_basis``
    only when not ``"data"``: ``"analytic"`` or ``"source inconsistency"`` (never counted as evidence).
``verdict_evidence``
    always present: a list, one entry per judged estimate (a claim at one step), in judging order; empty for a
    verdict read off no interval (the tolerance helpers below, analytic claims). Each entry is a mapping with these
    keys (:meth:`Step.as_record`):

    ==================  ==========================================================================================
    ``key``             ``"<claim>"`` for a claim judged on one estimate, ``"<claim>/<step>"`` at several steps;
                        in an item that combines claims, ``<claim>`` is the claim's name in :func:`combine`'s
                        mapping (prefixed to the inner key when that verdict was itself a combination); unique
                        within the verdict; the ``estimate`` column of the replicates file
    ``claim``           the claim's name; ``step``: the step's label (``""`` for one estimate)
    ``kind``            the claim's kind; ``quantifier``: ``"every"`` or ``"some"`` (how its steps combine)
    ``agree_region``    where the claim holds, ``differ_region`` where it fails: lists of ``[low, high,
                        low_closed, high_closed]`` spans on the estimate's scale (printed precision included;
                        ``"-inf"`` / ``"inf"`` for unbounded ends); for a one-run claim ``band`` instead
    ``value``           the estimate; ``low``, ``high``: its interval at ``level``
    ``method``          one of :data:`pate_study.reporting.uncertainty.METHODS` (or ``"Wald chi-squared test"``)
    ``level``           the interval's two-sided level (0.95)
    ``df``              the t-interval's degrees of freedom (Welch: Satterthwaite's, fractional; clustered: G − 1;
                        the Wald test's k − 1), ``null`` without a t or chi-squared law
    ``n_replicates``    R (clustered: the clusters G); ``n_units``: the units nested in them (0 otherwise);
                        ``n_boot``: the bootstrap resamples (0 without a bootstrap)
    ``sources``         the random sources the interval covers; ``unreplicated``: those behind the number it does
                        not; ``cluster_sources``: the sources that make a cluster (empty unless clustered)
    ``outcome``         the step's outcome under the family rule: ``"agrees"``, ``"differs"``, ``"inconclusive"``
    ``outcome_alone``   the outcome its own interval at ``level`` gives, without the family rule
    ``family_decided``  ``true`` when the multiplicity rule decided the step: its outcome was read off the
                        interval at ``family_level`` (stricter than ``level``), not at ``level``
    ``family_level``    the two-sided level of the interval that decided the step (= ``level`` when the family
                        rule did not apply; a test: 1 − the significance it was read at); ``family_low``,
                        ``family_high``: that interval (null when it cannot be recomputed: no replicate data)
    ``p_value``         only for a test (the heterogeneity test, ``method`` ``"Wald chi-squared test"``): its
                        p-value; ``statistic``: W (also ``value``; ``low``, ``high``, ``level`` are null);
                        ``groups``: the groups' names; ``n_examples``: the test examples behind the covariance
                        (Hotelling's F calibration) or null; ``significance`` instead of the regions
    ``rederivable``     ``true`` when the replicates file holds the rows this interval is computed from (an
                        estimate built outside :mod:`pate_study.reporting.uncertainty`, or through an unnamed
                        transform, is ``false``)
    ``transform``       what was applied after the interval was computed, in order: ``["clip", low, high]``
                        (:meth:`~pate_study.reporting.uncertainty.Estimate.within`), ``["affine", a, b]`` (a·x + b;
                        a < 0 swaps the ends), ``["exp"]``, ``["log"]``, ``["function", name]`` (not re-derivable)
    ==================  ==========================================================================================

``verdict_decided_by``
    the ``key`` of the step that decided the verdict: for *differs* the step the family rule found on the other side
    first (or, for a "some step" claim, the claim's name: every step differed); for *inconclusive* the first step
    left undecided; for *agrees* of a "some step" claim the step found on the claim's side; ``""`` when every step
    agreed (nothing single decided it) or nothing was judged.
``verdict_multiplicity``
    the multiplicity rule's name (:data:`MULTIPLICITY_RULE` with the number of hypotheses), or ``"none (one
    hypothesis)"``; present whenever ``verdict_evidence`` is not empty.
``verdict_replicates``
    the name of the replicates file beside ``scalars.json``, ``"<item-id>.replicates.csv"`` (present when some
    judged estimate carries replicate data; every estimate built by :mod:`pate_study.reporting.uncertainty` does).
    :meth:`Verdict.as_record` returns a placeholder that carries the rows;
    :meth:`pate_study.reporting.outputs.NotebookOutputs.record` writes the file and stores its name.

The replicates file (:mod:`pate_study.reporting.replicates`)
------------------------------------------------------------
One CSV per recorded item, long format, one row per replicate, written atomically. Columns:

``record`` (the dotted path of the verdict's mapping inside the item's record, ``""`` at the top, list positions as
numbers, e.g. ``"noise.tpr"`` or ``"rows.3"``), ``estimate`` (the evidence ``key``), ``row`` (what the row is, below),
``method``, ``level``, ``statistic``, ``pairing``, ``transform`` (JSON), ``sources``, ``cluster_sources`` (``";
"``-joined), ``digits`` (the significant digits the numbers of this estimate are stored with), ``index``, ``cluster``,
``arm``, ``value``, ``a``, ``b``, ``sd``, ``n``, ``draws``.

Row kinds (``row``): ``estimate`` (one per estimate: the metadata columns), ``replicate`` (one per replicate:
``index``; ``cluster`` the label of its cluster; ``value`` the per-replicate number the interval reads, empty when
that replicate gave none (NaN: dropped); ``a``/``b`` the two arms when paired; a heterogeneity test: one per group,
``arm`` its name), ``point`` (``value``: the full-sample statistic of
a bootstrap, an exact value, one unreplicated run), ``draws`` (``draws``: the bootstrap draws, space-separated;
``index`` the group for a heterogeneity test), ``summary`` (``arm``, ``value`` = mean, ``sd``, ``n``: a summary's
replicates). A heterogeneity test's ``estimate`` row has ``n`` = the test examples behind its covariance (or
empty). ``statistic`` says how the interval is computed from the rows; the module docstring of
:mod:`pate_study.reporting.replicates` gives each formula.

Multiplicity: one rule for every family
---------------------------------------
A claim judged at several steps (six noise levels, twelve settings), and an item whose verdict combines several
claims (:func:`combine`: "differs if any differs"), ask one question of many intervals. Read naively, with a 95 %
interval each, a false *differs* (the claim holds exactly at every step, on its boundary) comes out with
probability 1 − 0.975^m for m directional steps: 14 % at 6, 26 % at 12. :func:`judge_family` controls it:

- **The side a family can get wrong by chance is corrected by Holm's step-down** (Holm 1979, *Scand. J. Statist.*
  6:65-70), at family-wise one-sided 2.5 % (:data:`FAMILY_ALPHA`): with ``m'`` hypotheses not yet rejected, a step's
  interval is re-read at the two-sided level ``1 − 2·α/m'`` (``α = (1 − level)/2``, 0.025 for a 95 % interval)
  from the same replicate data (:meth:`pate_study.reporting.uncertainty.Estimate.at_level`: t, bootstrap,
  combined, clustered alike); every hypothesis whose re-read interval lies wholly on the rejecting side is
  rejected, ``m'`` falls by their number, and the next round re-reads the rest, until none is added. This is
  Holm's procedure on the one-sided p-values the intervals invert (a p-value below ``α/m'`` exactly when the
  ``1 − 2α/m'`` interval lies beyond the boundary), so **one hypothesis reduces exactly to the single-interval
  rule** (its 95 % interval wholly on one side). Holm needs no assumption on how the steps depend on one another.
  For an *every step* claim (a direction, level or range that must hold at every step) that side is *differs*
  (a step hypothesis "the claim holds at this step" rejected); for a *some step* claim (``quantifier="some"``,
  "in some cases") it is *agrees* (a step hypothesis "the claim fails at this step" rejected), Holm over its own
  steps.
- **The other side needs no correction: it is an intersection-union test** (Berger 1982, *Technometrics*
  24:295-300): an every-step claim *agrees* only when every step's own 95 % interval lies on the claim's side, so
  a false *agrees* needs the one step where the claim fails to pass its own level-2.5 % test; a some-step claim
  *differs* only when every step lies on the other side (the claim is false only if it fails at every step).
- **An item is one family.** :func:`combine` judges the hypotheses on the *differs* side of all its data claims
  together (each step of an every-step claim, each some-step claim as one intersection-union hypothesis), by the
  same Holm step-down: a reader reads one verdict per item, and "differs if any claim differs" asks the same
  union question over claims as over steps, so its error rate is controlled at the same place. The *agrees* side
  of an item (every claim agrees) is again an intersection-union test. A verdict read off no interval (the
  tolerance helpers below, analytic claims) keeps its own outcome and is not part of the family.

Guarantee: when every claim of an item holds exactly at every step, the probability of a *differs* is at most
``max α_h`` over its hypotheses (Holm's bound): 2.5 % when they are directional, 5 % when one is a level's band
tested on both sides or a 5 % test (a heterogeneity claim). ``tests/reporting/test_multiplicity.py`` simulates it
at 6 and 12 steps with correlations 0 and 0.9, beside the uncorrected rule.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pate_study.reporting import checks
from pate_study.reporting.replicates import ReplicateRows
from pate_study.reporting.uncertainty import Estimate, HeterogeneityTest

VERDICTS = ("agrees", "differs", "not comparable", "inconclusive")
#: The outcomes a judged step can have.
OUTCOMES = ("agrees", "differs", "inconclusive")

#: What decided a verdict: our data, the mechanism's mathematics (any data), or the source's own inconsistency.
BASES = ("data", "analytic", "source inconsistency")

#: How a claim judged at several steps combines them (:class:`pate_study.reporting.claims.Claim`'s ``quantifier``).
QUANTIFIERS = ("every", "some")

#: The family-wise one-sided error rate of the corrected side of a family of a 95 % interval's hypotheses: each
#: hypothesis's own one-sided rate (``(1 − level)/2``) divided by the number not yet rejected (Holm 1979).
FAMILY_ALPHA = 0.025

#: The multiplicity rule, by name (``verdict_multiplicity`` adds the number of hypotheses).
MULTIPLICITY_RULE = "Holm's step-down (Holm 1979), family-wise one-sided 2.5 %"
#: ``verdict_multiplicity`` of a family of one hypothesis (the single-interval rule).
NO_MULTIPLICITY = "none (one hypothesis)"

#: A span of a claim's quantity: ``(low, high, low_closed, high_closed)``.
Span = tuple[float, float, bool, bool]


@dataclass(frozen=True)
class Region:
    """Where a claim holds (``agree``) and where it fails (``differ``) on our quantity's scale, each a union of
    spans (:data:`Span`); between them lies what neither can say (the printed precision of a boundary).

    ``contains``: a one-run claim: the claim's band (``agree[0]``) must lie *inside* our range to agree and wholly
    outside it to differ. ``significance``: a test (a heterogeneity claim): judged by its p-value at this level,
    not by spans."""

    agree: tuple[Span, ...] = ()
    differ: tuple[Span, ...] = ()
    contains: bool = False
    significance: float = 0.0

    def as_record(self) -> dict[str, Any]:
        """The regions as plain lists, for the record."""
        if self.significance:
            return {"significance": self.significance}
        if self.contains:
            lo, hi, _, _ = self.agree[0]
            return {"band": [lo, hi]}
        return {"agree_region": [list(s) for s in self.agree], "differ_region": [list(s) for s in self.differ]}


def _in_span(low: float, high: float, span: Span) -> bool:
    """Whether ``[low, high]`` lies inside ``span`` (an infinite end of the span takes any end of ours)."""
    lo, hi, lo_closed, hi_closed = span
    left = math.isinf(lo) or low > lo or (lo_closed and low == lo)
    right = math.isinf(hi) or high < hi or (hi_closed and high == hi)
    return left and right


def interval_outcome(region: Region, low: float, high: float) -> str:
    """``"agrees"``, ``"differs"`` or ``"inconclusive"`` for an interval ``[low, high]`` against ``region``."""
    if region.contains:
        lo, hi, _, _ = region.agree[0]
        if low <= lo and hi <= high:
            return "agrees"
        return "differs" if hi < low or lo > high else "inconclusive"
    if any(_in_span(low, high, s) for s in region.agree):
        return "agrees"
    if any(_in_span(low, high, s) for s in region.differ):
        return "differs"
    return "inconclusive"


def interval_at(estimate: Estimate, divisor: float) -> tuple[float, float] | None:
    """``estimate``'s interval with its one-sided rate ``(1 − level)/2`` divided by ``divisor`` (two-sided level
    ``1 − (1 − level)/divisor``), recomputed from its replicate data; ``None`` when it cannot be (an estimate built
    without its data): such a step never passes a corrected test."""
    if divisor == 1:
        return estimate.low, estimate.high
    if estimate.method == "exact" or estimate.method == "none":
        return estimate.low, estimate.high
    if estimate.derivation is None:
        return None
    e = estimate.at_level(1 - (1 - estimate.level) / divisor)
    return e.low, e.high


def _step_side(step: Step, divisor: float, side: str) -> bool:
    """Whether ``step`` lies wholly on ``side`` (``"agrees"`` / ``"differs"``) when its one-sided rate is divided by
    ``divisor``."""
    if step.region.significance:
        p = step.estimate.p_value
        rejected = p < step.region.significance / divisor
        return rejected if side == "differs" else not rejected
    bounds = interval_at(step.estimate, divisor)
    return bounds is not None and interval_outcome(step.region, *bounds) == side


def holm_step_down(beyond: Callable[[np.ndarray], np.ndarray], m: int) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down (Holm 1979) over ``m`` hypotheses, vectorised over runs.

    ``beyond(divisor)``: ``divisor`` an array of shape ``[..., 1]`` (or ``()``), the number of hypotheses not yet
    rejected in each run; returns ``[..., m]`` booleans, whether each hypothesis is rejected when its own one-sided
    rate is divided by ``divisor`` (its interval re-read at that level). Each round rejects every hypothesis that
    passes at the current divisor, then lowers the divisor by their number, until a round adds none -- the same
    rejections as Holm's procedure on the p-values, at most ``m`` rounds. Returns ``(rejected, divisor)``: which
    hypotheses were rejected, and the divisor each was decided at (when rejected) or last tested at (the final
    divisor of its run)."""
    m = checks.count(m, "m", maximum=10**6)
    found = np.asarray(beyond(np.asarray(float(m))), dtype=bool)
    if found.shape[-1:] != (m,):
        raise ValueError(f"beyond: expected booleans with a last axis of m={m} hypotheses, got shape {found.shape}")
    rejected = np.zeros(found.shape, dtype=bool)
    decided = np.full(found.shape, float(m))
    remaining = np.full(found.shape[:-1], float(m))
    for _ in range(m):
        new = found & ~rejected
        if not new.any():
            break
        rejected |= new
        decided = np.where(new, remaining[..., None], decided)
        remaining = m - rejected.sum(-1).astype(float)
        found = np.asarray(beyond(np.maximum(remaining, 1.0)[..., None]), dtype=bool)
    decided = np.where(rejected, decided, np.maximum(remaining, 1.0)[..., None])
    return rejected, decided


@dataclass(frozen=True)
class Step:
    """One judged estimate: a claim at one step, the estimate (or test) it read, and, once judged by
    :func:`judge_family`, its outcome. ``key``: unique in the verdict ("claim" or "claim/step"); ``group``: the
    claim it belongs to in the item (its steps combine by ``quantifier``); ``kind``: the claim's kind."""

    key: str
    claim: str
    step: str
    estimate: Estimate | HeterogeneityTest
    region: Region
    quantifier: str = "every"
    group: str = ""
    kind: str = ""
    outcome: str = ""
    outcome_alone: str = ""
    family_divisor: float = 1.0

    def __post_init__(self) -> None:
        if self.quantifier not in QUANTIFIERS:
            raise ValueError(f"quantifier={self.quantifier!r}, expected one of {list(QUANTIFIERS)}")
        if not self.group:
            object.__setattr__(self, "group", self.claim)

    @property
    def family_decided(self) -> bool:
        """Whether the multiplicity rule decided the step (its outcome read at a stricter level than its own)."""
        return self.family_divisor != 1

    @property
    def family_level(self) -> float:
        """The two-sided level of the interval that decided the step (a test: one minus the significance level it
        was read at)."""
        if isinstance(self.estimate, HeterogeneityTest):
            return 1 - self.region.significance / self.family_divisor
        return 1 - (1 - self.estimate.level) / self.family_divisor

    def as_record(self) -> dict[str, Any]:
        """The step's entry of ``verdict_evidence`` (the module docstring lists the keys)."""
        e = self.estimate
        common = {"key": self.key, "claim": self.claim, "step": self.step, "kind": self.kind}
        common |= {"quantifier": self.quantifier, **self.region.as_record()}
        judged = {
            "outcome": self.outcome,
            "outcome_alone": self.outcome_alone,
            "family_decided": self.family_decided,
        }
        if isinstance(e, HeterogeneityTest):
            return common | e.as_record() | judged | {"family_level": self.family_level, "rederivable": True}
        record = e.as_record()
        record |= {
            "df": e.df,
            "n_units": e.n_units,
            "cluster_sources": list(e.cluster_sources),
            "rederivable": e.rederivable,
            "transform": e.transform_record(),
        }
        bounds = interval_at(e, self.family_divisor) or (None, None)
        family = {"family_level": self.family_level, "family_low": bounds[0], "family_high": bounds[1]}
        return common | record | judged | family


@dataclass(frozen=True)
class Family:
    """What :func:`judge_family` found: the steps with their outcomes, each group's outcome (in order), the key that
    decided, the number of hypotheses on the corrected *differs* side, and the rule's name."""

    steps: tuple[Step, ...]
    groups: dict[str, str]
    decided_by: dict[str, str]
    n_hypotheses: int
    multiplicity: str


def judge_family(steps: Sequence[Step]) -> Family:
    """Judge ``steps`` as one family (the module docstring, "Multiplicity"): Holm's step-down on the *differs*
    side over every hypothesis of the family (a step of an every-step claim; a some-step claim as one
    intersection-union hypothesis), Holm on the *agrees* side within each some-step claim; the other sides by each
    step's own interval (intersection-union, no correction)."""
    steps = list(steps)
    if not steps:
        raise ValueError("judge_family: expected at least one step")
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(steps):
        groups.setdefault(s.group, []).append(i)
    quantifier = {g: steps[idx[0]].quantifier for g, idx in groups.items()}
    # the differs side: one hypothesis per step of an every-step group, one per some-step group
    hypotheses = [[i] for g, idx in groups.items() if quantifier[g] == "every" for i in idx]
    hypotheses += [idx for g, idx in groups.items() if quantifier[g] == "some"]

    def differs_beyond(divisor: np.ndarray) -> np.ndarray:
        d = float(np.asarray(divisor).reshape(-1)[0])
        return np.array([all(_step_side(steps[i], d, "differs") for i in h) for h in hypotheses])

    rejected, d_differs = holm_step_down(differs_beyond, len(hypotheses))
    divisor_d = {i: float(d) for h, d in zip(hypotheses, d_differs) for i in h}
    order_d = {i: (-float(d), n) for n, (h, d) in enumerate(zip(hypotheses, d_differs)) for i in h}
    divisor_a = {i: 1.0 for i in range(len(steps))}
    for g, idx in groups.items():
        if quantifier[g] != "some":
            continue

        def agrees_beyond(divisor: np.ndarray, idx: list[int] = idx) -> np.ndarray:
            d = float(np.asarray(divisor).reshape(-1)[0])
            return np.array([_step_side(steps[i], d, "agrees") for i in idx])

        _, d_agrees = holm_step_down(agrees_beyond, len(idx))
        divisor_a.update({i: float(d) for i, d in zip(idx, d_agrees)})
    judged = []
    for i, s in enumerate(steps):
        alone = _step_outcome(s, 1.0, 1.0)
        outcome = _step_outcome(s, divisor_d[i], divisor_a[i])
        side = outcome if outcome != "inconclusive" else alone
        divisor = {"differs": divisor_d[i], "agrees": divisor_a[i]}.get(side, 1.0)
        judged.append(dataclasses.replace(s, outcome=outcome, outcome_alone=alone, family_divisor=divisor))
    outcomes, decided_by = {}, {}
    for g, idx in groups.items():
        got = [judged[i].outcome for i in idx]
        if quantifier[g] == "every":
            outcome = "differs" if "differs" in got else ("agrees" if set(got) == {"agrees"} else "inconclusive")
            if outcome == "differs":
                first = min((i for i in idx if judged[i].outcome == "differs"), key=lambda i: order_d[i])
            else:
                first = next((i for i in idx if judged[i].outcome == "inconclusive"), None)
            decided_by[g] = judged[first].key if first is not None else ""
        else:
            outcome = "agrees" if "agrees" in got else ("differs" if set(got) == {"differs"} else "inconclusive")
            if outcome == "agrees":
                first = min((i for i in idx if judged[i].outcome == "agrees"), key=lambda i: (-divisor_a[i], i))
                decided_by[g] = judged[first].key
            else:
                decided_by[g] = g
        outcomes[g] = outcome
    n = len(hypotheses)
    some = [len(idx) for g, idx in groups.items() if quantifier[g] == "some" and len(idx) > 1]
    name = NO_MULTIPLICITY
    if n > 1 or some:
        name = f"{MULTIPLICITY_RULE} over {n} hypotheses on the 'differs' side" + (
            f", and over each 'some step' claim's steps on the 'agrees' side ({', '.join(map(str, some))})"
            if some
            else ""
        )
    return Family(tuple(judged), outcomes, decided_by, n, name)


def _step_outcome(step: Step, divisor_differs: float, divisor_agrees: float) -> str:
    if _step_side(step, divisor_differs, "differs"):
        return "differs"
    return "agrees" if _step_side(step, divisor_agrees, "agrees") else "inconclusive"


def family_rule_text(multiplicity: str) -> str:
    """The multiplicity rule in words, for a verdict's rule (empty for a family of one hypothesis)."""
    if not multiplicity or multiplicity == NO_MULTIPLICITY:
        return ""
    return (
        f"family: {multiplicity} -- each interval re-read at level 1 − 0.05/m' for the m' hypotheses not yet"
        " decided (one hypothesis: its 95 % interval); the other side needs every step's own 95 % interval"
        " (an intersection-union test, no correction: Berger 1982); a false 'differs' at most 2.5 % (5 % for a"
        " level's two sides or a 5 % test) when the claims hold exactly at every step"
    )


@dataclass(frozen=True)
class Verdict:
    """One judged comparison: the verdict, the rule that produced it, and why (required unless it agrees).

    ``estimate``: the interval the rule read (:mod:`pate_study.reporting.uncertainty`), if any; ``evidence``: its
    rendering, "estimate [low, high] over N replicates of SOURCES" (set from ``estimate`` when not given; for a
    combined verdict, every claim's, named); ``basis``: one of :data:`BASES`; ``steps``: every judged estimate
    with its outcome (:class:`Step`, set by :func:`pate_study.reporting.claims.judge` and :func:`combine`);
    ``decided_by``: the key of the step that decided; ``multiplicity``: the family rule's name; ``shown``:
    ``(key, estimate)`` of the estimates its evidence prints that no step holds (a claim not decided because its
    interval leaves out a source it needs, a claim of an item whose family did not re-read it), whose replicate rows
    are written beside the steps'. Change a verdict's reason or rule with :func:`dataclasses.replace`, which keeps
    its steps."""

    verdict: str
    rule: str
    reason: str = ""
    basis: str = "data"
    estimate: Estimate | None = None
    evidence: str = ""
    steps: tuple[Step, ...] = ()
    decided_by: str = ""
    multiplicity: str = ""
    shown: tuple[tuple[str, Estimate], ...] = ()

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r}, expected one of {list(VERDICTS)}")
        checks.text(self.rule, "rule", what="a statement of how the verdict was reached")
        checks.text(self.reason, "reason", empty=True)
        if self.verdict != "agrees" and not self.reason:
            raise ValueError(f"reason: a verdict of {self.verdict!r} needs a reason")
        if self.basis not in BASES:
            raise ValueError(f"basis={self.basis!r}, expected one of {list(BASES)}")
        if self.estimate is not None and not isinstance(self.estimate, Estimate):
            raise ValueError(f"estimate: expected an Estimate or None, got {type(self.estimate).__name__}")
        checks.text(self.evidence, "evidence", empty=True)
        if not all(isinstance(s, Step) for s in self.steps):
            raise ValueError("steps: expected a tuple of Step")
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "shown", tuple((str(k), e) for k, e in self.shown))
        if not all(isinstance(e, Estimate) for _, e in self.shown):
            raise ValueError("shown: expected (key, Estimate) pairs")
        if self.estimate is not None and not self.evidence:
            object.__setattr__(self, "evidence", self.estimate.render())

    def as_record(self) -> dict[str, Any]:
        """Keys for ``NotebookOutputs.record`` (the module docstring lists them): ``verdict``, ``verdict_rule``,
        ``verdict_reason``, ``verdict_evidence``; where they apply ``verdict_estimate``, ``verdict_basis``,
        ``verdict_decided_by``, ``verdict_multiplicity`` and ``verdict_replicates`` (a placeholder carrying the
        replicate rows, which ``NotebookOutputs.record`` writes and replaces by the file's name)."""
        out: dict[str, Any] = {"verdict": self.verdict, "verdict_rule": self.rule, "verdict_reason": self.reason}
        if self.evidence:
            out["verdict_estimate"] = self.evidence
        if self.basis != "data":
            out["verdict_basis"] = self.basis
        out["verdict_evidence"] = [s.as_record() for s in self.steps]
        if self.steps:
            out["verdict_decided_by"] = self.decided_by
            out["verdict_multiplicity"] = self.multiplicity or NO_MULTIPLICITY
        rows = ReplicateRows(
            [(s.key, s.estimate, (s.family_level,)) for s in self.steps] + [(k, e, ()) for k, e in self.shown]
        )
        if rows.estimates:
            out["verdict_replicates"] = rows
        return out


def _finite(name: str, value: float) -> float:
    return checks.number(value, name)


def _tolerance(name: str, value: float) -> float:
    value = checks.number(value, name)
    if value < 0:
        raise ValueError(f"{name}={value:g}: expected a tolerance >= 0")
    return value


def within_tolerance(
    paper: float, ours: float, *, rtol: float = 0.0, atol: float = 0.0, quantity: str = "value", why_differs: str = ""
) -> Verdict:
    """``agrees`` when ``|ours - paper| <= atol + rtol * |paper|`` (the rule of ``numpy.isclose``), else ``differs``.

    ``why_differs`` is the notebook's explanation, used as the reason when the values differ.
    """
    paper, ours = _finite("paper", paper), _finite("ours", ours)
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    checks.text(quantity, "quantity")
    checks.text(why_differs, "why_differs", empty=True)
    if rtol == 0 and atol == 0:
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
    slack = _tolerance("slack", slack)
    checks.text(quantity, "quantity")
    checks.text(why_differs, "why_differs", empty=True)
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
    margin, tolerance = _finite("margin", margin), _tolerance("tolerance", tolerance)
    checks.text(reason, "reason", what="the measured numbers")
    rule = f"{rule} (margin beyond ±{tolerance:g})"
    if margin > tolerance:
        return Verdict("agrees", rule)
    if margin < -tolerance:
        return Verdict("differs", rule, reason)
    return Verdict("inconclusive", rule, f"{reason} (margin {margin:+.3g} within ±{tolerance:g})")


def _label(v: Verdict) -> str:
    return v.verdict if v.basis == "data" else f"{v.verdict}, {v.basis}"


def _precedence(outcomes: Sequence[str]) -> str:
    """``differs`` if any differs, else ``inconclusive`` if any is, else ``agrees`` if any agrees, else ``not
    comparable``."""
    for outcome in ("differs", "inconclusive", "agrees", "not comparable"):
        if outcome in outcomes:
            return outcome
    raise ValueError("expected at least one outcome")


def _renamed(step: Step, name: str, single: bool) -> Step:
    """``step`` as a claim named ``name`` of an item: a verdict of one claim takes the item's name for the claim
    (``name/step``); a verdict of several claims is prefixed (``name/claim/step``)."""
    if single:
        rest = step.key[len(step.group) :] if step.key.startswith(step.group) else f"/{step.key}"
        return dataclasses.replace(step, key=name + rest, group=name)
    return dataclasses.replace(step, key=f"{name}/{step.key}", group=f"{name}/{step.group}")


def without_family_text(v: Verdict) -> str:
    """``v``'s rule without the multiplicity rule its own family appended (an item states its own once)."""
    text = family_rule_text(v.multiplicity)
    return v.rule.removesuffix(f"; {text}") if text else v.rule


def combine(verdicts: Mapping[str, Verdict], *, context: str = "") -> Verdict:
    """One item's verdict from its claims' (name -> verdict), the item judged as one family (the module docstring,
    "Multiplicity"): the steps of every claim decided by data are re-judged together by :func:`judge_family`
    (Holm's step-down over all their hypotheses on the *differs* side), then ``differs`` if any claim differs,
    else ``inconclusive`` if any is, else ``agrees`` if any agrees, else ``not comparable``, read over the claims
    decided by data only (an analytic claim or the source's own inconsistency is never evidence); when no claim is
    decided by data, over the others, and the result keeps their basis. A claim verdict read off no interval keeps
    its own outcome. The reason lists every claim's verdict (and the one it had alone, where the family changed
    it), then ``context``; the evidence lists every claim's interval, named."""
    if not isinstance(verdicts, Mapping) or not verdicts:
        raise ValueError("verdicts: expected a non-empty mapping of claim name -> Verdict")
    for name, v in verdicts.items():
        checks.text(name, "verdicts' names")
        if not isinstance(v, Verdict):
            raise ValueError(f"verdicts[{name!r}]: expected a Verdict, got {type(v).__name__}")
    checks.text(context, "context", empty=True)
    evidence = {n: v for n, v in verdicts.items() if v.basis == "data"}
    # claims whose verdict their own steps give (a verdict changed after judging keeps its outcome, as one read
    # off no interval)
    stepped = {n: v for n, v in evidence.items() if v.steps and v.verdict == _own_outcome(v)}
    outcomes = {n: v.verdict for n, v in verdicts.items()}
    family = None
    if stepped:
        renamed = {
            n: [_renamed(s, n, len({x.group for x in v.steps}) == 1) for s in v.steps] for n, v in stepped.items()
        }
        family = judge_family([s for steps in renamed.values() for s in steps])
        for n, steps in renamed.items():
            outcomes[n] = _precedence([family.groups[g] for g in dict.fromkeys(s.group for s in steps)])
    deciding = evidence or verdicts
    outcome = _precedence([outcomes[n] for n in deciding])
    basis = (
        "data"
        if evidence
        else ("analytic" if any(v.basis == "analytic" for v in verdicts.values()) else "source inconsistency")
    )

    def label(n: str, v: Verdict) -> str:
        moved = f"; alone: {v.verdict}, the item's family rule re-read its steps" if outcomes[n] != v.verdict else ""
        text = outcomes[n] if v.basis == "data" else f"{outcomes[n]}, {v.basis}"
        return f"{n}: {text}" + (f" ({v.reason}{moved})" if v.reason or moved else "")

    parts = "; ".join(label(n, v) for n, v in verdicts.items())
    rule = " AND ".join(f"[{name}] {without_family_text(v)}" for name, v in verdicts.items())
    multiplicity = family.multiplicity if family else ""
    if family_rule_text(multiplicity):
        rule += f"; {family_rule_text(multiplicity)}"
    reason = parts + (f". {context}" if context else "")
    intervals = "; ".join(f"{name}: {v.evidence}" for name, v in verdicts.items() if v.evidence)
    # what the evidence prints but the family's steps do not hold: the steps of claims it did not re-read, and
    # every claim's own shown estimates
    shown = [
        (f"{n}/{key}", e)
        for n, v in verdicts.items()
        for key, e in [*([] if n in stepped else [(s.key, s.estimate) for s in v.steps]), *v.shown]
    ]
    return Verdict(
        outcome,
        rule,
        reason,
        basis=basis,
        evidence=intervals,
        steps=family.steps if family else (),
        decided_by=_item_decided_by(outcome, verdicts, outcomes, family, stepped),
        multiplicity=multiplicity,
        shown=tuple(shown),
    )


def _own_outcome(v: Verdict) -> str:
    """The outcome ``v``'s steps give as a family of their own."""
    family = judge_family(v.steps)
    return _precedence(list(family.groups.values()))


def _item_decided_by(
    outcome: str, verdicts: Mapping[str, Verdict], outcomes: dict, family: Family | None, stepped: Mapping
) -> str:
    """The key that decided an item: a step's key (or a claim's name) from its family, else the first claim with
    the item's outcome; ``""`` for an item whose every claim agreed (or that is not comparable)."""
    if outcome in ("agrees", "not comparable") and len(verdicts) > 1:
        return ""
    if family is not None:
        steps = {s.key: s for s in family.steps}
        keys = [k for g, k in family.decided_by.items() if family.groups[g] == outcome]
        if keys:
            if outcome == "differs":  # the hypothesis rejected first (the largest divisor), then in order
                return max(keys, key=lambda k: (steps[k].family_divisor if k in steps else 0.0, -keys.index(k)))
            return keys[0]
    return next((n for n in verdicts if outcomes[n] == outcome and n not in stepped), "")
