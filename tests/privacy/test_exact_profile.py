"""Multi-label claims against the exact privacy profile of one query, enumerated on small instances.

Every claimed one-query ε must be at least the largest exact ε over all neighbouring vote-fraction pairs on
the 1/T grid, and every claimed RDP at least the largest exact Rényi divergence. The adaptive threshold
(Muschiol 2021 Definition 11) accounted as if fixed must fail this; the package's sound accounting of it and
the private adaptive-k release (after Zhu & Wang 2022) must pass.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from scipy.special import log_ndtr

from pate_study.privacy import adaptive_k, exact_profile, multilabel
from pate_study.privacy.aggregators import adaptive_thresholds
from pate_study.privacy.options import Accounting, ConfidenceCheck, ConfidenceRule

T, N_LABELS, SIGMA, DELTA = 5, 4, 0.3, 1e-3
FINE_ORDERS = np.linspace(1.01, 200.0, 4000)
RENYI_ORDERS = (1.5, 2.0, 4.0, 8.0)


@pytest.fixture(scope="module")
def pairs():
    return exact_profile.neighbouring_pairs(T, N_LABELS)


def _claim(threshold, bound="vote_fraction", n_labels=N_LABELS, n_teachers=T, sigma=SIGMA):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return multilabel.gnthreshold_epsilon(
            sigma=sigma,
            delta=DELTA,
            threshold=threshold,
            n_queries=1,
            n_labels=n_labels,
            bound=bound,
            n_teachers=n_teachers,
            accounting=Accounting(FINE_ORDERS),
        )


def _exact(logprobs, i, j):
    eps = exact_profile.exact_epsilon(logprobs[i], logprobs[j], DELTA)
    renyi = {lam: float(exact_profile.exact_renyi(logprobs[i], logprobs[j], lam).max()) for lam in RENYI_ORDERS}
    return float(eps.max()), renyi


def test_enumeration_is_a_distribution_and_pairs_are_symmetric(pairs):
    grid, i, j = pairs
    assert len(grid) == (T + 1) ** N_LABELS
    assert np.all(np.abs(grid[i] - grid[j]).max(axis=1) <= 1.0 / T + 1e-12)
    assert set(zip(i.tolist(), j.tolist())) == set(zip(j.tolist(), i.tolist()))
    lp = exact_profile.gnthreshold_output_logprobs(grid, 0.5, SIGMA)
    np.testing.assert_allclose(np.exp(lp).sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("threshold", [0.2, 0.5])
@pytest.mark.parametrize("bound", ["vote_fraction", "theorem12", "eq4_8_corrected", "gnmax_slope"])
def test_fixed_threshold_claims_cover_the_exact_profile(pairs, threshold, bound):
    grid, i, j = pairs
    eps, renyi = _exact(exact_profile.gnthreshold_output_logprobs(grid, threshold, SIGMA), i, j)
    claim = _claim(threshold, bound)
    assert claim.epsilon >= eps
    slope = multilabel.multilabel_slope(SIGMA, N_LABELS, bound, T)
    for lam, d in renyi.items():
        assert slope * lam >= d, (lam, d)


@pytest.mark.slow
def test_exact_values_of_the_reference_instance(pairs):
    # the numbers of the independent check: fixed th = 0.5 exact ε 3.75, adaptive 9.22, claim 5.86 (basic)
    grid, i, j = pairs
    assert _exact(exact_profile.gnthreshold_output_logprobs(grid, 0.5, SIGMA), i, j)[0] == pytest.approx(
        3.746, abs=2e-3
    )
    assert _exact(exact_profile.gnthreshold_output_logprobs(grid, "adaptive", SIGMA), i, j)[0] == pytest.approx(
        9.223, abs=2e-3
    )


@pytest.mark.slow
def test_adaptive_threshold_as_fixed_fails_and_the_sound_claim_passes(pairs):
    grid, i, j = pairs
    lp = exact_profile.gnthreshold_output_logprobs(grid, "adaptive", SIGMA)
    eps, renyi = _exact(lp, i, j)
    claim = _claim("adaptive")
    as_fixed = claim.details["epsilon_threshold_as_fixed"]
    assert as_fixed < eps  # the thesis's accounting under-reports
    assert as_fixed == pytest.approx(_claim(0.5).epsilon)
    assert claim.epsilon >= eps
    sound = multilabel.adaptive_threshold_slope(SIGMA, N_LABELS, "vote_fraction", T)
    as_fixed_slope = multilabel.multilabel_slope(SIGMA, N_LABELS, "vote_fraction", T)
    assert any(as_fixed_slope * lam < d for lam, d in renyi.items())
    for lam, d in renyi.items():
        assert sound * lam >= d
    # the worst pair moves the threshold a long way
    top, _ = exact_profile.worst_pairs(lp, i, j, DELTA, top=1)
    jump = abs(adaptive_thresholds(grid[i[top]]) - adaptive_thresholds(grid[j[top]]))[0]
    assert jump >= 0.3


def test_private_adaptive_k_claim_covers_the_exact_profile():
    t, n = 4, 3
    grid, i, j = exact_profile.neighbouring_pairs(t, n)
    rdp_slope = multilabel.multilabel_slope(SIGMA, n, "vote_fraction", t)
    sigma, b = adaptive_k.adaptive_k_params(rdp_slope, n, t)
    lp = exact_profile.adaptive_k_output_logprobs(grid, sigma, b, n_grid=4001)
    np.testing.assert_allclose(np.exp(lp).sum(axis=1), 1.0, atol=1e-6)
    eps, renyi = _exact(lp, i, j)
    claim = adaptive_k.adaptive_k_epsilon(
        sigma=sigma,
        gumbel_scale=b,
        delta=DELTA,
        n_teachers=t,
        n_queries=1,
        n_labels=n,
        accounting=Accounting(FINE_ORDERS),
    )
    assert claim.epsilon >= eps
    for lam, d in renyi.items():
        assert rdp_slope * lam >= d
    # halving both noises breaks the claim on the exact profile (the check can fail)
    lp_half = exact_profile.adaptive_k_output_logprobs(grid, sigma / 2, b / 2, n_grid=4001)
    assert _exact(lp_half, i, j)[0] > claim.epsilon


def _bernoulli_renyi(p, q, lam):
    return np.logaddexp(lam * np.log(p) + (1 - lam) * np.log(q), lam * np.log1p(-p) + (1 - lam) * np.log1p(-q)) / (
        lam - 1
    )


@pytest.mark.parametrize("bound", ["eq4_8", "eq4_8_corrected", "gnmax_slope"])
def test_capped_bounds_fall_back_outside_n_le_2t2(bound):
    # fixed threshold, independent labels: the exact RDP of the worst pair is n x the worst one-label divergence
    t, n, sigma, lam, th = 5, 161, 0.3, 2.0, 0.5
    m = np.arange(t + 1) / t
    lo, hi = m[:-1], m[1:]
    p, q = np.exp(log_ndtr((lo - th) / sigma)), np.exp(log_ndtr((hi - th) / sigma))
    exact = n * max(_bernoulli_renyi(p, q, lam).max(), _bernoulli_renyi(q, p, lam).max())
    assert exact == pytest.approx(46.3, abs=0.05)
    assert lam / sigma**2 < exact  # the printed cap alone is not a bound here
    _, cap, _ = multilabel.theorem6_params(sigma, n, bound, t)
    assert cap * lam >= exact
    assert multilabel.bound_validity(n, bound, t).startswith("fallback")
    assert multilabel.bound_validity(4, bound, t).startswith("valid")
    _, cap_ok, _ = multilabel.theorem6_params(sigma, 4, bound, t)
    assert cap_ok == pytest.approx(1 / sigma**2)


def test_adaptive_k_release_releases_k_labels_and_k_follows_the_gaps():
    m = np.tile([[0.9, 0.85, 0.8, 0.1, 0.05, 0.0]], (4000, 1))
    rel = adaptive_k.adaptive_k_release(m, sigma=0.05, gumbel_scale=0.05, rng=0)
    np.testing.assert_array_equal(rel.labels.sum(axis=1), rel.k)
    assert np.mean(rel.k == 3) > 0.9
    assert np.mean(rel.labels[rel.k == 3][:, :3].all(axis=1)) > 0.9


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"threshold": float("nan")}, "check.threshold"),
        ({"top_n": 0}, "check.top_n"),
        ({"top_n": -4}, "check.top_n"),
        ({"top_n": 2.5}, "check.top_n"),
        ({"rule": "all"}, "check.rule"),
    ],
)
def test_confidence_check_names_the_bad_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}: expected"):
        ConfidenceCheck(**{"threshold": 0.6, "sigma": 0.6, "rule": ConfidenceRule.PRINTED, **kwargs})


def test_confident_api_names_the_bad_parameter():
    args = dict(
        fractions=np.full((3, 5), 0.5),
        threshold=0.4,
        sigma=0.3,
        check=ConfidenceCheck(0.6, 0.6, ConfidenceRule.PRINTED),
        delta=1e-8,
    )
    with pytest.raises(ValueError, match=r"^threshold: expected"):
        multilabel.confident_gnthreshold_epsilon(**{**args, "threshold": float("nan")})
    with pytest.raises(ValueError, match=r"^threshold: expected"):
        multilabel.confident_gnthreshold_epsilon(**{**args, "threshold": "adaptiv"})
    with pytest.raises(ValueError, match=r"^check: expected a ConfidenceCheck"):
        multilabel.confident_gnthreshold_epsilon(**{**args, "check": (0.6, 0.6)})
    with pytest.raises(ValueError, match=r"^check: expected a ConfidenceCheck"):
        multilabel.confidence_logpr(args["fractions"], 0.4, {"threshold": 0.6})
    with pytest.raises(ValueError, match=r"^charge: expected a Charge"):
        multilabel.confident_gnthreshold_epsilon(**args, charge="realized")


def test_adaptive_k_params_match_the_target_slope_and_validate():
    sigma, b = adaptive_k.adaptive_k_params(0.4, 161, 50, k_share=0.25)
    assert adaptive_k.adaptive_k_rdp_slope(sigma, b, 161, 50) == pytest.approx(0.4, rel=1e-12)
    with pytest.raises(ValueError, match="^k_share: expected"):
        adaptive_k.adaptive_k_params(0.4, 161, 50, k_share=1.0)
    with pytest.raises(ValueError, match="^k_max: expected"):
        adaptive_k.gaps_with_sentinels(np.full((2, 3), 0.5), k_max=0)


def test_adaptive_k_epsilon_properties():
    eps = [
        adaptive_k.adaptive_k_epsilon(
            sigma=0.3,
            gumbel_scale=0.2,
            delta=1e-8,
            n_teachers=50,
            n_queries=n,
            n_labels=161,
            accounting=Accounting(multilabel.extended_orders()),
        ).epsilon
        for n in (1, 10, 100, 1000)
    ]
    assert np.all(np.diff(eps) > 0) and np.all(np.isfinite(eps))
    for sigma, b in ((1e-3, 1e-3), (1e3, 1e3)):  # finite at the extremes (huge noise: best order at the top edge)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            e = adaptive_k.adaptive_k_epsilon(
                sigma=sigma,
                gumbel_scale=b,
                delta=1e-8,
                n_teachers=50,
                n_queries=10,
                n_labels=161,
                accounting=Accounting(multilabel.extended_orders()),
            )
        assert np.isfinite(e.epsilon) and e.epsilon >= 0
    # data-dependent call (fractions) only counts queries and labels: the same value
    m = np.random.default_rng(0).random((10, 161))
    same = adaptive_k.adaptive_k_epsilon(
        sigma=0.3,
        gumbel_scale=0.2,
        delta=1e-8,
        n_teachers=50,
        fractions=m,
        accounting=Accounting(multilabel.extended_orders()),
    )
    assert same.epsilon == pytest.approx(eps[1], rel=1e-12)
