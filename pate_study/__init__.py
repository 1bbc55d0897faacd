"""pate_study: a reproducible study of PATE (Private Aggregation of Teacher Ensembles).

Subpackages and modules (see README.md for the map):

- ``pate_study.privacy``   differential-privacy math (numpy + scipy only; never imports torch)
- ``pate_study.data``      prepared datasets and synthetic stand-ins (real data comes from ``data_recipes``)
- ``pate_study.learning.features``, ``models``, ``ensemble``, ``student``, ``metrics``  the learning side
- ``pate_study.reporting.outputs``   figures, tables and recorded scalars stamped with provenance
- ``pate_study.reporting.registry``  every figure and table of the five source documents
- ``pate_study.tooling.runner``    executes the notebooks (``make figures``)

Nothing is imported eagerly here, so ``import pate_study.privacy`` stays light. Inside a Jupyter kernel only,
``pate_study.reporting.session`` sets up what a notebook reader needs: the package's log lines on stdout (not in
JupyterLab's pink stderr boxes), alternative text on inline figures, and progress bars in the runner's terminal.
"""

import sys as _sys

__version__ = "0.1.0"

if "ipykernel" in _sys.modules:  # cheap test first: scripts and tests never import ipykernel
    from pate_study.reporting import session as _session

    _session.configure()
