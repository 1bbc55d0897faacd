"""Parameter files checked against their notebook: ``configs/<stem>/<profile>.yaml`` sets the names of the notebook's
``parameters`` cell (papermill's reading of it); an unknown name (with the nearest known one), a value of another type
than the notebook's default, a count below 1 or above :data:`COUNT_FACTOR` times the notebook's default, or a NaN is
one line each, naming the file, the parameter, what was expected and what was found. A mapping (``replicates:
{n_boot: 200}``) is checked key by key with the same rules, against the notebook's default mapping, its keys named
with dots (``replicates.n_boot``). Nothing runs until all are fixed.

A notebook whose manifest names a study contract (``contract:``, :mod:`pate_study.core.contract`) declares only
``profile, output_dir, seed, data`` and ``overrides`` in its parameters cell: the names of its profile file that the
cell declares are checked as above, every other name is an override, checked against the contract's annotations
(:func:`pate_study.core.contract.contract_problems`) and handed to the notebook as the one mapping ``overrides``
(:func:`papermill_parameters`)."""

from __future__ import annotations

import ast
import dataclasses
import difflib
import math
import re
from dataclasses import dataclass
from pathlib import Path

import papermill

from pate_study.core.contract import contract_problems
from pate_study.core.owned import describe_path
from pate_study.tooling.notebook_runner.layout import RUNNER_PARAMETERS, config_path, current, relative_label
from pate_study.tooling.notebook_runner.manifest import load_manifest
from pate_study.tooling.notebook_runner.yamlfile import ConfigError, kind, quoted_name, read_config, shown


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


@dataclass(frozen=True)
class Declared:
    """One parameter as the notebook's parameters cell declares it: its default value (:data:`ANY` when the
    default is an expression) and whether ``None`` is allowed (the default is None, or the cell's comment on
    that line says what None means, e.g. ``logmel_head = [64]  # None: the thesis heads``)."""

    default: object
    nullable: bool


ANY = object()  # a default whose type cannot be read from the parameters cell: any value is accepted


def notebook_parameters(notebook: Path) -> dict[str, Declared]:
    """The parameters cell of ``notebook`` (papermill's own reading of it) as ``{name: Declared}``."""
    declared: dict[str, Declared] = {}
    for name, info in papermill.inspect_notebook(str(notebook)).items():
        try:
            default = ast.literal_eval(str(info.get("default")))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            default = ANY
        declared[name] = Declared(default, default is None or "None" in str(info.get("help") or ""))
    return declared


def fits(default: object, value: object) -> bool:
    """Whether ``value`` (from YAML) has the type of the notebook's ``default``: numbers widen (an integer where a
    float is expected), lists are checked element by element against the default's elements, and None defaults
    and non-literal defaults accept anything."""
    if default is ANY or default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return False
        return not default or all(any(fits(d, v) for d in default) for v in value)
    if isinstance(default, dict):
        return isinstance(value, dict)
    return isinstance(value, type(default))


#: A count may be at most this many times the notebook's default (the defaults are smoke-sized; the sources' own
#: settings stay below a few hundred times them): a larger value is a typo or a run of days (``n_runs: 1e12``), refused
#: before anything runs or is allocated.
COUNT_FACTOR = 1000
#: Names of counts bounded above (:func:`count_limit`): ``n_<things>`` and the loops' own words.
COUNT_NAME = re.compile(r"^n_|(^|_)(boot|draws|samples|steps|runs|seeds|epochs|repeats|resamples|queries)$")


def is_count(name: object, default: object) -> bool:
    """Whether a parameter is a count (``n_<things>``, the notebooks' naming) whose default is a positive integer:
    such a value below 1 is refused here, naming the file and the parameter, instead of failing inside the
    notebook under whatever internal name the package gives it."""
    return (
        isinstance(name, str)
        and name.startswith("n_")
        and isinstance(default, int)
        and not isinstance(default, bool)
        and default >= 1
    )


def count_limit(name: object, default: object) -> int | None:
    """The largest value a count parameter accepts (:data:`COUNT_FACTOR` times the notebook's positive integer
    default), None for a parameter that is not a count (:data:`COUNT_NAME`)."""
    if not isinstance(name, str) or not COUNT_NAME.search(name):
        return None
    if not isinstance(default, int) or isinstance(default, bool) or default < 1:
        return None
    return COUNT_FACTOR * default


def finite(value: object) -> bool:
    """Whether ``value`` holds no NaN or infinity (YAML's ``.nan``, ``.inf``), in a list or mapping at any depth: no
    notebook takes one, and NaN passes every comparison a notebook's own check makes (``nan < 0`` is false)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    return True


def value_problems(label: str, name: str, value: object, want: Declared) -> list[str]:
    """What is wrong with ``value`` of the parameter ``name`` (dotted inside a mapping) declared as ``want``: a count
    out of range, a NaN or infinity, another type; a mapping key by key against the default mapping (an unknown
    key with the nearest known one). One line each."""
    key = name.rsplit(".", 1)[-1]
    default = want.default
    typed = fits(default, value)
    limit = count_limit(key, default)
    if is_count(key, default) and typed and value < 1:
        return [
            f"{label}: {quoted_name(name)}: expected a count of at least 1 like the notebook's default "
            f"{default}, found {shown(value)}"
        ]
    if limit is not None and typed and isinstance(value, int) and not 1 <= value <= limit:
        return [
            f"{label}: {quoted_name(name)}: expected a count from 1 to {limit:,} ({COUNT_FACTOR} times the notebook's "
            f"default {default}; more is a run of days), found {shown(value)}"
        ]
    mapping = isinstance(value, dict) and isinstance(default, dict)  # checked key by key below
    if typed and not mapping and not finite(value):
        return [
            f"{label}: {quoted_name(name)}: expected a finite number like the notebook's default "
            f"{shown(default)}, found {shown(value)}"
        ]
    if value is None and want.nullable:
        return []
    if not typed:
        return [
            f"{label}: {quoted_name(name)}: expected {kind(default)}{' or null' if want.nullable else ''} "
            f"like the notebook's default {shown(default)}, found {kind(value)} {shown(value)}"
        ]
    if mapping:
        return [line for k, v in value.items() for line in nested_problems(label, name, k, v, default)]
    return []


def nested_problems(label: str, name: str, key: object, value: object, default: dict) -> list[str]:
    """:func:`value_problems` of one key of a mapping parameter ``name`` against the notebook's default mapping."""
    dotted = f"{name}.{key}"
    if key not in default:
        near = difflib.get_close_matches(str(key), [str(k) for k in default], n=1, cutoff=0.6)
        hint = f"did you mean {name}.{near[0]}?" if near else f"known: {', '.join(str(k) for k in default)}"
        return [f"{label}: {quoted_name(dotted)}: not a key of the notebook's {name}; {hint}"]
    inner = default[key]
    return value_problems(label, dotted, value, Declared(inner, inner is None))


#: The parameters cell's name for a contract notebook's overrides.
OVERRIDES = "overrides"


def split_overrides(params: dict, declared: dict[str, Declared]) -> tuple[dict, dict]:
    """A contract notebook's profile ``params`` as (the names its parameters cell declares, the overrides)."""
    cell = {k: v for k, v in params.items() if k in declared and k != OVERRIDES}
    return cell, {k: v for k, v in params.items() if k not in cell}


def papermill_parameters(params: dict, declared: dict[str, Declared], contract: type | None) -> dict:
    """What papermill injects from a profile's ``params``: the file's names as they are, or, for a contract
    notebook, the cell's names and the other names as the one mapping ``overrides``."""
    if contract is None:
        return dict(params)
    cell, overrides = split_overrides(params, declared)
    return {**cell, OVERRIDES: overrides}


def injected_parameters(stem: str, profile: str, extra: dict | None = None) -> dict:
    """What papermill injects into notebook ``stem`` for ``profile`` (:func:`papermill_parameters` of its profile
    file with ``extra`` in place, a contract notebook's overrides as one mapping), after checking them
    (:func:`check_config`; :class:`ConfigError` with every problem). The runner's ``profile`` and ``output_dir`` are
    the caller's to add."""
    params = {**load_parameters(stem, profile), **(extra or {})}
    source = current().notebooks / f"{stem}.ipynb"
    declared = notebook_parameters(source)
    contract = load_manifest(stem).contract
    problems = check_config(config_path(stem, profile), params, declared, contract)
    if problems:
        raise ConfigError(problems)
    return papermill_parameters(params, declared, contract)


def effective_parameters(stem: str, profile: str) -> dict:
    """The parameters a run of notebook ``stem`` at ``profile`` records: its profile file's names, or, for a contract
    notebook, the file's names that its parameters cell declares and then every field of the contract with the
    file's other names (the overrides) in place (:meth:`pate_study.core.contract.StudyContract.from_overrides`). A
    field the contract shares with the cell (03's ``seed``) takes the cell's value, as the notebook hands it in."""
    params = load_parameters(stem, profile)
    contract = load_manifest(stem).contract
    if contract is None:
        return params
    cell, overrides = split_overrides(params, notebook_parameters(current().notebooks / f"{stem}.ipynb"))
    shared = {f.name: cell[f.name] for f in dataclasses.fields(contract) if f.name in cell}
    config = contract.from_overrides({**overrides, **shared}, source=f"configs/{stem}/{profile}.yaml")
    return {**cell, **config.as_record()}


def check_config(path: Path, params: dict, declared: dict[str, Declared], contract: type | None = None) -> list[str]:
    """One line per parameter of ``params`` that its notebook does not declare (with the nearest known name), or
    whose value breaks a rule of :func:`value_problems` (mappings walked key by key): file, parameter, expected,
    found. With a ``contract``, the names the cell does not declare are overrides, checked against the contract."""
    label = relative_label(path)
    if contract is not None:
        if OVERRIDES not in declared:
            return [
                f"{label}: notebooks/{Path(path).parent.name}.ipynb: its manifest names a contract but its "
                f"parameters cell declares no {OVERRIDES!r} mapping"
            ]
        params, overrides = split_overrides(params, declared)
        problems = check_config(path, params, declared)
        return problems + contract_problems(contract, overrides, label)
    known = [k for k in declared if k not in RUNNER_PARAMETERS]
    problems = []
    for name, value in params.items():
        if name not in declared:
            near = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
            hint = f"did you mean {near[0]}?" if near else f"known: {', '.join(known)}"
            problems.append(
                f"{label}: {quoted_name(name)}: not a parameter of notebooks/{Path(path).parent.name}.ipynb; {hint}"
            )
            continue
        problems += value_problems(label, str(name), value, declared[name])
    return problems


def check_configs(
    stems: list[str], profile: str, configs_dir: Path | None = None, notebooks_dir: Path | None = None
) -> None:
    """Check every ``configs/<stem>/<profile>.yaml`` of ``stems`` against its notebook's parameters cell (names
    and types) before anything runs; ConfigError listing every problem found, one line each."""
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
