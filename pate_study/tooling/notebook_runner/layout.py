"""The folders a figures run reads and writes, the profiles, and where each notebook's outputs go.

Every module of the package reads the folders through :func:`current` at call time, so that one assignment
(``layout.LAYOUT = Layout.under(root)``) points the whole runner at another tree: a test's temporary checkout
with a toy notebook, its configs and manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pate_study.core.paths import BUILD_DIR, CONFIGS_DIR, FIGURES_DIR, NOTEBOOKS_DIR, REPO_ROOT

PROFILES = ("smoke", "paper", "gpu")
#: Profiles every notebook must have; ``gpu`` (the sources' settings for a CUDA machine) only where a notebook has
#: GPU cells: ``make figures PROFILE=gpu`` runs the notebooks that have ``configs/<stem>/gpu.yaml``.
REQUIRED_PROFILES = ("smoke", "paper")
#: Parameters the runner sets itself; a parameter file may not set them.
RUNNER_PARAMETERS = ("profile", "output_dir")
DATA_MODES = ("network", "offline", "skip")
#: The profile whose outputs are the committed results in ``figures/<stem>/``; every other profile writes into
#: ``figures/<stem>/<profile>/`` beside them (``smoke`` there is git-ignored), so that a quick pass or a GPU run never
#: replaces the committed paper outputs.
RESULTS_PROFILE = "paper"


@dataclass(frozen=True)
class Layout:
    """The folders of one checkout: its root (the kernels' working directory), ``notebooks/``, ``configs/``,
    ``figures/`` and ``build/``."""

    root: Path
    notebooks: Path
    configs: Path
    figures: Path
    build: Path

    @classmethod
    def under(cls, root: Path) -> Layout:
        """The layout of a checkout at ``root`` (its folders named as in this repository)."""
        root = Path(root)
        return cls(root, root / "notebooks", root / "configs", root / "figures", root / "build")


#: The layout the runner uses: this repository's folders unless a caller (a test) replaces it.
LAYOUT = Layout(REPO_ROOT, NOTEBOOKS_DIR, CONFIGS_DIR, FIGURES_DIR, BUILD_DIR)


def current() -> Layout:
    """The layout in force now (:data:`LAYOUT`, read at call time)."""
    return LAYOUT


def list_notebooks(notebooks_dir: Path | None = None) -> list[str]:
    """Stems of the numbered notebooks (``NN_name.ipynb``), in order."""
    folder = Path(current().notebooks if notebooks_dir is None else notebooks_dir)
    return sorted(p.stem for p in folder.glob("[0-9][0-9]_*.ipynb"))


def relative_label(path: Path) -> str:
    """``path`` relative to the checkout's root when it is inside it (as messages name files), else as given."""
    path = Path(path)
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a link that loops (RuntimeError before Python 3.13): its parent resolved
        resolved = path.parent.resolve() / path.name
    try:
        return str(resolved.relative_to(current().root.resolve()))
    except ValueError:
        return str(path)


def config_path(stem: str, profile: str) -> Path:
    """``configs/<stem>/<profile>.yaml``."""
    return current().configs / stem / f"{profile}.yaml"


def output_folder(stem: str, profile: str, figures_dir: Path | None = None) -> Path:
    """Where ``make figures`` puts a notebook's outputs: ``figures/<stem>`` for the paper profile, else
    ``figures/<stem>/<profile>`` (see :data:`RESULTS_PROFILE`)."""
    folder = Path(figures_dir if figures_dir is not None else current().figures) / stem
    return folder if profile == RESULTS_PROFILE else folder / profile


def staging_folder(stem: str, profile: str) -> Path:
    """Where a notebook's run writes before its outputs are swapped in: ``figures/.tmp-<stem>-<profile>``."""
    return current().figures / f".tmp-{stem}-{profile}"


def log_path(stem: str, profile: str) -> Path:
    """Where a notebook run side by side writes its cell bar, progress bars and log lines (relative to the
    checkout when it is inside it)."""
    path = current().build / f"{stem}.{profile}.log"
    return path.relative_to(current().root) if path.is_relative_to(current().root) else path
