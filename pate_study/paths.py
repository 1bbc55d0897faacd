"""Where the project's folders are: repository root, figures, build outputs, notebooks, configs."""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
CONFIGS_DIR = REPO_ROOT / "configs"
FIGURES_DIR = REPO_ROOT / "figures"
BUILD_DIR = REPO_ROOT / "build"
REGISTRY_FILE = PACKAGE_DIR / "registry.yaml"
