"""Each thesis statement of Visca (2021) Figs 4.1-4.7 judged by a stated rule on this run's numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from ...data import DataSource
from ...reporting import verdicts
from .config import IDEA1_MEASURED, IDEA2, IDEA3, IDEA4, IDEA5, KRR


def _trend(summary: pd.DataFrame, idea: str, column: str) -> float:
    """Spearman correlation of the mean ``column`` with ε (the direction of the thesis's statements)."""
    s = summary[summary["idea"] == idea].sort_values("epsilon")
    if s[column].nunique() < 2:
        return 0.0
    return float(spearmanr(s["epsilon"], s[column]).statistic)


def at_epsilon(summary: pd.DataFrame, idea: str, epsilon: float, column: str) -> float:
    """The mean ``column`` of ``idea`` at the grid point nearest to ``epsilon`` (in log ε)."""
    s = summary[summary["idea"] == idea]
    row = s.iloc[int(np.argmin(np.abs(np.log(s["epsilon"].to_numpy()) - np.log(epsilon))))]
    return float(row[column])


def first_epsilon_reaching(summary: pd.DataFrame, idea: str, accuracy_level: float) -> float:
    """The smallest grid ε at which the mean accuracy reaches ``accuracy_level`` (inf if never)."""
    s = summary[(summary["idea"] == idea) & (summary["accuracy"] >= accuracy_level)]
    return float(s["epsilon"].min()) if len(s) else float("inf")


#: the thesis's highlighted ε (Fig 4.4 text) and the end of the range its statements are read on
THESIS_EPSILON_RANGE = 100.0


def _fig43_rule(summary: pd.DataFrame, control_accuracy: float, max_epsilon: float) -> tuple[bool, str]:
    s = summary[(summary["idea"] == IDEA1_MEASURED) & (summary["epsilon"] <= max_epsilon)]
    acc_tr, ham_tr = _trend(s, IDEA1_MEASURED, "accuracy"), _trend(s, IDEA1_MEASURED, "hamming")
    top = float(s["accuracy"].max())
    ok = acc_tr > 0 and ham_tr < 0 and top < control_accuracy - 0.01
    return ok, f"ε ≤ {max_epsilon:g}: trends accuracy {acc_tr:+.2f}, Hamming {ham_tr:+.2f}, max accuracy {top:.3f}"


def idea_verdicts(
    summary: pd.DataFrame,
    *,
    control_accuracy: float,
    highlighted_epsilon: float = THESIS_EPSILON_RANGE,
    length_test: pd.DataFrame | None = None,
) -> dict:
    """Each thesis statement of Figs 4.3-4.7 tested by a stated rule on this run's means (see ``rule``).

    Fig 4.3 is judged on ε ≤ ``highlighted_epsilon`` (the range the thesis discusses); the verdict on the whole grid
    is given in the reason, because past that range any per-symbol mechanism returns the original symbols.
    Fig 4.5's reason uses ``length_test`` (:func:`length_permutation_test`) when given. Fig 4.7 is not comparable:
    the thesis trains one model per ε, we vary only the release noise of one model trained at a fixed ε."""
    out = {}
    ok, detail = _fig43_rule(summary, control_accuracy, highlighted_epsilon)
    ok_all, detail_all = _fig43_rule(summary, control_accuracy, float(summary["epsilon"].max()))
    s1 = summary[summary["idea"] == IDEA1_MEASURED].sort_values("epsilon")
    shape = (
        f"shape: a step from {s1['accuracy'].iloc[0]:.3f} at ε = {s1['epsilon'].iloc[0]:g} to "
        f"{s1['accuracy'].iloc[-1]:.3f} at ε = {s1['epsilon'].iloc[-1]:g} (control {control_accuracy:.3f})"
    )
    rule = (
        f"on ε ≤ {highlighted_epsilon:g} (the thesis's range): Spearman(accuracy, ε) > 0, Spearman(Hamming, ε) < 0, "
        "and max accuracy below the control's by > 0.01; grid-dependent: the whole-grid result is in the reason"
    )
    holds = [e for e in sorted(s1["epsilon"].unique())[1:] if _fig43_rule(summary, control_accuracy, e)[0]]
    prefix = (
        f"the rule holds on ε ≤ {max(holds):g} and fails on wider grids"
        if holds and max(holds) < highlighted_epsilon
        else ""
    )
    grid_note = (
        f"; {detail}; whole grid: {'agrees' if ok_all else 'differs'} ({detail_all})"
        + (f"; grid-dependent: {prefix}" if prefix else "")
        + f"; {shape}"
    )
    out["visca2021-fig4.3"] = (
        verdicts.Verdict("agrees", rule, grid_note.lstrip("; "))
        if ok
        else verdicts.differs(
            f"at large ε the mechanism returns the original symbols, so accuracy reaches the control's{grid_note}",
            rule=rule,
        )
    )
    ham100 = at_epsilon(summary, IDEA2, highlighted_epsilon, "hamming")
    out["visca2021-fig4.4"] = verdicts.within_range(
        0.4,
        1.0,
        ham100,
        quantity=f"Hamming distance at ε = {highlighted_epsilon:g}",
        why_differs=f"ours {ham100:.3f}: at ε = {highlighted_epsilon:g} the EM is nearly the argmax, so the "
        "distance is the autoencoder's own reconstruction error, which depends on its (unstated) size and training",
    )
    acc3 = summary[summary["idea"] == IDEA3]["accuracy"]
    if length_test is not None and IDEA3 in length_test.index:
        orig = float(length_test.loc[IDEA3, ("mean", "original lengths")])
        perm = float(length_test.loc[IDEA3, ("mean", "permuted lengths")])
        krr = float(length_test.loc[KRR, ("mean", "original lengths")])
        cause = (
            f"at the smallest ε Idea 3 scores {orig:.3f} with the original lengths and {perm:.3f} with the lengths "
            f"permuted across test sequences; k-RR's near-random symbols at the original lengths score {krr:.3f}: "
            + (
                "the lift is carried by the released length, read through the decoder's typical content "
                "(random symbols at the same lengths carry none)"
                if perm < orig - 0.02
                else "permuting the lengths does not remove the lift, so it is not the length; cause not identified"
            )
        )
    else:
        cause = "length permutation test not run"
    out["visca2021-fig4.5"] = verdicts.within_range(
        0.45,
        0.55,
        float(acc3.max()),
        quantity="largest Idea 3 accuracy over the ε grid (paper: ≈ 0.50 throughout)",
        why_differs=f"ours {acc3.min():.3f}–{acc3.max():.3f}: above chance even where the latent is pure noise; "
        f"{cause}",
    )
    acc_tr, ham_tr = _trend(summary, IDEA4, "accuracy"), _trend(summary, IDEA4, "hamming")
    rule = "Spearman(accuracy, ε) < 0 and Spearman(Hamming, ε) < 0 (paper: both decrease)"
    out["visca2021-fig4.6"] = (
        verdicts.agrees(rule=rule)
        if acc_tr < 0 and ham_tr < 0
        else verdicts.differs(
            f"trends accuracy {acc_tr:+.2f}, Hamming {ham_tr:+.2f}: less noise on the probabilities gives the argmax "
            "back, so accuracy rises as the distance falls",
            rule=rule,
        )
    )
    acc_tr, ham_tr = _trend(summary, IDEA5, "accuracy"), _trend(summary, IDEA5, "hamming")
    out["visca2021-fig4.7"] = verdicts.not_comparable(
        "the thesis reads as one model trained per ε; we train one model at a fixed ε (idea5_train_epsilon) and vary "
        f"only the release noise (trends over the release ε: accuracy {acc_tr:+.2f}, Hamming {ham_tr:+.2f})",
        rule="same mechanism varied along the x-axis (training noise and release noise together)",
    )
    return out


def control_verdict(control_accuracy: float, unseen: dict, duplication_stats: dict, paper: float = 0.97):
    """Control accuracy vs the thesis's ≈ 0.97 (|ours − paper| ≤ 0.02); the reason reports the control on the test
    sequences absent from the train split, which tests whether duplicates carry the difference."""
    share = duplication_stats["test_share_seen_in_train"]
    return verdicts.within_tolerance(
        paper,
        control_accuracy,
        atol=0.02,
        quantity="control accuracy",
        why_differs=(
            f"ours {control_accuracy:.3f}; {share:.0%} of our test sequences occur verbatim in the training split. "
            f"On the {unseen['unseen_sequences']} unseen ones the control scores {unseen['unseen_accuracy']:.3f} "
            f"({unseen['unseen_abnormal_share']:.0%} abnormal), on the seen ones {unseen['seen_accuracy']:.3f}: "
            + (
                "duplicates do not explain the difference (unseen sequences score as high); the thesis's split "
                "and model are unstated"
                if unseen["unseen_accuracy"] > paper + 0.02
                else "the unseen sequences score near the thesis's value, so duplication is a sufficient explanation"
            )
        ),
    )


def listing_verdict(listing: pd.DataFrame, source: DataSource):
    """Figs 4.1/4.2: agrees when every published line is the file row at the located block (not comparable on
    the synthetic stand-in)."""
    if source.kind != "real":
        return verdicts.not_comparable(
            "the synthetic stand-in does not contain the thesis's sequences", rule="data differ"
        )
    rule = "every published line equals the file row at the best-matching block offset"
    if bool(listing["exact"].all()):
        return verdicts.agrees(rule=rule)
    bad = listing[~listing["exact"]]
    return verdicts.differs(
        "lines "
        + ", ".join(map(str, bad["line"]))
        + " differ from file rows "
        + ", ".join(map(str, bad["file_row"]))
        + " by token edit distances "
        + ", ".join(map(str, bad["token_edit_distance"]))
        + "; the surrounding lines match row for "
        "row. Searched: every block offset of this file, and every occurrence of each published line "
        "in this file and in the other file (normal/abnormal). Not searched: hdfs_test_normal and "
        "other preprocessings of the HDFS log. A transcription slip is the likeliest reading, "
        "not a tested one",
        rule=rule,
    )
