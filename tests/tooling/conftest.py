"""Fixtures of the runner's tests: the runner pointed at folders of a test's own (its layout), and stand-in
manifests for stand-in notebooks."""

import dataclasses

import pytest

from pate_study.tooling.figures import layout


@pytest.fixture
def point_layout(monkeypatch):
    """``point_layout(figures=..., build=..., root=...)``: the whole runner reads those folders until the test ends
    (every other folder stays this repository's)."""

    def point(**folders):
        monkeypatch.setattr(layout, "LAYOUT", dataclasses.replace(layout.LAYOUT, **folders))
        return layout.LAYOUT

    return point


@pytest.fixture
def write_manifests():
    """``write_manifests(configs, stems, waits_for)``: a manifest without datasets for each of ``stems`` under
    ``configs`` (``waits_for``: ``{stem: {other: why}}``)."""
    return write_stand_in_manifests


def write_stand_in_manifests(configs, stems, waits_for=None):
    """A manifest without datasets for each of ``stems`` under ``configs`` (``waits_for``: ``{stem: {other: why}}``)."""
    for stem in stems:
        (configs / stem).mkdir(parents=True, exist_ok=True)
        lines = ["datasets: []"]
        for other, why in (waits_for or {}).get(stem, {}).items():
            lines += ["waits_for:"] if len(lines) == 1 else []
            lines.append(f"  {other}: {why}")
        (configs / stem / "notebook.yaml").write_text("\n".join(lines) + "\n")
