"""The notebook's findings and the ε at which each idea reaches an accuracy, written from this run's numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pate_study.experiments.deeplog.config import IDEA1_MEASURED, IDEA2, IDEA3, IDEA4, IDEA5, IDEAS, KRR
from pate_study.experiments.deeplog.generators import Idea1Tables
from pate_study.experiments.deeplog.verdicts import at_epsilon, first_epsilon_reaching


def reach_table(summary: pd.DataFrame, accuracy_level: float) -> pd.DataFrame:
    """Per idea: the smallest plotted ε whose mean accuracy reaches ``accuracy_level``, the released-set ε there
    under both adjacencies (replace one of the same length; Hamming 1), and the grid point before it (not reached):
    the true crossing lies between the two, so each ε is a grid-limited upper bound (inf when never reached)."""
    rows = []
    for idea in IDEAS:
        s = summary[summary["idea"] == idea].sort_values("epsilon")
        eps = first_epsilon_reaching(summary, idea, accuracy_level)
        at = s[s["epsilon"] == eps]
        before = s[s["epsilon"] < eps].tail(1)
        rows.append(
            {
                "idea": idea,
                "plotted ε": eps,
                "released-set ε": float(at["epsilon_released_test_set"].iloc[0]) if len(at) else float("inf"),
                "Hamming-1 ε": float(at["epsilon_hamming1_test_set"].iloc[0]) if len(at) else float("inf"),
                "previous grid ε (not reached)": float(before["epsilon"].iloc[0]) if len(before) else float("nan"),
                "accuracy there": float(before["accuracy"].iloc[0]) if len(before) else float("nan"),
                "bound": "grid-limited (crossing in (previous, plotted])" if len(at) else "not reached on the grid",
            }
        )
    return pd.DataFrame(rows)


def _reached(r: pd.DataFrame, best: pd.DataFrame, idea: str, level: float) -> str:
    plotted, released, ham1 = r.loc[idea, "plotted ε"], r.loc[idea, "released-set ε"], r.loc[idea, "Hamming-1 ε"]
    if not np.isfinite(plotted):
        return f"never reaches {level:.3f} on the grid (best {best.loc[idea, 'accuracy']:.3f})"
    prev = r.loc[idea, "previous grid ε (not reached)"]
    between = (
        f" (grid-limited: {r.loc[idea, 'accuracy there']:.3f} at the previous grid point ε = {prev:g})"
        if np.isfinite(prev)
        else ""
    )
    return (
        f"reaches {level:.3f} at plotted ε = {plotted:g}{between}, i.e. ε = {ham1:.4g} for the released set under"
        f" the thesis's Hamming-1 adjacency and {released:.4g} under replace-one of the same length"
    )


def accuracy_course(summary: pd.DataFrame, idea: str) -> str:
    """The mean accuracy of ``idea`` at the grid's smallest and largest ε (the ends its verdict compares) and its
    peak over the grid, with the ε of each, read from ``summary`` (one row per idea and ε)."""
    s = summary[summary["idea"] == idea].sort_values("epsilon")
    first, last = s.iloc[0], s.iloc[-1]
    peak = s.loc[s["accuracy"].idxmax()]
    direction = "rises" if last["accuracy"] > first["accuracy"] else "falls"
    peak_note = (
        f" (peak {peak['accuracy']:.3f} at ε = {peak['epsilon']:g})" if peak["epsilon"] != last["epsilon"] else ""
    )
    return (
        f"{direction} from {first['accuracy']:.3f} at ε = {first['epsilon']:g} to {last['accuracy']:.3f} at "
        f"ε = {last['epsilon']:g}{peak_note}"
    )


def reconstruction_note(reconstruction_hamming: float, summary: pd.DataFrame, idea: str, epsilon: float) -> str:
    """Model seed 0's Hamming distance without noise (:func:`pate_study.experiments.deeplog.runs.reconstruction`
    measures that one seed), set against the mean over the model seeds of ``idea`` at ``epsilon``: it bounds only
    that seed's decoding, so it is called a floor only where the seed mean does not go below it."""
    mean = at_epsilon(summary, idea, epsilon, "hamming")
    relation = (
        f"the mean over the model seeds at ε = {epsilon:g}, {mean:.3f}, is below it, so it is no floor for the mean"
        if mean < reconstruction_hamming
        else f"the mean over the model seeds at ε = {epsilon:g}, {mean:.3f}, is not below it"
    )
    return (
        f"model seed 0's autoencoder has reconstruction error {reconstruction_hamming:.3f} without noise "
        f"(that seed only; {relation})"
    )


def findings_lines(
    *,
    data: str,
    control_accuracy: float,
    dup: dict,
    unseen: dict,
    length_only: float,
    listings: dict,
    idea1: Idea1Tables,
    summary: pd.DataFrame,
    reach: pd.DataFrame,
    level: float,
    recon: dict,
    length_test: pd.DataFrame,
    judged: dict,
    l_max: int,
    hidden: int,
    vocabulary_size: int,
) -> list[str]:
    """The notebook's findings, written from this run's numbers (so they stay true on other data or profiles)."""
    best = summary.loc[summary.groupby("idea")["accuracy"].idxmax()].set_index("idea")
    r = reach.set_index("idea")

    def q(idea):
        return summary[summary["idea"] == idea]

    f1, f2 = listings["visca2021-fig4.1"], listings["visca2021-fig4.2"]
    lt = length_test["mean"]
    return [
        f"* **Data and scale.** {data}.",
        f"* **Control.** {control_accuracy:.3f} on the real test split, mean over the model seeds (thesis ≈ 0.97). "
        f"{dup['test_share_seen_in_train']:.0%} of"
        f" the test sequences occur verbatim in the training split; on the {unseen['unseen_sequences']} unseen ones the"
        f" control of model seed 0 scores {unseen['unseen_accuracy']:.3f}. A rule that reads only the length scores"
        f" {length_only:.3f}.",
        f"* **Figs 4.1/4.2.** Fig 4.1 is rows {f1['file_row'].min()}–{f1['file_row'].max()} of hdfs_train"
        f" ({f1['exact'].sum()}/{len(f1)} lines exact), Fig 4.2 rows {f2['file_row'].min()}–{f2['file_row'].max()} of"
        f" hdfs_test_abnormal ({f2['exact'].sum()}/{len(f2)} exact); the other lines differ by at most"
        f" {max(t['token_edit_distance'].max() for t in listings.values())} token(s). Only these two files were "
        "searched.",
        "* **Adjacency.** Every idea releases the length unchanged, so under replace-one of any length every idea has"
        " ε = ∞ for the length. Under the thesis's Hamming-1 adjacency k-RR and Idea 1 pay ε per release, not L·ε;"
        " Ideas 2 and 4 pay L·ε (every position reads the whole sequence).",
        f"* **Idea 1.** Δu measured on the embedding of model seed 0 {idea1.measured_delta_u:.3f} (thesis 1.96): the "
        "exact range of that table,"
        f" but the table is trained on private data; Δu = 2 holds for any cosine utility. With the measured Δu it"
        f" {_reached(r, best, IDEA1_MEASURED, level)}. Fig 4.3: **{judged['visca2021-fig4.3'].verdict}** on"
        f" ε ≤ 100: at ε = 100 Idea 1 scores {at_epsilon(summary, IDEA1_MEASURED, 100, 'accuracy'):.4f} (sd over"
        f" model seeds and noise draws {at_epsilon(summary, IDEA1_MEASURED, 100, 'accuracy_std'):.2g}) against the"
        " control's"
        f" {control_accuracy:.4f}; every claim's interval is in INDEX.md.",
        f"* **Idea 2.** At ε = 100 per position: accuracy {at_epsilon(summary, IDEA2, 100, 'accuracy'):.3f},"
        f" Hamming {at_epsilon(summary, IDEA2, 100, 'hamming'):.3f} (thesis > 0.4); "
        f"{reconstruction_note(recon['autoencoder']['hamming'], summary, IDEA2, 100)}; the composed "
        f"budget for length {l_max} is {100 * l_max:g} (thesis: 2,000 for length 20).",
        f"* **Ideas 3 and 5.** Accuracy {q(IDEA3)['accuracy'].min():.3f}–{best.loc[IDEA3, 'accuracy']:.3f} (Idea 3) and"
        f" {q(IDEA5)['accuracy'].min():.3f}–{best.loc[IDEA5, 'accuracy']:.3f} (Idea 5) over the grid. At the smallest ε"
        f" Idea 3 scores {lt.loc[IDEA3, 'original lengths']:.3f} with the original lengths and"
        f" {lt.loc[IDEA3, 'permuted lengths']:.3f} with lengths permuted across sequences (k-RR's random symbols at the"
        f" original lengths: {lt.loc[KRR, 'original lengths']:.3f}). One mechanism per sequence: ε = 2/b with our order"
        f" (normalise, then noise); with the thesis's order (noise, then normalise) the tanh-bounded LSTM state still"
        f" gives a finite ε = 2·hidden/b, {hidden}× larger here: the thesis lacks a stated scale, not a finite bound.",
        f"* **Idea 4.** Accuracy {accuracy_course(summary, IDEA4)} as "
        f"the Hamming distance falls (thesis: both fall). Fig 4.6: **{judged['visca2021-fig4.6'].verdict}**.",
        "* **Idea 5 / Fig 4.7.** Not comparable: one model trained at a fixed ε, only the release noise varies.",
        f"* **Baseline.** Per-symbol k-RR (K = {vocabulary_size}) {_reached(r, best, KRR, level)}. It uses no trained"
        f" model, so it protects the training sequences completely (ε = 0 for them); every other idea trains"
        f" non-privately on them (ε = ∞).",
    ]
