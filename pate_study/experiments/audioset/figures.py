"""Figures of notebook 05 drawn from its tables (Figs 5.13-5.15, A.7-A.11, the audit)."""
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
        line, = ax[0].plot(s["sigma_e"], s["f1"], "o-", label=f"th_e={th}")
        ax[1].plot(s["sigma_e"], s["epsilon"], "o-", color=line.get_color(), label=f"th_e={th}")
        if th == "adaptive":
            ax[1].plot(s["sigma_e"], s["epsilon_threshold_as_fixed"], "x:", color=line.get_color(),
                       label="adaptive, thesis's accounting (not a guarantee)")
        ax[2].plot(s["epsilon"], s["f1"], "o-", color=line.get_color(), label=f"th_e={th}")
    s = sw[sw["sigma_e"] > 0].drop_duplicates("sigma_e")
    ax[1].plot(s["sigma_e"], s["epsilon_data_independent"], "k--", label="data-independent (vote fraction)")
    ax[1].plot(s["sigma_e"], s["epsilon_reference"], "k:", label="Theorem 12 as printed")
    nf = sw[sw["sigma_e"] == 0]
    ax[0].scatter(np.zeros(len(nf)), nf["f1"], marker="x", color="k", label="σ=0")
    ax[1].set_yscale("log"); ax[2].set_xscale("log")
    ax[0].set(xlabel="σ_e", ylabel="macro F1"); ax[1].set(xlabel="σ_e", ylabel=f"ε (δ={delta:g}, {n_account} queries)")
    ax[2].set(xlabel="ε", ylabel="macro F1"); ax[1].legend(fontsize=6); ax[0].legend(fontsize=7)
    fig.suptitle(title); fig.tight_layout()
    return fig


def confidence_figure(cs: pd.DataFrame, title: str):
    """Figs 5.14, 5.15, A.8–A.11: F1 (answered) vs σ_e, ε (realised cost; dashed: data-independent), F1 vs ε."""
    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for sc, s in cs.groupby("sigma_c"):
        line, = ax[0].plot(s["sigma_e"], s["f1"], "o-", label=f"σ_c={sc:g}")
        ax[1].plot(s["sigma_e"], s["epsilon"], "o-", color=line.get_color(), label=f"σ_c={sc:g}")
        ax[1].plot(s["sigma_e"], s["epsilon_data_independent"], "--", color=line.get_color())
        ax[2].plot(s["epsilon"], s["f1"], "o-", color=line.get_color())
    ax[1].set_yscale("log"); ax[2].set_xscale("log")
    ax[0].set(xlabel="σ_e", ylabel="macro F1 (answered)"); ax[1].set(xlabel="σ_e", ylabel="ε (dashed: data-independent)")
    ax[2].set(xlabel="ε", ylabel="macro F1"); ax[0].legend(fontsize=7)
    fig.suptitle(title); fig.tight_layout()
    return fig


def audit_figure(aud: pd.DataFrame):
    """Claimed ε (grey) against the empirical lower bound (blue: holds, red: violated) per audited release."""
    fig, ax = plt.subplots(figsize=(11, 4))
    labels = [f"{r.release}\n{r.claim}, {r.mechanism}\nσ_e={r.sigma_e:g}" for r in aud.itertuples()]
    x = np.arange(len(aud))
    ax.bar(x - 0.2, aud["claimed_epsilon"], 0.4, color="0.6", label="accountant's ε (claimed)")
    ax.bar(x + 0.2, aud["empirical_epsilon_lower"], 0.4, label="empirical lower bound (95 %)",
           color=np.where(aud["violation"], "tab:red", "tab:blue"))
    ax.set_xticks(x, labels, rotation=90, fontsize=6); ax.set_yscale("log")
    ax.set_ylabel("ε (one query)"); ax.legend(fontsize=7)
    ax.set_title("Multi-label releases: accountant vs empirical audit (red: claim violated)")
    fig.tight_layout()
    return fig
