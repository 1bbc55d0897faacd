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

Discrete mechanisms (for the DeepLog synthetic sequences, Visca 2021 §4.1), all in log space:

* the exponential mechanism (McSherry & Talwar 2007, §3; Dwork & Roth 2014, Def. 3.4 and Thm 3.10):
  output r with probability ∝ exp(ε u(x, r) / (2Δu)); (ε, 0)-DP when Δu bounds |u(x, r) − u(x', r)| over
  neighbours x, x' and every r;
* k-ary randomized response (Warner 1965 for k = 2; Kairouz, Oh & Viswanath 2014 and Kairouz, Bonawitz &
  Ramage 2016, "k-RR"): keep the true symbol with probability e^ε/(e^ε + k − 1), else report one of the
  other k − 1 uniformly; (ε, 0)-DP in the local model, any two inputs being neighbours;
* :func:`finite_mechanism_epsilon`: the exact pure-DP ε of any mechanism with finitely many inputs and outputs
  (the largest log ratio of its transition matrix; Dwork & Roth 2014, Def. 2.4 with singleton events);
* :func:`basic_composition`: ε of a sequence of pure-DP mechanisms on the same input is at most the sum
  (Dwork & Roth 2014, Thm 3.16); it also bounds k changed symbols of one record (group privacy, Thm 2.2).

All randomness comes from an explicit seed or ``numpy.random.Generator``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import as_generator

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
    "laplace_epsilon",
    "exponential_mechanism_log_probs",
    "exponential_mechanism",
    "sample_log_probs",
    "randomized_response_log_probs",
    "randomized_response",
    "finite_mechanism_epsilon",
    "basic_composition",
]

#: l1 diameter of the unit l1 sphere {x : ‖x‖₁ = 1}: ‖e₁ − (−e₁)‖₁ = 2.
L1_DIAMETER = 2.0


@constrained(scale="positive")
def laplace_noise(shape: Any, scale: float, rng: Any) -> np.ndarray:
    """Draw i.i.d. Laplace noise Lap(scale) (density exp(−|x|/b)/(2b); Dwork & Roth 2014 Def. 3.1) of the given
    shape."""
    return as_generator(rng).laplace(0.0, scale, size=shape)


@constrained(sigma="noise_scale")
def gaussian_noise(shape: Any, sigma: float, rng: Any) -> np.ndarray:
    """Draw i.i.d. Gaussian noise N(0, σ²) of the given shape (the noise of GNMax, Papernot et al. 2018 §4.1)."""
    return as_generator(rng).normal(0.0, sigma, size=shape)


def _finite_array(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite values, found NaN or inf")
    return arr


@constrained(sensitivity="positive", epsilon="positive")
def laplace_mechanism(values: Any, *, sensitivity: float, epsilon: float, rng: Any) -> np.ndarray:
    """Laplace mechanism f(x) + Lap(Δ/ε)^k, (ε, 0)-DP for l1 sensitivity Δ (Dwork & Roth 2014, Def. 3.3, Thm 3.6)."""
    arr = _finite_array(values, "values")
    scale = sensitivity / epsilon
    return arr + laplace_noise(arr.shape, scale, rng)


@constrained(sigma="noise_scale")
def gaussian_mechanism(values: Any, *, sigma: float, rng: Any) -> np.ndarray:
    """Gaussian mechanism f(x) + N(0, σ²)^k; (α, αΔ₂²/(2σ²))-RDP (Mironov 2017, Proposition 7)."""
    arr = _finite_array(values, "values")
    return arr + gaussian_noise(arr.shape, sigma, rng)


@constrained(rho="positive", scale="positive")
def local_laplace_scale(*, rho: float | None = None, scale: float | None = None) -> float:
    """Laplace scale b of the local mechanism from exactly one of ρ (b = 1/ρ) or b itself."""
    if (rho is None) == (scale is None):
        raise ValueError("rho/scale: expected exactly one of rho (inverse scale, MAKE paper) or scale (b = 1/rho)")
    if rho is not None:
        return 1.0 / rho
    return scale


@constrained(rho="positive", scale="positive")
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


@constrained(rho="positive", scale="positive")
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


def laplace_epsilon(*, sensitivity: Any, scale: Any) -> np.ndarray:
    """ε = Δ₁/b of the Laplace mechanism f(x) + Lap(b)^k (Dwork & Roth 2014, Thm 3.6), elementwise.

    ``sensitivity`` may be ``inf`` (an unbounded query): then no finite ε holds and ``inf`` is returned.
    """
    delta1 = np.asarray(sensitivity, dtype=np.float64)
    b = np.asarray(scale, dtype=np.float64)
    if np.any(np.isnan(delta1)) or np.any(delta1 < 0):
        raise ValueError(f"sensitivity: expected numbers >= 0 (inf allowed), got {sensitivity!r}")
    if np.any(~np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"scale: expected finite numbers > 0, got {scale!r}")
    return delta1 / b


def _check_epsilon_array(epsilon: Any) -> np.ndarray:
    eps = np.asarray(epsilon, dtype=np.float64)
    if eps.size == 0 or np.any(~np.isfinite(eps)) or np.any(eps <= 0):
        raise ValueError(f"epsilon: expected finite numbers > 0, got {epsilon!r}")
    return eps


@constrained(sensitivity="positive")
def exponential_mechanism_log_probs(utility: Any, *, epsilon: Any, sensitivity: float) -> np.ndarray:
    """log Pr[r | x] = ε u(x, r)/(2Δu) − logsumexp_r' ε u(x, r')/(2Δu) (McSherry & Talwar 2007, §3;
    Dwork & Roth 2014, Def. 3.4), over the last axis of ``utility`` ``[..., n_outputs]``.

    ``epsilon`` broadcasts against the leading axes (one ε per row, or one for all). (ε, 0)-DP when
    ``sensitivity`` ≥ max_r |u(x, r) − u(x', r)| over neighbours (Dwork & Roth 2014, Thm 3.10).
    """
    u = _finite_array(utility, "utility")
    if u.ndim < 1 or u.shape[-1] < 1:
        raise ValueError(f"utility: expected [..., n_outputs] with n_outputs >= 1, got shape {u.shape}")
    du = sensitivity
    eps = _check_epsilon_array(epsilon)
    scores = np.expand_dims(eps, -1) * u / (2.0 * du) if eps.ndim else float(eps) * u / (2.0 * du)
    top = scores.max(axis=-1, keepdims=True)
    return scores - (top + np.log(np.exp(scores - top).sum(axis=-1, keepdims=True)))


def sample_log_probs(log_probs: Any, rng: Any) -> np.ndarray:
    """One index per row of ``log_probs [..., n_outputs]``, drawn exactly by the Gumbel-max trick
    (argmax of log p + Gumbel noise; Gumbel 1954, Maddison et al. 2014), so it never leaves log space."""
    lp = np.asarray(log_probs, dtype=np.float64)
    if lp.ndim < 1 or lp.shape[-1] < 1 or np.any(np.isnan(lp)):
        raise ValueError(f"log_probs: expected [..., n_outputs] without NaN, got shape {lp.shape}")
    gumbel = as_generator(rng).gumbel(size=lp.shape)
    return np.argmax(lp + gumbel, axis=-1)


@constrained(sensitivity="positive")
def exponential_mechanism(utility: Any, *, epsilon: Any, sensitivity: float, rng: Any) -> np.ndarray:
    """Sample the exponential mechanism (:func:`exponential_mechanism_log_probs`) once per row of ``utility``."""
    return sample_log_probs(exponential_mechanism_log_probs(utility, epsilon=epsilon, sensitivity=sensitivity), rng)


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or int(k) != k or int(k) < 2:
        raise ValueError(f"k: expected an integer number of symbols >= 2, got {k!r}")
    return int(k)


def randomized_response_log_probs(k: int, epsilon: Any) -> np.ndarray:
    """Transition matrix of k-ary randomized response in log space, ``[..., k, k]`` (row: input, column: output).

    log Pr[j | i] = ε − log(e^ε + k − 1) if j = i, else −log(e^ε + k − 1) (Kairouz, Bonawitz & Ramage 2016,
    Eq. 3; Warner 1965 for k = 2); log(e^ε + k − 1) is evaluated as logaddexp(ε, log(k − 1)).
    """
    k = _check_k(k)
    eps = _check_epsilon_array(epsilon)[..., None, None]
    log_norm = np.logaddexp(eps, np.log(k - 1.0))
    eye = np.eye(k, dtype=bool)
    return np.where(eye, eps - log_norm, -log_norm)


def randomized_response(values: Any, *, k: int, epsilon: float, rng: Any) -> np.ndarray:
    """k-RR applied independently to every entry of ``values`` (integers in 0..k−1): keep with probability
    e^ε/(e^ε + k − 1), else a uniform draw among the k − 1 other symbols (Kairouz et al. 2016)."""
    k = _check_k(k)
    eps = float(_check_epsilon_array(epsilon))
    x = np.asarray(values)
    if x.size and (not np.issubdtype(x.dtype, np.integer) or x.min() < 0 or x.max() >= k):
        raise ValueError(
            f"values: expected integers in 0..{k - 1}, got dtype {x.dtype} and range [{x.min()}, {x.max()}]"
        )
    gen = as_generator(rng)
    log_keep = eps - np.logaddexp(eps, np.log(k - 1.0))
    replace = np.log(gen.random(x.shape)) >= log_keep
    shift = gen.integers(1, k, size=x.shape)
    return np.where(replace, (x + shift) % k, x).astype(np.int64)


def finite_mechanism_epsilon(log_probs: Any) -> float:
    """Exact pure-DP ε of a mechanism with finite inputs and outputs, all inputs being neighbours:
    max over inputs x, x' and outputs o of log Pr[o | x] − log Pr[o | x'] (Dwork & Roth 2014, Def. 2.4;
    for a finite output space the singleton events are the worst). ``log_probs [n_inputs, n_outputs]``.

    Returns ``inf`` when some output is possible under one input and impossible under another.
    """
    lp = np.asarray(log_probs, dtype=np.float64)
    if lp.ndim != 2 or lp.shape[0] < 1 or lp.shape[1] < 1 or np.any(np.isnan(lp)) or np.any(lp > 1e-9):
        raise ValueError(
            f"log_probs: expected a [n_inputs, n_outputs] matrix of log probabilities, got shape {lp.shape}"
        )
    hi, lo = lp.max(axis=0), lp.min(axis=0)
    with np.errstate(invalid="ignore"):
        gap = np.where(np.isneginf(hi), 0.0, hi - lo)  # an output impossible under every input costs nothing
    return float(gap.max())


def basic_composition(epsilons: Any, axis: Any = -1) -> np.ndarray:
    """Σ ε_i along ``axis``: the basic composition bound for pure-DP mechanisms run on the same data
    (Dwork & Roth 2014, Thm 3.16); ``inf`` entries (no guarantee) propagate."""
    eps = np.asarray(epsilons, dtype=np.float64)
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilons: expected numbers >= 0 (inf allowed), got {epsilons!r}")
    return eps.sum(axis=axis)
