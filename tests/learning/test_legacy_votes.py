"""The restructured training loop gives the votes of the code it replaced (same seeds -> same votes).

The reference arrays were recorded with ``pate_study/learning/ensemble.py`` at commit e7f53c9 by
``tests/learning/legacy_votes.py`` (ECG-like multi-class, web-like sparse binary with Youden thresholds,
and an early-stopping run with stack compaction). Any change to initialisation, batch order, the
forward/backward, Adam, early stopping, thresholds or querying changes them.
"""

import numpy as np
import pytest
from legacy_votes import OUTPUT, record  # tests/learning is on sys.path (pytest rootdir-relative import)

from pate_study.learning import ensemble


@pytest.fixture(scope="module")
def current():
    return record(ensemble)


@pytest.mark.parametrize("setting", ["ecg", "web", "early"])
def test_same_votes_as_the_replaced_code(current, setting):
    legacy = np.load(OUTPUT)
    keys = [k for k in legacy.files if k.startswith(setting + "_")]
    assert keys and sorted(keys) == sorted(k for k in current if k.startswith(setting + "_"))
    np.testing.assert_array_equal(current[f"{setting}_votes"], legacy[f"{setting}_votes"])
    np.testing.assert_array_equal(current[f"{setting}_epochs"], legacy[f"{setting}_epochs"])
    for name in ("probabilities", "own", "thresholds"):
        key = f"{setting}_{name}"
        if key in legacy.files:
            np.testing.assert_allclose(current[key], legacy[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_the_recorded_settings_are_not_trivial():
    """The votes pinned above vary across teachers and queries, and early stopping varied per teacher."""
    legacy = np.load(OUTPUT)
    for setting in ("ecg", "web", "early"):
        votes = legacy[f"{setting}_votes"]
        assert len(np.unique(votes)) > 1 and (votes != votes[:1]).any()
    assert len(set(legacy["early_epochs"].tolist())) > 1 and legacy["early_epochs"].max() < 25
    assert legacy["web_thresholds"].std() > 0
