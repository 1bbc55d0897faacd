"""Every default is a guarantee: two-step accountants charge the run (cost="realized") unless asked otherwise, an
expected cost comes back only as an ExpectedCost (expected_epsilon, never epsilon), and a misspelled cost is
refused with one line naming the parameter."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from scipy.stats import norm

from pate_study.experiments.audioset import bound_forensics
from pate_study.privacy import aggregators, multilabel, multiwinner, rdp, topk_vote
from pate_study.privacy.accounting import EXPECTED_NOTE, ExpectedCost, OrderAtGridEdgeWarning, PrivacySpent
from pate_study.privacy.options import Accounting, Bound, Charge, ConfidenceCheck, ConfidenceRule, Cost

#: confident Binary voting on one label, one positive vote of T = 5
BINARY = dict(
    sigma=0.7,
    delta=1e-5,
    positive_votes=[[1]],
    n_teachers=5,
    check=ConfidenceCheck(5, 1.5),
    accounting=Accounting([3.0]),
)
#: the top-k vote's confidence check of the calls below
TOPK_CHECK = ConfidenceCheck(threshold=0.5, sigma=0.3)


def binary_release_distribution(
    p: int, t: int = 5, sigma: float = 0.7, threshold: float = 5.0, sigma_threshold: float = 1.5
) -> np.ndarray:
    """Exact distribution of (not answered, answered 0, answered 1) of ``multiwinner.binary_pate`` on one label:
    answered iff max(p, T − p) + N(0, σ1²) ≥ T_c; label 1 iff p + N(0, σ²) > T − p + N(0, σ²)."""
    answered = norm.sf((threshold - max(p, t - p)) / sigma_threshold)
    one = norm.sf((t - 2 * p) / (np.sqrt(2.0) * sigma))
    return np.array([1.0 - answered, answered * (1.0 - one), answered * one])


def renyi(p: np.ndarray, q: np.ndarray, order: float) -> float:
    return float(np.log(np.sum(p**order * q ** (1.0 - order))) / (order - 1.0))


def exact_binary_divergence(order: float = 3.0) -> float:
    """Largest Rényi divergence of the release between p = 1 and its neighbours p = 0, 2 (either direction)."""
    here = binary_release_distribution(1)
    return max(
        renyi(a, b, order)
        for q in (0, 2)
        for a, b in ((here, binary_release_distribution(q)), (binary_release_distribution(q), here))
    )


def test_exact_divergence_of_the_instance():
    assert exact_binary_divergence() == pytest.approx(3.896, abs=5e-4)


def test_binary_default_does_not_report_the_expected_cost():
    # today's default reported RDP 2.213 at order 3, below the exact 3.896: the default must not be that number
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        with pytest.raises(ValueError, match="^rng: cost='realized'"):
            multiwinner.binary_pate_epsilon(**BINARY)
        answered = multiwinner.binary_pate_epsilon(charge=Charge(answered=np.array([[True]])), **BINARY)
        independent = multiwinner.binary_pate_epsilon(
            sigma=0.7, delta=1e-5, n_queries=1, n_labels=1, check=ConfidenceCheck(5, 1.5), accounting=Accounting([3.0])
        )
        expected = multiwinner.binary_pate_epsilon(charge=Charge(Cost.EXPECTED), **BINARY)
    exact = exact_binary_divergence()
    assert isinstance(answered, PrivacySpent) and answered.cost == "realized"
    assert answered.at_order(3.0)[1] >= exact and independent.at_order(3.0)[1] >= exact
    # the expected cost sits below the exact divergence: it is returned, labelled, but never as epsilon
    assert isinstance(expected, ExpectedCost) and expected.at_order(3.0)[1] == pytest.approx(2.213, abs=5e-4)
    assert expected.at_order(3.0)[1] < exact
    with pytest.raises(AttributeError, match="^epsilon: an expected cost is not a guarantee"):
        _ = expected.epsilon
    row = expected.to_dict()
    assert "epsilon" not in row and row["note"] == EXPECTED_NOTE and row["expected_epsilon"] > 0


@pytest.mark.parametrize(
    "fn",
    [
        topk_vote.confident_topk_epsilon,
        multiwinner.binary_pate_epsilon,
        multilabel.confident_gnthreshold_epsilon,
        bound_forensics.multilabel_bounds,
    ],
)
def test_default_charge_is_the_realized_one(fn):
    assert inspect.signature(fn).parameters["charge"].default.cost is Cost.REALIZED
    assert Charge().cost is Cost.REALIZED


#: Muschiol 2021's Definition 12 as printed (all top-n values checked), the multi-label accountants' former default.
GNTHRESHOLD_CHECK = ConfidenceCheck(0.4, 0.6, ConfidenceRule.PRINTED)


def _calls():
    m = np.random.default_rng(0).random((20, 6))
    top = topk_vote.topk_fractions(np.random.default_rng(1).random((10, 20, 6)), 2)
    return {
        "binary (no check)": lambda c: multiwinner.binary_pate_epsilon(
            sigma=2.0, delta=1e-5, positive_votes=[[1, 3]], n_teachers=5, charge=Charge(c)
        ),
        "binary (check)": lambda c: multiwinner.binary_pate_epsilon(charge=Charge(c, rng=0), **BINARY),
        "multilabel_bounds (no check)": lambda c: bound_forensics.multilabel_bounds(
            fractions=m, threshold=0.4, sigma=0.3, delta=1e-8, n_teachers=50, charge=Charge(c)
        ),
        "confident_gnthreshold": lambda c: multilabel.confident_gnthreshold_epsilon(
            fractions=m,
            threshold=0.4,
            sigma=0.3,
            check=GNTHRESHOLD_CHECK,
            delta=1e-8,
            charge=Charge(c, rng=0),
        ),
        "confident_topk (data-independent)": lambda c: topk_vote.confident_topk_epsilon(
            k=2,
            n_teachers=10,
            sigma=0.3,
            check=TOPK_CHECK,
            delta=1e-8,
            n_queries=20,
            n_labels=6,
            charge=Charge(c),
        ),
        "confident_topk": lambda c: topk_vote.confident_topk_epsilon(
            k=2,
            n_teachers=10,
            sigma=0.3,
            check=TOPK_CHECK,
            delta=1e-8,
            fractions=top,
            threshold=0.3,
            charge=Charge(c, rng=0),
        ),
    }


@pytest.mark.parametrize("name", sorted(_calls()))
@pytest.mark.parametrize("bad", ["realised", "Expected", "all_answered", None])
def test_misspelled_cost_is_refused_in_one_line(name, bad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        # the accountants that take a Charge refuse it where it is built, naming its field
        with pytest.raises(
            ValueError, match=r"^(charge\.)?cost: expected one of \['expected', 'realized'\], got"
        ) as err:
            _calls()[name](bad)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["binary (check)", "confident_gnthreshold", "confident_topk"])
def test_expected_cost_is_never_an_epsilon(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        call = _calls()[name]
        realized = call("realized")
        if name == "binary (check)":
            expected = multiwinner.binary_pate_epsilon(charge=Charge(Cost.EXPECTED), **BINARY)
        elif name == "confident_gnthreshold":
            expected = multilabel.confident_gnthreshold_epsilon(
                fractions=np.random.default_rng(0).random((20, 6)),
                threshold=0.4,
                sigma=0.3,
                check=GNTHRESHOLD_CHECK,
                delta=1e-8,
                charge=Charge(Cost.EXPECTED),
            )
        else:
            expected = topk_vote.confident_topk_epsilon(
                k=2,
                n_teachers=10,
                sigma=0.3,
                check=TOPK_CHECK,
                delta=1e-8,
                fractions=topk_vote.topk_fractions(np.random.default_rng(1).random((10, 20, 6)), 2),
                threshold=0.3,
                charge=Charge(Cost.EXPECTED),
            )
    assert isinstance(realized, PrivacySpent) and realized.cost == "realized"
    assert isinstance(expected, ExpectedCost) and not isinstance(expected, PrivacySpent)
    assert expected.note == "expected, not a guarantee" and expected.expected_epsilon > 0
    assert not hasattr(expected, "epsilon")


def test_bounds_table_row_of_an_expected_cost_says_so():
    m = np.random.default_rng(0).random((30, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        rows = bound_forensics.multilabel_bounds(
            fractions=m,
            threshold=0.4,
            sigma=0.3,
            delta=1e-8,
            n_teachers=50,
            bounds=(Bound.VOTE_FRACTION,),
            check=GNTHRESHOLD_CHECK,
            charge=Charge(Cost.EXPECTED),
        )
    row = rows[0].to_dict()
    assert "epsilon" not in row and row["note"] == EXPECTED_NOTE and row["cost"] == "expected"


#: confident GNMax (Papernot et al. 2018, Algorithm 1) on 300 queries of 250 teachers, some near the threshold
CONFIDENT = dict(threshold=200, sigma1=50, sigma2=40, delta=1e-5)


def _confident_votes() -> np.ndarray:
    top = np.random.default_rng(4).integers(120, 251, 300)
    return np.stack([top, 250 - top, np.zeros_like(top)], axis=1)


def test_confident_gnmax_default_is_the_guarantee_of_a_run_not_table_2s_expected_cost():
    votes = _confident_votes()
    with pytest.raises(ValueError, match="^rng: cost='realized'") as err:  # neither answered nor rng: refused
        rdp.confident_gnmax_epsilon(votes=votes, **CONFIDENT)
    assert "answered mask" in str(err.value) and "\n" not in str(err.value)
    run = aggregators.confident_gnmax(votes, 200, 50, 40, rng=7)
    by_seed = rdp.confident_gnmax_epsilon(votes=votes, rng=7, **CONFIDENT)
    by_mask = rdp.confident_gnmax_epsilon(votes=votes, answered=run.answered, **CONFIDENT)
    assert isinstance(by_seed, PrivacySpent) and by_seed.cost == "realized"
    assert by_seed.epsilon == by_mask.epsilon and by_seed.expected_answered == run.n_answered
    expected = rdp.confident_gnmax_epsilon(votes=votes, cost="expected", **CONFIDENT)
    assert isinstance(expected, ExpectedCost) and expected.note == EXPECTED_NOTE and not hasattr(expected, "epsilon")
    assert "epsilon" not in expected.to_dict() and expected.expected_epsilon > 0
    # every query answered: step 2 charged with weight 1 >= Pr[answered], so the guarantee is never below
    everything = rdp.confident_gnmax_epsilon(votes=votes, answered=np.ones(len(votes), bool), **CONFIDENT)
    assert np.all(everything.rdp_or_logmgf >= expected.rdp_or_logmgf)
    assert everything.epsilon >= expected.expected_epsilon
