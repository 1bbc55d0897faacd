"""``make site``: the static results site from the committed executed notebooks, built in the light venv (no torch)
and opened in headless Chromium.

The build test (Sphinx + MyST-NB, nothing executed; ``.venv-lab`` with the ``site`` extra, built by make on first use)
takes about 30 s here and the browser check about 20 s; it is marked ``site`` and skipped, saying why, without
Chromium or where the light venv cannot be built. On every page it fails on a formula MathJax did not typeset, a
"Math Processing Error", a MathJax font that did not load, TeX (dollar or ``\\(…\\)``) left as text, an inline
formula off the text's size or baseline, sideways scrolling on the index or a detail page, a figure whose
provenance stamp is shown too small to read, and a broken link.
"""

import base64
import errno
import json
import subprocess

import pytest

from pate_study.reporting.registry import load_registry
from pate_study.tooling import site
from pate_study.tooling.labcheck import find_browser

#: Run by the light venv's Python: build the site as ``make site`` does, into the folders named on the command line,
#: and say whether torch was imported on the way.
BUILD_AS_MAKE_SITE_DOES = """
import sys
from pathlib import Path
from pate_study.tooling import site
site.build_site(Path(sys.argv[1]), source=Path(sys.argv[2]))
print("torch imported" if "torch" in sys.modules else "no torch")
"""


@pytest.mark.site
@pytest.mark.light
def test_every_page_renders_with_its_figures_and_mathematics_and_no_broken_link(tmp_path, light_site):
    browser = find_browser()
    if browser is None:
        pytest.skip("no chromium on this machine: apt-get install chromium (as .ci/run does)")
    out, source = tmp_path / "site", tmp_path / "site-src"
    build = subprocess.run(
        [str(light_site), "-c", BUILD_AS_MAKE_SITE_DOES, str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    assert build.stdout.strip().splitlines()[-1] == "no torch"
    pages = {p.relative_to(out).as_posix() for p in site.pages(out)}
    stems = site.executed_notebooks()
    assert {f"figures/{s}/{s}.html" for s in stems} <= pages, "one page per executed notebook"
    assert {f"figures/details/{i.document}.html" for i in load_registry()} <= pages, "one page per source document"
    assert "figures/INDEX.html" in pages
    warnings = (source / "sphinx-warnings.log").read_text(encoding="utf-8")
    assert "WARNING" not in warnings and "ERROR" not in warnings, warnings[:2000]
    mathjax = out / "_static" / "mathjax"
    assert (mathjax / site.MATHJAX_SCRIPT).is_file() and list((mathjax / site.MATHJAX_FONTS).glob("MathJax_AMS*"))
    problems = site.check_site_in_browser(out, browser)  # every page: typeset, fonts, size, baseline, figures
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)[:6000]
    primer = (out / "figures" / "00_dp_primer" / "00_dp_primer.html").read_text(encoding="utf-8")
    assert primer.count("<img") >= 8, "the primer's stored figures are on its page (nothing re-executed)"
    assert "D&#39;" in primer or "D'" in primer, "the primer's primes are on its page, and typeset (no problem above)"


def test_broken_local_links_are_found(tmp_path):
    (tmp_path / "a").mkdir()
    page = tmp_path / "a" / "page.html"
    page.write_text("x")
    (tmp_path / "a" / "fig.png").write_bytes(b"png")
    assert site.broken_local_link(page, "fig.png#x", tmp_path) is None
    assert site.broken_local_link(page, "https://example.org/x", tmp_path) is None
    assert site.broken_local_link(page, "missing.html", tmp_path) == "missing.html"
    assert "outside the site" in site.broken_local_link(page, "../../etc/passwd", tmp_path)


def test_the_source_tree_uses_the_committed_index_and_detail_pages(tmp_path):
    """The site builds no page of its own: the index and one page per source document are the committed
    ``figures/INDEX.md`` and ``figures/details/<document>.md`` (written by ``make figures``), in the navigation as
    they are; the per-notebook tables are orphan pages, the detail pages are not touched."""
    figures = tmp_path / "figures"
    (figures / "details").mkdir(parents=True)
    (figures / "01_x").mkdir()
    (figures / "INDEX.md").write_text("# Figure and table index\n\n[Fig](details/make2021.md#make2021-fig8)\n")
    page = "# MAKE 2021\n\n## make2021-fig8\n\nevidence\n"
    (figures / "details" / "make2021.md").write_text(page)
    (figures / "01_x" / "make2021-table1.md").write_text("| a |\n|---|\n| 1 |\n")
    source = site.build_source(tmp_path / "src", figures, theme="alabaster")
    assert (source / "figures" / "INDEX.md").read_text() == (figures / "INDEX.md").read_text()
    assert (source / "figures" / "details" / "make2021.md").read_text() == page
    assert (source / "figures" / "01_x" / "make2021-table1.md").read_text().startswith("---\norphan: true\n---\n")
    landing = (source / "index.md").read_text()
    assert "figures/details/make2021" in landing and "figures/INDEX" in landing and "documents/" not in landing
    assert not (source / "documents").exists()


def test_the_site_leaves_out_staging_checkpoints_and_smoke_outputs(tmp_path):
    """A local ``make smoke`` writes git-ignored ``figures/<notebook>/smoke/``; the site shows committed results
    only."""
    names = ["smoke", ".tmp-04_audioset_teachers-1", ".ipynb_checkpoints", "muschiol2021-fig5.1.png", "INDEX.md"]
    assert site.NOT_PUBLISHED(str(tmp_path), names) == {"smoke", ".tmp-04_audioset_teachers-1", ".ipynb_checkpoints"}


# ------------------------------------------------------------------------------------- nothing of the user's removed
def test_an_existing_folder_of_the_users_is_refused_and_kept(tmp_path, capsys):
    """``--out ~/mysite`` on a folder the user owns: refused in one line, every file kept (it used to be rmtree'd)."""
    mine = tmp_path / "mysite"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    assert site.main(["--out", str(mine)]) == 2
    assert (mine / "thesis.tex").read_text() == "years of work"
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a site this tool wrote" in err and str(mine) in err


def test_an_empty_out_is_refused_and_the_working_folder_kept(tmp_path, monkeypatch, capsys):
    """``--out ""`` is ``Path(".")``: it used to delete every file of the working folder."""
    (tmp_path / "notes.md").write_text("mine")
    monkeypatch.chdir(tmp_path)
    assert site.main(["--out", ""]) == 2
    assert (tmp_path / "notes.md").read_text() == "mine"
    assert "--out is empty" in capsys.readouterr().err


def test_a_file_or_a_link_in_place_of_the_output_folder_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "keep").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    for name in ("file", "link"):
        with pytest.raises(site.SiteError, match="nothing was changed"):
            site.claim_output_folder(tmp_path / name)
    assert (tmp_path / "file").read_text() == "x" and (tmp_path / "target" / "keep").exists()


def test_only_the_files_the_tool_wrote_are_removed_on_a_rebuild(tmp_path):
    out = site.claim_output_folder(tmp_path / "new" / "site")  # created, with an empty list of its files
    assert (out / site.SITE_MARKER).is_file()
    (out / "old.html").write_text("old page")
    (out / "_static").mkdir()
    (out / "_static" / "site.css").write_text("css")
    site.record_output_files(out)  # what a build does once it has written them
    site.claim_output_folder(out)  # its own previous output: its files removed, the list emptied
    assert sorted(p.name for p in out.iterdir()) == [site.SITE_MARKER]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (site.claim_output_folder(empty) / site.SITE_MARKER).is_file()


def test_a_users_file_added_to_a_site_the_tool_wrote_is_refused_and_kept(tmp_path, capsys):
    """The marker used to mean "rebuilt in full": a file the user had since put into the site was deleted."""
    out = site.claim_output_folder(tmp_path / "site")
    (out / "index.html").write_text("built")
    site.record_output_files(out)
    (out / "notes").mkdir()
    (out / "notes" / "mine.md").write_text("my notes")
    with pytest.raises(site.SiteError, match=r"holds files this tool did not write \(notes/mine.md\)"):
        site.claim_output_folder(out)
    assert site.main(["--out", str(out)]) == 2
    assert (out / "notes" / "mine.md").read_text() == "my notes" and (out / "index.html").exists()
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_site_marked_without_the_list_of_its_files_is_refused_and_kept(tmp_path):
    old = tmp_path / "site"
    old.mkdir()
    (old / site.SITE_MARKER).write_text(site.UNLISTED_MARKER + "\n")
    (old / "index.html").write_text("old build")
    with pytest.raises(site.SiteError, match="without listing its files.*delete it yourself"):
        site.claim_output_folder(old)
    assert (old / "index.html").read_text() == "old build"


@pytest.mark.parametrize("where", ["below a file", "read-only"])
def test_an_out_that_cannot_take_files_is_refused_before_anything_is_built(tmp_path, monkeypatch, where):
    """It used to be found only after the whole source tree was built."""
    if where == "below a file":
        (tmp_path / "file").write_text("x")
        out = tmp_path / "file" / "site"
        match = "lies below the file"
    else:
        out = tmp_path / "ro" / "site"
        (tmp_path / "ro").mkdir()

        def refuse(*args, **kwargs):
            raise OSError(errno.EROFS, "Read-only file system")

        monkeypatch.setattr(site.tempfile, "mkstemp", refuse)
        match = "cannot take files \\(Read-only file system\\)"
    with pytest.raises(site.SiteError, match=match):
        site.check_output_folder(out)


def test_an_output_overlapping_figures_or_the_source_is_refused(tmp_path):
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "INDEX.md").write_text("# index")
    with pytest.raises(site.SiteError, match="overlaps figures/"):
        site.check_folders(figures / "site", tmp_path / "src", figures)
    with pytest.raises(site.SiteError, match="source folder"):
        site.check_folders(tmp_path / "src" / "html", tmp_path / "src", figures)


def test_figures_missing_is_one_line_not_a_traceback(tmp_path):
    with pytest.raises(site.SiteError, match="no INDEX.md.*git checkout -- figures"):
        site.check_folders(tmp_path / "out", tmp_path / "src", tmp_path / "figures")


# ------------------------------------------------------------------------------ mathematics and width, without a build
def test_the_configuration_renders_dollar_math_with_a_mathjax_served_by_the_site():
    assert 'myst_enable_extensions = ["dollarmath", "amsmath"]' in site.CONF
    conf = site.CONF.format(theme="alabaster")
    namespace = {}
    exec(compile(conf, "conf.py", "exec"), namespace)  # the generated conf.py is valid Python
    assert not namespace["mathjax_path"].startswith(("http", "//")) and namespace["html_static_path"] == ["_static"]


def test_raw_dollar_math_in_a_rendered_page_is_found():
    page = (
        '<p>A mechanism is <span class="math notranslate nohighlight">\\((\\varepsilon, \\delta)\\)</span>-DP, '
        "costs $5 and $6 a day</p><pre>$x_1$ in code</pre><script>var a = '$\\alpha$';</script>"
    )
    assert site.raw_tex(page) == []
    assert site.raw_tex("<p>is <strong>$(\\varepsilon, \\delta)$-DP</strong> and $$n_j + Z$$</p>") == [
        "$(\\varepsilon, \\delta)$",
        "$$n_j + Z$$",
    ]


def test_without_the_mathjax_package_the_site_says_what_to_install(monkeypatch):
    monkeypatch.setattr(site, "MATHJAX_PACKAGE", "no_such_mathjax_package")
    with pytest.raises(site.SiteError, match=r'django-static-mathjax.*not installed: pip install -e "\.\[site\]"'):
        site.mathjax_folder()


def test_the_no_sideways_scroll_check_covers_the_index_and_the_detail_pages():
    assert site.NO_SIDEWAYS_SCROLL.match("figures/INDEX.html")
    assert site.NO_SIDEWAYS_SCROLL.match("figures/details/make2021.html")
    assert not site.NO_SIDEWAYS_SCROLL.match("figures/01_ecg_student_privacy/01_ecg_student_privacy.html")


def test_a_source_tree_generated_before_the_marker_is_refused_and_kept(tmp_path):
    """Recognised by its ``conf.py``, but its files were never listed: refused, kept, and the user told why."""
    old = tmp_path / "site-src"
    old.mkdir()
    (old / "conf.py").write_text(site.CONF.format(theme="alabaster"))
    with pytest.raises(site.SiteError, match="without listing its files"):
        site.claim_output_folder(old, "the site's source folder")
    assert (old / "conf.py").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "conf.py").write_text("project = 'my book'\n")
    with pytest.raises(site.SiteError, match="not a site this tool wrote"):
        site.claim_output_folder(mine)


# ------------------------------------------------------------------------------ what the browser check makes of a page
def test_a_pages_mathematics_and_figures_are_judged_from_what_the_browser_measured(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pate_study.reporting.outputs import STAMP_FONTSIZE

    for dpi in (100, 150):
        fig, ax = plt.subplots(figsize=(12, 4))
        fig.savefig(tmp_path / f"fig{dpi}.png", dpi=dpi)
        plt.close(fig)
        head = (tmp_path / f"fig{dpi}.png").read_bytes()[:4096]
        assert site.png_dpi(head) == pytest.approx(dpi, abs=0.5)
        inline = "data:image/png;base64," + base64.b64encode((tmp_path / f"fig{dpi}.png").read_bytes()).decode()
        assert site.image_head(tmp_path / "page.html", inline)[:4096] == head
    page = tmp_path / "page.html"
    page.write_text("<p>text</p>")
    wide = {"src": "fig150.png", "ok": True, "natural": 1800, "shown": 900}
    assert site.stamp_pixels(page, wide) == pytest.approx(STAMP_FONTSIZE * 150 / 72 / 2, rel=1e-3)
    clean = {
        "images": [{**wide, "shown": 1800}],
        "links": [],
        "math": 3,
        "mathjax": 1,
        "typeset": 3,
        "untypeset": [],
        "errors": 0,
        "badFonts": [],
        "misplaced": [],
        "visible": "ε costs $5 and $6",
        "scrolling": [],
        "text": 500,
    }
    assert site.page_problems(tmp_path, "page.html", clean) == []
    broken = {
        **clean,
        "images": [wide],
        "untypeset": ["\\(f(D')\\)"],
        "errors": 15,
        "badFonts": ["MJXZERO", "MJXZERO"],
        "misplaced": ["ε: raised: its bottom 6.0 px above the baseline"],
        "visible": "the loss \\(\\ell\\) and $\\varepsilon$",
    }
    found = site.page_problems(tmp_path, "page.html", broken)
    assert any(p.startswith("figure too small to read: fig150.png") and "stamp at 8.3 px" in p for p in found)
    assert "formula not typeset: \\(f(D')\\)" in found and "15 formulas with a Math Processing Error" in found
    assert found.count("font did not load: MJXZERO") == 1 and any("raised" in p for p in found)
    assert sum(p.startswith("TeX shown as text") for p in found) == 2
    assert "mathematics not typeset: the site's MathJax did not load" in site.page_problems(
        tmp_path, "page.html", {**clean, "mathjax": -1}
    )


def test_a_full_disk_during_the_build_is_one_line_naming_the_path_and_the_cause(tmp_path, monkeypatch, capsys):
    """It used to point to Sphinx's log, which did not hold the error."""
    pytest.importorskip("sphinx")
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "INDEX.md").write_text("# index")

    def full_disk(source, figures_dir, theme):
        raise OSError(errno.ENOSPC, "No space left on device", str(source / "figures" / "fig.png"))

    monkeypatch.setattr(site, "mathjax_folder", lambda: tmp_path)
    monkeypatch.setattr(site, "build_source", full_disk)
    with pytest.raises(site.SiteError, match=r"src/figures/fig.png: cannot write \(No space left on device; free"):
        site.build_site(tmp_path / "out", source=tmp_path / "src", figures_dir=figures)
    assert not (tmp_path / "out").exists()  # nothing claimed after the failure
    assert (tmp_path / "src" / site.SITE_MARKER).is_file()  # what it wrote there is listed, for the next run
