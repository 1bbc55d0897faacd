"""The data-dependent ε at a given q̃ (Papernot et al. 2018 Theorem 6 with Muschiol 2021 Theorem 13's q̃), its
break-even against the data-independent ε, and Fig 5.16's break-even claim judged analytically on it."""

import math
import warnings

import numpy as np
import pytest

from pate_study.experiments.audioset import bound_forensics
from pate_study.experiments.audioset.release_claims import analytic as release_analytic
from pate_study.privacy import multilabel
from pate_study.privacy.options import Accounting, Bound

warnings.filterwarnings("ignore", message=".*edge of the order range.*")

SETTING = dict(sigma=0.4, n_labels=161, n_queries=1000, delta=1e-8, n_teachers=50)


def test_epsilon_at_logq_is_the_accountant_on_identical_queries():
    m = np.tile([0.0] * 9 + [0.02, 0.95, 1.0], (300, 1))  # 300 identical, confident queries over 12 labels
    kw = dict(
        sigma=0.1,
        delta=1e-8,
        bound="vote_fraction",
        n_teachers=50,
        accounting=Accounting(orders=multilabel.extended_orders()),
    )
    accountant = multilabel.gnthreshold_epsilon(fractions=m, threshold=0.4, **kw).epsilon
    logq = multilabel.multilabel_logq(m[:1], 0.4, 0.1)[0]
    assert logq < -1  # Theorem 6 applies: a real data-dependent value, not the cap
    ours = multilabel.gnthreshold_epsilon_at_logq(logq, n_labels=12, n_queries=300, **kw)
    assert float(ours) == pytest.approx(accountant, rel=1e-9)
    independent = multilabel.gnthreshold_epsilon(n_queries=300, n_labels=12, threshold=0.4, **kw).epsilon
    assert float(ours) < independent
    assert float(multilabel.gnthreshold_epsilon_at_logq(0.0, n_labels=12, n_queries=300, **kw)) == pytest.approx(
        independent, rel=1e-12
    )


def test_data_independent_end_matches_the_closed_form_of_the_basic_conversion():
    # ε(λ) = n·c·λ + log(1/δ)/(λ − 1) is minimised at λ* = 1 + √(log(1/δ)/(n c)): ε* = n c + 2√(n c log(1/δ))
    orders = np.linspace(1.001, 20.0, 400_001)
    c = 161 / (2 * 50**2 * 0.4**2)
    closed = 1000 * c + 2 * math.sqrt(1000 * c * math.log(1e8))
    eps = multilabel.gnthreshold_epsilon_at_logq(0.0, **SETTING, accounting=Accounting(orders=orders))
    assert float(eps) == pytest.approx(closed, rel=1e-6)


def test_epsilon_at_logq_is_vectorised_and_non_decreasing_in_q():
    lq = np.linspace(-12.0, 0.0, 60).reshape(3, 20)
    eps = multilabel.gnthreshold_epsilon_at_logq(
        lq, **SETTING, accounting=Accounting(orders=multilabel.extended_orders())
    )
    assert eps.shape == (3, 20)
    flat = eps.ravel()
    assert np.all(np.diff(flat) >= -1e-9)
    assert flat[0] < flat[-1]


@pytest.mark.parametrize("bad", [0.1, np.nan])
def test_epsilon_at_logq_refuses_a_q_above_one_or_nan(bad):
    with pytest.raises(ValueError, match="logq"):
        multilabel.gnthreshold_epsilon_at_logq(bad, **SETTING)


def test_break_even_q_solves_for_the_share_and_is_nan_where_the_analysis_never_pays():
    orders = multilabel.extended_orders()
    full = float(multilabel.gnthreshold_epsilon_at_logq(0.0, **SETTING, accounting=Accounting(orders=orders)))
    for ratio in (0.99, 0.5):
        q = bound_forensics.break_even_q(ratio, **SETTING, accounting=Accounting(orders=orders))
        at = float(multilabel.gnthreshold_epsilon_at_logq(math.log(q), **SETTING, accounting=Accounting(orders=orders)))
        assert at == pytest.approx(ratio * full, rel=1e-6)
        below = float(
            multilabel.gnthreshold_epsilon_at_logq(math.log(q) - 0.01, **SETTING, accounting=Accounting(orders=orders))
        )
        assert below < ratio * full
    assert bound_forensics.break_even_q(
        0.5, **SETTING, accounting=Accounting(orders=orders)
    ) < bound_forensics.break_even_q(0.99, **SETTING, accounting=Accounting(orders=orders))
    assert math.isnan(
        bound_forensics.break_even_q(0.99, **SETTING, bound=Bound.THEOREM12, accounting=Accounting(orders=orders))
    )
    with pytest.raises(ValueError, match="ratio"):
        bound_forensics.break_even_q(1.0, **SETTING)


def test_break_even_claim_agrees_at_the_thesis_setting_and_is_labelled_analytic():
    v, values = release_analytic.break_even_verdict(0.4, n_labels=161, n_teachers=50)
    assert v.verdict == "agrees" and v.basis == "analytic"
    assert "analytic: holds for any data" in v.reason and "Theorem 12 as printed it never falls" in v.reason
    assert 0.01 <= values["break_even_q_050"] < values["break_even_q_099"] <= 0.1


def test_break_even_claim_differs_where_the_setting_moves_it_out_of_the_band():
    v, values = release_analytic.break_even_verdict(0.4, n_labels=161, n_teachers=10)  # 10 teachers: below 10⁻²
    assert v.verdict == "differs" and v.basis == "analytic"
    assert values["break_even_q_099"] < 0.01
