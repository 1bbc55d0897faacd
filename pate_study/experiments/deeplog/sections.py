"""Notebook 03's sections, one call each: every table and figure saved and every scalar recorded through the
notebook's :class:`~pate_study.reporting.outputs.NotebookOutputs`, the verdicts said in words, and what the cell shows
returned. Each section returns a small record that the next sections read (Visca 2021 §4.1, Figs 4.1-4.7)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pate_study.data import deeplog as deeplog_data
from pate_study.experiments.deeplog.config import FIGURE_OF, IDEA2, IDEAS, KRR, DeepLogConfig
from pate_study.experiments.deeplog.figures import plot_idea
from pate_study.experiments.deeplog.findings import findings_lines, reach_table
from pate_study.experiments.deeplog.generators import Idea1Tables, idea1_tables
from pate_study.experiments.deeplog.guarantees import (
    FIGURE_GUARANTEE,
    LENGTH_NOTE,
    guarantee_summary,
    guarantee_table,
    worst_over_seeds,
)
from pate_study.experiments.deeplog.listings import locate_listing
from pate_study.experiments.deeplog.models import Models, accuracy, classify, train_seeds
from pate_study.experiments.deeplog.runs import (
    length_permutation_test,
    reconstruction,
    run_ideas,
    summarise,
    unseen_test_accuracy,
)
from pate_study.experiments.deeplog.subset import (
    Prepared,
    data_description,
    duplication,
    length_only_accuracy,
    prepare_replicates,
)
from pate_study.experiments.deeplog.verdicts import (
    at_epsilon,
    control_accuracy_estimate,
    control_verdict,
    idea_verdicts,
    listing_verdict,
)
from pate_study.reporting.outputs import NotebookOutputs, show_findings
from pate_study.reporting.registry import published

logger = logging.getLogger(__name__)

#: every item the ideas' shared tables and figures belong to
IDEA_FIGURES = ["visca2021-fig4.3", "visca2021-fig4.4", "visca2021-fig4.5", "visca2021-fig4.6", "visca2021-fig4.7"]
#: "useful": a mean accuracy within 5 % of the control's on real sequences (the reach of the last section)
USEFUL_SHARE_OF_CONTROL = 0.95


@dataclass(frozen=True)
class DataSection:
    """The balanced subsets (one per model seed, :func:`.subset.prepare_replicates`) and what a classifier gets for
    free on the first (duplicates, the length alone). ``prepared`` is model seed 0's subset and split, the one the
    single-model diagnostics read."""

    logs: deeplog_data.LogSequences
    replicates: list[Prepared]
    description: str
    duplicates: dict
    length_only: float

    @property
    def prepared(self) -> Prepared:
        return self.replicates[0]

    @property
    def table(self) -> pd.Series:
        return pd.Series({**self.prepared.counts, **self.duplicates, "length-only accuracy": self.length_only})


def data_section(data: str, config: DeepLogConfig, out: NotebookOutputs) -> DataSection:
    """The sessions (``data``: auto, real or synthetic; :func:`pate_study.data.deeplog.load`), one subset and split per
    model seed, and on model seed 0's the duplicates and the length-only rule; recorded under ``data`` (the longest
    test sequence over every seed's split, which the released test sets' guarantees read)."""
    logs = deeplog_data.load(data, seed=config.seed)
    replicates = prepare_replicates(logs, config)
    prepared = replicates[0]
    description = data_description(prepared, config)
    show_findings(description)
    dup = duplication(prepared)
    length_only = length_only_accuracy(prepared.train, prepared.test)
    lengths = prepared.test.padded.lengths
    out.record(
        "data",
        source=logs.source.stamp(),
        **prepared.counts,
        **dup,
        length_only_accuracy=length_only,
        test_length_median=float(np.median(lengths)),
        test_length_max=max(int(p.test.padded.lengths.max()) for p in replicates),  # the guarantees' length
    )
    return DataSection(logs, replicates, description, dup, length_only)


def listings_section(data: DataSection, out: NotebookOutputs) -> dict[str, pd.DataFrame]:
    """Figs 4.1/4.2: each published listing located in its file, saved, judged and recorded; item -> table."""
    logs, listings = data.logs, {}
    for item, sessions, other in (
        ("visca2021-fig4.1", logs.normal, logs.abnormal),
        ("visca2021-fig4.2", logs.abnormal, logs.normal),
    ):
        table = locate_listing(published(item)["rows"], sessions, other)
        out.save_table(table, item, data=logs.source.stamp())
        v = listing_verdict(table, logs.source, sessions)
        out.record(
            item,
            first_file_row=int(table["file_row"].min()),
            exact_lines=int(table["exact"].sum()),
            lines=len(table),
            max_edit_distance=int(table["token_edit_distance"].max()),
            lines_in_other_file=int((table["occurrences_in_other_file"] > 0).sum()),
            **v.as_record(),
        )
        show_findings(f"**{item}** — {v.verdict}: {v.reason or v.rule}")
        listings[item] = table
    return listings


@dataclass(frozen=True)
class ModelSection:
    """The non-private models of every model seed and what the controls score on real sequences. ``models`` is
    model seed 0, the one the single-model diagnostics (Idea 1's Δu and guarantee, the reconstruction floor, the
    unseen sequences, the length permutation test) read."""

    seeds: list[Models]
    control_accuracy: float
    control_by_seed: dict[int, float]
    idea1: Idea1Tables
    reconstruction: dict
    unseen: dict

    @property
    def models(self) -> Models:
        return self.seeds[0]

    @property
    def table(self) -> pd.DataFrame:
        return pd.concat({s: pd.DataFrame(m.info).T for s, m in enumerate(self.seeds)}, names=["model seed", "model"])


def models_section(data: DataSection, config: DeepLogConfig, out: NotebookOutputs) -> ModelSection:
    """Train the models once per model seed on its own subset and split, score each seed's control on its own test
    split (thesis ≈ 0.97; interval over the seeds) and measure Idea 1's Δu; recorded under ``control``."""
    test = data.prepared.test
    seeds = train_seeds(data.replicates, config)
    labels = [p.test.labels for p in data.replicates]
    predictions = [classify(m.control, p.test.padded.tokens) for m, p in zip(seeds, data.replicates)]
    control = control_accuracy_estimate(labels, predictions, n_boot=config.n_boot, seed=config.seed)
    control_by_seed = {s: float((p == y).mean()) for s, (y, p) in enumerate(zip(labels, predictions))}
    models = seeds[0]
    idea1 = idea1_tables(models)
    recon = reconstruction(models, data.prepared)
    unseen = unseen_test_accuracy(models, data.prepared)
    v = control_verdict(control, unseen, data.duplicates)
    out.record(
        "control",
        accuracy=control.value,
        accuracy_by_model_seed={str(s): a for s, a in control_by_seed.items()},
        paper_accuracy=0.97,
        **unseen,
        idea1_rnn_accuracy=accuracy(models.idea1_rnn, test.padded.tokens, test.labels),
        models=[m.info for m in seeds],
        measured_delta_u=idea1.measured_delta_u,
        measured_delta_u_by_model_seed={str(s): idea1_tables(m).measured_delta_u for s, m in enumerate(seeds)},
        paper_delta_u=1.96,
        reconstruction=recon,
        **v.as_record(),
    )
    show_findings(
        f"Control accuracy on the real test split: **{control.render('.4f')}** (thesis ≈ 0.97; {v.verdict}: "
        f"{v.reason or v.rule}). Idea 1's Δu measured on its embedding table (model seed 0): "
        f"{idea1.measured_delta_u:.3f} (thesis: 1.96; any cosine table: ≤ 2)."
    )
    return ModelSection(seeds, control.value, control_by_seed, idea1, recon, unseen)


@dataclass(frozen=True)
class GuaranteeSection:
    """Every idea's guarantee at every plotted ε, and one row per idea beside the thesis's claim."""

    guarantees: pd.DataFrame
    summary: pd.DataFrame

    @property
    def max_length(self) -> int:
        return int(self.guarantees.attrs["max_length"])


def guarantees_section(
    data: DataSection, trained: ModelSection, config: DeepLogConfig, out: NotebookOutputs
) -> GuaranteeSection:
    """The guarantee table (per row the largest ε over the model seeds' mechanisms: Idea 1's is built on each seed's
    embedding) and its per-idea summary, saved under every idea figure."""
    guarantees = worst_over_seeds(
        [
            guarantee_table(
                config.epsilons,
                lengths=prepared.test.padded.lengths,
                vocabulary_size=prepared.vocabulary.size,
                idea1_utility=tables.utility,
                measured_delta_u=tables.measured_delta_u,
                latent_dim=config.hidden,
            )
            for tables, prepared in zip(map(idea1_tables, trained.seeds), data.replicates)
        ]
    )
    out.save_table(guarantees, ["visca2021-fig4.3-4.7-guarantees", *IDEA_FIGURES], data=data.description)
    summary = guarantee_summary(guarantees)
    out.save_table(summary, ["visca2021-fig4.3-4.7-claims", *IDEA_FIGURES], data=data.description)
    show_findings(
        f"Test-split sequence lengths: median {guarantees.attrs['median_length']}, "
        f"max {guarantees.attrs['max_length']}."
    )
    return GuaranteeSection(guarantees, summary)


@dataclass(frozen=True)
class IdeasSection:
    """Every idea at every ε, the length permutation test and the verdicts of Figs 4.3-4.7."""

    summary: pd.DataFrame
    length_test: pd.DataFrame
    judged: dict


def _figure_values(
    item: str,
    ideas_run: pd.DataFrame,
    judged: dict,
    control_accuracy: float,
    guaranteed: GuaranteeSection,
    config: DeepLogConfig,
) -> dict:
    """What ``scalars.json`` keeps for one idea figure: its first idea's curves, the guarantee and the verdict."""
    first_idea = [i for i, f in FIGURE_OF.items() if f == item][0]
    s = ideas_run[ideas_run["idea"] == first_idea]
    values = dict(
        accuracy_by_epsilon=dict(zip(map(str, s["epsilon"]), s["accuracy"])),
        hamming_by_epsilon=dict(zip(map(str, s["epsilon"]), s["hamming"])),
        control_accuracy_approx=control_accuracy,
        guarantee=FIGURE_GUARANTEE[item],
        **judged[item].as_record(),
    )
    if item == "visca2021-fig4.4":
        g = guaranteed.guarantees
        at_100 = g[(g["idea"] == IDEA2) & (g["epsilon"] == 100.0)]["epsilon_released_test_set"]
        values.update(
            epsilon_highlighted=100.0,
            max_sequence_length=guaranteed.max_length,
            hamming_distance_at_epsilon_100_min=at_epsilon(ideas_run, IDEA2, 100.0, "hamming"),
            composed_budget_max=float(at_100.iloc[0]) if 100.0 in config.epsilons else float("nan"),
        )
    if item == "visca2021-fig4.5":
        values.update(accuracy_approx=float(s["accuracy"].mean()))
    return values


def ideas_section(
    data: DataSection, trained: ModelSection, guaranteed: GuaranteeSection, config: DeepLogConfig, out: NotebookOutputs
) -> IdeasSection:
    """Figs 4.3-4.7: run every idea, save the results table and one figure per thesis figure, judge and record."""
    repeats = run_ideas(data.replicates, trained.seeds, config)
    runs = summarise(repeats)
    columns = [
        "idea",
        "epsilon",
        "mechanism_unit",
        "epsilon_symbol",
        "epsilon_hamming1_test_set",
        "epsilon_released_test_set",
    ]
    summary = runs.merge(guaranteed.guarantees[columns], on=["idea", "epsilon"])
    out.save_table(summary, ["visca2021-fig4.3-4.7-results", *IDEA_FIGURES], data=data.description)
    length_test = length_permutation_test(data.prepared, trained.models, config)
    out.record(
        "length_permutation_test",
        table={f"{i} | {lengths}": m for (i, lengths), m in length_test["mean"].stack().items()},
    )
    judged = idea_verdicts(repeats, control_accuracy=trained.control_by_seed, length_test=length_test)
    for item, guarantee in FIGURE_GUARANTEE.items():
        ideas = [i for i, f in FIGURE_OF.items() if f == item]
        fig, (ax_acc, ax_ham) = plt.subplots(1, 2, figsize=(11, 4))
        plot_idea(
            ax_acc, ax_ham, summary, ideas, control_accuracy=trained.control_accuracy, length_only=data.length_only
        )
        fig.suptitle(
            f"{item.split('-')[1].replace('fig', 'Fig. ')}: {', '.join(ideas)}\nguarantee: {guarantee}; {LENGTH_NOTE}",
            fontsize=8,
        )
        out.save_figure(fig, item, data=data.description)
        out.record(item, **_figure_values(item, summary, judged, trained.control_accuracy, guaranteed, config))
        show_findings(f"**{item}: {judged[item].verdict}** — {judged[item].reason or judged[item].rule}")
    return IdeasSection(summary, length_test, judged)


def beyond_thesis_section(
    data: DataSection, trained: ModelSection, ideas: IdeasSection, out: NotebookOutputs
) -> pd.DataFrame:
    """Every idea against the ε of the released test set, and where each reaches a useful accuracy (returned)."""
    fig, (ax_acc, ax_ham) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    plot_idea(
        ax_acc,
        ax_ham,
        ideas.summary,
        IDEAS,
        control_accuracy=trained.control_accuracy,
        length_only=data.length_only,
        x="epsilon_released_test_set",
        xlabel="ε of the released test set (per sequence, longest sequence)",
    )
    fig.suptitle(
        "All ideas against the guarantee for the released sequences (replace one, same length); "
        f"{LENGTH_NOTE}; training split: none except k-RR (ε = 0)",
        fontsize=8,
    )
    out.save_figure(fig, ["visca2021-fig4.3-4.7-vs-guarantee", *IDEA_FIGURES], data=data.description)
    level = USEFUL_SHARE_OF_CONTROL * trained.control_accuracy
    reach = reach_table(ideas.summary, level)
    krr = ideas.summary[ideas.summary["idea"] == KRR]
    out.record(
        "beyond_thesis",
        accuracy_level=level,
        reach=reach.to_dict(orient="records"),
        krr_hamming_by_epsilon=dict(zip(map(str, krr["epsilon"]), krr["hamming"])),
        krr_released_epsilon_by_epsilon=dict(zip(map(str, krr["epsilon"]), krr["epsilon_released_test_set"])),
    )
    return reach


def findings_section(
    data: DataSection,
    listings: dict,
    trained: ModelSection,
    guaranteed: GuaranteeSection,
    ideas: IdeasSection,
    reach: pd.DataFrame,
    config: DeepLogConfig,
    out: NotebookOutputs,
) -> str:
    """The findings written from this run's numbers, recorded under ``findings`` and shown; returns the text."""
    lines = findings_lines(
        data=data.description,
        control_accuracy=trained.control_accuracy,
        dup=data.duplicates,
        unseen=trained.unseen,
        length_only=data.length_only,
        listings=listings,
        idea1=trained.idea1,
        summary=ideas.summary,
        reach=reach,
        level=USEFUL_SHARE_OF_CONTROL * trained.control_accuracy,
        recon=trained.reconstruction,
        length_test=ideas.length_test,
        judged=ideas.judged,
        l_max=guaranteed.max_length,
        hidden=config.hidden,
        vocabulary_size=data.prepared.vocabulary.size,
    )
    out.record("findings", text="\n".join(lines))
    return show_findings("\n".join(lines))
