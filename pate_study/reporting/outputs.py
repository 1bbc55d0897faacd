"""Figures, tables and recorded scalars, each stamped with its provenance.

A notebook makes one :class:`NotebookOutputs` from its parameters and saves through it:

- ``save_figure(fig, ids, data=...)``  -> ``<id>.png`` + ``<id>.pdf`` (the stamp is drawn under the plot)
- ``save_table(df, ids, data=...)``    -> ``<id>.csv`` + ``<id>.md``
- ``record(id, **values)``             -> merged into ``scalars.json`` (tests and figures/INDEX.md read it)

Every saved item also gets ``<id>.provenance.json``: the registry ids it serves, the data it was
computed from (real dataset and scale, or "synthetic stand-in"), profile, seed, commit and date.
Files are written to a temporary name and renamed, so an interrupted run never leaves half a file.

- A relative ``output_dir`` is resolved from the repository root, not the working directory.
- Under the runner (``make figures``) the files go to its staging folder (``$PATE_STUDY_STAGING``), which replaces
  ``output_dir`` once the whole notebook has succeeded; ``output_dir`` is what the provenance records and the
  executed copy shows. :func:`writing_folder` is the one place that decides where a run writes.
- Only ``make figures`` writes ``figures/``: a notebook run interactively (JupyterLab, Run All) writes what its
  parameters put under ``figures/`` to ``build/interactive/`` instead (:func:`interactive_output_dir`), so a
  student's clone stays clean and pulls never conflict.
- A notebook run in a Jupyter kernel without the runner (``make lab``, Run All) is stamped ``profile:
  interactive`` (the parameters cell's profile is kept as ``requested_profile``), never as the paper profile.
- Numbers written to tables (CSV) and ``scalars.json`` keep :data:`SIGNIFICANT_DIGITS` significant digits, so a
  last-place difference from floating-point summation order never changes a committed file (Markdown tables
  show ``{:.6g}`` for reading; the CSV is the exact record).
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import importlib.metadata
import json
import logging
import math
import numbers
import os
import platform
import re
import subprocess
import sys
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

try:  # with scikit-learn (the research install); the light lab install records the BLAS numpy was built with only
    import threadpoolctl
except ImportError:  # pragma: no cover - depends on the install
    threadpoolctl = None

try:  # IPython comes with the notebook dependencies (ipykernel); without it show_findings logs the text instead
    from IPython.display import Markdown, display
except ImportError:  # pragma: no cover - depends on the install
    Markdown = display = None

from pate_study.core.io import atomic_write, atomic_write_text
from pate_study.core.paths import BUILD_DIR, FIGURES_DIR, REPO_ROOT, resolve_from_root
from pate_study.reporting import replicates, session
from pate_study.reporting.registry import FIGURE_FORMATS, TABLE_FORMATS, load_registry

logger = logging.getLogger(__name__)

SCALARS_FILE = "scalars.json"
NOT_RUN_KEY = "_not_run"
PROVENANCE_SUFFIX = ".provenance.json"
STAMP_WIDTH = 110  # characters per line of the stamp drawn under a figure
STAMP_FONTSIZE = 8  # points: legible on screen (about 11 px at the inline backend's 100 dpi) and in print
#: Significant digits of every float written to a CSV table or scalars.json. Double precision carries 15-17; the
#: accountants' results are sums of hundreds of terms whose order may change the last 1-3 digits (one ulp is
#: 2e-16 relative), so 12 keeps every digit that means something and drops the ones that depend on summation
#: order. A value whose 13th digit sits exactly on a rounding boundary could still flip; at 1 ulp this happens
#: with probability about 1e-4 per value.
SIGNIFICANT_DIGITS = 12


def current_commit(repo: Path = REPO_ROOT) -> str:
    """Short commit hash of ``repo``, with ``+dirty`` when tracked files outside ``figures/`` differ from it;
    ``unknown`` outside git."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        # the outputs themselves (figures/) do not make the code dirty: a run rewrites them as it goes
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!figures"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


#: The lock file ``make venv`` installs (exact versions and hashes), at the repository root.
LOCK_FILE = REPO_ROOT / "requirements.lock"
#: The packages whose versions can move a number, recorded by name in every sidecar (all others through the lock).
NUMERIC_PACKAGES = ("numpy", "scipy", "torch", "scikit-learn", "pandas", "librosa", "dp-accounting", "ray")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ \\;]+)")


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def lock_record(lock: Path = LOCK_FILE) -> dict:
    """The lock file's SHA-256 and the installed packages that differ from its pins (``"name installed X, locked
    Y"``; empty when the environment is the locked one); ``{"file": None}`` without a lock (an installed copy)."""
    if not Path(lock).is_file():
        return {"file": None}
    text = Path(lock).read_text(encoding="utf-8")
    pins = dict(m.groups() for m in map(_PIN.match, text.splitlines()) if m)
    differs = [
        f"{name} installed {_installed(name) or 'not at all'}, locked {version}"
        for name, version in sorted(pins.items())
        if _installed(name) != version
    ]
    return {"file": Path(lock).name, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "differs": differs}


def processor_model() -> str:
    """The processor's model name (Linux: ``/proc/cpuinfo``; else :func:`platform.processor`), e.g. ``Intel(R)
    Xeon(R) ...`` or ``AMD EPYC ...``: floating-point results can differ in the last bits from one family to
    another (other BLAS kernels, other vector widths)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def blas_record() -> dict:
    """The BLAS behind the numbers: numpy's build (name and version) and, where :mod:`threadpoolctl` can see
    them, the BLAS/OpenMP libraries loaded in this process with the kernel architecture each chose at run time
    (OpenBLAS picks ``Haswell``, ``Zen``, ``SkylakeX`` ... from the processor: the reason two processors give
    different last bits)."""
    try:
        built = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        record = {"numpy": f"{built.get('name')} {built.get('version')}"}
    except (KeyError, TypeError, AttributeError):
        record = {"numpy": "unknown"}
    if threadpoolctl is not None:
        record["loaded"] = sorted(
            {
                " ".join(str(lib.get(k)) for k in ("internal_api", "version", "architecture") if lib.get(k))
                for lib in threadpoolctl.threadpool_info()
            }
        )
    return record


def run_environment() -> dict:
    """What besides code, data and seed decides an output's bytes: Python, the packages that compute numbers
    (:data:`NUMERIC_PACKAGES`), the lock (:func:`lock_record`), the processor and the BLAS. Recorded in every
    provenance sidecar (docs/reproducibility.md says which of them must match for identical bytes)."""
    return {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "packages": {name: _installed(name) for name in NUMERIC_PACKAGES if _installed(name)},
        "lock": _lock_record_once(),
        "processor": processor_model(),
        "blas": blas_record(),
        "torch_blas": _torch_blas(),
    }


@functools.lru_cache(maxsize=1)
def _lock_record_once() -> dict:
    return lock_record()


def _torch_blas() -> str | None:
    """The BLAS torch was built with (``BLAS_INFO`` of ``torch.__config__.show()``), when torch is already loaded
    (never imported here: the light install has none)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    match = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    return match.group(1) if match else "unknown"


@dataclass(frozen=True)
class Provenance:
    """Where an output came from. ``data`` is a one-line description of the data (see ``DataSource.stamp``);
    ``environment`` what besides code, data and seed decides its bytes (:func:`run_environment`)."""

    notebook: str
    profile: str
    seed: int
    data: str
    commit: str
    date: str
    parameters: dict = field(default_factory=dict)
    environment: dict = field(default_factory=dict)

    def stamp(self) -> str:
        """The one line drawn under figures and written under tables (no date, so reruns are identical)."""
        return f"data: {self.data} | profile: {self.profile} | seed: {self.seed} | {self.notebook} @ {self.commit}"


def _as_id_list(item_ids: str | Sequence[str]) -> list[str]:
    ids = [item_ids] if isinstance(item_ids, str) else list(item_ids)
    if not ids or not all(isinstance(i, str) and i for i in ids):
        raise ValueError(f"item_ids must be a registry id or a non-empty list of ids, got {item_ids!r}")
    return ids


def round_significant(value: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (non-finite values unchanged)."""
    return float(f"{value:.{digits}g}") if math.isfinite(value) else value


def _json_ready(value: Any, *, rounded: bool = False) -> Any:
    """Convert numpy scalars/arrays and non-finite floats so that ``json.dumps`` is strict and portable;
    with ``rounded``, floats keep :data:`SIGNIFICANT_DIGITS` significant digits."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _json_ready(v, rounded=rounded) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v, rounded=rounded) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, float) and rounded:
        return round_significant(value)
    return value


def csv_cell(value: Any) -> Any:
    """A table cell as written to CSV: floats with :data:`SIGNIFICANT_DIGITS` digits (shortest form), NaN empty."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):  # float, numpy floats
        value = float(value)
        return "" if math.isnan(value) else repr(round_significant(value))
    return value


def fixed_precision_frame(frame):
    """A copy of ``frame`` whose float cells (in float or mixed columns) are strings with fixed significant digits."""
    return frame.astype(object).map(csv_cell)


IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


def notebook_parameters(namespace: dict) -> dict:
    """The notebook's parameters (every public name bound to a plain JSON value) from ``globals()``.

    Call it at the top of the cell after the parameters cell, before the notebook binds other values, so the
    provenance records every papermill parameter, including those a profile leaves at their defaults.
    """
    plain = (bool, int, float, str, list, tuple, dict, type(None))
    return {
        name: _json_ready(value)
        for name, value in namespace.items()
        if not name.startswith("_") and name not in IPYTHON_NAMES and isinstance(value, plain)
    }


def contract_parameters(namespace: dict, config: Any) -> dict:
    """The parameters of a notebook whose settings are a study contract
    (:class:`pate_study.core.contract.StudyContract`): its parameters cell's own names (:func:`notebook_parameters`;
    ``overrides`` left out) and then every field of ``config``, so that the provenance records the whole run, the fields
    a profile leaves at the paper values too."""
    cell = {k: v for k, v in notebook_parameters(namespace).items() if k != "overrides"}
    return {**cell, **config.as_record()}


def markdown_table(frame, float_format: str = "{:.6g}") -> str:
    """A GitHub-flavoured Markdown table of a pandas DataFrame (index dropped)."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "" if math.isnan(v) else float_format.format(v)
        return str(v).replace("|", "\\|")

    header = "| " + " | ".join(cell(str(c)) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows]) + "\n"


def interactive_output_dir(output_dir: Path, figures_dir: Path = FIGURES_DIR, build_dir: Path = BUILD_DIR) -> Path:
    """Where an interactive run writes: a folder under ``figures/`` moves to ``build/interactive/`` (same relative
    path), so that a student's Run All never changes a committed file; any other folder is kept."""
    output_dir, figures_dir = Path(output_dir).resolve(), Path(figures_dir).resolve()
    if output_dir == figures_dir or figures_dir in output_dir.parents:
        return Path(build_dir).resolve() / "interactive" / output_dir.relative_to(figures_dir)
    return output_dir


def writing_folder(output_dir: str | os.PathLike) -> Path:
    """Where this run writes the outputs of a notebook whose ``output_dir`` parameter is ``output_dir`` (relative:
    from the repository root): the runner's staging folder under ``make figures``
    (:func:`pate_study.reporting.session.runner_staging_folder`), swapped in for ``output_dir`` once the notebook
    succeeds; ``build/interactive/...`` for a folder under ``figures/`` in a kernel the runner did not start
    (:func:`interactive_output_dir`); else ``output_dir`` itself."""
    staging = session.runner_staging_folder()
    if staging is not None:
        return resolve_from_root(staging)
    folder = resolve_from_root(output_dir)
    return interactive_output_dir(folder) if session.interactive_run() else folder


class NotebookOutputs:
    """Saves a notebook's figures, tables and scalars under ``output_dir``, stamped with provenance."""

    def __init__(
        self,
        notebook: str,
        output_dir: str | os.PathLike,
        *,
        profile: str,
        seed: int,
        parameters: dict | None = None,
        date: str | None = None,
    ):
        if not notebook:
            raise ValueError("notebook must be the notebook's stem, e.g. '00_dp_primer'")
        self.notebook = notebook
        self.output_dir = writing_folder(output_dir)
        self.profile = str(profile)
        self.seed = int(seed)
        self.parameters = _json_ready(dict(parameters or {}))
        if session.interactive_run():  # JupyterLab, not make figures: say so on every output
            self.parameters["requested_profile"] = self.profile
            self.profile = session.INTERACTIVE_PROFILE
            logger.info("interactive run: outputs go to %s, stamped 'profile: %s'", self.output_dir, self.profile)
        self.commit = current_commit()
        self.date = date or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.output_dir.mkdir(parents=True, exist_ok=True)

    @classmethod
    def for_notebook(cls, notebook: str, namespace: dict, config: Any) -> NotebookOutputs:
        """The outputs of notebook ``notebook`` whose parameters cell bound ``profile``, ``output_dir`` and ``seed``
        in ``namespace`` (its ``globals()``), recording its parameters: the cell's and every field of the study's
        contract ``config`` (:func:`contract_parameters`). ValueError naming the names the namespace lacks."""
        missing = [name for name in ("profile", "output_dir", "seed") if name not in namespace]
        if missing:
            raise ValueError(f"{notebook}: the parameters cell binds no {', '.join(missing)}; run it first")
        profile, seed = namespace["profile"], namespace["seed"]
        parameters = contract_parameters(namespace, config)
        return cls(notebook, namespace["output_dir"], profile=profile, seed=seed, parameters=parameters)

    def provenance(self, data: str) -> Provenance:
        if not data:
            raise ValueError("data must describe the data behind the output (e.g. 'analytic (no data)')")
        return Provenance(
            self.notebook, self.profile, self.seed, data, self.commit, self.date, self.parameters, run_environment()
        )

    def _write_sidecar(self, name: str, ids: list[str], files: Iterable[Path], provenance: Provenance) -> Path:
        record = {"items": ids, "files": sorted(p.name for p in files), **asdict(provenance)}
        return atomic_write_text(self.output_dir / f"{name}{PROVENANCE_SUFFIX}", json.dumps(record, indent=2) + "\n")

    def save_figure(
        self, fig, item_ids: str | Sequence[str], *, data: str, description: str | None = None
    ) -> list[Path]:
        """Save ``fig`` as ``<first id>.png`` and ``.pdf`` with the provenance stamp drawn beneath it.

        ``description`` is the figure's alternative text (screen readers, the HTML's ``<img alt>``, the PNG's
        Description and the PDF's Subject); without it, the registry caption of the first id. The figure keeps
        it, so the inline display after ``plt.show()`` carries it too (see :mod:`pate_study.reporting.session`).
        """
        ids = _as_id_list(item_ids)
        provenance = self.provenance(data)
        alt = figure_description(ids[0], description)
        setattr(fig, session.ALT_ATTRIBUTE, alt)
        session.install_alt_text()  # no-op outside a kernel
        stamp = "\n".join(textwrap.wrap(provenance.stamp(), width=STAMP_WIDTH))  # never wider than the plot
        fig.text(0.5, -0.01, stamp, ha="center", va="top", fontsize=STAMP_FONTSIZE, color="0.3")
        files = []
        for fmt in FIGURE_FORMATS:
            target = self.output_dir / f"{ids[0]}.{fmt}"
            metadata = {"CreationDate": None, "Subject": alt} if fmt == "pdf" else {"Description": alt}
            atomic_write(
                target,
                lambda tmp, fmt=fmt, metadata=metadata: fig.savefig(
                    tmp, format=fmt, dpi=150, bbox_inches="tight", metadata=metadata
                ),
            )
            files.append(target)
        self._write_sidecar(ids[0], ids, files, provenance)
        logger.info("saved figure %s -> %s", ids, [f.name for f in files])
        return files

    def save_table(
        self, frame, item_ids: str | Sequence[str], *, data: str, float_format: str = "{:.6g}"
    ) -> list[Path]:
        """Save a DataFrame as ``<first id>.csv`` and ``.md`` (the Markdown ends with the provenance stamp)."""
        ids = _as_id_list(item_ids)
        provenance = self.provenance(data)
        csv_path = atomic_write(
            self.output_dir / f"{ids[0]}.csv", lambda tmp: fixed_precision_frame(frame).to_csv(tmp, index=False)
        )
        md_text = markdown_table(frame, float_format) + f"\n<sub>{provenance.stamp()}</sub>\n"
        md_path = atomic_write_text(self.output_dir / f"{ids[0]}.md", md_text)
        self._write_sidecar(ids[0], ids, [csv_path, md_path], provenance)
        logger.info("saved table %s", ids)
        return [csv_path, md_path]

    def record(self, key: str, **values: Any) -> dict:
        """Merge ``values`` under ``key`` (a registry id or a free name) into ``scalars.json``; return them.

        A verdict's record (``**verdict.as_record()``, at any depth of ``values``) carries the replicate rows of the
        estimates it judged: they are written to ``<key>.replicates.csv`` beside ``scalars.json``
        (:func:`pate_study.reporting.replicates.write_replicates`, atomically) and the file's name is recorded in
        their place (``verdict_replicates``)."""
        if not isinstance(key, str) or not key:
            raise ValueError(f"key={key!r}: expected a registry id or a free name")
        if not values:
            raise ValueError(f"record({key!r}) needs at least one value")
        _, found = replicates.extract(values)
        if found:
            name = replicates.replicates_file(key)
            replicates.write_replicates(self.output_dir / name, found)
            values = replicates.replace_placeholders(values, name)
        path = self.output_dir / SCALARS_FILE
        scalars = read_scalars(self.output_dir) if path.exists() else {}
        scalars.setdefault(key, {}).update(_json_ready(values, rounded=True))
        scalars["_provenance"] = {
            "notebook": self.notebook,
            "profile": self.profile,
            "seed": self.seed,
            "commit": self.commit,
            "date": self.date,
        }
        atomic_write_text(path, json.dumps(scalars, indent=2, sort_keys=True) + "\n")
        return values

    def not_run(self, item_ids: str | Sequence[str], reason: str) -> None:
        """Record that ``item_ids`` were not produced by this run and why (e.g. ``"GPU only: ..."``).

        ``make figures`` lists them in its summary (a reason starting with "GPU" is grouped as GPU-only).
        """
        if not reason:
            raise ValueError("not_run needs a reason, e.g. 'GPU only: 2,000 teachers take 3 h on a CPU'")
        self.record(NOT_RUN_KEY, **{item: reason for item in _as_id_list(item_ids)})


def read_scalars(output_dir: str | os.PathLike) -> dict:
    """The scalars a notebook recorded in ``output_dir`` (``{}`` when it recorded none)."""
    path = Path(output_dir) / SCALARS_FILE
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err}); rerun the notebook that writes it") from err


def output_name(path: str | os.PathLike) -> str:
    """``figures/x/sosa2021-table4.2.csv`` -> ``sosa2021-table4.2`` (ids contain dots, so strip only the format)."""
    name = Path(path).name
    for fmt in FIGURE_FORMATS + TABLE_FORMATS:
        if name.endswith("." + fmt):
            return name[: -len(fmt) - 1]
    raise ValueError(f"{path} is not a figure ({FIGURE_FORMATS}) or table ({TABLE_FORMATS}) file")


def read_provenance(path: str | os.PathLike) -> dict:
    """The sidecar written beside an output file (``<stem>.provenance.json``)."""
    path = Path(path)
    sidecar = path.with_name(output_name(path) + PROVENANCE_SUFFIX)
    if not sidecar.exists():
        raise FileNotFoundError(f"no provenance sidecar {sidecar} for {path}")
    return json.loads(sidecar.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _registry_captions() -> dict:
    try:
        return {item.id: item.caption for item in load_registry()}
    except (OSError, ValueError):  # a broken registry is reported by its own tests, not by every figure
        return {}


def figure_description(item_id: str, description: str | None = None) -> str:
    """Alternative text of a saved figure: ``description``, else ``item_id``'s registry caption, else its id."""
    if description:
        return " ".join(description.split())
    caption = _registry_captions().get(item_id)
    return f"{item_id}: {' '.join(caption.split())}" if caption else f"Figure {item_id}"


class MarkdownText(str):
    """Text a notebook shows as Markdown when a cell ends with it (IPython's ``_repr_markdown_`` display hook)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def markdown_list(lines: Sequence[str]) -> MarkdownText:
    """``lines`` as a Markdown list, one bullet each (a line that already starts a bullet or heading is kept), so
    long stamps and findings wrap in the notebook instead of running off the cell."""
    return MarkdownText("\n".join(line if line.lstrip().startswith(("*", "-", "#")) else f"* {line}" for line in lines))


def show_findings(findings: str | Sequence[str]) -> MarkdownText:
    """Show a notebook's findings now (Markdown text, or one bullet per item) so long lines wrap in JupyterLab.

    Renders the Markdown through ``IPython.display`` inside a kernel and logs the text elsewhere; returns it as
    :class:`MarkdownText`. Use it in the middle of a section; a section whose cell ends with the text returns a
    :class:`MarkdownText` instead (shown once, by the cell).
    """
    text = MarkdownText(findings) if isinstance(findings, str) else markdown_list(findings)
    if display is not None and session.in_kernel():
        display(Markdown(text))
    else:
        logger.info("%s", text)
    return text

    if session.in_kernel():
        display(Markdown(text))
    else:
        logger.info("%s", text)
    return text
