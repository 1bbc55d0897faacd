"""Exact privacy profiles of one multi-label query on small instances, by enumerating every outcome.

For a student: an accountant's ε is an upper bound proved on paper; on a small instance (few teachers T, few
labels n) we can compute the truth instead. Every vote-fraction vector on the grid {0, 1/T, …, 1}^n is a
possible input; two are neighbours when one teacher changes its votes, i.e. every label's count moves by at
most one (any such pair is reachable: the changed teacher votes 1 where a count drops and 0 where it rises).

Where the mechanism averages teacher *probabilities* (GNThreshold on averaged sigmoid outputs, Muschiol 2021
Definition 10), the fractions are not restricted to multiples of 1/T: ``resolution`` r enumerates the finer grid
{0, 1/(rT), …, 1}^n (teachers whose probabilities lie on {0, 1/r, …, 1}), and two fractions are neighbours when
every label moves by at most 1/T, i.e. by at most r steps of the grid (one teacher's probability moves by at most
1; any such pair is reachable: the changed teacher's probability moves by the step count over r). The 1/T grid is
r = 1; a profile on it is only a lower bound on the worst case of the probability-averaging mechanism.
For each input the release's output distribution is computed exactly (2^n binary vectors), and for each
neighbouring pair

* the exact (ε, δ): the smallest ε with Σ_o max(0, P(o) − e^ε Q(o)) ≤ δ, both directions (the hockey-stick
  divergence; Dwork & Roth 2014 Def. 2.4 on a finite outcome space), and
* the exact Rényi divergence D_λ(P‖Q) = log Σ_o P(o)^λ Q(o)^{1−λ} / (λ − 1) (Mironov 2017 Def. 3).

An accountant is sound on the instance only if its claim is at least the largest exact value over all pairs.
Used by ``tests/privacy/test_exact_profile.py`` and by the audits of :mod:`pate_study.privacy.audit`
(the worst pairs are the stressing neighbours).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from scipy.special import log_ndtr, logsumexp, ndtr

from pate_study.privacy._boundary import constrained
from pate_study.privacy.adaptive_k import gaps_with_sentinels
from pate_study.privacy.aggregators import resolve_thresholds

__all__ = [
    "fraction_grid",
    "neighbouring_pairs",
    "outcomes",
    "gnthreshold_output_logprobs",
    "adaptive_k_output_logprobs",
    "exact_epsilon",
    "exact_renyi",
    "worst_pairs",
]

MAX_OUTCOMES_LABELS = 8


@constrained(n_teachers="count", n_labels="count", resolution="count")
def fraction_grid(n_teachers: int, n_labels: int, resolution: int = 1) -> np.ndarray:
    """Every vote-fraction vector of ``n_labels`` labels on the grid {0, 1/(rT), …, 1}, r = ``resolution``
    (module docstring): ``[(rT+1)^n, n]``."""
    t, n, r = n_teachers, n_labels, resolution
    size = (r * t + 1) ** n
    if n > MAX_OUTCOMES_LABELS or size > 200_000:
        raise ValueError(
            f"n_teachers/n_labels/resolution: enumeration too large ((rT+1)^n = {size}, n = {n}); "
            f"expected (rT+1)^n <= 200000 and n <= {MAX_OUTCOMES_LABELS}"
        )
    counts = np.array(list(itertools.product(range(r * t + 1), repeat=n)), dtype=np.int64)
    return counts / float(r * t)


@constrained(n_teachers="count", n_labels="count", resolution="count")
def neighbouring_pairs(
    n_teachers: int, n_labels: int, resolution: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grid, i, j): every ordered pair of distinct grid vectors (:func:`fraction_grid` at ``resolution`` r) whose
    fractions differ by at most 1/T, i.e. r grid steps, per label (one teacher changed)."""
    grid = fraction_grid(n_teachers, n_labels, resolution)
    r = int(resolution)
    steps = r * int(n_teachers)
    counts = np.rint(grid * steps).astype(np.int64)
    base = (steps + 1) ** np.arange(n_labels - 1, -1, -1)
    i_all, j_all = [], []
    for step in itertools.product(range(-r, r + 1), repeat=n_labels):
        if not any(step):
            continue
        moved = counts + np.asarray(step)
        ok = np.all((moved >= 0) & (moved <= steps), axis=1)
        i_all.append(np.nonzero(ok)[0])
        j_all.append(moved[ok] @ base)
    return grid, np.concatenate(i_all), np.concatenate(j_all)


@constrained(n_labels="count")
def outcomes(n_labels: int) -> np.ndarray:
    """Every binary release of ``n_labels`` labels, ``[2^n, n]`` (bool), row b = bits of b."""
    n = n_labels
    return ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)


@constrained(threshold="label_threshold", sigma="noise_scale")
def gnthreshold_output_logprobs(fractions: np.ndarray, threshold: Any, sigma: float) -> np.ndarray:
    """log Pr[release = o] of GNThreshold (Muschiol 2021 Definition 10/11) for every outcome o: labels
    independent, Pr[c_i = 1] = Φ((m_i − th)/σ), th fixed or ``"adaptive"`` (computed from m). ``[N, 2^n]``."""
    m = np.asarray(fractions, dtype=np.float64)
    z = (m - resolve_thresholds(m, threshold)[:, None]) / sigma
    o = outcomes(m.shape[1])
    return np.where(o[None], log_ndtr(z)[:, None, :], log_ndtr(-z)[:, None, :]).sum(axis=2)


@constrained(sigma="noise_scale", gumbel_scale="positive")
def adaptive_k_output_logprobs(
    fractions: np.ndarray, sigma: float, gumbel_scale: float, k_max: int | None = None, n_grid: int = 20_001
) -> np.ndarray:
    """log Pr[release = S] of :func:`pate_study.privacy.adaptive_k.adaptive_k_release` for every subset S.

    Pr[S] = Pr[k = |S|] · Pr[top-|S| of m + N(0, σ²I) = S]; Pr[k] is the softmax of the gaps / b (Gumbel-max),
    the top-k probability is the one-dimensional integral ∫ d[Π_{j∉S} Φ((t − m_j)/σ)] Π_{i∈S} Φ̄((t − m_i)/σ)
    (trapezoid rule on ``n_grid`` points over m ± 12σ). ``[N, 2^n]``.
    """
    m = np.asarray(fractions, dtype=np.float64)
    b = gumbel_scale
    n = m.shape[1]
    g = gaps_with_sentinels(m, k_max)
    log_pk = g / b - logsumexp(g / b, axis=1, keepdims=True)
    o = outcomes(n)
    sizes = o.sum(axis=1)
    t = np.linspace(-12.0 * sigma, 1.0 + 12.0 * sigma, n_grid)
    z = (t[None, None, :] - m[:, :, None]) / sigma  # [N, n, grid]
    cdf, sf = ndtr(z), ndtr(-z)
    pdf = np.exp(-0.5 * z**2) / (np.sqrt(2.0 * np.pi) * sigma)
    out = np.full((len(m), len(o)), -np.inf)
    for s_idx, sel in enumerate(o):
        k = int(sizes[s_idx])
        if k >= g.shape[1]:
            continue  # k above k_max: never released
        if k in (0, n):
            p_top = np.ones(len(m))
        else:
            inside, outside = np.nonzero(sel)[0], np.nonzero(~sel)[0]
            upper = np.prod(sf[:, inside, :], axis=1)
            dens = np.zeros_like(upper)
            for j in outside:
                rest = [x for x in outside if x != j]
                dens += pdf[:, j, :] * (np.prod(cdf[:, rest, :], axis=1) if rest else 1.0)
            p_top = np.clip(np.trapezoid(dens * upper, t, axis=1), 1e-300, 1.0)
        out[:, s_idx] = log_pk[:, k] + np.log(p_top)
    return out


def _hockey_stick(logp: np.ndarray, logq: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """Σ_o max(0, P(o) − e^ε Q(o)) per row."""
    return np.clip(np.exp(logp) - np.exp(eps[:, None] + logq), 0.0, None).sum(axis=1)


@constrained(delta="delta")
def exact_epsilon(logp: np.ndarray, logq: np.ndarray, delta: float, iterations: int = 80) -> np.ndarray:
    """Smallest ε ≥ 0 with both hockey-stick divergences ≤ δ, per row pair (bisection; output distributions
    given as log probabilities ``[pairs, outcomes]``)."""
    out = []
    for a, c in ((logp, logq), (logq, logp)):
        lo = np.zeros(len(a))
        with np.errstate(invalid="ignore"):
            ratio = np.where(np.isfinite(a), a - c, -np.inf)
        hi = np.clip(np.max(ratio, axis=1), 0.0, 1e6)
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            over = _hockey_stick(a, c, mid) > delta
            lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
        out.append(hi)
    return np.maximum(*out)


def exact_renyi(logp: np.ndarray, logq: np.ndarray, order: float) -> np.ndarray:
    """D_λ(P‖Q) per row pair, from log probabilities; +inf where Q misses an outcome of P."""
    lam = float(order)
    if not lam > 1.0:
        raise ValueError(f"order: expected an order > 1, got {order!r}")
    with np.errstate(invalid="ignore"):
        terms = np.where(np.isfinite(logp), lam * logp + (1.0 - lam) * logq, -np.inf)
    return logsumexp(terms, axis=1) / (lam - 1.0)


@constrained(delta="delta")
def worst_pairs(
    logprobs: np.ndarray, i: np.ndarray, j: np.ndarray, delta: float, top: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Indices (into ``i``/``j``) of the ``top`` neighbouring pairs with the largest exact ε, and all exact ε."""
    eps = exact_epsilon(logprobs[i], logprobs[j], delta)
    return np.argsort(-eps, kind="stable")[:top], eps
