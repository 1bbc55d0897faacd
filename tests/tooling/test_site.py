"""``make site``: the static results site from the committed executed notebooks, opened in headless Chromium.

The build test (Sphinx + MyST-NB, nothing executed) takes about 30 s here and the browser check about 20 s; it is
marked ``site`` and skipped, saying why, without Sphinx/MyST-NB/jupyter-server-mathjax (``pip install -e ".[site]"``)
or Chromium. It fails on dollar mathematics left as text, mathematics MathJax did not typeset, sideways scrolling on the
index or a detail page, a figure shown too small to read, and a broken link.
"""

import importlib.util

import pytest

from pate_study.reporting.registry import load_registry
from pate_study.tooling import site
from pate_study.tooling.labcheck import find_browser


@pytest.mark.site
def test_every_page_renders_with_its_figures_and_no_broken_link(tmp_path):
    if importlib.util.find_spec("myst_nb") is None or importlib.util.find_spec(site.MATHJAX_PACKAGE) is None:
        pytest.skip('the site needs Sphinx + MyST-NB and jupyter-server-mathjax: pip install -e ".[site]"')
    browser = find_browser()
    if browser is None:
        pytest.skip("no chromium on this machine: apt-get install chromium (as .ci/run does)")
    out = site.build_site(tmp_path / "site", source=tmp_path / "site-src")
    pages = {p.relative_to(out).as_posix() for p in site.pages(out)}
    stems = site.executed_notebooks()
    assert {f"figures/{s}/{s}.html" for s in stems} <= pages, "one page per executed notebook"
    assert {f"figures/details/{i.document}.html" for i in load_registry()} <= pages, "one page per source document"
    assert "figures/INDEX.html" in pages
    warnings = (tmp_path / "site-src" / "sphinx-warnings.log").read_text(encoding="utf-8")
    assert "WARNING" not in warnings and "ERROR" not in warnings, warnings[:2000]
    assert (out / "_static" / "mathjax" / "MathJax.js").is_file(), "MathJax is served from the site, not a CDN"
    problems = site.check_site_in_browser(out, browser)  # raw $…$, untypeset maths, sideways scrolling, small figures
    assert not problems
    primer = (out / "figures" / "00_dp_primer" / "00_dp_primer.html").read_text(encoding="utf-8")
    assert primer.count("<img") >= 8, "the primer's stored figures are on its page (nothing re-executed)"


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


def test_only_the_tools_own_previous_output_is_emptied(tmp_path):
    out = site.claim_output_folder(tmp_path / "new" / "site")  # created, marked
    assert (out / site.SITE_MARKER).is_file()
    (out / "old.html").write_text("old page")
    site.claim_output_folder(out)  # its own previous output: emptied and marked again
    assert not (out / "old.html").exists() and (out / site.SITE_MARKER).is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (site.claim_output_folder(empty) / site.SITE_MARKER).is_file()


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
    with pytest.raises(site.SiteError, match=r'not installed: pip install -e "\.\[site\]"'):
        site.mathjax_folder()


def test_the_no_sideways_scroll_check_covers_the_index_and_the_detail_pages():
    assert site.NO_SIDEWAYS_SCROLL.match("figures/INDEX.html")
    assert site.NO_SIDEWAYS_SCROLL.match("figures/details/make2021.html")
    assert not site.NO_SIDEWAYS_SCROLL.match("figures/01_ecg_student_privacy/01_ecg_student_privacy.html")


def test_a_source_tree_generated_before_the_marker_is_recognised_by_its_conf(tmp_path):
    old = tmp_path / "site-src"
    old.mkdir()
    (old / "conf.py").write_text(site.CONF.format(theme="alabaster"))
    site.claim_output_folder(old, "the site's source folder")
    assert not (old / "conf.py").exists() and (old / site.SITE_MARKER).is_file()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "conf.py").write_text("project = 'my book'\n")
    with pytest.raises(site.SiteError, match="not a site this tool wrote"):
        site.claim_output_folder(mine)
