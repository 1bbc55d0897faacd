"""Input checks at the boundary of every public function of :mod:`pate_study.reporting`'s verdict engine
(:mod:`~pate_study.reporting.uncertainty`, :mod:`~pate_study.reporting.claims`,
:mod:`~pate_study.reporting.verdicts`, :mod:`~pate_study.reporting.registry`).

Each helper turns a caller's value into a clean one or raises a ``ValueError`` whose one-line message names the
parameter and says what was expected (never numpy's or scipy's own message), and bounds every count before any loop
or allocation reads it (:data:`MAX_RESAMPLES`, :data:`MAX_CELLS`). Nothing here computes a statistic.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

#: The most bootstrap resamples (or draws) one call may ask for: 10^6 resamples already pin a percentile to its
#: fourth digit many times over; more is a typo, and would loop for hours.
MAX_RESAMPLES = 1_000_000
#: The most cells (resamples × examples) one call may allocate: 10^8 row indices are 0.8 GB.
MAX_CELLS = 100_000_000


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def count(value: Any, name: str, *, minimum: int = 1, maximum: int = MAX_RESAMPLES) -> int:
    """``value`` as an ``int`` in ``[minimum, maximum]`` (an integral float such as ``1000.0`` passes; ``True``,
    ``1.5``, NaN and strings do not)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={_shown(value)}: expected an integer, got {type(value).__name__}")
    if not (isinstance(value, numbers.Integral) or (math.isfinite(float(value)) and float(value).is_integer())):
        raise ValueError(f"{name}={_shown(value)}: expected an integer")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name}={value}: expected an integer >= {minimum}")
    if value > maximum:
        raise ValueError(f"{name}={value}: expected at most {maximum:,} (a larger count would run for hours)")
    return value


def seed(value: Any, name: str = "seed") -> int:
    """A random seed: a non-negative integer."""
    return count(value, name, minimum=0, maximum=2**63 - 1)


def number(value: Any, name: str, *, finite: bool = True, allow_nan: bool = False) -> float:
    """``value`` as a ``float`` (a real number, not a bool or a string); ``finite``: refuse ±inf; NaN refused
    unless ``allow_nan``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={_shown(value)}: expected a number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value) and not allow_nan:
        raise ValueError(f"{name}=nan: expected a number, not NaN")
    if finite and math.isinf(value):
        raise ValueError(f"{name}={value}: expected a finite number")
    return value


def level(value: Any, name: str = "level") -> float:
    """A confidence level: a number strictly between 0 and 1 (0.95, not 95)."""
    value = number(value, name)
    if not 0 < value < 1:
        raise ValueError(f"{name}={value:g}: expected a confidence level strictly between 0 and 1, e.g. 0.95")
    return value


def text(value: Any, name: str, *, empty: bool = False, what: str = "") -> str:
    """``value`` as a ``str`` (non-empty unless ``empty``)."""
    if not isinstance(value, str):
        raise ValueError(f"{name}={_shown(value)}: expected {what or 'a string'}, got {type(value).__name__}")
    if not empty and not value.strip():
        raise ValueError(f"{name}: expected {what or 'a non-empty string'}, got an empty string")
    return value


def names(value: Any, name: str) -> tuple[str, ...]:
    """A sequence of names (e.g. random sources) as a tuple of non-empty strings; a bare string is refused (it would
    be read as its characters)."""
    if isinstance(value, str):
        raise ValueError(f"{name}={_shown(value)}: expected a list of names, got one string (write [{value!r}])")
    if not isinstance(value, (Sequence, np.ndarray, set, frozenset)) and not hasattr(value, "__iter__"):
        raise ValueError(f"{name}={_shown(value)}: expected a list of names, got {type(value).__name__}")
    out = tuple(value)
    bad = [v for v in out if not isinstance(v, str) or not v.strip()]
    if bad:
        raise ValueError(f"{name}: expected non-empty strings, got {_shown(bad[0])}")
    return out


def array(
    value: Any,
    name: str,
    *,
    ndim: int | tuple[int, ...] | None = 1,
    min_size: int = 1,
    nan: bool = False,
    inf: bool = False,
) -> np.ndarray:
    """``value`` as a float64 array with ``ndim`` dimensions (``None``: any) and at least ``min_size`` elements;
    NaN refused unless ``nan`` (then documented as "dropped" or "ignored" by the caller), ±inf unless ``inf``."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name}: expected an array of numbers, got {type(value).__name__}")
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected an array of numbers (a list or numpy array of equal-length rows)") from None
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and a.ndim not in dims:
        want = " or ".join(f"{d}-d" for d in dims)
        raise ValueError(f"{name}: expected a {want} array, got shape {a.shape}")
    if a.size < min_size:
        raise ValueError(f"{name}: expected at least {min_size} value{'s' if min_size != 1 else ''}, got {a.size}")
    if not nan and np.isnan(a).any():
        raise ValueError(f"{name}: expected numbers, got NaN at position {int(np.flatnonzero(np.isnan(a.ravel()))[0])}")
    if not inf and np.isinf(a).any():
        raise ValueError(
            f"{name}: expected finite numbers, got {a.ravel()[np.isinf(a.ravel())][0]} at position"
            f" {int(np.flatnonzero(np.isinf(a.ravel()))[0])}"
        )
    return a


def labels(value: Any, name: str, size: int) -> np.ndarray:
    """One label per value (``size`` of them, 1-d), none missing (``None`` or NaN)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name}: expected one label per value, got {type(value).__name__}")
    a = np.asarray(value)
    if a.ndim != 1 or a.size != size:
        raise ValueError(f"{name}: expected one label per value ({size} in a 1-d array), got shape {a.shape}")
    if a.dtype == object and any(x is None for x in a):
        raise ValueError(f"{name}: expected a label for every value, got None")
    if a.dtype.kind == "f" and np.isnan(a).any():
        raise ValueError(f"{name}: expected a label for every value, got NaN")
    return a


def callable_(value: Any, name: str) -> Any:
    """A function."""
    if not callable(value):
        raise ValueError(f"{name}: expected a function, got {type(value).__name__}")
    return value


def flag(value: Any, name: str) -> bool:
    """A ``bool`` (not 0/1, not a string)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}={_shown(value)}: expected True or False")
    return bool(value)


def choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    """One of ``allowed`` exactly."""
    if value not in allowed:
        raise ValueError(f"{name}={_shown(value)}: expected one of {list(allowed)}")
    return value
