"""The frontier's choice of its best release, charged: every candidate within the budget composed (the selection
actually run), and the exact Gaussian epsilon beside each RDP one."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from pate_study.experiments.audioset import release_frontier, students
from pate_study.experiments.audioset.votes import synthetic_votes
from pate_study.privacy import topk_vote
from pate_study.privacy.accounting import OrderAtGridEdgeWarning

#: the committed frontier's 13 settings (T = 50 teachers, 161 labels, 5,000 queries, δ = 1e-8)
SETTINGS = release_frontier.frontier_settings(
    [0.1, 0.2, 0.3], [[2, 0.1, 0.3], [3, 0.1, 0.3], [2, 0.2, 0.4], [3, 0.2, 0.4]], [0.1, 0.2]
)


def committed_frontier() -> pd.DataFrame:
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        for s in SETTINGS:
            spent = release_frontier.frontier_spent(s, n_teachers=50, n_queries=5000, n_labels=161)
            rows.append({**s, "n_samples": 5000, "epsilon": spent.epsilon})
    return pd.DataFrame(rows)


def test_selection_of_the_committed_frontier_is_charged():
    front = committed_frontier()
    # the per-release values printed today (RDP, basic conversion): 4 releases within ε ≤ 300
    within = front[front["epsilon"] <= 300]
    assert sorted(round(e, 1) for e in within["epsilon"]) == [110.7, 185.9, 255.1, 255.1]
    sel = release_frontier.frontier_selection_privacy(front, n_teachers=50, n_labels=161, epsilon_max=300.0, delta=1e-8)
    assert sel["selection_within_n_candidates"] == 4 and sel["selection_all_n_candidates"] == 13
    assert sel["selection_within_epsilon"] == pytest.approx(632.2, abs=0.05)
    assert sel["selection_all_epsilon"] == pytest.approx(27039.1, abs=0.05)
    # exact Gaussian beside: tighter, still far above the budget
    assert 300 < sel["selection_within_epsilon_exact_gaussian"] < sel["selection_within_epsilon"]
    assert sel["selection_all_epsilon_exact_gaussian"] < sel["selection_all_epsilon"]
    assert "best of a fixed set of candidate releases" in sel["selection_mechanism"]


def test_exact_gaussian_beside_the_rdp_epsilon_of_the_5000_query_topk_release():
    spent = release_frontier.frontier_spent(
        {"mechanism": "topk", "sigma_e": 0.2, "k": 3, "th_e": 0.4}, n_teachers=50, n_queries=5000, n_labels=161
    )
    assert spent.epsilon == pytest.approx(255.1, abs=0.05)
    exact = topk_vote.gaussian_composition_epsilon(spent)
    assert exact == pytest.approx(246.3, abs=0.05)
    assert exact == pytest.approx(
        topk_vote.topk_exact_epsilon(k=3, n_labels=161, n_teachers=50, sigma=0.2, delta=1e-8, n_queries=5000), rel=1e-9
    )


def test_frontier_rows_carry_the_exact_gaussian_epsilon():
    cv = synthetic_votes(10, n_pool=120, n_test=30, n_labels=8, seed=0)
    rows, _ = release_frontier.frontier_releases(
        cv, release_frontier.frontier_settings([0.2], [(2, 0.1, 0.3)], [0.2]), 100, delta=1e-8, seed=0
    )
    for r in rows:
        assert 0 < r["epsilon_exact_gaussian"] < r["epsilon"]


def test_the_summary_carries_the_selection_charge():
    front = committed_frontier().assign(
        map=0.1, map_sd=0.01, map_min=0.09, map_max=0.11, n_seeds=3, released_per_query=1.0
    )
    front.loc[front["epsilon"].idxmin(), "map"] = 0.2
    t54 = pd.DataFrame(
        [
            {
                "map": 0.03,
                "map_sd": 0.002,
                "eps_data_dependent": 3000.0,
                "eps_data_independent": 4000.0,
                "n_samples": 5000,
                "th_e": "0.4",
                "th_c": "None",
            }
        ]
    )
    sel = release_frontier.frontier_selection_privacy(front, n_teachers=50, n_labels=161)
    t = students.frontier_summary(front, t54, selection=sel)
    assert t["best_epsilon"] == pytest.approx(110.7, abs=0.05)  # the chosen release's own ε
    assert t["best_epsilon_selection_charged"] == sel["selection_within_epsilon"]
    assert not t["selection_charged_within_budget"]
    lines = students.frontier_findings(front, t)
    assert any(
        line.startswith("Choosing the best of the 4 frontier releases") and "above the budget" in line for line in lines
    )
    assert "best_epsilon_selection_charged" not in students.frontier_summary(front, t54)
    with pytest.raises(ValueError, match="^selection: computed at epsilon_max"):
        students.frontier_summary(front, t54, epsilon_max=200.0, selection=sel)


def test_no_candidate_within_the_budget():
    front = committed_frontier()
    sel = release_frontier.frontier_selection_privacy(front, n_teachers=50, n_labels=161, epsilon_max=50.0)
    assert sel["selection_within_n_candidates"] == 0 and math.isnan(sel["selection_within_epsilon"])
    assert np.isfinite(sel["selection_all_epsilon"])
