"""Helpers for the privacy tests (imported by test modules)."""

from __future__ import annotations

import decimal
import math


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


def theorem6_by_hand(q: float, s: float, alpha: float) -> float:
    """Papernot et al. 2018 Theorem 6 + Prop. 10 for a mechanism with RDP s·α, in plain floats (no log space)."""
    mu2 = math.sqrt(-math.log(q) / s)
    mu1 = mu2 + 1
    e1, e2 = s * mu1, s * mu2
    ok = (
        mu2 > 1
        and -math.log(q) > e2
        and math.log(q) <= (mu2 - 1) * e2 - mu2 * (math.log(1 + 1 / (mu1 - 1)) + math.log(1 + 1 / (mu2 - 1)))
    )
    if not ok or alpha >= mu1:
        return s * alpha
    a = (1 - q) / (1 - (q * math.exp(e2)) ** ((mu2 - 1) / mu2))
    b = math.exp(e1) / q ** (1 / (mu1 - 1))
    val = math.log((1 - q) * a ** (alpha - 1) + q * b ** (alpha - 1)) / (alpha - 1)
    return min(max(val, 0.0), s * alpha)
