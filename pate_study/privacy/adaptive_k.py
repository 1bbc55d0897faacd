"""A private adaptive multi-label release: choose k by noisy gaps, then release a noisy top-k set.

For a student: Muschiol 2021 Definition 11 puts the threshold in the middle of the largest gap between the
sorted noise-free vote fractions. One teacher can move that gap, and with it the threshold, from one end of
[0, 1] to the other, so the release has no useful privacy guarantee (:mod:`pate_study.privacy.multilabel`,
``adaptive_threshold_slope``). Zhu & Wang, "Adaptive Private-K-Selection with Adaptive K and Application to
Multi-label PATE" (AISTATS 2022, arXiv:2203.16100) make the same idea private: choose k, the number of labels
to release, where the gap between the k-th and (k+1)-st sorted vote is large, with Report-Noisy-Max over the
gaps, then release the top-k labels.

What is implemented here (a sound, simpler variant of their algorithm; every step a standard mechanism):

1. *k by Report-Noisy-Max over the gaps, Gumbel noise.* Sort the fractions s_1 ≥ … ≥ s_n, add the sentinels
   s_0 = 1 and s_{n+1} = 0, gaps g_k = s_k − s_{k+1} for k = 0 … k_max. One teacher moves every sorted value by
   at most Δ = 1/T (sorting is 1-Lipschitz in ℓ∞), so every gap by at most 2Δ. k = argmax_k g_k + Gumbel(b) is
   the exponential mechanism with utility g and Pr[k] ∝ exp(g_k/b), which is ε_k-DP with ε_k = 2·(2Δ)/b
   (McSherry & Talwar 2007; Gumbel-max form: Durfee & Rogers 2019). ε-DP implies (λ, min(ε, λε²/2))-RDP
   (Mironov 2017 Prop. 3; Bun & Steinke 2016 Prop. 3.3).
2. *Top-k by per-label Gaussian noise.* Release the k labels with the largest m_i + N(0, σ²). This is
   post-processing of the Gaussian mechanism on the vote-fraction vector, ℓ2 sensitivity √n/T
   (Muschiol 2021 Theorem 6 = Mironov 2017 Prop. 7): (λ, nλ/(2T²σ²))-RDP for every k.
3. Adaptive composition (Mironov 2017 Prop. 1): (λ, min(ε_k, λε_k²/2) + nλ/(2T²σ²))-RDP per query, for any
   votes. This is a data-independent bound; the released set's size is the only data-dependent choice and it
   is charged in step 1.

What differs from Zhu & Wang 2022: they choose k with Gaussian noise (a Report-Noisy-Max analysis of their
own) and release the top-k set *without* noise by propose-test-release with distance to stability, which
gives data-dependent savings when the gap is large; here k uses Gumbel noise (the classical exponential
mechanism) and the set carries Gaussian noise (GNThreshold's noise without a threshold), so both steps have
textbook data-independent RDP and no PTR failure probability. It is therefore a valid but less efficient
version of their idea; no number from their paper is reproduced with it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import PARAMETER_CONSTRAINTS, as_generator, check_fractions
from pate_study.privacy.accounting import PrivacySpent, account, query_mode
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting

__all__ = [
    "gaps_with_sentinels",
    "k_choice_epsilon",
    "adaptive_k_rdp_slope",
    "adaptive_k_params",
    "AdaptiveKRelease",
    "adaptive_k_release",
    "adaptive_k_epsilon",
]


def gaps_with_sentinels(fractions: Any, k_max: int | None = None) -> np.ndarray:
    """Gaps g_k = s_k − s_{k+1}, k = 0 … k_max, of the descending sorted fractions with s_0 = 1, s_{n+1} = 0.

    g_0 = 1 − s_1 scores "release nothing", g_n = s_n scores "release every label". ``[n_queries, k_max + 1]``.
    """
    m = check_fractions(fractions)
    n = m.shape[1]
    k_max = n if k_max is None else _check_k_max(k_max, n)
    s = np.concatenate([np.ones((len(m), 1)), -np.sort(-m, axis=1), np.zeros((len(m), 1))], axis=1)
    return (s[:, :-1] - s[:, 1:])[:, : k_max + 1]


def _check_k_max(k_max: Any, n_labels: int) -> int:
    if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or not 1 <= int(k_max) <= n_labels:
        raise ValueError(f"k_max: expected an integer in [1, {n_labels}] (the number of labels), got {k_max!r}")
    return int(k_max)


@constrained(gumbel_scale="noise_scale", n_teachers="count")
def k_choice_epsilon(gumbel_scale: float, n_teachers: int) -> float:
    """Pure ε of the k choice: Pr[k] ∝ exp(g_k/b), gap sensitivity 2/T, so ε = 2·(2/T)/b (exponential mechanism).

    ``gumbel_scale`` is a noise scale (``PARAMETER_CONSTRAINTS["noise_scale"]``), so that ε and ε² are finite."""
    return 4.0 / (n_teachers * gumbel_scale)


@constrained(sigma="noise_scale", gumbel_scale="noise_scale", n_labels="count", n_teachers="count")
def adaptive_k_rdp_slope(sigma: float, gumbel_scale: float, n_labels: int, n_teachers: int) -> float:
    """Slope c of the per-query RDP bound c·λ: ε_k²/2 (k choice, zCDP form) + n/(2T²σ²) (Gaussian top-k).

    The k-choice term is also capped at ε_k (pure DP); :func:`adaptive_k_epsilon` uses the minimum per order.
    """
    t = n_teachers
    return k_choice_epsilon(gumbel_scale, t) ** 2 / 2.0 + n_labels / (2.0 * t**2 * sigma**2)


@constrained(rdp_slope="positive", n_labels="count", n_teachers="count", k_share="share")
def adaptive_k_params(rdp_slope: float, n_labels: int, n_teachers: int, k_share: float = 0.25) -> tuple[float, float]:
    """(σ, Gumbel scale b) whose per-query RDP slope is ``rdp_slope``, a share ``k_share`` of it for the k choice.

    Equal slope means equal RDP at every order (the pure-DP cap only lowers ours), hence ε no larger than that
    of any mechanism with RDP ``rdp_slope``·λ per query, e.g. fixed-threshold GNThreshold with
    ``rdp_slope = n/(2T²σ_e²)``. Both scales must be noise scales (``PARAMETER_CONSTRAINTS["noise_scale"]``);
    a slope that would give σ or b outside that range (σ = inf for a subnormal slope) is refused by name, with
    the slopes that fit.
    """
    c, n, t = rdp_slope, n_labels, n_teachers
    _check_slope_gives_noise_scales(c, n, t, k_share, shown=rdp_slope)
    eps_k = math.sqrt(2.0 * k_share * c)
    sigma = math.sqrt(n / (2.0 * t**2 * (1.0 - k_share) * c))
    b = 4.0 / (t * eps_k)
    if not (_in_noise_range(sigma) and _in_noise_range(b)):  # at an end of the range, rounding can step outside
        _check_slope_gives_noise_scales(c, n, t, k_share, shown=rdp_slope, force=True)
    return sigma, b


def _in_noise_range(scale: float) -> bool:
    return math.isfinite(scale) and PARAMETER_CONSTRAINTS["noise_scale"].contains(scale)


def _exp_text(log_value: float) -> str:
    """exp(``log_value``) printed with 4 significant digits, also where the float itself would overflow."""
    power = log_value / math.log(10.0)
    exponent = math.floor(power)
    return f"{10.0 ** (power - exponent):.4g}e{exponent:+d}"


def _check_slope_gives_noise_scales(c: float, n: int, t: int, k_share: float, shown: Any, force: bool = False) -> None:
    """Refuse a slope ``c`` whose σ = √(n/(2T²(1−s)c)) or b = 4/(T√(2sc)) leaves the noise-scale range; the
    logarithms cannot overflow or divide by an underflowed zero, whatever ``c``."""
    scales = PARAMETER_CONSTRAINTS["noise_scale"]
    log_low, log_high = math.log(scales.low), math.log(scales.high)
    sigma_part = math.log(n) - math.log(2.0) - 2.0 * math.log(t) - math.log1p(-k_share)  # log σ² = this − log c
    b_part = 2.0 * (math.log(4.0) - math.log(t)) - math.log(2.0 * k_share)  # log b² = this − log c
    log_c = math.log(c)
    if not force and all(2 * log_low <= part - log_c <= 2 * log_high for part in (sigma_part, b_part)):
        return
    smallest = max(sigma_part, b_part) - 2 * log_high
    largest = min(sigma_part, b_part) - 2 * log_low
    fits = (
        f"for {n} labels, {t} teachers and k_share {k_share:g}, the slopes in [{_exp_text(smallest)}, "
        f"{_exp_text(largest)}]"
        if smallest <= largest
        else f"no slope for {n} labels, {t} teachers and k_share {k_share:g}"
    )
    raise ValueError(
        f"rdp_slope: expected a per-query RDP slope that gives σ and the Gumbel scale in the noise-scale "
        f"range {scales.text()} ({fits}), got {shown!r}"
    )


@dataclasses.dataclass(frozen=True, eq=False)
class AdaptiveKRelease:
    """Released labels ``[n_queries, n_labels]`` (bool) and the chosen k per query."""

    labels: np.ndarray
    k: np.ndarray


@constrained(sigma="noise_scale", gumbel_scale="positive")
def adaptive_k_release(
    fractions: Any, sigma: float, gumbel_scale: float, rng: Any, k_max: int | None = None
) -> AdaptiveKRelease:
    """Run the mechanism of the module docstring on vote fractions ``[n_queries, n_labels]``."""
    m = check_fractions(fractions)
    b = gumbel_scale
    gen = as_generator(rng)
    g = gaps_with_sentinels(m, k_max)
    k = np.argmax(g + gen.gumbel(0.0, b, size=g.shape), axis=1)
    noisy = m + gen.normal(0.0, sigma, size=m.shape)
    rank = np.argsort(np.argsort(-noisy, axis=1, kind="stable"), axis=1, kind="stable")
    return AdaptiveKRelease(rank < k[:, None], k)


@constrained(
    sigma="noise_scale",
    gumbel_scale="noise_scale",
    delta="delta",
    n_teachers="count",
    n_queries="count",
    n_labels="count",
    accounting="accounting",
)
def adaptive_k_epsilon(
    *,
    sigma: float,
    gumbel_scale: float,
    delta: float,
    n_teachers: int,
    fractions: Any = None,
    n_queries: int | None = None,
    n_labels: int | None = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """(ε, δ) of ``n_queries`` adaptive-k releases (module docstring): per query and order λ,
    min(ε_k, λε_k²/2) + nλ/(2T²σ²), composed over queries (Mironov 2017 Prop. 1) and converted at δ
    (``accounting``: the order grid and the conversion).
    Data-independent: ``fractions`` only gives the number of queries and labels."""
    n, m = query_mode(n_queries, fractions, check_fractions, data_name="fractions")
    if m is None and n_labels is None:
        raise ValueError("n_labels: the data-independent bound needs the number of labels")
    n_lab = m.shape[1] if m is not None else n_labels
    t = n_teachers
    eps_k = k_choice_epsilon(gumbel_scale, t)
    gauss = n_lab / (2.0 * t**2 * sigma**2)

    def total(grid: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):  # a term past the float range is +inf: no finite guarantee at that order
            return n * (np.minimum(eps_k, grid * eps_k**2 / 2.0) + gauss * grid)

    return account(
        total,
        delta=delta,
        accounting=accounting,
        accountant="multilabel2021",
        mechanism="adaptive-k",
        n_queries=n,
        data_dependent=False,
        sigma=float(sigma),
        gumbel_scale=float(gumbel_scale),
        epsilon_k_choice=eps_k,
        n_labels=n_lab,
    )
