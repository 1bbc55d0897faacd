"""The figures of notebook 05, each drawn from numbers the package computed (nothing here trains or judges);
notebook 04's are in :mod:`.teacher_figures`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def sweep_figure(sw: pd.DataFrame, title: str, delta: float, n_account: int):
    """Figs 5.13 / A.7: F1 vs σ_e, ε vs σ_e (with the data-independent and Theorem 12 references; adaptive rows:
    the sound ε, and the thesis's as-fixed number dotted), F1 vs ε."""
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for th, s in sw.groupby("threshold", sort=False):
        s = s[s["sigma_e"] > 0]
        (line,) = ax[0].plot(s["sigma_e"], s["f1"], "o-", label=f"th_e={th}")
        ax[1].plot(s["sigma_e"], s["epsilon"], "o-", color=line.get_color(), label=f"th_e={th}")
        if th == "adaptive":
            ax[1].plot(
                s["sigma_e"],
                s["epsilon_threshold_as_fixed"],
                "x:",
                color=line.get_color(),
                label="adaptive, thesis's accounting (not a guarantee)",
            )
        ax[2].plot(s["epsilon"], s["f1"], "o-", color=line.get_color(), label=f"th_e={th}")
    s = sw[sw["sigma_e"] > 0].drop_duplicates("sigma_e")
    ax[1].plot(s["sigma_e"], s["epsilon_data_independent"], "k--", label="data-independent (vote fraction)")
    ax[1].plot(s["sigma_e"], s["epsilon_reference"], "k:", label="Theorem 12 as printed")
    nf = sw[sw["sigma_e"] == 0]
    ax[0].scatter(np.zeros(len(nf)), nf["f1"], marker="x", color="k", label="σ=0")
    ax[1].set_yscale("log")
    ax[2].set_xscale("log")
    ax[0].set(xlabel="σ_e", ylabel="macro F1")
    ax[1].set(xlabel="σ_e", ylabel=f"ε (δ={delta:g}, {n_account} queries)")
    ax[2].set(xlabel="ε", ylabel="macro F1")
    ax[1].legend(fontsize=6)
    ax[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def confidence_figure(cs: pd.DataFrame, title: str):
    """Figs 5.14, 5.15, A.8–A.11: F1 (answered) vs σ_e, ε (realised cost; dashed: data-independent), F1 vs ε."""
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for sc, s in cs.groupby("sigma_c"):
        (line,) = ax[0].plot(s["sigma_e"], s["f1"], "o-", label=f"σ_c={sc:g}")
        ax[1].plot(s["sigma_e"], s["epsilon"], "o-", color=line.get_color(), label=f"σ_c={sc:g}")
        ax[1].plot(s["sigma_e"], s["epsilon_data_independent"], "--", color=line.get_color())
        ax[2].plot(s["epsilon"], s["f1"], "o-", color=line.get_color())
    ax[1].set_yscale("log")
    ax[2].set_xscale("log")
    ax[0].set(xlabel="σ_e", ylabel="macro F1 (answered)")
    ax[1].set(xlabel="σ_e", ylabel="ε (dashed: data-independent)")
    ax[2].set(xlabel="ε", ylabel="macro F1")
    ax[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def audit_figure(aud: pd.DataFrame):
    """Claimed ε (grey) against the empirical lower bound (blue: holds, red: violated) per audited release."""
    fig, ax = plt.subplots(figsize=(11, 4))
    labels = [f"{r.release}\n{r.claim}, {r.mechanism}\nσ_e={r.sigma_e:g}" for r in aud.itertuples()]
    x = np.arange(len(aud))
    ax.bar(x - 0.2, aud["claimed_epsilon"], 0.4, color="0.6", label="accountant's ε (claimed)")
    ax.bar(
        x + 0.2,
        aud["empirical_epsilon_lower"],
        0.4,
        label="empirical lower bound (95 %)",
        color=np.where(aud["violation"], "tab:red", "tab:blue"),
    )
    ax.set_xticks(x, labels, rotation=90, fontsize=6)
    ax.set_yscale("log")
    ax.set_ylabel("ε (one query)")
    ax.legend(fontsize=7)
    ax.set_title("Multi-label releases: accountant vs empirical audit (red: claim violated)")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- notebook 05
def prediction_counts_figure(counts: dict):
    """Fig A.6: per ensemble (``counts[T]``: :func:`.thesis_tables.prediction_counts`), the true label count and the
    noise-free ensemble's positive predictions per threshold of the most and least frequent classes."""
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharey=True)
    for ax, (t, pc) in zip(axes.ravel(), counts.items()):
        x = np.arange(len(pc))
        cols = ["labels"] + [c for c in pc.columns if c.startswith("predicted_")]
        for i, c in enumerate(cols):
            ax.bar(x + (i - len(cols) / 2) * 0.15, pc[c] + 1, width=0.15, label=c.replace("predicted_", "th "))
        ax.set_xticks(x, [n[:14] for n in pc["class"]], rotation=60, fontsize=7)
        ax.set_yscale("log")
        ax.set_title("baseline" if t == 1 else f"big {t}")
    axes[0, 0].legend(fontsize=7)
    axes[0, 0].set_ylabel("count + 1")
    fig.tight_layout()
    return fig


def q_histogram_figure(h: pd.DataFrame, sigma_e: float):
    """Figs 5.16, A.12, A.13: queries per q̃ bucket and the ε of 1,000 such queries, without and with the check."""
    fig, axes = plt.subplots(2, 1, figsize=(8, 7))
    for ax, (th, s) in zip(axes, h.groupby("threshold", sort=False)):
        x = np.arange(len(s))
        ax.bar(x, s["n_queries"], color="0.6")
        ax.set_xticks(x, [f"[{a:.0e}, {b:.0e})" for a, b in zip(s["q_low"], s["q_high"])], fontsize=7)
        ax.invert_xaxis()
        ax.set_ylabel("queries")
        ax.set_title(f"th_e={th}, σ_e={sigma_e}")
        ax2 = ax.twinx()
        ax2.plot(x, s["epsilon_1000"], "s", color="0.3", label="ε/1000 q, no check")
        ax2.plot(
            x, s["epsilon_1000_confident_expected"], "o", color="tab:blue", label="ε/1000 q, with check (expected)"
        )
        ax2.set_ylabel("ε of 1,000 such queries")
        ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def students_figure(
    sub: pd.DataFrame,
    refs: pd.DataFrame,
    th: str,
    thc: float | str | None,
    delta: float,
    sweep: pd.DataFrame | None = None,
):
    """Figs 5.17-5.19: the students' test mAP against ε (Table 5.4's rows at σ_e 0.3, σ_c 0.6; with ``sweep``, the
    figure's configuration over σ_e and σ_c as lines, bars = min-max over seeds). The confidence check is stated in
    the title and every label (σ_c only where there is a check: "no check" otherwise); labels are offset
    alternately up and down; the y-axis is fitted to the students' bars, a reference inside it a dotted line, one
    outside it named in the corner with its value."""
    checked = thc is not None and str(thc) != "None"
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    lows, highs, n_label = [], [], 0

    def label(x, y, text, size=6):
        nonlocal n_label
        dy = 6 if n_label % 2 == 0 else -10
        n_label += 1
        ax.annotate(text, (x, y), xytext=(4, dy), textcoords="offset points", fontsize=size)

    if sweep is not None and not sweep.empty:
        for what, g in (
            ("σ_e", sweep[sweep["sigma_c"].isna() | (sweep["sigma_c"] == 0.6)]),
            ("σ_c", sweep[sweep["sigma_c"].notna() & (sweep["sigma_e"] == 0.3) & (sweep["sigma_c"] != 0.6)]),
        ):
            g = g.sort_values("eps_data_dependent")
            if g.empty:
                continue
            ax.errorbar(
                g["eps_data_dependent"],
                g["map"],
                yerr=[g["map"] - g["map_min"], g["map_max"] - g["map"]],
                fmt="s--",
                capsize=3,
                label=f"{what} varied (n={int(g['n_samples'].iloc[0])})",
            )
            lows += list(g["map_min"])
            highs += list(g["map_max"])
            for _, r in g.iterrows():
                check = "no check" if np.isnan(r["sigma_c"]) else f"σ_c={r['sigma_c']:g}"
                label(r["eps_data_dependent"], r["map"], f"σ_e={r['sigma_e']:g}, {check}")
        ax.set_xscale("log")
        ax.legend(fontsize=7)
    for _, rr in sub.iterrows():
        spread = [[rr["map"] - rr["map_min"]], [rr["map_max"] - rr["map"]]] if "map_min" in rr else None
        ax.errorbar(rr["eps_data_dependent"], rr["map"], yerr=spread, fmt="o", capsize=3)
        lows.append(rr.get("map_min", rr["map"]))
        highs.append(rr.get("map_max", rr["map"]))
        label(
            rr["eps_data_dependent"],
            rr["map"],
            f"n={rr['n_samples']}, σ_e=0.3, " + ("σ_c=0.6" if checked else "no check"),
            7,
        )
    finite = [float(v) for v in lows + highs if np.isfinite(v)]
    if finite:
        lo, hi = min(finite), max(finite)
        pad = max(0.15 * (hi - lo), 0.002)
        ax.set_ylim(lo - pad, hi + pad)
    low_y, high_y = ax.get_ylim()
    outside = []
    for _, rr in refs.iterrows():
        if low_y <= rr["map"] <= high_y:
            ax.axhline(rr["map"], ls=":", color="0.5")
            ax.text(ax.get_xlim()[0], rr["map"], rr["reference"], fontsize=6, va="bottom")
        else:
            outside.append(f"{rr['reference']}: {rr['map']:.3f} ({'above' if rr['map'] > high_y else 'below'})")
    if outside:
        ax.text(
            0.99,
            0.01,
            "references off the axis:\n" + "\n".join(outside),
            transform=ax.transAxes,
            fontsize=5,
            ha="right",
            va="bottom",
            color="0.4",
        )
    ax.set(
        xlabel=f"ε (δ={delta:g})",
        ylabel="student mAP (test; mean, bar = min-max over seeds)",
        title=f"students, th_e={th}, " + (f"confidence check th_c={thc}" if checked else "no confidence check"),
    )
    fig.tight_layout()
    return fig


def multiwinner_figure(mw: pd.DataFrame, mw_students: pd.DataFrame, delta: float, n_account: int):
    """Beyond the thesis: each mechanism's released-label F1 against ε, and its student's mAP against ε."""
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    for mech, s in mw.groupby("mechanism", sort=False):
        (line,) = ax[0].plot(s["epsilon"], s["f1"], "o-", label=mech)
        ax[0].plot(s["epsilon_data_independent"], s["f1"], "x:", color=line.get_color())
    ax[0].set(
        xscale="log",
        xlabel=f"ε (δ={delta:g}, {n_account} queries; x: data-independent)",
        ylabel="macro F1 of released labels",
    )
    ax[0].legend()
    ax[1].scatter(mw_students["epsilon"], mw_students["map"])
    for _, rr in mw_students.iterrows():
        ax[1].annotate(rr["mechanism"], (rr["epsilon"], rr["map"]))
    ax[1].set(xscale="log", xlabel="ε", ylabel="student mAP (test)")
    fig.suptitle("Beyond the thesis: multi-label PATE mechanisms on the same votes")
    fig.tight_layout()
    return fig
