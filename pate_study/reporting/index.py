"""``figures/INDEX.md``: every catalogued item with its status, files, provenance and verdict.

``write_index`` turns the registry (:mod:`pate_study.reporting.registry`), the provenance sidecars and the
recorded scalars (:mod:`pate_study.reporting.outputs`) into the index; ``check_outputs`` is what the tests use to
keep registry and files in step.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..core.io import atomic_write_text
from ..core.paths import FIGURES_DIR, REGISTRY_FILE
from .outputs import read_provenance, read_scalars
from .registry import DOCUMENTS, OUTPUT_SUFFIXES, STATUSES, Item, load_registry

logger = logging.getLogger(__name__)


def existing_outputs(figures_dir: Path = FIGURES_DIR) -> set[str]:
    """Figure and table files ``<stem>/<file>`` under ``figures_dir`` (relative paths), sidecars and scalars excluded;
    the outputs of profiles other than paper (``<stem>/<profile>/``, e.g. a GPU run) are not registry results."""
    figures_dir = Path(figures_dir)
    return {
        p.relative_to(figures_dir).as_posix()
        for p in figures_dir.rglob("*")
        if p.is_file()
        and p.name.endswith(OUTPUT_SUFFIXES)
        and p.name != "INDEX.md"
        and len(p.relative_to(figures_dir).parts) == 2  # <stem>/<file>: other profiles' subfolders are not results
        and not any(part.startswith(".") for part in p.relative_to(figures_dir).parts)
    }  # skip staging


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
    """'**verdict**: reason (rule)' from the item's recorded verdict (:mod:`pate_study.reporting.verdicts`), or '';
    a verdict not decided by data says so after the verdict ("analytic", "source inconsistency"), and one read off an
    interval (:mod:`pate_study.reporting.claims`) shows it: "ours: estimate [low, high] over N replicates of
    SOURCES"."""
    ours = scalars.get(item.id, {})
    if "verdict" not in ours:
        return ""
    basis = f" ({ours['verdict_basis']})" if ours.get("verdict_basis") else ""
    reason = f": {ours['verdict_reason']}" if ours.get("verdict_reason") else ""
    interval = f"; ours: {ours['verdict_estimate']}" if ours.get("verdict_estimate") else ""
    return f"**{ours['verdict']}**{basis}{reason}{interval} (rule: {ours.get('verdict_rule', '')})".replace(
        "|", "\\|"
    ).replace("\n", " ")


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
        "Generated by `make figures` from `pate_study/reporting/registry.yaml`, the provenance sidecars and the "
        "recorded scalars. Do not edit by hand.",
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
        row = [
            item.id,
            item.label,
            item.kind,
            item.notebook or "",
            item.status,
            outputs,
            _provenance_cell(item, figures_dir),
            paper_vs_ours(item, scalars),
            verdict_cell(item, scalars),
        ]
        lines.append(
            "| " + " | ".join(str(c).replace("|", "\\|") if i < 5 else str(c) for i, c in enumerate(row)) + " |"
        )
    lines += ["", "Documents: " + "; ".join(f"`{k}` = {v}" for k, v in DOCUMENTS.items()) + "."]
    return "\n".join(lines) + "\n"


def write_index(figures_dir: Path = FIGURES_DIR, registry_file: Path = REGISTRY_FILE) -> Path:
    """Write ``figures/INDEX.md`` (atomically) and return its path."""
    items = load_registry(registry_file)
    path = atomic_write_text(Path(figures_dir) / "INDEX.md", index_markdown(items, figures_dir))
    logger.info("wrote %s (%d items)", path, len(items))
    return path
