"""The frontier figure with the target: lines never join releases of different k, the target and budget lines are
labelled, every name is in the legend, and no text overlaps another (what a site review found on the former one)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from pate_study.experiments.audioset import target_figures


def _inputs():
    rows = []
    for mech, k, eps, m in (
        ("topk", 2, 100.0, 0.10),
        ("topk", 2, 255.0, 0.12),
        ("topk", 3, 255.0, 0.125),
        ("topk", 3, 900.0, 0.14),
        ("tau", 3, 255.0, 0.13),
        ("gnthreshold", 0, 2000.0, 0.05),
    ):
        rows.append(
            dict(mechanism=mech, k=k, sigma_e=0.2, th_e=0.4, epsilon=eps, map=m, map_min=m - 0.01, map_max=m + 0.01)
        )
    t54 = pd.DataFrame({"eps_data_independent": [2000.0, 5000.0, 2e6], "map": [0.03, 0.04, 0.02], "map_sd": 0.002})
    refs = pd.DataFrame([{"reference": "single model", "map": 0.28}, {"reference": "class prior", "map": 0.01}])
    target = dict(
        procedure_epsilon=295.9,
        target_map_mean=0.194,
        target_map_low=0.185,
        target_map_high=0.219,
        n_teacher_ensembles=3,
        target_verdict="met",
    )
    return pd.DataFrame(rows), t54, refs, target


def test_the_frontier_figure_labels_everything_once_and_nothing_overlaps():
    front, t54, refs, target = _inputs()
    fig = target_figures.frontier_figure(front, t54, refs, target, delta=1e-8)
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines() if ln.get_label().startswith("frontier:")}
    assert set(lines) == {
        "frontier: topk k=2 (σ_e 0.2, 0.2)",
        "frontier: topk k=3 (σ_e 0.2, 0.2)",
        "frontier: tau k=3 (σ_e 0.2)",
        "frontier: gnthreshold (σ_e 0.2)",
    }
    np.testing.assert_array_equal(lines["frontier: topk k=2 (σ_e 0.2, 0.2)"].get_xdata(), [100.0, 255.0])
    np.testing.assert_array_equal(lines["frontier: topk k=3 (σ_e 0.2, 0.2)"].get_xdata(), [255.0, 900.0])
    texts = [t for t in ax.texts]
    assert sorted(t.get_text() for t in texts) == [" budget ε = 300", "target mAP 0.13"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(
        t.startswith("pre-registered procedure (3 fresh ensembles): 0.194 [0.185, 0.219], ε 295.9 (met)")
        for t in legend
    )
    assert any(t.startswith("thesis's settings") for t in legend) and "single model: 0.280" in legend
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts] + [
        ax.get_legend().get_window_extent(renderer),
        ax.xaxis.label.get_window_extent(renderer),
    ]
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)


def test_the_figure_draws_without_the_target():
    front, t54, refs, _ = _inputs()
    fig = target_figures.frontier_figure(front, t54, refs, None, delta=1e-8)
    assert not any("pre-registered" in t.get_text() for t in fig.axes[0].get_legend().get_texts())
