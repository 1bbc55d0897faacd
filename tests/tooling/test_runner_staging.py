"""A notebook's outputs are swapped in whole when it succeeds: a failure keeps the previous outputs, and a run of
another profile writes beside the paper outputs, which a later paper run keeps."""

import pytest

from pate_study.tooling.figures import cli, layout, staging


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
        target = layout.current().root / output_dir
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
        target = layout.current().root / output_dir
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
