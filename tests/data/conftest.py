"""Fixtures for the data-layer tests: a temporary PATE_STUDY_DATA, the real mirror (or a skip),
fake mirrors built from the fixture files."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]


def real_mirror() -> Path | None:
    env = os.environ.get("PATE_STUDY_MIRROR")
    path = Path(env) if env else REPO.parent / "shared" / "datasets"
    return path if path.is_dir() else None


# Read once at import, before any fixture switches the variable off for a test.
REAL_MIRROR = real_mirror()


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A fresh PATE_STUDY_DATA; the mirror is switched off unless a test sets it."""
    d = tmp_path / "prepared"
    monkeypatch.setenv("PATE_STUDY_DATA", str(d))
    monkeypatch.delenv("PATE_STUDY_MIRROR", raising=False)
    return d


@pytest.fixture
def mirror(data_dir, monkeypatch):
    """The real mirror (PATE_STUDY_MIRROR or ../shared/datasets), else skip."""
    m = REAL_MIRROR
    if m is None:
        pytest.skip("real-data mirror not found (set PATE_STUDY_MIRROR or provide ../shared/datasets)")
    monkeypatch.setenv("PATE_STUDY_MIRROR", str(m))
    return m


@pytest.fixture
def fake_mirror(tmp_path, data_dir, monkeypatch):
    m = tmp_path / "mirror"
    m.mkdir()
    monkeypatch.setenv("PATE_STUDY_MIRROR", str(m))
    return m


@pytest.fixture(scope="session")
def audioset_prepared(tmp_path_factory):
    """Prepare Audio Set from the real mirror once per session; returns the PATE_STUDY_DATA folder."""
    m = REAL_MIRROR
    if m is None or not (m / "audioset").is_dir():
        pytest.skip("real-data mirror with audioset/ not found (set PATE_STUDY_MIRROR)")
    root = tmp_path_factory.mktemp("audioset_data")
    with mock.patch.dict(os.environ, {"PATE_STUDY_DATA": str(root), "PATE_STUDY_MIRROR": str(m)}):
        import data_recipes

        data_recipes.run_recipe(data_recipes.get_recipe("audioset"), network=False)
    return root
