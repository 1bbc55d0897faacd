"""DeepLog HDFS log-key sequences (wuyifan18/DeepLog ``hdfs_train`` and ``hdfs_test_abnormal``).

``load(data, *, seed)`` returns :class:`LogSequences`: ``normal`` and ``abnormal`` lists of int64
arrays (one session each). Synthetic stand-in: a Markov chain over the keys 2..26 that mimics
the block structure of normal sessions; abnormal sessions insert rare keys and repeats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pate_study.data import DataSource, manifest_origin, read_manifest, resolve_source

NAME = "deeplog-hdfs"


@dataclass(frozen=True)
class LogSequences:
    """normal / abnormal: list of int64 arrays of log keys."""

    normal: list[np.ndarray]
    abnormal: list[np.ndarray]
    source: DataSource


def _split(keys: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    return np.split(keys.astype(np.int64), offsets[1:-1])


def synthetic(n_normal: int = 4855, n_abnormal: int = 16838, *, seed: int = 0):
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
        return LogSequences(
            nor,
            abn,
            DataSource(
                "synthetic",
                "DeepLog HDFS",
                f"seed {seed}, {len(nor):,} normal + {len(abn):,} abnormal sessions",
                f"seed {seed}",
            ),
        )
    m = read_manifest(folder)
    seqs = {
        n: _split(np.load(folder / f"{n}_keys.npy"), np.load(folder / f"{n}_offsets.npy"))
        for n in ("hdfs_train", "hdfs_test_abnormal")
    }
    desc = f"{len(seqs['hdfs_train']):,} normal + {len(seqs['hdfs_test_abnormal']):,} abnormal sessions"
    return LogSequences(
        seqs["hdfs_train"],
        seqs["hdfs_test_abnormal"],
        DataSource("real", "DeepLog HDFS", desc, m.get("scale", "full"), manifest_origin(m)),
    )


# ----------------------------------------------------------------------------- model inputs
PAD = 0  #: index of the padding token; log keys are encoded as 1..K


@dataclass(frozen=True)
class Vocabulary:
    """The log keys a model knows, in order; key ``keys[i]`` is encoded as index ``i + 1`` (0 is padding).

    The log keys are the logging statements of the HDFS code, a public schema: building the vocabulary from
    the loaded files is a convenience, not a use of private content.
    """

    keys: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of log keys K (without the padding index)."""
        return len(self.keys)

    def encode(self, sequence, *, where: str = "sequence") -> np.ndarray:
        """Log keys -> indices 1..K; ValueError naming the first unknown key."""
        seq = np.asarray(sequence, dtype=np.int64)
        lookup = {k: i + 1 for i, k in enumerate(self.keys)}
        unknown = [int(k) for k in seq if int(k) not in lookup]
        if unknown:
            raise ValueError(
                f"{where}: unknown log key {unknown[0]} (vocabulary: {self.keys[0]}..{self.keys[-1]}, "
                f"{self.size} keys); build the vocabulary from data that contains it"
            )
        return np.array([lookup[int(k)] for k in seq], dtype=np.int64)

    def decode(self, indices) -> np.ndarray:
        """Indices 1..K -> log keys (padding must be stripped first)."""
        idx = np.asarray(indices, dtype=np.int64)
        if idx.size and (idx.min() < 1 or idx.max() > self.size):
            raise ValueError(
                f"indices: expected values in 1..{self.size} (0 is padding), got [{idx.min()}, {idx.max()}]"
            )
        return np.asarray(self.keys, dtype=np.int64)[idx - 1]


def build_vocabulary(*groups) -> Vocabulary:
    """The sorted distinct log keys of every sequence in ``groups`` (lists of int arrays)."""
    keys = sorted({int(k) for group in groups for seq in group for k in np.asarray(seq)})
    if not keys:
        raise ValueError("sequences: no log keys found; expected at least one non-empty sequence")
    return Vocabulary(tuple(keys))


@dataclass(frozen=True)
class PaddedSequences:
    """Right-padded index matrix ``tokens [n, max_len]`` (0 after each sequence's end) and ``lengths [n]``."""

    tokens: np.ndarray
    lengths: np.ndarray

    @property
    def mask(self) -> np.ndarray:
        """True on real tokens, False on padding (``padding_mask``)."""
        return padding_mask(self.lengths, self.tokens.shape[1])


def padding_mask(lengths, max_len: int) -> np.ndarray:
    """bool [n, max_len]: position t of row i is a real token iff t < lengths[i]."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.arange(int(max_len))[None, :] < lengths[:, None]


def pad_sequences(sequences, vocabulary: Vocabulary, max_len: int) -> PaddedSequences:
    """Encode and right-pad sequences of log keys to ``max_len`` (the model's limit).

    ValueError, naming the sequence, for an empty sequence, an unknown log key, or a sequence longer than
    ``max_len`` (raise ``max_len`` or filter long sessions with :func:`balanced_subset`).
    """
    if int(max_len) < 1:
        raise ValueError(f"max_len: expected a positive model limit, got {max_len!r}")
    tokens = np.zeros((len(sequences), int(max_len)), dtype=np.int64)
    lengths = np.zeros(len(sequences), dtype=np.int64)
    for i, seq in enumerate(sequences):
        n = len(seq)
        if n == 0:
            raise ValueError(f"sequence {i}: empty; every session needs at least one log key")
        if n > max_len:
            raise ValueError(
                f"sequence {i}: length {n} exceeds the model limit max_len={max_len}; raise max_len "
                "or drop longer sessions before padding"
            )
        tokens[i, :n] = vocabulary.encode(seq, where=f"sequence {i}")
        lengths[i] = n
    return PaddedSequences(tokens, lengths)


@dataclass(frozen=True)
class BalancedSubset:
    """``sequences`` (log keys) with ``labels`` (1 = abnormal), and how many long sessions were left out."""

    sequences: list
    labels: np.ndarray
    excluded_normal: int
    excluded_abnormal: int


def balanced_subset(normal, abnormal, n_total: int, *, max_len: int, seed: int) -> BalancedSubset:
    """n_total/2 normal and n_total/2 abnormal sessions drawn without replacement among those of length
    ≤ ``max_len`` (Visca 2021 §4.1: "a balanced subset of 8000 sequences"), shuffled together."""
    if int(n_total) < 2 or int(n_total) % 2:
        raise ValueError(f"n_total: expected an even number >= 2 of sequences, got {n_total!r}")
    half = int(n_total) // 2
    rng = np.random.default_rng(seed)
    picked, counts = [], []
    for group, name in ((normal, "normal"), (abnormal, "abnormal")):
        ok = [i for i, s in enumerate(group) if 0 < len(s) <= max_len]
        counts.append(len(group) - len(ok))
        if len(ok) < half:
            raise ValueError(
                f"n_total={n_total}: needs {half} {name} sessions of length 1..{max_len}, only {len(ok)} "
                "available; lower n_total or raise max_len"
            )
        picked.append([group[i] for i in rng.choice(ok, size=half, replace=False)])
    seqs = picked[0] + picked[1]
    labels = np.r_[np.zeros(half, np.int64), np.ones(half, np.int64)]
    order = rng.permutation(len(seqs))
    return BalancedSubset([seqs[i] for i in order], labels[order], counts[0], counts[1])
