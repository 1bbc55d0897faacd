"""Run the notebooks as a student does: JupyterLab in headless Chromium, Run All Cells.

Used by ``tests/tooling/test_lab_browser.py`` and runnable by hand::

    python -m pate_study.tooling.labcheck [--notebooks 00_dp_primer ...] [--screenshot docs/img/primer-first-plot.png]

It starts JupyterLab on 127.0.0.1 with a random token (``--allow-root`` when run as root) and opens each notebook in
Debian's ``chromium``. The teaching notebooks (:data:`TEACHING_NOTEBOOKS`) run on a student's own copy, made as
``make lab-light`` makes it (``build/lab-test/labs/<stem>.ipynb``, unchanged: **the parameters a student gets**; the
committed notebook is never opened, and a change to it counts as a file written where none may be), outputs going
where a student's go (``build/interactive/<stem>``), and any stderr output at all (a pink box) counts as a problem.
The others run on a copy with their smoke parameters injected (``build/lab-test/notebooks/<stem>.ipynb``, output_dir
``build/lab-test/figures/<stem>``, a path relative to the repository root while the kernel runs in the copy's
folder). The browser is driven through the Chrome DevTools Protocol (no browser download, no extra Python package:
tornado's websocket client, which JupyterLab already needs). JupyterLab's own commands open the notebook and run all
cells (``--LabApp.expose_app_in_browser``). The saved notebook is then checked: every cell ran, no error output, no
stderr output from the package's logging; and no file was written outside ``figures/``, ``build/``, the prepared
data and caches. The server, the kernels and the browser are stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import logging
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from pate_study.core.paths import BUILD_DIR, NOTEBOOKS_DIR, REPO_ROOT
from pate_study.reporting.session import RUNNER_ENV, STAGING_ENV
from pate_study.tooling.browser import (
    DevTools,
    as_root,
    find_browser,
    free_port,
    start_headless_browser,
    stop_process,
    wait_for_http,
)
from pate_study.tooling.labcopies import TEACHING_NOTEBOOKS, VOTES_FOLDER, student_copy
from pate_study.tooling.notebook_runner.configs import injected_parameters
from pate_study.tooling.notebook_runner.layout import list_notebooks

logger = logging.getLogger(__name__)

LAB_DIR = BUILD_DIR / "lab-test"
INTERACTIVE_DIR = BUILD_DIR / "interactive"
#: Folders a notebook run may write to: its outputs, build products, prepared data, caches, Python bytecode.
ALLOWED_WRITES = ("figures", "build", "data", ".cache", ".git", ".venv", ".pytest_cache", ".hypothesis")
#: A log line at INFO level as the package's stdout handler writes it (or Python's default format).
INFO_LINE = re.compile(r"(^|\n)INFO[: ][^\n]*")
#: What the votes box of a lab says when it runs on the released votes.
VOTES_REAL = "**Votes: real**"
#: Where a browser run records how long each notebook's Run All took (read by instructors/guide.md's author).
TIMINGS_FILE = BUILD_DIR / "lab-run-all-seconds.json"
#: The environment a student without network has: every download through urllib fails at once (nothing listens on
#: the discard port), and no mirror is named.
OFFLINE_ENV = {name: "http://127.0.0.1:9" for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")}
PACKAGE_LOG = re.compile(
    r"(^|\n)(DEBUG|INFO|WARNING|ERROR|CRITICAL)[: ][^\n]*(pate_study|data_recipes)"
    r"|(pate_study|data_recipes)(\.\w+)*: "
)


# -------------------------------------------------------------------------------------------------- file changes
def snapshot(root: Path = REPO_ROOT) -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file under ``root`` outside :data:`ALLOWED_WRITES` and ``__pycache__``."""
    files = {}
    for folder, dirs, names in os.walk(root):
        rel = Path(folder).relative_to(root)
        if rel == Path("."):
            dirs[:] = [d for d in dirs if d not in ALLOWED_WRITES]
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            path = Path(folder) / name
            try:
                stat = path.stat()
            except OSError:
                continue
            files[(rel / name).as_posix()] = (stat.st_mtime_ns, stat.st_size)
    return files


def changed_files(before: dict, after: dict) -> list[str]:
    """Files created, modified or removed between two snapshots."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


# -------------------------------------------------------------------------------------------------- notebooks
def lab_copy(stem: str, lab_dir: Path = LAB_DIR, *, student: bool = False) -> Path:
    """A copy of ``notebooks/<stem>.ipynb``: with ``student``, the student's own copy as ``make lab-light`` makes it
    (:func:`pate_study.tooling.labcopies.student_copy`, in ``<lab_dir>/labs/``: the parameters a student gets);
    else with the smoke parameters injected, as the runner injects them (:func:`.configs.injected_parameters`)."""
    if student:
        return student_copy(stem, lab_dir / "labs")[0]
    output_dir = (lab_dir / "figures" / stem).relative_to(REPO_ROOT)  # relative: resolved from the root
    parameters = {**injected_parameters(stem, "smoke"), "profile": "smoke", "output_dir": str(output_dir)}
    nb = parameterize_notebook(load_notebook_node(str(NOTEBOOKS_DIR / f"{stem}.ipynb")), parameters)
    target = lab_dir / "notebooks" / f"{stem}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(target))
    return target


@dataclass
class NotebookCheck:
    """What one notebook did in JupyterLab."""

    stem: str
    seconds: float
    problems: list[str] = field(default_factory=list)
    other_stderr: list[str] = field(default_factory=list)
    cpu_seconds: float | None = None  # the kernel's CPU time over the Run All (Linux), see kernel_cpu_seconds


def check_saved_notebook(
    path: Path, stem: str, seconds: float, output_dir: Path, *, strict: bool = False, real_votes: bool = False
) -> NotebookCheck:
    """Problems of a notebook saved after Run All: cells not run, errors, package log lines on stderr (with
    ``strict``, any stderr output: what a student sees as a pink box), outputs not where they belong or not
    stamped as an interactive run. With ``strict`` (a lab as a student meets it) also: an INFO line in any output
    (the labs keep them out of the students' view), and an exercise cell, untouched, whose feedback is not "no answer
    yet". With ``real_votes``: the votes box must say the run has the real votes."""
    result = NotebookCheck(stem, seconds)
    nb = nbformat.read(str(path), as_version=4)
    shown = [(index, _output_text(cell)) for index, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    if strict:
        result.problems += [
            f"cell {i}: an INFO line a student sees: {m.group(0)[:120]}" for i, t in shown if (m := INFO_LINE.search(t))
        ]
        result.problems += [
            f"cell {i}: an untouched exercise does not say 'no answer yet': {t.strip()[:160]}"
            for (i, t), cell in zip(shown, (c for c in nb.cells if c.cell_type == "code"))
            if "exercises.check_" in cell.source and "no answer yet" not in t
        ]
    if real_votes and not any(VOTES_REAL in t for _, t in shown):
        votes_box = next((t for _, t in shown if "Votes:" in t), "no votes box")
        result.problems.append(f"the lab did not load the real votes: {votes_box.strip()[:300]}")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None and cell.source.strip():
            result.problems.append(f"cell {index} did not run")
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                result.problems.append(f"cell {index}: {output.get('ename')}: {output.get('evalue')}")
            elif output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = output.get("text", "")
                if PACKAGE_LOG.search(text):
                    result.problems.append(f"cell {index}: the package's logging in a stderr box: {text.strip()[:200]}")
                elif "IProgress not found" in text:
                    result.problems.append(f"cell {index}: progress bars degrade to text (ipywidgets missing)")
                elif strict:
                    result.problems.append(f"cell {index}: a stderr box a student sees: {text.strip()[:200]}")
                else:
                    result.other_stderr.append(f"cell {index}: {text.strip()[:200]}")
    scalars = output_dir / "scalars.json"
    if not scalars.exists():
        result.problems.append(f"no {scalars.relative_to(REPO_ROOT)}: outputs not written under the repository root")
    else:
        profile = json.loads(scalars.read_text(encoding="utf-8")).get("_provenance", {}).get("profile")
        if profile != "interactive":
            result.problems.append(f"outputs stamped profile {profile!r}, expected 'interactive' in JupyterLab")
    return result


def _output_text(cell) -> str:
    """Everything a cell shows as text: its streams, and the plain, Markdown and HTML forms of its results."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        for kind in ("text/plain", "text/markdown", "text/html"):
            value = output.get("data", {}).get(kind)
            if value:
                parts.append(value if isinstance(value, str) else "".join(value))
    return "\n".join(parts)


OPEN_AND_RUN = """
(async () => {
  const app = window.jupyterapp;
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const panel = await app.commands.execute('docmanager:open', {path: %(path)s, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);
  for (let i = 0; i < 600; i++) {
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    if (kernel && kernel.status === 'idle') break;
    await sleep(100);
  }
  const ran = await app.commands.execute('notebook:run-all-cells');
  await panel.context.save();
  return JSON.stringify({id: panel.id, ran: ran});
})()
"""
FIND_PANEL = "Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.id === %(id)s)"
SCROLL_TO_FIRST_PLOT = (
    """
(async () => {
  const panel = """
    + FIND_PANEL
    + """;
  window.jupyterapp.shell.collapseLeft();
  const image = panel.node.querySelector('.jp-OutputArea-output img');
  if (!image) return null;
  image.scrollIntoView({block: 'center'});
  await new Promise(r => setTimeout(r, 1500));
  const box = image.closest('.jp-Cell').getBoundingClientRect();
  return JSON.stringify({x: box.x, y: box.y, width: box.width, height: box.height});
})()
"""
)
#: Shut the notebook's kernel down and close its panel. The shutdown is raced against a 30 s timer: a kernel that never
#: acknowledges (seen on a loaded machine) left the awaited promise unreachable, and Chromium then fails the evaluation
#: with "Promise was collected" after the notebook had already run clean. Returns whether the shutdown completed.
CLOSE = (
    """
(async () => {
  const panel = """
    + FIND_PANEL
    + """;
  const done = await Promise.race([panel.sessionContext.shutdown().then(() => true),
                                   new Promise(resolve => setTimeout(() => resolve(false), 30000))]);
  panel.dispose();
  return done;
})()
"""
)


def kernel_cpu_seconds(server_pid: int, proc: Path = Path("/proc")) -> float | None:
    """CPU seconds (user + system) used so far by the Jupyter kernels that the server ``server_pid`` started (its
    descendants running ``ipykernel``), read from Linux's ``/proc``; None where there is none. A Run All's wall time
    on a shared machine says how loaded it was; this says how much computing the notebook needs."""
    if not (proc / str(server_pid)).is_dir():
        return None
    parents, commands, cpu = {}, {}, {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        parents[int(entry.name)] = int(stat[1])
        cpu[int(entry.name)] = (int(stat[11]) + int(stat[12])) / tick

    def descends(pid: int) -> bool:
        while pid in parents and pid != server_pid:
            pid = parents[pid]
        return pid == server_pid

    kernels = [pid for pid in cpu if b"ipykernel" in commands.get(pid, b"") and descends(pid)]
    return sum(cpu[pid] for pid in kernels) if kernels else None


async def _drive(
    devtools_url: str,
    lab_url: str,
    copies: dict[str, Path],
    screenshot: Path | None,
    per_notebook_timeout: float,
    server_pid: int | None = None,
) -> dict[str, tuple[float, float | None]]:
    """Open and run each copy in JupyterLab; per notebook, the Run All's wall seconds and its kernel's CPU seconds."""
    timings = {}
    async with DevTools(devtools_url) as browser:
        await browser.call("Page.enable")
        await browser.call(
            "Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False
        )
        await browser.call("Page.navigate", url=lab_url)
        deadline = time.monotonic() + 120
        while True:
            try:
                if await browser.evaluate(
                    "window.jupyterapp ? window.jupyterapp.restored.then(() => true) : false", timeout=30
                ):
                    break
            except RuntimeError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("JupyterLab did not start in the browser within 2 minutes")
            await asyncio.sleep(0.5)
        for stem, copy in copies.items():
            start = time.monotonic()
            path = copy.relative_to(REPO_ROOT).as_posix()
            logger.info("JupyterLab: %s, Run All Cells", path)
            opened = json.loads(
                await browser.evaluate(OPEN_AND_RUN % {"path": json.dumps(path)}, timeout=per_notebook_timeout)
            )
            timings[stem] = (time.monotonic() - start, kernel_cpu_seconds(server_pid) if server_pid else None)
            panel = {"id": json.dumps(opened["id"])}
            if screenshot is not None and stem == "00_dp_primer":
                if await browser.evaluate(SCROLL_TO_FIRST_PLOT % panel, timeout=30):
                    shot = await browser.call("Page.captureScreenshot", format="png")

                    screenshot.parent.mkdir(parents=True, exist_ok=True)
                    screenshot.write_bytes(base64.b64decode(shot["data"]))
            if not await browser.evaluate(CLOSE % panel, timeout=60):
                logger.warning(
                    "JupyterLab: %s ran clean, but its kernel did not acknowledge the shutdown within 30 s; "
                    "panel closed, the server stops the kernel at the end",
                    path,
                )
    return timings


def run_in_lab(
    stems: list[str],
    *,
    browser: str,
    screenshot: Path | None = None,
    per_notebook_timeout: float = 900.0,
    student_stems: tuple[str, ...] = TEACHING_NOTEBOOKS,
    python: str = sys.executable,
    votes: Path | None = None,
    offline: bool = False,
) -> tuple[list[NotebookCheck], list[str]]:
    """Run ``stems`` in JupyterLab + Chromium (those in ``student_stems`` with their own parameters); return each
    notebook's check and the files written outside the allowed folders; record the Run All times in
    :data:`TIMINGS_FILE`.

    ``python``: the interpreter of JupyterLab and so of the kernel (e.g. the light venv's, ``.venv-lab/bin/python``).
    ``votes``: a folder of the released vote files, copied into the students' folder as a lecturer would
    (``labs/pate2018-votes/``); the labs must then say they run on the real votes. ``offline``: the server and its
    kernels get :data:`OFFLINE_ENV`, no mirror, and an empty data folder of their own, as a student's machine without
    network (the labs prepare the votes from the copy, or run on the stand-in)."""
    shutil.rmtree(LAB_DIR, ignore_errors=True)
    for stem in student_stems:
        shutil.rmtree(INTERACTIVE_DIR / stem, ignore_errors=True)
    copies = {stem: lab_copy(stem, student=stem in student_stems) for stem in stems}
    if votes is not None:
        shutil.copytree(votes, LAB_DIR / "labs" / VOTES_FOLDER)
    before = snapshot()
    token = secrets.token_hex(16)
    port = free_port()
    server = chrome = None
    with tempfile.TemporaryDirectory(prefix="pate-lab-") as scratch:
        scratch = Path(scratch)
        env = {
            **os.environ,
            "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"),
            "JUPYTERLAB_WORKSPACES_DIR": str(scratch / "workspaces"),
            "JUPYTERLAB_SETTINGS_DIR": str(scratch / "settings"),
        }
        if offline:
            env.update(OFFLINE_ENV, PATE_STUDY_DATA=str(scratch / "data"), no_proxy="", NO_PROXY="")
            env.pop("PATE_STUDY_MIRROR", None)
        news = scratch / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        news.parent.mkdir(parents=True)
        news.write_text('{"fetchNews": "false"}')  # no "get notified about Jupyter news?" toast over the cells
        env.pop(RUNNER_ENV, None)  # a student's kernel: interactive
        env.pop(STAGING_ENV, None)
        env.pop("MPLBACKEND", None)  # CI sets Agg; a student's kernel draws inline
        command = [
            python,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={REPO_ROOT}",
            "--LabApp.expose_app_in_browser=True",
            "--ServerApp.log_level=WARN",
        ]
        if as_root():
            command.append("--allow-root")
        try:
            server = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=open(scratch / "server.log", "w"),
                start_new_session=True,
            )
            wait_for_http(f"http://127.0.0.1:{port}/api/status?token={token}", 120, server, "JupyterLab")
            chrome, page_url = start_headless_browser(browser, scratch / "chromium", "--window-size=1280,900")
            timings = asyncio.run(
                _drive(
                    page_url,
                    f"http://127.0.0.1:{port}/lab?token={token}",
                    copies,
                    screenshot,
                    per_notebook_timeout,
                    server.pid,
                )
            )
        finally:
            stop_process(chrome)
            stop_process(server)
    checks = []
    for stem in stems:
        wall, cpu = timings.get(stem, (float("nan"), None))
        check = check_saved_notebook(
            copies[stem],
            stem,
            wall,
            INTERACTIVE_DIR / stem if stem in student_stems else LAB_DIR / "figures" / stem,
            strict=stem in student_stems,
            real_votes=votes is not None and stem in student_stems,
        )
        check.cpu_seconds = cpu
        checks.append(check)
    record_timings(checks, python=python, offline=offline)
    requested = {screenshot.resolve().relative_to(REPO_ROOT).as_posix()} if screenshot else set()
    requested |= {TIMINGS_FILE.relative_to(REPO_ROOT).as_posix()}
    return checks, [path for path in changed_files(before, snapshot()) if path not in requested]


def record_timings(checks: list[NotebookCheck], *, python: str, offline: bool, path: Path = TIMINGS_FILE) -> dict:
    """Add these notebooks' Run All times to ``path`` (JSON, one entry per notebook: wall seconds, the kernel's CPU
    seconds, the interpreter, whether offline, the machine's cores and load average when measured) and return the
    whole record."""
    record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    for check in checks:
        record[check.stem] = {
            "seconds": round(check.seconds, 1),
            "kernel_cpu_seconds": None if check.cpu_seconds is None else round(check.cpu_seconds, 1),
            "python": Path(python).parent.parent.name,
            "offline": offline,
            "cores": os.cpu_count(),
            "load_average_1min": round(load[0], 2),
            "clean": not check.problems,
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return record


def main(argv: list[str] | None = None) -> int:

    parser = argparse.ArgumentParser(prog="python -m pate_study.tooling.labcheck", description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", help="notebook stems (default: all)")
    parser.add_argument("--screenshot", type=Path, help="save a screenshot of the primer's first plot here")
    parser.add_argument("--python", default=sys.executable, help="JupyterLab's interpreter (e.g. .venv-lab/bin/python)")
    parser.add_argument("--votes", type=Path, help="a folder of the released vote files, copied beside the labs")
    parser.add_argument("--offline", action="store_true", help="as a machine without network, mirror or data")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    known = list_notebooks()
    unknown = [stem for stem in args.notebooks or [] if stem not in known]
    if unknown:
        print(
            f"error: --notebooks {' '.join(unknown)}: no such notebook in notebooks/; expected some of: "
            f"{' '.join(known)}",
            file=sys.stderr,
        )
        return 2
    if args.votes is not None and not args.votes.is_dir():
        print(f"error: --votes {args.votes}: not a folder; give the folder of the released vote files", file=sys.stderr)
        return 2
    if shutil.which(args.python) is None:
        print(
            f"error: --python {args.python}: no such interpreter; build the light venv with make lab-venv",
            file=sys.stderr,
        )
        return 2
    browser = find_browser()
    if browser is None:
        print("error: no chromium found; install Debian's package: apt-get install chromium", file=sys.stderr)
        return 2
    checks, outside = run_in_lab(
        args.notebooks or known,
        browser=browser,
        screenshot=args.screenshot,
        python=args.python,
        votes=args.votes,
        offline=args.offline,
    )
    for check in checks:
        cpu = f" ({check.cpu_seconds:.0f} s of kernel CPU)" if check.cpu_seconds is not None else ""
        print(
            f"{check.stem}: {check.seconds:.0f} s{cpu}, " + ("ok" if not check.problems else "; ".join(check.problems))
        )
        for line in check.other_stderr:
            print(f"    stderr (not the package's): {line}")
    if outside:
        print(f"files written outside figures/ and build/: {outside}")
    return 1 if outside or any(c.problems for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
