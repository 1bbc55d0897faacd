"""The one path from a composed curve to a result (``accounting.account``) and its helpers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pate_study.privacy import accounting, moments, rdp
from pate_study.privacy.accounting import OrderAtGridEdgeWarning
from pate_study.privacy.options import Accounting


def test_account_reproduces_an_accountant_from_its_curve():
    votes = np.random.default_rng(0).multinomial(100, np.full(5, 0.2), size=50)
    spent = rdp.gnmax_epsilon(sigma=20.0, delta=1e-5, votes=votes)
    again = accounting.account(
        spent.rdp_or_logmgf,
        delta=1e-5,
        accounting=Accounting(spent.orders),
        accountant="rdp2018",
        mechanism="gnmax",
        n_queries=50,
        data_dependent=True,
    )
    assert again.epsilon == spent.epsilon and again.order == spent.order
    # the callable form evaluates the curve on the resolved grid
    called = accounting.account(
        lambda grid: 50 * grid / 400.0,
        delta=1e-5,
        accounting=Accounting("paper2018"),
        accountant="rdp2018",
        mechanism="gnmax",
        n_queries=50,
        data_dependent=False,
    )
    assert called.epsilon == rdp.gnmax_epsilon(sigma=20.0, delta=1e-5, n_queries=50).epsilon


def test_account_rejects_a_conversion_of_the_wrong_kind_and_bad_curves():
    with pytest.raises(ValueError, match="conversion: expected one of"):
        accounting.account(
            np.ones(3),
            delta=1e-5,
            accounting=Accounting([2.0, 3.0, 4.0], "moments"),
            accountant="rdp2018",
            mechanism="gnmax",
            n_queries=1,
            data_dependent=False,
        )
    with pytest.raises(ValueError, match="total: expected one value per order"):
        accounting.account(
            lambda grid: np.ones(2),
            delta=1e-5,
            accounting=Accounting([2.0, 3.0, 4.0]),
            accountant="rdp2018",
            mechanism="gnmax",
            n_queries=1,
            data_dependent=False,
        )
    with pytest.raises(ValueError, match="n_queries/votes: expected exactly one"):
        accounting.query_mode(None, None, np.asarray)


def test_with_optimum_checks_the_grid_edge():
    spent = moments.moments_epsilon(gamma=0.05, delta=1e-5, n_queries=1000, accounting=Accounting([1.0, 2.0, 3.0]))
    with pytest.warns(OrderAtGridEdgeWarning):
        edge = accounting.with_optimum(spent, 1.0, 3.0, "closed_form")
    assert edge.at_grid_edge and edge.order == 3.0 and edge.conversion == "closed_form"
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrderAtGridEdgeWarning)
        inside = accounting.with_optimum(spent, 1.0, 2.5, "closed_form")
    assert not inside.at_grid_edge and inside.details == spent.details
