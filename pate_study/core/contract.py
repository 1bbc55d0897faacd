"""A study's contract: one frozen configuration class whose fields are the notebook's parameters, whose defaults are
the paper profile, and whose annotations say what each field accepts.

A study declares its configuration once, as a frozen dataclass deriving from :class:`StudyContract`::

    @dataclass(frozen=True)
    class LabConfig(StudyContract):
        votes_dataset: Literal["mnist", "svhn", "adult"] = "mnist"
        n_queries: Annotated[int, COUNT] = 640
        delta: Annotated[float, Range(0, 1, low_inclusive=False, high_inclusive=False)] = 1e-5

A profile file then holds only what differs from the paper profile (the smoke profile, a GPU profile), and
:meth:`StudyContract.from_overrides` checks those overrides against the annotations before anything runs: an unknown
name (with the nearest known one), a value of another type, a number outside its :class:`Range`, a NaN, a ``None``
where the annotation does not allow one, and, inside a nested contract (a field whose type is itself a frozen
dataclass), every key by the same rules, named with dots (``replicates.n_boot``). Every problem is one line naming the
source, the field, what was expected and what was found (:class:`ContractError`); nothing is coerced silently but
lists into tuples and mappings into nested contracts. The annotations are read with :func:`typing.get_type_hints`
(PEP 593's ``Annotated`` for the ranges), so a contract is validated from its declaration and nowhere else, in the
manner of scikit-learn's parameter validation (constraints declared beside the parameters, checked once at the
boundary).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

__all__ = [
    "Range",
    "COUNT",
    "POSITIVE",
    "PROBABILITY",
    "OPEN_UNIT",
    "ContractError",
    "CellParameters",
    "StudyContract",
    "contract_problems",
]


@dataclass(frozen=True)
class Range:
    """The interval a number field accepts, for ``Annotated[int | float, Range(...)]``: ``low`` and ``high`` (None:
    unbounded), each end inclusive unless said otherwise."""

    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True

    def holds(self, value: float) -> bool:
        """Whether ``value`` lies in the interval."""
        if self.low is not None and (value < self.low or (value == self.low and not self.low_inclusive)):
            return False
        return self.high is None or not (value > self.high or (value == self.high and not self.high_inclusive))

    def describe(self) -> str:
        """The interval in words (``at least 1``, ``in (0, 1)``, ``in [1, 1000000]``)."""
        if self.high is None:
            return f"{'at least' if self.low_inclusive else 'above'} {_number(self.low)}"
        if self.low is None:
            return f"{'at most' if self.high_inclusive else 'below'} {_number(self.high)}"
        low, high = _number(self.low), _number(self.high)
        return f"in {'[' if self.low_inclusive else '('}{low}, {high}{']' if self.high_inclusive else ')'}"


def _number(value: float) -> str:
    """A bound as a message writes it: a whole number in full (``1000000``), any other briefly (``0.05``)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


#: A count: an integer of at least 1.
COUNT = Range(1)
#: A positive number.
POSITIVE = Range(0, low_inclusive=False)
#: A probability or fraction in [0, 1].
PROBABILITY = Range(0, 1)
#: A probability or fraction strictly between 0 and 1 (a δ, a split's share).
OPEN_UNIT = Range(0, 1, low_inclusive=False, high_inclusive=False)


class ContractError(ValueError):
    """Overrides that break a study's contract; ``problems`` holds one line per problem (source, field, expected,
    found), and the message is those lines joined."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def _shown(value: object, limit: int = 60) -> str:
    """``value`` as a message quotes it, cut at ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _split(annotation: Any) -> tuple[Any, tuple[Range, ...]]:
    """An annotation without its ``Annotated`` wrapper, and the ranges the wrapper held."""
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        return base, tuple(e for e in extras if isinstance(e, Range))
    return annotation, ()


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def _is_contract(annotation: Any) -> bool:
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation)


def expected(annotation: Any) -> str:
    """What ``annotation`` accepts, in words (for the messages)."""
    base, ranges = _split(annotation)
    origin = get_origin(base)
    if _is_union(origin):
        return " or ".join(expected(a) for a in get_args(base))
    if base is type(None):
        return "null"
    if origin is Literal:
        return "one of " + ", ".join(_shown(a) for a in get_args(base))
    if origin in (tuple, list):
        args = get_args(base)
        inner = args[0] if args else Any
        words = expected(inner)
        if words in ("an integer", "a number", "a string", "a mapping"):  # a bare type: "a list of integers"
            return f"a list of {words.removeprefix('a ').removeprefix('an ')}s"
        return f"a list, each {words}"
    if origin is dict or base is dict:
        return "a mapping"
    if _is_contract(base):
        return f"a mapping of {base.__name__}'s fields"
    words = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(base, str(base))
    return words + "".join(f" {r.describe()}" for r in ranges)


def value_problems(source: str, name: str, value: object, annotation: Any) -> list[str]:
    """What is wrong with ``value`` for the field ``name`` (dotted inside a nested contract) annotated
    ``annotation``: one line each, naming ``source``, the field, what was expected and what was found."""
    base, ranges = _split(annotation)
    origin = get_origin(base)
    wrong = [f"{source}: {name}: expected {expected(annotation)}, found {_shown(value)}"]
    if _is_union(origin):
        options = get_args(base)
        if value is None:
            return [] if type(None) in options else wrong
        for option in (o for o in options if o is not type(None)):
            if not value_problems(source, name, value, option):
                return []
        return wrong
    if value is None:
        return wrong
    if origin is Literal:
        return [] if any(value == a and type(value) is type(a) for a in get_args(base)) else wrong
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            return wrong
        args = [a for a in get_args(base) if a is not Ellipsis]
        if origin is tuple and len(get_args(base)) > 1 and Ellipsis not in get_args(base):
            if len(value) != len(args):
                return wrong
            return [
                p for i, (v, a) in enumerate(zip(value, args)) for p in value_problems(source, f"{name}[{i}]", v, a)
            ]
        inner = args[0] if args else Any
        return [p for i, v in enumerate(value) for p in value_problems(source, f"{name}[{i}]", v, inner)]
    if _is_contract(base):
        if not isinstance(value, Mapping):
            return wrong
        return contract_problems(base, value, source, prefix=f"{name}.")
    if origin is dict or base is dict:
        return [] if isinstance(value, Mapping) else wrong
    if base is Any:
        return []
    if base is bool:
        return [] if isinstance(value, bool) else wrong
    if base is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif base is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, base)
    if not ok:
        return wrong
    return [] if all(r.holds(value) for r in ranges) else wrong


def contract_problems(contract: type, values: Mapping, source: str, prefix: str = "") -> list[str]:
    """One line per key of ``values`` that ``contract`` has no field for (with the nearest field's name) or whose
    value breaks the field's annotation (:func:`value_problems`); nested contracts key by key."""
    if not isinstance(values, Mapping):
        return [f"{source}: expected a mapping of {contract.__name__}'s fields, found {_shown(values)}"]
    hints = get_type_hints(contract, include_extras=True)
    names = [f.name for f in dataclasses.fields(contract)]
    problems = []
    for key, value in values.items():
        if key not in names:
            near = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
            hint = f"did you mean {prefix}{near[0]}?" if near else f"known: {', '.join(names)}"
            problems.append(f"{source}: {prefix}{key}: not a field of {contract.__name__}; {hint}")
            continue
        problems += value_problems(source, f"{prefix}{key}", value, hints[key])
    return problems


def _converted(value: object, annotation: Any) -> object:
    """``value`` (already checked) in the field's own type: lists as tuples, mappings as nested contracts."""
    base, _ = _split(annotation)
    origin = get_origin(base)
    if _is_union(origin):
        for option in get_args(base):
            if option is not type(None) and not value_problems("", "", value, option):
                return _converted(value, option)
        return value
    if origin is tuple and isinstance(value, (list, tuple)):
        args = [a for a in get_args(base) if a is not Ellipsis]
        inner = args * len(value) if len(args) == 1 else args
        return tuple(_converted(v, a) for v, a in zip(value, inner))
    if origin is list and isinstance(value, (list, tuple)):
        return [_converted(v, (get_args(base) or (Any,))[0]) for v in value]
    if _is_contract(base) and isinstance(value, Mapping):
        return _merged(base(), value)
    if base is float and isinstance(value, int):
        return float(value)
    return value


def _merged(instance: Any, values: Mapping) -> Any:
    """``instance`` (a contract) with ``values`` (checked) in place; a nested contract is merged key by key, so an
    override of one nested key keeps the others' values."""
    hints = get_type_hints(type(instance), include_extras=True)
    changes = {}
    for key, value in values.items():
        base, _ = _split(hints[key])
        if _is_contract(base) and isinstance(value, Mapping):
            changes[key] = _merged(getattr(instance, key), value)
        else:
            changes[key] = _converted(value, hints[key])
    return dataclasses.replace(instance, **changes)


def _plain(value: object) -> object:
    """``value`` as JSON and YAML write it: tuples as lists, nested contracts as mappings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class StudyContract:
    """The base of every study's configuration (a frozen dataclass deriving from it; see the module docstring).

    Every instance is checked against the annotations when it is made (:meth:`__post_init__`), so a study called
    from code rather than from a profile gets the same one-line problems; a subclass with rules across fields
    calls ``super().__post_init__()`` first."""

    def __post_init__(self) -> None:
        """:class:`ContractError` naming every field whose value breaks its annotation."""
        values = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}
        problems = contract_problems(type(self), values, type(self).__name__)
        if problems:
            raise ContractError(problems)

    @classmethod
    def from_overrides(cls, overrides: Mapping | None = None, *, source: str = "overrides") -> Any:
        """The paper profile (the class's defaults) with ``overrides`` in place, after checking every override
        against the annotations; :class:`ContractError` listing every problem, one line each, naming ``source``."""
        problems = contract_problems(cls, overrides or {}, source)
        if problems:
            raise ContractError(problems)
        return _merged(cls(), overrides or {})

    @classmethod
    def from_cell(cls, cell: Mapping[str, Any]) -> Any:
        """The settings a notebook's parameters cell gives (``cell``: its namespace, ``globals()`` once the cell has
        run): its ``overrides`` in place (:meth:`from_overrides`, refusals naming the cell's ``profile``), and every
        field the contract shares with the cell's own names (:class:`CellParameters`: ``seed`` in a study that reads
        it from its settings) taking the cell's value, as the notebook hands it in. The one place that rule is
        written: the notebooks' set-up cells and the runner's record of a run both call it. A ValueError naming the
        names the cell has not bound."""
        shared = [
            f.name for f in dataclasses.fields(CellParameters) if f.name in {g.name for g in dataclasses.fields(cls)}
        ]
        missing = [name for name in ("profile", "overrides", *shared) if name not in cell]
        if missing:
            raise ValueError(f"{cls.__name__}: the parameters cell binds no {', '.join(missing)}; run it first")
        overrides = {**(cell["overrides"] or {}), **{name: cell[name] for name in shared}}
        return cls.from_overrides(overrides, source=f"overrides of profile {cell['profile']!r}")

    def as_record(self) -> dict:
        """Every field and its value, as JSON writes it (a record's ``parameters``)."""
        return _plain(self)

    def overrides(self) -> dict:
        """The fields whose values differ from the paper profile's, as JSON writes them."""
        paper, mine = _plain(type(self)()), _plain(self)
        return {k: v for k, v in mine.items() if paper[k] != v}


@dataclass(frozen=True)
class CellParameters(StudyContract):
    """What a notebook's parameters cell declares besides the runner's ``profile`` and ``output_dir`` and the study's
    ``overrides``: the run's seed and which data it reads (``auto``: the real data where prepared, else the synthetic
    stand-in, said in every stamp)."""

    seed: Annotated[int, Range(0)] = 0
    data: Literal["auto", "real", "synthetic"] = "auto"
