"""Error messages: one line each (file or flag, problem, fix), whatever the underlying library printed.

Defined in :mod:`data_recipes.files` (shared with the recipes, which import nothing from ``pate_study``).
"""

from __future__ import annotations

from data_recipes.files import one_line

__all__ = ["one_line"]
