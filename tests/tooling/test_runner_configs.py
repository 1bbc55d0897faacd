"""The runner checks every parameter file against its notebook's parameters cell before anything runs: unknown
names (with the nearest known one), wrong types, YAML syntax errors, each one line naming file, parameter,
expected and found; and it leaves no staging folder behind, whether the run failed, was interrupted or killed."""

from __future__ import annotations

import shutil

import pytest

from pate_study.core.paths import CONFIGS_DIR
from pate_study.experiments.pate2018_lab import Lab2Config
from pate_study.tooling.notebook_runner import cli, layout, staging
from pate_study.tooling.notebook_runner import configs as checks


@pytest.mark.parametrize("profile", layout.PROFILES)
def test_every_shipped_parameter_file_matches_its_notebook(profile):
    stems = [s for s in layout.list_notebooks() if (CONFIGS_DIR / s / f"{profile}.yaml").exists()]
    checks.check_configs(stems, profile)


@pytest.fixture
def configs(tmp_path):
    """A copy of configs/ to edit."""
    target = tmp_path / "configs"
    shutil.copytree(CONFIGS_DIR, target)
    return target


def _append(configs, stem, text, profile="smoke"):
    """Set the parameters of ``text`` in the file (their lines there, if any, removed: a key given twice is an
    error of its own)."""
    path = configs / stem / f"{profile}.yaml"
    names = {line.split(":")[0] for line in text.splitlines()}
    kept = [line for line in path.read_text().splitlines(keepends=True) if line.split(":")[0] not in names]
    path.write_text("".join(kept) + text)
    return path


def _problems(configs, stem, profile="smoke"):
    with pytest.raises(checks.ConfigError) as err:
        checks.check_configs([stem], profile, configs_dir=configs)
    assert all("\n" not in line for line in err.value.problems)
    return err.value.problems


def test_a_misspelled_parameter_is_refused_with_the_nearest_name(configs):
    _append(configs, "01_ecg_student_privacy", "n_teacher: 10\n")
    [line] = _problems(configs, "01_ecg_student_privacy")
    assert f"{configs}/01_ecg_student_privacy/smoke.yaml: n_teacher: not a field of EcgStudyConfig" in line
    assert "did you mean n_teachers?" in line


def test_a_name_far_from_every_parameter_lists_the_known_ones(configs):
    _append(configs, "00_dp_primer", "zzzz_qqq: 1\n")
    [line] = _problems(configs, "00_dp_primer")
    assert "zzzz_qqq: not a field of PrimerConfig; known: gamma, delta, n_queries," in line


@pytest.mark.parametrize(
    "stem, text, expected, found",
    [
        ("00_dp_primer", "votes_queries: ten\n", "expected an integer in [1, 1000000]", "found 'ten'"),
        ("04_audioset_teachers", "teacher_counts: ten\n", "expected a list, each an integer at least 1", "found 'ten'"),
        ("04_audioset_teachers", "teacher_counts: [1, ten]\n", "[1]: expected an integer at least 1", "found 'ten'"),
        ("00_dp_primer", "votes_queries: 10.5\n", "expected an integer", "found 10.5"),
        ("00_dp_primer", "votes_queries: true\n", "expected an integer", "found True"),
        ("00_dp_primer", "sigma: [1, 2]\n", "expected a number above 0", "found [1, 2]"),
        ("00_dp_primer", "sigma: null\n", "expected a number above 0", "found None"),
        ("04_audioset_teachers", "hidden: [[256]]\n", "[0]: expected an integer at least 1", "found [256]"),
    ],
)
def test_a_value_of_the_wrong_type_names_file_parameter_expected_and_found(configs, stem, text, expected, found):
    _append(configs, stem, text)
    [line] = _problems(configs, stem)
    name = text.split(":")[0]
    assert f"{stem}/smoke.yaml: {name}" in line and expected in line and found in line


def test_integers_where_floats_are_expected_and_documented_nulls_pass(configs):
    _append(configs, "00_dp_primer", "sigma: 40\n")
    _append(configs, "04_audioset_teachers", "logmel_head: null\npatience: 3\n")  # "# None: the thesis heads"
    checks.check_configs(["00_dp_primer", "04_audioset_teachers"], "smoke", configs_dir=configs)


def test_a_yaml_syntax_error_names_file_line_and_column(configs):
    path = configs / "00_dp_primer" / "smoke.yaml"
    path.write_text("seed: 0\nsigma: [1, 2\ndata: auto\n")
    [line] = _problems(configs, "00_dp_primer")
    assert "00_dp_primer/smoke.yaml line 3, column 5: YAML syntax error" in line


def test_a_file_that_is_not_a_mapping_is_named(configs):
    (configs / "00_dp_primer" / "smoke.yaml").write_text("- seed\n- 0\n")
    [line] = _problems(configs, "00_dp_primer")
    assert "expected a mapping of parameter names to values, found a list" in line


def test_all_problems_of_all_files_are_reported_together(configs):
    _append(configs, "00_dp_primer", "n_teacher: 10\nsigma: x\n")
    _append(configs, "06_pate2018_votes", "sead: 1\n")
    with pytest.raises(checks.ConfigError) as err:
        checks.check_configs(["00_dp_primer", "06_pate2018_votes"], "smoke", configs_dir=configs)
    assert len(err.value.problems) == 3


def test_the_cli_refuses_before_preparing_data_or_running_anything(configs, monkeypatch, capsys, point_layout):
    _append(configs, "00_dp_primer", "n_teacher: 10\n")
    point_layout(configs=configs)
    monkeypatch.setattr(cli, "remove_stale_staging", lambda *a: [])
    ran = []
    monkeypatch.setattr(cli, "prepare_datasets", lambda *a: ran.append("data") or [])
    monkeypatch.setattr(staging, "execute_notebook", lambda *a, **k: ran.append("notebook"))
    code = cli.main(["figures", "--profile", "smoke", "--notebooks", "00_dp_primer", "--data", "skip"])
    err = capsys.readouterr().err
    assert code == 2 and not ran
    assert f"error: {configs}/00_dp_primer/smoke.yaml: n_teacher: not a field of PrimerConfig" in err
    assert "nothing was run" in err


def test_stale_staging_folders_of_an_interrupted_run_are_removed(tmp_path):
    (tmp_path / ".tmp-00_dp_primer" / "sub").mkdir(parents=True)
    (tmp_path / ".old-01_ecg-1234").mkdir()
    for folder in (".tmp-00_dp_primer", ".old-01_ecg-1234"):
        staging.staging_marker(tmp_path / folder).write_text("")
    (tmp_path / "00_dp_primer").mkdir()
    (tmp_path / "01_ecg").mkdir()  # the swap had put the new outputs in place (else the old ones are put back)
    removed = staging.remove_stale_staging(tmp_path)
    assert len(removed) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["00_dp_primer", "01_ecg"]


def test_a_swap_marks_the_folder_it_moves_aside_and_leaves_nothing(tmp_path):
    from data_recipes.files import replace_folder

    (tmp_path / "nb").mkdir()
    (tmp_path / ".tmp-nb").mkdir()
    (tmp_path / ".tmp-nb" / "new.csv").write_text("new")
    replace_folder(tmp_path / ".tmp-nb", tmp_path / "nb", marker=staging.STAGING_MARKER)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb"] and (tmp_path / "nb" / "new.csv").exists()


def test_a_users_folder_named_like_a_staging_folder_is_never_removed(tmp_path):
    for name in (".tmp-mine", ".tmp-00_dp_primer-smoke", ".old-notes-1"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "thesis.tex").write_text("mine")
    assert staging.remove_stale_staging(tmp_path) == []
    assert all(
        (tmp_path / name / "thesis.tex").exists() for name in (".tmp-mine", ".tmp-00_dp_primer-smoke", ".old-notes-1")
    )


def test_a_run_stopped_by_a_config_error_removes_nothing(configs, tmp_path, monkeypatch, capsys, point_layout):
    _append(configs, "00_dp_primer", "n_teacher: 10\n")
    figures = tmp_path / "figures"
    own = figures / ".tmp-00_dp_primer-smoke"
    own.mkdir(parents=True)
    staging.staging_marker(own).write_text("")
    point_layout(configs=configs, figures=figures, build=tmp_path / "build")
    code = cli.main(["figures", "--profile", "smoke", "--notebooks", "00_dp_primer", "--data", "skip"])
    assert code == 2 and "nothing was run" in capsys.readouterr().err
    assert own.is_dir()  # not even the runner's own left-overs: nothing happens before the checks pass


def test_a_users_folder_at_the_staging_path_fails_that_notebook_and_is_kept(tmp_path, monkeypatch, point_layout):
    figures = tmp_path / "figures"
    mine = figures / ".tmp-00_dp_primer-smoke"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("mine")
    point_layout(figures=figures, build=tmp_path / "build", root=tmp_path)
    monkeypatch.setattr(staging, "execute_notebook", lambda *a, **k: pytest.fail("ran over the user's folder"))
    run = staging.run_notebook("00_dp_primer", "smoke")
    assert not run.ok and "was not made by the runner" in run.error and (mine / "notes.txt").exists()


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, RuntimeError])
def test_a_notebook_stopped_midway_leaves_no_staging_folder(tmp_path, monkeypatch, interruption, point_layout):
    figures, build = tmp_path / "figures", tmp_path / "build"
    figures.mkdir()
    point_layout(figures=figures, build=build, root=tmp_path)
    monkeypatch.setattr(cli, "write_index", lambda *a: None)

    def stopped(stem, profile, output_dir, **kwargs):
        kwargs["staging"].mkdir(parents=True)  # the kernel writes into the runner's staging folder
        (kwargs["staging"] / "half.png").write_bytes(b"half")
        raise interruption("stopped")

    monkeypatch.setattr(staging, "execute_notebook", stopped)
    if interruption is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            cli.run_figures("smoke", ["00_dp_primer"], "skip")
    else:
        assert cli.run_figures("smoke", ["00_dp_primer"], "skip") == 1
        assert "no executed copy was written" in (build / "summary.smoke.md").read_text()
    assert list(figures.iterdir()) == []


def test_a_folder_that_cannot_take_files_stops_the_run_before_any_work(tmp_path, monkeypatch, capsys):
    import errno

    from data_recipes import files

    monkeypatch.setattr(cli, "remove_stale_staging", lambda *a: [])
    monkeypatch.setattr(cli, "check_configs", lambda *a: None)
    ran = []
    monkeypatch.setattr(cli, "prepare_datasets", lambda *a: ran.append("data") or [])
    monkeypatch.setattr(
        files.tempfile, "mkstemp", lambda **kw: (_ for _ in ()).throw(OSError(errno.EROFS, "Read-only file system"))
    )
    code = cli.main(["figures", "--profile", "smoke", "--notebooks", "00_dp_primer", "--data", "skip"])
    err = capsys.readouterr().err
    assert code == 2 and not ran and "error: figures folder" in err and "Read-only file system" in err


# --- invalid input a careless or hostile user writes ----------------------------------------------------------------
def test_a_key_given_twice_is_refused_naming_file_key_and_lines(configs):
    path = configs / "00_dp_primer" / "smoke.yaml"
    path.write_text("seed: 0\ndata: auto\nseed: 1\n")
    [line] = _problems(configs, "00_dp_primer")
    assert "00_dp_primer/smoke.yaml line 3, column 1: seed given twice (first on line 1)" in line


def test_an_empty_parameter_file_is_refused_naming_it(configs):
    for text in ("", "# nothing yet\n"):
        (configs / "00_dp_primer" / "smoke.yaml").write_text(text)
        [line] = _problems(configs, "00_dp_primer")
        assert "00_dp_primer/smoke.yaml: empty (no parameters)" in line


def test_a_yaml_alias_bomb_is_refused_at_once_with_a_short_message(configs):
    levels = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    (configs / "07_pate2018_lab" / "smoke.yaml").write_text("\n".join(levels) + "\nn_queries: *a8\n")
    [line] = _problems(configs, "07_pate2018_lab")
    assert "line 2, column" in line and "alias *a0: aliases are not accepted" in line and len(line) < 300


@pytest.mark.slow
def test_a_huge_value_is_quoted_bounded_in_a_type_error(configs):
    _append(configs, "07_pate2018_lab", "n_queries: [" + ", ".join(["[1, 2, 3, 4, 5, 6, 7, 8]"] * 5000) + "]\n")
    [line] = _problems(configs, "07_pate2018_lab")
    assert "n_queries: expected an integer" in line and len(line) < 400


def test_a_profile_the_named_notebook_lacks_is_an_error_not_a_silent_skip(monkeypatch, capsys):
    monkeypatch.setattr(cli, "run_figures_locked", lambda *a: pytest.fail("ran"))
    code = cli.main(["figures", "--profile", "gpu", "--notebooks", "00_dp_primer", "--data", "skip"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "no configs/<stem>/gpu.yaml for 00_dp_primer; the gpu profile exists for: 04_audioset_teachers" in err


def test_a_notebook_named_twice_is_named_in_the_error(monkeypatch, capsys):
    monkeypatch.setattr(cli, "run_figures_locked", lambda *a: pytest.fail("ran"))
    code = cli.main(["figures", "--profile", "smoke", "--notebooks", "00_dp_primer", "00_dp_primer"])
    err = capsys.readouterr().err
    assert code == 2 and err == "error: --notebooks: 00_dp_primer given more than once; name each notebook once\n"


def test_index_without_a_figures_folder_is_refused(tmp_path, monkeypatch, capsys, point_layout):
    point_layout(figures=tmp_path / "figures")
    monkeypatch.setattr(cli, "write_index", lambda *a: pytest.fail("wrote a fresh index"))
    assert cli.main(["index"]) == 2
    assert "no figures folder" in capsys.readouterr().err


def test_a_count_below_one_names_the_file_and_the_parameter(configs):
    _append(configs, "00_dp_primer", "n_queries: -5\n")
    [line] = _problems(configs, "00_dp_primer")
    assert line.endswith("00_dp_primer/smoke.yaml: n_queries: expected an integer in [1, 1000000], found -5")


@pytest.mark.parametrize("text", ["delta: .nan\n", "delta: .inf\n", "delta: -.inf\n"])
def test_a_nan_or_infinity_is_refused_before_any_kernel_starts(configs, text):
    _append(configs, "00_dp_primer", text)
    [line] = _problems(configs, "00_dp_primer")
    assert "00_dp_primer/smoke.yaml: delta: expected a number in (0, 1), found " in line


# ---------------------------------------------------------------- counts bounded, mappings checked key by key
@pytest.mark.parametrize("text", ["ss_draws: 1000000000000\n", "ss_draws: " + "9" * 400 + "\n"])
def test_an_astronomical_count_is_refused_before_any_kernel_starts(configs, text):
    """``n_runs: 10^12`` used to pass the check and loop in the notebook for days."""
    _append(configs, "00_dp_primer", text)
    [line] = _problems(configs, "00_dp_primer")
    assert "00_dp_primer/smoke.yaml: ss_draws: expected an integer in [1, 10000000], found " in line
    assert len(line) < 300


@pytest.mark.parametrize(
    "text, expected",
    [
        ("n_queries: -5\n", "n_queries: expected an integer in [1, 100000], found -5"),
        ("delta: .nan\n", "delta: expected a number in (0, 1), found nan"),
        ("delta: -.inf\n", "delta: expected a number in (0, 1), found -inf"),
        ("n_runs: 1000000000000\n", "n_runs: expected an integer in [1, 20000], found 1000000000000"),
        ("n_runs: " + "9" * 400 + "\n", "n_runs: expected an integer in [1, 20000], found 99999999999999999999"),
    ],
)
def test_a_contract_notebook_refuses_the_same_values_by_its_declared_ranges(configs, text, expected):
    """The lab's settings are a contract: a count below one, a NaN or an astronomical count is refused by the range
    its field declares, before any kernel starts."""
    _append(configs, "07_pate2018_lab", text)
    [line] = _problems(configs, "07_pate2018_lab")
    assert line.startswith(f"{configs}/07_pate2018_lab/smoke.yaml: {expected}")
    assert len(line) < 300


@pytest.mark.parametrize(
    "text, expected",
    [
        ("replicates: {n_boot: .nan, sampler_seeds: 3}\n", "replicates.n_boot: expected an integer in [1, 100000]"),
        (
            "replicates: {n_boot: 0, sampler_seeds: 3}\n",
            "replicates.n_boot: expected an integer in [1, 100000], found 0",
        ),
        (
            "replicates: {n_boot: 100000000, sampler_seeds: 3}\n",
            "replicates.n_boot: expected an integer in [1, 100000]",
        ),
        ("replicates: {n_boot: twenty, sampler_seeds: 3}\n", "replicates.n_boot: expected an integer"),
        ("replicates: {n_bot: 20, sampler_seeds: 3}\n", "did you mean replicates.n_boot?"),
    ],
)
def test_a_mapping_is_checked_key_by_key_with_the_top_level_rules(configs, text, expected):
    """``replicates: {n_boot: .nan}`` used to pass, and notebook 04 trained its ensembles before failing."""
    _append(configs, "04_audioset_teachers", text)
    [line] = _problems(configs, "04_audioset_teachers")
    assert "04_audioset_teachers/smoke.yaml: " in line and expected in line


def test_a_nan_inside_a_mapping_is_named_by_its_dotted_key(configs):
    _append(configs, "05_audioset_multilabel", "accounting: {n_account: 200, delta: .nan}\n")
    [line] = _problems(configs, "05_audioset_multilabel")
    assert "05_audioset_multilabel/smoke.yaml: accounting.delta: expected a number in (0, 1), found nan" in line


def test_a_contract_notebooks_overrides_are_checked_against_its_contract(configs):
    _append(configs, "07_pate2018_lab", "n_runs: 0\nsigma: 3.0\n")
    problems = _problems(configs, "07_pate2018_lab")
    assert problems == [
        f"{configs}/07_pate2018_lab/smoke.yaml: n_runs: expected an integer in [1, 20000], found 0",
        f"{configs}/07_pate2018_lab/smoke.yaml: sigma: not a field of Lab2Config; did you mean sigma2?",
    ]


def test_a_contract_notebooks_valid_overrides_pass_and_reach_papermill_as_one_mapping(configs):
    _append(configs, "07_pate2018_lab", "n_runs: 5\nvotes_dataset: svhn\n")
    checks.check_configs(["07_pate2018_lab"], "smoke", configs_dir=configs)
    params = checks.load_parameters("07_pate2018_lab", "smoke", configs)
    declared = checks.notebook_parameters(layout.current().notebooks / "07_pate2018_lab.ipynb")
    assert set(declared) == {"profile", "output_dir", "seed", "data", "overrides"}  # the cell: four names and overrides
    injected = checks.papermill_parameters(params, declared)
    assert injected == {"seed": 0, "data": "auto", "overrides": {"n_runs": 5, "votes_dataset": "svhn"}}


def test_a_contract_notebook_records_every_field_of_its_contract():
    recorded = checks.effective_parameters("07_pate2018_lab", "paper")
    assert recorded == {"seed": 0, "data": "auto", **Lab2Config().as_record()}


@pytest.mark.parametrize(
    "value, expected",
    [
        ("pate_study.experiments.pate2018_lab:Nope", "does not import (AttributeError)"),
        ("pate_study.nowhere:Lab2Config", "does not import (ModuleNotFoundError)"),
        ("os.path:join", "'os.path:join' is not one"),
        ("Lab2Config", "(module:ClassName), found 'Lab2Config'"),
        ("pate_study.experiments.pate2018_lab:OPEN_UNIT", "is not one"),
    ],
)
def test_a_manifest_contract_that_is_not_a_study_contract_is_named(configs, value, expected):
    path = configs / "07_pate2018_lab" / "notebook.yaml"
    path.write_text(path.read_text().replace("pate_study.experiments.pate2018_lab:Lab2Config", value))
    [line] = _problems(configs, "07_pate2018_lab")
    assert line.startswith(f"{configs}/07_pate2018_lab/notebook.yaml: contract: expected") and expected in line


@pytest.mark.parametrize(
    "text, expected",
    [
        ("data: reel\n", "data: expected one of 'auto', 'real', 'synthetic', found 'reel'"),
        ("seed: -1\n", "seed: expected an integer at least 0, found -1"),
        ("seed: ten\n", "seed: expected an integer at least 0, found 'ten'"),
    ],
)
def test_the_cells_own_seed_and_data_are_checked_by_their_declaration(configs, text, expected):
    _append(configs, "03_deeplog_synthetic", text)
    [line] = _problems(configs, "03_deeplog_synthetic")
    assert line == f"{configs}/03_deeplog_synthetic/smoke.yaml: {expected}"


def test_a_notebook_whose_manifest_names_no_contract_is_refused(configs):
    manifest = configs / "06_pate2018_votes" / "notebook.yaml"
    manifest.write_text("".join(line for line in manifest.read_text().splitlines(True) if "contract:" not in line))
    [line] = _problems(configs, "06_pate2018_votes")
    assert "configs/06_pate2018_votes/notebook.yaml names no contract; every notebook's settings are a study" in line
