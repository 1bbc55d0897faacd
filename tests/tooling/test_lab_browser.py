"""Every notebook in JupyterLab, as a student meets it: headless Chromium, Run All Cells.

The study notebooks run in the full venv with their smoke parameters, except Audio Set's 04 and 05: their smoke runs
take about 100 s each and already run twice elsewhere in the suite (papermill, whose test also fails on the package's
log lines in a stderr box, and 05 on Ray), while what this test adds (the front end, the interactive stamp, files
written only under figures/ and build/, widgets) does not depend on the notebook. The teaching notebooks (00, 07) run as
a lecturer's class next week does: in JupyterLab and a kernel of the light venv ``.venv-lab`` (no torch), with the
parameters a student gets (their own parameters cell), **offline** (in a network namespace of their own where the
machine allows it, as root; else with every download failing at once), no mirror and an empty data folder, and the
released votes copied into the students' folder (``labs/pate2018-votes/``) as a lecturer would: they must say they
run on the real votes, show no stderr box and no INFO line at all, and every untouched exercise must say "no answer
yet". Their Run All times are written to ``build/lab-run-all-seconds.json`` (the guide quotes them).

Fails on an error output, a cell that did not run, the package's log lines in a stderr box (JupyterLab draws them
pink), outputs not under the repository root's build/ or not stamped as an interactive run, and any file written
outside figures/, build/ and the prepared data. Needs Debian's ``chromium`` (``.ci/run`` installs it); skipped,
saying so, where it is absent. See :mod:`pate_study.tooling.labcheck`.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from pate_study.core.paths import REPO_ROOT
from pate_study.tooling.labcheck import TIMINGS_FILE, find_browser, run_in_lab
from pate_study.tooling.labcopies import TEACHING_NOTEBOOKS
from pate_study.tooling.notebook_runner.layout import list_notebooks

NO_CHROMIUM = (
    "no chromium on this machine: install Debian's package (apt-get install chromium), as .ci/run does, to run the "
    "notebooks in JupyterLab"
)


#: Study notebooks left to the papermill smoke test (see the module's docstring): the longest smoke runs of the suite.
RUN_ELSEWHERE = ("04_audioset_teachers", "05_audioset_multilabel")


@pytest.mark.lab
def test_study_notebooks_run_clean_in_jupyterlab_and_chromium():
    browser = find_browser()
    if browser is None:
        pytest.skip(NO_CHROMIUM)
    stems = [stem for stem in list_notebooks() if stem not in TEACHING_NOTEBOOKS + RUN_ELSEWHERE]
    assert stems, "no study notebook left for the JupyterLab test"
    checks, outside = run_in_lab(stems, browser=browser)
    problems = {check.stem: check.problems for check in checks if check.problems}
    assert not problems
    assert not outside, f"files written outside figures/ and build/: {outside}"
    # Time is reported, not asserted (performance belongs in benchmarks/)
    print("JupyterLab run times: " + ", ".join(f"{c.stem} {c.seconds:.0f} s" for c in checks))


def own_network(command: list[str]) -> list[str]:
    """``command`` in a network namespace of its own with only the loopback up (``unshare --net``, as root), where the
    machine allows it; else as it is (the run's downloads then fail through :data:`labcheck.OFFLINE_ENV`)."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not (unshare and ip and hasattr(os, "geteuid") and os.geteuid() == 0):
        return command
    if subprocess.run([unshare, "--net", ip, "link", "set", "lo", "up"], capture_output=True).returncode != 0:
        return command
    return [unshare, "--net", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh", *command]


@pytest.mark.lab
@pytest.mark.light
def test_the_labs_run_offline_in_the_light_venv_with_the_votes_copied_beside_them(light_lab):
    browser = find_browser()
    if browser is None:
        pytest.skip(NO_CHROMIUM)
    mirror = os.environ.get("PATE_STUDY_MIRROR", "")
    votes = os.path.join(mirror, "pate2018-votes") if mirror else ""
    screenshot = os.environ.get("PATE_STUDY_LAB_SCREENSHOT")  # e.g. docs/img/primer-first-plot-jupyterlab.png
    command = [sys.executable, "-m", "pate_study.tooling.labcheck", "--notebooks", *TEACHING_NOTEBOOKS]
    command += ["--python", str(light_lab), "--offline"]
    # with the released votes (the mirror .ci/run names) the labs must load them from the copy; without, they run on
    # the stand-in and say so
    command += ["--votes", votes] if votes and os.path.isdir(votes) else []
    command += ["--screenshot", str(REPO_ROOT / screenshot)] if screenshot else []
    run = subprocess.run(own_network(command), cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    timings = json.loads(TIMINGS_FILE.read_text(encoding="utf-8"))
    for stem in TEACHING_NOTEBOOKS:
        assert timings[stem]["clean"] and timings[stem]["python"] == ".venv-lab" and timings[stem]["offline"]
    times = ", ".join(f"{stem} {timings[stem]['seconds']:.0f} s" for stem in TEACHING_NOTEBOOKS)
    print(f"light venv, offline, Run All: {times}")


# --- the checks themselves, without a browser -----------------------------------------------------------------
def _saved(tmp_path, outputs, execution_count=1):
    import nbformat

    cell = nbformat.v4.new_code_cell("x = 1", id="c")
    cell.execution_count, cell.outputs = execution_count, outputs
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    return path


def _stamped(tmp_path, profile):
    import json

    folder = tmp_path / "figs"
    folder.mkdir(exist_ok=True)
    (folder / "scalars.json").write_text(json.dumps({"_provenance": {"profile": profile}}))
    return folder


def test_check_flags_package_logs_on_stderr_errors_unrun_cells_and_wrong_stamp(tmp_path, monkeypatch):
    import nbformat

    from pate_study.tooling import labcheck

    monkeypatch.setattr(labcheck, "REPO_ROOT", tmp_path)
    stream = nbformat.v4.new_output
    clean = labcheck.check_saved_notebook(
        _saved(
            tmp_path,
            [
                stream("stream", name="stdout", text="INFO pate_study.reporting.outputs: saved figure\n"),
                stream("stream", name="stderr", text="UserWarning: something else\n"),
            ],
        ),
        "nb",
        1.0,
        _stamped(tmp_path, "interactive"),
    )
    assert clean.problems == [] and clean.other_stderr == ["cell 0: UserWarning: something else"]
    pink = labcheck.check_saved_notebook(
        _saved(
            tmp_path,
            [
                stream("stream", name="stderr", text="INFO:pate_study.privacy.audit:trial 3 of 10\n"),
                stream("error", ename="KeyError", evalue="'x'", traceback=[]),
            ],
            execution_count=None,
        ),
        "nb",
        1.0,
        _stamped(tmp_path, "paper"),
    )
    assert len(pink.problems) == 4, pink.problems  # not run, pink log, error, stamped as the paper profile
    assert any("stderr box" in p for p in pink.problems) and any("'paper'" in p for p in pink.problems)
    missing = labcheck.check_saved_notebook(_saved(tmp_path, []), "nb", 1.0, tmp_path / "nowhere")
    assert "outputs not written under the repository root" in missing.problems[0]


def test_teaching_notebooks_are_copied_with_the_student_parameters_and_checked_strictly(tmp_path, monkeypatch):
    import nbformat

    from pate_study.core.paths import NOTEBOOKS_DIR
    from pate_study.tooling import labcheck

    monkeypatch.setattr(labcheck, "REPO_ROOT", tmp_path)
    for stem in labcheck.TEACHING_NOTEBOOKS:
        copy = labcheck.lab_copy(stem, tmp_path / "lab", student=True)
        assert (
            nbformat.read(copy, as_version=4).cells
            == nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4).cells
        )
    warned = _saved(
        tmp_path, [nbformat.v4.new_output("stream", name="stderr", text="ThresholdRangeWarning: /abs/path\n")]
    )
    relaxed = labcheck.check_saved_notebook(warned, "nb", 1.0, _stamped(tmp_path, "interactive"))
    strict = labcheck.check_saved_notebook(warned, "nb", 1.0, _stamped(tmp_path, "interactive"), strict=True)
    assert relaxed.problems == [] and "stderr box a student sees" in strict.problems[0]


def test_a_lab_is_refused_for_an_info_line_an_untouched_exercise_without_no_answer_yet_and_stand_in_votes(
    tmp_path, monkeypatch
):
    import nbformat

    from pate_study.tooling import labcheck

    monkeypatch.setattr(labcheck, "REPO_ROOT", tmp_path)
    new = nbformat.v4

    def saved(cells):
        nb = new.new_notebook(cells=[])
        for i, (source, outputs) in enumerate(cells):
            cell = new.new_code_cell(source, id=f"c{i}")
            cell.execution_count, cell.outputs = i + 1, outputs
            nb.cells.append(cell)
        path = tmp_path / "lab.ipynb"
        nbformat.write(nb, path)
        return path

    def shown(markdown):
        return new.new_output("display_data", data={"text/markdown": markdown, "text/plain": "<Feedback>"})

    stamped = _stamped(tmp_path, "interactive")
    good = saved(
        [
            ("votes = sections.load_votes(...)", [shown("**Votes: real** (PATE 2018 votes, …)")]),
            ("exercises.check_sensitivity(None)", [shown("❌ **not yet** (exercise 1): no answer yet: replace None")]),
        ]
    )
    assert labcheck.check_saved_notebook(good, "lab", 1.0, stamped, strict=True, real_votes=True).problems == []
    bad = saved(
        [
            ("votes = sections.load_votes(...)", [shown("⚠️ **Votes: SYNTHETIC stand-in**, because …")]),
            ("sections.x(out)", [new.new_output("stream", name="stdout", text="INFO pate_study.reporting: saved\n")]),
            ("exercises.check_broken_laplace(buggy, None, None)", [shown("aggregator must return one label …")]),
        ]
    )
    problems = labcheck.check_saved_notebook(bad, "lab", 1.0, stamped, strict=True, real_votes=True).problems
    assert len(problems) == 3, problems
    assert any("INFO line" in p for p in problems) and any("no answer yet" in p for p in problems)
    assert any("did not load the real votes" in p and "SYNTHETIC stand-in" in p for p in problems)


def test_run_all_times_are_recorded_per_notebook(tmp_path):
    from pate_study.tooling import labcheck

    path = tmp_path / "times.json"
    check = labcheck.NotebookCheck("00_dp_primer", 41.26)
    labcheck.record_timings([check], python="/x/.venv-lab/bin/python", offline=True, path=path)
    record = labcheck.record_timings(
        [labcheck.NotebookCheck("07_pate2018_lab", 20.0, ["x"])], python="p", offline=False, path=path
    )
    assert record["00_dp_primer"]["seconds"] == 41.3 and record["00_dp_primer"]["python"] == ".venv-lab"
    assert (
        record["00_dp_primer"]["offline"]
        and not record["07_pate2018_lab"]["clean"]
        and record["07_pate2018_lab"]["cores"]
    )


def test_the_kernels_cpu_time_is_read_from_proc(tmp_path):
    """Two processes under the server (a kernel and its grandchild kernel), one elsewhere: only the server's kernels
    count, in seconds of CPU (user + system ticks)."""
    import os

    from pate_study.tooling import labcheck

    tick = os.sysconf("SC_CLK_TCK")

    def process(pid, parent, command, user, system):
        folder = tmp_path / str(pid)
        folder.mkdir()
        fields = ["S", str(parent)] + ["0"] * 9 + [str(user), str(system)] + ["0"] * 10
        (folder / "stat").write_text(f"{pid} (python (x)) " + " ".join(fields))
        (folder / "cmdline").write_bytes(command)

    process(10, 1, b"python\0-m\0jupyterlab", 5 * tick, 0)
    process(11, 10, b"python\0-m\0ipykernel_launcher", 40 * tick, 2 * tick)
    process(12, 11, b"python\0-m\0ipykernel_launcher", tick, 0)
    process(13, 1, b"python\0-m\0ipykernel_launcher", 99 * tick, 0)
    assert labcheck.kernel_cpu_seconds(10, proc=tmp_path) == 43.0
    assert labcheck.kernel_cpu_seconds(77, proc=tmp_path) is None


def test_snapshot_sees_new_files_outside_allowed_folders_only(tmp_path):
    from pate_study.tooling.labcheck import changed_files, snapshot

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "figures").mkdir()
    before = snapshot(tmp_path)
    (tmp_path / "notebooks" / "figures").mkdir()
    (tmp_path / "notebooks" / "figures" / "fig.png").write_bytes(b"x")  # the kernel's cwd was once used
    (tmp_path / "figures" / "fig.png").write_bytes(b"x")
    assert changed_files(before, snapshot(tmp_path)) == ["notebooks/figures/fig.png"]


def test_package_logs_go_to_the_current_stdout_once(capsys):
    import logging

    from pate_study.reporting.session import log_to_stdout

    logger = logging.getLogger("pate_study.test_session")
    parent = logging.getLogger("pate_study")
    saved = (parent.handlers[:], parent.propagate, parent.level)
    try:
        handler = log_to_stdout()
        assert log_to_stdout() is handler and parent.handlers.count(handler) == 1 and not parent.propagate
        parent.setLevel(logging.INFO)
        logger.info("saved figure x")
        captured = capsys.readouterr()
        assert captured.out == "INFO pate_study.test_session: saved figure x\n" and captured.err == ""
    finally:
        parent.handlers[:], parent.propagate = saved[0], saved[1]
        parent.setLevel(saved[2])


def test_inline_figures_get_alt_text_metadata():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from IPython.core.formatters import DisplayFormatter
    from IPython.core.pylabtools import select_figure_formats

    from pate_study.reporting.session import ALT_ATTRIBUTE, install_alt_text

    class Shell:  # the two attributes select_figure_formats and install_alt_text use
        display_formatter = DisplayFormatter()
        config = {}

    shell = Shell()
    select_figure_formats(shell, {"png"})
    assert install_alt_text(shell) and install_alt_text(shell)  # idempotent
    fig, ax = plt.subplots()
    ax.set(title="Student accuracy", xlabel="ρ", ylabel="accuracy")
    data, metadata = shell.display_formatter.format(fig)
    assert "image/png" in data and metadata["image/png"]["alt"] == "Figure: Student accuracy, accuracy against ρ"
    setattr(fig, ALT_ATTRIBUTE, "make2021-fig10: student accuracy by noise level")
    assert shell.display_formatter.format(fig)[1]["image/png"]["alt"].startswith("make2021-fig10")
    plt.close(fig)


def test_project_loggers_include_the_data_recipes_and_the_check_sees_them():
    """A first run prepares data inside the notebook: the recipes' INFO lines must not become stderr boxes."""
    from pate_study.reporting.session import PROJECT_LOGGERS
    from pate_study.tooling.labcheck import PACKAGE_LOG

    assert set(PROJECT_LOGGERS) == {"pate_study", "data_recipes"}
    assert PACKAGE_LOG.search("INFO:data_recipes.framework:prepared pate2018-votes -> data/pate2018-votes")
    assert PACKAGE_LOG.search("12:00:00 pate_study.reporting.outputs: saved figure x")
    assert not PACKAGE_LOG.search("mnist seeds:  60%|██████    | 12/20")


def test_an_unknown_notebook_is_one_line_not_a_traceback(capsys):
    from pate_study.tooling import labcheck

    assert labcheck.main(["--notebooks", "00_dp_primer", "99_nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--notebooks 99_nope: no such notebook" in err and "00_dp_primer" in err


# --- students on their own copies (make lab-light, make lab) ---------------------------------------------------
def test_student_copies_are_made_once_and_the_students_work_is_kept(tmp_path):
    from pate_study.core.paths import NOTEBOOKS_DIR
    from pate_study.tooling import labcopies

    made = labcopies.student_copies(labcopies.TEACHING_NOTEBOOKS, tmp_path / "labs")
    assert [p.name for p in made] == ["00_dp_primer.ipynb", "07_pate2018_lab.ipynb"]
    assert made[0].read_bytes() == (NOTEBOOKS_DIR / "00_dp_primer.ipynb").read_bytes()
    made[0].write_text("the student's answers")
    again, new = labcopies.student_copy("00_dp_primer", tmp_path / "labs")
    assert not new and again.read_text() == "the student's answers"
    assert not list((tmp_path / "labs").glob(".*.part"))
    with pytest.raises(ValueError, match="no notebook '99_nope'"):
        labcopies.student_copy("99_nope", tmp_path / "labs")


def test_make_lab_targets_open_copies_under_an_ignored_folder_never_the_committed_notebooks():
    import re
    import subprocess

    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("lab", "lab-light"):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
        assert "pate_study.tooling.labcopies" in recipe, target
        opened = re.search(r"jupyter lab .*?(\S+)$", recipe.splitlines()[-1]).group(1)
        assert opened.startswith("labs/") and "notebooks/" not in recipe, (target, recipe)
    ignored = subprocess.run(["git", "check-ignore", "-q", "labs/00_dp_primer.ipynb"], cwd=REPO_ROOT)
    assert ignored.returncode == 0, "labs/ must be git-ignored: a student's copy never shows in git status"


def test_the_browser_test_runs_the_labs_on_student_copies(tmp_path, monkeypatch):
    from pate_study.tooling import labcheck

    monkeypatch.setattr(labcheck, "REPO_ROOT", tmp_path)
    copy = labcheck.lab_copy("07_pate2018_lab", tmp_path / "lab", student=True)
    assert copy == tmp_path / "lab" / "labs" / "07_pate2018_lab.ipynb"
