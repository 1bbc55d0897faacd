"""One recorded verdict as the index and the detail pages read it: the verdict, its rule and reason, and one
:class:`Step` per judged estimate (claim, step, value, interval, method, degrees of freedom, level, replicates and
their sources, what is not replicated, the step's outcome), plus the step that decided it and the multiplicity rule.

:func:`read_verdict` reads a record of ``scalars.json`` (written by ``NotebookOutputs.record(item_id,
**verdict.as_record())``, :mod:`pate_study.reporting.verdicts`): the structured evidence list where the record
carries one, else the rendered intervals of ``verdict_estimate`` (:meth:`pate_study.reporting.uncertainty.Estimate.
render`, parsed back; a record without either has no steps). Nothing here computes an interval: it reads and prints
what was recorded. :func:`compact_interval` prints one in the index's short form, ``0.14 [0.080, 0.20]``;
:func:`rendered_text` is a Markdown line as a reader sees it (what the index's 400-character rule counts).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The record key of the structured evidence (one mapping per judged estimate or step), and the keys of the step
#: that decided the verdict and of the multiplicity rule's name: the first of each tuple that a record carries.
EVIDENCE_KEYS = ("verdict_evidence",)
DECIDING_KEYS = ("verdict_decided_by",)
MULTIPLICITY_KEYS = ("verdict_multiplicity",)
#: The record key naming the replicates file beside ``scalars.json``.
REPLICATES_KEY = "verdict_replicates"
#: Each field of :class:`Step` and the names an evidence entry may give it (the first present is read).
STEP_FIELDS = {
    "key": ("key",),
    "claim": ("claim",),
    "step": ("step",),
    "value": ("value",),
    "low": ("low",),
    "high": ("high",),
    "method": ("method",),
    "level": ("level",),
    "df": ("df",),
    "n_replicates": ("n_replicates",),
    "n_units": ("n_units",),
    "n_boot": ("n_boot",),
    "sources": ("sources",),
    "unreplicated": ("unreplicated",),
    "cluster_sources": ("cluster_sources",),
    "outcome": ("outcome",),
    "family": ("family_decided",),
    "family_level": ("family_level",),
    "family_low": ("family_low",),
    "family_high": ("family_high",),
    "p_value": ("p_value",),
    "rederivable": ("rederivable",),
    "agree_region": ("agree_region",),
}
#: Methods whose interval is no interval: a number with no random source, or one run with nothing replicated.
EXACT, NONE = "exact", "none"

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf"
#: A rendered interval, "value [low, high]" (what Estimate.render and this module print).
INTERVAL = re.compile(rf"(?<![\w.])(?P<value>{NUMBER}) \[(?P<low>{NUMBER}|−∞|-∞), (?P<high>{NUMBER}|∞)\]")
_EXACT = re.compile(rf"(?<![\w.])(?P<value>{NUMBER}) \((?P<what>exact: no random source|one run; no interval[^)]*)\)")
_DF = re.compile(r"(\d+(?:\.\d+)?) df")
_LEVEL = re.compile(r"(\d+(?:\.\d+)?)\s?%\)")
_METHOD = re.compile(r"\((?P<method>[a-z][a-z +-]*?)(?:, \d+(?:\.\d+)? df)?, \d+(?:\.\d+)?\s?%\)")


@dataclass(frozen=True)
class Step:
    """One judged estimate: ``claim`` and ``step`` name it (either may be empty), ``value`` / ``low`` / ``high`` the
    interval at ``level`` (a test's statistic, or an exact number: both ends the value), ``method`` how it was
    built, ``df`` its degrees of freedom,
    ``n_replicates`` / ``n_units`` / ``n_boot`` what it was built from, ``sources`` / ``cluster_sources`` /
    ``unreplicated`` the random sources it covers, makes clusters of, and leaves out; ``outcome`` the step's own
    verdict; ``family`` whether the multiplicity rule decided it, reading the interval ``[family_low, family_high]``
    at ``family_level``; ``key`` the step's key in the record (the replicates file's ``estimate``); ``p_value`` a
    test's; ``rederivable`` whether the replicates file holds its rows (``None``: not recorded). ``design_text``: a
    legacy record's rendered design ("over 3 replicates of ... (t-interval, 95%)"), read where the structured fields
    are missing; ``printed_digits``: the significant digits its numbers were read with from such a text (they are
    never printed with fewer: rounding a rounded number again can move its last digit, 1.2505 → 1.25 → 1.2)."""

    claim: str
    step: str
    value: float
    low: float
    high: float
    method: str = ""
    level: float | None = None
    df: float | None = None
    n_replicates: int | None = None
    n_units: int | None = None
    n_boot: int | None = None
    sources: tuple[str, ...] = ()
    unreplicated: tuple[str, ...] = ()
    cluster_sources: tuple[str, ...] = ()
    outcome: str = ""
    family: bool = False
    family_level: float | None = None
    family_low: float | None = None
    family_high: float | None = None
    key: str = ""
    p_value: float | None = None
    rederivable: bool | None = None
    agree_region: tuple[tuple[float, float], ...] = ()
    design_text: str = ""
    printed_digits: int | None = None

    @property
    def label(self) -> str:
        """``"claim, step"`` (or whichever of the two is set)."""
        return ", ".join(p for p in (self.claim, self.step) if p)

    @property
    def is_interval(self) -> bool:
        """True when the step is an interval over a random source (not an exact number, not one unreplicated run)."""
        return (
            not self.is_test
            and self.method not in (EXACT, NONE)
            and math.isfinite(self.low)
            and math.isfinite(self.high)
        )

    @property
    def is_test(self) -> bool:
        """True for a test (the heterogeneity test's statistic and p-value), not an interval."""
        return self.p_value is not None

    @property
    def deciding_interval(self) -> tuple[float, float, float | None]:
        """``(low, high, level)`` of the interval that decided the step: the family rule's, stricter, when it did."""
        if self.family and self.family_low is not None and self.family_high is not None:
            return self.family_low, self.family_high, self.family_level
        return self.low, self.high, self.level

    def design(self) -> str:
        """The study design behind the interval in one line: replicates and their sources, method, degrees of
        freedom, level, what is not replicated (from the structured fields; a legacy record's rendered text)."""
        if self.design_text and not self.method:
            return self.design_text
        if self.method == EXACT:
            text = "exact: no random source"
        elif self.method == NONE:
            text = "one run: nothing replicated"
        else:
            text = f"{_replicates(self)}; {_method_line(self)}"
        if self.unreplicated:
            text += f"; not replicated: {', '.join(self.unreplicated)}"
        return text


def _replicates(step: Step) -> str:
    """``"3 × teacher training seed and partition, 10 × release-noise draw nested"`` and the like."""
    sources = list(step.sources)
    if step.cluster_sources:
        outer = ", ".join(step.cluster_sources)
        inner = ", ".join(s for s in sources if s not in step.cluster_sources) or "no source"
        units = f"{step.n_units} units" if step.n_units else "units"
        return f"{step.n_replicates} × {outer}, {units} of {inner} nested in them"
    if step.method == "percentile bootstrap":
        return f"{step.n_boot} bootstrap resamples of {', '.join(sources) or 'no source'}"
    if step.method == "t-interval + percentile bootstrap" and sources:
        replicated = ", ".join(sources[:-1]) or "no source"
        return f"{step.n_replicates} × {replicated}, {step.n_boot} bootstrap resamples of {sources[-1]}"
    if step.is_test:
        return f"{step.n_boot} shared bootstrap resamples of {', '.join(sources) or 'no source'}"
    if step.method == "central range of draws":
        return f"{step.n_replicates} draws of {', '.join(sources) or 'no source'} (where one run falls)"
    return f"{step.n_replicates} × {', '.join(sources) or 'no source'}"


def _method_line(step: Step) -> str:
    parts = [step.method or "method not recorded"]
    if step.df is not None:
        parts.append(f"{step.df:.3g} df")
    if step.level is not None:
        parts.append(f"{step.level:.0%}")
    return ", ".join(parts)


@dataclass(frozen=True)
class Judged:
    """One item's recorded verdict: ``verdict``, ``basis`` (data, analytic, source inconsistency), ``rule``,
    ``reason``, its ``steps``, the index of the step that decided it (``None``: no step did) and the multiplicity
    rule's name (empty when the record names none); ``every_step``: every one of several steps agreed (nothing
    single decided it: ``deciding`` is then the step closest to leaving the claim's region)."""

    verdict: str
    basis: str = "data"
    rule: str = ""
    reason: str = ""
    steps: tuple[Step, ...] = field(default=())
    deciding: int | None = None
    multiplicity: str = ""
    every_step: bool = False

    @property
    def deciding_step(self) -> Step | None:
        """The step that decided the verdict, if one did."""
        return self.steps[self.deciding] if self.deciding is not None else None


def _first(entry: Mapping, names: Sequence[str], default: Any = None) -> Any:
    return next((entry[n] for n in names if n in entry and entry[n] is not None), default)


def _number(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}={value!r}: expected a number") from None


def _optional(value: Any, kind: type) -> Any:
    return None if value is None or value == "" else kind(float(value)) if kind is int else kind(value)


def _texts(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    return (str(value),) if isinstance(value, str) else tuple(str(v) for v in value)


def step_from_entry(entry: Mapping, where: str = "evidence entry") -> Step:
    """A :class:`Step` from one structured evidence entry (field names: :data:`STEP_FIELDS`). Raises ValueError
    naming ``where`` and the field for an entry without a number where one is needed."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {type(entry).__name__}")
    get = {name: _first(entry, names) for name, names in STEP_FIELDS.items()}
    if get["value"] is None:
        raise ValueError(f"{where}: no value (expected one of {list(STEP_FIELDS['value'])})")
    value = _number(get["value"], f"{where} value")
    low = value if get["low"] is None else _number(get["low"], f"{where} low")
    high = value if get["high"] is None else _number(get["high"], f"{where} high")
    return Step(
        key=str(get["key"] or ""),
        claim=str(get["claim"] or ""),
        step=str(get["step"] or ""),
        value=value,
        low=low,
        high=high,
        method=str(get["method"] or ""),
        level=_optional(get["level"], float),
        df=_optional(get["df"], float),
        n_replicates=_optional(get["n_replicates"], int),
        n_units=_optional(get["n_units"], int),
        n_boot=_optional(get["n_boot"], int),
        sources=_texts(get["sources"]),
        unreplicated=_texts(get["unreplicated"]),
        cluster_sources=_texts(get["cluster_sources"]),
        outcome=str(get["outcome"] or ""),
        family=bool(get["family"]),
        family_level=_optional(get["family_level"], float),
        family_low=_optional(get["family_low"], float),
        family_high=_optional(get["family_high"], float),
        p_value=_optional(get["p_value"], float),
        rederivable=None if get["rederivable"] is None else bool(get["rederivable"]),
        agree_region=_spans(get["agree_region"], f"{where} agree_region"),
    )


def _spans(value: Any, what: str) -> tuple[tuple[float, float], ...]:
    """``[[low, high, low_closed, high_closed], ...]`` as ``((low, high), ...)``."""
    if not value:
        return ()
    try:
        return tuple((_number(span[0], what), _number(span[1], what)) for span in value)
    except (TypeError, IndexError):
        raise ValueError(f"{what}={value!r}: expected a list of [low, high, ...] spans") from None


def margin(step: Step) -> float:
    """How far the step's interval lies inside the claim's agree region (the smaller distance to the span's ends
    that holds it; ``inf`` when no region is recorded, negative when no span holds it)."""
    inside = [min(step.low - lo, hi - step.high) for lo, hi in step.agree_region if lo <= step.low and step.high <= hi]
    if inside:
        return max(inside)
    return math.inf if not step.agree_region else -math.inf


def _deciding_index(steps: Sequence[Step], marker: Any, verdict: str, reason: str) -> int | None:
    """The deciding step: the record's marker (an index, or a step's label, claim or step name), else the first
    step whose own outcome is the verdict, else (a legacy record) the first whose label the reason gives that
    verdict, else the first step with an interval."""
    if not steps:
        return None
    if isinstance(marker, (int, float)) and not isinstance(marker, bool) and 0 <= int(marker) < len(steps):
        return int(marker)
    if isinstance(marker, str) and marker:
        for i, s in enumerate(steps):
            if marker in (s.key, s.label):
                return i
        for i, s in enumerate(steps):  # a "some step" claim decided by every step: the claim's name
            if marker == s.claim and s.outcome == verdict:
                return i
    for i, s in enumerate(steps):
        if s.outcome == verdict:
            return i
    for i, s in enumerate(steps):
        if s.step and f"{s.step}: {verdict}" in reason or s.claim and f"{s.claim}: {verdict}" in reason:
            return i
    per_step = re.search(r"per step: ([a-z ,]+)", reason)
    if per_step:
        outcomes = [o.strip() for o in per_step.group(1).split(",")]
        if verdict in outcomes and outcomes.index(verdict) < len(steps):
            return outcomes.index(verdict)
    return next((i for i, s in enumerate(steps) if s.is_interval), 0)


def read_verdict(record: Mapping) -> Judged | None:
    """The :class:`Judged` view of one item's record (``None`` when it holds no verdict)."""
    if not isinstance(record, Mapping) or not isinstance(record.get("verdict"), str):
        return None
    verdict, reason = record["verdict"], str(record.get("verdict_reason") or "")
    entries = _first(record, EVIDENCE_KEYS)
    if isinstance(entries, Sequence) and not isinstance(entries, str) and entries:
        steps = tuple(step_from_entry(e, f"verdict_evidence[{i}]") for i, e in enumerate(entries))
    else:
        steps = parse_rendered(str(record.get("verdict_estimate") or ""))
    marker = _first(record, DECIDING_KEYS)
    every = verdict == "agrees" and len(steps) > 1 and marker == "" and all(s.outcome == "agrees" for s in steps)
    deciding = (
        min(range(len(steps)), key=lambda i: margin(steps[i]))
        if every
        else _deciding_index(steps, marker, verdict, reason)
    )
    return Judged(
        verdict=verdict,
        basis=str(record.get("verdict_basis") or "data"),
        rule=str(record.get("verdict_rule") or ""),
        reason=reason,
        steps=steps,
        deciding=deciding,
        multiplicity=str(_first(record, MULTIPLICITY_KEYS, "")),
        every_step=every,
    )


def _float(text: str) -> float:
    return {"−∞": -math.inf, "-∞": -math.inf, "∞": math.inf}.get(text) or float(text)


def _design_fields(design: str) -> dict[str, Any]:
    """What a rendered design says of method, degrees of freedom and level (legacy records)."""
    method = _METHOD.search(design)
    df, level = _DF.search(design), _LEVEL.search(design)
    return {
        "df": float(df.group(1)) if df else None,
        "level": float(level.group(1)) / 100 if level else None,
        "method_text": method.group("method") if method else "",
    }


def parse_rendered(text: str) -> tuple[Step, ...]:
    """The steps of a legacy ``verdict_estimate``: every "value [low, high] DESIGN" or "value (exact: ...)" in it,
    each with the label written before it ("ρ = 0.3: ") and the rendered design after it, up to the next step's
    label (the text after the last "; " before the next number)."""
    matches = sorted(
        [(m, False) for m in INTERVAL.finditer(text)] + [(m, True) for m in _EXACT.finditer(text)],
        key=lambda t: t[0].start(),
    )
    matches = [(m, exact) for k, (m, exact) in enumerate(matches) if not k or m.start() >= matches[k - 1][0].end()]
    steps, label = [], text[: matches[0][0].start()] if matches else ""
    for k, (match, exact) in enumerate(matches):
        following = matches[k + 1][0].start() if k + 1 < len(matches) else len(text)
        parts = text[match.end() : following].split("; ")
        design_parts, next_label = (parts[:-1], parts[-1]) if k + 1 < len(matches) and len(parts) > 1 else (parts, "")
        kept = design_parts[:1] + [p for p in design_parts[1:] if p.strip().startswith("not replicated")]
        design = "; ".join(p.strip() for p in kept if p.strip())
        value = _float(match.group("value"))
        if exact:
            what = match.group("what")
            method = EXACT if what.startswith("exact") else NONE
            low, high = (value, value) if method == EXACT else (-math.inf, math.inf)
            design = what + (f"; {design}" if design else "")
        else:
            low, high, method = _float(match.group("low")), _float(match.group("high")), ""
        fields = _design_fields(design)
        claim, _, step = label.strip().removesuffix(":").strip().rpartition(": ")
        numbers = [match.group("value")] + ([] if exact else [match.group("low"), match.group("high")])
        steps.append(
            Step(
                claim=claim,
                step=step,
                value=value,
                low=low,
                high=high,
                method=method,
                level=fields["level"],
                df=fields["df"],
                design_text=design.removeprefix(":").strip().removeprefix("over ").strip(),
                printed_digits=max(significant_digits(n) for n in numbers),
            )
        )
        label = next_label
    return tuple(steps)


# --------------------------------------------------------------------------------------------------- printing
def significant_digits(text: str) -> int:
    """The significant digits of a printed number (``"1.250"``: 4, ``"0.08"``: 1, ``"2.0e+04"``: 2; ``∞``: 0)."""
    mantissa = re.split(r"[eE]", text.strip().lstrip("+-−"))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits) if any(c.isdigit() for c in digits) else (1 if "0" in mantissa else 0)


def compact_number(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` significant digits (``0.080``, ``0.20``), a number up to 10⁴ with all its integer digits
    (``283``, ``8700``: never more than four significant, the precision the replicates file guarantees), in exponent
    form below 10⁻³ and from 10⁴ (``2.0e+04``); ``∞`` / ``−∞`` for the unbounded ends."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if abs(x) < 1e-3 or abs(x) >= 10 ** max(digits, 4):
        return f"{x:.{digits - 1}e}"
    decimals = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    return f"{x:.{decimals}f}"


def compact_interval(step: Step, digits: int = 2, *, deciding: bool = False) -> str:
    """``"value [low, high]"`` with ``digits`` significant digits (more, up to 4, where fewer would print two
    different numbers alike); an exact number or one unreplicated run as ``"value (exact)"`` / ``"value (one run, no
    interval)"``. ``deciding``: the interval that decided the step (the multiplicity rule's, when it did)."""
    if step.method == EXACT:
        return f"{step.value:.6g} (exact)"
    if step.is_test:
        df = f" on {step.df:g} df" if step.df is not None else ""
        return f"χ² = {compact_number(step.value, max(digits, 3))}{df}, p = {compact_number(step.p_value, 2)}"
    if not step.is_interval:
        return f"{compact_number(step.value, max(digits, 3))} (one run, no interval)"
    low, high, _ = step.deciding_interval if deciding else (step.low, step.high, step.level)
    numbers = (low, step.value, high)
    digits = max(digits, min(step.printed_digits or 0, 4))
    for d in range(digits, 5):
        printed = [compact_number(x, d) for x in numbers]
        distinct = all(printed[i] != printed[j] or numbers[i] == numbers[j] for i in range(3) for j in range(i + 1, 3))
        if distinct:
            break
    return f"{printed[1]} [{printed[0]}, {printed[2]}]"


def full_interval(step: Step) -> str:
    """The interval as the detail pages print it: four significant digits (``0.1399 [0.07993, 0.1999]``)."""
    return compact_interval(step, digits=4)


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")


def rendered_text(markdown: str) -> str:
    """A line of Markdown as a reader sees it: links and images as their text, emphasis and code marks dropped,
    escaped characters unescaped, a table row's outer pipes dropped (the cell separators kept)."""
    text = _LINK.sub(r"\1", markdown)
    text = _EMPHASIS.sub("", text)
    text = text.replace("\\|", "|").replace("\\", "")
    text = text.strip()
    if text.startswith("|") and text.endswith("|"):
        text = text[1:-1].strip()
    return text
