"""Input validation shared by the privacy modules.

Every public function of ``pate_study.privacy`` checks its inputs at the
boundary with these helpers, so that a bad value raises a ``ValueError`` whose
message names the parameter and says what was expected. Nothing here computes
privacy; it only turns user input into clean numpy arrays.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "as_generator",
    "check_positive",
    "check_delta",
    "check_probability",
    "check_counts",
    "check_fractions",
    "check_orders",
    "check_n_queries",
    "check_choice",
]


def as_generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from an int seed or a Generator.

    ``None`` is rejected on purpose: every random draw in the package must be
    reproducible from an explicit seed.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"{name}: expected a non-negative int seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise ValueError(
        f"{name}: expected an int seed or a numpy.random.Generator, got {type(rng).__name__}"
    )


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as a float, requiring it to be finite and > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a finite number > 0, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name}: expected a finite number > 0, got {value!r}")
    return v


def check_delta(delta: Any, name: str = "delta") -> float:
    """Return ``delta`` as a float, requiring 0 < delta < 1."""
    try:
        v = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number in the open interval (0, 1), got {delta!r}") from None
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name}: expected a number in the open interval (0, 1), got {delta!r}")
    return v


def check_probability(name: str, value: Any) -> float:
    """Return ``value`` as a float in the open interval (0, 1)."""
    return check_delta(value, name=name)


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


def check_counts(votes: Any, name: str = "votes", keep_integers: bool = False) -> np.ndarray:
    """Validate vote counts ``int[n_queries, n_classes]`` and return them as float64.

    A 1-D array is read as a single query. Counts must be finite, non-negative
    and integer-valued (float arrays holding integers are accepted).
    ``keep_integers=True`` returns an integer array as it is (no float copy; used internally).
    """
    arr = np.asarray(votes)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected a numeric array of vote counts, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(
            f"{name}: expected a 2-D array [n_queries, n_classes] of vote counts, got shape {arr.shape}"
        )
    if arr.size == 0 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected a non-empty array [n_queries, n_classes], got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool:
        # Integers are finite and integral: only the sign needs a pass (one pass instead of four).
        if np.issubdtype(arr.dtype, np.signedinteger) and arr.min() < 0:
            raise ValueError(f"{name}: expected non-negative vote counts, found {arr.min()}")
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
    return arr


def check_fractions(fractions: Any, name: str = "fractions", atol: float = 1e-9) -> np.ndarray:
    """Validate per-label vote fractions ``float[n_queries, n_labels]`` in [0, 1]."""
    arr = np.asarray(fractions)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected a numeric array of vote fractions, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(
            f"{name}: expected a 2-D array [n_queries, n_labels] of vote fractions, got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array [n_queries, n_labels], got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite vote fractions, found NaN or inf")
    if np.any(arr < -atol) or np.any(arr > 1 + atol):
        raise ValueError(
            f"{name}: expected vote fractions in [0, 1], found range [{arr.min()}, {arr.max()}]"
        )
    return np.clip(arr, 0.0, 1.0)


def check_orders(orders: Any, minimum: float, name: str = "orders", strict: bool = True) -> np.ndarray:
    """Validate a 1-D, strictly increasing grid of orders, each > ``minimum``.

    (``>= minimum`` when ``strict`` is False.)
    """
    arr = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array of orders, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite orders")
    bad = arr <= minimum if strict else arr < minimum
    if np.any(bad):
        rel = ">" if strict else ">="
        raise ValueError(f"{name}: expected every order {rel} {minimum}, found {arr[bad][0]}")
    if arr.size > 1 and np.any(np.diff(arr) <= 0):
        raise ValueError(f"{name}: expected a strictly increasing grid of orders")
    return arr


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Require ``value`` to be one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return value
