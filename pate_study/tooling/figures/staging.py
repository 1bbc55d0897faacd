"""Staging folders: each notebook writes into ``figures/.tmp-<stem>-<profile>``, which replaces its output folder as
a whole when the notebook succeeds (the other profiles' subfolders in it kept); a failing notebook keeps its previous
outputs. Every folder the runner stages or moves aside is marked (:data:`STAGING_MARKER`), and only marked folders
are ever removed as left by an interrupted run: a folder of such a name without the marker is the user's."""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

from ...core.io import replace_folder
from .execution import execute_notebook, point_at_final_folder, write_stripped
from .layout import PROFILES, RESULTS_PROFILE, current, output_folder, staging_folder
from .summary import NotebookRun, error_line, notebook_outputs

logger = logging.getLogger(__name__)

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
    kept, with a warning. ``figures_dir`` defaults to the layout's at call time. Returns the folders removed."""
    folder = Path(current().figures if figures_dir is None else figures_dir)
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
    root = current().root
    staging = staging_folder(stem, profile)
    final = output_folder(stem, profile)
    run = NotebookRun(stem, 0.0)
    made = False
    try:
        made = make_staging(staging)
        executed = execute_notebook(stem, profile, staging.relative_to(root), progress=progress)
        committed = write_stripped(executed, staging / f"{stem}.ipynb")
        point_at_final_folder(committed, staging, final)
        keep_profile_folders(final, staging)
        final.parent.mkdir(parents=True, exist_ok=True)
        replace_folder(staging, final, marker=STAGING_MARKER)
    except Exception as err:  # report every failing notebook, then fail
        run.error = error_line(err)
        partial = current().build / f"{stem}.{profile}.ipynb"
        run.partial_copy = partial.relative_to(root) if partial.exists() else None
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
