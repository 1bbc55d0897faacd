"""Claims as data, one engine: every rule family must be able to say agrees, differs and inconclusive; the only
constant tolerance is the printed precision; analytic claims and the source's own inconsistencies are labelled and
never counted as evidence."""

import math

import numpy as np
import pytest

from pate_study.reporting import claims as c
from pate_study.reporting import uncertainty as u
from pate_study.reporting.index import verdict_cell
from pate_study.reporting.registry import Item
from pate_study.reporting.verdicts import combine


def est(low, high, value=None):
    value = (low + high) / 2 if value is None else value
    return u.Estimate(value, low, high, 3, (u.STUDENT_SEED,), "t-interval")


@pytest.mark.parametrize(
    "printed, half",
    [
        ("0.104", 0.0005),
        ("1018.4", 0.05),
        ("20", 0.5),
        ("1e-4", 5e-5),
        ("2.5e3", 50.0),
        ("0.130", 0.0005),
        ("35 %", 0.005),
        ("~0.65", 0.005),
        ("1,018.4", 0.05),
        ("1.5×", 0.05),
    ],
)
def test_printed_precision_is_half_the_last_printed_digit(printed, half):
    assert c.printed_half_unit(printed) == pytest.approx(half)


def test_printed_text_must_be_a_number_and_match_the_boundary():
    with pytest.raises(ValueError, match="printed"):
        c.printed_half_unit("n/a")
    with pytest.raises(ValueError, match="not the claim's number"):
        c.Claim("x", "s", "q", "level", boundary=0.2, printed="0.104")


LEVEL = c.Claim(
    "best student mAP",
    "Muschiol 2021, Table 5.4",
    "student mAP",
    "level",
    (u.STUDENT_SEED,),
    boundary=0.104,
    printed="0.104",
)
RANGE = c.Claim("ratio 2 to 3", "s", "ε ratio", "range", boundary=2.0, upper=3.0, printed="2", printed_upper="3")
DIRECTION = c.Claim("more teachers, lower mAP", "s", "mAP(10) − mAP(50)", "direction")
BELOW = c.Claim("students below 0.2", "s", "best student mAP", "direction", boundary=0.2, side="below", printed="0.2")
RATIO = c.Claim("check raises F1", "s", "F1 with / without", "ratio")
SAVES = c.Claim("th_e 0.4 saves", "s", "ε saving", "level", boundary=0.0, printed="0.0", negated=True)
STEP = c.Claim("falls at every step", "s", "mAP(t) − mAP(next t)", "every-step")


@pytest.mark.parametrize(
    "claim, estimate, verdict",
    [
        (LEVEL, est(0.1036, 0.1044), "agrees"),  # inside 0.104 ± 0.0005
        (LEVEL, est(0.120, 0.130), "differs"),  # wholly above the band
        (LEVEL, est(0.100, 0.110), "inconclusive"),  # straddles it
        (RANGE, est(2.2, 2.9), "agrees"),
        (RANGE, est(3.6, 4.0), "differs"),  # above 3 + 0.5
        (RANGE, est(2.8, 3.7), "inconclusive"),
        (DIRECTION, est(0.01, 0.03), "agrees"),
        (DIRECTION, est(-0.03, -0.01), "differs"),
        (DIRECTION, est(-0.01, 0.02), "inconclusive"),
        (BELOW, est(0.10, 0.14), "agrees"),  # below 0.2 − 0.05
        (BELOW, est(0.26, 0.30), "differs"),
        (BELOW, est(0.12, 0.17), "inconclusive"),  # reaches into 0.2 ± 0.05
        (RATIO, est(1.2, 1.5), "agrees"),
        (RATIO, est(0.5, 0.9), "differs"),
        (RATIO, est(0.9, 1.1), "inconclusive"),
        (SAVES, est(10.0, 12.0), "agrees"),  # wholly outside 0 ± 0.05
        (SAVES, u.exact(0.0), "differs"),  # no saving at all
        (SAVES, est(0.0, 3.0), "inconclusive"),
    ],
)
def test_every_rule_family_can_agree_differ_or_be_inconclusive(claim, estimate, verdict):
    v = c.judge(claim, estimate)
    assert v.verdict == verdict and v.basis == "data"
    assert v.evidence == estimate.render() and "whole interval" in v.rule


def test_every_step_needs_every_step():
    up = u.t_interval([0.010, 0.012, 0.011, 0.013], [u.STUDENT_SEED])
    down = u.t_interval([-0.020, -0.021, -0.019, -0.022], [u.STUDENT_SEED])
    unsure = u.t_interval([-0.01, 0.01, 0.0, 0.005], [u.STUDENT_SEED])
    assert c.judge(STEP, [up, up]).verdict == "agrees"
    assert c.judge(STEP, [up, down, unsure]).verdict == "differs"
    v = c.judge(STEP, [up, unsure])
    assert v.verdict == "inconclusive" and "per step: agrees, inconclusive" in v.reason


def test_an_interval_built_without_its_data_cannot_decide_a_family():
    """A step whose interval was typed in (no replicate data) cannot be re-read at the family's stricter level, so
    it never makes a family of several steps differ; alone it is judged as before."""
    up, down = est(0.01, 0.02), est(-0.02, -0.01)
    assert c.judge(STEP, [down]).verdict == "differs"
    v = c.judge(STEP, [up, down])
    assert v.verdict == "inconclusive" and "per step: agrees, inconclusive (alone: differs)" in v.reason


def test_an_unreplicated_number_is_never_decided():
    v = c.judge(DIRECTION, u.unreplicated(0.5, [u.TEACHER_SEED]))
    assert v.verdict == "inconclusive" and "not replicated" in v.reason


def test_a_setting_not_run_is_not_comparable():
    assert c.judge(DIRECTION, None, note="one teacher count").verdict == "not comparable"
    assert c.judge(STEP, []).verdict == "not comparable"


def test_analytic_and_inconsistent_claims_are_labelled_and_not_evidence():
    claim = c.Claim(
        "the check costs more ε",
        "Muschiol 2021, §5.3: about 1.5× higher",
        "ε with / without",
        "ratio",
        basis="analytic",
    )
    with pytest.raises(ValueError, match="analytic"):
        c.judge(claim, est(0.4, 0.5))
    a = c.analytic(
        claim,
        False,
        "realised cost: the ratio is about the answered share, < 1 for any votes",
        illustration=u.exact(0.45),
    )
    assert (a.verdict, a.basis) == ("differs", "analytic") and a.reason.startswith("analytic: holds for any data")
    bad = c.source_inconsistency(
        c.Claim(
            "q average",
            "Table 5.4",
            "printed q average vs Theorem 13's floor",
            "level",
            boundary=0.148,
            printed="0.148",
        ),
        "0.148 < floor 0.970",
    )
    assert bad.verdict == "not comparable" and bad.basis == "source inconsistency"
    item = combine({"F1": c.judge(RATIO, est(1.2, 1.5)), "ε": a, "q": bad})
    assert item.verdict == "agrees" and item.basis == "data"  # the analytic differs is not evidence
    assert "ε: differs, analytic" in item.reason and "F1: " in item.evidence
    only = combine({"ε": a})
    assert (only.verdict, only.basis) == ("differs", "analytic")
    assert only.as_record()["verdict_basis"] == "analytic"


def test_index_shows_the_interval_and_its_sources():
    item = Item(
        id="muschiol2021-table5.4",
        document="muschiol2021",
        label="Table 5.4",
        type="table",
        kind="result",
        caption="c",
        same_as=(),
        notebook="nb",
        outputs=(),
        status="real data at reduced scale",
        published={"values": {"a": 1}},
    )
    v = c.judge(BELOW, u.t_interval([0.125, 0.123, 0.135], [u.RELEASE_NOISE, u.STUDENT_SEED]))
    cell = verdict_cell(item, {item.id: v.as_record()})
    assert cell.startswith("**agrees**; ours: 0.1277 [")
    assert "over 3 replicates of release-noise draw, student training seed (t-interval, 95%)" in cell
    a = c.analytic(c.Claim("x", "s", "ε ratio", "ratio", basis="analytic"), True, "RDP composition")
    assert verdict_cell(item, {item.id: a.as_record()}).startswith("**agrees** (analytic): analytic: holds for any")
    plain = verdict_cell(item, {item.id: {"verdict": "agrees", "verdict_rule": "r", "verdict_reason": ""}})
    assert plain == "**agrees** (rule: r)"  # verdicts recorded without an interval render as before


def test_bad_claims_are_refused():
    for kwargs in (
        dict(kind="guess"),
        dict(kind="level"),
        dict(kind="range", boundary=3.0, upper=2.0),
        dict(kind="direction", side="up"),
        dict(kind="direction", negated=True),
    ):
        with pytest.raises(ValueError):
            c.Claim("x", "s", "q", **kwargs)
    assert math.isclose(c.Claim("r", "s", "q", "ratio").boundary, 1.0)


def test_one_run_claim_reads_where_one_run_falls_and_comes_out_each_way():
    """ "The printed value is one run of the mechanism": agrees when the printed band lies inside the central range
    of our draws, differs when wholly outside, inconclusive at an end; a mean's interval is refused."""
    draws = np.arange(100.0, 301.0)  # 201 draws, central 95% [105, 295]
    spread = u.one_run_range(draws, [u.RELEASE_NOISE])
    assert (spread.low, spread.value, spread.high) == (105.0, 200.0, 295.0)
    assert "where one run falls" in spread.render()

    def one_run(printed):
        return c.Claim("answered", "a table", "one run", "one-run", boundary=float(printed), printed=printed)

    assert c.judge(one_run("286"), spread).verdict == "agrees"
    assert c.judge(one_run("310"), spread).verdict == "differs"
    assert c.judge(one_run("100"), spread).verdict == "differs"
    assert c.judge(one_run("295"), spread).verdict == "inconclusive"  # 295 ± 0.5 straddles the range's end
    with pytest.raises(ValueError, match="one_run_range"):
        c.judge(one_run("286"), u.t_interval(draws, [u.RELEASE_NOISE]))
    with pytest.raises(ValueError, match="at least 2"):
        u.one_run_range([1.0], [u.RELEASE_NOISE])


LOWER_THAN = c.Claim(
    "ours lower than control", "Visca 2021, Fig 4.3", "gap ours − control", "direction", side="below", strict=True
)
AT_MOST = c.Claim("ours at most control", "s", "gap ours − control", "direction", side="below", strict=False)
UNSTATED = c.Claim("ours below control", "s", "gap ours − control", "direction", side="below")
ABOVE = c.Claim("above", "s", "q", "direction", boundary=0.5, printed="0.5", strict=True)
AT_LEAST = c.Claim("at least", "s", "q", "direction", boundary=0.5, printed="0.5", strict=False)


@pytest.mark.parametrize(
    "claim, estimate, verdict",
    [
        (LOWER_THAN, u.exact(0.0), "differs"),  # a gap of 0 [0, 0]: "lower than" is false
        (LOWER_THAN, u.t_interval([0.0, 0.0, 0.0], [u.STUDENT_SEED]), "differs"),  # every replicate tied
        (AT_MOST, u.exact(0.0), "agrees"),  # "at most": a tie holds
        (AT_MOST, u.t_interval([0.0, 0.0, 0.0], [u.STUDENT_SEED]), "agrees"),
        (UNSTATED, u.exact(0.0), "inconclusive"),  # strictness not stated: a tie decides nothing
        (LOWER_THAN, u.exact(-0.01), "agrees"),
        (AT_MOST, u.exact(0.01), "differs"),
        (ABOVE, u.exact(0.45), "differs"),  # at the printed boundary's lower end: "above 0.5" cannot hold
        (ABOVE, u.exact(0.55), "inconclusive"),  # the printed 0.5 may stand for up to 0.55
        (AT_LEAST, u.exact(0.55), "agrees"),
        (AT_LEAST, u.exact(0.45), "inconclusive"),
    ],
)
def test_a_tie_is_decided_by_the_strictness_of_the_claim(claim, estimate, verdict):
    assert c.judge(claim, estimate).verdict == verdict


def test_a_tie_at_every_step_of_a_strict_claim_differs_under_the_family_rule():
    ties = {f"ε = {e}": u.t_interval([0.0, 0.0, 0.0], [u.STUDENT_SEED]) for e in (1, 10, 100)}
    assert c.judge(LOWER_THAN, ties).verdict == "differs"
    assert c.judge(AT_MOST, ties).verdict == "agrees"
    assert "a tie at the boundary differs (strict)" in c.judge(LOWER_THAN, ties).rule


def test_strictness_applies_to_a_boundary_with_a_side_only():
    with pytest.raises(ValueError, match="strict applies to"):
        c.Claim("x", "s", "q", "level", boundary=0.2, strict=True)
    with pytest.raises(ValueError, match="strict"):
        c.Claim("x", "s", "q", "direction", strict="yes")
