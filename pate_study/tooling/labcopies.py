"""Students work on their own copies of the notebooks, never on the committed ones.

``make lab-light`` and ``make lab`` call this first: it copies ``notebooks/<stem>.ipynb`` to ``labs/<stem>.ipynb``
(git-ignored) and JupyterLab then opens the copy, so that its save and autosave rewrite the student's file, not a
tracked one (a clone stays clean, stamps do not read ``+dirty``, ``git pull`` does not conflict). A copy that exists
is the student's work and is kept as it is; to start again from the committed notebook, rename or delete it.
``tests/tooling/test_lab_browser.py`` runs the labs on copies made by the same function.

``--handout FOLDER`` (``make handout``) writes what students get instead of a clone: the two labs, the package they
call with its data recipes (``pate_study/``, ``data_recipes/``, ``pyproject.toml``), the light requirements
(``binder/requirements.txt``: no torch), a README saying how to install and where the votes go, and, when the lecturer
has them (``--votes``, else the mirror's ``$PATE_STUDY_MIRROR/pate2018-votes/``), the released vote files in
``pate2018-votes/``, which the labs prepare without the network. Never ``instructors/`` (the solutions), the tests,
the other notebooks or ``figures/``. The folder ``FOLDER/pate_study-labs/`` and the archive
``FOLDER/pate_study-labs.zip`` are written under temporary names and renamed; an existing folder is replaced only when
it carries this tool's marker (its own previous handout).

    python -m pate_study.tooling.labcopies [--all] [--folder labs]
    python -m pate_study.tooling.labcopies --handout build/handout [--votes FOLDER]

Standard library only: it runs in the light lab venv (``pip install -e ".[lab]"``), which has no papermill, and with
any Python 3.11 in a clone (``make handout``).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from pate_study.core.paths import NOTEBOOKS_DIR, REPO_ROOT

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


#: The handout's name: its folder and (with ``.zip``) its archive.
HANDOUT_NAME = "pate_study-labs"
#: Written into the handout folder; only a folder carrying it is ever replaced.
HANDOUT_MARKER = ".pate_study-handout"
#: What of a clone a handout carries besides the labs: the package, its data recipes, how to install them.
HANDOUT_SOURCES = ("pate_study", "data_recipes", "pyproject.toml")
#: The light requirements (the core dependencies and the ``lab`` extra; tests/notebooks/test_teaching.py keeps them so).
LIGHT_REQUIREMENTS = REPO_ROOT / "binder" / "requirements.txt"
#: The released vote files' folder, in a mirror and in a handout (the recipe ``pate2018-votes``).
VOTES_FOLDER = "pate2018-votes"
NOT_HANDED_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")
HANDOUT_README = """# PATE and differential privacy: two labs

`00_dp_primer.ipynb` (90 minutes, 13 checked exercises) and `07_pate2018_lab.ipynb` (45-60 minutes, 5 tasks). Each
exercise cell checks your answer: a hint first, the rule on a second wrong try.

## Install (once; about 0.65 GB, no GPU, no torch)

```bash
python3 -m venv .venv
.venv/bin/pip install -r requirements.txt
.venv/bin/pip install --no-deps -e .
.venv/bin/jupyter lab 00_dp_primer.ipynb
```

(On Windows: `.venv\\Scripts\\pip` and `.venv\\Scripts\\jupyter`.) Then Run All. The notebooks are your copies:
write your answers in them, in the cells that say *your answer*.

## The teacher votes

The labs use the teacher votes released with Papernot et al. (2018). {votes} Without them the first box of each lab
says so and the labs run on a synthetic stand-in. To get them: copy the folder `pate2018-votes/` (three files
`*_250_teachers.npy`) into this folder, or run `.venv/bin/python -m data_recipes prepare pate2018-votes` (it downloads
them); then restart the kernel and Run All.
"""


def handout(out: Path, votes: Path | None = None) -> Path:
    """Write the students' handout into ``out`` (see the module docstring): ``out/pate_study-labs/`` and
    ``out/pate_study-labs.zip``; return the folder. ``votes``: a folder holding the released vote files (default: the
    mirror's ``pate2018-votes/`` when ``$PATE_STUDY_MIRROR`` names one). Raises ValueError in one line, before
    anything is written, for a ``votes`` that is not a folder and for a handout folder this tool did not write."""
    target = out / HANDOUT_NAME
    if target.is_symlink() or (target.exists() and not (target / HANDOUT_MARKER).is_file()):
        raise ValueError(
            f"{target} exists and is not a handout this tool wrote (no {HANDOUT_MARKER} in it); "
            "give another --handout folder or delete this one yourself"
        )
    votes = votes if votes is not None else _mirror_votes()
    if votes is not None and not votes.is_dir():
        raise ValueError(f"--votes {votes}: not a folder; give the folder that holds the released *_250_teachers.npy")
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{HANDOUT_NAME}-", dir=out))
    try:
        for stem in TEACHING_NOTEBOOKS:
            shutil.copyfile(NOTEBOOKS_DIR / f"{stem}.ipynb", staging / f"{stem}.ipynb")
        for name in HANDOUT_SOURCES:
            source = REPO_ROOT / name
            if source.is_dir():
                shutil.copytree(source, staging / name, ignore=NOT_HANDED_OUT)
            else:
                shutil.copyfile(source, staging / name)
        (staging / "requirements.txt").write_text(_light_requirements(), encoding="utf-8")
        if votes is not None:
            shutil.copytree(votes, staging / VOTES_FOLDER, ignore=NOT_HANDED_OUT)
        included = (
            "They are included here, in `pate2018-votes/`: the labs prepare them on their first run, without the "
            "network."
            if votes is not None
            else "They are not included in this handout."
        )
        (staging / "README.md").write_text(HANDOUT_README.format(votes=included), encoding="utf-8")
        (staging / HANDOUT_MARKER).write_text("written by python -m pate_study.tooling.labcopies --handout\n")
        archive = staging.with_suffix(".zip.part")
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
            for path in sorted(staging.rglob("*")):
                zipped.write(path, Path(HANDOUT_NAME) / path.relative_to(staging))
        os.replace(archive, out / f"{HANDOUT_NAME}.zip")
        if target.exists():
            shutil.rmtree(target)  # this tool's previous handout (its marker checked above)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        staging.with_suffix(".zip.part").unlink(missing_ok=True)
        raise
    return target


def _mirror_votes() -> Path | None:
    """``$PATE_STUDY_MIRROR/pate2018-votes`` when the variable names a folder holding it, else None."""
    mirror = os.environ.get("PATE_STUDY_MIRROR", "").strip()
    folder = Path(mirror).expanduser() / VOTES_FOLDER if mirror else None
    return folder if folder is not None and folder.is_dir() else None


def _light_requirements() -> str:
    """The light requirements (one a line), under a header saying what they are for."""
    listed = [
        line.strip()
        for line in LIGHT_REQUIREMENTS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    header = "# The labs' light install (no torch): pip install -r requirements.txt && pip install --no-deps -e .\n"
    return header + "\n".join(listed) + "\n"


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
    parser.add_argument("--handout", type=Path, help="write the students' handout (no solutions) into this folder")
    parser.add_argument("--votes", type=Path, help="with --handout: a folder of the released vote files to include")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    if args.votes is not None and args.handout is None:
        print("error: --votes goes with --handout (the votes a handout includes)", file=sys.stderr)
        return 2
    try:
        if args.handout is not None:
            folder = handout(args.handout, args.votes)
            logger.info("handout: %s and %s.zip (no solutions; see its README.md)", folder, folder)
        else:
            student_copies(all_notebooks() if args.all else TEACHING_NOTEBOOKS, args.folder)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a read-only or full folder: the path and the cause
        flag, folder = ("--handout", args.handout) if args.handout is not None else ("--folder", args.folder)
        print(f"error: {flag} {folder}: cannot write the copies ({err.strerror or err})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
