"""Each notebook's manifest, ``configs/<stem>/notebook.yaml``: what the runner needs to know about the notebook
besides its parameters. Read and checked here, and nowhere else::

    datasets: [audioset]            # the data_recipes datasets it reads, prepared before it runs ([] for none)
    waits_for:                      # optional: notebooks that must finish first when both are in a run, and why
      04_audioset_teachers: 05 reads the votes of 04's teacher ensembles from the cache
    reference_seconds:              # optional: one fresh-clone run's time per profile (the schedule's estimate
      paper: 502.0                  # while build/timings.<profile>.json lacks the notebook)
    contract: pate_study.experiments.pate2018_lab:Lab2Config
                                    # optional: the study's contract (pate_study.core.contract): its profile files
                                    # hold only overrides, checked against the class before any kernel starts

A bad manifest is one line per problem naming the file, the key, what was expected and what was found
(:class:`~.yamlfile.ConfigError`); a notebook without one cannot run.
"""

from __future__ import annotations

import dataclasses
import difflib
import graphlib
import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import data_recipes
from pate_study.core.contract import StudyContract
from pate_study.core.owned import describe_path
from pate_study.tooling.notebook_runner.layout import PROFILES, current, list_notebooks, relative_label
from pate_study.tooling.notebook_runner.yamlfile import ConfigError, kind, quoted_name, read_config, shown

MANIFEST_NAME = "notebook.yaml"
#: The keys a manifest may set, with what each holds (the messages quote it).
MANIFEST_KEYS = {
    "datasets": "a list of data_recipes dataset names ([] for a notebook that reads none)",
    "waits_for": "a mapping of notebook stems to the reason this notebook waits for them",
    "reference_seconds": f"a mapping of profiles ({', '.join(PROFILES)}) to a positive number of seconds",
    "contract": "the study's configuration class as `package.module:ClassName`, a frozen StudyContract",
}
REQUIRED_KEYS = ("datasets",)
MANIFEST_ADVICE = "a manifest sets at least `datasets: [...]` (docs/architecture.md, Adding a notebook)"


@dataclass(frozen=True)
class Manifest:
    """One notebook's manifest, checked: its datasets, the notebooks it waits for (with why) and its reference
    time per profile."""

    stem: str
    datasets: tuple[str, ...] = ()
    waits_for: dict[str, str] = field(default_factory=dict)
    reference_seconds: dict[str, float] = field(default_factory=dict)
    contract: type | None = None


def manifest_path(stem: str, configs_dir: Path | None = None) -> Path:
    """``configs/<stem>/notebook.yaml`` (``configs_dir`` defaults to the layout's at call time)."""
    return Path(current().configs if configs_dir is None else configs_dir) / stem / MANIFEST_NAME


def datasets_problems(label: str, value: object, known: list[str]) -> list[str]:
    """What is wrong with a manifest's ``datasets`` (one line each)."""
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return [f"{label}: datasets: expected {MANIFEST_KEYS['datasets']}, found {kind(value)} {shown(value)}"]
    return [
        f"{label}: datasets: {shown(name)} is not a data_recipes dataset; expected one of {', '.join(known)}"
        for name in value
        if name not in known
    ]


def waits_for_problems(label: str, stem: str, value: object, notebooks: list[str]) -> list[str]:
    """What is wrong with a manifest's ``waits_for`` (one line each)."""
    if not isinstance(value, dict):
        return [f"{label}: waits_for: expected {MANIFEST_KEYS['waits_for']}, found {kind(value)} {shown(value)}"]
    problems = []
    for other, why in value.items():
        if other == stem or other not in notebooks:
            problems.append(
                f"{label}: waits_for: {shown(other)}: expected another notebook of notebooks/ (one of "
                f"{', '.join(s for s in notebooks if s != stem)})"
            )
        elif not isinstance(why, str) or not why.strip():
            problems.append(
                f"{label}: waits_for: {other}: expected the reason it waits (a sentence), found {shown(why)}"
            )
    return problems


def _as_float(number: int | float) -> float:
    """``number`` as a float; an integer too large for one (``1`` followed by 400 zeros) as infinity."""
    try:
        return float(number)
    except OverflowError:
        return math.inf


def reference_problems(label: str, value: object) -> list[str]:
    """What is wrong with a manifest's ``reference_seconds`` (one line each)."""
    if not isinstance(value, dict):
        return [
            f"{label}: reference_seconds: expected {MANIFEST_KEYS['reference_seconds']}, found {kind(value)} "
            f"{shown(value)}"
        ]
    problems = []
    for profile, seconds in value.items():
        if profile not in PROFILES:
            problems.append(f"{label}: reference_seconds: {shown(profile)}: expected a profile, one of {PROFILES}")
        elif (
            isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < _as_float(seconds) < math.inf
        ):
            problems.append(
                f"{label}: reference_seconds: {profile}: expected a positive number of seconds, found {shown(seconds)}"
            )
    return problems


def load_contract(value: str) -> type:
    """The class named ``package.module:ClassName`` (a manifest's ``contract``)."""
    module, _, name = value.partition(":")
    return getattr(importlib.import_module(module), name)


def contract_problems(label: str, value: object) -> list[str]:
    """Whether ``value`` names an importable frozen :class:`~pate_study.core.contract.StudyContract` whose defaults
    build (the paper profile)."""
    want = f"{label}: contract: expected {MANIFEST_KEYS['contract']}"
    module, _, name = value.partition(":") if isinstance(value, str) else ("", "", "")
    if not (all(part.isidentifier() for part in module.split(".")) and name.isidentifier()):
        return [f"{want} (module:ClassName), found {shown(value)}"]
    try:
        contract = load_contract(value)
    except (ImportError, AttributeError, ValueError) as err:
        return [f"{want}; {shown(value)} does not import ({type(err).__name__})"]
    frozen = dataclasses.is_dataclass(contract) and contract.__dataclass_params__.frozen
    if not (isinstance(contract, type) and issubclass(contract, StudyContract) and frozen):
        return [f"{want}; {shown(value)} is not one"]
    return []


def manifest_problems(label: str, stem: str, raw: dict, notebooks: list[str], known: list[str]) -> list[str]:
    """Every problem of the manifest ``raw`` of notebook ``stem`` (``notebooks``: the notebooks there are;
    ``known``: the data_recipes names), one line each, naming ``label`` (its file) and the key."""
    problems = []
    for key in raw:
        if key not in MANIFEST_KEYS:
            near = difflib.get_close_matches(str(key), list(MANIFEST_KEYS), n=1, cutoff=0.6)
            hint = f"did you mean {near[0]}?" if near else f"expected one of {', '.join(MANIFEST_KEYS)}"
            problems.append(f"{label}: {quoted_name(key)}: not a manifest key; {hint}")
    problems += [f"{label}: {key}: missing; expected {MANIFEST_KEYS[key]}" for key in REQUIRED_KEYS if key not in raw]
    if "datasets" in raw:
        problems += datasets_problems(label, raw["datasets"], known)
    if "waits_for" in raw:
        problems += waits_for_problems(label, stem, raw["waits_for"], notebooks)
    if "reference_seconds" in raw:
        problems += reference_problems(label, raw["reference_seconds"])
    if "contract" in raw:
        problems += contract_problems(label, raw["contract"])
    return problems


def load_manifest(stem: str, configs_dir: Path | None = None) -> Manifest:
    """The checked manifest of notebook ``stem``; ConfigError with one line per problem (a missing file too)."""
    path = manifest_path(stem, configs_dir)
    label = relative_label(path)
    if not path.is_file():
        if path.exists() or path.is_symlink():
            raise ConfigError(
                [
                    f"{label}: {describe_path(path)} where the notebook's manifest belongs (a YAML file); "
                    f"{MANIFEST_ADVICE}"
                ]
            )
        raise ConfigError([f"{label}: missing; every notebook needs its manifest: {MANIFEST_ADVICE}"])
    raw = read_config(path, what="manifest keys", advice=MANIFEST_ADVICE)
    problems = manifest_problems(label, stem, raw, list_notebooks(), data_recipes.names())
    if problems:
        raise ConfigError(problems)
    return Manifest(
        stem,
        tuple(raw["datasets"]),
        dict(raw.get("waits_for") or {}),
        {profile: float(seconds) for profile, seconds in (raw.get("reference_seconds") or {}).items()},
        load_contract(raw["contract"]) if "contract" in raw else None,
    )


def load_manifests(stems: list[str], configs_dir: Path | None = None) -> dict[str, Manifest]:
    """The manifests of ``stems``; ConfigError listing every problem of every one, and a cycle of ``waits_for``
    among them (a run could never start the notebooks on it)."""
    manifests, problems = {}, []
    for stem in stems:
        try:
            manifests[stem] = load_manifest(stem, configs_dir)
        except ConfigError as err:
            problems += err.problems
    try:
        tuple(graphlib.TopologicalSorter(waits_table(manifests)).static_order())
    except graphlib.CycleError as err:
        cycle = err.args[1]
        problems.append(
            f"{relative_label(manifest_path(cycle[0], configs_dir))}: waits_for: a cycle "
            f"{' -> '.join(cycle)}; expected each notebook to wait only for notebooks that do not wait for it"
        )
    if problems:
        raise ConfigError(problems)
    return manifests


def waits_table(manifests: dict[str, Manifest]) -> dict[str, dict[str, str]]:
    """``{stem: {notebook it waits for: why}}`` of ``manifests`` (the schedule's precedence)."""
    return {stem: dict(manifest.waits_for) for stem, manifest in manifests.items()}


def reference_table(manifests: dict[str, Manifest], profile: str) -> dict[str, float]:
    """``{stem: reference seconds}`` for ``profile``, for the notebooks of ``manifests`` that give one."""
    return {s: m.reference_seconds[profile] for s, m in manifests.items() if profile in m.reference_seconds}


def datasets_for(stems: list[str], manifests: dict[str, Manifest]) -> list[str]:
    """The datasets the notebooks ``stems`` read, each once, in first-use order."""
    names: list[str] = []
    for stem in stems:
        for name in manifests[stem].datasets:
            if name not in names:
                names.append(name)
    return names
