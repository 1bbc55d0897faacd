"""The runner (make figures): executed copies without volatile metadata, data preparation, progress, summary."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from pate_study.core.paths import REPO_ROOT
from pate_study.tooling.notebook_runner import datasets, execution, layout, manifest, schedule, summary


def _executed_notebook() -> dict:
    nb = nbformat.v4.new_notebook(
        metadata={
            "papermill": {"start_time": "2026-01-01T00:00:00", "duration": 3.2},
            "widgets": {"state": {"abc": {}}},
            "kernelspec": {"name": "python3", "display_name": "Python 3"},
        }
    )
    injected = nbformat.v4.new_code_cell(
        "seed = 0", id="a1b2c3d4", metadata={"tags": ["injected-parameters"], "papermill": {"duration": 0.1}}
    )
    work = nbformat.v4.new_code_cell("train()", id="work", metadata={"execution": {"iopub.execute_input": "2026-..."}})
    work.outputs = [
        nbformat.v4.new_output("display_data", data={execution.WIDGET_MIME: {"model_id": "f00"}, "text/plain": "bar"}),
        nbformat.v4.new_output("stream", name="stderr", text="teachers:  40%|####      | 2/5 [00:03<00:04, 1.5s/it]"),
        nbformat.v4.new_output("stream", name="stderr", text="UserWarning: a real warning\n"),
        nbformat.v4.new_output("stream", name="stdout", text="INFO pate_study.reporting.outputs: saved figure\n"),
    ]
    nb.cells = [injected, work]
    return nb


def test_strip_volatile_keeps_outputs_and_drops_what_changes_between_runs():
    stripped = execution.strip_volatile(_executed_notebook())
    assert list(stripped["metadata"]) == ["kernelspec"]
    injected, work = stripped["cells"]
    assert injected["id"] == "injected-parameters" and "papermill" not in injected["metadata"]
    assert injected["metadata"]["tags"] == ["injected-parameters"] and "execution" not in work["metadata"]
    assert [o.get("text") for o in work["outputs"]] == [
        "UserWarning: a real warning\n",
        "INFO pate_study.reporting.outputs: saved figure\n",
    ]
    assert _executed_notebook()["cells"][0]["id"] == "a1b2c3d4"  # the input is not modified


def test_write_stripped_is_byte_identical_for_two_runs(tmp_path):
    first, second = _executed_notebook(), _executed_notebook()
    second["metadata"]["papermill"]["duration"] = 99.0
    second["cells"][0]["id"] = "ffff0000"
    paths = []
    for i, nb in enumerate((first, second)):
        nbformat.write(nbformat.from_dict(nb), tmp_path / f"raw{i}.ipynb")
        paths.append(execution.write_stripped(tmp_path / f"raw{i}.ipynb", tmp_path / f"copy{i}.ipynb"))
    assert paths[0].read_bytes() == paths[1].read_bytes()
    nbformat.validate(nbformat.read(paths[0], as_version=4))


def test_offline_preparation_passes_offline_and_failures_fall_back(monkeypatch):
    calls = []

    def fake_run(command, **kwargs):
        calls.append(command)
        return subprocess.CompletedProcess(command, 1, stdout="[not available] csic2010\n", stderr="")

    monkeypatch.setattr(datasets.subprocess, "run", fake_run)
    results = datasets.prepare_datasets(["csic2010", "pate2018-votes"], "offline")
    assert all(c[-1] == "--offline" and c[1:4] == ["-m", "data_recipes", "prepare"] for c in calls)
    assert [(r.name, r.ok) for r in results] == [("csic2010", False), ("pate2018-votes", False)]
    calls.clear()
    datasets.prepare_datasets(["csic2010"], "network")
    assert "--offline" not in calls[0]
    assert datasets.prepare_datasets(["csic2010"], "skip") == [] and len(calls) == 1
    with pytest.raises(ValueError, match="data mode"):
        datasets.prepare_datasets([], "sometimes")


def test_every_notebook_has_a_manifest_whose_datasets_exist():
    stems = layout.list_notebooks()
    manifests = manifest.load_manifests(stems)  # ConfigError for a missing or bad one, an unknown dataset included
    assert set(manifests) == set(stems)
    assert manifest.datasets_for(["00_dp_primer", "06_pate2018_votes"], manifests) == ["pate2018-votes"]
    assert manifests["05_audioset_multilabel"].waits_for.keys() == {"04_audioset_teachers"}


def test_progress_estimate_from_the_last_run(tmp_path):
    (tmp_path / "timings.paper.json").write_text(json.dumps({"a": 30.0, "b": 600.0}))
    last = schedule.read_timings("paper", tmp_path)
    assert (
        schedule.progress_description("a", 1, 3, last, ["a", "b", "c"])
        == "[1/3] a (last run 30.0 s; about 10 min 30 s left in all+)"
    )
    assert schedule.progress_description("c", 3, 3, last, ["c"]) == "[3/3] c (no previous timing)"
    assert schedule.read_timings("smoke", tmp_path) == {}
    (tmp_path / "timings.smoke.json").write_text("{not json")
    assert schedule.read_timings("smoke", tmp_path) == {}
    assert schedule.format_duration(3725) == "1 h 2 min"


def test_outputs_are_classified_by_their_provenance_and_registry_status():
    classify = summary.classify_output
    assert classify("analytic (no data)", None, "paper", "paper") == "analytic (no data)"
    assert (
        classify("synthetic stand-in for MIT-BIH", "real data at paper scale", "paper", "paper") == "synthetic stand-in"
    )
    assert (
        classify("real: CSIC 2010 via mirror", "real data at paper scale", "paper", "paper")
        == "real data at paper scale"
    )
    assert (
        classify("real: CSIC 2010 via mirror", "real data at paper scale", "smoke", "smoke")
        == "real data at reduced scale"
    )
    assert (
        classify("real: MIT-BIH sample (synthetic noise added)", "synthetic only", "paper", "paper")
        == "real data at reduced scale"
    )
    assert classify("real: x", "real data at paper scale", "interactive", "paper") == "interactive or other profile"
    assert (
        classify("simulated: 1,000 Laplace draws, seed 0", "regenerated (analytic)", "paper", "paper")
        == "analytic (no data)"
    )


def test_summary_lists_statuses_commands_and_failures():
    ok = summary.NotebookRun(
        "01_ecg_student_privacy",
        75.0,
        outputs={"synthetic stand-in": ["make2021-fig8"], "GPU-only, not run here": ["x (GPU only)"]},
    )
    failed = summary.NotebookRun(
        "02_web_requests", 3.0, error="KeyError: 'url'", partial_copy="build/02_web_requests.paper.ipynb"
    )
    data = [datasets.DataPreparation("ecg-heartbeat", False, "[not available] ecg-heartbeat")]
    text = summary.summary_markdown([ok, failed], "paper", data, "offline")
    assert "ecg-heartbeat NOT prepared" in text and "mirror only" in text
    assert (
        "| 01_ecg_student_privacy | 1 min 15 s | ok | **synthetic stand-in**: make2021-fig8; "
        "**GPU-only, not run here**: x (GPU only) |" in text
    )
    assert "FAILED: KeyError: 'url'" in text and "`build/02_web_requests.paper.ipynb`" in text
    assert "figures/INDEX.md" in text and "figures/<stem>/<stem>.ipynb" in text


def test_summary_names_the_command_for_a_missing_dataset(monkeypatch, tmp_path):
    monkeypatch.setenv("PATE_STUDY_DATA", str(tmp_path))  # nothing prepared here
    run = summary.NotebookRun("01_ecg_student_privacy", 1.0, outputs={"synthetic stand-in": ["make2021-fig8"]})
    text = summary.summary_markdown([run], "smoke", [], "skip")
    assert "- 01_ecg_student_privacy (synthetic stand-in): `make data-ecg-heartbeat`" in text
    web = summary.NotebookRun("02_web_requests", 1.0, outputs={"real data at reduced scale": ["make2021-fig13"]})
    text = summary.summary_markdown([web], "smoke", [], "skip")
    assert "- 02_web_requests (ran without it): `make data-ecml-pkdd2007` (how to get it: " in text


ACCOUNTING_TABLE = """
import sys
import numpy as np
import pandas as pd
from pate_study.reporting.outputs import NotebookOutputs
from pate_study.privacy.moments import moments_epsilon

rng = np.random.default_rng(0)
votes = rng.multinomial(250, [0.5, 0.3, 0.2], size=3000).astype(float)
if sys.argv[2] == "misaligned":  # the same values at another memory offset and in Fortran order
    buffer = np.empty(votes.size + 1)
    shifted = buffer[1:].reshape(votes.shape)
    shifted[...] = votes
    votes = np.asfortranarray(shifted)
rows = [{"gamma": g, "eps": moments_epsilon(gamma=g, delta=1e-5, votes=votes[: n]).epsilon}
        for g in (0.01, 0.05) for n in (1000, 3000)]
out = NotebookOutputs("determinism", sys.argv[1], profile="smoke", seed=0, date="fixed")
out.save_table(pd.DataFrame(rows), "determinism-table", data="synthetic votes")
out.record("determinism-table", rows=rows)
"""


@pytest.mark.slow
def test_accounting_tables_identical_across_thread_counts_and_memory_layout(tmp_path):
    """Two same-seed runs once differed by one ulp in five ε cells. Tables must not depend on threads or
    memory layout (a different summation order); see also the one-ulp test in test_outputs.py."""
    runs = []
    for threads, memory in (("1", "aligned"), ("4", "misaligned")):
        env = {
            **__import__("os").environ,
            "OMP_NUM_THREADS": threads,
            "OPENBLAS_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads,
        }
        target = tmp_path / f"{threads}-{memory}"
        subprocess.run(
            [sys.executable, "-c", ACCOUNTING_TABLE, str(target), memory],
            check=True,
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
        )
        runs.append(target)
    for name in ("determinism-table.csv", "determinism-table.md", "scalars.json"):
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes(), name


@pytest.mark.notebook
def test_executed_primer_is_byte_identical_across_runs_and_thread_counts(tmp_path, monkeypatch):
    """The committed executed copy (figures/<stem>/<stem>.ipynb) and the scalars do not change between two runs
    with the same seed, one of them with another BLAS/OpenMP thread count."""
    copies = []
    for threads in ("1", "2"):
        monkeypatch.setenv("OMP_NUM_THREADS", threads)
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", threads)
        figures = tmp_path / "figures"  # the same path both times: it is a parameter, printed in the notebook
        executed = execution.execute_notebook(
            "00_dp_primer", "smoke", figures, build_dir=tmp_path / threads, html=False
        )
        scalars = json.loads((figures / "scalars.json").read_text())
        scalars.pop("_provenance")  # commit and date: a record of when, not a result
        copies.append((executed.read_bytes(), scalars))
    assert copies[0][0] == copies[1][0]
    assert copies[0][1] == copies[1][1]


def test_html_export_carries_each_figures_alt_text(tmp_path):
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    cell = nbformat.v4.new_code_cell("plot()", id="plot")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"image/png": base64.b64encode(buffer.getvalue()).decode()},
            metadata={"image/png": {"alt": 'Student TPR by noise level "ρ"'}},
        )
    ]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    from bs4 import BeautifulSoup

    html = execution.export_html(path).read_text()
    images = BeautifulSoup(html, "html.parser").select("img")
    assert [img["alt"] for img in images] == ['Student TPR by noise level "ρ"']
    assert "No description has been provided" not in html  # nbconvert's filler for images without alt


def test_runner_environment_marks_the_kernel_and_draws_inline(monkeypatch):
    import os

    from pate_study.reporting.session import RUNNER_ENV, STAGING_ENV

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv(RUNNER_ENV, raising=False)
    monkeypatch.setenv(STAGING_ENV, "left/by/another/run")
    with execution.runner_environment():
        assert os.environ[RUNNER_ENV] == "1" and "MPLBACKEND" not in os.environ
        assert STAGING_ENV not in os.environ  # no staging folder given: the notebook writes to its output_dir
    with execution.runner_environment(Path("figures/.tmp-01_x-paper")):
        assert os.environ[STAGING_ENV] == str(Path("figures/.tmp-01_x-paper").resolve())
    assert os.environ["MPLBACKEND"] == "Agg" and RUNNER_ENV not in os.environ
    assert os.environ[STAGING_ENV] == "left/by/another/run"


def test_the_summary_points_at_the_copy_this_profile_wrote():
    """A smoke run's summary names its own git-ignored copy, not the committed notebooks it did not write."""
    assert "figures/<stem>/smoke/<stem>.ipynb" in summary.results_folder_text("smoke")
    assert summary.results_folder_text("paper") == "`figures/<stem>/<stem>.ipynb` (committed)"


@pytest.mark.slow
def test_the_runner_is_small_modules_started_by_its_old_name():
    """``make figures`` calls ``python -m pate_study.tooling.runner``; the runner behind it is a package of modules
    of at most 300 lines, one concern each (docs/architecture.md lists them)."""
    package = REPO_ROOT / "pate_study" / "tooling" / "notebook_runner"
    lengths = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in package.glob("*.py")}
    assert len(lengths) >= 10 and max(lengths.values()) <= 300, lengths
    assert len((REPO_ROOT / "pate_study" / "tooling" / "runner.py").read_text(encoding="utf-8").splitlines()) <= 10
    shown = subprocess.run(
        [sys.executable, "-m", "pate_study.tooling.runner", "figures", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown.startswith("usage: python -m pate_study.tooling.runner figures") and "--jobs N" in shown
