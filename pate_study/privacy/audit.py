"""Empirical privacy audits: Monte Carlo lower bounds on ε.

For a student: an accountant gives an *upper* bound on ε. An audit runs the
mechanism many times on two neighbouring inputs D and D' and looks for an
output event S that is much more likely under one than under the other. By the
definition of (ε, δ)-DP, Pr[M(D) ∈ S] ≤ e^ε Pr[M(D') ∈ S] + δ, so

    ε ≥ log((Pr[M(D) ∈ S] − δ) / Pr[M(D') ∈ S])

for *every* event S. Replacing the probabilities by Clopper–Pearson bounds
(a lower bound for the numerator, an upper bound for the denominator, each at
level 1 − (1 − confidence)/2) gives a lower bound on the true ε that holds with
probability ≥ ``confidence``. If it exceeds the claimed ε, the claim (or the
code) is wrong.

Method, kept simple on purpose:

1. *Selection.* For each candidate pair of neighbouring inputs, draw
   ``n_select`` outputs under D and D'; consider the events {x ≥ t} and
   {x ≤ t} (x a scalar output or statistic) in both directions; keep the
   (pair, event, direction) with the largest Clopper–Pearson lower bound.
2. *Evaluation.* Draw ``n_samples`` fresh outputs under the chosen pair and
   compute the bound above on them only, so the choice made in step 1 cannot
   bias the confidence statement.

Ready-made audits (worst-case neighbours, the package's own code):
:func:`audit_lnmax`, :func:`audit_gnmax`, :func:`audit_local_laplace`,
:func:`audit_gnthreshold`, :func:`audit_topk` (which also catches a √k instead of √(2k)
sensitivity), and for the discrete mechanisms of the DeepLog study
:func:`audit_randomized_response` and :func:`audit_exponential_mechanism` (a broken
scale there means ε/Δu instead of ε/(2Δu), or 2ε in k-RR). Each accepts ``noise_scale_factor``: 0.5 runs a
deliberately broken mechanism (noise scale halved) against the unchanged
claim, which the audit should catch. :func:`audit_lnmax` and
:func:`audit_local_laplace` also accept a replacement implementation (e.g. one
with a suspected bug) through ``aggregator`` / ``mechanism``.
:func:`standard_audits` runs all of them;
``pandas.DataFrame([r.to_dict() for r in results])`` tabulates the results.

Defaults and what they can catch (seed 0, default sample sizes unless stated;
``tests/privacy/test_audit.py`` checks the "caught" cases):

* The default noise parameters are not 1 (LNMax γ = 0.5, local Laplace ρ = 0.25):
  at γ = 1 or ρ = 1 the classic bug "Laplace scale γ instead of 1/γ" changes
  nothing and no audit could see it. With γ = 0.5 that bug (scale 0.5 instead of
  2) is caught; so is ρ = 0.25 (scale 0.25 instead of 4).
* Noise scale ×0.5: caught for all four.
* Noise scale ×0.8: caught for the local Laplace mechanism (the worst-case
  event {score = 2} is likely). LNMax's worst-case loss is reached only in the
  tail of the label distribution, so at 200,000 samples the bound stays below
  the claim (0.98 vs 1.0); with ``n_samples=2_000_000`` it is caught. GNMax and
  GNThreshold at ×0.8 are *not* caught at the default sample sizes (GNMax 2.44
  vs claimed 3.19, GNThreshold 4.71 vs 5.42): their claims are conversions of
  RDP bounds that single events cannot reach. A lower bound below the claim
  is not a proof of privacy.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, Sequence

import numpy as np
from scipy.stats import beta as beta_dist

from pate_study.privacy import exact_profile
from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import as_generator, check_positive
from pate_study.privacy.adaptive_k import adaptive_k_epsilon, adaptive_k_params, adaptive_k_release
from pate_study.privacy.aggregators import gnmax, gnthreshold, lnmax
from pate_study.privacy.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_log_probs,
    local_laplace,
    local_laplace_epsilon,
    randomized_response,
)
from pate_study.privacy.multilabel import gnthreshold_epsilon, multilabel_slope
from pate_study.privacy.options import Accounting, Conversion
from pate_study.privacy.rdp import gnmax_epsilon
from pate_study.privacy.topk_vote import topk_epsilon, topk_release, topk_vote_grid

__all__ = [
    "AuditResult",
    "clopper_pearson",
    "epsilon_lower_bound",
    "audit_mechanism",
    "audit_lnmax",
    "audit_gnmax",
    "audit_local_laplace",
    "audit_gnthreshold",
    "audit_gnthreshold_adaptive",
    "audit_adaptive_k",
    "audit_topk",
    "audit_randomized_response",
    "audit_exponential_mechanism",
    "worst_case_utility",
    "standard_audits",
]

logger = logging.getLogger(__name__)

Sampler = Callable[[Any, int, int, np.random.Generator], np.ndarray]
_MAX_THRESHOLDS = 256
#: The claims audited: the improved conversion on a fine grid of orders from 1.01 (one query's ε).
_AUDIT_ACCOUNTING = Accounting(np.linspace(1.01, 200, 4000), Conversion.IMPROVED)
#: What every audit takes and passes on to :func:`audit_mechanism`, checked where the call enters the library.
_SAMPLING = {"noise_scale_factor": "positive", "n_samples": "count", "confidence": "probability"}


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit.

    ``epsilon_lower`` is a lower bound on the mechanism's true ε (at ``delta``)
    holding with probability ≥ ``confidence``; ``violation`` is True when it
    exceeds ``claimed_epsilon``.
    """

    mechanism: str
    claimed_epsilon: float
    epsilon_lower: float
    delta: float
    confidence: float
    n_samples: int
    candidate: str
    event: str
    p_lower: float
    p_upper: float
    noise_scale_factor: float = 1.0

    @property
    def violation(self) -> bool:
        """True when the lower bound exceeds the claimed ε."""
        return self.epsilon_lower > self.claimed_epsilon

    def to_dict(self) -> dict:
        """Flat dict (one DataFrame row), including ``violation``."""
        out = dataclasses.asdict(self)
        out["violation"] = self.violation
        return out


@dataclasses.dataclass(frozen=True)
class _Sampling:
    """The sampling settings every ready-made audit takes (:data:`_SAMPLING`) and hands on unchanged to
    :func:`audit_mechanism`, which checks them where the call enters the library: the noise scale factor of the
    audited mechanism, the evaluation sample size, the confidence and the seed."""

    noise_scale_factor: float
    n_samples: int
    confidence: float
    seed: Any

    def audit(
        self, sampler: Sampler, candidates: Sequence[Any], *, claimed_epsilon: float, mechanism: str, delta: float = 0.0
    ) -> AuditResult:
        """:func:`audit_mechanism` of ``sampler`` over ``candidates`` against ``claimed_epsilon`` at ``delta``."""
        return audit_mechanism(
            sampler,
            candidates,
            claimed_epsilon=claimed_epsilon,
            delta=delta,
            n_samples=self.n_samples,
            confidence=self.confidence,
            seed=self.seed,
            mechanism=mechanism,
            noise_scale_factor=self.noise_scale_factor,
        )


def clopper_pearson(k: Any, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson bounds (lower, upper) on a binomial proportion, each at ``level``.

    lower = Beta⁻¹(1 − level; k, n − k + 1) (0 if k = 0); upper = Beta⁻¹(level; k + 1, n − k) (1 if k = n).
    """
    k = np.asarray(k, dtype=np.float64)
    a = 1.0 - level
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, beta_dist.ppf(a, np.maximum(k, 1e-300), n - k + 1), 0.0)
        hi = np.where(k < n, beta_dist.ppf(1 - a, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return lo, hi


def epsilon_lower_bound(k_num: Any, k_den: Any, n: int, delta: float, confidence: float) -> np.ndarray:
    """log((p_lo − δ)/p_hi) from event counts out of n under two inputs (0 where not positive): the (ε, δ)-DP
    inequality Pr[M(D)∈S] ≤ e^ε Pr[M(D')∈S] + δ (Dwork & Roth 2014 Def. 2.4) solved for ε with Clopper–Pearson
    bounds."""
    level = 1.0 - (1.0 - confidence) / 2.0
    p_lo, _ = clopper_pearson(k_num, n, level)
    _, p_hi = clopper_pearson(k_den, n, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(np.maximum(p_lo - delta, 0.0) / p_hi)
    return np.maximum(np.nan_to_num(eps, nan=0.0, neginf=0.0), 0.0)


def _events(x_d: np.ndarray, x_p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Thresholds t and counts of {x ≥ t}, {x ≤ t} under both inputs."""
    pooled = np.concatenate([x_d, x_p])
    uniq = np.unique(pooled)
    if uniq.size > _MAX_THRESHOLDS:
        uniq = np.unique(np.concatenate([np.quantile(pooled, np.linspace(0, 1, _MAX_THRESHOLDS)), uniq[[0, -1]]]))
    sd, sp = np.sort(x_d), np.sort(x_p)
    ge_d = len(sd) - np.searchsorted(sd, uniq, "left")
    ge_p = len(sp) - np.searchsorted(sp, uniq, "left")
    le_d = np.searchsorted(sd, uniq, "right")
    le_p = np.searchsorted(sp, uniq, "right")
    return uniq, ge_d, ge_p, le_d, le_p


def _best_event(x_d: np.ndarray, x_p: np.ndarray, delta: float, confidence: float) -> tuple[float, str, float, bool]:
    """Best (bound, kind, threshold, d_first) over events {x ≥ t}, {x ≤ t} and both directions."""
    n = len(x_d)
    t, ge_d, ge_p, le_d, le_p = _events(x_d, x_p)
    options = [
        ("ge", True, epsilon_lower_bound(ge_d, ge_p, n, delta, confidence)),
        ("ge", False, epsilon_lower_bound(ge_p, ge_d, n, delta, confidence)),
        ("le", True, epsilon_lower_bound(le_d, le_p, n, delta, confidence)),
        ("le", False, epsilon_lower_bound(le_p, le_d, n, delta, confidence)),
    ]
    best = max(
        ((float(e.max()), kind, float(t[int(np.argmax(e))]), d_first) for kind, d_first, e in options),
        key=lambda r: r[0],
    )
    return best


@constrained(delta="delta_or_zero", n_select="count", **_SAMPLING)
def audit_mechanism(
    sampler: Sampler,
    candidates: Sequence[Any],
    *,
    claimed_epsilon: float,
    delta: float = 0.0,
    n_samples: int = 200_000,
    n_select: int | None = None,
    confidence: float = 0.95,
    seed: Any = 0,
    mechanism: str = "custom",
    noise_scale_factor: float = 1.0,
) -> AuditResult:
    """Monte Carlo lower bound on ε with a selection/evaluation split (see module docstring).

    ``sampler(candidate, which, n, rng)`` returns ``n`` scalar outputs of the
    mechanism on D (``which=0``) or D' (``which=1``) of a candidate pair.
    """
    if not candidates:
        raise ValueError("candidates: expected at least one candidate pair of neighbouring inputs")
    n_select = n_samples // 2 if n_select is None else n_select
    rng = as_generator(seed, name="seed")
    best = None
    for cand in candidates:
        x_d, x_p = sampler(cand, 0, n_select, rng), sampler(cand, 1, n_select, rng)
        bound, kind, thr, d_first = _best_event(np.asarray(x_d, float), np.asarray(x_p, float), delta, confidence)
        if best is None or bound > best[0]:
            best = (bound, cand, kind, thr, d_first)
    _, cand, kind, thr, d_first = best
    x_d = np.asarray(sampler(cand, 0, n_samples, rng), float)
    x_p = np.asarray(sampler(cand, 1, n_samples, rng), float)
    in_d = (x_d >= thr) if kind == "ge" else (x_d <= thr)
    in_p = (x_p >= thr) if kind == "ge" else (x_p <= thr)
    k_num, k_den = (in_d.sum(), in_p.sum()) if d_first else (in_p.sum(), in_d.sum())
    eps = float(epsilon_lower_bound(k_num, k_den, n_samples, delta, confidence))
    level = 1.0 - (1.0 - confidence) / 2.0
    p_lo = float(clopper_pearson(k_num, n_samples, level)[0])
    p_hi = float(clopper_pearson(k_den, n_samples, level)[1])
    op = ">=" if kind == "ge" else "<="
    event = (
        f"Pr[{'M(D)' if d_first else 'M(Dp)'} in S] vs Pr[{'M(Dp)' if d_first else 'M(D)'} in S], "
        f"S = {{x {op} {thr:.6g}}}"
    )
    result = AuditResult(
        mechanism=mechanism,
        claimed_epsilon=float(claimed_epsilon),
        epsilon_lower=eps,
        delta=float(delta),
        confidence=confidence,
        n_samples=n_samples,
        candidate=str(cand),
        event=event,
        p_lower=p_lo,
        p_upper=p_hi,
        noise_scale_factor=float(noise_scale_factor),
    )
    logger.info("audit %s: eps_lower=%.4g claimed=%.4g (%s)", mechanism, eps, claimed_epsilon, cand)
    return result


@constrained(gamma="positive", **_SAMPLING)
def audit_lnmax(
    gamma: float = 0.5,
    *,
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
    aggregator: Callable[[np.ndarray, float, np.random.Generator], np.ndarray] | None = None,
) -> AuditResult:
    """Audit LNMax's claim of (2γ, 0)-DP per query (Papernot et al. 2017).

    Neighbours: two classes, D = [0, g], D' = [1, g − 1] (one teacher moves its
    vote), for gaps g ≈ c/γ, c ∈ [0.5, 6]; output: the released label. The
    mechanism runs with Laplace scale ``noise_scale_factor``/γ, i.e. it is called
    with γ/``noise_scale_factor``. ``aggregator(votes, gamma, rng) -> labels``
    replaces :func:`~pate_study.privacy.aggregators.lnmax` (to audit another
    implementation). The default γ = 0.5 is not 1, so that a Laplace scale of γ
    instead of 1/γ is visible.
    """
    f = noise_scale_factor
    gaps = np.unique(np.maximum(1, np.round(np.linspace(0.5, 6.0, 12) / gamma))).astype(int)
    run = (lambda v, g, r: lnmax(v, g, r).labels) if aggregator is None else aggregator

    def sampler(g, which, n, rng):
        row = np.array([0, g]) if which == 0 else np.array([1, g - 1])
        return run(np.broadcast_to(row, (n, 2)), gamma / f, rng)

    return _Sampling(f, n_samples, confidence, seed).audit(
        sampler, list(gaps), claimed_epsilon=2 * gamma, mechanism="lnmax" if aggregator is None else "lnmax (custom)"
    )


@constrained(sigma="noise_scale", delta="delta", **_SAMPLING)
def audit_gnmax(
    sigma: float = 2.0,
    *,
    delta: float = 1e-5,
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
) -> AuditResult:
    """Audit GNMax's one-query claim: ε from α/σ² (Papernot et al. 2018 Prop. 8), improved conversion, at δ.

    Neighbours as in :func:`audit_lnmax` with gaps g ≈ c·√2σ, c ∈ [0.25, 4].
    """
    f = noise_scale_factor
    claimed = gnmax_epsilon(sigma=sigma, delta=delta, n_queries=1, accounting=_AUDIT_ACCOUNTING).epsilon
    gaps = np.unique(np.maximum(1, np.round(np.linspace(0.25, 4.0, 16) * np.sqrt(2) * sigma))).astype(int)

    def sampler(g, which, n, rng):
        row = np.array([0, g]) if which == 0 else np.array([1, g - 1])
        return gnmax(np.broadcast_to(row, (n, 2)), sigma * f, rng).labels

    return _Sampling(f, n_samples, confidence, seed).audit(
        sampler, list(gaps), claimed_epsilon=claimed, mechanism="gnmax", delta=delta
    )


@constrained(rho="positive", dim="count", **_SAMPLING)
def audit_local_laplace(
    rho: float = 0.25,
    *,
    dim: int = 4,
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
    mechanism: Callable[[np.ndarray, float, np.random.Generator], np.ndarray] | None = None,
) -> AuditResult:
    """Audit the local mechanism's (2ρ, 0)-DP claim on unit-l1 vectors (MAKE paper; Visca 2021 §4.2.3).

    Neighbours: e₁ and e₂ (l1 distance 2, the diameter). Statistic: the
    Laplace log-likelihood-ratio score |y₁| − |y₁ − 1| + |y₂ − 1| − |y₂| ∈ [−2, 2],
    rounded to 1e-6 (floating-point residue would otherwise bias the events).
    The mechanism runs with scale ``noise_scale_factor``/ρ, i.e. it is called with
    ρ/``noise_scale_factor``. ``mechanism(x, rho, rng) -> y`` replaces
    :func:`~pate_study.privacy.mechanisms.local_laplace` (to audit another
    implementation). The default ρ = 0.25 is not 1, so that a scale of ρ instead
    of 1/ρ is visible.
    """
    f = noise_scale_factor
    if dim < 2:
        raise ValueError(f"dim: expected at least 2 coordinates, got {dim}")
    e = np.eye(dim)
    run = (lambda x, r, gen: local_laplace(x, rho=r, rng=gen)) if mechanism is None else mechanism

    def sampler(_, which, n, rng):
        y = run(np.broadcast_to(e[which], (n, dim)), rho / f, rng)
        score = np.abs(y[:, 0]) - np.abs(y[:, 0] - 1) + np.abs(y[:, 1] - 1) - np.abs(y[:, 1])
        # Round away floating-point residue: otherwise {score >= 2} splits on rounding
        # artefacts whose frequency differs between D and D' (a bias of the statistic).
        return np.round(score, 6)

    return _Sampling(f, n_samples, confidence, seed).audit(
        sampler,
        ["e1 vs e2"],
        claimed_epsilon=local_laplace_epsilon(rho=rho),
        mechanism="local-laplace" if mechanism is None else "local-laplace (custom)",
    )


@constrained(
    sigma="noise_scale", n_labels="count", n_teachers="count", threshold="threshold", delta="delta", **_SAMPLING
)
def audit_gnthreshold(
    sigma: float = 0.1,
    *,
    n_labels: int = 2,
    n_teachers: int = 10,
    threshold: float = 0.5,
    delta: float = 1e-3,
    noise_scale_factor: float = 1.0,
    n_samples: int = 400_000,
    confidence: float = 0.95,
    seed: Any = 0,
) -> AuditResult:
    """Audit GNThreshold's one-query claim with the vote-fraction bound nα/(2T²σ²), improved conversion, at δ.

    Neighbours: every label's fraction th − c·σ (D) vs th − c·σ + 1/T (D': one
    teacher switches all its labels on), c ∈ [0.5, 4]; statistic: the number
    of released labels (a sufficient statistic here).
    """
    f, t = noise_scale_factor, n_teachers
    claimed = gnthreshold_epsilon(
        sigma=sigma,
        delta=delta,
        n_queries=1,
        n_labels=n_labels,
        bound="vote_fraction",
        n_teachers=t,
        accounting=_AUDIT_ACCOUNTING,
    ).epsilon
    offsets = [c for c in np.linspace(0.5, 4.0, 8) if threshold - c * sigma >= 0 and threshold - c * sigma + 1 / t <= 1]
    if not offsets:
        raise ValueError("sigma/threshold: no neighbouring pair of vote fractions fits in [0, 1]")

    def sampler(c, which, n, rng):
        s = threshold - c * sigma + (1.0 / t if which else 0.0)
        return gnthreshold(np.full((n, n_labels), s), threshold, sigma * f, rng).labels.sum(axis=1)

    return _Sampling(f, n_samples, confidence, seed).audit(
        sampler, offsets, claimed_epsilon=claimed, mechanism="gnthreshold", delta=delta
    )


def _worst_pairs(logprobs: np.ndarray, i: np.ndarray, j: np.ndarray, delta: float, top: int) -> list[tuple[int, int]]:
    """The ``top`` neighbouring pairs (``i[k]``, ``j[k]``) with the largest exact ε at ``delta``
    (:func:`pate_study.privacy.exact_profile.worst_pairs`), as plain index pairs, worst first."""
    order, _ = exact_profile.worst_pairs(logprobs, i, j, delta, top=top)
    return [(int(i[k]), int(j[k])) for k in order]


def _stressing_pairs(
    logprobs: np.ndarray, n_teachers: int, n_labels: int, delta: float, top: int
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The ``top`` neighbouring vote-fraction pairs of the 1/T grid with the largest exact ε
    (:mod:`pate_study.privacy.exact_profile`): where a threshold jumps or labels sit at the threshold."""
    grid, i, j = exact_profile.neighbouring_pairs(n_teachers, n_labels)
    return grid, _worst_pairs(logprobs, i, j, delta, top)


def _llr_sampler(grid, logprobs, run):
    """Sampler whose statistic is the exact log-likelihood ratio log P_D(o) − log P_D'(o) of the released
    binary vector o (events {LLR ≥ t} are the Neyman–Pearson optimal ones); ``run(m, n, rng) -> bool[n, L]``."""

    def sampler(cand, which, n, rng):
        a, b = cand
        llr = logprobs[a] - logprobs[b]
        labels = run(grid[b if which else a], n, rng)
        code = (labels.astype(np.int64) << np.arange(labels.shape[1])).sum(axis=1)
        return llr[code]

    return sampler


@constrained(sigma="noise_scale", n_labels="count", n_teachers="count", delta="delta", n_pairs="count", **_SAMPLING)
def audit_gnthreshold_adaptive(
    sigma: float = 0.3,
    *,
    n_labels: int = 4,
    n_teachers: int = 5,
    delta: float = 1e-3,
    claim: str = "sound",
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
    n_pairs: int = 3,
) -> AuditResult:
    """Audit GNThreshold with the adaptive threshold (Muschiol 2021 Definition 11), one query.

    ``claim="sound"``: the package's ε (threshold charged by its sensitivity,
    :func:`~pate_study.privacy.multilabel.adaptive_threshold_slope`); ``claim="as_fixed"``: the thesis's
    accounting, the threshold treated as fixed (vote-fraction bound), which the audit must catch. Both with the
    improved conversion. Neighbours: the ``n_pairs`` pairs of the 1/T grid with the largest exact ε (the
    threshold jumps across the labels); statistic: the exact log-likelihood ratio of the released vector.
    """
    f = noise_scale_factor
    if claim not in ("sound", "as_fixed"):
        raise ValueError(f"claim: expected 'sound' or 'as_fixed', got {claim!r}")
    spent = gnthreshold_epsilon(
        sigma=sigma,
        delta=delta,
        threshold="adaptive",
        n_queries=1,
        n_labels=n_labels,
        bound="vote_fraction",
        n_teachers=n_teachers,
        accounting=_AUDIT_ACCOUNTING,
    )
    claimed = spent.epsilon if claim == "sound" else spent.details["epsilon_threshold_as_fixed"]
    grid = exact_profile.fraction_grid(n_teachers, n_labels)
    logprobs = exact_profile.gnthreshold_output_logprobs(grid, "adaptive", sigma)
    grid, pairs = _stressing_pairs(logprobs, n_teachers, n_labels, delta, n_pairs)

    def run(m, n, rng):
        return gnthreshold(np.tile(m, (n, 1)), "adaptive", sigma * f, rng).labels

    return _Sampling(f, n_samples, confidence, seed).audit(
        _llr_sampler(grid, logprobs, run),
        pairs,
        claimed_epsilon=claimed,
        mechanism=f"gnthreshold-adaptive ({'sound' if claim == 'sound' else 'as if fixed'})",
        delta=delta,
    )


@constrained(
    sigma_fixed="noise_scale", n_labels="count", n_teachers="count", delta="delta", n_pairs="count", **_SAMPLING
)
def audit_adaptive_k(
    sigma_fixed: float = 0.3,
    *,
    n_labels: int = 3,
    n_teachers: int = 4,
    delta: float = 1e-3,
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
    n_pairs: int = 3,
) -> AuditResult:
    """Audit the private adaptive-k release (:mod:`pate_study.privacy.adaptive_k`), one query, at the RDP of
    fixed-threshold GNThreshold with σ = ``sigma_fixed`` (:func:`~pate_study.privacy.adaptive_k.adaptive_k_params`).

    ``noise_scale_factor`` scales both the Gaussian σ and the Gumbel scale. Neighbours: the ``n_pairs`` grid
    pairs with the largest exact ε; statistic: the exact log-likelihood ratio of the released set.
    """
    f = noise_scale_factor
    sigma, b = adaptive_k_params(
        multilabel_slope(sigma_fixed, n_labels, "vote_fraction", n_teachers), n_labels, n_teachers
    )
    claimed = adaptive_k_epsilon(
        sigma=sigma,
        gumbel_scale=b,
        delta=delta,
        n_teachers=n_teachers,
        n_queries=1,
        n_labels=n_labels,
        accounting=_AUDIT_ACCOUNTING,
    ).epsilon
    grid = exact_profile.fraction_grid(n_teachers, n_labels)
    logprobs = exact_profile.adaptive_k_output_logprobs(grid, sigma * f, b * f, n_grid=4001)
    grid, pairs = _stressing_pairs(logprobs, n_teachers, n_labels, delta, n_pairs)

    def run(m, n, rng):
        return adaptive_k_release(np.tile(m, (n, 1)), sigma * f, b * f, rng).labels

    return _Sampling(f, n_samples, confidence, seed).audit(
        _llr_sampler(grid, logprobs, run), pairs, claimed_epsilon=claimed, mechanism="adaptive-k", delta=delta
    )


TOPK_CLAIMS = ("sound", "sqrt_k")


@constrained(
    sigma="noise_scale",
    n_labels="count",
    n_teachers="count",
    threshold="fixed_threshold",
    delta="delta",
    n_pairs="count",
    **_SAMPLING,
)
def audit_topk(
    sigma: float = 0.2,
    *,
    k: int = 1,
    n_labels: int = 3,
    n_teachers: int = 3,
    threshold: float = 0.4,
    delta: float = 0.1,
    claim: str = "sound",
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
    n_pairs: int = 3,
) -> AuditResult:
    """Audit the top-k vote release (:mod:`pate_study.privacy.topk_vote`), one query, improved conversion.

    ``claim="sound"``: :func:`~pate_study.privacy.topk_vote.topk_epsilon` (ℓ2 sensitivity √(2k)/T);
    ``claim="sqrt_k"``: the same accountant with sensitivity √k/T (counting only the k labels a teacher switches
    on, not the k it switches off), the error this audit is built to catch. Neighbours: the ``n_pairs`` pairs of
    top-k vote configurations (one teacher changes its k-set, :func:`~pate_study.privacy.topk_vote.topk_vote_grid`)
    with the largest exact ε; statistic: the exact log-likelihood ratio of the released vector. The defaults
    (T = 3, n = 3, k = 1, σ = 0.2, th = 0.4, δ = 0.1) are an instance where the exact ε of the release, 4.16,
    lies between the √k claim 3.69 and the sound claim 6.33 (``tests/privacy/test_topk_vote.py``).
    """
    f = noise_scale_factor
    if claim not in TOPK_CLAIMS:
        raise ValueError(f"claim: expected one of {list(TOPK_CLAIMS)}, got {claim!r}")
    spent = topk_epsilon(
        k=k,
        n_teachers=n_teachers,
        sigma=sigma if claim == "sound" else sigma * 2**0.5,
        delta=delta,
        n_queries=1,
        n_labels=n_labels,
        accounting=_AUDIT_ACCOUNTING,
    )
    grid, i, j = topk_vote_grid(n_teachers, n_labels, k)
    logprobs = exact_profile.gnthreshold_output_logprobs(grid, threshold, sigma * f)
    pairs = _worst_pairs(logprobs, i, j, delta, n_pairs)

    def run(m, n, rng):
        return topk_release(
            np.tile(m, (n, 1)), k=k, n_teachers=n_teachers, threshold=threshold, sigma=sigma * f, rng=rng
        ).labels

    return _Sampling(f, n_samples, confidence, seed).audit(
        _llr_sampler(grid, logprobs, run),
        pairs,
        claimed_epsilon=spent.epsilon,
        mechanism=f"topk-vote ({claim})",
        delta=delta,
    )


@constrained(epsilon="positive", **_SAMPLING)
def audit_randomized_response(
    epsilon: float = 0.5,
    *,
    k: int = 8,
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
    mechanism: Callable[[np.ndarray, int, float, np.random.Generator], np.ndarray] | None = None,
) -> AuditResult:
    """Audit k-RR's (ε, 0)-DP claim (Kairouz et al. 2016): inputs 0 and k − 1, output the released symbol.

    The mechanism runs at ε/``noise_scale_factor`` (a factor 0.5 doubles ε: less randomisation than claimed).
    ``mechanism(x, k, epsilon, rng) -> y`` replaces :func:`~pate_study.privacy.mechanisms.randomized_response`.
    The worst event {y ≤ 0} has ratio exactly e^ε.
    """
    f = noise_scale_factor
    run = (lambda x, kk, e, gen: randomized_response(x, k=kk, epsilon=e, rng=gen)) if mechanism is None else mechanism

    def sampler(_, which, n, rng):
        return run(np.full(n, 0 if which == 0 else k - 1, dtype=np.int64), k, epsilon / f, rng)

    return _Sampling(f, n_samples, confidence, seed).audit(
        sampler, ["0 vs k-1"], claimed_epsilon=epsilon, mechanism="k-RR" if mechanism is None else "k-RR (custom)"
    )


def worst_case_utility(n_outputs: int) -> np.ndarray:
    """Two inputs whose utilities make the exponential mechanism's factor 2 tight (Δu = 1):
    u(x, ·) = (1, 0, …, 0) and u(x', ·) = (0, 1, …, 1). Output 0 gains Δu while every other output loses Δu,
    so Pr[0 | x]/Pr[0 | x'] → e^ε as ``n_outputs`` grows (Dwork & Roth 2014, proof of Thm 3.10)."""
    if int(n_outputs) < 2:
        raise ValueError(f"n_outputs: expected at least 2, got {n_outputs!r}")
    u = np.zeros((2, int(n_outputs)))
    u[0, 0] = 1.0
    u[1, 1:] = 1.0
    return u


@constrained(epsilon="positive", sensitivity="positive", **_SAMPLING)
def audit_exponential_mechanism(
    epsilon: float = 1.0,
    *,
    utility: Any = None,
    sensitivity: float | None = None,
    noise_scale_factor: float = 1.0,
    n_samples: int = 200_000,
    confidence: float = 0.95,
    seed: Any = 0,
) -> AuditResult:
    """Audit the exponential mechanism's (ε, 0)-DP claim (McSherry & Talwar 2007) on a utility table.

    ``utility [n_inputs, n_outputs]``: one row per input, all inputs neighbours (default
    :func:`worst_case_utility` with 200 outputs); ``sensitivity`` defaults to the table's exact
    max_r max_{x,x'} |u(x, r) − u(x', r)|. Candidate pairs: every pair of rows (capped at 20).
    Statistic: the log-likelihood ratio log Pr[r | x] − log Pr[r | x'] of the released r, so that the
    worst output is an extreme event. The mechanism runs with ε/``noise_scale_factor`` against the
    unchanged claim: 0.5 is the classic bug ε/Δu instead of ε/(2Δu).
    """
    f = noise_scale_factor
    u = worst_case_utility(200) if utility is None else np.asarray(utility, dtype=np.float64)
    if u.ndim != 2 or u.shape[0] < 2 or u.shape[1] < 2:
        raise ValueError(f"utility: expected [n_inputs >= 2, n_outputs >= 2], got shape {u.shape}")
    du = check_positive("sensitivity", float(np.ptp(u, axis=0).max())) if sensitivity is None else sensitivity
    claimed_lp = exponential_mechanism_log_probs(u, epsilon=epsilon, sensitivity=du)
    pairs = [(i, j) for i in range(u.shape[0]) for j in range(u.shape[0]) if i != j][:20]

    def sampler(pair, which, n, rng):
        i, j = pair
        row = u[i] if which == 0 else u[j]
        r = exponential_mechanism(np.broadcast_to(row, (n, u.shape[1])), epsilon=epsilon / f, sensitivity=du, rng=rng)
        return np.round(claimed_lp[i, r] - claimed_lp[j, r], 9)

    return _Sampling(f, n_samples, confidence, seed).audit(
        sampler, pairs, claimed_epsilon=epsilon, mechanism="exponential"
    )


def standard_audits(seed: Any = 0, include_broken: bool = True, n_samples: int | None = None) -> list[AuditResult]:
    """Run the four ready-made audits (and, by default, their broken twins with noise scale halved)."""
    kw = {} if n_samples is None else {"n_samples": n_samples}
    factors = (1.0, 0.5) if include_broken else (1.0,)
    out = []
    for fn in (audit_lnmax, audit_gnmax, audit_local_laplace, audit_gnthreshold):
        for f in factors:
            out.append(fn(noise_scale_factor=f, seed=seed, **kw))
    return out
