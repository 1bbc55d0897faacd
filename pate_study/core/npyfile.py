"""Reading user-supplied ``.npy`` files safely: header first, nothing allocated until it adds up.

The implementation lives in :mod:`data_recipes.npyfile` (the recipes read vote files through it and import
nothing from ``pate_study``); this module is its name inside the study package.
"""

from __future__ import annotations

from data_recipes.npyfile import NpyFileError, NpyHeader, load_npy, read_npy_header

__all__ = ["NpyFileError", "NpyHeader", "read_npy_header", "load_npy"]
