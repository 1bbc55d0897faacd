"""Notebook 02's sections (MAKE 2021 Figs 13–15 = Visca 2021 Figs 4.11–4.13; Sosa 2021 Tables 4.1, 4.2, Fig. 4.4;
the row-wise vs URL-disjoint split), one call each.

Every section takes the :class:`WebRun` of :func:`run_make_study` (and, for Sosa's items, the :class:`SosaRun`
of :func:`sosa_section`) and the notebook's :class:`~pate_study.reporting.outputs.NotebookOutputs`, builds its
figures and tables (:mod:`.web`, :mod:`.splits`, :mod:`.figures`), saves them, records its scalars and returns
what the notebook cell shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pate_study.experiments.student_privacy import figures, splits, web
from pate_study.experiments.student_privacy.accounting import epsilon_gap_explanations
from pate_study.experiments.student_privacy.config import StudentPrivacyConfig
from pate_study.experiments.student_privacy.notebook_sections import (
    noise_levels,
    record_accounting,
    record_verdicts,
)
from pate_study.experiments.student_privacy.paper_tables import estimates_record, median_iqr, scale_description
from pate_study.experiments.student_privacy.pipeline import StudyResult, run_study_on
from pate_study.experiments.student_privacy.pools import Pools, web_pools
from pate_study.reporting.outputs import MarkdownText, NotebookOutputs, markdown_list
from pate_study.reporting.plots import save_and_show
from pate_study.reporting.registry import published

#: the same published figure under Visca 2021's id
SAME_AS = {
    "make2021-fig13": "visca2021-fig4.11",
    "make2021-fig14": "visca2021-fig4.12",
    "make2021-fig15": "visca2021-fig4.13",
}
PUBLISHED_ITEMS = ("sosa2021-table4.1", "sosa2021-table4.2", "sosa2021-beyond-split")
#: the paper's scale, for the stamps: teachers x (train + threshold rows), and T
PAPER_SCALE, SOSA_SCALE, PAPER_QUERIES = "250 x (930 + 800)", "100 or 250 x 930", 1000
ANSWER_COLUMNS = ["ensemble_accuracy", "pate_accuracy", "mean_top_vote_share"]
BALANCE_COLUMNS = ["query_positive_share", "validation_positive_share", "validation_overlap"]
EPSILON_COLUMNS = ["eps_moments_int", "eps_moments_cont", "eps_rdp"]


@dataclass(frozen=True)
class WebRun:
    """The MAKE study on the URL-disjoint pools: notebook 02's settings, the study's configuration as asked, its
    result, the data stamp and why the data cannot be compared with the sources'."""

    pools: Pools
    settings: web.WebStudyConfig
    config: StudentPrivacyConfig
    result: StudyResult
    levels: list
    data: str
    data_reason: str


@dataclass(frozen=True)
class SosaRun:
    """Sosa's runs (one :class:`StudyResult` per ensemble size), their stamp, Tables 4.1, 4.2 and the hypotheses
    on the settings behind his teacher ε."""

    results: dict[int, StudyResult]
    data: str
    table41: pd.DataFrame
    table42: pd.DataFrame
    hypotheses: pd.DataFrame
    data_reasons: dict[int, str]


def published_items() -> dict:
    """Sosa's published Tables 4.1, 4.2 and no-noise rates, by registry id."""
    return {item: published(item) for item in PUBLISHED_ITEMS}


def run_make_study(data: str, settings: web.WebStudyConfig, out: NotebookOutputs) -> WebRun:
    """The MAKE study of notebook 02's ``settings`` on the web pools; the scale recorded under ``scale``."""
    s = settings
    pools = web_pools(data, seed=s.seed, student_pool_size=s.student_pool_size, vocabulary=s.vocabulary)
    levels = noise_levels(s.rhos, s.include_no_noise)
    config = web.study_config(settings, n_features=pools.n_features, levels=levels)
    result = run_study_on(pools, config)
    out.record(
        "scale",
        n_queries=result.config.student_queries,
        n_students=result.config.n_students,
        n_validation=result.config.student_validation,
        **result.teachers,
    )
    stamp = f"{pools.source.stamp()}; {scale_description(result, PAPER_SCALE, PAPER_QUERIES)}"
    return WebRun(pools, settings, config, result, levels, stamp, data_reason(pools, result))


def data_reason(pools: Pools, result: StudyResult) -> str:
    """Why ``result`` (one ensemble size) cannot be compared with the sources' data: the dataset and the rows
    per teacher that run itself used."""
    return (
        f"CSIC 2010 alone ({pools.y_teacher.mean():.0%} anomalous teacher rows) instead of the three-source "
        f"merge (about 5%), {result.teachers['n_teachers']} teachers x {result.teachers['train_rows']} + "
        f"{result.teachers['threshold_rows']} rows instead of 930 + 800"
    )


def data_notes(run: WebRun) -> MarkdownText:
    """The data stamp, how the pools were made and every reduction of the paper's sizes."""
    return markdown_list([run.data, run.pools.description, *run.result.scale_notes])


def answers_section(run: WebRun, out: NotebookOutputs) -> pd.DataFrame:
    """The per-level medians of :func:`.web.rate_medians`, with the teachers' answers and the class balance of
    queries and validation rows recorded; returns the medians."""
    medians = web.rate_medians(run.result)
    out.record("teacher_answers", **medians[ANSWER_COLUMNS].to_dict(orient="index"))
    out.record(
        "validation_rows",
        pool_positive_share=float(run.pools.y_student.mean()),
        **medians[BALANCE_COLUMNS].to_dict(orient="index"),
    )
    return medians


def rates_section(run: WebRun, out: NotebookOutputs) -> None:
    """Figs 13 and 14: the students' TPR and TNR, each beside balanced accuracy, saved and shown; the paired changes
    with noise (:func:`.web.rate_changes`) and this package's "noise raises TPR, lowers TNR" judged on them
    (:func:`.web.noise_direction_verdicts`) recorded under ``student_rate_changes``."""
    c = run.result.config
    for column, items, name in [
        ("student_tpr", ["make2021-fig13", "visca2021-fig4.11"], "TPR"),
        ("student_tnr", ["make2021-fig14", "visca2021-fig4.12"], "TNR"),
    ]:
        fig = figures.rate_panels(
            run.result,
            column,
            name,
            title=f"Student {name} and balanced accuracy on "
            f"{c.student_validation:,} validation requests each, {c.n_students} students per ρ",
        )
        save_and_show(fig, items, out, data=run.data)
    out.record(
        "student_rate_changes",
        **{name: estimates_record(changes) for name, changes in web.rate_changes(run.result).items()},
        **{name: v.as_record() for name, v in web.noise_direction_verdicts(run.result).items()},
    )


def epsilon_section(run: WebRun, out: NotebookOutputs) -> pd.DataFrame:
    """Fig. 15 (ε_dep per level beside ε*_ind), how many students exceed ε*_ind and the two explanations of the
    paper's "ε_dep > ε*_ind" (:func:`.accounting.epsilon_gap_explanations`), and the accounting invariants
    recorded; returns the median and IQR of ε_dep per level and accountant."""
    config = run.config
    fig = figures.epsilon_panels(
        {"web requests": run.result},
        delta=config.delta,
        max_integer_order=config.max_integer_order,
        title="Fig. 15: data-dependent privacy loss",
    )
    save_and_show(fig, ["make2021-fig15", "visca2021-fig4.13"], out, data=run.data)
    result, independent = run.result, run.result.data_independent
    explanations = epsilon_gap_explanations(
        n_queries=result.config.student_queries,
        gamma=config.gamma,
        delta=config.delta,
        extra_queries=result.config.student_threshold,
        max_integer_order=config.max_integer_order,
    )
    above = result.students["eps_moments_int"] > independent["eps_moments_cont"] + 1e-9
    values = dict(
        epsilon_ind_star=independent["eps_moments_cont"],
        epsilon_ind_integer=independent["eps_moments_int"],
        n_students_above_continuous_ind=int(above.sum()),
        n_students=len(result.students),
        explanations=explanations,
    )
    for item in ("make2021-fig15", "visca2021-fig4.13"):
        out.record(item, **values)
    record_accounting(result, out)
    return median_iqr(result.students, EPSILON_COLUMNS, result.level_order).set_index("level")


def sosa_section(run: WebRun, out: NotebookOutputs) -> SosaRun:
    """Sosa's runs (each ensemble size, noise as Laplace scales), Tables 4.1 and 4.2 saved and recorded with the
    (order grid, δ, T) hypotheses on his teacher ε (:func:`.web.sosa_hypotheses`)."""
    settings, gamma, delta = run.settings, run.config.gamma, run.config.delta
    sosa = {
        int(t): run_study_on(run.pools, web.sosa_config(run.config, t, settings.sosa_scales, settings.include_no_noise))
        for t in settings.sosa_teachers
    }
    stamp = f"{run.pools.source.stamp()}; " + "; ".join(
        scale_description(r, SOSA_SCALE, PAPER_QUERIES) for r in sosa.values()
    )
    published_values = published_items()
    reasons = {n: data_reason(run.pools, r) for n, r in sosa.items()}
    table41, table42 = web.sosa_tables(
        sosa,
        published_values,
        gamma=gamma,
        delta=delta,
        n_queries=run.result.config.student_queries,
        data_reasons=reasons,
    )
    out.save_table(table41, "sosa2021-table4.1", data=stamp)
    out.save_table(table42, "sosa2021-table4.2", data=stamp)
    hypotheses = web.sosa_hypotheses(published_values, gamma)
    out.record("sosa2021-table4.1", rows=table41.to_dict(orient="records"))
    out.record(
        "sosa2021-table4.2",
        rows=table42.to_dict(orient="records"),
        setting_hypotheses=hypotheses.to_dict(orient="records"),
    )
    return SosaRun(sosa, stamp, table41, table42, hypotheses, reasons)


def sosa_figure_section(run: WebRun, sosa: SosaRun, out: NotebookOutputs) -> dict:
    """Sosa Fig. 4.4 (median teacher ε per student noise scale), saved and shown, its range per ensemble size
    recorded; returns the recorded summary."""
    fig = figures.sosa_teacher_epsilon(sosa.table42, delta=run.config.delta, n_students=run.result.config.n_students)
    save_and_show(fig, "sosa2021-fig4.4", out, data=sosa.data)
    ours = sosa.table42.dropna(subset=["ours_teacher_epsilon"])
    ranges = ours.groupby("n_teachers")["ours_teacher_epsilon"].agg(["min", "max"])
    return out.record(
        "sosa2021-fig4.4",
        summary="median teacher eps_dep "
        + ", ".join(f"{n} teachers {r['min']:.2f}-{r['max']:.2f}" for n, r in ranges.iterrows())
        + " over the student noise scales",
    )


def split_section(data: str, run: WebRun, out: NotebookOutputs) -> pd.DataFrame:
    """The no-noise study on a row-wise and on the URL-disjoint split (:func:`.splits.split_comparison`) of the
    ``data`` the run read, side by side with Sosa's no-noise rates (250 teachers), saved and recorded with its
    verdict; returns the table."""
    s = run.settings
    arms = splits.split_comparison(
        data, seed=s.seed, student_pool_size=s.student_pool_size, vocabulary=s.vocabulary, config=run.config
    )
    paper = splits.sosa_no_noise_rates(published_items()["sosa2021-beyond-split"]["rows"], 250)
    table = splits.split_table(arms, paper=paper)
    stamp = f"{run.pools.source.stamp()}; no noise, " + "; ".join(
        f"{s} split: {scale_description(a.result, PAPER_SCALE, PAPER_QUERIES)}" for s, a in arms.items()
    )
    out.save_table(table.reset_index(), "sosa2021-beyond-split", data=stamp)
    out.record(
        "sosa2021-beyond-split",
        table=table.to_dict(orient="index"),
        earlier_claim=splits.EARLIER_CLAIM,
        pools={s: a.description for s, a in arms.items()},
        **splits.split_verdict(table, data_reason=run.data_reason).as_record(),
    )
    return table


def split_findings(table: pd.DataFrame) -> MarkdownText:
    """What the side-by-side split table shows (:func:`.splits.split_findings`), in Markdown."""
    return MarkdownText(splits.split_findings(table))


def verdicts_section(run: WebRun, sosa: SosaRun, out: NotebookOutputs) -> MarkdownText:
    """Every comparison judged by :func:`.web.verdicts`, recorded (MAKE and Visca ids); returns Markdown."""
    verdicts = web.verdicts(
        run.result,
        sosa.results,
        published_items(),
        gamma=run.config.gamma,
        delta=run.config.delta,
        data_reason=run.data_reason,
        sosa_reasons=sosa.data_reasons,
    )
    return record_verdicts(verdicts, SAME_AS, out)


def findings_section(run: WebRun, sosa: SosaRun, signal: pd.DataFrame) -> MarkdownText:
    """The findings (:func:`.web.findings`) from this run's numbers, in Markdown."""
    pools = run.pools
    return MarkdownText(
        web.findings(
            run.result,
            sosa.results,
            signal,
            sosa.hypotheses,
            data_stamp=run.data,
            pool_description=pools.description,
            pool_positive_share=float(pools.y_student.mean()),
            teacher_positive_share=float(pools.y_teacher.mean()),
            gamma=run.config.gamma,
            delta=run.config.delta,
            dataset=pools.source.dataset,
        )
    )
