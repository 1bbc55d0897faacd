"""Top-k vote release (pate_study.privacy.topk_vote): votes, sensitivity, accountant, exact profile, audit.

Checks, in the order of the package's standards: hand-computed votes; the sensitivity √(2·min(k, n − k))/T
found by enumerating every pair of neighbouring vote configurations; the accountant against the closed form
of the Gaussian mechanism's RDP (Mironov 2017 Prop. 7 + Prop. 3), against dp-accounting's RDP accountant and
its privacy-loss-distribution accountant; against the exact privacy profile of the released labels on small
instances (every outcome enumerated) and of the Gaussian mechanism (Balle & Wang 2018 Thm 8); an empirical
audit that catches a √k sensitivity; properties; bad input; the inputs fed to Binary / τ / Powerset voting.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from privacy_testutils import theorem6_by_hand
from scipy.stats import norm

from pate_study.privacy import aggregators, audit, exact_profile
from pate_study.privacy import multiwinner as mw
from pate_study.privacy import topk_vote as tv
from pate_study.privacy._validation import ThresholdRangeWarning
from pate_study.privacy.accounting import OrderAtGridEdgeWarning, account
from pate_study.privacy.options import Accounting, Charge, ConfidenceCheck, ConfidenceRule, Conversion, Cost

FINE = np.linspace(1.01, 200.0, 4000)
WIDE = np.concatenate([1.0 + np.logspace(-3, 0, 60)[:-1], np.linspace(2.0, 500.0, 2000)])


@pytest.fixture(autouse=True)
def _quiet_grid_edge():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        yield


def _probabilities(seed=0, shape=(7, 30, 9)):
    return np.random.default_rng(seed).random(shape)


# ------------------------------------------------------------------- votes


def test_topk_votes_by_hand_with_ties_to_the_lower_label():
    p = np.array([[[0.9, 0.1, 0.5, 0.5], [0.2, 0.2, 0.2, 0.2]], [[0.0, 0.3, 0.4, 1.0], [0.1, 0.7, 0.6, 0.0]]])
    votes = tv.topk_votes(p, 2)
    expected = np.array([[[1, 0, 1, 0], [1, 1, 0, 0]], [[0, 0, 1, 1], [0, 1, 1, 0]]], dtype=bool)
    np.testing.assert_array_equal(votes, expected)
    np.testing.assert_allclose(tv.topk_fractions(p, 2), [[0.5, 0.0, 1.0, 0.5], [0.5, 1.0, 0.5, 0.0]])


def test_topk_votes_equal_a_stable_sort_with_many_ties():
    q = np.round(np.random.default_rng(1).random((4, 300, 9)), 1)  # probabilities on a 0.1 grid: many ties
    for k in (1, 2, 4, 8):
        ref = np.zeros(q.shape, dtype=bool)
        for t in range(len(q)):
            np.put_along_axis(ref[t], np.argsort(-q[t], axis=1, kind="stable")[:, :k], True, axis=1)
        np.testing.assert_array_equal(tv.topk_votes(q, k), ref)


def test_topk_fractions_sum_to_k_and_are_multiples_of_one_over_t():
    p = _probabilities()
    for k in (1, 3, 8):
        m = tv.topk_fractions(p, k)
        assert tv.topk_votes(p, k).sum(axis=2).min() == tv.topk_votes(p, k).sum(axis=2).max() == k
        np.testing.assert_allclose(m.sum(axis=1), k, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(m * 7, np.rint(m * 7))
        tv.check_topk_fractions(m, k, 7)  # accepted


@pytest.mark.parametrize("t, n, k", [(3, 3, 1), (3, 4, 2), (2, 5, 3), (4, 4, 1)])
def test_sensitivity_is_the_largest_enumerated_difference(t, n, k):
    grid, i, j = tv.topk_vote_grid(t, n, k)
    largest = np.sqrt(((grid[i] - grid[j]) ** 2).sum(axis=1)).max()
    assert largest == pytest.approx(tv.topk_sensitivity(k, n, t), rel=1e-12)
    if 2 * k <= n:
        assert tv.topk_sensitivity(k, n, t) == pytest.approx(math.sqrt(2 * k) / t, rel=1e-15)
    # every pair is one teacher changing its set: counts move by at most one per label, k ones on each side
    assert np.all(np.abs(grid[i] - grid[j]).max(axis=1) <= 1.0 / t + 1e-12)
    np.testing.assert_allclose(grid.sum(axis=1), k, atol=1e-12)


# -------------------------------------------------------------- accountant


def _closed_form_basic(slope_total, delta):
    """min over continuous α > 1 of S·α + log(1/δ)/(α − 1): α* = 1 + √(log(1/δ)/S), ε = S + 2√(S log(1/δ))."""
    lg = math.log(1.0 / delta)
    return 1.0 + math.sqrt(lg / slope_total), slope_total + 2.0 * math.sqrt(slope_total * lg)


@pytest.mark.parametrize(
    "k, n_labels, t, sigma, n_queries",
    [(1, 161, 50, 0.1, 1), (3, 161, 50, 0.2, 2000), (2, 10, 5, 0.5, 37), (4, 6, 10, 0.05, 1)],
)
def test_closed_form_of_the_gaussian_rdp(k, n_labels, t, sigma, n_queries):
    delta = 1e-8
    slope = min(k, n_labels - k) * 2.0 / t**2 / (2.0 * sigma**2)  # Δ²/(2σ²), Δ² = 2·min(k, n − k)/T²
    alpha, eps = _closed_form_basic(n_queries * slope, delta)
    spent = tv.topk_epsilon(
        k=k,
        n_labels=n_labels,
        n_teachers=t,
        sigma=sigma,
        delta=delta,
        n_queries=n_queries,
        accounting=Accounting([alpha - 0.01, alpha, alpha + 0.01]),
    )
    assert spent.epsilon == pytest.approx(eps, rel=1e-9)
    assert spent.order == alpha and not spent.at_grid_edge
    np.testing.assert_allclose(spent.rdp_or_logmgf, n_queries * slope * spent.orders, rtol=1e-12)
    assert spent.details["sensitivity"] == pytest.approx(math.sqrt(2 * min(k, n_labels - k)) / t, rel=1e-15)


@pytest.mark.parametrize(
    "k, sigma, n_queries, delta", [(1, 0.1, 1, 1e-5), (3, 0.2, 500, 1e-8), (2, 0.05, 40, 1e-6), (3, 0.3, 5000, 1e-8)]
)
def test_rdp_accountant_of_dp_accounting(k, sigma, n_queries, delta):
    dp_event = pytest.importorskip("dp_accounting").dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    t, n_labels = 50, 161
    orders = np.concatenate([np.linspace(1.05, 20, 60), np.arange(21, 257.0)])
    acc = rpa.RdpAccountant(orders=list(orders))
    noise_multiplier = sigma / (math.sqrt(2 * k) / t)  # σ in units of the ℓ2 sensitivity
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier), n_queries))
    eps_ref, order_ref = acc.get_epsilon_and_optimal_order(delta)
    ours = tv.topk_epsilon(
        k=k,
        n_labels=n_labels,
        n_teachers=t,
        sigma=sigma,
        delta=delta,
        n_queries=n_queries,
        accounting=Accounting(orders, "improved"),
    )
    np.testing.assert_allclose(ours.rdp_or_logmgf, acc._rdp, rtol=1e-9)
    assert ours.epsilon == pytest.approx(eps_ref, rel=1e-9)
    assert ours.order == order_ref


def test_exact_gaussian_profile_closed_form_and_dp_accounting_pld():
    # Balle & Wang 2018 Thm 8 in plain floats at moderate values
    for mu in (0.3, 1.0, 4.0):
        for eps in (0.0, 0.5, 2.0, 6.0):
            direct = norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)
            assert float(tv.gaussian_delta(eps, mu)) == pytest.approx(direct, rel=1e-9, abs=1e-300)
        e = tv.gaussian_epsilon(1e-6, mu)
        assert float(tv.gaussian_delta(e, mu)) == pytest.approx(1e-6, rel=1e-9)
    # log space: far in the tail the direct formula cancels to 0, ours stays positive and decreasing
    tail = tv.gaussian_log_delta([200.0, 400.0, 800.0], 5.0)
    assert np.all(np.isfinite(tail)) and np.all(np.diff(tail) < 0)
    assert tv.gaussian_epsilon(1e-300, 1.0) > tv.gaussian_epsilon(1e-200, 1.0) > 0
    # an independent implementation: dp-accounting's privacy-loss-distribution accountant, 10 composed queries
    dp_event = pytest.importorskip("dp_accounting").dp_event
    from dp_accounting.pld import pld_privacy_accountant as ppa

    k, n_labels, t, sigma, n_queries, delta = 2, 161, 50, 0.2, 10, 1e-6
    acc = ppa.PLDAccountant()
    acc.compose(dp_event.GaussianDpEvent(sigma / tv.topk_sensitivity(k, n_labels, t)), n_queries)
    exact = tv.topk_exact_epsilon(k=k, n_labels=n_labels, n_teachers=t, sigma=sigma, delta=delta, n_queries=n_queries)
    assert exact == pytest.approx(acc.get_epsilon(delta), rel=1e-6)


@pytest.mark.parametrize("k, sigma, n_queries", [(1, 0.1, 1), (3, 0.1, 100), (2, 0.2, 5000), (3, 0.3, 20000)])
def test_rdp_claim_is_safe_and_close_to_the_exact_gaussian_profile(k, sigma, n_queries):
    common = dict(k=k, n_labels=161, n_teachers=50, sigma=sigma, delta=1e-8, n_queries=n_queries)
    exact = tv.topk_exact_epsilon(**common)
    claim = tv.topk_epsilon(accounting=Accounting(WIDE, "improved"), **common).epsilon
    basic = tv.topk_epsilon(accounting=Accounting(WIDE, "basic"), **common).epsilon
    assert exact <= claim <= basic
    assert claim <= 1.1 * exact  # the RDP detour costs under 10% here (measured 2.3-5.9%)


# ------------------------------------------------------ exact profile, small instance


T, N_LABELS, K = 3, 3, 1


@pytest.fixture(scope="module")
def grid_pairs():
    return tv.topk_vote_grid(T, N_LABELS, K)


@pytest.mark.parametrize(
    "sigma, threshold, delta", [(0.1, 0.5, 1e-3), (0.2, 0.4, 0.1), (0.3, 0.5, 1e-3), (0.3, 0.4, 1e-2)]
)
def test_claim_covers_the_exact_profile_of_the_released_labels(grid_pairs, sigma, threshold, delta):
    grid, i, j = grid_pairs
    lp = exact_profile.gnthreshold_output_logprobs(grid, threshold, sigma)
    np.testing.assert_allclose(np.exp(lp).sum(axis=1), 1.0, rtol=1e-12)
    exact_labels = float(exact_profile.exact_epsilon(lp[i], lp[j], delta).max())
    exact_gauss = tv.topk_exact_epsilon(k=K, n_labels=N_LABELS, n_teachers=T, sigma=sigma, delta=delta, n_queries=1)
    claim = tv.topk_epsilon(
        k=K,
        n_labels=N_LABELS,
        n_teachers=T,
        sigma=sigma,
        delta=delta,
        n_queries=1,
        accounting=Accounting(FINE, "improved"),
    )
    assert exact_labels <= exact_gauss <= claim.epsilon
    assert claim.epsilon <= 1.8 * exact_labels  # safe, not absurdly loose (measured 1.15-1.72)
    slope = tv.topk_rdp_slope(sigma, K, N_LABELS, T)
    for lam in (1.5, 2.0, 4.0, 8.0):
        assert float(exact_profile.exact_renyi(lp[i], lp[j], lam).max()) <= slope * lam


def test_a_sqrt_k_sensitivity_fails_the_exact_profile(grid_pairs):
    # counting only the k labels switched on (Δ = √k/T) halves the slope; the exact profile refutes it
    grid, i, j = grid_pairs
    sigma, delta = 0.1, 1e-3
    lp = exact_profile.gnthreshold_output_logprobs(grid, 0.5, sigma)
    exact = float(exact_profile.exact_epsilon(lp[i], lp[j], delta).max())
    half = tv.topk_rdp_slope(sigma, K, N_LABELS, T) / 2.0
    wrong = account(
        lambda g: half * g,
        delta=delta,
        accounting=Accounting(FINE, "improved"),
        accountant="test",
        mechanism="topk-sqrt-k",
        n_queries=1,
        data_dependent=False,
    ).epsilon
    assert exact == pytest.approx(23.47, abs=0.01) and wrong == pytest.approx(16.61, abs=0.01)
    assert exact > wrong


# ------------------------------------------------------------------- audit


def test_audit_passes_the_claim_and_catches_sqrt_k_and_half_the_noise():
    sound = audit.audit_topk(seed=0)
    sqrt_k = audit.audit_topk(seed=0, claim="sqrt_k")
    broken = audit.audit_topk(seed=0, noise_scale_factor=0.5)
    assert not sound.violation and sound.epsilon_lower >= 0.5 * sound.claimed_epsilon  # 4.06 of 6.33
    assert sqrt_k.violation and sqrt_k.claimed_epsilon < sound.claimed_epsilon  # 4.06 > 3.69
    assert broken.violation and broken.claimed_epsilon == sound.claimed_epsilon  # 8.45 > 6.33
    with pytest.raises(ValueError, match="^claim: expected"):
        audit.audit_topk(claim="sqrt_2k")


# -------------------------------------------------------------- properties


def test_monotone_in_queries_and_k_decreasing_in_sigma_symmetric_in_k():
    base = dict(n_labels=161, n_teachers=50, delta=1e-8, accounting=Accounting(WIDE))
    eps_n = [tv.topk_epsilon(k=2, sigma=0.2, n_queries=n, **base).epsilon for n in (1, 10, 100, 1000, 10000)]
    eps_k = [tv.topk_epsilon(k=k, sigma=0.2, n_queries=100, **base).epsilon for k in (1, 2, 3, 5, 80)]
    eps_s = [tv.topk_epsilon(k=2, sigma=s, n_queries=100, **base).epsilon for s in (0.05, 0.1, 0.2, 0.5, 1.0)]
    assert np.all(np.diff(eps_n) > 0) and np.all(np.diff(eps_k) > 0) and np.all(np.diff(eps_s) < 0)
    # k and n − k give the same sensitivity (the complements of the votes carry the same information)
    assert tv.topk_epsilon(k=3, sigma=0.2, n_queries=100, **base).epsilon == pytest.approx(
        tv.topk_epsilon(k=158, sigma=0.2, n_queries=100, **base).epsilon, rel=1e-15
    )
    # lower sensitivity than GNThreshold on averaged probabilities (√161/T) at equal σ
    from pate_study.privacy.multilabel import multilabel_slope

    assert tv.topk_rdp_slope(0.2, 3, 161, 50) == pytest.approx(
        multilabel_slope(0.2, 161, "vote_fraction", 50) * 6 / 161
    )


@pytest.mark.parametrize("sigma", [1e-3, 1e3])
def test_finite_at_extreme_sigma(sigma):
    for conversion in ("basic", "improved"):
        spent = tv.topk_epsilon(
            k=3,
            n_labels=161,
            n_teachers=50,
            sigma=sigma,
            delta=1e-8,
            n_queries=1000,
            accounting=Accounting(WIDE, conversion),
        )
        assert np.isfinite(spent.epsilon) and spent.epsilon >= 0
    assert np.isfinite(tv.topk_exact_epsilon(k=3, n_labels=161, n_teachers=50, sigma=sigma, delta=1e-8, n_queries=1000))


def test_data_dependent_by_hand_and_never_above_data_independent():
    # one query, 4 labels, T = 10, k = 2: labels far from the threshold, q̃ = 1 − Π Φ(|m − th|/σ)
    m = np.array([[1.0, 1.0, 0.0, 0.0]])
    sigma, th, orders = 0.15, 0.5, np.arange(2.0, 40.0)
    dd = tv.topk_epsilon(
        k=2, n_teachers=10, sigma=sigma, delta=1e-6, fractions=m, threshold=th, accounting=Accounting(orders)
    )
    q = 1 - norm.cdf(0.5 / sigma) ** 4
    s = tv.topk_rdp_slope(sigma, 2, 4, 10)
    for alpha in (2.0, 5.0, 20.0):
        assert dd.at_order(alpha)[1] == pytest.approx(theorem6_by_hand(q, s, alpha), rel=1e-9)
    assert dd.data_dependent and dd.at_order(2.0)[1] < 2 * s
    # random top-k votes: data-dependent <= data-independent, order by order
    frac = tv.topk_fractions(_probabilities(3, (20, 200, 12)) ** 3, 3)
    for sigma in (0.05, 0.1, 0.3):
        dd = tv.topk_epsilon(k=3, n_teachers=20, sigma=sigma, delta=1e-8, fractions=frac, threshold=0.4)
        di = tv.topk_epsilon(k=3, n_teachers=20, sigma=sigma, delta=1e-8, n_queries=200, n_labels=12)
        assert np.all(dd.rdp_or_logmgf <= di.rdp_or_logmgf * (1 + 1e-12)) and dd.epsilon <= di.epsilon


# ----------------------------------------------------------------- release


def test_release_is_gnthreshold_on_the_top_k_fractions_and_reproducible():
    m = tv.topk_fractions(_probabilities(1, (10, 500, 6)), 2)
    a = tv.topk_release(m, k=2, n_teachers=10, threshold=0.3, sigma=0.1, rng=5)
    b = tv.topk_release(m, k=2, n_teachers=10, threshold=0.3, sigma=0.1, rng=np.random.default_rng(5))
    ref = aggregators.gnthreshold(m, 0.3, 0.1, 5)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.labels, ref.labels)
    assert a.mechanism == "topk-vote" and a.params["k"] == 2
    # release frequency of one configuration against Φ((m − th)/σ)
    row = np.tile(m[:1], (40_000, 1))
    freq = tv.topk_release(row, k=2, n_teachers=10, threshold=0.3, sigma=0.1, rng=0).labels.mean(axis=0)
    np.testing.assert_allclose(freq, norm.cdf((m[0] - 0.3) / 0.1), atol=0.01)


# --------------------------------------------------------------- bad input


def test_bad_input_names_the_parameter():
    p = _probabilities(shape=(3, 4, 5))
    m = tv.topk_fractions(p, 2)
    di = dict(n_teachers=3, sigma=0.2, delta=1e-6, n_queries=10, n_labels=5)
    for k in (0, 5, 6, -1, 1.5, True):
        with pytest.raises(ValueError, match="^k: expected an integer with 1 <= k < n_labels = 5"):
            tv.topk_votes(p, k)
        with pytest.raises(ValueError, match="^k: expected"):
            tv.topk_epsilon(k=k, **di)
    for sigma in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="^sigma: expected a finite number > 0"):
            tv.topk_epsilon(k=2, **{**di, "sigma": sigma})
    with pytest.raises(ValueError, match=r"^probabilities: expected probabilities in \[0, 1\]"):
        tv.topk_votes(p * 2, 2)
    with pytest.raises(ValueError, match="^probabilities: expected finite"):
        tv.topk_votes(np.where(p > 0.5, np.nan, p), 2)
    with pytest.raises(ValueError, match=r"^probabilities: expected a non-empty 3-D array \[n_teachers"):
        tv.topk_votes(p[0], 2)
    with pytest.raises(ValueError, match="^fractions: expected top-2 vote fractions"):
        tv.topk_release(p.mean(axis=0), k=2, n_teachers=3, threshold=0.5, sigma=0.1, rng=0)  # averaged probabilities
    with pytest.raises(ValueError, match="^fractions: expected multiples of 1/n_teachers"):
        tv.topk_epsilon(k=2, n_teachers=4, sigma=0.2, delta=1e-6, fractions=m, threshold=0.5)
    with pytest.raises(ValueError, match="^threshold: expected a fixed number"):
        tv.topk_release(m, k=2, n_teachers=3, threshold="adaptive", sigma=0.1, rng=0)
    with pytest.raises(ValueError, match="^threshold: expected a fixed number"):
        tv.topk_epsilon(k=2, n_teachers=3, sigma=0.2, delta=1e-6, fractions=m)
    with pytest.raises(ValueError, match="^n_queries/fractions: expected exactly one"):
        tv.topk_epsilon(k=2, n_teachers=3, sigma=0.2, delta=1e-6, fractions=m, n_queries=4, threshold=0.5)
    with pytest.raises(ValueError, match="^n_labels: the data-independent bound"):
        tv.topk_epsilon(k=2, n_teachers=3, sigma=0.2, delta=1e-6, n_queries=4)
    with pytest.raises(ValueError, match="^delta: expected"):
        tv.topk_epsilon(k=2, **{**di, "delta": 0.0})
    with pytest.raises(ValueError, match="^rng: expected an int seed"):
        tv.topk_release(m, k=2, n_teachers=3, threshold=0.5, sigma=0.1, rng=None)
    with pytest.warns(ThresholdRangeWarning):
        tv.topk_release(m, k=2, n_teachers=3, threshold=1.5, sigma=0.1, rng=0)
    with pytest.raises(ValueError, match="^epsilon: expected finite values >= 0"):
        tv.gaussian_delta(-1.0, 1.0)
    with pytest.raises(ValueError, match="^n_teachers/n_labels/k: too many"):
        tv.topk_vote_grid(40, 10, 3)


# ------------------------------------------------ inputs of Binary, τ and Powerset voting


def test_top_k_votes_feed_binary_tau_and_powerset():
    p = _probabilities(2, (8, 50, 7))
    votes = tv.topk_votes(p, 3)
    # τ = √k clips nothing: the clipped sums are the vote counts, and τ voting's accountant α·τ²/σ² (σ on counts)
    # is the top-k slope (σ on fractions = σ_counts / T)
    np.testing.assert_allclose(mw.clip_votes(votes, math.sqrt(3)), mw.positive_votes(votes), rtol=0, atol=1e-12)
    tau = mw.tau_pate_epsilon(tau=math.sqrt(3), sigma=8 * 0.25, delta=1e-6, n_queries=50)
    ours = tv.topk_epsilon(k=3, n_labels=7, n_teachers=8, sigma=0.25, delta=1e-6, n_queries=50)
    np.testing.assert_allclose(ours.rdp_or_logmgf, tau.rdp_or_logmgf, rtol=1e-12)
    # Binary on top-k votes: 2·min(k, n − k) labels change, so 2·min(k, n − k)·α/σ² per query, below n·α/σ²
    bt = tv.binary_topk_epsilon(sigma=4.0, delta=1e-6, k=3, n_labels=7, n_queries=50)
    same = mw.binary_pate_epsilon(sigma=4.0, delta=1e-6, n_queries=50, n_labels=6)
    full = mw.binary_pate_epsilon(sigma=4.0, delta=1e-6, n_queries=50, n_labels=7)
    np.testing.assert_allclose(bt.rdp_or_logmgf, same.rdp_or_logmgf, rtol=1e-12)
    assert bt.epsilon < full.epsilon
    grid, i, j = tv.topk_vote_grid(3, 5, 2)  # Binary's pairs (T − p, p): squared change 2 per changed label
    counts = np.rint(grid * 3)
    assert (2 * (counts[i] - counts[j]) ** 2).sum(axis=1).max() == 4 * min(2, 5 - 2)
    # Powerset takes the same votes: one set per teacher
    released = mw.powerset_pate(votes, sigma=2.0, rng=0).labels
    assert released.shape == (50, 7)


def test_calibrated_votes_assert_k_labels_on_average_per_teacher_and_depend_on_its_own_outputs():
    p = _probabilities(4, (6, 40, 10))
    votes = tv.calibrated_votes(p, 2)
    np.testing.assert_array_equal(votes.sum(axis=(1, 2)), 40 * 2)  # no ties in continuous probabilities
    assert votes.sum(axis=2).max() > 2  # per query not bounded by k: no top-k sensitivity for these votes
    changed = p.copy()
    changed[0] = np.random.default_rng(9).random(changed[0].shape)
    other = tv.calibrated_votes(changed, 2)
    np.testing.assert_array_equal(other[1:], votes[1:])  # replacing teacher 0 changes teacher 0's votes only
    assert mw.check_teacher_votes(votes).dtype == bool


# ------------------------------------------------------------ confident variant


def _confident_logprobs(grid, threshold, sigma, thc, sc, rule, top_n):
    """Exact log Pr of every outcome of the confident release, by hand: [not answered] + answered × 2^n."""
    top = -np.sort(-grid, axis=1)
    if rule == "max":
        log_ans = norm.logcdf((top[:, 0] - thc) / sc)
    else:
        log_ans = norm.logcdf((top[:, :top_n] - threshold - thc) / sc).sum(axis=1)
    log_not = np.log1p(-np.exp(log_ans))
    labels = exact_profile.gnthreshold_output_logprobs(grid, threshold, sigma)
    return np.concatenate([log_not[:, None], log_ans[:, None] + labels], axis=1)


@pytest.mark.parametrize(
    "t, n, k, rule, top_n, th", [(3, 3, 1, "max", 1, 0.4), (3, 4, 2, "printed", 2, 0.4), (2, 4, 1, "printed", 2, 0.2)]
)
def test_confident_claim_covers_the_exact_profile(t, n, k, rule, top_n, th):
    sigma, sc, delta = 0.2, 0.15, 1e-3
    thc = 0.5 if rule == "max" else 0.1
    grid, i, j = tv.topk_vote_grid(t, n, k)
    lp = _confident_logprobs(grid, th, sigma, thc, sc, rule, top_n)
    np.testing.assert_allclose(np.exp(lp).sum(axis=1), 1.0, rtol=1e-12)
    exact = float(exact_profile.exact_epsilon(lp[i], lp[j], delta).max())
    claim = tv.confident_topk_epsilon(
        k=k,
        n_teachers=t,
        sigma=sigma,
        check=ConfidenceCheck(thc, sc, rule, top_n),
        delta=delta,
        n_queries=1,
        n_labels=n,
        accounting=Accounting(FINE, Conversion.IMPROVED),
    )
    slope = tv.topk_rdp_slope(sigma, k, n, t) + tv.confidence_check_slope(
        ConfidenceCheck(thc, sc, rule, top_n), k, n, t
    )
    np.testing.assert_allclose(claim.rdp_or_logmgf, slope * FINE, rtol=1e-12)
    # the check and the release are one Gaussian mechanism with μ² = 2·(slope of both): its exact ε lies between
    gauss = tv.gaussian_epsilon(delta, math.sqrt(2.0 * slope))
    # measured: labels 6.8-13.0, Gaussian 14.6-34.8, claim/Gaussian 1.08-1.10
    assert 0.5 < exact <= gauss <= claim.epsilon <= 1.15 * gauss
    for lam in (1.5, 2.0, 4.0, 8.0):
        assert float(exact_profile.exact_renyi(lp[i], lp[j], lam).max()) <= slope * lam


def test_confidence_check_slope_by_hand():
    # max: one value, sensitivity 1/T; printed top-4 of top-1 votes: 4 values but only 2·min(k, n − k) = 2 move
    printed = ConfidenceCheck(0.5, 0.1, ConfidenceRule.PRINTED, 4)
    assert tv.confidence_check_slope(ConfidenceCheck(0.5, 0.1), 1, 161, 50) == pytest.approx(1 / (2 * 50**2 * 0.01))
    assert tv.confidence_check_slope(printed, 1, 161, 50) == pytest.approx(2 / (2 * 50**2 * 0.01))
    assert tv.confidence_check_slope(printed, 3, 161, 50) == pytest.approx(4 / (2 * 50**2 * 0.01))


def test_confident_release_and_its_realized_cost():
    m = tv.topk_fractions(_probabilities(5, (20, 300, 10)) ** 4, 2)
    check = ConfidenceCheck(threshold=0.5, sigma=0.1)
    kw = dict(k=2, n_teachers=20, threshold=0.3, sigma=0.1, check=check)
    out = tv.confident_topk_release(m, rng=3, **kw)
    ref = aggregators.confident_gnthreshold(m, 0.3, 0.1, 0.5, 0.1, 3, rule="max")
    np.testing.assert_array_equal(out.labels, ref.labels)
    np.testing.assert_array_equal(out.answered, ref.answered)
    assert out.mechanism == "confident-topk-vote" and 0 < out.n_answered < 300
    acc = dict(
        k=2,
        n_teachers=20,
        sigma=0.1,
        check=check,
        delta=1e-8,
        fractions=m,
        threshold=0.3,
    )
    realized = tv.confident_topk_epsilon(charge=Charge(Cost.REALIZED, answered=out.answered), **acc)
    redrawn = tv.confident_topk_epsilon(charge=Charge("realized", rng=3), **acc)
    expected = tv.confident_topk_epsilon(charge=Charge(Cost.EXPECTED), **acc)
    independent = tv.confident_topk_epsilon(
        k=2,
        n_teachers=20,
        sigma=0.1,
        check=check,
        delta=1e-8,
        n_queries=300,
        n_labels=10,
    )
    assert realized.epsilon == redrawn.epsilon and realized.expected_answered == out.n_answered
    for spent in (realized, expected):
        assert np.all(spent.rdp_or_logmgf <= independent.rdp_or_logmgf * (1 + 1e-12))
    with pytest.raises(ValueError, match="^rng: cost='realized'"):  # the default is the guarantee of a run
        tv.confident_topk_epsilon(**acc)
    # a check that answers fewer queries costs less than the release on every query
    plain = tv.topk_epsilon(k=2, n_teachers=20, sigma=0.1, delta=1e-8, fractions=m, threshold=0.3)
    assert realized.epsilon < plain.epsilon
    with pytest.raises(ValueError, match="^check.rule: expected one of"):
        ConfidenceCheck(0.5, 0.1, rule="min")
    with pytest.raises(ValueError, match="^charge.cost: expected one of"):
        Charge(cost="all")
    with pytest.raises(ValueError, match="^check.threshold: expected a threshold"):
        ConfidenceCheck(np.nan, 0.1)
    with pytest.raises(ValueError, match="^check: expected a ConfidenceCheck"):
        tv.confident_topk_epsilon(**{**acc, "check": (0.5, 0.1)})
    with pytest.raises(ValueError, match="^charge: expected a Charge"):
        tv.confident_topk_epsilon(**acc, charge="realized")
