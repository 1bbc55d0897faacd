"""Each notebook's manifest (configs/<stem>/notebook.yaml) is read and checked by one module: what is valid loads,
and every mistake is one line naming the file, the key, what was expected and what was found."""

import pytest

from pate_study.tooling.notebook_runner import layout, manifest
from pate_study.tooling.notebook_runner.yamlfile import ConfigError

NOTEBOOKS = ["00_dp_primer", "04_audioset_teachers", "05_audioset_multilabel"]
KNOWN = ["pate2018-votes", "audioset"]


def problems(raw, stem="05_audioset_multilabel"):
    return manifest.manifest_problems("configs/x/notebook.yaml", stem, raw, NOTEBOOKS, KNOWN)


def test_a_complete_manifest_has_no_problem():
    raw = {
        "datasets": ["audioset"],
        "waits_for": {"04_audioset_teachers": "reads 04's votes"},
        "reference_seconds": {"paper": 502, "smoke": 12.5},
    }
    assert problems(raw) == []
    assert problems({"datasets": []}) == []  # a notebook that reads no dataset


@pytest.mark.parametrize(
    "raw, expected",
    [
        ({}, "configs/x/notebook.yaml: datasets: missing; expected a list of data_recipes dataset names"),
        ({"datasets": "audioset"}, "datasets: expected a list of data_recipes dataset names ([] for a notebook"),
        ({"datasets": ["audiosett"]}, "datasets: 'audiosett' is not a data_recipes dataset; expected one of"),
        ({"datasets": [], "wait_for": {}}, "wait_for: not a manifest key; did you mean waits_for?"),
        ({"datasets": [], "colour": 1}, "colour: not a manifest key; expected one of datasets, waits_for,"),
        ({"datasets": [], "waits_for": ["04_audioset_teachers"]}, "waits_for: expected a mapping of notebook stems"),
        ({"datasets": [], "waits_for": {"04_x": "why"}}, "waits_for: '04_x': expected another notebook of notebooks/"),
        ({"datasets": [], "waits_for": {"05_audioset_multilabel": "me"}}, "'05_audioset_multilabel': expected another"),
        ({"datasets": [], "waits_for": {"04_audioset_teachers": ""}}, "04_audioset_teachers: expected the reason"),
        ({"datasets": [], "reference_seconds": 5}, "reference_seconds: expected a mapping of profiles"),
        ({"datasets": [], "reference_seconds": {"fast": 5}}, "reference_seconds: 'fast': expected a profile"),
        ({"datasets": [], "reference_seconds": {"paper": -1}}, "paper: expected a positive number of seconds"),
        ({"datasets": [], "reference_seconds": {"paper": float("nan")}}, "paper: expected a positive number"),
        ({"datasets": [], "reference_seconds": {"paper": True}}, "paper: expected a positive number"),
        ({"datasets": [], "reference_seconds": {"paper": 10**400}}, "paper: expected a positive number"),
    ],
)
def test_each_mistake_is_one_line_naming_file_key_and_expectation(raw, expected):
    [line] = problems(raw)
    assert expected in line and line.startswith("configs/x/notebook.yaml: ")


@pytest.fixture
def checkout(tmp_path, point_layout):
    """An empty checkout with notebooks 90_a and 91_b (no cells needed: the manifests are read alone)."""
    point_layout(**vars(layout.Layout.under(tmp_path)))
    (tmp_path / "notebooks").mkdir()
    for stem in ("90_a", "91_b"):
        (tmp_path / "notebooks" / f"{stem}.ipynb").write_text("{}")
        (tmp_path / "configs" / stem).mkdir(parents=True)
    return tmp_path


def test_manifests_load_and_give_the_schedule_its_tables(checkout):
    (checkout / "configs" / "90_a" / "notebook.yaml").write_text("datasets: [pate2018-votes]\n")
    (checkout / "configs" / "91_b" / "notebook.yaml").write_text(
        "datasets: [pate2018-votes, audioset]\nwaits_for:\n  90_a: reads 90's cache\nreference_seconds:\n  paper: 7\n"
    )
    manifests = manifest.load_manifests(["90_a", "91_b"])
    assert manifest.datasets_for(["91_b", "90_a"], manifests) == ["pate2018-votes", "audioset"]
    assert manifest.waits_table(manifests) == {"90_a": {}, "91_b": {"90_a": "reads 90's cache"}}
    assert manifest.reference_table(manifests, "paper") == {"91_b": 7.0}
    assert manifest.reference_table(manifests, "smoke") == {}


def test_a_missing_empty_or_malformed_manifest_is_named(checkout):
    (checkout / "configs" / "91_b" / "notebook.yaml").write_text("datasets: [\n")
    with pytest.raises(ConfigError) as err:
        manifest.load_manifests(["90_a", "91_b"])
    missing, malformed = err.value.problems
    assert missing.startswith("configs/90_a/notebook.yaml: missing; every notebook needs its manifest")
    assert malformed.startswith("configs/91_b/notebook.yaml line 2, column 1: YAML syntax error")
    (checkout / "configs" / "90_a" / "notebook.yaml").write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match=r"configs/90_a/notebook.yaml: empty \(no manifest keys\); a manifest sets"):
        manifest.load_manifest("90_a")


def test_notebooks_that_wait_for_each_other_are_a_cycle_named_in_one_line(checkout):
    (checkout / "configs" / "90_a" / "notebook.yaml").write_text("datasets: []\nwaits_for:\n  91_b: x\n")
    (checkout / "configs" / "91_b" / "notebook.yaml").write_text("datasets: []\nwaits_for:\n  90_a: y\n")
    with pytest.raises(ConfigError) as err:
        manifest.load_manifests(["90_a", "91_b"])
    [line] = err.value.problems
    assert "waits_for: a cycle" in line and "90_a" in line and "91_b" in line
    # a run of 90 alone has no cycle: 91 is not in it, so 90 waits for nothing there
    assert manifest.load_manifests(["90_a"])["90_a"].waits_for == {"91_b": "x"}


def test_a_manifest_is_read_as_strictly_as_a_parameter_file(checkout):
    path = checkout / "configs" / "90_a" / "notebook.yaml"
    path.write_text("datasets: []\ndatasets: [audioset]\n")
    with pytest.raises(ConfigError, match=r"90_a/notebook.yaml line 2, column 1: datasets given twice"):
        manifest.load_manifest("90_a")
    path.write_text("datasets: &d []\nwaits_for: *d\n")
    with pytest.raises(ConfigError, match=r"alias \*d: aliases are not accepted in a parameter file or manifest"):
        manifest.load_manifest("90_a")


@pytest.mark.parametrize("what", ["folder", "loop"])
def test_a_manifest_that_is_a_folder_or_a_link_that_loops_is_named_as_such(checkout, what):
    """It used to read "missing" (a folder) or stop with a raw traceback (a link that loops)."""
    path = checkout / "configs" / "90_a" / "notebook.yaml"
    path.mkdir() if what == "folder" else path.symlink_to(path)
    with pytest.raises(ConfigError) as err:
        manifest.load_manifest("90_a")
    [line] = err.value.problems
    assert line.startswith("configs/90_a/notebook.yaml: a ") and "where the notebook's manifest belongs" in line
    assert ("a folder" if what == "folder" else "a symbolic link that loops") in line


def test_a_manifest_number_too_large_for_a_float_is_one_line(checkout):
    (checkout / "configs" / "90_a" / "notebook.yaml").write_text(
        "datasets: []\nreference_seconds:\n  paper: 1" + "0" * 400 + "\n"
    )
    with pytest.raises(ConfigError, match=r"90_a/notebook.yaml: reference_seconds: paper: expected a positive number"):
        manifest.load_manifest("90_a")
