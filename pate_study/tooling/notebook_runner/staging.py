"""Staging folders: each notebook writes into ``figures/.tmp-<stem>-<profile>``, which replaces its output folder
when the notebook succeeds; a failing notebook keeps its previous outputs. Every folder the runner stages or moves
aside is marked (:data:`STAGING_MARKER`), and only marked folders are ever removed as left by an interrupted run: a
folder of such a name without the marker is the user's.

An output folder is the runner's file by file, not as a whole: the swap writes :data:`OUTPUTS_MANIFEST` into it,
the list of the files the notebook wrote there, and every other file found in the folder (a note, a figure, a
subfolder the user added; the other profiles' subfolders) is carried into the new folder, never deleted
(:mod:`pate_study.core.owned`). A file of the user's at a path the notebook now writes stops that notebook in one
line, its previous outputs kept. A folder from before the manifest existed has none: the files the notebook writes
replace those of the same name, every other file is kept (with a warning naming them)."""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

from pate_study.core.io import replace_folder
from pate_study.core.owned import (
    OwnedFolderError,
    describe_path,
    discard_moved_aside,
    folder_entries,
    io_error_line,
    keep_in,
    read_manifest,
    shown_files,
    write_manifest,
)
from pate_study.tooling.notebook_runner.execution import execute_notebook, write_stripped
from pate_study.tooling.notebook_runner.layout import PROFILES, RESULTS_PROFILE, current, output_folder, staging_folder
from pate_study.tooling.notebook_runner.summary import NotebookRun, error_line, notebook_outputs

logger = logging.getLogger(__name__)

#: The runner marks every folder it stages in ``figures/`` (``.tmp-<stem>-<profile>``) or moves aside there
#: (``.old-<stem>-<pid>``) with a file of the folder's name plus this suffix beside it, written before the folder
#: is filled: only folders so marked are ever removed as left by an interrupted run.
STAGING_MARKER = ".runner-staging"
#: The list of the files the runner wrote in an output folder (``figures/<stem>/``, ``figures/<stem>/<profile>/``),
#: inside it (:mod:`pate_study.core.owned`): only these are ever replaced or dropped by a later run.
OUTPUTS_MANIFEST = ".runner-files"
#: The tool the manifests name.
RUNNER = "the figures runner (python -m pate_study.tooling.runner)"


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
        if candidate.name.startswith(".old-"):
            if settle_moved_aside(candidate):
                stale.append(candidate)
            continue
        logger.info("removing %s, left by an interrupted run", candidate)
        remove_own_staging(candidate)
        stale.append(candidate)
    return stale


def settle_moved_aside(old: Path) -> bool:
    """A folder ``.old-<stem>-<pid>`` a swap cut short left (marked by the runner): put back as ``<stem>`` when
    the swap never put the new folder there, else removed file by file (:func:`discard_old_outputs`: only what
    the runner wrote or what the new folder also holds). Returns whether it is gone."""
    final = old.with_name(old.name[len(".old-") :].rsplit("-", 1)[0])
    if not (final.exists() or final.is_symlink()):
        logger.warning("putting back %s as %s: a swap was cut short before the new outputs were in place", old, final)
        os.replace(old, final)
        staging_marker(old).unlink(missing_ok=True)
        return True
    if discard_old_outputs(old, final):
        staging_marker(old).unlink(missing_ok=True)
        logger.info("removed %s, left by an interrupted run", old)
        return True
    return False


def discard_old_outputs(old: Path, final: Path) -> bool:
    """Remove the previous outputs ``old`` that ``final`` replaced, file by file: what the runner wrote (its
    :data:`OUTPUTS_MANIFEST`) and what ``final`` holds too (the user's files carried over); anything else stays,
    with a warning. Returns whether ``old`` is gone."""
    try:
        gone = discard_moved_aside(old, final, read_manifest(old, OUTPUTS_MANIFEST, RUNNER), OUTPUTS_MANIFEST)
    except OwnedFolderError as err:
        logger.warning("keeping %s: %s", old, err)
        return False
    if not gone:
        logger.warning(
            "keeping %s: it holds files the runner did not write that are not in %s; look through them and "
            "remove the folder yourself",
            old,
            final,
        )
    return gone


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


def other_profiles(profile: str) -> list[str]:
    """The subfolders of ``profile``'s output folder that belong to other profiles (those of the paper folder)."""
    return [p for p in PROFILES if p != RESULTS_PROFILE] if profile == RESULTS_PROFILE else []


def keep_profile_folders(final: Path, staging: Path) -> list[str]:
    """Carry the other profiles' output folders (``final/<profile>``) into ``staging`` before ``staging`` replaces
    ``final`` (hard links, else copies; links kept as links), so that a paper run keeps the GPU run's outputs
    beside it; return the names carried."""
    kept = []
    for profile in other_profiles(RESULTS_PROFILE):
        folder = Path(final) / profile
        if folder.is_dir() and not folder.is_symlink() and not (Path(staging) / profile).exists():
            files, empty = folder_entries(folder)
            keep_in(folder, Path(staging) / profile, files, empty)
            kept.append(profile)
    return kept


def keep_users_files(final: Path, staging: Path, written: list[str], profile: str) -> list[str]:
    """Carry every file of ``final`` that the runner did not write into ``staging`` (module docstring), before
    ``staging`` replaces ``final``; return their relative paths. OwnedFolderError (one line, nothing changed) for
    a file of the user's where the notebook now writes one, an output folder that is not a folder, or a manifest
    the runner cannot read."""
    final = Path(final)
    if not (final.exists() or final.is_symlink()):
        return []
    if final.is_symlink() or not final.is_dir():
        raise OwnedFolderError(
            f"{final}: {describe_path(final)} where the notebook's output folder belongs; move it away"
        )
    previous = read_manifest(final, OUTPUTS_MANIFEST, RUNNER)
    files, empty = folder_entries(final, skip=[OUTPUTS_MANIFEST, *other_profiles(profile)])
    new = set(written)
    users = [f for f in files if previous is None or f not in previous]
    clash = [f for f in users if f in new] if previous is not None else []
    if clash:
        raise OwnedFolderError(
            f"{final}: {shown_files(clash)} not written by the runner (not in its {OUTPUTS_MANIFEST}), and the "
            "notebook now writes files of these names; move yours away and run again"
        )
    users = [f for f in users if f not in new]  # before the manifest existed, same-named files were the runner's
    keep_in(final, staging, users, [e for e in empty if e not in new])
    if users:
        logger.warning("%s: kept %s (not written by the runner)", final, shown_files(users))
    return users


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
        executed = execute_notebook(stem, profile, final.relative_to(root), progress=progress, staging=staging)
        write_stripped(executed, staging / f"{stem}.ipynb")
        written, _ = folder_entries(staging)
        keep_profile_folders(final, staging)
        keep_users_files(final, staging, written, profile)
        write_manifest(staging, OUTPUTS_MANIFEST, RUNNER, written)
        final.parent.mkdir(parents=True, exist_ok=True)
        replace_folder(staging, final, marker=STAGING_MARKER, discard=discard_old_outputs)
    except Exception as err:  # report every failing notebook, then fail
        run.error = io_error_line(err, where=staging) if isinstance(err, OSError) else error_line(err)
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
