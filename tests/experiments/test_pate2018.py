"""experiments/pate2018.py: Table 2 rows, seed runs, the smooth-sensitivity release and the verdicts, on small votes."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from pate_study.experiments import pate2018 as p
from pate_study.privacy import smooth_sensitivity as ss


@pytest.fixture(scope="module")
def votes():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(10, 0.15), size=60)
    return np.stack([rng.multinomial(50, q) for q in probs])


@pytest.fixture(scope="module")
def setting():
    return dataclasses.replace(p.PAPER2018_CONFIDENT["mnist"], threshold=35, sigma1=12, sigma2=8, n_queries=60,
                               ss_order=6.0, ss_beta=0.05, ss_sigma=5.0)


def test_confident_rows_invariants(votes, setting):
    row = p.confident_gnmax_rows(votes, setting)
    assert 0 < row["expected_answered"] < 60
    assert row["epsilon_improved"] <= row["epsilon_basic"] <= row["epsilon_independent_basic"]


def test_first_queries_rejects_too_many(votes):
    with pytest.raises(ValueError, match="n_queries: expected 1..60"):
        p.first_queries(votes, 61)


def test_realised_runs_are_seeded_and_spread(votes, setting):
    a = p.realised_runs(votes, setting, range(8))
    b = p.realised_runs(votes, setting, range(8))
    pd.testing.assert_frame_equal(a, b)
    assert a["answered"].nunique() > 1 and (a["answered"] <= 60).all()


def test_percentile_and_interval():
    assert p.percentile_of(2.0, [1, 2, 3, 4]) == pytest.approx(37.5)
    assert p.seed_interval(np.arange(101), 0.9) == pytest.approx((5.0, 95.0))


def test_expected_local_sensitivity_equals_the_sum_over_queries(votes, setting):
    """The per-distinct-value shortcut gives the same sum as computing every query on its own."""
    fast = p.expected_local_sensitivity(votes, setting, 50)
    from pate_study.privacy.rdp import threshold_logpr
    slow = np.zeros(50)
    for row in votes:
        pr = np.exp(threshold_logpr([row.max()], setting.threshold, setting.sigma1))[0]
        slow += ss.local_sensitivity_bounds_threshold(row.max(), 50, setting.threshold, setting.sigma1, setting.ss_order)
        slow += pr * ss.local_sensitivity_bounds_gnmax(row[None, :], 50, setting.sigma2, setting.ss_order)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-300)


def test_smooth_sensitivity_release_adds_its_cost(votes, setting):
    r = p.smooth_sensitivity_confident(votes, setting, 50, seeds=range(3))
    assert r["epsilon_expected"] == pytest.approx(r["epsilon_before_release"] + r["rdp_gnss"])
    assert r["epsilon_std"] == pytest.approx(r["smooth_sensitivity"] * setting.ss_sigma)
    assert len(set(r["epsilon_released_draws"])) == 3
    with pytest.raises(ValueError, match="no smooth-sensitivity parameters"):
        p.smooth_sensitivity_confident(votes, p.PAPER2018_CONFIDENT["adult"], 50)


def test_table2_verdicts(votes, setting):
    row = p.confident_gnmax_rows(votes, setting)
    runs = {"mnist": pd.DataFrame({"answered": np.arange(270, 300), "epsilon": np.linspace(1.9, 2.1, 30)})}
    real = p.table2_comparison([row], runs, real_data=True)
    assert real.loc[0, "verdict"] == "agrees"  # 286 and 1.97 lie inside the runs' intervals
    far = {"mnist": runs["mnist"].assign(answered=np.arange(100, 130))}
    differs = p.table2_comparison([row], far, real_data=True)
    assert differs.loc[0, "verdict"] == "differs" and "286" in differs.loc[0, "verdict_reason"]
    assert p.table2_overall_verdict(differs, real_data=True).verdict == "differs"
    assert p.table2_overall_verdict(real, real_data=False).verdict == "not comparable"


def test_lnmax_2017_rows(votes):
    rows = p.lnmax_moments_rows({"mnist": votes}, [p.LnmaxSetting("mnist", 40, 0.05, 1e-5, None)])
    r = rows.iloc[0]
    assert r["epsilon_code_q"] <= r["epsilon_theorem_q"] <= r["epsilon_independent"]
    assert np.isnan(r["paper_epsilon"])
