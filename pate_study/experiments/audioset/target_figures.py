"""The frontier figure with the target: student mAP against the ε of the whole procedure that produced the student.

Three kinds of points on one log-ε axis: the frontier's releases (each a procedure of one release fixed in advance, so
its own data-independent ε is the whole procedure's; scored on notebook 05's former test set, one teacher ensemble,
mean over student seeds with the min-max band), the thesis's settings (Table 5.4's rows at their data-independent
ε, same test set), and the pre-registered target procedure (:mod:`.target`: the mean over fresh teacher ensembles ×
executions of the published students' reporting-split mAP with its interval, at the ε of the whole random
search). The target mAP and the budget are labelled lines. Nothing is written beside a point: names go to the
legend, below the axes, and the two lines' labels sit where no point of this study lies (the target's at the right
edge, the budget's high on its line), so that no text overlaps another.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import pandas as pd


def frontier_figure(
    frontier: pd.DataFrame,
    table54: pd.DataFrame,
    refs: pd.DataFrame,
    target: dict[str, Any] | None,
    *,
    delta: float,
    epsilon_max: float = 300.0,
    target_map: float = 0.13,
):
    """``frontier`` (:func:`.pipeline.frontier_students`' summary), ``table54`` (Table 5.4's rows: ``map``,
    ``map_sd``, ``eps_data_independent``), ``refs`` (the non-private references: a dotted line each) and ``target``
    (the target's record, :func:`.target.report`; None: not run). Returns the figure."""
    fig, ax = plt.subplots(figsize=(8, 5.6))
    colours: dict[str, str] = {}
    for (mech, k), g in frontier.groupby(["mechanism", "k"], sort=False):
        g = g.sort_values("epsilon")
        name = (
            f"frontier: {mech}"
            + (f" k={int(k)}" if k else "")
            + " (σ_e "
            + ", ".join(f"{s:g}" for s in g["sigma_e"])
            + ")"
        )
        style = "o-" if mech not in colours else "s--"
        (line,) = ax.plot(g["epsilon"], g["map"], style, ms=4, lw=1, label=name, color=colours.get(mech))
        colours.setdefault(mech, line.get_color())
        ax.fill_between(g["epsilon"], g["map_min"], g["map_max"], color=line.get_color(), alpha=0.12)
    ax.errorbar(
        table54["eps_data_independent"],
        table54["map"],
        yerr=table54["map_sd"],
        fmt="x",
        color="0.35",
        ms=5,
        lw=0.8,
        label="thesis's settings (Table 5.4: GNThreshold σ_e 0.3, σ_c 0.6; ± sd)",
    )
    if target is not None:
        eps, mean = target["procedure_epsilon"], target["target_map_mean"]
        ax.errorbar(
            [eps],
            [mean],
            yerr=[[mean - target["target_map_low"]], [target["target_map_high"] - mean]],
            fmt="*",
            color="tab:red",
            ms=13,
            capsize=4,
            lw=1.5,
            zorder=5,
            label=f"pre-registered procedure ({target['n_teacher_ensembles']} fresh ensembles): "
            f"{mean:.3f} [{target['target_map_low']:.3f}, {target['target_map_high']:.3f}], ε {eps:.1f} "
            f"({target['target_verdict']})",
        )
    for i, (_, r) in enumerate(refs.iterrows()):
        ax.axhline(r["map"], ls=":", lw=0.8, color=f"{0.3 + 0.2 * i:.1f}", label=f"{r['reference']}: {r['map']:.3f}")
    ax.axhline(target_map, ls="-.", color="tab:red", lw=0.9)
    ax.text(
        0.995,
        target_map,
        f"target mAP {target_map:g}",
        transform=ax.get_yaxis_transform(),
        fontsize=7,
        color="tab:red",
        ha="right",
        va="bottom",
    )
    ax.axvline(epsilon_max, ls="--", color="0.3", lw=0.8)
    ax.text(
        epsilon_max,
        0.8,
        f" budget ε = {epsilon_max:g}",
        transform=ax.get_xaxis_transform(),
        fontsize=7,
        va="center",
        ha="left",
        color="0.3",
    )
    ax.set(
        xscale="log",
        xlabel=f"ε of the whole procedure that produced the student (δ = {delta:g})",
        ylabel="student mAP",
        title="Students against the privacy of the whole procedure",
    )
    ax.legend(
        fontsize=6.5,
        ncol=2,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.15),
        frameon=False,
        title="frontier, thesis's settings: one ensemble, former test set; procedure: fresh ensembles, reporting split",
        title_fontsize=6.5,
    )
    fig.tight_layout()
    return fig
