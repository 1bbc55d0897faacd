"""Every committed verdict that rests on data shows its evidence: the interval and the random sources behind our
number, as ``figures/INDEX.md`` prints it ("estimate [low, high] over N replicates of SOURCES", or "exact: no random
source" where nothing is random).

A verdict of *agrees*, *differs* or *inconclusive* with basis ``data`` must carry ``verdict_estimate``
(:meth:`pate_study.reporting.verdicts.Verdict.as_record`); *not comparable* and the analytic or source-inconsistency
verdicts are labelled as such and need none. The rule itself is tested both ways on constructed records.
"""

import json

import pytest

from pate_study.core.paths import FIGURES_DIR

JUDGED = ("agrees", "differs", "inconclusive")


def verdict_records(scalars: dict) -> dict[str, dict]:
    """The records of ``scalars`` (one notebook's ``scalars.json``) that carry a verdict."""
    return {k: v for k, v in scalars.items() if isinstance(v, dict) and isinstance(v.get("verdict"), str)}


def without_evidence(scalars: dict) -> list[str]:
    """Ids of judged, data-based verdicts that show no interval or exact value."""
    return [
        item
        for item, record in verdict_records(scalars).items()
        if record["verdict"] in JUDGED
        and record.get("verdict_basis", "data") == "data"
        and not record.get("verdict_estimate")
    ]


def test_the_rule_finds_a_judged_verdict_without_its_interval_and_passes_the_rest():
    scalars = {
        "a": {"verdict": "differs", "verdict_estimate": "0.3 [0.2, 0.4] over 3 replicates of student training seed"},
        "b": {"verdict": "agrees"},
        "c": {"verdict": "not comparable"},
        "d": {"verdict": "agrees", "verdict_basis": "analytic"},
        "_provenance": {"profile": "paper"},
    }
    assert without_evidence(scalars) == ["b"]


@pytest.mark.parametrize("path", sorted(FIGURES_DIR.glob("*/scalars.json")), ids=lambda p: p.parent.name)
def test_every_committed_judged_verdict_shows_its_interval(path):
    missing = without_evidence(json.loads(path.read_text(encoding="utf-8")))
    assert not missing, f"{path.parent.name}: verdicts without an interval or exact value: {missing}"
