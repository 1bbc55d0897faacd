"""Shared by the diagnostics in this folder: notebook 05's paper settings and notebook 04's cached big-subset votes,
read through the same call notebook 05 makes (`pate_study.experiments.audioset.pipeline.ensemble_votes`)."""

from __future__ import annotations

import yaml

from pate_study.experiments.audioset import pipeline, teachers

CONFIG = "configs/05_audioset_multilabel/paper.yaml"


def paper_votes() -> tuple[dict, teachers.TeacherSpec, object, dict]:
    """(paper parameters, the teachers' recipe, the largest big-subset ensemble's votes, the subset's info)."""
    p = yaml.safe_load(open(CONFIG))
    spec = teachers.teacher_spec_from_parameters(p)
    big, info = pipeline.ensemble_votes(
        p["teacher_counts"],
        spec,
        data="real",
        subset="big",
        min_pool=p["min_pool"],
        curve_clips=p["curve_clips"],
        seed=p["seed"],
        device=p["device"],
    )
    return p, spec, big[max(p["teacher_counts"])][0], info  # seed 0's ensemble (the first of its one replicate)
