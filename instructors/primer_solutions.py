"""Worked solutions to the exercises of notebooks/00_dp_primer.ipynb (instructors only; see README.md here).

Each ``solve_<n>()`` returns the arguments of the matching ``pate_study.tooling.exercises.check_*`` call, computed with
the package or numpy the way a student would, not typed in. ``EXPLANATIONS`` holds the written answers of the
"explain" exercises (6 and 10); ``guide.md`` and ``00_dp_primer_solutions.ipynb`` discuss common mistakes.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from pate_study.experiments import primer
from pate_study.privacy import audit_lnmax
from pate_study.tooling.exercises import gnmax_independent_epsilon, lnmax_independent_epsilon


def solve_1() -> dict:
    """Move one vote and measure the l1 distance: two counts change by 1, so 2."""
    counts = np.array([5, 3, 2])
    return {"answer": primer.l1_sensitivity([(counts, primer.move_one_vote(counts, 0, 1))])}


def solve_2(gamma: float = 0.1) -> dict:
    """Δ = 2 (exercise 1), b = 1/γ: ε = Δ/b = 2γ."""
    return {"answer": 2 * gamma, "gamma": gamma}


def solve_3(epsilon: float = 0.5, delta: float = 1e-5) -> dict:
    """σ = Δ√(2 ln(1.25/δ))/ε with Δ = 1."""
    return {"answer": math.sqrt(2 * math.log(1.25 / delta)) / epsilon, "epsilon": epsilon, "delta": delta}


def solve_4(epsilon_budget: float = 10.0, gamma: float = 0.05, delta: float = 1e-5) -> dict:
    """ε(Q) = 2Qγ² + 2√(2Qγ² ln(1/δ)) increases with Q: bisect on the integers."""
    lo, hi = 1, 1
    while lnmax_independent_epsilon(hi, gamma, delta) <= epsilon_budget:
        hi *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if lnmax_independent_epsilon(mid, gamma, delta) <= epsilon_budget else (lo, mid)
    return {"answer": lo, "epsilon_budget": epsilon_budget, "gamma": gamma, "delta": delta}


def solve_5(rdp: float = 12.5, order: float = 20.0, delta: float = 1e-5) -> dict:
    """Basic: r + ln(1/δ)/(α − 1). Improved: r + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)."""
    basic = rdp + math.log(1 / delta) / (order - 1)
    improved = rdp + math.log(1 - 1 / order) - (math.log(delta) + math.log(order)) / (order - 1)
    return {"basic": basic, "improved": improved, "rdp": rdp, "order": order, "delta": delta}


def solve_6(order: float = 8.0, sigma: float = 40.0) -> dict:
    """Δ₂ = ‖(−1, +1)‖₂ = √2; RDP = αΔ₂²/(2σ²) = α/σ²."""
    return {"l2_sensitivity": math.sqrt(2), "rdp_at_order": order / sigma**2, "order": order, "sigma": sigma}


def solve_7(votes_row, sigma: float = 40.0) -> dict:
    """q = Σ_{j≠j*} Φ̄((n* − n_j)/(√2σ)), capped at 1 − 1/m (Papernot et al. 2018, Prop. 7)."""
    row = np.asarray(votes_row)
    top = row.argmax()
    q = float(sum(norm.sf((row[top] - n) / (math.sqrt(2) * sigma)) for j, n in enumerate(row) if j != top))
    return {"answer": min(q, 1 - 1 / len(row)), "votes_row": row, "sigma": sigma}


def solve_8(votes, threshold: float = 200.0, sigma1: float = 150.0) -> dict:
    """Sum of Pr[answered] = Φ((max_j n_j − T)/σ1)."""
    votes = np.asarray(votes)
    answer = float(norm.cdf((votes.max(axis=1) - threshold) / sigma1).sum())
    return {"answer": answer, "votes": votes, "threshold": threshold, "sigma1": sigma1}


def solve_8_monte_carlo(votes, threshold: float = 200.0, sigma1: float = 150.0, runs: int = 20, seed: int = 0) -> float:
    """The same by simulation: run the noisy check ``runs`` times and average the number that pass."""
    rng = np.random.default_rng(seed)
    top = np.asarray(votes).max(axis=1)
    return float(np.mean([(top + rng.normal(0, sigma1, top.shape) >= threshold).sum() for _ in range(runs)]))


def solve_9(gamma: float = 0.05, n_queries: int = 1000, delta: float = 1e-5) -> dict:
    """Root of ε_GNMax(σ) − ε_LNMax in σ (ε_GNMax decreases with σ)."""
    target = lnmax_independent_epsilon(n_queries, gamma, delta)
    sigma = brentq(lambda s: gnmax_independent_epsilon(s, n_queries, delta) - target, 1.0, 1000.0)
    return {"answer": sigma, "gamma": gamma, "n_queries": n_queries, "delta": delta}


def solve_10() -> dict:
    """Whether a query is answered is the output of a noisy function of the votes."""
    return {"choice": "b"}


def solve_11() -> dict:
    """The value of ε_dep is a function of the private votes."""
    return {"choice": "b"}


def solve_12(epsilon: float = 1.0) -> dict:
    """ε = 2ρ on unit-l1 vectors; normalising is post-processing."""
    return {"answer": epsilon / 2, "epsilon": epsilon, "normalising_changes_epsilon": False}


def buggy_lnmax(votes, gamma, rng):
    """LNMax with the classic bug: Laplace scale γ instead of 1/γ."""
    votes = np.asarray(votes, dtype=float)
    return np.argmax(votes + rng.laplace(0.0, gamma, size=votes.shape), axis=1)


def solve_13(gamma: float = 0.5) -> dict:
    """Audit the buggy aggregator; its lower bound exceeds 2γ."""
    result = audit_lnmax(gamma, aggregator=buggy_lnmax)
    return {"aggregator": buggy_lnmax, "result": result, "caught": result.violation, "gamma": gamma}


EXPLANATIONS = {
    6: (
        "Moving one vote turns n into n − e_a + e_b, so n(D) − n(D') = e_a − e_b has l2 norm √2 whatever n is. "
        "GNMax's noisy histogram is the Gaussian mechanism on n, which is (α, αΔ₂²/(2σ²))-RDP (Mironov 2017, Prop. 7): "
        "α·2/(2σ²) = α/σ². The argmax is post-processing, which cannot increase a Rényi divergence, so every answer "
        "costs at most α/σ², independent of the votes."
    ),
    10: (
        "Confident GNMax releases, for every query, whether max_j n_j + N(0, σ1²) ≥ T: a Gaussian mechanism on "
        "max_j n_j (sensitivity 1), so the skip is an output that depends on the private votes. Its RDP, α/(2σ1²) "
        "data-independently (less with Thm 10), must be charged whether or not a label follows; otherwise an "
        "adversary could learn about the votes from which queries are skipped, for free."
    ),
}
