"""The student target judged over release draws x student seeds with a test-set bootstrap, the selection charged."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_audioset_students_frontier import TINY

from pate_study.experiments.audioset import pipeline, release, students, teachers
from pate_study.experiments.audioset.votes import synthetic_votes
from pate_study.learning import metrics


def _rows(maps_by_candidate: dict, spread_boot: float = 0.001, n_boot: int = 40) -> pd.DataFrame:
    """Target rows: per candidate (mechanism, ε), a [draws, seeds] array of mAP; each student's resamples around it."""
    rng = np.random.default_rng(0)
    rows = []
    for (mech, eps), maps in maps_by_candidate.items():
        for draw, per_seed in enumerate(np.asarray(maps, float)):
            for seed, m in enumerate(per_seed):
                boot = m + rng.normal(0, spread_boot, n_boot)
                rows.append(
                    dict(
                        mechanism=mech,
                        sigma_e=0.2,
                        k=3,
                        th_e=0.4,
                        epsilon=eps,
                        release_draw=draw,
                        seed=seed,
                        map=m,
                        map_boot=boot,
                    )
                )
    return pd.DataFrame(rows)


def _frontier(map_topk=0.12):
    base = dict(sigma_e=0.2, k=3, th_e=0.4, map_sd=0.005, map_min=0.1, map_max=0.13, n_seeds=3, released_per_query=1.0)
    return pd.DataFrame(
        [
            dict(base, mechanism="topk", epsilon=255.0, map=map_topk),
            dict(base, mechanism="binary", epsilon=100.0, map=0.02),
        ]
    )


T54 = pd.DataFrame(
    [
        dict(
            map=0.03,
            map_sd=0.002,
            eps_data_dependent=3000.0,
            eps_data_independent=4000.0,
            n_samples=5000,
            th_e="0.4",
            th_c="None",
        )
    ]
)


def _target(rows, target=0.13, selection=None):
    return students.frontier_targets(
        _frontier(), T54, epsilon_max=300, target_map=target, target_rows=rows, selection=selection
    )


def test_target_met_when_every_draw_and_seed_is_clearly_above():
    rows = _rows(
        {
            ("topk", 255.0): [[0.150, 0.151, 0.149], [0.152, 0.150, 0.151], [0.149, 0.150, 0.150]],
            ("binary", 100.0): [[0.02] * 3] * 3,
        }
    )
    t = _target(rows)
    assert t["target_verdict"] == "met" and t["best_mechanism"] == "topk"
    assert "3 replicates of release-noise draw, student training seed" in t["target_estimate"]
    assert "bootstrap resamples of test examples" in t["target_estimate"]
    assert t["target_map_low"] > 0.13 and math.isnan(t["target_tolerance"])


def test_target_not_met_when_clearly_below_and_inconclusive_inside_the_draw_spread():
    low = _rows({("topk", 255.0): [[0.120, 0.121, 0.119]] * 3, ("binary", 100.0): [[0.02] * 3] * 3})
    assert _target(low)["target_verdict"] == "not met"
    # the draws disagree (0.125 .. 0.137): the mean of the draw means is near 0.13, the interval straddles it
    spread = _rows({("topk", 255.0): [[0.125] * 3, [0.137] * 3, [0.129] * 3], ("binary", 100.0): [[0.02] * 3] * 3})
    t = _target(spread)
    assert t["target_verdict"] == "inconclusive" and t["target_map_low"] < 0.13 < t["target_map_high"]


def test_seeds_of_one_draw_do_not_count_as_independent_draws():
    # three seeds that agree on each of two draws that differ: the interval is the t over 2 draw means (wide)
    rows = _rows({("topk", 255.0): [[0.14] * 3, [0.16] * 3], ("binary", 100.0): [[0.02] * 3] * 2})
    est = students.target_estimates(rows).set_index("mechanism").loc["topk"]
    assert est["n_draws"] == 2 and est["n_seeds"] == 3
    assert est["map_high"] - est["map_low"] > 0.1  # t(0.975, 1) = 12.7: two draws measure little


def test_a_charged_selection_above_the_budget_is_not_met_whatever_the_map():
    rows = _rows({("topk", 255.0): [[0.150] * 3] * 3, ("binary", 100.0): [[0.02] * 3] * 3})
    selection = release.frontier_selection_privacy(_frontier().assign(n_samples=5000), n_teachers=50, n_labels=161)
    t = _target(rows, selection=selection)
    assert t["target_map_verdict_if_fixed_in_advance"] == "met"
    assert t["target_verdict"] == ("met" if t["selection_charged_within_budget"] else "not met")


def test_bootstrap_map_is_the_map_of_each_resample():
    rng = np.random.default_rng(1)
    y, s = rng.uniform(size=(40, 5)) < 0.3, rng.uniform(size=(40, 5))
    rows = np.vstack([np.arange(40), rng.integers(0, 40, (7, 40))])
    np.testing.assert_allclose(
        students.bootstrap_map(y, s, rows, chunk=3), [metrics.mean_average_precision(y[r], s[r]) for r in rows]
    )


def test_frontier_target_students_train_every_candidate_within_the_budget_over_draws_and_seeds():
    cv = synthetic_votes(5, n_pool=150, n_test=60, n_labels=6, seed=0)
    rng = np.random.default_rng(0)
    pool_x, test_x = rng.normal(size=(150, 4)).astype(np.float32), rng.normal(size=(60, 4)).astype(np.float32)
    settings = release.frontier_settings([0.2, 5.0], [], [])
    front = pd.DataFrame(release.frontier_releases(cv, settings, 100)[0])
    budget = float(front["epsilon"].min()) + 1.0  # only the noisier release is within it
    rows = pipeline.frontier_target_students(
        cv,
        pool_x,
        test_x,
        front,
        teachers.teacher_spec(**TINY),
        n_queries=100,
        delta=1e-8,
        epsilon_max=budget,
        release_draws=2,
        seeds=[0, 1],
        n_boot=5,
    )
    assert len(rows) == 2 * 2 and set(rows["sigma_e"]) == {5.0}
    assert sorted(rows["release_draw"].unique()) == [0, 1] and all(len(b) == 5 for b in rows["map_boot"])
    with pytest.raises(ValueError, match="target_release_draws"):
        pipeline.frontier_target_students(
            cv, pool_x, test_x, front, teachers.teacher_spec(**TINY), n_queries=100, delta=1e-8, release_draws=0
        )
