"""Small log-space helpers (vectorised) used by the accountants.

Privacy bounds multiply tiny probabilities (q can be e^-300) and large
exponentials (e^{ε·order}); working with logarithms keeps them finite.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log1mexp"]


def log1mexp(x: np.ndarray | float) -> np.ndarray:
    """Return log(1 - exp(x)) for x <= 0, elementwise and numerically stable.

    Uses log(-expm1(x)) near 0 and log1p(-exp(x)) further away (Mächler 2012,
    "Accurately computing log(1 - exp(-|a|))"). Returns -inf at x = 0 and NaN
    for x > 0 (the caller masks those entries).
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        near = x > -0.6931471805599453
        out = np.where(near, np.log(-np.expm1(np.minimum(x, 0.0))), np.log1p(-np.exp(np.minimum(x, 0.0))))
    return np.where(x > 0, np.nan, out)
