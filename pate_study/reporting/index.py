"""``figures/INDEX.md`` and ``figures/details/<document>.md``: every catalogued item with its status and verdict.

``write_index`` turns the registry (:mod:`pate_study.reporting.registry`), the provenance sidecars and the recorded
verdicts (:mod:`pate_study.reporting.outputs`, read through :mod:`pate_study.reporting.evidence`) into

- the index a reader scans in a minute: per source document, the design of the studies behind its verdicts stated
  once (replicates and their sources, what is not replicated, method, degrees of freedom, level, the multiplicity
  rule: read off the records), then one row per item (at most :data:`MAX_ROW` characters as rendered): label,
  status, the source's number beside ours with the interval of the step that decided the verdict in short form
  (``0.14 [0.080, 0.20]``), the verdict and that step, and a link to the item's section on its detail page. An item
  that is the same figure as one of another source (registry ``same_as``) with the same record is listed once, by
  the first source, and points there; diagrams and items without a number are grouped on one line each;
- one detail page per source document (:mod:`pate_study.reporting.details`) with the full evidence.

``check_outputs`` is what the tests use to keep registry and files in step; the detail pages and the replicate rows
(``<item-id>.replicates.csv``, evidence behind the intervals) are not catalogue outputs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from pate_study.core.io import atomic_write_text
from pate_study.core.paths import FIGURES_DIR, REGISTRY_FILE
from pate_study.reporting.details import (
    DETAILS_DIR,
    DOCUMENT_TITLES,
    REGENERATED,
    STATUS_SHORT,
    cell,
    check_folder,
    check_items,
    design_lines,
    designs_of,
    detail_link,
    detail_pages,
    detail_path,
    fmt,
    has_published_values,
    is_target,
    merged_into,
    owes_verdict,
    records_of,
    short_title,
    verdict_word,
)
from pate_study.reporting.evidence import Judged, compact_interval, read_verdict, rendered_text
from pate_study.reporting.outputs import read_scalars
from pate_study.reporting.registry import DOCUMENTS, OUTPUT_SUFFIXES, STATUSES, Item, load_registry
from pate_study.reporting.replicates import REPLICATES_SUFFIX

logger = logging.getLogger(__name__)

#: The most characters an index row may have as rendered (:func:`pate_study.reporting.evidence.rendered_text`).
MAX_ROW = 400
#: The most bytes ``figures/INDEX.md`` should have (a test holds it to this).
MAX_INDEX_BYTES = 40_000


# ------------------------------------------------------------------------------------------------ outputs on disk
def existing_outputs(figures_dir: Path = FIGURES_DIR) -> set[str]:
    """Figure and table files ``<stem>/<file>`` under ``figures_dir`` (relative paths), sidecars and scalars excluded;
    the outputs of profiles other than paper (``<stem>/<profile>/``, e.g. a GPU run) are not registry results, nor
    are the detail pages (``details/``) and the replicate rows (``*.replicates.csv``, evidence behind intervals)."""
    figures_dir = check_folder(figures_dir, "figures_dir")
    found = set()
    for p in figures_dir.rglob("*"):
        parts = p.relative_to(figures_dir).parts
        if (
            p.is_file()
            and p.name.endswith(OUTPUT_SUFFIXES)
            and not p.name.endswith(REPLICATES_SUFFIX)
            and len(parts) == 2  # <stem>/<file>: other profiles' subfolders are not results
            and parts[0] != DETAILS_DIR
            and not any(part.startswith(".") for part in parts)  # skip staging
        ):
            found.add(p.relative_to(figures_dir).as_posix())
    return found


def check_outputs(items: list[Item], figures_dir: Path = FIGURES_DIR) -> tuple[list[str], list[str]]:
    """(claimed but missing, present but unclaimed) output files; both empty when registry and files agree."""
    items = check_items(items)
    claimed = {o for item in items for o in item.outputs}
    present = existing_outputs(figures_dir)
    return sorted(claimed - present), sorted(present - claimed)


# ----------------------------------------------------------------------------------------------- what a row shows
def verdict_cell(item: Item, scalars: dict) -> str:
    """The whole recorded verdict on one line, '**verdict** (basis): reason; ours: estimate (rule: ...)', as the
    index printed it before the detail pages (kept for the tests that read a record through it)."""
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
    """Ids of items with published values (or a target) and a regenerated status whose notebook recorded no
    verdict."""
    items, figures_dir = check_items(items), Path(figures_dir)
    missing = []
    for item in items:
        if owes_verdict(item):
            scalars = read_scalars(figures_dir / item.notebook) if item.notebook else {}
            if "verdict" not in scalars.get(item.id, {}):
                missing.append(item.id)
    return missing


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip(" ,;:") + "…"


def _first_clause(reason: str, limit: int = 90) -> str:
    """The first sentence or clause of a reason, clipped."""
    head = re.split(r"(?<=[.;])\s", reason, maxsplit=1)[0].rstrip(".;")
    return _clip(head, limit)


def source_numbers(item: Item, limit: int = 140) -> str:
    """What the source prints (or the target this study set), short: ``key = value`` pairs, ``N printed rows`` or
    the start of its sentence."""
    published = item.published or {}
    if published.get("target"):
        return f"target {published['target']}"
    values = published.get("values") or {}
    if values:
        return _clip(", ".join(f"{k} = {fmt(v)}" for k, v in values.items()), limit)
    if published.get("rows"):
        return f"{len(published['rows'])} printed rows"
    if published.get("text"):
        return "“" + _clip(str(published["text"]), limit - 2) + "”"
    return ""


def our_numbers(item: Item, record: Mapping, judged: Judged | None, design: str = "", limit: int = 140) -> str:
    """Ours, short: the deciding step's interval with its design letter (the multiplicity rule's interval and level
    when the rule decided it), else our values of the source's keys, else a pointer to our table, else the
    notebook's one-line summary."""
    step = judged.deciding_step if judged else None
    if step is not None:
        _, _, level = step.deciding_interval
        family = f"read at {level:.1%}" if step.family and level is not None else ""
        notes = ", ".join(n for n in (design, family) if n)
        return compact_interval(step, deciding=True) + (f" ({notes})" if notes else "")
    values = (item.published or {}).get("values") or {}
    ours = [f"{k} = {fmt(record[k])}" for k in values if k in record]
    if ours:
        return _clip(", ".join(ours), limit)
    tables = [o for o in item.outputs if o.endswith(".md")]
    if (item.published or {}).get("rows") and tables:
        return f"[table]({tables[0]})"
    if record.get("summary"):
        return _clip(str(record["summary"]), limit)
    return ""


def _step_phrase(judged: Judged) -> str:
    step = judged.deciding_step
    if step is None:
        return ""
    if judged.every_step:
        closest = f"; closest: {_clip(step.label, 50)}" if step.label else ""
        return f" (all {len(judged.steps)} judged{closest})"
    where = step.label if len(judged.steps) > 1 or step.step else ""
    family = " (multiplicity rule)" if step.family else ""
    return (f" at {_clip(where, 60)}" if where else "") + family


def verdict_text(item: Item, judged: Judged | None) -> str:
    """The verdict cell: the verdict (bold), its basis when not data, the step that decided it; where no interval
    decided it, the first clause of its reason (unless it agrees)."""
    if judged is None:
        return "—"
    basis = f" ({judged.basis})" if judged.basis != "data" else ""
    step = judged.deciding_step
    text = f"**{verdict_word(item, judged)}**{basis}" + _step_phrase(judged)
    reason = judged.reason.removeprefix("analytic: holds for any data: ")
    if (step is None or not step.is_interval) and reason and judged.verdict != "agrees":
        if step is None or not reason.startswith(step.label or "\0"):
            text += f": {_first_clause(reason)}"
    return text


def fit_row(cells: Sequence[str], limit: int = MAX_ROW) -> str:
    """A table row of ``cells`` (Markdown), the longest cell clipped until the row has at most ``limit`` characters
    as rendered; clipping only ever shortens plain text (a cell that is a link or holds one is clipped last)."""
    cells = [cell(c) for c in cells]
    while True:
        row = "| " + " | ".join(cells) + " |"
        excess = len(rendered_text(row)) - limit
        if excess <= 0:
            return row
        plain = [i for i, c in enumerate(cells) if "](" not in c and "**" not in c]
        candidates = plain or list(range(len(cells)))
        i = max(candidates, key=lambda k: len(rendered_text(cells[k])))
        if len(rendered_text(cells[i])) <= 8:
            raise ValueError(f"cells: a row cannot be brought under {limit} characters: {rendered_text(row)[:80]}…")
        cells[i] = _clip(cells[i].replace("\\|", "|"), max(len(cells[i]) - excess - 1, 8)).replace("|", "\\|")


# ------------------------------------------------------------------------------------------------- the sections
def _item_link(item: Item, text: str | None = None) -> str:
    return f"[{text or item.label}]({detail_link(item)})"


def _grouped(title: str, items: Sequence[Item], suffix=lambda item: "") -> list[str]:
    if not items:
        return []
    return [f"{title}: " + ", ".join(_item_link(i) + suffix(i) for i in items) + ".", ""]


def index_row(item: Item, record: Mapping, judged: Judged | None, designs: Mapping[str, str], also: str = "") -> str:
    """One item's row: label (linked to its detail section, with the same figure of another source), status, the
    source's number beside ours, the verdict and the step that decided it; at most :data:`MAX_ROW` characters as
    rendered: the source's words and numbers are shortened first, so that ours (the deciding interval) is kept."""
    step = judged.deciding_step if judged else None
    design = designs.get(step.design(), "") if step is not None else ""
    ours = our_numbers(item, record, judged, design)
    label = _item_link(item) + (f" (= {also})" if also else "")
    status, verdict = STATUS_SHORT.get(item.status, item.status), verdict_text(item, judged)
    for limit in (140, 100, 70, 40, 20):
        source = source_numbers(item, limit)
        said = source if is_target(item) else f"source {source}" if source else ""
        compared = "; ".join(p for p in (said, f"ours {ours}" if ours else "") if p) or "—"
        cells = [label, status, compared, verdict]
        if len(rendered_text("| " + " | ".join(cell(c) for c in cells) + " |")) <= MAX_ROW:
            break
    return fit_row(cells)


def document_section(document: str, items: Sequence[Item], all_items: Sequence[Item], records, merged) -> list[str]:
    """One source document's section of the index: its designs, its table and its grouped lines."""
    by_id = {i.id: i for i in all_items}
    judged = {i.id: read_verdict(records.get(i.id, {})) for i in items}
    listed = [i for i in items if i.id not in merged]
    table = [i for i in listed if judged[i.id] is not None or owes_verdict(i) or _has_numbers(i) and not _diagram(i)]
    designs = designs_of([judged[i.id] for i in table if judged[i.id]])
    lines = [
        f"## {DOCUMENT_TITLES.get(document, document)}",
        "",
        f"{DOCUMENTS[document]}. Every step, rule, interval and reason: [{detail_path(document)}]"
        f"({detail_path(document)}).",
        "",
    ]
    if designs or any(judged[i.id] for i in table):
        lines += [
            "Designs behind the intervals (from the records; the row names its letter):",
            "",
            *design_lines([judged[i.id] for i in table if judged[i.id]], designs),
            "",
        ]
    if table:
        lines += ["| item | status | source; ours | verdict |", "|---|---|---|---|"]
        for item in table:
            others = [by_id[o] for o in item.same_as if o in merged and merged[o].id == item.id]
            also = ", ".join(_item_link(o, f"{short_title(o.document)} {o.label}") for o in others)
            lines.append(index_row(item, records.get(item.id, {}), judged[item.id], designs, also))
        lines.append("")
    same = [i for i in items if i.id in merged]
    lines += _grouped(
        "Listed once, under the other source",
        same,
        lambda i: f" = {_item_link(merged[i.id], f'{short_title(merged[i.id].document)} {merged[i.id].label}')}",
    )
    rest = [i for i in listed if i not in table]
    lines += _grouped("Diagrams (nothing to regenerate)", [i for i in rest if _diagram(i)])
    lines += _grouped("Not started", [i for i in rest if i.status == "not started"])
    lines += _grouped(
        "Regenerated, no number to compare",
        [i for i in rest if i.status in REGENERATED],
    )
    return lines


def _diagram(item: Item) -> bool:
    return item.status == "not applicable (diagram)"


def _has_numbers(item: Item) -> bool:
    return has_published_values(item) or is_target(item)


def verdict_counts(items: Sequence[Item], records: Mapping[str, dict]) -> str:
    """ "N agrees, N differs, ..." over the items with a verdict (targets counted apart, as met / not met)."""
    counts: dict[str, int] = {}
    for item in items:
        judged = read_verdict(records.get(item.id, {}))
        if judged is not None:
            word = verdict_word(item, judged)
            key = f"target {word}" if is_target(item) else word
            counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n} {w}" for w, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "none yet"


def executed_notebooks_line(items: list[Item], figures_dir: Path = FIGURES_DIR) -> str:
    """A line linking each notebook's executed copy (``figures/<stem>/<stem>.ipynb``, written by ``make figures``)."""
    stems = sorted({i.notebook for i in check_items(items) if i.notebook})
    links = [f"[{s}]({s}/{s}.ipynb)" for s in stems if (Path(figures_dir) / s / f"{s}.ipynb").exists()]
    if not links:
        return "Executed notebooks: none yet (`make figures` writes them beside each notebook's outputs)."
    return "Executed notebooks (outputs and findings, readable without running anything): " + ", ".join(links) + "."


def by_document(items: Sequence[Item]) -> dict[str, list[Item]]:
    """The items of each document, documents in :data:`DOCUMENTS` order, items in registry order."""
    groups: dict[str, list[Item]] = {d: [] for d in DOCUMENTS}
    for item in items:
        groups[item.document].append(item)
    return {d: group for d, group in groups.items() if group}


def index_markdown(items: list[Item], figures_dir: Path = FIGURES_DIR) -> str:
    """The text of ``figures/INDEX.md``: a summary, how to read a row, then one section per source document."""
    items, figures_dir = check_items(items), check_folder(figures_dir, "figures_dir")
    records = records_of(items, figures_dir)
    merged = merged_into(items, records)
    counts = {s: sum(1 for i in items if i.status == s) for s in STATUSES}
    lines = [
        "# Figure and table index",
        "",
        "Generated by `make figures` from `pate_study/reporting/registry.yaml`, the provenance sidecars and the "
        "recorded verdicts. Do not edit by hand.",
        "",
        f"{len(items)} items: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n) + ". "
        f"Verdicts (one per row; a figure of two sources counted once): "
        f"{verdict_counts([i for i in items if i.id not in merged], records)}.",
        "",
        "How to read a row: the source's number beside ours; ours is the interval of the step that decided the "
        "verdict, `value [low, high]`, built as the design its letter names (at the head of the source's section). "
        "A claim *agrees* or *differs* only when the whole interval lies on one side of it, else it is "
        "*inconclusive*; a target is *met* or *not met* the same way. The item's link opens its section on the "
        "source's detail page: every step, the rule, every interval, the reason, the replicate rows, the provenance "
        "and the outputs.",
        "",
        executed_notebooks_line(items, figures_dir),
        "",
    ]
    for document, group in by_document(items).items():
        lines += document_section(document, group, items, records, merged)
    return "\n".join(lines).rstrip("\n") + "\n"


def write_index(figures_dir: Path = FIGURES_DIR, registry_file: Path = REGISTRY_FILE) -> Path:
    """Write ``figures/INDEX.md`` and the detail pages ``figures/details/<document>.md`` (each atomically) and
    return the index's path."""
    figures_dir = check_folder(figures_dir, "figures_dir")
    items = load_registry(registry_file)
    for document, text in detail_pages(items, figures_dir).items():
        atomic_write_text(figures_dir / detail_path(document), text)
    path = atomic_write_text(figures_dir / "INDEX.md", index_markdown(items, figures_dir))
    logger.info("wrote %s and %d detail pages (%d items)", path, len(by_document(items)), len(items))
    return path
