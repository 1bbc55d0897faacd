"""One notebook through papermill (``configs/<stem>/<profile>.yaml`` plus ``profile`` and ``output_dir``), its
executed copy stripped of what changes from run to run under the same seed, and its HTML rendering."""

from __future__ import annotations

import contextlib
import copy
import os
import re
import sys
from pathlib import Path

import nbformat
import papermill

from pate_study.core.io import atomic_write_text
from pate_study.reporting.session import RUNNER_ENV, STAGING_ENV
from pate_study.tooling.notebook_runner.configs import injected_parameters
from pate_study.tooling.notebook_runner.layout import PROFILES, current, list_notebooks

#: How long a notebook's kernel may take to start (papermill's default, 60 s, ran out on two cores kept busy).
KERNEL_START_S = 180
VOLATILE_CELL_METADATA = ("papermill", "execution", "collapsed", "scrolled")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
PROGRESS_LINE = re.compile(r"\d+%\|.*\|\s*\d+/\d+|\d+/\d+ \[[\d:<?]+")  # tqdm's text bar
#: The nbconvert template of the HTML renderings (JupyterLab's layout, figures with their alternative text).
TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"


@contextlib.contextmanager
def runner_environment(staging: Path | None = None):
    """The kernel's environment: it runs under the runner (``$PATE_STUDY_RUNNER=1``: its outputs are stamped with the
    profile parameter, not as an interactive run), writes its outputs into ``staging`` when one is given
    (``$PATE_STUDY_STAGING``; :func:`pate_study.reporting.session.runner_staging_folder`), and draws figures inline
    whatever ``$MPLBACKEND`` says (CI sets Agg, which would leave the executed notebooks without their figures)."""
    previous = {name: os.environ.get(name) for name in (RUNNER_ENV, STAGING_ENV, "MPLBACKEND")}
    os.environ[RUNNER_ENV] = "1"
    os.environ.pop(STAGING_ENV, None)
    if staging is not None:
        os.environ[STAGING_ENV] = str(Path(staging).resolve())
    os.environ.pop("MPLBACKEND", None)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def execute_notebook(
    stem: str,
    profile: str,
    output_dir: Path,
    build_dir: Path | None = None,
    extra_parameters: dict | None = None,
    html: bool = True,
    progress: str | None = None,
    cell_timeout_s: float | None = None,
    staging: Path | None = None,
) -> Path:
    """Run one notebook with papermill; return the executed notebook's path (HTML beside it if ``html``).

    ``extra_parameters``: values in place of the profile file's, checked with them (for a contract notebook, a
    field of the contract reaches the notebook as an override). ``progress``: show papermill's per-cell bar with
    this description (None: no bar). ``cell_timeout_s``: stop the notebook when one cell runs longer (papermill's
    ``execution_timeout``; None: no limit). ``staging``: the folder the notebook's outputs are written to instead of
    ``output_dir`` (the runner's, swapped in for ``output_dir`` once the notebook succeeds; None: ``output_dir``
    itself); the notebook's parameter, and so its provenance and executed copy, stay ``output_dir``. The executed
    copy in ``build_dir`` (default: the layout's ``build/``) is stripped of volatile metadata once the notebook
    succeeds (see :func:`strip_volatile`).
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    source = current().notebooks / f"{stem}.ipynb"
    if not source.exists():
        raise FileNotFoundError(f"notebook {source} not found; known: {list_notebooks()}")
    parameters = {
        **injected_parameters(stem, profile, extra_parameters),
        "profile": profile,
        "output_dir": str(Path(output_dir)),
    }
    build_dir = Path(current().build if build_dir is None else build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    executed = build_dir / f"{stem}.{profile}.ipynb"
    bar = {"desc": progress, "unit": "cell", "file": sys.stderr, "leave": True} if progress else False
    with runner_environment(staging):
        papermill.execute_notebook(
            str(source),
            str(executed),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(current().root),
            progress_bar=bar,
            log_output=False,
            start_timeout=KERNEL_START_S,
            execution_timeout=cell_timeout_s,
        )
    write_stripped(executed, executed)
    if html:
        export_html(executed)
    return executed


def is_progress_output(output: dict) -> bool:
    """Whether a cell output is a progress bar (a widget, or tqdm's text bar on stderr)."""
    if WIDGET_MIME in output.get("data", {}):
        return True
    return (
        output.get("output_type") == "stream"
        and output.get("name") == "stderr"
        and bool(PROGRESS_LINE.search(output.get("text", "")))
    )


def strip_volatile(nb: dict) -> dict:
    """A copy of an executed notebook without what changes from run to run under the same seed.

    Dropped: papermill's notebook and cell metadata (start/end times, durations, paths, environment), cell
    execution timestamps, widget state and progress-bar outputs (their model ids and timings); the random id of
    papermill's injected-parameters cell becomes ``injected-parameters``. Kept: sources,
    every other output, execution counts, parameters (in papermill's injected cell) and the kernel spec.
    """
    nb = copy.deepcopy(nb)
    for key in ("papermill", "widgets"):
        nb.get("metadata", {}).pop(key, None)
    for cell in nb.get("cells", []):
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            cell["id"] = "injected-parameters"  # papermill draws a random id for the cell it inserts
        for key in VOLATILE_CELL_METADATA:
            cell.get("metadata", {}).pop(key, None)
        if "outputs" in cell:
            cell["outputs"] = [o for o in cell["outputs"] if not is_progress_output(o)]
    return nb


def write_stripped(executed: Path, target: Path) -> Path:
    """Write ``executed`` without volatile metadata to ``target`` (atomically; nbformat's canonical layout)."""
    nb = nbformat.read(str(executed), as_version=4)
    stripped = nbformat.from_dict(strip_volatile(nb))
    return atomic_write_text(Path(target), nbformat.writes(stripped) + "\n")


def export_html(executed: Path) -> Path:
    """Render an executed notebook to HTML beside it (JupyterLab's layout, figures with their alternative text)."""
    from nbconvert import HTMLExporter  # heavy (~1 s, jinja2 and its exporters): only when HTML is written

    exporter = HTMLExporter(template_name="lab_alt", extra_template_basedirs=[str(TEMPLATES_DIR)])
    body, _ = exporter.from_filename(str(executed))
    return atomic_write_text(executed.with_suffix(".html"), body)
