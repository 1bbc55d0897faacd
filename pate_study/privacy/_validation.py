"""Input validation shared by the privacy modules.

Every public function of ``pate_study.privacy`` checks its inputs at the
boundary with these helpers, so that a bad value raises a ``ValueError`` whose
message names the parameter and says what was expected. Nothing here computes
privacy; it only turns user input into clean numpy arrays.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from data_recipes.npyfile import load_npy
from data_recipes.votes import check_counts, check_n_queries, check_row_totals, numeric_2d

__all__ = [
    "as_generator",
    "check_positive",
    "check_delta",
    "check_probability",
    "check_counts",
    "check_row_totals",
    "check_threshold",
    "ThresholdRangeWarning",
    "load_votes_file",
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


NOISE_SCALE_RANGE = (1e-150, 1e150)


def check_noise_scale(name: str, value: Any) -> float:
    """Return a Gaussian noise scale σ as a float: finite, > 0, and within ``NOISE_SCALE_RANGE`` so that σ² and
    1/σ² (the RDP slopes α·Δ²/(2σ²) of Mironov 2017, Prop. 7) are finite, normal floats; outside it the
    accountants would divide by an underflowed zero or square an overflow."""
    v = check_positive(name, value)
    low, high = NOISE_SCALE_RANGE
    if not low <= v <= high:
        raise ValueError(f"{name}: expected a noise scale in [{low:g}, {high:g}] (σ² and 1/σ² must be finite), got "
                         f"{value!r}")
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


class ThresholdRangeWarning(UserWarning):
    """A threshold lies outside the range of the quantity it is compared with (see :func:`check_threshold`)."""


def check_threshold(name: str, value: Any, low: float, high: float, what: str) -> Any:
    """Return a threshold as a finite float (or float array); warn when it lies outside ``[low, high]``.

    One rule for every thresholded aggregator (confident and interactive GNMax,
    Papernot et al. 2018 Algorithms 1-2; GNThreshold and Confident-GNThreshold,
    Muschiol 2021 Definitions 10-12): the threshold is compared with a noisy
    copy of a quantity (``what``) that can only take values in ``[low, high]``.
    Outside that range the outcome no longer depends on the votes, only on the
    noise. That is allowed (Papernot et al. 2018 use T = 300 with 250 teachers
    and σ1 = 200 for SVHN), but rarely intended, so a ThresholdRangeWarning says
    so; a non-finite or non-numeric value raises ValueError.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a finite number, got {value!r}") from None
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    outside = (arr < low) | (arr > high)
    if np.any(outside):
        v = float(arr[outside].flat[0])
        side = ("below", "passes for every query unless the noise pulls it under") if v < low else (
            "above", "fails for every query unless the noise lifts it over")
        warnings.warn(ThresholdRangeWarning(
            f"{name}={v:g} lies {side[0]} the range [{low:g}, {high:g}] of {what}: the check {side[1]}, "
            f"whatever the votes; choose {name} in [{low:g}, {high:g}] unless that is intended"), stacklevel=3)
    return float(arr) if arr.ndim == 0 else arr


def load_votes_file(path: Any, *, flag: str = "--votes", n_teachers: int | None = None) -> np.ndarray:
    """Read a vote matrix from an ``.npy`` file and apply :func:`check_counts` to it.

    The header is checked before anything is allocated (:func:`data_recipes.npyfile.load_npy`: not an
    .npy file, a pickle, a truncated file or a header claiming a huge shape are refused, never
    unpickled); then the values (non-negative integers, one total per row, ``n_teachers`` when known,
    a transposed orientation named with its fix). Every message names ``flag`` and the file.
    Returns the integer (or integral float) array as stored.
    """
    arr = load_npy(path, flag=flag)
    return check_counts(arr, name=f"{flag} {path}", keep_integers=True, n_teachers=n_teachers)


def check_fractions(fractions: Any, name: str = "fractions", atol: float = 1e-9) -> np.ndarray:
    """Validate per-label vote fractions ``float[n_queries, n_labels]`` in [0, 1]."""
    arr = numeric_2d(fractions, name, "vote fractions", "n_labels")
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
