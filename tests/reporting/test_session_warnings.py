"""Inside a notebook kernel the package's own warnings are said once, in words, without a machine's file path."""

from __future__ import annotations

import logging
import warnings

from pate_study.privacy.accounting import OrderAtGridEdgeWarning
from pate_study.reporting.session import package_warnings_in_words


def test_a_package_warning_is_logged_once_without_its_path(caplog):
    passed_on = []
    show = package_warnings_in_words(shown=lambda *args: passed_on.append(args))
    with caplog.at_level(logging.WARNING, logger="pate_study"):
        for _ in range(3):
            show(
                OrderAtGridEdgeWarning("the best order 1.001 is at the edge"),
                OrderAtGridEdgeWarning,
                "/somewhere/pate_study/experiments/audioset/release.py",
                130,
            )
        show(OrderAtGridEdgeWarning("another message"), OrderAtGridEdgeWarning, "/x/release.py", 342)
    assert [r.getMessage() for r in caplog.records] == [
        "OrderAtGridEdgeWarning: the best order 1.001 is at the edge",
        "OrderAtGridEdgeWarning: another message",
    ]
    assert not any("release.py" in r.getMessage() for r in caplog.records)
    assert passed_on == []


def test_other_libraries_warnings_keep_pythons_display():
    passed_on = []
    show = package_warnings_in_words(shown=lambda *args: passed_on.append(args))
    show(DeprecationWarning("old"), DeprecationWarning, "lib.py", 1)
    show(DeprecationWarning("old"), DeprecationWarning, "lib.py", 1)
    assert len(passed_on) == 2
    assert warnings.showwarning is not show  # nothing is installed outside a kernel
