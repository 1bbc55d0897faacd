"""The papers' table layouts: the published numbers beside ours, per noise level (MAKE Table 1, Sosa
Tables 4.1 and 4.2), and the per-level statistics they are made of, with their intervals.

The intervals (:mod:`pate_study.reporting.uncertainty`): the students of a level are its replicates. Each draws its
own rows of the student pool (queries, threshold and validation rows: the test rows are resampled with it), is its
own member of the student stack (its own initialisation and shuffling seed) and gets its own noise draws (curator B,
LNMax). Student ``k`` keeps its rows, seed and teacher ensemble at every level (:func:`.pipeline.run_level`), so a
level's effect is read off per-student differences (:func:`level_changes`).

The teacher ensemble is replicated too: ``n_teacher_seeds`` ensembles, each with its own training seed and partition,
label the students (student ``k`` by ensemble ``k mod n_teacher_seeds``, its ``teacher_seed`` column). The students of
one ensemble share its draw, so the interval is two-level: the t-interval of the per-ensemble means of the students'
values (or paired differences), with the number of ensembles as its degrees-of-freedom basis
(:func:`pate_study.reporting.uncertainty.clustered_interval`), naming both the teacher seed and the students' sources.
With one ensemble (``n_teacher_seeds=1``, or a frame without ``teacher_seed``) it is the t-interval over the
students, and the teacher seed is named as not replicated."""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ...reporting import uncertainty as unc
from ...reporting.claims import Claim
from ...reporting.claims import judge as judge_claim
from ...reporting.uncertainty import Estimate
from ...reporting.verdicts import Verdict, combine
from .config import NO_NOISE, level_key

#: The rows a student draws from the student pool (its queries, threshold rows and validation rows).
STUDENT_ROWS = "student rows (queries, threshold, validation)"
#: What each student replicates for a metric of the trained student (TPR, TNR, accuracy).
STUDENT_SOURCES = (unc.STUDENT_SEED, unc.RELEASE_NOISE, STUDENT_ROWS)
#: What each student replicates for a number computed from the teachers' votes (ε_dep, the ensemble's accuracy).
VOTE_SOURCES = (unc.RELEASE_NOISE, STUDENT_ROWS)
#: The random source that makes the clusters: each teacher ensemble's training seed and partition.
TEACHER_SOURCES = (unc.TEACHER_SEED,)


def median_iqr(students: pd.DataFrame, columns: Sequence[str], levels_order: Sequence[str]) -> pd.DataFrame:
    """Median and interquartile range of each column per noise level (the statistics of MAKE Table 1)."""
    grouped = students.groupby("level")
    parts = {}
    for column in columns:
        parts[f"{column}_median"] = grouped[column].median()
        parts[f"{column}_iqr"] = grouped[column].quantile(0.75) - grouped[column].quantile(0.25)
    return pd.DataFrame(parts).reindex(list(levels_order)).rename_axis("level").reset_index()


def per_level_medians(students: pd.DataFrame, columns: Sequence[str], levels_order: Sequence[str]) -> pd.DataFrame:
    """Median of ``columns`` per noise level, indexed by level in ``levels_order``."""
    return students.groupby("level")[list(columns)].median().reindex(list(levels_order)).rename_axis("level")


def student_values(students: pd.DataFrame, column: str, level: str) -> np.ndarray:
    """``column`` of every student of ``level``, in student order (the replicates of that level)."""
    g = students[students["level"] == level].sort_values("student")
    return g[column].to_numpy(dtype=np.float64)


def student_teachers(students: pd.DataFrame, level: str) -> np.ndarray:
    """The teacher ensemble (``teacher_seed``) of every student of ``level``, in student order (all 0 when the frame
    has no such column: one ensemble)."""
    g = students[students["level"] == level].sort_values("student")
    return g["teacher_seed"].to_numpy() if "teacher_seed" in g else np.zeros(len(g), dtype=int)


def level_estimate(
    students: pd.DataFrame,
    column: str,
    level: str,
    sources: Sequence[str] = STUDENT_SOURCES,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> Estimate:
    """The mean of ``column`` (a rate, in ``bounds``) over the students of ``level``, with its two-level interval
    (students nested in the teacher ensembles: :func:`pate_study.reporting.uncertainty.clustered_interval`), clipped
    to ``bounds`` (:meth:`pate_study.reporting.uncertainty.Estimate.within`)."""
    return unc.clustered_interval(
        student_values(students, column, level), student_teachers(students, level), TEACHER_SOURCES, sources
    ).within(*bounds)


def paired_change(
    students: pd.DataFrame,
    a: np.ndarray,
    b: np.ndarray,
    level: str,
    sources: Sequence[str] = STUDENT_SOURCES,
    other: pd.DataFrame | None = None,
) -> Estimate:
    """The mean of ``a − b`` over paired students (per-student arrays in student order), nested in the teacher
    ensembles of ``level`` (:func:`pate_study.reporting.uncertainty.clustered_paired_difference`). ``other``: the
    frame of ``b`` when it comes from another study (e.g. another ensemble size): a student's cluster is then the
    pair of its two ensembles."""
    clusters = student_teachers(students, level)
    if other is not None:
        clusters = np.array([f"{x}/{y}" for x, y in zip(clusters, student_teachers(other, level))])
    return unc.clustered_paired_difference(a, b, clusters, TEACHER_SOURCES, sources)


def level_changes(
    students: pd.DataFrame,
    column: str,
    levels_order: Sequence[str],
    sources: Sequence[str] = STUDENT_SOURCES,
    reference: str = NO_NOISE,
) -> dict[str, Estimate]:
    """Per level other than ``reference``: the mean over students of ``column`` at that level minus at
    ``reference``, paired over students (student ``k`` keeps its rows, seed and teacher ensemble across levels),
    with its two-level interval (:func:`paired_change`); empty when ``reference`` was not run."""
    if reference not in set(students["level"]):
        return {}
    base = student_values(students, column, reference)
    return {
        level: paired_change(students, student_values(students, column, level), base, reference, sources)
        for level in levels_order
        if level != reference
    }


def teacher_design(result) -> str:
    """How the intervals replicate the teachers, in words, for the findings: the students nested in the teacher
    ensembles (their number the degrees-of-freedom basis) or, with one ensemble, its seed named as not replicated."""
    n = result.teachers.get("n_teacher_seeds", 1)
    if n < 2:
        return "one teacher ensemble (its seed not replicated)"
    return (
        f"the {result.config.n_students} students nested in {n} teacher ensembles, each its own seed and partition:"
        f" mean and t-interval of the {n} ensemble means, {n - 1} df"
    )


def estimates_record(estimates: dict[str, Estimate]) -> dict:
    """``{level: Estimate.as_record()}`` for ``NotebookOutputs.record``."""
    return {level: e.as_record() for level, e in estimates.items()}


def some_step(claim: Claim, estimates: dict[str, Estimate]) -> Verdict:
    """A claim that holds "in some cases": agrees when one step's whole interval is beyond the boundary, differs
    when every step's whole interval is on the other side, else inconclusive (:func:`~pate_study.reporting.claims.judge`
    on each step; the reverse of the every-step rule)."""
    if not estimates:
        return judge_claim(claim, None, note="no step of ours to compare")
    sides = {step: judge_claim(claim, e).verdict for step, e in estimates.items()}
    outcome = (
        "agrees"
        if "agrees" in sides.values()
        else ("differs" if set(sides.values()) == {"differs"} else "inconclusive")
    )
    evidence = "; ".join(f"{step}: {e.render()}" for step, e in estimates.items())
    rule = (
        f"{claim.quantity} {'>' if claim.side == 'above' else '<'} {float(claim.boundary):g} at some step: agrees when"
        " one step's whole interval is beyond it, differs when every step's is on the other side, else inconclusive"
    )
    reason = "" if outcome == "agrees" else f"ours {evidence}; per step: {', '.join(sides.values())}"
    return Verdict(outcome, rule, reason, evidence=evidence)


def per_step(claim: Claim, estimates: dict[str, Estimate], label: str, *, context: str = "") -> Verdict:
    """``claim`` judged at every step (``label`` names a step, e.g. "ρ = {}"), combined
    (:func:`~pate_study.reporting.verdicts.combine`): differs when one step differs, inconclusive when one is, agrees
    when all agree; the rule stated once."""
    if not estimates:
        return judge_claim(claim, None, note="no step of ours to compare")
    v = combine({label.format(step): judge_claim(claim, e) for step, e in estimates.items()}, context=context)
    return dataclasses.replace(
        v,
        rule=f"{claim.rule()}; at every step ({label.format('…')}): differs when one step differs, inconclusive when"
        " one is, agrees when every step agrees",
    )


def with_verdicts(table: pd.DataFrame, judge: Callable[[pd.Series], Verdict], column: str = "verdict") -> pd.DataFrame:
    """``table`` with ``judge(row)``'s verdict in ``column`` (and its reason in ``<column>_reason``) for every
    row that has a published value; rows without one get an empty cell."""
    verdicts = [judge(row) for _, row in table.iterrows()]
    return table.assign(
        **{
            column: [v.verdict if v else "" for v in verdicts],
            f"{column}_reason": [v.reason if v else "" for v in verdicts],
        }
    )


def summarise_verdicts(verdicts: Sequence[Verdict], rule: str) -> Verdict:
    """One verdict for a table from its rows': ``not comparable`` if every row is, ``differs`` if any
    comparable row differs (the reasons counted), else ``agrees``."""
    verdicts = [v for v in verdicts if v]
    counts = {name: sum(v.verdict == name for v in verdicts) for name in ("agrees", "differs", "not comparable")}
    summary = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    tally: dict[str, int] = {}
    for v in verdicts:
        if v.reason:
            tally[v.reason] = tally.get(v.reason, 0) + 1
    reasons = [f"{n} rows: {reason}" if n > 1 else reason for reason, n in tally.items()]
    if counts["agrees"] + counts["differs"] == 0:
        return Verdict("not comparable", f"{rule} ({summary})", "; ".join(reasons))
    if counts["differs"]:
        return Verdict("differs", f"{rule} ({summary})", "; ".join(reasons))
    return Verdict("agrees", f"{rule} ({summary})")


def epsilon_table_vs_paper(
    students: pd.DataFrame, levels_order: Sequence[str], paper_rows: Sequence[dict], paper_key: str = "rho"
) -> pd.DataFrame:
    """MAKE Table 1 layout: per level, the paper's median/IQR of ε_dep beside ours with the sources'
    accountant (moments, λ = 1..8) and, for comparison, continuous λ and the RDP analysis."""
    ours = median_iqr(students, ["eps_moments_int", "eps_moments_cont", "eps_rdp"], levels_order)
    paper = pd.DataFrame(list(paper_rows)).rename(
        columns={paper_key: "level", "eps_dep_median": "paper_median", "eps_dep_iqr": "paper_iqr"}
    )
    paper["level"] = paper["level"].map(level_key)
    table = paper.merge(ours, on="level", how="outer")
    table["level"] = pd.Categorical(table["level"], categories=list(levels_order), ordered=True)
    return table.sort_values("level").reset_index(drop=True)


def sosa_table_4_2(results: dict, paper_rows: Sequence[dict]) -> pd.DataFrame:
    """Sosa 2021 Table 4.2 layout: per ensemble size and student noise scale, the paper's teacher ε, TPR, TNR
    beside our medians over the students (teacher ε with the moments accountant, λ = 1..8, as in Table 1)."""
    ours = []
    for n_teachers, result in results.items():
        frame = per_level_medians(
            result.students,
            ["eps_moments_int", "eps_rdp", "student_tpr", "student_tnr", "control_tpr", "control_tnr"],
            result.level_order,
        ).reset_index()
        frame.insert(0, "n_teachers", int(n_teachers))
        ours.append(frame)
    ours = pd.concat(ours, ignore_index=True).rename(
        columns={
            "level": "student_noise_scale",
            "eps_moments_int": "ours_teacher_epsilon",
            "eps_rdp": "ours_teacher_epsilon_rdp",
            "student_tpr": "ours_tpr",
            "student_tnr": "ours_tnr",
            "control_tpr": "ours_control_tpr",
            "control_tnr": "ours_control_tnr",
        }
    )
    paper = pd.DataFrame(list(paper_rows)).rename(
        columns={
            "student_epsilon": "student_noise_scale",
            "teacher_epsilon": "paper_teacher_epsilon",
            "tpr": "paper_tpr",
            "tnr": "paper_tnr",
        }
    )
    ours["student_noise_scale"] = ours["student_noise_scale"].map(level_key)
    paper["student_noise_scale"] = paper["student_noise_scale"].map(level_key)
    table = paper.merge(ours, on=["n_teachers", "student_noise_scale"], how="outer")
    noise = table["student_noise_scale"].map(lambda s: np.inf if s == NO_NOISE else float(s))
    return (
        table.assign(_noise=noise).sort_values(["n_teachers", "_noise"]).drop(columns="_noise").reset_index(drop=True)
    )


def sosa_table_4_1(results: dict, paper_rows: Sequence[dict]) -> pd.DataFrame:
    """Sosa 2021 Table 4.1: 100 and 250 teachers, no student noise: paper's TPR, TNR, ε beside our medians."""
    rows = []
    for paper in paper_rows:
        result = results.get(int(paper["n_teachers"]))
        ours = {}
        if result is not None and NO_NOISE in set(result.students["level"]):
            clean = result.students.query("level == @NO_NOISE")
            ours = {
                "ours_tpr_pct": 100 * clean["student_tpr"].median(),
                "ours_tnr_pct": 100 * clean["student_tnr"].median(),
                "ours_epsilon": clean["eps_moments_int"].median(),
                "ours_epsilon_rdp": clean["eps_rdp"].median(),
                "ours_student_queries": result.config.student_queries,
            }
        rows.append(
            {
                "n_teachers": paper["n_teachers"],
                "paper_tpr_pct": paper["tpr_pct"],
                "paper_tnr_pct": paper["tnr_pct"],
                "paper_epsilon": paper["epsilon"],
                **ours,
            }
        )
    return pd.DataFrame(rows)


def scale_description(result, paper_teachers: str, paper_queries: int) -> str:
    """One line for the provenance stamp: the scale actually run, next to the paper's."""
    t = result.teachers
    rows = f"{t['train_rows']}" + (f" + {t['threshold_rows']}" if t["threshold_rows"] else "")
    c = result.config
    seeds = t.get("n_teacher_seeds", 1)
    return (
        f"{t['n_teachers']} teachers x {rows} rows (paper {paper_teachers})"
        + (f", {seeds} teacher ensembles (own seed and partition each)" if seeds > 1 else "")
        + f", T = {c.student_queries} queries "
        f"(paper {paper_queries}), {c.n_students} students per level scored on {c.student_validation} rows each"
        + (" (students disjoint)" if c.disjoint_students else "")
    )
