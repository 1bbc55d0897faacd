"""Exact profiles on probability grids: GNThreshold averages teacher probabilities, so the fractions lie on a finer
grid than {0, 1/T, …, 1}. On the 1/(2T) grid the adaptive threshold's exact ε exceeds the 1/T-only value (which
is therefore not the worst case), and the package's sound claim still covers it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pate_study.privacy import exact_profile, multilabel
from pate_study.privacy.options import Accounting

T, N_LABELS, SIGMA, DELTA = 4, 3, 0.5, 1e-3
FINE_ORDERS = np.linspace(1.01, 200.0, 4000)


def exact_max(threshold, resolution, n_teachers=T, n_labels=N_LABELS, sigma=SIGMA):
    grid, i, j = exact_profile.neighbouring_pairs(n_teachers, n_labels, resolution)
    lp = exact_profile.gnthreshold_output_logprobs(grid, threshold, sigma)
    return float(exact_profile.exact_epsilon(lp[i], lp[j], DELTA).max())


def claim(threshold, n_teachers=T, n_labels=N_LABELS, sigma=SIGMA):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return multilabel.gnthreshold_epsilon(
            sigma=sigma,
            delta=DELTA,
            threshold=threshold,
            n_queries=1,
            n_labels=n_labels,
            bound="vote_fraction",
            n_teachers=n_teachers,
            accounting=Accounting(FINE_ORDERS),
        )


@pytest.mark.parametrize("resolution", [1, 2, 3])
def test_finer_grid_and_its_neighbours(resolution):
    grid, i, j = exact_profile.neighbouring_pairs(3, 2, resolution)
    assert len(grid) == (resolution * 3 + 1) ** 2
    np.testing.assert_allclose(grid * 3 * resolution, np.rint(grid * 3 * resolution), atol=1e-12)
    step = np.abs(grid[i] - grid[j]).max(axis=1)
    assert np.all(step <= 1.0 / 3 + 1e-12) and np.any(np.isclose(step, 1.0 / 3))  # one teacher: at most 1/T
    assert np.all(np.abs(grid[i] - grid[j]).sum(axis=1) > 0)
    assert set(zip(i.tolist(), j.tolist())) == set(zip(j.tolist(), i.tolist()))
    coarse = exact_profile.neighbouring_pairs(3, 2, 1)
    if resolution > 1:  # the 1/T grid's pairs are among the finer grid's
        fine = {(tuple(grid[a]), tuple(grid[b])) for a, b in zip(i, j)}
        assert all((tuple(coarse[0][a]), tuple(coarse[0][b])) in fine for a, b in zip(coarse[1], coarse[2]))


@pytest.mark.slow
def test_adaptive_threshold_on_the_half_grid_refutes_the_one_over_t_value():
    coarse, half = exact_max("adaptive", 1), exact_max("adaptive", 2)
    assert coarse == pytest.approx(2.528, abs=2e-3)
    assert half == pytest.approx(2.589, abs=2e-3)
    assert half > coarse + 0.05  # the 1/T-only profile is not the worst case of the probability-averaging rule
    sound = claim("adaptive")
    assert sound.epsilon >= half


@pytest.mark.slow
def test_fixed_threshold_worst_case_is_already_on_the_one_over_t_grid():
    # with a fixed threshold the release is the Gaussian mechanism: its worst pair moves every label by 1/T, which
    # the 1/T grid already contains
    assert exact_max(0.5, 2) == pytest.approx(exact_max(0.5, 1), abs=1e-6)
    assert claim(0.5).epsilon >= exact_max(0.5, 2)


@pytest.mark.slow
def test_third_grid_still_covered_by_the_sound_claim():
    # T = 3, n = 3: 1/T grid 2.683, 1/(2T) 2.765, 1/(3T) 2.737 (the 1/(3T) grid does not contain the 1/(2T) one)
    coarse = exact_max("adaptive", 1, n_teachers=3)
    third = exact_max("adaptive", 3, n_teachers=3)
    assert third > coarse + 0.03
    assert claim("adaptive", n_teachers=3).epsilon >= max(third, exact_max("adaptive", 2, n_teachers=3))


def test_grid_size_is_checked():
    with pytest.raises(ValueError, match="^n_teachers/n_labels/resolution: enumeration too large"):
        exact_profile.fraction_grid(50, 4, 3)
    with pytest.raises(ValueError, match="^resolution"):
        exact_profile.fraction_grid(3, 2, 0)
