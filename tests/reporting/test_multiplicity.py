"""One multiplicity rule for every family of hypotheses (pate_study.reporting.verdicts, "Multiplicity"): Holm's
step-down on the side chance can get wrong, at family-wise one-sided 2.5 %, reducing to the single-interval rule at
one step. Simulated, vectorised: the family-wise rate of a false *differs* when the claim holds exactly (on its
boundary) at every step, at 6 and 12 steps with correlations 0 and 0.9, beside the uncorrected rule."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from pate_study.reporting import uncertainty as u
from pate_study.reporting.claims import Claim, judge
from pate_study.reporting.verdicts import (
    FAMILY_ALPHA,
    MULTIPLICITY_RULE,
    NO_MULTIPLICITY,
    agrees,
    combine,
    holm_step_down,
    interval_outcome,
)

RUNS = 20_000
R = 10  # replicates per step
RISES = Claim("rises", "s", "change", "direction", (u.STUDENT_SEED,))
EQUALS = Claim("no change", "s", "change", "level", (u.STUDENT_SEED,), boundary=0.0)
SOMEWHERE = Claim("rises somewhere", "s", "change", "direction", (u.STUDENT_SEED,), quantifier="some")


def replicates(m: int, rho: float, runs: int = RUNS, seed: int = 0, shift: float = 0.0) -> np.ndarray:
    """``[runs, m, R]`` replicate values, true mean ``shift`` at every step; the step means correlate by ``rho``
    (a shared replicate-level component)."""
    rng = np.random.default_rng(seed)
    shared = rng.standard_normal((runs, 1, R))
    own = rng.standard_normal((runs, m, R))
    return shift + math.sqrt(rho) * shared + math.sqrt(1 - rho) * own


def t_ends(x: np.ndarray, divisor) -> tuple[np.ndarray, np.ndarray]:
    """The t-interval of every step at two-sided level ``1 − 2·FAMILY_ALPHA/divisor`` (``divisor`` ``[runs, 1]``)."""
    mean, se = x.mean(-1), x.std(-1, ddof=1) / math.sqrt(x.shape[-1])
    q = stats.t.ppf(1 - FAMILY_ALPHA / np.asarray(divisor, dtype=float), x.shape[-1] - 1)
    return mean - q * se, mean + q * se


def mc_error(p: float, runs: int = RUNS) -> float:
    return 3 * math.sqrt(p * (1 - p) / runs)


@pytest.mark.parametrize("m", [6, 12])
@pytest.mark.parametrize("rho", [0.0, 0.9])
def test_family_wise_false_differs_of_an_every_step_claim_is_at_most_its_level(m, rho):
    """ "Rises at every step" true on the boundary at every step: a false *differs* at most 2.5 % with Holm (within
    Monte Carlo error), against 1 − 0.975^m uncorrected (14 % at 6, 26 % at 12 independent steps)."""
    x = replicates(m, rho, seed=m + int(10 * rho))
    rejected, _ = holm_step_down(lambda d: t_ends(x, d)[1] < 0, m)  # the interval wholly below 0: differs
    corrected = rejected.any(-1).mean()
    uncorrected = (t_ends(x, 1)[1] < 0).any(-1).mean()
    assert corrected <= FAMILY_ALPHA + mc_error(FAMILY_ALPHA) <= 0.05
    assert uncorrected > corrected + 0.02
    if rho == 0:
        assert uncorrected == pytest.approx(1 - 0.975**m, abs=mc_error(0.25))  # ~14 % at 6, ~26 % at 12


@pytest.mark.parametrize("m", [6, 12])
@pytest.mark.parametrize("rho", [0.0, 0.9])
def test_family_wise_false_differs_of_a_level_at_every_step_is_at_most_five_percent(m, rho):
    """ "= 0 at every step" (no printed precision): each step can differ on either side, so a step's own rate is 5 %;
    Holm keeps the family at most 5 %, against 1 − 0.95^m uncorrected (27 % at 6 independent steps)."""
    x = replicates(m, rho, seed=100 + m + int(10 * rho))

    def outside(d):
        low, high = t_ends(x, d)
        return (high < 0) | (low > 0)

    rejected, _ = holm_step_down(outside, m)
    corrected, uncorrected = rejected.any(-1).mean(), outside(1).any(-1).mean()
    assert corrected <= 0.05 + mc_error(0.05)
    if rho == 0:
        assert uncorrected == pytest.approx(1 - 0.95**m, abs=mc_error(0.3))


@pytest.mark.parametrize("m", [6, 12])
@pytest.mark.parametrize("rho", [0.0, 0.9])
def test_family_wise_false_agrees_of_a_some_step_claim_is_at_most_its_level(m, rho):
    """ "Rises at some step" false, on the boundary at every step: a false *agrees* at most 2.5 % with Holm on the
    agrees side."""
    x = replicates(m, rho, seed=200 + m + int(10 * rho))
    rejected, _ = holm_step_down(lambda d: t_ends(x, d)[0] > 0, m)
    assert rejected.any(-1).mean() <= FAMILY_ALPHA + mc_error(FAMILY_ALPHA)
    assert (t_ends(x, 1)[0] > 0).any(-1).mean() > 0.05  # the uncorrected "some step agrees" rule


def test_holm_step_down_is_holms_procedure_on_the_p_values():
    """The interval re-reading rejects exactly what Holm's procedure rejects on the one-sided t p-values
    (p_(i) < α / (m − i + 1), stepping down until the first that fails)."""
    m, x = 8, replicates(8, 0.3, runs=3000, seed=7, shift=-0.6)
    rejected, _ = holm_step_down(lambda d: t_ends(x, d)[1] < 0, m)
    mean, se = x.mean(-1), x.std(-1, ddof=1) / math.sqrt(R)
    p = stats.t.cdf(mean / se, R - 1)  # H0: the mean is >= 0; small when the mean is clearly below
    order = np.argsort(p, axis=-1)
    sorted_p = np.take_along_axis(p, order, -1)
    passes = sorted_p < FAMILY_ALPHA / (m - np.arange(m))
    keep = np.cumprod(passes, axis=-1).astype(bool)  # stop at the first that fails
    expected = np.zeros_like(keep)
    np.put_along_axis(expected, order, keep, -1)
    assert np.array_equal(rejected, expected) and 0 < rejected.mean() < 1


def test_one_step_is_the_single_interval_rule():
    """With one step the family rule is the 95 % interval's rule, for every method."""
    rng = np.random.default_rng(3)
    claims = [RISES, EQUALS, Claim("r", "s", "q", "range", boundary=-0.1, upper=0.1)]
    for _ in range(60):
        center = rng.normal(0, 0.3)
        estimates = [
            u.t_interval(rng.normal(center, 0.2, 5), []),
            u.from_bootstrap(center, rng.normal(center, 0.2, 200)),
            u.combined_interval(rng.normal(center, 0.1, 4), rng.normal(center, 0.15, (200, 4)), []),
            u.clustered_interval(rng.normal(center, 0.2, 9), np.repeat([0, 1, 2], 3), [u.TEACHER_SEED], []),
        ]
        for claim in claims:
            for e in estimates:
                v = judge(claim, e)
                assert v.verdict == interval_outcome(claim.region(), e.low, e.high)
                assert v.multiplicity == NO_MULTIPLICITY and v.steps[0].family_level == 0.95
                assert judge(claim, {"only": e}).verdict == v.verdict


def test_judge_follows_the_simulated_rule():
    """The engine (Estimates, at_level, judge) and the vectorised simulation give the same verdicts."""
    m, x = 6, replicates(6, 0.5, runs=60, seed=11, shift=-0.45)
    rejected, _ = holm_step_down(lambda d: t_ends(x, d)[1] < 0, m)
    agrees_all = (t_ends(x, 1)[0] > 0).all(-1)
    for run in range(x.shape[0]):
        v = judge(RISES, {f"ρ = {s}": u.t_interval(x[run, s], [u.STUDENT_SEED]) for s in range(m)})
        expected = "differs" if rejected[run].any() else ("agrees" if agrees_all[run] else "inconclusive")
        assert v.verdict == expected
        assert [st.outcome == "differs" for st in v.steps] == list(rejected[run])


def test_every_multi_step_verdict_names_the_rule_and_what_decided():
    steps = {
        "ρ = 1": u.t_interval([-0.5, -0.6, -0.55, -0.52], []),  # clearly below: differs at any level
        "ρ = 2": u.t_interval([0.1, -0.1, 0.05, 0.0], []),
        "ρ = 4": u.t_interval([0.3, 0.31, 0.29, 0.3], []),
    }
    v = judge(RISES, steps)
    assert v.verdict == "differs" and v.decided_by == "rises/ρ = 1"
    assert MULTIPLICITY_RULE in v.rule and MULTIPLICITY_RULE in v.multiplicity and "Berger 1982" in v.rule
    record = v.as_record()
    assert record["verdict_multiplicity"] == v.multiplicity and record["verdict_decided_by"] == "rises/ρ = 1"
    first = record["verdict_evidence"][0]
    assert first["family_decided"] and first["family_level"] == pytest.approx(1 - 0.05 / 3)
    assert [e["outcome"] for e in record["verdict_evidence"]] == ["differs", "inconclusive", "agrees"]


def test_a_marginal_step_that_differs_alone_is_inconclusive_in_a_family():
    """A step whose 95 % interval is just below the boundary differs alone but not at the family's 1 − 0.05/2."""
    marginal = u.t_interval([-0.10, 0.0, -0.06, -0.05, -0.07], [])
    assert judge(RISES, marginal).verdict == "differs"
    assert marginal.at_level(1 - 0.05 / 2).high > 0
    v = judge(RISES, {"a": marginal, "b": u.t_interval([0.2, 0.21, 0.19], [])})
    assert v.verdict == "inconclusive" and v.steps[0].outcome_alone == "differs" and v.steps[0].family_decided


def test_some_step_agrees_by_holm_and_differs_only_when_every_step_differs():
    up = u.t_interval([0.3, 0.31, 0.29, 0.3], [])
    down = u.t_interval([-0.3, -0.31, -0.29, -0.3], [])
    flat = u.t_interval([0.1, -0.1, 0.05, 0.0], [])
    assert judge(SOMEWHERE, {"a": down, "b": up}).verdict == "agrees"
    assert judge(SOMEWHERE, {"a": down, "b": down}).verdict == "differs"
    assert judge(SOMEWHERE, {"a": down, "b": flat}).verdict == "inconclusive"
    assert judge(RISES, {"a": down, "b": up}, quantifier="some").verdict == "agrees"
    v = judge(SOMEWHERE, {"a": down, "b": up})
    assert v.decided_by == "rises somewhere/b" and "at some step" in v.rule


def test_combine_judges_an_item_as_one_family():
    """Two claims that each differ only marginally alone are inconclusive together (one family of two hypotheses);
    a claim that differs clearly still makes the item differ; verdicts read off no interval keep their outcome."""
    marginal = u.t_interval([-0.10, 0.0, -0.06, -0.05, -0.07], [])
    a = judge(RISES, marginal)
    b = judge(Claim("falls", "s", "q", "direction", side="below"), u.t_interval([0.10, 0.0, 0.06, 0.05, 0.07], []))
    assert a.verdict == b.verdict == "differs"
    item = combine({"a": a, "b": b})
    assert item.verdict == "inconclusive" and "alone: differs" in item.reason
    assert "over 2 hypotheses" in item.multiplicity and MULTIPLICITY_RULE in item.rule
    assert [s.key for s in item.steps] == ["a", "b"]
    clear = judge(RISES, u.t_interval([-0.5, -0.6, -0.55, -0.52], []))
    item = combine({"a": a, "clear": clear})
    assert item.verdict == "differs" and item.decided_by == "clear"
    assert combine({"a": a, "rule": agrees(rule="stated")}).verdict == "differs"  # a family of one hypothesis


def test_a_claim_verdict_changed_after_judging_keeps_its_outcome_in_an_item():
    marginal = judge(RISES, u.t_interval([-0.10, 0.0, -0.06, -0.05, -0.07], []))
    other = judge(Claim("falls", "s", "q", "direction", side="below"), u.t_interval([0.10, 0.0, 0.06, 0.05, 0.07], []))
    overridden = dataclasses.replace(other, verdict="not comparable", reason="another scale")
    item = combine({"a": marginal, "b": overridden})
    assert item.verdict == "differs" and [s.key for s in item.steps] == ["a"]
