"""Everything a notebook writes or displays: provenance-stamped figures, tables and scalars (``outputs``), the
catalogue of the sources' items (``registry``) and ``figures/INDEX.md`` (``index``), one plot style (``plots``),
verdict rules (``verdicts``) and the Jupyter-kernel set-up (``session``). Imports ``core`` only."""
