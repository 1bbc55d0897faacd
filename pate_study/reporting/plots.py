"""One visual style for every figure, and small plotting helpers shared by the notebooks."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.ticker import FuncFormatter, MaxNLocator

from pate_study.reporting.outputs import NotebookOutputs

PALETTE = "colorblind"


def use_style() -> None:
    """Apply the project's style (seaborn 'whitegrid', colour-blind palette, readable sizes)."""
    sns.set_theme(style="whitegrid", palette=PALETTE, context="notebook")
    matplotlib.rcParams.update(
        {
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
        }
    )


def save_and_show(fig: matplotlib.figure.Figure, item_ids: str | list[str], out: NotebookOutputs, *, data: str) -> None:
    """Save ``fig`` under ``item_ids`` with the notebook's outputs ``out`` (stamped with ``data``) and show it
    inline."""
    out.save_figure(fig, item_ids, data=data)
    plt.show()


def reference_line(ax, value: float, label: str, *, color: str = "tab:red") -> None:
    """A dashed horizontal line for a published or data-independent value (the sources draw ε*_ind so)."""
    ax.axhline(value, ls="--", lw=1.2, color=color, label=label)


def box_by_level(
    ax,
    frame,
    column: str,
    order,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    jitter: float = 0.15,
    jitter_seed: int = 0,
) -> None:
    """Box plot of ``column`` per noise level with the individual students overlaid (the sources' Figs 8-15).

    The students are drawn with a horizontal jitter from a seeded generator (seaborn's ``stripplot`` draws it
    from the unseeded global ``numpy.random``, so the same data gave different figures on every run).
    """
    order = list(order)
    sns.boxplot(data=frame, x="level", y=column, order=order, ax=ax, color="#a6cee3", fliersize=0)
    position = {level: i for i, level in enumerate(order)}  # seaborn puts category i at x = i
    shown = frame[frame["level"].isin(position)]
    offsets = np.random.default_rng(jitter_seed).uniform(-jitter, jitter, len(shown))
    ax.scatter(
        shown["level"].map(position).to_numpy(dtype=float) + offsets,
        shown[column],
        s=9,
        color="0.25",
        zorder=3,
        linewidths=0,
    )
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if title:
        ax.set_title(title)


def compact_ticks(ax, axis: str = "x", nbins: int = 5) -> None:
    """At most ``nbins`` ticks on ``axis`` with short labels (``-0.05`` rather than ``−0.050``), so that labels of
    narrow ranges never run into each other."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]))
    target.set_major_formatter(
        FuncFormatter(lambda value, _: f"{value:.6g}".replace("-", "−") if abs(value) > 1e-12 else "0")
    )


def hist_with_atoms(
    ax,
    samples,
    atoms,
    *,
    bins: int = 60,
    atol: float = 1e-9,
    color: str = "tab:blue",
    atom_color: str = "tab:red",
    label: str | None = None,
) -> dict:
    """A histogram of a distribution with point masses (atoms), where the atoms do not swamp the rest.

    The samples within ``atol`` of an atom are drawn as stems on a second y-axis (probability mass, labelled with
    its value); the others as a density histogram normalised by *all* samples, so the histogram's area plus the
    masses is 1. (A plain density histogram turns an atom into a spike of height mass / bin width, which hides
    everything else: e.g. the privacy loss of the Laplace mechanism has atoms at ±ε.)
    Returns ``{atom: mass}`` and the continuous part's total mass under ``"continuous"``.
    """
    samples = np.asarray(samples, dtype=float).ravel()
    atoms = np.asarray(atoms, dtype=float).ravel()
    if samples.size == 0:
        raise ValueError("samples is empty: expected at least one value to draw")
    near = np.abs(samples[:, None] - atoms[None, :]) <= atol
    masses = {float(a): float(near[:, i].mean()) for i, a in enumerate(atoms)}
    interior = samples[~near.any(axis=1)]
    continuous = interior.size / samples.size
    if interior.size:
        edges = np.linspace(interior.min(), interior.max(), bins + 1)
        weights = np.full(interior.size, 1.0 / (samples.size * (edges[1] - edges[0])))
        ax.hist(
            interior,
            bins=edges,
            weights=weights,
            color=color,
            alpha=0.8,
            label=label or f"continuous part (mass {continuous:.3f})",
        )
    low, high = (float(np.min(atoms)), float(np.max(atoms))) if atoms.size else (samples.min(), samples.max())
    low, high = min(low, samples.min()), max(high, samples.max())
    pad = 0.08 * (high - low or 1.0)  # room for the atoms' labels at the edges
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylabel("density of the continuous part")
    mass_axis = ax.twinx()
    mass_axis.grid(False)
    for atom, mass in masses.items():
        mass_axis.vlines(atom, 0, mass, color=atom_color, lw=2)
        mass_axis.plot([atom], [mass], "o", color=atom_color)
        mass_axis.annotate(
            f"{mass:.3f}",
            (atom, mass),
            textcoords="offset points",
            xytext=(0, 5),
            ha="center",
            fontsize=8,
            color=atom_color,
        )
    mass_axis.set_ylim(0, max([*masses.values(), 1e-3]) * 1.25)
    mass_axis.set_ylabel("probability mass at the atoms", color=atom_color)
    return {**masses, "continuous": continuous}
