import pytest

from pate_study.reporting import verdicts


def test_within_tolerance_agrees_and_differs():
    assert verdicts.within_tolerance(0.94, 0.92, atol=0.05).verdict == "agrees"
    v = verdicts.within_tolerance(0.94, 0.67, atol=0.05, why_differs="validation rows biased")
    assert v.verdict == "differs" and v.reason == "validation rows biased"
    assert verdicts.within_tolerance(100.0, 104.0, rtol=0.05).verdict == "agrees"
    assert verdicts.within_tolerance(100.0, 106.0, rtol=0.05).verdict == "differs"


def test_within_range_and_record_keys():
    v = verdicts.within_range(7, 8, 9.5, quantity="accuracy drop")
    assert v.verdict == "differs"
    assert set(v.as_record()) == {"verdict", "verdict_rule", "verdict_reason", "verdict_evidence"}
    assert v.as_record()["verdict_evidence"] == []  # a tolerance rule reads no interval
    assert verdicts.within_range(7, 8, 8.2, slack=0.5).verdict == "agrees"


@pytest.mark.parametrize(
    "call",
    [
        lambda: verdicts.within_tolerance(1.0, 1.0),  # no tolerance stated
        lambda: verdicts.within_tolerance(float("nan"), 1.0, atol=1),  # not finite
        lambda: verdicts.within_range(2, 1, 1.5),  # empty range
        lambda: verdicts.not_comparable(""),  # no reason
        lambda: verdicts.Verdict("maybe", "rule"),  # unknown verdict
    ],
)
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()
