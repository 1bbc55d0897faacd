"""Running the notebooks of a figures run: one after another in this process (``--jobs 1``, each with its cell bar
here), or side by side (``--jobs N``): N forked worker processes, one per notebook, each kernel with one
OpenMP/MKL thread, longest chain first, each notebook after those its manifest says it waits for; the terminal shows
one line per start and finish (and every few minutes which notebooks are still running), each notebook's cell bar
and the package's progress bars go to ``build/<stem>.<profile>.log``."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
from pathlib import Path

from pate_study.tooling.notebook_runner.layout import current, log_path, staging_folder
from pate_study.tooling.notebook_runner.schedule import (
    THREAD_VARIABLES,
    After,
    chain_seconds,
    expected_seconds,
    format_duration,
    last_run_text,
    next_notebook,
    plan_schedule,
    progress_description,
    sequential_order,
    thread_environment,
    waits_for,
)
from pate_study.tooling.notebook_runner.staging import remove_own_staging, run_notebook
from pate_study.tooling.notebook_runner.summary import NotebookRun

logger = logging.getLogger(__name__)

#: With notebooks side by side, a line every so many seconds says which are still running.
HEARTBEAT_SECONDS = 300.0
#: After Ctrl-C, how long a worker may take to stop (its kernel and its staging folder) before it is terminated.
STOP_GRACE_SECONDS = 10.0


def run_one_after_another(stems: list[str], profile: str, last: dict[str, float], after: After) -> list[NotebookRun]:
    """``--jobs 1``: the notebooks in this process, in :func:`.schedule.sequential_order`, each with its cell bar
    here."""
    order, runs = sequential_order(stems, after), []
    for position, stem in enumerate(order, start=1):
        description = progress_description(stem, position, len(order), last, order[position - 1 :])
        logger.info("running %s", description)
        runs.append(run_notebook(stem, profile, progress=description))
        logger.info("%s took %s", stem, format_duration(runs[-1].seconds))
    return runs


def notebook_worker(connection, stem: str, profile: str, progress: str, log: Path, threads: dict[str, str]) -> None:
    """A worker process of :func:`run_side_by_side`: its stdout and stderr (which its kernel inherits) go to
    ``log``, its kernel gets ``threads``; it sends the :class:`.summary.NotebookRun` back through ``connection``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as stream:
        os.dup2(stream.fileno(), 1)
        os.dup2(stream.fileno(), 2)
    os.environ.update(threads)
    connection.send(run_notebook(stem, profile, progress=progress))
    connection.close()


def received(connection) -> NotebookRun | None:
    """The run a worker sent, or None when it stopped without sending one (killed, or its process crashed)."""
    try:
        return connection.recv() if connection.poll() else None
    except (EOFError, OSError):
        return None


def announce_plan(stems: list[str], seconds: dict[str, float], jobs: int, after: After) -> None:
    """Log the planned schedule and its length, when every notebook has an expected time."""
    if len(seconds) < len(stems):
        return
    plan = plan_schedule(stems, seconds, jobs, after)
    logger.info(
        "%d notebooks, %d side by side, longest first (%s): about %s from the timings of the last "
        "run (%s one after another)",
        len(stems),
        jobs,
        ", ".join(slot.stem for slot in plan),
        format_duration(max(slot.end for slot in plan)),
        format_duration(sum(seconds.values())),
    )


def run_side_by_side(
    stems: list[str], profile: str, last: dict[str, float], jobs: int, after: After, reference: dict[str, float]
) -> list[NotebookRun]:
    """``--jobs N`` (N > 1): the notebooks in N worker processes (forked, one per notebook), longest chain first
    (:func:`.schedule.chain_seconds` on the last run's times, else ``reference``), each after the notebooks it waits
    for (``after``); one log line per start and per finish. Returns the runs in the order of ``stems``."""
    context = multiprocessing.get_context("fork")
    deps = waits_for(stems, after)
    seconds = expected_seconds(stems, last, reference)
    chain = chain_seconds(stems, seconds, after)
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
    announce_plan(stems, seconds, jobs, after)
    pending, finished, runs, running = list(stems), set(), {}, {}
    timing = {stem: last_run_text(stem, last, reference) for stem in stems}
    try:
        while pending or running:
            while len(running) < jobs and (stem := next_notebook(pending, finished, chain, deps)) is not None:
                pending.remove(stem)
                position = len(runs) + len(running) + 1
                receive, send = context.Pipe(duplex=False)
                log = current().root / log_path(stem, profile)
                worker = context.Process(
                    target=notebook_worker,
                    name=f"notebook {stem}",
                    args=(send, stem, profile, f"{stem} ({timing[stem]})", log, threads),
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
                    timing[stem],
                    log_path(stem, profile),
                )
            done = multiprocessing.connection.wait(list(running), timeout=HEARTBEAT_SECONDS)
            if not done:
                logger.info(
                    "still running: %s",
                    ", ".join(
                        f"{stem} {format_duration(time.perf_counter() - began)} ({timing[stem]})"
                        for stem, _, _, began, _ in running.values()
                    ),
                )
            for sentinel in done:
                stem, worker, receive, began, position = running.pop(sentinel)
                worker.join()
                run = received(receive) or NotebookRun(
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
                        timing[stem],
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
