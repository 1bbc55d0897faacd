"""Recipe: HDFS log-key sequences distributed with the DeepLog reimplementation (wuyifan18/DeepLog).

``hdfs_train`` (4,854 normal sessions) and ``hdfs_test_abnormal`` (16,837 abnormal sessions):
one session per line, space-separated integer log keys. Derived from Loghub HDFS_1
(Xu et al., SOSP 2009); DeepLog: Du et al., CCS 2017.

Prepared: ``{name}_keys.npy`` (all keys concatenated, int16) and ``{name}_offsets.npy``
(int64 [n + 1]); session i is ``keys[offsets[i]:offsets[i+1]]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from data_recipes.framework import Fetched, Recipe, SourceFile, Variant, atomic_save_npy, read_source_bytes, require

_BASE = "https://raw.githubusercontent.com/wuyifan18/DeepLog/master/data/"
FILES = (
    SourceFile(
        "hdfs_train",
        urls=(_BASE + "hdfs_train",),
        sha256="55cb65a39728b0d21ab95d0bb44a586e79e27993d7a799e2f42e8a5d7fb20d49",
    ),
    SourceFile(
        "hdfs_test_abnormal",
        urls=(_BASE + "hdfs_test_abnormal",),
        sha256="a1e6c2706bd4df4b068f4b5a06dc1425bfd8d90e68905998d51825dedc563dd0",
    ),
)
#: sessions = non-empty lines. The datasets README gives 4,854 / 16,837 (`wc -l`); the last line of each file
#: has no trailing newline, so the files hold one session more.
EXPECTED = {"hdfs_train": 4855, "hdfs_test_abnormal": 16838}


#: log keys are stored as int16: every key must lie in 0 .. MAX_KEY (the HDFS keys are 1..28)
MAX_KEY = 2**15 - 1


def parse_sequences(text: str, *, where: str = "<text>") -> list[np.ndarray]:
    """One int array per non-empty line of space-separated log keys.

    Every token must be ASCII digits (``0-9``; superscripts and other scripts' digits are refused, not read as
    numbers) with a value in 0 .. :data:`MAX_KEY`; otherwise MalformedDataError naming ``where`` (the file), the
    line number and the token.
    """
    seqs = []
    for i, line in enumerate(text.splitlines()):
        tokens = line.split()
        if not tokens:
            continue
        for token in tokens:  # str.isdigit alone would accept '²' and '٣' (Arabic-Indic 3)
            require(
                token.isascii() and token.isdigit(),
                f"{where}: line {i + 1}: token {token[:40]!r} is not a log key (ASCII digits 0-9 expected)",
            )
            require(
                len(token.lstrip("0")) <= 5 and int(token) <= MAX_KEY,
                f"{where}: line {i + 1}: log key {token[:40]} is out of range (0 to {MAX_KEY})",
            )
        seqs.append(np.array([int(t) for t in tokens], dtype=np.int64))
    require(len(seqs) > 0, f"{where}: no sequences")
    return seqs


def _prepare(fetched: Mapping[str, Fetched], out: Path, variant: Variant) -> dict:
    counts = {}
    for spec in variant.files:
        f = fetched[spec.name]
        seqs = parse_sequences(read_source_bytes(f.path).decode("utf-8", errors="replace"), where=str(f.path))
        expected = EXPECTED.get(spec.name)
        require(expected is None or len(seqs) == expected, f"{f.path}: expected {expected} sessions, got {len(seqs)}")
        lengths = np.array([len(s) for s in seqs])
        keys = np.concatenate(seqs)
        require(int(keys.max()) < 2**15, f"{f.path}: log key too large")
        atomic_save_npy(out / f"{spec.name}_keys.npy", keys.astype(np.int16))
        atomic_save_npy(out / f"{spec.name}_offsets.npy", np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
        counts[spec.name] = {
            "sessions": len(seqs),
            "min_len": int(lengths.min()),
            "max_len": int(lengths.max()),
            "keys": sorted(int(k) for k in np.unique(keys)),
        }
    return counts


def _verify(out: Path) -> None:
    for spec in FILES:
        keys, off = np.load(out / f"{spec.name}_keys.npy"), np.load(out / f"{spec.name}_offsets.npy")
        require(
            off[0] == 0 and off[-1] == len(keys) and (np.diff(off) > 0).all(), f"{out}: bad offsets for {spec.name}"
        )


def _measure(out: Path) -> dict[str, int]:
    """Sessions per prepared file."""
    return {
        spec.name: int(np.load(out / f"{spec.name}_offsets.npy", mmap_mode="r").shape[0]) - 1
        for spec in FILES
        if (out / f"{spec.name}_offsets.npy").is_file()
    }


RECIPE = Recipe(
    name="deeplog-hdfs",
    folder="deeplog-hdfs",
    version="1",
    title="DeepLog HDFS log-key sequences",
    variants=(Variant("full", FILES, "hdfs_train + hdfs_test_abnormal (hdfs_test_normal not included)", EXPECTED),),
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get="downloaded from github.com/wuyifan18/DeepLog (data/), or placed in $PATE_STUDY_MIRROR/deeplog-hdfs/",
    licence="MIT (repository); Loghub data for research",
)
