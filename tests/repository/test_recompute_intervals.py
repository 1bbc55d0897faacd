"""Every interval printed in ``figures/INDEX.md`` and the detail pages ``figures/details/*.md`` is recomputed from the
committed replicate rows (``figures/<stem>/<item-id>.replicates.csv``) and checked to its printed digits; a printed
interval (or heterogeneity test) of an item with no replicate rows that give it fails.

The recomputation is this file's own, from the formulas the replicates file states
(:mod:`pate_study.reporting.replicates`'s docstring), with numpy and scipy.stats directly: it imports nothing of
:mod:`pate_study.reporting.uncertainty` or of the module that writes the rows, so a slip in either would show here.

- ``mean of replicates``: mean ± t_{(1+level)/2, R−1} · sd(ddof 1)/√R over the finite replicate values (the arms'
  ``a − b`` or ``log a − log b`` where the rows are paired); ``mean of cluster means``: the same over the per-cluster
  means (Student 1908; Cochran 1977, *Sampling Techniques*, §10.2);
- ``bootstrap percentile``: the point and the (1 ± level)/2 linear quantiles of the draws, widened to hold the point
  (Efron & Tibshirani 1993, ch. 13); ``central range of draws``: the median and those quantiles;
- ``replicate mean with bootstrap``: each side mean ∓ √(h_t² + (mean − q)²);
- ``mean from summary`` and ``Welch difference from summaries`` (Welch 1947, Satterthwaite's df);
- ``exact`` and ``one run``; then the transforms (clip, affine, exp, log) in order;
- the Wald chi-squared test of equal means: W = (Cθ)ᵀ (C Σ Cᵀ)⁺ (Cθ), Σ the covariance of the shared draws, C the
  contrasts against the last group, df the rank, p from the chi-squared law.

Every printed interval of the committed outputs is held to it (none is excused); the same check runs on a tiny study
recorded through the package's own API in a temporary folder.
"""

import csv
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from pate_study.core.paths import FIGURES_DIR, REGISTRY_FILE
from pate_study.reporting import claims, verdicts
from pate_study.reporting import uncertainty as unc  # only to record the tiny study, never to recompute
from pate_study.reporting.details import anchor
from pate_study.reporting.index import write_index
from pate_study.reporting.outputs import NotebookOutputs
from pate_study.reporting.registry import load_registry

REPLICATES_SUFFIX = ".replicates.csv"
NUMBER = r"[-+−]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+−]?inf|−?∞"
INTERVAL = re.compile(rf"(?<![\w.\]])({NUMBER}) \[({NUMBER}), ({NUMBER})\]")
TEST = re.compile(rf"χ² = ({NUMBER})(?: on (\d+) df)?, p = ({NUMBER})")
ROW_LINK = re.compile(r"\]\(details/[^)#]+#([^)]+)\)")


# --------------------------------------------------------------------------------------------- the replicate rows
class Unrecomputable(Exception):
    """Rows whose interval this file has no formula for (an unnamed transform): what they print is not re-derived."""


@dataclass
class Rows:
    """One estimate's rows of a replicates file."""

    statistic: str
    level: float | None
    pairing: str
    transform: list
    replicates: list[dict] = field(default_factory=list)
    points: list[float] = field(default_factory=list)
    draws: list[tuple[str, np.ndarray]] = field(default_factory=list)
    summaries: dict[str, tuple[float, float, int]] = field(default_factory=dict)


def number(text: str) -> float:
    return math.nan if text in ("", "nan") else float(text)


def read_replicates(path: Path) -> dict[tuple[str, str], Rows]:
    """``(record, estimate) -> Rows`` of one replicates file."""
    found: dict[tuple[str, str], Rows] = {}
    with Path(path).open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            key = (row["record"], row["estimate"])
            if row["row"] == "estimate":
                level = float(row["level"]) if row["level"] else None
                found[key] = Rows(row["statistic"], level, row["pairing"], json.loads(row["transform"] or "[]"))
            elif row["row"] == "replicate":
                found[key].replicates.append(row)
            elif row["row"] == "point":
                found[key].points.append(number(row["value"]))
            elif row["row"] == "draws":
                found[key].draws.append((row["arm"], np.array([float(x) for x in row["draws"].split()])))
            elif row["row"] == "summary":
                found[key].summaries[row["arm"]] = (number(row["value"]), number(row["sd"]), int(row["n"]))
            else:
                raise AssertionError(f"{path.name}: unknown row kind {row['row']!r}")
    return found


def replicate_values(rows: Rows) -> np.ndarray:
    """The per-replicate values the interval reads: from the two arms where the rows are paired."""
    if rows.pairing:
        a = np.array([number(r["a"]) for r in rows.replicates])
        b = np.array([number(r["b"]) for r in rows.replicates])
        return a - b if rows.pairing == "a − b" else np.log(a) - np.log(b)
    return np.array([number(r["value"]) for r in rows.replicates])


def student(values: np.ndarray, level: float) -> tuple[float, float, float]:
    """Mean and t-interval of the finite ``values`` (unbounded with fewer than two)."""
    x = values[np.isfinite(values)]
    mean = float(np.mean(x))
    if x.size < 2:
        return mean, -math.inf, math.inf
    half = stats.t.ppf((1 + level) / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size)
    return mean, mean - half, mean + half


def quantiles(draws: np.ndarray, level: float) -> tuple[float, float]:
    d = draws[np.isfinite(draws)]
    low, high = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def raw_interval(rows: Rows, level: float) -> tuple[float, float, float]:
    """``(value, low, high)`` at ``level`` before the transforms."""
    stat = rows.statistic
    if stat == "mean of replicates":
        return student(replicate_values(rows), level)
    if stat == "mean of cluster means":
        values = replicate_values(rows)
        clusters = np.array([r["cluster"] for r in rows.replicates])
        finite = np.isfinite(values)
        means = np.array([values[finite & (clusters == g)].mean() for g in sorted(set(clusters[finite]))])
        return student(means, level)
    if stat == "bootstrap percentile":
        point = rows.points[0]
        low, high = quantiles(rows.draws[0][1], level)
        return point, min(low, point), max(high, point)
    if stat == "replicate mean with bootstrap":
        mean, t_low, _ = student(replicate_values(rows), level)
        h = mean - t_low if math.isfinite(t_low) else 0.0
        q_low, q_high = quantiles(rows.draws[0][1], level)
        low = mean - math.hypot(h, max(mean - q_low, 0.0))
        high = mean + math.hypot(h, max(q_high - mean, 0.0))
        return mean, min(low, mean), max(high, mean)
    if stat == "central range of draws":
        low, median, high = np.quantile(rows.draws[0][1], [(1 - level) / 2, 0.5, (1 + level) / 2])
        return float(median), float(low), float(high)
    if stat == "mean from summary":
        mean, sd, n = rows.summaries[""]
        half = stats.t.ppf((1 + level) / 2, n - 1) * sd / math.sqrt(n)
        return mean, mean - half, mean + half
    if stat == "Welch difference from summaries":
        (ma, sa, na), (mb, sb, nb) = rows.summaries["a"], rows.summaries["b"]
        sides = [(s * s / n, n) for s, n in ((sa, na), (sb, nb)) if n >= 2 and math.isfinite(s)]
        var = sum(v for v, _ in sides)
        df = var**2 / sum(v * v / (n - 1) for v, n in sides) if var > 0 else min(n for _, n in sides) - 1
        half = stats.t.ppf((1 + level) / 2, df) * math.sqrt(var)
        return ma - mb, ma - mb - half, ma - mb + half
    if stat == "exact":
        return rows.points[0], rows.points[0], rows.points[0]
    if stat == "one run":
        return rows.points[0], -math.inf, math.inf
    raise Unrecomputable(f"statistic {stat!r}: no formula for it here")


def transformed(rows: Rows, value: float, low: float, high: float) -> tuple[float, float, float]:
    for step in rows.transform:
        if step[0] == "clip":
            low, high = min(max(low, step[1]), step[2]), max(min(high, step[2]), step[1])
        elif step[0] == "affine":
            a, b = step[1], step[2]
            value, low, high = a * value + b, *sorted((a * low + b, a * high + b))
        elif step[0] in ("exp", "log"):
            f = np.exp if step[0] == "exp" else (lambda x: -math.inf if x == 0 else math.log(x))
            value, low, high = (float(f(x)) for x in (value, low, high))
        else:
            raise Unrecomputable(f"transform {step!r} cannot be recomputed from the rows")
    return value, low, high


def interval(rows: Rows, level: float) -> tuple[float, float, float]:
    """The estimate's ``(value, low, high)`` at ``level``, recomputed from its rows."""
    return transformed(rows, *raw_interval(rows, level))


def wald(rows: Rows) -> tuple[float, int, float]:
    """``(W, df, p)`` of the test that the groups' means are equal."""
    values = np.array([number(r["value"]) for r in sorted(rows.replicates, key=lambda r: int(r["index"]))])
    draws = np.column_stack([d for _, d in rows.draws])
    k = values.size
    contrasts = np.hstack([np.eye(k - 1), -np.ones((k - 1, 1))])
    covariance = contrasts @ np.cov(draws, rowvar=False, ddof=1) @ contrasts.T
    df = int(np.linalg.matrix_rank(covariance, tol=np.abs(covariance).max() * k * 1e-12))
    w = float(contrasts @ values @ np.linalg.pinv(covariance, rcond=k * 1e-12, hermitian=True) @ contrasts @ values)
    return w, df, float(stats.chi2.sf(w, df))


# ---------------------------------------------------------------------------------------------- what is printed
def parse(text: str) -> float:
    text = text.replace("−", "-")
    return {"∞": math.inf, "-∞": -math.inf}.get(text) or float(text)


def half_unit(text: str) -> float:
    """Half the unit of the last printed digit (0 for an infinite end)."""
    if "∞" in text or "inf" in text:
        return 0.0
    return float(Decimal(10) ** Decimal(text.replace("−", "-")).as_tuple().exponent) / 2


def agrees_to_printed_digits(printed: tuple[str, ...], numbers: tuple[float, ...]) -> bool:
    for text, x in zip(printed, numbers):
        p = parse(text)
        if math.isinf(p) or math.isinf(x):
            if p != x:
                return False
        elif abs(x - p) > half_unit(text) * (1 + 1e-9) + 1e-12 * abs(p):
            return False
    return True


def printed_by_item(figures_dir: Path, anchors: dict[str, str]) -> dict[str, list[tuple[str, str, tuple]]]:
    """item id -> ``(where, kind, printed numbers)`` for every interval ("interval") and test ("test") printed in
    the index (a row belongs to the item its link names) and the detail pages (a section to its heading's item);
    printed outside any item: under ``""``."""
    found: dict[str, list] = {}

    def scan(item_id: str, where: str, text: str) -> None:
        for m in INTERVAL.finditer(text):
            found.setdefault(item_id, []).append((where, "interval", m.groups()))
        for m in TEST.finditer(text):
            found.setdefault(item_id, []).append((where, "test", (m.group(1), m.group(3))))

    for n, line in enumerate((figures_dir / "INDEX.md").read_text(encoding="utf-8").splitlines(), 1):
        link = ROW_LINK.search(line) if line.startswith("| ") else None
        scan(anchors.get(link.group(1), "") if link else "", f"INDEX.md:{n}", line)
    for page in sorted((figures_dir / "details").glob("*.md")):
        item_id = ""
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("## "):
                item_id = line[3:].strip()
            scan(item_id, f"details/{page.name}:{n}", line)
    return found


def recomputed(figures_dir: Path, item) -> tuple[list[tuple[float, float, float]], list[tuple[float, float]]]:
    """Every interval (at the estimate's level and at the family rule's, from the item's record) and every test
    ``(W, p)`` the item's replicate rows give; empty without a replicates file."""
    path = figures_dir / (item.notebook or "") / f"{item.id}{REPLICATES_SUFFIX}"
    if not item.notebook or not path.is_file():
        return [], []
    scalars = json.loads((figures_dir / item.notebook / "scalars.json").read_text(encoding="utf-8"))
    levels: dict[str, set[float]] = {}
    for entry in scalars.get(item.id, {}).get("verdict_evidence", []):
        if entry.get("family_level"):
            levels.setdefault(entry["key"], set()).add(float(entry["family_level"]))
    intervals, tests = [], []
    for (_, key), rows in read_replicates(path).items():
        if rows.statistic == "Wald chi-squared of equal means":
            w, _, p = wald(rows)
            tests.append((w, p))
            continue
        for level in {rows.level, *levels.get(key, ())} - {None}:
            try:
                intervals.append(interval(rows, level))
            except Unrecomputable:
                continue  # a number printed from these rows then matches nothing and is reported
    return intervals, tests


def problems(figures_dir: Path, registry_file: Path = REGISTRY_FILE) -> list[str]:
    """Every printed interval or test that the replicate rows do not give to its printed digits, or that has none."""
    items = {item.id: item for item in load_registry(registry_file)}
    anchors = {anchor(i): i for i in items}
    found = []
    for item_id, printed in printed_by_item(figures_dir, anchors).items():
        if item_id not in items:
            found += [f"{where}: {' '.join(p)} printed outside an item's row or section" for where, _, p in printed]
            continue
        intervals, tests = recomputed(figures_dir, items[item_id])
        for where, kind, numbers in printed:
            candidates = intervals if kind == "interval" else tests
            if not candidates:
                found.append(f"{where}: {item_id}: {' '.join(numbers)} has no replicate rows")
            elif not any(agrees_to_printed_digits(numbers, c) for c in candidates):
                found.append(f"{where}: {item_id}: {' '.join(numbers)} is not what its replicate rows give")
    return found


def test_every_committed_interval_is_recomputed_from_its_replicate_rows():
    found = problems(FIGURES_DIR)
    assert not found, f"{len(found)} printed intervals not re-derived, e.g. {found[:5]}"


# ------------------------------------------------------------------------------------------- the formulas alone
def write_rows(path: Path, rows: list[dict]) -> Path:
    columns = ["record", "estimate", "row", "method", "level", "statistic", "pairing", "transform", "sources"]
    columns += ["cluster_sources", "digits", "index", "cluster", "arm", "value", "a", "b", "sd", "n", "draws"]
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return path


def head(key, statistic, level="0.95", pairing="", transform="[]"):
    return dict(estimate=key, row="estimate", level=level, statistic=statistic, pairing=pairing, transform=transform)


def test_each_formula_on_rows_written_by_hand(tmp_path):
    """Hand-written rows of every statistic against numbers computed here by hand."""
    t2, t4 = stats.t.ppf(0.975, 2), stats.t.ppf(0.975, 4)
    draws = " ".join(str(x) for x in range(1, 101))  # quantiles 0.025 and 0.975 (linear): 3.475 and 97.525
    rows = [
        head("mean", "mean of replicates"),
        *[dict(estimate="mean", row="replicate", index=i, value=v) for i, v in enumerate(["1", "2", "3", "nan"])],
        head("paired", "mean of replicates", pairing="log a − log b", transform='[["exp"]]'),
        *[
            dict(estimate="paired", row="replicate", index=i, a=a, b="1")
            for i, a in enumerate(["1", str(math.e), str(math.exp(2))])
        ],
        head("clusters", "mean of cluster means", transform='[["clip", 0, 1.8]]'),
        *[
            dict(estimate="clusters", row="replicate", index=i, cluster=c, value=v)
            for i, (c, v) in enumerate([("x", "0"), ("x", "2"), ("y", "1"), ("z", "3"), ("z", "5")])
        ],
        head("boot", "bootstrap percentile"),
        dict(estimate="boot", row="point", value="2"),
        dict(estimate="boot", row="draws", draws=draws),
        head("combined", "replicate mean with bootstrap"),
        *[dict(estimate="combined", row="replicate", index=i, value=v) for i, v in enumerate(["48", "50", "52"])],
        dict(estimate="combined", row="draws", draws=draws),
        head("range", "central range of draws"),
        dict(estimate="range", row="draws", draws=draws),
        head("summary", "mean from summary", transform='[["affine", -1, 1]]'),
        dict(estimate="summary", row="summary", value="0.5", sd="0.1", n="5"),
        head("welch", "Welch difference from summaries"),
        dict(estimate="welch", row="summary", arm="a", value="3", sd="1", n="5"),
        dict(estimate="welch", row="summary", arm="b", value="1", sd="1", n="5"),
        head("exact", "exact"),
        dict(estimate="exact", row="point", value="20.1743"),
    ]
    found = {key: rows for (_, key), rows in read_replicates(write_rows(tmp_path / "x.replicates.csv", rows)).items()}
    expect = {
        "mean": (2, 2 - t2 / math.sqrt(3), 2 + t2 / math.sqrt(3)),
        "paired": (math.e, math.exp(1 - t2 / math.sqrt(3)), math.exp(1 + t2 / math.sqrt(3))),
        "clusters": (2, 0, 1.8),  # cluster means 1, 1, 4: mean 2, sd √3, then clipped to [0, 1.8]
        "boot": (2, 2, 97.525),
        "combined": (
            50,
            50 - math.hypot(2 * t2 / math.sqrt(3), 46.525),
            50 + math.hypot(2 * t2 / math.sqrt(3), 47.525),
        ),
        "range": (50.5, 3.475, 97.525),
        "summary": (0.5, 0.5 - t4 * 0.1 / math.sqrt(5), 0.5 + t4 * 0.1 / math.sqrt(5)),
        "welch": (2, 2 - stats.t.ppf(0.975, 8) * math.sqrt(0.4), 2 + stats.t.ppf(0.975, 8) * math.sqrt(0.4)),
        "exact": (20.1743, 20.1743, 20.1743),
    }
    for key, numbers in expect.items():
        assert np.allclose(interval(found[key], 0.95), numbers, rtol=1e-9), key
    unnamed = Rows("exact", 0.95, "", [["function", "sqrt"]], points=[4.0])
    with pytest.raises(Unrecomputable, match="cannot be recomputed"):
        interval(unnamed, 0.95)
    rows_w = [head("w", "Wald chi-squared of equal means", level="")]
    rows_w += [
        dict(estimate="w", row="replicate", index=i, arm=g, value=v)
        for i, (g, v) in enumerate([("a", "1"), ("b", "3")])
    ]
    rng = np.random.default_rng(0)
    cols = rng.normal(size=(200, 2))
    rows_w += [
        dict(estimate="w", row="draws", index=i, arm=g, draws=" ".join(map(str, cols[:, i])))
        for i, g in enumerate("ab")
    ]
    (w_rows,) = read_replicates(write_rows(tmp_path / "w.replicates.csv", rows_w)).values()
    w, df, p = wald(w_rows)
    variance = np.var(cols[:, 0] - cols[:, 1], ddof=1)
    assert df == 1 and math.isclose(w, 4 / variance) and math.isclose(p, stats.chi2.sf(4 / variance, 1))


def test_printed_digits_are_checked_to_half_their_last_unit():
    assert agrees_to_printed_digits(("0.14", "0.080", "0.20"), (0.1399, 0.07993, 0.1999))
    assert not agrees_to_printed_digits(("0.14", "0.080", "0.20"), (0.1399, 0.0806, 0.1999))
    assert agrees_to_printed_digits(("2.0e+04", "−∞", "∞"), (20001.0, -math.inf, math.inf))
    assert not agrees_to_printed_digits(("283", "259", "308"), (283.0, 259.0, 306.0))


# ---------------------------------------------------------------------- a tiny study recorded through the package
def fixture_entry(item_id: str) -> dict:
    document = item_id.split("-")[0]
    return {
        "id": item_id,
        "document": document,
        "label": item_id.split("-", 1)[1],
        "type": "figure",
        "kind": "result",
        "caption": "c",
        "same_as": [],
        "notebook": "09_fixture",
        "outputs": [],
        "status": "real data at reduced scale",
        "published": {"target": "above 0.13"} if document == "pate_study" else {"values": {"x": 1}},
    }


def record_tiny_study(figures: Path) -> Path:
    """Six items judged and recorded by the package's own API (every kind of estimate the studies build: clustered,
    clipped, combined, bootstrap, Welch, summary, ratio, one-run range, heterogeneity test), then the index and the
    detail pages written; returns the registry file."""
    rng = np.random.default_rng(7)
    out = NotebookOutputs("09_fixture", figures / "09_fixture", profile="paper", seed=0)
    noise, teacher, student = unc.RELEASE_NOISE, unc.TEACHER_SEED, unc.STUDENT_SEED
    clusters = np.repeat([0, 1, 2], 4)
    steps = {}
    for rho, shift in (("ρ = 0.1", 0.045), ("ρ = 0.3", 0.12), ("ρ = 0.5", 0.2)):
        a = 0.8 + rng.normal(0, 0.02, 12)
        steps[rho] = unc.clustered_paired_difference(
            a, a - shift + rng.normal(0, 0.01, 12), clusters, [teacher], [noise]
        )
    steps["ρ = 0.5"] = steps["ρ = 0.5"].within(0.0, 0.21)
    decay = claims.Claim("decay", "4-5 %", "accuracy decay", "range", (teacher, noise), 0.04, 0.05, printed="0.04")
    out.record("make2021-fig8", **claims.judge(decay, steps).as_record())

    replicates = 0.25 + rng.normal(0, 0.01, 3)
    draws = replicates + rng.normal(0, 0.005, (200, 3))
    combined = unc.combined_interval(replicates, draws, [student])
    boot = unc.percentile_bootstrap(np.mean, [rng.normal(0.3, 0.1, 50)], n_boot=200, seed=1)
    below = claims.Claim("below the single model", "s", "mAP gap", "direction", (student,))
    above = claims.Claim("above 0.2", "s", "mAP", "direction", (unc.TEST_SET,), 0.2, printed="0.2")
    both = verdicts.combine({"gap": claims.judge(below, combined), "level": claims.judge(above, boot)})
    out.record("muschiol2021-table5.4", **both.as_record())

    welch = unc.welch_difference((2.8, 1.2, 3), (1.1, 0.9, 3), [teacher])
    summary = unc.t_interval_from_summary(0.43, 0.05, 3, [teacher])
    ratio = unc.ratio_of_paired(1 + rng.random(5), 0.5 + rng.random(5), [noise])
    lower = claims.Claim("more teachers, lower ε", "s", "ε gap", "direction", (teacher,))
    level = claims.Claim("TNR", "s", "TNR", "direction", (teacher,), 0.87, printed="0.87")
    doubled = claims.Claim("ratio", "s", "ratio", "ratio", (noise,))
    three = {"gap": claims.judge(lower, welch), "tnr": claims.judge(level, summary), "r": claims.judge(doubled, ratio)}
    out.record("sosa2021-table4.1", **verdicts.combine(three).as_record())

    runs = unc.one_run_range(rng.normal(283, 12, 500), ["check and answer noise draw"])
    one_run = claims.Claim(
        "answered", "s", "answered", "one-run", ("check and answer noise draw",), 283.0, printed="283"
    )
    out.record("papernot2018-table2", **claims.judge(one_run, runs).as_record())

    groups = 0.4 + rng.normal(0, 0.01, 4)
    test = unc.heterogeneity_test(groups, groups + rng.normal(0, 0.01, (300, 4)), [unc.TEST_SET])
    same = claims.Claim("similar teachers", "s", "teacher mAP", "homogeneity", (unc.TEST_SET,))
    out.record("muschiol2021-fig5.6", **claims.judge(same, test).as_record())

    target = unc.t_interval(0.135 + rng.normal(0, 0.002, 3), [student])
    goal = claims.Claim("mAP ≥ 0.13", "target", "student mAP", "direction", (student,), 0.13, printed="0.13")
    out.record("pate_study-audioset-target", **claims.judge(goal, target).as_record())

    ids = ["make2021-fig8", "muschiol2021-table5.4", "sosa2021-table4.1", "papernot2018-table2"]
    ids += ["muschiol2021-fig5.6", "pate_study-audioset-target"]
    registry = figures.parent / "registry.yaml"
    registry.write_text(yaml.safe_dump({"items": [fixture_entry(i) for i in ids]}, allow_unicode=True))
    write_index(figures, registry)
    return registry


def test_a_tiny_study_recorded_through_the_package_is_recomputed_from_its_rows(tmp_path):
    figures = tmp_path / "figures"
    registry = record_tiny_study(figures)
    printed = printed_by_item(figures, {anchor(i.id): i.id for i in load_registry(registry)})
    assert sum(len(p) for p in printed.values()) >= 20 and "" not in printed
    assert any(kind == "test" for p in printed.values() for _, kind, _ in p), "the heterogeneity test is printed"
    assert problems(figures, registry) == []

    index = figures / "INDEX.md"
    text = index.read_text(encoding="utf-8")
    first = INTERVAL.search(text[text.index("| [") :])
    wrong = first.group(0).replace(f"[{first.group(2)},", f"[{first.group(2)}1,")
    index.write_text(text.replace(first.group(0), wrong, 1), encoding="utf-8")
    assert any("is not what its replicate rows give" in p for p in problems(figures, registry))
    index.write_text(text, encoding="utf-8")
    (figures / "09_fixture" / f"make2021-fig8{REPLICATES_SUFFIX}").unlink()
    missing = problems(figures, registry)
    assert missing and all("make2021-fig8" in p and "has no replicate rows" in p for p in missing)
