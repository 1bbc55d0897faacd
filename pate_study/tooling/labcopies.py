"""Students work on their own copies of the notebooks, never on the committed ones.

``make lab-light`` and ``make lab`` call this first: it copies ``notebooks/<stem>.ipynb`` to ``labs/<stem>.ipynb``
(git-ignored) and JupyterLab then opens the copy, so that its save and autosave rewrite the student's file, not a
tracked one (a clone stays clean, stamps do not read ``+dirty``, ``git pull`` does not conflict). A copy that exists
is the student's work and is kept as it is; to start again from the committed notebook, rename or delete it.
``tests/tooling/test_lab_browser.py`` runs the labs on copies made by the same function.

    python -m pate_study.tooling.labcopies [--all] [--folder labs]

Standard library only: it runs in the light lab venv (``pip install -e ".[lab]"``), which has no papermill.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from pathlib import Path

from ..core.paths import NOTEBOOKS_DIR, REPO_ROOT

logger = logging.getLogger(__name__)

LABS_DIR = REPO_ROOT / "labs"
#: Notebooks handed to students (the primer first: ``make lab-light`` opens it).
TEACHING_NOTEBOOKS = ("00_dp_primer", "07_pate2018_lab")


def all_notebooks(notebooks_dir: Path = NOTEBOOKS_DIR) -> list[str]:
    """Stems of every committed notebook, sorted."""
    return sorted(p.stem for p in notebooks_dir.glob("*.ipynb"))


def student_copy(stem: str, folder: Path = LABS_DIR, notebooks_dir: Path = NOTEBOOKS_DIR) -> tuple[Path, bool]:
    """``folder/<stem>.ipynb``, copied from ``notebooks_dir`` unless it exists; return it and whether it was made now.

    An existing copy is never overwritten (it holds the student's answers). A new one is written to a temporary name
    and renamed, so an interrupted copy never stands as a student's notebook. Raises ValueError naming the notebook
    when there is no such committed notebook."""
    source = notebooks_dir / f"{stem}.ipynb"
    if not source.is_file():
        raise ValueError(
            f"no notebook {stem!r} in {notebooks_dir.name}/; expected one of: {' '.join(all_notebooks(notebooks_dir))}"
        )
    target = folder / source.name
    if target.exists():
        return target, False
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{source.name}.part"
    shutil.copyfile(source, partial)
    os.replace(partial, target)
    return target, True


def student_copies(stems: list[str] | tuple[str, ...] = TEACHING_NOTEBOOKS, folder: Path = LABS_DIR) -> list[Path]:
    """:func:`student_copy` of each stem, saying which copies are new and which (the student's) were kept."""
    copies = []
    for stem in stems:
        target, made = student_copy(stem, folder)
        shown = target.relative_to(REPO_ROOT) if target.is_relative_to(REPO_ROOT) else target
        if made:
            logger.info("your copy: %s (JupyterLab saves here; notebooks/%s.ipynb stays as committed)", shown, stem)
        else:
            logger.info(
                "kept your copy %s as it is; to start again from notebooks/%s.ipynb, rename or delete it", shown, stem
            )
        copies.append(target)
    return copies


def copies_folder(text: str) -> Path:
    """The ``--folder`` argument: a path that names a folder (new or existing). An empty value (an unset shell
    variable) would be the current folder, and a file cannot hold copies: both refused, naming the flag."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; give the folder the copies go to (default labs/)")
    folder = Path(text).expanduser()
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            if not candidate.is_dir():
                where = "is a file" if candidate == folder else f"lies below the file {candidate}"
                raise argparse.ArgumentTypeError(f"{text} {where}, not a folder; give a folder for the copies")
            break
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pate_study.tooling.labcopies", description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="copy every notebook, not only the two labs")
    parser.add_argument("--folder", type=copies_folder, default=LABS_DIR, help="where the copies go (default labs/)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    try:
        student_copies(all_notebooks() if args.all else TEACHING_NOTEBOOKS, args.folder)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a read-only or full folder: the path and the cause
        print(f"error: --folder {args.folder}: cannot write the copies ({err.strerror or err})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
