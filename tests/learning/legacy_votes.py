"""Votes of the pre-restructuring training code (commit e7f53c9), recorded for the equivalence test.

``python tests/learning/legacy_votes.py`` loads ``pate_study/learning/ensemble.py`` as it was at ``LEGACY_COMMIT``
(from git history), trains the small ECG-like, web-like (sparse TF-IDF first layer) and
early-stopping settings below with it, and writes their votes, probabilities, thresholds and epochs
to ``tests/learning/data/legacy_votes.npz``. ``test_legacy_votes.py`` trains the same settings with the
current code and requires the same votes. The settings mirror the studies' smoke profiles:
ECG -- multi-class, dense, no validation or threshold split; web -- binary, sparse input, per-teacher
Youden thresholds; students -- ``own_probabilities`` on their own rows.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from pate_study.learning import partitions

ROOT = Path(__file__).resolve().parents[2]
LEGACY_COMMIT = "e7f53c9"
OUTPUT = Path(__file__).with_name("data") / "legacy_votes.npz"


def settings(ensemble) -> dict:
    """name -> (X, y, partitions, config, queries); ``ensemble`` is the module providing the classes (the
    legacy module drew its own partitions; today they come from :mod:`pate_study.learning.partitions`, same draw)."""
    make_partitions = getattr(ensemble, "make_partitions", None) or partitions.make_partitions
    rng = np.random.default_rng(0)
    # ECG-like: 5 classes, dense rows in [0, 1], 10 teachers x 25 rows (smoke profile sizes)
    centres = rng.random((5, 30))
    yc = rng.integers(0, 5, 600)
    Xc = np.clip(centres[yc] + 0.25 * rng.normal(size=(600, 30)), 0, 1).astype(np.float32)
    Xc /= Xc.sum(1, keepdims=True)
    ecg = (
        Xc[:400],
        yc[:400],
        make_partitions(400, 10, 25, seed=[0, 1]),
        ensemble.EnsembleConfig(
            task="multiclass", in_features=30, n_outputs=5, hidden=(32,), batch_size=32, max_epochs=20, lr=3e-3
        ),
        Xc[400:],
    )
    # web-like: sparse TF-IDF rows, 12 teachers x (60 train + 40 threshold), 5% ... 20% positives
    Xw = sp.random(1400, 50, density=0.12, random_state=2, format="csr", dtype=np.float32)
    Xw = sp.csr_matrix(Xw.multiply(1.0 / np.maximum(np.asarray(Xw.sum(1)), 1e-12))).astype(np.float32)
    score = np.asarray(Xw @ rng.normal(size=50)).ravel()
    yw = (score > np.quantile(score, 0.8)).astype(np.int64)
    web = (
        Xw[:1200],
        yw[:1200],
        make_partitions(1200, 12, 60, threshold_size=40, seed=[0, 1]),
        ensemble.EnsembleConfig(
            task="binary", in_features=50, hidden=(32,), batch_size=64, max_epochs=3, lr=3e-3, sparse_input=True
        ),
        Xw[1200:].toarray(),
    )
    # early stopping with stack compaction (validation split, patience 1, noisy labels)
    Xe = rng.normal(size=(900, 12)).astype(np.float32)
    ye = ((Xe @ rng.normal(size=12) > 0) ^ (rng.random(900) < 0.25)).astype(np.int64)
    early = (
        Xe[:700],
        ye[:700],
        make_partitions(700, 5, 80, val_size=30, threshold_size=20, seed=3),
        ensemble.EnsembleConfig(
            task="binary", in_features=12, hidden=(16, 8), batch_size=16, max_epochs=25, patience=1, lr=2e-2
        ),
        Xe[700:],
    )
    return {"ecg": ecg, "web": web, "early": early}


def record(ensemble) -> dict[str, np.ndarray]:
    """Train every setting with ``ensemble`` (seed 7) and collect what the test compares."""
    out = {}
    for name, (X, y, parts, config, queries) in settings(ensemble).items():
        ens = ensemble.train_ensemble(X, y, parts, config, seed=7, progress=False)
        votes = ensemble.query_ensemble(ens, queries)
        out[f"{name}_probabilities"] = votes.probabilities
        out[f"{name}_votes"] = votes.teacher_votes
        out[f"{name}_epochs"] = ens.epochs
        out[f"{name}_own"] = ens.own_probabilities(queries, np.arange(ens.n_teachers * 8).reshape(ens.n_teachers, 8))
        if ens.thresholds is not None:
            out[f"{name}_thresholds"] = ens.thresholds
    return out


def legacy_module():
    """``pate_study/learning/ensemble.py`` at ``LEGACY_COMMIT``, imported from git history."""
    source = subprocess.run(
        ["git", "show", f"{LEGACY_COMMIT}:pate_study/learning/ensemble.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "legacy_ensemble.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("legacy_ensemble", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    OUTPUT.parent.mkdir(exist_ok=True)
    np.savez_compressed(OUTPUT, **record(legacy_module()))
    print(f"wrote {OUTPUT}")
