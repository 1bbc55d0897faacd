"""Vote-count checks shared by the privacy accountants (:mod:`pate_study.privacy`) and the vote-file recipe
(:mod:`data_recipes.pate2018`), so that a vote file the recipe accepts is one the accountants accept.

Numpy only; imported by ``pate_study.privacy._validation`` (imports go from ``pate_study`` to ``data_recipes``,
never back).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["check_n_queries", "numeric_2d", "check_counts", "check_row_totals"]


def check_n_queries(n_queries: Any, name: str = "n_queries") -> int:
    """Return a positive integer number of queries."""
    if isinstance(n_queries, bool) or not isinstance(n_queries, (numbers.Integral, np.integer)):
        if isinstance(n_queries, float) and n_queries.is_integer():
            n_queries = int(n_queries)
        else:
            raise ValueError(f"{name}: expected a positive integer, got {n_queries!r}")
    if int(n_queries) <= 0:
        raise ValueError(f"{name}: expected a positive integer, got {n_queries!r}")
    return int(n_queries)


def numeric_2d(values: Any, name: str, what: str, columns: str) -> np.ndarray:
    """``values`` as a real numeric 2-D array ``[n_queries, columns]`` (a 1-D array is one query); the errors name
    ``name`` and say what was expected (``what``: "vote counts", "vote fractions")."""
    arr = np.asarray(values)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected a numeric array of {what}, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name}: expected real {what}, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array [n_queries, {columns}] of {what}, got shape {arr.shape}")
    return arr


def check_counts(
    votes: Any, name: str = "votes", keep_integers: bool = False, n_teachers: int | None = None
) -> np.ndarray:
    """Validate vote counts ``int[n_queries, n_classes]`` and return them as float64.

    A 1-D array is read as a single query. Counts must be finite, non-negative
    and integer-valued (float arrays holding integers are accepted), and every
    row must sum to the same positive total: each teacher casts one vote per
    query (Papernot et al. 2017 §2.1, 2018 §2), so a row total is the number of
    teachers. With ``n_teachers`` the total must equal it. Unequal totals whose
    columns all sum alike are reported as a transposed matrix, with the fix.
    ``keep_integers=True`` returns an integer array as it is (no float copy; used internally).
    """
    arr = numeric_2d(votes, name, "vote counts", "n_classes")
    if arr.size == 0 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected a non-empty array [n_queries, n_classes], got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool:
        # Integers are finite and integral: only the sign needs a pass (one pass instead of four).
        if np.issubdtype(arr.dtype, np.signedinteger) and arr.min() < 0:
            raise ValueError(f"{name}: expected non-negative vote counts, found {arr.min()}")
        check_row_totals(arr, name, n_teachers)
        if keep_integers and arr.dtype != bool:
            return arr
        return arr.astype(np.float64)
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite vote counts, found NaN or inf")
    if np.any(arr < 0):
        raise ValueError(f"{name}: expected non-negative vote counts, found {arr.min()}")
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name}: expected integer vote counts, found non-integer values")
    check_row_totals(arr, name, n_teachers)
    return arr


def check_row_totals(counts: np.ndarray, name: str = "votes", n_teachers: int | None = None) -> int:
    """Require every row of a non-negative 2-D count matrix to sum to one positive total; return it.

    One vote per teacher per query makes every row total the number of teachers
    (``n_teachers`` when given). When the rows disagree but the columns all sum
    to one value, the matrix was most likely saved transposed (classes x
    queries): the message says so and how to fix it.
    """
    totals = counts.sum(axis=1, dtype=np.float64 if counts.dtype.kind == "f" else np.int64)
    expected = totals[0] if n_teachers is None else check_n_queries(n_teachers, name="n_teachers")
    bad = np.flatnonzero(totals != expected)
    if bad.size == 0:
        if expected <= 0:
            raise ValueError(
                f"{name}: every row sums to 0 (no votes at all); expected each row to hold one "
                "query's vote counts over the classes"
            )
        return int(expected)
    columns = counts.sum(axis=0, dtype=totals.dtype)
    looks_transposed = (
        counts.shape[1] > 1
        and columns[0] > 0
        and bool(np.all(columns == columns[0]))
        and (n_teachers is None or columns[0] == expected)
    )
    first = int(bad[0])
    what = (
        f"every row must sum to the number of teachers, {int(expected)}"
        if n_teachers is not None
        else f"every row must sum to the same total, the number of teachers; row 0 sums to {expected:g}"
    )
    fix = (
        f"the matrix looks transposed ({counts.shape[0]} rows x {counts.shape[1]} columns, and every column "
        f"sums to {columns[0]:g}): pass votes.T, or re-save the file with numpy.save(path, votes.T)"
        if looks_transposed
        else "each row must be one query's vote counts over the classes; check how the file was made"
    )
    raise ValueError(
        f"{name}: {bad.size} of {len(totals)} rows have a different total ({what}, row {first} "
        f"to {totals[first]:g}); {fix}"
    )
