"""Every judged estimate's replicate rows are written beside the item's outputs by ``NotebookOutputs.record`` alone,
and every printed interval is re-derived from them here by an implementation independent of
``pate_study.reporting.uncertainty`` (numpy and scipy.stats only, reading the CSV as text), to the printed digits."""

import csv
import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import stats

from pate_study.reporting import replicates as rep
from pate_study.reporting import uncertainty as u
from pate_study.reporting.claims import Claim, judge
from pate_study.reporting.outputs import NotebookOutputs
from pate_study.reporting.verdicts import Verdict, combine

RNG = np.random.default_rng(0)
ABOVE = Claim("above", "s", "q", "direction", (u.STUDENT_SEED,))


def every_kind_of_estimate() -> dict[str, u.Estimate]:
    """One estimate of every statistic and transform the engine builds."""
    rng = np.random.default_rng(1)
    base = rng.uniform(0.6, 0.8, 12)
    return {
        "t": u.t_interval(np.append(rng.normal(0.4, 0.05, 7), np.nan), [u.STUDENT_SEED]),
        "paired": u.paired_difference(base + rng.normal(0.02, 0.01, 12), base, [u.STUDENT_SEED]),
        "ratio": u.ratio_of_paired(rng.uniform(1.5, 2.5, 6), rng.uniform(0.9, 1.1, 6), [u.RELEASE_NOISE]),
        "clustered": u.clustered_paired_difference(
            base + rng.normal(0.03, 0.02, 12), base, np.repeat(["t0", "t1", "t2"], 4), [u.TEACHER_SEED], []
        ).within(-1.0, 1.0),
        "clipped": u.t_interval([0.97, 0.99, 1.0], [u.STUDENT_SEED]).within(0.0, 1.0),
        "bootstrap": u.from_bootstrap(0.73, rng.normal(0.73, 0.02, 1000)),
        "combined": u.combined_interval(rng.uniform(0.7, 0.8, 5), rng.uniform(0.7, 0.8, (400, 5)), [u.STUDENT_SEED]),
        "combined one": u.combined_interval([0.75], rng.normal(0.75, 0.01, (300, 1)), [u.STUDENT_SEED]),
        "one run": u.one_run_range(rng.normal(3.0, 0.5, 500), [u.RELEASE_NOISE]),
        "summary": u.t_interval_from_summary(0.5, 0.02, 5, [u.STUDENT_SEED]),
        "welch": u.welch_difference((0.5, 0.02, 5), (0.45, 0.03, 7), [u.STUDENT_SEED]),
        "exact": u.exact(0.125),
        "unreplicated": u.unreplicated(0.3, [u.TEACHER_SEED]),
        "negated": u.t_interval([0.2, 0.3, 0.25, 0.22], []).map(lambda x: 1 - x, increasing=False),
        "cluster boot": u.clustered_bootstrap(
            np.median, rng.normal(0.5, 0.1, 12), np.repeat([0, 1, 2], 4), [u.TEACHER_SEED], [], n_boot=300, seed=0
        ),
    }


# ----------------------------------------------------------------------------- an independent re-derivation


def t_half(x, level):
    return stats.t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)


def rederive(rows: list[dict], level: float) -> tuple[float, float, float]:
    """(value, low, high) of one estimate's rows at ``level`` (the formulas of pate_study/reporting/replicates.py's
    docstring, written again)."""
    head = next(r for r in rows if r["row"] == "estimate")
    stat = head["statistic"]
    reps = [r for r in rows if r["row"] == "replicate"]
    values = np.array([float(r["value"]) if r["value"] else np.nan for r in reps])
    draws_row = [r for r in rows if r["row"] == "draws"]
    draws = np.array(draws_row[0]["draws"].split(), dtype=float) if draws_row else None
    point = next((float(r["value"]) for r in rows if r["row"] == "point"), None)
    if stat == "mean of replicates":
        x = values[~np.isnan(values)]
        value, low, high = (x.mean(), x.mean() - t_half(x, level), x.mean() + t_half(x, level))
    elif stat == "mean of cluster means":
        labels = np.array([r["cluster"] for r in reps])
        keep = ~np.isnan(values)
        means = np.array([values[keep & (labels == g)].mean() for g in sorted(set(labels[keep]))])
        value, low, high = means.mean(), means.mean() - t_half(means, level), means.mean() + t_half(means, level)
    elif stat == "bootstrap percentile":
        q = np.nanquantile(draws, [(1 - level) / 2, (1 + level) / 2])
        value, low, high = point, min(q[0], point), max(q[1], point)
    elif stat == "replicate mean with bootstrap":
        x = values[~np.isnan(values)]
        mean, h = x.mean(), (t_half(x, level) if x.size > 1 else 0.0)
        q = np.nanquantile(draws, [(1 - level) / 2, (1 + level) / 2])
        value = mean
        low = min(mean, mean - math.sqrt(h**2 + max(mean - q[0], 0) ** 2))
        high = max(mean, mean + math.sqrt(h**2 + max(q[1] - mean, 0) ** 2))
    elif stat == "central range of draws":
        low, value, high = np.quantile(draws, [(1 - level) / 2, 0.5, (1 + level) / 2])
    elif stat == "mean from summary":
        (s,) = [r for r in rows if r["row"] == "summary"]
        m, sd, n = float(s["value"]), float(s["sd"]), int(s["n"])
        half = stats.t.ppf((1 + level) / 2, n - 1) * sd / math.sqrt(n)
        value, low, high = m, m - half, m + half
    elif stat == "Welch difference from summaries":
        a, b = ({k: r[k] for k in ("value", "sd", "n")} for r in rows if r["row"] == "summary")
        va, vb = float(a["sd"]) ** 2 / int(a["n"]), float(b["sd"]) ** 2 / int(b["n"])
        df = (va + vb) ** 2 / (va**2 / (int(a["n"]) - 1) + vb**2 / (int(b["n"]) - 1))
        d = float(a["value"]) - float(b["value"])
        half = stats.t.ppf((1 + level) / 2, df) * math.sqrt(va + vb)
        value, low, high = d, d - half, d + half
    elif stat == "exact":
        value = low = high = point
    else:
        assert stat == "one run"
        value, low, high = point, -math.inf, math.inf
    for t in json.loads(head["transform"]):
        if t[0] == "clip":
            low, high = min(max(low, t[1]), t[2]), max(min(high, t[2]), t[1])
        elif t[0] == "affine":
            value, ends = t[1] * value + t[2], sorted([t[1] * low + t[2], t[1] * high + t[2]])
            low, high = ends
        elif t[0] == "exp":
            value, low, high = math.exp(value), math.exp(low), math.exp(high)
        else:
            raise AssertionError(f"not re-derivable: {t}")
    return float(value), float(low), float(high)


def read_rows(path) -> dict[tuple[str, str], list[dict]]:
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    out: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        out.setdefault((r["record"], r["estimate"]), []).append(r)
    return out


def printed(x: float) -> str:
    return f"{x:.4g}"


# ----------------------------------------------------------------------------- tests


def test_record_writes_the_rows_of_every_judged_estimate_and_they_rederive_every_interval(tmp_path):
    estimates = every_kind_of_estimate()
    verdicts = {name: judge(ABOVE, e) for name, e in estimates.items()}
    item = combine(verdicts)
    out = NotebookOutputs("nb", tmp_path, profile="smoke", seed=0)
    out.record("make2021-fig13", tpr=0.5, **item.as_record())  # the one call a study makes
    record = json.loads((tmp_path / "scalars.json").read_text())["make2021-fig13"]
    assert record["verdict_replicates"] == "make2021-fig13.replicates.csv"
    rows = read_rows(tmp_path / record["verdict_replicates"])
    evidence = {e["key"]: e for e in record["verdict_evidence"]}
    assert set(evidence) == set(estimates) and {k for _, k in rows} == set(estimates)
    for key, e in evidence.items():
        assert e["rederivable"] is True, key
        for level, ends in ((e["level"], ("low", "high")), (e["family_level"], ("family_low", "family_high"))):
            value, low, high = rederive(rows[("", key)], level)
            shown = [e["value"], e[ends[0]], e[ends[1]]]
            ours = [value, low, high]
            assert [printed(float(x)) for x in shown] == [printed(x) for x in ours], (key, level)
    assert record["verdict_multiplicity"].startswith("Holm")


def test_a_study_that_records_verdicts_under_sub_keys_gets_one_file_with_their_paths(tmp_path):
    tnr = judge(ABOVE, u.t_interval([0.1, 0.2, 0.15], [u.STUDENT_SEED]))
    tpr = judge(ABOVE, {"ρ = 1": u.t_interval([0.3, 0.2, 0.25], []), "ρ = 2": u.t_interval([0.1, 0.3, 0.2], [])})
    out = NotebookOutputs("nb", tmp_path, profile="smoke", seed=0)
    out.record("item", noise={"tnr": tnr.as_record(), "tpr": tpr.as_record()}, rows=[{"v": tnr.as_record()}])
    rows = read_rows(tmp_path / "item.replicates.csv")
    assert set(rows) == {
        ("noise.tnr", "above"),
        ("noise.tpr", "above/ρ = 1"),
        ("noise.tpr", "above/ρ = 2"),
        ("rows.0.v", "above"),
    }
    record = json.loads((tmp_path / "scalars.json").read_text())["item"]
    assert record["noise"]["tpr"]["verdict_replicates"] == "item.replicates.csv"
    # a later call for the same item replaces its own record paths' rows and keeps the others
    out.record("item", noise={"tnr": judge(ABOVE, u.t_interval([5.0, 6.0], [])).as_record()})
    rows = read_rows(tmp_path / "item.replicates.csv")
    assert len(rows[("noise.tnr", "above")]) == 3 and ("noise.tpr", "above/ρ = 2") in rows


def test_rows_keep_few_digits_yet_reproduce_the_printed_ones(tmp_path):
    """Bootstrap draws are the bulk: 1,000 draws take about 9 KB at 6 significant digits, and the interval
    recomputed from them prints the same 2, 3 and 4 significant digits."""
    e = u.from_bootstrap(0.7312, np.random.default_rng(2).normal(0.73, 0.02, 1000))
    rows = rep.estimate_rows("", "k", e, (0.95, 0.99))
    assert rows[0]["digits"] == "6" and len(rows[-1]["draws"]) < 10_000
    # an interval whose end sits on a rounding tie of the printed digits is stored with more digits
    tie = u.t_interval([0.12345, 0.12355], [])
    assert int(rep.estimate_rows("", "k", tie, (0.95,))[0]["digits"]) >= 6


def test_an_estimate_typed_in_or_changed_after_it_was_built_is_not_rederivable():
    typed = u.Estimate(0.5, 0.4, 0.6, 3, (), "t-interval")
    assert not typed.rederivable and not rep.has_rows(typed)
    built = u.t_interval([0.4, 0.5, 0.6], [])
    assert built.rederivable and not dataclasses.replace(built, high=0.9).rederivable
    assert not built.map(math.sqrt, name="sqrt").rederivable  # an unnamed monotone map: named, not re-derivable
    assert built.map(math.sqrt, name="sqrt").transform_record() == [["function", "sqrt"]]


def test_the_replicates_file_is_named_by_the_key_and_refuses_a_path():
    assert rep.replicates_file("muschiol2021-fig5.6") == "muschiol2021-fig5.6.replicates.csv"
    with pytest.raises(ValueError, match="without '/'"):
        rep.replicates_file("../x")


def test_estimates_printed_beside_a_verdict_get_rows_in_the_same_file(tmp_path):
    """An estimate the evidence quotes but no step holds (``printed_rows``): its rows re-derive it; one without
    replicate data gets none."""
    mean = u.t_interval([1.0, 2.0, 4.0], [u.STUDENT_SEED])
    out = NotebookOutputs("nb", tmp_path, profile="smoke", seed=0)
    out.record(
        "item",
        printed_replicates=rep.printed_rows({"mean": mean, "typed": u.Estimate(0.5, 0.4, 0.6, 3, (), "t-interval")}),
    )
    record = json.loads((tmp_path / "scalars.json").read_text())["item"]
    assert record["printed_replicates"] == "item.replicates.csv"
    rows = read_rows(tmp_path / "item.replicates.csv")
    assert set(rows) == {("", "mean")}
    assert [printed(x) for x in rederive(rows[("", "mean")], 0.95)] == [
        printed(x) for x in (mean.value, mean.low, mean.high)
    ]


def test_paired_arms_get_the_digits_their_difference_needs(tmp_path):
    """The reader pairs the written arms: a difference of 0.0008 between arms near 0.8 must survive their rounding
    (the arms once went out at 6 significant digits, chosen on the unrounded differences, and a printed fourth digit
    of the difference was lost)."""
    rng = np.random.default_rng(3)
    b = 0.8 + rng.normal(0, 0.01, size=6)
    a = b + 0.0008 + rng.normal(0, 4e-5, size=6) + 1.23456789e-8
    estimate = u.paired_difference(a, b, [u.STUDENT_SEED])
    out = NotebookOutputs("nb", tmp_path, profile="smoke", seed=0)
    out.record("item", printed_replicates=rep.printed_rows({"gap": estimate}))
    (rows,) = read_rows(tmp_path / "item.replicates.csv").values()
    arms = [(float(r["a"]), float(r["b"])) for r in rows if r["row"] == "replicate"]
    diff = np.array([x - y for x, y in arms])
    mean = diff.mean()
    half = stats.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / math.sqrt(diff.size)
    for fmt in (".2g", ".3g", ".4g"):
        assert [format(x, fmt) for x in (mean, mean - half, mean + half)] == [
            format(x, fmt) for x in (estimate.value, estimate.low, estimate.high)
        ]


def test_a_verdict_shows_estimates_no_step_holds_and_their_rows_are_written(tmp_path):
    """``Verdict.shown``: printed in the evidence without being judged (a claim not decided for a source its interval
    leaves out); its rows reach the file like a step's, and combining keeps them under the claim's name."""
    mean = u.t_interval([0.84, 0.85, 0.86], [u.STUDENT_SEED])
    held = Verdict("inconclusive", "rule", "not decided", evidence=mean.render(), shown=(("estimate", mean),))
    item = combine({"TPR above 87 %": held, "noise raises TPR": judge(ABOVE, u.t_interval([0.3, 0.2, 0.25], []))})
    assert [k for k, _ in item.shown] == ["TPR above 87 %/estimate"]
    out = NotebookOutputs("nb", tmp_path, profile="smoke", seed=0)
    out.record("item", **item.as_record())
    rows = read_rows(tmp_path / "item.replicates.csv")
    assert ("", "TPR above 87 %/estimate") in rows
    assert [printed(x) for x in rederive(rows[("", "TPR above 87 %/estimate")], 0.95)] == [
        printed(x) for x in (mean.value, mean.low, mean.high)
    ]
    with pytest.raises(ValueError, match="shown"):
        Verdict("inconclusive", "rule", "r", shown=(("x", 0.5),))
