"""Audio Set II (Muschiol 2021 ch. 4.2, 5.2-5.4): multi-label aggregation, accounting and the later mechanisms.

Set-up (issue 11; the thesis's Fig 4.1 pipeline on the data here):

* Teachers (1 = the non-private baseline, 10, 20, 50) predict the whole **student query pool** once; the
  per-teacher probabilities ``float[n_teachers, n_queries, n_labels]`` are the interface
  (:class:`CachedVotes`), cached on disk by :mod:`pate_study.learning.ensemble`. Everything below runs offline on
  them, parameterised by th_e, th_c, σ_e, σ_c as in the thesis.
* Query pool and test set: the subset's official eval clips, shuffled once (seed) and cut
  (:func:`query_test_split`): the pool takes ``max(min_pool, pool_fraction·n)`` clips so that Table 5.4's
  5,000 queries exist, the test set the rest. Only students are scored on the test set; ensembles are
  scored on the pool's true labels (the thesis: "the baseline predicted the same student samples as the
  ensemble"; Fig A.6 uses the student set). No selection ever looks at the test set.
* Averaged vote m_i = (1/T) Σ_t f_t,i (Definition 10 averages probabilities; ``vote="binary"`` averages
  0/1 votes at 0.5 instead, the other reading of §9 item 10).

Noise-free tables (σ = 0): Tables 5.1-5.3 / A.1-A.3 release c_i = [m_i > th] directly (the aggregators of
:mod:`pate_study.privacy.aggregators` need σ > 0). Noisy sweeps (Figs 5.13-5.15, A.7-A.11) call
:func:`~pate_study.privacy.aggregators.gnthreshold` / ``confident_gnthreshold`` and the accountants of
:mod:`pate_study.privacy.multilabel` on the **first ``n_account`` queries** (1,000, as the thesis).
"Ours" uses the bound ``"vote_fraction"`` (per-label sensitivity 1/T of vote fractions: the one bound whose
Theorem 6 can apply at the thesis's σ; see that module); every bound is also shown side by side.

Beyond the thesis: Binary, τ- and powerset PATE (Dziedzic et al. 2023, :mod:`pate_study.privacy.multiwinner`)
on the same teachers' 0/1 votes, the same δ and n.
"""
from __future__ import annotations

import dataclasses
import logging
import math
from typing import Any, Sequence

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pate_study.learning import metrics
from pate_study.privacy import adaptive_k, aggregators, audit, multilabel, multiwinner
from pate_study.privacy.accounting import OrderAtGridEdgeWarning
from pate_study.reporting.registry import published
from pate_study.reporting.verdicts import Verdict, agrees, differs, not_comparable

logger = logging.getLogger(__name__)

__all__ = [
    "THRESHOLDS", "CONFIDENCE_LEVELS", "TEACHER_COUNTS", "CachedVotes", "check_probabilities",
    "query_test_split", "synthetic_teacher_probabilities", "synthetic_votes", "vote_fractions",
    "noise_free_release", "noise_free_confident", "prf", "table_5_1", "table_5_2", "table_5_3",
    "confidence_rule_verdict", "prediction_counts", "noise_sweep", "confidence_sweep", "q_histogram",
    "bounds_side_by_side", "table_5_4_privacy", "multiwinner_sweep", "paper_beside",
    "trend_verdict_table_5_2", "findings", "gnthreshold_audit", "q_average_verdict", "saving_contrast_verdict",
    "ensemble_claims", "student_claim", "adaptive_privacy_verdict", "confidence_claims", "THESIS_SCALE", "ORDERS", "thesis_grid",
    "adaptive_rules", "sweep_figure", "confidence_figure", "audit_figure",
]

THRESHOLDS: tuple[Any, ...] = ("adaptive", 0.2, 0.4, 0.6)
CONFIDENCE_LEVELS = (0.4, 0.6)
TEACHER_COUNTS = (1, 10, 20, 50)
DELTA = 1e-8
#: every multi-label ε here is optimised over orders from 1.001 (:func:`multilabel.extended_orders`): at the
#: thesis's σ_e the best order lies below 2, the first order of Papernot et al. 2018's grid
ORDERS = multilabel.extended_orders()


# ----------------------------------------------------------------------------- votes and set-up
@dataclasses.dataclass(frozen=True)
class CachedVotes:
    """Per-teacher probabilities on the query pool and the test set, with the true labels.

    ``pool_probabilities`` ``float[T, n_pool, L]``, ``pool_labels`` ``bool[n_pool, L]``,
    ``test_probabilities`` ``float[T, n_test, L]``, ``test_labels`` ``bool[n_test, L]``;
    ``train_label_rate`` ``float[L]``: label frequencies of the teachers' training data (class prior).
    """

    pool_probabilities: np.ndarray
    pool_labels: np.ndarray
    test_probabilities: np.ndarray
    test_labels: np.ndarray
    train_label_rate: np.ndarray
    class_names: tuple[str, ...]
    data: str

    def __post_init__(self) -> None:
        check_probabilities(self.pool_probabilities, "pool_probabilities")
        check_probabilities(self.test_probabilities, "test_probabilities")
        for name, p, y in (("pool", self.pool_probabilities, self.pool_labels),
                           ("test", self.test_probabilities, self.test_labels)):
            if np.shape(y) != p.shape[1:]:
                raise ValueError(f"{name}_labels: expected shape {p.shape[1:]} (queries x labels), got {np.shape(y)}")
        if self.pool_probabilities.shape[0] != self.test_probabilities.shape[0]:
            raise ValueError("test_probabilities: expected the same number of teachers as pool_probabilities")

    @property
    def n_teachers(self) -> int:
        """Number of teachers T."""
        return int(self.pool_probabilities.shape[0])


def check_probabilities(probabilities: Any, name: str = "probabilities") -> np.ndarray:
    """Validate per-teacher probabilities ``[n_teachers, n_queries, n_labels]``: finite, in [0, 1]."""
    arr = np.asarray(probabilities)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name}: expected a numeric array [n_teachers, n_queries, n_labels], got dtype {arr.dtype}")
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(f"{name}: expected a non-empty 3-D array [n_teachers, n_queries, n_labels], "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: found NaN or inf; expected teacher probabilities in [0, 1]")
    if arr.min() < 0 or arr.max() > 1:
        raise ValueError(f"{name}: values in [{arr.min():.3g}, {arr.max():.3g}]; expected probabilities in [0, 1] "
                         f"(apply a sigmoid to logits first)")
    return arr


def query_test_split(n_clips: int, *, min_pool: int = 5000, pool_fraction: float = 0.5, min_test: int = 200,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of the subset's eval clips into the student query pool and the test set.

    The pool gets ``max(min_pool, round(pool_fraction·n))`` clips (issue 11: about half, and at least the
    5,000 queries of Table 5.4), capped so the test set keeps ``min_test`` clips; returns sorted indices.
    """
    if not 0 < pool_fraction < 1:
        raise ValueError(f"pool_fraction={pool_fraction}: expected a fraction in (0, 1)")
    if n_clips < min_test + 1:
        raise ValueError(f"n_clips={n_clips}: need more than min_test={min_test} eval clips")
    n_pool = min(max(int(min_pool), int(round(pool_fraction * n_clips))), n_clips - int(min_test))
    if n_pool < min_pool:
        logger.warning("query pool holds %d clips, fewer than min_pool=%d", n_pool, min_pool)
    order = np.random.default_rng(seed).permutation(n_clips)
    return np.sort(order[:n_pool]), np.sort(order[n_pool:])


def synthetic_teacher_probabilities(labels: np.ndarray, n_teachers: int, *, skill: float = 2.0,
                                    prior_logit: float = -2.5, teacher_noise: float = 1.0,
                                    shared_noise: float = 1.5, seed: int = 0) -> np.ndarray:
    """Synthetic stand-in teachers: sigmoid(prior + skill·y + e + N(0, teacher_noise²)) per teacher and label,
    with e ~ N(0, shared_noise²) shared by all teachers (the hard clips every teacher gets wrong, so that
    averaging does not make a large ensemble perfect). ``skill`` falls with the partition size in real
    ensembles; the notebook stamps outputs from these as synthetic.
    """
    rng = np.random.default_rng(seed)
    y = np.asarray(labels, dtype=np.float64)
    shared = rng.normal(0.0, shared_noise, size=y.shape)
    logits = prior_logit + skill * y[None] + shared[None] + rng.normal(0.0, teacher_noise,
                                                                       size=(n_teachers,) + y.shape)
    return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)


def synthetic_votes(n_teachers: int, *, n_pool: int = 1200, n_test: int = 600, n_labels: int = 30,
                    mean_labels: float = 2.0, seed: int = 0) -> CachedVotes:
    """A synthetic :class:`CachedVotes` (Zipf label frequencies, ~``mean_labels`` labels per query);
    skill falls with T as ``2.4 / T**0.15`` (bigger ensembles, smaller partitions)."""
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, n_labels + 1)
    p = np.minimum(0.9, freq * mean_labels / freq.sum())

    def labels(n: int) -> np.ndarray:
        y = rng.random((n, n_labels)) < p
        y[np.arange(n), rng.choice(n_labels, size=n, p=freq / freq.sum())] = True
        return y

    pool, test = labels(n_pool), labels(n_test)
    skill = 2.4 / n_teachers**0.15
    return CachedVotes(synthetic_teacher_probabilities(pool, n_teachers, skill=skill, seed=seed + 1),
                       pool, synthetic_teacher_probabilities(test, n_teachers, skill=skill, seed=seed + 2), test,
                       p.astype(np.float64), tuple(f"class {i}" for i in range(n_labels)), "synthetic")


def vote_fractions(probabilities: Any, vote: str = "probability") -> np.ndarray:
    """Averaged vote m = (1/T) Σ_t f_t (Muschiol Definition 10): of probabilities, or of 0/1 votes at 0.5."""
    p = check_probabilities(probabilities)
    if vote not in ("probability", "binary"):
        raise ValueError(f"vote={vote!r}: expected 'probability' (Definition 10) or 'binary' (votes at 0.5)")
    if vote == "binary":
        return (p >= 0.5).mean(0, dtype=np.float64)
    return p.mean(0, dtype=np.float64)


def _thresholds(m: np.ndarray, threshold: Any) -> np.ndarray:
    if isinstance(threshold, str):
        return aggregators.adaptive_thresholds(m)
    return np.full(len(m), float(threshold))


def noise_free_release(m: np.ndarray, threshold: Any) -> np.ndarray:
    """GNThreshold with σ = 0 (Definition 10/11): c_i = [m_i > th], th fixed or adaptive."""
    return m > _thresholds(m, threshold)[:, None]


def noise_free_confident(m: np.ndarray, threshold: Any, confidence: float, rule: str = "max",
                         top_n: int = 4) -> np.ndarray:
    """Answered mask of the confidence check with σ_c = 0: ``"max"``: max_i m_i ≥ th_c (what the
    experiments describe); ``"printed"``: all top-n values of m − th_e ≥ th_c (Algorithm 3 as printed)."""
    if rule == "max":
        return m.max(axis=1) >= confidence
    if rule != "printed":
        raise ValueError(f"rule={rule!r}: expected 'max' or 'printed'")
    top = -np.sort(-m, axis=1)[:, :min(top_n, m.shape[1])] - _thresholds(m, threshold)[:, None]
    return np.all(top >= confidence, axis=1)


def prf(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """Macro P/R/F1 (Muschiol Def. 2: mean of per-class values) and micro F1, via :mod:`pate_study.learning.metrics`."""
    if len(y_true) == 0:
        return {"precision": float("nan"), "recall": float("nan"), "f1": float("nan"), "micro_f1": float("nan")}
    r = metrics.multilabel_report(y_true, y_pred)
    return {"precision": r["macro_precision"], "recall": r["macro_recall"], "f1": r["macro_f1"],
            "micro_f1": r["micro_f1"]}


def _label(t: int) -> str:
    return "baseline" if t == 1 else str(t)


def _th_label(th: Any) -> str:
    return th if isinstance(th, str) else f"{th:g}"


# ----------------------------------------------------------------------------- Tables 5.1-5.3, A.1-A.3
def table_5_2(ensembles: dict[int, CachedVotes], thresholds: Sequence[Any] = THRESHOLDS,
              vote: str = "probability") -> pd.DataFrame:
    """Table 5.2 / A.2: noise-free ensemble P/R/F1 on the pool per teacher count and threshold."""
    rows = []
    for t, cv in ensembles.items():
        m = vote_fractions(cv.pool_probabilities, vote)
        for th in thresholds:
            rows.append({"n_teachers": _label(t), "threshold": _th_label(th),
                         **prf(cv.pool_labels, noise_free_release(m, th))})
    return pd.DataFrame(rows)


def table_5_1(ensembles: dict[int, CachedVotes], thresholds: Sequence[Any] = THRESHOLDS,
              vote: str = "probability") -> pd.DataFrame:
    """Table 5.1 / A.1: raw mAP / AUC of m, the best-F1 threshold's P/R/F1, and the average teacher's
    P/R/F1 (each teacher's own probabilities at that same threshold; adaptive on its own outputs)."""
    t52 = table_5_2(ensembles, thresholds, vote)
    rows = []
    for t, cv in ensembles.items():
        m = vote_fractions(cv.pool_probabilities, vote)
        sub = t52[t52["n_teachers"] == _label(t)].reset_index(drop=True)
        best = sub.loc[int(np.argmax(sub["f1"].to_numpy()))]
        th = best["threshold"] if best["threshold"] == "adaptive" else float(best["threshold"])
        row = {"n_teachers": _label(t), "map_raw": metrics.mean_average_precision(cv.pool_labels, m),
               "auc_raw": metrics.mean_roc_auc(cv.pool_labels, m), "ensemble_threshold": best["threshold"],
               "ensemble_precision": best["precision"], "ensemble_recall": best["recall"], "ensemble_f1": best["f1"]}
        if t > 1:
            per = [prf(cv.pool_labels, noise_free_release(p.astype(np.float64), th)) for p in cv.pool_probabilities]
            row.update({f"teacher_avg_{k}": float(np.mean([x[k] for x in per])) for k in ("precision", "recall", "f1")})
        else:
            row.update({"teacher_avg_precision": np.nan, "teacher_avg_recall": np.nan, "teacher_avg_f1": np.nan})
        rows.append(row)
    return pd.DataFrame(rows)


def table_5_3(ensembles: dict[int, CachedVotes], thresholds: Sequence[Any] = ("adaptive", 0.2, 0.4),
              confidences: Sequence[float] = CONFIDENCE_LEVELS, rules: Sequence[str] = ("max", "printed"),
              vote: str = "probability", top_n: int = 4) -> pd.DataFrame:
    """Table 5.3 / A.3: noise-free confidence check; answered share and P/R/F1 on the answered queries,
    for both rules (``"max"``: at least one label ≥ th_c; ``"printed"``: Algorithm 3's all-top-n rule)."""
    rows = []
    for t, cv in ensembles.items():
        if t == 1:
            continue
        m = vote_fractions(cv.pool_probabilities, vote)
        for rule in rules:
            for th in thresholds:
                row = {"rule": rule, "n_teachers": _label(t), "threshold": _th_label(th)}
                for c in confidences:
                    ok = noise_free_confident(m, th, c, rule, top_n)
                    r = prf(cv.pool_labels[ok], noise_free_release(m, th)[ok])
                    key = f"conf{int(round(c * 10)):02d}"
                    row.update({f"answered_pct_{key}": 100.0 * ok.mean(), f"precision_{key}": r["precision"],
                                f"recall_{key}": r["recall"], f"f1_{key}": r["f1"]})
                rows.append(row)
    return pd.DataFrame(rows)


def confidence_rule_verdict(t53: pd.DataFrame, item_id: str = "muschiol2021-table5.3") -> pd.DataFrame:
    """Which confidence rule reproduces the thesis's answered shares: per rule, (i) whether the answered
    share is the same for every th_e (as printed), (ii) mean |ours − printed| of the answered percentages."""
    paper = pd.DataFrame(published(item_id)["rows"])
    out = []
    for rule, sub in t53.groupby("rule", sort=False):
        cols = [c for c in sub.columns if c.startswith("answered_pct_")]
        constant = bool(all(sub.groupby("n_teachers")[c].nunique().max() == 1 for c in cols))
        merged = sub.merge(paper, on=["n_teachers", "threshold"], suffixes=("", "_paper"))
        diffs = np.concatenate([(merged[c] - merged[f"{c}_paper"]).abs().dropna().to_numpy(float) for c in cols])
        out.append({"rule": rule, "answered_share_independent_of_th_e": constant,
                    "mean_abs_diff_answered_pct": float(diffs.mean()) if diffs.size else np.nan})
    return pd.DataFrame(out)


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


def trend_verdict_table_5_2(t52: pd.DataFrame) -> Verdict:
    """The thesis's Table 5.2 reading: for every fixed threshold, more teachers give higher precision and
    lower recall (Muschiol §5.2, §6). Checked on our rows (teacher counts > 1)."""
    rule = "per fixed threshold: precision non-decreasing and recall non-increasing from 10 to 20 to 50 teachers"
    fixed = t52[(t52["threshold"] != "adaptive") & (t52["n_teachers"] != "baseline")].copy()
    fixed["t"] = fixed["n_teachers"].astype(int)
    bad = []
    for th, sub in fixed.groupby("threshold"):
        sub = sub.sort_values("t")
        if not (np.all(np.diff(sub["precision"]) >= -1e-9) and np.all(np.diff(sub["recall"]) <= 1e-9)):
            bad.append(th)
    if bad:
        return differs(f"the trend fails at thresholds {bad} on our embedding teachers", rule=rule)
    return agrees(rule=rule)


def prediction_counts(cv: CachedVotes, thresholds: Sequence[Any] = THRESHOLDS, k: int = 5,
                      vote: str = "probability") -> pd.DataFrame:
    """Fig A.6: for the k most and k least frequent classes of the pool, the true label count and the
    noise-free ensemble's number of positive predictions per threshold."""
    counts = cv.pool_labels.sum(0)
    present = np.flatnonzero(counts > 0)
    order = present[np.argsort(-counts[present], kind="stable")]
    chosen = np.concatenate([order[:k], order[-k:]])
    m = vote_fractions(cv.pool_probabilities, vote)
    rows = []
    for rank, c in enumerate(chosen):
        row = {"class": cv.class_names[c], "group": "most frequent" if rank < k else "least frequent",
               "labels": int(counts[c])}
        for th in thresholds:
            row[f"predicted_{_th_label(th)}"] = int(noise_free_release(m, th)[:, c].sum())
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- noisy sweeps and accounting
def thesis_grid(fn, **kwargs):
    """``fn(**kwargs, orders="paper2018")``: the value on the thesis's order grid (first order 2), for the
    comparison with its printed numbers. The grid-edge warning is logged with what it says, never dropped."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OrderAtGridEdgeWarning)
        result = fn(**kwargs, orders="paper2018")
    for w in caught:
        if issubclass(w.category, OrderAtGridEdgeWarning):
            logger.warning("thesis order grid: %s", w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def _epsilons(m: np.ndarray, th: Any, sigma: float, n_teachers: int, bound: str, delta: float) -> tuple[float, float]:
    dd = multilabel.gnthreshold_epsilon(sigma=sigma, delta=delta, threshold=th, fractions=m, bound=bound,
                                        n_teachers=n_teachers, orders=ORDERS)
    di = multilabel.gnthreshold_epsilon(sigma=sigma, delta=delta, threshold=th, n_queries=len(m),
                                        n_labels=m.shape[1], bound=bound, n_teachers=n_teachers, orders=ORDERS)
    return dd.epsilon, di.epsilon


def _as_fixed(m: np.ndarray, th: Any, sigma: float, n_teachers: int, bound: str, delta: float) -> float:
    """The thesis's accounting of the adaptive threshold (treated as fixed): NOT a guarantee; NaN for fixed th."""
    if not isinstance(th, str):
        return math.nan
    return multilabel.gnthreshold_epsilon(sigma=sigma, delta=delta, threshold=th, fractions=m, bound=bound,
                                          n_teachers=n_teachers, orders=ORDERS).details["epsilon_threshold_as_fixed"]


def noise_sweep(cv: CachedVotes, sigmas: Sequence[float], thresholds: Sequence[Any] = THRESHOLDS, *,
                n_account: int = 1000, delta: float = DELTA, bound: str = "vote_fraction",
                reference_bound: str = "theorem12", vote: str = "probability", seed: int = 0) -> pd.DataFrame:
    """Figs 5.13 / A.7: GNThreshold (adaptive or fixed th_e) on the first ``n_account`` queries per σ_e:
    macro F1 of the released labels, data-dependent and data-independent ε (``bound``), and the
    data-independent ε of ``reference_bound`` (Theorem 12 as printed); σ_e = 0 rows are the noise-free F1.
    Adaptive rows: ε charges the threshold's sensitivity (:func:`multilabel.adaptive_threshold_slope`);
    ``epsilon_threshold_as_fixed`` is the thesis's accounting beside it (not a guarantee)."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    y = cv.pool_labels[:n_account]
    rows = []
    for th in thresholds:
        rows.append({"threshold": _th_label(th), "sigma_e": 0.0, **prf(y, noise_free_release(m, th)),
                     "epsilon": np.inf, "epsilon_data_independent": np.inf, "epsilon_reference": np.inf,
                     "epsilon_threshold_as_fixed": np.inf if isinstance(th, str) else math.nan})
        for i, s in enumerate(sigmas):
            rel = aggregators.gnthreshold(m, th, s, np.random.default_rng([seed, i]))
            dd, di = _epsilons(m, th, s, cv.n_teachers, bound, delta)
            ref = multilabel.gnthreshold_epsilon(sigma=s, delta=delta, threshold=th, n_queries=len(m),
                                                 n_labels=m.shape[1], bound=reference_bound,
                                                 n_teachers=cv.n_teachers, orders=ORDERS).epsilon
            q = np.exp(multilabel.multilabel_logq(m, th, s))
            rows.append({"threshold": _th_label(th), "sigma_e": float(s), **prf(y, rel.labels), "epsilon": dd,
                         "epsilon_data_independent": di, "epsilon_reference": ref, "q_average": float(q.mean()),
                         "epsilon_threshold_as_fixed": _as_fixed(m, th, s, cv.n_teachers, bound, delta)})
    return pd.DataFrame(rows)


def confidence_sweep(cv: CachedVotes, threshold: Any, confidence: float, sigmas_e: Sequence[float],
                     sigmas_c: Sequence[float], *, n_account: int = 1000, delta: float = DELTA,
                     bound: str = "vote_fraction", rule: str = "max", vote: str = "probability",
                     seed: int = 0) -> pd.DataFrame:
    """Figs 5.14, 5.15, A.8-A.11: Confident-GNThreshold per (σ_c, σ_e): answered share, macro F1 on the
    answered queries, ε data-dependent (realised cost: the GNThreshold step charged on the answered
    queries of this run, the check on every query) and data-independent (every query charged both)."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    y = cv.pool_labels[:n_account]
    rows = []
    for j, sc in enumerate(sigmas_c):
        for i, se in enumerate(sigmas_e):
            rel = aggregators.confident_gnthreshold(m, threshold, se, confidence, sc,
                                                    np.random.default_rng([seed, j, i]), rule=rule)
            ok = rel.answered
            sp = multilabel.confident_gnthreshold_epsilon(
                fractions=m, threshold=threshold, sigma=se, confidence_threshold=confidence, sigma_confidence=sc,
                delta=delta, rule=rule, bound=bound, n_teachers=cv.n_teachers, cost="realized", answered=ok,
                orders=ORDERS)
            di = _confident_data_independent(len(m), m.shape[1], se, sc, rule, bound, cv.n_teachers, delta,
                                             threshold=threshold)
            rows.append({"threshold": _th_label(threshold), "confidence": confidence, "sigma_c": float(sc),
                         "sigma_e": float(se), "answered_pct": 100.0 * ok.mean(), **prf(y[ok], rel.labels[ok]),
                         "epsilon": sp.epsilon, "epsilon_data_independent": di,
                         "epsilon_threshold_as_fixed": sp.details.get("epsilon_threshold_as_fixed", math.nan)})
    return pd.DataFrame(rows)


def _confident_data_independent(n: int, n_labels: int, sigma: float, sigma_c: float, rule: str, bound: str,
                                n_teachers: int, delta: float, top_n: int = 4, threshold: Any = None) -> float:
    """ε when every one of ``n`` queries pays the GNThreshold cap and the check's data-independent slope
    (:func:`pate_study.privacy.multilabel.confident_gnthreshold_data_independent`)."""
    return multilabel.confident_gnthreshold_data_independent(
        n_queries=n, n_labels=n_labels, sigma=sigma, sigma_confidence=sigma_c, delta=delta, n_teachers=n_teachers,
        bound=bound, rule=rule, top_n=top_n, threshold=threshold, orders=ORDERS).epsilon


def gnthreshold_audit(sigmas: Sequence[float], *, n_labels: int = 4, n_teachers: int = 5, threshold: float = 0.5,
                      delta: float = 1e-3, n_samples: int = 200_000, broken_factor: float = 0.5,
                      seed: int = 0) -> pd.DataFrame:
    """Empirical audits (:mod:`pate_study.privacy.audit`) of every release the notebook publishes, one query each,
    accountant's ε (improved conversion, δ) beside a 95 % Clopper–Pearson lower bound on the true ε:

    * fixed-threshold GNThreshold per σ_e (:func:`~pate_study.privacy.audit.audit_gnthreshold`: one of
      ``n_teachers`` teachers switches all ``n_labels`` labels on near th_e), as implemented and with noise
      ``broken_factor`` times too small (an audit that cannot catch that would be worthless);
    * GNThreshold with the adaptive threshold (Definition 11) per σ_e, against the thesis's accounting (threshold
      treated as fixed) and against the package's sound one, on the neighbouring pairs of the 1/T grid with the
      largest exact ε (the threshold jumps; :func:`~pate_study.privacy.audit.audit_gnthreshold_adaptive`);
    * the private adaptive-k release at the RDP of GNThreshold with that σ_e, as implemented and broken
      (:func:`~pate_study.privacy.audit.audit_adaptive_k`, 3 labels, 4 teachers: its exact profile needs a
      numerical integral per outcome).
    Few teachers and labels make one query's ε large enough to measure with ``n_samples`` draws."""
    rows = []

    def add(release, sigma, r, claim):
        rows.append({"release": release, "sigma_e": float(sigma), "claim": claim,
                     "mechanism": "as implemented" if r.noise_scale_factor == 1.0 else
                     f"broken: noise x{r.noise_scale_factor:g}", "delta": delta,
                     "claimed_epsilon": r.claimed_epsilon, "empirical_epsilon_lower": r.epsilon_lower,
                     "violation": r.violation, "neighbours": r.candidate, "event": r.event,
                     "n_samples": r.n_samples})

    for i, s in enumerate(sigmas):
        sd = int(seed) * 1000 + i
        for factor in (1.0, broken_factor):
            r = audit.audit_gnthreshold(sigma=float(s), n_labels=n_labels, n_teachers=n_teachers, threshold=threshold,
                                        delta=delta, n_samples=n_samples, noise_scale_factor=factor, seed=sd)
            add(f"GNThreshold th_e={threshold:g}", s, r, "vote-fraction bound")
        for claim in ("as_fixed", "sound"):
            r = audit.audit_gnthreshold_adaptive(float(s), n_labels=n_labels, n_teachers=n_teachers, delta=delta,
                                                 claim=claim, n_samples=n_samples, seed=sd)
            add("GNThreshold adaptive (Def. 11)", s, r,
                "thesis: threshold as fixed" if claim == "as_fixed" else "threshold sensitivity")
        for factor in (1.0, broken_factor):
            r = audit.audit_adaptive_k(float(s), delta=delta, n_samples=n_samples, noise_scale_factor=factor, seed=sd)
            add("adaptive-k (private)", s, r, "Gumbel k + Gaussian top-k RDP")
    return pd.DataFrame(rows)


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


def adaptive_rules(cv: CachedVotes, sigma_e: float = 0.3, *, n_account: int = 1000, delta: float = DELTA,
                   fixed_thresholds: Sequence[float] = (0.2, 0.4, 0.6), k_share: float = 0.25, seed: int = 0,
                   vote: str = "probability") -> pd.DataFrame:
    """Adaptive against fixed thresholds at equal ε on the same votes (first ``n_account`` pool queries).

    The budget is fixed-threshold GNThreshold's RDP at σ_e, n/(2T²σ_e²)·λ per query (vote-fraction bound,
    data-independent). At that RDP: GNThreshold with each fixed th_e (σ_e); Definition 11 with the noise that
    buys that RDP under its sound accounting (σ = √(n Δ_a²/(2 slope)), Δ_a = 1/T + 1); the private adaptive-k
    release (:mod:`pate_study.privacy.adaptive_k`, a share ``k_share`` of the RDP for the k choice). Beside
    them, Definition 11 at σ_e itself: its sound ε and the thesis's as-fixed number (not a guarantee).
    Macro P/R/F1 and micro F1 of the released labels against the pool's true labels; ε over ``n_account``
    queries (orders from 1.001)."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    y = cv.pool_labels[:n_account]
    n, k = m.shape
    t = cv.n_teachers
    slope = multilabel.multilabel_slope(sigma_e, k, "vote_fraction", t)
    eps_budget = multilabel.gnthreshold_epsilon(sigma=sigma_e, delta=delta, threshold=0.5, n_queries=n, n_labels=k,
                                                bound="vote_fraction", n_teachers=t, orders=ORDERS).epsilon
    rows = []

    def add(rule, sigma, labels, eps, as_fixed=math.nan, extra=""):
        rows.append({"rule": rule, "sigma": float(sigma), **prf(y, labels),
                     "labels_per_query": float(labels.sum(axis=1).mean()), "epsilon": eps,
                     "epsilon_threshold_as_fixed": as_fixed, "budget_epsilon": eps_budget, "note": extra})

    for i, th in enumerate(fixed_thresholds):
        rel = aggregators.gnthreshold(m, float(th), sigma_e, np.random.default_rng([seed, 10, i]))
        add(f"fixed th_e={th:g}", sigma_e, rel.labels, eps_budget)
    sigma_sound = math.sqrt(k * multilabel.adaptive_label_sensitivity("vote_fraction", t) ** 2 / (2.0 * slope))
    for j, (sig, note) in enumerate(((sigma_e, "thesis's σ_e: the sound ε is far above the budget"),
                                     (sigma_sound, "σ that buys the budget under the sound accounting"))):
        rel = aggregators.gnthreshold(m, "adaptive", sig, np.random.default_rng([seed, 20, j]))
        spent = multilabel.gnthreshold_epsilon(sigma=sig, delta=delta, threshold="adaptive", n_queries=n, n_labels=k,
                                               bound="vote_fraction", n_teachers=t, orders=ORDERS)
        add("Definition 11 (adaptive th_e)", sig, rel.labels, spent.epsilon,
            spent.details["epsilon_threshold_as_fixed"], note)
    sig_k, b = adaptive_k.adaptive_k_params(slope, k, t, k_share=k_share)
    rel = adaptive_k.adaptive_k_release(m, sig_k, b, np.random.default_rng([seed, 30]))
    eps_k = adaptive_k.adaptive_k_epsilon(sigma=sig_k, gumbel_scale=b, delta=delta, n_teachers=t, n_queries=n,
                                          n_labels=k, orders=ORDERS).epsilon
    add("adaptive-k (private, after Zhu & Wang 2022)", sig_k, rel.labels, eps_k,
        extra=f"Gumbel scale {b:.3g} for k (share {k_share:g} of the RDP), σ {sig_k:.3g} for the top-k set")
    return pd.DataFrame(rows)


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


def q_histogram(cv: CachedVotes, sigma_e: float, thresholds: Sequence[Any] = (0.4, "adaptive"), *,
                confidence: float = 0.6, sigma_c: float = 0.6, n_account: int = 1000, delta: float = DELTA,
                bound: str = "vote_fraction", bucket_edges: Sequence[float] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0),
                rule: str = "max", vote: str = "probability") -> pd.DataFrame:
    """Figs 5.16, A.12, A.13: queries per log bucket of q̃ (Theorem 13) and the average ε of 1,000 queries
    of a bucket's kind (the bucket's mean per-query RDP curve × 1,000, converted), without and with the
    confidence check (its *expected* cost, as a per-bucket average has no single run: the column says so)."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    edges = np.concatenate([[0.0], np.asarray(bucket_edges, dtype=float)])
    rows = []
    for th in thresholds:
        logq = multilabel.multilabel_logq(m, th, sigma_e)
        which = np.clip(np.searchsorted(edges, np.exp(logq), side="left") - 1, 0, len(edges) - 2)
        for b in range(len(edges) - 1):
            sel = which == b
            row = {"threshold": _th_label(th), "sigma_e": sigma_e, "q_low": edges[b], "q_high": edges[b + 1],
                   "n_queries": int(sel.sum()), "epsilon_1000": np.nan, "epsilon_1000_confident_expected": np.nan}
            if sel.any():
                k = int(sel.sum())
                reps = max(1, int(math.ceil(1000 / k)))
                mb = np.tile(m[sel], (reps, 1))[:1000]  # 1,000 queries with the bucket's mix of votes
                row["epsilon_1000"] = multilabel.gnthreshold_epsilon(
                    sigma=sigma_e, delta=delta, threshold=th, fractions=mb, bound=bound,
                    n_teachers=cv.n_teachers, orders=ORDERS).epsilon
                row["epsilon_1000_confident_expected"] = multilabel.confident_gnthreshold_epsilon(
                    fractions=mb, threshold=th, sigma=sigma_e, confidence_threshold=confidence,
                    sigma_confidence=sigma_c, delta=delta, rule=rule, bound=bound, n_teachers=cv.n_teachers,
                    cost="expected", orders=ORDERS).epsilon
            rows.append(row)
    return pd.DataFrame(rows)


def bounds_side_by_side(cv: CachedVotes, threshold: Any, sigma_e: float, *, n_account: int = 1000,
                        delta: float = DELTA, confidence: float | None = None, sigma_c: float | None = None,
                        rule: str = "max", seed: int = 0, vote: str = "probability") -> pd.DataFrame:
    """Every multi-label bound of :data:`pate_study.privacy.multilabel.BOUNDS` on the same votes (and, with
    a check, the same realised answered set), each beside its data-independent value, with the leaks."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    kw: dict = {}
    if confidence is not None:
        rel = aggregators.confident_gnthreshold(m, threshold, sigma_e, confidence, sigma_c,
                                                np.random.default_rng(seed), rule=rule)
        kw = dict(confidence_threshold=confidence, sigma_confidence=sigma_c, rule=rule, cost="realized",
                  answered=rel.answered)
    res = multilabel.multilabel_bounds(fractions=m, threshold=threshold, sigma=sigma_e, delta=delta,
                                       n_teachers=cv.n_teachers, orders=ORDERS, **kw)
    rows = []
    for r in res:
        d = r.to_dict()
        d["bound_validity"] = r.data_dependent.details.get("bound_validity", "")
        d["epsilon_threshold_as_fixed"] = r.data_dependent.details.get("epsilon_threshold_as_fixed", math.nan)
        d["uncharged_leaks"] = "; ".join(d["uncharged_leaks"])
        rows.append({"threshold": _th_label(threshold), "sigma_e": sigma_e, "confidence": confidence, **d})
    return pd.DataFrame(rows)


def table_5_4_privacy(cv: CachedVotes, n_queries: int, threshold: Any, confidence: float | None, *,
                      sigma_e: float = 0.3, sigma_c: float = 0.6, delta: float = DELTA, bound: str = "vote_fraction",
                      rule: str = "max", seed: int = 0, vote: str = "probability") -> dict:
    """One Table 5.4 configuration: the released labels of the first ``n_queries`` pool queries and
    their privacy: ε data-dependent (realised) and data-independent (``bound``), Theorem 12's
    data-independent ε, q average (Theorem 13), answered mask and labels (for the student).
    Orders from 1.001 (:data:`ORDERS`); ``eps_thesis_grid`` is the data-dependent ε on the thesis's grid
    (first order 2, what its printed values are compared with); for the adaptive threshold ε charges the
    threshold's sensitivity and ``eps_threshold_as_fixed`` is the thesis's accounting (not a guarantee)."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_queries]
    gen = np.random.default_rng(seed)
    q = float(np.exp(multilabel.multilabel_logq(m, threshold, sigma_e)).mean())
    thm12 = multilabel.gnthreshold_epsilon(sigma=sigma_e, delta=delta, threshold=threshold, n_queries=len(m),
                                           n_labels=m.shape[1], bound="theorem12", n_teachers=cv.n_teachers,
                                           orders=ORDERS).epsilon
    if confidence is None:
        rel = aggregators.gnthreshold(m, threshold, sigma_e, gen)
        fn, kw = multilabel.gnthreshold_epsilon, dict(fractions=m)
    else:
        rel = aggregators.confident_gnthreshold(m, threshold, sigma_e, confidence, sigma_c, gen, rule=rule)
        fn, kw = multilabel.confident_gnthreshold_epsilon, dict(
            fractions=m, confidence_threshold=confidence, sigma_confidence=sigma_c, rule=rule, cost="realized",
            answered=rel.answered)
    kw.update(sigma=sigma_e, delta=delta, threshold=threshold, bound=bound, n_teachers=cv.n_teachers)
    spent = fn(**kw, orders=ORDERS)
    dd, di = spent.epsilon, (_epsilons(m, threshold, sigma_e, cv.n_teachers, bound, delta)[1] if confidence is None
                             else _confident_data_independent(len(m), m.shape[1], sigma_e, sigma_c, rule, bound,
                                                              cv.n_teachers, delta, threshold=threshold))
    return {"n_samples": n_queries, "th_e": _th_label(threshold),
            "th_c": "None" if confidence is None else f"{confidence:g}", "eps_data_dependent": dd,
            "order": spent.order, "eps_thesis_grid": thesis_grid(fn, **kw).epsilon,
            "eps_threshold_as_fixed": spent.details.get("epsilon_threshold_as_fixed", math.nan),
            "eps_data_independent": di, "eps_theorem12_data_independent": thm12, "q_average": q,
            "answered_pct": 100.0 * rel.answered.mean(), "answered": rel.answered, "labels": rel.labels}


# ----------------------------------------------------------------------------- beyond the thesis
def multiwinner_sweep(cv: CachedVotes, sigmas_e: Sequence[float], *, n_account: int = 1000, delta: float = DELTA,
                      tau: float = 2.0, vote_threshold: float = 0.5, gnthreshold_th: Any = 0.4,
                      seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """GNThreshold and the three mechanisms of Dziedzic et al. 2023 on the same teachers, same δ and n.

    Noise: σ_e in vote-fraction units, i.e. σ = σ_e·T on vote counts for Binary, τ and powerset voting
    (the same noise relative to the ensemble). Teachers' 0/1 votes at ``vote_threshold``; τ voting's
    release threshold T/2 (majority), Binary voting's is the 2-class argmax (majority). Per mechanism and
    σ_e: macro/micro F1 of the released labels on the pool's true labels, ε data-dependent and
    data-independent. Returns the table and the released labels ``{(mechanism, σ_e): bool[n, L]}``.
    """
    t = cv.n_teachers
    b = cv.pool_probabilities[:, :n_account] >= vote_threshold
    y = cv.pool_labels[:n_account]
    m = vote_fractions(cv.pool_probabilities[:, :n_account])
    p = multiwinner.positive_votes(b)
    sums = multiwinner.clip_votes(b, tau)
    set_counts, _ = multiwinner.powerset_counts(b)
    n, k = y.shape
    rows, released = [], {}
    for i, se in enumerate(sigmas_e):
        s = se * t
        gen = np.random.default_rng([seed, i])
        out = {}
        out["gnthreshold"] = (aggregators.gnthreshold(m, gnthreshold_th, se, gen).labels,
                              *_epsilons(m, gnthreshold_th, se, t, "vote_fraction", delta))
        rel = multiwinner.binary_pate(p, t, s, gen)
        out["binary"] = (rel.labels,
                         multiwinner.binary_pate_epsilon(sigma=s, delta=delta, positive_votes=p, n_teachers=t, orders=ORDERS).epsilon,
                         multiwinner.binary_pate_epsilon(sigma=s, delta=delta, n_queries=n, n_labels=k, orders=ORDERS).epsilon)
        rel = multiwinner.tau_pate(sums, t / 2.0, s, gen)
        tau_dd = multiwinner.tau_pate_epsilon(tau=tau, sigma=s, delta=delta, clipped_sums=sums, threshold=t / 2.0,
                                              orders=ORDERS)
        out["tau"] = (rel.labels, tau_dd.epsilon,
                      multiwinner.tau_pate_epsilon(tau=tau, sigma=s, delta=delta, n_queries=n, orders=ORDERS).epsilon)
        rel = multiwinner.powerset_pate(b, s, gen)
        out["powerset"] = (rel.labels,
                           multiwinner.powerset_pate_epsilon(sigma=s, delta=delta, set_counts=set_counts,
                                                             n_labels=k, orders=ORDERS).epsilon,
                           multiwinner.powerset_pate_epsilon(sigma=s, delta=delta, n_queries=n, orders=ORDERS).epsilon)
        for name, (labels, dd, di) in out.items():
            released[(name, float(se))] = labels
            rows.append({"mechanism": name, "sigma_e": float(se), "sigma_votes": s, **prf(y, labels),
                         "epsilon": dd, "epsilon_data_independent": di,
                         "n_capped": tau_dd.details.get("n_capped") if name == "tau" else None})
    return pd.DataFrame(rows), released


# ----------------------------------------------------------------------------- findings
def findings(sweep: pd.DataFrame, t54: pd.DataFrame, mw: pd.DataFrame, bounds: pd.DataFrame,
             rules: pd.DataFrame | None = None, aud: pd.DataFrame | None = None) -> list[str]:
    """Statements computed from the notebook's own tables (no number typed in)."""
    out = []
    ad = sweep[(sweep["threshold"] == "adaptive") & (sweep["sigma_e"] > 0)]
    if len(ad):
        r = ad.iloc[(ad["sigma_e"] - 0.3).abs().argmin()]
        out.append(f"Definition 11 (adaptive th_e) at σ_e={r['sigma_e']:g}: sound ε {r['epsilon']:.4g} (the threshold "
                   f"charged by its own sensitivity) against {r['epsilon_threshold_as_fixed']:.4g} from the thesis's "
                   "accounting, which treats the threshold as fixed and is not a guarantee")
    if rules is not None and len(rules):
        budget = float(rules["budget_epsilon"].iloc[0])
        eq = rules[np.isclose(rules["epsilon"], budget, rtol=1e-6) | (rules["epsilon"] < budget)]
        ranked = ", ".join(f"{r.rule}{'' if r.rule.startswith('fixed') or r.rule.startswith('adaptive-k') else f' σ={r.sigma:.3g}'} "
                           f"F1 {r.f1:.3f}" for r in eq.sort_values("f1", ascending=False).itertuples())
        out.append(f"at equal ε {budget:.1f} (δ={DELTA:g}, {len(rules) and 'same votes'}): {ranked}")
    if aud is not None and len(aud):
        caught = aud[aud["violation"].astype(bool)]
        out.append("audit: claims violated by the empirical lower bound: " + ("; ".join(
            f"{r.release} ({r.claim}, {r.mechanism}, σ_e={r.sigma_e:g}): {r.empirical_epsilon_lower:.2f} > "
            f"{r.claimed_epsilon:.2f}" for r in caught.itertuples()) or "none"))
    s = sweep[sweep["sigma_e"] > 0].copy()
    s["ratio"] = s["epsilon"] / s["epsilon_data_independent"]
    by = s.groupby("threshold")["ratio"].agg(["min", "max"])
    for th, r in by.iterrows():
        out.append(f"GNThreshold th_e={th}: data-dependent / data-independent ε (vote-fraction bound) ranges "
                   f"{r['min']:.3f}–{r['max']:.3f} over the σ_e grid"
                   + (" — no saving" if r["min"] > 0.999 else ""))
    fixed = bounds[bounds["threshold"] != "adaptive"]
    never = list(dict.fromkeys(fixed[~fixed["theorem6_possible"].astype(bool)]["bound"]))
    if never:
        out.append(f"bounds for which Theorem 6 can never apply at this σ with a fixed th_e (data-dependent = "
                   f"data-independent by construction): {', '.join(never)}")
    if len(t54) and "eps_thesis_grid" in t54:
        fixed54 = t54[t54["th_e"] != "adaptive"]
        ratio = fixed54["eps_data_dependent"] / fixed54["eps_thesis_grid"]
        out.append(f"orders: Table 5.4's best orders lie at {t54['order'].min():.3f}–{t54['order'].max():.3f}, below "
                   f"the thesis grid's first order 2; there ε is {ratio.min():.2f}–{ratio.max():.2f}× the value on the "
                   "thesis grid (fixed th_e)")
    if len(t54):
        best = t54.loc[t54["map"].idxmax()]
        low = t54.loc[t54["eps_data_dependent"].idxmin()]
        out.append(f"students: best mAP {best['map']:.3f} (n={best['n_samples']}, th_e={best['th_e']}, "
                   f"th_c={best['th_c']}, ε={best['eps_data_dependent']:.1f}); lowest ε "
                   f"{low['eps_data_dependent']:.1f} with mAP {low['map']:.3f}")
    if len(mw):
        sub = mw.loc[mw.groupby("mechanism")["f1"].idxmax()]
        for _, r in sub.sort_values("f1", ascending=False).iterrows():
            out.append(f"{r['mechanism']}: best macro F1 {r['f1']:.3f} at σ_e={r['sigma_e']:g} "
                       f"(ε {r['epsilon']:.1f}, data-independent {r['epsilon_data_independent']:.1f})")
    return out


#: the thesis's teacher pools and class counts (Table 4.1), per subset.
THESIS_SCALE = {161: "~274k crawled clips (153 classes, not listed)", 15: "76,656 crawled clips (15 classes, not listed)"}


def scale_verdict(data: str, what: str, *, teacher_pool: int | None = None, n_labels: int | None = None,
                  extra: str = "") -> Verdict:
    """Verdict for numbers of our embedding teachers beside the thesis's ResNet teachers: the same definitions
    on different teachers (embedding MLPs on ``teacher_pool`` bal_train clips, ``n_labels`` classes, vs ImageNet
    ResNets on log-Mel of the thesis's teacher pool of the same subset, Table 4.1), ensembles scored on eval-clip
    queries."""
    if data == "synthetic":
        return not_comparable(f"{what}: synthetic stand-in teachers, not Audio Set")
    pool = f"{teacher_pool:,}" if teacher_pool else "a few thousand"
    labels = n_labels or 161
    thesis = THESIS_SCALE.get(labels, THESIS_SCALE[161] if labels > 15 else THESIS_SCALE[15])
    return not_comparable(f"{what}: embedding-MLP teachers on {pool} released bal_train embeddings ({labels} classes) "
                          f"vs the thesis's ImageNet ResNets on log-Mel of {thesis}; same definitions, different "
                          "teachers, data and scale" + (f"; {extra}" if extra else ""),
                          rule="same quantity, different data and teachers")


# ----------------------------------------------------------------------------- claims that are comparable
def _claim(claim: str, thesis: str, ours: str, holds: bool | None, rule: str, kind: str = "real") -> dict:
    if kind == "synthetic":
        v = not_comparable("synthetic stand-in teachers: a direction on them says nothing about Audio Set", rule=rule)
    elif holds is None:
        v = not_comparable(f"not evaluable on our tables: {ours}", rule=rule)
    else:
        v = agrees(rule=rule) if holds else differs(f"on our votes: {ours}", rule=rule)
    return {"claim": claim, "thesis": thesis, "ours": ours, **v.as_record()}


def ensemble_claims(t51: pd.DataFrame, t52: pd.DataFrame, t53: pd.DataFrame, kind: str = "real") -> pd.DataFrame:
    """The thesis's qualitative readings of Tables 5.1-5.3 (§5.2, §5.5), each checked on our tables: the
    directions are comparable even where the values are not (different teachers and scale); on the synthetic
    stand-in (``kind="synthetic"``) every claim is *not comparable*."""
    base = t51[t51["n_teachers"] == "baseline"]
    ens = t51[t51["n_teachers"] != "baseline"].copy()
    ens["t"] = ens["n_teachers"].astype(int)
    ens = ens.sort_values("t")
    rows = []
    if len(base) and len(ens):
        b_f1, b_map = float(base["ensemble_f1"].iloc[0]), float(base["map_raw"].iloc[0])
        best_f1, best_map = float(ens["ensemble_f1"].max()), float(ens["map_raw"].max())
        rows.append(_claim("no ensemble beats the single model on all data (best-threshold F1 and raw mAP)",
                           "baseline F1 0.256 / mAP 0.268 above every ensemble (Table 5.1)",
                           f"baseline F1 {b_f1:.3f} / mAP {b_map:.3f}; best ensemble F1 {best_f1:.3f} / mAP {best_map:.3f}",
                           best_f1 <= b_f1 and best_map <= b_map,
                           "best ensemble F1 <= baseline F1 and best ensemble raw mAP <= baseline raw mAP", kind))
        rows.append(_claim("raw mAP falls as teachers get more and smaller partitions",
                           "0.219 > 0.199 > 0.186 for 10 > 20 > 50 teachers",
                           " > ".join(f"{m:.3f}" for m in ens["map_raw"]) + f" for {', '.join(map(str, ens['t']))}",
                           bool(np.all(np.diff(ens["map_raw"].to_numpy(float)) <= 0)),
                           "raw mAP non-increasing in the number of teachers", kind))
        beats = (ens["ensemble_f1"] > ens["teacher_avg_f1"]).to_numpy()
        rows.append(_claim("the ensemble beats its average teacher (F1 at the ensemble's best threshold)",
                           "0.228 vs 0.167, 0.204 vs 0.136, 0.173 vs 0.112",
                           ", ".join(f"{a:.3f} vs {b:.3f}" for a, b in zip(ens["ensemble_f1"], ens["teacher_avg_f1"])),
                           bool(beats.all()), "ensemble F1 > average teacher F1 for every teacher count", kind))
    conf = t53[(t53["rule"] == "max") & (t53["threshold"] == "0.2")].set_index("n_teachers")
    plain = t52[t52["threshold"] == "0.2"].set_index("n_teachers")["f1"]
    gains = {t: float(conf.loc[t, "f1_conf06"] / plain.loc[t]) for t in conf.index if t in plain.index and plain.loc[t] > 0}
    ok = {t: g for t, g in gains.items() if np.isfinite(g)}
    ours = ", ".join(f"{t}: {100 * (g - 1):+.0f} %" for t, g in ok.items()) or "no query passes the check"
    rows.append(_claim("the confidence check (th_c = 0.6) raises F1 on the answered queries (th_e = 0.2)",
                       "+35 % (10 teachers) to +64 % (50 teachers), Table 5.3", ours,
                       all(g > 1 for g in ok.values()) if ok else None,
                       "F1 with the check > F1 without, per teacher count", kind))
    return pd.DataFrame(rows)


def saving_contrast_verdict(sweep: pd.DataFrame, n_labels: int, tol: float = 0.01,
                            kind: str = "real") -> tuple[Verdict, dict]:
    """Fig 5.13's reading: at th_e = 0.2 the data-dependent ε equals the data-independent one, while
    th_e = 0.4 and adaptive save (§5.3). Checked on our sweep (smallest ratio over the σ_e grid per th_e)."""
    s = sweep[sweep["sigma_e"] > 0]
    ratio = (s["epsilon"] / s["epsilon_data_independent"]).groupby(s["threshold"]).min().to_dict()
    rule = f"ratio >= {1 - tol:g} at th_e=0.2 and < {1 - tol:g} at th_e=0.4 and adaptive (min over σ_e)"
    need = ("0.2", "0.4", "adaptive")
    if not all(k in ratio for k in need):
        return not_comparable(f"the sweep lacks thresholds {[k for k in need if k not in ratio]}", rule=rule), ratio
    if kind == "synthetic":
        return not_comparable("synthetic stand-in votes", rule=rule), ratio
    none_at_02 = ratio["0.2"] >= 1 - tol
    saves = {k: ratio[k] < 1 - tol for k in ("0.4", "adaptive")}
    if none_at_02 and all(saves.values()):
        return agrees(rule=rule), ratio
    parts = "; ".join(f"th_e={k}: smallest ratio {ratio[k]:.3f}" for k in need)
    if not saves["adaptive"]:
        parts += (". Adaptive: the threshold is computed from the private votes, so the sound accounting charges its "
                  "sensitivity (per label 1/T + 1, multilabel.adaptive_threshold_slope), under which Theorem 6 never "
                  "applies; the thesis's saving comes from accounting the threshold as if it were fixed")
    if not saves["0.4"]:
        parts += (f". q̃ (Theorem 13) multiplies {n_labels} per-label factors Φ(|m_i − th|/σ_e), so it stays near 1 "
                  "unless nearly every label's vote is far from th_e, and Theorem 6 then saves nothing")
    return differs(parts, rule=rule), ratio


def q_average_verdict(t54: pd.DataFrame, *, sigma_e: float = 0.3, n_labels_thesis: int = 153) -> tuple[Verdict, pd.DataFrame]:
    """Table 5.4's q average beside ours, and beside the smallest q̃ Theorem 13 allows at σ_e on vote fractions
    over the thesis's 153 labels (:func:`pate_study.privacy.multilabel.min_logq`)."""
    paper = pd.DataFrame(published("muschiol2021-table5.4")["rows"])
    rows = []
    for th, sub in paper.groupby("th_e", sort=False):
        threshold = th if th == "adaptive" else float(th)
        floor = math.exp(multilabel.min_logq(threshold, sigma_e, n_labels_thesis))
        ours = t54[t54["th_e"] == th]["q_average"]
        rows.append({"th_e": th, "thesis_q_average_min": float(sub["q_average"].min()),
                     "floor_153_labels": floor, "ours_q_average_min": float(ours.min()) if len(ours) else np.nan,
                     "thesis_below_floor": bool(sub["q_average"].min() < floor)})
    table = pd.DataFrame(rows)
    rule = "printed q average >= the smallest q̃ that Theorem 13 can give at σ_e = 0.3 on vote fractions (153 labels)"
    bad = table[table["thesis_below_floor"]]
    if len(bad):
        return differs("the thesis's q averages " + ", ".join(
            f"{r.thesis_q_average_min:.3f} (th_e={r.th_e}, floor {r.floor_153_labels:.3f})" for r in bad.itertuples())
            + " lie below what Theorem 13 allows with σ_e = 0.3 on vote fractions in [0, 1]: its noise there cannot "
            "be on that scale, so its ε and q̃ are not the quantity ours are", rule=rule), table
    return agrees(rule=rule), table


def adaptive_privacy_verdict(t54: pd.DataFrame, kind: str = "real") -> Verdict:
    """Fig 5.19's reading (§5.4): "the adaptive threshold mechanism allows for much stronger privacy guarantees
    than similar aggregation configurations". A direction any scale can test: per (n, th_c), the adaptive row's
    ε divided by the fixed th_e rows' smallest ε, with the adaptive threshold charged by its own sensitivity."""
    rule = "ε adaptive / smallest ε of a fixed th_e at the same (n, th_c) < 1 for every (n, th_c)"
    ad = t54[t54["th_e"] == "adaptive"]
    fixed = t54[t54["th_e"] != "adaptive"]
    if ad.empty or fixed.empty:
        return not_comparable("the table lacks adaptive or fixed-threshold rows", rule=rule)
    if kind == "synthetic":
        return not_comparable("synthetic stand-in votes", rule=rule)
    best = fixed.groupby(["n_samples", "th_c"])["eps_data_dependent"].min()
    ratio = {f"n={n}, th_c={c}": float(e / best.loc[(n, c)]) for n, c, e in
             zip(ad["n_samples"], ad["th_c"], ad["eps_data_dependent"]) if (n, c) in best.index}
    text = "; ".join(f"{k}: {v:.3g}×" for k, v in ratio.items())
    if all(v < 1 for v in ratio.values()):
        return agrees(rule=rule)
    return differs(f"{text}. The adaptive threshold is computed from the private votes and one teacher can move it "
                   "across [0, 1]; charged by that sensitivity its ε is far larger, not smaller. The thesis's "
                   "'stronger guarantee' treats the threshold as fixed (eps_threshold_as_fixed, not a guarantee)",
                   rule=rule)


def student_claim(best_student_map: float, single_model_map: float, kind: str = "real") -> Verdict:
    """The thesis's student reading (§5.4, Table 5.4 vs Table 5.1): the best student stays below the single
    non-private model (0.104 vs 0.268)."""
    rule = "best student mAP < single model mAP (test set)"
    if kind == "synthetic":
        return not_comparable("synthetic stand-in teachers", rule=rule)
    if best_student_map < single_model_map:
        return agrees(rule=rule)
    return differs(f"best student mAP {best_student_map:.3f} >= single model {single_model_map:.3f}", rule=rule)


def confidence_claims(sweep: pd.DataFrame, fixed: pd.DataFrame, adaptive: pd.DataFrame, sigma_c: float = 0.6,
                      kind: str = "real") -> pd.DataFrame:
    """Figs 5.14/5.15's readings (§5.3), per σ_e shared by the sweeps, at ``sigma_c``: the check (th_e = 0.4,
    th_c = 0.6) raises F1 (thesis: doubles it) and costs more ε (about 1.5×) than GNThreshold without it;
    with the adaptive threshold the confident mechanism costs less ε than with th_e = 0.4 (about half).
    Our ε is the realised one (GNThreshold charged on answered queries only), as in the thesis's §5.3 text."""
    plain = sweep[(sweep["threshold"] == "0.4") & (sweep["sigma_e"] > 0)].set_index("sigma_e")
    pick = lambda c: c[np.isclose(c["sigma_c"], sigma_c)].set_index("sigma_e")  # noqa: E731
    conf, conf_ad = pick(fixed), pick(adaptive)
    common = sorted(set(plain.index) & set(conf.index) & set(conf_ad.index))
    if not common:
        return pd.DataFrame([_claim("confidence sweeps", "", "no common σ_e", None, "", kind)])
    f1 = conf.loc[common, "f1"].to_numpy(float) / plain.loc[common, "f1"].to_numpy(float)
    eps = conf.loc[common, "epsilon"].to_numpy(float) / plain.loc[common, "epsilon"].to_numpy(float)
    ad = conf_ad.loc[common, "epsilon"].to_numpy(float) / conf.loc[common, "epsilon"].to_numpy(float)
    fmt = lambda r: ", ".join(f"σ_e={s:g}: {x:.2f}×" for s, x in zip(common, r))  # noqa: E731
    finite = lambda r: bool(np.all(np.isfinite(r))) or None  # noqa: E731
    out = pd.DataFrame([
        _claim("Fig 5.14: the check raises F1 (th_e = 0.4, th_c = 0.6)", "F1 about doubles", fmt(f1),
               bool(np.all(f1 > 1)) if finite(f1) else None, "F1 with check / without > 1 at every σ_e", kind),
        {"claim": "Fig 5.14: the check costs more ε", "thesis": "ε about 1.5× higher", "ours": fmt(eps),
         **not_comparable("different quantities: the thesis adds the check's cost to every query's GNThreshold cost "
                          "(Table 5.4: ε with a check > without), ours is the realised cost, GNThreshold charged only on "
                          "the answered queries; charged on every query, ε with the check exceeds ε without by "
                          "construction (the check's slope is added)", rule="ε with check / without > 1").as_record()},
        _claim("Fig 5.15: adaptive th_e makes the confident mechanism cheaper than th_e = 0.4", "about half the ε",
               fmt(ad), bool(np.all(ad < 1)) if finite(ad) else None, "ε adaptive / ε th_e=0.4 < 1 at every σ_e", kind),
    ])
    if kind != "synthetic" and finite(ad) and not np.all(ad < 1):
        out.loc[2, "verdict_reason"] = (f"on our votes: {fmt(ad)}; the adaptive threshold is charged by its own "
                                        "sensitivity (it is computed from the private votes), which the thesis's "
                                        "accounting leaves out; treated as fixed (not a guarantee) both thresholds pay "
                                        "about the same, since the max-rule check does not depend on th_e and q̃ ≈ 1")
    return out
