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

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.learning import metrics
from pate_study.learning.partitions import Partitions
from pate_study.learning.training import teacher_seeds
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim, judge

from .release import noise_free_release
from .teachers import TeacherSpec, train_teachers
from .verdict_rules import direction, seed_tolerance
from .votes import CachedVotes, vote_fractions

#: the scores :func:`seed_summary` averages over seeds (with sd, min and max beside).
STUDENT_SCORES = ("map", "macro_f1", "micro_f1")


def rate_matched_thresholds(train_scores: np.ndarray, released: np.ndarray) -> np.ndarray:
    """Per-class decision thresholds ``[C]``: class c is predicted (score > θ_c) on the student's training pool as
    often as the release labelled it there, θ_c = the (1 − r_c) quantile of the training scores of class c with
    r_c the released label rate (classes never released: θ_c = +inf, never predicted). Reads no true label."""
    s = np.asarray(train_scores, dtype=np.float64)
    r = np.asarray(released, dtype=bool)
    if s.ndim != 2 or s.shape != r.shape:
        raise ValueError(f"train_scores {s.shape} and released {r.shape}: expected two equal [n, C] shapes")
    rate = r.mean(0)
    th = np.array([np.quantile(s[:, c], 1.0 - rate[c], method="higher") for c in range(s.shape[1])])
    return np.where(rate > 0, th, np.inf)


def student_training_seeds(seeds: Sequence[int]) -> np.ndarray:
    """``[len(seeds), 3]``: the (init, shuffle, dropout) seeds of a student trained alone with each seed
    (:func:`pate_study.learning.training.teacher_seeds` of that seed, first teacher), stacked."""
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
        train_scores, test_scores = scores[: tr.size], scores[tr.size :]
        th = rate_matched_thresholds(train_scores, released[tr])
        r = metrics.multilabel_report(y_test, test_scores > th, test_scores)
        rows.append(
            {
                "map": r["mAP"],
                "macro_f1": r["macro_f1"],
                "micro_f1": r["micro_f1"],
                "n_train": int(tr.size),
                "labels_per_query": float(released[tr].sum(1).mean()),
                "steps": int(spec.steps),
                "seed": int(seed),
                **({} if boot_rows is None else {"map_boot": bootstrap_map(y_test, test_scores, boot_rows)}),
            }
        )
    return rows


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

    This is a selection on test results among private releases (:data:`.release.FRONTIER_SELECTION`): the row's
    own ε is not the privacy of publishing it as "the best"; that is
    :func:`.release.frontier_selection_privacy` (the composition of every candidate within the budget)."""
    ok = frontier[frontier["epsilon"] <= epsilon_max]
    if ok.empty:
        return {}
    row = ok.loc[ok["map"].idxmax()]
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}


#: :func:`target_verdict`'s words for the verdicts of :func:`.verdict_rules.direction`.
TARGET_WORDS = {"agrees": "met", "differs": "not met", "inconclusive": "inconclusive", "not comparable": "inconclusive"}


def target_verdict(mean: float, sd: float, n_seeds: int, target: float) -> tuple[str, float]:
    """("met" | "inconclusive" | "not met", tolerance): a seed mean against a fixed target, decided by
    :func:`.verdict_rules.direction` with the tolerance of :func:`.verdict_rules.seed_tolerance` (twice the standard
    error of the mean); inside it, *inconclusive*."""
    tol = seed_tolerance(sd, n_seeds)
    v = direction(mean - target, tol, rule=f"student mAP > {target:g}", reason=f"mean {mean:.4f}")
    return TARGET_WORDS[v.verdict], tol


#: The random sources the target's students replicate: release-noise draws of each candidate release and student
#: seeds per draw (the teachers are one ensemble; the test set is resampled).
TARGET_SOURCES = (unc.RELEASE_NOISE, unc.STUDENT_SEED)

#: The settings that name a candidate release of the frontier.
TARGET_KEYS = ("mechanism", "sigma_e", "k", "th_e")

#: Where the target's settings come from, said beside the verdict.
TARGET_PROVENANCE = (
    "the candidate settings (the frontier's grid), the student recipe and its schedule were taken from earlier runs "
    "on the same votes; the best candidate is chosen by mean test mAP, a choice charged in epsilon (the composition "
    "of every candidate within the budget) but not corrected for in the winner's interval"
)


def target_claim(target_map: float = 0.13, epsilon_max: float = 300.0, delta: float = 1e-8) -> Claim:
    """This study's stated target, fixed before any result: a student of mean test mAP ≥ ``target_map`` from a
    release with a sound ε ≤ ``epsilon_max`` at δ (a direction claim on the mean over release draws × seeds)."""
    return Claim(
        "student target",
        f"this study's target: student mAP >= {target_map:g} at a sound epsilon <= {epsilon_max:g}, delta = {delta:g}",
        "mean test mAP over release draws x student seeds of the best candidate release",
        "direction",
        TARGET_SOURCES,
        boundary=float(target_map),
    )


def target_estimates(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per candidate release (:data:`TARGET_KEYS`) of :func:`.pipeline.frontier_target_students`'s rows (one
    per release draw and student seed, each with ``map`` and ``map_boot``): the seeds of a draw are averaged (they
    share the draw), and the mean over the ``R`` draw means gets the interval of
    :func:`pate_study.reporting.uncertainty.combined_interval` (t over the draws, which carries the seed spread too;
    percentile bootstrap of the test rows every student is scored on). Columns: the keys, ``epsilon``, ``map``,
    ``map_low``, ``map_high``, ``n_draws``, ``n_seeds``, ``estimate`` (the :class:`~.uncertainty.Estimate`)."""
    keys = list(TARGET_KEYS)
    out = []
    for key, g in rows.groupby(keys, sort=False):
        per_draw = g.groupby("release_draw", sort=True)
        means = per_draw["map"].mean().to_numpy(float)
        if "map_boot" in g:
            boot = np.stack([np.mean(np.stack(d["map_boot"].to_list()), axis=0) for _, d in per_draw], axis=1)
            est = unc.combined_interval(means, boot, TARGET_SOURCES, unreplicated=[unc.TEACHER_SEED])
        else:
            est = unc.t_interval(means, TARGET_SOURCES, unreplicated=[unc.TEACHER_SEED, unc.TEST_SET])
        out.append(
            {
                **dict(zip(keys, key)),
                "epsilon": float(g["epsilon"].iloc[0]),
                "map": est.value,
                "map_low": est.low,
                "map_high": est.high,
                "n_draws": int(g["release_draw"].nunique()),
                "n_seeds": int(g["seed"].nunique()),
                "estimate": est,
            }
        )
    return pd.DataFrame(out)


def _candidate_name(row: Any) -> str:
    return f"{row['mechanism']} σ_e {row['sigma_e']:g}" + (f" k {int(row['k'])}" if row["k"] else "")


def replicated_target(
    target_rows: pd.DataFrame, *, target_map: float, epsilon_max: float, delta: float = 1e-8
) -> dict[str, Any]:
    """The target judged on :func:`target_estimates`: the best candidate by mean mAP, its estimate judged by
    :func:`target_claim` (met / not met only when the whole interval is above / below ``target_map``, else
    inconclusive), every candidate's estimate rendered, and where the settings came from."""
    est = target_estimates(target_rows)
    best = est.loc[est["map"].idxmax()]
    claim = target_claim(target_map, epsilon_max, delta)
    v = judge(claim, best["estimate"])
    return {
        "target_estimate": best["estimate"].render(),
        "target_map_low": float(best["map_low"]),
        "target_map_high": float(best["map_high"]),
        "target_release_draws": int(best["n_draws"]),
        "target_student_seeds": int(best["n_seeds"]),
        "target_rule": v.rule,
        "target_provenance": TARGET_PROVENANCE,
        "target_candidates": {
            _candidate_name(r): f"{TARGET_WORDS[judge(claim, r['estimate']).verdict]}: {r['estimate'].render()} "
            f"at ε {r['epsilon']:.4g}"
            for _, r in est.sort_values("map", ascending=False).iterrows()
        },
        "_best": best,
        "_verdict": TARGET_WORDS[v.verdict],
    }


def frontier_targets(
    frontier: pd.DataFrame,
    table54: pd.DataFrame,
    *,
    epsilon_max: float = 300.0,
    target_map: float = 0.13,
    selection: dict | None = None,
    target_rows: pd.DataFrame | None = None,
) -> dict:
    """The recorded targets: the best student (mean over seeds) at a data-independent ε ≤ ``epsilon_max`` on the
    frontier and whether it exceeds ``target_map`` beyond its seed spread (:func:`target_verdict`; a stated target,
    never a tuning goal), every release within the budget that is not clearly below the target with its own verdict
    (``target_candidates``), and beside them the best student at the thesis's own settings (Table 5.4's rows, σ_e 0.3,
    σ_c 0.6) with its ε. ``selection``: the privacy of the choice of the best
    (:func:`.release.frontier_selection_privacy` at the same ``epsilon_max``), merged into the result; then
    ``best_epsilon_selection_charged`` is the ε of publishing the best as the best (the composition of the
    candidates within the budget) and ``selection_charged_within_budget`` whether that is still ≤ ``epsilon_max``.
    The target is stated at a sound ε ≤ ``epsilon_max``: when the charged choice exceeds it, ``target_verdict`` is
    "not met" whatever the mAP, and ``target_map_verdict_if_fixed_in_advance`` keeps the mAP's verdict (what it
    would be had that one release been fixed before any result was seen).

    ``target_rows`` (:func:`.pipeline.frontier_target_students`: the candidates within the budget over release
    draws × student seeds, with test-set resamples): the target is judged on them instead (:func:`replicated_target`;
    ``best_*`` then describe the best candidate's mean over draws × seeds, ``target_tolerance`` is NaN and the
    interval is in ``target_estimate``)."""
    best = best_within(frontier, epsilon_max)
    thesis = table54.loc[table54["map"].idxmax()]
    verdict, tol = (
        target_verdict(best["map"], best["map_sd"], best["n_seeds"], target_map) if best else ("not met", np.nan)
    )
    candidates = {}
    for _, row in frontier[frontier["epsilon"] <= epsilon_max].sort_values("map", ascending=False).iterrows():
        v, t = target_verdict(row["map"], row["map_sd"], row["n_seeds"], target_map)
        if v != "not met":
            candidates[_candidate_name(row)] = f"{v}: {row['map']:.4f} ± {t:.4f} at ε {row['epsilon']:.4g}"
    replicated: dict[str, Any] = {}
    if target_rows is not None and not target_rows.empty and best:
        replicated = replicated_target(target_rows, target_map=target_map, epsilon_max=epsilon_max)
        top = replicated.pop("_best")
        verdict, tol, candidates = replicated.pop("_verdict"), math.nan, replicated.pop("target_candidates")
        best = {**best, **{k: top[k] for k in TARGET_KEYS}, "epsilon": top["epsilon"], "map": top["map"]}
        best.update(map_sd=math.nan, map_min=math.nan, n_seeds=int(top["n_seeds"]))
    map_verdict = verdict
    charge = _selection_charge(selection, epsilon_max)
    if charge and not charge["selection_charged_within_budget"]:
        verdict = "not met"  # the best release, published as the best, costs more than the budget
    return {
        "epsilon_max": epsilon_max,
        "target_map": target_map,
        "best_mechanism": best.get("mechanism"),
        "best_sigma_e": best.get("sigma_e"),
        "best_k": best.get("k"),
        "best_th_e": best.get("th_e"),
        "best_epsilon": best.get("epsilon"),
        "best_map_mean": best.get("map"),
        "best_map_sd": best.get("map_sd"),
        "best_map_min": best.get("map_min"),
        "best_n_seeds": best.get("n_seeds"),
        "target_verdict": verdict,
        "target_map_verdict_if_fixed_in_advance": map_verdict,
        "target_tolerance": tol,
        "target_met": verdict == "met",
        "target_candidates": candidates,
        "thesis_settings_best_map_mean": float(thesis["map"]),
        "thesis_settings_best_map_sd": float(thesis["map_sd"]),
        "thesis_settings_best_epsilon_data_dependent": float(thesis["eps_data_dependent"]),
        "thesis_settings_best_epsilon_data_independent": float(thesis["eps_data_independent"]),
        "thesis_settings_best_row": f"n={thesis['n_samples']}, th_e={thesis['th_e']}, th_c={thesis['th_c']}",
        **replicated,
        **charge,
    }


def _selection_charge(selection: dict | None, epsilon_max: float) -> dict:
    """The selection's privacy fields for :func:`frontier_targets` (none without ``selection``)."""
    if selection is None:
        return {}
    if selection.get("selection_epsilon_max") != float(epsilon_max):
        raise ValueError(
            f"selection: computed at epsilon_max={selection.get('selection_epsilon_max')!r}, "
            f"expected the targets' epsilon_max={epsilon_max!r}"
        )
    charged = selection["selection_within_epsilon"]
    return {
        **selection,
        "best_epsilon_selection_charged": charged,
        "best_epsilon_selection_charged_exact_gaussian": selection["selection_within_epsilon_exact_gaussian"],
        "selection_charged_within_budget": bool(charged <= epsilon_max),
    }


def frontier_findings(frontier: pd.DataFrame, targets: dict) -> list[str]:
    """Where each mechanism wins on the frontier (seed means; a lead inside :func:`.verdict_rules.seed_tolerance` of
    the two best is called a tie), and the targets, as sentences."""
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
    if "best_epsilon_selection_charged" in targets and targets.get("best_mechanism") is not None:
        lines.append(
            f"Selection charged: publishing the best of the {targets['selection_within_n_candidates']} "
            f"candidate releases within ε ≤ {targets['epsilon_max']:g} (chosen by test mAP) costs ε "
            f"{targets['best_epsilon_selection_charged']:.4g} (RDP, composition; exact Gaussian "
            f"{targets['best_epsilon_selection_charged_exact_gaussian']:.4g}), all "
            f"{targets['selection_all_n_candidates']} candidates {targets['selection_all_epsilon']:.5g} "
            f"(exact Gaussian {targets['selection_all_epsilon_exact_gaussian']:.5g}), δ "
            f"{targets['selection_delta']:g}: "
            + ("still within" if targets["selection_charged_within_budget"] else "above")
            + " the budget."
        )
    if targets.get("best_mechanism") is None:
        lines.append(f"Target: no frontier release reaches ε ≤ {targets['epsilon_max']:g}.")
    else:
        lines.append(
            f"Target (student mean mAP > {targets['target_map']:g} at ε ≤ {targets['epsilon_max']:g}, δ 1e-8): "
            f"{targets['target_verdict']}"
            + (
                " (the choice of the best, charged, costs more than the budget; had this release been fixed in "
                f"advance: {targets['target_map_verdict_if_fixed_in_advance']})"
                if targets.get("selection_charged_within_budget") is False
                else ""
            )
            + (
                f", best {targets['best_mechanism']} at ε {targets['best_epsilon']:.4g}: "
                f"{targets['target_estimate']} ({targets['target_provenance']}); at the "
                if "target_estimate" in targets
                else f", best {targets['best_map_mean']:.3f} ± "
                f"{targets['best_map_sd']:.3f} sd ({targets['best_mechanism']}, ε {targets['best_epsilon']:.4g}; "
                f"tolerance ±{targets['target_tolerance']:.4f}); at the "
            )
            + f"thesis's settings the best student reaches {targets['thesis_settings_best_map_mean']:.3f} ± "
            f"{targets['thesis_settings_best_map_sd']:.3f} ({targets['thesis_settings_best_row']}, ε data-"
            f"independent {targets['thesis_settings_best_epsilon_data_independent']:.4g})."
        )
    return lines


def sigma_sweep_record(sweep: pd.DataFrame, item: str) -> dict[str, list]:
    """The σ sweep of one of Figs 5.17-5.19 (rows of ``sweep`` whose ``item`` is ``item``) as recorded lists:
    σ_e, σ_c, ε (data-dependent realised, data-independent) and the students' mean mAP and its sd over seeds."""
    rows = sweep[sweep["item"] == item]
    return rows[["sigma_e", "sigma_c", "eps_data_dependent", "eps_data_independent", "map", "map_sd"]].to_dict("list")
