"""A notebook's outputs are swapped in whole when it succeeds: a failure keeps the previous outputs, and a run of
another profile writes beside the paper outputs, which a later paper run keeps."""

import errno
import os

import pytest

from pate_study.core.owned import manifest_header
from pate_study.tooling.notebook_runner import cli, layout, staging


@pytest.fixture
def stand_in_runner(tmp_path, monkeypatch, point_layout, write_manifests):
    """The runner on a stand-in notebook ``01_x`` in a checkout at ``tmp_path`` (its manifest and an empty gpu
    profile file, no parameters checked, no index); returns its figures folder. A test sets
    ``staging.execute_notebook``."""
    point_layout(**vars(layout.Layout.under(tmp_path)))
    figures = tmp_path / "figures"
    (figures / "01_x").mkdir(parents=True)
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_x.ipynb").write_text("{}")
    write_manifests(tmp_path / "configs", ["01_x"])
    (tmp_path / "configs" / "01_x" / "gpu.yaml").write_text("seed: 0\n")
    monkeypatch.setattr(cli, "write_index", lambda *a: None)
    monkeypatch.setattr(cli, "check_configs", lambda *a: None)  # the notebook is a stand-in: nothing to check
    return figures


def test_a_failing_notebook_keeps_its_previous_outputs(stand_in_runner, tmp_path, monkeypatch):
    figures = stand_in_runner
    (figures / "01_x" / "good.csv").write_text("previous run\n")

    def half_run_then_fail(stem, profile, output_dir, **kw):
        target = kw["staging"]  # the runner's staging folder; output_dir names the final one
        target.mkdir(parents=True)
        (target / "good.csv").write_text("partial\n")
        executed = layout.current().build / f"{stem}.{profile}.ipynb"
        executed.parent.mkdir(parents=True, exist_ok=True)
        executed.write_text("{}")  # papermill's partial executed copy
        raise RuntimeError("kernel died")

    monkeypatch.setattr(staging, "execute_notebook", half_run_then_fail)
    assert cli.run_figures("smoke", ["01_x"], data_mode="skip") == 1
    assert (figures / "01_x" / "good.csv").read_text() == "previous run\n"
    assert sorted(p.name for p in figures.iterdir()) == ["01_x"]
    summary = (tmp_path / "build" / "summary.smoke.md").read_text()
    assert "| 01_x |" in summary and "FAILED: kernel died" in summary
    assert "partial executed copy: `build/01_x.smoke.ipynb`" in summary


def test_other_profiles_write_beside_the_paper_outputs_and_a_paper_run_keeps_them(stand_in_runner, monkeypatch):
    from pate_study.reporting import index as registry_index

    figures = stand_in_runner
    (figures / "01_x" / "fig.csv").write_text("committed paper run\n")

    def write_one_table(stem, profile, output_dir, **kw):
        target = kw["staging"]  # the runner's staging folder; output_dir names the final one
        target.mkdir(parents=True)
        (target / "fig.csv").write_text(f"{profile} run\n")
        executed = layout.current().build / f"{stem}.{profile}.ipynb"
        executed.parent.mkdir(parents=True, exist_ok=True)
        executed.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
        return executed

    monkeypatch.setattr(staging, "execute_notebook", write_one_table)
    assert cli.run_figures("gpu", ["01_x"], data_mode="skip") == 0
    assert (figures / "01_x" / "fig.csv").read_text() == "committed paper run\n"  # not replaced by the GPU run
    assert (figures / "01_x" / "gpu" / "fig.csv").read_text() == "gpu run\n"
    assert cli.run_figures("paper", ["01_x"], data_mode="skip") == 0
    assert (figures / "01_x" / "fig.csv").read_text() == "paper run\n"
    assert (figures / "01_x" / "gpu" / "fig.csv").read_text() == "gpu run\n"  # kept beside the new paper outputs
    assert registry_index.existing_outputs(figures) == {"01_x/fig.csv"}  # a profile subfolder holds no registry result
    assert sorted(p.name for p in figures.iterdir()) == ["01_x"]  # no staging folder left


# ----------------------------------------------------------------- the output folder is the runner's file by file
def writes(*names):
    """A stand-in notebook that writes ``names`` (each holding the profile's name) and its executed copy."""

    def run(stem, profile, output_dir, **kw):
        target = kw["staging"]  # the runner's staging folder; output_dir names the final one
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            (target / name).write_text(f"{profile} run\n")
        executed = layout.current().build / f"{stem}.{profile}.ipynb"
        executed.parent.mkdir(parents=True, exist_ok=True)
        executed.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
        return executed

    return run


def tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_a_run_keeps_every_file_it_did_not_write_and_drops_only_its_own_old_outputs(stand_in_runner, monkeypatch):
    """A paper run used to swap ``figures/<stem>/`` whole, deleting a file the user had put there."""
    figures = stand_in_runner
    out = figures / "01_x"
    (out / "fig.csv").write_text("committed before the manifest existed\n")
    (out / "notes.md").write_text("my notes\n")
    (out / "mine").mkdir()
    (out / "mine" / "draft.png").write_text("my figure\n")
    (out / "mine" / "empty").mkdir()
    (out / "link.md").symlink_to(out / "notes.md")
    monkeypatch.setattr(staging, "execute_notebook", writes("fig.csv", "table.csv"))
    assert cli.run_figures("paper", ["01_x"], data_mode="skip") == 0
    assert (out / "fig.csv").read_text() == "paper run\n"  # the notebook's own output name: replaced
    assert (out / "notes.md").read_text() == "my notes\n" and (out / "mine" / "draft.png").read_text() == "my figure\n"
    assert (out / "mine" / "empty").is_dir() and (out / "link.md").is_symlink()
    listed = (out / staging.OUTPUTS_MANIFEST).read_text().splitlines()[1:]
    assert listed == ["01_x.ipynb", "fig.csv", "table.csv"]
    monkeypatch.setattr(staging, "execute_notebook", writes("fig.csv"))  # table.csv no longer made
    (out / "later.md").write_text("added after the run\n")
    assert cli.run_figures("paper", ["01_x"], data_mode="skip") == 0
    assert not (out / "table.csv").exists()  # the runner's own stale output: dropped
    assert {"notes.md", "mine/draft.png", "later.md", "link.md"} <= set(tree(out))
    assert sorted(p.name for p in figures.iterdir()) == ["01_x"]  # nothing moved aside or staged left


def test_a_users_file_where_the_notebook_now_writes_stops_that_notebook_and_changes_nothing(
    stand_in_runner, monkeypatch, tmp_path
):
    figures = stand_in_runner
    out = figures / "01_x"
    monkeypatch.setattr(staging, "execute_notebook", writes("fig.csv"))
    assert cli.run_figures("paper", ["01_x"], data_mode="skip") == 0
    (out / "new.csv").write_text("the user's own table\n")
    before = tree(out)
    monkeypatch.setattr(staging, "execute_notebook", writes("fig.csv", "new.csv"))
    assert cli.run_figures("paper", ["01_x"], data_mode="skip") == 1
    assert tree(out) == before
    summary = (tmp_path / "build" / "summary.paper.md").read_text()
    assert "new.csv not written by the runner" in summary and "move yours away" in summary


@pytest.mark.parametrize("what", ["folder", "loop", "foreign"])
def test_an_output_manifest_that_is_not_the_runners_list_is_one_line(stand_in_runner, monkeypatch, tmp_path, what):
    figures = stand_in_runner
    manifest = figures / "01_x" / staging.OUTPUTS_MANIFEST
    if what == "folder":
        manifest.mkdir()
    elif what == "loop":
        manifest.symlink_to(manifest)
    else:
        manifest.write_text("fig.csv\n../../elsewhere\n")
    (figures / "01_x" / "fig.csv").write_text("previous\n")
    monkeypatch.setattr(staging, "execute_notebook", writes("fig.csv"))
    assert cli.run_figures("paper", ["01_x"], data_mode="skip") == 1
    assert (figures / "01_x" / "fig.csv").read_text() == "previous\n"
    line = next(x for x in (tmp_path / "build" / "summary.paper.md").read_text().splitlines() if "FAILED" in x)
    assert staging.OUTPUTS_MANIFEST in line and ("a folder" in line or "loops" in line or "first line" in line)


def test_a_swap_cut_short_is_put_back_and_a_finished_one_removed_file_by_file(tmp_path, point_layout):
    point_layout(**vars(layout.Layout.under(tmp_path)))
    figures = tmp_path / "figures"
    # cut short between the two renames: the outputs exist only in the moved-aside folder
    old = figures / ".old-01_x-4242"
    old.mkdir(parents=True)
    (old / "fig.csv").write_text("previous outputs\n")
    (old / "notes.md").write_text("the user's\n")
    staging.staging_marker(old).write_text("moved aside\n")
    staging.remove_stale_staging(figures)
    assert tree(figures / "01_x") == {"fig.csv": "previous outputs\n", "notes.md": "the user's\n"}
    # cut short after the swap: the old folder holds the runner's files and a file of the user's not carried over
    old2 = figures / ".old-01_x-4343"
    old2.mkdir()
    (old2 / "fig.csv").write_text("older outputs\n")
    (old2 / "notes.md").write_text("the user's\n")  # also in the new folder: the same content, carried over
    (old2 / "unique.md").write_text("only here\n")
    (old2 / staging.OUTPUTS_MANIFEST).write_text(manifest_header(staging.RUNNER) + "\nfig.csv\n")
    staging.staging_marker(old2).write_text("moved aside\n")
    staging.remove_stale_staging(figures)
    assert tree(old2) == {"unique.md": "only here\n"}  # the only copy of a user's file is never removed
    assert staging.staging_marker(old2).exists()


# ------------------------------------------------------------------------- a write that fails: path and cause
def test_a_full_disk_under_a_notebooks_outputs_is_one_line_naming_the_path(
    stand_in_runner, monkeypatch, tmp_path, file_size_limit
):
    figures = stand_in_runner
    (figures / "01_x" / "fig.csv").write_text("previous\n")

    def write_a_large_figure(stem, profile, output_dir, **kw):
        target = kw["staging"]  # the runner's staging folder; output_dir names the final one
        target.mkdir(parents=True, exist_ok=True)
        (target / "fig.png").write_bytes(b"x" * 50_000)

    monkeypatch.setattr(staging, "execute_notebook", write_a_large_figure)
    with file_size_limit(20_000):
        assert cli.run_figures("paper", ["01_x"], data_mode="skip") == 1
    assert (figures / "01_x" / "fig.csv").read_text() == "previous\n"
    line = next(x for x in (tmp_path / "build" / "summary.paper.md").read_text().splitlines() if "FAILED" in x)
    assert "a file in " in line and ".tmp-01_x-paper: cannot write (File too large" in line


@pytest.mark.slow
@pytest.mark.parametrize("errno_name", ["ENOSPC", "EACCES", "ENOTDIR"])
def test_a_write_that_fails_after_the_notebooks_is_one_line_not_a_traceback(
    stand_in_runner, monkeypatch, capsys, errno_name
):
    def fail(folder):
        code = getattr(errno, errno_name)
        raise OSError(code, os.strerror(code), str(folder / "INDEX.md"))

    monkeypatch.setattr(staging, "execute_notebook", writes("fig.csv"))
    monkeypatch.setattr(cli, "write_index", fail)
    assert cli.main(["figures", "--profile", "paper", "--notebooks", "01_x", "--data", "skip"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "INDEX.md: cannot write (" in err[0]
