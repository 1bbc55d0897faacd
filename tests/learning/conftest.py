import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def separable():
    """Linearly separable binary task with a margin (20 features)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 20)).astype(np.float32)
    w = rng.normal(size=20)
    s = X @ w
    keep = np.abs(s) > 0.5
    return X[keep], (s[keep] > 0).astype(np.int64)
