"""Audio Set releases (Muschiol 2021 §4.2, §5.2-5.4): noise-free and noisy aggregation of the votes, the
confidence check, their accounting, q histograms, the bounds side by side, Table 5.4's releases and, beyond the
thesis, Binary, τ- and powerset PATE (Dziedzic et al. 2023).

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

from pate_study.experiments.audioset import bound_forensics
from pate_study.experiments.audioset.votes import CachedVotes, vote_fractions
from pate_study.learning import metrics
from pate_study.privacy import adaptive_k, aggregators, audit, multilabel, multiwinner, topk_vote
from pate_study.privacy.accounting import OrderAtGridEdgeWarning, PrivacySpent
from pate_study.privacy.options import Accounting, Bound, Charge, ConfidenceCheck, Cost
from pate_study.privacy.selection import selection_spent
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


def _epsilons(m: np.ndarray, th: Any, sigma: float, n_teachers: int, bound: Bound, delta: float) -> tuple[float, float]:
    dd = multilabel.gnthreshold_epsilon(
        sigma=sigma, delta=delta, threshold=th, fractions=m, bound=bound, n_teachers=n_teachers, accounting=ACCOUNTING
    )
    di = multilabel.gnthreshold_epsilon(
        sigma=sigma,
        delta=delta,
        threshold=th,
        n_queries=len(m),
        n_labels=m.shape[1],
        bound=bound,
        n_teachers=n_teachers,
        accounting=ACCOUNTING,
    )
    return dd.epsilon, di.epsilon


def _as_fixed(m: np.ndarray, th: Any, sigma: float, n_teachers: int, bound: Bound, delta: float) -> float:
    """The thesis's accounting of the adaptive threshold (treated as fixed): NOT a guarantee; NaN for fixed th."""
    if not isinstance(th, str):
        return math.nan
    return multilabel.gnthreshold_epsilon(
        sigma=sigma, delta=delta, threshold=th, fractions=m, bound=bound, n_teachers=n_teachers, accounting=ACCOUNTING
    ).details["epsilon_threshold_as_fixed"]


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
            dd, di = _epsilons(m, th, s, cv.n_teachers, bound, delta)
            ref = multilabel.gnthreshold_epsilon(
                sigma=s,
                delta=delta,
                threshold=th,
                n_queries=len(m),
                n_labels=m.shape[1],
                bound=reference_bound,
                n_teachers=cv.n_teachers,
                accounting=ACCOUNTING,
            ).epsilon
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
            di = _confident_data_independent(len(m), m.shape[1], se, check, bound, cv.n_teachers, delta, threshold)
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


def _confident_data_independent(
    n: int,
    n_labels: int,
    sigma: float,
    check: ConfidenceCheck,
    bound: Bound,
    n_teachers: int,
    delta: float,
    threshold: Any = None,
) -> float:
    """ε when every one of ``n`` queries pays the GNThreshold cap and the ``check``'s data-independent slope
    (:func:`pate_study.privacy.multilabel.confident_gnthreshold_data_independent`)."""
    return multilabel.confident_gnthreshold_data_independent(
        n_queries=n,
        n_labels=n_labels,
        sigma=sigma,
        check=check,
        delta=delta,
        n_teachers=n_teachers,
        bound=bound,
        threshold=threshold,
        accounting=ACCOUNTING,
    ).epsilon


def gnthreshold_audit(
    sigmas: Sequence[float],
    *,
    n_labels: int = 4,
    n_teachers: int = 5,
    threshold: float = 0.5,
    delta: float = 1e-3,
    n_samples: int = 200_000,
    broken_factor: float = 0.5,
    seed: int = 0,
) -> pd.DataFrame:
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
      numerical integral per outcome);
    * the top-k vote release of the frontier (:func:`~pate_study.privacy.audit.audit_topk` at its own instance:
      3 teachers, 3 labels, k = 1, σ_e 0.2, th_e 0.4, δ 0.1, where the release's exact ε lies between the sound
      claim and the √k one), as implemented, broken, and against the √k-sensitivity accounting (an error the audit
      must catch: a teacher that changes its top-k set switches k labels off as well as k on).
    Few teachers and labels make one query's ε large enough to measure with ``n_samples`` draws."""
    rows = []

    def add(release, sigma, r, claim):
        rows.append(
            {
                "release": release,
                "sigma_e": float(sigma),
                "claim": claim,
                "mechanism": "as implemented"
                if r.noise_scale_factor == 1.0
                else f"broken: noise x{r.noise_scale_factor:g}",
                "delta": r.delta,
                "claimed_epsilon": r.claimed_epsilon,
                "empirical_epsilon_lower": r.epsilon_lower,
                "violation": r.violation,
                "neighbours": r.candidate,
                "event": r.event,
                "n_samples": r.n_samples,
            }
        )

    for i, s in enumerate(sigmas):
        sd = int(seed) * 1000 + i
        for factor in (1.0, broken_factor):
            r = audit.audit_gnthreshold(
                sigma=float(s),
                n_labels=n_labels,
                n_teachers=n_teachers,
                threshold=threshold,
                delta=delta,
                n_samples=n_samples,
                noise_scale_factor=factor,
                seed=sd,
            )
            add(f"GNThreshold th_e={threshold:g}", s, r, "vote-fraction bound")
        for claim in ("as_fixed", "sound"):
            r = audit.audit_gnthreshold_adaptive(
                float(s),
                n_labels=n_labels,
                n_teachers=n_teachers,
                delta=delta,
                claim=claim,
                n_samples=n_samples,
                seed=sd,
            )
            add(
                "GNThreshold adaptive (Def. 11)",
                s,
                r,
                "thesis: threshold as fixed" if claim == "as_fixed" else "threshold sensitivity",
            )
        for factor in (1.0, broken_factor):
            r = audit.audit_adaptive_k(float(s), delta=delta, n_samples=n_samples, noise_scale_factor=factor, seed=sd)
            add("adaptive-k (private)", s, r, "Gumbel k + Gaussian top-k RDP")
    for claim, factor in (("sound", 1.0), ("sound", broken_factor), ("sqrt_k", 1.0)):
        r = audit.audit_topk(n_samples=n_samples, claim=claim, noise_scale_factor=factor, seed=int(seed) * 1000 + 999)
        add(
            "top-k vote (k=1, 3 teachers x 3 labels, δ=0.1)",
            0.2,
            r,
            "ℓ2 sensitivity √(2k)/T" if claim == "sound" else "wrong: sensitivity √k/T",
        )
    return pd.DataFrame(rows)


def adaptive_rules(
    cv: CachedVotes,
    sigma_e: float = 0.3,
    *,
    n_account: int = 1000,
    delta: float = DELTA,
    fixed_thresholds: Sequence[float] = (0.2, 0.4, 0.6),
    k_share: float = 0.25,
    seed: int = 0,
    vote: str = "probability",
) -> pd.DataFrame:
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
    slope = multilabel.multilabel_slope(sigma_e, k, Bound.VOTE_FRACTION, t)
    eps_budget = multilabel.gnthreshold_epsilon(
        sigma=sigma_e,
        delta=delta,
        threshold=0.5,
        n_queries=n,
        n_labels=k,
        bound=Bound.VOTE_FRACTION,
        n_teachers=t,
        accounting=ACCOUNTING,
    ).epsilon
    rows = []

    def add(rule, sigma, labels, eps, as_fixed=math.nan, extra=""):
        rows.append(
            {
                "rule": rule,
                "sigma": float(sigma),
                **prf(y, labels),
                "labels_per_query": float(labels.sum(axis=1).mean()),
                "epsilon": eps,
                "epsilon_threshold_as_fixed": as_fixed,
                "budget_epsilon": eps_budget,
                "note": extra,
            }
        )

    for i, th in enumerate(fixed_thresholds):
        rel = aggregators.gnthreshold(m, float(th), sigma_e, np.random.default_rng([seed, 10, i]))
        add(f"fixed th_e={th:g}", sigma_e, rel.labels, eps_budget)
    sigma_sound = math.sqrt(k * multilabel.adaptive_label_sensitivity(Bound.VOTE_FRACTION, t) ** 2 / (2.0 * slope))
    for j, (sig, note) in enumerate(
        (
            (sigma_e, "thesis's σ_e: the sound ε is far above the budget"),
            (sigma_sound, "σ that buys the budget under the sound accounting"),
        )
    ):
        rel = aggregators.gnthreshold(m, "adaptive", sig, np.random.default_rng([seed, 20, j]))
        spent = multilabel.gnthreshold_epsilon(
            sigma=sig,
            delta=delta,
            threshold="adaptive",
            n_queries=n,
            n_labels=k,
            bound=Bound.VOTE_FRACTION,
            n_teachers=t,
            accounting=ACCOUNTING,
        )
        add(
            "Definition 11 (adaptive th_e)",
            sig,
            rel.labels,
            spent.epsilon,
            spent.details["epsilon_threshold_as_fixed"],
            note,
        )
    sig_k, b = adaptive_k.adaptive_k_params(slope, k, t, k_share=k_share)
    rel = adaptive_k.adaptive_k_release(m, sig_k, b, np.random.default_rng([seed, 30]))
    eps_k = adaptive_k.adaptive_k_epsilon(
        sigma=sig_k, gumbel_scale=b, delta=delta, n_teachers=t, n_queries=n, n_labels=k, orders=ORDERS
    ).epsilon
    add(
        "adaptive-k (private, after Zhu & Wang 2022)",
        sig_k,
        rel.labels,
        eps_k,
        extra=f"Gumbel scale {b:.3g} for k (share {k_share:g} of the RDP), σ {sig_k:.3g} for the top-k set",
    )
    return pd.DataFrame(rows)


def q_histogram(
    cv: CachedVotes,
    sigma_e: float,
    thresholds: Sequence[Any] = (0.4, "adaptive"),
    *,
    confidence: float = 0.6,
    sigma_c: float = 0.6,
    n_account: int = 1000,
    delta: float = DELTA,
    bound: Bound = Bound.VOTE_FRACTION,
    bucket_edges: Sequence[float] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0),
    rule: str = "max",
    vote: str = "probability",
) -> pd.DataFrame:
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
            row = {
                "threshold": threshold_label(th),
                "sigma_e": sigma_e,
                "q_low": edges[b],
                "q_high": edges[b + 1],
                "n_queries": int(sel.sum()),
                "epsilon_1000": np.nan,
                "epsilon_1000_confident_expected": np.nan,
            }
            if sel.any():
                k = int(sel.sum())
                reps = max(1, int(math.ceil(1000 / k)))
                mb = np.tile(m[sel], (reps, 1))[:1000]  # 1,000 queries with the bucket's mix of votes
                row["epsilon_1000"] = multilabel.gnthreshold_epsilon(
                    sigma=sigma_e,
                    delta=delta,
                    threshold=th,
                    fractions=mb,
                    bound=bound,
                    n_teachers=cv.n_teachers,
                    accounting=ACCOUNTING,
                ).epsilon
                row["epsilon_1000_confident_expected"] = multilabel.confident_gnthreshold_epsilon(
                    fractions=mb,
                    threshold=th,
                    sigma=sigma_e,
                    check=ConfidenceCheck(confidence, sigma_c, rule),
                    delta=delta,
                    bound=bound,
                    n_teachers=cv.n_teachers,
                    charge=Charge(Cost.EXPECTED),
                    accounting=ACCOUNTING,
                ).expected_epsilon  # expected, not a guarantee
            rows.append(row)
    return pd.DataFrame(rows)


def bounds_side_by_side(
    cv: CachedVotes,
    threshold: Any,
    sigma_e: float,
    *,
    n_account: int = 1000,
    delta: float = DELTA,
    confidence: float | None = None,
    sigma_c: float | None = None,
    rule: str = "max",
    seed: int = 0,
    vote: str = "probability",
) -> pd.DataFrame:
    """Every multi-label bound of :data:`pate_study.privacy.multilabel.BOUNDS` on the same votes (and, with
    a check, the same realised answered set), each beside its data-independent value, with the leaks."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_account]
    kw: dict = {}
    if confidence is not None:
        rel = aggregators.confident_gnthreshold(
            m, threshold, sigma_e, confidence, sigma_c, np.random.default_rng(seed), rule=rule
        )
        kw = dict(check=ConfidenceCheck(confidence, sigma_c, rule), charge=Charge(Cost.REALIZED, answered=rel.answered))
    res = bound_forensics.multilabel_bounds(
        fractions=m,
        threshold=threshold,
        sigma=sigma_e,
        delta=delta,
        n_teachers=cv.n_teachers,
        accounting=ACCOUNTING,
        **kw,
    )
    rows = []
    for r in res:
        d = r.to_dict()
        d["bound_validity"] = r.data_dependent.details.get("bound_validity", "")
        d["epsilon_threshold_as_fixed"] = r.data_dependent.details.get("epsilon_threshold_as_fixed", math.nan)
        d["uncharged_leaks"] = "; ".join(d["uncharged_leaks"])
        rows.append({"threshold": threshold_label(threshold), "sigma_e": sigma_e, "confidence": confidence, **d})
    return pd.DataFrame(rows)


def table_5_4_privacy(
    cv: CachedVotes,
    n_queries: int,
    threshold: Any,
    confidence: float | None,
    *,
    sigma_e: float = 0.3,
    sigma_c: float = 0.6,
    delta: float = DELTA,
    bound: Bound = Bound.VOTE_FRACTION,
    rule: str = "max",
    seed: int = 0,
    vote: str = "probability",
) -> dict:
    """One Table 5.4 configuration: the released labels of the first ``n_queries`` pool queries and
    their privacy: ε data-dependent (realised) and data-independent (``bound``), Theorem 12's
    data-independent ε, q average (Theorem 13), answered mask and labels (for the student).
    Orders from 1.001 (:data:`ORDERS`); ``eps_thesis_grid`` is the data-dependent ε on the thesis's grid
    (first order 2, what its printed values are compared with); for the adaptive threshold ε charges the
    threshold's sensitivity and ``eps_threshold_as_fixed`` is the thesis's accounting (not a guarantee)."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_queries]
    gen = np.random.default_rng(seed)
    q = float(np.exp(multilabel.multilabel_logq(m, threshold, sigma_e)).mean())
    thm12 = multilabel.gnthreshold_epsilon(
        sigma=sigma_e,
        delta=delta,
        threshold=threshold,
        n_queries=len(m),
        n_labels=m.shape[1],
        bound=Bound.THEOREM12,
        n_teachers=cv.n_teachers,
        accounting=ACCOUNTING,
    ).epsilon
    if confidence is None:
        rel = aggregators.gnthreshold(m, threshold, sigma_e, gen)
        fn, kw = multilabel.gnthreshold_epsilon, dict(fractions=m)
    else:
        rel = aggregators.confident_gnthreshold(m, threshold, sigma_e, confidence, sigma_c, gen, rule=rule)
        check = ConfidenceCheck(confidence, sigma_c, rule)
        fn, kw = (
            multilabel.confident_gnthreshold_epsilon,
            dict(fractions=m, check=check, charge=Charge(Cost.REALIZED, answered=rel.answered)),
        )
    kw.update(sigma=sigma_e, delta=delta, threshold=threshold, bound=bound, n_teachers=cv.n_teachers)
    spent = fn(**kw, accounting=ACCOUNTING)
    dd, di = (
        spent.epsilon,
        (
            _epsilons(m, threshold, sigma_e, cv.n_teachers, bound, delta)[1]
            if confidence is None
            else _confident_data_independent(len(m), m.shape[1], sigma_e, check, bound, cv.n_teachers, delta, threshold)
        ),
    )
    return {
        "n_samples": n_queries,
        "th_e": threshold_label(threshold),
        "th_c": check_label(confidence),
        "eps_data_dependent": dd,
        "order": spent.order,
        "eps_thesis_grid": thesis_grid(fn, **kw).epsilon,
        "eps_threshold_as_fixed": spent.details.get("epsilon_threshold_as_fixed", math.nan),
        "eps_data_independent": di,
        "eps_theorem12_data_independent": thm12,
        "q_average": q,
        "answered_pct": 100.0 * rel.answered.mean(),
        "answered": rel.answered,
        "labels": rel.labels,
    }


def multiwinner_sweep(
    cv: CachedVotes,
    sigmas_e: Sequence[float],
    *,
    n_account: int = 1000,
    delta: float = DELTA,
    tau: float = 2.0,
    vote_threshold: float = 0.5,
    gnthreshold_th: Any = 0.4,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict]:
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
        out["gnthreshold"] = (
            aggregators.gnthreshold(m, gnthreshold_th, se, gen).labels,
            *_epsilons(m, gnthreshold_th, se, t, Bound.VOTE_FRACTION, delta),
        )
        rel = multiwinner.binary_pate(p, t, s, gen)
        out["binary"] = (
            rel.labels,
            multiwinner.binary_pate_epsilon(
                sigma=s, delta=delta, positive_votes=p, n_teachers=t, orders=ORDERS
            ).epsilon,
            multiwinner.binary_pate_epsilon(sigma=s, delta=delta, n_queries=n, n_labels=k, orders=ORDERS).epsilon,
        )
        rel = multiwinner.tau_pate(sums, t / 2.0, s, gen)
        tau_dd = multiwinner.tau_pate_epsilon(
            tau=tau, sigma=s, delta=delta, clipped_sums=sums, threshold=t / 2.0, orders=ORDERS
        )
        out["tau"] = (
            rel.labels,
            tau_dd.epsilon,
            multiwinner.tau_pate_epsilon(tau=tau, sigma=s, delta=delta, n_queries=n, orders=ORDERS).epsilon,
        )
        rel = multiwinner.powerset_pate(b, s, gen)
        out["powerset"] = (
            rel.labels,
            multiwinner.powerset_pate_epsilon(
                sigma=s, delta=delta, set_counts=set_counts, n_labels=k, orders=ORDERS
            ).epsilon,
            multiwinner.powerset_pate_epsilon(sigma=s, delta=delta, n_queries=n, orders=ORDERS).epsilon,
        )
        for name, (labels, dd, di) in out.items():
            released[(name, float(se))] = labels
            rows.append(
                {
                    "mechanism": name,
                    "sigma_e": float(se),
                    "sigma_votes": s,
                    **prf(y, labels),
                    "epsilon": dd,
                    "epsilon_data_independent": di,
                    "n_capped": tau_dd.details.get("n_capped") if name == "tau" else None,
                }
            )
    return pd.DataFrame(rows), released


def released_labels(
    cv, sizes: Sequence[int], thresholds: Sequence[Any], confidences: Sequence[Any], *, delta: float, seed: int = 0
) -> tuple[list[dict], list[dict]]:
    """Table 5.4's releases: per (n, th_e, th_c), in loop order, the privacy row of
    :func:`table_5_4_privacy` and the released ``labels`` / ``answered`` mask."""
    privacy, releases = [], []
    for n in sizes:
        for th in thresholds:
            for thc in confidences:
                r = table_5_4_privacy(cv, n, th, thc, delta=delta, seed=seed)
                privacy.append({k: v for k, v in r.items() if k not in ("answered", "labels")})
                releases.append({"labels": r["labels"], "answered": r["answered"]})
    return privacy, releases


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


def bounds_table(cv: CachedVotes, *, n_account: int = 1000, delta: float = DELTA, seed: int = 0) -> pd.DataFrame:
    """Every bound side by side (:func:`bounds_side_by_side`) at σ_e = 0.3: th_e = 0.4, adaptive, and adaptive with
    the confidence check (th_c = σ_c = 0.6)."""
    return pd.concat(
        [
            bounds_side_by_side(cv, 0.4, 0.3, n_account=n_account, delta=delta),
            bounds_side_by_side(cv, "adaptive", 0.3, n_account=n_account, delta=delta),
            bounds_side_by_side(
                cv, "adaptive", 0.3, n_account=n_account, delta=delta, confidence=0.6, sigma_c=0.6, seed=seed
            ),
        ],
        ignore_index=True,
    )


def uncharged_leaks(bounds: pd.DataFrame) -> list[str]:
    """The leaks some bound does not charge (from :func:`bounds_table`), each once."""
    return sorted(set("; ".join(bounds["uncharged_leaks"]).split("; ")))


# ----------------------------------------------------------------------------- beyond the thesis: the frontier
#: the mechanisms of :func:`frontier_releases`, in plotting order.
FRONTIER_MECHANISMS = ("gnthreshold", "topk", "binary", "tau", "powerset")


def frontier_settings(
    sigmas_gnthreshold: Sequence[float],
    topk: Sequence[Sequence[float]],
    sigmas_multiwinner: Sequence[float],
    *,
    gnthreshold_th: float = 0.4,
    k_multiwinner: int = 3,
    topk_th: float | None = None,
) -> list[dict]:
    """The release settings of the frontier: GNThreshold at th_e ``gnthreshold_th`` per σ_e; the top-k vote per
    ``(k, σ_e, th_e)`` of ``topk``; Binary, τ and powerset voting fed ``k_multiwinner`` votes per teacher per σ_e
    of ``sigmas_multiwinner`` (τ's release threshold th_e·T with ``topk_th`` or ``gnthreshold_th``)."""
    rows = [
        {"mechanism": "gnthreshold", "sigma_e": float(s), "k": 0, "th_e": float(gnthreshold_th)}
        for s in sigmas_gnthreshold
    ]
    for entry in topk:
        if len(entry) != 3:
            raise ValueError(f"topk: {entry!r}: expected (k, sigma_e, th_e)")
        rows.append({"mechanism": "topk", "sigma_e": float(entry[1]), "k": int(entry[0]), "th_e": float(entry[2])})
    th = float(gnthreshold_th if topk_th is None else topk_th)
    rows += [
        {"mechanism": m, "sigma_e": float(s), "k": int(k_multiwinner), "th_e": th if m == "tau" else 0.5}
        for m in ("binary", "tau", "powerset")
        for s in sigmas_multiwinner
    ]
    return rows


def _check_setting(setting: dict) -> tuple[str, float, int, float]:
    mech, se, k, th = setting["mechanism"], float(setting["sigma_e"]), int(setting["k"]), float(setting["th_e"])
    if mech not in FRONTIER_MECHANISMS:
        raise ValueError(f"mechanism={mech!r}: expected one of {FRONTIER_MECHANISMS}")
    return mech, se, k, th


def frontier_spent(
    setting: dict, *, n_teachers: int, n_queries: int, n_labels: int, delta: float = DELTA
) -> PrivacySpent:
    """The **data-independent** (ε, δ) of one frontier release (:func:`frontier_release`): it needs only the
    setting, T, the number of queries and of labels (every query charged, no data-dependent choice)."""
    mech, se, k, th = _check_setting(setting)
    t, n, s = int(n_teachers), int(n_queries), se * n_teachers
    if mech == "gnthreshold":
        return multilabel.gnthreshold_epsilon(
            sigma=se,
            delta=delta,
            threshold=th,
            n_queries=n,
            n_labels=n_labels,
            bound=Bound.VOTE_FRACTION,
            n_teachers=t,
            accounting=ACCOUNTING,
        )
    if mech == "topk":
        return topk_vote.topk_epsilon(
            k=k, n_teachers=t, sigma=se, delta=delta, n_queries=n, n_labels=n_labels, orders=ORDERS
        )
    if mech == "binary":
        return topk_vote.binary_topk_epsilon(sigma=s, delta=delta, k=k, n_labels=n_labels, n_queries=n, orders=ORDERS)
    if mech == "tau":
        return multiwinner.tau_pate_epsilon(tau=math.sqrt(k), sigma=s, delta=delta, n_queries=n, orders=ORDERS)
    return multiwinner.powerset_pate_epsilon(sigma=s, delta=delta, n_queries=n, orders=ORDERS)


def frontier_labels(probabilities: np.ndarray, setting: dict, rng: np.random.Generator) -> np.ndarray:
    """The released labels ``bool [n, C]`` of one frontier setting (:func:`frontier_release`) on the teachers'
    probabilities ``[T, n, C]`` of the queries answered, noise from ``rng``. σ_e is on vote fractions (σ = σ_e·T on
    counts); τ voting's release threshold is th_e·T on clipped calibrated votes (τ = √k)."""
    mech, se, k, th = _check_setting(setting)
    t = probabilities.shape[0]
    s = se * t
    if mech == "gnthreshold":
        labels = aggregators.gnthreshold(vote_fractions(probabilities), th, se, rng).labels
    elif mech == "topk":
        labels = topk_vote.topk_release(
            topk_vote.topk_fractions(probabilities, k), k=k, n_teachers=t, threshold=th, sigma=se, rng=rng
        ).labels
    elif mech == "binary":
        labels = multiwinner.binary_pate(
            multiwinner.positive_votes(topk_vote.topk_votes(probabilities, k)), t, s, rng
        ).labels
    elif mech == "tau":
        sums = multiwinner.clip_votes(topk_vote.calibrated_votes(probabilities, k), math.sqrt(k))
        labels = multiwinner.tau_pate(sums, th * t, s, rng).labels
    else:  # powerset
        labels = multiwinner.powerset_pate(topk_vote.topk_votes(probabilities, k), s, rng).labels
    return np.asarray(labels, dtype=bool)


def frontier_release(
    cv: CachedVotes, setting: dict, n_queries: int, *, delta: float = DELTA, seed: int = 0
) -> tuple[dict, np.ndarray]:
    """One release of the frontier on the first ``n_queries`` pool queries, with the **data-independent** ε that
    is printed as its guarantee (every query charged; no data-dependent choice): GNThreshold on averaged
    probabilities (vote-fraction bound, Muschiol 2021 Def. 10); top-k vote (:mod:`pate_study.privacy.topk_vote`,
    Δ₂ = √(2k)/T); Binary voting on top-k votes (``binary_topk_epsilon``: 2k labels change per query); τ voting on
    calibrated votes (k labels per query on average per teacher, clipped at τ = √k; its own accountant) with release
    threshold th_e·T; powerset voting on top-k votes (its own accountant). σ_e is on vote fractions (σ = σ_e·T on
    counts). Every one of these releases is a composition of Gaussian mechanisms, so beside ε (RDP, basic
    conversion: the printed guarantee) the row carries ``epsilon_exact_gaussian``, the exact ε of the same release
    (one Gaussian mechanism, :func:`~pate_study.privacy.topk_vote.gaussian_composition_epsilon`; tighter, also a
    guarantee). Returns (row with both ε and macro/micro F1 of the released labels on the pool's true labels,
    labels)."""
    mech, se, k, th = _check_setting(setting)
    t, probs = cv.n_teachers, cv.pool_probabilities[:, :n_queries]
    n, n_labels = probs.shape[1], probs.shape[2]
    gen = np.random.default_rng([seed, FRONTIER_MECHANISMS.index(mech), int(round(se * 1000)), k])
    labels = frontier_labels(probs, setting, gen)
    spent = frontier_spent(setting, n_teachers=t, n_queries=n, n_labels=n_labels, delta=delta)
    row = {
        "mechanism": mech,
        "sigma_e": se,
        "k": k,
        "th_e": th,
        "n_samples": n,
        "epsilon": float(spent.epsilon),
        "epsilon_exact_gaussian": topk_vote.gaussian_composition_epsilon(spent),
        "released_per_query": float(labels.sum(1).mean()),
        **prf(cv.pool_labels[:n_queries], labels),
    }
    return row, labels


def frontier_releases(
    cv: CachedVotes, settings: Sequence[dict], n_queries: int, *, delta: float = DELTA, seed: int = 0
) -> tuple[list[dict], list[dict]]:
    """:func:`frontier_release` per setting: (privacy rows, ``{"labels", "answered"}`` per row for the students)."""
    rows, releases = [], []
    for setting in settings:
        row, labels = frontier_release(cv, setting, n_queries, delta=delta, seed=seed)
        rows.append(row)
        releases.append({"labels": labels, "answered": np.ones(len(labels), dtype=bool)})
    return rows, releases


#: the selection the frontier's "best student at ε ≤ budget" actually runs (:func:`.students.best_within`).
FRONTIER_SELECTION = (
    "best of a fixed set of candidate releases (the frontier's settings, every one computed on the same teachers "
    "and queries), chosen by the test mAP of their students among those whose own data-independent epsilon is "
    "within the budget: the choice is a function of every candidate within the budget, so it is charged as the "
    "composition of those candidates (RDP summed per order; privacy.selection.selection_spent). The candidate "
    "settings were taken from earlier runs on the same votes; counting that choice too, every candidate computed "
    "is composed ('all'). Not a random-stopping mechanism: Papernot & Steinke's bounds do not apply."
)


def frontier_selection_privacy(
    frontier: pd.DataFrame, *, n_teachers: int, n_labels: int, epsilon_max: float = 300.0, delta: float = DELTA
) -> dict:
    """The privacy of choosing the frontier's best release (:data:`FRONTIER_SELECTION`): the composition of the
    candidates within ``epsilon_max`` and of all candidates (one row per release of ``frontier``: mechanism,
    sigma_e, k, th_e, n_samples), each as ε (RDP, basic conversion: the guarantee the frontier prints per release)
    and ``_exact_gaussian`` (every candidate is a composition of Gaussian mechanisms, so their composition is one
    Gaussian mechanism: exact ε, Balle & Wang 2018 Theorem 8; tighter, also a guarantee). NaN where no candidate
    is within the budget."""

    def spent(rows: pd.DataFrame) -> list[PrivacySpent]:
        return [
            frontier_spent(r, n_teachers=n_teachers, n_queries=int(r["n_samples"]), n_labels=n_labels, delta=delta)
            for r in rows.to_dict("records")
        ]

    out: dict = {
        "selection_mechanism": FRONTIER_SELECTION,
        "selection_epsilon_max": float(epsilon_max),
        "selection_delta": float(delta),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        for name, rows in (("within", frontier[frontier["epsilon"] <= epsilon_max]), ("all", frontier)):
            out[f"selection_{name}_n_candidates"] = int(len(rows))
            if rows.empty:
                out[f"selection_{name}_epsilon"] = out[f"selection_{name}_epsilon_exact_gaussian"] = math.nan
                continue
            composed = selection_spent(spent(rows), delta=delta, warn=False)
            out[f"selection_{name}_epsilon"] = float(composed.epsilon)
            out[f"selection_{name}_epsilon_exact_gaussian"] = topk_vote.gaussian_composition_epsilon(composed)
    return out


def sigma_releases(
    cv: CachedVotes,
    n_queries: int,
    threshold: Any,
    confidence: float | None,
    sigmas_e: Sequence[float],
    sigmas_c: Sequence[float],
    *,
    sigma_e: float = 0.3,
    sigma_c: float = 0.6,
    delta: float = DELTA,
    seed: int = 0,
) -> tuple[list[dict], list[dict]]:
    """Figs 5.17-5.19 over the thesis's noise ranges: one Table 5.4 configuration (:func:`table_5_4_privacy`) at each
    σ_e of ``sigmas_e`` (σ_c = ``sigma_c``) and, with a confidence check, at each σ_c of ``sigmas_c`` (σ_e =
    ``sigma_e``). Returns (privacy rows with ``sigma_e``/``sigma_c``, ``{"labels", "answered"}`` per row); a
    setting on both axes (σ_c = ``sigma_c`` in ``sigmas_c``) is released once."""
    grid = [(float(se), float(sigma_c)) for se in sigmas_e]
    if confidence is not None:
        grid += [(float(sigma_e), float(sc)) for sc in sigmas_c]
    grid = list(dict.fromkeys(grid))
    privacy, releases = [], []
    for se, sc in grid:
        r = table_5_4_privacy(cv, n_queries, threshold, confidence, sigma_e=se, sigma_c=sc, delta=delta, seed=seed)
        privacy.append(
            {
                "sigma_e": se,
                "sigma_c": sc if confidence is not None else math.nan,
                **{k: v for k, v in r.items() if k not in ("answered", "labels")},
            }
        )
        releases.append({"labels": r["labels"], "answered": r["answered"]})
    return privacy, releases
