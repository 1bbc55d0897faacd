"""The primer's exercise checks: the instructors' solutions pass, wrong answers are rejected with a reason."""

import importlib.util

import numpy as np
import pytest

from pate_study.core.paths import REPO_ROOT
from pate_study.tooling import exercises as ex
from pate_study.tooling.notebook_runner.manifest import load_manifest


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
    numbers = [int(re.search(r"Exercise (\d+)[.,]", getattr(ex, call).__doc__).group(1)) for call in calls]
    assert [n for i, n in enumerate(numbers) if i == 0 or n != numbers[i - 1]] == list(range(1, 14))
    assert numbers.count(13) == 2  # exercise 13 in two parts: the aggregator, then its audit


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


# ------------------------------------------------------------------------ every typical mistake has its own hint
MISTAKES_FILE = REPO_ROOT / "instructors" / "mistakes.md"


@pytest.fixture(scope="module")
def lab_votes():
    """640 rows of the synthetic stand-in's MNIST votes (250 teachers, mostly confident): the lab's shape."""
    from pate_study.data import pate2018

    return pate2018.synthetic(seed=0, scale=0.08)["mnist"][:640]


def _aggregator(noise):
    """An LNMax-like aggregator adding ``noise(rng, gamma, votes)`` to the votes, then the argmax per row."""

    def aggregator(votes, gamma, rng):
        counts = np.asarray(votes, dtype=float)
        return np.argmax(counts + noise(rng, gamma, counts), axis=1)

    return aggregator


def _q_sums(row, sigma=40.0):
    """The union bound's pieces for exercise 7's slips: gaps to the plurality, without it."""
    from scipy.stats import norm

    top = int(np.argmax(row))
    gaps = np.delete(row[top] - row, top).astype(float)
    return norm, gaps, 1 - 1 / len(row)


def _conversions(votes):
    from pate_study.experiments import pate2018_lab

    table = pate2018_lab.conversions(votes, threshold=200.0, sigma1=150.0, sigma2=40.0, delta=1e-5)
    return {(r.analysis, r.conversion): r.epsilon for r in table.itertuples()}


def _mistake_cases(solutions, lab_votes):
    """``{id: (exercise, check, kwargs, words of its hint)}`` for every row of instructors/mistakes.md."""
    from scipy.stats import norm

    from pate_study.experiments import primer
    from pate_study.privacy import audit_lnmax, gnmax_logq

    right5 = solutions.solve_5()
    slips5 = ex.conversion_slips(12.5, 20.0, 1e-5)
    row7 = lab_votes[primer.theorem6_exercise_query(lab_votes, sigma=40.0)]
    _, gaps, cap = _q_sums(row7)
    union = float(np.sum(norm.sf(gaps / (np.sqrt(2) * 40))))
    top8 = lab_votes.max(axis=1)
    expected8 = float(norm.cdf((top8 - 200) / 150).sum())
    buggy = solutions.buggy_lnmax
    solved13 = solutions.solve_13()
    conv = _conversions(lab_votes)
    logq = gnmax_logq(lab_votes, 40.0)
    e8 = dict(votes=lab_votes, threshold=200.0, sigma1=150.0)
    return {
        "1-records": (1, ex.check_sensitivity, dict(answer=1), "how many counts change"),
        "2-delta-one": (2, ex.check_lnmax_epsilon, dict(answer=0.1, gamma=0.1), "which Δ did you use"),
        "2-scale": (2, ex.check_lnmax_epsilon, dict(answer=20, gamma=0.1), "inverse scale"),
        "3-variance": (3, ex.check_gaussian_sigma, dict(answer=solutions.solve_3()["answer"] ** 2), "variance"),
        "3-ln-1-over-delta": (3, ex.check_gaussian_sigma, dict(answer=np.sqrt(2 * np.log(1e5)) / 0.5), "ln(1/δ)"),
        "3-precision": (3, ex.check_gaussian_sigma, dict(answer=9.7), "to 2 decimals"),
        "4-basic": (4, ex.check_queries_for_budget, dict(answer=100), "basic composition allows"),
        "4-integer-grid": (4, ex.check_queries_for_budget, dict(answer=308), "integer orders"),
        "4-rounded-up": (4, ex.check_queries_for_budget, dict(answer=311), "exceeds the budget"),
        "4-not-whole": (4, ex.check_queries_for_budget, dict(answer=310.5), "whole number"),
        "5-log10": (
            5,
            ex.check_rdp_conversion,
            dict(basic=slips5["basic"]["log10"], improved=right5["improved"]),
            "log₁₀",
        ),
        "5-sign": (
            5,
            ex.check_rdp_conversion,
            dict(basic=slips5["basic"]["sign"], improved=right5["improved"]),
            "sign of the δ term",
        ),
        "5-delta": (5, ex.check_rdp_conversion, dict(basic=12.5, improved=right5["improved"]), "δ term is missing"),
        "5-alpha": (
            5,
            ex.check_rdp_conversion,
            dict(basic=slips5["basic"]["alpha"], improved=right5["improved"]),
            "not by α",
        ),
        "5-improved-as-basic": (
            5,
            ex.check_rdp_conversion,
            dict(basic=right5["basic"], improved=right5["basic"]),
            "the basic conversion's value",
        ),
        "5-no-log-factor": (
            5,
            ex.check_rdp_conversion,
            dict(basic=right5["basic"], improved=slips5["improved"]["no-ln(1-1/alpha)"]),
            "ln(1 − 1/α) (negative) is missing",
        ),
        "5-improved-log10": (
            5,
            ex.check_rdp_conversion,
            dict(basic=right5["basic"], improved=slips5["improved"]["log10"]),
            "log₁₀",
        ),
        "5-swapped": (5, ex.check_rdp_conversion, dict(basic=right5["improved"], improved=right5["basic"]), "swapped"),
        "6-l1": (6, ex.check_gnmax_rdp, dict(l2_sensitivity=2.0, rdp_at_order=8 / 1600), "l2 norm takes a square root"),
        "6-one": (6, ex.check_gnmax_rdp, dict(l2_sensitivity=1.0, rdp_at_order=8 / 1600), "two counts change"),
        "6-unsquared": (
            6,
            ex.check_gnmax_rdp,
            dict(l2_sensitivity=np.sqrt(2), rdp_at_order=8 / 3200),
            "the RDP of Δ₂ = 1",
        ),
        "6-four": (6, ex.check_gnmax_rdp, dict(l2_sensitivity=np.sqrt(2), rdp_at_order=16 / 1600), "not 4"),
        "7-sigma": (
            7,
            ex.check_theorem6_q,
            dict(answer=min(float(np.sum(norm.sf(gaps / 40))), cap), votes_row=row7),
            "√2σ, not σ",
        ),
        "7-with-top": (7, ex.check_theorem6_q, dict(answer=min(union + 0.5, cap), votes_row=row7), "j ≠ j*"),
        "7-cdf": (
            7,
            ex.check_theorem6_q,
            dict(answer=float(np.sum(norm.cdf(gaps / (np.sqrt(2) * 40)))), votes_row=row7),
            "upper tail",
        ),
        "7-cap-copy": (7, ex.check_theorem6_q, dict(answer=0.9, votes_row=row7), "only the cap"),
        "7-uncapped": (7, ex.check_theorem6_q, dict(answer=3.28, votes_row=LEAST_UNANIMOUS), "capped at 1 − 1/m"),
        "8-fraction": (8, ex.check_expected_answered, dict(answer=expected8 / 640, **e8), "fraction answered"),
        "8-percentage": (8, ex.check_expected_answered, dict(answer=100 * expected8 / 640, **e8), "percentage"),
        "8-clean": (8, ex.check_expected_answered, dict(answer=int((top8 >= 200).sum()), **e8), "clean maximum"),
        "8-sigma2": (
            8,
            ex.check_expected_answered,
            dict(answer=float(norm.cdf((top8 - 200) / 40).sum()), **e8),
            "σ2 = 40",
        ),
        "10-a": (10, ex.check_unanswered_cost, dict(choice="a"), "one bit"),
        "10-c": (10, ex.check_unanswered_cost, dict(choice="c"), "retrying is not the reason"),
        "10-d": (10, ex.check_unanswered_cost, dict(choice="d"), "not a convenience"),
        "11-a": (11, ex.check_release_reason, dict(choice="a"), "never larger"),
        "11-c": (11, ex.check_release_reason, dict(choice="c"), "clean votes"),
        "11-d": (11, ex.check_release_reason, dict(choice="d"), "it can"),
        "12-delta-one": (12, ex.check_local_rho, dict(answer=1.0), "how far apart"),
        "12-normalising": (
            12,
            ex.check_local_rho,
            dict(answer=0.5, normalising_changes_epsilon=True),
            "look at the data again",
        ),
        "12-string": (12, ex.check_local_rho, dict(answer=0.5, normalising_changes_epsilon="no"), "True or False"),
        "13-correct-scale": (
            13,
            ex.check_buggy_aggregator,
            dict(aggregator=_aggregator(lambda r, g, v: r.laplace(0.0, 1 / g, v.shape))),
            "correct scale 1/γ",
        ),
        "13-loc": (
            13,
            ex.check_buggy_aggregator,
            dict(aggregator=_aggregator(lambda r, g, v: r.laplace(g, size=v.shape))),
            "puts γ in loc",
        ),
        "13-shared-noise": (
            13,
            ex.check_buggy_aggregator,
            dict(aggregator=_aggregator(lambda r, g, v: r.laplace(0.0, g, (len(v), 1)))),
            "one noise draw per query",
        ),
        "13-noise-shape": (
            13,
            ex.check_buggy_aggregator,
            dict(aggregator=_aggregator(lambda r, g, v: r.laplace(0.0, g, len(v)))),
            "raised ValueError",
        ),
        "13-no-axis": (
            13,
            ex.check_buggy_aggregator,
            dict(aggregator=lambda v, g, r: np.argmax(v + r.laplace(0.0, g, np.shape(v)))),
            "np.argmax(..., axis=1)",
        ),
        "13-no-audit": (13, ex.check_broken_laplace, dict(aggregator=buggy, result=None, caught=True), "run the audit"),
        "13-gamma-one": (
            13,
            ex.check_broken_laplace,
            dict(aggregator=buggy, result=audit_lnmax(1.0, aggregator=buggy, n_samples=20_000), caught=True),
            "audit your aggregator at γ = 0.5",
        ),
        "13-caught-wrong": (
            13,
            ex.check_broken_laplace,
            dict(aggregator=buggy, result=solved13["result"], caught=False),
            "caught should be True",
        ),
        "t1-fraction": (
            "t1",
            ex.check_lab2_answered,
            dict(answer=expected8 / 640, votes=lab_votes),
            "fraction answered",
        ),
        "t1-percentage": (
            "t1",
            ex.check_lab2_answered,
            dict(answer=100 * expected8 / 640, votes=lab_votes),
            "percentage",
        ),
        "t1-sigma2": (
            "t1",
            ex.check_lab2_answered,
            dict(answer=float(norm.cdf((top8 - 200) / 40).sum()), votes=lab_votes),
            "σ2 = 40",
        ),
        "t2-swapped": (
            "t2",
            ex.check_lab2_conversions,
            dict(basic=conv["data-dependent", "improved"], improved=conv["data-dependent", "basic"], votes=lab_votes),
            "swapped",
        ),
        "t2-independent": (
            "t2",
            ex.check_lab2_conversions,
            dict(
                basic=conv["data-independent", "basic"], improved=conv["data-independent", "improved"], votes=lab_votes
            ),
            "data-independent",
        ),
        "t3-inverse": (
            "t3",
            ex.check_lab2_ratio,
            dict(answer=conv["data-dependent", "basic"] / conv["data-independent", "basic"], votes=lab_votes),
            "the inverse",
        ),
        "t3-improved": (
            "t3",
            ex.check_lab2_ratio,
            dict(answer=conv["data-independent", "improved"] / conv["data-dependent", "improved"], votes=lab_votes),
            "improved conversion",
        ),
        "t4-percentage": (
            "t4",
            ex.check_lab2_q_fraction,
            dict(answer=100 * float(np.mean(logq < np.log(1e-3))), votes=lab_votes),
            "percentage",
        ),
        "t4-log10": (
            "t4",
            ex.check_lab2_q_fraction,
            dict(answer=float(np.mean(logq < np.log10(1e-3))), votes=lab_votes),
            "natural logarithm",
        ),
        "t4-sigma1": (
            "t4",
            ex.check_lab2_q_fraction,
            dict(answer=float(np.mean(gnmax_logq(lab_votes, 150.0) < np.log(1e-3))), votes=lab_votes),
            "σ1 = 150",
        ),
    }


@pytest.fixture(scope="module")
def mistake_cases(solutions, lab_votes):
    return _mistake_cases(solutions, lab_votes)


def _table_ids(path=MISTAKES_FILE) -> list[str]:
    import re

    return re.findall(r"^\| ([0-9t][\w.()-]*) \|", path.read_text(encoding="utf-8"), re.M)


def test_the_guide_lists_exactly_the_mistakes_tested_here(mistake_cases):
    ids = _table_ids()
    assert len(ids) == len(set(ids)), "an id twice in instructors/mistakes.md"
    assert set(ids) == set(mistake_cases)


def test_every_typical_mistake_gets_its_own_hint(mistake_cases):
    """Each mistake of instructors/mistakes.md is refused with its hint, and with no other mistake's hint of the same
    exercise: the checks tell the typical mistakes apart."""
    messages = {}
    for key, (exercise, check, kwargs, words) in mistake_cases.items():
        ex.reset_attempts()
        feedback = check(**kwargs)
        assert not feedback.correct, (key, str(feedback))
        assert words in feedback.message, (key, feedback.message)
        assert "\n" not in feedback.message, key
        messages[key] = (exercise, words, feedback.message)
    for key, (exercise, words, _) in messages.items():
        others = [k for k, (e, _, m) in messages.items() if e == exercise and k != key and words in m]
        same_words = [k for k in others if messages[k][1] == words]  # one hint for two spellings of one slip
        assert others == same_words, (key, others)


def test_exercise_5_names_which_value_is_wrong(solutions):
    right = solutions.solve_5()
    slips = ex.conversion_slips(12.5, 20.0, 1e-5)
    one = ex.check_rdp_conversion(slips["basic"]["log10"], right["improved"]).message
    assert one.startswith("basic 12.76") and "improved is right" in one
    other = ex.check_rdp_conversion(right["basic"], slips["improved"]["delta"]).message
    assert other.startswith("basic is right") and "improved" in other and "δ term is missing" in other
    both = ex.check_rdp_conversion(slips["basic"]["sign"], slips["improved"]["log10"]).message
    assert "basic" in both and "sign" in both and "improved" in both and "log₁₀" in both
    slip_values = [v for c in slips.values() for v in c.values()]
    assert min(abs(a - b) for i, a in enumerate(slip_values) for b in slip_values[i + 1 :] if a != b) > 0.01


def test_exercise_7_row_tells_sigma_from_root_two_sigma_and_refuses_the_cap(lab_votes):
    from pate_study.experiments import primer
    from pate_study.privacy import gnmax_logq

    row = lab_votes[primer.theorem6_exercise_query(lab_votes, sigma=40.0)]
    q = float(np.exp(gnmax_logq(row[None, :], 40.0))[0])
    assert 0.01 < q < 0.5 and not ex.check_theorem6_q(0.9, row).correct
    slips = ex.theorem6_slips(row, 40.0)
    assert abs(slips["sigma"] - q) > 0.5 * q, "σ and √2σ must give clearly different answers on this row"
    assert ex.check_theorem6_q(q, row).correct


# --------------------------------------------------------------------------- untouched cells say "no answer yet"
def _exercise_cells(stem):
    import json

    nb = json.loads((REPO_ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["00_dp_primer", "07_pate2018_lab"])
def test_every_untouched_exercise_cell_says_no_answer_yet(stem):
    """Each exercise cell as committed (answers None, the function returning None), run after the cells it needs:
    its feedback is "no answer yet", never a shape or type complaint, and nothing raises."""
    import ast

    from pate_study import privacy
    from pate_study.experiments import primer

    cells = _exercise_cells(stem)
    namespace = {"np": np, "ex": ex, "exercises": ex, "privacy": privacy, "primer": primer}
    exec(cells[0], namespace)  # the parameters cell
    if "overrides" in namespace:  # a contract notebook: the setup cell (skipped below) builds its config
        namespace["config"] = load_manifest(stem).contract.from_cell(namespace)
    rows = primer.load_votes("mnist", data="synthetic", n_rows=2000, seed=0)
    namespace["votes"] = rows if stem == "00_dp_primer" else rows.counts[:640]
    checked = 0
    for source in cells[1:]:
        if "sections." in source or "sliders." in source or "NotebookOutputs" in source:
            continue
        tree = ast.parse(source)
        *body, last = tree.body
        exec(compile(ast.Module(body, []), stem, "exec"), namespace)
        value = (
            eval(compile(ast.Expression(last.value), stem, "eval"), namespace) if isinstance(last, ast.Expr) else None
        )
        if "exercises.check_" in source:
            ex.reset_attempts()
            assert isinstance(value, ex.Feedback) and not value.correct, source
            assert value.message.startswith("no answer yet"), (source, value.message)
            checked += 1
    assert checked == (14 if stem == "00_dp_primer" else 5)
