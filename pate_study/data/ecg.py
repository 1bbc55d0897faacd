"""ECG heartbeats, MIT-BIH part of Kachuee et al. 2018 (5 classes N, S, V, F, Q; 187 samples at 125 Hz).

``load(data, *, seed, n_synthetic)`` returns :class:`Heartbeats`. Real data may be the mirror's
500 + 500 stratified sample: ``source.scale`` says so. Teachers' disjoint index sets come from
:func:`pate_study.learning.partitions.make_partitions` (MAKE 2021's 200 x 5,000 needs 1,000,000 beats; only
109,446 exist, so it refuses and names the largest feasible size).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from data_recipes.ecg_heartbeat import CLASS_NAMES, N_SAMPLES
from pate_study.data import DataSource, manifest_origin, read_manifest, resolve_source

NAME = "ecg-heartbeat"
#: class shares of mitbih_train.csv (N 72,471 / S 2,223 / V 5,788 / F 641 / Q 6,431 of 87,554)
TRAIN_CLASS_COUNTS = np.array([72471, 2223, 5788, 641, 6431])


@dataclass(frozen=True)
class Heartbeats:
    """X_*: float32 [n, 187] in [0, 1]; y_*: int64 [n] in 0..4 (class_names N, S, V, F, Q)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    class_names: tuple[str, ...]
    source: DataSource


def synthetic(n_train: int = 5000, n_test: int = 1250, *, seed: int = 0):
    """Beats with class-specific shapes (sums of Gaussian bumps, zero-padded after a random length)
    and the class balance of mitbih_train.csv. Returns (X_train, y_train, X_test, y_test)."""
    rng = np.random.default_rng(seed)
    p = TRAIN_CLASS_COUNTS / TRAIN_CLASS_COUNTS.sum()
    t = np.arange(N_SAMPLES)[None, :]
    # per class: (centre, width, height) of three bumps (P, QRS/R, T-like)
    shapes = np.array(
        [
            [[20, 6, 0.25], [5, 3, 0.9], [70, 12, 0.35]],
            [[12, 5, 0.30], [3, 3, 0.85], [55, 10, 0.30]],
            [[30, 12, 0.10], [10, 10, 0.95], [90, 15, 0.60]],
            [[25, 8, 0.15], [8, 6, 0.80], [80, 14, 0.50]],
            [[40, 20, 0.40], [15, 8, 0.60], [110, 20, 0.40]],
        ],
        dtype=float,
    )

    def make(n):
        y = rng.choice(5, size=n, p=p)
        s = shapes[y] * rng.normal(1.0, 0.08, size=(n, 3, 3))
        x = sum(s[:, k, 2:3] * np.exp(-0.5 * ((t - s[:, k, 0:1]) / s[:, k, 1:2]) ** 2) for k in range(3))
        x = x + rng.normal(0, 0.02, size=x.shape)
        length = rng.integers(100, N_SAMPLES + 1, size=n)
        x[t >= length[:, None]] = 0.0
        return np.clip(x, 0, 1).astype(np.float32), y.astype(np.int64)

    return (*make(n_train), *make(n_test))


def _balance(y: np.ndarray) -> str:
    return "/".join(f"{c} {int((y == i).sum()):,}" for i, c in enumerate(CLASS_NAMES))


def load(data: str = "auto", *, seed: int = 0, n_synthetic: tuple[int, int] = (5000, 1250)) -> Heartbeats:
    """Load the heartbeats (real full files, the mirror's sample, or the synthetic stand-in)."""
    folder = resolve_source(NAME, data)
    if folder is None:
        xtr, ytr, xte, yte = synthetic(*n_synthetic, seed=seed)
        src = DataSource(
            "synthetic",
            "MIT-BIH heartbeats",
            f"seed {seed}, {len(ytr):,} + {len(yte):,} beats, train {_balance(ytr)}",
            f"seed {seed}",
        )
        return Heartbeats(xtr, ytr, xte, yte, CLASS_NAMES, src)
    m = read_manifest(folder)
    arr = {k: np.load(folder / f"{k}.npy") for k in ("train_X", "train_y", "test_X", "test_y")}
    desc = f"{len(arr['train_y']):,} + {len(arr['test_y']):,} beats (train {_balance(arr['train_y'])})"
    src = DataSource("real", "MIT-BIH heartbeats (Kachuee 2018)", desc, m.get("scale", "full"), manifest_origin(m))
    return Heartbeats(arr["train_X"], arr["train_y"], arr["test_X"], arr["test_y"], CLASS_NAMES, src)
