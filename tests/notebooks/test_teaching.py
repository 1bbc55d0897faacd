"""The lecturer's path as files: a README in two screens linking each docs page once, and a light install list
(binder/requirements.txt) that is exactly the core dependencies plus the ``lab`` extra (no torch)."""

import re
import tomllib

from pate_study.core.paths import REPO_ROOT

DOCS = ["docs/teaching.md", "docs/data.md", "docs/reproducibility.md", "docs/architecture.md", "docs/findings/"]


def test_readme_is_two_screens_and_links_each_docs_page_once():
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    # two screens at 800 px: about 60 source lines of at most 120 columns (the former 104 lines were 3.5 screens)
    assert len(text.splitlines()) <= 60 and max(len(line) for line in text.splitlines()) <= 120
    for part in (
        "## Two commands",
        "make figures",
        "make test",
        "## A lecturer's path: three commands",
        "make lab-light",
        "## Where the results are",
    ):
        assert part in text, part
    for page in DOCS:
        assert text.count(f"]({page})") == 1, page
        assert (REPO_ROOT / page).exists(), page
    assert "../shared" not in text and "build/00_dp_primer" not in text


def test_binder_requirements_are_the_core_and_the_lab_extra_without_torch():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    expected = set(project["dependencies"]) | set(project["optional-dependencies"]["lab"])
    listed = {
        line.strip()
        for line in (REPO_ROOT / "binder" / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert listed == expected
    assert not any(re.match(r"(torch|ray)\b", spec) for spec in expected)


def test_docs_do_not_point_at_files_a_clone_does_not_have():
    for path in (REPO_ROOT / "docs").rglob("*.md"):
        assert "../shared" not in path.read_text(encoding="utf-8"), path


def test_the_docs_say_where_students_work_and_it_is_ignored():
    """The lecturer's docs describe the copies ``make lab-light`` makes (labs/, git-ignored), not the committed
    files."""
    for page in ("docs/teaching.md", "instructors/guide.md"):
        text = (REPO_ROOT / page).read_text(encoding="utf-8")
        assert "labs/00_dp_primer.ipynb" in text, page
        assert "never changes a committed file" not in text, page
    assert "/labs/" in (REPO_ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def _written_answer_cells(stem):
    import json

    cells = json.loads((REPO_ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return [c for c in cells if "written-answer" in c.get("metadata", {}).get("tags", [])]


def test_every_written_answer_has_its_own_cell_and_a_row_in_the_rubric():
    """Exercises 6 and 10 of the primer, task 2's explanation, task 5's discussion and the try-it comparison of lab
    07: each a Markdown cell of its own (the student writes there) and a row of instructors/rubric.md."""
    rubric = (REPO_ROOT / "instructors" / "rubric.md").read_text(encoding="utf-8")
    expected = {"00_dp_primer": ["exercise 6", "exercise 10"], "07_pate2018_lab": ["task 2", "task 5", "try it"]}
    for stem, answers in expected.items():
        cells = _written_answer_cells(stem)
        assert len(cells) == len(answers), stem
        for cell, what in zip(cells, answers):
            text = "".join(cell["source"])
            assert cell["cell_type"] == "markdown" and text.startswith("*Your ") and what in text, (stem, text)
            kind = re.match(r"\*Your (\w+)", text).group(1)
            assert f"(*Your {kind}*)" in rubric, (stem, kind)
            assert "#" not in text, "a heading in an answer cell would be edited away with the answer"


def test_the_instructors_pages_name_the_handout_the_mistakes_and_the_rubric():
    guide = (REPO_ROOT / "instructors" / "guide.md").read_text(encoding="utf-8")
    for part in ("make handout", "mistakes.md", "rubric.md", "lab-run-all-seconds.json", "pate2018-votes/"):
        assert part in guide, part
    teaching = (REPO_ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert "make handout" in teaching and "instructors/" in teaching and "make lab-votes" in teaching
