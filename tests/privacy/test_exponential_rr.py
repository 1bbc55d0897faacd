"""Exponential mechanism, k-ary randomized response, exact finite ε and basic composition: exact small
cases, properties, sampling frequencies, and empirical audits that catch a broken scale."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pate_study.privacy import audit
from pate_study.privacy.mechanisms import (
    basic_composition,
    exponential_mechanism,
    exponential_mechanism_log_probs,
    finite_mechanism_epsilon,
    laplace_epsilon,
    randomized_response,
    randomized_response_log_probs,
    sample_log_probs,
)


def test_exponential_mechanism_exact_small_case():
    # u = (0, 1, 2), ε = 2, Δu = 1: weights exp(ε u / 2) = (1, e, e²)
    lp = exponential_mechanism_log_probs([0.0, 1.0, 2.0], epsilon=2.0, sensitivity=1.0)
    z = 1 + math.e + math.e**2
    np.testing.assert_allclose(np.exp(lp), [1 / z, math.e / z, math.e**2 / z], rtol=1e-12)


def test_exponential_mechanism_is_log_space_stable_and_vectorised():
    # huge ε·u would overflow exp(): the log-space form stays finite and puts all mass on the best output
    lp = exponential_mechanism_log_probs([[0.0, 1.0], [1.0, 0.0]], epsilon=[1e4, 1e4], sensitivity=1.0)
    assert np.all(np.isfinite(lp)) and np.exp(lp[0, 1]) == pytest.approx(1.0) and np.exp(lp[1, 0]) == pytest.approx(1.0)
    per_row = exponential_mechanism_log_probs(
        np.zeros((3, 4)) + np.arange(4), epsilon=[0.1, 1.0, 10.0], sensitivity=3.0
    )
    for row, eps in zip(per_row, [0.1, 1.0, 10.0]):
        np.testing.assert_allclose(row, exponential_mechanism_log_probs(np.arange(4.0), epsilon=eps, sensitivity=3.0))


def test_exponential_mechanism_epsilon_is_within_claim_and_tight_on_the_worst_case():
    rng = np.random.default_rng(0)
    u = rng.uniform(-1, 1, size=(6, 9))
    du = float(np.ptp(u, axis=0).max())
    for eps in (0.1, 1.0, 7.0):
        assert finite_mechanism_epsilon(exponential_mechanism_log_probs(u, epsilon=eps, sensitivity=du)) <= eps + 1e-12
    # the factor 2 is needed: on the worst-case table the exact ε approaches the claim
    worst = audit.worst_case_utility(10_000)
    exact = finite_mechanism_epsilon(exponential_mechanism_log_probs(worst, epsilon=1.0, sensitivity=1.0))
    assert 0.99 < exact <= 1.0
    broken = finite_mechanism_epsilon(exponential_mechanism_log_probs(worst, epsilon=2.0, sensitivity=1.0))
    assert broken > 1.9  # ε/Δu instead of ε/(2Δu): twice the claim


def test_sampling_matches_probabilities():
    lp = exponential_mechanism_log_probs([0.0, 1.0, 2.0], epsilon=2.0, sensitivity=1.0)
    draws = sample_log_probs(np.broadcast_to(lp, (200_000, 3)), 0)
    freq = np.bincount(draws, minlength=3) / draws.size
    np.testing.assert_allclose(freq, np.exp(lp), atol=4e-3)
    a = exponential_mechanism(np.zeros((5, 3)), epsilon=1.0, sensitivity=1.0, rng=3)
    b = exponential_mechanism(np.zeros((5, 3)), epsilon=1.0, sensitivity=1.0, rng=3)
    np.testing.assert_array_equal(a, b)


def test_randomized_response_exact_small_case():
    # k = 3, ε = ln 2: keep 2/(2 + 2) = 1/2, each other symbol 1/4
    p = np.exp(randomized_response_log_probs(3, math.log(2)))
    np.testing.assert_allclose(p, [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]], rtol=1e-12)
    # Warner's binary RR: keep with e^ε/(1 + e^ε)
    assert np.exp(randomized_response_log_probs(2, 1.0))[0, 0] == pytest.approx(math.e / (1 + math.e))
    for eps in (0.01, 1.0, 30.0):
        assert finite_mechanism_epsilon(randomized_response_log_probs(28, eps)) == pytest.approx(eps, rel=1e-12)
    assert randomized_response_log_probs(4, [0.5, 1.0]).shape == (2, 4, 4)


def test_randomized_response_sampling_frequencies():
    k, eps = 5, 1.0
    y = randomized_response(np.full(200_000, 2), k=k, epsilon=eps, rng=0)
    freq = np.bincount(y, minlength=k) / y.size
    np.testing.assert_allclose(freq, np.exp(randomized_response_log_probs(k, eps))[2], atol=4e-3)


def test_finite_mechanism_epsilon_exact_cases():
    assert finite_mechanism_epsilon(np.log([[0.5, 0.5], [0.25, 0.75]])) == pytest.approx(math.log(2))
    assert (
        finite_mechanism_epsilon([[0.0, -np.inf], [math.log(0.5)] * 2]) == math.inf
    )  # an output impossible under one input
    assert finite_mechanism_epsilon([[math.log(0.5)] * 2 + [-np.inf]] * 2) == 0.0  # never-possible output ignored


def test_composition_and_laplace_epsilon():
    assert float(basic_composition([0.5, 0.25, 0.25])) == 1.0
    np.testing.assert_allclose(basic_composition(np.full((2, 20), 100.0)), [2000.0, 2000.0])  # Visca: 100 × 20
    assert float(laplace_epsilon(sensitivity=2.0, scale=4.0)) == 0.5
    assert float(laplace_epsilon(sensitivity=np.inf, scale=1.0)) == math.inf


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: exponential_mechanism_log_probs([0, 1], epsilon=0.0, sensitivity=1.0), "epsilon"),
        (lambda: exponential_mechanism_log_probs([0, 1], epsilon=1.0, sensitivity=0.0), "sensitivity"),
        (lambda: exponential_mechanism_log_probs([0, np.nan], epsilon=1.0, sensitivity=1.0), "utility"),
        (lambda: randomized_response_log_probs(1, 1.0), "k"),
        (lambda: randomized_response([0, 3], k=3, epsilon=1.0, rng=0), "values"),
        (lambda: randomized_response([0], k=3, epsilon=1.0, rng=None), "rng"),
        (lambda: laplace_epsilon(sensitivity=1.0, scale=0.0), "scale"),
        (lambda: basic_composition([-1.0]), "epsilons"),
    ],
)
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.slow
@pytest.mark.parametrize(
    "fn", [audit.audit_randomized_response, audit.audit_exponential_mechanism], ids=lambda f: f.__name__
)
def test_audit_passes_the_mechanism_and_catches_a_broken_scale(fn):
    ok = fn(seed=0)
    broken = fn(seed=0, noise_scale_factor=0.5)
    assert 0 < ok.epsilon_lower <= ok.claimed_epsilon and not ok.violation
    assert broken.violation and broken.epsilon_lower > broken.claimed_epsilon


def test_audit_catches_a_custom_rr_that_ignores_k():
    # a plausible bug: keep-probability e^ε/(e^ε + 1) (binary RR) used for k symbols
    def binary_keep(x, k, eps, gen):
        keep = gen.random(x.shape) < math.exp(eps) / (math.exp(eps) + 1)
        return np.where(keep, x, (x + gen.integers(1, k, x.shape)) % k)

    result = audit.audit_randomized_response(0.5, k=8, mechanism=binary_keep, seed=0)
    assert result.violation
