"""How the package behaves inside a Jupyter kernel: interactive (JupyterLab) or executed by the runner.

Imported by ``pate_study/__init__.py`` only when an IPython kernel is running, so scripts and tests are unaffected.

- **Logging.** The package's log records go to the cell's *stdout*, not stderr: JupyterLab draws stderr in pink
  boxes that students read as failures. The records keep the level the notebook configured
  (``logging.basicConfig(level=...)`` on the root logger); they are not sent twice through the root's handler.
- **Alternative text.** Every matplotlib figure shown inline carries an ``alt`` text in the output's metadata
  (nbconvert writes it into the HTML's ``<img alt=...>``): the description given to
  :meth:`pate_study.reporting.outputs.NotebookOutputs.save_figure`, else one built from the figure's titles and axis
  labels.
- **Interactive or runner.** The runner (``make figures``) sets ``$PATE_STUDY_RUNNER=1`` in the kernel's
  environment; the profile itself reaches the notebook by one channel, its ``profile`` parameter. Without the flag,
  a notebook running in a kernel is an *interactive* run: its outputs are stamped ``profile: interactive`` (see
  :class:`pate_study.reporting.outputs.NotebookOutputs`). The runner also names, in ``$PATE_STUDY_STAGING``, the
  folder its outputs are written to until the run succeeds (``figures/.tmp-<stem>-<profile>``); the notebook's
  ``output_dir`` parameter stays the folder the outputs end up in, which its provenance and executed copy record.
- **The package's warnings in words, once.** A warning whose class the package defines (e.g. an order at the edge
  of the RDP order range) is said once per distinct message, as a log record on stdout (``WARNING <category>:
  <message>``), without the file path and source line Python's default display prints (a path of the machine that
  ran the notebook, in pink). Other libraries' warnings keep Python's display.
- **Progress bars under the runner.** ``tqdm.auto`` bars of the package write plain text to the kernel process's
  own stderr, which the runner's terminal shows while the notebook runs; they stay out of the executed notebook,
  so its copy is the same on every run.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path

import tqdm.auto
import tqdm.std

RUNNER_ENV = "PATE_STUDY_RUNNER"
STAGING_ENV = "PATE_STUDY_STAGING"
ALT_ATTRIBUTE = "_pate_study_alt_text"
INTERACTIVE_PROFILE = "interactive"
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def in_kernel() -> bool:
    """True inside an IPython kernel (JupyterLab, papermill), False in scripts, pytest and the terminal IPython."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too old or half-imported: not a kernel we can talk to
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def run_by_runner() -> bool:
    """Whether the runner executes this kernel's notebook (``$PATE_STUDY_RUNNER`` set), not a person interactively."""
    return bool(os.environ.get(RUNNER_ENV))


def interactive_run() -> bool:
    """Whether this is a notebook run by a person (a kernel the runner did not start: JupyterLab, Run All)."""
    return in_kernel() and not run_by_runner()


def runner_staging_folder() -> Path | None:
    """The folder the runner writes this kernel's outputs to until the run succeeds (``$PATE_STUDY_STAGING``, set
    by the runner beside ``$PATE_STUDY_RUNNER``), or None: outputs go to the notebook's ``output_dir`` itself."""
    staging = os.environ.get(STAGING_ENV) if run_by_runner() else None
    return Path(staging) if staging else None


class _CurrentStdout(logging.StreamHandler):
    """A handler that writes to whatever ``sys.stdout`` is when a record arrives (ipykernel swaps it per cell)."""

    def __init__(self):
        super().__init__(sys.stdout)

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, value):  # StreamHandler.__init__ and setStream assign it; the current stdout always wins
        pass


PROJECT_LOGGERS = ("pate_study", "data_recipes")


def log_to_stdout(logger_name: str = "pate_study") -> logging.Handler:
    """Send ``logger_name``'s records to the cell's stdout (once), not through the root logger's stderr handler."""
    logger = logging.getLogger(logger_name)
    for handler in logger.handlers:
        if isinstance(handler, _CurrentStdout):
            return handler
    handler = _CurrentStdout()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger.addHandler(handler)
    logger.propagate = False  # the level still comes from the root logger (getEffectiveLevel walks up)
    return handler


def figure_alt_text(fig) -> str:
    """The description of ``fig`` for screen readers: the one given to ``save_figure``, else titles and labels."""
    explicit = getattr(fig, ALT_ATTRIBUTE, None)
    if explicit:
        return explicit
    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(suptitle.get_text())
    for ax in fig.axes:
        title, xlabel, ylabel = ax.get_title(), ax.get_xlabel(), ax.get_ylabel()
        axes = " against ".join(label for label in (ylabel, xlabel) if label)
        text = ", ".join(piece for piece in (title, axes) if piece)
        if text:
            parts.append(text)
    return "Figure: " + "; ".join(parts) if parts else "Figure without title or axis labels"


def install_alt_text(shell=None) -> bool:
    """Wrap the kernel's PNG formatter for matplotlib figures so every inline figure carries ``alt`` metadata.

    Idempotent; returns False when there is no kernel or no figure formatter yet (matplotlib's inline backend
    registers it when it is first activated, so :func:`configure` resolves the backend first).
    """
    if shell is None:
        if not in_kernel():
            return False
        shell = sys.modules["IPython"].get_ipython()
    # matplotlib only when a kernel installs the hook: `import pate_study` stays light
    from matplotlib.figure import Figure  # matplotlib only here: `import pate_study` stays light

    png = shell.display_formatter.formatters["image/png"]
    try:
        current = png.lookup_by_type(Figure)
    except KeyError:
        return False
    if getattr(current, "_adds_alt_text", False):
        return True

    def with_alt_text(fig, _inner=current):
        data = _inner(fig)
        if data is None:
            return None
        metadata = {}
        if isinstance(data, tuple):
            data, metadata = data[0], dict(data[1] or {})
        return data, {**metadata, "alt": figure_alt_text(fig)}

    with_alt_text._adds_alt_text = True
    png.for_type(Figure, with_alt_text)
    return True


def _terminal_stream():
    """The kernel process's real stderr. ipykernel redirects file descriptor 2 into the notebook (and echoes it),
    but keeps a copy of the original, which ``sys.stderr.fileno()`` returns; without that copy, ``sys.__stderr__``."""
    try:
        return os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1, encoding="utf-8", errors="replace")
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__


def text_progress_bars_to_terminal() -> None:
    """Under the runner: the package's ``tqdm.auto`` bars print text to the kernel process's stderr.

    That stream is the runner's terminal (the kernel inherits it), so long loops show progress there; the
    executed notebook keeps no bar (its copy does not change with timings). Must run before the package's
    modules import ``tqdm.auto``, which :mod:`pate_study` guarantees by calling it from its ``__init__``.
    """
    terminal = _terminal_stream()

    class TerminalTqdm(tqdm.std.tqdm):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("file", terminal)
            kwargs.setdefault("mininterval", 5.0)  # a line every few seconds, not a flood
            super().__init__(*args, **kwargs)

    def terminal_trange(*args, **kwargs):
        return TerminalTqdm(range(*args), **kwargs)

    tqdm.auto.tqdm, tqdm.auto.trange = TerminalTqdm, terminal_trange


def package_warnings_in_words(logger_name: str = "pate_study", shown=None):
    """A replacement for :func:`warnings.showwarning` that logs each distinct (category, message) of a warning class
    defined in this package once, in words, through ``logger_name``, and hands every other warning to ``shown``
    (Python's display by default). Returns the replacement; :func:`configure` installs it in a kernel."""
    fallback = shown or warnings.showwarning
    said: set[tuple[str, str]] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        if not category.__module__.startswith("pate_study."):
            return fallback(message, category, filename, lineno, file, line)
        key = (category.__name__, str(message))
        if key not in said:
            said.add(key)
            logging.getLogger(logger_name).warning("%s: %s", *key)
        return None

    return show


def configure() -> None:
    """Set up logging, alt text and progress bars for a notebook kernel (no-op elsewhere)."""
    if not in_kernel():
        return
    for name in PROJECT_LOGGERS:  # the data recipes log too when a notebook prepares data on first use
        log_to_stdout(name)
    if run_by_runner():
        text_progress_bars_to_terminal()
    warnings.showwarning = package_warnings_in_words()
    if "matplotlib" in sys.modules and "inline" in str(sys.modules["matplotlib"].get_backend()):
        import matplotlib_inline.backend_inline  # noqa: F401  registers the figure formatter that we wrap
    install_alt_text()
    shell = sys.modules["IPython"].get_ipython()
    shell.events.register("pre_run_cell", lambda *_: install_alt_text(shell))  # the backend may come later
