"""Preparing the datasets the notebooks of a run read (their manifests' ``datasets``), once, before any notebook
starts, through the data recipes' command line: mirror first, then the official URLs, each file verified
(``--data network``); ``--data offline`` uses the mirror only; ``--data skip`` prepares nothing.

Size limit: the runner fetches what ``python -m data_recipes prepare NAME`` fetches without ``--allow-large``, i.e.
every file its recipe does not flag ``large`` (the recipes flag downloads over 1 GB: today only Audio Set's 2.4 GB
unbal_train features) and never the opt-in raw audio (``audioset-audio``). A dataset that cannot be prepared
(offline, download failure, checksum) is reported and the notebooks fall back as they always do (mirror, else a
synthetic stand-in, stamped as such).
"""

from __future__ import annotations

import logging
import subprocess
import sys
from dataclasses import dataclass

import data_recipes
from data_recipes import read_manifest
from pate_study.tooling.notebook_runner.layout import DATA_MODES, current

logger = logging.getLogger(__name__)

#: Recipes whose real data needs an explicit opt-in (large download): the summary names the flag.
OPT_IN = {"audioset": "python -m data_recipes prepare audioset --allow-large   # 2.4 GB"}
#: How long one dataset's preparation may take before it counts as failed.
PREPARE_TIMEOUT_S = 1800


@dataclass
class DataPreparation:
    """The outcome of preparing one dataset before the notebooks ran."""

    name: str
    ok: bool
    detail: str


def prepare_datasets(names: list[str], mode: str) -> list[DataPreparation]:
    """Prepare ``names`` through ``python -m data_recipes prepare`` (``--offline`` when ``mode`` is offline).

    Never raises for a dataset that cannot be prepared: its notebook falls back (mirror, else stand-in). Already
    prepared datasets are skipped by the recipes themselves, so a second run costs a second or two.
    """
    if mode not in DATA_MODES:
        raise ValueError(f"data mode must be one of {DATA_MODES}, got {mode!r}")
    if mode == "skip":
        return []
    results = []
    for name in names:
        command = [sys.executable, "-m", "data_recipes", "prepare", name] + (["--offline"] if mode == "offline" else [])
        logger.info(
            "preparing %s (%s): %s",
            name,
            "mirror only" if mode == "offline" else "mirror, then network",
            " ".join(command[1:]),
        )
        try:
            done = subprocess.run(
                command, cwd=current().root, capture_output=True, text=True, timeout=PREPARE_TIMEOUT_S
            )
            lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
            ok = done.returncode == 0 and read_manifest(name) is not None  # prepared and verified
            detail = next(
                (line for line in lines if line.startswith(("[ok]", "[ERROR]"))),
                lines[-1] if lines else f"exit status {done.returncode}",
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            ok, detail = False, f"{type(err).__name__}: {err}"
        (logger.info if ok else logger.warning)(
            "%s: %s",
            name,
            detail if ok else f"not prepared ({detail}); its notebooks fall back to the mirror or a synthetic stand-in",
        )
        results.append(DataPreparation(name, ok, detail))
    return results


def real_data_commands(datasets: tuple[str, ...] | list[str]) -> list[str]:
    """Commands that would give a notebook reading ``datasets`` the real data it lacks (those not prepared yet),
    each with the recipe's own advice when the data cannot be downloaded."""
    commands = []
    for name in datasets:
        if data_recipes.read_manifest(name) is not None:
            continue
        command = OPT_IN.get(name, f"make data-{name}")
        how = " ".join(str(getattr(data_recipes.get_recipe(name), "how_to_get", "")).split())
        commands.append(f"`{command}`" + (f" (how to get it: {how})" if how else ""))
    return commands
