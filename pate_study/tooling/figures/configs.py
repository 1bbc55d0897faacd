"""Parameter files checked against their notebook: ``configs/<stem>/<profile>.yaml`` sets the names of the notebook's
``parameters`` cell (papermill's reading of it); an unknown name (with the nearest known one), a value of another type
than the notebook's default, a count below 1 or a NaN is one line each, naming the file, the parameter, what was
expected and what was found. Nothing runs until all are fixed."""

from __future__ import annotations

import ast
import difflib
import math
from dataclasses import dataclass
from pathlib import Path

import papermill

from .layout import RUNNER_PARAMETERS, current, relative_label
from .yamlfile import ConfigError, kind, quoted_name, read_config, shown


def load_parameters(stem: str, profile: str, configs_dir: Path | None = None) -> dict:
    """The papermill parameters of notebook ``stem`` for ``profile`` (``configs/<stem>/<profile>.yaml``;
    ``configs_dir`` defaults to the layout's configs folder at call time, the folder the checks read)."""
    path = Path(current().configs if configs_dir is None else configs_dir) / stem / f"{profile}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"no parameter file {path}: every notebook needs configs/{stem}/{{smoke,paper}}.yaml")
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


def finite(value: object) -> bool:
    """Whether ``value`` holds no NaN or infinity (YAML's ``.nan``, ``.inf``), in a list at any depth: no notebook
    takes one, and NaN passes every comparison a notebook's own check makes (``nan < 0`` is false)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    return True


def check_config(path: Path, params: dict, declared: dict[str, Declared]) -> list[str]:
    """One line per parameter of ``params`` that its notebook does not declare (with the nearest known name),
    whose value has another type than the notebook's default, that is a count below 1 (:func:`is_count`) or a
    NaN or infinity (:func:`finite`): file, parameter, expected, found."""
    label = relative_label(path)
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
        want = declared[name]
        if is_count(name, want.default) and fits(want.default, value) and value < 1:
            problems.append(
                f"{label}: {quoted_name(name)}: expected a count of at least 1 like the notebook's default "
                f"{want.default}, found {shown(value)}"
            )
            continue
        if fits(want.default, value) and not finite(value):
            problems.append(
                f"{label}: {quoted_name(name)}: expected a finite number like the notebook's default "
                f"{shown(want.default)}, found {shown(value)}"
            )
            continue
        if value is None and want.nullable or fits(want.default, value):
            continue
        problems.append(
            f"{label}: {quoted_name(name)}: expected {kind(want.default)}{' or null' if want.nullable else ''} "
            f"like the notebook's default {shown(want.default)}, found {kind(value)} {shown(value)}"
        )
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
        problems += check_config(path, params, notebook_parameters(notebooks_dir / f"{stem}.ipynb"))
    if problems:
        raise ConfigError(problems)
