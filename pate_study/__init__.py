"""pate_study: a reproducible study of PATE (Private Aggregation of Teacher Ensembles).

Subpackages and modules (see README.md for the map):

- ``pate_study.privacy``   differential-privacy math (numpy + scipy only; never imports torch)
- ``pate_study.data``      prepared datasets and synthetic stand-ins (real data comes from ``data_recipes``)
- ``pate_study.features``, ``models``, ``ensemble``, ``student``, ``metrics``  the learning side
- ``pate_study.outputs``   figures, tables and recorded scalars stamped with provenance
- ``pate_study.registry``  every figure and table of the five source documents
- ``pate_study.runner``    executes the notebooks (``make figures``)

Nothing is imported eagerly here, so ``import pate_study.privacy`` stays light.
"""

__version__ = "0.1.0"
