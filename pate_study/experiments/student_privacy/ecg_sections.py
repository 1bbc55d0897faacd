"""Notebook 01's sections (MAKE 2021 Figs 8–11, Table 1 = Visca 2021 Figs 4.15, 4.16, Table 4.1), one call each.

Every section takes the :class:`EcgRun` of :func:`run_designs` and the notebook's
:class:`~pate_study.reporting.outputs.NotebookOutputs`, builds its figures and tables (:mod:`.ecg`,
:mod:`.figures`), saves them, records its scalars and returns what the notebook cell shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pate_study.experiments.student_privacy import ecg, figures
from pate_study.experiments.student_privacy.notebook_sections import (
    noise_levels,
    record_accounting,
    record_verdicts,
)
from pate_study.experiments.student_privacy.paper_tables import per_level_medians
from pate_study.experiments.student_privacy.pipeline import StudyResult, run_study_on
from pate_study.experiments.student_privacy.pools import Pools, ecg_pools
from pate_study.reporting.outputs import MarkdownText, NotebookOutputs, markdown_list
from pate_study.reporting.plots import save_and_show
from pate_study.reporting.registry import published

PAPER_LAYOUT, SMALL_SAMPLE = "paper layout", "small-sample design"
#: the same published figure or table under Visca 2021's id
SAME_AS = {
    "make2021-fig10": "visca2021-fig4.15",
    "make2021-fig11": "visca2021-fig4.16",
    "make2021-table1": "visca2021-table4.1",
}
PUBLISHED_ITEMS = ("make2021-fig8", "make2021-fig9", "make2021-fig10", "make2021-table1")
METRIC_COLUMNS = [
    "student_accuracy",
    "student_balanced_accuracy",
    "student_macro_f1",
    "student_baseline_accuracy",
    "control_accuracy",
    "control_balanced_accuracy",
]
CONSENSUS_COLUMNS = ["median_q", "share_q_below_theorem_limit", "mean_top_vote_share"]


@dataclass(frozen=True)
class EcgRun:
    """The pools, one :class:`StudyResult` per design (by name, the paper layout first) and the data stamp."""

    pools: Pools
    results: dict[str, StudyResult]
    levels: list
    data: str

    @property
    def main(self) -> StudyResult:
        """The paper layout's result: the one the recorded scalars and verdicts describe."""
        return self.results[PAPER_LAYOUT]

    @property
    def order(self) -> list[str]:
        return self.main.level_order


def designs(settings: ecg.EcgStudyConfig) -> list[ecg.Design]:
    """The paper layout (students drawing independently), and with ``settings.alt_design`` the small-sample design
    (fewer teachers with more beats each, students on disjoint rows)."""
    s = settings
    chosen = [ecg.Design(PAPER_LAYOUT, s.n_teachers, s.n_students, s.student_queries, s.student_validation, False)]
    if s.alt_design:
        small = (s.alt_n_teachers, s.alt_n_students, s.alt_student_queries, s.alt_student_validation)
        chosen.append(ecg.Design(SMALL_SAMPLE, *small, True))
    return chosen


def run_designs(data: str, settings: ecg.EcgStudyConfig, out: NotebookOutputs) -> EcgRun:
    """Run the study once per design of notebook 01's ``settings`` (:func:`designs`) on the ECG pools; record the
    paper layout's scale under ``scale``."""
    pools = ecg_pools(data, seed=settings.seed)
    levels = noise_levels(settings.rhos, settings.include_no_noise)
    results = {
        d.name: run_study_on(pools, ecg.study_config(d, settings, n_features=pools.n_features, levels=levels))
        for d in designs(settings)
    }
    main = results[PAPER_LAYOUT]
    out.record(
        "scale",
        n_queries=main.config.student_queries,
        n_students=main.config.n_students,
        n_validation=main.config.student_validation,
        **main.teachers,
        designs={name: ecg.design_label(r) for name, r in results.items()},
    )
    stamp = f"{pools.source.stamp()}; " + "; ".join(f"{name}: {ecg.design_label(r)}" for name, r in results.items())
    return EcgRun(pools, results, levels, stamp)


def data_notes(run: EcgRun) -> MarkdownText:
    """The data stamp, how the pools were made and every reduction of the paper's sizes."""
    return markdown_list([run.data, run.pools.description, *run.main.scale_notes])


def ensemble_section(run: EcgRun, out: NotebookOutputs) -> pd.DataFrame:
    """Figs 8 and 9 (noise-free argmax and LNMax accuracy on the student's queries), their decays recorded;
    returns :func:`.ecg.ensemble_effects` per design."""
    gamma = run.main.config.gamma
    titles = {
        "make2021-fig8": "Fig. 8: ensemble accuracy (noise-free argmax) on the T student queries",
        "make2021-fig9": f"Fig. 9: PATE accuracy (LNMax, γ = {gamma:g}) on the T student queries",
    }
    for column, item in [("ensemble_accuracy", "make2021-fig8"), ("pate_accuracy", "make2021-fig9")]:
        fig = figures.accuracy_panels(
            run.results,
            column,
            ylabel="accuracy on the student's queries",
            title=titles[item],
            chance=1 / ecg.N_CLASSES,
            majority_column="query_majority_share",
            majority_label="majority class of the queries (median)",
            design_label=ecg.design_label,
        )
        save_and_show(fig, item, out, data=run.data)
    effects = {name: ecg.ensemble_effects(r.students, run.order) for name, r in run.results.items()}
    main = effects[PAPER_LAYOUT]
    # the paper's 4-5 % beside the quantity its claim reads (the decay on the reweighted accuracy, in points; judged
    # at the paper's scale only); the decay on the balanced sample's raw accuracy is recorded beside it
    judged = [100 * e.value for e in ecg.reweighted_decays(run.results[PAPER_LAYOUT]).values()]
    out.record(
        "make2021-fig8",
        accuracy_decay_min_pct=min(judged, default=math.nan),
        accuracy_decay_max_pct=max(judged, default=math.nan),
        accuracy_decay_unweighted_min_pct=float(main["ensemble_decay_pct"].min()),
        accuracy_decay_unweighted_max_pct=float(main["ensemble_decay_pct"].max()),
    )
    out.record(
        "make2021-fig9",
        accuracy_gap_min_pct=float(main["pate_gap_vs_unperturbed_pct"].min()),
        accuracy_gap_max_pct=float(main["pate_gap_vs_unperturbed_pct"].max()),
        ensemble_minus_pate_privatised_min_pct=float(main["ensemble_minus_pate_privatised_pct"].min()),
        ensemble_minus_pate_privatised_max_pct=float(main["ensemble_minus_pate_privatised_pct"].max()),
    )
    return pd.concat(effects, names=["design"])


def student_section(run: EcgRun, out: NotebookOutputs) -> pd.DataFrame:
    """Fig. 10 (student accuracy against chance and the majority class), its drops and the students' metrics
    recorded; returns the metrics, one column per level."""
    fig = figures.accuracy_panels(
        run.results,
        "student_accuracy",
        ylabel="student validation accuracy",
        title="Fig. 10: student accuracy",
        chance=1 / ecg.N_CLASSES,
        majority_column="student_baseline_accuracy",
        majority_label="majority class of the validation rows (median)",
        design_label=ecg.design_label,
    )
    save_and_show(fig, ["make2021-fig10", "visca2021-fig4.15"], out, data=run.data)
    drops = ecg.accuracy_drops(run.main.students, run.order)
    for item in ("make2021-fig10", "visca2021-fig4.15"):
        out.record(
            item, median_accuracy_drop_min_pct=float(drops.min()), median_accuracy_drop_max_pct=float(drops.max())
        )
    metrics = per_level_medians(run.main.students, METRIC_COLUMNS, run.order)
    out.record("student_metrics", **metrics.to_dict(orient="index"))
    return metrics.T


def collapse_section(run: EcgRun, out: NotebookOutputs) -> pd.DataFrame:
    """Each predictor's most frequent class and accuracy reweighted to the full data's priors
    (:func:`.ecg.class_collapse`), recorded per design; returns the tables, one block per design."""
    collapse = {name: ecg.class_collapse(r) for name, r in run.results.items()}
    for name, table in collapse.items():
        out.record(
            f"class_collapse ({name})",
            **table.to_dict(orient="index"),
            **(ecg.reweighted_effects(table) if "no noise" in table.index else {}),
        )
    return pd.concat(collapse, names=["design"])


def privacy_section(run: EcgRun, out: NotebookOutputs) -> pd.DataFrame:
    """Fig. 11 (ε_dep per level beside ε*_ind) and Table 1 (ours beside the paper's, a verdict per row), their
    statistics and the accounting invariants recorded; returns Table 1."""
    config = run.main.config
    fig = figures.epsilon_panels(
        run.results,
        delta=config.delta,
        max_integer_order=config.max_integer_order,
        title="Fig. 11: data-dependent privacy loss",
        design_label=ecg.design_label,
    )
    save_and_show(fig, ["make2021-fig11", "visca2021-fig4.16"], out, data=run.data)
    table1 = ecg.table1(run.main, published("make2021-table1")["rows"], config.gamma)
    out.save_table(table1, ["make2021-table1", "visca2021-table4.1"], data=run.data)
    summary = ecg.epsilon_summary(run.main)
    for item in ("make2021-fig11", "visca2021-fig4.16"):
        out.record(item, **summary)
    by_level = table1.set_index("level")
    out.record(
        "make2021-table1",
        median_by_level=by_level["eps_moments_int_median"].to_dict(),
        iqr_by_level=by_level["eps_moments_int_iqr"].to_dict(),
        n_students=len(run.main.students),
    )
    record_accounting(run.main, out)
    return table1


def consensus_section(run: EcgRun, out: NotebookOutputs) -> pd.DataFrame:
    """The teachers' consensus per level (median q, share of q below Theorem 3's limit, plurality share),
    recorded under ``consensus``; returns it."""
    consensus = per_level_medians(run.main.students, CONSENSUS_COLUMNS, run.order)
    out.record("consensus", **consensus.to_dict(orient="index"))
    return consensus


def verdicts_section(run: EcgRun, out: NotebookOutputs) -> MarkdownText:
    """Every published value judged by :func:`.ecg.verdicts`, recorded (MAKE and Visca ids); returns Markdown."""
    verdicts = ecg.verdicts(run.main, run.main.config.gamma, {item: published(item) for item in PUBLISHED_ITEMS})
    return record_verdicts(verdicts, SAME_AS, out)


def findings_section(run: EcgRun, signal: pd.DataFrame) -> MarkdownText:
    """The findings (:func:`.ecg.findings`) from this run's numbers, in Markdown."""
    majority_share = float(np.bincount(run.pools.y_teacher).max() / len(run.pools.y_teacher))
    return MarkdownText(ecg.findings(run.results, signal, run.data, run.main.config.gamma, majority_share))
