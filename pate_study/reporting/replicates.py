"""The replicate-level rows behind every judged estimate, written beside the item's outputs as
``<item-id>.replicates.csv`` so that every printed interval can be re-derived from the repository.

:meth:`pate_study.reporting.verdicts.Verdict.as_record` puts a :class:`ReplicateRows` under ``verdict_replicates``
(a string placeholder that carries the judged estimates); :meth:`pate_study.reporting.outputs.NotebookOutputs.record`
finds it wherever it sits in the recorded values (:func:`extract`), writes the file (:func:`write_replicates`,
atomically) and stores the file's name in its place. An estimate printed beside a verdict without being one of its
steps (a mean quoted in the evidence, say) goes into a record the same way through :func:`printed_rows`. Studies
call nothing else.

The file (long format, one row per replicate; the columns are listed in :data:`COLUMNS` and in
:mod:`pate_study.reporting.verdicts`'s docstring). How each ``statistic`` gives the interval at ``level`` from the
rows of one ``(record, estimate)`` pair, with numpy's default (linear) quantiles and Student's t:

- ``mean of replicates``: the ``value`` of the ``replicate`` rows, NaN dropped, ``R`` left:
  ``mean ± t_{(1+level)/2, R−1} · sd(ddof=1) / √R``; one left: unbounded. ``pairing`` says how ``value`` came from
  the arms ``a``, ``b`` (``a − b``, or ``log a − log b``, then ``transform`` holds ``["exp"]``).
- ``mean of cluster means``: the same t-interval over the means of ``value`` per ``cluster`` (G clusters,
  ``G − 1`` df).
- ``bootstrap percentile``: ``point`` row's ``value``; ``[q((1−level)/2), q((1+level)/2)]`` of the ``draws``
  (NaN ignored), widened to contain the point.
- ``replicate mean with bootstrap``: ``mean`` and t half-width ``h`` of the ``replicate`` values (``h = 0`` with one
  replicate), ``q`` the quantiles of the ``draws`` (the replicate mean on each resample): ``low = mean −
  √(h² + max(mean − q_low, 0)²)``, ``high = mean + √(h² + max(q_high − mean, 0)²)``.
- ``central range of draws``: the median of the ``draws`` and their ``(1 ± level)/2`` quantiles.
- ``mean from summary``: one ``summary`` row: ``value ± t_{(1+level)/2, n−1} · sd / √n``.
- ``Welch difference from summaries``: ``summary`` rows ``a`` and ``b``: ``value_a − value_b ± t_{(1+level)/2, ν}
  · √V`` with ``V`` the sum of ``sd²/n`` over the sides with ``n ≥ 2`` and ``ν`` Satterthwaite's df.
- ``exact``: the ``point`` value, zero width; ``one run``: the ``point`` value, unbounded.
- ``Wald chi-squared of equal means``: ``replicate`` rows (one per group, ``arm`` its name) and one ``draws`` row
  per group (``index``): ``W`` and its p-value with the covariance of the draws
  (:func:`pate_study.reporting.uncertainty.wald_equal_means`; the ``estimate`` row's ``n``, when given, is the
  number of test examples behind the covariance: Hotelling's F calibration).

Then ``transform`` (JSON) applies in order: ``["clip", lo, hi]`` to the ends only, ``["affine", a, b]`` (ends
swap when ``a < 0``), ``["exp"]``, ``["log"]``.

Size: every number is written with the fewest significant digits among :data:`DIGITS` (6 first) for which the
interval recomputed from the written rows gives the same value, low and high (at the estimate's level and at the
level the family rule read) to 2, 3 and 4 significant digits, none of them within a relative 1e-9 of a rounding
tie (so an independent implementation, summing in another order, prints the same digits). Bootstrap draws, the bulk,
go into one cell per estimate, space-separated: about 9 bytes a draw at 6 digits.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from pate_study.core.io import atomic_write_text
from pate_study.reporting import checks
from pate_study.reporting.uncertainty import (
    CENTRAL_RANGE,
    CLUSTER_MEANS,
    COMBINED,
    EXACT,
    MEAN,
    ONE_RUN,
    PERCENTILE,
    SUMMARY,
    WELCH,
    Derivation,
    Estimate,
    HeterogeneityTest,
    round_array,
    wald_equal_means,
)

#: The file name's ending: ``<item-id>.replicates.csv`` beside ``scalars.json``.
REPLICATES_SUFFIX = ".replicates.csv"
#: The file's columns, in order.
COLUMNS = (
    "record",
    "estimate",
    "row",
    "method",
    "level",
    "statistic",
    "pairing",
    "transform",
    "sources",
    "cluster_sources",
    "digits",
    "index",
    "cluster",
    "arm",
    "value",
    "a",
    "b",
    "sd",
    "n",
    "draws",
)
#: The significant digits tried, fewest first (17 writes every double exactly).
DIGITS = (6, 8, 10, 12, 17)
#: The formats a re-derived number must reproduce exactly.
FORMATS = (".2g", ".3g", ".4g")
#: The statistic name of a heterogeneity test's rows.
WALD_STATISTIC = "Wald chi-squared of equal means"
#: The text of a :class:`ReplicateRows` placeholder before ``NotebookOutputs.record`` replaces it.
PLACEHOLDER = "replicate rows (written by NotebookOutputs.record)"


class ReplicateRows(str):
    """A string placeholder (so a verdict's record stays plain data) that carries the judged estimates:
    ``estimates``: ``(key, estimate or test, levels)`` for each that has replicate data, ``levels`` the two-sided
    levels its interval was read at (its own and the family rule's)."""

    estimates: tuple[tuple[str, Any, tuple[float, ...]], ...]

    def __new__(cls, estimates: Iterable[tuple[str, Any, tuple[float, ...]]]) -> ReplicateRows:
        obj = super().__new__(cls, PLACEHOLDER)
        obj.estimates = tuple((k, e, tuple(levels)) for k, e, levels in estimates if has_rows(e))
        return obj

    def __reduce__(self) -> tuple:
        return (ReplicateRows, (self.estimates,))


def printed_rows(estimates: dict[str, Any]) -> ReplicateRows:
    """The placeholder for estimates that a record prints but no verdict step holds (``key -> estimate``), read at
    their own level only; those without replicate data are left out."""
    return ReplicateRows((key, estimate, ()) for key, estimate in estimates.items())


def has_rows(estimate: Any) -> bool:
    """Whether ``estimate`` carries replicate data (a test always does)."""
    return isinstance(estimate, HeterogeneityTest) or (
        isinstance(estimate, Estimate) and estimate.derivation is not None
    )


def _text(x: float, digits: int) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{float(x):.{digits}g}"


def _stable_text(x: float, fmt: str) -> str | None:
    """``x`` in ``fmt``, or ``None`` when a relative 1e-9 either way would print otherwise (a rounding tie)."""
    if not math.isfinite(x):
        return format(x, fmt)
    texts = {format(x * f, fmt) for f in (1 - 1e-9, 1.0, 1 + 1e-9)}
    return texts.pop() if len(texts) == 1 else None


def _reproduces(original: Iterable[float], derived: Iterable[float], exact_data: bool) -> bool:
    for x, y in zip(original, derived):
        if x is None or y is None:
            if x is not y:
                return False
            continue
        for fmt in FORMATS:
            if format(x, fmt) != format(y, fmt):
                return False
            if not exact_data and _stable_text(y, fmt) is None:
                return False
    return True


def _numbers(estimate: Any, derivation: Any, levels: tuple[float, ...]) -> list[float]:
    """The numbers a reader sees of ``estimate`` recomputed from ``derivation`` (rounded or not)."""
    if isinstance(estimate, HeterogeneityTest):
        values, draws = derivation
        statistic, _, p = wald_equal_means(values, draws, estimate.n_examples)
        return [statistic, p]
    out: list[float] = []
    for level in levels:
        out.extend(derivation.evaluate(level))
    return out


def choose_digits(estimate: Any, levels: tuple[float, ...]) -> int:
    """The fewest of :data:`DIGITS` that reproduce the estimate's printed numbers from rows rounded to them."""
    if isinstance(estimate, HeterogeneityTest):
        full = (estimate.values, estimate.draws)
        original = _numbers(estimate, full, levels)
        for digits in DIGITS:
            rounded = (round_array(estimate.values, digits), round_array(estimate.draws, digits))
            if _reproduces(original, _numbers(estimate, rounded, levels), digits == DIGITS[-1]):
                return digits
        return DIGITS[-1]
    levels = tuple(dict.fromkeys((estimate.level, *levels)))
    original = _numbers(estimate, estimate.derivation, levels)
    for digits in DIGITS:
        derived = _numbers(estimate, estimate.derivation.rounded(digits), levels)
        if _reproduces(original, derived, digits == DIGITS[-1]):
            return digits
    return DIGITS[-1]


def estimate_rows(record: str, key: str, estimate: Any, levels: tuple[float, ...] = ()) -> list[dict[str, str]]:
    """The rows of one judged estimate (or test): its ``estimate`` row, then its data rows (module docstring)."""
    digits = choose_digits(estimate, levels)

    def row(kind: str, **cells: Any) -> dict[str, str]:
        return {"record": record, "estimate": key, "row": kind, **{k: str(v) for k, v in cells.items()}}

    def number(x: Any) -> str:
        return _text(x, digits)

    def draws(a: np.ndarray) -> str:
        return " ".join(f"{x:.{digits}g}" for x in np.asarray(a, dtype=np.float64).ravel())

    if isinstance(estimate, HeterogeneityTest):
        rows = [
            row(
                "estimate",
                method=estimate.method,
                statistic=WALD_STATISTIC,
                transform="[]",
                sources="; ".join(estimate.sources),
                digits=digits,
                n="" if estimate.n_examples is None else estimate.n_examples,
            )
        ]
        names = estimate.groups or tuple(str(i) for i in range(estimate.values.size))
        rows += [
            row("replicate", index=i, arm=g, value=number(v)) for i, (g, v) in enumerate(zip(names, estimate.values))
        ]
        rows += [row("draws", index=i, arm=g, draws=draws(estimate.draws[:, i])) for i, g in enumerate(names)]
        return rows
    d: Derivation = estimate.derivation
    rows = [
        row(
            "estimate",
            method=estimate.method,
            level=repr(estimate.level),
            statistic=d.statistic,
            pairing=d.pairing,
            transform=json.dumps(d.transform_record(), ensure_ascii=False),
            sources="; ".join(estimate.sources),
            cluster_sources="; ".join(estimate.cluster_sources),
            digits=digits,
        )
    ]
    if d.statistic in (MEAN, CLUSTER_MEANS, COMBINED):
        for i, v in enumerate(d.values):
            cells = {"index": i, "value": number(v)}
            if d.clusters is not None:
                cells["cluster"] = str(d.clusters[i])
            if d.a is not None:
                cells |= {"a": number(d.a[i]), "b": number(d.b[i])}
            rows.append(row("replicate", **cells))
    if d.statistic in (PERCENTILE, EXACT, ONE_RUN):
        rows.append(row("point", value=number(d.point)))
    if d.statistic in (PERCENTILE, COMBINED, CENTRAL_RANGE):
        rows.append(row("draws", draws=draws(d.draws)))
    if d.statistic in (SUMMARY, WELCH):
        arms = ("",) if d.statistic == SUMMARY else ("a", "b")
        rows += [
            row("summary", arm=arm, value=number(m), sd=number(s), n=n) for arm, (m, s, n) in zip(arms, d.summaries)
        ]
    return rows


def extract(values: Any, path: str = "") -> tuple[Any, list[tuple[str, ReplicateRows]]]:
    """``values`` with every :class:`ReplicateRows` in it (a value of a mapping, at any depth of mappings and lists)
    found and returned beside it as ``(record path, rows)``, the record path the dotted path of the mapping that
    holds it (``""`` at the top); the values themselves are returned unchanged (the caller replaces the
    placeholders by the file name, :func:`replace_placeholders`)."""
    found: list[tuple[str, ReplicateRows]] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, ReplicateRows):
                    found.append((where, v))
                else:
                    walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, f"{where}.{i}" if where else str(i))

    walk(values, path)
    return values, found


def replace_placeholders(values: Any, name: str) -> Any:
    """``values`` with every :class:`ReplicateRows` replaced by ``name`` (plain strings; copies, not in place)."""
    if isinstance(values, ReplicateRows):
        return name
    if isinstance(values, dict):
        return {k: replace_placeholders(v, name) for k, v in values.items()}
    if isinstance(values, (list, tuple)):
        return [replace_placeholders(v, name) for v in values]
    return values


def replicates_file(key: str) -> str:
    """The replicates file's name for a recorded key: ``<key>.replicates.csv``."""
    key = checks.text(key, "key", what="a registry id or a free name")
    if os.sep in key or "/" in key or key in (".", ".."):
        raise ValueError(f"key={key!r}: expected a name without '/' (it names the replicates file)")
    return key + REPLICATES_SUFFIX


def write_replicates(path: str | os.PathLike, found: list[tuple[str, ReplicateRows]], parent: str = "") -> Path:
    """Write the rows of every estimate in ``found`` (``(record path, rows)``, :func:`extract`) to ``path``,
    atomically; rows an earlier call wrote for other record paths are kept (a key recorded in several calls), those
    of the same record paths replaced."""
    path = Path(path)
    records = {where for where, _ in found}
    kept: list[dict[str, str]] = []
    if path.exists():
        with path.open(encoding="utf-8", newline="") as f:
            kept = [r for r in csv.DictReader(f) if r.get("record") not in records]
    rows = [r for where, rr in found for key, e, levels in rr.estimates for r in estimate_rows(where, key, e, levels)]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows({c: r.get(c, "") for c in COLUMNS} for r in kept + rows)
    return atomic_write_text(path, buffer.getvalue())
