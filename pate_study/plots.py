"""One visual style for every figure, and small plotting helpers shared by the notebooks."""
from __future__ import annotations

import matplotlib

PALETTE = "colorblind"


def use_style() -> None:
    """Apply the project's style (seaborn 'whitegrid', colour-blind palette, readable sizes)."""
    import seaborn as sns

    sns.set_theme(style="whitegrid", palette=PALETTE, context="notebook")
    matplotlib.rcParams.update({"figure.figsize": (6.4, 4.0), "figure.dpi": 100, "savefig.dpi": 150,
                                "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9})


def reference_line(ax, value: float, label: str, *, color: str = "tab:red") -> None:
    """A dashed horizontal line for a published or data-independent value (the sources draw ε*_ind so)."""
    ax.axhline(value, ls="--", lw=1.2, color=color, label=label)


def box_by_level(ax, frame, column: str, order, *, xlabel: str, ylabel: str, title: str | None = None) -> None:
    """Box plot of ``column`` per noise level with the individual students overlaid (the sources' Figs 8-15)."""
    import seaborn as sns

    sns.boxplot(data=frame, x="level", y=column, order=list(order), ax=ax, color="#a6cee3", fliersize=0)
    sns.stripplot(data=frame, x="level", y=column, order=list(order), ax=ax, color="0.25", size=3, jitter=0.15)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if title:
        ax.set_title(title)
