"""Empirical audits: lower bounds stay below the claims and catch a broken mechanism (noise scale halved)."""

from __future__ import annotations

import numpy as np
import pytest

from pate_study.privacy import audit

AUDITS = [audit.audit_lnmax, audit.audit_gnmax, audit.audit_local_laplace, audit.audit_gnthreshold]


@pytest.mark.parametrize("fn", AUDITS, ids=lambda f: f.__name__)
def test_correct_mechanism_passes_and_broken_is_caught(fn):
    ok = fn(seed=0)
    broken = fn(seed=0, noise_scale_factor=0.5)
    assert 0 < ok.epsilon_lower <= ok.claimed_epsilon and not ok.violation
    assert broken.violation and broken.epsilon_lower > broken.claimed_epsilon
    assert broken.claimed_epsilon == ok.claimed_epsilon
    row = broken.to_dict()
    assert row["violation"] is True and row["noise_scale_factor"] == 0.5


def test_audit_is_reproducible():
    a = audit.audit_lnmax(seed=4, n_samples=50_000)
    b = audit.audit_lnmax(seed=4, n_samples=50_000)
    assert a == b


def test_clopper_pearson_bounds():
    lo, hi = audit.clopper_pearson(np.array([0, 5, 10]), 10, 0.975)
    assert lo[0] == 0 and hi[2] == 1
    assert lo[1] < 0.5 < hi[1]
    # exact: P(Bin(10, lo) >= 5) = 0.025
    from scipy.stats import binom

    assert binom.sf(4, 10, lo[1]) == pytest.approx(0.025, rel=1e-6)


def test_generic_audit_on_randomized_response():
    # randomized response with p = e^ε/(1+e^ε) is exactly ε-DP
    eps = 1.0
    p = np.exp(eps) / (1 + np.exp(eps))

    def sampler(_, which, n, rng):
        truth = 1 if which == 0 else 0
        keep = rng.random(n) < p
        return np.where(keep, truth, 1 - truth)

    res = audit.audit_mechanism(sampler, ["rr"], claimed_epsilon=eps, n_samples=100_000, seed=1)
    assert 0.9 < res.epsilon_lower <= eps
    with pytest.raises(ValueError, match="candidates"):
        audit.audit_mechanism(sampler, [], claimed_epsilon=eps)
