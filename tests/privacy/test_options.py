"""The option objects of the multi-label accountants (``pate_study.privacy.options``): each checks its fields where
it is built, against the one table of ranges the command line reads too; the enumerations equal their strings."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pate_study.privacy import __main__ as cli
from pate_study.privacy import _validation as validation
from pate_study.privacy import accounting, aggregators, rdp
from pate_study.privacy import multiwinner as mw
from pate_study.privacy.options import (
    DEFAULT_ACCOUNTING,
    Accounting,
    Charge,
    ConfidenceCheck,
    ConfidenceRule,
    Conversion,
    Cost,
    NoiseConvention,
    QBound,
    TauComposition,
    choice,
)


def _edges(kind: str) -> list[tuple[float, bool]]:
    """Values at and just past both ends of a table entry, with whether the entry accepts them."""
    interval = validation.PARAMETER_CONSTRAINTS[kind]
    values = [
        np.nextafter(interval.low, -np.inf),
        interval.low,
        interval.high,
        np.nextafter(interval.high, np.inf),
    ]
    return [(float(v), interval.contains(float(v))) for v in values]


@pytest.mark.parametrize("value, accepted", _edges("noise_scale"))
def test_check_sigma_reads_the_table_like_the_cli_sigma1(value, accepted):
    built = True
    try:
        ConfidenceCheck(threshold=1.0, sigma=value)
    except ValueError as exc:
        built = False
        assert str(exc).startswith("check.sigma: expected a noise scale in [1e-150, 1e+150]")
    assert built == accepted
    parsed = True
    try:
        cli._ranged("--sigma1")(repr(value))
    except Exception:
        parsed = False
    assert parsed == accepted


@pytest.mark.parametrize("value, accepted", _edges("threshold"))
def test_check_threshold_reads_the_table_like_the_cli_threshold(value, accepted):
    try:
        ConfidenceCheck(threshold=value, sigma=1.0)
        built = True
    except ValueError as exc:
        built = False
        assert str(exc).startswith("check.threshold: expected a threshold in")
    assert built == accepted
    try:
        cli._ranged("--threshold")(repr(value))
        parsed = True
    except Exception:
        parsed = False
    assert parsed == accepted


def test_one_table_for_the_cli_help_and_its_documented_ranges():
    """The library and the command line read PARAMETER_CONSTRAINTS: --help prints each flag's range from it, and
    the ranges the module docstring states are the table's (noise scales 1e-150..1e150, not 1e-100..1e100)."""
    help_text = " ".join(cli.build_parser()._subparsers._group_actions[0].choices["epsilon"].format_help().split())
    for flag in cli.RANGES:
        interval = validation.PARAMETER_CONSTRAINTS[validation.PARAMETER_KINDS[flag]]
        assert interval.text() in help_text, flag
    doc = " ".join(cli.__doc__.split())
    stated = re.search(r"``--sigma2`` in \[([^,]+), ([^\]]+)\]", doc)
    noise = validation.PARAMETER_CONSTRAINTS["noise_scale"]
    assert (float(stated[1]), float(stated[2])) == (noise.low, noise.high)
    gamma = re.search(r"``--gamma`` in \[([^,]+), ([^\]]+)\]", doc)
    assert (float(gamma[1]), float(gamma[2])) == (
        validation.PARAMETER_CONSTRAINTS["gamma"].low,
        validation.PARAMETER_CONSTRAINTS["gamma"].high,
    )
    magnitude = re.search(r"``--threshold`` with magnitude at most ([0-9e.+-]+)", doc)
    assert float(magnitude[1]) == validation.PARAMETER_CONSTRAINTS["threshold"].high


def test_check_fields_are_checked_where_the_check_is_built():
    check = ConfidenceCheck(threshold=np.float64(0.5), sigma=np.float32(0.25), rule="printed", top_n=3.0)
    assert (check.threshold, check.sigma, check.rule, check.top_n) == (0.5, 0.25, ConfidenceRule.PRINTED, 3)
    assert isinstance(check.top_n, int) and check.rule == "printed"
    assert check.as_params() == {"confidence_threshold": 0.5, "sigma_confidence": 0.25, "rule": "printed", "top_n": 3}
    for kwargs, message in (
        ({"threshold": np.nan, "sigma": 1.0}, "^check.threshold: expected a threshold"),
        ({"threshold": 0.5, "sigma": 0.0}, "^check.sigma: expected a noise scale"),
        ({"threshold": 0.5, "sigma": 1.0, "rule": "min"}, r"^check.rule: expected one of \['max', 'printed'\]"),
        ({"threshold": 0.5, "sigma": 1.0, "top_n": 0}, "^check.top_n: expected a positive integer"),
        ({"threshold": 0.5, "sigma": 1.0, "top_n": True}, "^check.top_n: expected an integer >= 1"),
        ({"threshold": 0.5, "sigma": 1.0, "top_n": 2.5}, "^check.top_n: .*not an integer"),
    ):
        with pytest.raises(ValueError, match=message):
            ConfidenceCheck(**kwargs)
    with pytest.raises(AttributeError):
        check.sigma = 2.0  # frozen: a check cannot change after it was checked


def test_charge_and_accounting_defaults_are_the_guarantee_and_the_paper_grid():
    assert Charge().cost is Cost.REALIZED and Charge("expected").cost is Cost.EXPECTED
    with pytest.raises(ValueError, match=r"^charge.cost: expected one of \['expected', 'realized'\], got 'realised'"):
        Charge("realised")
    assert Accounting() == DEFAULT_ACCOUNTING
    assert (DEFAULT_ACCOUNTING.orders, DEFAULT_ACCOUNTING.conversion) == ("paper2018", Conversion.BASIC)
    assert Accounting([2.0, 3.0], "improved").conversion is Conversion.IMPROVED
    with pytest.raises(ValueError, match=r"^conversion: expected one of \['basic', 'improved'\]"):
        Accounting(conversion="tight")
    with pytest.raises(ValueError, match="^orders: expected a named grid"):
        Accounting(orders=" ")


def test_enumerations_equal_their_strings_and_refuse_others_naming_the_parameter():
    for kind in (Conversion, Cost, ConfidenceRule, QBound, TauComposition, NoiseConvention):
        for member in kind:
            assert choice("x", member.value, kind) is member and member == member.value
    assert mw.Q_BOUNDS == ("union", "exact") and mw.TAU_COMPOSITIONS == ("joint", "per_label")
    assert mw.NOISE_CONVENTIONS == ("sum", "two_counts")
    with pytest.raises(ValueError, match=r"^q_bound: expected one of \['union', 'exact'\], got 'tight'"):
        mw.tau_logq(np.ones((2, 3)), 1.0, 1.0, "tight")
    with pytest.raises(ValueError, match=r"^noise: expected one of \['sum', 'two_counts'\]"):
        mw.union_bound_epsilon(sigma=1.0, delta=1e-5, n_queries=1, n_labels=2, noise="both")


def test_a_check_selects_the_confident_variant_a_missing_one_the_plain():
    rng = np.random.default_rng(0)
    p = rng.integers(0, 11, size=(40, 3))
    plain = mw.binary_pate(p, 10, 2.0, 5)
    confident = mw.binary_pate(p, 10, 2.0, 5, check=ConfidenceCheck(9.0, 1.0))
    assert plain.mechanism == "binary" and plain.answered.all()
    assert confident.mechanism == "confident-binary" and not confident.answered.all()
    assert confident.params["threshold"] == 9.0 and confident.params["sigma_threshold"] == 1.0


def test_the_cli_reads_its_choices_as_enumerations_and_refuses_others_in_argparse_words(capsys):
    args = cli.build_parser().parse_args(["epsilon", "--aggregator", "gnmax", "--delta", "1e-5", "--n-queries", "3"])
    assert args.aggregator is cli.Aggregator.GNMAX and cli.default_accountant(args.aggregator) is cli.Accountant.RDP2018
    assert cli.main(["epsilon", "--aggregator", "lnmax", "--delta", "1e-5", "--n-queries", "3", "--gamma", "0.05"]) == 0
    assert '"aggregator": "lnmax"' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["epsilon", "--aggregator", "foo", "--delta", "1e-5", "--n-queries", "3"])
    err = capsys.readouterr().err
    assert "invalid choice: 'foo' (choose from 'lnmax', 'gnmax', 'confident-gnmax')" in err and "<Aggregator" not in err


def test_the_enumerations_name_the_same_choices_as_the_modules_that_still_hold_tuples():
    """rdp.COSTS, accounting.CONVERSIONS and aggregators.CONFIDENCE_RULES are still read by other accountants: the
    enumerations must name exactly the same choices (one set of choices, until those modules read the enums)."""
    assert {c.value for c in Cost} == set(rdp.COSTS)
    assert {c.value for c in Conversion} == set(accounting.CONVERSIONS)
    assert {r.value for r in ConfidenceRule} == set(aggregators.CONFIDENCE_RULES)


def test_the_check_fields_read_the_table_entries_their_names_give():
    kinds = validation.PARAMETER_KINDS
    assert kinds["confidence_threshold"] == kinds["threshold"] == "threshold"
    assert kinds["sigma_confidence"] == kinds["sigma_threshold"] == kinds["sigma1"] == "noise_scale"
    assert kinds["top_n"] == "count"
