"""Reading the runner's YAML files (parameter files, notebook manifests) strictly, and quoting values in one-line
messages: a syntax error, a key given twice, an alias or an empty file is one line naming the file, line and
column, never a traceback."""

from __future__ import annotations

import reprlib
from pathlib import Path

import yaml

from pate_study.core.errors import one_line
from pate_study.tooling.notebook_runner.layout import relative_label


class ConfigError(ValueError):
    """A runner file (parameter file, manifest) that does not match what it describes; ``problems`` holds one line
    per problem (file, key, expected, found), and the message is those lines joined."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


#: A file larger than this is refused before YAML reads it (the shipped ones are under 4 kB).
MAX_CONFIG_BYTES = 1 << 20
#: How many characters of a value a message quotes (a value can be huge: a YAML alias bomb, a long list).
SHOWN_CHARS = 80

KINDS = (
    (bool, "true or false"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (tuple, "a list"),
    (dict, "a mapping"),
)


def kind(value: object) -> str:
    """What ``value`` is, in a message's words (``an integer``, ``a list``, ``null``)."""
    if value is None:
        return "null"
    return next((name for t, name in KINDS if isinstance(value, t)), type(value).__name__)


def bounded_repr(value: object) -> str:
    """The repr of ``value`` with containers bounded (:mod:`reprlib`: at most a few elements per level, a few
    levels deep), so that quoting a huge value costs microseconds, not its whole size."""
    bounded = reprlib.Repr()
    bounded.maxlevel, bounded.maxlist, bounded.maxdict, bounded.maxstring, bounded.maxother = 3, 6, 6, 60, 60
    return bounded.repr(value)


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` bounded (:func:`bounded_repr`) and cut to ``limit`` characters (with the total length),
    for one-line messages; a value that cannot be printed at all is described by its type."""
    try:
        text = bounded_repr(value)
    except (RecursionError, MemoryError, ValueError):
        return f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def quoted_name(name: object) -> str:
    """A key as messages quote it: as written when it is a short string, else :func:`shown`."""
    return name if isinstance(name, str) and len(name) <= SHOWN_CHARS else shown(name)


class ParameterFileRefused(yaml.MarkedYAMLError):
    """Well-formed YAML that a runner file may not contain: a key given twice, an alias (``*name``)."""


class ParameterFileLoader(yaml.SafeLoader):
    """YAML's safe loader, stricter for the runner's files: a key given twice is refused (YAML says keys are
    unique; PyYAML keeps the last silently), and so is every alias (``&name`` / ``*name``): these files have no
    need of them, and nested aliases expand exponentially ("billion laughs")."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ParameterFileRefused(
                None,
                None,
                f"alias *{event.anchor}: aliases are not accepted in a parameter file or manifest; write the value out",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.setdefault(key, key_node.start_mark.line)
            except TypeError:
                continue  # an unhashable key: the safe loader's own error says so
            if first != key_node.start_mark.line:
                raise ParameterFileRefused(
                    None,
                    None,
                    f"{quoted_name(key)} given twice (first on line {first + 1}); keep one",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep)


#: What an empty parameter file should hold (the message's advice).
PARAMETER_FILE_ADVICE = (
    "a parameter file sets the notebook's parameters, `name: value` one per line (copy the other profile's file to "
    "start from)"
)


def read_config(path: Path, what: str = "parameters", advice: str = PARAMETER_FILE_ADVICE) -> dict:
    """The mapping in a YAML file of the runner; ConfigError naming the file, line and column of a syntax error, a
    key given twice or an alias (:class:`ParameterFileLoader`), and the file when it is empty or too large.
    ``what``: what the file's keys name (``parameters``, ``manifest keys``); ``advice``: what an empty file
    should hold."""
    label = relative_label(path)
    try:
        if Path(path).stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                [
                    f"{label}: {Path(path).stat().st_size:,} bytes, more than a parameter file needs "
                    f"(at most {MAX_CONFIG_BYTES:,}); expected `name: value` lines"
                ]
            )
        text = Path(path).read_text(encoding="utf-8")
        params = yaml.load(text, Loader=ParameterFileLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(x) for x in (getattr(err, "context", None), getattr(err, "problem", None)) if x)
        if isinstance(err, ParameterFileRefused):
            raise ConfigError([f"{label}{where}: {problem}"]) from None
        raise ConfigError(
            [
                f"{label}{where}: YAML syntax error: {problem or one_line(err)}; fix the file (YAML: "
                "`name: value`, one per line)"
            ]
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError([f"{label}: unreadable ({err})"]) from None
    if params is None:
        raise ConfigError([f"{label}: empty (no {what}); {advice}"])
    if not isinstance(params, dict):
        raise ConfigError([f"{label}: expected a mapping of {what[:-1]} names to values, found {kind(params)}"])
    return params
