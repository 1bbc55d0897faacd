"""environment.yml (conda route) and pyproject.toml (pip route) must list the same dependencies."""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import numpy as np
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
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


# --- the lock file make venv installs -------------------------------------------------------------------------------

LOCK = ROOT / "requirements.lock"
#: The extras make venv installs (the Makefile's fallback without the lock names the same).
LOCKED_EXTRAS = ("research", "test", "site")


def lock_pins() -> dict[str, tuple[str, int]]:
    """``{name: (version, number of hashes)}`` of every ``name==version`` entry of the lock."""
    pins, current = {}, None
    for line in LOCK.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ \\;]+)", line)
        if match:
            current = canonicalize_name(match.group(1))
            pins[current] = (match.group(2), 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            pins[current] = (pins[current][0], pins[current][1] + 1)
    return pins


def locked_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return [Requirement(s) for s in list(project["dependencies"]) + [s for e in LOCKED_EXTRAS for s in extras[e]]]


def test_the_lock_pins_every_dependency_inside_pyproject_and_environment_yml_ranges():
    pins, conda = lock_pins(), conda_requirements()
    for requirement in locked_requirements():
        name = canonicalize_name(requirement.name)
        if name == "torch":
            continue
        assert name in pins, f"requirements.lock lacks {name}: regenerate it (command in its first lines)"
        version = Version(pins[name][0])
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} outside {requirement}"
        conda_minimum = conda.get(requirement.name.lower(), "")
        assert not conda_minimum or Requirement(f"x{conda_minimum}").specifier.contains(version), name


def test_every_pin_has_a_hash_and_torch_is_pinned_by_version_only():
    pins = lock_pins()
    assert len(pins) > 50 and all(count >= 1 for _, count in pins.values())
    assert "torch" not in pins  # installed first, from TORCH_SPEC (one version, a different file per machine)
    makefile = (ROOT / "Makefile").read_text()
    spec = re.search(r"^TORCH_SPEC\s*\?=\s*(\S+)", makefile, re.M).group(1)
    torch = next(r for r in locked_requirements() if r.name == "torch")
    assert spec.startswith("torch==") and torch.specifier.contains(spec.split("==")[1])


def test_make_venv_installs_the_lock_with_hashes_required():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^LOCK\s*\?=\s*requirements\.lock$", makefile, re.M)
    assert "--require-hashes -r $(LOCK)" in makefile and "--no-deps -e ." in makefile
    assert all(f".[{','.join(LOCKED_EXTRAS)}]" in text for text in (makefile,))


def test_every_provenance_sidecar_records_the_packages_the_lock_the_processor_and_the_blas(tmp_path):
    import json

    import pandas as pd

    from pate_study.reporting import outputs

    out = outputs.NotebookOutputs("00_dp_primer", tmp_path, profile="smoke", seed=0)
    [csv, _] = out.save_table(pd.DataFrame({"x": [1.0]}), "make2021-table1", data="analytic (no data)")
    environment = json.loads((tmp_path / f"make2021-table1{outputs.PROVENANCE_SUFFIX}").read_text())["environment"]
    assert environment["packages"]["numpy"] == np.__version__ and environment["processor"]
    assert environment["blas"]["numpy"].split()[0] and environment["python"]
    lock = environment["lock"]
    assert lock["file"] == "requirements.lock" and len(lock["sha256"]) == 64 and isinstance(lock["differs"], list)


def test_the_lock_record_names_what_differs_from_the_lock(tmp_path):
    from pate_study.reporting import outputs

    lock = tmp_path / "requirements.lock"
    lock.write_text(
        f"numpy=={np.__version__} \\\n    --hash=sha256:00\nno-such-package==1.0 \\\n    --hash=sha256:00\n"
    )
    record = outputs.lock_record(lock)
    assert record["differs"] == ["no-such-package installed not at all, locked 1.0"]


def run_make(*arguments: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *arguments], cwd=cwd, capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize("variable", ["VENV", "LOCK"])
def test_make_refuses_a_venv_or_lock_path_with_a_space_naming_the_variable(tmp_path, variable):
    """``make VENV="a path/with space"`` used to build venvs at the wrong paths (make splits targets at spaces)."""
    spaced = tmp_path / "a path" / "with space"
    done = run_make("venv", f"{variable}={spaced}", *([] if variable == "VENV" else [f"VENV={tmp_path / 'venv'}"]))
    assert done.returncode == 2 and f'{variable}="{spaced}": a path with a space' in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize("content", ["", "# only a comment\nnumpy==2.0\n"])
def test_make_venv_names_an_empty_lock_and_creates_no_venv(tmp_path, content):
    lock = tmp_path / "empty.lock"
    lock.write_text(content)
    done = run_make("venv", f"LOCK={lock}", f"VENV={tmp_path / 'venv'}")
    assert done.returncode == 2 and f"LOCK={lock}: empty, or no pinned package with a hash" in done.stderr
    assert not (tmp_path / "venv").exists()


def registered_markers() -> set[str]:
    """The marker names pyproject.toml registers for pytest."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {entry.split(":", 1)[0].strip() for entry in config["tool"]["pytest"]["ini_options"]["markers"]}


def test_the_fast_tier_leaves_out_every_marker_but_mirror():
    """``make test-fast`` runs no notebook, browser, light venv, Ray cluster or slow test: every registered marker
    but ``mirror`` (which only skips without the data) is negated in its expression."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    expression = re.search(r"^FAST_MARKERS := (.+)$", makefile, re.M)
    assert expression, "the Makefile defines FAST_MARKERS for make test-fast"
    left_out = set(re.findall(r"not (\w+)", expression.group(1)))
    assert left_out == registered_markers() - {"mirror"}
    assert re.search(r'^test-fast: .*\n\t.*-m "\$\(FAST_MARKERS\)"', makefile, re.M)
