"""Audio Set students (Muschiol 2021 §5.4, Table 5.4, Figs 5.17-5.19): trained on the released labels of the
answered pool queries, scored on the test set only.

Students get the teachers' recipe (the thesis, §5.4: "The best parameters evaluated for the training of an
individual teacher were transferred to the training of the student models") on a **fixed schedule**: one
:func:`.teachers.train_teachers` call with ``last=True`` on every answered pool query with its **released** label,
the parameters after the last step kept. No checkpoint is selected on released labels: a validation split of noisy
labels scored as truth picks whichever early step the noise favours (it picked step 50-100 of 1,200 in 7 of Table
5.4's 18 rows), so the reported mAP would measure selection noise, not the release.

Decision threshold (macro/micro F1): per class, the threshold at which the student predicts on its own training
pool the class as often as the release labelled it there (:func:`rate_matched_thresholds`). It reads only the
student's training inputs and the released labels (what a student may see), never a true label; a fixed ½ gives
F1 ≈ 0 when the released label rate is small.

Seeds: every point is trained with each seed of ``seeds`` (model initialisation, batches, mixup), the seeds of one
release in ONE stacked call (student ``s`` gets the training seeds a student trained alone with seed ``s`` gets;
the stacked computation is deterministic but not bitwise that of a student alone, so a student's numbers depend on
its seed and on the seed list it trains with); the table reports the mean and the spread over seeds
(:func:`seed_summary`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.release import noise_free_release
from pate_study.experiments.audioset.teachers import TeacherSpec, train_teachers
from pate_study.experiments.audioset.verdict_rules import seed_tolerance
from pate_study.experiments.audioset.votes import CachedVotes, vote_fractions
from pate_study.learning import metrics
from pate_study.learning.partitions import Partitions
from pate_study.learning.semisupervised import rate_matched_thresholds
from pate_study.learning.train_config import teacher_seeds

#: the scores :func:`seed_summary` averages over seeds (with sd, min and max beside).
STUDENT_SCORES = ("map", "macro_f1", "micro_f1")


def student_training_seeds(seeds: Sequence[int]) -> np.ndarray:
    """``[len(seeds), 3]``: the (init, shuffle, dropout) seeds of a student trained alone with each seed
    (:func:`pate_study.learning.train_config.teacher_seeds` of that seed, first teacher), stacked."""
    if len(seeds) < 1:
        raise ValueError("seeds: expected at least one student seed")
    return np.concatenate([teacher_seeds(int(s), 1) for s in seeds])


def train_student(
    x_pool: np.ndarray,
    labels: np.ndarray,
    answered: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    spec: TeacherSpec,
    *,
    seeds: Sequence[int] = (0,),
    name: str = "student",
    boot_rows: np.ndarray | None = None,
) -> list[dict]:
    """One student per seed of ``seeds`` with the teachers' recipe on every answered query's released ``labels``,
    trained for ``spec.steps`` steps in one stacked call and kept at the last step (no selection); per seed, test
    mAP, and macro/micro F1 at the :func:`rate_matched_thresholds` of its own training pool. With ``boot_rows``
    (``[B, n_test]`` resamples of the test rows, :func:`pate_study.reporting.uncertainty.bootstrap_rows`) each row
    also holds ``map_boot`` ``[B]``, the mAP on every resample (:func:`bootstrap_map`)."""
    tr = np.flatnonzero(np.asarray(answered, dtype=bool))
    if tr.size < 10:
        raise ValueError(f"answered: only {tr.size} answered queries; a student needs at least 10")
    released = np.asarray(labels, dtype=bool)
    x_pool = np.asarray(x_pool, dtype=np.float32)
    # scored on its own training pool (for the thresholds) and on the test set, in one pass
    x_scored = np.concatenate([x_pool[tr], np.asarray(x_test, dtype=np.float32)])
    y_scored = np.concatenate([released[tr], np.asarray(y_test, dtype=bool)])
    run = train_teachers(
        x_pool,
        released,
        Partitions(np.tile(tr, (len(seeds), 1))),
        tr[:1],
        x_scored,
        y_scored,
        spec,
        curve_clips=1,
        name=name,
        last=True,
        train_seeds=student_training_seeds(seeds),
    )
    rows = []
    for seed, probabilities in zip(seeds, run.probabilities):
        scores = probabilities.astype(np.float64)
        rows.append(student_row(scores[: tr.size], released[tr], scores[tr.size :], y_test, spec, seed, boot_rows))
    return rows


def student_row(
    train_scores: np.ndarray,
    released_train: np.ndarray,
    test_scores: np.ndarray,
    y_test: np.ndarray,
    spec: TeacherSpec,
    seed: int,
    boot_rows: np.ndarray | None = None,
) -> dict[str, Any]:
    """One trained student's row: its test scores thresholded per class at the rate of the labels it was trained
    on (:func:`rate_matched_thresholds`), its mAP, macro and micro F1, training size, labels per query, steps and
    seed, and with ``boot_rows`` its mAP on those bootstrap resamples of the test rows (:func:`bootstrap_map`)."""
    th = rate_matched_thresholds(train_scores, released_train)
    r = metrics.multilabel_report(y_test, test_scores > th, test_scores)
    return {
        "map": r["mAP"],
        "macro_f1": r["macro_f1"],
        "micro_f1": r["micro_f1"],
        "n_train": int(released_train.shape[0]),
        "labels_per_query": float(released_train.sum(1).mean()),
        "steps": int(spec.steps),
        "seed": int(seed),
        **({} if boot_rows is None else {"map_boot": bootstrap_map(y_test, test_scores, boot_rows)}),
    }


def bootstrap_map(y_test: np.ndarray, scores: np.ndarray, rows: np.ndarray, chunk: int = 10) -> np.ndarray:
    """mAP (:func:`pate_study.learning.metrics.mean_average_precision`: mean AP over the classes with a positive) of
    ``scores`` on every resample of the test rows ``rows`` ``[B, n]``: ``[B]``, ``chunk`` resamples at a time
    through the stacked :func:`pate_study.learning.metrics.average_precision_per_class`."""
    y, sc = np.asarray(y_test, bool), np.asarray(scores, np.float64)
    out = []
    for start in range(0, len(rows), int(chunk)):
        r = rows[start : start + int(chunk)]
        ap = metrics.average_precision_per_class(y[r], sc[r])
        finite = np.isfinite(ap)
        out.append(
            np.where(finite.any(-1), np.nansum(np.where(finite, ap, 0.0), -1) / np.maximum(finite.sum(-1), 1), np.nan)
        )
    return np.concatenate(out) if out else np.zeros(0)


def seed_summary(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """One row per ``keys`` (in first-seen order) from one row per (keys, seed): every other column's first value
    (the release's privacy is the same for every student seed), the mean of :data:`STUDENT_SCORES` and beside
    ``map`` its sd (ddof 1), min, max and the number of seeds."""
    if "seed" not in rows:
        raise ValueError("rows: expected a 'seed' column (one row per student seed)")
    keys = list(keys)
    g = rows.groupby(keys, sort=False, dropna=False)
    out = g.first().drop(columns=["seed"])
    for c in STUDENT_SCORES:
        out[c] = g[c].mean()
    out["map_sd"], out["map_min"], out["map_max"] = g["map"].std(ddof=1), g["map"].min(), g["map"].max()
    out["n_seeds"] = g["seed"].nunique()
    return out.reset_index()


def student_diagnostics(
    cv: CachedVotes, x_pool: np.ndarray, x_test: np.ndarray, n: int, threshold: Any, spec: TeacherSpec, *, seed: int = 0
) -> list[dict]:
    """Why are the students weak? The same student on the first ``n`` pool queries with (i) their true labels
    (non-private; the ceiling of this recipe and n), (ii) the noise-free aggregate's labels at ``threshold``
    (σ = 0: what noise costs), beside the released labels' label density in the rows of Table 5.4."""
    m = vote_fractions(cv.pool_probabilities[:, :n])
    rows = []
    for what, labels in (
        ("true pool labels (non-private)", cv.pool_labels[:n]),
        (f"noise-free {cv.n_teachers}-teacher labels, th_e={threshold}", noise_free_release(m, threshold)),
    ):
        s = train_student(x_pool[:n], labels, np.ones(n, bool), x_test, cv.test_labels, spec, seeds=(seed,), name=what)[
            0
        ]
        rows.append({"student_labels": what, "n_samples": n, **s})
    return rows


def reference_rows(
    single: CachedVotes, aggregate: CachedVotes, threshold_single: Any, threshold_aggregate: Any
) -> list[dict]:
    """Beside Table 5.4: the single model on all data, the non-private aggregate of the ensemble (averaged
    probabilities; F1 at the threshold Table 5.1 selected on the pool) and the class-prior baseline
    (scores = the teachers' training label frequencies; F1 at ½), all on the test set."""
    rows = []
    for name, cv, th in (
        ("single model, all data (non-private)", single, threshold_single),
        (f"{aggregate.n_teachers}-teacher aggregate, no noise (non-private)", aggregate, threshold_aggregate),
    ):
        m = cv.test_probabilities.mean(0)
        r = metrics.multilabel_report(cv.test_labels, noise_free_release(m, th), m)
        rows.append({"reference": name, "map": r["mAP"], "macro_f1": r["macro_f1"], "micro_f1": r["micro_f1"]})
    y = aggregate.test_labels
    prior = np.broadcast_to(aggregate.train_label_rate, y.shape).astype(float)
    r = metrics.multilabel_report(y, prior >= 0.5, prior)
    rows.append(
        {
            "reference": "class prior (training label frequencies)",
            "map": r["mAP"],
            "macro_f1": r["macro_f1"],
            "micro_f1": r["micro_f1"],
        }
    )
    return rows


def best_within(frontier: pd.DataFrame, epsilon_max: float) -> dict:
    """The frontier row (seed means, :func:`seed_summary`) with the highest mean student mAP at ε ≤ ``epsilon_max``
    (an empty dict when none qualifies), as plain values.

    This is a selection on test results among private releases (:data:`.release_frontier.FRONTIER_SELECTION`): the row's
    own ε is not the privacy of publishing it as "the best"; that is
    :func:`.release_frontier.frontier_selection_privacy` (the composition of every candidate within the budget). The
    study's target is judged by the pre-registered procedure of :mod:`.target`, not by this choice."""
    ok = frontier[frontier["epsilon"] <= epsilon_max]
    if ok.empty:
        return {}
    row = ok.loc[ok["map"].idxmax()]
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}


def frontier_summary(
    frontier: pd.DataFrame, table54: pd.DataFrame, *, epsilon_max: float = 300.0, selection: dict | None = None
) -> dict:
    """The frontier's record beside the target (:mod:`.target` judges the target): the best student (mean over
    seeds, on the former test set) at a data-independent ε ≤ ``epsilon_max`` (:func:`best_within`), what choosing
    it costs when charged (``selection``: :func:`.release_frontier.frontier_selection_privacy` at the same
    ``epsilon_max``; ``best_epsilon_selection_charged`` and whether it stays within the budget) and the best student at
    the thesis's own settings (Table 5.4's rows, σ_e 0.3, σ_c 0.6) with its ε, for contrast."""
    best = best_within(frontier, epsilon_max)
    thesis = table54.loc[table54["map"].idxmax()]
    return {
        "epsilon_max": epsilon_max,
        "best_mechanism": best.get("mechanism"),
        "best_sigma_e": best.get("sigma_e"),
        "best_k": best.get("k"),
        "best_th_e": best.get("th_e"),
        "best_epsilon": best.get("epsilon"),
        "best_map_mean": best.get("map"),
        "best_map_sd": best.get("map_sd"),
        "best_n_seeds": best.get("n_seeds"),
        "thesis_settings_best_map_mean": float(thesis["map"]),
        "thesis_settings_best_map_sd": float(thesis["map_sd"]),
        "thesis_settings_best_epsilon_data_dependent": float(thesis["eps_data_dependent"]),
        "thesis_settings_best_epsilon_data_independent": float(thesis["eps_data_independent"]),
        "thesis_settings_best_row": f"n={thesis['n_samples']}, th_e={thesis['th_e']}, th_c={thesis['th_c']}",
        **_selection_charge(selection, epsilon_max),
    }


def _selection_charge(selection: dict | None, epsilon_max: float) -> dict:
    """The selection's privacy fields for :func:`frontier_summary` (none without ``selection``)."""
    if selection is None:
        return {}
    if selection.get("selection_epsilon_max") != float(epsilon_max):
        raise ValueError(
            f"selection: computed at epsilon_max={selection.get('selection_epsilon_max')!r}, "
            f"expected the summary's epsilon_max={epsilon_max!r}"
        )
    charged = selection["selection_within_epsilon"]
    return {
        **selection,
        "best_epsilon_selection_charged": charged,
        "best_epsilon_selection_charged_exact_gaussian": selection["selection_within_epsilon_exact_gaussian"],
        "selection_charged_within_budget": bool(charged <= epsilon_max),
    }


def frontier_findings(frontier: pd.DataFrame, summary: dict) -> list[str]:
    """Where each mechanism wins on the frontier (seed means; a lead inside :func:`.verdict_rules.seed_tolerance` of
    the two best is called a tie), what choosing its best release costs, and the thesis's settings, as sentences."""
    lines = []
    for mech, g in frontier.groupby("mechanism", sort=False):
        b = g.loc[g["map"].idxmax()]
        lines.append(
            f"{mech}: best student mAP {b['map']:.3f} ± {b['map_sd']:.3f} (sd over {int(b['n_seeds'])} seeds) "
            f"at ε {b['epsilon']:.4g} (σ_e {b['sigma_e']:g}"
            + (f", k {int(b['k'])}" if b["k"] else "")
            + f", th_e {b['th_e']:g}); labels released per query {b['released_per_query']:.2f}."
        )
    f = frontier.sort_values("epsilon")
    for lo, hi in ((0, 300), (300, 1000), (1000, 1e4), (1e4, np.inf)):
        band = f[(f["epsilon"] > lo) & (f["epsilon"] <= hi)]
        if band.empty:
            continue
        top = band.sort_values("map", ascending=False)
        first = top.iloc[0]
        tie = ""
        if len(top) > 1 and top.iloc[0]["mechanism"] != top.iloc[1]["mechanism"]:
            second = top[top["mechanism"] != first["mechanism"]].iloc[0]
            if first["map"] - second["map"] <= seed_tolerance(
                first["map_sd"], first["n_seeds"], second["map_sd"], second["n_seeds"]
            ):
                tie = f" (tied with {second['mechanism']} {second['map']:.3f} within the seed spread)"
        lines.append(f"ε in ({lo:g}, {hi:g}]: {first['mechanism']} wins with student mAP {first['map']:.3f}{tie}.")
    if "best_epsilon_selection_charged" in summary and summary.get("best_mechanism") is not None:
        lines.append(
            f"Choosing the best of the {summary['selection_within_n_candidates']} frontier releases within ε ≤ "
            f"{summary['epsilon_max']:g} by its students' test mAP ({summary['best_mechanism']}, "
            f"{summary['best_map_mean']:.3f} at its own ε {summary['best_epsilon']:.4g}) costs ε "
            f"{summary['best_epsilon_selection_charged']:.4g} (RDP, composition; exact Gaussian "
            f"{summary['best_epsilon_selection_charged_exact_gaussian']:.4g}), all "
            f"{summary['selection_all_n_candidates']} candidates {summary['selection_all_epsilon']:.5g} "
            f"(exact Gaussian {summary['selection_all_epsilon_exact_gaussian']:.5g}), "
            f"δ {summary['selection_delta']:g}: "
            + ("within" if summary["selection_charged_within_budget"] else "above")
            + " the budget; the study's target is judged by the pre-registered procedure instead "
            "(pate_study-audioset-target)."
        )
    lines.append(
        f"At the thesis's settings the best student reaches {summary['thesis_settings_best_map_mean']:.3f} ± "
        f"{summary['thesis_settings_best_map_sd']:.3f} ({summary['thesis_settings_best_row']}, ε data-independent "
        f"{summary['thesis_settings_best_epsilon_data_independent']:.4g})."
    )
    return lines


def sigma_sweep_record(sweep: pd.DataFrame, item: str) -> dict[str, list]:
    """The σ sweep of one of Figs 5.17-5.19 (rows of ``sweep`` whose ``item`` is ``item``) as recorded lists:
    σ_e, σ_c, ε (data-dependent realised, data-independent) and the students' mean mAP and its sd over seeds."""
    rows = sweep[sweep["item"] == item]
    return rows[["sigma_e", "sigma_c", "eps_data_dependent", "eps_data_independent", "map", "map_sd"]].to_dict("list")
