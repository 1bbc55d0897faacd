"""The exact epsilon of composed Gaussian releases beside the RDP one (topk_vote.gaussian_composition_epsilon):
one Gaussian mechanism with mu = sqrt(2 rho), against dp-accounting's PLD accountant and the RDP value."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from pate_study.privacy import multilabel, multiwinner, topk_vote
from pate_study.privacy.accounting import OrderAtGridEdgeWarning


def _quiet(fn, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        return fn(**kw)


@pytest.mark.parametrize("sigma, n", [(2.0, 1), (8.0, 50), (30.0, 2000)])
def test_matches_dp_accounting_pld(sigma, n):
    pld = pytest.importorskip("dp_accounting.pld.pld_privacy_accountant")
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    # powerset voting: GNMax on the 2^k set counts, RDP alpha/sigma^2 = Gaussian with noise multiplier sigma/sqrt(2)
    spent = _quiet(multiwinner.powerset_pate_epsilon, sigma=sigma, delta=1e-6, n_queries=n)
    acc = pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.GaussianDpEvent(sigma / math.sqrt(2.0)), n)
    ref = acc.get_epsilon(1e-6)
    ours = topk_vote.gaussian_composition_epsilon(spent)
    assert ours == pytest.approx(ref, rel=2e-3, abs=2e-3)
    assert ours <= spent.epsilon


@pytest.mark.parametrize(
    "make",
    [
        lambda: topk_vote.topk_epsilon(k=2, n_teachers=50, sigma=0.2, delta=1e-8, n_queries=1000, n_labels=161),
        lambda: topk_vote.binary_topk_epsilon(sigma=10.0, delta=1e-8, k=3, n_labels=161, n_queries=1000),
        lambda: multiwinner.tau_pate_epsilon(tau=math.sqrt(3), sigma=10.0, delta=1e-8, n_queries=1000),
        lambda: multilabel.gnthreshold_epsilon(
            sigma=0.3, delta=1e-8, threshold=0.4, n_queries=1000, n_labels=161, bound="vote_fraction", n_teachers=50
        ),
    ],
)
def test_below_the_rdp_value_for_each_data_independent_release(make):
    spent = _quiet(lambda: make())
    exact = topk_vote.gaussian_composition_epsilon(spent)
    assert 0 < exact <= spent.epsilon
    # the same as one Gaussian mechanism with mu^2 = 2 rho
    rho = spent.rdp_or_logmgf[0] / spent.orders[0]
    assert exact == pytest.approx(topk_vote.gaussian_epsilon(spent.delta, math.sqrt(2 * rho)), rel=1e-12)


def test_refuses_what_is_not_a_composition_of_gaussians():
    m = np.random.default_rng(0).random((50, 4))
    dependent = _quiet(
        multilabel.gnthreshold_epsilon,
        sigma=0.05,
        delta=1e-8,
        threshold=0.5,
        fractions=m,
        bound="vote_fraction",
        n_teachers=50,
    )
    with pytest.raises(ValueError, match="^spent: a data-dependent bound"):
        topk_vote.gaussian_composition_epsilon(dependent)
    with pytest.raises(ValueError, match="^spent: expected a PrivacySpent"):
        topk_vote.gaussian_composition_epsilon(3.0)
