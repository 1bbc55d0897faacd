"""The privacy cost of choosing the best of several private runs (hyperparameter selection), accounted.

Publishing the best of several private releases computed on the same data releases information about all of
them: the choice is a function of every candidate. Two honest accountings:

* **Composition** (Mironov 2017, "Rényi differential privacy", Proposition 1; post-processing, Proposition 9):
  when the candidates are a fixed, finite set chosen before looking at their results and the published one is the
  best by a score computed from the candidates' outputs (and public data), the selection is post-processing of
  the joint release of all candidates, whose RDP at each order is the sum of the candidates' RDP
  (:func:`compose_candidates`, :func:`selection_spent`). For K identical runs that is K times one run.
* **Random stopping** (Papernot & Steinke, "Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022,
  arXiv:2110.03620): run one private algorithm Q (each run may draw its hyperparameters at random, independently)
  a random number K of times and output only the best run. When K follows a truncated negative binomial
  distribution D_{η,γ} (Theorem 2; η = 1 is the geometric, η = 0 the logarithmic distribution) or a Poisson
  distribution (Theorem 6), the RDP of the whole procedure is one run's RDP plus a small overhead, not K times it
  (:func:`truncated_negative_binomial_rdp`, :func:`poisson_rdp`). These bounds hold only for that mechanism (the
  number of runs random and drawn as stated, independent of the data), never for a fixed set of candidates.

Theorem 2 (Papernot & Steinke 2022): if Q is (λ, ε)-RDP and (λ̂, ε̂)-RDP with λ > 1, λ̂ ≥ 1, and
K ~ D_{η,γ} (η > −1, 0 < γ < 1), with P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · Π_{l=0}^{k−1} (l + η)/(l + 1) for
k ≥ 1, the best-of-K algorithm is (λ, ε′)-RDP with

    ε′ = ε + (1 + η)(1 − 1/λ̂) ε̂ + (1 + η) log(1/γ)/λ̂ + log(E[K])/(λ − 1),

E[K] = η(1 − γ)/(γ(1 − γ^η)) for η ≠ 0 and (1/γ − 1)/log(1/γ) for η = 0. λ̂ is free: the bound here takes the
best λ̂ on the order grid (the same minimum for every λ).

Theorem 6 (Papernot & Steinke 2022): if Q is (λ, ε)-RDP and (ε̂, δ̂)-DP with e^ε̂ ≤ 1 + 1/(λ − 1), and
K ~ Poisson(μ) (K = 0 outputs nothing), the best-of-K algorithm is (λ, ε′)-RDP with ε′ = ε + μ δ̂ + log(μ)/(λ − 1).
Here ε̂ = log(1 + 1/(λ − 1)) and δ̂ is the δ of Q at ε̂ from its RDP curve (Canonne, Kamath & Steinke 2020,
Proposition 12, the conversion of :func:`~pate_study.privacy.accounting.epsilon_curve` ``"improved"`` solved for
δ, minimised over the grid).

Both results are finally made monotone in the order (the Rényi divergence is non-decreasing in its order, van Erven
& Harremoës 2014, Theorem 3): the bound at λ is the smallest bound at any order ≥ λ on the grid.
Everything is computed in log space and vectorised over orders.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from scipy import optimize

from ._validation import check_choice, check_delta, check_orders, check_positive
from .accounting import PrivacySpent, account, resolve_rdp_orders

__all__ = [
    "DISTRIBUTIONS",
    "compose_candidates",
    "selection_spent",
    "truncated_negative_binomial_pmf",
    "truncated_negative_binomial_mean",
    "truncated_negative_binomial_gamma",
    "truncated_negative_binomial_pgf",
    "truncated_negative_binomial_rdp",
    "poisson_rdp",
    "rdp_delta",
    "random_stopping_spent",
]

#: the distributions of the number of runs that :func:`random_stopping_spent` accepts.
DISTRIBUTIONS = ("truncated_negative_binomial", "poisson")


def _check_curves(orders: Any, rdp: Any) -> tuple[np.ndarray, np.ndarray]:
    """Orders > 1 (strictly increasing) and RDP values ``[..., n_orders]``, non-negative (inf allowed), no NaN."""
    grid = check_orders(orders, 1.0)
    values = np.asarray(rdp, dtype=np.float64)
    if values.shape[-1:] != grid.shape:
        raise ValueError(f"rdp: expected one value per order (last axis {grid.shape[0]}), got shape {values.shape}")
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError("rdp: expected non-negative RDP values (no NaN)")
    return grid, values


def _monotone(rdp: np.ndarray) -> np.ndarray:
    """Smallest value at this or any larger order (RDP is non-decreasing in the order)."""
    return np.minimum.accumulate(rdp[..., ::-1], axis=-1)[..., ::-1]


# ----------------------------------------------------------------------------------------------- composition


def compose_candidates(rdp_curves: Any) -> np.ndarray:
    """RDP per order of releasing every candidate run: the sum over runs (Mironov 2017, Proposition 1).

    ``rdp_curves`` ``[n_runs, n_orders]`` on one order grid. Choosing the best candidate by any score of the
    candidates' outputs (and public data) is post-processing of this joint release (Mironov 2017, Proposition 9),
    so this is the RDP of the selection among a fixed, finite set of candidates. Summed with ``math.fsum`` per
    order (independent of the runs' order).
    """
    values = np.asarray(rdp_curves, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 1:
        raise ValueError(f"rdp_curves: expected a 2-D array [n_runs >= 1, n_orders], got shape {values.shape}")
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError("rdp_curves: expected non-negative RDP values (no NaN)")
    return np.array([math.fsum(col) for col in values.T.tolist()], dtype=np.float64)


def selection_spent(
    candidates: Sequence[PrivacySpent], *, delta: float, conversion: str = "basic", warn: bool = True
) -> PrivacySpent:
    """(ε, δ) of publishing the best of a fixed set of candidate releases: composition of all of them.

    Every candidate must carry an RDP curve (``rdp_or_logmgf``) on the same order grid (RDP accountants; not the
    2017 moments accountant). The result's ``details`` list the candidates' own ε and the largest of them (what
    would be printed if the selection were not charged).
    """
    spent = list(candidates)
    if not spent:
        raise ValueError("candidates: expected at least one candidate release")
    grid = spent[0].orders
    for i, s in enumerate(spent):
        if not isinstance(s, PrivacySpent):
            raise ValueError(f"candidates[{i}]: expected a PrivacySpent, got {type(s).__name__}")
        if s.accountant == "moments2017":
            raise ValueError(f"candidates[{i}]: a 2017 log-MGF curve, not an RDP curve; compose RDP results only")
        if s.orders.shape != grid.shape or not np.allclose(s.orders, grid, rtol=0, atol=1e-12):
            raise ValueError(f"candidates[{i}]: order grid differs from candidates[0]'s; account all on one grid")
    total = compose_candidates(np.stack([s.rdp_or_logmgf for s in spent]))
    own = [float(s.epsilon) for s in spent]
    return account(
        total,
        delta=delta,
        orders=grid,
        conversion=conversion,
        accountant="selection",
        mechanism=f"best of {len(spent)} fixed candidates (composition)",
        n_queries=sum(s.n_queries for s in spent),
        data_dependent=any(s.data_dependent for s in spent),
        warn=warn,
        n_candidates=len(spent),
        candidate_epsilons=own,
        largest_candidate_epsilon=max(own),
    )


# ------------------------------------------------------------------------------------- random stopping


def _check_tnb(eta: Any, gamma: Any) -> tuple[float, float]:
    try:
        eta_f, gamma_f = float(eta), float(gamma)
    except (TypeError, ValueError):
        raise ValueError(f"eta/gamma: expected numbers, got {eta!r}, {gamma!r}") from None
    if not (math.isfinite(eta_f) and eta_f > -1.0):
        raise ValueError(f"eta: expected a finite number > -1 (shape of the truncated negative binomial), got {eta!r}")
    if not 0.0 < gamma_f < 1.0:
        raise ValueError(f"gamma: expected a number in (0, 1) (the truncated negative binomial's gamma), got {gamma!r}")
    return eta_f, gamma_f


def truncated_negative_binomial_pmf(k: Any, eta: float, gamma: float) -> np.ndarray:
    """P[K = k] of D_{η,γ} (Papernot & Steinke 2022, Definition 1), k ≥ 1, from its log:
    k log(1 − γ) + Σ_{l<k} log((l + η)/(l + 1)) − log(γ^{−η} − 1) (η = 0: (1 − γ)^k/(k log(1/γ)))."""
    eta, gamma = _check_tnb(eta, gamma)
    ks = np.asarray(k, dtype=np.int64)
    if np.any(ks < 1):
        raise ValueError("k: expected integers >= 1")
    top = int(ks.max()) if ks.size else 1
    log1mg = math.log1p(-gamma)
    if eta == 0.0:
        return np.exp(ks * log1mg - np.log(ks) - math.log(-math.log(gamma)))
    ls = np.arange(top, dtype=np.float64)
    terms = np.log(np.abs(ls + eta)) - np.log(ls + 1.0)
    cum = np.concatenate([[0.0], np.cumsum(terms)])
    # for −1 < η < 0 the factor l = 0 and γ^{−η} − 1 are both negative: their ratio is the ratio of |·|
    log_norm = math.log(abs(math.expm1(-eta * math.log(gamma))))
    return np.exp(ks * log1mg + cum[ks] - log_norm)


def truncated_negative_binomial_mean(eta: float, gamma: float) -> float:
    """E[K] of D_{η,γ} (Papernot & Steinke 2022, §2): η(1 − γ)/(γ(1 − γ^η)), η ≠ 0; (1/γ − 1)/log(1/γ), η = 0."""
    eta, gamma = _check_tnb(eta, gamma)
    if eta == 0.0:
        return (1.0 / gamma - 1.0) / -math.log(gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def truncated_negative_binomial_gamma(eta: float, mean: float) -> float:
    """The γ of D_{η,γ} with E[K] = ``mean`` (> 1; E[K] decreases from ∞ to 1 as γ goes from 0 to 1)."""
    eta, _ = _check_tnb(eta, 0.5)
    target = check_positive("mean", mean)
    if not target > 1.0:
        raise ValueError(f"mean: expected an expected number of runs > 1, got {mean!r}")

    def gap(log_gamma: float) -> float:
        return math.log(truncated_negative_binomial_mean(eta, math.exp(log_gamma))) - math.log(target)

    return math.exp(optimize.brentq(gap, -700.0, -1e-12, xtol=1e-15, rtol=1e-14))


def truncated_negative_binomial_pgf(x: Any, eta: float, gamma: float) -> np.ndarray:
    """E[x^K] of D_{η,γ}, x ∈ [0, 1]: ((1 − (1 − γ)x)^{−η} − 1)/(γ^{−η} − 1), η ≠ 0; log(1 − (1 − γ)x)/log γ, η = 0
    (the negative binomial series Σ_k Π_{l<k}(l + η)/(l + 1) y^k = (1 − y)^{−η} − 1)."""
    eta, gamma = _check_tnb(eta, gamma)
    y = np.log1p(-(1.0 - gamma) * np.asarray(x, dtype=np.float64))
    if eta == 0.0:
        return y / math.log(gamma)
    return np.expm1(-eta * y) / math.expm1(-eta * math.log(gamma))


def truncated_negative_binomial_rdp(orders: Any, rdp: Any, eta: float, gamma: float) -> np.ndarray:
    """RDP per order of the best of K ~ D_{η,γ} runs of Q, from Q's RDP curve (Papernot & Steinke 2022, Theorem 2).

    ε′(λ) = ε(λ) + min_λ̂ [(1 + η)((1 − 1/λ̂)ε(λ̂) + log(1/γ)/λ̂)] + log(E[K])/(λ − 1), λ̂ over the grid, then made
    monotone in λ (module docstring). ``rdp`` may carry leading axes (``[..., n_orders]``).
    """
    eta, gamma = _check_tnb(eta, gamma)
    grid, values = _check_curves(orders, rdp)
    hat = np.min((1.0 - 1.0 / grid) * values - math.log(gamma) / grid, axis=-1, keepdims=True)
    log_mean = math.log(truncated_negative_binomial_mean(eta, gamma))
    return _monotone(values + (1.0 + eta) * hat + log_mean / (grid - 1.0))


def rdp_delta(orders: Any, rdp: Any, epsilon: Any) -> np.ndarray:
    """δ(ε) of a mechanism from its RDP curve: Canonne, Kamath & Steinke 2020, Proposition 12 solved for δ,
    log δ = (α − 1)(ε(α) − ε + log(1 − 1/α)) − log α, minimised over the orders α of the grid, capped at 1.

    ``epsilon``: one target ε per entry (any shape); returns δ of that shape.
    """
    grid, values = _check_curves(orders, rdp)
    if values.ndim != 1:
        raise ValueError(f"rdp: expected one curve [n_orders], got shape {values.shape}")
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError("epsilon: expected non-negative values")
    am1 = grid - 1.0
    log_delta = am1 * (values - eps[..., None] + np.log1p(-1.0 / grid)) - np.log(grid)
    return np.exp(np.minimum(np.min(log_delta, axis=-1), 0.0))


def poisson_rdp(orders: Any, rdp: Any, mu: float) -> np.ndarray:
    """RDP per order of the best of K ~ Poisson(μ) runs of Q (Papernot & Steinke 2022, Theorem 6).

    ε′(λ) = ε(λ) + μ δ̂(λ) + log(μ)/(λ − 1) with ε̂ = log(1 + 1/(λ − 1)) and δ̂ = :func:`rdp_delta` at ε̂ from
    the same RDP curve; then made monotone in λ (module docstring).
    """
    mu = check_positive("mu", mu)
    grid, values = _check_curves(orders, rdp)
    if values.ndim != 1:
        raise ValueError(f"rdp: expected one curve [n_orders], got shape {values.shape}")
    eps_hat = np.log1p(1.0 / (grid - 1.0))
    delta_hat = rdp_delta(grid, values, eps_hat)
    return _monotone(values + mu * delta_hat + math.log(mu) / (grid - 1.0))


def random_stopping_spent(
    one_run: PrivacySpent,
    *,
    distribution: str,
    delta: float,
    conversion: str = "basic",
    eta: float | None = None,
    gamma: float | None = None,
    mean: float | None = None,
    mu: float | None = None,
    warn: bool = True,
) -> PrivacySpent:
    """(ε, δ) of the best of a random number K of runs of ``one_run``'s mechanism (Papernot & Steinke 2022).

    ``distribution="truncated_negative_binomial"`` with ``eta`` and either ``gamma`` or ``mean`` (E[K]; Theorem 2);
    ``"poisson"`` with ``mu`` (Theorem 6). Valid only when K is drawn from that distribution, independently of the
    data, and only the best run is published.
    """
    check_choice("distribution", distribution, DISTRIBUTIONS)
    if one_run.accountant == "moments2017":
        raise ValueError("one_run: a 2017 log-MGF curve, not an RDP curve")
    check_delta(delta)
    grid = resolve_rdp_orders(one_run.orders)
    if distribution == "poisson":
        if mu is None:
            raise ValueError("mu: distribution='poisson' needs the mean number of runs mu")
        total = poisson_rdp(grid, one_run.rdp_or_logmgf, mu)
        params: dict = {"mu": float(mu), "expected_runs": float(mu)}
    else:
        if eta is None or (gamma is None) == (mean is None):
            raise ValueError(
                "eta/gamma/mean: the truncated negative binomial needs eta and exactly one of gamma or mean"
            )
        g = truncated_negative_binomial_gamma(eta, mean) if gamma is None else float(gamma)
        total = truncated_negative_binomial_rdp(grid, one_run.rdp_or_logmgf, eta, g)
        params = {"eta": float(eta), "gamma": g, "expected_runs": truncated_negative_binomial_mean(eta, g)}
    return account(
        total,
        delta=delta,
        orders=grid,
        conversion=conversion,
        accountant="selection",
        mechanism=f"best of K ~ {distribution} runs of {one_run.mechanism} (random stopping)",
        n_queries=one_run.n_queries,
        data_dependent=one_run.data_dependent,
        warn=warn,
        one_run_epsilon=float(one_run.epsilon),
        distribution=distribution,
        **params,
    )
