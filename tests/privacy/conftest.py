"""Shared fixtures for the privacy tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def votes_small() -> np.ndarray:
    """Three queries, ten classes, mixed consensus."""
    return np.array([[240, 5, 5] + [0] * 7, [150, 60, 40] + [0] * 7, [100, 100, 50] + [0] * 7])
