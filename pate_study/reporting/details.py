"""``figures/details/<document>.md``: one page per source document with the full evidence of every item, and what
the index (:mod:`pate_study.reporting.index`, which writes both) shares with it.

A page opens with the designs of the studies behind its intervals (lettered as in the index) and the multiplicity
rule, then one section per item (heading: the registry id, so ``details/<document>.md#<anchor>`` finds it on GitHub
and on the site alike): label, kind, status, caption, the item it is the same figure as, what the source prints
beside ours, the verdict with its basis, the step that decided it, its rule and its reason, one row per judged step
(claim, step, interval at four significant digits, design, the step's outcome), the replicate rows behind the
intervals (``<item-id>.replicates.csv`` beside the item's outputs), the provenance, the outputs and the figure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pate_study.reporting.evidence import REPLICATES_KEY, Judged, Step, full_interval, read_verdict
from pate_study.reporting.outputs import read_provenance, read_scalars
from pate_study.reporting.registry import DOCUMENTS, Item
from pate_study.reporting.replicates import REPLICATES_SUFFIX

#: The folder of the detail pages, under ``figures/``.
DETAILS_DIR = "details"
#: Short titles of the source documents (the full citation is :data:`pate_study.reporting.registry.DOCUMENTS`).
DOCUMENT_TITLES = {
    "make2021": "MAKE 2021 (Yovine, Mayr, Sosa, Visca)",
    "visca2021": "Visca 2021 (thesis)",
    "sosa2021": "Sosa 2021 (thesis)",
    "muschiol2021": "Muschiol 2021 (thesis, Audio Set)",
    "papernot2017": "Papernot et al. 2017",
    "papernot2018": "Papernot et al. 2018",
    "pate_study": "Beyond the sources: this study's own figures and targets",
}
#: The status as the index shows it.
STATUS_SHORT = {
    "not started": "not started",
    "synthetic only": "synthetic",
    "real data at reduced scale": "real, reduced scale",
    "real data at paper scale": "real, paper scale",
    "regenerated (analytic)": "analytic",
    "not applicable (diagram)": "diagram",
}
#: A target's verdict in words (a target is met or not; the record keeps the standard verdict).
TARGET_WORDS = {"agrees": "met", "differs": "not met", "inconclusive": "inconclusive", "not comparable": "not judged"}
#: Statuses of items whose numbers have been regenerated (a published value then needs a verdict).
REGENERATED = ("synthetic only", "real data at reduced scale", "real data at paper scale", "regenerated (analytic)")


# ------------------------------------------------------------------------------------------------ input checks
def check_folder(value: Any, name: str) -> Path:
    """``value`` as an existing folder, else ValueError naming ``name`` (one line)."""
    if not isinstance(value, (str, Path)) or not str(value).strip():
        raise ValueError(f"{name}={value!r}: expected the path of a folder")
    path = Path(value)
    if not path.is_dir():
        raise ValueError(f"{name}={str(path)!r}: expected an existing folder")
    return path


def check_items(items: Any, name: str = "items") -> list[Item]:
    """``items`` as a list of registry items, else ValueError naming ``name`` (one line)."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
        raise ValueError(f"{name}: expected a list of registry items (load_registry()), got {type(items).__name__}")
    bad = [type(i).__name__ for i in items if not isinstance(i, Item)]
    if bad:
        raise ValueError(f"{name}: expected registry items (load_registry()), got a {bad[0]}")
    return list(items)


# ------------------------------------------------------------------------------------------- items and records
def has_published_values(item: Item) -> bool:
    """True when the source prints numbers for ``item`` (scalar values or table rows), not only text."""
    return bool((item.published or {}).get("values") or (item.published or {}).get("rows"))


def is_target(item: Item) -> bool:
    """True for an item that sets this study a target (registry ``published.target``) rather than one a source
    printed: its verdict reads "met" / "not met" (:data:`TARGET_WORDS`)."""
    return bool((item.published or {}).get("target"))


def owes_verdict(item: Item) -> bool:
    """An item whose regenerated numbers must carry a verdict: a source's numbers, or a target, beside ours."""
    return item.status in REGENERATED and (has_published_values(item) or is_target(item))


def verdict_word(item: Item, judged: Judged | None) -> str:
    """The verdict as a reader sees it: a target's "met" / "not met", else the verdict; an em dash for none."""
    if judged is None:
        return "—"
    return TARGET_WORDS.get(judged.verdict, judged.verdict) if is_target(item) else judged.verdict


def anchor(item_id: str) -> str:
    """The anchor of an item's section on its detail page: the GitHub (and MyST) slug of its heading, the id
    (lower case, characters other than letters, digits, ``-`` and ``_`` dropped: ``muschiol2021-fig514``)."""
    if not isinstance(item_id, str) or not item_id.strip():
        raise ValueError(f"item_id={item_id!r}: expected a registry id")
    return re.sub(r"[^\w\- ]", "", item_id.lower().replace(" ", "-"))


def detail_path(document: str) -> str:
    """The detail page of ``document``, relative to ``figures/`` (``details/make2021.md``)."""
    if document not in DOCUMENTS:
        raise ValueError(f"document={document!r}: expected one of {list(DOCUMENTS)}")
    return f"{DETAILS_DIR}/{document}.md"


def detail_link(item: Item) -> str:
    """The link target of an item's section, relative to ``figures/``."""
    return f"{detail_path(item.document)}#{anchor(item.id)}"


def short_title(document: str) -> str:
    """ "MAKE 2021", "Visca 2021", ...: a document's title without its parenthesis."""
    return DOCUMENT_TITLES.get(document, document).split(" (")[0]


def records_of(items: Sequence[Item], figures_dir: Path) -> dict[str, dict]:
    """Each item's recorded scalars (``{}`` when none), reading each notebook's ``scalars.json`` once."""
    by_notebook: dict[str, dict] = {}
    records = {}
    for item in items:
        if item.notebook and item.notebook not in by_notebook:
            by_notebook[item.notebook] = read_scalars(Path(figures_dir) / item.notebook)
        record = by_notebook.get(item.notebook or "", {}).get(item.id, {})
        records[item.id] = record if isinstance(record, dict) else {}
    return records


def merged_into(items: Sequence[Item], records: Mapping[str, dict]) -> dict[str, Item]:
    """``same_as`` items listed once: each item mapped to the earlier item (registry order) that is the same figure,
    when both carry the same verdict or it carries none; an item with a verdict of its own keeps its row."""
    order = {item.id: k for k, item in enumerate(items)}
    by_id = {item.id: item for item in items}
    merged: dict[str, Item] = {}
    for item in items:
        earlier = [by_id[o] for o in item.same_as if o in order and order[o] < order[item.id] and o not in merged]
        if not earlier:
            continue
        own, theirs = read_verdict(records.get(item.id, {})), read_verdict(records.get(earlier[0].id, {}))
        if own is None or own == theirs:
            merged[item.id] = earlier[0]
    return merged


def designs_of(judgements: Sequence[Judged]) -> dict[str, str]:
    """The distinct designs of the intervals in ``judgements`` (:meth:`pate_study.reporting.evidence.Step.design`),
    each with a letter (A, B, ..., then AA), in order of first appearance."""
    designs: dict[str, str] = {}
    for judged in judgements:
        for step in judged.steps:
            if (step.is_interval or step.is_test) and step.design() not in designs:
                designs[step.design()] = _letter(len(designs))
    return designs


def _letter(k: int) -> str:
    return chr(ord("A") + k) if k < 26 else _letter(k // 26 - 1) + _letter(k % 26)


def design_lines(judgements: Sequence[Judged], designs: Mapping[str, str]) -> list[str]:
    """Each design once, lettered, then the multiplicity rule(s) the records name: the head of a source's section."""
    lines = [f"- **{letter}**: {cell(design)}" for design, letter in designs.items()]
    rules = list(dict.fromkeys(rule_name(j.multiplicity) for j in judgements if len(j.steps) > 1 and j.multiplicity))
    if rules:
        lines.append(
            "- Several judged estimates in one verdict (steps, claims): "
            + "; ".join(cell(r) for r in rules)
            + " (the number of hypotheses on each item's detail section)"
        )
    elif any(sum(s.is_interval for s in j.steps) > 1 for j in judgements):
        lines.append("- Claims judged at several steps: the records name no multiplicity rule")
    return lines


def rule_name(multiplicity: str) -> str:
    """A multiplicity rule's name without the number of hypotheses it was applied to (the record adds it)."""
    return re.sub(r" over \d+ hypothes[ie]s\b.*$", "", multiplicity).strip()


def provenance_line(item: Item, figures_dir: Path) -> str:
    """The first output's provenance in one line (data; profile; seed; commit, date), or '' when none is found."""
    for output in item.outputs:
        try:
            prov = read_provenance(Path(figures_dir) / output)
        except FileNotFoundError:
            continue
        return f"{prov['data']}; profile {prov['profile']}; seed {prov['seed']}; {prov['commit']}, {prov['date'][:10]}"
    return ""


def replicates_file(item: Item, figures_dir: Path, record: Mapping | None = None) -> str | None:
    """The item's replicate rows relative to ``figures/`` (``<stem>/<item-id>.replicates.csv``, or the name the record
    gives) when the file is there, else None."""
    if not item.notebook:
        return None
    name = str((record or {}).get(REPLICATES_KEY) or f"{item.id}{REPLICATES_SUFFIX}")
    relative = f"{item.notebook}/{name}"
    return relative if (Path(figures_dir) / relative).is_file() else None


def fmt(value: Any) -> str:
    """A recorded value as text (floats to six significant digits)."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def cell(text: Any) -> str:
    """Text made safe for a Markdown table cell (pipes escaped, one line)."""
    return " ".join(str(text).replace("|", "\\|").split())


def paper_vs_ours(item: Item, scalars: dict) -> str:
    """'key: paper P / ours O' for each published scalar; a pointer to the output for published rows (links relative
    to ``figures/``)."""
    published = item.published or {}
    ours = scalars.get(item.id, {})
    parts = []
    for key, value in (published.get("values") or {}).items():
        parts.append(f"{key}: paper {fmt(value)} / ours {fmt(ours[key]) if key in ours else '—'}")
    if published.get("rows"):
        tables = [o for o in item.outputs if o.endswith(".md")]
        where = f"paper beside ours in [{Path(tables[0]).name}]({tables[0]})" if tables else "not yet regenerated"
        parts.append(f"{len(published['rows'])} published rows: {where}")
    if not parts and published.get("text"):
        parts.append(f"paper: {published['text']}")
    if "summary" in ours:  # a notebook's one-line account of its own result, for items without paper numbers
        parts.append(f"ours: {ours['summary']}")
    return "; ".join(parts).replace("|", "\\|").replace("\n", " ")


# ------------------------------------------------------------------------------------------------------ the pages
LOCAL_LINK = re.compile(r"\]\((?!https?://|#|\.\./|/)([^)]+)\)")


def _from_details(markdown: str) -> str:
    """Links relative to ``figures/`` made relative to a page in ``figures/details/``."""
    return LOCAL_LINK.sub(r"](../\1)", markdown)


def step_rows(judged: Judged, designs: Mapping[str, str]) -> list[str]:
    """The table of an item's judged steps: claim, step, ours at four significant digits, design, outcome."""
    lines = ["| claim | step | ours [low, high] | design | outcome |", "|---|---|---|---|---|"]
    for k, step in enumerate(judged.steps):
        design = step.design()
        shown = designs.get(design, design)
        outcome = "; ".join(o for o in (step.outcome, "decided the verdict" if k == judged.deciding else "") if o)
        ours = full_interval(step)
        if step.family and step.family_low is not None and step.family_high is not None:
            family = Step("", "", step.value, step.family_low, step.family_high, method=step.method)
            ours += f"; read at {step.family_level:.1%} (multiplicity rule): {full_interval(family)}"
        lines.append(
            f"| {cell(step.claim) or '—'} | {cell(step.step) or '—'} | {ours} | {cell(shown)} | "
            f"{cell(outcome) or '—'} |"
        )
    return lines


def _deciding(judged: Judged) -> str:
    step: Step | None = judged.deciding_step
    if step is None or (len(judged.steps) < 2 and not step.label):
        return ""
    if judged.every_step:
        return f"; every one of the {len(judged.steps)} steps agrees (closest to the claim's edge: {step.label})"
    family = (
        f", by the multiplicity rule (interval read at {step.family_level:.1%})"
        if step.family and step.family_level
        else ""
    )
    return f"; decided at {step.label or f'step {judged.deciding + 1}'}{family}"


def _same_figure(item: Item, context: Mapping[str, Any]) -> list[str]:
    same = [context["by_id"][o] for o in item.same_as if o in context["by_id"]]
    if not same:
        return []
    links = ", ".join(f"[{short_title(o.document)} {o.label}]({o.document}.md#{anchor(o.id)})" for o in same)
    merged = context["merged"]
    where = f" Listed once in the index, under {short_title(merged[item.id].document)}." if item.id in merged else ""
    return [f"The same figure as {links}.{where}", ""]


def _replicates_line(item: Item, judged: Judged, record: Mapping, figures_dir: Path) -> list[str]:
    """Where the replicate rows behind the item's intervals are, or that they are not (and which steps)."""
    if not any(s.is_interval or s.is_test for s in judged.steps):
        return []
    csv = replicates_file(item, figures_dir, record)
    missing = [s.label or f"step {k + 1}" for k, s in enumerate(judged.steps) if s.rederivable is False]
    if not csv:
        return ["- Replicate rows: none committed (these intervals cannot be recomputed from the repository)"]
    line = f"- Replicate rows: [{Path(csv).name}](../{csv})"
    if missing:
        line += f"; not re-derivable from them: {cell(', '.join(missing))}"
    return [line]


def item_section(item: Item, context: Mapping[str, Any]) -> list[str]:
    """An item's section of its detail page (``context``: figures_dir, records, merged, by_id, designs)."""
    figures_dir = context["figures_dir"]
    record = context["records"].get(item.id, {})
    judged = read_verdict(record)
    lines = [f"## {item.id}", "", f"**{item.label}** ({item.kind}; {item.status}). {cell(item.caption)}", ""]
    lines += _same_figure(item, context)
    facts = []
    if is_target(item):
        facts.append(f"- Target: {cell(item.published['target'])}")
    if compared := paper_vs_ours(item, {item.id: record}):
        facts.append(f"- Source vs ours: {_from_details(compared)}")
    if (item.published or {}).get("text") and has_published_values(item):
        facts.append(f"- The source's words: “{cell(item.published['text'])}”")
    if judged is not None:
        basis = f" ({judged.basis})" if judged.basis != "data" else ""
        facts.append(f"- Verdict: **{verdict_word(item, judged)}**{basis}{_deciding(judged)}")
        facts += [f"- Rule: {cell(judged.rule)}"] if judged.rule else []
        facts += [f"- Reason: {cell(judged.reason)}"] if judged.reason else []
        facts += [f"- Multiplicity: {cell(judged.multiplicity)}"] if judged.multiplicity else []
    lines += facts + ([""] if facts else [])
    if judged is not None and judged.steps:
        lines += step_rows(judged, context["designs"]) + [""]
        facts = _replicates_line(item, judged, record, figures_dir)
    else:
        facts = []
    if provenance := provenance_line(item, figures_dir):
        facts.append(f"- Provenance: {cell(provenance)}")
    if item.outputs:
        facts.append("- Outputs: " + ", ".join(f"[{Path(o).name}](../{o})" for o in item.outputs))
    if item.notebook and (Path(figures_dir) / item.notebook / f"{item.notebook}.ipynb").exists():
        facts.append(f"- Made by [{item.notebook}](../{item.notebook}/{item.notebook}.ipynb)")
    if item.notes:
        facts.append(f"- Notes: {cell(item.notes)}")
    lines += facts + ([""] if facts else [])
    pngs = [o for o in item.outputs if o.endswith(".png") and (Path(figures_dir) / o).exists()]
    if pngs:
        lines += [f"![{cell(item.label)}: {cell(item.caption)}](../{pngs[0]})", ""]
    return lines


def detail_page(document: str, items: Sequence[Item], all_items: Sequence[Item], figures_dir: Path) -> str:
    """The Markdown of ``document``'s detail page: its designs and every item's section (``all_items``: the whole
    registry, for ``same_as`` and the records the index merges)."""
    items, all_items = check_items(items), check_items(all_items, "all_items")
    if document not in DOCUMENTS:
        raise ValueError(f"document={document!r}: expected one of {list(DOCUMENTS)}")
    figures_dir = check_folder(figures_dir, "figures_dir")
    records = records_of(all_items, figures_dir)
    merged = merged_into(all_items, records)
    judgements = [j for i in items if i.id not in merged and (j := read_verdict(records.get(i.id, {})))]
    designs = designs_of(judgements)
    context = dict(figures_dir=figures_dir, records=records, merged=merged, by_id={i.id: i for i in all_items})
    lines = [
        f"# {DOCUMENT_TITLES.get(document, document)}",
        "",
        f"{DOCUMENTS[document]}. Generated by `make figures` with [the index](../INDEX.md) from "
        "`pate_study/reporting/registry.yaml`, the provenance sidecars and the recorded verdicts. Do not edit by hand.",
        "",
        "A claim *agrees* or *differs* only when the whole interval lies on one side of it, else it is "
        "*inconclusive*. Intervals at four significant digits; the replicate rows behind them are linked from each "
        "item and recomputed by `tests/repository/test_recompute_intervals.py`.",
        "",
    ]
    if designs or judgements:
        lines += ["Designs behind the intervals (from the records):", "", *design_lines(judgements, designs), ""]
    for item in items:
        lines += item_section(item, {**context, "designs": designs})
    return "\n".join(lines).rstrip("\n") + "\n"


def detail_pages(items: Sequence[Item], figures_dir: Path) -> dict[str, str]:
    """Every document's detail page (document -> Markdown), documents in registry order."""
    items = check_items(items)
    documents = list(dict.fromkeys(i.document for i in items))
    return {d: detail_page(d, [i for i in items if i.document == d], items, figures_dir) for d in documents}
