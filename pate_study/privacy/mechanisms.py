"""Noise mechanisms: Laplace and Gaussian noise, and the student's local Laplace mechanism.

For a student: a *mechanism* adds random noise to a computed value so that the
output reveals little about any one record. Two kinds are used in PATE:

* Laplace noise Lap(b), density exp(−|x|/b)/(2b). Added to a function with l1
  sensitivity Δ, scale b = Δ/ε gives (ε, 0)-DP (Dwork & Roth 2014, Theorem 3.6).
* Gaussian noise N(0, σ²), analysed with Rényi DP (Mironov 2017, Proposition 7).

The *local* mechanism of the MAKE paper (Yovine et al. 2021; Visca 2021 §4.2.2,
"trusted curator B") privatises each student query before it leaves the
student: x̃ = x + Lap(1/ρ)^d for a vector x with ‖x‖₁ = 1. Any two such vectors
are at l1 distance at most 2 (the diameter of the unit l1 sphere), so the
mechanism is (2ρ, 0)-DP in the local model. The sources use two
parameterisations: ρ (inverse scale; MAKE/Visca) and the scale b = 1/ρ itself
(Sosa 2021 calls the scale "student ε"). Both are accepted, but one must be
named explicitly.

All randomness comes from an explicit seed or ``numpy.random.Generator``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_generator, check_positive

__all__ = [
    "laplace_noise",
    "gaussian_noise",
    "laplace_mechanism",
    "gaussian_mechanism",
    "local_laplace_scale",
    "local_laplace_epsilon",
    "check_unit_l1",
    "local_laplace",
    "L1_DIAMETER",
]

#: l1 diameter of the unit l1 sphere {x : ‖x‖₁ = 1}: ‖e₁ − (−e₁)‖₁ = 2.
L1_DIAMETER = 2.0


def laplace_noise(shape: Any, scale: float, rng: Any) -> np.ndarray:
    """Draw i.i.d. Laplace noise Lap(scale) (density exp(−|x|/b)/(2b); Dwork & Roth 2014 Def. 3.1) of the given shape."""
    scale = check_positive("scale", scale)
    return as_generator(rng).laplace(0.0, scale, size=shape)


def gaussian_noise(shape: Any, sigma: float, rng: Any) -> np.ndarray:
    """Draw i.i.d. Gaussian noise N(0, σ²) of the given shape (the noise of GNMax, Papernot et al. 2018 §4.1)."""
    sigma = check_positive("sigma", sigma)
    return as_generator(rng).normal(0.0, sigma, size=shape)


def _finite_array(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite values, found NaN or inf")
    return arr


def laplace_mechanism(values: Any, *, sensitivity: float, epsilon: float, rng: Any) -> np.ndarray:
    """Laplace mechanism f(x) + Lap(Δ/ε)^k, (ε, 0)-DP for l1 sensitivity Δ (Dwork & Roth 2014, Def. 3.3, Thm 3.6)."""
    arr = _finite_array(values, "values")
    scale = check_positive("sensitivity", sensitivity) / check_positive("epsilon", epsilon)
    return arr + laplace_noise(arr.shape, scale, rng)


def gaussian_mechanism(values: Any, *, sigma: float, rng: Any) -> np.ndarray:
    """Gaussian mechanism f(x) + N(0, σ²)^k; (α, αΔ₂²/(2σ²))-RDP (Mironov 2017, Proposition 7)."""
    arr = _finite_array(values, "values")
    return arr + gaussian_noise(arr.shape, sigma, rng)


def local_laplace_scale(*, rho: float | None = None, scale: float | None = None) -> float:
    """Laplace scale b of the local mechanism from exactly one of ρ (b = 1/ρ) or b itself."""
    if (rho is None) == (scale is None):
        raise ValueError("rho/scale: expected exactly one of rho (inverse scale, MAKE paper) or scale (b = 1/rho)")
    if rho is not None:
        return 1.0 / check_positive("rho", rho)
    return check_positive("scale", scale)


def local_laplace_epsilon(*, rho: float | None = None, scale: float | None = None) -> float:
    """ε of the local mechanism on unit-l1 vectors: ε = diameter/b = 2ρ (Visca 2021 §4.2.3, "(2ρ, 0)-DP")."""
    return L1_DIAMETER / local_laplace_scale(rho=rho, scale=scale)


def check_unit_l1(x: Any, atol: float = 1e-6, name: str = "x") -> np.ndarray:
    """Validate a vector ``[d]`` or batch ``[n, d]`` of finite vectors with ‖x‖₁ = 1 (within ``atol``)."""
    arr = _finite_array(x, name)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name}: expected a vector [d] or a batch [n, d], got shape {arr.shape}")
    norms = np.abs(arr).sum(axis=-1)
    bad = np.abs(norms - 1.0) > atol
    if np.any(bad):
        worst = float(np.atleast_1d(norms)[np.atleast_1d(bad)][0])
        raise ValueError(
            f"{name}: expected unit l1 norm (sum of |x_i| = 1 within atol={atol}), found a norm of {worst:.6g}; "
            "l1-normalise the vectors first"
        )
    return arr


def local_laplace(
    x: Any,
    *,
    rho: float | None = None,
    scale: float | None = None,
    rng: Any,
    atol: float = 1e-6,
) -> np.ndarray:
    """Student-side local mechanism x + Lap(b)^d on unit-l1 vectors (MAKE paper / Visca 2021 §4.2.2–4.2.3).

    Give exactly one of ``rho`` (b = 1/ρ, the MAKE paper's parameter) or
    ``scale`` (b itself, Sosa 2021's "student ε"). The release is (2/b, 0)-DP
    in the local model because the l1 diameter of the unit l1 sphere is 2; see
    :func:`local_laplace_epsilon`.
    """
    b = local_laplace_scale(rho=rho, scale=scale)
    arr = check_unit_l1(x, atol=atol)
    return arr + laplace_noise(arr.shape, b, rng)
