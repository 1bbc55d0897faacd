"""Bad input to the top-k vote module is refused in one line naming what the user passed."""

from __future__ import annotations

import numpy as np
import pytest

from pate_study.experiments import pate2018_lab
from pate_study.privacy import topk_vote as tv

P = np.random.default_rng(0).random((3, 4, 5))


def test_complex_probabilities_are_refused():
    with pytest.raises(ValueError, match="^probabilities: expected a real numeric array"):
        tv.topk_votes(P + 0.5j, 2)


def test_vote_grid_checks_its_limit_before_enumerating():
    # C(40, 20) = 1.4e11 vote sets: refused at once, never built
    with pytest.raises(ValueError, match="^n_teachers/n_labels/k: too many vote configurations"):
        tv.topk_vote_grid(2, 40, 20)


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), "0.3x", [[0.3]]])
def test_release_threshold_message_does_not_offer_adaptive(threshold):
    m = tv.topk_fractions(P, 2)
    with pytest.raises(ValueError, match="^threshold: expected a (finite )?fixed number") as err:
        tv.topk_release(m, k=2, n_teachers=3, threshold=threshold, sigma=0.3, rng=0)
    assert "adaptive" not in str(err.value).split("got")[0]


def test_exact_epsilon_names_the_parameters_the_user_passed():
    with pytest.raises(ValueError, match="^sigma/n_queries: ") as err:
        tv.topk_exact_epsilon(k=2, n_labels=5, n_teachers=3, sigma=1e-150, delta=1e-5, n_queries=10**300)
    assert "\n" not in str(err.value) and "mu" not in str(err.value) and "epsilon:" not in str(err.value)


def test_expected_answered_of_empty_votes_names_the_counts():
    with pytest.raises(ValueError, match="^counts: expected a non-empty 2-D array"):
        pate2018_lab.expected_answered(np.zeros((0, 10)), threshold=200.0, sigma1=150.0)
