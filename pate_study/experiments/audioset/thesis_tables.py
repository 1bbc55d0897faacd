"""Muschiol 2021's tables for our data, ours beside the thesis's printed values: Table 4.1 (data sets), Tables
5.1-5.3 and A.1-A.3 (noise-free ensembles on the query pool) and Fig A.6's prediction counts.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.data import audioset
from pate_study.experiments.audioset.data import TEACHER_COUNTS, pool_split
from pate_study.experiments.audioset.diagnostics import curve_stats
from pate_study.experiments.audioset.release import (
    CONFIDENCE_LEVELS,
    THRESHOLDS,
    noise_free_confident,
    noise_free_release,
    pool_weights,
    prf,
    threshold_label,
)
from pate_study.experiments.audioset.teacher_claims.models import table_4_1_verdict
from pate_study.experiments.audioset.votes import CachedVotes, vote_fractions
from pate_study.learning import metrics
from pate_study.reporting.registry import published


def _row_label(subset: str, n_teachers: int) -> str:
    return "baseline" if n_teachers == 1 else f"{subset} {n_teachers}"


def table_4_1(
    datasets: dict[str, audioset.AudioSetEmbeddings],
    *,
    teacher_counts=TEACHER_COUNTS,
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
    seed: int = 0,
) -> pd.DataFrame:
    """Muschiol Table 4.1 for our data: per subset and teacher count, overall size (bal_train clips
    of the subset), class number, teacher pool, per-teacher partition (floor of pool / T), student
    pool (without the validation clips), validation and test size (eval clips of the subset), with
    the thesis' printed numbers beside (merged cells = same as baseline) and a verdict per row."""
    thesis = {(r["block"], r["data_set"]): r for r in published("muschiol2021-table4.1")["rows"]}
    rows = []
    for subset, ds in datasets.items():
        n = len(ds.splits["bal_train"].labels)
        split = pool_split(n, student_fraction=student_fraction, val_fraction=val_fraction, seed=seed)
        base = thesis[(subset, "baseline")]
        for t in teacher_counts:
            label = _row_label(subset, t)
            printed = thesis.get((subset, label), {})
            paper = {
                k: (printed.get(k) if printed.get(k) is not None else base[k])
                for k in base
                if k not in ("block", "data_set")
            }
            ours = {
                "overall_size": n,
                "class_number": len(ds.class_names),
                "overall_teacher_train": len(split.teacher),
                "individual_teacher_train": len(split.teacher) // t,
                "student_train_size": len(split.student),
                "test_size": len(ds.splits["eval"].labels),
            }
            v = table_4_1_verdict(subset, label, paper, ours, ds.source.kind)
            rows.append(
                {
                    "block": subset,
                    "data_set": label,
                    **{f"{k}_ours": ours[k] for k in ours},
                    "validation_size_ours": len(split.val),
                    **{f"{k}_thesis": paper[k] for k in ours},
                    "ratio_ours_to_thesis": round(n / paper["overall_size"], 4),
                    **v.as_record(),
                }
            )
    return pd.DataFrame(rows)


def _label(t: int) -> str:
    return "baseline" if t == 1 else str(t)


def both_conventions(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """Macro P/R/F1 (:func:`.release.prf`: precision and recall averaged over *all* classes, a class without a
    prediction scored 0) and beside them the second convention, averaged over the *predicted* classes only
    (:func:`pate_study.learning.metrics.macro_precision_recall_predicted_classes`): ``precision_predicted``,
    ``recall_predicted``, ``n_predicted_classes``. Under the first, precision <= n_predicted_classes / n_classes.
    The verdicts read a third, :data:`pate_study.learning.metrics.PRESENT_CLASSES` (0/0 classes dropped):
    ``precision_predicted``, ``recall_true``, ``f1_present``."""
    out = prf(y_true, y_pred)
    if len(y_true) == 0:
        return {
            **out,
            "precision_predicted": float("nan"),
            "recall_predicted": float("nan"),
            "n_predicted_classes": 0,
            "recall_true": float("nan"),
            "f1_present": float("nan"),
        }
    pred = metrics.macro_precision_recall_predicted_classes(y_true, y_pred)
    present = metrics.macro_scores_present_classes(y_true, y_pred)
    return {
        **out,
        "precision_predicted": pred["precision"],
        "recall_predicted": pred["recall"],
        "n_predicted_classes": pred["n_classes"],
        "recall_true": present["recall"],
        "f1_present": present["f1"],
    }


def table_5_2(
    ensembles: dict[int, CachedVotes], thresholds: Sequence[Any] = THRESHOLDS, vote: str = "probability"
) -> pd.DataFrame:
    """Table 5.2 / A.2: noise-free ensemble P/R/F1 on the pool per teacher count and threshold."""
    rows = []
    for t, cv in ensembles.items():
        m = vote_fractions(cv.pool_probabilities, vote)
        for th in thresholds:
            rows.append(
                {
                    "n_teachers": _label(t),
                    "threshold": threshold_label(th),
                    **both_conventions(cv.pool_labels, noise_free_release(m, th)),
                    "n_classes": int(cv.pool_labels.shape[1]),
                }
            )
    return pd.DataFrame(rows)


def table_5_1(
    ensembles: dict[int, CachedVotes],
    thresholds: Sequence[Any] = THRESHOLDS,
    vote: str = "probability",
    *,
    t52: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Table 5.1 / A.1: raw mAP / AUC of m, the best-F1 threshold's P/R/F1, and the average teacher's
    P/R/F1 (each teacher's own probabilities at that same threshold; adaptive on its own outputs). One convention
    for classes absent from the scored set across Tables 5.1-5.3, :data:`pate_study.learning.metrics.PRESENT_CLASSES`
    (a class with neither a label nor a prediction dropped, after Muschiol 2021's Definition 2): the best threshold
    maximises ``f1_present``, ``ensemble_precision`` / ``ensemble_recall`` / ``ensemble_f1`` and ``teacher_avg_*``
    are on it (:func:`pate_study.learning.metrics.macro_scores_present_classes`); the all-classes values (every
    class averaged, an absent one scored 0) stay beside as ``*_all_classes``. ``t52``: the :func:`table_5_2` of the
    same ``ensembles``, ``thresholds`` and ``vote`` when already computed."""
    t52 = table_5_2(ensembles, thresholds, vote) if t52 is None else t52
    rows = []
    for t, cv in ensembles.items():
        m = vote_fractions(cv.pool_probabilities, vote)
        sub = t52[t52["n_teachers"] == _label(t)].reset_index(drop=True)
        best = sub.loc[int(np.nanargmax(sub["f1_present"].to_numpy(float)))]
        th = best["threshold"] if best["threshold"] == "adaptive" else float(best["threshold"])
        row = {
            "n_teachers": _label(t),
            "map_raw": metrics.mean_average_precision(cv.pool_labels, m),
            "auc_raw": metrics.mean_roc_auc(cv.pool_labels, m),
            "ensemble_threshold": best["threshold"],
            "ensemble_precision": best["precision_predicted"],
            "ensemble_recall": best["recall_true"],
            "ensemble_f1": best["f1_present"],
            "ensemble_precision_all_classes": best["precision"],
            "ensemble_recall_all_classes": best["recall"],
            "ensemble_f1_all_classes": best["f1"],
            "ensemble_recall_predicted": best["recall_predicted"],
        }
        keys = ("precision", "recall", "f1")
        if t > 1:
            released = [noise_free_release(p.astype(np.float64), th) for p in cv.pool_probabilities]
            present = [metrics.macro_scores_present_classes(cv.pool_labels, r) for r in released]
            every = [prf(cv.pool_labels, r) for r in released]
            row.update({f"teacher_avg_{k}": float(np.mean([x[k] for x in present])) for k in keys})
            row.update({f"teacher_avg_{k}_all_classes": float(np.mean([x[k] for x in every])) for k in keys})
        else:
            row.update({f"teacher_avg_{k}{c}": np.nan for c in ("", "_all_classes") for k in keys})
        rows.append(row)
    return pd.DataFrame(rows)


def score_tolerance(
    ensembles: dict[int, CachedVotes],
    *,
    thresholds: Sequence[Any] = THRESHOLDS,
    best_of: Sequence[Any] | None = None,
    n_boot: int = 100,
    seed: int = 0,
    check: tuple[Any, float] = (0.2, 0.6),
) -> dict[str, Any]:
    """The bootstrap of the pool queries every claim on the noise-free tables (5.1-5.3, A.1-A.3) reads: a paired
    bootstrap (``n_boot`` resamples with replacement from ``seed``, the same rows for every ensemble; Efron &
    Tibshirani 1993, ch. 6) gives the draws of each difference the claims read -- raw mAP, best-threshold macro F1 and
    the ensemble's best-threshold F1 minus its average teacher's (F1 on the present classes, as Table 5.1 reports it)
    between / within teacher counts, macro precision and
    recall (:data:`pate_study.learning.metrics.PRESENT_CLASSES`: precision over the predicted classes, recall over
    the true classes) between adjacent fixed thresholds of one ensemble and between adjacent teacher counts at one
    fixed threshold, and the F1 with the confidence check (``check``: th_e, th_c; the max rule) over the F1 without,
    on the classes present in each set. ``"draws"``: ``{difference: [n_boot] array}`` (in memory; the claims turn
    them into percentile intervals, :func:`pate_study.reporting.uncertainty.from_bootstrap`); ``"sd"``: their sds;
    ``"tolerance"``: twice the largest sd (a summary, not a rule). P/R/F1 come from the resample's weighted
    per-class counts (:func:`pate_study.learning.metrics.macro_scores_from_counts`), mAP from the resampled rows.
    It measures the spread of the evaluation sample, not of the teachers' training seeds (one ensemble per teacher
    count). ``best_of``: the candidates of the best-F1 threshold when they are not ``thresholds`` (Table A.1 adds
    0.3; the adjacent-threshold differences stay those of ``thresholds``). ``"values"``: ``{difference: float}``, each
    difference on the full pool (what the draws resample; the replicate value when the ensembles are one replicate
    of several, :func:`replicated_tolerance`)."""
    rng = np.random.default_rng(seed)
    fixed = [th for th in thresholds if th != "adaptive"]
    candidates = list(thresholds if best_of is None else best_of)
    votes = {
        t: (vote_fractions(cv.pool_probabilities, "probability"), cv.pool_labels.astype(bool))
        for t, cv in sorted(ensembles.items())
    }
    n = min(len(y) for _, y in votes.values())
    # row 0: the full sample (every query once), the values the draws are resamples of; then the resamples
    rows = np.concatenate([np.arange(n)[None], rng.integers(0, n, (n_boot, n))])
    weights = np.stack([np.bincount(r, minlength=n) for r in rows]).astype(np.float64)  # [1 + n_boot, n]

    def counts(w, y, p):
        return metrics.macro_scores_from_counts(w @ (y & p), w @ (~y & p), w @ (y & ~p))

    maps, scores, full, teacher_f1, check_ratio = {}, {}, {}, {}, {}
    for t, (m, y) in votes.items():
        m, y = m[:n], y[:n]
        with warnings.catch_warnings():  # a class without a positive in a resample is left out of its mAP
            warnings.simplefilter("ignore", RuntimeWarning)
            maps[t] = np.nanmean(metrics.resampled_average_precision(y, m, weights), axis=1)
        for th in dict.fromkeys([*thresholds, *candidates]):
            p = noise_free_release(m, th)
            scores[t, th], full[t, th] = counts(weights, y, p), counts(np.ones((1, n)), y, p)
        best_th = max(candidates, key=lambda th: float(np.nan_to_num(full[t, th]["f1_present"][0], nan=-np.inf)))
        if t > 1:  # each teacher's own probabilities at the ensemble's best threshold (Table 5.1's average teacher)
            probs = ensembles[t].pool_probabilities[:, :n].astype(np.float64)
            released = [noise_free_release(q, best_th) for q in probs]
            teacher_f1[t] = np.mean([counts(weights, y, r)["f1_present"] for r in released], axis=0)
            teacher_f1[t] = np.max([scores[t, th]["f1_present"] for th in candidates], axis=0) - teacher_f1[t]
            ok = noise_free_confident(m, check[0], check[1], "max")
            p = noise_free_release(m, check[0])
            with np.errstate(invalid="ignore", divide="ignore"):
                check_ratio[t] = counts(weights * ok, y, p)["f1_present"] / scores[t, check[0]]["f1_present"]
    best_f1 = {t: np.max([scores[t, th]["f1_present"] for th in candidates], axis=0) for t in votes}
    draws: dict[str, np.ndarray] = {}
    ts = list(votes)
    for i, a in enumerate(ts):
        for b in ts[i + 1 :]:
            draws[f"mAP {a} - {b}"] = maps[a] - maps[b]
            draws[f"best F1 {a} - {b}"] = best_f1[a] - best_f1[b]
        for lo, hi in zip(fixed, fixed[1:]):
            for k in ("precision_predicted", "recall_predicted", "recall_true"):
                draws[f"{k} {a}: {hi} - {lo}"] = scores[a, hi][k] - scores[a, lo][k]
        if a in teacher_f1:
            draws[f"best F1 - average teacher F1 {a}"] = teacher_f1[a]
            draws[f"F1 with check / without {a}"] = check_ratio[a]
    for a, b in zip(ts, ts[1:]):
        for th in fixed:
            for k in ("precision_predicted", "recall_predicted", "recall_true"):
                draws[f"{k} {a} - {b}: {th}"] = scores[a, th][k] - scores[b, th][k]
    values = {k: float(v[0]) for k, v in draws.items()}
    draws = {k: v[1:] for k, v in draws.items()}
    sd = {k: float(np.nanstd(v, ddof=1)) for k, v in draws.items() if np.isfinite(v).sum() > 1}
    top = max(sd.values()) if sd else float("nan")
    return {
        "tolerance": 2 * top,
        "n_boot": int(n_boot),
        "seed": int(seed),
        "max_sd": top,
        "sd": sd,
        "draws": draws,
        "values": values,
    }


def tolerance_summary(tolerance: dict[str, Any] | None) -> dict[str, Any] | None:
    """:func:`score_tolerance` (or :func:`replicated_tolerance`) without its draws and values (what a record keeps)."""
    return None if tolerance is None else {k: v for k, v in tolerance.items() if k not in ("draws", "values")}


#: the rows' keys of the noise-free tables (Tables 5.1 / A.1, 5.2 / A.2, 5.3 / A.3), by table
TABLE_KEYS = {"5.1": ("n_teachers",), "5.2": ("n_teachers", "threshold"), "5.3": ("rule", "n_teachers", "threshold")}


def replicate_mean(frames: Sequence[pd.DataFrame], keys: Sequence[str]) -> pd.DataFrame:
    """One table from the same table of every replicate ensemble (``frames``, replicate 0 first; a row of a teacher
    count with fewer replicates is in fewer frames): per row (``keys``, in replicate 0's order) the mean of every
    numeric column over the replicates that have it, the most frequent value of any other column (e.g. a best
    threshold that differs between replicates), and ``n_replicates``."""
    tagged = pd.concat([f.assign(_replicate=g) for g, f in enumerate(frames)], ignore_index=True)
    groups = tagged.groupby(list(keys), sort=False, dropna=False)
    numeric = [
        c for c in tagged.columns if c not in keys and c != "_replicate" and pd.api.types.is_numeric_dtype(tagged[c])
    ]
    other = [c for c in tagged.columns if c not in keys and c != "_replicate" and c not in numeric]
    out = groups[numeric].mean() if numeric else groups.size().to_frame("_n").drop(columns="_n")
    for c in other:
        out[c] = groups[c].agg(lambda x: x.mode().iloc[0] if x.notna().any() else x.iloc[0])
    out["n_replicates"] = groups["_replicate"].nunique()
    return out.reset_index()[[*keys, *[c for c in frames[0].columns if c not in keys], "n_replicates"]]


def replicates_of(ensembles: dict[int, list[CachedVotes]], g: int) -> dict[int, CachedVotes]:
    """Replicate ``g`` of every teacher count that has one (``{T: [CachedVotes per replicate]}``; replicate 0 is
    every count's first seed, so the counts of replicate ``g`` share their replicate seed)."""
    return {t: reps[g] for t, reps in ensembles.items() if len(reps) > g}


def replicated_tolerance(ensembles: dict[int, list[CachedVotes]], **kwargs: Any) -> dict[str, Any]:
    """:func:`score_tolerance` on every replicate of the ensembles (``{T: [CachedVotes per replicate]}``; replicate
    ``g`` holds the counts with a ``g``-th replicate, :func:`replicates_of`), every replicate scored on the same pool
    resamples (the same ``seed``): ``"draws"`` ``{difference: [n_boot, G]}`` and ``"values"`` ``{difference: [G]}``
    with ``G`` the replicates the difference has (a difference involving a count with one ensemble has one); what
    :func:`.release_claims.common.pool_estimate` reads as a t-interval over the replicate ensembles combined with the
    pool bootstrap. ``"n_replicates"``: the largest ``G``."""
    n_rep = max(len(v) for v in ensembles.values())
    per = [score_tolerance(replicates_of(ensembles, g), **kwargs) for g in range(n_rep)]
    keys = list(per[0]["draws"])
    draws = {k: np.stack([p["draws"][k] for p in per if k in p["draws"]], axis=1) for k in keys}
    values = {k: np.array([p["values"][k] for p in per if k in p["values"]]) for k in keys}
    with warnings.catch_warnings():  # a difference with no finite draw, or one replicate, has no spread: NaN, dropped
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's empty-slice warnings, which name this file's path
        sd = {k: float(np.nanstd(np.nanmean(v, axis=1), ddof=1)) for k, v in draws.items()}
    sd = {k: v for k, v in sd.items() if np.isfinite(v)}
    top = max(sd.values()) if sd else float("nan")
    return {
        "tolerance": 2 * top,
        "n_boot": per[0]["n_boot"],
        "seed": per[0]["seed"],
        "max_sd": top,
        "sd": sd,
        "n_replicates": n_rep,
        "draws": draws,
        "values": values,
    }


def table_5_3(
    ensembles: dict[int, CachedVotes],
    thresholds: Sequence[Any] = ("adaptive", 0.2, 0.4),
    confidences: Sequence[float] = CONFIDENCE_LEVELS,
    rules: Sequence[str] = ("max", "printed"),
    vote: str = "probability",
    top_n: int = 4,
) -> pd.DataFrame:
    """Table 5.3 / A.3: noise-free confidence check; answered share and P/R/F1 on the answered queries,
    for both rules (``"max"``: at least one label ≥ th_c; ``"printed"``: Algorithm 3's all-top-n rule)."""
    rows = []
    for t, cv in ensembles.items():
        if t == 1:
            continue
        m = vote_fractions(cv.pool_probabilities, vote)
        for rule in rules:
            for th in thresholds:
                row = {"rule": rule, "n_teachers": _label(t), "threshold": threshold_label(th)}
                for c in confidences:
                    ok = noise_free_confident(m, th, c, rule, top_n)
                    r = both_conventions(cv.pool_labels[ok], noise_free_release(m, th)[ok])
                    key = f"conf{int(round(c * 10)):02d}"
                    row.update(
                        {
                            f"answered_pct_{key}": 100.0 * ok.mean(),
                            f"precision_{key}": r["precision"],
                            f"recall_{key}": r["recall"],
                            f"f1_{key}": r["f1"],
                            f"recall_true_{key}": r["recall_true"],
                            f"f1_present_{key}": r["f1_present"],
                            f"precision_predicted_{key}": r["precision_predicted"],
                            f"recall_predicted_{key}": r["recall_predicted"],
                        }
                    )
                rows.append(row)
    return pd.DataFrame(rows)


def paper_beside(ours: pd.DataFrame, item_id: str, keys: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Our table with the thesis's printed values beside (``<col>_thesis``), joined on ``keys``."""
    paper = pd.DataFrame(published(item_id)["rows"])
    keep = [c for c in columns if c in paper.columns]
    paper = paper[list(keys) + keep].rename(columns={c: f"{c}_thesis" for c in keep})
    for k in keys:
        paper[k] = paper[k].astype(str)
    ours = ours.copy()
    for k in keys:
        ours[k] = ours[k].astype(str)
    return ours.merge(paper, on=list(keys), how="left")


def frequency_order(label_counts: np.ndarray) -> np.ndarray:
    """The classes with at least one label, most frequent first (ties in class order): Fig A.6 shows the first and
    the last ``k``."""
    counts = np.asarray(label_counts)
    present = np.flatnonzero(counts > 0)
    return present[np.argsort(-counts[present], kind="stable")]


def rare_prediction_draws(
    cv: CachedVotes,
    thresholds: Sequence[Any] = THRESHOLDS,
    k: int = 5,
    *,
    n_boot: int,
    seed: int,
    vote: str = "probability",
) -> dict[str, dict[str, Any]]:
    """Fig A.6's claims' numbers with their bootstrap over the pool queries: per threshold (its label), ``"value"``,
    the noise-free ensemble's positive predictions of the ``k`` least frequent classes of the pool
    (:func:`frequency_order`), and ``"draws"``, the same count on each of ``n_boot`` resamples of the pool queries
    (:func:`.release.pool_weights` from ``seed``, the rows every threshold shares), the ``k`` least frequent classes
    chosen again in each resample (which classes are rarest is itself a property of the finite pool; Efron &
    Tibshirani 1993, ch. 6). Noise-free: no release-noise draw behind the counts."""
    labels = np.asarray(cv.pool_labels, dtype=np.float64)
    weights = pool_weights(len(labels), n_boot, seed)  # [n_boot, n_pool]
    rare = frequency_order(labels.sum(0))[-k:]
    rare_draws = [frequency_order(c)[-k:] for c in weights @ labels]
    m = vote_fractions(cv.pool_probabilities, vote)
    out = {}
    for th in thresholds:
        predicted = noise_free_release(m, th).astype(np.float64)
        per_class = weights @ predicted  # [n_boot, n_classes]
        out[threshold_label(th)] = {
            "value": float(predicted[:, rare].sum()),
            "draws": np.array([per_class[b, r].sum() for b, r in enumerate(rare_draws)]),
        }
    return out


def prediction_counts(
    cv: CachedVotes, thresholds: Sequence[Any] = THRESHOLDS, k: int = 5, vote: str = "probability"
) -> pd.DataFrame:
    """Fig A.6: for the k most and k least frequent classes of the pool, the true label count and the
    noise-free ensemble's number of positive predictions per threshold."""
    counts = cv.pool_labels.sum(0)
    order = frequency_order(counts)
    chosen = np.concatenate([order[:k], order[-k:]])
    m = vote_fractions(cv.pool_probabilities, vote)
    rows = []
    for rank, c in enumerate(chosen):
        row = {
            "class": cv.class_names[c],
            "group": "most frequent" if rank < k else "least frequent",
            "labels": int(counts[c]),
        }
        for th in thresholds:
            row[f"predicted_{threshold_label(th)}"] = int(noise_free_release(m, th)[:, c].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def ensemble_summary(runs: dict, inputs: dict) -> pd.DataFrame:
    """Notebook 04's teachers per (subset, T) over its replicate ensembles (``runs[s, t]``: a list of runs, or one):
    replicates, clips per teacher, mean / min / max teacher mAP, mean AUC, mean selected step."""

    def listed(x):
        return x if isinstance(x, (list, tuple)) else [x]

    rows = []
    for (s, t), reps in runs.items():
        reps = listed(reps)
        m = np.concatenate([r.map for r in reps])
        rows.append(
            {
                "subset": s,
                "teachers": t,
                "replicates": len(reps),
                "clips_per_teacher": listed(inputs[s, t])[0].partitions.train.shape[1],
                "mean_teacher_mAP": m.mean(),
                "min_teacher_mAP": m.min(),
                "max_teacher_mAP": m.max(),
                "mean_teacher_AUC": np.concatenate([r.auc for r in reps]).mean(),
                "mean_best_step": np.concatenate([r.best_step for r in reps]).mean(),
            }
        )
    return pd.DataFrame(rows)


def ablation_table(ablation: dict) -> pd.DataFrame:
    """Notebook 04's ablation arms: mean final mAP / AUC, the peak of the mean curve, mean selected step."""
    return pd.DataFrame(
        [
            {
                "arm": k,
                "mean_final_mAP": r.map.mean(),
                "mean_final_AUC": r.auc.mean(),
                "peak_curve_mAP": curve_stats(r)["mean"].max(),
                "mean_best_step": r.best_step.mean(),
            }
            for k, r in ablation.items()
        ]
    )


def table_5_1_beside(t51: pd.DataFrame) -> pd.DataFrame:
    """Table 5.1 with the thesis's values beside."""
    return paper_beside(
        t51,
        "muschiol2021-table5.1",
        ["n_teachers"],
        ["map_raw", "auc_raw", "ensemble_threshold", "ensemble_f1", "teacher_avg_f1"],
    )


def table_5_2_beside(t52: pd.DataFrame) -> pd.DataFrame:
    """Table 5.2 with the thesis's values beside."""
    return paper_beside(t52, "muschiol2021-table5.2", ["n_teachers", "threshold"], ["precision", "recall", "f1"])


def table_5_3_beside(t53: pd.DataFrame, item_id: str = "muschiol2021-table5.3") -> pd.DataFrame:
    """Table 5.3 / A.3: the "max" rule's rows with the thesis's values beside, then the "printed" rule's rows."""
    side = paper_beside(
        t53[t53["rule"] == "max"],
        item_id,
        ["n_teachers", "threshold"],
        ["answered_pct_conf04", "f1_conf04", "answered_pct_conf06", "f1_conf06"],
    )
    return pd.concat([side, t53[t53["rule"] == "printed"]], ignore_index=True)


def noise_free_tables(
    ensembles: dict[int, CachedVotes], thresholds: Sequence[Any] = THRESHOLDS
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 5.1, 5.2 and 5.3 (A.1-A.3 on the small subset), each computed once: Table 5.1's best threshold is
    chosen among the ``thresholds`` of the Table 5.2 returned beside it."""
    t52 = table_5_2(ensembles, thresholds)
    return table_5_1(ensembles, thresholds, t52=t52), t52, table_5_3(ensembles)


#: Table A.1's candidate thresholds: Table A.2's and 0.3, the thesis's best threshold in Table A.1.
APPENDIX_A1_THRESHOLDS: tuple[Any, ...] = tuple(THRESHOLDS) + ((0.3,) if 0.3 not in THRESHOLDS else ())


def appendix_noise_free_tables(small: dict[int, CachedVotes]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables A.1-A.3 of the small subset, each computed once and both printed and judged from these frames: A.1's
    best threshold among :data:`APPENDIX_A1_THRESHOLDS`, A.2 at :data:`.release.THRESHOLDS` (the thesis's rows)."""
    t51, t52_all, t53 = noise_free_tables(small, APPENDIX_A1_THRESHOLDS)
    keep = t52_all["threshold"].isin([threshold_label(th) for th in THRESHOLDS])
    return t51, t52_all[keep].reset_index(drop=True), t53


def replicated_noise_free_tables(
    ensembles: dict[int, list[CachedVotes]], *, appendix: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 5.1-5.3 (``appendix``: A.1-A.3, :func:`appendix_noise_free_tables`) of every replicate ensemble
    (:func:`replicates_of`), each table the mean over the replicates (:func:`replicate_mean`, with
    ``n_replicates``): what the tables print; the claims read each replicate's own values
    (:func:`replicated_tolerance`)."""
    n_rep = max(len(v) for v in ensembles.values())
    make = appendix_noise_free_tables if appendix else noise_free_tables
    per = [make(replicates_of(ensembles, g)) for g in range(n_rep)]
    return tuple(replicate_mean(frames, TABLE_KEYS[k]) for frames, k in zip(zip(*per), ("5.1", "5.2", "5.3")))


def replicated_rare_draws(replicates: Sequence[CachedVotes], **kwargs: Any) -> dict[str, dict[str, Any]]:
    """:func:`rare_prediction_draws` of every replicate ensemble of one teacher count (the same pool resamples): per
    threshold ``"value"`` (the mean over the replicates), ``"values"`` ``[G]`` and ``"draws"`` ``[n_boot, G]``."""
    per = [rare_prediction_draws(cv, **kwargs) for cv in replicates]
    return {
        th: {
            "value": float(np.mean([p[th]["value"] for p in per])),
            "values": np.array([p[th]["value"] for p in per]),
            "draws": np.stack([p[th]["draws"] for p in per], axis=1),
        }
        for th in per[0]
    }


def appendix_tables(t51: pd.DataFrame, t52: pd.DataFrame, t53: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Tables A.1-A.3 (the frames of :func:`appendix_noise_free_tables`) with the thesis's values beside (A.3: both
    rules' rows)."""
    renamed = t51.rename(
        columns={"map_raw": "map", "auc_raw": "auc", "ensemble_threshold": "best_threshold", "ensemble_f1": "best_f1"}
    )
    return {
        "muschiol2021-tableA.1": paper_beside(
            renamed,
            "muschiol2021-tableA.1",
            ["n_teachers"],
            ["map", "auc", "best_threshold", "best_f1", "teacher_avg_f1"],
        ),
        "muschiol2021-tableA.2": paper_beside(
            t52, "muschiol2021-tableA.2", ["n_teachers", "threshold"], ["precision", "recall", "f1"]
        ),
        "muschiol2021-tableA.3": paper_beside(
            t53,
            "muschiol2021-tableA.3",
            ["n_teachers", "threshold"],
            ["answered_pct_conf04", "f1_conf04", "answered_pct_conf06", "f1_conf06"],
        ),
    }


def table_5_4_beside(t54: pd.DataFrame) -> pd.DataFrame:
    """Table 5.4 with the thesis's values beside."""
    return paper_beside(
        t54,
        "muschiol2021-table5.4",
        ["n_samples", "th_e", "th_c"],
        ["eps_data_dependent", "eps_data_independent", "q_average", "map", "macro_f1", "micro_f1"],
    )


def best_thresholds(t51: pd.DataFrame, t_max: int) -> tuple[Any, Any]:
    """The thresholds Table 5.1 selected on the pool (best F1) for the single model (0.2 when it is not in the table)
    and the ``t_max``-teacher aggregate."""
    th = t51.set_index("n_teachers")["ensemble_threshold"]

    def parse(x):
        return x if x == "adaptive" else float(x)

    return (parse(th["baseline"]) if "baseline" in th.index else 0.2), parse(th[str(t_max)])
