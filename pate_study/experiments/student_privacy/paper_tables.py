"""The papers' table layouts: the published numbers beside ours, per noise level (MAKE Table 1, Sosa
Tables 4.1 and 4.2), and the per-level statistics they are made of, with their intervals.

The intervals (:mod:`pate_study.reporting.uncertainty`): the students of a level are its replicates. Each draws its
own rows of the student pool (queries, threshold and validation rows: the test rows are resampled with it), is its
own member of the student stack (its own initialisation and shuffling seed) and gets its own noise draws (curator B,
LNMax). Student ``k`` keeps its rows, seed and teacher ensemble at every level (:func:`.pipeline.run_level`), so a
level's effect is read off per-student differences (:func:`level_changes`). What a student's rows replicate depends on
the design (:func:`row_source`): its own draw from the pool; where every student reads the whole pool (the ECG
sample: 450 queries + 50 validation beats of a 500-beat pool), only which rows are its queries and which validate it;
with disjoint students, its own block of the pool.

The teacher ensemble is replicated too: ``n_teacher_seeds`` ensembles, each with its own training seed and partition,
label the students (student ``k`` by ensemble ``k mod n_teacher_seeds``, its ``teacher_seed`` column). The students of
one ensemble share its draw, so the interval is two-level: the t-interval of the per-ensemble means of the students'
values (or paired differences), with the number of ensembles as its degrees-of-freedom basis
(:func:`pate_study.reporting.uncertainty.clustered_interval`), naming both the teacher seed and the students' sources.
With one ensemble (``n_teacher_seeds=1``, or a frame without ``teacher_seed``) it is the t-interval over the
students, and the teacher seed is named as not replicated.

The pools themselves are one draw that every student and ensemble of a run shares (the mirror's ECG sample, the web
pool split: :attr:`.pools.Pools.unreplicated`): every interval names them as not replicated
(``StudyResult.unreplicated``). A comparison between two arms of one run (a level against no noise, one ensemble
size against another) reads the same pools in both arms, so it is a statement about these pools; a level judged
against a printed number is not, and its claim names the pool draw among the sources it needs
(:data:`LEVEL_SOURCES`)."""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from pate_study.experiments.needed_sources import judge_with_sources
from pate_study.experiments.student_privacy.config import NO_NOISE, level_key
from pate_study.experiments.student_privacy.pools import POOL_SPLIT
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim
from pate_study.reporting.uncertainty import Estimate
from pate_study.reporting.verdicts import Verdict

#: The rows a student draws from the student pool (its queries, threshold rows and validation rows).
STUDENT_ROWS = "student rows (queries, threshold, validation) drawn from the student pool"
#: Every student reads every row of the pool: what varies is which rows are its queries and which validate it.
POOL_ROLES = "student's split of the whole student pool into its queries and validation rows"
#: Disjoint students: each its own block of one random partition of the pool.
OWN_BLOCK = "student's own block of the student pool (one random partition into disjoint blocks)"
#: What each student replicates for a metric of the trained student (TPR, TNR, accuracy), as a claim names it.
STUDENT_SOURCES = (unc.STUDENT_SEED, unc.RELEASE_NOISE, STUDENT_ROWS)
#: What each student replicates for a number computed from the teachers' votes (ε_dep, the ensemble's accuracy).
VOTE_SOURCES = (unc.RELEASE_NOISE, STUDENT_ROWS)
#: A student metric's level against a printed number: it depends on the pools as well (which requests trained the
#: teachers and which the students are scored on), so the pool split is a source it needs replicated.
LEVEL_SOURCES = (*STUDENT_SOURCES, POOL_SPLIT)
#: The random source that makes the clusters: each teacher ensemble's training seed and partition.
TEACHER_SOURCES = (unc.TEACHER_SEED,)


def row_source(result) -> str:
    """What a student's rows replicate in ``result``'s design: its own block (disjoint students), which rows of the
    whole pool are its queries and which validate it (a student needs every row of the pool), or its own draw."""
    config = result.config
    if config.disjoint_students:
        return OWN_BLOCK
    return POOL_ROLES if config.rows_per_student >= result.n_student_pool > 0 else STUDENT_ROWS


def student_sources(result) -> tuple[str, ...]:
    """The sources a student replicates for a metric of the trained student in ``result``'s design."""
    return (unc.STUDENT_SEED, unc.RELEASE_NOISE, row_source(result))


def vote_sources(result) -> tuple[str, ...]:
    """The sources a student replicates for a number computed from the teachers' votes in ``result``'s design."""
    return (unc.RELEASE_NOISE, row_source(result))


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
    result, column: str, level: str, sources: Sequence[str] | None = None, bounds: tuple[float, float] = (0.0, 1.0)
) -> Estimate:
    """The mean of ``column`` (a rate, in ``bounds``) over the students of ``level``, with its two-level interval
    (students nested in the teacher ensembles: :func:`pate_study.reporting.uncertainty.clustered_interval`), clipped
    to ``bounds`` (:meth:`pate_study.reporting.uncertainty.Estimate.within`). ``sources``: what a student replicates
    (default :func:`student_sources`); the pools' draw is named as not replicated."""
    students = result.students
    return unc.clustered_interval(
        student_values(students, column, level),
        student_teachers(students, level),
        TEACHER_SOURCES,
        student_sources(result) if sources is None else sources,
        unreplicated=result.unreplicated,
    ).within(*bounds)


def paired_change(
    result,
    a: np.ndarray,
    b: np.ndarray,
    level: str,
    sources: Sequence[str] | None = None,
    other=None,
) -> Estimate:
    """The mean of ``a − b`` over paired students (per-student arrays in student order), nested in the teacher
    ensembles of ``level`` (:func:`pate_study.reporting.uncertainty.clustered_paired_difference`). ``other``: the
    result of ``b`` when it comes from another study on the same pools (e.g. another ensemble size): a student's
    cluster is then the pair of its two ensembles. ``sources``: default :func:`student_sources`."""
    clusters = student_teachers(result.students, level)
    if other is not None:
        clusters = np.array([f"{x}/{y}" for x, y in zip(clusters, student_teachers(other.students, level))])
    return unc.clustered_paired_difference(
        a,
        b,
        clusters,
        TEACHER_SOURCES,
        student_sources(result) if sources is None else sources,
        unreplicated=result.unreplicated,
    )


def level_changes(
    result, column: str, sources: Sequence[str] | None = None, reference: str = NO_NOISE
) -> dict[str, Estimate]:
    """Per level other than ``reference``: the mean over students of ``column`` at that level minus at
    ``reference``, paired over students (student ``k`` keeps its rows, seed and teacher ensemble across levels),
    with its two-level interval (:func:`paired_change`); empty when ``reference`` was not run."""
    students = result.students
    if reference not in set(students["level"]):
        return {}
    base = student_values(students, column, reference)
    return {
        level: paired_change(result, student_values(students, column, level), base, reference, sources)
        for level in result.level_order
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


def per_step(claim: Claim, estimates: dict[str, Estimate], label: str, *, context: str = "") -> Verdict:
    """``claim`` judged at every step (``label`` names a step, e.g. "ρ = {}"; ``estimates``: step -> estimate) as one
    family, by the one rule :func:`pate_study.reporting.claims.judge` applies to a claim judged at several steps
    (Holm's step-down, named in the verdict's rule; :func:`pate_study.reporting.verdicts.judge_family`), through
    :func:`pate_study.experiments.needed_sources.judge_with_sources`; ``context`` (e.g. a scale difference) follows
    the reason."""
    if not estimates:
        return judge_with_sources(claim, None, note="no step of ours to compare")
    v = judge_with_sources(claim, {label.format(step): e for step, e in estimates.items()})
    return dataclasses.replace(v, reason="; ".join(x for x in (v.reason, context) if x))


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
    """One *not comparable* verdict for a table whose every row is not comparable, the rows' reasons counted. A table
    with a judged row is judged as one family instead (:func:`pate_study.reporting.verdicts.combine`), never here."""
    verdicts = [v for v in verdicts if v]
    judged = [v.verdict for v in verdicts if v.verdict != "not comparable"]
    if judged:
        raise ValueError(f"verdicts: a judged row ({judged[0]}) belongs in one family (combine), not in a summary")
    tally: dict[str, int] = {}
    for v in verdicts:
        tally[v.reason] = tally.get(v.reason, 0) + 1
    reasons = [f"{n} rows: {reason}" if n > 1 else reason for reason, n in tally.items()]
    return Verdict("not comparable", f"{rule} ({len(verdicts)} not comparable)", "; ".join(reasons))


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
