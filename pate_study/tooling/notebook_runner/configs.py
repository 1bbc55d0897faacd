"""Parameter files checked against their notebook's study contract before anything runs.

Every notebook's settings are one study contract (:mod:`pate_study.core.contract`), named by its manifest
(``configs/<stem>/notebook.yaml``, ``contract:``); its parameters cell declares only the runner's ``profile`` and
``output_dir``, the cell's own ``seed`` and ``data`` (:class:`CellParameters`) and ``overrides``. A profile file
(``configs/<stem>/<profile>.yaml``) sets ``seed``, ``data`` and any fields of the contract whose value differs from
the paper profile: the first two are checked against :class:`CellParameters`, every other name is an override,
checked against the contract's annotations (an unknown name with the nearest field, a value of another type, a number
outside its range, a NaN, a nested mapping key by key: :func:`pate_study.core.contract.contract_problems`) and handed
to the notebook as the one mapping ``overrides`` (:func:`papermill_parameters`). Every problem is one line naming the
file, the name, what was expected and what was found; nothing runs until all are fixed.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import papermill

from pate_study.core.contract import CellParameters, contract_problems
from pate_study.core.owned import describe_path
from pate_study.tooling.notebook_runner.layout import RUNNER_PARAMETERS, config_path, current, relative_label
from pate_study.tooling.notebook_runner.manifest import load_manifest
from pate_study.tooling.notebook_runner.yamlfile import ConfigError, read_config

#: The parameters cell's name for a notebook's overrides of its contract.
OVERRIDES = "overrides"


def load_parameters(stem: str, profile: str, configs_dir: Path | None = None) -> dict:
    """The papermill parameters of notebook ``stem`` for ``profile`` (``configs/<stem>/<profile>.yaml``;
    ``configs_dir`` defaults to the layout's configs folder at call time, the folder the checks read)."""
    path = Path(current().configs if configs_dir is None else configs_dir) / stem / f"{profile}.yaml"
    if not path.is_file():
        found = f"{describe_path(path)} where" if path.exists() or path.is_symlink() else "no"
        raise ConfigError(
            [
                f"{relative_label(path)}: {found} parameter file (a YAML file); every notebook needs "
                f"configs/{stem}/{{smoke,paper}}.yaml"
            ]
        )
    params = read_config(path)
    clash = [k for k in RUNNER_PARAMETERS if k in params]
    if clash:
        raise ConfigError([f"{relative_label(path)}: {k}: set by the runner, remove it from the file" for k in clash])
    return params


def notebook_parameters(notebook: Path) -> dict[str, object]:
    """The names the parameters cell of ``notebook`` declares (papermill's own reading of it), each with its default
    value (None where the default is not a literal)."""
    declared = {}
    for name, info in papermill.inspect_notebook(str(notebook)).items():
        try:
            declared[name] = ast.literal_eval(str(info.get("default")))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            declared[name] = None
    return declared


def split_overrides(params: dict, declared: dict[str, object]) -> tuple[dict, dict]:
    """A profile's ``params`` as (the names the notebook's parameters cell declares, the overrides)."""
    cell = {k: v for k, v in params.items() if k in declared and k != OVERRIDES}
    return cell, {k: v for k, v in params.items() if k not in cell}


def papermill_parameters(params: dict, declared: dict[str, object]) -> dict:
    """What papermill injects from a profile's ``params``: the cell's names as they are and the other names as the
    one mapping ``overrides``."""
    cell, overrides = split_overrides(params, declared)
    return {**cell, OVERRIDES: overrides}


def injected_parameters(stem: str, profile: str, extra: dict | None = None) -> dict:
    """What papermill injects into notebook ``stem`` for ``profile`` (:func:`papermill_parameters` of its profile
    file with ``extra`` in place, the overrides as one mapping), after checking them
    (:func:`check_config`; :class:`ConfigError` with every problem). The runner's ``profile`` and ``output_dir`` are
    the caller's to add."""
    params = {**load_parameters(stem, profile), **(extra or {})}
    source = current().notebooks / f"{stem}.ipynb"
    declared = notebook_parameters(source)
    contract = load_manifest(stem).contract
    problems = check_config(config_path(stem, profile), params, declared, contract)
    if problems:
        raise ConfigError(problems)
    return papermill_parameters(params, declared)


def cell_and_config(stem: str, profile: str) -> tuple[dict, Any]:
    """What a run of notebook ``stem`` at ``profile`` uses: the profile file's names that its parameters cell
    declares, and its study's settings, the contract with the file's other names (the overrides) in place
    (:meth:`pate_study.core.contract.StudyContract.from_overrides`). A field the contract shares with the cell
    (``seed``, where the study reads it from its settings) takes the cell's value, as the notebook hands it in."""
    params = load_parameters(stem, profile)
    cell, overrides = split_overrides(params, notebook_parameters(current().notebooks / f"{stem}.ipynb"))
    return cell, load_manifest(stem).contract.from_cell({**cell, "profile": profile, "overrides": overrides})


def effective_parameters(stem: str, profile: str) -> dict:
    """The parameters a run of notebook ``stem`` at ``profile`` records: its parameters cell's names, then every field
    of its study's settings (:func:`cell_and_config`)."""
    cell, config = cell_and_config(stem, profile)
    return {**cell, **config.as_record()}


def check_config(path: Path, params: dict, declared: dict[str, object], contract: type | None) -> list[str]:
    """One line per problem of the profile ``params`` (from the file ``path``) of a notebook whose parameters cell
    declares ``declared`` and whose manifest names ``contract``: a notebook without a contract or an ``overrides``
    mapping, a value of the cell's ``seed`` or ``data`` that breaks :class:`CellParameters`, an override that breaks
    the contract (:func:`pate_study.core.contract.contract_problems`)."""
    label = relative_label(path)
    notebook = f"notebooks/{Path(path).parent.name}.ipynb"
    if contract is None:
        return [
            f"{label}: configs/{Path(path).parent.name}/notebook.yaml names no contract; every notebook's settings "
            "are a study contract (contract: package.module:ClassName, pate_study.core.contract)"
        ]
    if OVERRIDES not in declared:
        return [f"{label}: {notebook}: its parameters cell declares no {OVERRIDES!r} mapping"]
    cell, overrides = split_overrides(params, declared)
    return contract_problems(CellParameters, cell, label) + contract_problems(contract, overrides, label)


def check_configs(
    stems: list[str], profile: str, configs_dir: Path | None = None, notebooks_dir: Path | None = None
) -> None:
    """Check every ``configs/<stem>/<profile>.yaml`` of ``stems`` against its notebook's contract and parameters cell
    (:func:`check_config`) before anything runs; ConfigError listing every problem found, one line each."""
    configs_dir = Path(configs_dir or current().configs)
    notebooks_dir = Path(notebooks_dir or current().notebooks)
    problems: list[str] = []
    for stem in stems:
        path = configs_dir / stem / f"{profile}.yaml"
        try:
            params = load_parameters(stem, profile, configs_dir)
        except ConfigError as err:
            problems += err.problems
            continue
        try:
            contract = load_manifest(stem, configs_dir).contract
        except ConfigError as err:
            problems += err.problems
            continue
        problems += check_config(path, params, notebook_parameters(notebooks_dir / f"{stem}.ipynb"), contract)
    if problems:
        raise ConfigError(problems)
