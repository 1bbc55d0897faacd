"""``python -m data_recipes prepare``'s flags as one options object: ``--offline`` selects the sources (the mirror
only, instead of the mirror then the network), the other flags are permissions passed on unchanged."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from data_recipes import __main__ as recipes_cli
from data_recipes.__main__ import PrepareOptions, Sources


def _calls(monkeypatch, tmp_path) -> list[dict]:
    """Record the keywords each dataset is prepared with (nothing is fetched)."""
    seen: list[dict] = []

    def prepare(name, **kwargs) -> Path:
        seen.append({"name": name, **kwargs})
        return tmp_path / name

    monkeypatch.setattr(recipes_cli, "prepare", prepare)
    monkeypatch.setattr(recipes_cli, "get_recipe", lambda name: None)
    monkeypatch.setattr(recipes_cli, "read_manifest", lambda name: {"scale": "full"})
    return seen


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([], {"network": True, "force": False, "allow_large": None, "allow_small": False}),
        (["--offline"], {"network": False, "force": False, "allow_large": None, "allow_small": False}),
        (
            ["--force", "--allow-large", "--allow-small"],
            {"network": True, "force": True, "allow_large": True, "allow_small": True},
        ),
    ],
)
def test_the_flags_reach_prepare_as_before(monkeypatch, tmp_path, flags, expected):
    seen = _calls(monkeypatch, tmp_path)
    assert recipes_cli.main(["prepare", "pate2018-votes", *flags]) == recipes_cli.EXIT_OK
    assert seen == [{"name": "pate2018-votes", **expected}]


def test_offline_is_a_choice_of_sources_not_a_flag():
    args = argparse.Namespace(offline=True, force=False, allow_large=False, allow_small=False)
    options = PrepareOptions.from_args(args)
    assert options.sources is Sources.MIRROR_ONLY and options.sources == "mirror-only"
    assert PrepareOptions().sources is Sources.MIRROR_THEN_NETWORK
    assert PrepareOptions(sources=Sources.MIRROR_ONLY).prepare_kwargs()["network"] is False
    with pytest.raises(AttributeError):
        options.force = True  # frozen
