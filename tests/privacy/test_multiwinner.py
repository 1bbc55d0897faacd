"""Binary, τ and Powerset voting (Dziedzic et al. 2023): hand-computed cases, equivalences, caps, bad input."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from privacy_testutils import theorem6_by_hand
from scipy.stats import norm

from pate_study.privacy import aggregators, rdp
from pate_study.privacy import multiwinner as mw
from pate_study.privacy.accounting import OrderAtGridEdgeWarning
from pate_study.privacy.options import Accounting, Charge, ConfidenceCheck, ConfidenceRule, Cost, TauComposition

GRID = np.arange(2.0, 65.0)


@pytest.fixture(autouse=True)
def _quiet_grid_edge():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        yield


def test_binary_unanimous_label_by_hand():
    # one query, one label, 50 teachers all positive, σ = 10: q = Φ̄(50/(√2·10)), Theorem 6 with s = 1/σ²
    spent = mw.binary_pate_epsilon(
        positive_votes=[[50]], n_teachers=50, sigma=10.0, delta=1e-8, accounting=Accounting(GRID)
    )
    q = norm.sf(50 / (math.sqrt(2) * 10))
    for alpha in (2.0, 5.0, 20.0):
        assert spent.at_order(alpha)[1] == pytest.approx(theorem6_by_hand(q, 1 / 100, alpha), rel=1e-9)
    assert spent.at_order(2.0)[1] < 2 / 100  # below the data-independent α/σ²


def test_binary_equals_two_class_gnmax_on_every_label():
    rng = np.random.default_rng(0)
    p = rng.integers(0, 21, size=(40, 7))
    ours = mw.binary_pate_epsilon(positive_votes=p, n_teachers=20, sigma=4.0, delta=1e-6, accounting=Accounting(GRID))
    pairs = np.stack([20 - p.ravel(), p.ravel()], axis=1)  # every label a 2-class GNMax query
    ref = rdp.gnmax_epsilon(sigma=4.0, delta=1e-6, votes=pairs, accounting=Accounting(GRID))
    np.testing.assert_allclose(ours.rdp_or_logmgf, ref.rdp_or_logmgf, rtol=1e-12)
    assert ours.epsilon == pytest.approx(ref.epsilon, rel=1e-12)


def test_binary_data_independent_by_hand():
    spent = mw.binary_pate_epsilon(n_queries=100, n_labels=5, sigma=8.0, delta=1e-5, accounting=Accounting(GRID))
    expected = np.min(100 * 5 * GRID / 64 + np.log(1e5) / (GRID - 1))
    assert spent.epsilon == pytest.approx(expected, rel=1e-12)
    conf = mw.binary_pate_epsilon(
        n_queries=100, n_labels=5, sigma=8.0, check=ConfidenceCheck(40, 10), delta=1e-5, accounting=Accounting(GRID)
    )
    assert conf.epsilon == pytest.approx(np.min(100 * 5 * GRID * (1 / 64 + 1 / 200) + np.log(1e5) / (GRID - 1)))
    assert conf.cost == "all_answered"


def test_confident_binary_realised_and_expected_costs():
    rng = np.random.default_rng(1)
    p = rng.integers(0, 31, size=(60, 6))
    check = ConfidenceCheck(threshold=24.0, sigma=4.0)
    kw = dict(positive_votes=p, n_teachers=30, sigma=5.0, check=check, delta=1e-6, accounting=Accounting(GRID))
    every = mw.binary_pate_epsilon(charge=Charge(Cost.REALIZED, answered=np.ones(p.shape, bool)), **kw)
    none = mw.binary_pate_epsilon(charge=Charge(Cost.REALIZED, answered=np.zeros(p.shape, bool)), **kw)
    plain = mw.binary_pate_epsilon(positive_votes=p, n_teachers=30, sigma=5.0, delta=1e-6, accounting=Accounting(GRID))
    # realised cost = check on every label + GNMax on the answered labels
    np.testing.assert_allclose(every.rdp_or_logmgf, none.rdp_or_logmgf + plain.rdp_or_logmgf, rtol=1e-12)
    costs = mw.binary_pate_costs(rng=3, **{k: v for k, v in kw.items()})
    expected, realised = costs["expected"], costs["realized"]
    assert np.all(none.rdp_or_logmgf <= expected.rdp_or_logmgf) and np.all(
        expected.rdp_or_logmgf <= every.rdp_or_logmgf
    )
    # the realised cost charges exactly the labels binary_pate answered with the same seed
    release = mw.binary_pate(p, 30, 5.0, 3, check=check)
    again = mw.binary_pate_epsilon(charge=Charge(answered=release.answered), **kw)
    assert np.array_equal(again.rdp_or_logmgf, realised.rdp_or_logmgf)
    assert realised.details["expected_answered_labels"] == release.n_answered_labels
    assert expected.details["expected_answered_labels"] == pytest.approx(
        norm.sf((24.0 - np.maximum(p, 30 - p)) / 4.0).sum(), rel=1e-12
    )


def test_clip_votes_by_hand_and_tau_sensitivity():
    # teacher 0 votes all 4 labels (norm 2, scaled by τ/2), teacher 1 one label (norm 1 ≤ τ: unchanged)
    votes = np.array([[[1, 1, 1, 1]], [[1, 0, 0, 0]]], dtype=bool)
    np.testing.assert_allclose(mw.clip_votes(votes, 1.0), [[1.5, 0.5, 0.5, 0.5]])
    np.testing.assert_allclose(mw.clip_votes(votes, 3.0), [[2.0, 1.0, 1.0, 1.0]])
    # replace-one sensitivity of the clipped sum: max ‖c(b) − c(b')‖₂ over all binary vectors is ≤ √2·τ,
    # attained once two disjoint vectors both reach norm τ (k = 8, τ = 1.5: three labels each)
    tau = 1.5
    for k, attained in ((4, False), (8, True)):
        vecs = np.array(list(itertools.product([0, 1], repeat=k)), dtype=bool)
        clipped = mw.clip_votes(vecs[None, :, :], tau)  # one teacher, every vector as a query
        dist = np.sqrt(((clipped[:, None, :] - clipped[None, :, :]) ** 2).sum(axis=2))
        assert dist.max() <= math.sqrt(2) * tau * (1 + 1e-12)
        assert (dist.max() == pytest.approx(math.sqrt(2) * tau)) == attained
    # hence α·(√2τ)²/(2σ²) = α·τ²/σ² per query
    spent = mw.tau_pate_epsilon(n_queries=10, tau=tau, sigma=3.0, delta=1e-5, accounting=Accounting(GRID))
    np.testing.assert_allclose(spent.rdp_or_logmgf, 10 * GRID * tau**2 / 9.0, rtol=1e-14)


def test_tau_union_bound_by_hand_and_cap():
    sums = np.array([[20.0, 0.5, 1.0]])
    sigma, th = 4.0, 10.0
    q = sum(norm.sf(abs(s - th) / sigma) for s in sums[0])
    assert mw.tau_logq(sums, th, sigma)[0] == pytest.approx(math.log(q), rel=1e-12)
    exact = 1 - np.prod([norm.cdf(abs(s - th) / sigma) for s in sums[0]])
    assert mw.tau_logq(sums, th, sigma, "exact")[0] == pytest.approx(math.log(exact), rel=1e-10)
    spent = mw.tau_pate_epsilon(
        clipped_sums=sums, threshold=th, tau=1.0, sigma=sigma, delta=1e-5, accounting=Accounting(GRID)
    )
    for alpha in (2.0, 3.0):
        assert spent.at_order(alpha)[1] == pytest.approx(theorem6_by_hand(q, 1 / 16, alpha), rel=1e-9)
    # every label at the threshold: the union bound is k/2 > 1; capped at 1 − 2^{-k}, never log q > 0
    at = np.full((2, 4), th)
    logq = mw.tau_logq(at, th, sigma)
    assert np.all(logq <= 0) and logq[0] == pytest.approx(math.log(1 - 2.0**-4))
    capped = mw.tau_pate_epsilon(
        clipped_sums=at, threshold=th, tau=1.0, sigma=sigma, delta=1e-5, accounting=Accounting(GRID)
    )
    indep = mw.tau_pate_epsilon(n_queries=2, tau=1.0, sigma=sigma, delta=1e-5, accounting=Accounting(GRID))
    assert capped.epsilon == indep.epsilon and capped.details["n_capped"] == 2


def test_powerset_equals_gnmax_over_the_explicit_powerset():
    rng = np.random.default_rng(2)
    k, t, n = 3, 9, 50
    votes = rng.random((t, n, k)) < rng.uniform(0.1, 0.9, size=(1, n, k))
    codes = (votes * (1 << np.arange(k))).sum(axis=2)  # [t, n] index of each teacher's set
    hist = np.stack([np.bincount(codes[:, i], minlength=2**k) for i in range(n)])
    for sigma in (1.0, 3.0):
        ours = mw.powerset_pate_epsilon(teacher_votes=votes, sigma=sigma, delta=1e-6, accounting=Accounting(GRID))
        ref = rdp.gnmax_epsilon(sigma=sigma, delta=1e-6, votes=hist, accounting=Accounting(GRID))
        np.testing.assert_allclose(ours.rdp_or_logmgf, ref.rdp_or_logmgf, rtol=1e-10)
    counts, sets = mw.powerset_counts(votes)
    again = mw.powerset_pate_epsilon(set_counts=counts, n_labels=k, sigma=3.0, delta=1e-6, accounting=Accounting(GRID))
    assert again.epsilon == ours.epsilon
    for i in range(n):
        occurring = counts[i] > 0
        got = sorted(zip(counts[i][occurring], map(tuple, sets[i][occurring].astype(int))))
        want = sorted(
            (int(c), tuple(int(b) for b in format(code, f"0{k}b")[::-1])) for code, c in enumerate(hist[i]) if c
        )
        assert got == want


@pytest.mark.slow
def test_powerset_release_matches_explicit_gnmax_in_distribution():
    # 3 teachers, k = 2: sets {0} twice and {0, 1} once; 4 candidates, two without votes
    n = 40_000
    votes = np.zeros((3, n, 2), dtype=bool)
    votes[:, :, 0] = True
    votes[2, :, 1] = True
    ours = mw.powerset_pate(votes, 1.5, rng=0).labels
    codes = ours[:, 0] * 1 + ours[:, 1] * 2
    freq = np.bincount(codes, minlength=4) / n
    explicit = aggregators.gnmax(np.tile([0, 2, 0, 1], (n, 1)), 1.5, rng=1).labels
    ref = np.bincount(explicit, minlength=4) / n
    np.testing.assert_allclose(freq, ref, atol=0.012)
    assert freq[0] > 0.01  # a set nobody voted for does win sometimes


def test_releases_follow_the_votes_with_little_noise():
    p = np.array([[50, 0, 30], [10, 45, 25]])
    rel = mw.binary_pate(p, 50, 1e-6, rng=0)
    assert np.array_equal(rel.labels, p > 25)
    s = np.array([[3.0, 0.0], [0.2, 2.0]])
    assert np.array_equal(mw.tau_pate(s, 1.0, 1e-6, rng=0).labels, s > 1.0)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.full((2, 3, 4), 0.5), "teacher_votes: expected binary votes"),
        (np.full((2, 3, 4), np.nan), "teacher_votes: expected 0/1 votes, found NaN"),
        (np.zeros((3, 4)), "teacher_votes: expected a non-empty 3-D array"),
    ],
)
def test_bad_teacher_votes(bad, match):
    with pytest.raises(ValueError, match=match):
        mw.powerset_pate_epsilon(teacher_votes=bad, sigma=1.0, delta=1e-5)
    with pytest.raises(ValueError, match=match):
        mw.clip_votes(bad, 1.0)


@pytest.mark.parametrize(
    "bad, match",
    [
        ([[3, 60]], r"positive_votes: expected integer counts of positive votes in \[0, n_teachers=50\]"),
        ([[3, np.nan]], "positive_votes: expected finite"),
        ([[0.5, 2]], "positive_votes: expected integer counts"),
        ([1, 2, 3], "positive_votes: expected a non-empty 2-D array"),
    ],
)
def test_bad_positive_votes(bad, match):
    with pytest.raises(ValueError, match=match):
        mw.binary_pate_epsilon(positive_votes=bad, n_teachers=50, sigma=1.0, delta=1e-5)


def test_bad_sums_and_parameters():
    with pytest.raises(ValueError, match="clipped_sums: expected finite non-negative"):
        mw.tau_pate_epsilon(clipped_sums=[[1.0, -2.0]], threshold=1, tau=1, sigma=1, delta=1e-5)
    with pytest.raises(ValueError, match="threshold: the data-dependent bound needs"):
        mw.tau_pate_epsilon(clipped_sums=[[1.0, 2.0]], tau=1, sigma=1, delta=1e-5)
    with pytest.raises(ValueError, match="^check: binary_pate_costs compares the costs of confident Binary voting"):
        mw.binary_pate_costs(positive_votes=[[1]], n_teachers=2, sigma=1, delta=1e-5)
    with pytest.raises(TypeError, match="threshold"):  # one spelling of the confidence check: a ConfidenceCheck
        mw.binary_pate_costs(positive_votes=[[1]], n_teachers=2, sigma=1, threshold=1, sigma_threshold=1, delta=1e-5)
    with pytest.raises(ValueError, match="^check.rule: Binary voting checks one count per label"):
        mw.binary_pate_epsilon(
            positive_votes=[[1]], n_teachers=2, sigma=1, check=ConfidenceCheck(1, 1, ConfidenceRule.PRINTED), delta=1e-5
        )
    with pytest.raises(ValueError, match="^check: expected a ConfidenceCheck"):
        mw.binary_pate(np.ones((1, 1), int), 2, 1.0, 0, check=(1, 1))
    with pytest.raises(ValueError, match="answered: expected a boolean mask of shape"):
        mw.binary_pate_epsilon(
            positive_votes=[[1, 2]],
            n_teachers=2,
            sigma=1,
            check=ConfidenceCheck(1, 1),
            charge=Charge(Cost.REALIZED, answered=[True, False]),
            delta=1e-5,
        )
    with pytest.raises(ValueError, match="n_queries/positive_votes: expected exactly one"):
        mw.binary_pate_epsilon(positive_votes=[[1]], n_queries=3, n_labels=1, n_teachers=2, sigma=1, delta=1e-5)


def _bernoulli_renyi(p, q, lam):
    return np.logaddexp(lam * np.log(p) + (1 - lam) * np.log(q), lam * np.log1p(-p) + (1 - lam) * np.log1p(-q)) / (
        lam - 1
    )


@pytest.mark.slow
def test_tau_per_label_composition_covers_the_exact_renyi_divergence_and_is_tighter():
    # every ordered vote matrix of T = 4 teachers on L = 3 labels; neighbours replace one teacher's vector
    t, k, tau, sigma, th = 4, 3, 1.2, 0.6, 2.0
    vectors = np.array(list(itertools.product((0, 1), repeat=k)), dtype=bool)
    orders = np.array([1.5, 2.0, 4.0, 8.0])
    worst_gap = 0.0
    for idx in itertools.product(range(len(vectors)), repeat=t - 1):
        rest = vectors[list(idx)]
        sums = np.array([mw.clip_votes(np.concatenate([[v], rest])[:, None, :], tau)[0] for v in vectors])
        p = norm.cdf((sums - th) / sigma)  # Pr[label on], per choice of the replaced teacher's vector
        for a in range(len(vectors)):
            exact = np.array(
                [max(_bernoulli_renyi(p[a], p[b], lam).sum() for b in range(len(vectors))) for lam in orders]
            )
            claim = mw._tau_per_label_total(sums[a][None], th, sigma, tau**2 / sigma**2, orders)
            assert np.all(claim >= exact - 1e-9), (sums[a], claim, exact)
            worst_gap = max(worst_gap, float(np.max(exact / claim)))
    assert worst_gap > 0.3  # the check is not vacuous: some pairs come close to the claim


def test_tau_per_label_is_tighter_than_joint_on_consensus_votes_and_union_bound_has_its_own_slope():
    rng = np.random.default_rng(0)
    b = rng.random((50, 300, 20)) < np.where(rng.random((1, 300, 20)) < 0.1, 0.97, 0.02)
    sums = mw.clip_votes(b, 2.0)
    kw = dict(tau=2.0, sigma=2.0, delta=1e-8, clipped_sums=sums, threshold=25.0)
    joint = mw.tau_pate_epsilon(**kw).epsilon
    per_label = mw.tau_pate_epsilon(**kw, composition="per_label").epsilon
    assert mw.tau_pate_epsilon(**kw, composition=TauComposition.PER_LABEL).epsilon == per_label
    independent = mw.tau_pate_epsilon(tau=2.0, sigma=2.0, delta=1e-8, n_queries=300).epsilon
    assert per_label < joint / 2 and per_label <= independent
    with pytest.raises(ValueError, match="composition"):
        mw.tau_pate_epsilon(**kw, composition="labels")
    # raw binary votes: L/(2σ²) per order with σ on the sum, L/σ² with σ on each of two counts (= τ = √L call)
    u_sum = mw.union_bound_epsilon(sigma=3.0, delta=1e-5, n_queries=10, n_labels=8, accounting=Accounting([2.0]))
    u_two = mw.union_bound_epsilon(
        sigma=3.0, delta=1e-5, n_queries=10, n_labels=8, noise="two_counts", accounting=Accounting([2.0])
    )
    via_tau = mw.tau_pate_epsilon(tau=8**0.5, sigma=3.0, delta=1e-5, n_queries=10, accounting=Accounting([2.0]))
    assert u_sum.at_order(2.0)[1] == pytest.approx(10 * 2.0 * 8 / (2 * 9.0), rel=1e-12)
    assert u_two.at_order(2.0)[1] == pytest.approx(via_tau.at_order(2.0)[1], rel=1e-12)
