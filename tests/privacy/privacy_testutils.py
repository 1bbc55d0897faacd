"""Helpers for the privacy tests (imported by test modules)."""

from __future__ import annotations

import decimal


def printed_tolerance(printed: str, rtol: float = 1e-6) -> float:
    """Absolute tolerance for a reference value given with limited digits.

    rtol 1e-6 when the printed value has enough digits, else half a unit in its
    last printed digit (e.g. "5.3026" -> 5e-5), so a rounded reference value is
    checked to exactly the precision it was published with.
    """
    d = decimal.Decimal(printed)
    half_ulp = 0.5 * 10.0 ** d.as_tuple().exponent
    return max(rtol * abs(float(d)), half_ulp)


def assert_printed(value: float, printed: str) -> None:
    """Assert ``value`` equals a printed reference value to its printed precision (at least rtol 1e-6)."""
    tol = printed_tolerance(printed)
    assert abs(float(value) - float(printed)) <= tol, f"{value!r} != {printed} (tol {tol:g})"
