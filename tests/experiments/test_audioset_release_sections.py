"""Notebook 05's sections: the grouped parameters the notebook and its configs share, spread into the sections'
names, and bad groups refused in one line."""

from __future__ import annotations

import pandas as pd
import pytest

from pate_study.experiments.audioset import release_sections
from pate_study.experiments.audioset.release_claims.sweeps import sweep_record
from pate_study.tooling.notebook_runner.configs import effective_parameters


def _grouped():
    return {
        group: {key: f"{group}.{key}" for key in names} for group, names in release_sections.PARAMETER_GROUPS.items()
    }


def test_groups_are_spread_into_the_names_the_sections_read():
    flat = release_sections.flat_parameters({**_grouped(), "seed": 3})
    assert flat["seed"] == 3 and flat["student_seeds"] == "student_runs.seeds"
    assert flat["release_draws"] == "release_sweeps.draws" and flat["audit_samples"] == "audit.samples"
    assert not set(release_sections.PARAMETER_GROUPS) & set(flat)


@pytest.mark.parametrize(
    "broken",
    [{"student_runs": [1, 2]}, {"audit": {"sigmas": [0.3]}}, {"frontier": {**_grouped()["frontier"], "extra": 1}}],
)
def test_a_bad_group_is_refused_in_one_line_naming_it(broken):
    with pytest.raises(ValueError) as err:
        release_sections.flat_parameters({**_grouped(), **broken})
    (group,) = broken
    assert f"parameter {group}: expected a mapping with the keys" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("profile", ["smoke", "paper", "gpu"])
def test_every_profile_gives_every_group_its_keys(profile):
    flat = release_sections.flat_parameters(effective_parameters("05_audioset_multilabel", profile))
    assert flat["release_draws"] >= 1 and flat["target_protocol"].endswith(".yaml")


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
