"""Bad input to the verdict engine, corpus style, grouped by surface (uncertainty, claims, verdicts, registry): one
test per class of bad input, parametrised over cases. Every case must raise a ``ValueError`` whose message is one
line naming the parameter and what was expected -- never a raw numpy/scipy message, a hang, or a silently wrong
number."""

import math

import numpy as np
import pytest
import yaml

from pate_study.reporting import claims as c
from pate_study.reporting import uncertainty as u
from pate_study.reporting import verdicts as v
from pate_study.reporting.registry import load_registry, published

S = [u.STUDENT_SEED]
OK = u.t_interval([0.1, 0.2, 0.3], S)
DIRECTION = c.Claim("d", "s", "q", "direction")


def refused(call, message):
    with pytest.raises(ValueError, match=message) as err:
        call()
    text = str(err.value)
    assert "\n" not in text and len(text) < 400, text


# ----------------------------------------------------------------------------- uncertainty.py


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: u.t_interval("0.1 0.2", S), "values: expected an array of numbers"),
        (lambda: u.t_interval(None, S), "values: expected an array of numbers"),
        (lambda: u.t_interval([0.1, "x"], S), "values: expected an array of numbers"),
        (lambda: u.t_interval([0.1, 0.2], "student seed"), "sources=.*expected a list of names, got one string"),
        (lambda: u.t_interval([0.1, 0.2], [3]), "sources: expected non-empty strings"),
        (lambda: u.exact("0.5"), "value=.*expected a number, got str"),
        (lambda: u.exact(True), "value=True: expected a number"),
        (lambda: u.Estimate(0.5, 0.4, 0.6, 2.5, S, "t-interval"), "n_replicates=2.5: expected an integer"),
        (lambda: u.one_run_range([1.0, 2.0], S, level="0.95"), "level=.*expected a number"),
        (lambda: OK.render(3), "fmt=3: expected"),
        (lambda: OK.render("q"), "fmt='q': expected a number format"),
        (lambda: OK.map("exp"), "function: expected a function"),
        (lambda: u.percentile_bootstrap(np.mean, np.ones(5), n_boot=10, seed=0), "arrays: expected a non-empty list"),
        (
            lambda: u.percentile_bootstrap(np.mean, [np.ones(5)], n_boot=10, seed=-1),
            "seed=-1: expected an integer >= 0",
        ),
        (lambda: u.clustered_interval([1.0, 2.0], [None, 1], [], []), "clusters: expected a label for every value"),
    ],
)
def test_uncertainty_refuses_wrong_types_naming_the_parameter(call, message):
    refused(call, message)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: u.t_interval([[0.1, 0.2], [0.3, 0.4]], S), r"values: expected a 1-d array, got shape \(2, 2\)"),
        (lambda: u.t_interval([], S), "values: expected at least 1 value"),
        (lambda: u.combined_interval([0.1, 0.2], np.ones((50, 3)), S), r"draws: expected shape \[n_boot, 2\]"),
        (lambda: u.combined_interval([0.1, 0.2, 0.3], np.ones((3, 50)), S), r"draws: expected shape \[n_boot, 3\]"),
        (lambda: u.combined_interval([0.1, 0.2], np.ones(100), S), r"draws: expected shape \[n_boot, 2\]"),
        (lambda: u.combined_bounds(np.ones((4, 2)), np.ones((10, 2, 4))), "draws: expected shape"),
        (lambda: u.paired_difference([1, 2], [1, 2, 3], S), "a, b: expected two arms over the same replicates"),
        (lambda: u.clustered_interval([1.0, 2.0, 3.0], [0, 1], [], []), "clusters: expected one label per value"),
        (lambda: u.from_bootstrap(0.5, np.ones((10, 2))), "draws: expected a 1-d array"),
        (lambda: u.one_run_range([1.0], S), "draws: expected at least 2 values"),
        (lambda: u.t_bounds(np.ones((3, 4)), axis=2), "axis=2: expected an axis"),
        (lambda: u.bootstrap_weights(np.array([[0.5, 1.0]])), "rows: expected non-negative integer row indices"),
        (lambda: u.bootstrap_draws(np.mean, [np.ones(3)], np.array([[0, 5, 1]])), "rows: expected indices into"),
    ],
)
def test_uncertainty_refuses_wrong_shapes_instead_of_reshaping(call, message):
    refused(call, message)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: u.t_interval([0.1, 0.2, math.inf], S), "values: expected finite numbers, got inf at position 2"),
        (lambda: u.t_interval([0.1, -math.inf], S), "values: expected finite numbers"),
        (lambda: u.t_interval([math.nan, math.nan], S), "values: no replicate gave a number"),
        (lambda: u.one_run_range([1.0, math.nan], S), "draws: expected numbers, got NaN"),
        (lambda: u.exact(math.nan), "value=nan: expected a number, not NaN"),
        (lambda: u.exact(math.inf), "value=inf: expected a finite number"),
        (lambda: u.from_bootstrap(0.5, [0.4, math.inf, 0.6]), "draws: expected finite numbers"),
        (lambda: u.from_bootstrap(math.nan, [0.4, 0.6]), "value=nan"),
        (lambda: u.combined_interval([0.1, 0.2], [[0.1, math.inf]] * 5, S), "draws: expected finite numbers"),
        (lambda: u.t_interval_from_summary(math.inf, 0.1, 3, S), "mean=inf: expected a finite number"),
        (lambda: u.Estimate(math.nan, 0.4, 0.6, 3, (), "t-interval"), "value=nan"),
        (lambda: OK.within(math.nan, 1.0), "lower=nan"),
        (lambda: c.Claim("x", "s", "q", "level", boundary=math.nan), "boundary=nan: expected a number, not NaN"),
        (lambda: c.Claim("x", "s", "q", "range", boundary=0.0, upper=math.inf), "upper=inf: expected a finite"),
        (lambda: v.within_tolerance(math.nan, 1.0, atol=0.1), "paper=nan"),
        (lambda: v.direction(math.inf, 0.1, rule="r", reason="x"), "margin=inf"),
    ],
)
def test_non_finite_numbers_are_refused_not_dropped(call, message):
    """Only NaN replicates are dropped (a replicate that gave no number, as documented); an infinite one is
    refused, never silently left out of the interval."""
    refused(call, message)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: u.t_interval([0.1, 0.2], S, level=95), "level=95: expected a confidence level strictly between"),
        (lambda: u.t_interval([0.1, 0.2], S, level=0), "level=0: expected a confidence level"),
        (lambda: u.t_bounds([0.1, 0.2], level=1.0), "level=1: expected a confidence level"),
        (lambda: u.percentile_bounds([0.1, 0.2], level=-0.5), "level=-0.5"),
        (lambda: u.t_interval_from_summary(0.5, -0.1, 5, S), r"sd=-0.1: expected a standard deviation >= 0"),
        (lambda: u.t_interval_from_summary(0.5, 0.1, -3, S), "n=-3: expected an integer >= 1"),
        (lambda: u.t_interval_from_summary(0.5, 0.1, 4.5, S), "n=4.5: expected an integer"),
        (lambda: u.t_interval_from_summary(0.5, 0.1, True, S), "n=True: expected an integer"),
        (lambda: u.welch_difference((0.5, -0.1, 5), (0.4, 0.1, 5), S), r"a: sd=-0.1: expected a standard deviation"),
        (lambda: u.welch_difference((0.5, 0.1, 5), (0.4, 0.1, 2.5), S), "b: n=2.5: expected an integer"),
        (lambda: u.welch_difference((0.5, 0.1), (0.4, 0.1, 5), S), r"a: expected \(mean, sd, n\)"),
        (lambda: u.bootstrap_rows(0, 10, 0), "n_examples=0: expected an integer >= 1"),
        (lambda: u.bootstrap_rows(10, 0, 0), "n_boot=0: expected an integer >= 1"),
        (lambda: OK.within(1.0, 0.0), "lower=1.0 > upper=0.0"),
        (lambda: OK.map(lambda x: 1 - x), "increasing=True: the function decreases"),
        (lambda: OK.at_level(2), "level=2: expected a confidence level"),
        (lambda: u.Estimate(0.5, 0.4, 0.6, 3, (), "t-interval", n_boot=-1), "n_boot=-1: expected an integer >= 0"),
    ],
)
def test_out_of_range_numbers_name_the_parameter(call, message):
    refused(call, message)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: u.cluster_bootstrap_rows(np.repeat([0, 1, 2], 4), 10**9, 0), "n_boot=1000000000: expected at most"),
        (lambda: u.cluster_bootstrap_rows(np.arange(10**5), 10**5, 0), "n_boot=100000: .* expected at most"),
        (
            lambda: u.clustered_bootstrap(
                np.median, np.ones(12), np.repeat([0, 1, 2], 4), [], [], n_boot=10**9, seed=0
            ),
            "n_boot=1000000000: expected at most",
        ),
        (lambda: u.bootstrap_rows(10**6, 10**6, 0), "n_boot=1000000 x n_examples=1000000: expected at most"),
        (lambda: u.percentile_bootstrap(np.mean, [np.ones(5)], n_boot=10**12, seed=0), "n_boot=.*expected at most"),
        (lambda: u.from_bootstrap(0.5, np.zeros(2 * 10**6)), "draws: expected at most 1,000,000 draws"),
    ],
)
@pytest.mark.slow
def test_counts_are_bounded_before_any_loop_or_allocation(call, message):
    """A cluster bootstrap of 10^9 resamples is refused at once, with the bound stated, instead of looping for
    days."""
    refused(call, message)


# ----------------------------------------------------------------------------- claims.py


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(basis="analytical"), "basis='analytical', expected one of"),
        (dict(kind="levels"), "kind='levels', expected one of"),
        (dict(side="up"), "side='up', expected one of"),
        (dict(quantifier="any"), "quantifier='any', expected one of"),
        (dict(strict=1), "strict=1: expected True or False"),
        (dict(negated="no"), "negated='no': expected True or False"),
        (dict(boundary="0.5"), "boundary='0.5': expected a number, got str"),
        (dict(boundary=True), "boundary=True: expected a number"),
        (dict(sources="teacher seed"), "sources=.*expected a list of names, got one string"),
        (dict(significance=5), "significance=5, expected a test level"),
        (dict(printed=0.5, boundary=0.5), "printed=0.5: expected the source's printed text"),
        (dict(name=""), "Claim name: expected a non-empty string"),
        (dict(sentence=None), "Claim sentence=None"),
    ],
)
def test_claims_refuse_misspelt_or_mistyped_fields(kwargs, message):
    """A misspelt basis was accepted and then misreported; a NaN boundary made every verdict inconclusive."""
    fields = dict(name="x", sentence="s", quantity="q", kind="direction") | kwargs
    refused(lambda: c.Claim(**fields), message)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: c.judge("claim", OK), "claim: expected a Claim"),
        (lambda: c.judge(DIRECTION, 0.5), "estimate: expected an Estimate"),
        (lambda: c.judge(DIRECTION, [OK, 0.5]), r"estimate\['step 2'\]: expected an Estimate"),
        (lambda: c.judge(DIRECTION, {"ρ = 1": (0.1, 0.2)}), r"estimate\['ρ = 1'\]: expected an Estimate"),
        (lambda: c.judge(DIRECTION, OK, quantifier="all"), "quantifier='all': expected one of"),
        (lambda: c.judge(DIRECTION, OK, note=3), "note=3: expected a string"),
        (lambda: c.analytic(DIRECTION, "yes", "because"), "holds='yes': expected True or False"),
        (lambda: c.analytic(DIRECTION, True, ""), "derivation: expected why the mathematics"),
        (lambda: c.source_inconsistency(DIRECTION, None), "explanation=None"),
        (lambda: c.printed_number(0.104), "printed=0.104: expected the source's printed text"),
        (lambda: c.printed_number("n/a"), "printed='n/a': expected a printed number"),
    ],
)
def test_judging_refuses_what_is_not_a_claim_or_an_estimate(call, message):
    refused(call, message)


# ----------------------------------------------------------------------------- verdicts.py


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: v.within_tolerance("0.5", 0.4, atol=0.1), "paper='0.5': expected a number, got str"),
        (lambda: v.within_tolerance(0.5, 0.4, atol=-0.1), "atol=-0.1: expected a tolerance >= 0"),
        (lambda: v.within_tolerance(0.5, 0.4, rtol=math.nan), "rtol=nan"),
        (lambda: v.within_range(0.1, 0.2, 0.15, slack=-1), "slack=-1: expected a tolerance >= 0"),
        (lambda: v.within_range(0.2, 0.1, 0.15), "low=0.2 > high=0.1"),
        (lambda: v.direction(0.1, -0.1, rule="r", reason="x"), "tolerance=-0.1: expected a tolerance >= 0"),
        (lambda: v.not_comparable(None), "reason=None: expected a string"),
        (lambda: v.Verdict("agrees", None), "rule=None: expected a statement"),
        (lambda: v.Verdict("maybe", "r"), "verdict='maybe', expected one of"),
        (lambda: v.Verdict("agrees", "r", basis="Data"), "basis='Data', expected one of"),
        (lambda: v.Verdict("agrees", "r", estimate=(0.1, 0.2)), "estimate: expected an Estimate or None"),
        (lambda: v.combine([]), "verdicts: expected a non-empty mapping"),
        (lambda: v.combine({"a": "agrees"}), r"verdicts\['a'\]: expected a Verdict, got str"),
        (lambda: v.combine({"a": v.agrees(rule="r")}, context=None), "context=None"),
        (lambda: v.holm_step_down(lambda d: np.ones(3, bool), 2), "beyond: expected booleans with a last axis of m=2"),
        (lambda: v.holm_step_down(lambda d: np.ones(3, bool), 0), "m=0: expected an integer >= 1"),
    ],
)
def test_verdicts_refuse_bad_arguments_naming_them(call, message):
    refused(call, message)


# ----------------------------------------------------------------------------- registry.py

ENTRY = dict(
    id="make2021-fig5",
    document="make2021",
    label="Fig. 5",
    type="figure",
    kind="analytic",
    caption="c",
    same_as=[],
    notebook="00_dp_primer",
    outputs=[],
    status="not started",
)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"published": [0.1, 0.2]}, r"published must be a mapping \(values:, rows:, text:\), got list"),
        ({"published": "0.1"}, "published must be a mapping"),
        ({"same_as": "visca2021-fig4.8"}, r"same_as must be a list, got str 'visca2021-fig4.8' \(write \["),
        ({"outputs": "00_dp_primer/x.png"}, "outputs must be a list, got str"),
        ({"outputs": [3]}, "outputs must list non-empty strings, got 3"),
        ({"id": 2021}, "id must be a non-empty string, got 2021"),
        ({"notebook": 7}, "notebook must be a non-empty string, got 7"),
        ({"status": ["done"]}, r"status=\['done'\], expected one of"),
        ({"notes": ["a"]}, "notes must be text, got list"),
    ],
)
def test_registry_entries_of_the_wrong_type_are_named_not_read_character_by_character(tmp_path, change, message):
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump({"items": [{**ENTRY, **change}]}, allow_unicode=True))
    refused(lambda: load_registry(path), message)


def test_a_registry_that_is_not_yaml_or_not_a_file_is_named(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text("items: [\n  - id: x\n")
    refused(lambda: load_registry(path), "registry.yaml: not valid YAML")
    with pytest.raises(FileNotFoundError, match="not found"):
        load_registry(tmp_path)
    refused(lambda: published(42), "item_id=42: expected a registry id")
