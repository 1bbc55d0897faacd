"""The primer's exercise checks: the instructors' solutions pass, wrong answers are rejected with a reason."""

import importlib.util

import numpy as np
import pytest

from pate_study.core.paths import REPO_ROOT
from pate_study.tooling import exercises as ex


@pytest.fixture(scope="module")
def solutions():
    spec = importlib.util.spec_from_file_location("primer_solutions", REPO_ROOT / "instructors" / "primer_solutions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def votes():
    rng = np.random.default_rng(3)
    return np.stack([rng.multinomial(250, p) for p in rng.dirichlet(np.full(10, 0.2), size=200)])


@pytest.fixture(autouse=True)
def fresh_attempts():
    ex.reset_attempts()
    yield
    ex.reset_attempts()


CHECKS = [
    ("1", ex.check_sensitivity),
    ("2", ex.check_lnmax_epsilon),
    ("3", ex.check_gaussian_sigma),
    ("4", ex.check_queries_for_budget),
    ("5", ex.check_rdp_conversion),
    ("6", ex.check_gnmax_rdp),
    ("9", ex.check_gnmax_sigma),
    ("10", ex.check_unanswered_cost),
    ("11", ex.check_release_reason),
    ("12", ex.check_local_rho),
]


@pytest.mark.parametrize("number, check", CHECKS)
def test_solution_passes_its_check(solutions, number, check):
    feedback = check(**getattr(solutions, f"solve_{number}")())
    assert feedback.correct, str(feedback)
    assert "right" in str(feedback)


def test_exercise_numbers_follow_the_notebook_order():
    """The notebook shows the checks in the order of their numbers (1, 2, ..., 13), each once."""
    import json
    import re

    nb = json.loads((REPO_ROOT / "notebooks" / "00_dp_primer.ipynb").read_text())
    calls = [
        m
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for m in re.findall(r"exercises\.(check_\w+)\(", "".join(c["source"]))
    ]
    numbers = [int(re.search(r"Exercise (\d+)\.", getattr(ex, call).__doc__).group(1)) for call in calls]
    assert numbers == list(range(1, 14))


def test_solution_7_uses_a_vote_row(solutions, votes):
    row = votes[int(np.argmin(votes.max(axis=1)))]
    assert ex.check_theorem6_q(**solutions.solve_7(row)).correct
    assert not ex.check_theorem6_q(solutions.solve_7(row)["answer"] * 1.5, row).correct
    assert not ex.check_theorem6_q(0.01, row[None, :]).correct  # a matrix is not a row


def test_solution_8_passes_its_monte_carlo_too_and_depends_on_the_votes(solutions, votes):
    assert ex.check_expected_answered(**solutions.solve_8(votes)).correct
    assert ex.check_expected_answered(solutions.solve_8_monte_carlo(votes, runs=20), votes).correct
    other = solutions.solve_8(votes[:100])["answer"]
    assert not ex.check_expected_answered(other, votes).correct


def test_solution_13_passes_and_shortcuts_fail(solutions):
    solved = solutions.solve_13()
    feedback = ex.check_broken_laplace(**solved)
    assert feedback.correct, str(feedback)

    def correct_lnmax(v, gamma, rng):
        return np.argmax(np.asarray(v, float) + rng.laplace(0.0, 1.0 / gamma, size=np.shape(v)), axis=1)

    wrong = ex.check_broken_laplace(correct_lnmax, solved["result"], caught=False)
    assert not wrong.correct and "correct scale 1/γ" in wrong.message
    no_audit = ex.check_broken_laplace(solutions.buggy_lnmax, None, caught=True)
    assert not no_audit.correct and "run the audit" in no_audit.message
    as_text = ex.check_broken_laplace(solutions.buggy_lnmax, solved["result"], caught="yes")
    assert not as_text.correct and "True or False" in as_text.message
    lied = ex.check_broken_laplace(solutions.buggy_lnmax, solved["result"], caught=False)
    assert not lied.correct and "caught should be True" in lied.message


@pytest.mark.parametrize(
    "check, wrong, why",
    [
        (ex.check_sensitivity, 1, "how many counts change"),
        (ex.check_lnmax_epsilon, 0.1, "exercise 1"),
        (ex.check_lnmax_epsilon, 20, "inverse scale"),
        (ex.check_gaussian_sigma, 1.0, "too small"),
        (ex.check_queries_for_budget, 10**6, "exceeds the budget"),
        (ex.check_queries_for_budget, 10, "can answer more"),
        (ex.check_queries_for_budget, 2.5, "whole number"),
        (ex.check_local_rho, 1.0, "how far apart"),
        (ex.check_local_rho, -0.5, "inverse noise scale"),
        (ex.check_gnmax_sigma, 5.0, "more noise"),
        (ex.check_gnmax_sigma, 500.0, "less noise"),
        (ex.check_release_reason, "a", "never larger"),
        (ex.check_release_reason, "z", "expected one of"),
        (ex.check_unanswered_cost, "a", "one bit"),
        (ex.check_sensitivity, "two", "expected a number"),
        (ex.check_sensitivity, True, "expected a number"),
        (ex.check_sensitivity, None, "no answer yet"),
    ],
)
def test_wrong_answers_are_rejected_with_a_reason(check, wrong, why):
    feedback = check(wrong)
    assert not feedback.correct
    assert why in feedback.message
    assert "not yet" in str(feedback)


def test_first_feedback_hints_then_tells():
    first = ex.check_lnmax_epsilon(0.1, gamma=0.1)
    assert "Δ = 2" not in first.message and "exercise 1" in first.message
    second = ex.check_lnmax_epsilon(0.1, gamma=0.1)
    assert "Δ = 2" in second.message
    first_8 = ex.check_expected_answered(1.0, np.full((5, 2), 125))
    assert "Φ(" not in first_8.message


def test_conversion_and_gnmax_rdp_parts_are_checked_separately(solutions):
    right = solutions.solve_5()
    assert not ex.check_rdp_conversion(right["basic"], right["basic"]).correct  # improved left as basic
    assert "improved" in ex.check_rdp_conversion(right["basic"], right["basic"]).message
    assert not ex.check_rdp_conversion(right["improved"], right["improved"]).correct
    assert right["improved"] < right["basic"]
    assert "l2 norm" in ex.check_gnmax_rdp(2.0, 8 / 1600).message
    assert not ex.check_gnmax_rdp(np.sqrt(2), 8 / 3200).correct


def test_post_processing_part_is_checked(solutions):
    right = solutions.solve_12()
    assert not ex.check_local_rho(right["answer"], normalising_changes_epsilon=True).correct
    assert not ex.check_local_rho(right["answer"]).correct  # second part unanswered
    no = ex.check_local_rho(right["answer"], normalising_changes_epsilon="no")
    assert not no.correct and "True or False" in no.message


def test_checks_follow_their_parameters(solutions):
    """A check computes its answer: other parameters, other right answers."""
    for gamma in (0.02, 0.3):
        assert ex.check_lnmax_epsilon(**solutions.solve_2(gamma)).correct
    assert ex.check_queries_for_budget(**solutions.solve_4(epsilon_budget=5.0)).correct
    assert not ex.check_queries_for_budget(solutions.solve_4(epsilon_budget=5.0)["answer"]).correct
    assert ex.check_gnmax_sigma(**solutions.solve_9(n_queries=300)).correct
    assert ex.check_gaussian_sigma(**solutions.solve_3(epsilon=0.2, delta=1e-6)).correct
    assert ex.check_rdp_conversion(**solutions.solve_5(rdp=3.0, order=8.0, delta=1e-6)).correct


def test_explanations_exist_for_the_explain_exercises(solutions):
    assert set(solutions.EXPLANATIONS) == {6, 10}


# --------------------------------------------------------------------------------- what a student meets
LEAST_UNANIMOUS = np.array([4, 35, 14, 24, 43, 23, 7, 32, 25, 43])  # the primer's row on the 9,000 real MNIST rows


def test_exercise_7_names_the_cap_when_the_union_bound_exceeds_it():
    """On a split row Σ Φ̄(…) is 3.28; Theorem 6's q is capped at 1 − 1/m = 0.9, and the hint says so."""
    from scipy.stats import norm

    top = LEAST_UNANIMOUS.argmax()
    union = sum(
        norm.sf((LEAST_UNANIMOUS[top] - n) / (np.sqrt(2) * 40)) for j, n in enumerate(LEAST_UNANIMOUS) if j != top
    )
    assert union > 3
    first = ex.check_theorem6_q(union, LEAST_UNANIMOUS)
    assert not first.correct and "capped at 1 − 1/m" in first.message
    assert "min(" in ex.check_theorem6_q(union, LEAST_UNANIMOUS).message  # the rule on the second try
    right = ex.check_theorem6_q(0.9, LEAST_UNANIMOUS)
    assert right.correct and "cap 1 − 1/m = 0.9" in right.message


def test_exercise_5_accepts_the_two_decimals_it_asks_for():
    assert ex.check_rdp_conversion(13.11, 12.90).correct  # 13.1059 and 12.8968 rounded as asked
    assert not ex.check_rdp_conversion(13.12, 12.90).correct
    assert "2 decimals" in ex.check_rdp_conversion(13.1, 12.9).message


def test_exercise_3_rejects_ln_one_over_delta_and_accepts_two_decimals():
    import math

    slip = math.sqrt(2 * math.log(1e5)) / 0.5  # 9.597: 1 % off, once accepted
    feedback = ex.check_gaussian_sigma(slip)
    assert not feedback.correct and "ln(1/δ)" in feedback.message
    assert ex.check_gaussian_sigma(9.69).correct and "1.25/δ" in ex.check_gaussian_sigma(9.69).message
    assert "2 decimals" in ex.check_gaussian_sigma(9.7).message


def test_hint_and_rule_read_as_two_sentences():
    for answer in (1.0, 1.0):
        feedback = ex.check_local_rho(answer, epsilon=1.0)
    assert "be? The rule: e₁" in feedback.message and "?." not in feedback.message
    for answer in (0.1, 0.1):
        feedback = ex.check_lnmax_epsilon(answer, gamma=0.1)
    assert "exercise 1. The rule: that is" in feedback.message


def test_a_natural_bisection_for_exercise_9_raises_no_warning():
    import warnings

    from scipy.optimize import brentq

    target = ex.lnmax_independent_epsilon(1000, 0.05, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sigma = brentq(lambda s: ex.gnmax_independent_epsilon(s, 1000, 1e-5) - target, 1.0, 1000.0)
        assert ex.check_gnmax_sigma(sigma).correct


def test_verdicts_are_words_not_only_symbols():
    """Where no emoji font is installed the marks render as empty boxes: the words must carry the verdict."""
    assert "**right**" in ex.check_lnmax_epsilon(0.2)._repr_markdown_()
    assert "**not yet**" in ex.check_lnmax_epsilon(0.3)._repr_markdown_()


def test_lab2_data_independent_values_get_a_hint_naming_votes(votes):
    from pate_study.experiments import pate2018_lab

    table = pate2018_lab.conversions(votes, threshold=200.0, sigma1=150.0, sigma2=40.0, delta=1e-5)
    independent = table[table["analysis"] == "data-independent"].set_index("conversion")["epsilon"]
    feedback = ex.check_lab2_conversions(independent["basic"], independent["improved"], votes)
    assert not feedback.correct and "votes=votes" in feedback.message


def test_an_absurd_number_of_queries_is_shown_in_a_few_characters_not_300_digits():
    feedback = ex.check_queries_for_budget(1e300)
    assert not feedback.correct and "ε(1e+300)" in feedback.message
    assert max(len(word) for word in feedback.message.split()) < 40, feedback.message


def test_empty_votes_for_exercise_8_are_refused_in_one_line_naming_votes():
    for empty in ([], np.zeros((0, 10))):
        with pytest.raises(ValueError, match=r"^votes: expected a non-empty array") as err:
            ex.check_expected_answered(1.0, empty)
        assert "\n" not in str(err.value) and "check_values" not in str(err.value)


def test_lab2_hint_names_the_expected_cost_not_epsilon(votes):
    feedback = ex.check_lab2_conversions(1.0, 0.5, votes)
    assert not feedback.correct and 'cost="expected"' in feedback.message and ".expected_epsilon" in feedback.message
