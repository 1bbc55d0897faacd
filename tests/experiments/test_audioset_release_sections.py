"""Notebook 05's sections: the settings they read from its contract, and the records they write."""

from __future__ import annotations

import pandas as pd
import pytest

from pate_study.experiments.audioset import release_sections
from pate_study.experiments.audioset.release_claims.sweeps import sweep_record
from pate_study.experiments.audioset.release_config import MultilabelConfig
from pate_study.tooling.notebook_runner.configs import cell_and_config


@pytest.mark.parametrize("profile", ["smoke", "paper", "gpu"])
def test_every_profile_gives_the_sections_their_settings(profile):
    """The sections read notebook 05's contract by its own names (no flat renaming): every profile's settings build
    one, and the teacher settings the votes' cache key reads are its fields."""
    _, config = cell_and_config("05_audioset_multilabel", profile)
    assert config.release_sweeps.draws >= 1 and config.frontier.target_protocol.endswith(".yaml")
    kwargs = release_sections.ensemble_kwargs(config)
    assert {k: kwargs[k] for k in release_sections.TEACHER_SETTINGS} == {
        k: getattr(config, k) for k in release_sections.TEACHER_SETTINGS
    }
    assert kwargs["replicates"] == list(config.teacher_replicates.seeds)


def test_the_students_recipe_is_the_teachers_on_its_full_schedule():
    spec, student_spec = release_sections.teacher_recipes(MultilabelConfig())
    assert spec.steps == student_spec.steps == student_spec.eval_every == MultilabelConfig().teacher_steps
    assert student_spec.patience is None and spec.patience == MultilabelConfig().teacher_patience


def test_the_halving_ratio_reads_the_grid_value_of_a_computed_sigma():
    """A sigma_e computed on the way (0.1 + 1e-12, as replicate sweeps give it) is the grid's 0.1: the record of
    Fig 5.13 has its sigma 0.1 / 0.2 ratio instead of a KeyError."""
    rows = [
        {"sigma_e": sigma, "threshold": th, "epsilon": eps, "epsilon_data_independent": 10.0, "f1": 0.5}
        for th in ("0.2", "0.4", "adaptive")
        for sigma, eps in ((0.1 + 1e-12, 8.0), (0.2, 2.0))
    ]
    record = sweep_record(pd.DataFrame(rows), n_labels=5, kind="synthetic")
    assert record["privacy_cost_ratio_sigma01_to_sigma02_by_threshold"] == {"0.2": 4.0, "0.4": 4.0, "adaptive": 4.0}
