"""``python -m pate_study.tooling.runner figures|index``: the command line of ``make figures``, kept at this name;
the runner itself is the package :mod:`pate_study.tooling.notebook_runner`."""

import sys

from pate_study.tooling.notebook_runner.cli import main

if __name__ == "__main__":
    sys.exit(main())
