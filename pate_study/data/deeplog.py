"""DeepLog HDFS log-key sequences (wuyifan18/DeepLog ``hdfs_train`` and ``hdfs_test_abnormal``).

``load(data, *, seed)`` returns :class:`LogSequences`: ``normal`` and ``abnormal`` lists of int64
arrays (one session each). Synthetic stand-in: a Markov chain over the keys 2..26 that mimics
the block structure of normal sessions; abnormal sessions insert rare keys and repeats.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import DataSource, manifest_origin, read_manifest, resolve_source

NAME = "deeplog-hdfs"


@dataclass(frozen=True)
class LogSequences:
    """normal / abnormal: list of int64 arrays of log keys."""

    normal: list[np.ndarray]
    abnormal: list[np.ndarray]
    source: DataSource


def _split(keys: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    return np.split(keys.astype(np.int64), offsets[1:-1])


def synthetic(n_normal: int = 4855, n_abnormal: int = 1000, *, seed: int = 0):
    """(normal, abnormal) lists of synthetic sessions, lengths 13..42 like hdfs_train."""
    rng = np.random.default_rng(seed)
    blocks = [[22], [5, 5, 5], [11, 9, 11, 9, 11, 9], [26, 26, 26], [23, 23, 23], [21, 21, 21]]

    def normal():
        seq = [k for b in blocks[:4] for k in b]
        seq += list(rng.choice([3, 4, 2], size=rng.integers(0, 20), p=[0.6, 0.3, 0.1]))
        seq += [k for b in blocks[4:] for k in b]
        return np.array(seq[:42], dtype=np.int64)

    def abnormal():
        s = list(normal())
        for _ in range(rng.integers(1, 4)):
            s.insert(int(rng.integers(1, len(s))), int(rng.choice([7, 8, 10, 12, 13, 14, 18, 19, 20, 25])))
        return np.array(s, dtype=np.int64)

    return [normal() for _ in range(n_normal)], [abnormal() for _ in range(n_abnormal)]


def load(data: str = "auto", *, seed: int = 0) -> LogSequences:
    """Load the sessions (real prepared arrays or the synthetic stand-in)."""
    folder = resolve_source(NAME, data)
    if folder is None:
        nor, abn = synthetic(seed=seed)
        return LogSequences(nor, abn, DataSource("synthetic", "DeepLog HDFS",
                                                 f"seed {seed}, {len(nor):,} normal + {len(abn):,} abnormal sessions",
                                                 f"seed {seed}"))
    m = read_manifest(folder)
    seqs = {n: _split(np.load(folder / f"{n}_keys.npy"), np.load(folder / f"{n}_offsets.npy"))
            for n in ("hdfs_train", "hdfs_test_abnormal")}
    desc = f"{len(seqs['hdfs_train']):,} normal + {len(seqs['hdfs_test_abnormal']):,} abnormal sessions"
    return LogSequences(seqs["hdfs_train"], seqs["hdfs_test_abnormal"],
                        DataSource("real", "DeepLog HDFS", desc, m.get("scale", "full"), manifest_origin(m)))
