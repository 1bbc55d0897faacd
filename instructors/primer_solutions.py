"""Worked solutions to the exercises of notebooks/00_dp_primer.ipynb (instructors only; see README.md here).

Each ``solve_<n>()`` returns the arguments of the matching ``pate_study.exercises.check_*`` call, computed with the
package the way a student would, not typed in.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import brentq

from pate_study.experiments import primer
from pate_study.exercises import lnmax_independent_epsilon
from pate_study.privacy import OrderAtGridEdgeWarning, audit_lnmax, gnmax_epsilon
from pate_study.privacy.rdp import threshold_logpr


def solve_1() -> dict:
    """Move one vote and measure the l1 distance."""
    counts = np.array([5, 3, 2])
    return {"answer": primer.l1_sensitivity([(counts, primer.move_one_vote(counts, 0, 1))])}


def solve_2(gamma: float = 0.1) -> dict:
    """Δ = 2 (exercise 1), b = 1/γ: ε = Δ/b = 2γ."""
    return {"answer": 2 * gamma, "gamma": gamma}


def solve_3(epsilon_budget: float = 10.0, gamma: float = 0.05, delta: float = 1e-5) -> dict:
    """ε(T) = 2Tγ² + 2√(2Tγ² ln(1/δ)) increases with T: bisect on the integers."""
    lo, hi = 1, 1
    while lnmax_independent_epsilon(hi, gamma, delta) <= epsilon_budget:
        hi *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if lnmax_independent_epsilon(mid, gamma, delta) <= epsilon_budget else (lo, mid)
    return {"answer": lo, "epsilon_budget": epsilon_budget, "gamma": gamma, "delta": delta}


def solve_4(epsilon: float = 1.0) -> dict:
    """ε = 2ρ on unit-l1 vectors; normalising is post-processing."""
    return {"answer": epsilon / 2, "epsilon": epsilon, "normalising_changes_epsilon": False}


def solve_5(votes, threshold: float = 200.0, sigma1: float = 150.0) -> dict:
    """Sum of Pr[answered] = Φ((max_j n_j − T)/σ1)."""
    votes = np.asarray(votes)
    answer = float(np.exp(threshold_logpr(votes.max(axis=1), threshold, sigma1)).sum())
    return {"answer": answer, "votes": votes, "threshold": threshold, "sigma1": sigma1}


def solve_6(gamma: float = 0.05, n_queries: int = 1000, delta: float = 1e-5) -> dict:
    """Root of ε_GNMax(σ) − ε_LNMax in σ (ε_GNMax decreases with σ)."""
    target = lnmax_independent_epsilon(n_queries, gamma, delta)
    with warnings.catch_warnings():  # small σ in the bracket put the best order at the grid's edge
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        sigma = brentq(lambda s: gnmax_epsilon(sigma=s, delta=delta, n_queries=n_queries).epsilon - target, 1.0, 1000.0)
    return {"answer": sigma, "gamma": gamma, "n_queries": n_queries, "delta": delta}


def buggy_lnmax(votes, gamma, rng):
    """LNMax with the classic bug: Laplace scale γ instead of 1/γ."""
    votes = np.asarray(votes, dtype=float)
    return np.argmax(votes + rng.laplace(0.0, gamma, size=votes.shape), axis=1)


def solve_7(gamma: float = 0.5) -> dict:
    """Audit the buggy aggregator; its lower bound exceeds 2γ."""
    caught = audit_lnmax(gamma, aggregator=buggy_lnmax, n_samples=200_000, seed=0).violation
    return {"aggregator": buggy_lnmax, "caught": caught, "gamma": gamma}


def solve_8() -> dict:
    """The value of ε_dep is a function of the private votes."""
    return {"choice": "b"}
