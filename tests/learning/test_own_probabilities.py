"""TeacherEnsemble.own_probabilities: member i on its own rows equals the matching block of probabilities()."""

import numpy as np
import pytest

from pate_study.learning.ensemble import EnsembleConfig, train_ensemble
from pate_study.learning.partitions import Partitions


@pytest.mark.parametrize("task, n_outputs", [("multiclass", 3), ("binary", 1)])
def test_own_rows_match_the_full_pass(task, n_outputs):
    rng = np.random.default_rng(0)
    X = rng.random((120, 6)).astype(np.float32)
    y = rng.integers(3 if task == "multiclass" else 2, size=120)
    config = EnsembleConfig(task=task, in_features=6, n_outputs=n_outputs, hidden=(8,), max_epochs=2, batch_size=16)
    ensemble = train_ensemble(X, y, Partitions(train=np.arange(120).reshape(4, 30)), config, seed=1, progress=False)
    rows = np.arange(40).reshape(4, 10)
    own = ensemble.own_probabilities(X[:40], rows)
    full = ensemble.probabilities(X[:40])
    for i in range(4):
        np.testing.assert_allclose(own[i], full[i, rows[i]], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="rows"):
        ensemble.own_probabilities(X[:40], rows[:2])
