"""Bad input raises ValueError naming the parameter and the expected value."""

from __future__ import annotations

import numpy as np
import pytest

from pate_study.privacy import mechanisms, moments, multilabel, rdp
from pate_study.privacy.accounting import epsilon_curve
from pate_study.privacy.options import Accounting


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, float("nan")])
def test_delta_outside_unit_interval(delta):
    with pytest.raises(ValueError, match=r"delta: expected a number in the open interval \(0, 1\)"):
        rdp.gnmax_epsilon(sigma=1, delta=delta, n_queries=1)
    with pytest.raises(ValueError, match="delta"):
        moments.moments_epsilon(gamma=0.05, delta=delta, n_queries=1)


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "x"])
def test_noise_parameters_positive(bad):
    with pytest.raises(ValueError, match="sigma: expected a finite number > 0"):
        rdp.gnmax_epsilon(sigma=bad, delta=1e-5, n_queries=1)
    with pytest.raises(ValueError, match="gamma: expected a finite number > 0"):
        moments.moments_epsilon(gamma=bad, delta=1e-5, n_queries=1)
    with pytest.raises(ValueError, match="sigma1"):
        rdp.confident_gnmax_epsilon(threshold=1, sigma1=bad, sigma2=1, delta=1e-5, n_queries=1)
    with pytest.raises(ValueError, match="sigma"):
        multilabel.gnthreshold_epsilon(sigma=bad, delta=1e-5, n_queries=1, n_labels=2)
    with pytest.raises(ValueError, match="scale"):
        mechanisms.laplace_noise(3, bad, 0)


@pytest.mark.parametrize(
    "votes, match",
    [
        ([[1, -2, 3]], "non-negative"),
        ([[1, 2.5, 3]], "integer"),
        ([[1, np.nan, 3]], "finite"),
        (np.zeros((0, 3)), "non-empty"),
        (np.zeros((2, 0)), "non-empty"),
        (np.zeros((2, 2, 2)), "2-D"),
        ([["a", "b"]], "numeric"),
    ],
)
def test_bad_counts(votes, match):
    with pytest.raises(ValueError, match=f"votes: .*{match}"):
        rdp.gnmax_epsilon(sigma=1, delta=1e-5, votes=votes)
    with pytest.raises(ValueError, match="votes"):
        moments.moments_epsilon(gamma=1, delta=1e-5, votes=votes)


def test_mismatched_shapes_and_modes():
    with pytest.raises(ValueError, match="exactly one of n_queries"):
        rdp.gnmax_epsilon(sigma=1, delta=1e-5)
    with pytest.raises(ValueError, match="exactly one of n_queries"):
        rdp.gnmax_epsilon(sigma=1, delta=1e-5, n_queries=3, votes=[[1, 2]])
    with pytest.raises(ValueError, match="rdp: expected shape"):
        epsilon_curve([2.0, 3.0], [1.0], 1e-5)
    with pytest.raises(ValueError, match="answered"):
        rdp.confident_gnmax_epsilon(
            threshold=1,
            sigma1=1,
            sigma2=1,
            delta=1e-5,
            votes=[[3, 1], [2, 2]],
            cost="realized",
            answered=np.array([True]),
        )
    with pytest.raises(ValueError, match="check_values"):
        rdp.confident_gnmax_epsilon(
            threshold=1, sigma1=1, sigma2=1, delta=1e-5, votes=[[3, 1], [2, 2]], check_values=[1.0]
        )
    with pytest.raises(ValueError, match="weights"):
        rdp.compose(np.ones((3, 2)), weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="n_labels"):
        multilabel.gnthreshold_epsilon(sigma=1, delta=1e-5, n_queries=3)


@pytest.mark.parametrize("n", [0, -3, 2.5, "3", True])
def test_bad_n_queries(n):
    with pytest.raises(ValueError, match="n_queries: expected a positive integer"):
        rdp.gnmax_epsilon(sigma=1, delta=1e-5, n_queries=n)


def test_bad_orders_and_choices():
    with pytest.raises(ValueError, match="strictly increasing"):
        rdp.gnmax_epsilon(sigma=1, delta=1e-5, n_queries=1, accounting=Accounting([3.0, 2.0]))
    with pytest.raises(ValueError, match="conversion: expected one of"):
        rdp.gnmax_epsilon(sigma=1, delta=1e-5, n_queries=1, accounting=Accounting(conversion="tight"))
    with pytest.raises(ValueError, match="q_condition"):
        moments.moments_epsilon(gamma=1, delta=1e-5, votes=[[1, 2]], q_condition="loose")
    with pytest.raises(ValueError, match="bound"):
        multilabel.multilabel_slope(1.0, 3, bound="other")
