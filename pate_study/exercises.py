"""Checks for the exercises of ``notebooks/00_dp_primer.ipynb``: each says right or wrong, and why.

A student calls ``check_<exercise>(answer, ...)`` in the notebook and gets a :class:`Feedback` (shown as one line:
"right: …" or "not yet: …"). Every check *computes* the right answer from the package (closed forms, the
accountants, the audit), never from a stored number, so changing an exercise's parameters keeps its check correct.
Solutions for instructors live outside the student's view, in ``instructors/primer_solutions.py``; the tests run
them through these checks and show that wrong answers are rejected.

Exercises, easiest first:

1. :func:`check_sensitivity` — the l1 sensitivity of a teacher-vote histogram.
2. :func:`check_lnmax_epsilon` — ε of one LNMax answer.
3. :func:`check_queries_for_budget` — the largest T whose data-independent moments bound stays within a budget.
4. :func:`check_local_rho` — ρ of the student's local Laplace mechanism for a given ε, and post-processing.
5. :func:`check_expected_answered` — the expected number of queries confident GNMax answers.
6. :func:`check_gnmax_sigma` — the σ that makes GNMax as private as LNMax.
7. :func:`check_broken_laplace` — audit an LNMax that uses scale γ instead of 1/γ.
8. :func:`check_release_reason` — why a data-dependent ε cannot be published as it is.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .privacy import OrderAtGridEdgeWarning, audit_lnmax, gnmax_epsilon, local_laplace_epsilon, moments_closed_form
from .privacy.rdp import threshold_logpr

__all__ = [
    "Feedback",
    "check_sensitivity",
    "check_lnmax_epsilon",
    "check_queries_for_budget",
    "check_local_rho",
    "check_expected_answered",
    "check_gnmax_sigma",
    "check_broken_laplace",
    "check_release_reason",
    "lnmax_independent_epsilon",
    "RELEASE_CHOICES",
]


@dataclass(frozen=True)
class Feedback:
    """The verdict of one check: ``correct`` and a one-line explanation."""

    exercise: str
    correct: bool
    message: str

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        return f"{self.exercise}: {'right' if self.correct else 'not yet'}: {self.message}"

    def _repr_markdown_(self) -> str:
        mark = "✅ **right**" if self.correct else "❌ **not yet**"
        return f"{mark} ({self.exercise}): {self.message}"


def _number(answer, exercise: str, positive: str = "") -> float | Feedback:
    """The answer as a finite float, or the Feedback that says why it is not one (``positive``: what the number is,
    when it must be > 0)."""
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return Feedback(exercise, False, f"expected a number, got {answer!r}")
    if not math.isfinite(value):
        return Feedback(exercise, False, f"expected a finite number, got {answer!r}")
    if positive and value <= 0:
        return Feedback(exercise, False, f"{positive}: expected a number > 0, got {value:g}")
    return value


def check_sensitivity(answer) -> Feedback:
    """Exercise 1. One teacher (the one whose partition holds the changed record) moves its vote from class a to
    class b. What is the l1 sensitivity max ‖n(D) − n(D')‖₁ of the vote histogram n?

    Computed over every move on a 3-class histogram: count a loses one vote, count b gains one.
    """
    name = "exercise 1 (sensitivity)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    counts = np.array([5, 3, 2])
    moves = [(a, b) for a in range(3) for b in range(3) if a != b]
    truth = max(np.abs(counts - _moved(counts, a, b)).sum() for a, b in moves)
    if value == truth:
        return Feedback(name, True, f"one vote leaves a class and joins another: two counts change by 1, l1 = {truth}")
    if value == 1:
        return Feedback(name, False, "one count goes down by 1 but another goes up by 1: add both changes")
    return Feedback(name, False, f"{value:g} is not max ‖n(D) − n(D')‖₁; write out n(D) and n(D') for one moved vote")


def _moved(counts: np.ndarray, a: int, b: int) -> np.ndarray:
    out = counts.copy()
    out[a] -= 1
    out[b] += 1
    return out


def check_lnmax_epsilon(answer, gamma: float = 0.1) -> Feedback:
    """Exercise 2. LNMax releases argmax_j(n_j + Lap(1/γ)). What ε does one answer cost, at this γ?

    The Laplace mechanism with scale b on a function of l1 sensitivity Δ is (Δ/b, 0)-DP (Dwork & Roth 2014,
    Thm 3.6); here Δ = 2 and b = 1/γ, and the argmax is post-processing, so ε = 2γ.
    """
    name = "exercise 2 (LNMax ε)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    truth = 2.0 * gamma
    if math.isclose(value, truth, rel_tol=1e-9):
        return Feedback(name, True, f"ε = Δ/b = 2/(1/γ) = 2γ = {truth:g}; the argmax is post-processing and costs nothing")
    if math.isclose(value, gamma, rel_tol=1e-9):
        return Feedback(name, False, "that is Δ/b with Δ = 1: moving one vote changes two counts (exercise 1)")
    if math.isclose(value, 2.0 / gamma, rel_tol=1e-9):
        return Feedback(name, False, "γ is the inverse scale: the noise is Lap(1/γ), so ε = Δ·γ")
    return Feedback(name, False, f"{value:g} ≠ Δ/b; use Δ = 2 and b = 1/γ = {1 / gamma:g}")


def lnmax_independent_epsilon(n_queries: int, gamma: float, delta: float) -> float:
    """Data-independent moments bound for T LNMax answers, minimised over continuous λ (Visca 2021 Eq. 4.11)."""
    return moments_closed_form(n_queries, gamma, delta)[0]


def check_queries_for_budget(answer, epsilon_budget: float = 10.0, gamma: float = 0.05, delta: float = 1e-5) -> Feedback:
    """Exercise 3. With γ and δ fixed, what is the largest number of LNMax answers T whose data-independent moments
    bound (continuous λ, :func:`pate_study.privacy.moments_closed_form`) stays ≤ the budget?"""
    name = "exercise 3 (queries for a budget)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    if value != int(value) or value < 1:
        return Feedback(name, False, f"T counts answers: expected a positive whole number, got {value:g}")
    t = int(value)
    eps_t = lnmax_independent_epsilon(t, gamma, delta)
    eps_next = lnmax_independent_epsilon(t + 1, gamma, delta)
    if eps_t > epsilon_budget:
        return Feedback(name, False, f"ε({t}) = {eps_t:.4f} exceeds the budget {epsilon_budget:g}: answer fewer queries")
    if eps_next <= epsilon_budget:
        return Feedback(name, False, f"ε({t + 1}) = {eps_next:.4f} still fits the budget: you can answer more")
    return Feedback(name, True, f"ε({t}) = {eps_t:.4f} ≤ {epsilon_budget:g} < ε({t + 1}) = {eps_next:.4f} "
                                f"(basic composition would allow only {int(epsilon_budget / (2 * gamma))})")


def check_local_rho(answer, epsilon: float = 1.0, normalising_changes_epsilon=None) -> Feedback:
    """Exercise 4. The student privatises each query x (‖x‖₁ = 1) as x + Lap(1/ρ)^d before it leaves. Which ρ makes
    that (ε, 0)-LDP? And (``normalising_changes_epsilon``, True or False): does re-normalising the noisy vector
    before sending it change ε?"""
    name = "exercise 4 (local DP)"
    value = _number(answer, name, positive="ρ is an inverse noise scale")
    if isinstance(value, Feedback):
        return value
    got = local_laplace_epsilon(rho=value)
    if not math.isclose(got, epsilon, rel_tol=1e-9):
        hint = ("the l1 distance between two unit-l1 vectors can be 2 (e₁ vs −e₁ or e₁ vs e₂ give 2): ε = 2ρ"
                if math.isclose(value, epsilon, rel_tol=1e-9) else f"with ρ = {value:g} the mechanism is ({got:g}, 0)-DP")
        return Feedback(name, False, hint)
    if normalising_changes_epsilon is None:
        return Feedback(name, False, "ρ is right; now answer the second part (normalising_changes_epsilon=True/False)")
    if bool(normalising_changes_epsilon):
        return Feedback(name, False, "ρ is right, but any function of the noisy output that does not look at the data "
                                     "again is post-processing: it cannot increase ε")
    return Feedback(name, True, f"ε = 2ρ → ρ = ε/2 = {value:g}; post-processing (normalising, a classifier) keeps ε")


def check_expected_answered(answer, votes, threshold: float = 200.0, sigma1: float = 150.0, tolerance: float = 0.5) -> Feedback:
    """Exercise 5. Confident GNMax answers a query when max_j n_j + N(0, σ1²) ≥ T. How many of these ``votes``' queries
    does it answer on average? (Σ_i Pr[answered_i], Papernot et al. 2018 §4.2)"""
    name = "exercise 5 (expected answered)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    counts = np.asarray(votes)
    truth = float(np.exp(threshold_logpr(counts.max(axis=1), threshold, sigma1)).sum())
    if abs(value - truth) <= tolerance:
        return Feedback(name, True, f"Σ Φ((max_j n_j − T)/σ1) = {truth:.2f} of {len(counts)} queries")
    if value == int(value) and value == np.count_nonzero(counts.max(axis=1) >= threshold):
        return Feedback(name, False, "that counts the queries whose clean maximum reaches T; the check is noisy: "
                                     "sum the probabilities Φ((max_j n_j − T)/σ1)")
    return Feedback(name, False, f"{value:g} is off by more than {tolerance}; Pr[answered] = Φ((max_j n_j − T)/σ1) per query")


def check_gnmax_sigma(answer, gamma: float = 0.05, n_queries: int = 1000, delta: float = 1e-5, rtol: float = 0.02) -> Feedback:
    """Exercise 6. Which σ makes GNMax as private as LNMax at γ for ``n_queries`` answers, both data-independent?

    LNMax: the moments bound over continuous λ (:func:`lnmax_independent_epsilon`). GNMax: α/σ² per answer, RDP
    composition, basic conversion on the 2018 order grid (:func:`pate_study.privacy.gnmax_epsilon`). Right when the
    two ε agree within ``rtol``.
    """
    name = "exercise 6 (GNMax σ)"
    value = _number(answer, name, positive="σ is a standard deviation")
    if isinstance(value, Feedback):
        return value
    target = lnmax_independent_epsilon(n_queries, gamma, delta)
    with warnings.catch_warnings():  # a far-off σ puts the best order at the grid's edge; the hint covers it
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        got = gnmax_epsilon(sigma=value, delta=delta, n_queries=n_queries).epsilon
    if math.isclose(got, target, rel_tol=rtol):
        return Feedback(name, True, f"GNMax σ = {value:g}: ε = {got:.3f}, LNMax γ = {gamma:g}: ε = {target:.3f}")
    direction = "more noise (larger σ)" if got > target else "less noise (smaller σ)"
    return Feedback(name, False, f"GNMax σ = {value:g} gives ε = {got:.3f} but LNMax gives {target:.3f}: try {direction}")


def check_broken_laplace(aggregator: Callable, caught, gamma: float = 0.5, n_samples: int = 200_000, seed: int = 0) -> Feedback:
    """Exercise 7. Write ``aggregator(votes, gamma, rng) -> labels``: LNMax with the classic bug, Laplace scale γ
    instead of 1/γ. Audit it with :func:`pate_study.privacy.audit_lnmax` (``aggregator=``) at γ = 0.5 and report
    ``caught``: does the audit's lower bound exceed the claimed ε = 2γ?

    The check first tests that the aggregator is the buggy one: on votes [g, 0] it releases class 1 when the
    difference of two Laplace draws of scale b exceeds g, which happens with probability (2 + g/b)e^{−g/b}/4
    (closed form); the observed fraction must match b = γ. Then it runs the same audit and compares ``caught``.
    """
    name = "exercise 7 (audit the broken LNMax)"
    if not callable(aggregator):
        return Feedback(name, False, "aggregator must be a function (votes, gamma, rng) -> labels")
    g, n = 1, 200_000
    rng = np.random.default_rng(seed)
    try:
        labels = np.asarray(aggregator(np.broadcast_to(np.array([g, 0]), (n, 2)), gamma, rng))
    except Exception as err:  # the student's code: report, do not crash the notebook
        return Feedback(name, False, f"calling aggregator(votes, gamma, rng) raised {type(err).__name__}: {err}")
    if labels.shape != (n,):
        return Feedback(name, False, f"aggregator must return one label per query, shape ({n},), got {labels.shape}")
    flipped = float(np.mean(labels == 1))

    def flip_probability(scale: float) -> float:
        x = g / scale
        return (2.0 + x) * math.exp(-x) / 4.0  # Pr[Lap(b) − Lap(b) > g], difference of two Laplace draws

    buggy, correct = flip_probability(gamma), flip_probability(1.0 / gamma)
    se = math.sqrt(buggy * (1 - buggy) / n)
    if abs(flipped - buggy) > 5 * se:
        which = "the correct scale 1/γ" if abs(flipped - correct) <= 5 * math.sqrt(correct * (1 - correct) / n) else "neither scale"
        return Feedback(name, False, f"on votes [{g}, 0] your aggregator flips {flipped:.4f} of labels, which matches "
                                     f"{which}; with scale γ = {gamma:g} it would flip {buggy:.4f}")
    result = audit_lnmax(gamma, aggregator=aggregator, n_samples=n_samples, seed=seed)
    if bool(caught) != result.violation:
        return Feedback(name, False, f"the audit's lower bound is {result.epsilon_lower:.3f} against the claimed "
                                     f"{result.claimed_epsilon:g}: caught should be {result.violation}")
    return Feedback(name, True, f"lower bound {result.epsilon_lower:.3f} > claimed ε = {result.claimed_epsilon:g}: the "
                                "audit catches the bug (at γ = 1 it could not: γ = 1/γ)")


RELEASE_CHOICES = {
    "a": "it is usually larger than the data-independent ε",
    "b": "it is computed from the private votes, so its value reveals something about them",
    "c": "it depends on the random noise of the aggregator",
    "d": "Rényi DP cannot be converted to (ε, δ)",
}


def check_release_reason(choice) -> Feedback:
    """Exercise 8. Why can a data-dependent ε not be published as it is? Pick one of :data:`RELEASE_CHOICES`."""
    name = "exercise 8 (publishing ε)"
    key = str(choice).strip().lower()
    if key not in RELEASE_CHOICES:
        return Feedback(name, False, f"pick one of {sorted(RELEASE_CHOICES)}")
    if key == "b":
        return Feedback(name, True, "ε_dep is a function of the votes, hence of the data: it is released with noise "
                                    "calibrated to its smooth sensitivity (Papernot et al. 2018 §4.3)")
    reasons = {"a": "on the same order grid it is never larger (it is often much smaller); that is not the problem",
               "c": "the accountant uses the clean votes, not the noisy ones: it is deterministic given the data",
               "d": "it can (Mironov 2017 Prop. 3); the problem is what its value reveals"}
    return Feedback(name, False, reasons[key])
