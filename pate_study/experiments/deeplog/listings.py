"""Visca (2021) Figs 4.1 and 4.2: where the published sequence listings sit in the HDFS files."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import pandas as pd


def token_edit_distance(a: Sequence[int], b: Sequence[int]) -> int:
    """Levenshtein distance between two token sequences (insertions, deletions, substitutions; Wagner-Fischer)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def runs_of(tokens: Sequence[int]) -> list[tuple[int, int]]:
    """Run-length encoding of a token sequence: ``[(token, run length), ...]`` in order."""
    out: list[tuple[int, int]] = []
    for t in tokens:
        if out and out[-1][0] == t:
            out[-1] = (t, out[-1][1] + 1)
        else:
            out.append((int(t), 1))
    return out


def shortened_run(printed: Sequence[int], file_row: Sequence[int]) -> tuple[int, int, int] | None:
    """``(token, length in the file, length printed)`` when the printed line is the file row with exactly one run of
    a repeated token printed shorter (e.g. "23 23 23" printed as "23 23"), else None."""
    a, b = runs_of(printed), runs_of(file_row)
    if len(a) != len(b) or [t for t, _ in a] != [t for t, _ in b]:
        return None
    changed = [(t, nb, na) for (t, na), (_, nb) in zip(a, b) if na != nb]
    return changed[0] if len(changed) == 1 and changed[0][2] < changed[0][1] else None


def run_length_counts(sessions: Sequence[np.ndarray], token: int) -> Counter:
    """How many runs of ``token`` of each length the sessions hold (length -> count)."""
    return Counter(n for s in sessions for t, n in runs_of(s) if t == token)


def locate_listing(
    published_rows: Sequence[dict], sessions: Sequence[np.ndarray], other: Sequence[np.ndarray]
) -> pd.DataFrame:
    """Where a published listing sits in a file: the block offset that matches most lines exactly, and per line
    the file row at that offset, exact match, token edit distance, and how often the line occurs anywhere in this
    file and in the other file."""
    text = [" ".join(map(str, s)) for s in sessions]
    rows_of: dict[str, list[int]] = {}
    for i, t in enumerate(text):
        rows_of.setdefault(t, []).append(i)
    other_count = Counter(" ".join(map(str, s)) for s in other)
    lines = [r["sequence"] for r in published_rows]
    offsets = Counter(row - i for i, line in enumerate(lines) for row in rows_of.get(line, []))
    # no published line in the file (e.g. the synthetic stand-in): compare with the first rows
    offset = max(offsets.items(), key=lambda kv: (kv[1], -kv[0]))[0] if offsets else 0
    out = []
    for i, line in enumerate(lines):
        row = offset + i
        ours = text[row] if 0 <= row < len(text) else ""
        out.append(
            {
                "line": i + 1,
                "paper": line,
                "file_row": row,
                "ours": ours,
                "exact": line == ours,
                "token_edit_distance": token_edit_distance(line.split(), ours.split()),
                "occurrences_in_file": len(rows_of.get(line, [])),
                "occurrences_in_other_file": other_count[line],
            }
        )
    return pd.DataFrame(out)
