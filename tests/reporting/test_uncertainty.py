"""The uncertainty model: t-intervals over replicates, the percentile bootstrap over test examples, their combination,
and the rendering INDEX.md shows."""

import math

import numpy as np
import pytest
from scipy import stats

from pate_study.reporting import uncertainty as u
from pate_study.reporting.claims import Claim, judge


def test_t_interval_matches_scipy_and_is_vectorised():
    x = np.array([0.121, 0.128, 0.135, 0.126])
    e = u.t_interval(x, [u.STUDENT_SEED])
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert (e.value, e.n_replicates, e.method) == (pytest.approx(x.mean()), 4, "t-interval")
    assert (e.low, e.high) == (pytest.approx(lo), pytest.approx(hi))
    rows = np.stack([x, x + 1, x * 2])
    mean, low, high = u.t_bounds(rows)
    assert np.allclose(mean, rows.mean(1)) and np.allclose(
        high - mean, [hi - x.mean(), hi - x.mean(), 2 * (hi - x.mean())]
    )


def test_one_replicate_measures_no_spread():
    e = u.t_interval([0.13], [u.STUDENT_SEED])
    assert e.method == "none" and e.low == -math.inf and e.high == math.inf
    assert "no interval" in e.render()
    assert u.unreplicated(0.2, [u.TEACHER_SEED]).render().endswith(f"not replicated: {u.TEACHER_SEED}")


def test_paired_difference_cancels_the_shared_part():
    base = np.array([0.10, 0.20, 0.30])
    e = u.paired_difference(base + 0.01, base, [u.TEACHER_SEED])
    assert e.value == pytest.approx(0.01) and e.high - e.low == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="same replicates"):
        u.paired_difference([1, 2], [1, 2, 3], [u.TEACHER_SEED])


def test_percentile_bootstrap_is_seeded_and_covers_the_mean():
    y = np.random.default_rng(1).normal(0.5, 0.1, 400)
    a = u.percentile_bootstrap(np.mean, [y], n_boot=500, seed=3)
    b = u.percentile_bootstrap(np.mean, [y], n_boot=500, seed=3)
    assert a == b and a.method == "percentile bootstrap" and a.n_boot == 500
    se = y.std(ddof=1) / math.sqrt(y.size)
    assert a.low < y.mean() < a.high and (a.high - a.low) == pytest.approx(2 * 1.96 * se, rel=0.2)


def test_bootstrap_weights_count_the_resampled_rows():
    rows = u.bootstrap_rows(5, 3, seed=0)
    w = u.bootstrap_weights(rows)
    assert w.shape == (3, 5) and np.all(w.sum(1) == 5)
    x = np.arange(5.0)
    assert np.allclose(w @ x, x[rows].sum(1))


def test_combined_interval_adds_the_two_variances():
    rng = np.random.default_rng(0)
    n = 300
    signal = rng.normal(0, 1, n)
    seeds = np.array([0.0, 0.02, -0.01, 0.015])

    def metric(s, y):
        return float(np.mean(y) + s)

    rows = u.bootstrap_rows(n, 400, seed=2)
    replicates = np.array([metric(s, signal) for s in seeds])
    draws = np.array([[metric(s, signal[i]) for s in seeds] for i in rows])
    e = u.combined_interval(replicates, draws, [u.STUDENT_SEED])
    t_only = u.t_interval(replicates, [u.STUDENT_SEED])
    boot = np.quantile(draws.mean(1), [0.025, 0.975])
    h_t, h_lo = t_only.value - t_only.low, e.value - boot[0]
    assert e.method == "t-interval + percentile bootstrap" and e.n_replicates == 4
    assert e.value - e.low == pytest.approx(math.hypot(h_t, h_lo))
    assert e.high - e.low > max(t_only.high - t_only.low, boot[1] - boot[0])
    assert u.TEST_SET in e.sources and u.STUDENT_SEED in e.sources
    single = u.combined_interval(replicates[:1], draws[:, :1], [u.STUDENT_SEED])
    assert single.method == "percentile bootstrap" and single.unreplicated == (u.STUDENT_SEED,)


def test_render_is_estimate_interval_replicates_sources():
    e = u.t_interval([0.1253, 0.1232, 0.1347], [u.RELEASE_NOISE, u.STUDENT_SEED])
    text = e.render(".3f")
    assert text.startswith("0.128 [") and "over 3 replicates of release-noise draw, student training seed" in text
    assert "(t-interval, 95%)" in text
    assert u.exact(2.5).render() == "2.5 (exact: no random source)"
    b = u.from_bootstrap(0.5, [0.4, 0.5, 0.6], sources=["classes"])
    assert b.render(".1f") == "0.5 [0.4, 0.6] over 3 bootstrap resamples of classes (percentile, 95%)"
    c = u.combined_interval([0.1, 0.2, 0.15], np.array([[0.1, 0.2, 0.15], [0.12, 0.21, 0.16]]), [u.STUDENT_SEED])
    assert "over 3 replicates of student training seed and 2 bootstrap resamples of test examples" in c.render()
    pool = u.combined_interval(
        [0.1, 0.2, 0.15], np.array([[0.1, 0.2, 0.15], [0.12, 0.21, 0.16]]), [u.RELEASE_NOISE], resampled=u.POOL_QUERIES
    )
    assert "over 3 replicates of release-noise draw and 2 bootstrap resamples of pool queries" in pool.render()
    assert pool.sources == (u.RELEASE_NOISE, u.POOL_QUERIES)
    one = u.combined_interval([0.1], np.array([[0.1], [0.12]]), [u.RELEASE_NOISE], resampled=u.POOL_QUERIES)
    assert one.sources == (u.POOL_QUERIES,) and one.unreplicated == (u.RELEASE_NOISE,)


def test_map_and_ratio_keep_the_interval_ordered():
    e = u.t_interval([0.2, 0.3, 0.25], [u.TEACHER_SEED])
    flipped = e.map(lambda x: 1 - x, increasing=False)
    assert flipped.low == pytest.approx(1 - e.high) and flipped.high == pytest.approx(1 - e.low)
    r = u.ratio_of_paired([2.0, 2.2, 1.9], [1.0, 1.0, 1.0], [u.RELEASE_NOISE])
    assert r.low < r.value < r.high and r.value == pytest.approx((2.0 * 2.2 * 1.9) ** (1 / 3))


@pytest.mark.parametrize(
    "call",
    [
        lambda: u.Estimate(0.5, 0.6, 0.7, 3, (), "t-interval"),  # value outside its interval
        lambda: u.Estimate(0.5, 0.4, 0.6, 3, (), "guess"),  # unknown method
        lambda: u.Estimate(float("nan"), 0.4, 0.6, 3, (), "t-interval"),  # NaN
        lambda: u.t_interval([], [u.STUDENT_SEED]),  # no replicate
        lambda: u.ratio_of_paired([1.0, -1.0], [1.0, 1.0], []),  # a ratio of non-positive values
    ],
)
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()


def test_summary_and_welch_intervals():
    x = np.array([0.12, 0.13, 0.125])
    s = u.t_interval_from_summary(x.mean(), x.std(ddof=1), 3, [u.STUDENT_SEED])
    assert (s.low, s.high) == (
        pytest.approx(u.t_interval(x, [u.STUDENT_SEED]).low),
        pytest.approx(u.t_interval(x, [u.STUDENT_SEED]).high),
    )
    assert u.t_interval_from_summary(0.1, float("nan"), 1, [u.STUDENT_SEED]).method == "none"
    y = np.array([0.10, 0.105, 0.11, 0.1])
    w = u.welch_difference((x.mean(), x.std(ddof=1), 3), (y.mean(), y.std(ddof=1), 4), [u.STUDENT_SEED])
    ref = stats.ttest_ind(x, y, equal_var=False).confidence_interval(0.95)
    assert (w.low, w.high) == (pytest.approx(ref.low), pytest.approx(ref.high))
    one = u.welch_difference((x.mean(), x.std(ddof=1), 3), (0.1, float("nan"), 1), [u.TEACHER_SEED])
    assert one.method == "t-interval" and one.unreplicated and one.low < one.value < one.high


def test_clustered_interval_is_the_plain_t_interval_when_each_cluster_holds_one_student():
    x = np.array([0.121, 0.128, 0.135, 0.126])
    e = u.clustered_interval(x, [0, 1, 2, 3], [u.TEACHER_SEED], [u.STUDENT_SEED])
    plain = u.t_interval(x, [u.TEACHER_SEED, u.STUDENT_SEED])
    assert e == plain and u.TEACHER_SEED in e.sources and not e.unreplicated


def test_clustered_interval_is_the_t_interval_of_the_cluster_means():
    x = np.array([0.10, 0.12, 0.11, 0.20, 0.22, 0.21, 0.15, 0.16])
    g = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    e = u.clustered_interval(x, g, [u.TEACHER_SEED], [u.STUDENT_SEED])
    means = np.array([0.11, 0.21, 0.155])
    lo, hi = stats.t.interval(0.95, 2, loc=means.mean(), scale=stats.sem(means))
    assert (e.value, e.low, e.high) == (pytest.approx(means.mean()), pytest.approx(lo), pytest.approx(hi))
    assert (e.method, e.n_replicates, e.n_units) == (u.CLUSTER_METHOD, 3, 8)
    text = e.render(".3f")
    assert f"over 3 replicates of {u.TEACHER_SEED} with 8 replicates of {u.STUDENT_SEED} in all nested in them" in text
    assert "(t-interval of cluster means, 2 df, 95%)" in text and "not replicated" not in text
    assert e.as_record()["n_units"] == 8 and e.map(lambda v: -v, increasing=False).n_units == 8


def test_clustered_interval_widens_when_the_cluster_means_differ():
    within = np.array([-0.01, 0.0, 0.01])
    same = np.concatenate([0.5 + within, 0.5 + within])
    apart = np.concatenate([0.4 + within, 0.6 + within])
    g = np.repeat([0, 1], 3)
    narrow = u.clustered_interval(same, g, [u.TEACHER_SEED], [u.STUDENT_SEED])
    wide = u.clustered_interval(apart, g, [u.TEACHER_SEED], [u.STUDENT_SEED])
    assert wide.half_width > 10 * narrow.half_width
    # the students-only interval ignores the clusters and is far narrower than the honest one
    assert u.t_interval(apart, [u.STUDENT_SEED]).half_width < wide.half_width / 5


def test_one_cluster_names_the_teacher_seed_as_not_replicated():
    x = [0.2, 0.3, 0.25]
    e = u.clustered_interval(x, [0, 0, 0], [u.TEACHER_SEED], [u.STUDENT_SEED])
    assert e == u.t_interval(x, [u.STUDENT_SEED], unreplicated=[u.TEACHER_SEED])
    assert e.render().endswith(f"not replicated: {u.TEACHER_SEED}")


def test_clustered_paired_difference_judged_both_ways():
    rises = Claim("noise raises TPR", "a source: noise raises TPR", "TPR with − without", "direction", ())
    base = np.array([0.5, 0.6, 0.7, 0.55, 0.65, 0.75])
    g = np.repeat([0, 1, 2], 2)
    up = u.clustered_paired_difference(base + [0.10, 0.12, 0.11, 0.13, 0.09, 0.10], base, g, [u.TEACHER_SEED], [])
    down = u.clustered_paired_difference(base - [0.10, 0.12, 0.11, 0.13, 0.09, 0.10], base, g, [u.TEACHER_SEED], [])
    # one ensemble's students gain, another's lose: the cluster means disagree, so nothing is decided
    mixed = u.clustered_paired_difference(base + [0.2, 0.21, -0.1, -0.09, 0.05, 0.06], base, g, [u.TEACHER_SEED], [])
    assert [judge(rises, e).verdict for e in (up, down, mixed)] == ["agrees", "differs", "inconclusive"]
    # the same mixed differences read as if the students were independent would wrongly look decided less often
    assert u.paired_difference(base + [0.2, 0.21, -0.1, -0.09, 0.05, 0.06], base, []).half_width < mixed.half_width
    with pytest.raises(ValueError, match="same units"):
        u.clustered_paired_difference([1, 2], [1, 2, 3], [0, 1], [], [])
    with pytest.raises(ValueError, match="clusters: expected one label per value"):
        u.clustered_interval([1.0, 2.0, 3.0], [0, 1], [], [])


def test_cluster_bootstrap_resamples_clusters_then_students_and_is_seeded():
    g = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    rows = u.cluster_bootstrap_rows(g, 50, seed=4)
    assert len(rows) == 50 and all(np.array_equal(a, b) for a, b in zip(rows, u.cluster_bootstrap_rows(g, 50, seed=4)))
    # every resample is made of whole draws from drawn clusters: its size is a sum of 3 cluster sizes
    assert {len(r) for r in rows} <= {a + b + c for a in (3, 2) for b in (3, 2) for c in (3, 2)}
    x = np.array([0.1, 0.11, 0.12, 0.5, 0.51, 0.9, 0.91, 0.92])
    e = u.clustered_bootstrap(np.median, x, g, [u.TEACHER_SEED], [u.STUDENT_SEED], n_boot=400, seed=0)
    flat = u.percentile_bootstrap(np.median, [x], n_boot=400, seed=0, sources=[u.STUDENT_SEED])
    assert e.value == pytest.approx(np.median(x)) and u.TEACHER_SEED in e.sources and not e.unreplicated
    assert e.high - e.low > flat.high - flat.low
    one = u.clustered_bootstrap(np.median, x, np.zeros(8), [u.TEACHER_SEED], [u.STUDENT_SEED], n_boot=50, seed=0)
    assert one.unreplicated == (u.TEACHER_SEED,)


def test_an_interval_is_clipped_only_where_no_value_can_lie():
    """A rate's t-interval on few replicates can reach past 1; within() clips the ends to the range, keeps the
    value and the sources, and refuses a value outside the range."""
    e = u.t_interval([0.97, 0.99, 1.0], [u.STUDENT_SEED])
    assert e.high > 1.0
    clipped = e.within(0.0, 1.0)
    assert clipped.high == 1.0 and clipped.low == e.low and clipped.value == e.value and clipped.sources == e.sources
    assert u.t_interval([0.3, 0.5, 0.4], [u.STUDENT_SEED]).within(0.0, 1.0) == u.t_interval(
        [0.3, 0.5, 0.4], [u.STUDENT_SEED]
    )
    with pytest.raises(ValueError, match="outside the quantity's range"):
        u.exact(1.5).within(0.0, 1.0)
