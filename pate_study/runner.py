"""Execute the notebooks through papermill (``make figures``) and rebuild ``figures/INDEX.md``.

For every ``notebooks/<stem>.ipynb`` the parameters come from ``configs/<stem>/<profile>.yaml``; the runner
adds ``profile`` and ``output_dir`` (``figures/<stem>``). The executed notebook and an HTML rendering go to
``build/`` (git-ignored), for reading without Jupyter. Each notebook writes into ``figures/.tmp-<stem>``,
which replaces ``figures/<stem>`` as a whole when the notebook succeeds. A failing notebook keeps its previous
outputs and does not stop the others; the command exits non-zero at the end and names it.

    python -m pate_study.runner figures --profile paper [--notebooks 00_dp_primer ...]
    python -m pate_study.runner index
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from pathlib import Path

import yaml

from .io import atomic_write_text, replace_folder
from .paths import BUILD_DIR, CONFIGS_DIR, FIGURES_DIR, NOTEBOOKS_DIR, REPO_ROOT
from .registry import write_index

logger = logging.getLogger(__name__)
PROFILES = ("smoke", "paper")
RUNNER_PARAMETERS = ("profile", "output_dir")


def list_notebooks(notebooks_dir: Path = NOTEBOOKS_DIR) -> list[str]:
    """Stems of the numbered notebooks, in order."""
    return sorted(p.stem for p in Path(notebooks_dir).glob("[0-9][0-9]_*.ipynb"))


def load_parameters(stem: str, profile: str, configs_dir: Path = CONFIGS_DIR) -> dict:
    """The papermill parameters of notebook ``stem`` for ``profile`` (``configs/<stem>/<profile>.yaml``)."""
    path = Path(configs_dir) / stem / f"{profile}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"no parameter file {path}: every notebook needs configs/{stem}/{{smoke,paper}}.yaml")
    params = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(params, dict):
        raise ValueError(f"{path}: expected a mapping of parameter names to values")
    clash = [k for k in RUNNER_PARAMETERS if k in params]
    if clash:
        raise ValueError(f"{path}: {clash} are set by the runner, remove them from the file")
    return params


def execute_notebook(stem: str, profile: str, output_dir: Path, build_dir: Path = BUILD_DIR,
                     extra_parameters: dict | None = None, html: bool = True) -> Path:
    """Run one notebook with papermill; return the executed notebook's path (HTML beside it if ``html``)."""
    import papermill as pm

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    source = NOTEBOOKS_DIR / f"{stem}.ipynb"
    if not source.exists():
        raise FileNotFoundError(f"notebook {source} not found; known: {list_notebooks()}")
    parameters = {**load_parameters(stem, profile), **(extra_parameters or {}),
                  "profile": profile, "output_dir": str(Path(output_dir))}
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    executed = build_dir / f"{stem}.{profile}.ipynb"
    pm.execute_notebook(str(source), str(executed), parameters=parameters, kernel_name="python3",
                        cwd=str(REPO_ROOT), progress_bar=False, log_output=False)
    if html:
        export_html(executed)
    return executed


def export_html(executed: Path) -> Path:
    """Render an executed notebook to HTML beside it."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_filename(str(executed))
    return atomic_write_text(executed.with_suffix(".html"), body)


def run_figures(profile: str, notebooks: list[str] | None = None) -> int:
    """Execute the notebooks into ``figures/``, rebuild the index, return the number of failures."""
    stems = notebooks or list_notebooks()
    timings, failures = {}, []
    for stem in stems:
        start = time.perf_counter()
        logger.info("running %s (profile %s)", stem, profile)
        staging = FIGURES_DIR / f".tmp-{stem}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            execute_notebook(stem, profile, staging.relative_to(REPO_ROOT))
            replace_folder(staging, FIGURES_DIR / stem)
        except Exception as err:  # report every failing notebook, then fail
            logger.error("%s failed: %s (its previous outputs are kept)", stem,
                         str(err).splitlines()[0] if str(err) else type(err).__name__)
            shutil.rmtree(staging, ignore_errors=True)
            failures.append(stem)
        timings[stem] = round(time.perf_counter() - start, 1)
        logger.info("%s took %.1f s", stem, timings[stem])
    BUILD_DIR.mkdir(exist_ok=True)
    atomic_write_text(BUILD_DIR / f"timings.{profile}.json", json.dumps(timings, indent=2) + "\n")
    write_index()
    if failures:
        logger.error("failed notebooks: %s (executed copies with the error are in build/)", failures)
    return len(failures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pate_study.runner", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    figures = sub.add_parser("figures", help="execute notebooks and rebuild figures/INDEX.md")
    figures.add_argument("--profile", default="paper", choices=PROFILES)
    figures.add_argument("--notebooks", nargs="*", help="notebook stems (default: all)")
    sub.add_parser("index", help="rebuild figures/INDEX.md only")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    if args.command == "index":
        write_index()
        return 0
    return 1 if run_figures(args.profile, args.notebooks) else 0


if __name__ == "__main__":
    sys.exit(main())
