"""Every relative link of the Markdown a reader opens resolves: the README, docs/ (data cards and findings
included), instructors/, benchmarks/ and figures/INDEX.md. A link is resolved from the folder of the file that holds
it, as GitHub and the static site do; web addresses and in-page anchors are not followed (no network in tests)."""

import re
import subprocess
from pathlib import Path

import pytest

from pate_study.core.paths import REPO_ROOT

FENCED = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)", re.M)
HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*?(?:href|src)=\"([^\"]+)\"", re.I)
NOT_FILES = ("http://", "https://", "mailto:", "#", "data:")


def markdown_files(root: Path = REPO_ROOT) -> list[Path]:
    """The tracked Markdown a reader opens: README.md, docs/, instructors/, benchmarks/ and figures/INDEX.md (the
    per-notebook tables under figures/ are outputs, linked from the index, not documents with links of their own)."""
    tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=root, capture_output=True, text=True, check=True)
    paths = [Path(line) for line in tracked.stdout.splitlines()]
    keep = [p for p in paths if p.parts[0] in ("docs", "instructors", "benchmarks") or len(p.parts) == 1]
    return sorted(root / p for p in keep + [Path("figures/INDEX.md")] if (root / p).exists())


def relative_links(text: str) -> list[str]:
    """The link targets of Markdown ``text`` that name files: code blocks and code spans left out, no web address,
    no in-page anchor."""
    text = INLINE_CODE.sub("", FENCED.sub("", text))
    targets = INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text) + HTML_LINK.findall(text)
    return [t for t in targets if not t.startswith(NOT_FILES)]


def broken_links(path: Path) -> list[str]:
    """The relative links of ``path`` whose target does not exist (anchor and query stripped)."""
    broken = []
    for target in relative_links(path.read_text(encoding="utf-8")):
        local = target.split("#", 1)[0].split("?", 1)[0]
        if local and not (path.parent / local).exists():
            broken.append(target)
    return broken


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_relative_link_resolves(path):
    assert not broken_links(path), f"{path.relative_to(REPO_ROOT)}: links to missing files"


def test_the_link_finder_sees_links_and_skips_code_and_web_addresses(tmp_path):
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    (tmp_path / "docs" / "cards").mkdir()
    (tmp_path / "docs" / "cards" / "a.md").write_text("x")
    page.write_text(
        "[ok](cards/a.md#top) [bad](docs/cards/a.md) ![img](missing.png) [web](https://x.org/y)\n"
        "`[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n[ref]: ../gone.md\n[anchor](#here)\n"
    )
    assert broken_links(page) == ["docs/cards/a.md", "missing.png", "../gone.md"]
