"""Which notebook runs when: the last run's timings, the order one after another, the longest-chain-first
schedule of ``--jobs N``, and each kernel's thread variables when notebooks share the CPU.

A notebook waits for the notebooks its manifest's ``waits_for`` names when both are in a run: it starts only after
they have finished (failed or not: it can always run alone). Every other pair may run side by side. Checked for
every notebook: the datasets are prepared once, before any notebook starts (under the runner 00 and 07 never
prepare the votes themselves); 00, 06 and 07 only read the prepared PATE 2018 votes (07 reads no output of 06); 01
and 02 cache their own ensembles under their own keys (their datasets differ); no notebook reads another's
``figures/`` folder; ``figures/INDEX.md``, the timings and the summary are written once, by the runner's own
process, after the last notebook.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

#: ``{stem: {notebook it waits for: why}}``, from the manifests (:func:`.manifest.waits_table`).
After = dict[str, dict[str, str]]

#: The variables that set a kernel's BLAS/OpenMP threads (torch takes its intra-op thread count from OpenMP's).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def read_timings(profile: str, build_dir: Path) -> dict[str, float]:
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


def last_run_text(stem: str, last: dict[str, float], reference: dict[str, float]) -> str:
    """How long ``stem`` took last time (``build/timings``), else in the reference run, as the log lines say it."""
    if stem in last:
        return f"last run {format_duration(last[stem])}"
    return f"reference run {format_duration(reference[stem])}" if stem in reference else "no previous timing"


def waits_for(stems: list[str], after: After) -> dict[str, set[str]]:
    """For each notebook of ``stems``, the notebooks of ``stems`` it must wait for (``after``)."""
    return {stem: {other for other in after.get(stem, {}) if other in stems and other != stem} for stem in stems}


def sequential_order(stems: list[str], after: After) -> list[str]:
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
            raise ValueError(f"the manifests' waits_for has a cycle among {[s for s in stems if s not in placed]}")
        order.append(ready[0])
    return order


def expected_seconds(stems: list[str], last: dict[str, float], reference: dict[str, float]) -> dict[str, float]:
    """Each notebook's expected time: the last run's (``build/timings.<profile>.json``), else its manifest's
    reference time for the profile; a notebook with neither is left out (:func:`chain_seconds` puts it first)."""
    return {s: last.get(s, reference.get(s)) for s in stems if s in last or s in reference}


def chain_seconds(stems: list[str], seconds: dict[str, float], after: After) -> dict[str, float]:
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


def plan_schedule(stems: list[str], seconds: dict[str, float], jobs: int, after: After) -> list[Slot]:
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
