"""Adding a notebook touches only its own files: a toy notebook with its contract, parameter files and manifest, in a
temporary checkout, runs through the runner (listing, checks, schedule, execution, staging, summary) with the
runner pointed at that checkout, and nothing in this repository is written."""

import json

import nbformat
import pytest

from pate_study.core.paths import FIGURES_DIR
from pate_study.tooling.notebook_runner import cli, layout

PARAMETERS = 'seed = 0\ndata = "auto"\noverrides = {}\nprofile = "smoke"\noutput_dir = "figures/90_toy"\n'
#: the toy study's contract, a module of the toy checkout (the kernel and the runner import it from there)
CONTRACT = (
    "from dataclasses import dataclass\n"
    "from typing import Annotated\n\n"
    "from pate_study.core.contract import COUNT, StudyContract\n\n\n"
    "@dataclass(frozen=True)\n"
    "class ToyConfig(StudyContract):\n"
    "    n_draws: Annotated[int, COUNT] = 40\n"
)
WORK = (
    "import json, random, pathlib\n"
    "from toy_study import ToyConfig\n"
    "from pate_study.reporting.outputs import writing_folder\n"
    "config = ToyConfig.from_cell(globals())\n"
    "rng = random.Random(seed)\n"
    "draws = [rng.randint(0, 9) for _ in range(config.n_draws)]\n"
    "folder = writing_folder(output_dir)\n"
    "folder.mkdir(parents=True, exist_ok=True)\n"
    "(folder / 'draws.json').write_text(json.dumps({'seed': seed, 'output_dir': output_dir, 'draws': draws}))\n"
)


def toy_notebook(path):
    """A notebook of two cells: a ``parameters`` cell and one that writes its draws into ``output_dir``."""
    parameters = nbformat.v4.new_code_cell(PARAMETERS, metadata={"tags": ["parameters"]})
    nb = nbformat.v4.new_notebook(cells=[parameters, nbformat.v4.new_code_cell(WORK)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture
def toy_checkout(tmp_path, monkeypatch, point_layout):
    """A checkout at ``tmp_path`` holding two toy notebooks, 90 and 91 (91 waits for 90), with their parameter
    files and manifests, and nothing else; the runner points at it."""
    point_layout(**vars(layout.Layout.under(tmp_path)))
    (tmp_path / "toy_study.py").write_text(CONTRACT)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "figures").mkdir()
    for stem in ("90_toy", "91_toy"):
        toy_notebook(tmp_path / "notebooks" / f"{stem}.ipynb")
        configs = tmp_path / "configs" / stem
        configs.mkdir(parents=True)
        (configs / "smoke.yaml").write_text("seed: 1\nn_draws: 4\n")
        (configs / "paper.yaml").write_text("seed: 1\n")
        (configs / "notebook.yaml").write_text(
            "datasets: []\nreference_seconds:\n  smoke: 5.0\ncontract: toy_study:ToyConfig\n"
        )
    (tmp_path / "configs" / "91_toy" / "notebook.yaml").write_text(
        "datasets: []\nwaits_for:\n  90_toy: it reads nothing of 90's, but the test checks the order\n"
        "contract: toy_study:ToyConfig\n"
    )
    return tmp_path


@pytest.mark.slow
def test_a_toy_notebook_runs_through_the_runner_touching_only_its_own_files(toy_checkout, caplog):
    index = FIGURES_DIR / "INDEX.md"
    before = index.stat().st_mtime_ns if index.exists() else None
    assert layout.list_notebooks() == ["90_toy", "91_toy"]
    with caplog.at_level("INFO"):
        code = cli.main(["figures", "--profile", "smoke", "--data", "skip", "--notebooks", "91_toy", "90_toy"])
    assert code == 0
    started = [r.getMessage().split()[2] for r in caplog.records if r.getMessage().startswith("running [")]
    assert started == ["90_toy", "91_toy"]  # 91 waits for 90, though named first
    for stem in ("90_toy", "91_toy"):
        folder = toy_checkout / "figures" / stem / "smoke"
        written = json.loads((folder / "draws.json").read_text())
        assert len(written["draws"]) == 4  # the smoke file's n_draws
        assert written["output_dir"] == f"figures/{stem}/smoke"  # the kernel is given the final folder
        injected = nbformat.read(folder / f"{stem}.ipynb", as_version=4).cells[1].source
        assert f'output_dir = "figures/{stem}/smoke"' in injected  # the final folder, not the staging one
    summary = (toy_checkout / "build" / "summary.smoke.md").read_text()
    assert "| 90_toy |" in summary and "| 91_toy |" in summary and "FAILED" not in summary
    assert (toy_checkout / "figures" / "INDEX.md").exists()
    assert sorted(p.name for p in (toy_checkout / "figures").iterdir()) == ["90_toy", "91_toy", "INDEX.md", "details"]
    assert not (FIGURES_DIR / "90_toy").exists()
    assert (index.stat().st_mtime_ns if index.exists() else None) == before  # the repository's index untouched


def test_a_toy_notebook_with_a_bad_manifest_runs_nothing_and_says_where(toy_checkout, capsys):
    (toy_checkout / "configs" / "90_toy" / "notebook.yaml").write_text("datasets: [no-such-data]\nwait_for: {}\n")
    code = cli.main(["figures", "--profile", "smoke", "--data", "skip"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and not (toy_checkout / "build" / "summary.smoke.md").exists()
    assert "error: configs/90_toy/notebook.yaml: wait_for: not a manifest key; did you mean waits_for?" in err
    assert "error: configs/90_toy/notebook.yaml: datasets: 'no-such-data' is not a data_recipes dataset" in err
