"""Notebook 05 reads notebook 04's ensembles from the votes cache only when it asks for the same teachers: its
teacher keys must equal 04's in the profiles where 05 runs on 04's data (paper, gpu): both read as their
contracts' fields with the profile's overrides in place."""

import pytest

from pate_study.tooling.notebook_runner.configs import effective_parameters

# 05's key -> 04's key: the recipe, the curve sample, the device and the shard plan all enter the votes' cache key
SAME = {
    "teacher_hidden": "hidden",
    "teacher_dropout": "dropout",
    "teacher_lr": "learning_rate",
    "teacher_batch_size": "batch_size",
    "teacher_steps": "steps",
    "teacher_eval_every": "eval_every",
    "teacher_patience": "patience",
    "teacher_sampler": "sampler",
    "teacher_mixup_alpha": "mixup_alpha",
    "curve_clips": "curve_clips",
    "device": "device",
    "backend": "backend",
    "teachers_per_task": "teachers_per_task",
    "seed": "seed",
    "data": "data",
    "teacher_counts": "teacher_counts",
    "teacher_replicates": ("replicates", "teachers"),
}


@pytest.mark.parametrize("profile", ["paper", "gpu"])
def test_05_asks_for_04s_teachers(profile):
    nb04 = effective_parameters("04_audioset_teachers", profile)
    nb05 = effective_parameters("05_audioset_multilabel", profile)

    def of04(key):  # a flat key, or (group, key) of a grouped parameter
        return nb04.get(key) if isinstance(key, str) else (nb04.get(key[0]) or {}).get(key[1])

    different = {k: (nb05.get(k), of04(v)) for k, v in SAME.items() if nb05.get(k) != of04(v)}
    assert not different, f"05's {profile} profile would train other teachers than 04's: {different}"
