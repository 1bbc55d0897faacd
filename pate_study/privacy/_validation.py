"""Input validation shared by the privacy modules.

Every public function of ``pate_study.privacy`` checks its inputs at the
boundary with these helpers, so that a bad value raises a ``ValueError`` whose
message names the parameter and says what was expected: its parameters through the constraints it declares
(:func:`pate_study.privacy._boundary.constrained`, checked once where the call enters the library), its data
arrays (votes, vote fractions, orders) in its body, against their shapes. Nothing here computes
privacy; it only turns user input into clean numpy arrays.

Where a quantity has a range, the range is written once, in :data:`PARAMETER_CONSTRAINTS` (one declarative
table, in the manner of scikit-learn's ``_parameter_constraints``): the library's checks below and the command
line's flags (:mod:`pate_study.privacy.__main__`) both read it, so they accept and refuse the same values.
"""

from __future__ import annotations

import dataclasses
import errno
import math
import numbers
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from data_recipes.npyfile import load_npy
from data_recipes.votes import check_counts as _check_counts_values
from data_recipes.votes import check_n_queries as _check_positive_integer
from data_recipes.votes import check_row_totals, numeric_2d

__all__ = [
    "Interval",
    "PARAMETER_CONSTRAINTS",
    "PARAMETER_KINDS",
    "MAX_COUNT",
    "MAX_VOTE_TOTAL",
    "check_parameter",
    "number_text",
    "as_generator",
    "check_positive",
    "check_noise_scale",
    "check_delta",
    "check_probability",
    "check_counts",
    "check_vote_totals_fit",
    "check_row_totals",
    "check_path_resolves",
    "check_threshold",
    "check_threshold_value",
    "check_fixed_threshold",
    "check_threshold_number",
    "warn_threshold_range",
    "ThresholdRangeWarning",
    "load_votes_file",
    "check_fractions",
    "check_orders",
    "check_n_queries",
    "check_choice",
]


@dataclasses.dataclass(frozen=True)
class Interval:
    """The values a real (or integer) parameter may take: ``low`` to ``high``, each end included or not.

    ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"`` (scikit-learn's ``Interval`` convention);
    ``what`` names the quantity in messages ("a noise scale"), ``why`` says where the ends come from.
    """

    low: float
    high: float
    what: str
    why: str = ""
    closed: str = "both"
    integer: bool = False

    def text(self) -> str:
        """The interval as printed in messages, e.g. ``[1e-150, 1e150]`` or ``the open interval (0, 1)``."""
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        span = f"{left}{number_text(self.low)}, {number_text(self.high)}{right}"
        return f"the open interval {span}" if self.closed == "neither" else span

    def contains(self, value: float) -> bool:
        """Whether a finite ``value`` lies in the interval (its ends included as ``closed`` says)."""
        above = value >= self.low if self.closed in ("both", "left") else value > self.low
        below = value <= self.high if self.closed in ("both", "right") else value < self.high
        return above and below

    def problem(self, value: Any) -> str | None:
        """``None`` when ``value`` is accepted, else what was expected and what came (no parameter name)."""
        expected = f"expected {self.what} in {self.text()}" + (f" ({self.why})" if self.why else "")
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, (str, bytes, bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
            return f"{expected}, got {value!r}"
        if self.integer and not (
            isinstance(value, (numbers.Integral, np.integer)) or (isinstance(value, float) and value.is_integer())
        ):
            return f"{expected}, got {value!r} (not an integer)"
        if not self.integer and not math.isfinite(float(value)):
            return f"{expected}, got {value!r}"
        number = int(value) if self.integer else float(value)
        return None if self.contains(number) else f"{expected}, got {number_text(value)}"

    def check(self, name: str, value: Any) -> float | int:
        """Return ``value`` as a float (an int when ``integer``); a ValueError naming ``name`` when refused."""
        problem = self.problem(value)
        if problem is not None:
            raise ValueError(f"{name}: {problem}")
        return int(value) if self.integer else float(value)


def number_text(value: Any) -> str:
    """A number for a one-line message: ``%g`` for floats, the digits of integers below 10^12, and larger
    integers in scientific notation (a 300-digit integer is ``1e+300``, not 300 digits; exact ints of any size,
    also past the float range)."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = int(value)
        if abs(value) < 10**12:
            return str(value)
        exponent = int(math.log10(abs(value)))
        mantissa = round(abs(value) / 10**exponent, 5)  # int / int: a correctly rounded float, any size
        if mantissa >= 10:
            mantissa, exponent = mantissa / 10, exponent + 1
        elif mantissa < 1:
            mantissa, exponent = mantissa * 10, exponent - 1
        return f"{'-' if value < 0 else ''}{mantissa:.6g}e+{exponent}"
    return f"{float(value):g}" if isinstance(value, (numbers.Real, np.number)) else repr(value)


#: Counts (queries, labels, teachers) are at most the largest double, about 1.8e308: every accountant turns them
#: into floats, and a larger int cannot be converted (OverflowError).
MAX_COUNT = int(sys.float_info.max)

#: A row total of vote counts (the number of teachers) stays below 2**53, where every integer is exact in double
#: precision: the accountants compare and subtract counts as float64, so ties and gaps must be exact.
MAX_VOTE_TOTAL = 2**53

#: One table for every ranged quantity, read by the library's checks and by the command line's flags.
PARAMETER_CONSTRAINTS: dict[str, Interval] = {
    # σ² and 1/σ² (the RDP slopes α·Δ²/(2σ²) of Mironov 2017, Prop. 7) must be finite, normal floats;
    # outside it the accountants would divide by an underflowed zero or square an overflow.
    "noise_scale": Interval(1e-150, 1e150, "a noise scale", "σ² and 1/σ² must be finite"),
    # LNMax adds Lap(1/γ); the moments accountant (Papernot et al. 2017, Theorem 3) uses 2γ²λ(λ+1) and e^{2γ}.
    "gamma": Interval(1e-100, 1e5, "the LNMax inverse noise scale γ", "where the accountants compute without overflow"),
    "threshold": Interval(-1e100, 1e100, "a threshold", "where the accountants compute without overflow"),
    # The Gaussian mechanism's μ = Δ₂/σ (Dong, Roth & Su 2019): its exact profile's ε grows like μ²/2.
    "gaussian_mu": Interval(0.0, 1e150, "a Gaussian mechanism's μ = Δ₂/σ", "μ² must be finite", closed="right"),
    "delta": Interval(0.0, 1.0, "a number", closed="neither"),
    # an audit's δ (Monte Carlo lower bounds on ε at δ = 0 are pure-DP audits)
    "delta_or_zero": Interval(0.0, 1.0, "a number", closed="left"),
    "share": Interval(0.0, 1.0, "a share", closed="neither"),
    "count": Interval(
        1, MAX_COUNT, "a positive integer", "at most the largest double: counts become floats", integer=True
    ),
    "vote_total": Interval(
        1,
        MAX_VOTE_TOTAL,
        "a row total of votes, the number of teachers,",
        "below 2^53, where every integer is exact in double precision",
        closed="left",
        integer=True,
    ),
}

#: Which table entry each named parameter reads (the command line's flags use the same names without ``--``).
PARAMETER_KINDS: dict[str, str] = {
    "sigma": "noise_scale",
    "sigma1": "noise_scale",
    "sigma2": "noise_scale",
    "gumbel_scale": "noise_scale",
    "sigma_confidence": "noise_scale",
    "sigma_threshold": "noise_scale",
    "gamma": "gamma",
    "threshold": "threshold",
    "confidence_threshold": "threshold",
    "delta": "delta",
    "k_share": "share",
    "mu": "gaussian_mu",
    "n_queries": "count",
    "n_labels": "count",
    "n_teachers": "count",
    "first": "count",
    "top_n": "count",
}


def check_parameter(name: str, value: Any, kind: str | None = None) -> float | int:
    """Check ``value`` against the :data:`PARAMETER_CONSTRAINTS` entry ``kind`` (default: the one
    :data:`PARAMETER_KINDS` gives ``name``); return it as a float (an int for counts)."""
    return PARAMETER_CONSTRAINTS[kind or PARAMETER_KINDS[name]].check(name, value)


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
    raise ValueError(f"{name}: expected an int seed or a numpy.random.Generator, got {type(rng).__name__}")


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as a float, requiring it to be finite and > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a finite number > 0, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name}: expected a finite number > 0, got {value!r}")
    return v


NOISE_SCALE_RANGE = (PARAMETER_CONSTRAINTS["noise_scale"].low, PARAMETER_CONSTRAINTS["noise_scale"].high)


def check_noise_scale(name: str, value: Any) -> float:
    """Return a noise scale (Gaussian σ, a Gumbel or Laplace scale) as a float: finite, > 0, and within
    ``PARAMETER_CONSTRAINTS["noise_scale"]`` so that σ² and 1/σ² (the RDP slopes α·Δ²/(2σ²) of Mironov 2017,
    Prop. 7) are finite, normal floats; outside it the accountants would divide by an underflowed zero or square
    an overflow."""
    v = check_positive(name, value)
    return check_parameter(name, v, "noise_scale")


def check_n_queries(n_queries: Any, name: str = "n_queries") -> int:
    """Return a positive integer count (queries, labels, teachers) of at most ``MAX_COUNT`` (about 1.8e308), the
    range of ``PARAMETER_CONSTRAINTS["count"]``: every accountant turns counts into floats, and a larger int
    cannot be converted (OverflowError)."""
    n = _check_positive_integer(n_queries, name=name)
    return check_parameter(name, n, "count")


def check_delta(delta: Any, name: str = "delta") -> float:
    """Return ``delta`` as a float, requiring 0 < delta < 1 (``PARAMETER_CONSTRAINTS["delta"]``)."""
    if isinstance(delta, str):
        try:
            delta = float(delta)
        except ValueError:
            pass
    return check_parameter(name, delta, "delta")


def check_probability(name: str, value: Any) -> float:
    """Return ``value`` as a float in the open interval (0, 1)."""
    return check_delta(value, name=name)


class ThresholdRangeWarning(UserWarning):
    """A threshold lies outside the range of the quantity it is compared with (see :func:`check_threshold`)."""


def check_threshold_value(name: str, value: Any) -> Any:
    """Return a threshold as a finite float (or float array) within ``PARAMETER_CONSTRAINTS["threshold"]``; a
    non-finite or non-numeric value raises ValueError naming ``name``. What every threshold must be, whatever it is
    compared with (the range of that quantity is :func:`warn_threshold_range`'s)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a finite number, got {value!r}") from None
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    limits = PARAMETER_CONSTRAINTS["threshold"]
    beyond = (arr < limits.low) | (arr > limits.high)
    if np.any(beyond):
        limits.check(name, float(arr[beyond].flat[0]))
    return float(arr) if arr.ndim == 0 else arr


def check_threshold_number(name: str, value: Any) -> float:
    """Return a threshold that is one number (a count threshold such as τ voting's T/2) as a finite float within
    ``PARAMETER_CONSTRAINTS["threshold"]``; anything else refused naming ``name``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a finite number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    return PARAMETER_CONSTRAINTS["threshold"].check(name, number)


def check_fixed_threshold(name: str, value: Any) -> Any:
    """Return a release threshold fixed before the votes are seen (what the top-k vote accountants cover): finite
    numbers, one or one per query (1-D), within ``PARAMETER_CONSTRAINTS["threshold"]``; never a rule computed from
    the votes (``"adaptive"``) nor None, refused naming ``name`` without offering one."""
    if value is None or isinstance(value, str):
        raise ValueError(
            f"{name}: expected a fixed number (or one per query) chosen without the votes, got "
            f"{value!r}; a vote-dependent threshold is not covered by topk_epsilon"
        )
    try:
        th = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        th = np.array(np.nan)
    if th.ndim > 1 or not np.all(np.isfinite(th)):
        raise ValueError(f"{name}: expected a finite fixed number in [0, 1] (or one per query), got {value!r}")
    return check_threshold_value(name, value)


def warn_threshold_range(name: str, value: Any, low: float, high: float, what: str, stacklevel: int = 3) -> None:
    """Warn (:class:`ThresholdRangeWarning`) when a checked threshold (:func:`check_threshold_value`) lies outside
    ``[low, high]``, the range of the quantity ``what`` it is compared with.

    One rule for every thresholded aggregator (confident and interactive GNMax,
    Papernot et al. 2018 Algorithms 1-2; GNThreshold and Confident-GNThreshold,
    Muschiol 2021 Definitions 10-12): the threshold is compared with a noisy
    copy of a quantity that can only take values in ``[low, high]``.
    Outside that range the outcome no longer depends on the votes, only on the
    noise. That is allowed (Papernot et al. 2018 use T = 300 with 250 teachers
    and σ1 = 200 for SVHN), but rarely intended, so the warning says so.
    ``stacklevel`` as :func:`warnings.warn`'s, counted from the caller of this function.
    """
    arr = np.asarray(value, dtype=np.float64)
    outside = (arr < low) | (arr > high)
    if np.any(outside):
        v = float(arr[outside].flat[0])
        side = (
            ("below", "passes for every query unless the noise pulls it under")
            if v < low
            else ("above", "fails for every query unless the noise lifts it over")
        )
        warnings.warn(
            ThresholdRangeWarning(
                f"{name}={v:g} lies {side[0]} the range [{low:g}, {high:g}] of {what}: the check {side[1]}, "
                f"whatever the votes; choose {name} in [{low:g}, {high:g}] unless that is intended"
            ),
            stacklevel=stacklevel + 1,
        )


def check_threshold(name: str, value: Any, low: float, high: float, what: str) -> Any:
    """Return a threshold as a finite float (or float array) (:func:`check_threshold_value`); warn when it lies
    outside ``[low, high]``, the range of ``what`` (:func:`warn_threshold_range`)."""
    checked = check_threshold_value(name, value)
    warn_threshold_range(name, checked, low, high, what, stacklevel=3)
    return checked


def check_vote_totals_fit(votes: Any, name: str = "votes") -> None:
    """Refuse vote counts whose row totals reach ``MAX_VOTE_TOTAL`` (2^53), computed without overflow.

    A row total is the number of teachers (Papernot et al. 2017 §2.1); summed in int64, counts near 2^63 wrap
    around (``[2^63 - 1, 2^63 - 1, 3]`` sums to 1) and a nonsense file would pass as a small ensemble, and
    float64 counts near 1e308 sum to inf. The largest possible total is bounded first in Python integers (one
    pass, no copy); only when that bound reaches 2^53 are the totals summed in float64, which cannot wrap, and
    which decides "below 2^53" exactly for non-negative values (below 2^53 every partial sum is an exact
    integer; from 2^53 on, rounding never takes a sum back under it).
    Arrays that are not 1-D or 2-D numeric, or hold NaN, inf or negative values are left to :func:`check_counts`,
    which names those problems.
    """
    arr = np.asarray(votes)
    if arr.ndim not in (1, 2) or arr.size == 0 or arr.dtype.kind not in "iuf":
        return
    rows = arr.reshape(1, -1) if arr.ndim == 1 else arr
    limit = PARAMETER_CONSTRAINTS["vote_total"]
    if arr.dtype.kind in "iu" and int(rows.min()) >= 0 and int(rows.max()) * rows.shape[1] < limit.high:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        values = rows.astype(np.float64)
        countable = np.all(np.isfinite(values), axis=1) & np.all(values >= 0, axis=1)
        totals = values.sum(axis=1)
    too_large = np.flatnonzero(countable & ~(totals < limit.high))
    if too_large.size:
        row = int(too_large[0])
        raise ValueError(
            f"{name}: row {row} sums to {totals[row]:.6g} votes ({too_large.size} of {len(rows)} rows "
            f"reach 2^53); expected {limit.what} in {limit.text()} ({limit.why})"
        )


def check_counts(
    votes: Any, name: str = "votes", keep_integers: bool = False, n_teachers: int | None = None
) -> np.ndarray:
    """Validate vote counts ``int[n_queries, n_classes]`` (:func:`data_recipes.votes.check_counts`: finite,
    non-negative, integral, one total per row), after :func:`check_vote_totals_fit` has refused row totals
    from 2^53 on, which an int64 sum could wrap. Returns float64 (the integer array itself with
    ``keep_integers``)."""
    check_vote_totals_fit(votes, name)
    return _check_counts_values(votes, name=name, keep_integers=keep_integers, n_teachers=n_teachers)


def check_path_resolves(path: Any, flag: str) -> None:
    """Refuse a path that is a symbolic-link loop or a link to nothing, naming ``flag``, the path and the fix.

    Both would otherwise read as "no such file" although the name exists; a missing file is left to the reader
    of the file, which says so.
    """
    target = Path(path)
    try:
        os.stat(target)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(
                f"{flag} {path}: a symbolic link loop (the links point back at each other), so the path "
                "cannot be resolved to a file; pass the path of the file itself"
            ) from None
        if target.is_symlink():
            raise ValueError(
                f"{flag} {path}: a symbolic link to {os.readlink(target)}, which does not exist; "
                "pass the path of the file itself"
            ) from None


def load_votes_file(path: Any, *, flag: str = "--votes", n_teachers: int | None = None) -> np.ndarray:
    """Read a vote matrix from an ``.npy`` file and apply :func:`check_counts` to it.

    A symbolic-link loop or a dangling link is named as such (:func:`check_path_resolves`). The header is
    checked before anything is allocated (:func:`data_recipes.npyfile.load_npy`: not an .npy file, a pickle, a
    truncated file or a header claiming a huge shape are refused, never unpickled); then the values
    (non-negative integers, one total per row, below 2^53 and summed without overflow, ``n_teachers`` when
    known, a transposed orientation named with its fix). Every message names ``flag`` and the file.
    Returns the integer (or integral float) array as stored.
    """
    check_path_resolves(path, flag)
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
        raise ValueError(f"{name}: expected vote fractions in [0, 1], found range [{arr.min()}, {arr.max()}]")
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
