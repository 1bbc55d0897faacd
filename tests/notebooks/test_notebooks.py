"""Every notebook runs with its smoke profile through papermill, and the scalars it records are checked.

Each notebook needs a ``parameters`` cell, ``configs/<stem>/{smoke,paper}.yaml`` and an entry in CHECKS below
that asserts what the notebook recorded (not only that it ran).
"""

import json
import math
import re

import nbformat
import papermill
import pytest

from pate_study.core.paths import CONFIGS_DIR, NOTEBOOKS_DIR
from pate_study.reporting.outputs import read_scalars
from pate_study.reporting.verdicts import VERDICTS
from pate_study.tooling.figures.configs import load_parameters
from pate_study.tooling.figures.execution import execute_notebook
from pate_study.tooling.figures.layout import PROFILES, REQUIRED_PROFILES, RUNNER_PARAMETERS, list_notebooks
from pate_study.tooling.labcheck import PACKAGE_LOG


def check_primer(scalars: dict, params: dict) -> None:
    """00_dp_primer: the continuous and integer-order minima of Eq. (4.11) and the audit."""
    T, gamma, delta = params["n_queries"], params["gamma"], params["delta"]
    fig5 = scalars["make2021-fig5"]
    closed_eps = 2 * T * gamma**2 + 2 * math.sqrt(2 * T * gamma**2 * math.log(1 / delta))
    closed_lam = math.sqrt(math.log(1 / delta) / (2 * T * gamma**2))
    assert fig5["epsilon_star"] == pytest.approx(closed_eps, rel=1e-6)
    assert fig5["lambda_star"] == pytest.approx(closed_lam, rel=1e-4)
    curve_at_integers = [(2 * T * gamma**2 * order * (order + 1) - math.log(delta)) / order for order in range(1, 9)]
    best = min(range(8), key=curve_at_integers.__getitem__)
    assert fig5["epsilon_integer_orders"] == pytest.approx(curve_at_integers[best], rel=1e-9)
    assert fig5["order_integer"] == best + 1
    assert fig5["epsilon_integer_orders"] >= fig5["epsilon_star"]
    assert fig5["verdict"] == "agrees" and scalars["visca2021-fig4.8"]["verdict"] == "agrees"
    laplace = scalars["laplace_mechanism"]
    assert laplace["max_abs_privacy_loss"] <= laplace["epsilon"] + 1e-9
    # |loss| <= epsilon, so its standard error is at most epsilon / sqrt(n): allow five of them
    tolerance = 5 * laplace["epsilon"] / math.sqrt(params["loss_samples"])
    assert laplace["empirical_loss_mean"] == pytest.approx(laplace["theoretical_loss_mean"], abs=tolerance)
    audit = scalars["audit"]
    assert audit["lnmax_lower_bound"] <= audit["lnmax_claimed"]
    assert audit["broken_lower_bound"] > audit["broken_claimed"], "the audit must catch the halved noise"
    _check_primer_lab(scalars, params)


def _normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _paper2018_orders() -> list[float]:
    """2, 2.5, ..., 100 and 100 log-spaced orders in [100, 500] (the 2018 scripts' grid, duplicates dropped)."""
    return sorted({2 + 0.5 * i for i in range(197)} | {100 * 5 ** (k / 99) for k in range(100)})


def _rdp_gnss(beta: float, sigma: float, order: float) -> float:
    """Papernot et al. 2018 Theorem 23, closed form."""
    return order * math.exp(2 * beta) / sigma**2 + (beta * order - 0.5 * math.log(1 - 2 * order * beta)) / (order - 1)


def _check_primer_lab(scalars: dict, params: dict) -> None:
    """00_dp_primer, sections 1-7: closed forms and invariants of what each lab section records."""
    ratio = scalars["pate_study-primer-laplace-ratio"]
    assert ratio["max_abs_log_ratio"] == pytest.approx(ratio["epsilon"], rel=1e-9)  # bounded by ε, and attained
    gauss = scalars["gaussian_mechanism"]
    for eps, tail in gauss["loss_tail_probability"].items():  # sigma = sensitivity = 1
        assert tail == pytest.approx(_normal_cdf(0.5 - float(eps)), rel=1e-9)
    low, high = gauss["log_ratio_range"]
    assert low < -1 and high > 1, "the Gaussian log-ratio must leave the Laplace band on the plotted range"
    assert scalars["moments_vs_rdp"]["max_abs_difference"] < 1e-9  # log-MGF(λ)/λ = RDP(λ + 1)
    agg = scalars["pate_study-primer-aggregators"]
    T, sigma, delta, gamma = agg["n_queries"], params["sigma"], params["delta"], params["gamma"]
    for alpha, value in agg["gnmax_rdp_one_answer"].items():
        assert value == pytest.approx(float(alpha) / sigma**2)
    gn_ind = min(T * a / sigma**2 + math.log(1 / delta) / (a - 1) for a in _paper2018_orders())
    assert agg["gnmax_independent"] == pytest.approx(gn_ind, rel=1e-9)
    assert agg["gnmax_dependent"] <= agg["gnmax_independent"] + 1e-9
    closed = 2 * T * gamma**2 + 2 * math.sqrt(2 * T * gamma**2 * math.log(1 / delta))
    assert agg["lnmax_independent"] == pytest.approx(closed, rel=1e-9)
    integer = min((2 * T * gamma**2 * order * (order + 1) - math.log(delta)) / order for order in range(1, 9))
    assert agg["lnmax_moments_2017"] <= integer + 1e-9
    assert 0 <= agg["confident_answered"] <= T
    for key in ("lnmax_label_agreement", "gnmax_label_agreement"):
        assert 0.0 <= agg[key] <= 1.0
    release = scalars["pate_study-primer-smooth-sensitivity"]
    gnss = _rdp_gnss(params["ss_beta"], params["ss_sigma"], params["ss_order"])
    assert release["rdp_gnss"] == pytest.approx(gnss, rel=1e-9)
    assert release["expected_epsilon"] == pytest.approx(release["epsilon_data_dependent"] + gnss, rel=1e-9)
    assert release["epsilon_std"] == pytest.approx(release["smooth_sensitivity"] * params["ss_sigma"], rel=1e-9)
    rows = scalars["local_dp"]["rows"]
    assert [r["rho"] for r in rows] == pytest.approx(params["rhos"])
    for r in rows:
        assert r["epsilon"] == pytest.approx(2 * r["rho"])
        assert r["noise_std"] == pytest.approx(math.sqrt(2) / r["rho"])
        assert r["epsilon_audited_lower_bound"] <= r["epsilon"] and not r["violation"]


def check_pate2018_votes(scalars: dict, params: dict) -> None:
    """06_pate2018_votes: Table 2's accounting invariants and closed forms, the seed runs, the smooth-sensitivity
    release and the 2017 moments accountant; every comparison with a printed value carries a verdict."""
    table = scalars["papernot2018-table2"]
    assert table["verdict"] in ("agrees", "differs", "inconclusive", "not comparable") and table["verdict_rule"]
    orders = _paper2018_orders()
    for row in table["rows"]:
        assert 0 < row["expected_answered"] <= row["queries"]
        assert row["epsilon_basic"] <= row["epsilon_independent_basic"] + 1e-9  # data-dependent <= independent
        assert row["epsilon_improved"] <= row["epsilon_basic"] + 1e-9
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
        assert r["rdp_gnss"] == pytest.approx(_rdp_gnss(r["beta"], r["sigma_ss"], r["order"]), rel=1e-9)
        delta = {x["dataset"]: x["delta"] for x in table["rows"]}[r["dataset"]]
        conversion = math.log(1 / delta) / (r["order"] - 1)
        assert r["epsilon_before_release"] == pytest.approx(r["rdp_data_dependent"] + conversion, rel=1e-9)
        assert r["epsilon_expected"] == pytest.approx(r["epsilon_before_release"] + r["rdp_gnss"], rel=1e-9)
        assert r["epsilon_std"] == pytest.approx(r["smooth_sensitivity"] * r["sigma_ss"], rel=1e-9)
    lnmax = scalars["papernot2017-table2"]
    assert lnmax["verdict"] in ("agrees", "differs", "not comparable")
    for r in lnmax["rows"]:
        T, gamma, delta = r["queries"], r["gamma"], r["delta"]
        integer = min((2 * T * gamma**2 * order * (order + 1) - math.log(delta)) / order for order in range(1, 9))
        assert r["epsilon_independent"] == pytest.approx(integer, rel=1e-9)
        assert r["epsilon_theorem_q"] <= r["epsilon_independent"] + 1e-9
        assert r["epsilon_code_q"] <= r["epsilon_theorem_q"] + 1e-9  # q < 0.5 admits more queries than the theorem


def _check_accounting(scalars: dict, params: dict) -> None:
    """What the student-privacy notebooks recorded about their accounting (the formulas are tested in
    tests/experiments and tests/privacy; here: the recorded run respects them)."""
    accounting = scalars["accounting"]
    assert accounting["max_dependent_minus_independent_same_grid"] <= 1e-9
    assert accounting["max_continuous_minus_integer"] <= 1e-9
    assert accounting["max_abs_theorem_minus_reference_q"] >= 0
    assert 1 <= scalars["scale"]["n_queries"] <= params["student_queries"]
    levels = {f"{r:g}" for r in params["rhos"]} | ({"no noise"} if params["include_no_noise"] else set())
    assert set(scalars["noise_over_mean_coordinate"]) == levels
    assert set(scalars["linear_readout_snr_bound"]) == levels


def _check_verdicts(scalars: dict, items: list) -> None:
    """Every comparison the notebook makes carries a verdict of pate_study.reporting.verdicts."""
    from pate_study.reporting.verdicts import VERDICTS

    for item in items:
        assert scalars[item]["verdict"] in VERDICTS, item
        assert scalars[item]["verdict_rule"], item


def check_ecg(scalars: dict, params: dict) -> None:
    """01_ecg_student_privacy: accounting, one row per student, verdicts, both designs."""
    _check_accounting(scalars, params)
    n_levels = len(params["rhos"]) + int(params["include_no_noise"])
    assert scalars["make2021-table1"]["n_students"] == n_levels * params["n_students"]
    assert scalars["scale"]["n_teachers"] <= params["n_teachers"]
    assert len(scalars["scale"]["designs"]) == 1 + int(params["alt_design"])
    _check_verdicts(
        scalars,
        [
            "make2021-fig8",
            "make2021-fig9",
            "make2021-fig10",
            "make2021-fig11",
            "make2021-table1",
            "visca2021-fig4.15",
            "visca2021-fig4.16",
            "visca2021-table4.1",
        ],
    )
    fig11 = scalars["make2021-fig11"]
    assert fig11["epsilon_ind_star"] <= fig11["epsilon_ind_integer"]
    assert 0 <= fig11["n_students_on_integer_bound"] <= fig11["n_students"]


def check_web(scalars: dict, params: dict) -> None:
    """02_web_requests: accounting, verdicts, Sosa's tables filled for every ensemble size, hypotheses recorded."""
    _check_accounting(scalars, params)
    _check_verdicts(
        scalars,
        [
            "make2021-fig13",
            "make2021-fig14",
            "make2021-fig15",
            "visca2021-fig4.13",
            "sosa2021-table4.1",
            "sosa2021-table4.2",
            "sosa2021-fig4.4",
        ],
    )
    table42 = scalars["sosa2021-table4.2"]
    ours = [
        r for r in table42["rows"] if isinstance(r.get("ours_teacher_epsilon"), (int, float))
    ]  # NaN is stored as "nan"
    assert {r["n_teachers"] for r in ours} == set(params["sosa_teachers"])
    assert len(ours) == len(params["sosa_teachers"]) * (len(params["sosa_scales"]) + int(params["include_no_noise"]))
    assert all(r["verdict"] for r in table42["rows"] if isinstance(r.get("paper_teacher_epsilon"), (int, float)))
    assert len(table42["setting_hypotheses"]) == 8  # order grids λ ≤ 8, 32 × δ 1e-5, 0.05 × T 1,000, 1,200
    validation = scalars["validation_rows"]
    for level, row in validation.items():
        if isinstance(row, dict):  # the share of anomalous validation rows is the pool's (stratified)
            assert abs(row["validation_positive_share"] - validation["pool_positive_share"]) < 0.01, level
    split = scalars["sosa2021-beyond-split"]  # row split vs URL split, no noise
    _check_verdicts(scalars, ["sosa2021-beyond-split"])
    table = split["table"]
    for metric in ("student TPR", "student TNR", "student balanced accuracy", "student accuracy"):
        assert 0 <= table[metric]["row split"] <= 1 and 0 <= table[metric]["URL split"] <= 1, metric
    for shared in (
        "validation rows whose URL is in the teachers' rows",
        "validation rows whose URL is in the student's training rows",
        "queries whose URL is in the teachers' rows",
    ):
        assert table[shared]["URL split"] == 0, shared  # the URL split keeps every URL on one side


def check_deeplog(scalars: dict, params: dict) -> None:
    """03_deeplog_synthetic: subset sizes, listings located, metrics in range, mechanism invariants (k-RR's expected
    Hamming distance, exact composition), verdicts recorded."""
    data = scalars["data"]
    assert data["train_size"] + data["val_size"] + data["test_size"] == params["n_sequences"]
    assert data["test_length_max"] <= params["max_len"] and 0.0 <= data["length_only_accuracy"] <= 1.0
    if data["source"].startswith("real"):
        assert (data["normal_sessions"], data["abnormal_sessions"]) == (4855, 16838)
        # the thesis's listings are hdfs_train rows 0-10 and hdfs_test_abnormal rows 598-608
        assert (
            scalars["visca2021-fig4.1"]["first_file_row"] == 0 and scalars["visca2021-fig4.2"]["first_file_row"] == 598
        )
        assert (
            scalars["visca2021-fig4.1"]["max_edit_distance"] <= 1
            and scalars["visca2021-fig4.2"]["max_edit_distance"] <= 1
        )
    control = scalars["control"]
    assert 0.0 <= control["accuracy"] <= 1.0 and 0.0 < control["measured_delta_u"] <= 2.0 + 1e-9
    eps = [f"{float(e)}" for e in params["epsilons"]]
    for n in range(1, 8):
        item = scalars[f"visca2021-fig4.{n}"]
        assert item["verdict"] in ("agrees", "differs", "inconclusive", "not comparable")
        if n >= 3:
            assert sorted(item["accuracy_by_epsilon"]) == sorted(eps)
            assert all(
                0.0 <= v <= 1.0 for v in [*item["accuracy_by_epsilon"].values(), *item["hamming_by_epsilon"].values()]
            )
    # Idea 1 returns the original symbols at the largest epsilon and nearly random ones at the smallest
    ham1 = scalars["visca2021-fig4.3"]["hamming_by_epsilon"]
    assert ham1[eps[-1]] < ham1[eps[0]]
    fig44 = scalars["visca2021-fig4.4"]
    if "100.0" in eps:
        assert fig44["composed_budget_max"] == pytest.approx(100.0 * fig44["max_sequence_length"])
    beyond = scalars["beyond_thesis"]
    k, n_test = data["vocabulary_size"], data["test_size"]
    for e in eps:
        # k-RR changes a symbol with probability (k-1)/(e^eps + k - 1); the mean over sequences of the changed
        # fraction has that expectation and a standard error of at most sqrt(p(1-p)/n_test): allow five
        p_change = (k - 1) / (math.exp(min(float(e), 700.0)) + k - 1)
        se = math.sqrt(p_change * (1 - p_change) / n_test)
        assert beyond["krr_hamming_by_epsilon"][e] == pytest.approx(p_change, abs=5 * se + 1e-6)
        assert beyond["krr_released_epsilon_by_epsilon"][e] == pytest.approx(float(e) * data["test_length_max"])
    assert len(beyond["reach"]) == 7


def check_audioset_teachers(scalars: dict, params: dict) -> None:
    """04_audioset_teachers: sizes consistent with the split rule, metrics in range, every item judged."""
    t41 = scalars["muschiol2021-table4.1"]
    assert t41["rows"] == 2 * len(params["teacher_counts"]) and t41["small_classes"] == 15
    assert t41["big_teacher_pool"] == t41["big_clips"] - round(params["student_fraction"] * t41["big_clips"])
    assert scalars["muschiol2021-fig2.1"]["frames"] == 1001 and scalars["muschiol2021-fig2.1"]["mel_bands"] == 64
    fig59 = scalars["muschiol2021-fig5.9"]
    assert fig59["iterations"] == params["sampler_iterations"] and fig59["spread_balanced"] >= 1
    fig51 = scalars["muschiol2021-fig5.1"]
    for subset in ("small", "big"):
        for t in params["teacher_counts"]:
            assert 0.0 <= fig51[f"{subset}_{t}_mean_teacher_map"] <= 1.0
    assert 0.0 <= scalars["muschiol2021-fig5.6"]["map_min"] <= scalars["muschiol2021-fig5.6"]["map_max"] <= 1.0
    assert scalars["muschiol2021-fig5.10"]["best_batch"] in params["ablation_batch_sizes"]
    assert scalars["muschiol2021-fig5.12"]["best_lr"] in params["ablation_learning_rates"]
    a2 = scalars["muschiol2021-figA.2"]
    assert 0.0 <= a2["worst_classes_ap_min"] <= a2["best_classes_ap_approx"] <= 1.0
    for item in ("muschiol2021-figA.4", "muschiol2021-figA.5"):
        assert all(0.0 <= scalars[item][f"mean_auc_{g}"] <= 1.0 for g in ("best", "medium", "worst"))
    assert scalars["muschiol2021-fig5.5"]["pretrained_arm_run"] == bool(params.get("imagenet_weights"))
    fig511 = scalars["muschiol2021-fig5.11"]
    assert 0.0 <= fig511["map_adaptive"] <= 1.0 and 0.0 <= fig511["map_plain"] <= 1.0
    assert 1.0 <= fig511["largest_weight_ratio_between_classes"] <= fig511["weight_max"] ** 2 + 1e-9
    assert scalars["muschiol2021-fig2.1"]["verdict"] == "not comparable"  # an illustration of one clip
    for key, values in scalars.items():
        if key.startswith("muschiol2021-"):
            assert values["verdict"] in VERDICTS, key
            assert not any(k.startswith("seconds") for k in values), f"{key}: timings belong in benchmarks"
    assert scalars["findings"]["n_lines"] >= 5


def check_multilabel(scalars: dict, params: dict) -> None:
    """05_audioset_multilabel: set-up, the confidence rules, the accounting invariants and the Table 5.4 fit."""
    setup = scalars["setup"]
    assert setup["query_pool"] >= min(params["min_pool"], setup["query_pool"] + setup["test"] - 200)
    assert setup["test"] > 0
    # the "max" rule's answered share cannot depend on th_e; it is the one that matches the thesis's constant shares
    assert scalars["muschiol2021-table5.3"]["max_rule_constant"] is True
    for item in ("muschiol2021-fig5.13", "muschiol2021-figA.7", "muschiol2021-fig5.14", "muschiol2021-fig5.15"):
        assert scalars[item]["min_ratio_dependent_to_independent"] <= 1 + 1e-9, item
    assert scalars["muschiol2021-table5.4"]["max_dependent_minus_independent"] <= 1e-6
    assert scalars["table54_fit"]["all_fit_rounds_to_printed"] is True
    beyond = scalars["muschiol2021-beyond-multiwinner"]
    for mech in ("gnthreshold", "binary", "tau", "powerset"):
        assert math.isfinite(beyond[f"{mech}_epsilon"]) and 0 <= beyond[f"{mech}_student_map"] <= 1
    assert scalars["findings"]["lines"], "the findings cell must print computed statements"
    # teachers come from notebook 04's train_teachers: every teacher count reports its selected steps
    assert set(setup["mean_best_step"]) == {str(t) for t in setup["teacher_counts"]}
    # the audits: no violation of the package's claims; half-noise twins and the thesis's accounting of the
    # adaptive threshold (Definition 11, threshold treated as fixed) caught
    audit = scalars["muschiol2021-gnthreshold-audit"]
    assert audit["violations_sound_claims"] == 0 and audit["broken_caught"] == audit["n_broken"] > 0
    assert audit["adaptive_as_fixed_caught"] == audit["n_as_fixed"] > 0
    assert audit["wrong_accounting_caught"] == audit["n_wrong_accounting"] > 0  # the top-k vote at √k/T
    t54 = scalars["muschiol2021-table5.4"]
    for key in ("best_student_map", "student_true_labels_map", "student_noise_free_labels_map", "class_prior_map"):
        assert 0 <= t54[key] <= 1, key
    assert t54["q_average_verdict"] in VERDICTS


def check_pate2018_lab(scalars: dict, params: dict) -> None:
    """07_pate2018_lab: the runs of the noisy check scatter around the closed-form expectation (binomial-like
    spread: the mean of n_runs runs within 5 standard errors), the improved conversion never exceeds the basic one,
    and data-dependent never exceeds data-independent."""
    answered = scalars["pate_study-lab2-answered"]
    assert 0 < answered["expected"] < answered["n_queries"] == params["n_queries"]
    se = max(answered["runs_std"], 1.0) / math.sqrt(params["n_runs"])
    assert abs(answered["runs_mean"] - answered["expected"]) <= 5 * se
    conv = scalars["pate_study-lab2-conversions"]
    for analysis in ("data-dependent", "data-independent"):
        assert conv[f"{analysis}_improved"] <= conv[f"{analysis}_basic"]
    for conversion in ("basic", "improved"):
        assert conv[f"data-dependent_{conversion}"] <= conv[f"data-independent_{conversion}"]
    assert 0 <= scalars["pate_study-lab2-q"]["fraction_below_cutoff"] <= 1


CHECKS = {
    "00_dp_primer": check_primer,
    "01_ecg_student_privacy": check_ecg,
    "02_web_requests": check_web,
    "03_deeplog_synthetic": check_deeplog,
    "04_audioset_teachers": check_audioset_teachers,
    "05_audioset_multilabel": check_multilabel,
    "06_pate2018_votes": check_pate2018_votes,
    "07_pate2018_lab": check_pate2018_lab,
}


def test_every_notebook_has_a_check_configs_and_a_parameters_cell():
    stems = list_notebooks()
    assert "00_dp_primer" in stems
    for stem in stems:
        assert stem in CHECKS, f"add a check of {stem}'s recorded scalars to CHECKS"
        nb = nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{stem} needs exactly one cell tagged 'parameters'"
        declared = papermill.inspect_notebook(str(NOTEBOOKS_DIR / f"{stem}.ipynb"))  # what papermill can parse
        optional = [p for p in PROFILES if p not in REQUIRED_PROFILES and (CONFIGS_DIR / stem / f"{p}.yaml").exists()]
        for profile in (*REQUIRED_PROFILES, *optional):  # e.g. 04's gpu.yaml must name real parameters too
            params = load_parameters(stem, profile)
            for name in list(params) + list(RUNNER_PARAMETERS):
                assert name in declared, f"{stem}: papermill cannot find parameter {name!r} in the parameters cell"


TIMING = re.compile(r"seconds|elapsed|run ?time|wall", re.IGNORECASE)


def recorded_timings(scalars: dict) -> list[str]:
    """Keys (and findings texts) of ``scalars.json`` that carry a measured time: a run's wall time differs between
    runs of the same seed, so it belongs in benchmarks/ and build/timings, not in the recorded scalars."""
    found = []

    def walk(value, path):
        if isinstance(value, dict):
            for key, item in value.items():
                if key != "_provenance":
                    walk(item, f"{path}.{key}" if path else key)
        elif isinstance(value, str) and re.search(r"\*\*Run time\*\*|\b\d+(\.\d+)? s \(shared machine\)", value):
            found.append(path)
        if path and TIMING.search(path.rsplit(".", 1)[-1]):
            found.append(path)

    walk(scalars, "")
    return found


def test_recorded_timings_are_found():
    assert recorded_timings({"a": {"elapsed_seconds": 3.0}, "b": {"x": 1}}) == ["a.elapsed_seconds"]
    assert recorded_timings({"findings": {"text": "* **Run time** of this profile: 106 s (shared machine)."}}) == [
        "findings.text"
    ]
    assert recorded_timings({"a": {"epsilon": 1.0, "seed": 0}, "_provenance": {"date": "x"}}) == []


@pytest.mark.notebook
@pytest.mark.parametrize("stem", list_notebooks())
def test_notebook_smoke_profile_records_checked_values(stem, tmp_path):
    output_dir = tmp_path / "figures" / stem
    executed = execute_notebook(stem, "smoke", output_dir, build_dir=tmp_path / "build", html=False)
    nb = nbformat.read(executed, as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    # what a reader of the executed copy meets: no package log lines in stderr boxes, alt text on every figure
    package_logs = [o["text"] for o in outputs if o.get("name") == "stderr" and PACKAGE_LOG.search(o.get("text", ""))]
    assert not package_logs, (
        "the package logs to stderr in a kernel (pate_study.reporting.session should send it to stdout)"
    )
    missing_alt = [
        i
        for i, o in enumerate(outputs)
        if "image/png" in o.get("data", {}) and not o.get("metadata", {}).get("image/png", {}).get("alt")
    ]
    assert not missing_alt, "figures without alternative text"
    scalars = read_scalars(output_dir)
    assert scalars["_provenance"]["profile"] == "smoke"
    recorded = json.loads(next(output_dir.glob("*.provenance.json")).read_text())["parameters"]
    assert recorded == {**load_parameters(stem, "smoke"), "profile": "smoke", "output_dir": str(output_dir)}
    CHECKS[stem](scalars, load_parameters(stem, "smoke"))
    timings = recorded_timings(scalars)
    assert not timings, (
        f"timings in scalars.json (the same seed must give the same bytes; time in benchmarks/): {timings}"
    )
    for sidecar in output_dir.glob("*.provenance.json"):
        assert json.loads(sidecar.read_text())["profile"] == "smoke"
