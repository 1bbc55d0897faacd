"""The privacy side of Muschiol 2021's Audio Set releases (§5.2-5.4): the GNThreshold audit (empirical lower
bounds on ε), the adaptive-threshold rules, the q̃ histograms (Figs 5.16, A.12, A.13), every bound side by side on our
votes, and Table 5.4's releases with their privacy. Each ε comes from the accountants of
:mod:`pate_study.privacy.multilabel` with the orders and settings of :mod:`pate_study.experiments.audioset.release`.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pate_study.experiments.audioset import bound_forensics
from pate_study.experiments.audioset.release import (
    ACCOUNTING,
    DELTA,
    check_label,
    data_independent_spent,
    gnthreshold_spent,
    prf,
    thesis_grid,
    threshold_label,
)
from pate_study.experiments.audioset.votes import CachedVotes, vote_fractions
from pate_study.privacy import adaptive_k, aggregators, audit, multilabel
from pate_study.privacy.options import Bound, Charge, ConfidenceCheck, Cost

logger = logging.getLogger(__name__)


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
    eps_budget = data_independent_spent(n, k, sigma_e, Bound.VOTE_FRACTION, t, delta, 0.5).epsilon
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
        spent = data_independent_spent(n, k, sig, Bound.VOTE_FRACTION, t, delta, "adaptive")
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
        sigma=sig_k, gumbel_scale=b, delta=delta, n_teachers=t, n_queries=n, n_labels=k, accounting=ACCOUNTING
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
                row["epsilon_1000"] = gnthreshold_spent(mb, th, sigma_e, cv.n_teachers, bound, delta).epsilon
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
    Orders from 1.001 (:data:`~pate_study.experiments.audioset.release.ORDERS`); ``eps_thesis_grid`` is the
    data-dependent ε on the thesis's grid (first order 2, what its printed values are compared with); for the adaptive
    threshold ε charges the threshold's sensitivity and ``eps_threshold_as_fixed`` is the thesis's accounting (not a
    guarantee)."""
    m = vote_fractions(cv.pool_probabilities, vote)[:n_queries]
    gen = np.random.default_rng(seed)
    q = float(np.exp(multilabel.multilabel_logq(m, threshold, sigma_e)).mean())
    thm12 = data_independent_spent(
        len(m), m.shape[1], sigma_e, Bound.THEOREM12, cv.n_teachers, delta, threshold
    ).epsilon
    check = None if confidence is None else ConfidenceCheck(confidence, sigma_c, rule)
    if check is None:
        rel = aggregators.gnthreshold(m, threshold, sigma_e, gen)
        fn, kw = multilabel.gnthreshold_epsilon, dict(fractions=m)
    else:
        rel = aggregators.confident_gnthreshold(m, threshold, sigma_e, confidence, sigma_c, gen, rule=rule)
        fn, kw = (
            multilabel.confident_gnthreshold_epsilon,
            dict(fractions=m, check=check, charge=Charge(Cost.REALIZED, answered=rel.answered)),
        )
    kw.update(sigma=sigma_e, delta=delta, threshold=threshold, bound=bound, n_teachers=cv.n_teachers)
    spent = fn(**kw, accounting=ACCOUNTING)
    dd = spent.epsilon
    di = data_independent_spent(len(m), m.shape[1], sigma_e, bound, cv.n_teachers, delta, threshold, check).epsilon
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
