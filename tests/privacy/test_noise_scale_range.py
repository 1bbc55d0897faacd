"""Gaussian noise scales at the extremes: a clear error outside the range where σ² and 1/σ² are finite floats,
finite ε at both ends of it (no ZeroDivisionError or OverflowError from the arithmetic)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pate_study.experiments.audioset import bound_forensics
from pate_study.privacy import rdp
from pate_study.privacy._validation import NOISE_SCALE_RANGE
from pate_study.privacy.options import Accounting


@pytest.mark.parametrize("sigma", [1e-200, 1e-151, 1e151, 1e200])
def test_noise_scale_outside_the_range_is_refused_by_name(sigma):
    with pytest.raises(ValueError, match=r"^sigma: expected a noise scale in"):
        rdp.gnmax_epsilon(sigma=sigma, delta=1e-5, n_queries=10)
    with pytest.raises(ValueError, match=r"^sigma1: expected a noise scale in"):
        rdp.confident_gnmax_epsilon(threshold=1.0, sigma1=sigma, sigma2=1.0, delta=1e-5, votes=np.eye(3, dtype=int))


@pytest.mark.filterwarnings("ignore::pate_study.privacy.accounting.OrderAtGridEdgeWarning")
@pytest.mark.parametrize("sigma", NOISE_SCALE_RANGE)
def test_epsilon_is_finite_and_ordered_at_the_ends_of_the_range(sigma):
    spent = rdp.gnmax_epsilon(sigma=sigma, delta=1e-5, n_queries=10, accounting=Accounting(np.array([2.0, 8.0, 64.0])))
    assert math.isfinite(spent.epsilon) and spent.epsilon > 0
    small, large = NOISE_SCALE_RANGE
    tiny_noise = rdp.gnmax_epsilon(
        sigma=small, delta=1e-5, n_queries=10, accounting=Accounting(np.array([2.0, 8.0, 64.0]))
    )
    huge_noise = rdp.gnmax_epsilon(
        sigma=large, delta=1e-5, n_queries=10, accounting=Accounting(np.array([2.0, 8.0, 64.0]))
    )
    assert huge_noise.epsilon < tiny_noise.epsilon


def test_multilabel_accountant_refuses_an_underflowing_sigma():
    with pytest.raises(ValueError, match=r"^sigma: expected a noise scale in"):
        bound_forensics.multilabel_bounds(
            fractions=np.full((2, 3), 0.5), threshold=0.5, sigma=1e-300, delta=1e-8, n_teachers=5
        )
