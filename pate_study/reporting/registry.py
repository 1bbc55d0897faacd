"""Catalogue of every figure and table of the five source documents (``registry.yaml``).

Each entry says what the item is (document, label, caption, kind), which notebook regenerates it, which
files under ``figures/`` it claims, how far the reproduction has got (``status``) and the numbers the
source prints (``published``), so every regenerated table can show "paper" beside "ours".

The index of regenerated outputs (``figures/INDEX.md``) is built from it in :mod:`pate_study.reporting.index`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pate_study.core.paths import REGISTRY_FILE

logger = logging.getLogger(__name__)

DOCUMENTS = {
    "make2021": "Yovine, Mayr, Sosa, Visca (2021), MAKE 3(4):788-801",
    "visca2021": "Visca (2021), MSc thesis, Universidad ORT Uruguay",
    "sosa2021": "Sosa (2021), engineering thesis, Universidad ORT Uruguay",
    "muschiol2021": "Muschiol (2021), MSc thesis, Universität Leipzig",
    "papernot2018": (
        "Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson (2018), Scalable Private Learning with PATE, "
        "ICLR 2018"
    ),
    "papernot2017": (
        "Papernot, Abadi, Erlingsson, Goodfellow, Talwar (2017), Semi-supervised Knowledge Transfer for Deep Learning "
        "from Private Training Data, ICLR 2017"
    ),
    "pate_study": "this package's own teaching figures (notebooks/00_dp_primer), not a figure of a source document",
}
KINDS = ("result", "analytic", "illustrative", "diagram", "listing")
TYPES = ("figure", "table")
STATUSES = (
    "not started",
    "synthetic only",
    "real data at reduced scale",
    "real data at paper scale",
    "regenerated (analytic)",
    "not applicable (diagram)",
)
FIGURE_FORMATS = ("png", "pdf")
TABLE_FORMATS = ("csv", "md")
REQUIRED_KEYS = ("id", "document", "label", "type", "kind", "caption", "same_as", "notebook", "outputs", "status")
OUTPUT_SUFFIXES = tuple("." + f for f in FIGURE_FORMATS + TABLE_FORMATS)


@dataclass(frozen=True)
class Item:
    """One figure or table of a source document."""

    id: str
    document: str
    label: str
    type: str
    kind: str
    caption: str
    same_as: tuple[str, ...]
    notebook: str | None
    outputs: tuple[str, ...]
    status: str
    published: dict = field(default_factory=dict)
    notes: str = ""


def _string_list(entry: dict, key: str, where: str) -> tuple[str, ...]:
    """``entry[key]`` as a tuple of non-empty strings: a YAML list (``[]`` or null for none). A bare string is
    refused, never read character by character."""
    value = entry.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        hint = f" (write [{value!r}])" if isinstance(value, str) else ""
        raise ValueError(f"{where}: {key} must be a list, got {type(value).__name__} {value!r}{hint}"[:300])
    bad = [v for v in value if not isinstance(v, str) or not v]
    if bad:
        raise ValueError(f"{where}: {key} must list non-empty strings, got {bad[0]!r}")
    return tuple(value)


def _string(entry: dict, key: str, where: str, *, optional: bool = False) -> str | None:
    """``entry[key]`` as a non-empty string (``None`` allowed when ``optional``); a number is refused."""
    value = entry.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: {key} must be a non-empty string, got {value!r}"[:300])
    return value


def _validate_entry(entry: Any, position: int, source: Path) -> Item:
    where = f"{source} entry {position}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(entry).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in entry]
    if missing:
        raise ValueError(f"{where} ({entry.get('id', '?')}): missing keys {missing}")
    item_id = _string(entry, "id", where)
    where = f"{where} ({item_id})"
    checks = [("document", DOCUMENTS), ("kind", KINDS), ("type", TYPES), ("status", STATUSES)]
    for key, allowed in checks:
        if not isinstance(entry[key], str) or entry[key] not in allowed:
            raise ValueError(f"{where}: {key}={entry[key]!r}, expected one of {list(allowed)}")
    if not item_id.startswith(entry["document"] + "-"):
        raise ValueError(
            f"{source} entry {position}: id {item_id!r} must start with its document '{entry['document']}-'"
        )
    outputs = _string_list(entry, "outputs", where)
    bad = [o for o in outputs if not o.endswith(OUTPUT_SUFFIXES)]
    if bad:
        raise ValueError(f"{where}: outputs {bad} must end with one of {OUTPUT_SUFFIXES}")
    published = entry.get("published")
    if published is not None and not isinstance(published, dict):
        raise ValueError(
            f"{where}: published must be a mapping (values:, rows:, text:), got {type(published).__name__}"
        )
    for key in ("label", "caption"):
        if not isinstance(entry[key], (str, int, float)) or isinstance(entry[key], bool):
            raise ValueError(f"{where}: {key} must be text, got {type(entry[key]).__name__}")
    notes = entry.get("notes")
    if notes is not None and not isinstance(notes, str):
        raise ValueError(f"{where}: notes must be text, got {type(notes).__name__}")
    return Item(
        id=item_id,
        document=entry["document"],
        label=str(entry["label"]),
        type=entry["type"],
        kind=entry["kind"],
        caption=str(entry["caption"]),
        same_as=_string_list(entry, "same_as", where),
        notebook=_string(entry, "notebook", where, optional=True),
        outputs=outputs,
        status=entry["status"],
        published=published or {},
        notes=str(notes or ""),
    )


def load_registry(path: Path = REGISTRY_FILE) -> list[Item]:
    """Read and validate the registry: known documents/kinds/statuses, unique ids, symmetric ``same_as``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"registry file {path} not found (or not a file)")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not valid YAML ({' '.join(str(err).split())})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("items"), list):
        raise ValueError(f"{path}: expected a top-level 'items:' list")
    items = [_validate_entry(e, i, path) for i, e in enumerate(raw["items"])]
    by_id: dict[str, Item] = {}
    for item in items:
        if item.id in by_id:
            raise ValueError(f"{path}: duplicate id {item.id!r}")
        by_id[item.id] = item
    for item in items:
        for other in item.same_as:
            if other not in by_id:
                raise ValueError(f"{path}: {item.id} same_as unknown id {other!r}")
            if item.id not in by_id[other].same_as:
                raise ValueError(f"{path}: same_as is not symmetric: {item.id} -> {other} but not back")
    return items


def published(item_id: str, path: Path = REGISTRY_FILE) -> dict:
    """The numbers a source prints for ``item_id`` (``{"values": ..., "rows": ..., "text": ...}``)."""
    if not isinstance(item_id, str) or not item_id:
        raise ValueError(f"item_id={item_id!r}: expected a registry id such as 'make2021-fig8'")
    for item in load_registry(path):
        if item.id == item_id:
            return item.published
    raise ValueError(f"item_id={item_id!r} is not in the registry {path}")
