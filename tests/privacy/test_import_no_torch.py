"""``import pate_study.privacy`` must not import torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_import_does_not_load_torch():
    code = (
        "import pate_study.privacy, pate_study.privacy.audit, sys; assert 'torch' not in sys.modules, 'torch imported'"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
