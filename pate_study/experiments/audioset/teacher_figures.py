"""The figures of notebook 04 (Audio Set teachers: Muschiol 2021, Figs 2.1, 5.1-5.12, A.1-A.5), each drawn from
numbers the package computed (nothing here trains or judges). An ablation's recipe arm is labelled with the recipe's
value of the setting the figure varies; each arm's own step count is in its stamp (:func:`arm_steps_stamp`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.metrics import roc_curve

from pate_study.experiments.audioset.diagnostics import curve_stats, curves, micro_curves, per_class_ap, ranked_classes
from pate_study.experiments.audioset.teachers import TeacherSpec

#: Per ablation figure (its title), the recipe's value of the setting the figure varies: the recipe arm's legend.
RECIPE_SETTING = {
    "mixup": lambda s: f"mixup, alpha {s.mixup_alpha:g}" if s.mixup_alpha else "no mixup",
    "balanced vs random sampler": lambda s: f"{s.sampler} sampler",
    "batch size": lambda s: f"batch {s.batch_size}",
    "learning rate": lambda s: f"lr {s.lr:g}",
    "plain BCE vs adaptive class weights": lambda s: "plain BCE" if s.class_weights is None else s.class_weights,
}


def arm_label(name: str, title: str, spec: TeacherSpec) -> str:
    """An ablation arm's legend: ``"recipe"`` becomes ``"recipe (<its value of the varied setting>)"``
    (:data:`RECIPE_SETTING`); another arm keeps its name (which states its value)."""
    if name != "recipe" or title not in RECIPE_SETTING:
        return name
    return f"recipe ({RECIPE_SETTING[title](spec)})"


def arm_steps_stamp(ablation: dict, names) -> str:
    """The steps each plotted arm trained (``"recipe: 600 steps; lr 0.0001, thesis length: 10000 steps"``): arms of
    one figure may train different lengths (equal epochs, the thesis's length), so one number would misstate them."""
    steps = {n: int(ablation[n].spec.steps) for n in names}
    if len(set(steps.values())) == 1:
        return f"every arm {next(iter(steps.values()))} steps"
    return "; ".join(f"{n}: {s} steps" for n, s in steps.items())


def siren_figure(mel: np.ndarray):
    """Fig 2.1: a log-Mel spectrogram ``[frames, 64]``."""
    fig, ax = plt.subplots(figsize=(7, 3))
    im = ax.imshow(mel.T, origin="lower", aspect="auto", cmap="magma", extent=[0, mel.shape[0], 0, mel.shape[1]])
    ax.set(
        xlabel="frame (10 ms hop; 1001 frames = 10 s)", ylabel="Mel band (64)", title="log-Mel spectrogram of a siren"
    )
    ax.grid(False)
    fig.colorbar(im, ax=ax, label="dB")
    fig.tight_layout()
    return fig


def sampler_figure(occ: pd.DataFrame, iterations: int, batch: int, title: str):
    """Fig 5.9: per-class occurrences (sorted, log scale) under the random and the balanced sampler."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for k, colour in (("random", "tab:grey"), ("balanced", "tab:blue")):
        srt = np.sort(occ[k].to_numpy())[::-1]
        ax.bar(np.arange(len(srt)), np.maximum(srt, 0.8), color=colour, alpha=0.6, width=1.0, label=f"{k} sampler")
    ax.set_yscale("log")
    ax.set(xlabel="class (sorted by count)", ylabel=f"occurrences in {iterations} batches of {batch}", title=title)
    ax.legend()
    fig.tight_layout()
    return fig


def teacher_curves_figure(runs: dict, subsets, teacher_counts):
    """Fig 5.1: mean curve-sample mAP of each ensemble's teachers per step (dotted once early stopping removed some;
    band: min-max over the teachers still training)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=False)
    for ax, subset in zip(axes, subsets):
        for t in teacher_counts:
            c = curve_stats(runs[subset, t])
            full = (c["teachers"] == t).to_numpy()
            (line,) = ax.plot(
                c.index, c["mean"].where(full), label=f"{'baseline' if t == 1 else f'{subset} {t}'} (mean of {t})"
            )
            ax.plot(c.index, c["mean"], ls=":", lw=1, color=line.get_color())
            if t > 1:
                ax.fill_between(c.index, c["min"], c["max"], where=full, color=line.get_color(), alpha=0.15)
        ax.set(xlabel="iteration (optimiser step)", ylabel="mAP on eval sample", title=f'"{subset}" teachers')
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def micro_curve_figures(runs: dict, test_labels: dict, subsets, teacher_counts):
    """Figs 5.2 / 5.3: micro-averaged PR and ROC curves of teacher 0 of each ensemble; returns the two figures and
    the micro ROC-AUC per (subset, T)."""
    fig_pr, ax_pr = plt.subplots(1, 2, figsize=(11, 4))
    fig_roc, ax_roc = plt.subplots(1, 2, figsize=(11, 4))
    auc_micro = {}
    for i, subset in enumerate(subsets):
        for t in teacher_counts:
            cv = micro_curves(test_labels[subset], runs[subset, t].probabilities[0])
            lab = "baseline" if t == 1 else f"{subset} {t} (teacher 0)"
            ax_pr[i].plot(cv["recall"], cv["precision"], label=lab)
            ax_roc[i].plot(cv["fpr"], cv["tpr"], label=lab)
            auc_micro[subset, t] = float(np.trapezoid(cv["tpr"], cv["fpr"]))
        ax_pr[i].set(xlabel="recall", ylabel="precision", title=f'"{subset}": micro-averaged PR, selected checkpoint')
        ax_roc[i].plot([0, 1], [0, 1], ls=":", color="0.5")
        ax_roc[i].set(
            xlabel="false-positive rate", ylabel="true-positive rate", title=f'"{subset}": micro-averaged ROC'
        )
        ax_pr[i].legend(fontsize=8)
        ax_roc[i].legend(fontsize=8)
    fig_pr.tight_layout()
    fig_roc.tight_layout()
    return fig_pr, fig_roc, auc_micro


def all_teachers_figure(run):
    """Fig 5.6: every teacher's curve-sample mAP and AUC."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric in zip(axes, ("mAP", "auc")):
        c = curves(run, metric)
        ax.plot(c.index, c.values, lw=1)
        ax.set(xlabel="iteration", ylabel=f"{metric} on eval sample", title=f'all ten "big 10" teachers: {metric}')
    fig.tight_layout()
    return fig


def ablation_figure(ablation: dict, names, title: str, n_teachers: int):
    """Figs 5.7, 5.8, 5.10-5.12: the mean curve of each ablation arm, mAP and AUC; the recipe arm labelled with its
    value of the varied setting (:func:`arm_label`)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric in zip(axes, ("mAP", "auc")):
        for name in names:
            c = curve_stats(ablation[name], metric)["mean"]
            ax.plot(c.index, c.values, label=arm_label(name, title, ablation[name].spec))
        ax.set(xlabel="iteration", ylabel=f"{metric} (mean of {n_teachers} teachers)", title=f"{title}: {metric}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def logmel_figure(logmel: dict, keys, title: str, with_init: bool = False):
    """Figs 5.4 / 5.5: the mean curve of each log-Mel CNN arm (``logmel[(architecture, init)] = (history, stamp,
    seconds)``), labelled by architecture (and initialisation with ``with_init``)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric in zip(axes, ("mAP", "auc")):
        for key in keys:
            c = curve_stats(logmel[key][0], metric)["mean"]
            ax.plot(c.index, c.values, label=f"{key[0]}, {key[1]}" if with_init else key[0])
        ax.set(xlabel="iteration", ylabel=metric, title=f"{title}: {metric}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def class_ap_figure(ap: np.ndarray, counts: np.ndarray, names):
    """Fig A.1: per-class AP of the big baseline (sorted) with the classes' training clips."""
    names = np.asarray(names)
    order = np.argsort(-np.nan_to_num(ap, nan=-1))
    fig, ax = plt.subplots(figsize=(14, 4.5))
    ax.bar(np.arange(len(order)), counts[order], color="tab:blue", alpha=0.5, label="training clips (teacher pool)")
    ax.set_yscale("log")
    ax.set_ylabel("training clips (log)")
    ax2 = ax.twinx()
    ax2.plot(np.arange(len(order)), ap[order], "r_", ms=6, label="AP")
    ax2.set_ylabel("AP")
    ax2.grid(False)
    ax.set_xticks(np.arange(len(order)))
    ax.set_xticklabels(names[order], rotation=90, fontsize=4)
    ax.set_title('"big baseline": AP per class (sorted) with training clips')
    fig.tight_layout()
    return fig


def class_curves_figure(ap: np.ndarray, checkpoints, groups: dict, names, key: str):
    """Figs A.2 / A.3: per-class AP at each checkpoint for the best, medium and worst classes."""
    fig, axes = plt.subplots(1, 3, figsize=(14, 4), sharey=True)
    for ax, (g, idx) in zip(axes, groups.items()):
        for i in idx:
            ax.plot(checkpoints, ap[:, i], marker=".", label=names[i][:22])
        ax.set(xlabel="iteration", title=f"{key}: {g} 10 classes")
        ax.legend(fontsize=6)
    axes[0].set_ylabel("AP (eval)")
    fig.tight_layout()
    return fig


def class_roc_figure(labels: np.ndarray, probs: np.ndarray, names, key: str):
    """Figs A.4 / A.5: per-class ROC curves of the best, medium and worst classes by AP, with the micro average."""
    groups = ranked_classes(per_class_ap(labels, probs))
    micro = micro_curves(labels, probs)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4), sharey=True)
    for ax, (g, idx) in zip(axes, groups.items()):
        for i in idx:
            fpr, tpr, _ = roc_curve(labels[:, i], probs[:, i])
            ax.plot(fpr, tpr, lw=1, label=names[i][:22])
        ax.plot(micro["fpr"], micro["tpr"], "k--", lw=1.2, label="micro (all classes)")
        ax.plot([0, 1], [0, 1], ":", color="0.6")
        ax.set(xlabel="false-positive rate", title=f"{key}: {g} 10 classes (by AP)")
        ax.legend(fontsize=5)
    axes[0].set_ylabel("true-positive rate")
    fig.tight_layout()
    return fig
