"""Where the project's folders are: repository root, figures, build outputs, notebooks, configs."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = PACKAGE_DIR.parent
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
CONFIGS_DIR = REPO_ROOT / "configs"
FIGURES_DIR = REPO_ROOT / "figures"
BUILD_DIR = REPO_ROOT / "build"
REGISTRY_FILE = PACKAGE_DIR / "reporting" / "registry.yaml"


def resolve_from_root(path) -> Path:
    """``path`` as an absolute path; a relative one is taken from the repository root, not the working directory
    (a JupyterLab kernel runs in ``notebooks/``, the runner in the root: both must write to the same folders)."""
    path = Path(path).expanduser()
    return path if path.is_absolute() else REPO_ROOT / path
