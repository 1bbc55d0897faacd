"""The studies' figures: box plots per noise level with reference lines (chance, majority class, trivial
classifiers, the data-independent ε), legends outside the data, shared y-axes across designs, and a note
wherever a box collapses onto a reference line."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pate_study.experiments.student_privacy.config import NO_NOISE
from pate_study.reporting.plots import box_by_level, reference_line

ACCURACY_LIMITS = (-0.02, 1.02)


def legend_outside(fig, ax) -> None:
    """One legend for the figure, right of the axes, so it never covers data (nor the stamp below)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)


def note_collapsed(ax, values: pd.Series, line: float, what: str) -> bool:
    """Write a note in the panel when every value lies on ``line`` (a box plot with no spread); True if so."""
    if len(values) and np.allclose(values, line, rtol=0, atol=1e-9):
        ax.text(
            0.02,
            0.04,
            f"every student lies on the {what}\n(boxes collapsed: no spread to show)",
            transform=ax.transAxes,
            fontsize=8,
            va="bottom",
            bbox=dict(fc="white", ec="0.6", alpha=0.9),
        )
        return True
    return False


def level_boxes(
    ax, students: pd.DataFrame, column: str, order, *, xlabel: str, ylabel: str, title: str, references=(), ylim=None
) -> None:
    """Box plot of ``column`` per level, individual students overlaid, ``references`` = (value, label, colour)."""
    box_by_level(ax, students, column, order, xlabel=xlabel, ylabel=ylabel, title=title)
    for value, label, colour in references:
        reference_line(ax, value, label, color=colour)
    if ylim is not None:
        ax.set_ylim(*ylim)


def control_medians(ax, students: pd.DataFrame, column: str, order) -> None:
    """The label control's median per level, as crosses over the boxes."""
    med = students.groupby("level")[column].median().reindex(list(order))
    ax.plot(
        range(len(order)),
        med.to_numpy(),
        "x",
        color="tab:purple",
        ms=9,
        mew=2,
        label="label control (labels shuffled), median",
    )


def accuracy_panels(
    results: dict,
    column: str,
    *,
    ylabel: str,
    title: str,
    chance: float,
    majority_column: str,
    majority_label: str,
    design_label,
) -> plt.Figure:
    """One panel per design (same y-axis), with chance and the median majority-class share as lines."""
    fig, axes = plt.subplots(1, len(results), figsize=(6.0 * len(results), 4.2), sharey=True, squeeze=False)
    for ax, (name, result) in zip(axes[0], results.items()):
        s = result.students
        level_boxes(
            ax,
            s,
            column,
            result.level_order,
            xlabel="student privacy parameter ρ",
            ylabel=ylabel,
            title=f"{name}\n{design_label(result)}",
            ylim=ACCURACY_LIMITS,
            references=[
                (chance, f"chance ({chance:g})", "0.3"),
                (float(s[majority_column].median()), majority_label, "tab:orange"),
            ],
        )
        ax.title.set_fontsize(8)
    fig.suptitle(title, fontsize=11)
    legend_outside(fig, axes[0][0])
    fig.tight_layout()
    return fig


def epsilon_panels(results: dict, *, delta: float, max_integer_order: int, title: str, design_label=None) -> plt.Figure:
    """ε_dep (λ = 1..L) per level, with ε*_ind (continuous λ) and the integer-grid bound for each panel's T (their
    values in the panel's title); a note in the title where the boxes collapse onto the bound. Panels keep their
    own y-axis: their T, hence their bounds, differ."""
    fig, axes = plt.subplots(1, len(results), figsize=(6.0 * len(results), 4.4), squeeze=False)
    for ax, (name, result) in zip(axes[0], results.items()):
        ind, s = result.data_independent, result.students
        heading = name + (f"\n{design_label(result)}" if design_label else "")
        heading += (
            f"\nlines for T = {result.config.student_queries}: ε*_ind {ind['eps_moments_cont']:.4f} (continuous λ),"
            f" {ind['eps_moments_int']:.4f} (λ ∈ 1..{max_integer_order})"
        )
        level_boxes(
            ax,
            s,
            "eps_moments_int",
            result.level_order,
            xlabel="student privacy parameter ρ",
            ylabel=f"ε_dep (δ = {delta:g}, λ ∈ 1..{max_integer_order})",
            title=heading,
            references=[
                (ind["eps_moments_cont"], "ε*_ind, continuous λ (the panel's T)", "tab:red"),
                (ind["eps_moments_int"], f"ε_ind on λ ∈ 1..{max_integer_order} (the panel's T)", "tab:orange"),
            ],
        )
        if np.allclose(s["eps_moments_int"], ind["eps_moments_int"], rtol=0, atol=1e-9):
            ax.set_title(heading + "\nevery student lies on the integer-grid bound: boxes collapsed, no spread to show")
        ax.title.set_fontsize(8)
    fig.suptitle(title, fontsize=11)
    legend_outside(fig, axes[0][0])
    fig.tight_layout()
    return fig


def rate_panels(result, column: str, name: str, *, title: str) -> plt.Figure:
    """Left: the students' ``name`` (TPR or TNR) with the trivial classifiers and the label control; right:
    balanced accuracy, where both trivial classifiers score 0.5."""
    s, order = result.students, result.level_order
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.5, 4.2), sharey=True)
    trivial = {"TPR": (1.0, 0.0), "TNR": (0.0, 1.0)}[name]
    level_boxes(
        left,
        s,
        column,
        order,
        xlabel="student privacy parameter ρ",
        ylabel=f"validation {name}",
        title=f"Student {name}",
        ylim=ACCURACY_LIMITS,
        references=[
            (trivial[0], "trivial: everything anomalous", "tab:red"),
            (trivial[1], "trivial: everything benign", "tab:green"),
        ],
    )
    control_medians(left, s, column.replace("student_", "control_"), order)
    for value, what in (
        (1.0, "line of 'everything anomalous'" if name == "TPR" else "line of 'everything benign'"),
        (0.0, "other trivial classifier's line"),
    ):
        note_collapsed(left, s[column], value, what)
    level_boxes(
        right,
        s,
        "student_balanced_accuracy",
        order,
        xlabel="student privacy parameter ρ",
        ylabel="balanced accuracy",
        title="Student balanced accuracy (both trivial classifiers: 0.5)",
        references=[(0.5, "trivial classifiers (balanced accuracy)", "0.3")],
    )
    control_medians(right, s, "control_balanced_accuracy", order)
    fig.suptitle(title, fontsize=11)
    handles, labels = [], []
    for ax in (left, right):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def sosa_teacher_epsilon(table42: pd.DataFrame, *, delta: float, n_students: int) -> plt.Figure:
    """Sosa Fig. 4.4: teacher ε_dep (median over the students) by student noise scale b, the no-noise point
    included at the right, ours beside Sosa's."""
    levels = [lvl for lvl in table42["student_noise_scale"].unique() if lvl != NO_NOISE]
    levels = sorted(levels, key=float) + [NO_NOISE]
    x = {lvl: i for i, lvl in enumerate(levels)}
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for (teachers, rows), colour in zip(table42.groupby("n_teachers"), ["tab:blue", "tab:orange", "tab:green"]):
        rows = rows.assign(x=rows["student_noise_scale"].map(x)).sort_values("x")
        if rows["ours_teacher_epsilon"].notna().any():
            ax.plot(
                rows["x"],
                rows["ours_teacher_epsilon"],
                "o-",
                color=colour,
                label=f"ours, {teachers} teachers (median of {n_students} students)",
            )
        if rows["paper_teacher_epsilon"].notna().any():
            ax.plot(
                rows["x"], rows["paper_teacher_epsilon"], "x--", color=colour, label=f"Sosa 2021, {teachers} teachers"
            )
    ax.axvline(len(levels) - 1.5, color="0.6", lw=0.8)
    ax.set_xticks(range(len(levels)), levels)
    ax.set(
        xlabel="student noise scale b (Sosa's 'student ε'; larger = more noise)",
        ylabel=f"median teacher ε_dep (δ = {delta:g}, λ ∈ 1..8)",
        title="Student noise vs teacher privacy loss (medians over students)",
    )
    legend_outside(fig, ax)
    fig.tight_layout()
    return fig
