"""The student-privacy pipeline shared by the ECG and web-request studies."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from test_web_splits import tiny_config

from pate_study.data import DataSource
from pate_study.experiments import student_privacy as study
from pate_study.experiments.student_privacy import (
    ecg,
    ecg_sections,
    figures,
    notebook_sections,
    paper_tables,
    splits,
    web,
    web_sections,
)
from pate_study.experiments.student_privacy.paper_tables import summarise_verdicts, with_verdicts
from pate_study.learning.ensemble import EnsembleConfig
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.outputs import NotebookOutputs, read_scalars
from pate_study.reporting.verdicts import Verdict, combine


def _blobs(n, d=20, n_classes=3, seed=0):
    """Non-negative, separable, unit-l1 rows (class c puts its mass on its own block of features)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=n)
    X = rng.random((n, d)) * 0.2
    block = d // n_classes
    for c in range(n_classes):
        X[y == c, c * block : (c + 1) * block] += 1.0
    return X / X.sum(1, keepdims=True), y


def _config(**changes):
    model = EnsembleConfig(
        task="multiclass", in_features=20, n_outputs=3, hidden=(16,), lr=0.01, batch_size=32, max_epochs=15
    )
    base = study.StudentPrivacyConfig(
        task="multiclass",
        n_classes=3,
        n_teachers=8,
        teacher_train=40,
        teacher_threshold=0,
        student_queries=60,
        student_threshold=0,
        student_validation=40,
        noise_levels=(1000.0, None),
        n_students=2,
        gamma=0.5,
        delta=1e-5,
        teacher=model,
        student=model,
        feature_scale=20.0,
        seed=3,
    )
    return dataclasses.replace(base, **changes)


@pytest.fixture(scope="module")
def small_study(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("PATE_STUDY_CACHE", str(tmp_path_factory.mktemp("cache")))  # trained teachers are cached
    X_t, y_t = _blobs(400, seed=1)
    X_s, y_s = _blobs(300, seed=2)
    yield study.run_study(X_t, y_t, X_s, y_s, _config(), progress=False), (X_t, y_t, X_s, y_s)
    patch.undo()


def test_fit_sizes_shrinks_partitions_then_teachers_and_reports_it():
    config = _config(n_teachers=200, teacher_train=5000)
    fitted, notes = study.fit_sizes(config, n_teacher_pool=87_554, n_student_pool=21_892, min_teacher_train=25)
    assert (fitted.n_teachers, fitted.teacher_train) == (200, 437)  # largest disjoint partitions
    assert len(notes) == 1 and "200 x (437 train" in notes[0]
    fitted, notes = study.fit_sizes(config, n_teacher_pool=500, n_student_pool=500, min_teacher_train=25)
    assert (fitted.n_teachers, fitted.teacher_train) == (20, 25)
    fitted, notes = study.fit_sizes(_config(student_queries=900, student_validation=100), 10_000, 500)
    assert (fitted.student_queries, fitted.student_validation) == (450, 50) and "pool 500" in notes[-1]
    unchanged, notes = study.fit_sizes(_config(), 10_000, 10_000)
    assert unchanged == _config() and notes == []


def test_teacher_partitions_are_disjoint_and_seeded():
    config = _config()
    a, b = study.teacher_partitions(400, config), study.teacher_partitions(400, config)
    assert np.array_equal(a.train, b.train)
    a.validate(400)
    with pytest.raises(ValueError, match="call fit_sizes first"):
        study.teacher_partitions(100, config)


def test_privatize_checks_unit_l1_and_leaves_clean_rows_alone():
    X, _ = _blobs(5)
    rng = np.random.default_rng(0)
    assert np.array_equal(study.privatize(X, None, "rho", rng), X)
    noisy = study.privatize(X, 0.5, "rho", rng)
    assert noisy.shape == X.shape and not np.allclose(noisy, X)
    with pytest.raises(ValueError, match="unit l1"):
        study.privatize(X * 2, 0.5, "rho", rng)
    # the two parametrisations: rho = 0.5 is the same noise scale as b = 2
    same = [study.privatize(X, level, kind, np.random.default_rng(1)) for level, kind in ((0.5, "rho"), (2.0, "scale"))]
    assert np.allclose(*same)


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="n_teacher_seeds"):
        _config(n_teacher_seeds=3)  # more ensembles than the 2 students
    with pytest.raises(ValueError, match="n_teacher_seeds"):
        _config(n_teacher_seeds=0)
    with pytest.raises(ValueError, match="parametrisation"):
        _config(parametrisation="epsilon")
    with pytest.raises(ValueError, match="noise_levels"):
        _config(noise_levels=(0.0,))
    with pytest.raises(ValueError, match="student_features"):
        _config(student_features="both")


def test_noise_signal_table_matches_the_closed_form():
    X = np.zeros((3, 187))
    X[:, :4] = 0.25  # four non-zeros of 1/4: ‖x‖₂ = 1/2
    table = study.noise_signal_table([0.1, None], "rho", X).set_index("level")
    assert table.loc["0.1", "noise_std"] == pytest.approx(np.sqrt(2) * 10)
    assert table.loc["0.1", "noise_std_over_mean_coordinate"] == pytest.approx(np.sqrt(2) * 10 * 187)
    assert table.loc["0.1", "student_epsilon"] == pytest.approx(0.2)
    assert table.loc["0.1", "median_nonzeros"] == 4
    assert table.loc["0.1", "linear_readout_snr_bound"] == pytest.approx(0.5 / (np.sqrt(2) * 10))
    # the bound is attained by w = x: signal ‖x‖², noise std √2·b·‖x‖
    sparse = study.noise_signal_table([0.1], "rho", __import__("scipy").sparse.csr_matrix(X)).iloc[0]
    assert sparse["linear_readout_snr_bound"] == pytest.approx(table.loc["0.1", "linear_readout_snr_bound"])


def test_study_rows_accounting_and_learning(small_study):
    result, _ = small_study
    students = result.students
    assert len(students) == 4 and list(students["level"].unique()) == ["1000", "no noise"]
    independent = result.data_independent
    assert (students["eps_moments_int"] <= independent["eps_moments_int"] + 1e-9).all()
    assert (students["eps_moments_cont"] <= students["eps_moments_int"] + 1e-9).all()
    clean = students.query("level == 'no noise'")
    # separable data: the clean-vote argmax of 8 teachers, and students trained on LNMax labels (Lap(2) noise on
    # 8 votes), both learn the task and beat the majority-class baseline
    assert clean["ensemble_accuracy"].min() > 0.9
    assert clean["student_accuracy"].min() > 0.8
    assert (clean["student_accuracy"] > clean["student_baseline_accuracy"]).all()
    # the label control (same students, labels shuffled): per cluster it learns whichever label the shuffle made
    # the majority, right by chance about 1/3 of the time, so only its mean is informative
    assert students["control_accuracy"].mean() < students["student_accuracy"].mean() - 0.2


def test_same_seed_same_table_even_when_teachers_are_retrained(small_study, tmp_path, monkeypatch):
    result, (X_t, y_t, X_s, y_s) = small_study
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path))  # empty cache: the teachers are trained again
    again = study.run_study(X_t, y_t, X_s, y_s, _config(), progress=False)
    assert list(tmp_path.glob("ensemble-*.pt")), "the second run should have trained and cached its own teachers"
    pd.testing.assert_frame_equal(result.students, again.students)


def test_binary_study_with_scale_noise_and_groups(tmp_path, monkeypatch):
    """The web-study path: binary task, Youden thresholds, Sosa's scale parametrisation, grouped rows."""
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path))
    X_t, y_t = _blobs(400, n_classes=2, seed=1)
    X_s, y_s = _blobs(400, n_classes=2, seed=2)
    groups = np.arange(400) // 2  # every request appears twice
    model = EnsembleConfig(
        task="binary", in_features=20, n_outputs=1, hidden=(16,), lr=0.01, batch_size=32, max_epochs=15
    )
    config = _config(
        task="binary",
        n_classes=2,
        teacher_threshold=10,
        student_threshold=20,
        teacher=model,
        student=model,
        parametrisation="scale",
        noise_levels=(0.001, None),
    )
    result = study.run_study(X_t, y_t, X_s, y_s, config, student_groups=groups, progress=False)
    students = result.students
    assert list(students["level"].unique()) == ["0.001", "no noise"]
    assert (students.query("level == '0.001'")["student_epsilon"] == 2 / 0.001).all()
    for column in ("student_tpr", "student_tnr", "control_tpr", "control_tnr", "student_balanced_accuracy"):
        assert students[column].between(0, 1).all(), column
    clean = students.query("level == 'no noise'")
    assert (clean["student_balanced_accuracy"] > 0.9).all()
    assert result.teachers["threshold_rows"] == 10


def test_student_rows_keep_validation_groups_apart_with_the_pools_class_balance():
    rng = np.random.default_rng(0)
    # 40 big benign groups of 20 rows and 200 single anomalous rows: 800 + 200 rows, 20% anomalous
    groups = np.concatenate([np.repeat(np.arange(40), 20), 40 + np.arange(200)])
    y = np.concatenate([np.zeros(800, int), np.ones(200, int)])
    config = _config(student_queries=100, student_threshold=20, student_validation=200)
    draws = [study.student_rows(y, config, np.random.default_rng(k), groups) for k in range(6)]
    for rows in draws:
        assert (len(rows.queries), len(rows.threshold), len(rows.validation)) == (100, 20, 200)
        assert not set(groups[rows.validation]) & set(groups[np.concatenate([rows.queries, rows.threshold])])
        assert y[rows.validation].mean() == pytest.approx(0.2)  # the pool's class balance, exactly
        assert abs(y[np.concatenate([rows.queries, rows.threshold])].mean() - 0.2) < 0.01
        assert len(np.unique(rows.validation)) == 200
    # the big groups reach the validation rows (a row-wise query draw would always claim them)
    assert all(np.isin(groups[r.validation], np.arange(40)).any() for r in draws)
    # independent across students: not the same rows every time
    from pate_study.experiments.student_privacy.pipeline import mean_pairwise_overlap

    assert mean_pairwise_overlap([r.validation for r in draws]) < 0.6
    with pytest.raises(ValueError, match="student_pool_size"):
        study.student_rows(y, _config(student_queries=400, student_validation=700), rng, groups)


def test_disjoint_students_share_no_row_and_fit_sizes_accounts_for_them():
    config = _config(student_queries=30, student_validation=10, n_students=4, disjoint_students=True)
    rows = study.disjoint_student_rows(200, config, np.random.default_rng(0))
    every = np.concatenate([np.concatenate([r.queries, r.threshold, r.validation]) for r in rows])
    assert len(every) == len(np.unique(every)) == 160
    fitted, notes = study.fit_sizes(
        _config(student_queries=80, student_validation=20, n_students=10, disjoint_students=True), 10_000, 500
    )
    assert (fitted.student_queries, fitted.student_validation) == (40, 10) and "10 disjoint students" in notes[-1]


def test_consensus_summary_finds_q_at_the_cap_when_votes_are_few():
    """20 teachers, 5 classes, γ = 0.05: even a unanimous vote gives q ≥ the cap 0.8, so Theorem 3 never applies and
    ε_dep equals the data-independent bound by construction (the ECG reduced scale)."""
    votes = np.array([[20, 0, 0, 0, 0], [12, 3, 2, 2, 1]])
    summary = study.consensus_summary(votes, gamma=0.05)
    assert summary["share_q_at_cap"] == 1.0 and summary["share_q_below_theorem_limit"] == 0.0
    assert summary["median_q"] == pytest.approx(0.8)
    eps = study.data_dependent_epsilons(votes, gamma=0.05, delta=1e-6)
    ind = study.data_independent_epsilons(n_queries=2, gamma=0.05, delta=1e-6)
    assert eps["eps_moments_int"] == pytest.approx(ind["eps_moments_int"])
    # 250 unanimous teachers: q far below the limit, and ε_dep far below ε_ind
    strong = np.array([[250, 0]] * 10)
    assert study.consensus_summary(strong, gamma=0.05)["share_q_below_theorem_limit"] == 1.0
    assert study.data_dependent_epsilons(strong, gamma=0.05, delta=1e-5)["eps_moments_int"] < 2.0


def test_sosa_setting_hypotheses_floor_and_ceiling():
    table = study.sosa_setting_hypotheses(
        [0.39, 23.51, 13.24], deltas=[1e-5, 0.05], n_queries=[1000, 1200], gamma=0.05
    ).set_index(["delta", "n_queries"])
    assert table.loc[(1e-5, 1000), "floor"] == pytest.approx(np.log(1e5) / 8, abs=1e-6)
    assert table.loc[(0.05, 1000), "floor"] == pytest.approx(np.log(20) / 8, abs=1e-6)
    assert table.loc[(1e-5, 1200), "ceiling"] == pytest.approx(2 * 1200 * 0.05**2 * 2 + np.log(1e5))  # λ = 1
    assert table.loc[(0.05, 1200), "ceiling"] == pytest.approx(15.0, abs=0.01)
    assert table.loc[(1e-5, 1200), "fit"] == "13.24, 23.51"
    assert table.loc[(0.05, 1200), "fit"] == "0.39, 13.24" and table.loc[(0.05, 1000), "fit"] == "0.39"


def test_epsilon_gap_explanations_grid_and_queries():
    gaps = study.epsilon_gap_explanations(n_queries=1000, gamma=0.05, delta=1e-5, extra_queries=200)
    assert gaps["continuous_T_charged"] == pytest.approx(20.1743, abs=1e-4)
    assert gaps["integer_T_charged"] == pytest.approx(20.7565, abs=1e-4)
    assert gaps["integer_T_with_extra"] == pytest.approx(23.5129, abs=1e-4)
    assert gaps["continuous_T_charged"] < gaps["integer_T_charged"] < gaps["continuous_T_with_extra"]


def test_data_independent_epsilons_closed_forms():
    T, gamma, delta = 450, 0.05, 1e-6
    ind = study.data_independent_epsilons(n_queries=T, gamma=gamma, delta=delta)
    closed = 2 * T * gamma**2 + 2 * np.sqrt(2 * T * gamma**2 * np.log(1 / delta))
    assert ind["eps_moments_cont"] == pytest.approx(closed, rel=1e-9)
    integer = min((2 * T * gamma**2 * lam * (lam + 1) - np.log(delta)) / lam for lam in range(1, 9))
    assert ind["eps_moments_int"] == pytest.approx(integer, rel=1e-9)
    assert ind["basic_composition"] == pytest.approx(2 * gamma * T)


def test_epsilon_table_vs_paper_keeps_level_order():
    students = pd.DataFrame(
        {
            "level": ["0.1", "0.1", "no noise"],
            "eps_moments_int": [1.0, 3.0, 2.0],
            "eps_moments_cont": [1.0, 2.0, 2.0],
            "eps_rdp": [0.5, 0.5, 0.5],
        }
    )
    paper = [
        {"rho": "0.1", "eps_dep_median": 20.36, "eps_dep_iqr": 0.32},
        {"rho": "no noise", "eps_dep_median": 5.96, "eps_dep_iqr": 13.15},
    ]
    table = study.epsilon_table_vs_paper(students, ["no noise", "0.1"], paper)  # not alphabetical on purpose
    assert list(table["level"]) == ["no noise", "0.1"]
    assert table.loc[1, "eps_moments_int_median"] == 2.0 and table.loc[1, "eps_moments_int_iqr"] == 1.0
    assert table.loc[0, "paper_median"] == 5.96
    # the paper's "1.0" and our "1" are the same level
    one = study.epsilon_table_vs_paper(
        students.assign(level=["1", "1", "no noise"]),
        ["1", "no noise"],
        [{"rho": "1.0", "eps_dep_median": 20.41, "eps_dep_iqr": 0.0}],
    )
    assert len(one) == 2 and one.loc[0, "paper_median"] == 20.41 and one.loc[0, "eps_moments_int_median"] == 2.0


def _students(rows):
    return pd.DataFrame(rows)


def test_ensemble_effects_measure_fig9_gap_against_unperturbed_inputs():
    students = _students(
        [
            {"level": "0.1", "ensemble_accuracy": 0.80, "pate_accuracy": 0.60},
            {"level": "1", "ensemble_accuracy": 0.85, "pate_accuracy": 0.70},
            {"level": "no noise", "ensemble_accuracy": 0.90, "pate_accuracy": 0.75},
        ]
    )
    effects = ecg.ensemble_effects(students, ["0.1", "1", "no noise"])
    assert effects.loc["0.1", "ensemble_decay_pct"] == pytest.approx(10)
    assert effects.loc["0.1", "pate_gap_vs_unperturbed_pct"] == pytest.approx(15)  # the paper's gap
    assert effects.loc["0.1", "ensemble_minus_pate_privatised_pct"] == pytest.approx(20)  # another quantity
    assert effects.loc["1", "pate_gap_vs_unperturbed_pct"] == pytest.approx(5)


def test_ecg_verdicts_not_comparable_at_reduced_scale(small_study):
    result, _ = small_study
    published = {
        "make2021-fig8": {"values": {"accuracy_decay_min_pct": 4, "accuracy_decay_max_pct": 5}},
        "make2021-fig9": {"values": {"accuracy_gap_min_pct": 10, "accuracy_gap_max_pct": 12}},
        "make2021-fig10": {"values": {"median_accuracy_drop_min_pct": 7, "median_accuracy_drop_max_pct": 8}},
        "make2021-table1": {"rows": [{"rho": "no noise", "eps_dep_median": 5.96, "eps_dep_iqr": 13.15}]},
    }
    verdicts = ecg.verdicts(result, 0.5, published)
    assert set(verdicts) == {"make2021-fig8", "make2021-fig9", "make2021-fig10", "make2021-table1", "make2021-fig11"}
    assert all(v.verdict == "not comparable" and "8 teachers" in v.reason for v in verdicts.values())
    # Fig. 8 carries the same scale reason as Figs 9 and 10; its reweighted decay is shown with its interval, not judged
    fig8 = verdicts["make2021-fig8"]
    assert "100 beats per class" in fig8.reason and "shown and not judged" in fig8.reason
    # at the paper's scale (200 teachers, T = 900) the published range decides instead
    at_scale = dataclasses.replace(
        result,
        config=dataclasses.replace(result.config, student_queries=900),
        teachers={**result.teachers, "n_teachers": 200},
    )
    assert ecg.comparability(at_scale, 0.5) == ""
    assert ecg.verdicts(at_scale, 0.5, published)["make2021-fig8"].verdict in ("agrees", "differs")


def test_study_rows_record_consensus_and_the_theorem_q_condition(small_study):
    result, _ = small_study
    students = result.students
    for column in (
        "median_q",
        "share_q_below_theorem_limit",
        "eps_moments_int_theorem_q",
        "query_majority_share",
        "n_validation",
    ):
        assert column in students, column
    assert (students["eps_moments_int_theorem_q"] >= students["eps_moments_int"] - 1e-9).all()
    assert set(result.validation_overlap) == {"1000", "no noise"}


def test_table_verdicts_per_row_and_summary():
    table = pd.DataFrame({"paper": [1.0, np.nan, 3.0], "ours": [1.01, 2.0, 5.0]})
    judged = with_verdicts(
        table,
        lambda r: (
            None
            if pd.isna(r["paper"])
            else __import__("pate_study.reporting.verdicts", fromlist=["x"]).within_tolerance(
                r["paper"], r["ours"], atol=0.1
            )
        ),
    )
    assert list(judged["verdict"]) == ["agrees", "", "differs"]
    same = summarise_verdicts([Verdict("not comparable", "r", "data")] * 3 + [None], "rule")
    assert same.verdict == "not comparable" and same.reason == "3 rows: data" and "3 not comparable" in same.rule
    with pytest.raises(ValueError, match="one family"):  # a judged row is never summarised by a rule of its own
        summarise_verdicts([Verdict("agrees", "r"), Verdict("differs", "r", "why")], "rule")


def test_sosa_row_verdicts_name_the_definition_or_the_data():
    floor_case = web._sosa_row_verdict(0.39, 1.44, 20.76, 1e-5, 1000, "data")
    assert (
        floor_case.verdict == "not comparable" and "orders up to 32, or δ = 0.05, would allow it" in floor_case.reason
    )
    assert "more queries" in web._sosa_row_verdict(23.51, 1.44, 20.76, 1e-5, 1000, "data").reason
    assert web._sosa_row_verdict(5.0, 1.44, 20.76, 1e-5, 1000, "data").reason == "data: data"


def test_collapsed_boxes_get_a_note():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert figures.note_collapsed(ax, pd.Series([2.0, 2.0]), 2.0, "bound")
    assert not figures.note_collapsed(ax, pd.Series([2.0, 1.0]), 2.0, "bound")
    plt.close(fig)


def test_sosa_hypotheses_with_a_wider_order_grid_fit_every_value_at_one_setting():
    published = [0.39, 0.52, 13.24, 23.51]
    table = study.sosa_setting_hypotheses(
        published, deltas=[1e-5], n_queries=[1200], gamma=0.05, max_integer_orders=[8, 32]
    ).set_index("max_order")
    assert table.loc[32, "floor"] == pytest.approx(np.log(1e5) / 32, abs=1e-6)
    assert table.loc[32, "ceiling"] == pytest.approx(table.loc[8, "ceiling"])  # optimum at λ = 2, inside both grids
    assert table.loc[8, "cannot_fit"] == "0.39, 0.52" and table.loc[32, "n_fit"] == 4


def test_class_collapse_and_lnmax_degeneracy():
    rows = []
    for level, shares, recalls in (("0.1", [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]), ("no noise", [0.2] * 5, [0.9] * 5)):
        row = {"level": level, "student": 0}
        for name in ("ensemble", "pate", "student"):
            row.update({f"{name}_predicted_share_class{c}": shares[c] for c in range(5)})
            row.update({f"{name}_recall_class{c}": recalls[c] for c in range(5)})
        rows.append(row)
    result = dataclasses.make_dataclass("R", ["students", "level_order", "teachers"])(
        pd.DataFrame(rows), ["0.1", "no noise"], {"n_teachers": 20}
    )
    table = ecg.class_collapse(result)
    assert table.loc["0.1", "ensemble_modal_class"] == "N" and table.loc["0.1", "ensemble_modal_share"] == 1.0
    # collapse onto N, reweighted to the full data's priors, scores the share of N
    assert table.loc["0.1", "ensemble_accuracy_reweighted"] == pytest.approx(ecg.FULL_DATA_PRIORS[0])
    assert table.loc["no noise", "student_accuracy_reweighted"] == pytest.approx(0.9)
    effects = ecg.reweighted_effects(table)
    assert effects["ensemble_decay_reweighted_min_pct"] == pytest.approx(100 * (0.9 - ecg.FULL_DATA_PRIORS[0]))
    assert ecg.lnmax_degenerate(result, 0.05) and not ecg.lnmax_degenerate(result, 0.1)


_Run = dataclasses.make_dataclass(
    "_Run",
    ["students", "level_order", "data_independent", "teachers", "config", ("n_student_pool", int, 0)]
    + [("unreplicated", tuple, ())],
)


def _arms(columns: dict, levels=("0.1", "no noise")) -> "_Run":
    """A run whose students (one row per level and student) have the given per-level values of each column."""
    rows = []
    for level in levels:
        n = len(next(iter(columns.values()))[level])
        for k in range(n):
            rows.append({"level": level, "student": k, **{c: v[level][k] for c, v in columns.items()}})
    config = dataclasses.replace(_config(), student_queries=450, student_validation=50)
    teachers = {"n_teachers": 20, "train_rows": 25}
    independent = {"eps_moments_cont": 20.17, "eps_moments_int": 20.7565}
    return _Run(pd.DataFrame(rows), list(levels), independent, teachers, config)


NO = "no noise"


def test_students_keep_their_rows_across_levels_so_levels_are_paired(small_study):
    result, _ = small_study
    first, second = (result.student_rows[level] for level in result.level_order)
    for a, b in zip(first, second):
        assert np.array_equal(a.queries, b.queries) and np.array_equal(a.validation, b.validation)


def test_make_similar_rates_rule_agrees_only_on_no_change_and_differs_on_a_clear_one():
    base = [0.80, 0.70, 0.90, 0.60]
    same = _arms({"student_tpr": {"0.1": base, NO: base}})
    claim = web.SIMILAR["TPR"]
    v = paper_tables.per_step(claim, paper_tables.level_changes(same, "student_tpr"), "ρ = {}")
    assert v.verdict == "agrees"
    moved = _arms({"student_tpr": {"0.1": [b + 0.2 + 0.01 * i for i, b in enumerate(base)], NO: base}})
    v = paper_tables.per_step(claim, paper_tables.level_changes(moved, "student_tpr"), "ρ = {}")
    assert v.verdict == "differs" and "ρ = 0.1" in v.evidence and "replicates of student training seed" in v.evidence
    noisy = _arms({"student_tpr": {"0.1": [b + d for b, d in zip(base, (0.2, -0.2, 0.1, -0.15))], NO: base}})
    v = paper_tables.per_step(claim, paper_tables.level_changes(noisy, "student_tpr"), "ρ = {}")
    assert v.verdict == "inconclusive"


def test_noise_direction_agrees_when_noise_raises_tpr_and_differs_when_it_lowers_it():
    base = [0.80, 0.70, 0.90, 0.60]
    up = [b + 0.1 + 0.01 * i for i, b in enumerate(base)]
    down = [b - 0.1 - 0.01 * i for i, b in enumerate(base)]
    run = _arms(
        {
            "student_tpr": {"0.1": up, NO: base},
            "student_tnr": {"0.1": down, NO: base},
            "student_balanced_accuracy": {"0.1": base, NO: base},
        }
    )
    v = web.noise_direction_verdicts(run)
    assert v["noise raises TPR"].verdict == "agrees" and v["noise lowers TNR"].verdict == "agrees"
    flipped = _arms(
        {
            "student_tpr": {"0.1": down, NO: base},
            "student_tnr": {"0.1": up, NO: base},
            "student_balanced_accuracy": {"0.1": base, NO: base},
        }
    )
    v = web.noise_direction_verdicts(flipped)
    assert v["noise raises TPR"].verdict == "differs" and v["noise lowers TNR"].verdict == "differs"


def test_fig15_share_of_cases_above_the_same_students_no_noise_and_the_existence_over_students():
    """MAKE Fig. 15 (a) reads cases (a student at a noised ρ) against the same student without noise: the claim
    "in some cases higher" agrees when the share of such cases is above 0 beyond its interval, and an exact 0 (no
    case higher, in every student) is its negation, decided by the strict-claim rule."""
    high = [12.3, 12.4, 12.6]
    none = _arms({"eps_moments_int": {"0.1": [3.8, 3.9, 4.0], "1": [4.1, 4.0, 4.2], NO: high}}, ("0.1", "1", NO))
    share = web.cases_above_no_noise(none)
    assert (share.value, share.low, share.high) == (0.0, 0.0, 0.0)
    v = web.fig15_verdict(none)
    assert v.verdict == "differs" and "(a) ε_dep higher with noise in some cases: differs" in v.reason
    assert "(b) some ε_dep above ε*_ind: inconclusive" in v.reason
    # every student higher at ρ = 1 (half its cases): the share 0.5 is above 0; one student above ε*_ind confirms (b)
    some = _arms({"eps_moments_int": {"0.1": [3.8, 3.9, 4.0], "1": [20.5, 19.0, 18.5], NO: high}}, ("0.1", "1", NO))
    share = web.cases_above_no_noise(some)
    assert share.value == pytest.approx(0.5) and share.low > 0
    assert web.fig15_verdict(some).verdict == "agrees"
    # one student of three higher: a share that could be 0: inconclusive
    one = _arms({"eps_moments_int": {"0.1": [13.0, 4.0, 4.1], NO: high}})
    assert (
        web.judge_with_sources(web.EPSILON_HIGHER_IN_SOME_CASES, web.cases_above_no_noise(one)).verdict
        == "inconclusive"
    )


def _sosa(columns: dict, levels) -> "_Run":
    """:func:`_arms` with Sosa's parametrisation: a level is the Laplace scale b (larger, more noise)."""
    run = _arms(columns, levels)
    return dataclasses.replace(run, config=dataclasses.replace(run.config, parametrisation="scale"))


def test_sosa_fig44_reads_the_rank_correlation_of_epsilon_with_the_noise_per_ensemble_size():
    """Sosa Fig. 4.4: "as the noise increases, so does the teacher ε": each student's rank correlation of its ε with
    the noise (no noise the least, then b ascending), judged > 0 per ensemble size."""
    levels = ("0.1", "10", NO)
    rising = _sosa({"eps_moments_int": {"0.1": [1.0, 1.1, 1.2], "10": [7.2, 7.0, 7.5], NO: [0.4, 0.5, 0.45]}}, levels)
    trend = web.sosa_epsilon_trend(rising)
    assert (trend.value, trend.low, trend.high) == pytest.approx((1.0, 1.0, 1.0))
    assert web.sosa_epsilon_direction_verdict({250: rising}).verdict == "agrees"
    # above the no-noise value at every noised scale, but falling as the noise grows: higher than without noise, yet
    # not rising with the noise (the old "mean over the noised scales − no noise" would have agreed)
    peaked = _sosa({"eps_moments_int": {"0.1": [9.0, 9.2, 9.1], "10": [7.2, 7.0, 7.5], NO: [0.4, 0.5, 0.45]}}, levels)
    assert web.sosa_epsilon_trend(peaked).value == pytest.approx(0.5)
    falling = _sosa({"eps_moments_int": {"0.1": [4.3, 4.2, 4.4], "10": [3.7, 3.6, 3.9], NO: [14, 14.2, 13.9]}}, levels)
    v = web.sosa_epsilon_direction_verdict({100: rising, 250: falling})
    assert v.verdict == "differs" and "250 teachers" in v.reason and "rank correlation" in v.rule
    # the rank of a level is its noise: with MAKE's ρ, a larger ρ is less noise
    assert web.noise_amount(NO, "rho") == 0.0 and web.noise_amount("0.5", "rho") > web.noise_amount("1", "rho")
    assert web.noise_amount("10", "scale") > web.noise_amount("0.1", "scale")
    assert list(web.rank_correlations(np.array([0.0, 1.0, 2.0]), np.array([[3.0, 3.0, 3.0], [1, 2, 3]]))) == [0, 1]


def test_sosa_level_claim_at_250_teachers_and_b_01():
    good = _arms(
        {
            "student_tpr": {"0.1": [0.95, 0.94, 0.96], NO: [0.9] * 3},
            "student_tnr": {"0.1": [0.93, 0.92, 0.94], NO: [0.9] * 3},
        }
    )
    v = web.sosa_level_verdicts({250: good})
    assert {x.verdict for x in v.values()} == {"agrees"}
    bad = _arms(
        {
            "student_tpr": {"0.1": [0.5, 0.55, 0.45], NO: [0.9] * 3},
            "student_tnr": {"0.1": [0.93, 0.92, 0.94], NO: [0.9] * 3},
        }
    )
    v = web.sosa_level_verdicts({250: bad})
    assert v["TPR above 87 % at 250 teachers, b = 0.1"].verdict == "differs"
    assert "± 0.005 (printed precision)" in v["TPR above 87 % at 250 teachers, b = 0.1"].rule
    v = web.sosa_level_verdicts({12: good})
    assert {x.verdict for x in v.values()} == {"not comparable"}


def test_sosa_table41_direction_more_teachers_lower_epsilon():
    small = _arms({"eps_moments_int": {NO: [17.0, 17.2, 16.9]}}, (NO,))
    large = _arms({"eps_moments_int": {NO: [14.0, 14.1, 13.9]}}, (NO,))
    assert web.sosa_teachers_verdict({100: small, 250: large}).verdict == "agrees"
    v = web.sosa_teachers_verdict({100: large, 250: small})
    assert v.verdict == "differs" and "100 teachers − 250 teachers" in v.reason
    assert web.sosa_teachers_verdict({250: large}).verdict == "not comparable"


def test_fig8_reweighted_decay_agrees_inside_4_to_5_points_and_differs_outside():
    def recalls(value):  # every class recalled at ``value``: reweighted accuracy = value
        return {f"ensemble_recall_class{c}": {lvl: v for lvl, v in value.items()} for c in range(5)}

    clean = [0.90, 0.80, 0.85, 0.88]
    mild = recalls({"0.1": [c - 0.045 + 0.001 * i for i, c in enumerate(clean)], NO: clean})
    decays = ecg.reweighted_decays(_at_scale(mild))
    assert decays["0.1"].value == pytest.approx(0.0435)
    v = ecg.fig8_verdict(_at_scale(mild), 0.05)
    assert v.verdict == "agrees" and "100 beats per class" in v.reason
    steep = recalls({"0.1": [c - 0.3 + 0.01 * i for i, c in enumerate(clean)], NO: clean})
    assert ecg.fig8_verdict(_at_scale(steep), 0.05).verdict == "differs"
    # at another scale, like Figs 9 and 10: not comparable, the decay shown with its interval
    small = ecg.fig8_verdict(_arms(mild), 0.05)
    assert small.verdict == "not comparable" and "scale: 20 teachers" in small.reason
    assert "points over ρ" in small.reason and not small.evidence


def test_reweighted_accuracy_weighs_classes_by_the_full_data_priors():
    row = {f"ensemble_recall_class{c}": 0.0 for c in range(5)} | {"ensemble_recall_class0": 1.0}
    assert ecg.reweighted_accuracy(pd.DataFrame([row]), "ensemble").iloc[0] == pytest.approx(ecg.FULL_DATA_PRIORS[0])
    row["ensemble_recall_class4"] = float("nan")  # class Q absent: priors renormalised over the rest
    share = ecg.FULL_DATA_PRIORS[0] / ecg.FULL_DATA_PRIORS[:4].sum()
    assert ecg.reweighted_accuracy(pd.DataFrame([row]), "ensemble").iloc[0] == pytest.approx(share)


def test_fig10_carries_its_own_reason_not_fig9s(small_study):
    result, _ = small_study
    fig9 = ecg.comparability(result, 0.05, lnmax_labels="make2021-fig9")
    fig10 = ecg.comparability(result, 0.05, lnmax_labels="make2021-fig10")
    assert "Fig. 9's gap" in fig9 and "Fig. 9" not in fig10 and "Fig. 10's students" in fig10


# ------------------------------------------------------------------------------------- the notebooks' sections
def test_noise_levels():
    assert notebook_sections.noise_levels([0.1, 0.5], True) == [0.1, 0.5, None]
    assert notebook_sections.noise_levels((0.1,), False) == [0.1]


def test_record_verdicts_records_each_under_both_sources_ids_and_returns_markdown(tmp_path):
    out = NotebookOutputs("toy", tmp_path, profile="smoke", seed=0)
    verdicts = {
        "make2021-fig10": Verdict("agrees", "within 2 points"),
        "make2021-fig8": Verdict("differs", "within 2 points", "9 points off"),
    }
    text = notebook_sections.record_verdicts(verdicts, ecg_sections.SAME_AS, out)
    scalars = read_scalars(tmp_path)
    assert scalars["make2021-fig10"] == scalars["visca2021-fig4.15"] == verdicts["make2021-fig10"].as_record()
    assert scalars["make2021-fig8"]["verdict"] == "differs" and "visca2021-fig4.11" not in scalars
    assert text == (
        "* `make2021-fig10`: **agrees** (within 2 points)\n"
        "* `make2021-fig8`: **differs** (within 2 points): 9 points off"
    )
    assert text._repr_markdown_() == text


def test_ecg_designs_add_the_small_sample_design_on_request():
    paper_profile = ecg.EcgStudyConfig()
    assert [d.name for d in ecg_sections.designs(dataclasses.replace(paper_profile, alt_design=False))] == [
        "paper layout"
    ]
    paper, small = ecg_sections.designs(paper_profile)
    assert (paper.n_teachers, paper.disjoint_students) == (200, False)
    assert (small.name, small.n_teachers, small.student_queries, small.disjoint_students) == (
        "small-sample design",
        5,
        80,
        True,
    )


def _ecg_run(small_study):
    result, (X_t, y_t, X_s, y_s) = small_study
    pools = study.Pools(X_t, y_t, X_s, y_s, X_t.shape[1], source=None, description="toy blobs")
    return ecg_sections.EcgRun(pools, {"paper layout": result}, [1000.0, None], "synthetic: toy blobs")


@pytest.mark.slow
def test_ecg_sections_save_record_and_return_what_the_cell_shows(small_study, tmp_path):
    """Each section writes its figures and tables and records the numbers it returns (one place for each)."""
    run = _ecg_run(small_study)
    out = NotebookOutputs("toy", tmp_path, profile="smoke", seed=0)
    effects = ecg_sections.ensemble_section(run, out)
    table1 = ecg_sections.privacy_section(run, out)
    consensus = ecg_sections.consensus_section(run, out)
    verdicts = ecg_sections.verdicts_section(run, out)
    scalars = read_scalars(tmp_path)
    paper = effects.loc["paper layout"]
    # beside the paper's 4-5 %: the judged decay (reweighted accuracy, points); the raw one recorded apart
    fig8 = scalars["make2021-fig8"]
    judged = [100 * e.value for e in ecg.reweighted_decays(run.main).values()]
    assert fig8["accuracy_decay_max_pct"] == pytest.approx(max(judged))
    assert fig8["accuracy_decay_unweighted_max_pct"] == pytest.approx(paper["ensemble_decay_pct"].max())
    assert {"make2021-fig8.png", "make2021-fig9.pdf", "make2021-fig11.png", "make2021-table1.csv"} <= {
        p.name for p in tmp_path.iterdir()
    }
    assert scalars["make2021-table1"]["n_students"] == len(run.main.students) and "verdict" in table1
    assert scalars["accounting"]["max_dependent_minus_independent_same_grid"] <= 1e-9
    assert set(scalars["consensus"]) == set(consensus.index)
    for make, visca in ecg_sections.SAME_AS.items():
        assert scalars[make]["verdict"] == scalars[visca]["verdict"], make
    assert verdicts.count("\n* `") == 4  # five items, one bullet each


@pytest.mark.slow
def test_web_epsilon_section_counts_students_above_the_continuous_bound(small_study, tmp_path):
    result, (X_t, y_t, X_s, y_s) = small_study
    pools = study.Pools(X_t, y_t, X_s, y_s, X_t.shape[1], source=None, description="toy blobs")
    settings = web.WebStudyConfig()
    run = web_sections.WebRun(
        pools, settings, result.config, result, [1000.0, None], "synthetic: toy blobs", "toy data"
    )
    out = NotebookOutputs("toy", tmp_path, profile="smoke", seed=0)
    eps = web_sections.epsilon_section(run, out)
    scalars = read_scalars(tmp_path)
    above = int((result.students["eps_moments_int"] > result.data_independent["eps_moments_cont"] + 1e-9).sum())
    assert scalars["make2021-fig15"]["n_students_above_continuous_ind"] == above
    assert scalars["make2021-fig15"] == scalars["visca2021-fig4.13"]
    invariants = notebook_sections.accounting_invariants(result)
    assert scalars["accounting"]["max_continuous_minus_integer"] == pytest.approx(
        invariants["max_continuous_minus_integer"], rel=1e-5
    )
    assert list(eps.index) == result.level_order and "eps_rdp_median" in eps


def test_sosa_rows_name_the_rows_of_their_own_ensemble_size():
    def run(n_teachers):
        values = {c: {NO: [5.0, 5.0]} for c in ("eps_moments_int", "eps_rdp", "student_tpr", "student_tnr")}
        values |= {c: {NO: [0.5, 0.5]} for c in ("control_tpr", "control_tnr")}
        return dataclasses.replace(_arms(values, (NO,)), teachers={"n_teachers": n_teachers})

    reasons = {100: "100 teachers x 432 + 372 rows", 250: "250 teachers x 172 + 148 rows"}
    published = {
        "sosa2021-table4.1": {"rows": [{"n_teachers": 100, "tpr_pct": 81.2, "tnr_pct": 94.5, "epsilon": 5.32}]},
        "sosa2021-table4.2": {
            "rows": [{"n_teachers": 250, "student_epsilon": "no noise", "teacher_epsilon": 2.0, "tpr": 0.8, "tnr": 0.9}]
        },
    }
    t41, t42 = web.sosa_tables(
        {100: run(100), 250: run(250)}, published, gamma=0.05, delta=1e-5, n_queries=1000, data_reasons=reasons
    )
    assert t41.loc[0, "verdict_reason"] == "data: 100 teachers x 432 + 372 rows"
    assert (
        t42.dropna(subset=["paper_teacher_epsilon"])["verdict_reason"].iloc[0] == "data: 250 teachers x 172 + 148 rows"
    )


def test_web_data_reason_names_the_runs_own_rows_per_teacher():
    pools = dataclasses.make_dataclass("P", ["y_teacher"])(np.array([0, 1, 1, 1]))
    result = dataclasses.make_dataclass("S", ["teachers"])(
        {"n_teachers": 100, "train_rows": 432, "threshold_rows": 372}
    )
    assert "100 teachers x 432 + 372 rows instead of 930 + 800" in web_sections.data_reason(pools, result)


def test_epsilon_directions_are_not_comparable_when_every_epsilon_sits_on_the_data_independent_bound():
    cap = [20.7565] * 3
    flat = _arms({"eps_moments_int": {"0.1": cap, NO: cap}})
    assert (
        "by construction" in web.saturated(flat)
        and web.saturated(_arms({"eps_moments_int": {NO: [3.0] * 3}}, (NO,))) == ""
    )
    v = web.fig15_verdict(flat)
    assert (
        v.verdict == "not comparable"
        and "(a) ε_dep higher with noise in some cases: not comparable (by construction" in v.reason
    )
    assert "(b) some ε_dep above ε*_ind: agrees, analytic" in v.reason
    assert web.sosa_epsilon_direction_verdict({6: flat, 12: flat}).verdict == "not comparable"
    rising = _arms({"eps_moments_int": {"0.1": [1.0, 1.1, 1.2], NO: [0.4, 0.5, 0.45]}})
    v = web.sosa_epsilon_direction_verdict({6: flat, 250: rising})
    assert v.verdict == "agrees" and "6 teachers left out: by construction" in v.reason
    assert web.sosa_teachers_verdict({6: flat, 12: flat}).verdict == "not comparable"


def _at_scale(columns, levels=("0.1", NO)):
    """A run at the paper's scale (200 teachers, T = 900, q below Theorem 3's limit): comparable."""
    run = _arms(columns, levels)
    run.students["share_q_below_theorem_limit"] = 0.5
    if "eps_moments_int" not in run.students:
        run.students["eps_moments_int"] = 5.0
    for column in ("eps_moments_cont", "eps_rdp"):
        run.students[column] = run.students["eps_moments_int"]
    return dataclasses.replace(
        run,
        teachers={"n_teachers": 200, "train_rows": 5000},
        config=dataclasses.replace(run.config, student_queries=900, student_validation=100),
    )


def test_fig9_and_fig10_at_scale_read_the_printed_ranges_on_paired_drops():
    clean = [0.90, 0.80, 0.85, 0.88]
    inside = [c - 0.11 + 0.001 * i for i, c in enumerate(clean)]  # drops 0.110, 0.109, ...: inside 10–12 %
    far = [c - 0.40 + 0.01 * i for i, c in enumerate(clean)]
    published = {"make2021-table1": {"rows": [{"rho": NO, "eps_dep_median": 5.0, "eps_dep_iqr": 0.0}]}}
    agree = _at_scale({"pate_accuracy": {"0.1": inside, NO: clean}, "student_accuracy": {"0.1": far, NO: clean}})
    v = ecg.verdicts(agree, 0.05, published)
    assert v["make2021-fig9"].verdict == "agrees" and v["make2021-fig10"].verdict == "differs"
    assert "ρ = 0.1" in v["make2021-fig10"].evidence and "widened by 0.005 / 0.005" in v["make2021-fig9"].rule


def test_table1_rows_judge_the_median_with_its_bootstrap_interval_against_the_printed_value():
    near = _at_scale({"eps_moments_int": {"0.1": [20.409, 20.410, 20.411, 20.41], NO: [5.96] * 4}})
    rows = [{"rho": "0.1", "eps_dep_median": 20.41, "eps_dep_iqr": 0.0}, {"rho": NO, "eps_dep_median": 5.0}]
    table = ecg.table1(near, rows, 0.05)
    assert list(table["verdict"]) == ["agrees", "differs"]
    assert "bootstrap resamples" in table.loc[1, "verdict_reason"]
    # the table's verdict: its rows as one family, by the one multiplicity rule
    v = ecg.table1_verdict(near, rows, 0.05)
    assert v.verdict == "differs" and "Holm" in v.rule and "ρ = no noise: differs" in v.reason
    only = ecg.table1_verdict(near, rows[:1], 0.05)
    assert only.verdict == "agrees" and only.multiplicity == "none (one hypothesis)"


def test_each_teacher_seed_has_its_own_partition_and_training_seed_and_the_first_keeps_the_single_design():
    config = _config(n_students=4, n_teacher_seeds=2)
    first, second = (study.teacher_partitions(400, config, r) for r in (0, 1))
    assert np.array_equal(first.train, study.teacher_partitions(400, _config()).train)
    assert not np.array_equal(first.train, second.train)
    second.validate(400)
    seeds = [study.pipeline.teacher_training_seed(config, r) for r in range(3)]
    assert seeds[0] == config.seed and len(set(seeds)) == 3
    assert [study.teacher_of_student(k, config) for k in range(5)] == [0, 1, 0, 1, 0]


@pytest.fixture(scope="module")
def nested_study(small_study, tmp_path_factory):
    """The small study with 4 students split across 2 teacher ensembles."""
    patch = pytest.MonkeyPatch()
    patch.setenv("PATE_STUDY_CACHE", str(tmp_path_factory.mktemp("cache")))
    _, (X_t, y_t, X_s, y_s) = small_study
    yield study.run_study(X_t, y_t, X_s, y_s, _config(n_students=4, n_teacher_seeds=2), progress=False)
    patch.undo()


def test_students_are_split_across_teacher_ensembles_and_keep_theirs_at_every_level(nested_study, small_study):
    s = nested_study.students
    assert nested_study.teachers["n_teacher_seeds"] == 2
    for _, level in s.groupby("level"):
        assert list(level.sort_values("student")["teacher_seed"]) == [0, 1, 0, 1]
    # student 0 is labelled by ensemble 0, the single-ensemble design's: same rows, same teachers, same votes
    single = small_study[0].students
    for column in ("ensemble_accuracy", "eps_moments_int"):
        a = s[s["student"] == 0].set_index("level")[column]
        b = single[single["student"] == 0].set_index("level")[column]
        assert a.to_dict() == b.to_dict(), column
    # every interval of a level covers the teacher seed: two ensembles of two students each
    changes = paper_tables.level_changes(nested_study, "student_accuracy")
    (e,) = changes.values()
    assert e.method == unc.CLUSTER_METHOD and (e.n_replicates, e.n_units) == (2, 4)
    assert unc.TEACHER_SEED in e.sources and not e.unreplicated
    assert "over 2 replicates of teacher training seed and partition with 4 replicates" in e.render()
    assert "2 teacher ensembles (own seed and partition each)" in paper_tables.scale_description(nested_study, "x", 1)


def _nested(columns: dict, levels=("0.1", "no noise"), n_teacher_seeds=2) -> "_Run":
    """:func:`_arms` with student ``k`` labelled by teacher ensemble ``k mod n_teacher_seeds``."""
    run = _arms(columns, levels)
    students = run.students.assign(teacher_seed=run.students["student"] % n_teacher_seeds)
    return dataclasses.replace(run, students=students, teachers={**run.teachers, "n_teacher_seeds": n_teacher_seeds})


def test_level_changes_judge_on_the_teacher_ensembles_means_both_ways():
    base = [0.80, 0.70, 0.90, 0.60, 0.75, 0.85]
    claim = web.NOISE_DIRECTION["TPR"]
    # every student of both ensembles gains about 0.1: the ensemble means agree, noise raises TPR
    up = _nested({"student_tpr": {"0.1": [b + 0.1 + 0.005 * i for i, b in enumerate(base)], NO: base}})
    v = paper_tables.per_step(claim, paper_tables.level_changes(up, "student_tpr"), "ρ = {}")
    assert v.verdict == "agrees" and "replicates of teacher training seed and partition" in v.evidence
    down = _nested({"student_tpr": {"0.1": [b - 0.1 - 0.005 * i for i, b in enumerate(base)], NO: base}})
    v = paper_tables.per_step(claim, paper_tables.level_changes(down, "student_tpr"), "ρ = {}")
    assert v.verdict == "differs"
    # the students of ensemble 0 gain 0.2, those of ensemble 1 gain 0.02: read over students alone the change is
    # clearly positive; over the two ensembles' means it is not decided
    gains = [0.20, 0.02, 0.21, 0.03, 0.19, 0.02]
    split = _nested({"student_tpr": {"0.1": [b + g for b, g in zip(base, gains)], NO: base}})
    nested = paper_tables.level_changes(split, "student_tpr")["0.1"]
    flat = unc.paired_difference(np.add(base, gains), base, paper_tables.STUDENT_SOURCES)
    assert flat.low > 0 and nested.low < 0 < nested.high
    assert paper_tables.per_step(claim, {"0.1": nested}, "ρ = {}").verdict == "inconclusive"


def test_row_sources_name_what_a_students_rows_vary_in_each_design():
    """The ECG sample's students need every row of a 500-beat pool (450 queries + 50 validation beats): what varies
    between them is which rows are queries and which validate, not which rows they read."""
    run = _arms({"student_tpr": {"0.1": [0.5, 0.6, 0.7], NO: [0.5, 0.6, 0.6]}})  # 450 + 50 rows per student
    whole = dataclasses.replace(run, n_student_pool=500)
    assert paper_tables.row_source(whole) == paper_tables.POOL_ROLES
    assert paper_tables.row_source(dataclasses.replace(run, n_student_pool=15000)) == paper_tables.STUDENT_ROWS
    disjoint = dataclasses.replace(whole, config=dataclasses.replace(whole.config, disjoint_students=True))
    assert paper_tables.row_source(disjoint) == paper_tables.OWN_BLOCK
    e = paper_tables.level_changes(whole, "student_tpr")["0.1"]
    assert paper_tables.POOL_ROLES in e.sources and paper_tables.STUDENT_ROWS not in e.sources
    assert paper_tables.vote_sources(whole) == (unc.RELEASE_NOISE, paper_tables.POOL_ROLES)


def test_the_pools_own_draw_is_named_as_not_replicated_on_every_interval():
    pools = study.web_pools("synthetic", seed=0, student_pool_size=1000)
    assert pools.unreplicated == (study.pools.SYNTHETIC_DRAW, study.pools.POOL_SPLIT)
    run = dataclasses.replace(
        _arms({"student_tpr": {"0.1": [0.5, 0.6, 0.7], NO: [0.5, 0.6, 0.6]}}), unreplicated=pools.unreplicated
    )
    e = paper_tables.level_changes(run, "student_tpr")["0.1"]
    assert e.unreplicated[:2] == pools.unreplicated and "not replicated: synthetic data draw, pool split" in e.render()
    sample = DataSource("real", "MIT-BIH heartbeats", "500 + 500 beats", "stratified sample: 500 + 500 rows")
    assert study.pools.data_draws(sample, study.pools.ECG_SAMPLE) == (study.pools.ECG_SAMPLE,)
    full = dataclasses.replace(sample, scale="full")
    assert study.pools.data_draws(full, study.pools.ECG_SAMPLE) == () and study.pools.data_draws(full) == ()


def test_a_level_against_a_printed_number_needs_the_pool_split_but_a_paired_change_does_not():
    """Sosa's "TPR and TNR above 87 %" is a level on these pools: the pool split is a source its claim needs, so
    without it replicated the level is not decided; "noise raises TPR" compares two arms on the same pools."""
    good = {
        "student_tpr": {"0.1": [0.95, 0.94, 0.96], NO: [0.85, 0.84, 0.86]},
        "student_tnr": {"0.1": [0.93, 0.92, 0.94], NO: [0.9] * 3},
        "student_balanced_accuracy": {"0.1": [0.9] * 3, NO: [0.9] * 3},
    }
    assert {x.verdict for x in web.sosa_level_verdicts({250: _arms(good)}).values()} == {"agrees"}
    held = dataclasses.replace(_arms(good), unreplicated=(study.pools.POOL_SPLIT,))
    levels = web.sosa_level_verdicts({250: held})
    assert {x.verdict for x in levels.values()} == {"inconclusive"}
    assert all("pool split" in x.reason for x in levels.values())
    assert web.noise_direction_verdicts(held)["noise raises TPR"].verdict == "agrees"
    # not decided, yet shown: the interval over the sources it covers, with its replicate rows, also once the
    # item's claims are combined (Sosa Table 4.2 once recorded "ours 0.8513" and no interval)
    for v in (*levels.values(), combine(levels)):
        assert v.evidence and "[" in v.evidence and " over " in v.evidence
        record = v.as_record()
        assert record["verdict_estimate"] and record["verdict_replicates"].estimates
        assert len(record["verdict_replicates"].estimates) == len(v.shown) >= 1


def test_sosa_teachers_direction_pairs_students_across_ensemble_sizes_with_their_ensembles():
    small = _nested({"eps_moments_int": {NO: [17.0, 17.2, 16.9, 17.1]}}, (NO,))
    large = _nested({"eps_moments_int": {NO: [14.0, 14.1, 13.9, 14.2]}}, (NO,))
    v = web.sosa_teachers_verdict({100: small, 250: large})
    assert v.verdict == "agrees" and "teacher training seed and partition" in v.evidence
    assert web.sosa_teachers_verdict({100: large, 250: small}).verdict == "differs"


def test_table1_median_interval_resamples_the_teacher_ensembles(monkeypatch):
    run = _nested({"eps_moments_int": {"0.1": [5.0, 9.0, 5.1, 9.1, 4.9, 8.9], NO: [6.0] * 6}})
    e = ecg.median_estimate(run, "0.1")
    assert unc.TEACHER_SEED in e.sources and not e.unreplicated and e.method == "percentile bootstrap"
    one = ecg.median_estimate(_arms({"eps_moments_int": {"0.1": [5.0, 9.0, 5.1], NO: [6.0] * 3}}), "0.1")
    assert one.unreplicated == (unc.TEACHER_SEED,)


def test_duplicate_shares_read_the_rows_of_each_students_own_teacher_ensemble(tmp_path, monkeypatch):
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path))
    pools = study.web_pools("synthetic", seed=0, student_pool_size=1000, split="row")
    config = tiny_config(pools.n_features, max_epochs=1, n_teacher_seeds=2)
    result = study.run_study(pools.X_teacher, pools.y_teacher, pools.X_student, pools.y_student, config, progress=False)
    # URL ids with no repeats on the teachers' side (student row i "shares a URL" with teacher row i): a share then
    # depends on which teacher rows an ensemble holds
    n_teacher = len(pools.y_teacher)
    pools = dataclasses.replace(
        pools, teacher_urls=np.arange(n_teacher), student_urls=np.arange(len(pools.y_student)) % n_teacher
    )
    shares = splits.duplicate_shares(pools, result)
    for k, rows in enumerate(result.student_rows[NO]):
        parts = study.teacher_partitions(len(pools.y_teacher), result.config, k % 2)
        used = np.concatenate([parts.train.ravel(), parts.threshold.ravel()])
        expected = np.isin(pools.student_urls[rows.queries], pools.teacher_urls[used]).mean()
        assert shares.loc[k, "query_url_in_teachers"] == pytest.approx(expected)
    # ensemble 0's rows would give student 1 another share: the two ensembles hold different rows
    parts = study.teacher_partitions(len(pools.y_teacher), result.config, 0)
    used = np.concatenate([parts.train.ravel(), parts.threshold.ravel()])
    rows = result.student_rows[NO][1]
    other = np.isin(pools.student_urls[rows.queries], pools.teacher_urls[used]).mean()
    assert shares.loc[1, "query_url_in_teachers"] != pytest.approx(other)


def test_a_narrow_range_is_printed_with_the_digits_that_tell_its_ends_apart():
    assert web.span(pd.Series([0.2104, 0.2141])) == "0.210–0.214"
    assert web.span(pd.Series([0.21, 0.57])) == "0.21–0.57"
    assert web.span(pd.Series([0.5, 0.5])) == "0.50–0.50"
