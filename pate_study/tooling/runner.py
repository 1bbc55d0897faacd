"""Execute the notebooks through papermill (``make figures``) and rebuild ``figures/INDEX.md``.

For every ``notebooks/<stem>.ipynb`` the parameters come from ``configs/<stem>/<profile>.yaml``; the runner
adds ``profile`` and ``output_dir`` (``figures/<stem>``). What one run does, in order:

0. **Checks.** Every parameter file of the run is checked against its notebook's parameters cell (papermill's
   reading of it) before anything else: an unknown name (with the nearest known one), a value of another type than
   the notebook's default, a YAML syntax error (line and column) is one line each, naming the file, the parameter,
   what was expected and what was found; nothing runs until all are fixed (exit status 2). One run per checkout
   (``build/figures.lock``, :func:`run_lock`): a second one stops at once, naming the first's process id. Once
   the checks have passed, staging folders left by an interrupted run (``figures/.tmp-<stem>-<profile>``,
   ``figures/.old-<stem>-<pid>``) are removed, recognised by the marker file the runner writes beside them
   (:data:`STAGING_MARKER`): a folder of such a name without it is the user's and is kept.
1. **Data.** It prepares the datasets the notebooks read (:data:`NOTEBOOK_DATASETS`) through the data recipes'
   command line, mirror first, then the official URLs, each file verified (``--data network``, the default);
   ``--data offline`` uses the mirror only and never touches the network; ``--data skip`` prepares nothing.
   Size limit: the runner fetches what ``python -m data_recipes prepare NAME`` fetches without ``--allow-large``,
   i.e. every file its recipe does not flag ``large`` (the recipes flag downloads over 1 GB: today only Audio Set's
   2.4 GB unbal_train features) and never the opt-in raw audio (``audioset-audio``). A dataset that cannot be
   prepared (offline, download failure, checksum) is reported and the notebooks fall back as they always do
   (mirror, else a synthetic stand-in, stamped as such).
2. **Notebooks.** Each runs with papermill's cell progress bar (cell N of M) and an estimate from the last run's
   ``build/timings.<profile>.json``; the package's long loops (tqdm) print to this terminal too (see
   :mod:`pate_study.reporting.session`). Each notebook writes into ``figures/.tmp-<stem>-<profile>``, which replaces its
   output folder as a whole when the notebook succeeds: ``figures/<stem>`` for the paper profile (the other
   profiles' subfolders in it are kept), ``figures/<stem>/<profile>`` for any other (``smoke`` is git-ignored,
   ``gpu`` is committed beside the paper outputs). With it goes the executed notebook
   ``figures/<stem>/<stem>.ipynb`` (outputs kept, volatile metadata stripped: the same seed gives the same bytes).
   ``build/`` gets the executed notebook and its HTML rendering. A failing notebook keeps its previous outputs
   and does not stop the others.
   **Side by side** (``--jobs N``, ``make figures`` passes 2): N notebooks run at once, each in its own worker
   process whose kernel gets one OpenMP/MKL thread (:func:`thread_environment`), longest first from the last
   run's timings (:func:`chain_seconds`), a notebook starting only after those it waits for
   (:data:`NOTEBOOK_AFTER`) have finished. The terminal shows one line per start and finish (and every few
   minutes which notebooks are still running); each notebook's cell bar and the package's progress bars go to
   ``build/<stem>.<profile>.log``. Each notebook has its own staging folder, so two never touch the same files.
   ``--jobs 1`` runs them one after another in this process, in the order given.
3. **Summary.** A table of every notebook's time and outputs by data status, the commands that turn stand-ins
   into real data, and where to read the results; printed and written to ``build/summary.<profile>.md``. The
   command exits non-zero when a notebook failed.

    python -m pate_study.tooling.runner figures --profile paper [--data network|offline|skip] [--jobs 2] \
        [--notebooks 00_dp_primer ...]
    python -m pate_study.tooling.runner index
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import difflib
import fcntl
import json
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import re
import reprlib
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import papermill
import yaml

import data_recipes
from data_recipes import read_manifest

from ..core.env import DATA_ENV, check_writable, data_dir
from ..core.errors import one_line
from ..core.io import atomic_write_text, cache_writable, replace_folder
from ..core.paths import BUILD_DIR, CONFIGS_DIR, FIGURES_DIR, NOTEBOOKS_DIR, REPO_ROOT
from ..reporting.index import write_index
from ..reporting.outputs import NOT_RUN_KEY, PROVENANCE_SUFFIX, read_scalars
from ..reporting.registry import load_registry
from ..reporting.session import RUNNER_ENV

logger = logging.getLogger(__name__)
PROFILES = ("smoke", "paper", "gpu")
#: Profiles every notebook must have; ``gpu`` (the sources' settings for a CUDA machine) only where a notebook has
#: GPU cells: ``make figures PROFILE=gpu`` runs the notebooks that have ``configs/<stem>/gpu.yaml``.
REQUIRED_PROFILES = ("smoke", "paper")
RUNNER_PARAMETERS = ("profile", "output_dir")
DATA_MODES = ("network", "offline", "skip")
#: The profile whose outputs are the committed results in ``figures/<stem>/``; every other profile writes into
#: ``figures/<stem>/<profile>/`` beside them (``smoke`` there is git-ignored), so that a quick pass or a GPU run never
#: replaces the committed paper outputs.
RESULTS_PROFILE = "paper"

#: The data_recipes datasets each notebook reads (its ``data="auto"`` falls back to a stand-in without them).
#: A notebook missing here gets nothing prepared, and the runner says so.
NOTEBOOK_DATASETS = {
    "00_dp_primer": ("pate2018-votes",),
    "01_ecg_student_privacy": ("ecg-heartbeat",),
    "02_web_requests": ("csic2010", "ecml-pkdd2007", "malicious-urls"),
    "03_deeplog_synthetic": ("deeplog-hdfs",),
    "04_audioset_teachers": ("audioset",),
    "05_audioset_multilabel": ("audioset",),
    "06_pate2018_votes": ("pate2018-votes",),
    "07_pate2018_lab": ("pate2018-votes",),
}
#: Recipes whose real data needs an explicit opt-in (large download): the summary names the flag.
OPT_IN = {"audioset": "python -m data_recipes prepare audioset --allow-large   # 2.4 GB"}

STATUS_GROUPS = (
    "real data at paper scale",
    "real data at reduced scale",
    "synthetic stand-in",
    "analytic (no data)",
    "interactive or other profile",
    "GPU-only, not run here",
    "not run",
)


def list_notebooks(notebooks_dir: Path = NOTEBOOKS_DIR) -> list[str]:
    """Stems of the numbered notebooks, in order."""
    return sorted(p.stem for p in Path(notebooks_dir).glob("[0-9][0-9]_*.ipynb"))


class ConfigError(ValueError):
    """A parameter file that does not match its notebook; ``problems`` holds one line per problem (file,
    parameter, expected, found), and the message is those lines joined."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def _config_label(path: Path) -> str:
    path = Path(path)
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


#: A parameter file larger than this is refused before YAML reads it (the shipped ones are under 4 kB).
MAX_CONFIG_BYTES = 1 << 20
#: How many characters of a value a message quotes (a value can be huge: a YAML alias bomb, a long list).
SHOWN_CHARS = 80


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` bounded (:func:`_bounded_repr`) and cut to ``limit`` characters (with the total length),
    for one-line messages; a value that cannot be printed at all is described by its type."""
    try:
        text = _bounded_repr(value)
    except (RecursionError, MemoryError, ValueError):
        return f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _name(name: object) -> str:
    """A parameter name as messages quote it: as written when it is a short string, else :func:`shown`."""
    return name if isinstance(name, str) and len(name) <= SHOWN_CHARS else shown(name)


def _bounded_repr(value: object) -> str:
    """The repr of ``value`` with containers bounded (:mod:`reprlib`: at most a few elements per level, a few
    levels deep), so that quoting a huge value costs microseconds, not its whole size."""
    bounded = reprlib.Repr()
    bounded.maxlevel, bounded.maxlist, bounded.maxdict, bounded.maxstring, bounded.maxother = 3, 6, 6, 60, 60
    return bounded.repr(value)


class ParameterFileRefused(yaml.MarkedYAMLError):
    """Well-formed YAML that a parameter file may not contain: a key given twice, an alias (``*name``)."""


class ParameterFileLoader(yaml.SafeLoader):
    """YAML's safe loader, stricter for parameter files: a key given twice is refused (YAML says keys are unique;
    PyYAML keeps the last silently), and so is every alias (``&name`` / ``*name``): a parameter file has no
    need of them, and nested aliases expand exponentially ("billion laughs")."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ParameterFileRefused(
                None,
                None,
                f"alias *{event.anchor}: aliases are not accepted in a parameter file; write the value out",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.setdefault(key, key_node.start_mark.line)
            except TypeError:
                continue  # an unhashable key: the safe loader's own error says so
            if first != key_node.start_mark.line:
                raise ParameterFileRefused(
                    None, None, f"{_name(key)} given twice (first on line {first + 1}); keep one", key_node.start_mark
                )
        return super().construct_mapping(node, deep)


def read_config(path: Path) -> dict:
    """The mapping in a YAML parameter file; ConfigError naming the file, line and column of a syntax error, a
    key given twice or an alias (:class:`ParameterFileLoader`), and the file when it is empty or too large."""
    label = _config_label(path)
    try:
        if Path(path).stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                [
                    f"{label}: {Path(path).stat().st_size:,} bytes, more than a parameter file needs "
                    f"(at most {MAX_CONFIG_BYTES:,}); expected `name: value` lines"
                ]
            )
        text = Path(path).read_text(encoding="utf-8")
        params = yaml.load(text, Loader=ParameterFileLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(str(x) for x in (getattr(err, "context", None), getattr(err, "problem", None)) if x)
        if isinstance(err, ParameterFileRefused):
            raise ConfigError([f"{label}{where}: {what}"]) from None
        raise ConfigError(
            [
                f"{label}{where}: YAML syntax error: {what or one_line(err)}; fix the file (YAML: "
                "`name: value`, one per line)"
            ]
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError([f"{label}: unreadable ({err})"]) from None
    if params is None:
        raise ConfigError(
            [
                f"{label}: empty (no parameters); a parameter file sets the notebook's parameters, "
                "`name: value` one per line (copy the other profile's file to start from)"
            ]
        )
    if not isinstance(params, dict):
        raise ConfigError([f"{label}: expected a mapping of parameter names to values, found {_kind(params)}"])
    return params


def load_parameters(stem: str, profile: str, configs_dir: Path | None = None) -> dict:
    """The papermill parameters of notebook ``stem`` for ``profile`` (``configs/<stem>/<profile>.yaml``;
    ``configs_dir`` defaults to the module's :data:`CONFIGS_DIR` at call time, the folder the checks read)."""
    path = Path(CONFIGS_DIR if configs_dir is None else configs_dir) / stem / f"{profile}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"no parameter file {path}: every notebook needs configs/{stem}/{{smoke,paper}}.yaml")
    params = read_config(path)
    clash = [k for k in RUNNER_PARAMETERS if k in params]
    if clash:
        raise ConfigError([f"{_config_label(path)}: {k}: set by the runner, remove it from the file" for k in clash])
    return params


@dataclass(frozen=True)
class Declared:
    """One parameter as the notebook's parameters cell declares it: its default value (:data:`ANY` when the
    default is an expression) and whether ``None`` is allowed (the default is None, or the cell's comment on
    that line says what None means, e.g. ``logmel_head = [64]  # None: the thesis heads``)."""

    default: object
    nullable: bool


def notebook_parameters(notebook: Path) -> dict[str, Declared]:
    """The parameters cell of ``notebook`` (papermill's own reading of it) as ``{name: Declared}``."""
    declared: dict[str, Declared] = {}
    for name, info in papermill.inspect_notebook(str(notebook)).items():
        try:
            default = ast.literal_eval(str(info.get("default")))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            default = ANY
        declared[name] = Declared(default, default is None or "None" in str(info.get("help") or ""))
    return declared


ANY = object()  # a default whose type cannot be read from the parameters cell: any value is accepted

_KINDS = (
    (bool, "true or false"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (tuple, "a list"),
    (dict, "a mapping"),
)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return next((name for t, name in _KINDS if isinstance(value, t)), type(value).__name__)


def _fits(default: object, value: object) -> bool:
    """Whether ``value`` (from YAML) has the type of the notebook's ``default``: numbers widen (an integer where a
    float is expected), lists are checked element by element against the default's elements, and None defaults
    and non-literal defaults accept anything."""
    if default is ANY or default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return False
        return not default or all(any(_fits(d, v) for d in default) for v in value)
    if isinstance(default, dict):
        return isinstance(value, dict)
    return isinstance(value, type(default))


def _is_count(name: object, default: object) -> bool:
    """Whether a parameter is a count (``n_<things>``, the notebooks' naming) whose default is a positive integer:
    such a value below 1 is refused here, naming the file and the parameter, instead of failing inside the
    notebook under whatever internal name the package gives it."""
    return (
        isinstance(name, str)
        and name.startswith("n_")
        and isinstance(default, int)
        and not isinstance(default, bool)
        and default >= 1
    )


def _finite(value: object) -> bool:
    """Whether ``value`` holds no NaN or infinity (YAML's ``.nan``, ``.inf``), in a list at any depth: no notebook
    takes one, and NaN passes every comparison a notebook's own check makes (``nan < 0`` is false)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    return True


def check_config(path: Path, params: dict, declared: dict[str, Declared]) -> list[str]:
    """One line per parameter of ``params`` that its notebook does not declare (with the nearest known name),
    whose value has another type than the notebook's default, that is a count below 1 (:func:`_is_count`) or a
    NaN or infinity (:func:`_finite`): file, parameter, expected, found."""
    label = _config_label(path)
    known = [k for k in declared if k not in RUNNER_PARAMETERS]
    problems = []
    for name, value in params.items():
        if name not in declared:
            near = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
            hint = f"did you mean {near[0]}?" if near else f"known: {', '.join(known)}"
            problems.append(
                f"{label}: {_name(name)}: not a parameter of notebooks/{Path(path).parent.name}.ipynb; {hint}"
            )
            continue
        want = declared[name]
        if _is_count(name, want.default) and _fits(want.default, value) and value < 1:
            problems.append(
                f"{label}: {_name(name)}: expected a count of at least 1 like the notebook's default "
                f"{want.default}, found {shown(value)}"
            )
            continue
        if _fits(want.default, value) and not _finite(value):
            problems.append(
                f"{label}: {_name(name)}: expected a finite number like the notebook's default "
                f"{shown(want.default)}, found {shown(value)}"
            )
            continue
        if value is None and want.nullable or _fits(want.default, value):
            continue
        problems.append(
            f"{label}: {_name(name)}: expected {_kind(want.default)}{' or null' if want.nullable else ''} "
            f"like the notebook's default {shown(want.default)}, found {_kind(value)} {shown(value)}"
        )
    return problems


def check_configs(
    stems: list[str], profile: str, configs_dir: Path | None = None, notebooks_dir: Path | None = None
) -> None:
    """Check every ``configs/<stem>/<profile>.yaml`` of ``stems`` against its notebook's parameters cell (names
    and types) before anything runs; ConfigError listing every problem found, one line each."""
    configs_dir, notebooks_dir = Path(configs_dir or CONFIGS_DIR), Path(notebooks_dir or NOTEBOOKS_DIR)
    problems: list[str] = []
    for stem in stems:
        path = configs_dir / stem / f"{profile}.yaml"
        try:
            params = load_parameters(stem, profile, configs_dir)
        except ConfigError as err:
            problems += err.problems
            continue
        problems += check_config(path, params, notebook_parameters(notebooks_dir / f"{stem}.ipynb"))
    if problems:
        raise ConfigError(problems)


def check_folders(data_mode: str) -> None:
    """Before any long work: ``figures/`` and ``build/`` (and the data folder, unless ``--data skip``) must take
    new files (FolderNotWritableError naming the folder or its variable otherwise); a cache that cannot is
    reported once (results are then computed but not cached)."""
    check_writable(FIGURES_DIR, label=f"figures folder {FIGURES_DIR}")
    check_writable(BUILD_DIR, label=f"build folder {BUILD_DIR}")
    if data_mode != "skip":
        check_writable(data_dir(), label=f"{DATA_ENV}={data_dir()}")
    cache_writable()


#: One figures run per checkout: this file in ``build/`` is locked for the whole run and names its process id.
RUN_LOCK = "figures.lock"


def lock_holder(path: Path) -> int | None:
    """The process id written in the lock file ``path``, or None when it is unreadable or empty."""
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


@contextlib.contextmanager
def run_lock(build_dir: Path | None = None):
    """Hold ``build/figures.lock`` for a whole figures run. Two runs in one checkout would write the same staging
    folders (``.tmp-<stem>-<profile>``), and the second's :func:`remove_stale_staging` would delete the first's live
    ones: a second run stops at once, naming the running one's process id. The lock is an exclusive ``flock`` on a
    file that is never deleted: the kernel drops it when the run's processes end, however they end, so there is no
    stale lock to take over and no window in which two runs both hold it. (Forked notebook workers share it.)"""
    path = Path(BUILD_DIR if build_dir is None else build_dir) / RUN_LOCK
    if path.parent.exists() and not path.parent.is_dir():
        raise ValueError(
            f"{path.parent}: a regular file where the runner keeps its build outputs (a folder); move "
            "it away and run again"
        )
    if path.is_symlink() or path.exists() and not path.is_file():
        what = "a symbolic link" if path.is_symlink() else "a folder" if path.is_dir() else "not a regular file"
        raise ValueError(f"{path}: {what} where the runner keeps its lock file; move it away and run again")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+")
    except OSError as err:
        raise ValueError(
            f"{path}: cannot create the run's lock file ({err.strerror or one_line(err)}); make "
            f"{path.parent} a writable folder"
        ) from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        holder = lock_holder(path)
        raise ValueError(
            f"{path}: another figures run (runner process {holder if holder else 'unknown'}) is using "
            "this checkout; wait for it to finish or stop it, then run again"
        ) from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield path
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


#: The runner marks every folder it stages in ``figures/`` (``.tmp-<stem>-<profile>``) or moves aside there
#: (``.old-<stem>-<pid>``) with a file of the folder's name plus this suffix beside it, written before the folder
#: is filled: only folders so marked are ever removed as left by an interrupted run.
STAGING_MARKER = ".runner-staging"


def staging_marker(folder: Path) -> Path:
    """The marker file of the staging folder ``folder`` (:data:`STAGING_MARKER`)."""
    folder = Path(folder)
    return folder.with_name(folder.name + STAGING_MARKER)


def is_own_staging(folder: Path) -> bool:
    """Whether ``folder`` is a staging or moved-aside folder this tool made (its marker file is beside it; a
    symbolic link never is)."""
    folder = Path(folder)
    return not folder.is_symlink() and staging_marker(folder).is_file()


def remove_own_staging(folder: Path) -> None:
    """Remove the staging folder ``folder`` and its marker, when the marker says the runner made it."""
    if is_own_staging(folder):
        shutil.rmtree(folder, ignore_errors=True)
        staging_marker(folder).unlink(missing_ok=True)


def remove_stale_staging(figures_dir: Path | None = None) -> list[Path]:
    """Remove what an interrupted run left in ``figures/``: staging folders ``.tmp-<stem>-<profile>`` (outputs of a
    notebook that never finished) and ``.old-<stem>-<pid>`` (a swap cut short), recognised by the marker file the
    runner wrote beside them (:func:`staging_marker`); a folder of such a name without it is the user's and is
    kept, with a warning. ``figures_dir`` defaults to the module's :data:`FIGURES_DIR` at call time. Returns the
    folders removed."""
    folder = Path(FIGURES_DIR if figures_dir is None else figures_dir)
    stale = []
    for candidate in sorted(p for pattern in (".tmp-*", ".old-*") for p in folder.glob(pattern)):
        if candidate.name.endswith(STAGING_MARKER):
            if not candidate.with_name(candidate.name[: -len(STAGING_MARKER)]).exists():
                candidate.unlink(missing_ok=True)  # a marker whose folder is already gone
            continue
        if not candidate.is_dir():
            continue
        if not is_own_staging(candidate):
            logger.warning(
                "keeping %s: its name looks like a staging folder, but the runner did not make it (no "
                "marker %s beside it)",
                candidate,
                staging_marker(candidate).name,
            )
            continue
        logger.info("removing %s, left by an interrupted run", candidate)
        remove_own_staging(candidate)
        stale.append(candidate)
    return stale


@contextlib.contextmanager
def runner_environment(profile: str):
    """The kernel's environment: it runs under the runner (outputs stamped with ``profile``, not as an interactive
    run), and draws figures inline whatever ``$MPLBACKEND`` says (CI sets Agg, which would leave the executed
    notebooks without their figures)."""
    previous = {name: os.environ.get(name) for name in (RUNNER_ENV, "MPLBACKEND")}
    os.environ[RUNNER_ENV] = profile
    os.environ.pop("MPLBACKEND", None)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


#: How long a notebook's kernel may take to start (papermill's default, 60 s, ran out on two cores kept busy).
KERNEL_START_S = 180


def execute_notebook(
    stem: str,
    profile: str,
    output_dir: Path,
    build_dir: Path = BUILD_DIR,
    extra_parameters: dict | None = None,
    html: bool = True,
    progress: str | None = None,
    cell_timeout_s: float | None = None,
) -> Path:
    """Run one notebook with papermill; return the executed notebook's path (HTML beside it if ``html``).

    ``progress``: show papermill's per-cell bar with this description (None: no bar). ``cell_timeout_s``: stop
    the notebook when one cell runs longer (papermill's ``execution_timeout``; None: no limit). The executed copy
    in ``build_dir`` is stripped of volatile metadata once the notebook succeeds (see :func:`strip_volatile`).
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    source = NOTEBOOKS_DIR / f"{stem}.ipynb"
    if not source.exists():
        raise FileNotFoundError(f"notebook {source} not found; known: {list_notebooks()}")
    params = load_parameters(stem, profile)
    problems = check_config(CONFIGS_DIR / stem / f"{profile}.yaml", params, notebook_parameters(source))
    if problems:
        raise ConfigError(problems)
    parameters = {**params, **(extra_parameters or {}), "profile": profile, "output_dir": str(Path(output_dir))}
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    executed = build_dir / f"{stem}.{profile}.ipynb"
    bar = {"desc": progress, "unit": "cell", "file": sys.stderr, "leave": True} if progress else False
    with runner_environment(profile):
        papermill.execute_notebook(
            str(source),
            str(executed),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(REPO_ROOT),
            progress_bar=bar,
            log_output=False,
            start_timeout=KERNEL_START_S,
            execution_timeout=cell_timeout_s,
        )
    write_stripped(executed, executed)
    if html:
        export_html(executed)
    return executed


# ----------------------------------------------------------------------------------------------- executed copies
VOLATILE_CELL_METADATA = ("papermill", "execution", "collapsed", "scrolled")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
PROGRESS_LINE = re.compile(r"\d+%\|.*\|\s*\d+/\d+|\d+/\d+ \[[\d:<?]+")  # tqdm's text bar


def _is_progress_output(output: dict) -> bool:
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
            cell["outputs"] = [o for o in cell["outputs"] if not _is_progress_output(o)]
    return nb


def write_stripped(executed: Path, target: Path) -> Path:
    """Write ``executed`` without volatile metadata to ``target`` (atomically; nbformat's canonical layout)."""
    nb = nbformat.read(str(executed), as_version=4)
    stripped = nbformat.from_dict(strip_volatile(nb))
    return atomic_write_text(Path(target), nbformat.writes(stripped) + "\n")


TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"


def point_at_final_folder(notebook: Path, staging: Path, final: Path) -> Path:
    """In the committed copy's injected parameters, name the folder the outputs end up in (``figures/<stem>``),
    not the staging folder they were written to, so that a reader who reruns the copy writes where it reads."""
    nb = nbformat.read(str(notebook), as_version=4)
    staged, kept = (json.dumps(str(p.relative_to(REPO_ROOT))) for p in (staging, final))
    for cell in nb.cells:
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            cell.source = cell.source.replace(f"output_dir = {staged}", f"output_dir = {kept}")
    return atomic_write_text(notebook, nbformat.writes(nb) + "\n")


def export_html(executed: Path) -> Path:
    """Render an executed notebook to HTML beside it (JupyterLab's layout, figures with their alternative text)."""
    from nbconvert import HTMLExporter  # heavy (~1 s, jinja2 and its exporters): only when HTML is written

    exporter = HTMLExporter(template_name="lab_alt", extra_template_basedirs=[str(TEMPLATES_DIR)])
    body, _ = exporter.from_filename(str(executed))
    return atomic_write_text(executed.with_suffix(".html"), body)


# ----------------------------------------------------------------------------------------------------------- data
@dataclass
class DataPreparation:
    """The outcome of preparing one dataset before the notebooks ran."""

    name: str
    ok: bool
    detail: str


def datasets_for(stems: list[str]) -> list[str]:
    """The datasets the notebooks ``stems`` read, each once, in first-use order."""
    names: list[str] = []
    for stem in stems:
        for name in NOTEBOOK_DATASETS.get(stem, ()):
            if name not in names:
                names.append(name)
    return names


def prepare_datasets(names: list[str], mode: str) -> list[DataPreparation]:
    """Prepare ``names`` through ``python -m data_recipes prepare`` (``--offline`` when ``mode`` is offline).

    Never raises for a dataset that cannot be prepared: its notebook falls back (mirror, else stand-in). Already
    prepared datasets are skipped by the recipes themselves, so a second run costs a second or two.
    """
    if mode not in DATA_MODES:
        raise ValueError(f"data mode must be one of {DATA_MODES}, got {mode!r}")
    if mode == "skip":
        return []
    results = []
    for name in names:
        command = [sys.executable, "-m", "data_recipes", "prepare", name] + (["--offline"] if mode == "offline" else [])
        logger.info(
            "preparing %s (%s): %s",
            name,
            "mirror only" if mode == "offline" else "mirror, then network",
            " ".join(command[1:]),
        )
        try:
            done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)
            lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
            ok = done.returncode == 0 and read_manifest(name) is not None  # prepared and verified
            detail = next(
                (line for line in lines if line.startswith(("[ok]", "[ERROR]"))),
                lines[-1] if lines else f"exit status {done.returncode}",
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            ok, detail = False, f"{type(err).__name__}: {err}"
        (logger.info if ok else logger.warning)(
            "%s: %s",
            name,
            detail if ok else f"not prepared ({detail}); its notebooks fall back to the mirror or a synthetic stand-in",
        )
        results.append(DataPreparation(name, ok, detail))
    return results


# ----------------------------------------------------------------------------------------------------------- timings
def read_timings(profile: str, build_dir: Path = BUILD_DIR) -> dict[str, float]:
    """Seconds per notebook from the last run with ``profile`` (``{}`` when there was none or it is unreadable)."""
    path = Path(build_dir) / f"timings.{profile}.json"
    try:
        timings = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return {k: float(v) for k, v in timings.items() if isinstance(v, (int, float))} if isinstance(timings, dict) else {}


def format_duration(seconds: float) -> str:
    """``754.2`` -> ``12 min 34 s``; ``8.04`` -> ``8.0 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min {secs} s"


def progress_description(stem: str, position: int, total: int, last: dict[str, float], remaining: list[str]) -> str:
    """``[2/3] 01_ecg (last run 4 min 2 s; about 9 min left in all)`` from the previous run's timings."""
    estimate = f"last run {format_duration(last[stem])}" if stem in last else "no previous timing"
    known = [last[s] for s in remaining if s in last]
    if known:
        estimate += f"; about {format_duration(sum(known))} left in all" + ("" if len(known) == len(remaining) else "+")
    return f"[{position}/{total}] {stem} ({estimate})"


# ----------------------------------------------------------------------------------------------------------- schedule
#: The notebooks each notebook waits for when both are in a run, with the reason: it starts only after they have
#: finished (failed or not: it can always run alone). Every other pair may run side by side (``--jobs`` above 1).
#: Checked for every notebook: the datasets are prepared once, before any notebook starts (:func:`prepare_datasets`;
#: under the runner 00 and 07 never prepare the votes themselves); 00, 06 and 07 only read the prepared PATE 2018
#: votes (07 reads no output of 06); 01 and 02 cache their own ensembles under their own keys (their datasets
#: differ); no notebook reads another's ``figures/`` folder; ``figures/INDEX.md``, the timings and the summary are
#: written once, by this process, after the last notebook.
NOTEBOOK_AFTER: dict[str, dict[str, str]] = {
    "05_audioset_multilabel": {
        "04_audioset_teachers": "05 reads the votes of 04's eight teacher ensembles from the cache; started before "
        "04 has stored them, it trains the same ensembles itself (minutes of duplicated work, "
        "the same numbers)",
    },
}

#: Seconds per notebook of the paper profile in one fresh-clone ``make figures DATA=offline`` (2026-11-24,
#: ``OMP_NUM_THREADS=1``, one after another; docs/reproducibility.md): the schedule's estimate for a notebook
#: that ``build/timings.paper.json`` lacks, as in a fresh clone, where ``build/`` is empty. Notebook 04's entry is
#: the CPU time of its run after the ablations grew to 5 teachers x 3 seeds and thesis-length learning-rate arms
#: (689 s user, 2026-11-24), not its older wall time; notebook 05's the CPU time of its run with students on the
#: recipe's full 3,000-step schedule (535 s user, 2026-11-24).
REFERENCE_SECONDS: dict[str, dict[str, float]] = {
    "paper": {
        "00_dp_primer": 31.9,
        "01_ecg_student_privacy": 124.0,
        "02_web_requests": 642.0,
        "03_deeplog_synthetic": 109.0,
        "04_audioset_teachers": 528.0,
        "05_audioset_multilabel": 502.0,
        "06_pate2018_votes": 43.0,
        "07_pate2018_lab": 4.8,
    },
}

#: The variables that set a kernel's BLAS/OpenMP threads (torch takes its intra-op thread count from OpenMP's).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: With notebooks side by side, a line every so many seconds says which are still running.
HEARTBEAT_SECONDS = 300.0
#: After Ctrl-C, how long a worker may take to stop (its kernel and its staging folder) before it is terminated.
STOP_GRACE_SECONDS = 10.0


def waits_for(stems: list[str], after: dict[str, dict[str, str]] | None = None) -> dict[str, set[str]]:
    """For each notebook of ``stems``, the notebooks of ``stems`` it must wait for (:data:`NOTEBOOK_AFTER`)."""
    after = NOTEBOOK_AFTER if after is None else after
    return {stem: {other for other in after.get(stem, {}) if other in stems and other != stem} for stem in stems}


def sequential_order(stems: list[str], after: dict[str, dict[str, str]] | None = None) -> list[str]:
    """``stems`` in the order given, except that a notebook moves after those it waits for (``--jobs 1``; the
    default order, by number, already has every notebook after those it waits for)."""
    repeated = sorted({s for s in stems if stems.count(s) > 1})
    if repeated:
        raise ValueError(f"notebooks given more than once: {', '.join(repeated)}; name each once")
    deps, order = waits_for(stems, after), []
    while len(order) < len(stems):
        placed = set(order)
        ready = [s for s in stems if s not in placed and deps[s] <= placed]
        if not ready:
            raise ValueError(f"NOTEBOOK_AFTER has a cycle among {[s for s in stems if s not in placed]}")
        order.append(ready[0])
    return order


def expected_seconds(stems: list[str], profile: str, last: dict[str, float]) -> dict[str, float]:
    """Each notebook's expected time: the last run's (``build/timings.<profile>.json``), else
    :data:`REFERENCE_SECONDS`; a notebook with neither is left out (:func:`chain_seconds` puts it first)."""
    reference = REFERENCE_SECONDS.get(profile, {})
    return {s: last.get(s, reference.get(s)) for s in stems if s in last or s in reference}


def chain_seconds(
    stems: list[str], seconds: dict[str, float], after: dict[str, dict[str, str]] | None = None
) -> dict[str, float]:
    """Each notebook's priority: its own expected time plus the longest chain of notebooks that wait for it (the
    time from its start to the end of everything that depends on it). Longest first by this measure is the
    classic list-scheduling rule for tasks with precedence (Hu 1961; Graham 1969: within a factor 2 - 1/N of
    the shortest schedule on N workers). A notebook without an expected time counts as infinitely long: it runs
    first, so that the next run knows its time."""
    deps = waits_for(stems, after)
    dependents = {s: [d for d in stems if s in deps[d]] for s in stems}
    chain: dict[str, float] = {}
    for stem in reversed(sequential_order(stems, after)):  # every dependent before the notebooks it waits for
        tail = max((chain[d] for d in dependents[stem]), default=0.0)
        chain[stem] = seconds.get(stem, math.inf) + tail
    return chain


def next_notebook(
    pending: list[str], finished: set[str], chain: dict[str, float], deps: dict[str, set[str]]
) -> str | None:
    """The notebook to start now: of ``pending`` those whose notebooks to wait for have all finished, the one
    with the longest chain (ties: the first in ``pending``); None when none can start yet."""
    ready = [s for s in pending if deps.get(s, set()) <= finished]
    return max(ready, key=lambda s: (chain[s], -pending.index(s))) if ready else None


@dataclass(frozen=True)
class Slot:
    """One notebook in a planned schedule: the worker it runs on and when it starts and ends (seconds)."""

    stem: str
    worker: int
    start: float
    end: float


def plan_schedule(
    stems: list[str], seconds: dict[str, float], jobs: int, after: dict[str, dict[str, str]] | None = None
) -> list[Slot]:
    """The schedule ``--jobs`` runs if every notebook takes its ``seconds`` (unknown: 0 s): whenever a worker is
    free, it starts :func:`next_notebook`. ``jobs=1`` gives :func:`sequential_order`. Slots in start order."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if jobs == 1:
        order, clock, slots = sequential_order(stems, after), 0.0, []
        for stem in order:
            slots.append(Slot(stem, 0, clock, clock + seconds.get(stem, 0.0)))
            clock = slots[-1].end
        return slots
    deps, chain = waits_for(stems, after), chain_seconds(stems, seconds, after)
    pending, finished, running, slots, clock = list(stems), set(), [], [], 0.0
    free = list(range(jobs))
    while pending or running:
        while free and (stem := next_notebook(pending, finished, chain, deps)) is not None:
            pending.remove(stem)
            slot = Slot(stem, free.pop(0), clock, clock + seconds.get(stem, 0.0))
            slots.append(slot)
            running.append(slot)
        clock = min(slot.end for slot in running)
        for slot in [r for r in running if r.end == clock]:
            running.remove(slot)
            finished.add(slot.stem)
            free.append(slot.worker)
        free.sort()
    return slots


def thread_environment(jobs: int, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The thread variables a worker sets for its kernel when ``jobs`` notebooks share the CPU: one OpenMP/MKL
    thread each (two kernels with a thread per core each would wait for each other's descheduled threads),
    except for a variable the caller's environment already sets (its value wins). ``jobs=1``: nothing."""
    environ = os.environ if environ is None else environ
    if jobs <= 1:
        return {}
    return {name: "1" for name in THREAD_VARIABLES if not environ.get(name)}


def log_path(stem: str, profile: str) -> Path:
    """Where a notebook run side by side writes its cell bar, progress bars and log lines (shown relative to the
    repository when it is inside it)."""
    path = BUILD_DIR / f"{stem}.{profile}.log"
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path


# ----------------------------------------------------------------------------------------------------------- summary
@dataclass
class NotebookRun:
    """What happened to one notebook in a ``make figures`` run."""

    stem: str
    seconds: float
    error: str | None = None
    partial_copy: Path | None = None
    outputs: dict[str, list[str]] = field(default_factory=dict)  # status group -> output names

    @property
    def ok(self) -> bool:
        return self.error is None


def _registry_status() -> dict[str, str]:
    try:
        return {item.id: item.status for item in load_registry()}
    except (OSError, ValueError):
        return {}


def classify_output(data: str, registry_status: str | None, profile: str, run_profile: str) -> str:
    """The summary group of one output from its provenance ``data`` line and its registry status."""
    text = data.strip().lower()
    if profile != run_profile:
        return "interactive or other profile"
    if text.startswith(("analytic", "simulated")) or registry_status == "regenerated (analytic)":
        return "analytic (no data)"  # closed forms and simulations of a mechanism: no dataset behind them
    if "synthetic" in text and not text.startswith("real"):
        return "synthetic stand-in"
    if registry_status == "real data at paper scale" and run_profile == "paper":  # smoke is reduced by design
        return "real data at paper scale"
    return "real data at reduced scale"


def notebook_outputs(
    stem: str, run_profile: str, figures_dir: Path = FIGURES_DIR, folder: Path | None = None
) -> dict[str, list[str]]:
    """Output names of ``figures/<stem>`` (or of ``folder``) grouped by status (see :data:`STATUS_GROUPS`)."""
    folder = Path(folder) if folder is not None else Path(figures_dir) / stem
    statuses = _registry_status()
    groups: dict[str, list[str]] = {}
    for sidecar in sorted(folder.glob(f"*{PROVENANCE_SUFFIX}")):
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        name = sidecar.name[: -len(PROVENANCE_SUFFIX)]
        group = classify_output(
            str(record.get("data", "")), statuses.get(name), str(record.get("profile")), run_profile
        )
        groups.setdefault(group, []).append(name)
    for item, reason in read_scalars(folder).get(NOT_RUN_KEY, {}).items() if folder.exists() else []:
        group = "GPU-only, not run here" if str(reason).lstrip().upper().startswith("GPU") else "not run"
        groups.setdefault(group, []).append(f"{item} ({reason})")
    return groups


def real_data_commands(stem: str) -> list[str]:
    """Commands that would give ``stem`` the real data it lacks (its datasets not prepared yet), each with the
    recipe's own advice when the data cannot be downloaded."""
    commands = []
    for name in NOTEBOOK_DATASETS.get(stem, ()):
        if data_recipes.read_manifest(name) is not None:
            continue
        command = OPT_IN.get(name, f"make data-{name}")
        how = " ".join(str(getattr(data_recipes.get_recipe(name), "how_to_get", "")).split())
        commands.append(f"`{command}`" + (f" (how to get it: {how})" if how else ""))
    return commands


def _error_line(err: BaseException) -> str:
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    if ename:
        return f"{ename}: {evalue}".strip().splitlines()[-1] if evalue else ename
    return one_line(err) or type(err).__name__


def summary_markdown(runs: list[NotebookRun], profile: str, data: list[DataPreparation], data_mode: str) -> str:
    """The end-of-run table: time, outputs by status, how to get real data, where to read, failures."""
    lines = [f"# make figures: profile {profile}", ""]
    if data_mode == "skip":
        lines.append("Data: not prepared (`--data skip`); notebooks used what was already prepared or the mirror.")
    elif data:
        prepared = ", ".join(f"{d.name} {'ok' if d.ok else 'NOT prepared'}" for d in data)
        lines.append(f"Data ({'mirror only' if data_mode == 'offline' else 'mirror, then network'}): {prepared}.")
    lines += ["", "| notebook | time | result | outputs by data status |", "|---|---|---|---|"]
    for run in runs:
        groups = "; ".join(f"**{g}**: {', '.join(run.outputs[g])}" for g in STATUS_GROUPS if g in run.outputs)
        result = "ok" if run.ok else f"FAILED: {run.error}"
        lines.append(f"| {run.stem} | {format_duration(run.seconds)} | {result} | {groups or 'no outputs'} |")
    missing = [(run, real_data_commands(run.stem)) for run in runs]
    if any(cmds for _, cmds in missing):
        lines += ["", "Real data not prepared (then run `make figures` again):"]
        lines += [
            f"- {run.stem} ({'synthetic stand-in' if 'synthetic stand-in' in run.outputs else 'ran without it'}): {cmd}"
            for run, cmds in missing
            for cmd in cmds
        ]
    failed = [run for run in runs if not run.ok]
    if failed:
        lines += ["", "Failed notebooks (previous outputs kept):"]
        lines += [
            f"- {run.stem}: `{run.error}`; "
            + (f"partial executed copy: `{run.partial_copy}`" if run.partial_copy else "no executed copy was written")
            for run in failed
        ]
    lines += [
        "",
        f"Read the results: executed notebooks {results_folder_text(profile)}, HTML "
        f"`build/<stem>.{profile}.html`, the catalogue `figures/INDEX.md`.",
    ]
    return "\n".join(lines) + "\n"


def results_folder_text(profile: str) -> str:
    """Where this profile's executed notebooks are, as the summary names them: the committed ``figures/<stem>/``
    for the paper profile, this run's own ``figures/<stem>/<profile>/`` copy (git-ignored) for any other."""
    folder = output_folder("<stem>", profile, figures_dir=Path("figures")).as_posix()
    if profile == RESULTS_PROFILE:
        return f"`{folder}/<stem>.ipynb` (committed)"
    return f"`{folder}/<stem>.ipynb` (this {profile} run's copy; the committed ones are in `figures/<stem>/`)"


# ----------------------------------------------------------------------------------------------------------- figures
def output_folder(stem: str, profile: str, figures_dir: Path | None = None) -> Path:
    """Where ``make figures`` puts a notebook's outputs: ``figures/<stem>`` for the paper profile, else
    ``figures/<stem>/<profile>`` (see :data:`RESULTS_PROFILE`)."""
    folder = Path(figures_dir if figures_dir is not None else FIGURES_DIR) / stem
    return folder if profile == RESULTS_PROFILE else folder / profile


def staging_folder(stem: str, profile: str) -> Path:
    """Where a notebook's run writes before its outputs are swapped in: ``figures/.tmp-<stem>-<profile>``."""
    return FIGURES_DIR / f".tmp-{stem}-{profile}"


def make_staging(staging: Path) -> bool:
    """Mark ``staging`` as this run's staging folder (its marker file, :func:`staging_marker`, written before the
    notebook fills the folder), first removing one a dead run of this tool left there; a folder of that name the
    runner did not make is the user's: FileExistsError naming it, and nothing is removed. Returns True (the
    folder is this run's to remove)."""
    staging = Path(staging)
    if staging.exists() or staging.is_symlink():
        if not is_own_staging(staging):
            raise FileExistsError(
                f"{staging} exists and was not made by the runner (no marker "
                f"{staging_marker(staging).name} beside it); move it away and run again"
            )
        remove_own_staging(staging)
    staging.parent.mkdir(parents=True, exist_ok=True)
    staging_marker(staging).write_text(f"staging folder of runner process {os.getpid()}\n")
    return True


def keep_profile_folders(final: Path, staging: Path) -> list[str]:
    """Copy the other profiles' output folders (``final/<profile>``) into ``staging`` before ``staging`` replaces
    ``final``, so that a paper run keeps the GPU run's outputs beside it; return the names copied."""
    kept = []
    for profile in PROFILES:
        folder = Path(final) / profile
        if profile != RESULTS_PROFILE and folder.is_dir() and not (Path(staging) / profile).exists():
            shutil.copytree(folder, Path(staging) / profile)
            kept.append(profile)
    return kept


def run_notebook(stem: str, profile: str, progress: str | None = None) -> NotebookRun:
    """Execute one notebook into its staging folder ``figures/.tmp-<stem>-<profile>`` and swap that in for its
    output folder when it succeeds (the other profiles' subfolders kept); on failure its previous outputs stay
    and the returned run carries the error. No staging folder stays behind, not even on Ctrl-C."""
    start = time.perf_counter()
    staging = staging_folder(stem, profile)
    final = output_folder(stem, profile)
    run = NotebookRun(stem, 0.0)
    made = False
    try:
        made = make_staging(staging)
        executed = execute_notebook(stem, profile, staging.relative_to(REPO_ROOT), progress=progress)
        committed = write_stripped(executed, staging / f"{stem}.ipynb")
        point_at_final_folder(committed, staging, final)
        keep_profile_folders(final, staging)
        final.parent.mkdir(parents=True, exist_ok=True)
        replace_folder(staging, final, marker=STAGING_MARKER)
    except Exception as err:  # report every failing notebook, then fail
        run.error = _error_line(err)
        partial = BUILD_DIR / f"{stem}.{profile}.ipynb"
        run.partial_copy = partial.relative_to(REPO_ROOT) if partial.exists() else None
        logger.error(
            "%s failed: %s (its previous outputs are kept; %s)",
            stem,
            run.error,
            f"partial copy {run.partial_copy}" if run.partial_copy else "no executed copy was written",
        )
    finally:  # also on Ctrl-C: no half-written staging folder stays behind (only the one made here)
        if made:
            remove_own_staging(staging)
    run.seconds = round(time.perf_counter() - start, 1)
    if run.ok:
        run.outputs = notebook_outputs(stem, profile, folder=final)
    return run


def run_one_after_another(stems: list[str], profile: str, last: dict[str, float]) -> list[NotebookRun]:
    """``--jobs 1``: the notebooks in this process, in :func:`sequential_order`, each with its cell bar here."""
    order, runs = sequential_order(stems), []
    for position, stem in enumerate(order, start=1):
        description = progress_description(stem, position, len(order), last, order[position - 1 :])
        logger.info("running %s", description)
        runs.append(run_notebook(stem, profile, progress=description))
        logger.info("%s took %s", stem, format_duration(runs[-1].seconds))
    return runs


def _notebook_worker(connection, stem: str, profile: str, progress: str, log: Path, threads: dict[str, str]) -> None:
    """A worker process of :func:`run_side_by_side`: its stdout and stderr (which its kernel inherits) go to
    ``log``, its kernel gets ``threads``; it sends the :class:`NotebookRun` back through ``connection``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as stream:
        os.dup2(stream.fileno(), 1)
        os.dup2(stream.fileno(), 2)
    os.environ.update(threads)
    connection.send(run_notebook(stem, profile, progress=progress))
    connection.close()


def _received(connection) -> NotebookRun | None:
    """The run a worker sent, or None when it stopped without sending one (killed, or its process crashed)."""
    try:
        return connection.recv() if connection.poll() else None
    except (EOFError, OSError):
        return None


def _last_run(stem: str, last: dict[str, float], profile: str) -> str:
    if stem in last:
        return f"last run {format_duration(last[stem])}"
    reference = REFERENCE_SECONDS.get(profile, {}).get(stem)
    return f"reference run {format_duration(reference)}" if reference is not None else "no previous timing"


def run_side_by_side(stems: list[str], profile: str, last: dict[str, float], jobs: int) -> list[NotebookRun]:
    """``--jobs N`` (N > 1): the notebooks in N worker processes (forked, one per notebook), longest chain first
    (:func:`chain_seconds` on :func:`expected_seconds`), each after the notebooks it waits for; one log line
    per start and per finish. Returns the runs in the order of ``stems``."""
    context = multiprocessing.get_context("fork")
    deps = waits_for(stems)
    seconds = expected_seconds(stems, profile, last)
    chain = chain_seconds(stems, seconds)
    threads = thread_environment(jobs)
    kept = [
        f"{name}={os.environ[name]}" for name in THREAD_VARIABLES if name not in threads and os.environ[name] != "1"
    ]
    if kept:
        logger.warning(
            "%d notebooks side by side with %s from the environment in each kernel (unset, each "
            "kernel would get one thread)",
            jobs,
            ", ".join(kept),
        )
    if len(seconds) == len(stems):
        plan = plan_schedule(stems, seconds, jobs)
        logger.info(
            "%d notebooks, %d side by side, longest first (%s): about %s from the timings of the last "
            "run (%s one after another)",
            len(stems),
            jobs,
            ", ".join(slot.stem for slot in plan),
            format_duration(max(slot.end for slot in plan)),
            format_duration(sum(seconds.values())),
        )
    pending, finished, runs, running = list(stems), set(), {}, {}
    try:
        while pending or running:
            while len(running) < jobs and (stem := next_notebook(pending, finished, chain, deps)) is not None:
                pending.remove(stem)
                position = len(runs) + len(running) + 1
                receive, send = context.Pipe(duplex=False)
                log = REPO_ROOT / log_path(stem, profile)
                bar = f"{stem} ({_last_run(stem, last, profile)})"
                worker = context.Process(
                    target=_notebook_worker, name=f"notebook {stem}", args=(send, stem, profile, bar, log, threads)
                )
                sys.stdout.flush()
                sys.stderr.flush()  # nothing buffered here is written twice by the forked worker
                worker.start()
                send.close()
                running[worker.sentinel] = (stem, worker, receive, time.perf_counter(), position)
                logger.info(
                    "[%d/%d] started %s (%s; progress in %s)",
                    position,
                    len(stems),
                    stem,
                    _last_run(stem, last, profile),
                    log_path(stem, profile),
                )
            done = multiprocessing.connection.wait(list(running), timeout=HEARTBEAT_SECONDS)
            if not done:
                logger.info(
                    "still running: %s",
                    ", ".join(
                        f"{stem} {format_duration(time.perf_counter() - began)} ({_last_run(stem, last, profile)})"
                        for stem, _, _, began, _ in running.values()
                    ),
                )
            for sentinel in done:
                stem, worker, receive, began, position = running.pop(sentinel)
                worker.join()
                run = _received(receive) or NotebookRun(
                    stem,
                    round(time.perf_counter() - began, 1),
                    error=f"its worker process stopped (exit status {worker.exitcode}); see {log_path(stem, profile)}",
                )
                receive.close()
                runs[stem] = run
                finished.add(stem)
                if run.ok:
                    logger.info(
                        "[%d/%d] finished %s in %s (%s)",
                        position,
                        len(stems),
                        stem,
                        format_duration(run.seconds),
                        _last_run(stem, last, profile),
                    )
                else:
                    logger.error(
                        "[%d/%d] %s FAILED after %s: %s (previous outputs kept; log %s)",
                        position,
                        len(stems),
                        stem,
                        format_duration(run.seconds),
                        run.error,
                        log_path(stem, profile),
                    )
    finally:  # Ctrl-C reaches the workers too (same process group): they remove their staging folders and stop
        for stem, worker, receive, _, _ in running.values():
            worker.join(timeout=STOP_GRACE_SECONDS)
            if worker.is_alive():  # one that ignores the signal or hangs: stopped here, its staging folder removed
                logger.warning("%s did not stop within %.0f s: terminating it", stem, STOP_GRACE_SECONDS)
                worker.terminate()
                worker.join()
                remove_own_staging(staging_folder(stem, profile))
            receive.close()
    return [runs[stem] for stem in stems]


def run_figures(profile: str, notebooks: list[str] | None = None, data_mode: str = "network", jobs: int = 1) -> int:
    """Prepare data, execute the notebooks into ``figures/`` (``jobs`` of them side by side), rebuild the index,
    print the summary; return the number of failed notebooks."""
    if jobs < 1:
        raise ValueError(f"--jobs {jobs}: expected a number of notebooks to run at once, at least 1")
    stems = notebooks or list_notebooks()
    unknown = [s for s in stems if s not in list_notebooks()]
    if unknown:
        raise ValueError(f"--notebooks {unknown}: no such notebook; known: {list_notebooks()}")
    duplicated = sorted({s for s in stems if stems.count(s) > 1})
    if duplicated:
        raise ValueError(f"--notebooks: {', '.join(duplicated)} given more than once; name each notebook once")
    if profile not in REQUIRED_PROFILES:
        without = [s for s in stems if not (CONFIGS_DIR / s / f"{profile}.yaml").exists()]
        if without and notebooks:  # asked for by name: running nothing would look like success
            having = [s for s in list_notebooks() if (CONFIGS_DIR / s / f"{profile}.yaml").exists()]
            raise ValueError(
                f"--profile {profile} --notebooks {' '.join(without)}: no configs/<stem>/{profile}.yaml "
                f"for {', '.join(without)}; the {profile} profile exists for: "
                f"{', '.join(having) or 'no notebook'}"
            )
        if without:
            logger.info("profile %s: skipping %s (no configs/<stem>/%s.yaml)", profile, without, profile)
        stems = [s for s in stems if s not in without]
        if not stems:
            raise ValueError(f"--profile {profile}: no notebook has configs/<stem>/{profile}.yaml; nothing to run")
    with run_lock():  # one run per checkout, so every staging folder found now is a dead run's
        return run_figures_locked(stems, profile, data_mode, jobs)


def run_figures_locked(stems: list[str], profile: str, data_mode: str, jobs: int) -> int:
    """:func:`run_figures` once it holds the checkout's run lock (:func:`run_lock`)."""
    check_configs(stems, profile)  # every parameter file against its notebook, before data or notebooks run
    check_folders(data_mode)
    remove_stale_staging()  # once the checks have passed, before any notebook starts
    for stem in stems:
        if stem not in NOTEBOOK_DATASETS:
            logger.warning(
                "%s: no datasets listed in pate_study.tooling.runner.NOTEBOOK_DATASETS; nothing prepared for it", stem
            )
    data = prepare_datasets(datasets_for(stems), data_mode)  # once, before any notebook starts
    last = read_timings(profile, BUILD_DIR)
    jobs = min(jobs, len(stems)) or 1
    if jobs > 1 and "fork" not in multiprocessing.get_all_start_methods():
        logger.warning("--jobs %d needs the fork start method, which this platform lacks: one after another", jobs)
        jobs = 1
    BUILD_DIR.mkdir(exist_ok=True)
    runs = run_side_by_side(stems, profile, last, jobs) if jobs > 1 else run_one_after_another(stems, profile, last)
    timings = {**last, **{run.stem: run.seconds for run in runs if run.ok}}
    atomic_write_text(BUILD_DIR / f"timings.{profile}.json", json.dumps(timings, indent=2, sort_keys=True) + "\n")
    write_index()
    summary = summary_markdown(runs, profile, data, data_mode)
    atomic_write_text(BUILD_DIR / f"summary.{profile}.md", summary)
    print("\n" + summary + f"(also in {(BUILD_DIR / f'summary.{profile}.md').relative_to(REPO_ROOT)})", flush=True)
    return sum(not run.ok for run in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pate_study.tooling.runner", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    figures = sub.add_parser("figures", help="prepare data, execute notebooks, rebuild figures/INDEX.md, summarise")
    figures.add_argument("--profile", default="paper", choices=PROFILES)
    figures.add_argument("--notebooks", nargs="*", help="notebook stems (default: all)")
    figures.add_argument(
        "--data",
        default="network",
        choices=DATA_MODES,
        help="prepare the notebooks' datasets first: mirror then network (default), mirror only "
        "(offline: never touches the network), or not at all",
    )
    figures.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="notebooks run side by side, each with one OpenMP thread, longest first (default 1: one "
        "after another; make figures passes JOBS=2)",
    )
    sub.add_parser("index", help="rebuild figures/INDEX.md only")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    if args.command == "index":
        if not FIGURES_DIR.is_dir():
            print(
                f"error: {FIGURES_DIR}: no figures folder (expected the committed figures/ of a checkout); "
                "run from a complete checkout, or `make figures` first",
                file=sys.stderr,
            )
            return 2
        write_index()
        return 0
    try:
        return 1 if run_figures(args.profile, args.notebooks, args.data, args.jobs) else 0
    except KeyboardInterrupt:  # the clean-up ran on the way out (staging folders, workers): no traceback
        print(
            "interrupted (Ctrl-C): stopped; the notebooks that had not finished kept their previous outputs",
            file=sys.stderr,
        )
        return 130
    except ConfigError as err:
        for line in err.problems:
            print(f"error: {line}", file=sys.stderr)
        print("nothing was run; fix the parameter files above", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
