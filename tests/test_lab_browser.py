"""Every notebook in JupyterLab, as a student meets it: headless Chromium, Run All Cells, smoke parameters.

Fails on an error output, a cell that did not run, the package's log lines in a stderr box (JupyterLab draws them
pink), outputs not under the repository root's build/lab-test/figures/ or not stamped as an interactive run, and
any file written outside figures/, build/ and the prepared data. Needs Debian's ``chromium`` (``.ci/run`` installs
it); skipped, saying so, where it is absent. See :mod:`pate_study.labcheck`.
"""
import os

import pytest

from pate_study.labcheck import find_browser, run_in_lab
from pate_study.paths import REPO_ROOT
from pate_study.runner import list_notebooks


@pytest.mark.lab
def test_every_notebook_runs_clean_in_jupyterlab_and_chromium():
    browser = find_browser()
    if browser is None:
        pytest.skip("no chromium on this machine: install Debian's package (apt-get install chromium), "
                    "as .ci/run does, to run the notebooks in JupyterLab")
    screenshot = os.environ.get("PATE_STUDY_LAB_SCREENSHOT")  # e.g. docs/img/primer-first-plot-jupyterlab.png
    checks, outside = run_in_lab(list_notebooks(), browser=browser,
                                 screenshot=REPO_ROOT / screenshot if screenshot else None)
    problems = {check.stem: check.problems for check in checks if check.problems}
    assert not problems
    assert not outside, f"files written outside figures/ and build/: {outside}"
    # Time is reported, not asserted (performance belongs in benchmarks/): the aim is all notebooks in 5 minutes.
    print("JupyterLab run times: " + ", ".join(f"{c.stem} {c.seconds:.0f} s" for c in checks))
