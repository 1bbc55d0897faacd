"""The end-of-run summary: each notebook's time and outputs by data status, the commands that turn stand-ins into
real data, the failures, and where to read the results (printed and written to ``build/summary.<profile>.md``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pate_study.core.errors import one_line
from pate_study.reporting.outputs import NOT_RUN_KEY, PROVENANCE_SUFFIX, read_scalars
from pate_study.reporting.registry import load_registry
from pate_study.tooling.notebook_runner.datasets import DataPreparation, real_data_commands
from pate_study.tooling.notebook_runner.layout import RESULTS_PROFILE, current, output_folder
from pate_study.tooling.notebook_runner.manifest import Manifest, load_manifests
from pate_study.tooling.notebook_runner.schedule import format_duration

STATUS_GROUPS = (
    "real data at paper scale",
    "real data at reduced scale",
    "synthetic stand-in",
    "analytic (no data)",
    "interactive or other profile",
    "GPU-only, not run here",
    "not run",
)


@dataclass
class NotebookRun:
    """What happened to one notebook in a ``make figures`` run."""

    stem: str
    seconds: float
    error: str | None = None
    partial_copy: Path | None = None
    outputs: dict[str, list[str]] = field(default_factory=dict)  # status group -> output names

    @property
    def ok(self) -> bool:
        return self.error is None


def registry_status() -> dict[str, str]:
    """``{registry id: status}`` of the catalogue (``{}`` when it cannot be read)."""
    try:
        return {item.id: item.status for item in load_registry()}
    except (OSError, ValueError):
        return {}


def classify_output(data: str, registry_status: str | None, profile: str, run_profile: str) -> str:
    """The summary group of one output from its provenance ``data`` line and its registry status."""
    text = data.strip().lower()
    if profile != run_profile:
        return "interactive or other profile"
    if text.startswith(("analytic", "simulated")) or registry_status == "regenerated (analytic)":
        return "analytic (no data)"  # closed forms and simulations of a mechanism: no dataset behind them
    if "synthetic" in text and not text.startswith("real"):
        return "synthetic stand-in"
    if registry_status == "real data at paper scale" and run_profile == "paper":  # smoke is reduced by design
        return "real data at paper scale"
    return "real data at reduced scale"


def notebook_outputs(
    stem: str, run_profile: str, figures_dir: Path | None = None, folder: Path | None = None
) -> dict[str, list[str]]:
    """Output names of ``figures/<stem>`` (or of ``folder``) grouped by status (see :data:`STATUS_GROUPS`)."""
    folder = Path(folder) if folder is not None else Path(figures_dir or current().figures) / stem
    statuses = registry_status()
    groups: dict[str, list[str]] = {}
    for sidecar in sorted(folder.glob(f"*{PROVENANCE_SUFFIX}")):
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        name = sidecar.name[: -len(PROVENANCE_SUFFIX)]
        group = classify_output(
            str(record.get("data", "")), statuses.get(name), str(record.get("profile")), run_profile
        )
        groups.setdefault(group, []).append(name)
    for item, reason in read_scalars(folder).get(NOT_RUN_KEY, {}).items() if folder.exists() else []:
        group = "GPU-only, not run here" if str(reason).lstrip().upper().startswith("GPU") else "not run"
        groups.setdefault(group, []).append(f"{item} ({reason})")
    return groups


def error_line(err: BaseException) -> str:
    """A failure in one line: a kernel's ``ename: evalue`` (its last line), else the exception's own."""
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    if ename:
        return f"{ename}: {evalue}".strip().splitlines()[-1] if evalue else ename
    return one_line(err) or type(err).__name__


def results_folder_text(profile: str) -> str:
    """Where this profile's executed notebooks are, as the summary names them: the committed ``figures/<stem>/``
    for the paper profile, this run's own ``figures/<stem>/<profile>/`` copy (git-ignored) for any other."""
    folder = output_folder("<stem>", profile, figures_dir=Path("figures")).as_posix()
    if profile == RESULTS_PROFILE:
        return f"`{folder}/<stem>.ipynb` (committed)"
    return f"`{folder}/<stem>.ipynb` (this {profile} run's copy; the committed ones are in `figures/<stem>/`)"


def summary_markdown(
    runs: list[NotebookRun],
    profile: str,
    data: list[DataPreparation],
    data_mode: str,
    manifests: dict[str, Manifest] | None = None,
) -> str:
    """The end-of-run table: time, outputs by status, how to get real data, where to read, failures.
    ``manifests``: the run's notebook manifests (read from ``configs/`` when not given)."""
    manifests = load_manifests([run.stem for run in runs]) if manifests is None else manifests
    lines = [f"# make figures: profile {profile}", ""]
    if data_mode == "skip":
        lines.append("Data: not prepared (`--data skip`); notebooks used what was already prepared or the mirror.")
    elif data:
        prepared = ", ".join(f"{d.name} {'ok' if d.ok else 'NOT prepared'}" for d in data)
        lines.append(f"Data ({'mirror only' if data_mode == 'offline' else 'mirror, then network'}): {prepared}.")
    lines += ["", "| notebook | time | result | outputs by data status |", "|---|---|---|---|"]
    for run in runs:
        groups = "; ".join(f"**{g}**: {', '.join(run.outputs[g])}" for g in STATUS_GROUPS if g in run.outputs)
        result = "ok" if run.ok else f"FAILED: {run.error}"
        lines.append(f"| {run.stem} | {format_duration(run.seconds)} | {result} | {groups or 'no outputs'} |")
    missing = [(run, real_data_commands(manifests[run.stem].datasets)) for run in runs]
    if any(cmds for _, cmds in missing):
        lines += ["", "Real data not prepared (then run `make figures` again):"]
        lines += [
            f"- {run.stem} ({'synthetic stand-in' if 'synthetic stand-in' in run.outputs else 'ran without it'}): {cmd}"
            for run, cmds in missing
            for cmd in cmds
        ]
    failed = [run for run in runs if not run.ok]
    if failed:
        lines += ["", "Failed notebooks (previous outputs kept):"]
        lines += [
            f"- {run.stem}: `{run.error}`; "
            + (f"partial executed copy: `{run.partial_copy}`" if run.partial_copy else "no executed copy was written")
            for run in failed
        ]
    lines += [
        "",
        f"Read the results: executed notebooks {results_folder_text(profile)}, HTML "
        f"`build/<stem>.{profile}.html`, the catalogue `figures/INDEX.md`.",
    ]
    return "\n".join(lines) + "\n"
