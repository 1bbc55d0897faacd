"""environment.yml (conda route) and pyproject.toml (pip route) must list the same dependencies."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# Names that differ between PyPI and conda-forge.
CONDA_TO_PYPI = {"pytorch": "torch"}
NOT_DEPENDENCIES = {"python", "pip"}


def _split_requirement(spec: str) -> tuple[str, str]:
    """'numpy>=1.26' -> ('numpy', '>=1.26'); "pytorch[version='>=2.1',build='cuda*']" -> ('pytorch', '>=2.1')."""
    bracket = re.fullmatch(r"([A-Za-z0-9_.\-]+)\[(.*)\]", spec.strip())
    if bracket:
        version = re.search(r"version='([^']*)'", bracket.group(2))
        return bracket.group(1).lower(), version.group(1) if version else ""
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", spec.strip())
    return match.group(1).lower(), match.group(2).replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    specs = list(project["dependencies"]) + [s for name in ("lab", "research", "site", "test") for s in extras[name]]
    return dict(_split_requirement(s) for s in specs)


def conda_requirements() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    found = {}
    for entry in env["dependencies"]:
        specs = entry["pip"] if isinstance(entry, dict) else [entry]
        for spec in specs:
            if spec.startswith("-e"):
                continue
            name, version = _split_requirement(spec)
            name = CONDA_TO_PYPI.get(name, name)
            if name not in NOT_DEPENDENCIES:
                found[name] = version
    return found


def test_same_dependency_names_and_minimum_versions():
    assert conda_requirements() == pyproject_requirements()


def test_split_requirement_reads_conda_bracket_specs():
    assert _split_requirement("pytorch[version='>=2.1',build='cuda*']") == ("pytorch", ">=2.1")
    assert _split_requirement("numpy >= 1.26") == ("numpy", ">=1.26")
