"""Provenance-stamped outputs: figures, tables, scalars, atomic writes."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after matplotlib.use("Agg")
import pandas as pd  # noqa: E402 - after matplotlib.use("Agg")
import pytest  # noqa: E402 - after matplotlib.use("Agg")

from pate_study.core.io import atomic_write, atomic_write_text, sha256_file  # noqa: E402 - after matplotlib.use("Agg")
from pate_study.reporting.outputs import (
    MarkdownText,
    NotebookOutputs,
    markdown_list,
    markdown_table,
    output_name,
    read_provenance,  # noqa: E402 - after matplotlib.use("Agg")
    read_scalars,
    show_findings,
)


@pytest.fixture
def outputs(tmp_path):
    return NotebookOutputs("99_test", tmp_path / "figs", profile="smoke", seed=7, parameters={"gamma": 0.05})


def test_figure_has_png_pdf_and_sidecar_with_provenance(outputs):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    files = outputs.save_figure(fig, ["make2021-fig5", "visca2021-fig4.8"], data="analytic (no data)")
    plt.close(fig)
    assert [f.name for f in files] == ["make2021-fig5.png", "make2021-fig5.pdf"]
    assert all(f.stat().st_size > 1000 for f in files)
    prov = read_provenance(files[0])
    assert prov["items"] == ["make2021-fig5", "visca2021-fig4.8"]
    assert prov["data"] == "analytic (no data)" and prov["profile"] == "smoke" and prov["seed"] == 7
    assert prov["parameters"] == {"gamma": 0.05} and prov["commit"] and prov["date"]


def test_table_csv_and_markdown_with_stamp_and_dotted_id(outputs):
    frame = pd.DataFrame({"rho": ["0.1", "no noise"], "eps": [20.36, 5.96]})
    csv, md = outputs.save_table(frame, "sosa2021-table4.2", data="synthetic stand-in")
    assert pd.read_csv(csv).shape == (2, 2)
    text = md.read_text()
    assert "| rho | eps |" in text and "synthetic stand-in" in text and "seed: 7" in text
    assert read_provenance(csv)["items"] == ["sosa2021-table4.2"]
    assert output_name(csv) == "sosa2021-table4.2"


def test_same_inputs_give_identical_table_bytes(tmp_path):
    frame = pd.DataFrame({"a": [1.0, 2.5]})
    paths = [
        NotebookOutputs("nb", tmp_path / str(i), profile="smoke", seed=0).save_table(frame, "x-t1", data="d")
        for i in range(2)
    ]
    assert paths[0][0].read_bytes() == paths[1][0].read_bytes()
    assert paths[0][1].read_bytes() == paths[1][1].read_bytes()


def test_record_merges_and_serialises_numpy(outputs):
    import numpy as np

    outputs.record("make2021-fig5", epsilon_star=np.float64(20.17), orders=np.arange(3))
    outputs.record("make2021-fig5", lambda_star=1.5)
    outputs.record("other", value=float("inf"))
    scalars = read_scalars(outputs.output_dir)
    assert scalars["make2021-fig5"] == {"epsilon_star": 20.17, "orders": [0, 1, 2], "lambda_star": 1.5}
    assert scalars["other"]["value"] == "inf"
    assert scalars["_provenance"]["seed"] == 7
    json.loads((outputs.output_dir / "scalars.json").read_text())  # strict JSON


def test_bad_arguments_are_named(outputs):
    with pytest.raises(ValueError, match="item_ids"):
        outputs.save_table(pd.DataFrame({"a": [1]}), [], data="d")
    with pytest.raises(ValueError, match="data must describe"):
        outputs.save_table(pd.DataFrame({"a": [1]}), "x-t1", data="")
    with pytest.raises(ValueError, match="at least one value"):
        outputs.record("x")


def test_atomic_write_keeps_old_file_when_writer_fails(tmp_path):
    target = tmp_path / "table.csv"
    atomic_write_text(target, "old,content\n")

    def broken_writer(tmp):
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, broken_writer)
    with pytest.raises(OSError, match="empty"):
        atomic_write(target, lambda tmp: tmp.write_text(""))
    assert target.read_text() == "old,content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_sha256_file_matches_hashlib(tmp_path):
    import hashlib

    data = bytes(range(256)) * 5000  # more than one 1 MiB block
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()


def test_markdown_table_escapes_pipes_and_formats_floats():
    text = markdown_table(pd.DataFrame({"a|b": ["x|y"], "v": [1 / 3]}))
    assert "x\\|y" in text and "0.333333" in text


def test_commit_stamp_ignores_changed_figures_but_not_changed_code(tmp_path):
    import subprocess

    from pate_study.reporting.outputs import current_commit

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "a.csv").write_text("1\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    assert not current_commit(tmp_path).endswith("+dirty")
    (tmp_path / "figures" / "a.csv").write_text("2\n")
    assert not current_commit(tmp_path).endswith("+dirty")
    (tmp_path / "code.py").write_text("x = 2\n")
    assert current_commit(tmp_path).endswith("+dirty")


def test_atomic_write_gives_the_usual_permissions(tmp_path):
    import os
    import stat

    mask = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "a.txt", "x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_notebook_parameters_keep_plain_values_only():
    from pate_study.reporting.outputs import notebook_parameters

    namespace = {
        "gamma": 0.05,
        "rhos": [0.1, 1.0],
        "data": "auto",
        "flag": True,
        "nothing": None,
        "_private": 1,
        "In": ["cell"],
        "np": __import__("numpy"),
        "fn": len,
    }
    assert notebook_parameters(namespace) == {
        "gamma": 0.05,
        "rhos": [0.1, 1.0],
        "data": "auto",
        "flag": True,
        "nothing": None,
    }


def test_replace_folder_swaps_whole_folders(tmp_path):
    from pate_study.core.io import replace_folder

    final, new = tmp_path / "nb", tmp_path / ".tmp-nb"
    final.mkdir()
    (final / "stale.csv").write_text("old run\n")
    new.mkdir()
    (new / "fresh.csv").write_text("new run\n")
    replace_folder(new, final)
    assert [p.name for p in final.iterdir()] == ["fresh.csv"] and not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb"]


# --- identical tables under floating-point noise --------------------------------------------------------
ONE_ULP_APART = (3.965470209462577, 3.9654702094625773)  # the two runs' values of one ε cell of Sosa Table 4.2


def test_one_ulp_apart_values_give_identical_csv_markdown_and_scalars(tmp_path):
    import math

    assert ONE_ULP_APART[1] == math.nextafter(ONE_ULP_APART[0], math.inf)  # really one unit in the last place
    paths = []
    for i, value in enumerate(ONE_ULP_APART):
        # one stamp date for both runs: under load the two could otherwise be stamped in different seconds
        out = NotebookOutputs("nb", tmp_path / str(i), profile="smoke", seed=0, date="2026-01-01T00:00:00Z")
        frame = pd.DataFrame(
            {"level": ["0.1", "no noise"], "eps": [value, float("nan")], "mixed": [value, "no noise"]}
        )  # floats in an object column are fixed too
        paths.append(out.save_table(frame, "x-t1", data="d"))
        out.record("x-t1", epsilon=value, rows=[{"eps": value}])
    for a, b in zip(*paths):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert (tmp_path / "0" / "scalars.json").read_bytes() == (tmp_path / "1" / "scalars.json").read_bytes()
    assert "3.96547020946," in paths[0][0].read_text()  # 12 significant digits, NaN left empty
    assert read_scalars(tmp_path / "0")["x-t1"]["epsilon"] == 3.96547020946


def test_csv_keeps_twelve_significant_digits_and_plain_values():
    from pate_study.reporting.outputs import csv_cell, fixed_precision_frame

    assert csv_cell(5.0) == "5.0" and csv_cell(1e-5) == "1e-05" and csv_cell(float("nan")) == ""
    assert csv_cell(123456.7890123456) == "123456.789012" and csv_cell(7) == 7 and csv_cell("x") == "x"
    assert csv_cell(float("inf")) == "inf" and csv_cell(True) is True
    frame = pd.DataFrame({"a": [0.1 + 0.2]})
    assert fixed_precision_frame(frame)["a"].tolist() == ["0.3"]


# --- where outputs go and how they are stamped -------------------------------------------------
def test_relative_output_dir_is_resolved_from_the_repository_root(tmp_path, monkeypatch):
    import shutil

    from pate_study.core.paths import REPO_ROOT, resolve_from_root

    monkeypatch.chdir(tmp_path)  # a kernel started in notebooks/ has another working directory
    relative = "build/test-outputs-resolve"
    try:
        out = NotebookOutputs("nb", relative, profile="smoke", seed=0)
        assert out.output_dir == REPO_ROOT / relative and out.output_dir.is_dir()
        assert not (tmp_path / "build").exists()
    finally:
        shutil.rmtree(REPO_ROOT / relative, ignore_errors=True)
    assert resolve_from_root(tmp_path) == tmp_path


def test_kernel_without_the_runner_is_stamped_interactive(tmp_path, monkeypatch):
    from pate_study.reporting import session

    monkeypatch.setattr(session, "in_kernel", lambda: True)
    monkeypatch.delenv(session.RUNNER_ENV, raising=False)
    out = NotebookOutputs("nb", tmp_path, profile="paper", seed=0, parameters={"profile": "paper"})
    assert out.profile == "interactive" and out.parameters["requested_profile"] == "paper"
    assert "profile: interactive" in out.provenance("d").stamp()
    monkeypatch.setenv(session.RUNNER_ENV, "1")  # the runner's kernel keeps the profile parameter it was given
    assert NotebookOutputs("nb", tmp_path, profile="paper", seed=0).profile == "paper"


def test_the_runner_stages_the_outputs_and_the_provenance_names_the_final_folder(tmp_path, monkeypatch):
    """Under make figures the files go to the runner's staging folder; the notebook's parameter, which its provenance
    records, stays the folder they are swapped into. Without the runner (or with the flag but no staging folder)
    a notebook writes to its output_dir itself."""
    from pate_study.reporting import session
    from pate_study.reporting.outputs import writing_folder

    final, staged = tmp_path / "figures" / "nb", tmp_path / "figures" / ".tmp-nb-paper"
    monkeypatch.setattr(session, "in_kernel", lambda: True)
    monkeypatch.setenv(session.RUNNER_ENV, "1")
    monkeypatch.setenv(session.STAGING_ENV, str(staged))
    out = NotebookOutputs("nb", final, profile="paper", seed=0, parameters={"output_dir": str(final)})
    out.record("x", value=1.0)
    assert out.output_dir == staged and read_scalars(staged)["x"] == {"value": 1.0} and not final.exists()
    assert out.parameters["output_dir"] == str(final) and out.profile == "paper"
    monkeypatch.delenv(session.STAGING_ENV)
    assert writing_folder(final) == final
    monkeypatch.delenv(session.RUNNER_ENV)
    monkeypatch.setenv(session.STAGING_ENV, str(staged))  # left behind without the runner's flag: not followed
    monkeypatch.setattr(session, "in_kernel", lambda: False)
    assert writing_folder(final) == final


def test_figure_description_alt_text_and_legible_stamp(outputs):
    from PIL import Image

    from pate_study.reporting.outputs import STAMP_FONTSIZE, figure_description
    from pate_study.reporting.session import ALT_ATTRIBUTE, figure_alt_text

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    png, _ = outputs.save_figure(fig, "make2021-fig5", data="analytic (no data)")
    caption_alt = figure_description("make2021-fig5")
    assert caption_alt.startswith("make2021-fig5: ") and len(caption_alt) > 30  # the registry caption
    assert getattr(fig, ALT_ATTRIBUTE) == caption_alt == figure_alt_text(fig)
    assert Image.open(png).info["Description"] == caption_alt
    assert any(t.get_fontsize() == STAMP_FONTSIZE >= 8 for t in fig.texts)
    plt.close(fig)
    fig, ax = plt.subplots()
    outputs.save_figure(fig, "not-in-registry", data="d", description="Two   lines\n crossing")
    assert getattr(fig, ALT_ATTRIBUTE) == "Two lines crossing"
    plt.close(fig)
    fig, ax = plt.subplots()
    ax.set(title="Laplace densities", xlabel="x", ylabel="density")
    assert figure_alt_text(fig) == "Figure: Laplace densities, density against x"  # never saved: from its labels
    plt.close(fig)


def test_not_run_items_are_recorded_with_their_reason(outputs):
    outputs.not_run(["audioset-fig1", "audioset-fig2"], "GPU only: 2,000 teachers")
    assert read_scalars(outputs.output_dir)["_not_run"] == {
        "audioset-fig1": "GPU only: 2,000 teachers",
        "audioset-fig2": "GPU only: 2,000 teachers",
    }
    with pytest.raises(ValueError, match="reason"):
        outputs.not_run("x", "")


def test_show_findings_returns_markdown_bullets_outside_a_notebook():
    assert show_findings(["first finding", "* second"]) == "* first finding\n* second"
    assert show_findings("**bold** text") == "**bold** text"


def test_interactive_runs_write_under_build_never_figures(tmp_path, monkeypatch):
    """A student's Run All must not touch the committed figures/: folders under figures/ move to build/interactive/;
    the runner's kernel (PATE_STUDY_RUNNER set) keeps figures/."""
    import shutil

    from pate_study.core.paths import REPO_ROOT
    from pate_study.reporting import session
    from pate_study.reporting.outputs import interactive_output_dir

    figures, build = tmp_path / "figures", tmp_path / "build"
    assert interactive_output_dir(figures / "00_dp_primer", figures, build) == build / "interactive" / "00_dp_primer"
    assert interactive_output_dir(tmp_path / "elsewhere", figures, build) == tmp_path / "elsewhere"
    monkeypatch.setattr(session, "in_kernel", lambda: True)
    monkeypatch.delenv(session.RUNNER_ENV, raising=False)
    out = NotebookOutputs("nb", "figures/nb-interactive-test", profile="paper", seed=0)
    try:
        assert out.output_dir == REPO_ROOT / "build" / "interactive" / "nb-interactive-test"
        assert not (REPO_ROOT / "figures" / "nb-interactive-test").exists()
    finally:
        shutil.rmtree(out.output_dir, ignore_errors=True)


def test_findings_are_markdown_text_one_bullet_a_line():
    """show_findings and markdown_list build the same Markdown (one place for it); a cell ending with the text
    renders it through ``_repr_markdown_``."""
    lines = ["first finding", "* already a bullet", "## a heading"]
    assert show_findings(lines) == markdown_list(lines) == "* first finding\n* already a bullet\n## a heading"
    assert isinstance(show_findings("plain text"), MarkdownText)
    assert markdown_list(["a"])._repr_markdown_() == "* a"
