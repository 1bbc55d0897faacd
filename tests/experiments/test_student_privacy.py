"""The student-privacy pipeline shared by the ECG and web-request studies."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from pate_study.ensemble import EnsembleConfig
from pate_study.experiments import student_privacy as study


def _blobs(n, d=20, n_classes=3, seed=0):
    """Non-negative, separable, unit-l1 rows (class c puts its mass on its own block of features)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=n)
    X = rng.random((n, d)) * 0.2
    block = d // n_classes
    for c in range(n_classes):
        X[y == c, c * block:(c + 1) * block] += 1.0
    return X / X.sum(1, keepdims=True), y


def _config(**changes):
    model = EnsembleConfig(task="multiclass", in_features=20, n_outputs=3, hidden=(16,), lr=0.01, batch_size=32,
                           max_epochs=15)
    base = study.StudyConfig(task="multiclass", n_classes=3, n_teachers=8, teacher_train=40, teacher_threshold=0,
                             student_queries=60, student_threshold=0, student_validation=40,
                             noise_levels=(1000.0, None), n_students=2, gamma=0.5, delta=1e-5, teacher=model,
                             student=model, feature_scale=20.0, seed=3)
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
    with pytest.raises(ValueError, match="parametrisation"):
        _config(parametrisation="epsilon")
    with pytest.raises(ValueError, match="noise_levels"):
        _config(noise_levels=(0.0,))
    with pytest.raises(ValueError, match="student_features"):
        _config(student_features="both")


def test_noise_signal_table_matches_the_closed_form():
    table = study.noise_signal_table([0.1, None], "rho", 187).set_index("level")
    assert table.loc["0.1", "noise_std"] == pytest.approx(np.sqrt(2) * 10)
    assert table.loc["0.1", "noise_std_over_mean_coordinate"] == pytest.approx(np.sqrt(2) * 10 * 187)
    assert table.loc["0.1", "student_epsilon"] == pytest.approx(0.2)


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
    model = EnsembleConfig(task="binary", in_features=20, n_outputs=1, hidden=(16,), lr=0.01, batch_size=32,
                           max_epochs=15)
    config = _config(task="binary", n_classes=2, teacher_threshold=10, student_threshold=20, teacher=model,
                     student=model, parametrisation="scale", noise_levels=(0.001, None))
    result = study.run_study(X_t, y_t, X_s, y_s, config, student_groups=groups, progress=False)
    students = result.students
    assert list(students["level"].unique()) == ["0.001", "no noise"]
    assert (students.query("level == '0.001'")["student_epsilon"] == 2 / 0.001).all()
    for column in ("student_tpr", "student_tnr", "control_tpr", "control_tnr", "student_balanced_accuracy"):
        assert students[column].between(0, 1).all(), column
    clean = students.query("level == 'no noise'")
    assert (clean["student_balanced_accuracy"] > 0.9).all()
    assert result.teachers["threshold_rows"] == 10


def test_student_rows_keep_validation_groups_apart():
    groups = np.repeat(np.arange(50), 4)  # 200 rows, 50 groups of 4 identical requests
    config = _config(student_queries=30, student_threshold=10, student_validation=40)
    for k in range(5):
        q, t, v = study._student_rows(200, config, np.random.default_rng(k), groups)
        assert len(q) == 30 and len(t) == 10 and len(v) == 40
        assert not set(groups[v]) & set(groups[np.concatenate([q, t])])
    with pytest.raises(ValueError, match="share no group"):
        study._student_rows(200, _config(student_queries=150, student_validation=40), np.random.default_rng(0), groups)


def test_epsilon_table_vs_paper_keeps_level_order():
    students = pd.DataFrame({"level": ["0.1", "0.1", "no noise"], "eps_moments_int": [1.0, 3.0, 2.0],
                             "eps_moments_cont": [1.0, 2.0, 2.0], "eps_rdp": [0.5, 0.5, 0.5]})
    paper = [{"rho": "0.1", "eps_dep_median": 20.36, "eps_dep_iqr": 0.32},
             {"rho": "no noise", "eps_dep_median": 5.96, "eps_dep_iqr": 13.15}]
    table = study.epsilon_table_vs_paper(students, ["no noise", "0.1"], paper)  # not alphabetical on purpose
    assert list(table["level"]) == ["no noise", "0.1"]
    assert table.loc[1, "eps_moments_int_median"] == 2.0 and table.loc[1, "eps_moments_int_iqr"] == 1.0
    assert table.loc[0, "paper_median"] == 5.96
    # the paper's "1.0" and our "1" are the same level
    one = study.epsilon_table_vs_paper(students.assign(level=["1", "1", "no noise"]), ["1", "no noise"],
                                       [{"rho": "1.0", "eps_dep_median": 20.41, "eps_dep_iqr": 0.0}])
    assert len(one) == 2 and one.loc[0, "paper_median"] == 20.41 and one.loc[0, "eps_moments_int_median"] == 2.0
