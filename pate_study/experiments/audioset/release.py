"""Audio Set releases (Muschiol 2021 §4.2, §5.2-5.4): noise-free and noisy aggregation of the votes, the
confidence check and their accounting, swept as the thesis's figures do (Figs 5.13-5.15, A.7-A.11). Their privacy
tables and audits (q histograms, the bounds side by side, Table 5.4) are in
:mod:`pate_study.experiments.audioset.release_privacy`; beyond the thesis (Binary, τ- and powerset PATE, Dziedzic et
al. 2023, and the frontier) in :mod:`pate_study.experiments.audioset.release_frontier`.

Averaged vote m_i = (1/T) Σ_t f_t,i (Definition 10 averages probabilities; ``vote="binary"`` averages 0/1 votes
at 0.5 instead). Noise-free tables (σ = 0) release c_i = [m_i > th] directly (the aggregators of
:mod:`pate_study.privacy.aggregators` need σ > 0). Noisy sweeps (Figs 5.13-5.15, A.7-A.11) call
:func:`~pate_study.privacy.aggregators.gnthreshold` / ``confident_gnthreshold`` and the accountants of
:mod:`pate_study.privacy.multilabel` on the **first ``n_account`` queries** (1,000, as the thesis). "Ours" uses
the bound ``"vote_fraction"`` (per-label sensitivity 1/T of vote fractions: the one bound whose Theorem 6 can
apply at the thesis's σ; see that module); every bound is also shown side by side.
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.votes import CachedVotes, vote_fractions
from pate_study.learning import metrics
from pate_study.privacy import aggregators, multilabel
from pate_study.privacy.accounting import OrderAtGridEdgeWarning, PrivacySpent
from pate_study.privacy.options import Accounting, Bound, Charge, ConfidenceCheck, Cost
from pate_study.reporting import uncertainty as unc

logger = logging.getLogger(__name__)

THRESHOLDS: tuple[Any, ...] = ("adaptive", 0.2, 0.4, 0.6)


CONFIDENCE_LEVELS = (0.4, 0.6)


DELTA = 1e-8


#: every multi-label ε here is optimised over orders from 1.001 (:func:`multilabel.extended_orders`): at the
#: thesis's σ_e the best order lies below 2, the first order of Papernot et al. 2018's grid
ORDERS = multilabel.extended_orders()
#: The multi-label accountants' orders and conversion here (:data:`ORDERS`, basic conversion, Muschiol Eq. 2.10).
ACCOUNTING = Accounting(orders=ORDERS)
#: The thesis's order grid (first order 2), for the comparison with its printed numbers.
THESIS_ACCOUNTING = Accounting(orders="paper2018")


def _thresholds(m: np.ndarray, threshold: Any) -> np.ndarray:
    if isinstance(threshold, str):
        return aggregators.adaptive_thresholds(m)
    return np.full(len(m), float(threshold))


def noise_free_release(m: np.ndarray, threshold: Any) -> np.ndarray:
    """GNThreshold with σ = 0 (Definition 10/11): c_i = [m_i > th], th fixed or adaptive."""
    return m > _thresholds(m, threshold)[:, None]


def noise_free_confident(
    m: np.ndarray, threshold: Any, confidence: float, rule: str = "max", top_n: int = 4
) -> np.ndarray:
    """Answered mask of the confidence check with σ_c = 0: ``"max"``: max_i m_i ≥ th_c (what the
    experiments describe); ``"printed"``: all top-n values of m − th_e ≥ th_c (Algorithm 3 as printed)."""
    if rule == "max":
        return m.max(axis=1) >= confidence
    if rule != "printed":
        raise ValueError(f"rule={rule!r}: expected 'max' or 'printed'")
    top = -np.sort(-m, axis=1)[:, : min(top_n, m.shape[1])] - _thresholds(m, threshold)[:, None]
    return np.all(top >= confidence, axis=1)


def prf(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """Macro P/R/F1 (Muschiol Def. 2: mean of per-class values) and micro F1, via :mod:`pate_study.learning.metrics`."""
    if len(y_true) == 0:
        return {"precision": float("nan"), "recall": float("nan"), "f1": float("nan"), "micro_f1": float("nan")}
    r = metrics.multilabel_report(y_true, y_pred)
    return {
        "precision": r["macro_precision"],
        "recall": r["macro_recall"],
        "f1": r["macro_f1"],
        "micro_f1": r["micro_f1"],
    }


#: the per-draw columns a sweep carries for the verdicts (arrays: ``[R]`` per draw, ``[B, R]`` per pool resample;
#: ``draw_replicate`` ``[R]``: the replicate ensemble of each draw, ``epsilon_replicates`` ``[G]``: each ensemble's ε,
#: :func:`replicate_sweeps`); :func:`summary` drops them for display and tables.
DRAW_COLUMNS = (
    "f1_draws",
    "f1_boot",
    "f1_present_draws",
    "f1_present_boot",
    "epsilon_draws",
    "draw_replicate",
    "epsilon_replicates",
)
#: the columns :func:`replicate_sweeps` joins along the draws (axis -1) instead of averaging
_DRAW_ARRAYS = ("f1_draws", "f1_boot", "f1_present_draws", "f1_present_boot", "epsilon_draws")


def draws_per_replicate(n_draws: int, n_replicates: int) -> int:
    """Release-noise draws per replicate ensemble when a sweep point has ``n_draws`` (``release_sweeps["draws"]``)
    spread over ``n_replicates`` ensembles: ``ceil(n_draws / G)`` (at least 1), so the replicates cost about what
    one ensemble's draws cost and every ensemble has its own draws (the draws are nested in the ensembles)."""
    if int(n_draws) != n_draws or n_draws < 1 or n_replicates < 1:
        raise ValueError(f"n_draws={n_draws!r}, n_replicates={n_replicates!r}: expected positive integers")
    return max(1, -(-int(n_draws) // int(n_replicates)))


def replicate_sweeps(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """One sweep from the same sweep run on every replicate ensemble (``frames``: the same rows in the same order,
    from :func:`noise_sweep` or :func:`confidence_sweep`): the per-draw arrays joined along the draws with
    ``draw_replicate`` (the ensemble of each draw) beside, so the verdicts read the draws as nested in the ensembles
    (:func:`.release_claims.sweeps.release_ratio_estimate`); ε per ensemble in ``epsilon_replicates`` (it depends on
    the votes), its mean in ``epsilon``; every other number the mean over the ensembles; ``f1`` / ``f1_present``
    the mean of the ensembles' means with the t-interval over the ensembles in ``*_low`` / ``*_high``
    (``n_replicates``). One frame: returned as it is, with ``draw_replicate`` all 0."""
    frames = [f.reset_index(drop=True) for f in frames]
    first = frames[0]
    for f in frames[1:]:
        if len(f) != len(first) or list(f.columns) != list(first.columns):
            raise ValueError("frames: expected the same sweep (rows and columns) for every replicate ensemble")
    rows = []
    for i in range(len(first)):
        reps = [f.iloc[i] for f in frames]
        row = {}
        for c in first.columns:
            values = [r[c] for r in reps]
            if c in _DRAW_ARRAYS:
                row[c] = np.concatenate([np.asarray(v, float) for v in values], axis=-1)
            elif pd.api.types.is_numeric_dtype(first[c]) and not isinstance(values[0], np.ndarray):
                row[c] = float(np.mean(values)) if np.all(np.isfinite(values)) else values[0]
            else:
                row[c] = values[0]
        n = [np.asarray(r.get("f1_draws", np.zeros(0))).size for r in reps]
        row["draw_replicate"] = np.repeat(np.arange(len(reps)), n)
        row["epsilon_replicates"] = np.array([float(r["epsilon"]) for r in reps])
        row["n_replicates"] = len(reps)
        for key in ("f1", "f1_present"):
            means = np.array([float(r[key]) for r in reps])
            if len(reps) > 1 and np.isfinite(means).all() and int(row.get("n_draws", 1)) > 0:
                row[key], row[f"{key}_low"], row[f"{key}_high"] = (float(x) for x in unc.t_bounds(means))
        rows.append(row)
    return pd.DataFrame(rows)


def stacked_draws(m: np.ndarray, n_draws: int) -> np.ndarray:
    """``R = n_draws`` copies of the vote fractions ``m`` ``[n, L]`` stacked as ``[R·n, L]``: every aggregator here
    treats queries independently, so one call on the stack is ``R`` independent release-noise draws (draw ``r`` is
    rows ``r·n ... (r+1)·n − 1``; with ``R = 1`` the release is the one a single call draws from the same generator)."""
    if int(n_draws) != n_draws or n_draws < 1:
        raise ValueError(f"n_draws (release_draws): expected a positive integer, got {n_draws!r}")
    return np.tile(m, (int(n_draws), 1))


def draw_scores(y: np.ndarray, labels: np.ndarray, answered: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Scores of ``R`` release draws on the same queries, and of every pool resample: ``y`` ``[n, L]`` true labels,
    ``labels`` ``[R, n, L]`` released, ``answered`` ``[R, n]``, ``weights`` ``[B, n]`` (row multiplicities of ``B``
    bootstrap resamples of the queries, :func:`pate_study.reporting.uncertainty.bootstrap_weights`; the same for every
    arm, so a difference or ratio of arms is paired). Scored on the answered queries of each draw (as :func:`prf`):
    ``precision``, ``recall``, ``f1`` (macro over every class, zero-division 0: the thesis's Definition 2 as
    scikit-learn computes it), ``f1_present`` (over the classes true or predicted in the answered set:
    :data:`pate_study.learning.metrics.PRESENT_CLASSES`), ``micro_f1``, each ``[R]``, NaN for a draw with no
    answered query; ``f1_boot`` / ``f1_present_boot`` ``[B, R]``. Counts are sums over queries, so each resample is
    one matrix product (:func:`pate_study.learning.metrics.macro_scores_from_counts`)."""
    r, n, n_labels = labels.shape
    a = answered[:, :, None]
    yb = np.asarray(y, bool)[None]
    parts = [labels & yb & a, labels & ~yb & a, ~labels & yb & a]  # tp, fp, fn per draw and query
    counts = [x.sum(1) for x in parts]  # [R, L]
    s = metrics.macro_scores_from_counts(*counts)
    empty = ~answered.any(1)
    tp, fp, fn = (c.sum(-1) for c in counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        micro = np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)
    w = np.asarray(weights, np.float64)
    boot = [(w @ x.transpose(1, 0, 2).reshape(n, r * n_labels)).reshape(-1, r, n_labels) for x in parts]
    sb = metrics.macro_scores_from_counts(*boot)
    answered_boot = (w @ answered.T.astype(np.float64)) > 0  # [B, R]: the resample holds an answered query

    def nan_if(values, where):
        return np.where(where, np.nan, values)

    return {
        "precision": nan_if(s["precision"], empty),
        "recall": nan_if(s["recall"], empty),
        "f1": nan_if(s["f1"], empty),
        "f1_present": nan_if(s["f1_present"], empty),
        "micro_f1": nan_if(micro, empty),
        "f1_boot": nan_if(sb["f1"], ~answered_boot),
        "f1_present_boot": nan_if(sb["f1_present"], ~answered_boot),
    }


def draw_summary(scores: dict[str, np.ndarray]) -> dict[str, Any]:
    """One sweep row's scores from :func:`draw_scores`: each the mean over the draws (NaN draws dropped),
    ``f1_low`` / ``f1_high`` and ``f1_present_low`` / ``f1_present_high`` (the t-interval over draws, release noise
    only), ``n_draws``, and the per-draw arrays of :data:`DRAW_COLUMNS` the verdicts read."""
    out: dict[str, Any] = {}
    for key in ("precision", "recall", "f1", "micro_f1", "f1_present"):
        mean, low, high = (float(x) for x in unc.t_bounds(scores[key]))
        out[key] = mean
        if key in ("f1", "f1_present"):
            out[f"{key}_low"], out[f"{key}_high"] = low, high
    out["n_draws"] = int(len(scores["f1"]))
    for key in ("f1", "f1_present"):
        out[f"{key}_draws"] = np.asarray(scores[key], float)
        out[f"{key}_boot"] = np.asarray(scores[f"{key}_boot"], float)
    return out


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """A sweep without its per-draw array columns (:data:`DRAW_COLUMNS`): what a table or a display shows."""
    return frame.drop(columns=[c for c in DRAW_COLUMNS if c in frame.columns])


def pool_weights(n_queries: int, n_boot: int, seed: int) -> np.ndarray:
    """``[n_boot, n_queries]`` multiplicities of the pool-query resamples every sweep shares (seeded by ``seed``
    alone, so two sweeps on the same queries resample the same rows: a paired bootstrap)."""
    return unc.bootstrap_weights(unc.bootstrap_rows(int(n_queries), int(n_boot), int(seed)))


#: Table 5.4's label of a release without the confidence check (its ``th_c`` column; the configurations say None).
NO_CHECK = "None"


def check_label(confidence: float | str | None) -> str:
    """A confidence threshold as Table 5.4's ``th_c`` key: :data:`NO_CHECK` for None (no check), else ``0.4``."""
    return NO_CHECK if confidence is None or confidence == NO_CHECK else f"{float(confidence):g}"


def threshold_label(th: Any) -> str:
    """A threshold as a table key: "adaptive" or its value (``0.2``)."""
    return th if isinstance(th, str) else f"{th:g}"


def thesis_grid(fn, **kwargs):
    """``fn(**kwargs, accounting=THESIS_ACCOUNTING)``: the value on the thesis's order grid (first order 2), for the
    comparison with its printed numbers. The grid-edge warning is logged with what it says, never dropped."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OrderAtGridEdgeWarning)
        result = fn(**kwargs, accounting=THESIS_ACCOUNTING)
    for w in caught:
        if issubclass(w.category, OrderAtGridEdgeWarning):
            logger.warning("thesis order grid: %s", w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def gnthreshold_spent(
    m: np.ndarray, th: Any, sigma: float, n_teachers: int, bound: Bound, delta: float
) -> PrivacySpent:
    """Data-dependent (ε, δ) of GNThreshold on the votes ``m`` at threshold ``th`` (Muschiol 2021 Theorems 11-14 with
    ``bound``; :func:`pate_study.privacy.multilabel.gnthreshold_epsilon` over :data:`ACCOUNTING`)."""
    return multilabel.gnthreshold_epsilon(
        sigma=sigma, delta=delta, threshold=th, fractions=m, bound=bound, n_teachers=n_teachers, accounting=ACCOUNTING
    )


def data_independent_spent(
    n: int,
    n_labels: int,
    sigma: float,
    bound: Bound,
    n_teachers: int,
    delta: float,
    threshold: Any,
    check: ConfidenceCheck | None = None,
) -> PrivacySpent:
    """Data-independent (ε, δ) over :data:`ACCOUNTING` when every one of ``n`` queries of ``n_labels`` labels pays
    the GNThreshold cap of ``bound`` (:func:`pate_study.privacy.multilabel.gnthreshold_epsilon`, Muschiol 2021
    Theorems 11-14) and, with a confidence ``check``, the check's data-independent slope too
    (:func:`pate_study.privacy.multilabel.confident_gnthreshold_data_independent`)."""
    kw = dict(sigma=sigma, delta=delta, threshold=threshold, bound=bound, n_teachers=n_teachers, accounting=ACCOUNTING)
    if check is None:
        return multilabel.gnthreshold_epsilon(n_queries=n, n_labels=n_labels, **kw)
    return multilabel.confident_gnthreshold_data_independent(n_queries=n, n_labels=n_labels, check=check, **kw)


def gnthreshold_epsilons(
    m: np.ndarray, th: Any, sigma: float, n_teachers: int, bound: Bound, delta: float
) -> tuple[float, float]:
    """(data-dependent, data-independent) ε of GNThreshold on the votes ``m`` at threshold ``th``
    (:func:`gnthreshold_spent`, :func:`data_independent_spent`), the data-independent one for as many queries and
    labels as ``m``."""
    dd = gnthreshold_spent(m, th, sigma, n_teachers, bound, delta)
    di = data_independent_spent(len(m), m.shape[1], sigma, bound, n_teachers, delta, th)
    return dd.epsilon, di.epsilon


def _as_fixed(m: np.ndarray, th: Any, sigma: float, n_teachers: int, bound: Bound, delta: float) -> float:
    """The thesis's accounting of the adaptive threshold (treated as fixed): NOT a guarantee; NaN for fixed th."""
    if not isinstance(th, str):
        return math.nan
    return gnthreshold_spent(m, th, sigma, n_teachers, bound, delta).details["epsilon_threshold_as_fixed"]


def noise_sweep(
    cv: CachedVotes,
    sigmas: Sequence[float],
    thresholds: Sequence[Any] = THRESHOLDS,
    *,
    n_account: int = 1000,
    delta: float = DELTA,
    bound: Bound = Bound.VOTE_FRACTION,
    reference_bound: Bound = Bound.THEOREM12,
    vote: str = "probability",
    seed: int = 0,
    n_draws: int = 1,
    n_boot: int = 0,
    draw_seed: int | None = None,
) -> pd.DataFrame:
    """Figs 5.13 / A.7: GNThreshold (adaptive or fixed th_e) on the first ``n_account`` queries per σ_e:
    macro F1 of the released labels, data-dependent and data-independent ε (``bound``), and the
    data-independent ε of ``reference_bound`` (Theorem 12 as printed); σ_e = 0 rows are the noise-free F1.
    Adaptive rows: ε charges the threshold's sensitivity (:func:`multilabel.adaptive_threshold_slope`);
    ``epsilon_threshold_as_fixed`` is the thesis's accounting beside it (not a guarantee).

    Release noise: ``n_draws`` independent draws per σ_e, stacked in one call (:func:`stacked_draws`); the scores
    are means over draws with their t-interval and per-draw arrays (:func:`draw_summary`), each draw also scored on
    ``n_boot`` resamples of the queries (:func:`pool_weights`, seeded by ``seed``; the same rows in every sweep).
    The ε here depend on the votes only, not on the draw. ``draw_seed``: the release noise's seed when it is not
    ``seed`` (each replicate ensemble its own draws, the same pool resamples)."""
    draw_seed = seed if draw_seed is None else int(draw_seed)
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    y = cv.pool_labels[:n_account]
    weights = pool_weights(len(m), n_boot, seed) if n_boot else np.zeros((0, len(m)))
    rows = []
    for th in thresholds:
        free = noise_free_release(m, th)[None]
        rows.append(
            {
                "threshold": threshold_label(th),
                "sigma_e": 0.0,
                **draw_summary(draw_scores(y, free, np.ones(free.shape[:2], bool), weights)),
                "epsilon": np.inf,
                "epsilon_data_independent": np.inf,
                "epsilon_reference": np.inf,
                "epsilon_threshold_as_fixed": np.inf if isinstance(th, str) else math.nan,
            }
        )
        rows[-1].update(f1_low=rows[-1]["f1"], f1_high=rows[-1]["f1"], n_draws=0)  # no release noise at σ_e = 0
        rows[-1].update(f1_present_low=rows[-1]["f1_present"], f1_present_high=rows[-1]["f1_present"])
        for i, s in enumerate(sigmas):
            rel = aggregators.gnthreshold(stacked_draws(m, n_draws), th, s, np.random.default_rng([draw_seed, i]))
            released = rel.labels.reshape(n_draws, *m.shape)
            dd, di = gnthreshold_epsilons(m, th, s, cv.n_teachers, bound, delta)
            ref = data_independent_spent(len(m), m.shape[1], s, reference_bound, cv.n_teachers, delta, th).epsilon
            q = np.exp(multilabel.multilabel_logq(m, th, s))
            rows.append(
                {
                    "threshold": threshold_label(th),
                    "sigma_e": float(s),
                    **draw_summary(draw_scores(y, released, np.ones(released.shape[:2], bool), weights)),
                    "epsilon": dd,
                    "epsilon_data_independent": di,
                    "epsilon_reference": ref,
                    "q_average": float(q.mean()),
                    "epsilon_threshold_as_fixed": _as_fixed(m, th, s, cv.n_teachers, bound, delta),
                }
            )
    return pd.DataFrame(rows)


def confidence_sweep(
    cv: CachedVotes,
    threshold: Any,
    confidence: float,
    sigmas_e: Sequence[float],
    sigmas_c: Sequence[float],
    *,
    n_account: int = 1000,
    delta: float = DELTA,
    bound: Bound = Bound.VOTE_FRACTION,
    rule: str = "max",
    vote: str = "probability",
    seed: int = 0,
    n_draws: int = 1,
    n_boot: int = 0,
    draw_seed: int | None = None,
) -> pd.DataFrame:
    """Figs 5.14, 5.15, A.8-A.11: Confident-GNThreshold per (σ_c, σ_e): answered share, macro F1 on the
    answered queries, ε data-dependent (realised cost: the GNThreshold step charged on the answered
    queries of a run, the check on every query) and data-independent (every query charged both).

    ``n_draws`` release-noise draws per point, stacked (:func:`stacked_draws`), scored as in :func:`noise_sweep`
    (means over draws, their t-interval, per-draw and per-resample arrays). The realised ε depends on the draw (its
    answered set): ``epsilon`` is the largest over the draws (a guarantee for every one of the runs),
    ``epsilon_min`` the smallest, ``epsilon_draws`` each. ``draw_seed``: as in :func:`noise_sweep`."""
    draw_seed = seed if draw_seed is None else int(draw_seed)
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    y = cv.pool_labels[:n_account]
    weights = pool_weights(len(m), n_boot, seed) if n_boot else np.zeros((0, len(m)))
    rows = []
    for j, sc in enumerate(sigmas_c):
        for i, se in enumerate(sigmas_e):
            rel = aggregators.confident_gnthreshold(
                stacked_draws(m, n_draws),
                threshold,
                se,
                confidence,
                sc,
                np.random.default_rng([draw_seed, j, i]),
                rule=rule,
            )
            answered = rel.answered.reshape(n_draws, len(m))
            released = rel.labels.reshape(n_draws, *m.shape)
            check = ConfidenceCheck(confidence, sc, rule)
            spent = [
                multilabel.confident_gnthreshold_epsilon(
                    fractions=m,
                    threshold=threshold,
                    sigma=se,
                    check=check,
                    delta=delta,
                    bound=bound,
                    n_teachers=cv.n_teachers,
                    charge=Charge(Cost.REALIZED, answered=ok),
                    accounting=ACCOUNTING,
                )
                for ok in answered
            ]
            eps = np.array([sp.epsilon for sp in spent])
            as_fixed = np.array([sp.details.get("epsilon_threshold_as_fixed", math.nan) for sp in spent])
            di = data_independent_spent(len(m), m.shape[1], se, bound, cv.n_teachers, delta, threshold, check).epsilon
            rows.append(
                {
                    "threshold": threshold_label(threshold),
                    "confidence": confidence,
                    "sigma_c": float(sc),
                    "sigma_e": float(se),
                    "answered_pct": 100.0 * answered.mean(),
                    **draw_summary(draw_scores(y, released, answered, weights)),
                    "epsilon": float(eps.max()),
                    "epsilon_min": float(eps.min()),
                    "epsilon_draws": eps,
                    "epsilon_data_independent": di,
                    "epsilon_threshold_as_fixed": float(np.max(as_fixed)),
                }
            )
    return pd.DataFrame(rows)


def confidence_runs(t_max: int, t_mid: int) -> list[tuple[str, int, Any, float]]:
    """The confident-GNThreshold figures: ``(item, teachers, th_e, th_c)`` of Figs 5.14, 5.15, A.8-A.11."""
    return [
        ("muschiol2021-fig5.14", t_max, 0.4, 0.6),
        ("muschiol2021-fig5.15", t_max, "adaptive", 0.6),
        ("muschiol2021-figA.8", t_mid, 0.4, 0.6),
        ("muschiol2021-figA.9", t_mid, "adaptive", 0.6),
        ("muschiol2021-figA.10", t_max, 0.4, 0.2),
        ("muschiol2021-figA.11", t_max, "adaptive", 0.4),
    ]


#: Fig A.11's claim (as Fig 5.15's) compares the adaptive threshold with th_e = 0.4 at the same check (th_c = 0.4),
#: a sweep no figure plots: run beside the figures' sweeps under this key
A11_FIXED_PARTNER = "fixed th_e=0.4 beside muschiol2021-figA.11"


def confidence_sweeps(
    ensembles: dict[int, list[CachedVotes]],
    t_max: int,
    t_mid: int,
    sigmas_e: Sequence[float],
    sigmas_c: Sequence[float],
    *,
    n_account: int = 1000,
    delta: float = DELTA,
    seed: int = 0,
    n_draws: int = 1,
    n_boot: int = 0,
) -> dict[str, pd.DataFrame]:
    """:func:`confidence_sweep` for every run of :func:`confidence_runs` (keyed by item) and the fixed-threshold
    partner Fig A.11's claim needs (:data:`A11_FIXED_PARTNER`: big ``t_max``, th_e = 0.4, th_c = 0.4), on every
    replicate ensemble of the run's teacher count (``ensembles[t]``: :func:`draws_per_replicate` of ``n_draws``
    release-noise draws per point each, release seed ``seed + g``, the same ``n_boot`` pool resamples), joined by
    :func:`replicate_sweeps`."""
    runs = confidence_runs(t_max, t_mid) + [(A11_FIXED_PARTNER, t_max, 0.4, 0.4)]
    kw = dict(n_account=n_account, delta=delta, seed=seed, n_boot=n_boot)

    def one(t, th, thc):
        reps = ensembles[t]
        per = draws_per_replicate(n_draws, len(reps))
        return replicate_sweeps(
            [
                confidence_sweep(cv, th, thc, sigmas_e, sigmas_c, n_draws=per, draw_seed=seed + g, **kw)
                for g, cv in enumerate(reps)
            ]
        )

    return {item: one(t, th, thc) for item, t, th, thc in runs}
