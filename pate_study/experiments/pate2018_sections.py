"""Notebook 06's sections, one call each (Papernot et al. 2018 Table 2 and its smooth-sensitivity release;
Papernot et al. 2017 Table 2 under the moments accountant): every table and figure saved and every scalar recorded
through the notebook's :class:`~pate_study.reporting.outputs.NotebookOutputs`, and what the cell shows returned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd

from pate_study.data import pate2018 as votes_data
from pate_study.experiments import pate2018
from pate_study.reporting.outputs import NotebookOutputs, show_findings
from pate_study.reporting.replicates import printed_rows

#: Table 2's saved columns: the paper's values beside the expected cost, the realised runs (their mean with its
#: t-interval, and the central 95% range of one run, against which a printed value is judged) and the independent
#: bounds
TABLE2_COLUMNS = [
    "dataset",
    "T",
    "sigma1",
    "sigma2",
    "queries",
    "delta",
    "paper_answered",
    "expected_answered",
    "realised_answered_mean",
    "realised_answered_mean_low",
    "realised_answered_mean_high",
    "run_answered_low",
    "run_answered_high",
    "paper_epsilon",
    "expected_epsilon_basic",
    "expected_epsilon_improved",
    "realised_epsilon_mean",
    "realised_epsilon_mean_low",
    "realised_epsilon_mean_high",
    "run_epsilon_low",
    "run_epsilon_high",
    "epsilon_independent_basic",
    "epsilon_independent_improved",
    "expected_epsilon_reference_script_basic",
    "expected_epsilon_reference_script_improved",
    "verdict",
]
#: what the notebook shows of Table 2 (the saved CSV has every column), as (group, column) headers with the number of
#: decimals shown: narrow enough for a page without scrolling sideways
TABLE2_SHOWN = {
    "queries": (("", "queries"), 0),
    "paper_answered": (("answered", "paper"), 0),
    "expected_answered": (("answered", "expected"), 1),
    "realised_answered_mean": (("answered", "runs (mean)"), 1),
    "paper_epsilon": (("ε", "paper"), 2),
    "expected_epsilon_basic": (("ε", "expected"), 3),
    "realised_epsilon_mean": (("ε", "runs (mean)"), 3),
    "verdict": (("", "verdict"), None),
}


def load_votes(data: str, seed: int) -> votes_data.Votes:
    """The votes (:func:`pate_study.data.pate2018.load`), their stamp shown once."""
    votes = votes_data.load(data, seed=seed)
    show_findings(votes.source.stamp())
    return votes


def is_real(votes: votes_data.Votes) -> bool:
    """Whether these are the released teacher votes (else the stamped synthetic stand-in)."""
    return votes.source.kind == "real"


def kind_label(votes: votes_data.Votes) -> str:
    """The votes' kind as the figures name it."""
    return "real" if is_real(votes) else "SYNTHETIC stand-in"


@dataclass(frozen=True)
class Table2:
    """Papernot et al. 2018 Table 2, ours beside theirs, and the realised runs per dataset."""

    table: pd.DataFrame
    runs: dict

    @property
    def shown(self) -> pd.DataFrame:
        """The compact view: one row per dataset, the paper's values beside ours, rounded for reading."""
        view = pd.DataFrame(
            {
                header: self.table[column] if decimals is None else self.table[column].round(decimals)
                for column, (header, decimals) in TABLE2_SHOWN.items()
            }
        )
        view.index = pd.Index(self.table["dataset"], name="dataset")
        view.columns = pd.MultiIndex.from_tuples(view.columns)
        return view


def table2_section(votes: votes_data.Votes, n_seeds: int, seed: int, out: NotebookOutputs) -> Table2:
    """Confident GNMax's expected cost and ``n_seeds`` realised runs (independent draws of the check noise, drawn as
    one array from ``seed``) per dataset at the paper's settings; each printed answered count and ε judged as one
    run's outcome (:func:`pate_study.experiments.pate2018.table2_comparison`); saved and recorded under
    ``papernot2018-table2``."""
    settings = pate2018.PAPER2018_CONFIDENT
    rows = [pate2018.confident_gnmax_rows(votes.counts[name], setting) for name, setting in settings.items()]
    runs = {
        name: pate2018.realised_runs(votes.counts[name], setting, n_seeds, seed) for name, setting in settings.items()
    }
    table2 = pate2018.table2_comparison(rows, runs, real_data=is_real(votes))
    out.save_table(table2[TABLE2_COLUMNS], "papernot2018-table2", data=votes.source.stamp())
    overall = pate2018.table2_overall_verdict(table2, real_data=is_real(votes))
    out.record(
        "papernot2018-table2",
        rows=table2.to_dict("records"),
        **overall.as_record(),
        printed_replicates=printed_rows(pate2018.table2_printed_estimates(runs)),
        **{f"{r.dataset}_expected_answered": r.expected_answered for r in table2.itertuples()},
        **{f"{r.dataset}_epsilon_expected": r.expected_epsilon_basic for r in table2.itertuples()},
        **{
            f"{r.dataset}_expected_epsilon_reference_script": r.expected_epsilon_reference_script_basic
            for r in table2.itertuples()
        },
    )
    return Table2(table2, runs)


def seeds_section(table2: Table2, votes: votes_data.Votes, n_seeds: int, out: NotebookOutputs):
    """Answered counts and realised ε over the seeds of the check, the expected and the printed values marked;
    saved and recorded under ``papernot2018-table2-seeds``. Returns the figure."""
    runs = table2.runs
    fig, axes = plt.subplots(2, len(runs), figsize=(4.2 * len(runs), 6.4), squeeze=False)
    for j, (name, run) in enumerate(runs.items()):
        row = table2.table.set_index("dataset").loc[name]
        for i, (col, expected, paper, label) in enumerate(
            [
                ("answered", row["expected_answered"], row["paper_answered"], "answered queries"),
                ("epsilon", row["expected_epsilon_basic"], row["paper_epsilon"], "realised ε (basic conversion)"),
            ]
        ):
            ax = axes[i, j]
            ax.hist(run[col], bins=30, color="tab:blue", alpha=0.75)
            ax.axvline(expected, color="k", ls="--", label=f"expected {expected:.4g}")
            if pd.notna(paper):
                ax.axvline(paper, color="tab:red", lw=2, label=f"paper {paper:g}")
            ax.set(xlabel=label, ylabel="runs" if j == 0 else "", title=f"{name} ({kind_label(votes)} votes)")
            ax.legend(fontsize=7)
    fig.suptitle(f"Confident GNMax over {n_seeds} draws of the noisy check, {kind_label(votes)} PATE 2018 votes")
    fig.tight_layout()
    out.save_figure(fig, "papernot2018-table2-seeds", data=votes.source.stamp())
    t = table2.table
    printed = t[t["paper_answered"].notna()]
    out.record(
        "papernot2018-table2-seeds",
        n_seeds=n_seeds,
        **{f"{r.dataset}_paper_answered_percentile": r.paper_answered_percentile for r in printed.itertuples()},
        **{f"{r.dataset}_paper_epsilon_percentile": r.paper_epsilon_percentile for r in printed.itertuples()},
        **{f"{name}_realised_epsilon_std": float(run["epsilon"].std()) for name, run in runs.items()},
        **{f"{name}_realised_answered_std": float(run["answered"].std()) for name, run in runs.items()},
        summary="printed answered counts and ε read as one run each; percentiles of the printed values among our "
        "runs recorded",
    )
    return fig


def answered_tests_section(table2: Table2, votes: votes_data.Votes, seed: int, out: NotebookOutputs) -> pd.DataFrame:
    """For every dataset whose printed answered count lies outside our seed interval: the explanations tested (row
    order and subset, more rows, a lower T); recorded under ``papernot2018-table2-answered-tests``."""
    differing = table2.table.query("answered_verdict == 'differs'")["dataset"].tolist()
    tests = {
        name: pate2018.answered_count_tests(votes.counts[name], setting, seed=seed)
        for name, setting in pate2018.PAPER2018_CONFIDENT.items()
        if name in differing
    }
    out.record(
        "papernot2018-table2-answered-tests",
        tests=tests,
        summary="cause of a printed answered count outside the seed interval: tested (row order/subset, more "
        "rows, lower T)",
    )
    return pd.DataFrame(tests).T


def smooth_sensitivity_section(
    votes: votes_data.Votes, datasets: Sequence[str], seed: int, out: NotebookOutputs
) -> pd.DataFrame:
    """The data-dependent ε of ``datasets`` released with smooth sensitivity (Papernot et al. 2018, App. B), five
    draws of the release noise each; saved and recorded under ``papernot2018-ss-release``."""
    releases = [
        pate2018.smooth_sensitivity_confident(
            votes.counts[name], pate2018.PAPER2018_CONFIDENT[name], votes.n_teachers, seeds=range(seed, seed + 5)
        )
        for name in datasets
    ]
    table = pd.DataFrame(releases).drop(columns="epsilon_released_draws")
    table["epsilon_released_seed0"] = [r["epsilon_released_draws"][0] for r in releases]
    out.save_table(table, "papernot2018-ss-release", data=votes.source.stamp())
    out.record(
        "papernot2018-ss-release",
        rows=table.to_dict("records"),
        summary="sanitised ε = data-dependent RDP + GNSS cost + ln(1/δ)/(λ−1), ± SS·σ_ss",
    )
    return table


def lnmax_section(votes: votes_data.Votes, out: NotebookOutputs) -> pd.DataFrame:
    """Papernot et al. 2017 Table 2 (LNMax, moments accountant) on the released votes; saved and recorded under
    ``papernot2017-table2``."""
    lnmax, verdict = pate2018.lnmax_verdicts(pate2018.lnmax_moments_rows(votes.counts), real_data=is_real(votes))
    out.save_table(lnmax, "papernot2017-table2", data=votes.source.stamp())
    out.record(
        "papernot2017-table2",
        rows=lnmax.to_dict("records"),
        **verdict.as_record(),
        **{f"{r.dataset}_{r.queries}_gamma{r.gamma:g}": r.epsilon_theorem_q for r in lnmax.itertuples()},
    )
    return lnmax
