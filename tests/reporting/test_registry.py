"""The figure registry: schema, agreement with the files under figures/, and figures/INDEX.md."""

import re
from pathlib import Path

import pytest
import yaml

from pate_study.core.paths import FIGURES_DIR, NOTEBOOKS_DIR
from pate_study.reporting.details import (
    REGENERATED,
    detail_link,
    detail_pages,
    detail_path,
    has_published_values,
    paper_vs_ours,
)
from pate_study.reporting.index import (
    check_outputs,
    executed_notebooks_line,
    index_markdown,
    missing_verdicts,
    write_index,
)
from pate_study.reporting.registry import DOCUMENTS, STATUSES, Item, load_registry


@pytest.fixture(scope="module")
def items():
    return load_registry()


def test_registry_covers_the_five_documents(items):
    documents = {i.document for i in items}
    assert {"make2021", "visca2021", "sosa2021", "muschiol2021"} <= documents <= set(DOCUMENTS)
    results = [i for i in items if i.kind == "result"]
    assert len(results) >= 40, "the notes catalogue about 55 result items"
    for must in [
        "make2021-fig5",
        "visca2021-fig4.8",
        "make2021-fig11",
        "make2021-table1",
        "sosa2021-table4.2",
        "muschiol2021-table5.4",
    ]:
        assert must in {i.id for i in items}


def test_every_output_exists_and_every_output_is_claimed(items):
    missing, unclaimed = check_outputs(items)
    assert not missing, f"registry claims outputs that do not exist: {missing}"
    assert not unclaimed, f"files under figures/ that no registry entry claims: {unclaimed}"


def test_claimed_outputs_have_provenance_and_live_in_their_notebook_folder(items):
    for item in items:
        for output in item.outputs:
            assert output.startswith(f"{item.notebook}/"), f"{item.id}: {output} not under {item.notebook}/"
            name = Path(output).name.rsplit(".", 1)[0]
            assert (FIGURES_DIR / item.notebook / f"{name}.provenance.json").exists(), f"{output} lacks provenance"


def test_statuses_match_outputs(items):
    notebooks = {p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb")}
    for item in items:
        if item.outputs:
            assert item.status not in ("not started", "not applicable (diagram)"), item.id
            assert item.notebook in notebooks, f"{item.id}: notebook {item.notebook} does not exist"
        elif item.status not in ("not started", "not applicable (diagram)"):
            pytest.fail(f"{item.id} claims status {item.status!r} but has no outputs")


def test_index_is_current_and_lists_every_item(items):
    text = (FIGURES_DIR / "INDEX.md").read_text()
    assert text == index_markdown(items), (
        "figures/INDEX.md is stale: run `make figures` or `python -m pate_study.tooling.runner index`"
    )
    for item in items:
        assert f"]({detail_link(item)})" in text, f"{item.id} has no link in INDEX.md"


def test_detail_pages_are_current(items):
    for document, text in detail_pages(items, FIGURES_DIR).items():
        path = FIGURES_DIR / detail_path(document)
        assert path.is_file() and path.read_text(encoding="utf-8") == text, (
            f"{path.relative_to(FIGURES_DIR.parent)} is stale: run `python -m pate_study.tooling.runner index`"
        )


def _write(tmp_path, entries):
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump({"items": entries}))
    return path


BASE = dict(
    id="make2021-fig5",
    document="make2021",
    label="Fig. 5",
    type="figure",
    kind="analytic",
    caption="c",
    same_as=[],
    notebook="00_dp_primer",
    outputs=[],
    status="not started",
)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"status": "done"}, "status='done'"),
        ({"document": "nature2020"}, "document='nature2020'"),
        ({"id": "visca2021-fig1"}, "must start with its document"),
        ({"outputs": ["00_dp_primer/x.txt"]}, "must end with"),
        ({"same_as": ["make2021-fig99"]}, "unknown id"),
    ],
)
def test_bad_entries_are_rejected_with_a_clear_message(tmp_path, change, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        load_registry(_write(tmp_path, [{**BASE, **change}]))


def test_missing_keys_duplicates_and_asymmetric_same_as(tmp_path):
    incomplete = {k: v for k, v in BASE.items() if k != "caption"}
    with pytest.raises(ValueError, match="missing keys"):
        load_registry(_write(tmp_path, [incomplete]))
    with pytest.raises(ValueError, match="duplicate id"):
        load_registry(_write(tmp_path, [BASE, BASE]))
    other = {**BASE, "id": "visca2021-fig4.8", "document": "visca2021"}
    with pytest.raises(ValueError, match="not symmetric"):
        load_registry(_write(tmp_path, [{**BASE, "same_as": ["visca2021-fig4.8"]}, other]))
    assert len(STATUSES) == len(set(STATUSES))


def test_check_outputs_and_index_on_a_toy_tree(tmp_path):
    figures = tmp_path / "figures"
    (figures / "00_dp_primer").mkdir(parents=True)
    (figures / "00_dp_primer" / "make2021-fig5.png").write_bytes(b"png")
    (figures / "00_dp_primer" / "stray.csv").write_text("a\n")
    (figures / "00_dp_primer" / "make2021-fig5.provenance.json").write_text(
        '{"data": "analytic", "profile": "smoke", "seed": 0, "commit": "abc", "date": "2026-01-01T00:00:00Z"}'
    )
    (figures / "00_dp_primer" / "scalars.json").write_text('{"make2021-fig5": {"epsilon_star": 20.17427}}')
    entry = {
        **BASE,
        "outputs": ["00_dp_primer/make2021-fig5.png", "00_dp_primer/make2021-fig6.png"],
        "status": "regenerated (analytic)",
        "published": {"values": {"epsilon_star": 20.1743}},
    }
    items = load_registry(_write(tmp_path, [entry]))
    assert check_outputs(items, figures) == (["00_dp_primer/make2021-fig6.png"], ["00_dp_primer/stray.csv"])
    assert (
        paper_vs_ours(items[0], {"make2021-fig5": {"epsilon_star": 20.17427}})
        == "epsilon_star: paper 20.1743 / ours 20.1743"
    )
    text = write_index(figures, tmp_path / "registry.yaml").read_text()
    assert "ours epsilon_star = 20.1743" in text and "](details/make2021.md#make2021-fig5)" in text
    detail = (figures / "details" / "make2021.md").read_text()
    assert "## make2021-fig5" in detail and "analytic; profile smoke; seed 0; abc, 2026-01-01" in detail
    (figures / "00_dp_primer" / "make2021-fig5.replicates.csv").write_text("record,estimate\n")
    assert check_outputs(items, figures)[1] == ["00_dp_primer/stray.csv"], "replicate rows are evidence, not outputs"


def _notebooks_owing_verdicts():
    return sorted({i.notebook for i in load_registry() if i.status in REGENERATED and has_published_values(i)})


@pytest.mark.parametrize("notebook", _notebooks_owing_verdicts())
def test_every_regenerated_item_with_published_values_has_a_verdict(notebook):
    """A published number beside ours needs a verdict (pate_study.reporting.verdicts) recorded under the item's id."""
    missing = missing_verdicts([i for i in load_registry() if i.notebook == notebook])
    assert not missing, f"{notebook}: record a verdict (pate_study.reporting.verdicts) for {missing}"


def test_missing_verdicts_and_the_index_column(tmp_path):
    """The check fails for a regenerated item with published values and no verdict, and the index shows one."""
    import json

    item = Item(
        id="make2021-fig8",
        document="make2021",
        label="Figure 8",
        type="figure",
        kind="result",
        caption="c",
        same_as=(),
        notebook="nb",
        outputs=(),
        status="real data at reduced scale",
        published={"values": {"a": 1}},
    )
    exempt = Item(
        id="make2021-fig1",
        document="make2021",
        label="Figure 1",
        type="figure",
        kind="result",
        caption="c",
        same_as=(),
        notebook="nb",
        outputs=(),
        status="not started",
        published={"values": {"a": 1}},
    )
    (tmp_path / "nb").mkdir()
    assert missing_verdicts([item, exempt], tmp_path) == ["make2021-fig8"]
    record = {"make2021-fig8": {"a": 2, "verdict": "differs", "verdict_rule": "|x| <= 1", "verdict_reason": "why"}}
    (tmp_path / "nb" / "scalars.json").write_text(json.dumps(record))
    assert missing_verdicts([item, exempt], tmp_path) == []
    row = [line for line in index_markdown([item], tmp_path).splitlines() if line.startswith("| [Figure 8]")][0]
    assert row.endswith("| **differs**: why |")


def test_index_links_the_executed_notebooks_that_exist(tmp_path):

    items = load_registry()
    assert "none yet" in executed_notebooks_line(items, tmp_path)
    (tmp_path / "00_dp_primer").mkdir()
    (tmp_path / "00_dp_primer" / "00_dp_primer.ipynb").write_text("{}")
    line = executed_notebooks_line(items, tmp_path)
    assert "[00_dp_primer](00_dp_primer/00_dp_primer.ipynb)" in line and "01_ecg" not in line


def cited_item_ids(text: str) -> set[str]:
    """Every token of ``text`` shaped like a registry id of a source document (``papernot2018-table2`` ...), file
    names (``...-fig8.png``) and link targets (``](details/make2021.md#make2021-fig8)``, whose anchors drop the dots of
    an id) left out: the link test opens those."""
    documents = "|".join(re.escape(d) for d in DOCUMENTS)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    tokens = {m.rstrip(".-,;:") for m in re.findall(rf"\b(?:{documents})-[\w.-]+", text)}
    return {t for t in tokens if not t.endswith((".png", ".pdf", ".csv", ".md", ".json", ".ipynb"))}


def test_the_index_cites_only_items_a_reader_can_find(items):
    """A reason in INDEX.md that sends the reader to an item names one of the registry (an item with a row in
    INDEX), not a key that exists only inside a scalars.json."""
    known = {item.id for item in items} | {path.stem for path in FIGURES_DIR.glob("*/*") if path.is_file()}
    index = (FIGURES_DIR / "INDEX.md").read_text(encoding="utf-8")
    unknown = sorted(cited_item_ids(index) - known)
    assert not unknown, f"INDEX.md cites ids that are not registry items: {unknown}"


def test_cited_item_ids_reads_ids_out_of_prose():
    assert cited_item_ids("see papernot2018-table2-answered-tests, and make2021-fig13. [png](make2021-fig13.png)") == {
        "papernot2018-table2-answered-tests",
        "make2021-fig13",
    }
