"""The command line of ``make figures`` and its run lock: checks first (every parameter file against its notebook,
every notebook's manifest, the folders), then one run per checkout (``build/figures.lock``), the stale staging
folders removed, the datasets prepared, the notebooks run, ``figures/INDEX.md``, the timings and the summary written.
A user's mistake is one line per problem and exit status 2, never a traceback, and so is a write that fails (a full
disk, a read-only folder: the path and the cause); Ctrl-C is one line and 130."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import logging
import multiprocessing
import os
import sys
from pathlib import Path

from pate_study.core.env import DATA_ENV, check_writable, data_dir
from pate_study.core.errors import one_line
from pate_study.core.io import atomic_write_text, cache_writable
from pate_study.core.owned import io_error_line
from pate_study.reporting.index import write_index
from pate_study.tooling.notebook_runner.configs import check_configs
from pate_study.tooling.notebook_runner.datasets import prepare_datasets
from pate_study.tooling.notebook_runner.jobs import run_one_after_another, run_side_by_side
from pate_study.tooling.notebook_runner.layout import (
    DATA_MODES,
    PROFILES,
    REQUIRED_PROFILES,
    config_path,
    current,
    list_notebooks,
)
from pate_study.tooling.notebook_runner.manifest import (
    Manifest,
    datasets_for,
    load_manifests,
    reference_table,
    waits_table,
)
from pate_study.tooling.notebook_runner.schedule import read_timings
from pate_study.tooling.notebook_runner.staging import remove_stale_staging
from pate_study.tooling.notebook_runner.summary import summary_markdown
from pate_study.tooling.notebook_runner.yamlfile import ConfigError

logger = logging.getLogger(__name__)

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
    folders (``.tmp-<stem>-<profile>``), and the second's stale-staging clean-up would delete the first's live
    ones: a second run stops at once, naming the running one's process id. The lock is an exclusive ``flock`` on a
    file that is never deleted: the kernel drops it when the run's processes end, however they end, so there is no
    stale lock to take over and no window in which two runs both hold it. (Forked notebook workers share it.)"""
    path = Path(current().build if build_dir is None else build_dir) / RUN_LOCK
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


def check_folders(data_mode: str) -> None:
    """Before any long work: ``figures/`` and ``build/`` (and the data folder, unless ``--data skip``) must take
    new files (FolderNotWritableError naming the folder or its variable otherwise); a cache that cannot is
    reported once (results are then computed but not cached)."""
    check_writable(current().figures, label=f"figures folder {current().figures}")
    check_writable(current().build, label=f"build folder {current().build}")
    if data_mode != "skip":
        check_writable(data_dir(), label=f"{DATA_ENV}={data_dir()}")
    cache_writable()


def check_run(stems: list[str], profile: str) -> dict[str, Manifest]:
    """Every parameter file of the run against its notebook and every notebook's manifest, before anything runs;
    returns the manifests, or ConfigError listing every problem of both."""
    problems: list[str] = []
    try:
        check_configs(stems, profile)
    except ConfigError as err:
        problems += err.problems
    try:
        manifests = load_manifests(stems)
    except ConfigError as err:
        problems += err.problems
    if problems:
        raise ConfigError(problems)
    return manifests


def run_figures(profile: str, notebooks: list[str] | None = None, data_mode: str = "network", jobs: int = 1) -> int:
    """Prepare data, execute the notebooks into ``figures/`` (``jobs`` of them side by side), rebuild the index,
    print the summary; return the number of failed notebooks."""
    if jobs < 1:
        raise ValueError(f"--jobs {jobs}: expected a number of notebooks to run at once, at least 1")
    known = list_notebooks()
    stems = notebooks or known
    unknown = [s for s in stems if s not in known]
    if unknown:
        raise ValueError(f"--notebooks {unknown}: no such notebook; known: {known}")
    duplicated = sorted({s for s in stems if stems.count(s) > 1})
    if duplicated:
        raise ValueError(f"--notebooks: {', '.join(duplicated)} given more than once; name each notebook once")
    if profile not in REQUIRED_PROFILES:
        without = [s for s in stems if not config_path(s, profile).exists()]
        if without and notebooks:  # asked for by name: running nothing would look like success
            having = [s for s in known if config_path(s, profile).exists()]
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
    manifests = check_run(stems, profile)  # parameter files and manifests, before data or notebooks run
    check_folders(data_mode)
    remove_stale_staging()  # once the checks have passed, before any notebook starts
    data = prepare_datasets(datasets_for(stems, manifests), data_mode)  # once, before any notebook starts
    build = current().build
    last = read_timings(profile, build)
    after = waits_table(manifests)
    jobs = min(jobs, len(stems)) or 1
    if jobs > 1 and "fork" not in multiprocessing.get_all_start_methods():
        logger.warning("--jobs %d needs the fork start method, which this platform lacks: one after another", jobs)
        jobs = 1
    build.mkdir(exist_ok=True)
    if jobs > 1:
        runs = run_side_by_side(stems, profile, last, jobs, after, reference_table(manifests, profile))
    else:
        runs = run_one_after_another(stems, profile, last, after)
    timings = {**last, **{run.stem: run.seconds for run in runs if run.ok}}
    atomic_write_text(build / f"timings.{profile}.json", json.dumps(timings, indent=2, sort_keys=True) + "\n")
    write_index(current().figures)
    summary = summary_markdown(runs, profile, data, data_mode, manifests)
    atomic_write_text(build / f"summary.{profile}.md", summary)
    shown = (build / f"summary.{profile}.md").relative_to(current().root)
    print("\n" + summary + f"(also in {shown})", flush=True)
    return sum(not run.ok for run in runs)


def parser() -> argparse.ArgumentParser:
    """The command line: ``figures`` (the whole run) and ``index`` (``figures/INDEX.md`` only)."""
    parser = argparse.ArgumentParser(
        prog="python -m pate_study.tooling.runner",
        description="Execute the notebooks through papermill (make figures) and rebuild figures/INDEX.md.",
    )
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
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m pate_study.tooling.runner figures|index ...``; returns the exit status."""
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    if args.command == "index":
        if not current().figures.is_dir():
            print(
                f"error: {current().figures}: no figures folder (expected the committed figures/ of a checkout); "
                "run from a complete checkout, or `make figures` first",
                file=sys.stderr,
            )
            return 2
        write_index(current().figures)
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
        print("nothing was run; fix the files above", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:  # a full disk, a read-only folder, a file where a folder belongs: path and cause
        print(f"error: {io_error_line(err)}", file=sys.stderr)
        return 2
