"""Notebook 05's figures read at the site's width: the frontier's lines and labels, the students' axes and labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pate_study.experiments.audioset import figures, release, teachers
from pate_study.experiments.audioset.release_claims import common as release_common
from pate_study.experiments.audioset.release_claims import noise_free, student_figures


def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _students(map_level=0.02):
    sub = pd.DataFrame(
        [
            dict(
                eps_data_dependent=500.0,
                map=map_level,
                map_min=map_level - 0.002,
                map_max=map_level + 0.002,
                n_samples=2000,
            )
        ]
    )
    refs = pd.DataFrame([{"reference": "single model", "map": 0.3}, {"reference": "prior", "map": 0.021}])
    return sub, refs


def test_students_axis_is_fitted_to_the_students_and_far_references_are_named_not_drawn():
    sub, refs = _students()
    fig = figures.students_figure(sub, refs, "adaptive", "0.6", 1e-8)
    low, high = fig.axes[0].get_ylim()
    assert 0.01 < low < 0.018 and 0.022 < high < 0.03  # not 0 .. 0.3
    texts = _texts(fig)
    assert any("single model: 0.300 (above)" in t for t in texts) and "prior" in texts
    assert "confidence check th_c=0.6" in fig.axes[0].get_title()


def test_students_without_a_check_never_print_a_sigma_c():
    sub, refs = _students()
    sweep = pd.DataFrame(
        [
            dict(
                sigma_e=s, sigma_c=np.nan, eps_data_dependent=e, map=0.02, map_min=0.018, map_max=0.022, n_samples=5000
            )
            for s, e in ((0.1, 900.0), (0.2, 400.0))
        ]
    )
    fig = figures.students_figure(sub, refs, "0.2", "None", 1e-8, sweep)
    texts = _texts(fig)
    assert "no confidence check" in fig.axes[0].get_title()
    assert not any("σ_c" in t for t in texts) and any("no check" in t for t in texts)


def test_student_figures_say_no_check_with_none_and_pick_the_tables_rows_by_it():
    t54 = pd.DataFrame([dict(th_e="0.2", th_c=release.check_label(c), map=m) for c, m in ((None, 0.1), (0.4, 0.2))])
    no_check = {item: thcs for item, _, thcs in student_figures.STUDENT_FIGURES}["muschiol2021-fig5.17"]
    assert no_check == (None,)
    assert list(student_figures.student_rows(t54, "0.2", no_check)["map"]) == [0.1]
    assert list(student_figures.student_rows(t54, "0.2", (0.4,))["map"]) == [0.2]  # the check's row, not the other


def _info(kind):
    return dict(
        data="some embeddings",
        kind=kind,
        teacher_pool=6214,
        validation=777,
        query_pool=5000,
        test=2722,
        n_labels=161,
        best_step={5: np.array([10])},
        steps={5: 10},
    )


def test_stamps_say_reduced_scale_on_real_data_and_not_on_a_synthetic_stand_in():
    spec = teachers.teacher_spec(hidden=(8,), steps=10, eval_every=10)
    real, _ = noise_free.setup_record(_info("real"), spec, [5])
    synthetic, _ = noise_free.setup_record(_info("synthetic"), spec, [5])
    assert real.startswith("real data at reduced scale") and "reduced scale" not in synthetic
    assert "reduced scale" in release_common.small_stamp(_info("real"))
