"""Visca (2021) Figs 4.3-4.7: accuracy and Hamming distance against ε, with the reference lines."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from pate_study.experiments.deeplog.config import KRR
from pate_study.reporting.plots import reference_line


def plot_idea(
    ax_acc,
    ax_ham,
    summary: pd.DataFrame,
    ideas: Sequence[str],
    *,
    control_accuracy: float,
    length_only: float,
    x: str = "epsilon",
    xlabel: str = "ε of one mechanism call (as the thesis plots it)",
) -> None:
    """Accuracy (left axes) and normalised Hamming distance (right axes) against ε for ``ideas`` and the k-RR
    baseline, with the control's real-data accuracy and the length-only rule as reference lines."""
    for idea in [KRR, *[i for i in ideas if i != KRR]]:
        s = summary[summary["idea"] == idea]
        style = dict(ls=":", color="0.45") if idea == KRR else {}
        # on the per-call axis the ideas' ε are of different units: say which in the legend
        label = f"{idea} [x: ε per {s['mechanism_unit'].iloc[0]}]" if x == "epsilon" and "mechanism_unit" in s else idea
        ax_acc.errorbar(s[x], s["accuracy"], yerr=s["accuracy_std"], marker="o", ms=3, capsize=2, label=label, **style)
        ax_ham.errorbar(s[x], s["hamming"], yerr=s["hamming_std"], marker="o", ms=3, capsize=2, label=label, **style)
    reference_line(ax_acc, control_accuracy, f"control on real test sequences ({control_accuracy:.3f})")
    reference_line(ax_acc, length_only, f"length-only rule ({length_only:.3f})", color="tab:purple")
    for ax, ylabel in (
        (ax_acc, "control accuracy on synthetic test sequences"),
        (ax_ham, "normalised Hamming distance"),
    ):
        ax.set_xscale("log")
        ax.set(xlabel=xlabel, ylabel=ylabel, ylim=(-0.02, 1.02))
    ax_acc.legend(fontsize=7, loc="lower right")
