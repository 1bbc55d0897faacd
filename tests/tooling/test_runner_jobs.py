"""make figures --jobs N: the schedule (dependencies, longest first, --jobs 1 = the old order) and notebooks run
side by side in worker processes (each in its own output folder; a failure stops no other notebook)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pate_study.core.paths import REPO_ROOT
from pate_study.tooling.notebook_runner import cli, jobs, layout, manifest, schedule, staging

#: A fixed set of notebook times (the sequential paper run of 2026-11-24 before notebook 04's ablations grew), so the
#: expected schedules below do not move when the manifests' reference_seconds are re-measured
PAPER = {
    "00_dp_primer": 40.5,
    "01_ecg_student_privacy": 168.0,
    "02_web_requests": 939.0,
    "03_deeplog_synthetic": 114.0,
    "04_audioset_teachers": 269.0,
    "05_audioset_multilabel": 316.0,
    "06_pate2018_votes": 42.7,
    "07_pate2018_lab": 4.0,
}
NOTEBOOKS = sorted(PAPER)
MANIFESTS = manifest.load_manifests(layout.list_notebooks())
AFTER, REFERENCE = manifest.waits_table(MANIFESTS), manifest.reference_table(MANIFESTS, "paper")
assert set(NOTEBOOKS) == set(REFERENCE)


def _starts(slots):
    return [slot.stem for slot in slots]


# --- the schedule -----------------------------------------------------------------------------------------------
def test_every_waits_for_refers_to_real_notebooks_and_gives_a_reason():
    known = set(layout.list_notebooks())
    for stem, waits in AFTER.items():
        assert stem in known
        assert all(other in known and len(reason) > 20 for other, reason in waits.items())
    assert set(REFERENCE) == known  # a reference time for every notebook: a fresh clone schedules them all


def test_jobs_1_is_the_old_order_one_after_another():
    slots = schedule.plan_schedule(NOTEBOOKS, PAPER, 1, AFTER)
    assert _starts(slots) == NOTEBOOKS
    assert all(a.end == b.start for a, b in zip(slots, slots[1:]))
    assert slots[-1].end == pytest.approx(sum(PAPER.values()))


def test_jobs_1_moves_a_notebook_after_those_it_waits_for():
    given = ["05_audioset_multilabel", "00_dp_primer", "04_audioset_teachers"]
    assert schedule.sequential_order(given, AFTER) == ["00_dp_primer", "04_audioset_teachers", "05_audioset_multilabel"]
    alone = ["05_audioset_multilabel", "00_dp_primer"]  # 04 not in the run: nothing to wait for
    assert schedule.sequential_order(alone, AFTER) == alone


def test_two_jobs_start_the_longest_chain_first_and_05_after_04():
    slots = schedule.plan_schedule(NOTEBOOKS, PAPER, 2, AFTER)
    by_stem = {slot.stem: slot for slot in slots}
    assert _starts(slots) == [
        "02_web_requests",
        "04_audioset_teachers",
        "05_audioset_multilabel",
        "01_ecg_student_privacy",
        "03_deeplog_synthetic",
        "06_pate2018_votes",
        "00_dp_primer",
        "07_pate2018_lab",
    ]
    assert by_stem["05_audioset_multilabel"].start >= by_stem["04_audioset_teachers"].end
    makespan = max(slot.end for slot in slots)
    assert makespan == pytest.approx(sum(PAPER.values()) - PAPER["02_web_requests"] - PAPER["07_pate2018_lab"])
    assert makespan < 0.51 * sum(PAPER.values())


def test_a_long_notebook_that_waits_is_not_started_early_and_its_dependency_goes_first():
    seconds = {**PAPER, "05_audioset_multilabel": 2000.0, "04_audioset_teachers": 10.0}
    slots = schedule.plan_schedule(NOTEBOOKS, seconds, 2, AFTER)
    by_stem = {slot.stem: slot for slot in slots}
    assert _starts(slots)[:2] == ["04_audioset_teachers", "02_web_requests"]  # 04's chain is 2010 s
    assert by_stem["05_audioset_multilabel"].start == 10.0
    chain = schedule.chain_seconds(NOTEBOOKS, seconds, AFTER)
    assert chain["04_audioset_teachers"] == 2010.0 and chain["05_audioset_multilabel"] == 2000.0


def test_at_every_start_no_longer_ready_notebook_was_passed_over():
    seconds = {stem: float(10 + 37 * i % 101) for i, stem in enumerate(NOTEBOOKS)}
    slots = schedule.plan_schedule(NOTEBOOKS, seconds, 3, AFTER)
    deps, chain = schedule.waits_for(NOTEBOOKS, AFTER), schedule.chain_seconds(NOTEBOOKS, seconds, AFTER)
    for slot in slots:
        done = {s.stem for s in slots if s.end <= slot.start}
        waiting = {s.stem for s in slots if s.start > slot.start}
        ready = [s for s in waiting if deps[s] <= done]
        assert all(chain[s] <= chain[slot.stem] for s in ready), slot
        assert deps[slot.stem] <= done
    assert len({(s.worker, s.start) for s in slots}) == len(slots)  # one notebook at a time per worker


def test_a_notebook_without_a_timing_goes_first_and_the_last_run_beats_the_reference():
    assert schedule.expected_seconds(["00_dp_primer", "01_x"], {"00_dp_primer": 5.0}, REFERENCE) == {
        "00_dp_primer": 5.0
    }
    reference = REFERENCE["02_web_requests"]
    assert schedule.expected_seconds(["02_web_requests"], {}, REFERENCE) == {"02_web_requests": reference}
    chain = schedule.chain_seconds(["00_dp_primer", "01_x"], {"00_dp_primer": 5.0}, {})
    assert schedule.next_notebook(["00_dp_primer", "01_x"], set(), chain, {}) == "01_x"


def test_the_kernels_get_one_thread_each_unless_the_environment_says_otherwise():
    assert schedule.thread_environment(2, {}) == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert schedule.thread_environment(2, {"OMP_NUM_THREADS": "2"}) == {"MKL_NUM_THREADS": "1"}
    assert schedule.thread_environment(1, {}) == {}


def test_make_figures_runs_two_jobs_with_one_thread_per_notebook():
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "JOBS", "MAKEFLAGS")}
    dry = subprocess.run(["make", "-n", "figures"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)
    command = dry.stdout.replace("\\\n", " ")
    assert "OMP_NUM_THREADS=1 MKL_NUM_THREADS=1" in command and "--jobs 2" in command
    dry = subprocess.run(
        ["make", "-n", "figures", "JOBS=1"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert "--jobs 1" in dry.stdout


# --- notebooks side by side ---------------------------------------------------------------------------------------
STEMS = ["00_a", "02_long", "04_audioset_teachers", "05_audioset_multilabel", "06_fails"]
TIMINGS = {"00_a": 1.0, "02_long": 100.0, "04_audioset_teachers": 20.0, "05_audioset_multilabel": 30.0, "06_fails": 2.0}


@pytest.fixture
def fake_notebooks(tmp_path, monkeypatch, point_layout, write_manifests):
    """Stand-in notebooks in ``tmp_path`` with their manifests (05 waits for 04; no parameter files, no index);
    the fake ``execute_notebook`` runs in the worker processes (forked: the monkeypatches hold there) and leaves
    marks in ``tmp_path/marks``:

    * ``04_audioset_teachers`` waits until ``00_a`` has written its outputs (it finishes only if notebooks ran
      beside it), then stores its "votes";
    * ``05_audioset_multilabel`` fails unless ``04_audioset_teachers`` has stored them: with 04 still running
      when ``02_long`` is done, a scheduler that did not wait for 04 would start 05 there (its chain is longer
      than 06's and 00's);
    * ``06_fails`` fails after writing half of its outputs (its previous outputs must stay).
    """
    figures, marks = tmp_path / "figures", tmp_path / "marks"
    (figures / "06_fails").mkdir(parents=True)
    (figures / "06_fails" / "table.csv").write_text("previous run\n")
    marks.mkdir()
    point_layout(root=tmp_path, figures=figures, build=tmp_path / "build", notebooks=tmp_path / "notebooks")
    point_layout(configs=tmp_path / "configs")
    (tmp_path / "notebooks").mkdir()
    for stem in STEMS:
        (tmp_path / "notebooks" / f"{stem}.ipynb").write_text("{}")
    write_manifests(
        tmp_path / "configs", STEMS, {"05_audioset_multilabel": {"04_audioset_teachers": "reads 04's votes"}}
    )
    monkeypatch.setattr(cli, "write_index", lambda *a: None)
    monkeypatch.setattr(cli, "check_configs", lambda *a: None)  # no parameter files: the notebooks are stand-ins
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "timings.paper.json").write_text(json.dumps(TIMINGS))

    def fake_execute(stem, profile, output_dir, **kwargs):
        with open(marks / "starts", "a") as starts:
            starts.write(stem + "\n")
        os.write(2, f"progress of {stem}\n".encode())  # as a kernel does: it inherits the worker's stderr
        target = kwargs["staging"]  # the kernel writes into the runner's staging folder
        target.mkdir(parents=True)
        (target / "table.csv").write_text(f"{stem} pid {os.getpid()} threads {os.environ.get('OMP_NUM_THREADS')}\n")
        if stem == "04_audioset_teachers":
            deadline = time.monotonic() + 30
            while not (figures / "00_a" / "table.csv").exists():
                if time.monotonic() > deadline:
                    raise RuntimeError("00_a never ran beside 04")
                time.sleep(0.05)
            (marks / "votes").write_text("stored")
        if stem == "05_audioset_multilabel" and not (marks / "votes").exists():
            raise RuntimeError("started before 04 stored its votes")
        if stem == "06_fails":
            raise RuntimeError("kernel died")
        executed = layout.current().build / f"{stem}.{profile}.ipynb"
        executed.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
        return executed

    monkeypatch.setattr(staging, "execute_notebook", fake_execute)
    return tmp_path


@pytest.mark.slow
def test_two_jobs_run_side_by_side_each_into_its_own_folder_and_a_failure_stops_no_other(fake_notebooks):
    tmp_path = fake_notebooks
    figures = tmp_path / "figures"
    assert cli.run_figures("paper", None, "skip", jobs=2) == 1  # one notebook failed
    starts = (tmp_path / "marks" / "starts").read_text().split()
    assert set(starts[:2]) == {"02_long", "04_audioset_teachers"}  # the two longest chains (05 waits for 04)
    assert starts[2:] == ["06_fails", "00_a", "05_audioset_multilabel"]  # 05 only once 04 has finished
    assert sorted(p.name for p in figures.iterdir()) == sorted(STEMS)  # no staging folder left
    tables = {stem: (figures / stem / "table.csv").read_text() for stem in STEMS}
    assert tables["06_fails"] == "previous run\n"  # the failure kept its previous outputs
    for stem in set(STEMS) - {"06_fails"}:
        assert tables[stem].startswith(f"{stem} pid ") and tables[stem].endswith("threads 1\n")
        assert (figures / stem / f"{stem}.ipynb").exists()
    assert len({tables[stem].split()[2] for stem in STEMS if stem != "06_fails"}) == 4  # a process per notebook
    summary = (tmp_path / "build" / "summary.paper.md").read_text()
    assert [line.split("|")[1].strip() for line in summary.splitlines() if line.startswith("| 0")] == STEMS
    assert "FAILED: kernel died" in summary and summary.count("| ok |") == 4
    timings = json.loads((tmp_path / "build" / "timings.paper.json").read_text())
    assert timings["06_fails"] == TIMINGS["06_fails"] and timings["02_long"] < TIMINGS["02_long"]  # this run's
    assert (tmp_path / "build" / "02_long.paper.log").read_text() == "progress of 02_long\n"  # not the terminal


@pytest.mark.slow
def test_jobs_1_runs_the_notebooks_here_in_the_old_order(fake_notebooks, monkeypatch):
    tmp_path = fake_notebooks
    monkeypatch.setattr(cli, "list_notebooks", lambda: ["00_a", "04_audioset_teachers", "05_audioset_multilabel"])
    assert cli.run_figures("paper", None, "skip", jobs=1) == 0
    assert (tmp_path / "marks" / "starts").read_text().split() == [
        "00_a",
        "04_audioset_teachers",
        "05_audioset_multilabel",
    ]
    pids = {(tmp_path / "figures" / s / "table.csv").read_text().split()[2] for s in ["00_a", "04_audioset_teachers"]}
    assert pids == {str(os.getpid())}


def test_a_worker_that_dies_is_reported_as_failed(fake_notebooks, monkeypatch):
    monkeypatch.setattr(cli, "list_notebooks", lambda: ["00_a", "04_audioset_teachers"])
    monkeypatch.setattr(staging, "execute_notebook", lambda stem, *a, **k: os._exit(3) if stem == "00_a" else None)
    runs = jobs.run_side_by_side(["00_a"], "paper", {}, 2, {}, {})
    assert not runs[0].ok and "exit status 3" in runs[0].error


HOLD_LOCK = """
import sys, time
from pathlib import Path
from pate_study.tooling.notebook_runner import cli
with cli.run_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.mark.slow
def test_one_figures_run_per_checkout(tmp_path):
    lock = tmp_path / cli.RUN_LOCK
    with cli.run_lock(tmp_path) as held:
        assert held == lock and cli.lock_holder(lock) == os.getpid()
        with pytest.raises(ValueError, match=f"runner process {os.getpid()}"):  # a second run, even in-process
            with cli.run_lock(tmp_path):
                pass
    with cli.run_lock(tmp_path):  # released when the run ends
        pass
    # another process's run stops this one at once, naming that process; its lock is left alone
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(ValueError, match=f"runner process {other.pid}"):
            with cli.run_lock(tmp_path):
                pass
        assert cli.lock_holder(lock) == other.pid
    finally:
        other.kill()  # killed outright: the kernel releases its lock, nothing stale is left to clean up
        other.wait()
    with cli.run_lock(tmp_path):
        assert cli.lock_holder(lock) == os.getpid()


def test_run_figures_holds_the_lock_before_it_touches_staging(tmp_path, monkeypatch, point_layout):
    point_layout(figures=tmp_path, build=tmp_path / "build")  # never the checkout's own lock
    (tmp_path / ".tmp-00_dp_primer-smoke").mkdir()  # as if a live run were writing it
    staging.staging_marker(tmp_path / ".tmp-00_dp_primer-smoke").write_text("")
    with cli.run_lock():
        with pytest.raises(ValueError, match="another figures run"):
            cli.run_figures("smoke", ["00_dp_primer"], "skip")
    assert (tmp_path / ".tmp-00_dp_primer-smoke").is_dir()  # the live run's staging folder was not touched
    assert staging.remove_stale_staging() == [tmp_path / ".tmp-00_dp_primer-smoke"]  # the layout read at call time


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


CTRL_C_RUN = """
import os, signal, sys, time
from pathlib import Path
# as a terminal's foreground job: a test suite started in the background (a non-interactive shell's `&`) passes
# SIGINT on ignored, and an ignored SIGINT stays ignored across exec (POSIX)
signal.signal(signal.SIGINT, signal.default_int_handler)
from pate_study.tooling.notebook_runner import cli, jobs, layout, staging
tmp = Path(sys.argv[1])
layout.LAYOUT = layout.Layout.under(tmp)
for stem in ("00_a", "02_b"):  # stand-in notebooks with their manifests; no parameter files, no index
    (tmp / "notebooks").mkdir(exist_ok=True)
    (tmp / "notebooks" / f"{stem}.ipynb").write_text("{}")
    (tmp / "configs" / stem).mkdir(parents=True, exist_ok=True)
    (tmp / "configs" / stem / "notebook.yaml").write_text("datasets: []\\n")
cli.write_index = lambda *a: None
cli.check_configs = lambda *a: None

jobs.STOP_GRACE_SECONDS = 3.0
IGNORES_CTRL_C = False

def slow_notebook(stem, profile, output_dir, **kwargs):
    if IGNORES_CTRL_C and stem == "02_b":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    kwargs["staging"].mkdir(parents=True)  # the kernel writes into the runner's staging folder
    (kwargs["staging"] / "half.csv").write_text("half written")
    (tmp / "marks" / f"{stem}.{os.getpid()}").write_text("started")
    time.sleep(120)

staging.execute_notebook = slow_notebook
sys.exit(cli.main(["figures", "--profile", "paper", "--data", "skip", "--jobs", "2"]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("ignores_ctrl_c", [False, True])
def test_ctrl_c_with_two_jobs_stops_every_worker_and_leaves_no_staging_folder(tmp_path, ignores_ctrl_c):
    """Ctrl-C stops both workers; one that ignores it (a hung kernel) is terminated after the grace period and the
    runner removes its staging folder itself."""
    (tmp_path / "figures").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "marks").mkdir()
    script = tmp_path / "run.py"
    script.write_text(CTRL_C_RUN.replace("IGNORES_CTRL_C = False", f"IGNORES_CTRL_C = {ignores_ctrl_c}"))
    with open(tmp_path / "stderr", "w") as stderr:
        run = subprocess.Popen(
            [sys.executable, str(script), str(tmp_path)],
            cwd=REPO_ROOT,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + 60
        while len(list((tmp_path / "marks").iterdir())) < 2:  # both notebooks are running, side by side
            assert time.monotonic() < deadline and run.poll() is None, "the two notebooks never started"
            time.sleep(0.05)
        assert len([p for p in (tmp_path / "figures").glob(".tmp-*") if p.is_dir()]) == 2
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground process group
        assert run.wait(timeout=30) == 130
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    workers = [int(mark.name.split(".")[1]) for mark in (tmp_path / "marks").iterdir()]
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)  # no notebook left running
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == []  # no staging folder left
    err = (tmp_path / "stderr").read_text()
    assert "interrupted (Ctrl-C)" in err and "Traceback" not in err
    with cli.run_lock(tmp_path / "build"):  # and the lock is free again
        pass


@pytest.mark.parametrize(
    "blocker, expected",
    [
        ("build", "a regular file where the runner keeps its build outputs"),
        ("build/figures.lock", "a folder where the runner keeps its lock"),
    ],
)
def test_something_in_the_way_of_the_build_folder_or_the_lock_is_one_line(
    tmp_path, monkeypatch, capsys, blocker, expected, point_layout
):
    point_layout(build=tmp_path / "build")
    if blocker == "build":
        (tmp_path / "build").write_text("mine")
    else:
        (tmp_path / blocker).mkdir(parents=True)
    monkeypatch.setattr(cli, "run_figures_locked", lambda *a: pytest.fail("ran"))
    code = cli.main(["figures", "--profile", "smoke", "--notebooks", "00_dp_primer", "--data", "skip"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and expected in err and "Traceback" not in err


def test_ctrl_c_exits_130_with_one_line_and_no_traceback(monkeypatch, capsys):
    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_figures", interrupted)
    try:
        code = cli.main(["figures", "--profile", "smoke", "--notebooks", "00_dp_primer"])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C left main() as a KeyboardInterrupt (a traceback on the terminal)")
    assert code == 130
    err = capsys.readouterr().err
    assert err.startswith("interrupted (Ctrl-C)") and err.count("\n") == 1


def test_a_notebook_given_twice_is_named_not_reported_as_a_cycle():
    with pytest.raises(ValueError, match="notebooks given more than once: 00_dp_primer"):
        schedule.sequential_order(["00_dp_primer", "00_dp_primer"], AFTER)
