"""Catalogue of every figure and table of the five source documents (``registry.yaml``).

Each entry says what the item is (document, label, caption, kind), which notebook regenerates it, which
files under ``figures/`` it claims, how far the reproduction has got (``status``) and the numbers the
source prints (``published``), so every regenerated table can show "paper" beside "ours".

``write_index`` turns the registry, the provenance sidecars and the recorded scalars into
``figures/INDEX.md``. ``check_outputs`` is what the tests use to keep registry and files in step.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .io import atomic_write_text
from .outputs import FIGURE_FORMATS, TABLE_FORMATS, read_provenance, read_scalars
from .paths import FIGURES_DIR, REGISTRY_FILE

logger = logging.getLogger(__name__)

DOCUMENTS = {
    "make2021": "Yovine, Mayr, Sosa, Visca (2021), MAKE 3(4):788-801",
    "visca2021": "Visca (2021), MSc thesis, Universidad ORT Uruguay",
    "sosa2021": "Sosa (2021), engineering thesis, Universidad ORT Uruguay",
    "muschiol2021": "Muschiol (2021), MSc thesis, Universität Leipzig",
    "papernot2018": "Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson (2018), Scalable Private Learning with PATE, ICLR 2018",
    "papernot2017": "Papernot, Abadi, Erlingsson, Goodfellow, Talwar (2017), Semi-supervised Knowledge Transfer for Deep Learning from Private Training Data, ICLR 2017",
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


def _validate_entry(entry: Any, position: int, source: Path) -> Item:
    where = f"{source} entry {position}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(entry).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in entry]
    if missing:
        raise ValueError(f"{where} ({entry.get('id', '?')}): missing keys {missing}")
    checks = [("document", DOCUMENTS), ("kind", KINDS), ("type", TYPES), ("status", STATUSES)]
    for key, allowed in checks:
        if entry[key] not in allowed:
            raise ValueError(f"{where} ({entry['id']}): {key}={entry[key]!r}, expected one of {list(allowed)}")
    if not str(entry["id"]).startswith(entry["document"] + "-"):
        raise ValueError(f"{where}: id {entry['id']!r} must start with its document '{entry['document']}-'")
    outputs = tuple(entry["outputs"] or ())
    bad = [o for o in outputs if not o.endswith(OUTPUT_SUFFIXES)]
    if bad:
        raise ValueError(f"{where} ({entry['id']}): outputs {bad} must end with one of {OUTPUT_SUFFIXES}")
    return Item(id=entry["id"], document=entry["document"], label=str(entry["label"]), type=entry["type"],
                kind=entry["kind"], caption=str(entry["caption"]), same_as=tuple(entry["same_as"] or ()),
                notebook=entry["notebook"], outputs=outputs, status=entry["status"],
                published=entry.get("published") or {}, notes=str(entry.get("notes") or ""))


def load_registry(path: Path = REGISTRY_FILE) -> list[Item]:
    """Read and validate the registry: known documents/kinds/statuses, unique ids, symmetric ``same_as``."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"registry file {path} not found")
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
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
    for item in load_registry(path):
        if item.id == item_id:
            return item.published
    raise ValueError(f"item_id={item_id!r} is not in the registry {path}")


def existing_outputs(figures_dir: Path = FIGURES_DIR) -> set[str]:
    """Figure and table files ``<stem>/<file>`` under ``figures_dir`` (relative paths), sidecars and scalars excluded;
    the outputs of profiles other than paper (``<stem>/<profile>/``, e.g. a GPU run) are not registry results."""
    figures_dir = Path(figures_dir)
    return {p.relative_to(figures_dir).as_posix() for p in figures_dir.rglob("*")
            if p.is_file() and p.name.endswith(OUTPUT_SUFFIXES) and p.name != "INDEX.md"
            and len(p.relative_to(figures_dir).parts) == 2  # <stem>/<file>: other profiles' subfolders are not results
            and not any(part.startswith(".") for part in p.relative_to(figures_dir).parts)}  # skip staging


def check_outputs(items: list[Item], figures_dir: Path = FIGURES_DIR) -> tuple[list[str], list[str]]:
    """(claimed but missing, present but unclaimed) output files; both empty when registry and files agree."""
    claimed = {o for item in items for o in item.outputs}
    present = existing_outputs(figures_dir)
    return sorted(claimed - present), sorted(present - claimed)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def paper_vs_ours(item: Item, scalars: dict) -> str:
    """'key: paper P / ours O' for each published scalar; a pointer to the output for published rows."""
    published = item.published or {}
    ours = scalars.get(item.id, {})
    parts = []
    for key, value in (published.get("values") or {}).items():
        parts.append(f"{key}: paper {_fmt(value)} / ours {_fmt(ours[key]) if key in ours else '—'}")
    if published.get("rows"):
        tables = [o for o in item.outputs if o.endswith(".md")]
        where = f"paper beside ours in [{Path(tables[0]).name}]({tables[0]})" if tables else "not yet regenerated"
        parts.append(f"{len(published['rows'])} published rows: {where}")
    if not parts and published.get("text"):
        parts.append(f"paper: {published['text']}")
    if "summary" in ours:  # a notebook's one-line account of its own result, for items without paper numbers
        parts.append(f"ours: {ours['summary']}")
    return "; ".join(parts).replace("|", "\\|").replace("\n", " ")


#: Statuses of items whose numbers have been regenerated (a published value then needs a verdict).
REGENERATED = ("synthetic only", "real data at reduced scale", "real data at paper scale", "regenerated (analytic)")


def has_published_values(item: Item) -> bool:
    """True when the source prints numbers for ``item`` (scalar values or table rows), not only text."""
    return bool((item.published or {}).get("values") or (item.published or {}).get("rows"))


def verdict_cell(item: Item, scalars: dict) -> str:
    """'**verdict**: reason (rule)' from the item's recorded verdict (:mod:`pate_study.verdicts`), or ''."""
    ours = scalars.get(item.id, {})
    if "verdict" not in ours:
        return ""
    reason = f": {ours['verdict_reason']}" if ours.get("verdict_reason") else ""
    return f"**{ours['verdict']}**{reason} (rule: {ours.get('verdict_rule', '')})".replace("|", "\\|").replace("\n", " ")


def missing_verdicts(items: list[Item], figures_dir: Path = FIGURES_DIR) -> list[str]:
    """Ids of items with published values and a regenerated status whose notebook recorded no verdict."""
    figures_dir = Path(figures_dir)
    missing = []
    for item in items:
        if item.status in REGENERATED and has_published_values(item):
            scalars = read_scalars(figures_dir / item.notebook) if item.notebook else {}
            if "verdict" not in scalars.get(item.id, {}):
                missing.append(item.id)
    return missing


def _provenance_cell(item: Item, figures_dir: Path) -> str:
    for output in item.outputs:
        try:
            prov = read_provenance(figures_dir / output)
        except FileNotFoundError:
            continue
        return f"{prov['data']}; profile {prov['profile']}; seed {prov['seed']}; {prov['commit']}, {prov['date'][:10]}"
    return ""


def executed_notebooks_line(items: list[Item], figures_dir: Path = FIGURES_DIR) -> str:
    """A line linking each notebook's executed copy (``figures/<stem>/<stem>.ipynb``, written by ``make figures``)."""
    stems = sorted({i.notebook for i in items if i.notebook})
    links = [f"[{s}]({s}/{s}.ipynb)" for s in stems if (Path(figures_dir) / s / f"{s}.ipynb").exists()]
    if not links:
        return "Executed notebooks: none yet (`make figures` writes them beside each notebook's outputs)."
    return "Executed notebooks (outputs and findings, readable without running anything): " + ", ".join(links) + "."


def index_markdown(items: list[Item], figures_dir: Path = FIGURES_DIR) -> str:
    """The text of ``figures/INDEX.md``: a summary, then one row per registry item."""
    figures_dir = Path(figures_dir)
    scalars_by_notebook: dict[str, dict] = {}
    for item in items:
        if item.notebook and item.notebook not in scalars_by_notebook:
            scalars_by_notebook[item.notebook] = read_scalars(figures_dir / item.notebook)
    counts = {s: sum(1 for i in items if i.status == s) for s in STATUSES}
    lines = [
        "# Figure and table index",
        "",
        "Generated by `make figures` from `pate_study/registry.yaml`, the provenance sidecars and the recorded "
        "scalars. Do not edit by hand.",
        "",
        f"{len(items)} items: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n) + ".",
        "",
        executed_notebooks_line(items, figures_dir),
        "",
        "| id | label | kind | notebook | status | outputs | provenance | paper vs ours | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for item in items:
        outputs = " ".join(f"[{Path(o).suffix[1:]}]({o})" for o in item.outputs)
        scalars = scalars_by_notebook.get(item.notebook or "", {})
        row = [item.id, item.label, item.kind, item.notebook or "", item.status, outputs,
               _provenance_cell(item, figures_dir), paper_vs_ours(item, scalars), verdict_cell(item, scalars)]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") if i < 5 else str(c) for i, c in enumerate(row)) + " |")
    lines += ["", "Documents: " + "; ".join(f"`{k}` = {v}" for k, v in DOCUMENTS.items()) + "."]
    return "\n".join(lines) + "\n"


def write_index(figures_dir: Path = FIGURES_DIR, registry_file: Path = REGISTRY_FILE) -> Path:
    """Write ``figures/INDEX.md`` (atomically) and return its path."""
    items = load_registry(registry_file)
    path = atomic_write_text(Path(figures_dir) / "INDEX.md", index_markdown(items, figures_dir))
    logger.info("wrote %s (%d items)", path, len(items))
    return path
