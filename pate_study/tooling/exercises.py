"""Checks for the exercises of ``notebooks/00_dp_primer.ipynb``: each says right or not yet, and why.

One module of over 800 lines on purpose: it reads as the lab does, one check after another in the notebook's
order, each with its hint and its rule, and an instructor reviews them in one place.

A student calls ``check_<exercise>(answer, ...)`` in the notebook and gets a :class:`Feedback` (shown as one line:
"right: …" or "not yet: …"). Every check *computes* the right answer from the package (closed forms, the
accountants, the audit), never from a stored number, so changing an exercise's parameters keeps its check correct.
A wrong type (a string where a number or ``True``/``False`` is expected) is rejected with what was expected. A
wrong value first gets a **hint**; from the second wrong attempt on the same exercise the feedback also **tells**
the rule to apply (:func:`reset_attempts` starts over). Worked solutions, explanations and common mistakes are in
``instructors/`` (the source of these checks is readable by students: see ``instructors/README.md``).

Exercises, in the order the notebook shows them:

1. :func:`check_sensitivity` — l1 sensitivity of a teacher-vote histogram.
2. :func:`check_lnmax_epsilon` — ε of one LNMax answer.
3. :func:`check_gaussian_sigma` — the classic Gaussian-mechanism σ for (ε, δ).
4. :func:`check_queries_for_budget` — the largest T within a budget under the moments bound.
5. :func:`check_rdp_conversion` — RDP → (ε, δ) by hand, basic and improved conversion.
6. :func:`check_gnmax_rdp` — GNMax's l2 sensitivity √2 and its RDP α/σ² (with a written derivation).
7. :func:`check_theorem6_q` — Theorem 6's q for one real vote row.
8. :func:`check_expected_answered` — expected number of queries confident GNMax answers.
9. :func:`check_gnmax_sigma` — the σ that makes GNMax as private as LNMax.
10. :func:`check_unanswered_cost` — why an unanswered confident-GNMax query still costs.
11. :func:`check_release_reason` — why a data-dependent ε cannot be published as it is.
12. :func:`check_local_rho` — ρ of the student's local Laplace mechanism; post-processing.
13. :func:`check_buggy_aggregator`, then :func:`check_broken_laplace` — write an LNMax that uses scale γ instead of
    1/γ, then audit it.

Every check answers an untouched cell (``None``) with "no answer yet", and an answer of the wrong type or shape in
one line. Each typical mistake listed in ``instructors/mistakes.md`` gets a hint of its own
(``tests/tooling/test_exercises.py`` runs each one through its check).

Tasks of the second lab, ``notebooks/07_pate2018_lab.ipynb`` (the released PATE 2018 votes):

1. :func:`check_lab2_answered` — the expected number of queries confident GNMax answers.
2. :func:`check_lab2_conversions` — ε with the basic and the improved conversion (then explain the gap).
3. :func:`check_lab2_ratio` — how many times smaller the data-dependent ε is than the data-independent one.
4. :func:`check_lab2_q_fraction` — the fraction of queries whose Theorem 6 q is below a cut-off.
5. :func:`check_lab2_half_threshold` — the threshold at which half of the queries are answered on average.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from pate_study.core.errors import one_line
from pate_study.experiments import pate2018_lab
from pate_study.experiments.primer import classic_gaussian_sigma, gaussian_tight_delta
from pate_study.privacy import (
    Accounting,
    AuditResult,
    OrderAtGridEdgeWarning,
    audit_lnmax,
    epsilon_curve,
    gnmax_epsilon,
    gnmax_logq,
    local_laplace_epsilon,
    moments_closed_form,
)
from pate_study.privacy._validation import check_counts, number_text
from pate_study.privacy.rdp import threshold_logpr

__all__ = [
    "Feedback",
    "reset_attempts",
    "check_sensitivity",
    "check_lnmax_epsilon",
    "check_gaussian_sigma",
    "check_queries_for_budget",
    "check_rdp_conversion",
    "check_gnmax_rdp",
    "check_theorem6_q",
    "check_expected_answered",
    "check_gnmax_sigma",
    "check_unanswered_cost",
    "check_release_reason",
    "check_local_rho",
    "check_buggy_aggregator",
    "check_broken_laplace",
    "check_lab2_answered",
    "check_lab2_conversions",
    "check_lab2_ratio",
    "check_lab2_q_fraction",
    "check_lab2_half_threshold",
    "lnmax_independent_epsilon",
    "lnmax_integer_order_epsilon",
    "gnmax_independent_epsilon",
    "conversion_slips",
    "theorem6_slips",
    "RELEASE_CHOICES",
    "UNANSWERED_CHOICES",
]

_ATTEMPTS: Counter = Counter()


def reset_attempts() -> None:
    """Forget earlier wrong attempts: the next wrong answer to each exercise gets the hint again."""
    _ATTEMPTS.clear()


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


def _join_hint_and_rule(hint: str, tell: str) -> str:
    """``hint``, then ``tell`` as a sentence of its own: "… be? The rule: e₁ and e₂ …" (a hint that already ends
    with a question or full stop gets no second one)."""
    return f"{hint}{'' if hint.endswith(('?', '.', '!')) else '.'} The rule: {tell}"


def _wrong(exercise: str, hint: str, tell: str = "") -> Feedback:
    """A wrong value: the hint on the first attempt, the hint and the rule (``tell``) from the second on."""
    _ATTEMPTS[exercise] += 1
    if tell and _ATTEMPTS[exercise] > 1:
        return Feedback(exercise, False, _join_hint_and_rule(hint, tell))
    return Feedback(exercise, False, hint)


def _within_printed_precision(value: float, truth: float, decimals: int) -> bool:
    """Whether ``value`` is ``truth`` at the precision asked: within half the last asked digit, 0.5·10^−decimals (the
    brief's only constant tolerance), plus rounding of the float itself."""
    return abs(value - truth) <= 0.5 * 10.0**-decimals * (1 + 1e-9)


def _number(answer, exercise: str, positive: str = "") -> float | Feedback:
    """The answer as a finite float, or the Feedback that says why it is not one (``positive``: what the number is,
    when it must be > 0). Booleans and strings are rejected: ``True`` is not a number an exercise asks for."""
    if answer is None:
        return Feedback(exercise, False, "no answer yet: replace None with a number")
    if isinstance(answer, (bool, np.bool_, str, bytes)):
        return Feedback(exercise, False, f"expected a number, got {answer!r} ({type(answer).__name__})")
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return Feedback(exercise, False, f"expected a number, got {answer!r} ({type(answer).__name__})")
    if not math.isfinite(value):
        return Feedback(exercise, False, f"expected a finite number, got {answer!r}")
    if positive and value <= 0:
        return Feedback(exercise, False, f"{positive}: expected a number > 0, got {value:g}")
    return value


def _boolean(answer, exercise: str, what: str) -> bool | Feedback:
    """``True`` or ``False`` (numpy booleans too); anything else, ``"no"`` included, is rejected with a hint."""
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    if answer is None:
        return Feedback(exercise, False, f"no answer yet: replace None in {what} with True or False")
    return Feedback(exercise, False, f"{what}: expected True or False, got {answer!r} ({type(answer).__name__})")


def _choice(answer, exercise: str, choices: dict) -> str | Feedback:
    """One of ``choices``' keys (a string, case and spaces ignored), or the Feedback that says what was expected."""
    if answer is None:
        return Feedback(exercise, False, f"no answer yet: replace None with one of {sorted(choices)} (a string)")
    if not isinstance(answer, str) or answer.strip().lower() not in choices:
        return Feedback(exercise, False, f"expected one of {sorted(choices)} (a string), got {answer!r}")
    return answer.strip().lower()


def _judge_choice(answer, exercise: str, choices: dict, right: str, why_right: str, why_wrong: dict) -> Feedback:
    """A multiple-choice check: ``right`` earns ``why_right``; a wrong key gets its hint from ``why_wrong``."""
    key = _choice(answer, exercise, choices)
    if isinstance(key, Feedback):
        return key
    if key == right:
        return Feedback(exercise, True, why_right)
    return _wrong(exercise, why_wrong[key])


def _moved(counts: np.ndarray, a: int, b: int) -> np.ndarray:
    out = counts.copy()
    out[a] -= 1
    out[b] += 1
    return out


def check_sensitivity(answer) -> Feedback:
    """Exercise 1. One teacher moves its vote from class a to class b. What is the l1 sensitivity
    max ‖n(D) − n(D')‖₁ of the vote histogram n? Computed over every move on a 3-class histogram."""
    name = "exercise 1 (sensitivity)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    counts = np.array([5, 3, 2])
    truth = max(np.abs(counts - _moved(counts, a, b)).sum() for a in range(3) for b in range(3) if a != b)
    if value == truth:
        return Feedback(name, True, f"one vote leaves a class and joins another: two counts change by 1, l1 = {truth}")
    if value == 1:
        return _wrong(
            name,
            "write out n(D) and n(D') for one moved vote: how many counts change?",
            "one count goes down by 1 and another goes up by 1: add both changes",
        )
    return _wrong(
        name,
        f"{value:g} is not max ‖n(D) − n(D')‖₁; write out n(D) and n(D') for one moved vote",
        "‖v‖₁ is the sum of the absolute values of v's coordinates",
    )


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
        return Feedback(
            name, True, f"ε = Δ/b = 2/(1/γ) = 2γ = {truth:g}; the argmax is post-processing and costs nothing"
        )
    if math.isclose(value, gamma, rel_tol=1e-9):
        return _wrong(
            name,
            "which Δ did you use? Look back at exercise 1",
            "that is Δ/b with Δ = 1: moving one vote changes two counts, Δ = 2",
        )
    if math.isclose(value, 2.0 / gamma, rel_tol=1e-9):
        return _wrong(name, "γ is the inverse scale: what is b?", "the noise is Lap(1/γ), so b = 1/γ and ε = Δ/b = Δ·γ")
    return _wrong(name, f"{value:g} is not Δ/b for this mechanism", f"use Δ = 2 and b = 1/γ = {1 / gamma:g}")


def check_gaussian_sigma(
    answer, epsilon: float = 0.5, delta: float = 1e-5, sensitivity: float = 1.0, decimals: int = 2
) -> Feedback:
    """Exercise 3. Which σ does the classic analysis (Dwork & Roth 2014, Thm A.1) require for (ε, δ)-DP?

    Right at the precision the notebook asks (``decimals``, two: within 0.005). The common slip ln(1/δ) for
    ln(1.25/δ) (1 % off) is rejected with its own hint. The feedback also gives the tight δ of the right σ
    (Balle & Wang 2018, Thm 8), always smaller.
    """
    name = "exercise 3 (Gaussian σ)"
    value = _number(answer, name, positive="σ is a standard deviation")
    if isinstance(value, Feedback):
        return value
    truth = classic_gaussian_sigma(epsilon, delta, sensitivity)
    if _within_printed_precision(value, truth, decimals):
        tight = gaussian_tight_delta(epsilon, truth, sensitivity)
        return Feedback(
            name,
            True,
            f"σ = Δ√(2 ln(1.25/δ))/ε = {truth:.4f}; at this σ the tight δ is only "
            f"{tight:.2e} < {delta:g}: the classic bound is sufficient, not tight",
        )
    if math.isclose(value, truth**2, rel_tol=0.01):
        return _wrong(name, "that looks like a variance: the exercise asks for σ")
    if _within_printed_precision(value, sensitivity * math.sqrt(2 * math.log(1 / delta)) / epsilon, decimals):
        return _wrong(
            name,
            "that is Δ√(2 ln(1/δ))/ε: look again at the logarithm in Thm A.1",
            "σ = Δ√(2 ln(1.25/δ))/ε: the constant 1.25 matters (about 1 % of σ)",
        )
    if abs(value - truth) < 0.05:
        return _wrong(name, f"close: give σ to {decimals} decimals, as the exercise asks")
    direction = "larger" if value < truth else "smaller"
    return _wrong(
        name,
        f"σ = {value:g} is {'too small' if value < truth else 'more than the classic analysis needs'}"
        f" (try {direction})",
        "σ = Δ√(2 ln(1.25/δ))/ε, with Δ = 1 here",
    )


def lnmax_independent_epsilon(n_queries: int, gamma: float, delta: float) -> float:
    """Data-independent moments bound for T LNMax answers, minimised over continuous λ (Visca 2021 Eq. 4.11)."""
    return moments_closed_form(n_queries, gamma, delta)[0]


def check_queries_for_budget(
    answer, epsilon_budget: float = 10.0, gamma: float = 0.05, delta: float = 1e-5
) -> Feedback:
    """Exercise 4. With γ and δ fixed, what is the largest number of LNMax answers whose data-independent moments
    bound (continuous λ, :func:`pate_study.privacy.moments_closed_form`) stays ≤ the budget?"""
    name = "exercise 4 (queries for a budget)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    if value != int(value) or value < 1:
        return Feedback(name, False, f"the number of answers: expected a positive whole number, got {value:g}")
    t = int(value)
    eps_t, eps_next = (lnmax_independent_epsilon(k, gamma, delta) for k in (t, t + 1))
    if eps_t <= epsilon_budget < eps_next:
        return Feedback(
            name,
            True,
            f"ε({t}) = {eps_t:.4f} ≤ {epsilon_budget:g} < ε({t + 1}) = {eps_next:.4f} "
            f"(basic composition would allow only {int(epsilon_budget / (2 * gamma))})",
        )
    if t == int(epsilon_budget / (2 * gamma)):
        return _wrong(
            name,
            f"{t} answers is what basic composition allows (2Qγ ≤ {epsilon_budget:g}); the exercise asks for the "
            "moments bound, which allows more",
            "ε(Q) = privacy.moments_closed_form(Q, gamma, delta)[0]: the largest Q with ε(Q) ≤ the budget",
        )
    if t == _largest_fitting(lambda k: lnmax_integer_order_epsilon(k, gamma, delta), epsilon_budget):
        return _wrong(
            name,
            f"{t} is the largest Q on the integer orders λ = 1..8 of the 2017 reference code; the exercise asks "
            "for continuous λ, whose minimum is lower, so more answers fit",
            "ε(Q) = privacy.moments_closed_form(Q, gamma, delta)[0] minimises over continuous λ",
        )
    if eps_t > epsilon_budget:
        return _wrong(
            name,
            f"ε({number_text(t)}) = {_epsilon_text(eps_t)} exceeds the budget {epsilon_budget:g}: answer fewer queries",
        )
    return _wrong(
        name, f"ε({number_text(t + 1)}) = {_epsilon_text(eps_next)} still fits the budget: you can answer more"
    )


def lnmax_integer_order_epsilon(n_queries: int, gamma: float, delta: float, max_order: int = 8) -> float:
    """The same data-independent moments bound minimised over the integer orders λ = 1..``max_order`` only, as the
    2017 reference code evaluates it: min_λ (2Qγ²λ(λ + 1) + ln(1/δ))/λ (Visca 2021 Eqs. 4.10-4.11)."""
    orders = np.arange(1, max_order + 1, dtype=float)
    return float(np.min((2 * n_queries * gamma**2 * orders * (orders + 1) + math.log(1 / delta)) / orders))


def _largest_fitting(epsilon_of: Callable[[int], float], budget: float) -> int:
    """The largest whole Q ≥ 0 with ``epsilon_of(Q) ≤ budget``, for an ``epsilon_of`` increasing in Q (doubling,
    then bisection on the integers)."""
    if epsilon_of(1) > budget:
        return 0
    low, high = 1, 2
    while epsilon_of(high) <= budget:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if epsilon_of(middle) <= budget else (low, middle)
    return low


def _epsilon_text(epsilon: float) -> str:
    """ε for a feedback line: four decimals, or :func:`~pate_study.privacy._validation.number_text`'s ``%g``
    from 10^12 on (an absurd answer must not print a 300-digit number)."""
    return f"{epsilon:.4f}" if abs(epsilon) < 1e12 else number_text(epsilon)


def conversion_slips(rdp: float, order: float, delta: float) -> dict[str, dict[str, float]]:
    """The values the typical slips of exercise 5 give, per conversion: ``{"basic": {slip: ε}, "improved": {...}}``.

    Slips: ``log10`` (log₁₀ for ln throughout), ``sign`` (the δ term with the wrong sign), ``delta`` (the δ term
    left out), ``alpha`` (dividing by α instead of α − 1); for the improved conversion also ``no-ln(1-1/alpha)``
    (that term left out) and ``basic`` (the basic formula given as the improved one)."""
    r, a, ln_1_over_delta = rdp, order, math.log(1 / delta)
    log_alpha, ln_factor = math.log(a), math.log(1 - 1 / a)
    return {
        "basic": {
            "log10": r + math.log10(1 / delta) / (a - 1),
            "sign": r - ln_1_over_delta / (a - 1),
            "delta": r,
            "alpha": r + ln_1_over_delta / a,
        },
        "improved": {
            "log10": r + math.log10(1 - 1 / a) - (math.log10(delta) + math.log10(a)) / (a - 1),
            "sign": r + ln_factor - (ln_1_over_delta + log_alpha) / (a - 1),
            "sign-whole": r + ln_factor + (-ln_1_over_delta + log_alpha) / (a - 1),
            "delta": r + ln_factor - log_alpha / (a - 1),
            "alpha": r + ln_factor - (-ln_1_over_delta + log_alpha) / a,
            "no-ln(1-1/alpha)": r - (-ln_1_over_delta + log_alpha) / (a - 1),
            "basic": r + ln_1_over_delta / (a - 1),
        },
    }


#: What a student hears for each slip of exercise 5 (:func:`conversion_slips`), naming the quantity.
CONVERSION_SLIP_HINTS = {
    "log10": "that is log₁₀ (np.log10): both conversions use the natural logarithm ln (np.log)",
    "sign": "check the sign of the δ term: ln(1/δ) = −ln δ is positive for δ < 1, so δ makes ε larger",
    "sign-whole": "check the sign of the δ term: −(ln δ + ln α)/(α − 1) is positive here, it makes ε larger",
    "delta": "the δ term is missing: ε pays for δ through ln δ",
    "alpha": "divide by α − 1, not by α",
    "no-ln(1-1/alpha)": "the term ln(1 − 1/α) (negative) is missing",
    "basic": "that is the basic conversion's value; the improved one adds ln(1 − 1/α) and divides ln δ + ln α by α − 1",
}
CONVERSION_RULES = {
    "basic": "basic ε = r + ln(1/δ)/(α − 1)",
    "improved": "improved ε = r + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)",
}


def check_rdp_conversion(
    basic, improved, rdp: float = 12.5, order: float = 20.0, delta: float = 1e-5, decimals: int = 2
) -> Feedback:
    """Exercise 5. A mechanism is (α, r)-RDP. Convert to (ε, δ) by hand at this one order, with the basic
    conversion (Mironov 2017, Prop. 3) and the improved one (Canonne, Kamath & Steinke 2020, Prop. 12).
    Right at the precision the notebook asks (``decimals``, two: within 0.005, so 13.11 and 12.90 pass), computed by
    :func:`pate_study.privacy.epsilon_curve`. A wrong value is named (basic, improved or both), and each typical slip
    (:func:`conversion_slips`: log₁₀ for ln, the sign of the δ term, δ left out, α for α − 1) gets its own hint."""
    name = "exercise 5 (RDP → (ε, δ))"
    values = [_number(v, name) for v in (basic, improved)]
    for v in values:
        if isinstance(v, Feedback):
            return v
    answers = dict(zip(("basic", "improved"), values))
    truth = {
        c: float(epsilon_curve([order], [rdp], delta, accounting=Accounting(conversion=c))[0])
        for c in ("basic", "improved")
    }
    right = {c: _within_printed_precision(answers[c], truth[c], decimals) for c in truth}
    if all(right.values()):
        return Feedback(
            name,
            True,
            f"basic {truth['basic']:.4f}, improved {truth['improved']:.4f}: the improved "
            f"conversion saves {truth['basic'] - truth['improved']:.4f} at the same RDP",
        )
    if _within_printed_precision(answers["basic"], truth["improved"], decimals) and _within_printed_precision(
        answers["improved"], truth["basic"], decimals
    ):
        return _wrong(name, "the two are swapped: the improved conversion is never larger than the basic one")
    slips = conversion_slips(rdp, order, delta)
    parts, rules = [], []
    for conversion in ("basic", "improved"):
        if right[conversion]:
            parts.append(f"{conversion} is right")
            continue
        value = answers[conversion]
        slip = next((k for k, v in slips[conversion].items() if _within_printed_precision(value, v, decimals)), None)
        if slip is not None:
            parts.append(f"{conversion} {value:g} is off: {CONVERSION_SLIP_HINTS[slip]}")
        elif abs(value - truth[conversion]) < 0.05:
            parts.append(f"{conversion} {value:g} is close: give it to {decimals} decimals, as the exercise asks")
        else:
            parts.append(f"{conversion} {value:g} is off")
        rules.append(CONVERSION_RULES[conversion])
    return _wrong(name, "; ".join(parts), "; ".join(rules))


def check_gnmax_rdp(l2_sensitivity, rdp_at_order, order: float = 8.0, sigma: float = 40.0) -> Feedback:
    """Exercise 6. Moving one vote changes the histogram by which l2 distance Δ₂? With the Gaussian mechanism's RDP
    αΔ₂²/(2σ²) (Mironov 2017, Prop. 7), what is one GNMax answer's RDP at this order? (Papernot et al. 2018, Prop. 8)
    The written derivation is for the discussion; the check tests both numbers (1e-6 relative)."""
    name = "exercise 6 (GNMax RDP)"
    values = [_number(v, name) for v in (l2_sensitivity, rdp_at_order)]
    for v in values:
        if isinstance(v, Feedback):
            return v
    delta2, rdp = values
    if not math.isclose(delta2, math.sqrt(2.0), rel_tol=1e-6):
        if math.isclose(delta2, 2.0):
            hint = "2 is the l1 distance (and Δ₂²): the l2 norm takes a square root"
        elif math.isclose(delta2, 1.0):
            hint = "one vote moves, but two counts change (one down, one up): both enter the norm"
        else:
            hint = "which coordinates change, and by how much? Then take the Euclidean norm"
        return _wrong(name, hint, "two counts change by 1: Δ₂ = √(1² + 1²) = √2")
    truth = order / sigma**2
    if math.isclose(rdp, truth, rel_tol=1e-6):
        return Feedback(name, True, f"α·Δ₂²/(2σ²) = α·2/(2σ²) = α/σ² = {truth:.6g}; the argmax is post-processing")
    if math.isclose(rdp, order / (2 * sigma**2), rel_tol=1e-6):
        hint = f"{rdp:g} is α/(2σ²), the RDP of Δ₂ = 1: put your Δ₂² = 2 into αΔ₂²/(2σ²)"
    elif math.isclose(rdp, 2 * order / sigma**2, rel_tol=1e-6):
        hint = f"{rdp:g} is α·4/(2σ²): Δ₂² = (√2)² = 2, not 4"
    elif math.isclose(rdp, math.sqrt(2) * order / (2 * sigma**2), rel_tol=1e-6):
        hint = f"{rdp:g} uses Δ₂ where the formula squares it: αΔ₂²/(2σ²)"
    else:
        hint = f"Δ₂ is right; {rdp:g} is not α·Δ₂²/(2σ²) at α = {order:g}, σ = {sigma:g}"
    return _wrong(name, hint, "with Δ₂² = 2 the 2 cancels: α/σ²")


def theorem6_slips(votes_row, sigma: float) -> dict[str, float]:
    """The values exercise 7's typical slips give on one vote row: ``sigma`` (σ where the two noisy counts' difference
    has √2σ), ``with-top`` (the plurality j* kept in the sum: Φ̄(0) = 1/2 more), ``cdf`` (Φ for Φ̄, uncapped) and
    ``uncapped`` (the union bound without the cap 1 − 1/m); the others capped as Theorem 6's q is."""
    row = np.asarray(votes_row, dtype=float)
    top = int(np.argmax(row))
    gaps = np.delete(row[top] - row, top)
    cap = 1.0 - 1.0 / row.size
    union = float(np.sum(norm.sf(gaps / (math.sqrt(2) * sigma))))
    return {
        "sigma": min(float(np.sum(norm.sf(gaps / sigma))), cap),
        "with-top": min(union + 0.5, cap),
        "cdf": float(np.sum(norm.cdf(gaps / (math.sqrt(2) * sigma)))),
        "uncapped": union,
    }


def check_theorem6_q(answer, votes_row, sigma: float = 40.0, rtol: float = 0.01) -> Feedback:
    """Exercise 7. For one vote row n, what is Theorem 6's q, the bound on Pr[GNMax ≠ plurality j*]?
    q = min(Σ_{j≠j*} Φ̄((n_{j*} − n_j)/(√2σ)), 1 − 1/m) (Papernot et al. 2018, Prop. 7; m classes; the cap as in the
    paper's reference code). Computed by :func:`pate_study.privacy.gnmax_logq`; right within ``rtol``.

    Each typical slip (:func:`theorem6_slips`) gets its own hint: σ for √2σ, the plurality kept in the sum, Φ for Φ̄,
    the uncapped union bound on a split row; and on a row whose q is below the cap, an answer that only copies the
    cap 1 − 1/m is refused as such. The primer asks it on a row where σ and √2σ give different answers
    (:func:`pate_study.experiments.primer.theorem6_exercise_query`)."""
    name = "exercise 7 (Theorem 6's q)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    row = np.asarray(votes_row)
    if row.ndim != 1 or row.size < 2:
        return Feedback(name, False, f"votes_row: expected one row of vote counts (1-D), got shape {row.shape}")
    truth = float(np.exp(gnmax_logq(row[None, :], sigma))[0])
    cap = 1.0 - 1.0 / row.size
    rule = (
        f"q = min(Σ over the other classes j of Φ̄((n_max − n_j)/(√2 σ)), 1 − 1/m) with m = {row.size} classes; "
        "scipy.stats.norm.sf is Φ̄"
    )
    if math.isclose(value, truth, rel_tol=rtol):
        capped = f" (the union bound exceeds the cap 1 − 1/m = {cap:.4g})" if math.isclose(truth, cap) else ""
        return Feedback(
            name,
            True,
            f"q = {truth:.4g}{capped}: {'small enough' if truth < 0.1 else 'too large'} for "
            "the data-dependent bound to help (it needs q small, Thm 6's condition)",
        )
    slips = theorem6_slips(row, sigma)
    hints = {
        "sigma": "the two noisy counts n_j* + Z and n_j + Z' each carry N(0, σ²): their difference has standard "
        "deviation √2σ, not σ",
        "with-top": "the sum runs over the other classes j ≠ j*: the plurality cannot be beaten by itself",
        "cdf": "that sums Φ (norm.cdf): Pr[n_j + noise beats n_j*] is the upper tail Φ̄ = 1 − Φ (norm.sf)",
        "uncapped": f"{value:.4g} is above 1 − 1/m = {cap:.4g}: on a split row the union bound exceeds it, but the "
        "plurality wins with probability at least 1/m, so Theorem 6's q is capped at 1 − 1/m",
    }
    for slip, slipped in slips.items():
        if not math.isclose(slipped, truth, rel_tol=rtol) and math.isclose(value, slipped, rel_tol=rtol):
            return _wrong(name, hints[slip], rule)
    if math.isclose(value, cap, rel_tol=1e-3) and truth < cap * (1 - rtol):
        return _wrong(
            name,
            f"{value:.4g} is only the cap 1 − 1/m; on this row the union bound is below it: compute the sum",
            rule,
        )
    if value > cap:
        return _wrong(name, hints["uncapped"], rule)
    if value < 0:
        return _wrong(name, "q bounds a probability: it cannot be negative", rule)
    return _wrong(name, f"{value:.4g} is not the union bound for this row (σ = {sigma:g})", rule)


def check_expected_answered(
    answer,
    votes,
    threshold: float = 200.0,
    sigma1: float = 150.0,
    rtol: float = 0.05,
    name: str = "exercise 8 (expected answered)",
    sigma2: float = 40.0,
) -> Feedback:
    """Exercise 8. Confident GNMax answers a query when max_j n_j + N(0, σ1²) ≥ the threshold. How many of these
    ``votes``' queries does it answer on average? (Σ_i Pr[answered_i], Papernot et al. 2018 §4.2)

    Right within ``rtol`` (5 %) relative, so that a Monte Carlo estimate of 20 runs (standard error about 1 %)
    passes as well as the closed form. The typical slips get their own hints: the answer as a fraction of the
    queries or as a percentage, the clean count of maxima reaching the threshold, and the answer's noise ``sigma2``
    used in place of the check's σ1."""
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    counts = check_counts(votes, name="votes")  # one line naming votes for an empty or malformed matrix
    n = len(counts)
    top = counts.max(axis=1)
    truth = float(np.exp(threshold_logpr(top, threshold, sigma1)).sum())
    if math.isclose(value, truth, rel_tol=rtol):
        return Feedback(name, True, f"Σ Φ((max_j n_j − threshold)/σ1) = {truth:.2f} of {n} queries")
    rule = "Pr[answered_i] = Φ((max_j n_ij − threshold)/σ1); add them up over the queries"
    if math.isclose(value, truth / n, rel_tol=rtol):
        return _wrong(
            name,
            f"{value:g} looks like the fraction answered (the mean of Pr[answered]); the exercise asks for the "
            f"number of queries: multiply by the {n} queries (or sum instead of averaging)",
            rule,
        )
    if math.isclose(value, 100 * truth / n, rel_tol=rtol):
        return _wrong(
            name,
            f"{value:g} looks like a percentage of the queries; the exercise asks for the number of queries "
            f"answered on average (out of {n})",
            rule,
        )
    if value == int(value) and value == np.count_nonzero(top >= threshold):
        return _wrong(
            name,
            "that counts the queries whose clean maximum reaches the threshold; the check adds noise",
            "sum over queries the probability that the noisy maximum reaches it: Φ((max_j n_j − threshold)/σ1)",
        )
    if sigma2 != sigma1 and math.isclose(
        value, float(np.exp(threshold_logpr(top, threshold, sigma2)).sum()), rel_tol=rtol
    ):
        return _wrong(
            name,
            f"that uses σ2 = {sigma2:g}, the noise of the answer; the check's noise is σ1 = {sigma1:g}",
            rule,
        )
    return _wrong(name, f"{value:g} is more than {rtol:.0%} away; what is Pr[answered] for one query?", rule)


def gnmax_independent_epsilon(sigma: float, n_queries: int = 1000, delta: float = 1e-5) -> float:
    """ε of ``n_queries`` GNMax answers at noise σ, data-independent (α/σ² per answer, RDP composition, basic
    conversion on the 2018 order grid; Papernot et al. 2018, §4): ``privacy.gnmax_epsilon(...).epsilon`` without its
    :class:`~pate_study.privacy.OrderAtGridEdgeWarning`. Exercise 9 bisects on it, and a bracket such as (1, 1000)
    evaluates σ far from the answer, where the best order is the grid's edge: the value is still a guarantee (an
    upper bound over fewer orders), and the warning would only put pink boxes in the student's cell."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        return gnmax_epsilon(sigma=sigma, delta=delta, n_queries=n_queries).epsilon


def check_gnmax_sigma(
    answer, gamma: float = 0.05, n_queries: int = 1000, delta: float = 1e-5, rtol: float = 0.02
) -> Feedback:
    """Exercise 9. Which σ makes GNMax as private as LNMax at γ for ``n_queries`` answers, both data-independent?

    LNMax: the moments bound over continuous λ (:func:`lnmax_independent_epsilon`). GNMax: α/σ² per answer, RDP
    composition, basic conversion on the 2018 order grid (:func:`pate_study.privacy.gnmax_epsilon`). Right when the
    two ε agree within ``rtol``.
    """
    name = "exercise 9 (GNMax σ)"
    value = _number(answer, name, positive="σ is a standard deviation")
    if isinstance(value, Feedback):
        return value
    target = lnmax_independent_epsilon(n_queries, gamma, delta)
    got = gnmax_independent_epsilon(value, n_queries, delta)
    if math.isclose(got, target, rel_tol=rtol):
        return Feedback(name, True, f"GNMax σ = {value:g}: ε = {got:.3f}, LNMax γ = {gamma:g}: ε = {target:.3f}")
    direction = "more noise (larger σ)" if got > target else "less noise (smaller σ)"
    return _wrong(
        name,
        f"GNMax σ = {value:g} gives ε = {got:.3f} but LNMax gives {target:.3f}: try {direction}",
        "ε_GNMax(σ) decreases with σ: bisect (scipy.optimize.brentq) on "
        "exercises.gnmax_independent_epsilon(σ) − exercises.lnmax_independent_epsilon(Q, γ, δ)",
    )


UNANSWERED_CHOICES = {
    "a": "it does not: an unanswered query releases nothing",
    "b": "the decision to answer or not is itself computed from the private votes, with noise: it is a released output",
    "c": "the student learns the query was skipped and can retry it",
    "d": "the accountant charges every query the same to keep the code simple",
}


def check_unanswered_cost(choice) -> Feedback:
    """Exercise 10. Why does confident GNMax charge the noisy check on every query, answered or not?
    Pick one of :data:`UNANSWERED_CHOICES` (then write the one-line argument in the notebook)."""
    return _judge_choice(
        choice,
        "exercise 10 (unanswered queries)",
        UNANSWERED_CHOICES,
        "b",
        "'answered or not' is the output of a Gaussian mechanism on max_j n_j (sensitivity 1): it is charged its RDP "
        "α/(2σ1²), data-dependent via Papernot et al. 2018 Thm 10",
        {
            "a": "it releases one bit: whether max_j n_j + noise reached the threshold, which depends on the votes",
            "c": "retrying is not the reason; what matters is what the skip reveals about the votes",
            "d": "the charge is not a convenience: without it the printed ε would not be a guarantee",
        },
    )


RELEASE_CHOICES = {
    "a": "it is usually larger than the data-independent ε",
    "b": "it is computed from the private votes, so its value reveals something about them",
    "c": "it depends on the random noise of the aggregator",
    "d": "Rényi DP cannot be converted to (ε, δ)",
}


def check_release_reason(choice) -> Feedback:
    """Exercise 11. Why can a data-dependent ε not be published as it is? Pick one of :data:`RELEASE_CHOICES`."""
    return _judge_choice(
        choice,
        "exercise 11 (publishing ε)",
        RELEASE_CHOICES,
        "b",
        "ε_dep is a function of the votes, hence of the data: it is released with noise calibrated to its smooth "
        "sensitivity (Papernot et al. 2018 §4.3)",
        {
            "a": "on the same order grid it is never larger (it is often much smaller); that is not the problem",
            "c": "the accountant uses the clean votes, not the noisy ones: it is deterministic given the data",
            "d": "it can (Mironov 2017 Prop. 3); the problem is what its value reveals",
        },
    )


def check_local_rho(answer, epsilon: float = 1.0, normalising_changes_epsilon=None) -> Feedback:
    """Exercise 12. The student privatises each query x (‖x‖₁ = 1) as x + Lap(1/ρ)^d before it leaves. Which ρ makes
    that (ε, 0)-LDP? And (``normalising_changes_epsilon``, True or False): does re-normalising the noisy vector
    before sending it change ε?"""
    name = "exercise 12 (local DP)"
    value = _number(answer, name, positive="ρ is an inverse noise scale")
    if isinstance(value, Feedback):
        return value
    got = local_laplace_epsilon(rho=value)
    if not math.isclose(got, epsilon, rel_tol=1e-9):
        if math.isclose(value, epsilon, rel_tol=1e-9):
            return _wrong(
                name, "how far apart (in l1) can two unit-l1 vectors be?", "e₁ and e₂ are at l1 distance 2, so ε = 2ρ"
            )
        return _wrong(name, f"with ρ = {value:g} the mechanism is ({got:g}, 0)-DP, not ({epsilon:g}, 0)")
    if normalising_changes_epsilon is None:
        return Feedback(name, False, "ρ is right; now answer the second part (normalising_changes_epsilon=True/False)")
    changes = _boolean(normalising_changes_epsilon, name, "normalising_changes_epsilon")
    if isinstance(changes, Feedback):
        return changes
    if changes:
        return _wrong(
            name,
            "ρ is right; does normalising look at the data again, or only at the noisy output?",
            "a function of the noisy output alone is post-processing: it cannot increase ε",
        )
    return Feedback(name, True, f"ε = 2ρ → ρ = ε/2 = {value:g}; post-processing (normalising, a classifier) keeps ε")


def _flip_probability(gap: float, scale: float) -> float:
    """Pr[Lap(b) − Lap(b) > g] = (2 + g/b) e^{−g/b} / 4: the difference of two Laplace draws (closed form)."""
    x = gap / scale
    return (2.0 + x) * math.exp(-x) / 4.0


#: The rule exercise 13's aggregator follows, told from the second wrong try.
BUGGY_RULE = "rng.laplace(0.0, gamma, size=votes.shape) added to the votes, then np.argmax(..., axis=1)"


def check_buggy_aggregator(aggregator, gamma: float = 0.5, n: int = 200_000, seed: int = 0) -> Feedback:
    """Exercise 13, first part. Write ``aggregator(votes, gamma, rng) -> labels``: LNMax with the classic bug, Laplace
    scale γ instead of 1/γ. Tested by what it does: on ``n`` rows of votes [g, 0] it must release class 1 with
    probability (2 + g/b)e^{−g/b}/4 (closed form, b = γ), within five standard errors.

    Refused in one line each, never with a traceback: an untouched answer (it returns None: "no answer yet"), a call
    that raises (e.g. noise whose shape does not broadcast against the votes), labels of the wrong shape, one noise
    draw per query shared by the classes (the winner never changes), the scale in ``loc`` (``rng.laplace(gamma)``:
    scale 1), and the correct scale 1/γ."""
    name = "exercise 13 (the broken LNMax)"
    if not callable(aggregator):
        return Feedback(name, False, "aggregator must be a function (votes, gamma, rng) -> labels")
    g = 1
    votes = np.broadcast_to(np.array([g, 0]), (n, 2))
    try:
        labels = aggregator(votes, gamma, np.random.default_rng(seed))
    except Exception as err:  # the student's code: report in one line, do not crash the notebook
        return Feedback(
            name,
            False,
            f"calling it on votes of shape {votes.shape} raised {type(err).__name__}: {one_line(err)}; the noise "
            "needs one draw per vote count, size=votes.shape",
        )
    if labels is None:
        return Feedback(name, False, "no answer yet: the function returns None; return one label per row of votes")
    labels = np.asarray(labels)
    if labels.shape != (n,):
        return Feedback(
            name,
            False,
            f"it must return one label per row of votes, shape ({n},), got shape {labels.shape}: "
            "np.argmax(..., axis=1)",
        )
    flipped = float(np.mean(labels == 1))
    rates = {
        "buggy": _flip_probability(g, gamma),
        "correct": _flip_probability(g, 1.0 / gamma),
        "loc": _flip_probability(g, 1.0),
        "shared": 0.0,
    }
    matches = {k for k, p in rates.items() if abs(flipped - p) <= 5 * math.sqrt(max(p * (1 - p), 1 / n) / n)}
    if "buggy" in matches:
        return Feedback(name, True, f"on votes [{g}, 0] it flips {flipped:.4f} of labels, as scale γ = {gamma:g} does")
    hints = {
        "correct": f"it flips {flipped:.4f} of labels on votes [{g}, 0]: that is the correct scale 1/γ; "
        "the exercise wants the bug, scale γ",
        "loc": f"it flips {flipped:.4f} of labels, as scale 1 would: rng.laplace(gamma) puts γ in loc (the mean); "
        "the scale is the second argument",
        "shared": "the winner never changes: one noise draw per query added to every class shifts them all alike; "
        "draw one per vote count, size=votes.shape",
    }
    hint = next(
        (hints[k] for k in ("correct", "loc", "shared") if k in matches),
        f"on votes [{g}, 0] it flips {flipped:.4f} of labels, which matches neither scale; with scale γ = {gamma:g} "
        f"it would flip {rates['buggy']:.4f}",
    )
    return _wrong(name, hint, BUGGY_RULE)


def check_broken_laplace(
    aggregator: Callable, result, caught, gamma: float = 0.5, n_samples: int = 200_000, seed: int = 0
) -> Feedback:
    """Exercise 13, second part. Audit the buggy aggregator, ``result = privacy.audit_lnmax(0.5, aggregator=...)``,
    and report ``caught`` (True/False): does the audit's lower bound exceed the claimed ε = 2γ?

    The check first tests the aggregator (:func:`check_buggy_aggregator`), then that ``result`` is that audit's
    result (an :class:`~pate_study.privacy.AuditResult` for γ = 0.5) and that ``caught`` is what it says; finally it
    runs the audit itself.
    """
    name = "exercise 13 (audit the broken LNMax)"
    first = check_buggy_aggregator(aggregator, gamma=gamma, seed=seed)
    if not first:
        prefix = "" if first.message.startswith("no answer yet") else "first part not yet: "
        return Feedback(name, False, prefix + first.message)
    if result is None:
        return Feedback(name, False, "no answer yet: result is None; run the audit, privacy.audit_lnmax(...)")
    if not isinstance(result, AuditResult):
        return Feedback(
            name,
            False,
            f"result: expected what privacy.audit_lnmax({gamma:g}, aggregator=buggy) returns "
            f"(an AuditResult), got {type(result).__name__}: run the audit first",
        )
    if not math.isclose(result.claimed_epsilon, 2 * gamma) or result.mechanism != "lnmax (custom)":
        return Feedback(
            name,
            False,
            f"result audits {result.mechanism} at claimed ε = {result.claimed_epsilon:g}; "
            f"audit your aggregator at γ = {gamma:g} (claimed ε = {2 * gamma:g})",
        )
    answer = _boolean(caught, name, "caught")
    if isinstance(answer, Feedback):
        return answer
    if answer != result.violation:
        return _wrong(
            name,
            f"your audit's lower bound is {result.epsilon_lower:.3f} against the claimed "
            f"{result.claimed_epsilon:g}: caught should be {result.violation}",
        )
    own = audit_lnmax(gamma, aggregator=aggregator, n_samples=n_samples, seed=seed)
    if own.violation != answer:
        return _wrong(name, f"with seed {seed} the audit gives {own.epsilon_lower:.3f}: rerun yours with more samples")
    return Feedback(
        name,
        True,
        f"lower bound {result.epsilon_lower:.3f} > claimed ε = {result.claimed_epsilon:g}: the "
        "audit catches the bug (at γ = 1 it could not: γ = 1/γ)",
    )


# ----------------------------------------------------------------------------------------- second lab (07)


def check_lab2_answered(
    answer, votes, threshold: float = 200.0, sigma1: float = 150.0, sigma2: float = 40.0
) -> Feedback:
    """Task 1 of the second lab. On these votes, how many queries does confident GNMax answer on average?
    (The paper's Table 2 reports the number for its MNIST setting; compare after answering.) The same check, and
    the same hints for a fraction, a percentage, the clean count and σ2 for σ1, as exercise 8 of the primer."""
    return check_expected_answered(answer, votes, threshold, sigma1, name="task 1 (expected answered)", sigma2=sigma2)


def check_lab2_conversions(
    basic,
    improved,
    votes,
    threshold: float = 200.0,
    sigma1: float = 150.0,
    sigma2: float = 40.0,
    delta: float = 1e-5,
    rtol: float = 1e-4,
) -> Feedback:
    """Task 2. Confident GNMax's data-dependent ε on these votes, Papernot et al. 2018 Table 2's expected cost
    (``cost="expected"``, its ``expected_epsilon``: not a guarantee), with
    ``accounting=privacy.Accounting(conversion="basic")`` and with ``conversion="improved"``. Right within ``rtol``;
    the explanation of the gap is written."""
    name = "task 2 (two conversions)"
    values = [_number(v, name) for v in (basic, improved)]
    for v in values:
        if isinstance(v, Feedback):
            return v
    table = pate2018_lab.conversions(np.asarray(votes), threshold=threshold, sigma1=sigma1, sigma2=sigma2, delta=delta)
    truth = table[table["analysis"] == "data-dependent"].set_index("conversion")["epsilon"]
    wrong = [c for v, c in zip(values, ("basic", "improved")) if not math.isclose(v, truth[c], rel_tol=rtol)]
    if not wrong:
        return Feedback(
            name,
            True,
            f"basic {truth['basic']:.4f}, improved {truth['improved']:.4f}: now explain the "
            f"gap of {truth['basic'] - truth['improved']:.4f} below",
        )
    if math.isclose(values[0], truth["improved"], rel_tol=rtol) and math.isclose(
        values[1], truth["basic"], rel_tol=rtol
    ):
        return _wrong(name, "the two are swapped: which conversion can never give the larger ε?")
    independent = table[table["analysis"] == "data-independent"].set_index("conversion")["epsilon"]
    if all(math.isclose(v, independent[c], rel_tol=rtol) for v, c in zip(values, ("basic", "improved"))):
        return _wrong(
            name,
            "these are the data-independent ε (n_queries=): the task asks for the data-dependent ones, votes=votes",
        )
    return _wrong(
        name,
        f"the {' and '.join(wrong)} value is off; pass votes=, threshold=, sigma1=, sigma2=, delta=, "
        'accounting=privacy.Accounting(conversion=...) and cost="expected" to privacy.confident_gnmax_epsilon and read '
        ".expected_epsilon (Table 2's expected cost, not a guarantee)",
    )


def check_lab2_ratio(
    answer,
    votes,
    threshold: float = 200.0,
    sigma1: float = 150.0,
    sigma2: float = 40.0,
    delta: float = 1e-5,
    rtol: float = 0.01,
) -> Feedback:
    """Task 3. How many times smaller is confident GNMax's data-dependent ε (basic conversion; Table 2's expected
    cost, as in task 2) than its data-independent ε on the same number of queries? (ε_independent /
    expected ε_dependent, within ``rtol``.)"""
    name = "task 3 (data-dependent saving)"
    value = _number(answer, name, positive="a ratio of two ε")
    if isinstance(value, Feedback):
        return value
    table = pate2018_lab.conversions(np.asarray(votes), threshold=threshold, sigma1=sigma1, sigma2=sigma2, delta=delta)
    basic = table[table["conversion"] == "basic"].set_index("analysis")["epsilon"]
    truth = basic["data-independent"] / basic["data-dependent"]
    if math.isclose(value, truth, rel_tol=rtol):
        return Feedback(name, True, f"{basic['data-independent']:.3f} / {basic['data-dependent']:.3f} = {truth:.3f}")
    if math.isclose(value, 1 / truth, rel_tol=rtol):
        return _wrong(name, "that is the inverse: independent over dependent")
    improved = table[table["conversion"] == "improved"].set_index("analysis")["epsilon"]
    if math.isclose(value, improved["data-independent"] / improved["data-dependent"], rel_tol=rtol):
        return _wrong(name, "that is the ratio with the improved conversion; the task asks for the basic one")
    return _wrong(
        name,
        f"{value:g} is not ε_independent/ε_dependent here",
        "data-independent: n_queries=len(votes) instead of votes=",
    )


def check_lab2_q_fraction(
    answer, votes, sigma: float = 40.0, cutoff: float = 1e-3, atol: float = 1e-3, sigma1: float = 150.0
) -> Feedback:
    """Task 4. Which fraction of these queries has Theorem 6's q (GNMax, σ) below ``cutoff``? Within ``atol``.

    Typical slips with their own hints: a percentage, ln q (what ``privacy.gnmax_logq`` returns) compared with
    log₁₀ of the cut-off, and the check's noise ``sigma1`` used for the answer's σ."""
    name = "task 4 (nearly free queries)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    counts = np.asarray(votes)
    log_q = gnmax_logq(counts, sigma)
    truth = float(np.mean(log_q < math.log(cutoff)))
    if abs(value - truth) <= atol:
        return Feedback(
            name, True, f"{truth:.3f} of the queries have q < {cutoff:g}: their answers cost almost nothing"
        )
    rule = "np.mean(np.exp(privacy.gnmax_logq(votes, sigma2)) < q_cutoff)"
    if value > 1 and abs(value / 100 - truth) <= atol:
        return _wrong(name, f"{value:g} looks like a percentage; the task asks for a fraction in [0, 1]", rule)
    slips = {
        "privacy.gnmax_logq gives the natural logarithm ln q: compare it with np.log(q_cutoff), not log₁₀": float(
            np.mean(log_q < math.log10(cutoff))
        ),
        f"that uses σ1 = {sigma1:g}, the check's noise; the answer, whose q this is, has σ2 = {sigma:g}": float(
            np.mean(gnmax_logq(counts, sigma1) < math.log(cutoff))
        ),
    }
    for hint, slipped in slips.items():
        if abs(slipped - truth) > atol and abs(value - slipped) <= atol:
            return _wrong(name, hint, rule)
    if not 0 <= value <= 1:
        return Feedback(name, False, f"a fraction: expected a number in [0, 1], got {value:g}")
    return _wrong(name, f"{value:.3f} is not the fraction with q < {cutoff:g}", rule)


def check_lab2_half_threshold(
    answer, votes, sigma1: float = 150.0, rtol: float = 0.01, sigma2: float = 40.0
) -> Feedback:
    """Task 5. At which threshold T does confident GNMax answer half of these queries on average? (Σ Pr[answered]
    decreases with T: the root of expected_answered(T) − n/2, within ``rtol``.) The answer's noise ``sigma2`` used
    for the check's σ1 gets its own hint."""
    name = "task 5 (threshold for half)"
    value = _number(answer, name)
    if isinstance(value, Feedback):
        return value
    counts = np.asarray(votes)
    half = len(counts) / 2

    def excess(t: float) -> float:
        return pate2018_lab.expected_answered(counts, threshold=t, sigma1=sigma1) - half

    top = float(counts.max(axis=1).max())
    truth = brentq(excess, -10 * sigma1, top + 10 * sigma1)
    if math.isclose(value, truth, rel_tol=rtol):
        return Feedback(name, True, f"T = {truth:.1f}: half of {len(counts)} queries answered on average")
    rule = "bisect (scipy.optimize.brentq) on expected_answered(T) − n/2, with σ1"
    if sigma2 != sigma1:
        with_sigma2 = brentq(
            lambda t: pate2018_lab.expected_answered(counts, threshold=t, sigma1=sigma2) - half,
            -10 * sigma2,
            top + 10 * sigma2,
        )
        if math.isclose(value, with_sigma2, rel_tol=rtol) and not math.isclose(with_sigma2, truth, rel_tol=rtol):
            return _wrong(
                name, f"that uses σ2 = {sigma2:g}, the answer's noise; the check that decides has σ1 = {sigma1:g}", rule
            )
    more = excess(value) > 0
    return _wrong(
        name,
        f"at T = {value:g} about {excess(value) + half:.0f} are answered: {'raise' if more else 'lower'} the threshold",
        rule,
    )
