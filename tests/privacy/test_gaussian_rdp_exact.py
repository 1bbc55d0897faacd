"""The data-independent RDP of the Gaussian steps against the exact Rényi divergence of the mechanism itself.

GNMax adds N(0, σ²) to every class's vote count; one teacher changing its vote moves one count up by one and another
down by one, an l2 shift of √2, so D_α = α·2/(2σ²) = α/σ² (Papernot et al. 2018, Proposition 8; Mironov 2017,
Proposition 7). The threshold check of confident GNMax adds N(0, σ1²) to the largest count, which moves by at most
one: α/(2σ1²). Here both are computed afresh by numerical integration of ∫ p^α q^(1−α) along the shift (the
Gaussian's other coordinates cancel), and compared with the library's closed forms; the printed slopes are checked
too, so that a factor 2 in either (α/σ² written α/(2σ²)) fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from pate_study.privacy import rdp

ORDERS = np.array([1.5, 2.0, 5.0, 20.0, 100.0])


def gaussian_renyi(shift: float, sigma: float, order: float) -> float:
    """D_α(N(shift, σ²) ‖ N(0, σ²)) by quadrature on a fine grid, in log space."""
    x = np.linspace(-12 * sigma - order * shift, 12 * sigma + order * shift, 400_001)
    log_p = -0.5 * ((x - shift) / sigma) ** 2
    log_q = -0.5 * (x / sigma) ** 2
    log_norm = -math.log(sigma * math.sqrt(2 * math.pi))
    log_integral = special.logsumexp(order * log_p + (1 - order) * log_q) + math.log(x[1] - x[0]) + log_norm
    return log_integral / (order - 1)


@pytest.mark.parametrize("sigma", [2.0, 40.0])
def test_gnmax_data_independent_is_the_divergence_of_a_sqrt2_shift(sigma):
    exact = [gaussian_renyi(math.sqrt(2.0), sigma, a) for a in ORDERS]
    np.testing.assert_allclose(rdp.rdp_gnmax_data_independent(sigma, ORDERS), exact, rtol=1e-6)


@pytest.mark.parametrize("sigma1", [3.0, 150.0])
def test_threshold_data_independent_is_the_divergence_of_a_unit_shift(sigma1):
    exact = [gaussian_renyi(1.0, sigma1, a) for a in ORDERS]
    np.testing.assert_allclose(rdp.rdp_threshold_data_independent(sigma1, ORDERS), exact, rtol=1e-6)


def test_the_printed_slopes():
    """Papernot et al. 2018: α/σ² for GNMax (σ = 40: α/1600), α/(2σ1²) for the check (σ1 = 150: α/45000)."""
    np.testing.assert_allclose(rdp.rdp_gnmax_data_independent(40.0, [2.0, 100.0]), [2 / 1600, 100 / 1600], rtol=1e-12)
    np.testing.assert_allclose(
        rdp.rdp_threshold_data_independent(150.0, [2.0, 100.0]), [2 / 45000, 100 / 45000], rtol=1e-12
    )


def test_the_data_dependent_bound_at_low_consensus_is_the_data_independent_one():
    """Where Theorem 6's condition fails the data-dependent GNMax bound falls back to the data-independent α/σ²:
    both functions must give the same number (one of them mutated alone would not)."""
    low_consensus = np.array([[150, 60, 40] + [0] * 7])
    np.testing.assert_allclose(
        rdp.rdp_gnmax(low_consensus, 40.0, ORDERS)[0], rdp.rdp_gnmax_data_independent(40.0, ORDERS), rtol=1e-12
    )
