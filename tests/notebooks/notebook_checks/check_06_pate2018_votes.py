"""The smoke check of notebooks/06_pate2018_votes.ipynb: what it must have recorded (not only that it ran)."""

import math

import pytest
from notebook_checks.shared import paper2018_orders, rdp_gnss


def check(scalars: dict, params: dict) -> None:
    """06_pate2018_votes: Table 2's accounting invariants and closed forms, the seed runs, the smooth-sensitivity
    release and the 2017 moments accountant; every comparison with a printed value carries a verdict."""
    table = scalars["papernot2018-table2"]
    assert table["verdict"] in ("agrees", "differs", "inconclusive", "not comparable") and table["verdict_rule"]
    orders = paper2018_orders()
    for row in table["rows"]:
        assert 0 < row["expected_answered"] <= row["queries"]
        assert row["expected_epsilon_basic"] <= row["epsilon_independent_basic"] + 1e-9  # data-dependent <= independent
        assert row["expected_epsilon_improved"] <= row["expected_epsilon_basic"] + 1e-9
        per_query = 1 / (2 * row["sigma1"] ** 2) + 1 / row["sigma2"] ** 2  # α/(2σ1²) + α/σ2², every query answered
        closed = min(row["queries"] * per_query * a + math.log(1 / row["delta"]) / (a - 1) for a in orders)
        assert row["epsilon_independent_basic"] == pytest.approx(closed, rel=1e-9)
        assert row["n_seeds"] == params["n_seeds"]
        if isinstance(row.get("paper_answered"), (int, float)) and not math.isnan(row["paper_answered"]):
            assert 0 <= row["paper_answered_percentile"] <= 100 and row["verdict"]
    releases = scalars["papernot2018-ss-release"]["rows"]
    assert [r["dataset"] for r in releases] == params["ss_datasets"]
    for r in releases:
        assert r["conditions_C5_C6"]
        assert r["rdp_gnss"] == pytest.approx(rdp_gnss(r["beta"], r["sigma_ss"], r["order"]), rel=1e-9)
        delta = {x["dataset"]: x["delta"] for x in table["rows"]}[r["dataset"]]
        conversion = math.log(1 / delta) / (r["order"] - 1)
        assert r["expected_epsilon_before_release"] == pytest.approx(r["rdp_data_dependent"] + conversion, rel=1e-9)
        assert r["epsilon_expected"] == pytest.approx(r["expected_epsilon_before_release"] + r["rdp_gnss"], rel=1e-9)
        assert r["epsilon_std"] == pytest.approx(r["smooth_sensitivity"] * r["sigma_ss"], rel=1e-9)
    lnmax = scalars["papernot2017-table2"]
    assert lnmax["verdict"] in ("agrees", "differs", "not comparable")
    for r in lnmax["rows"]:
        T, gamma, delta = r["queries"], r["gamma"], r["delta"]
        integer = min((2 * T * gamma**2 * order * (order + 1) - math.log(delta)) / order for order in range(1, 9))
        assert r["epsilon_independent"] == pytest.approx(integer, rel=1e-9)
        assert r["epsilon_theorem_q"] <= r["epsilon_independent"] + 1e-9
        assert r["epsilon_code_q"] <= r["epsilon_theorem_q"] + 1e-9  # q < 0.5 admits more queries than the theorem
