"""``figures/INDEX.md`` a reader scans in a minute and the detail pages behind it: under 40 KB, no row over 400
characters as rendered, every row linked to an existing section of its source's detail page, the Audio Set target's
verdict in its row (met / not met), the same figure of two sources listed once, and bad input refused in one line.

Each rule is checked on the index generated from the committed records (what ``make figures`` would write now) and on
the committed files (stale until the outputs are regenerated: ``python -m pate_study.tooling.runner index``)."""

import dataclasses
import json
import re

import pytest
import yaml

from pate_study.core.paths import FIGURES_DIR
from pate_study.reporting import evidence as ev
from pate_study.reporting.details import anchor, detail_page, detail_pages, detail_path
from pate_study.reporting.index import (
    MAX_INDEX_BYTES,
    MAX_ROW,
    check_outputs,
    fit_row,
    index_markdown,
    missing_verdicts,
    write_index,
)
from pate_study.reporting.registry import load_registry

ITEMS = load_registry()
TARGET = "pate_study-audioset-target"
HOLM = "Holm's step-down (Holm 1979), family-wise one-sided 2.5 %"
LINK = re.compile(r"\]\((details/[^)#]+)#([^)]+)\)")
HEADING = re.compile(r"^#{1,3} (.+)$", re.M)


def table_rows(text: str) -> list[str]:
    """The item rows of the index's tables (header and separator rows left out)."""
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith(("| item |", "|---"))]


def anchors_of(page: str) -> set[str]:
    """The anchors of a page's headings (GitHub's and MyST's slug)."""
    return {re.sub(r"[^\w\- ]", "", h.lower().replace(" ", "-")) for h in HEADING.findall(page)}


@pytest.fixture(scope="module")
def generated():
    """The index and detail pages the committed records give now."""
    return index_markdown(ITEMS), detail_pages(ITEMS, FIGURES_DIR)


def committed():
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (FIGURES_DIR / "details").glob("*.md")}
    return (FIGURES_DIR / "INDEX.md").read_text(encoding="utf-8"), pages


# ------------------------------------------------------------------------------------------------ the four rules
def check_readable(index: str, pages: dict[str, str]) -> list[str]:
    """What breaks the index's rules (empty when none does)."""
    problems = []
    if len(index.encode("utf-8")) >= MAX_INDEX_BYTES:
        problems.append(f"INDEX.md is {len(index.encode('utf-8'))} bytes (at most {MAX_INDEX_BYTES})")
    for row in table_rows(index):
        if len(ev.rendered_text(row)) > MAX_ROW:
            problems.append(f"row of {len(ev.rendered_text(row))} rendered characters: {row[:80]}")
        if not LINK.search(row):
            problems.append(f"row without a link to its detail section: {row[:80]}")
    for path, target in LINK.findall(index):
        document = path.removeprefix("details/").removesuffix(".md")
        if document not in pages or target not in anchors_of(pages[document]):
            problems.append(f"link to a missing detail section: {path}#{target}")
    return problems


def test_the_generated_index_is_short_and_every_row_links_its_detail_section(generated):
    assert not check_readable(*generated)
    index, pages = generated
    assert {f"details/{d}.md" for d in pages} == {detail_path(i.document) for i in ITEMS}
    for item in ITEMS:  # every item reachable from the index, and its section on its page
        assert f"details/{item.document}.md#{anchor(item.id)})" in index, item.id
        assert anchor(item.id) in anchors_of(pages[item.document]), item.id


def test_the_committed_index_is_short_and_every_row_links_its_detail_section():
    problems = check_readable(*committed())
    assert not problems, f"regenerate (python -m pate_study.tooling.runner index): {problems[:5]}"


def test_the_anchors_of_the_items_are_unique():
    anchors = [anchor(i.id) for i in ITEMS]
    assert len(anchors) == len(set(anchors))


def test_the_rules_find_a_long_row_an_unlinked_row_and_a_missing_section():
    long = "| [Fig](details/a.md#fig) | x | " + "y" * MAX_ROW + " | **agrees** |"
    problems = check_readable(f"{long}\n| plain | x | y | z |\n", {"a": "# A\n\n## other\n"})
    assert any("rendered characters" in p for p in problems)
    assert any("without a link" in p for p in problems)
    assert any("missing detail section: details/a.md#fig" in p for p in problems)
    assert not check_readable("| [Fig](details/a.md#fig) | x | y | z |\n", {"a": "# A\n\n## fig\n"})


def test_same_figures_of_two_sources_are_one_row_that_points_to_the_other(generated):
    index, _ = generated
    rows = table_rows(index)
    assert not [r for r in rows if LINK.search(r).group(2) == "visca2021-fig411"], "Visca 4.11 = MAKE 13: one row"
    make13 = [r for r in rows if "#make2021-fig13)" in r]
    assert len(make13) == 1 and "(= [Visca 2021 Figure 4.11](details/visca2021.md#visca2021-fig411))" in make13[0]
    listed = [line for line in index.splitlines() if line.startswith("Listed once")]
    pointer = "[Figure 4.11](details/visca2021.md#visca2021-fig411) = "
    pointer += "[MAKE 2021 Figure 13](details/make2021.md#make2021-fig13)"
    assert any(pointer in line for line in listed)


def test_the_committed_target_row_shows_its_verdict():
    index, _ = committed()
    rows = [r for r in table_rows(index) if f"#{anchor(TARGET)})" in r]
    assert len(rows) == 1, "the Audio Set target has one row in INDEX.md"
    assert re.search(r"\*\*(met|not met|inconclusive)\*\*", rows[0]), rows[0]


# ----------------------------------------------------------------------------- on a tiny registry and records
ENTRIES = [
    {
        "id": "make2021-fig13",
        "document": "make2021",
        "label": "Figure 13",
        "type": "figure",
        "kind": "result",
        "caption": "TPR by ρ.",
        "same_as": ["visca2021-fig4.11"],
        "notebook": "02_x",
        "outputs": ["02_x/make2021-fig13.png"],
        "status": "real data at reduced scale",
        "published": {"text": "similar for all values of ρ"},
    },
    {
        "id": "visca2021-fig4.11",
        "document": "visca2021",
        "label": "Figure 4.11",
        "type": "figure",
        "kind": "result",
        "caption": "TPR by ρ.",
        "same_as": ["make2021-fig13"],
        "notebook": "02_x",
        "outputs": ["02_x/make2021-fig13.png"],
        "status": "real data at reduced scale",
        "published": {"text": "similar for all values of ρ"},
    },
    {
        "id": TARGET,
        "document": "pate_study",
        "label": "Beyond the thesis: a private Audio Set student at mAP ≥ 0.13 with ε ≤ 300",
        "type": "figure",
        "kind": "result",
        "caption": "c",
        "same_as": [],
        "notebook": "05_x",
        "outputs": [],
        "status": "real data at reduced scale",
        "published": {"target": "student test mAP ≥ 0.13 at ε ≤ 300"},
    },
]


def step(key, value, low, high, outcome, **more):
    claim, _, at = key.partition("/")
    return {
        "key": key,
        "claim": claim,
        "step": at,
        "value": value,
        "low": low,
        "high": high,
        "method": "t-interval of cluster means",
        "level": 0.95,
        "df": 2,
        "n_replicates": 3,
        "n_units": 30,
        "n_boot": 0,
        "sources": ["teacher training seed and partition", "release-noise draw"],
        "unreplicated": ["ECG sample"],
        "cluster_sources": ["teacher training seed and partition"],
        "outcome": outcome,
        "family_decided": False,
        **more,
    }


def record(verdict, evidence, decided_by, rule="holm"):
    return {
        "verdict": verdict,
        "verdict_rule": "change = 0 at every step",
        "verdict_reason": "" if verdict == "agrees" else "ρ = 0.3 differs",
        "verdict_evidence": evidence,
        "verdict_decided_by": decided_by,
        "verdict_multiplicity": rule,
    }


@pytest.fixture
def tiny(tmp_path):
    """A figures folder with two notebooks' records and the registry above; returns (figures, registry file)."""
    figures = tmp_path / "figures"
    for stem in ("02_x", "05_x"):
        (figures / stem).mkdir(parents=True)
    (figures / "02_x" / "make2021-fig13.png").write_bytes(b"png")
    evidence = [
        step("similar/ρ = 0.1", 0.01, -0.1, 0.12, "inconclusive"),
        step(
            "similar/ρ = 0.3",
            0.1399,
            0.07993,
            0.1999,
            "differs",
            family_decided=True,
            family_level=0.99,
            family_low=0.06,
            family_high=0.22,
        ),
    ]
    fig13 = record("differs", evidence, "similar/ρ = 0.3", HOLM + " over 2 hypotheses on the 'differs' side")
    scalars = {"make2021-fig13": fig13, "visca2021-fig4.11": fig13}
    (figures / "02_x" / "scalars.json").write_text(json.dumps(scalars))
    target = record("agrees", [step("mAP at ε ≤ 300", 0.1352, 0.1311, 0.1398, "agrees")], "mAP at ε ≤ 300", "")
    (figures / "05_x" / "scalars.json").write_text(json.dumps({TARGET: target}))
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"items": ENTRIES}, allow_unicode=True))
    return figures, registry


def test_a_structured_record_gives_a_short_row_and_its_full_evidence(tiny):
    figures, registry = tiny
    (figures / "02_x" / "make2021-fig13.replicates.csv").write_text("record,estimate,row\n")
    write_index(figures, registry)
    index = (figures / "INDEX.md").read_text(encoding="utf-8")
    row = [r for r in table_rows(index) if "#make2021-fig13)" in r][0]
    assert "ours 0.14 [0.060, 0.22] (A, read at 99.0%)" in row
    assert "**differs** at similar, ρ = 0.3 (multiplicity rule)" in row and "(= [Visca 2021 Figure 4.11](" in row
    assert "- **A**: 3 × teacher training seed and partition, 30 units of release-noise draw nested in them; " in index
    assert "t-interval of cluster means, 2 df, 95%; not replicated: ECG sample" in index
    assert f"Several judged estimates in one verdict (steps, claims): {HOLM} (the number of hypotheses" in index
    page = (figures / "details" / "make2021.md").read_text(encoding="utf-8")
    assert (
        "| similar | ρ = 0.3 | 0.1399 [0.07993, 0.1999]; read at 99.0% (multiplicity rule): 0.1399 [0.06000, 0.2200]"
        in page
    )
    assert "[make2021-fig13.replicates.csv](../02_x/make2021-fig13.replicates.csv)" in page
    assert "decided at similar, ρ = 0.3, by the multiplicity rule (interval read at 99.0%)" in page
    visca = (figures / "details" / "visca2021.md").read_text(encoding="utf-8")
    assert "Listed once in the index, under MAKE 2021." in visca
    assert check_outputs(load_registry(registry), figures) == ([], []), "replicate rows and details are not outputs"


@pytest.mark.parametrize("verdict, word", [("agrees", "met"), ("differs", "not met"), ("inconclusive", "inconclusive")])
def test_the_target_row_reads_met_or_not_met(tiny, verdict, word):
    figures, registry = tiny
    target = record(verdict, [step("mAP at ε ≤ 300", 0.1352, 0.1311, 0.1398, verdict)], "mAP at ε ≤ 300", "")
    (figures / "05_x" / "scalars.json").write_text(json.dumps({TARGET: target}))
    index = index_markdown(load_registry(registry), figures)
    row = [r for r in table_rows(index) if f"#{anchor(TARGET)})" in r][0]
    assert f"**{word}**" in row and "| target student test mAP ≥ 0.13 at ε ≤ 300; ours 0.135 [0.131, 0.140]" in row
    assert f"1 target {word}" in index


def test_a_target_without_a_verdict_is_missing_one(tiny):
    figures, registry = tiny
    (figures / "05_x" / "scalars.json").write_text("{}")
    assert missing_verdicts(load_registry(registry), figures) == [TARGET]


def test_every_step_agreeing_names_the_step_closest_to_the_claims_edge(tiny):
    figures, registry = tiny
    region = [[-0.5, 0.5, True, True]]
    evidence = [
        step("same/ρ = 0.1", 0.0, -0.1, 0.1, "agrees", agree_region=region),
        step("same/ρ = 0.3", 0.3, 0.2, 0.45, "agrees", agree_region=region),
    ]
    (figures / "02_x" / "scalars.json").write_text(json.dumps({"make2021-fig13": record("agrees", evidence, "")}))
    row = [r for r in table_rows(index_markdown(load_registry(registry), figures)) if "#make2021-fig13)" in r][0]
    assert "**agrees** (all 2 judged; closest: same, ρ = 0.3)" in row and "ours 0.30 [0.20, 0.45]" in row


# ------------------------------------------------------------------------------------------- reading a record
def test_a_legacy_record_is_read_off_its_rendered_intervals():
    rendered = (
        "ρ = 0.1: 0.1225 [0.02478, 0.2201] over 3 replicates of teacher training seed and partition with 10 "
        "replicates of release-noise draw in all nested in them (t-interval of cluster means, 2 df, 95%); ρ = 0.3: "
        "0.1399 [0.07993, 0.1999] over 3 replicates of teacher training seed and partition with 10 replicates of "
        "release-noise draw in all nested in them (t-interval of cluster means, 2 df, 95%)"
    )
    judged = ev.read_verdict(
        {"verdict": "differs", "verdict_reason": "ρ = 0.1: inconclusive (...); ρ = 0.3: differs (...)", **{}}
        | {"verdict_estimate": rendered}
    )
    assert [s.step for s in judged.steps] == ["ρ = 0.1", "ρ = 0.3"] and judged.deciding == 1
    # read from text: printed with the digits it was read with (never rounded twice)
    assert ev.compact_interval(judged.deciding_step) == "0.1399 [0.07993, 0.1999]"
    assert judged.steps[0].df == 2 and judged.steps[0].level == 0.95
    assert judged.steps[0].design().startswith("3 replicates of teacher training seed and partition with 10")
    exact = ev.parse_rendered("svhn 500: 5.041 (exact: no random source); svhn 1000: 8.192 (exact: no random source)")
    assert [(s.step, s.value, s.method) for s in exact] == [("svhn 500", 5.041, "exact"), ("svhn 1000", 8.192, "exact")]
    assert ev.read_verdict({"a": 1}) is None and ev.read_verdict({"verdict": "agrees"}).steps == ()


@pytest.mark.parametrize(
    "low, value, high, text",
    [
        (0.07993, 0.1399, 0.1999, "0.14 [0.080, 0.20]"),
        (259.0, 283.0, 307.5, "283 [259, 308]"),
        (0.1311, 0.1352, 0.1398, "0.135 [0.131, 0.140]"),  # two digits would print 0.13 [0.13, 0.14]
        (-0.2626, -0.002623, 0.2573, "-0.0026 [-0.26, 0.26]"),
        (0.0, 9.0, 38.0, "9.0 [0, 38]"),
    ],
)
def test_the_short_interval_keeps_two_significant_digits_unless_numbers_would_print_alike(low, value, high, text):
    assert ev.compact_interval(ev.Step("", "", value, low, high, method="t-interval")) == text


def test_rendered_text_drops_link_targets_and_emphasis():
    row = "| [Figure 8](details/make2021.md#make2021-fig8) | real | ours `0.14` | **differs** \\| *x* |"
    assert ev.rendered_text(row) == "Figure 8 | real | ours 0.14 | differs | x"


def test_a_row_is_clipped_in_its_plain_text_never_in_its_link():
    long = "source " + "a value, " * 80
    row = fit_row(["[Figure 8](details/make2021.md#make2021-fig8)", "real", long, "**differs**"])
    assert len(ev.rendered_text(row)) <= MAX_ROW and "](details/make2021.md#make2021-fig8)" in row and "…" in row


# ------------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda tmp: index_markdown("registry.yaml", tmp), "items"),
        (lambda tmp: index_markdown([1, 2], tmp), "items"),
        (lambda tmp: index_markdown(ITEMS, tmp / "missing"), "figures_dir"),
        (lambda tmp: index_markdown(ITEMS, ""), "figures_dir"),
        (lambda tmp: write_index(tmp / "missing"), "figures_dir"),
        (lambda tmp: check_outputs(ITEMS, tmp / "missing"), "figures_dir"),
        (lambda tmp: missing_verdicts({"a": 1}, tmp), "items"),
        (lambda tmp: detail_page("nature2020", ITEMS[:1], ITEMS, tmp), "document"),
        (lambda tmp: detail_pages(ITEMS, tmp / "missing"), "figures_dir"),
        (lambda tmp: detail_path("nature2020"), "document"),
        (lambda tmp: anchor(""), "item_id"),
        (lambda tmp: ev.read_verdict({"verdict": "agrees", "verdict_evidence": [{"claim": "x"}]}), "verdict_evidence"),
        (lambda tmp: ev.read_verdict({"verdict": "agrees", "verdict_evidence": [{"value": "a"}]}), "value"),
    ],
)
def test_bad_input_is_refused_in_one_line_naming_the_parameter(tmp_path, call, name):
    with pytest.raises(ValueError) as err:
        call(tmp_path)
    message = str(err.value)
    assert name in message and "\n" not in message, message


def test_a_number_read_from_rendered_text_is_not_rounded_a_second_time():
    """A legacy record's text holds 1.25 for a low end of 1.2505; printed again at 2 digits it would read 1.2, which
    the unrounded end does not give: numbers read from text keep the digits they were read with."""
    (step,) = ev.parse_rendered("1.893 [1.25, 2.596] over 3 replicates of student training seed (t-interval, 95%)")
    assert step.printed_digits == 4
    assert ev.compact_interval(step, deciding=True) == "1.893 [1.250, 2.596]"
    fresh = dataclasses.replace(step, printed_digits=None)  # a structured step: the compact two digits
    assert ev.compact_interval(fresh, deciding=True) == "1.9 [1.2, 2.6]"
    texts = ("1.250", "0.08", "2.0e+04", "∞", "−0.01365", "283")
    assert [ev.significant_digits(t) for t in texts] == [4, 1, 2, 0, 4, 3]
