"""The heterogeneity test behind "no significant difference between the k groups" (Muschiol 2021, Fig 5.6): the
Wald chi-squared test of equal means with the covariance of the k estimates from a shared-test-set bootstrap. It is
Cochran's Q for independent estimates; under the null its size is close to the nominal 5 % (simulated); it finds one
outlying group; the claim kind judges it at 5 % both ways."""

import json

import numpy as np
import pytest
from scipy import stats

from pate_study.reporting import uncertainty as u
from pate_study.reporting.claims import Claim, judge
from pate_study.reporting.outputs import NotebookOutputs

NO_DIFFERENCE = Claim(
    "no significant difference between the teachers",
    "Muschiol 2021, Fig 5.6",
    "final mAP of each teacher",
    "homogeneity",
    (u.TEACHER_SEED, u.TEST_SET),
)


def test_independent_estimates_give_cochrans_q():
    """With a diagonal covariance, W = Σ w_i (θ_i − θ̄_w)², w_i = 1 / var_i (Cochran 1954)."""
    rng = np.random.default_rng(0)
    k, n_boot = 5, 300
    centred = rng.standard_normal((n_boot, k))
    centred -= centred.mean(0)
    q, _ = np.linalg.qr(centred)  # orthonormal, centred columns: their sample covariance is diagonal
    scale = np.array([0.5, 1.0, 2.0, 1.5, 0.8])
    draws = q * scale * np.sqrt(n_boot - 1)
    values = np.array([0.3, -1.0, 2.5, 0.0, 1.1])
    test = u.heterogeneity_test(values, draws, [u.TEST_SET])
    w = 1 / scale**2
    cochran = float(np.sum(w * (values - np.sum(w * values) / w.sum()) ** 2))
    assert test.statistic == pytest.approx(cochran) and test.df == k - 1
    assert test.p_value == pytest.approx(stats.chi2.sf(cochran, k - 1))
    order = [3, 1, 4, 0, 2]  # any order of the groups (any basis of contrasts) gives the same statistic
    assert u.heterogeneity_test(values[order], draws[:, order], []).statistic == pytest.approx(cochran)


def shared_test_set_runs(runs, k, outlier=0.0, n=200, n_boot=300, seed=0, calibrated=True):
    """``runs`` simulated studies: k groups scored on the same n test examples (an example's difficulty shared by
    every group), each group's statistic the mean score; bootstrap draws from shared resamples. Returns the tests."""
    rng = np.random.default_rng(seed)
    tests = []
    for _ in range(runs):
        shared = rng.standard_normal(n)
        scores = shared[:, None] + rng.standard_normal((n, k))  # [n, k]
        scores[:, 0] += outlier
        weights = u.bootstrap_weights(rng.integers(0, n, (n_boot, n)))
        draws = weights @ scores / n
        tests.append(u.heterogeneity_test(scores.mean(0), draws, [u.TEST_SET], n_examples=n if calibrated else None))
    return tests


@pytest.mark.slow
def test_size_under_the_null_is_close_to_nominal():
    """600 studies under equal means, 200 test examples, 8 groups: the F-calibrated test rejects about 5 % (the
    chi-squared reference alone, with a covariance from 200 examples, about 7 %)."""
    tests = shared_test_set_runs(600, k=8, seed=1)
    size = np.mean([t.p_value < 0.05 for t in tests])
    assert 0.025 <= size <= 0.075  # nominal 5 %; Monte Carlo error ±2.7 % (3 SE at 600 runs)
    p = np.array([t.p_value for t in tests])
    assert stats.kstest(p, "uniform").pvalue > 0.001  # p-values close to uniform under the null


def test_power_against_one_outlying_group():
    """One group 0.35 above the rest (about 3.5 standard errors of a difference of two groups' means) is found
    nearly always; a tenth of that almost never."""
    assert np.mean([t.p_value < 0.05 for t in shared_test_set_runs(150, k=8, outlier=0.35, seed=2)]) > 0.9
    assert np.mean([t.p_value < 0.05 for t in shared_test_set_runs(150, k=8, outlier=0.035, seed=3)]) < 0.2


def test_the_homogeneity_claim_is_judged_by_the_test_both_ways(tmp_path):
    same = shared_test_set_runs(1, k=6, seed=4)[0]
    one_off = shared_test_set_runs(1, k=6, outlier=0.6, seed=5)[0]
    assert same.p_value >= 0.05 and one_off.p_value < 0.05
    agrees, differs = judge(NO_DIFFERENCE, same), judge(NO_DIFFERENCE, one_off)
    assert agrees.verdict == "agrees" and agrees.reason.startswith("no significant difference found")
    assert differs.verdict == "differs" and differs.reason.startswith("a significant difference found")
    assert "failure to reject" in agrees.rule and "Wald chi-squared" in agrees.rule and "5 %" in agrees.rule
    assert "Wald χ²" in differs.evidence
    out = NotebookOutputs("nb", tmp_path, profile="smoke", seed=0)
    out.record("muschiol2021-fig5.6", **differs.as_record())
    record = json.loads((tmp_path / "scalars.json").read_text())["muschiol2021-fig5.6"]
    (entry,) = record["verdict_evidence"]
    assert entry["method"] == u.WALD_METHOD and entry["df"] == 5 and entry["p_value"] == pytest.approx(one_off.p_value)
    assert (tmp_path / record["verdict_replicates"]).exists()
    with pytest.raises(ValueError, match="homogeneity claim reads"):
        judge(NO_DIFFERENCE, u.t_interval([1.0, 2.0], []))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: u.heterogeneity_test([1.0], np.ones((5, 1)), []), "at least 2"),
        (lambda: u.heterogeneity_test([1.0, 2.0], np.ones((5, 3)), []), r"shape \[n_boot, 2\]"),
        (lambda: u.heterogeneity_test([1.0, 2.0, 3.0], np.ones((3, 3)), []), "between 4 and"),
        (lambda: u.heterogeneity_test([1.0, np.nan], np.ones((5, 2)), []), "values: expected numbers, got NaN"),
        (lambda: u.heterogeneity_test([1.0, 2.0], np.ones((5, 2)), [], groups=["a"]), "groups: expected 2 names"),
    ],
)
def test_bad_heterogeneity_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
