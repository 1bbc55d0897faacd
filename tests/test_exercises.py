"""The primer's exercise checks: the instructors' solutions pass, wrong answers are rejected with a reason."""
import importlib.util

import numpy as np
import pytest

from pate_study import exercises as ex
from pate_study.paths import REPO_ROOT


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


CHECKS = [("1", ex.check_sensitivity), ("2", ex.check_lnmax_epsilon), ("3", ex.check_queries_for_budget),
          ("4", ex.check_local_rho), ("6", ex.check_gnmax_sigma), ("8", ex.check_release_reason)]


@pytest.mark.parametrize("number, check", CHECKS)
def test_solution_passes_its_check(solutions, number, check):
    feedback = check(**getattr(solutions, f"solve_{number}")())
    assert feedback.correct, str(feedback)
    assert "right" in str(feedback)


def test_solution_5_passes_and_depends_on_the_votes(solutions, votes):
    assert ex.check_expected_answered(**solutions.solve_5(votes)).correct
    other = solutions.solve_5(votes[:100])["answer"]
    assert not ex.check_expected_answered(other, votes).correct


def test_solution_7_passes_and_the_correct_lnmax_is_rejected(solutions):
    feedback = ex.check_broken_laplace(**solutions.solve_7())
    assert feedback.correct, str(feedback)

    def correct_lnmax(v, gamma, rng):
        return np.argmax(np.asarray(v, float) + rng.laplace(0.0, 1.0 / gamma, size=np.shape(v)), axis=1)

    wrong = ex.check_broken_laplace(correct_lnmax, caught=False)
    assert not wrong.correct and "correct scale 1/γ" in wrong.message
    lied = ex.check_broken_laplace(solutions.buggy_lnmax, caught=False)
    assert not lied.correct and "caught should be True" in lied.message


@pytest.mark.parametrize("check, wrong, why", [
    (ex.check_sensitivity, 1, "add both changes"),
    (ex.check_lnmax_epsilon, 0.1, "Δ = 1"),
    (ex.check_lnmax_epsilon, 20, "inverse scale"),
    (ex.check_queries_for_budget, 10**6, "exceeds the budget"),
    (ex.check_queries_for_budget, 10, "can answer more"),
    (ex.check_queries_for_budget, 2.5, "whole number"),
    (ex.check_local_rho, 1.0, "ε = 2ρ"),
    (ex.check_local_rho, -0.5, "inverse noise scale"),
    (ex.check_gnmax_sigma, 5.0, "more noise"),
    (ex.check_gnmax_sigma, 500.0, "less noise"),
    (ex.check_release_reason, "a", "never larger"),
    (ex.check_release_reason, "z", "pick one of"),
    (ex.check_sensitivity, "two", "expected a number"),
])
def test_wrong_answers_are_rejected_with_a_reason(check, wrong, why):
    feedback = check(wrong)
    assert not feedback.correct
    assert why in feedback.message
    assert "not yet" in str(feedback)


def test_post_processing_part_is_checked(solutions):
    right = solutions.solve_4()
    assert not ex.check_local_rho(right["answer"], normalising_changes_epsilon=True).correct
    assert not ex.check_local_rho(right["answer"]).correct  # second part unanswered


def test_checks_follow_their_parameters(solutions):
    """A check computes its answer: other parameters, other right answers."""
    for gamma in (0.02, 0.3):
        assert ex.check_lnmax_epsilon(**solutions.solve_2(gamma)).correct
    assert ex.check_queries_for_budget(**solutions.solve_3(epsilon_budget=5.0)).correct
    assert not ex.check_queries_for_budget(solutions.solve_3(epsilon_budget=5.0)["answer"]).correct
    assert ex.check_gnmax_sigma(**solutions.solve_6(n_queries=300)).correct
