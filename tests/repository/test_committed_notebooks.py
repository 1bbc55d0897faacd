"""The committed executed notebooks (``figures/<stem>/<stem>.ipynb``, shown on GitHub and on the static site) carry
no stderr output and no error, unless listed in :data:`EXPECTED_STDERR` with the reason a reader sees it.

A stderr output is what JupyterLab and the site draw as a pink box: a warning a reader would have to interpret, often
with a machine's absolute path in it. The package says what a reader needs once, in words, on stdout (its logging),
so a committed run should have none. The allow-list is explicit: a stem maps to the cells whose stderr is expected and
why; nothing is allowed by default.
"""

import nbformat
import pytest

from pate_study.core.paths import FIGURES_DIR

#: stem -> {cell index: reason}. Empty: no committed notebook is expected to show a stderr box.
EXPECTED_STDERR: dict[str, dict[int, str]] = {}


def committed_notebooks() -> list:
    return sorted(p for p in FIGURES_DIR.glob("*/*.ipynb") if p.stem == p.parent.name)


def stderr_and_errors(path) -> list[tuple[int, str]]:
    """(cell index, first line) of every stderr stream and error output of the notebook at ``path``."""
    found = []
    for index, cell in enumerate(nbformat.read(str(path), as_version=4).cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append((index, f"{output.get('ename')}: {output.get('evalue')}"))
            elif output.get("output_type") == "stream" and output.get("name") == "stderr":
                found.append((index, (output.get("text", "").strip().splitlines() or [""])[0][:200]))
    return found


@pytest.mark.parametrize("path", committed_notebooks(), ids=lambda p: p.stem)
def test_committed_executed_notebooks_show_no_unexpected_stderr(path):
    expected = EXPECTED_STDERR.get(path.stem, {})
    unexpected = [(cell, text) for cell, text in stderr_and_errors(path) if cell not in expected]
    assert not unexpected, f"{path.parent.name}/{path.name}: stderr or error outputs a reader sees: {unexpected[:5]}"


def test_the_finder_sees_stderr_and_errors_and_nothing_else(tmp_path):
    new = nbformat.v4
    cell = new.new_code_cell(
        "x",
        outputs=[
            new.new_output("stream", name="stdout", text="INFO fine\n"),
            new.new_output("stream", name="stderr", text="/abs/x.py:1: Warning: w\n"),
            new.new_output("error", ename="KeyError", evalue="'k'", traceback=[]),
        ],
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(new.new_notebook(cells=[new.new_markdown_cell("# t"), cell]), str(path))
    assert stderr_and_errors(path) == [(1, "/abs/x.py:1: Warning: w"), (1, "KeyError: 'k'")]


def test_every_expected_entry_names_a_committed_notebook_and_a_reason():
    stems = {p.stem for p in committed_notebooks()}
    for stem, cells in EXPECTED_STDERR.items():
        assert stem in stems and all(reason.strip() for reason in cells.values()), stem
