"""Computations behind ``notebooks/00_dp_primer.ipynb`` (teaching material on the Laplace mechanism,
the privacy-loss random variable, composition and the moment-generating-function bound).

The accountant formulas themselves live in :mod:`pate_study.privacy`; this module only arranges them
into the tables the primer plots.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..data import DataSource, pate2018
from ..privacy import audit
from ..privacy.accounting import OrderAtGridEdgeWarning
from ..privacy.moments import moments_epsilon

# The four densities of the Wikipedia figure that Visca (2021) reproduces as Fig. 2.4.
WIKIPEDIA_LAPLACE_CURVES = ((0.0, 1.0), (0.0, 2.0), (0.0, 4.0), (-5.0, 4.0))


def laplace_densities(grid: np.ndarray, curves=WIKIPEDIA_LAPLACE_CURVES) -> pd.DataFrame:
    """Lap(x | μ, b) = exp(−|x − μ|/b) / (2b) (Dwork & Roth 2014, Def. 3.2) on ``grid`` for each (μ, b)."""
    rows = [pd.DataFrame({"x": grid, "density": stats.laplace.pdf(grid, loc=mu, scale=b), "mu": mu, "b": b})
            for mu, b in curves]
    return pd.concat(rows, ignore_index=True)


def laplace_privacy_loss_samples(epsilon: float, sensitivity: float, n_samples: int, seed: int) -> np.ndarray:
    """Samples of the privacy-loss random variable ℓ(o) = log P[M(D)=o]/P[M(D')=o] (Visca Eq. 4.2).

    M adds Lap(Δ/ε) to a query with f(D) = 0 and f(D') = Δ; then ℓ(o) = (|o − Δ| − |o|)·ε/Δ,
    which is bounded by ε in absolute value: that bound is the (ε, 0)-DP guarantee.
    """
    if epsilon <= 0 or sensitivity <= 0:
        raise ValueError(f"epsilon and sensitivity must be > 0, got epsilon={epsilon}, sensitivity={sensitivity}")
    rng = np.random.default_rng(seed)
    scale = sensitivity / epsilon
    outputs = rng.laplace(0.0, scale, size=int(n_samples))
    return (np.abs(outputs - sensitivity) - np.abs(outputs)) / scale


def laplace_privacy_loss_mean(epsilon: float) -> float:
    """E[ℓ] = KL(Lap(0, b) ‖ Lap(Δ, b)) = ε + e^{−ε} − 1 with ε = Δ/b (closed form of the Laplace KL divergence)."""
    return float(epsilon + np.expm1(-epsilon))


def neighbouring_output_densities(x: np.ndarray, *, f_d: float, f_d_prime: float, sigma: float) -> pd.DataFrame:
    """Densities of f(D) + N(0, σ²) and f(D') + N(0, σ²) on ``x`` (the picture of Muschiol Fig. 2.3)."""
    if sigma <= 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    return pd.concat([
        pd.DataFrame({"x": x, "density": stats.norm.pdf(x, loc=f_d, scale=sigma), "dataset": "M(D)"}),
        pd.DataFrame({"x": x, "density": stats.norm.pdf(x, loc=f_d_prime, scale=sigma), "dataset": "M(D')"}),
    ], ignore_index=True)


@dataclass(frozen=True)
class MgfBoundCurve:
    """The data-independent moments bound of MAKE Fig. 5 / Visca Fig. 4.8 and its two minima."""

    continuous: pd.DataFrame     # columns order, epsilon on a fine λ grid (for plotting)
    integer_orders: pd.DataFrame  # columns order, epsilon at λ = 1..L
    epsilon_star: float           # continuous minimum (closed form)
    lambda_star: float
    epsilon_integer: float        # minimum over λ = 1..L (the 2017 reference code)
    order_integer: int


def mgf_bound_curve(*, gamma: float, delta: float, n_queries: int, max_integer_order: int = 8,
                    plot_range: tuple[float, float] = (0.25, 8.5), n_points: int = 400) -> MgfBoundCurve:
    """λ ↦ (2Tγ²λ(λ+1) − ln δ)/λ (Visca Eq. 4.11) on a plotting grid, at λ = 1..L, and its continuous minimum.

    All three come from :func:`pate_study.privacy.moments.moments_epsilon` (data-independent mode).
    """
    fine = np.linspace(*plot_range, n_points)
    with warnings.catch_warnings():  # the plotting grid is not an accounting grid: its edges do not matter
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        on_fine = moments_epsilon(gamma=gamma, delta=delta, n_queries=n_queries, orders=fine)
    on_integers = moments_epsilon(gamma=gamma, delta=delta, n_queries=n_queries, orders=int(max_integer_order))
    best = moments_epsilon(gamma=gamma, delta=delta, n_queries=n_queries, orders="continuous")
    return MgfBoundCurve(
        continuous=pd.DataFrame({"order": on_fine.orders, "epsilon": on_fine.curve}),
        integer_orders=pd.DataFrame({"order": on_integers.orders.astype(int), "epsilon": on_integers.curve}),
        epsilon_star=best.epsilon, lambda_star=best.order,
        epsilon_integer=on_integers.epsilon, order_integer=int(on_integers.order))


def grid_comparison(*, gamma: float, delta: float, n_queries: int, max_integer_order: int = 8) -> dict:
    """The same data-independent bound minimised over continuous λ and over λ = 1..L."""
    curve = mgf_bound_curve(gamma=gamma, delta=delta, n_queries=n_queries, max_integer_order=max_integer_order)
    return {"epsilon_continuous": curve.epsilon_star, "lambda_continuous": curve.lambda_star,
            "epsilon_integer": curve.epsilon_integer, "order_integer": curve.order_integer}


@dataclass(frozen=True)
class VoteRows:
    counts: np.ndarray   # int64 [n_rows, n_classes]
    source: DataSource


def load_votes(dataset: str, *, data: str, n_rows: int, seed: int) -> VoteRows:
    """The first ``n_rows`` vote histograms of one PATE 2018 vote matrix (real or synthetic stand-in)."""
    votes = pate2018.load(data, seed=seed)
    if dataset not in votes.counts:
        raise ValueError(f"votes_dataset must be one of {sorted(votes.counts)}, got {dataset!r}")
    counts = votes.counts[dataset]
    if n_rows < 1:
        raise ValueError(f"votes_queries must be >= 1, got {n_rows}")
    return VoteRows(counts[: int(n_rows)], votes.source)


def data_dependent_vs_independent(counts: np.ndarray, *, gamma: float, delta: float, max_integer_order: int = 8,
                                  n_points: int = 20) -> pd.DataFrame:
    """LNMax moments-accountant ε after the first T queries, data-dependent (Papernot 2017 Thm. 3) and
    data-independent (Thm. 2), on the same integer grid λ = 1..L, for T on a log-spaced grid up to len(counts)."""
    checkpoints = np.unique(np.geomspace(1, len(counts), n_points).round().astype(int))
    rows = []
    with warnings.catch_warnings():  # grid-edge optima are expected here; they are reported in the table instead
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        for t in checkpoints:
            dep = moments_epsilon(gamma=gamma, delta=delta, votes=counts[:t], orders=int(max_integer_order))
            ind = moments_epsilon(gamma=gamma, delta=delta, n_queries=int(t), orders=int(max_integer_order))
            rows.append({"n_queries": int(t), "epsilon_dependent": dep.epsilon, "order_dependent": dep.order,
                         "epsilon_independent": ind.epsilon, "order_independent": ind.order,
                         "best_order_at_grid_edge": dep.at_grid_edge or ind.at_grid_edge})
    return pd.DataFrame(rows)


def audit_table(*, gamma: float, n_trials: int, confidence: float, seed: int) -> pd.DataFrame:
    """Empirical lower bounds on ε (:mod:`pate_study.privacy.audit`) for LNMax at the primer's γ, correct and
    with its noise scale halved, and the four ready-made audits (LNMax, GNMax, local Laplace, GNThreshold)
    with their broken twins. One row per audit, indexed by a readable name."""
    results = [audit.audit_lnmax(gamma, n_samples=n_trials, confidence=confidence, seed=seed),
               audit.audit_lnmax(gamma, noise_scale_factor=0.5, n_samples=n_trials, confidence=confidence, seed=seed)]
    results += audit.standard_audits(seed=seed, n_samples=n_trials)
    names = ["LNMax", "LNMax, noise scale halved (broken)"]
    names += [f"{r.mechanism} (standard audit){', noise scale halved (broken)' if r.noise_scale_factor != 1 else ''}"
              for r in results[2:]]
    frame = pd.DataFrame([r.to_dict() for r in results], index=names)
    frame = frame.rename(columns={"claimed_epsilon": "epsilon_claimed", "epsilon_lower": "epsilon_lower_bound"})
    return frame[["epsilon_claimed", "epsilon_lower_bound", "violation", "delta", "confidence", "n_samples", "event"]]
