"""Beyond the thesis, on the same cached votes: GNThreshold beside the three mechanisms of Dziedzic et al. 2023
(Binary, τ- and powerset PATE; :func:`multiwinner_sweep`), and the frontier: every mechanism's release settings,
their ε, their labels, and the privacy of choosing the best release among them (:data:`FRONTIER_SELECTION`).
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.experiments.audioset.release import (
    ACCOUNTING,
    DELTA,
    data_independent_spent,
    gnthreshold_epsilons,
    prf,
)
from pate_study.experiments.audioset.votes import CachedVotes, vote_fractions
from pate_study.privacy import aggregators, multiwinner, topk_vote
from pate_study.privacy.accounting import OrderAtGridEdgeWarning, PrivacySpent
from pate_study.privacy.options import Bound
from pate_study.privacy.selection import selection_spent

logger = logging.getLogger(__name__)


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
            *gnthreshold_epsilons(m, gnthreshold_th, se, t, Bound.VOTE_FRACTION, delta),
        )
        rel = multiwinner.binary_pate(p, t, s, gen)
        out["binary"] = (
            rel.labels,
            multiwinner.binary_pate_epsilon(
                sigma=s, delta=delta, positive_votes=p, n_teachers=t, accounting=ACCOUNTING
            ).epsilon,
            multiwinner.binary_pate_epsilon(
                sigma=s, delta=delta, n_queries=n, n_labels=k, accounting=ACCOUNTING
            ).epsilon,
        )
        rel = multiwinner.tau_pate(sums, t / 2.0, s, gen)
        tau_dd = multiwinner.tau_pate_epsilon(
            tau=tau, sigma=s, delta=delta, clipped_sums=sums, threshold=t / 2.0, accounting=ACCOUNTING
        )
        out["tau"] = (
            rel.labels,
            tau_dd.epsilon,
            multiwinner.tau_pate_epsilon(tau=tau, sigma=s, delta=delta, n_queries=n, accounting=ACCOUNTING).epsilon,
        )
        rel = multiwinner.powerset_pate(b, s, gen)
        out["powerset"] = (
            rel.labels,
            multiwinner.powerset_pate_epsilon(
                sigma=s, delta=delta, set_counts=set_counts, n_labels=k, accounting=ACCOUNTING
            ).epsilon,
            multiwinner.powerset_pate_epsilon(sigma=s, delta=delta, n_queries=n, accounting=ACCOUNTING).epsilon,
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
        return data_independent_spent(n, n_labels, se, Bound.VOTE_FRACTION, t, delta, th)
    if mech == "topk":
        return topk_vote.topk_epsilon(
            k=k, n_teachers=t, sigma=se, delta=delta, n_queries=n, n_labels=n_labels, accounting=ACCOUNTING
        )
    if mech == "binary":
        return topk_vote.binary_topk_epsilon(
            sigma=s, delta=delta, k=k, n_labels=n_labels, n_queries=n, accounting=ACCOUNTING
        )
    if mech == "tau":
        return multiwinner.tau_pate_epsilon(tau=math.sqrt(k), sigma=s, delta=delta, n_queries=n, accounting=ACCOUNTING)
    return multiwinner.powerset_pate_epsilon(sigma=s, delta=delta, n_queries=n, accounting=ACCOUNTING)


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
