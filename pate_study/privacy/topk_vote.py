"""Top-k vote release: each teacher votes for its k most probable labels; Gaussian noise; a fixed threshold.

For a student: GNThreshold (Muschiol 2021 Definition 10) adds noise to the *averaged probabilities* of T
teachers over n labels. One teacher can move every label's average by up to 1/T, so the ℓ2 sensitivity is
√n/T, and with n = 161 Audio Set classes the noise needed is large. Muschiol 2021 §4.2.2 argues that a
teacher's contribution is bounded by the labels it asserts. The top-k vote makes that bound hold by
construction: each teacher casts a 0/1 vote vector with exactly k ones (its k most probable labels), the
votes are summed per label, and the release is GNThreshold on the resulting vote fractions.

Mechanism (one query; the noise convention of GNThreshold in :mod:`~pate_study.privacy.multilabel`:
σ is the standard deviation of one Gaussian draw per label added to the vote *fraction*, the σ_e of the
thesis; on vote counts that is σ·T):

1. teacher t votes v_t ∈ {0, 1}^n with Σ_i v_{t,i} = k (:func:`topk_votes`, ties to the lower label index);
2. m_i = (1/T) Σ_t v_{t,i} (:func:`topk_fractions`; every row sums to k);
3. label i is released iff m_i + N(0, σ²) > th, with a threshold th fixed before seeing the votes
   (:func:`topk_release`, which runs :func:`~pate_study.privacy.aggregators.gnthreshold`).

Sensitivity (replace-one-teacher neighbours, the relation used throughout PATE): v_t − v'_t has entries in
{−1, 0, 1}, as many +1 as −1 (both vectors have k ones), and at most min(k, n − k) of each (a label can only
be switched on where v_t has a zero). So ‖m − m'‖₂² ≤ 2·min(k, n − k)/T², i.e. **Δ₂ = √(2k)/T** for k ≤ n/2
(√(2k) on counts), reached when the teacher swaps k labels for k others (:func:`topk_sensitivity`). With
k = 3 and n = 161 this is √6/T instead of GNThreshold's √161/T.

Accounting (:func:`topk_epsilon`): the release is post-processing of the Gaussian mechanism on m, so per
query it is (α, αΔ₂²/(2σ²))-RDP (Mironov 2017 Proposition 7, computed by
:func:`~pate_study.privacy.rdp.rdp_linear_data_independent`), composed over queries (Mironov 2017
Proposition 1) and converted by :func:`~pate_study.privacy.accounting.account` (basic: Mironov 2017
Proposition 3; improved: Canonne, Kamath & Steinke 2020 Proposition 12 / Balle et al. 2020 Theorem 21).
Given the vote fractions and the threshold, a data-dependent bound is available as for GNThreshold:
Papernot et al. 2018 Theorem 6 with q̃ = 1 − Π_i Φ(|m_i − th|/σ) (Muschiol 2021 Theorem 13, exact here
because the labels' noises are independent) and the slope Δ₂²/(2σ²); like every data-dependent ε it depends
on the private votes (release it with smooth sensitivity, :mod:`~pate_study.privacy.smooth_sensitivity`).

Exact profile (:func:`topk_exact_epsilon`): with the queries fixed in advance (PATE's student queries are
public), the N releases are one Gaussian mechanism on the concatenated vote vectors, ℓ2 sensitivity √N·Δ₂
(the composition of Gaussian differential privacy, Dong, Roth & Su 2022), whose hockey-stick divergence is
known in closed form (Balle & Wang 2018 Theorem 8, :func:`gaussian_delta`). That ε is exact for the
Gaussian mechanism on m and hence an upper bound for the thresholded labels; the RDP value of
:func:`topk_epsilon` is at least it.

Confident variant (:func:`confident_topk_release`, :func:`confident_topk_epsilon`; Muschiol 2021 Definition 12
with the structure of :func:`~pate_study.privacy.multilabel.confident_gnthreshold_epsilon`): a noisy check on
the top vote fractions decides whether the query is answered at all (a
:class:`~pate_study.privacy.options.ConfidenceCheck`). ``ConfidenceRule.MAX``: max_i m_i + N(0, σ_c²) ≥
th_c, sensitivity 1/T; ``ConfidenceRule.PRINTED``: each of the top-n values m_(j) − th + N(0, σ_c²) ≥ th_c. Sorting is
1-Lipschitz in ℓ∞ and non-expansive in ℓ2 (rearrangement inequality, Hardy, Littlewood & Pólya 1952 Thm 368),
so the checked vector moves by at most √(min(n_checked, 2·min(k, n − k)))/T: check slope
min(n_checked, 2·min(k, n − k))/(2T²σ_c²) (:func:`confidence_check_slope`). The check is charged on every
query (Papernot et al. 2018 Theorem 6 on the answered event, q = min(Pr, 1 − Pr)); the release on answered
queries (``Cost.REALIZED``, the default: the guarantee of the run) or weighted by Pr[answered] (``Cost.EXPECTED``:
an ``ExpectedCost``, expected, not a guarantee), as a :class:`~pate_study.privacy.options.Charge` says.

Feeding the later multi-label mechanisms (:mod:`~pate_study.privacy.multiwinner`, Dziedzic et al. 2023):

* :func:`topk_votes` gives the ``teacher_votes`` they take. Binary voting's accountant charges every one of
  the n labels (k·α/σ² per query in their notation with k = n); with top-k votes at most 2·min(k, n − k)
  labels change when one teacher is replaced, so its data-independent RDP drops to 2·min(k, n − k)·α/σ²
  (:func:`binary_topk_epsilon`; the sensitivity changes, so this is a new accountant, not a reuse).
  τ voting with τ = √k clips nothing (‖v_t‖₂ = √k) and its accountant α·τ²/σ² = α·k/σ² is this module's
  slope in count units; Powerset voting keeps α/σ² (one set per teacher).
* :func:`calibrated_votes` binarises each teacher at its own threshold θ_t, chosen so that it asserts k
  labels per query *on average* over the queries given (the (N·k)-th largest of its probabilities). θ_t is a
  function of teacher t's own outputs only, so replacing one teacher's data changes that teacher's votes and
  no other's: the mechanism's neighbouring relation is unchanged. Per query, though, a teacher may assert
  more than k labels, so these votes carry **no** top-k sensitivity bound: feed them only to mechanisms whose
  analysis does not need one (Binary, τ with clipping, Powerset; their accountants unchanged), never to
  :func:`topk_epsilon` or :func:`binary_topk_epsilon`.

Every function validates its input (errors name the parameter and what was expected), is vectorised over
teachers, queries and labels, and draws randomness only from an explicit seed or Generator.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import check_fixed_threshold, check_fractions
from pate_study.privacy.accounting import ExpectedCost, PrivacySpent, account, expected_cost, query_mode
from pate_study.privacy.aggregators import (
    MultiLabelAggregation,
    confident_gnthreshold,
    gnthreshold,
    resolve_thresholds,
)
from pate_study.privacy.multilabel import confident_check_weights, multilabel_logq
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting, Charge, ConfidenceCheck, ConfidenceRule, Cost
from pate_study.privacy.rdp import rdp_linear_data_independent
from pate_study.privacy.rdp_curves import log1mexp, total_rdp_data_dependent

__all__ = [
    "check_probabilities",
    "check_k",
    "topk_votes",
    "topk_fractions",
    "check_topk_fractions",
    "topk_sensitivity",
    "topk_rdp_slope",
    "topk_release",
    "topk_epsilon",
    "confidence_check_slope",
    "confident_topk_release",
    "confident_topk_epsilon",
    "gaussian_log_delta",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_composition_epsilon",
    "topk_exact_epsilon",
    "binary_topk_epsilon",
    "calibrated_thresholds",
    "calibrated_votes",
    "topk_vote_grid",
]

_TOTAL_ATOL = 1e-6


# ----------------------------------------------------------------- validation


def check_probabilities(probabilities: Any, name: str = "probabilities") -> np.ndarray:
    """Validate per-teacher label probabilities ``float[n_teachers, n_queries, n_labels]`` in [0, 1]."""
    arr = np.asarray(probabilities)
    if arr.dtype == object or np.iscomplexobj(arr) or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected a real numeric array of probabilities, got dtype {arr.dtype}")
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(
            f"{name}: expected a non-empty 3-D array [n_teachers, n_queries, n_labels] of "
            f"probabilities, got shape {arr.shape}"
        )
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite probabilities, found NaN or inf")
    if np.any(arr < 0.0) or np.any(arr > 1.0):
        raise ValueError(f"{name}: expected probabilities in [0, 1], found range [{arr.min()}, {arr.max()}]")
    return arr


def check_k(k: Any, n_labels: int) -> int:
    """Require an integer 1 <= k < n_labels (k = n_labels would make every teacher vote for every label)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) < int(n_labels):
        raise ValueError(
            f"k: expected an integer with 1 <= k < n_labels = {n_labels} (the number of labels each "
            f"teacher votes for), got {k!r}"
        )
    return int(k)


@constrained(n_teachers="count")
def check_topk_fractions(fractions: Any, k: int, n_teachers: int | None = None, name: str = "fractions") -> np.ndarray:
    """Validate top-k vote fractions ``[n_queries, n_labels]``: in [0, 1], each row summing to k, and, with
    ``n_teachers``, multiples of 1/T. Averaged probabilities (GNThreshold's input) fail the row-sum check."""
    m = check_fractions(fractions, name=name)
    k = check_k(k, m.shape[1])
    totals = m.sum(axis=1)
    bad = np.abs(totals - k) > _TOTAL_ATOL * max(k, 1)
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}: expected top-{k} vote fractions (each row sums to k = {k}); row {row} sums to "
            f"{totals[row]:.6g}. Build them with topk_fractions(probabilities, k)"
        )
    if n_teachers is not None:
        t = n_teachers
        if np.any(np.abs(m * t - np.rint(m * t)) > _TOTAL_ATOL):
            raise ValueError(f"{name}: expected multiples of 1/n_teachers = 1/{t} (vote counts / T)")
    return m


# ------------------------------------------------------------------- votes


def topk_votes(probabilities: Any, k: int) -> np.ndarray:
    """Each teacher's vote for its k most probable labels, ``bool[n_teachers, n_queries, n_labels]``.

    Exactly k ones per teacher and query; ties go to the lower label index (stable sort), so the votes
    are a deterministic function of the probabilities.
    """
    p = check_probabilities(probabilities)
    k = check_k(k, p.shape[2])
    votes = np.empty(p.shape, dtype=bool)
    for t in range(p.shape[0]):  # one teacher at a time: memory [n_queries, n_labels]
        kth = -np.partition(-p[t], k - 1, axis=1)[:, k - 1 : k]  # k-th largest probability per query
        above = p[t] > kth
        tied = p[t] == kth
        need = k - np.count_nonzero(above, axis=1, keepdims=True)  # >= 1; filled by the lowest tied labels
        votes[t] = above | (tied & (np.cumsum(tied, axis=1) <= need))
    return votes


def topk_fractions(probabilities: Any, k: int) -> np.ndarray:
    """Vote fractions m_i = (1/T) Σ_t v_{t,i} of the top-k votes (:func:`topk_votes`), ``[n_queries, n_labels]``.

    Counts are summed as integers (exact, order-independent), then divided by T.
    """
    votes = topk_votes(probabilities, k)
    return np.add.reduce(votes, axis=0, dtype=np.int64) / float(votes.shape[0])


def calibrated_thresholds(probabilities: Any, k: int) -> np.ndarray:
    """Per-teacher threshold θ_t ``[n_teachers]``: the (N·k)-th largest of teacher t's N·n probabilities, so that
    p ≥ θ_t asserts k labels per query on average over the N queries (exactly N·k when there are no ties)."""
    p = check_probabilities(probabilities)
    k = check_k(k, p.shape[2])
    flat = p.reshape(p.shape[0], -1)
    rank = p.shape[1] * k  # N·k <= N·(n − 1) < N·n
    return -np.partition(-flat, rank - 1, axis=1)[:, rank - 1]


def calibrated_votes(probabilities: Any, k: int) -> np.ndarray:
    """Binary votes p_{t,i} ≥ θ_t with the per-teacher :func:`calibrated_thresholds` (module docstring: valid
    input of Binary, τ and Powerset voting with their own accountants; no per-query top-k sensitivity)."""
    p = check_probabilities(probabilities)
    return p >= calibrated_thresholds(p, k)[:, None, None]


# ------------------------------------------------------------ sensitivity


@constrained(n_labels="count", n_teachers="count")
def topk_sensitivity(k: int, n_labels: int, n_teachers: int) -> float:
    """ℓ2 sensitivity of the top-k vote fractions under replacing one teacher: √(2·min(k, n − k))/T."""
    k = check_k(k, n_labels)
    return math.sqrt(2.0 * min(k, n_labels - k)) / n_teachers


@constrained(sigma="noise_scale", n_labels="count", n_teachers="count")
def topk_rdp_slope(sigma: float, k: int, n_labels: int, n_teachers: int) -> float:
    """Per-query RDP slope Δ₂²/(2σ²) = min(k, n − k)/(T²σ²) of the top-k release (Mironov 2017 Prop. 7)."""
    return topk_sensitivity(k, n_labels, n_teachers) ** 2 / (2.0 * sigma**2)


# ----------------------------------------------------------------- release


def _fixed_threshold(threshold: Any, m: np.ndarray) -> np.ndarray:
    """The release threshold of each query of ``m``: a fixed threshold (checked where the call entered the library,
    kind ``"fixed_threshold"``), which the data-dependent bound needs (None refused)."""
    if threshold is None:
        check_fixed_threshold("threshold", threshold)
    return resolve_thresholds(m, threshold)


@constrained(n_teachers="count", threshold="fixed_threshold", sigma="noise_scale")
def topk_release(
    fractions: Any, *, k: int, n_teachers: int, threshold: Any, sigma: float, rng: Any
) -> MultiLabelAggregation:
    """Release label i iff m_i + N(0, σ²) > th on top-k vote fractions (GNThreshold, Muschiol 2021 Definition 10,
    on the votes of :func:`topk_fractions`). ``threshold``: a number, or one per query, fixed in advance."""
    m = check_topk_fractions(fractions, k, n_teachers)
    out = gnthreshold(m, threshold, sigma, rng)
    return dataclasses.replace(
        out, mechanism="topk-vote", params={**out.params, "k": int(k), "n_teachers": int(n_teachers)}
    )


# --------------------------------------------------------------- accountants


@constrained(
    n_teachers="count",
    sigma="noise_scale",
    delta="delta",
    n_queries="count",
    n_labels="count",
    threshold="fixed_threshold",
    accounting="accounting",
)
def topk_epsilon(
    *,
    k: int,
    n_teachers: int,
    sigma: float,
    delta: float,
    n_queries: int | None = None,
    n_labels: int | None = None,
    fractions: Any = None,
    threshold: Any = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """(ε, δ) of the top-k vote release over all queries (module docstring).

    Data-independent (``n_queries`` + ``n_labels``): per query (α, α·Δ₂²/(2σ²))-RDP with Δ₂ of
    :func:`topk_sensitivity` (Mironov 2017 Prop. 7), composed over queries (Prop. 1), converted at δ.
    Data-dependent (``fractions`` from :func:`topk_fractions` and the release ``threshold``): Papernot et al.
    2018 Theorem 6 per query with q̃ = 1 − Π_i Φ(|m_i − th|/σ) (Muschiol 2021 Theorem 13) and the same slope,
    never above the data-independent value. ``accounting`` (:class:`~pate_study.privacy.options.Accounting`): the
    order grid and the conversion (default: Papernot et al. 2018's grid, basic conversion).
    """
    n, m = query_mode(n_queries, fractions, lambda f: check_fractions(f), data_name="fractions")
    if m is not None:
        n_lab = m.shape[1]
        check_topk_fractions(m, k, n_teachers)
        logq = multilabel_logq(m, _fixed_threshold(threshold, m), sigma)
    else:
        if n_labels is None:
            raise ValueError("n_labels: the data-independent bound needs the number of labels")
        n_lab = n_labels
        logq = None
    slope = topk_rdp_slope(sigma, k, n_lab, n_teachers)

    def total(grid: np.ndarray) -> np.ndarray:
        if logq is None:
            return n * rdp_linear_data_independent(slope, grid)
        return total_rdp_data_dependent(logq, slope, grid)

    extra = {} if m is None else {"threshold": float(np.mean(resolve_thresholds(m, threshold)))}
    return account(
        total,
        delta=delta,
        accounting=accounting,
        accountant="multilabel2021",
        mechanism="topk-vote",
        n_queries=n,
        data_dependent=m is not None,
        sigma=float(sigma),
        k=int(k),
        n_labels=n_lab,
        n_teachers=int(n_teachers),
        sensitivity=topk_sensitivity(k, n_lab, n_teachers),
        **extra,
    )


@constrained(check="confidence_check", n_labels="count", n_teachers="count")
def confidence_check_slope(check: ConfidenceCheck, k: int, n_labels: int, n_teachers: int) -> float:
    """RDP slope of the confidence check on top-k vote fractions: min(n_checked, 2·min(k, n − k))/(2T²σ_c²),
    n_checked = 1 for ``ConfidenceRule.MAX`` and min(top_n, n) for ``PRINTED`` (module docstring; Mironov 2017
    Prop. 7); σ_c, the rule and top_n are ``check``'s."""
    n = n_labels
    k = check_k(k, n)
    n_checked = 1 if check.rule is ConfidenceRule.MAX else min(check.top_n, n)
    return min(n_checked, 2 * min(k, n - k)) / (2.0 * n_teachers**2 * check.sigma**2)


@constrained(n_teachers="count", threshold="fixed_threshold", sigma="noise_scale", check="confidence_check")
def confident_topk_release(
    fractions: Any,
    *,
    k: int,
    n_teachers: int,
    threshold: Any,
    sigma: float,
    check: ConfidenceCheck,
    rng: Any,
) -> MultiLabelAggregation:
    """Confident-GNThreshold (Muschiol 2021 Definition 12,
    :func:`~pate_study.privacy.aggregators.confident_gnthreshold`)
    on top-k vote fractions: the check's noise is drawn first, then the labels' noise for every query. ``check``:
    the confidence check (:class:`~pate_study.privacy.options.ConfidenceCheck`: th_c, σ_c, rule, top_n)."""
    m = check_topk_fractions(fractions, k, n_teachers)
    out = confident_gnthreshold(
        m, threshold, sigma, check.threshold, check.sigma, rng, rule=check.rule.value, top_n=check.top_n
    )
    return dataclasses.replace(
        out, mechanism="confident-topk-vote", params={**out.params, "k": int(k), "n_teachers": int(n_teachers)}
    )


@constrained(
    n_teachers="count",
    sigma="noise_scale",
    check="confidence_check",
    delta="delta",
    threshold="fixed_threshold",
    n_queries="count",
    n_labels="count",
    charge="charge",
    accounting="accounting",
)
def confident_topk_epsilon(
    *,
    k: int,
    n_teachers: int,
    sigma: float,
    check: ConfidenceCheck,
    delta: float,
    fractions: Any = None,
    threshold: Any = None,
    n_queries: int | None = None,
    n_labels: int | None = None,
    charge: Charge = Charge(),
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent | ExpectedCost:
    """(ε, δ) of :func:`confident_topk_release` over all queries (module docstring).

    Data-independent (``n_queries`` + ``n_labels``): every query charged the check and the release,
    (check slope + :func:`topk_rdp_slope`)·α per query (``cost="all_answered"``). Data-dependent
    (``fractions`` + ``threshold``): the check by Papernot et al. 2018 Theorem 6 on the answered event on every
    query, the release by Theorem 6 with q̃ (as :func:`topk_epsilon`) charged by ``charge``
    (:class:`~pate_study.privacy.options.Charge`): ``Cost.REALIZED`` (the default, the guarantee of the run:
    ``charge.answered`` ``bool[n_queries]``, or re-drawn from ``charge.rng`` exactly as
    :func:`confident_topk_release` draws the check) or ``Cost.EXPECTED`` (weighted by Pr[answered]: returned as an
    :class:`~pate_study.privacy.accounting.ExpectedCost`, expected, not a guarantee). ``check``: the confidence
    check (:class:`~pate_study.privacy.options.ConfidenceCheck`); ``accounting``: orders and conversion.
    """
    n, m = query_mode(n_queries, fractions, lambda f: check_fractions(f), data_name="fractions")
    n_lab = m.shape[1] if m is not None else None
    if m is None:
        if n_labels is None:
            raise ValueError("n_labels: the data-independent bound needs the number of labels")
        n_lab = n_labels
    slope = topk_rdp_slope(sigma, k, n_lab, n_teachers)
    slope_c = confidence_check_slope(check, k, n_lab, n_teachers)
    params = dict(
        sigma=float(sigma),
        **check.as_params(),
        k=int(k),
        n_labels=n_lab,
        n_teachers=int(n_teachers),
    )
    common = {"delta": delta, "accounting": accounting, "accountant": "multilabel2021", "n_queries": n}
    if m is None:
        return account(
            lambda grid: n * rdp_linear_data_independent(slope + slope_c, grid),
            **common,
            mechanism="confident-topk-vote",
            data_dependent=False,
            cost="all_answered",
            **params,
        )
    m = check_topk_fractions(m, k, n_teachers)
    th = _fixed_threshold(threshold, m)
    logpr, log_not, weights = confident_check_weights(m, th, check, charge)
    log_check_q = np.minimum(logpr, log_not)
    logq = multilabel_logq(m, th, sigma)

    def total(grid: np.ndarray) -> np.ndarray:
        return total_rdp_data_dependent(log_check_q, slope_c, grid) + total_rdp_data_dependent(
            logq, slope, grid, weights
        )

    spent = account(
        total,
        **common,
        mechanism="confident-topk-vote",
        data_dependent=True,
        cost=charge.cost.value,
        expected_answered=math.fsum(weights.tolist()),
        threshold=float(np.mean(th)),
        **params,
    )
    return expected_cost(spent) if charge.cost is Cost.EXPECTED else spent


@constrained(mu="gaussian_mu")
def gaussian_log_delta(epsilon: Any, mu: float) -> np.ndarray:
    """log δ(ε) of the Gaussian mechanism with Δ₂/σ = μ (Balle & Wang 2018 Theorem 8),
    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), as log Φ(a) + log(1 − e^{ε + log Φ(b) − log Φ(a)}): finite far in
    the tail, where δ itself underflows and the difference of the two terms cancels. Elementwise in ε ≥ 0."""
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon: expected finite values >= 0, got {epsilon!r}")
    log_a = log_ndtr(mu / 2.0 - eps / mu)
    log_b = eps + log_ndtr(-mu / 2.0 - eps / mu)
    return log_a + log1mexp(np.minimum(log_b - log_a, 0.0))


@constrained(mu="gaussian_mu")
def gaussian_delta(epsilon: Any, mu: float) -> np.ndarray:
    """Exact privacy profile δ(ε) of the Gaussian mechanism with Δ₂/σ = μ: exp of :func:`gaussian_log_delta`."""
    return np.exp(gaussian_log_delta(epsilon, mu))


@constrained(delta="delta", mu="gaussian_mu")
def gaussian_epsilon(delta: float, mu: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ δ for the Gaussian mechanism with Δ₂/σ = μ (δ(ε) decreases in ε; the root of
    :func:`gaussian_log_delta` (ε) = log δ, by Brent's method)."""
    log_delta = math.log(delta)
    if float(gaussian_log_delta(0.0, mu)) <= log_delta:
        return 0.0

    def gap(e: float) -> float:
        return float(gaussian_log_delta(e, mu)) - log_delta

    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * -log_delta) + 1.0  # δ(hi) ≤ Φ̄(√(2 log 1/δ)) < δ
    while gap(hi) > 0:
        hi *= 2.0
    return float(brentq(gap, 0.0, hi, xtol=1e-12, rtol=1e-12))


def gaussian_composition_epsilon(spent: PrivacySpent) -> float:
    """Exact ε at ``spent.delta`` of a data-independent release that is a composition of Gaussian mechanisms
    (or post-processing of one: thresholding, argmax), beside the RDP value ``spent.epsilon``.

    A Gaussian mechanism with Δ₂/σ = μ_i is (α, α μ_i²/2)-RDP (Mironov 2017 Prop. 7), so the composed linear RDP
    curve ρ·α gives ρ = Σ μ_i²/2, and the composition is exactly one Gaussian mechanism with μ = √(2ρ) (Dong, Roth
    & Su 2019, Corollary 2), whose exact privacy profile is Balle & Wang 2018, Theorem 8 (:func:`gaussian_epsilon`).
    Valid only when every composed step is a Gaussian mechanism (top-k vote, τ, Binary and powerset voting,
    GNThreshold, their checks): the caller states that; a data-dependent or non-linear curve is refused.
    """
    if not isinstance(spent, PrivacySpent):
        raise ValueError(f"spent: expected a PrivacySpent, got {type(spent).__name__}")
    if spent.data_dependent:
        raise ValueError("spent: a data-dependent bound is not a composition of Gaussian mechanisms")
    rho = np.asarray(spent.rdp_or_logmgf, dtype=np.float64) / np.asarray(spent.orders, dtype=np.float64)
    if spent.accountant == "moments2017" or not np.allclose(rho, rho[0], rtol=1e-9, atol=0.0) or not rho[0] > 0:
        raise ValueError("spent: expected a composed RDP curve rho * order (Gaussian mechanisms), got another shape")
    return gaussian_epsilon(spent.delta, math.sqrt(2.0 * float(rho[0])))


@constrained(n_labels="count", n_teachers="count", sigma="noise_scale", delta="delta", n_queries="count")
def topk_exact_epsilon(*, k: int, n_labels: int, n_teachers: int, sigma: float, delta: float, n_queries: int) -> float:
    """Exact ε at δ of ``n_queries`` composed Gaussian mechanisms on the top-k vote fractions: μ = √N·Δ₂/σ
    (Dong, Roth & Su 2019 Cor. 2), ε from :func:`gaussian_epsilon` (Balle & Wang 2018 Thm 8). A valid, tighter
    data-independent guarantee for the thresholded release (post-processing)."""
    mu = math.sqrt(n_queries) * topk_sensitivity(k, n_labels, n_teachers) / sigma
    if not math.isfinite(mu * mu):
        raise ValueError(
            f"sigma/n_queries: sigma={sigma!r} over {float(n_queries):.3g} queries gives a composed Gaussian "
            f"with sqrt(N)·Δ₂/σ = {mu:.3g}, whose ε exceeds the float range"
        )
    return gaussian_epsilon(delta, mu)


@constrained(sigma="noise_scale", delta="delta", n_labels="count", n_queries="count", accounting="accounting")
def binary_topk_epsilon(
    *,
    sigma: float,
    delta: float,
    k: int,
    n_labels: int,
    n_queries: int,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """Data-independent (ε, δ) of Binary voting (Dziedzic et al. 2023;
    :func:`~pate_study.privacy.multiwinner.binary_pate`)
    fed :func:`topk_votes`: σ on each of the counts (T − p_i, p_i), one teacher moves each changed label's pair by
    (±1, ∓1) and changes at most 2·min(k, n − k) labels, so ℓ2 sensitivity² 4·min(k, n − k) and RDP
    α·2·min(k, n − k)/σ² per query (Mironov 2017 Prop. 7) instead of n·α/σ² for arbitrary binary votes.
    ``accounting``: as :func:`topk_epsilon`."""
    n_lab, n = n_labels, n_queries
    k = check_k(k, n_lab)
    slope = 2.0 * min(k, n_lab - k) / sigma**2
    return account(
        lambda grid: n * rdp_linear_data_independent(slope, grid),
        delta=delta,
        accounting=accounting,
        accountant="multiwinner2023",
        mechanism="binary-topk",
        n_queries=n,
        data_dependent=False,
        sigma=sigma,
        k=k,
        n_labels=n_lab,
    )


# ------------------------------------------------- exact enumeration (tests, audits)


@constrained(n_teachers="count", n_labels="count")
def topk_vote_grid(n_teachers: int, n_labels: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every top-k vote-fraction vector of T teachers on n labels and every neighbouring pair (one teacher
    changes its k-set): ``(fractions [M, n], i, j)``, ordered pairs, i ≠ j. For exact profiles of small instances."""
    t, n = n_teachers, n_labels
    k = check_k(k, n)
    n_sets = math.comb(n, k)
    if math.comb(n_sets + t - 1, t) > 50_000:  # checked before anything is enumerated
        raise ValueError(
            f"n_teachers/n_labels/k: too many vote configurations to enumerate (C({n_sets} + {t} - 1, {t}) > 50000)"
        )
    sets = np.array([[i in c for i in range(n)] for c in itertools.combinations(range(n), k)], dtype=np.int64)
    profiles = list(itertools.combinations_with_replacement(range(len(sets)), t))
    counts = np.array([sets[list(p)].sum(axis=0) for p in profiles])
    uniq, inverse = np.unique(counts, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    pairs = set()
    for idx, prof in enumerate(profiles):
        for pos in range(t):  # replace one teacher's set
            for s in range(len(sets)):
                if s != prof[pos]:
                    other = counts[idx] - sets[prof[pos]] + sets[s]
                    j = int(np.flatnonzero(np.all(uniq == other, axis=1))[0])
                    if j != inverse[idx]:
                        pairs.add((int(inverse[idx]), j))
    i, j = (np.array(x, dtype=np.int64) for x in zip(*sorted(pairs)))
    return uniq / float(t), i, j
