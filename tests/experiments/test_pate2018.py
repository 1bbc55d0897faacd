"""experiments/pate2018.py: Table 2 rows, seed runs, the smooth-sensitivity release and the verdicts, on small votes."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from pate_study.experiments import pate2018 as p
from pate_study.experiments import pate2018_lab
from pate_study.experiments.pate2018_sections import Table2
from pate_study.privacy import confident_gnmax_epsilon
from pate_study.privacy import smooth_sensitivity as ss


@pytest.fixture(scope="module")
def votes():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(10, 0.15), size=60)
    return np.stack([rng.multinomial(50, q) for q in probs])


@pytest.fixture(scope="module")
def setting():
    return dataclasses.replace(
        p.PAPER2018_CONFIDENT["mnist"],
        threshold=35,
        sigma1=12,
        sigma2=8,
        n_queries=60,
        ss_order=6.0,
        ss_beta=0.05,
        ss_sigma=5.0,
    )


def test_confident_rows_invariants(votes, setting):
    row = p.confident_gnmax_rows(votes, setting)
    assert 0 < row["expected_answered"] < 60
    assert row["expected_epsilon_improved"] <= row["expected_epsilon_basic"] <= row["epsilon_independent_basic"]


def test_first_queries_rejects_too_many(votes):
    with pytest.raises(ValueError, match="n_queries: expected 1..60"):
        p.first_queries(votes, 61)


def test_realised_runs_are_seeded_and_spread(votes, setting):
    a = p.realised_runs(votes, setting, 8, 0)
    b = p.realised_runs(votes, setting, 8, 0)
    pd.testing.assert_frame_equal(a, b)
    assert a["answered"].nunique() > 1 and (a["answered"] <= 60).all()
    with pytest.raises(ValueError, match="n_draws=1"):
        p.realised_runs(votes, setting, 1, 0)


def test_realised_runs_charge_each_draw_as_the_accountant_does(votes, setting):
    """The vectorised runs (one noise array, one matrix product) give each draw the accountant's realised ε for the
    same answered mask."""
    runs = p.realised_runs(votes, setting, 6, 3)
    first = p.first_queries(votes, setting.n_queries)
    noise = np.random.default_rng(3).normal(0.0, setting.sigma1, size=(6, len(first)))
    masks = first.max(axis=1)[None, :] + noise >= setting.threshold
    for r, mask in enumerate(masks):
        spent = confident_gnmax_epsilon(
            votes=first,
            threshold=setting.threshold,
            sigma1=setting.sigma1,
            sigma2=setting.sigma2,
            delta=setting.delta,
            cost="realized",
            answered=mask,
        )
        assert runs.loc[r, "answered"] == mask.sum()
        assert runs.loc[r, "epsilon"] == pytest.approx(spent.epsilon, rel=1e-10)


def test_printed_draw_verdict_agrees_differs_and_is_inconclusive_at_an_end():
    draws = np.arange(270, 301)  # central 95%: [270.75, 299.25]
    assert p.printed_draw_verdict("286", draws, quantity="answered").verdict == "agrees"
    v = p.printed_draw_verdict("250", draws, quantity="answered")
    assert v.verdict == "differs" and "250" in v.reason and "percentile 0.0" in v.evidence
    assert p.printed_draw_verdict("301", draws, quantity="answered").verdict == "differs"
    assert p.printed_draw_verdict("299", draws, quantity="answered").verdict == "inconclusive"  # 299 ± 0.5 straddles
    v = p.printed_draw_verdict("2.0", np.linspace(1.9, 2.04, 50), quantity="ε")  # ± 0.05 straddles 2.04
    assert v.verdict == "inconclusive" and "t-interval" in v.evidence


def test_percentile_and_interval():
    assert p.percentile_of(2.0, [1, 2, 3, 4]) == pytest.approx(37.5)
    assert p.seed_interval(np.arange(101), 0.9) == pytest.approx((5.0, 95.0))


def test_expected_local_sensitivity_equals_the_sum_over_queries(votes, setting):
    """The per-distinct-value shortcut gives the same sum as computing every query on its own."""
    fast = p.expected_local_sensitivity(votes, setting, 50)
    from pate_study.privacy.rdp import threshold_logpr

    slow = np.zeros(50)
    for row in votes:
        pr = np.exp(threshold_logpr([row.max()], setting.threshold, setting.sigma1))[0]
        slow += ss.local_sensitivity_bounds_threshold(
            row.max(), 50, setting.threshold, setting.sigma1, setting.ss_order
        )
        slow += pr * ss.local_sensitivity_bounds_gnmax(row[None, :], 50, setting.sigma2, setting.ss_order)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-300)


def test_smooth_sensitivity_release_adds_its_cost(votes, setting):
    r = p.smooth_sensitivity_confident(votes, setting, 50, seeds=range(3))
    assert r["epsilon_expected"] == pytest.approx(r["expected_epsilon_before_release"] + r["rdp_gnss"])
    assert r["epsilon_std"] == pytest.approx(r["smooth_sensitivity"] * setting.ss_sigma)
    assert len(set(r["epsilon_released_draws"])) == 3
    with pytest.raises(ValueError, match="no smooth-sensitivity parameters"):
        p.smooth_sensitivity_confident(votes, p.PAPER2018_CONFIDENT["adult"], 50)


def test_table2_verdicts(votes, setting):
    row = p.confident_gnmax_rows(votes, setting)
    runs = {"mnist": pd.DataFrame({"answered": np.arange(270, 300), "epsilon": np.linspace(1.9, 2.1, 30)})}
    real = p.table2_comparison([row], runs, real_data=True)
    assert real.loc[0, "verdict"] == "agrees"  # 286 and 1.97 lie inside the runs' intervals
    far = {"mnist": runs["mnist"].assign(answered=np.arange(100, 130))}
    differs = p.table2_comparison([row], far, real_data=True)
    assert differs.loc[0, "verdict"] == "differs" and "286" in differs.loc[0, "verdict_reason"]
    assert p.table2_overall_verdict(differs, real_data=True).verdict == "differs"
    overall = p.table2_overall_verdict(real, real_data=True)
    assert overall.verdict == "agrees" and "one run" in overall.evidence and "Reading" in overall.reason
    assert p.table2_overall_verdict(real, real_data=False).verdict == "not comparable"


def test_table2_on_synthetic_votes_has_the_real_tables_columns(votes, setting):
    """Notebook 06 selects rows by ``answered_verdict`` on either data; stand-in votes once lacked the column and the
    notebook failed without the mirror."""
    row = p.confident_gnmax_rows(votes, setting)
    runs = {"mnist": pd.DataFrame({"answered": np.arange(270, 300), "epsilon": np.linspace(1.9, 2.1, 30)})}
    real, synthetic = (p.table2_comparison([row], runs, real_data=r) for r in (True, False))
    assert list(synthetic.columns) == list(real.columns)
    assert synthetic.loc[0, ["answered_verdict", "epsilon_verdict", "verdict"]].tolist() == ["not comparable"] * 3
    assert synthetic.query("answered_verdict == 'differs'").empty


def test_lnmax_2017_rows(votes):
    rows = p.lnmax_moments_rows({"mnist": votes}, [p.LnmaxSetting("mnist", 40, 0.05, 1e-5, None)])
    r = rows.iloc[0]
    assert r["epsilon_code_q"] <= r["epsilon_theorem_q"] <= r["epsilon_independent"]
    assert np.isnan(r["paper_epsilon"])
    assert np.isnan(r["window_epsilon_min"])  # rows known: no windows scanned
    unknown = p.LnmaxSetting("mnist", 20, 0.1, 1e-5, None, first_rows_are_the_queries=False)
    r = p.lnmax_moments_rows({"mnist": votes}, [unknown]).iloc[0]
    eps = p.window_epsilons(votes, unknown, step=10)  # windows at 0, 10, ..., 40
    assert len(eps) == 5 and eps[0] == pytest.approx(r["epsilon_theorem_q"])
    assert r["window_epsilon_min"] <= r["epsilon_theorem_q"] <= r["window_epsilon_max"]


def _lnmax_row(**kw):
    base = {
        "dataset": "svhn",
        "queries": 500,
        "gamma": 0.1,
        "paper_epsilon": 5.04,
        "epsilon_theorem_q": 5.041,
        "first_rows_are_the_queries": True,
    }
    return pd.Series({**base, **kw})


def test_lnmax_verdict_rule_compares_only_the_analysis_gamma_on_the_papers_queries():
    v = p.lnmax_row_verdict(_lnmax_row(), real_data=True)
    assert v.verdict == "agrees" and "exact: no random source" in v.evidence and "± 0.005" in v.rule
    v = p.lnmax_row_verdict(_lnmax_row(epsilon_theorem_q=5.05), real_data=True)
    assert v.verdict == "differs"  # 0.01 from a two-decimal value is outside the rounding
    v = p.lnmax_row_verdict(_lnmax_row(gamma=0.05, epsilon_theorem_q=5.04), real_data=True)
    assert v.verdict == "not comparable" and "γ = 0.05" in v.reason  # right number, wrong γ: no agreement
    v = p.lnmax_row_verdict(_lnmax_row(dataset="mnist", queries=100, first_rows_are_the_queries=False), real_data=True)
    assert v.verdict == "not comparable" and "index file" in v.reason and "unexplained" not in v.reason
    v = p.lnmax_row_verdict(
        _lnmax_row(
            dataset="mnist",
            queries=1000,
            paper_epsilon=8.03,
            first_rows_are_the_queries=False,
            window_epsilon_min=4.6,
            window_epsilon_max=9.2,
        ),
        real_data=True,
    )
    assert v.verdict == "not comparable" and "unexplained" in v.reason and "holds 100" in v.reason
    assert "4.600" in v.reason and "9.200" in v.reason
    assert p.lnmax_row_verdict(_lnmax_row(), real_data=False).verdict == "not comparable"


def test_lnmax_table_verdict():
    table = pd.DataFrame(
        [_lnmax_row(), _lnmax_row(queries=1000, epsilon_theorem_q=7.0, paper_epsilon=8.19), _lnmax_row(gamma=0.05)]
    )
    judged, overall = p.lnmax_verdicts(table, real_data=True)
    assert list(judged["verdict"]) == ["agrees", "differs", "not comparable"]
    assert overall.verdict == "differs" and "1000" in overall.reason
    _, overall = p.lnmax_verdicts(table.iloc[[0, 2]], real_data=True)
    assert overall.verdict == "agrees"
    _, overall = p.lnmax_verdicts(table.iloc[[2]], real_data=True)
    assert overall.verdict == "not comparable"


def test_paper_2017_settings_use_both_gammas_and_mark_the_mnist_index_file():
    gammas = {s.gamma for s in p.PAPER2017_LNMAX}
    assert gammas == {0.1, 0.05} and p.PAPER2017_ANALYSIS_GAMMA == 0.1
    assert all(not s.first_rows_are_the_queries for s in p.PAPER2017_LNMAX if s.dataset == "mnist")
    assert {(s.dataset, s.n_queries): s.paper_epsilon for s in p.PAPER2017_LNMAX} == {
        ("mnist", 100): 2.04,
        ("mnist", 1000): 8.03,
        ("svhn", 500): 5.04,
        ("svhn", 1000): 8.19,
    }


def test_reference_script_independent_cost_closed_form(votes, setting):
    """min over the 2018 grid of n·α/(2σ1²) + E[answered]·α/σ2² + ln(1/δ)/(α−1), and between the data-dependent ε
    and the every-query-answered bound (Pr[answered] ≤ 1)."""
    from pate_study.privacy.accounting import paper2018_orders
    from pate_study.privacy.rdp import threshold_logpr

    r = p.reference_script_expected_epsilon(votes, setting)
    expected = np.exp(threshold_logpr(votes.max(axis=1), setting.threshold, setting.sigma1)).sum()
    a = paper2018_orders()
    curve = 60 * a / (2 * setting.sigma1**2) + expected * a / setting.sigma2**2 - np.log(setting.delta) / (a - 1)
    assert r["expected_epsilon"] == pytest.approx(curve.min(), rel=1e-12) and "epsilon" not in r
    assert r["expected_answered"] == pytest.approx(expected, rel=1e-12)
    row = p.confident_gnmax_rows(votes, setting)
    assert row["expected_epsilon_reference_script_basic"] <= row["epsilon_independent_basic"]
    assert row["expected_epsilon_reference_script_improved"] <= row["expected_epsilon_reference_script_basic"]


def test_answered_count_tests_find_rows_and_threshold(votes, setting):
    s = dataclasses.replace(setting, n_queries=30, paper_answered=20)
    t = p.answered_count_tests(votes, s, n_subsets=50, seed=0)
    from pate_study.privacy.rdp import threshold_logpr

    pr = np.exp(threshold_logpr(votes.max(axis=1), s.threshold, s.sigma1))
    if pr.sum() >= 20:
        assert pr[: t["first_rows_needed"]].sum() >= 20 > pr[: t["first_rows_needed"] - 1].sum()
    first30 = votes[:30].max(axis=1)
    assert np.exp(threshold_logpr(first30, t["threshold_needed"], s.sigma1)).sum() == pytest.approx(20, rel=1e-6)
    assert 0 <= t["subset_share_reaching_printed"] <= 1
    assert t["pr_answered_first_rows"] == pytest.approx(pr[:30].mean())


def test_table2_reason_names_the_failing_quantity(votes, setting):
    row = p.confident_gnmax_rows(votes, setting)
    runs = {"mnist": pd.DataFrame({"answered": np.arange(270, 300), "epsilon": np.linspace(1.0, 1.5, 30)})}
    t = p.table2_comparison([row], runs, real_data=True)
    assert t.loc[0, "answered_verdict"] == "agrees" and t.loc[0, "epsilon_verdict"] == "differs"
    assert "answered count agrees" in t.loc[0, "verdict_reason"] and "answered-tests" not in t.loc[0, "verdict_reason"]
    both = p.table2_comparison([row], {"mnist": runs["mnist"].assign(answered=np.arange(100, 130))}, real_data=True)
    assert (
        both.loc[0, "verdict"] == "differs"
        and "286" in both.loc[0, "verdict_reason"]
        and "1.97" in both.loc[0, "verdict_reason"]
    )


def test_a_published_threshold_above_the_teachers_is_logged_once_not_warned(votes, setting, caplog, monkeypatch):
    """SVHN's paper setting (T = 300 with 250 teachers) is run as published: it is said once in the log, however many
    entry points account it (06 printed the line twice, the table's and the seeds' computations), and shows no
    ThresholdRangeWarning (a pink box with a file path in a student's notebook)."""
    import logging
    import warnings

    monkeypatch.setattr(p, "_THRESHOLDS_SAID", set())
    above = dataclasses.replace(setting, threshold=60)  # 50 teachers in the fixture
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level(logging.INFO, logger="pate_study.experiments.pate2018"):
            p.confident_gnmax_rows(votes, above)
            p.realised_runs(votes, above, 2, 0)
            p.smooth_sensitivity_confident(votes, above, 50, seeds=range(1))
    assert sum("kept as published" in r.getMessage() for r in caplog.records) == 1


def test_table2_rows_and_the_lab_read_the_expected_cost_under_its_own_name(votes, setting):
    """Table 2's data-dependent ε is an expected cost: read from ``expected_epsilon``, and labelled in the lab."""
    row = p.confident_gnmax_rows(votes, setting)
    first = p.first_queries(votes, setting.n_queries, name=setting.dataset)
    with p.published_threshold(setting, first):
        expected = confident_gnmax_epsilon(
            votes=first,
            threshold=setting.threshold,
            sigma1=setting.sigma1,
            sigma2=setting.sigma2,
            delta=setting.delta,
            cost="expected",
        )
    assert row["expected_epsilon_basic"] == expected.expected_epsilon
    table = pate2018_lab.conversions(
        first, threshold=setting.threshold, sigma1=setting.sigma1, sigma2=setting.sigma2, delta=setting.delta
    )
    dependent = table[table["analysis"] == "data-dependent"].set_index("conversion")
    assert dependent.loc["basic", "epsilon"] == expected.expected_epsilon
    assert set(dependent["cost"]) == {"expected (Table 2), not a guarantee"}
    assert set(table[table["analysis"] == "data-independent"]["cost"]) == {"guarantee: every query charged both steps"}


def test_table2_is_shown_compact_paper_beside_ours_and_rounded():
    """06 shows Table 2 in grouped, rounded columns (the CSV keeps every column at full precision)."""
    table = pd.DataFrame(
        {
            "dataset": ["mnist"],
            "queries": [640],
            "paper_answered": [286],
            "expected_answered": [282.721029],
            "realised_answered_mean": [283.226],
            "paper_epsilon": [1.97],
            "expected_epsilon_basic": [1.998817],
            "realised_epsilon_mean": [1.998894],
            "verdict": ["agrees"],
        }
    )
    shown = Table2(table, {}).shown
    assert list(shown.columns.get_level_values(0)) == ["", "answered", "answered", "answered", "ε", "ε", "ε", ""]
    assert shown.loc["mnist", ("answered", "expected")] == 282.7
    assert shown.loc["mnist", ("ε", "expected")] == 1.999


def test_no_expected_cost_is_recorded_under_an_epsilon_name(votes, setting):
    """An expectation over runs of the check is not an (ε, δ) guarantee: every such number of notebook 06's rows is
    named ``expected_...`` (or ``..._expected``); a bare ``epsilon_...`` column holds a guarantee."""
    row = p.confident_gnmax_rows(votes, setting)
    release = p.smooth_sensitivity_confident(votes, setting, 50, seeds=range(2))
    guarantees = {"epsilon_independent_basic", "epsilon_independent_improved"}
    released = {"epsilon_std", "epsilon_released_draws"}  # the release's spread and its private draws
    named = {k for k in [*row, *release] if "epsilon" in k and "expected" not in k}
    assert named == guarantees | released


def test_table2_records_the_rows_of_every_interval_its_verdicts_print(votes, setting):
    """The one-run ranges and the means over runs printed in Table 2's evidence are the recorded estimates."""
    runs = {"mnist": pd.DataFrame({"answered": np.arange(270, 300), "epsilon": np.linspace(1.9, 2.1, 30)})}
    estimates = p.table2_printed_estimates(runs)
    assert set(estimates) == {f"mnist.{c}.{k}" for c in ("answered", "epsilon") for k in ("one_run", "mean")}
    verdict = p.printed_draw_verdict("286", runs["mnist"]["answered"], quantity="answered queries of one run")
    for key in ("mnist.answered.one_run", "mnist.answered.mean"):
        assert estimates[key].render().split(" over ")[0] in verdict.evidence, key
