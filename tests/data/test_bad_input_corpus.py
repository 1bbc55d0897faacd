"""A corpus of corrupted or incomplete inputs against the data layer.

Classes, each checked at the boundary every input of its kind crosses:

- incomplete results (a valid-looking source that yields fewer items than its variant promises)
  never replace prepared data: :func:`data_recipes.framework.check_complete` inside ``run_recipe``;
  an already installed incomplete folder is not served (:meth:`Recipe.problem`, ``resolve_source``);
- ``prepare NAME`` exits non-zero when NAME could not be prepared; ``prepare all`` keeps going and
  lists every failure at the end;
- paths from the environment are checked once, with an error naming the variable;
- every error message is one line.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from audioset_records import make_record, make_tar

import data_recipes
from data_recipes import audioset as ar
from data_recipes import framework as fw
from data_recipes import malicious_urls
from data_recipes.__main__ import main as cli
from pate_study.core import env
from pate_study.data import resolve_source

FIX = Path(__file__).parent / "fixtures"


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- Audio Set, no real mirror needed
def _record(vid: str, labels) -> bytes:
    return make_record(vid, labels, seed=len(vid))


_tar = make_tar


GOOD_TAR = {"bal_train/a.tfrecord": _record("a", [0, 1]) + _record("b", [300]), "eval/c.tfrecord": _record("c", [526])}
ONLY_UNBAL = {"unbal_train/z.tfrecord": _record("z", [5])}


@pytest.fixture
def small_audioset(fake_mirror, monkeypatch):
    """An Audio Set recipe over a fake mirror: 527-class label file, bal_train 2 clips, eval 1 (declared so)."""
    folder = fake_mirror / "audioset"
    folder.mkdir()
    rows = ["index,mid,display_name"] + [f"{i},/m/{i:04d},class {i}" for i in range(ar.N_CLASSES)]
    (folder / "class_labels_indices.csv").write_text("\n".join(rows) + "\n")
    (folder / "ontology.json").write_text(
        json.dumps([{"id": f"/m/{i:04d}", "name": f"class {i}", "child_ids": []} for i in range(ar.N_CLASSES)])
    )
    (folder / "balanced_train_segments.csv").write_text("# YTID, start_seconds, end_seconds, positive_labels\n")
    monkeypatch.setattr(ar, "EXPECTED", {"bal_train": 2, "eval": 1, "unbal_train": None})
    files = tuple(fw.SourceFile(f.name) for f in (ar.LABELS, ar.ONTOLOGY, ar.BAL_SEGMENTS))
    bal_eval = {"bal_train": 2, "eval": 1}
    variants = (
        fw.Variant("bal_train_eval", files + (fw.SourceFile("features_bal_train_eval.tar.gz"),), "bal+eval", bal_eval),
        fw.Variant("full", files + (fw.SourceFile("features.tar.gz"),), "full", {**bal_eval, "unbal_train": 1000}),
    )
    recipe = dataclasses.replace(ar.RECIPE, variants=variants)
    monkeypatch.setattr(ar, "RECIPE", recipe)
    return recipe, folder


def test_audioset_full_from_a_one_tfrecord_archive_keeps_good_data(small_audioset, data_dir):
    """A features.tar.gz holding one unbal_train TFRecord must not replace bal_train + eval."""
    recipe, folder = small_audioset
    (folder / "features_bal_train_eval.tar.gz").write_bytes(_tar(GOOD_TAR))
    out = fw.run_recipe(recipe, network=False)
    before = _tree(out)
    assert json.loads((out / "MANIFEST.json").read_text())["sizes"] == {"bal_train": 2, "eval": 1}
    (folder / "features_bal_train_eval.tar.gz").unlink()
    (folder / "features.tar.gz").write_bytes(_tar(ONLY_UNBAL))
    with pytest.raises(fw.IncompleteDataError) as info:
        fw.run_recipe(recipe, network=False)
    message = str(info.value)
    assert "bal_train is missing" in message and "eval is missing" in message and "nothing was replaced" in message
    assert "\n" not in message
    assert _tree(out) == before
    assert not [p for p in data_dir.iterdir() if p.name.startswith(".tmp")]
    # --allow-small does not install a result that lacks whole splits
    with pytest.raises(fw.IncompleteDataError, match="missing"):
        fw.run_recipe(recipe, network=False, allow_small=True)
    assert _tree(out) == before


def test_audioset_full_with_every_split_but_few_unbal_clips_needs_the_flag(small_audioset, data_dir):
    recipe, folder = small_audioset
    (folder / "features.tar.gz").write_bytes(_tar({**GOOD_TAR, **ONLY_UNBAL}))
    with pytest.raises(fw.IncompleteDataError, match="unbal_train has 1, far fewer than the 1,000.*--allow-small"):
        fw.run_recipe(recipe, network=False)
    assert not (data_dir / "audioset").exists()
    out = fw.run_recipe(recipe, network=False, allow_small=True)
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["allowed_small"] is True and manifest["sizes"]["unbal_train"] == 1
    assert recipe.problem() is None  # installed on purpose: served, and the manifest says so


# ----------------------------------------------------------------------------- Malicious URLs
def _urls_mirror(fake_mirror: Path, text: str):
    folder = fake_mirror / "malicious-urls"
    folder.mkdir(exist_ok=True)
    (folder / "malicious_phish.csv").write_text(text)


GOOD_URLS = (FIX / "malicious_phish_sample.csv").read_text()


@pytest.fixture
def small_urls(fake_mirror, monkeypatch):
    """The Malicious URLs recipe with the fixture's size declared (7 rows)."""
    recipe = dataclasses.replace(
        malicious_urls.RECIPE, variants=(fw.Variant("full", malicious_urls.FILES, "full", {"urls": 7}),)
    )
    monkeypatch.setattr(malicious_urls, "RECIPE", recipe)
    _urls_mirror(fake_mirror, GOOD_URLS)
    return recipe


@pytest.mark.parametrize(
    "case, text, allow_small, match",
    [
        ("header only", "url,type\n", False, "the header has no rows below it"),
        ("header only, even with --allow-small", "url,type\n", True, "the header has no rows below it"),
        ("every URL empty", "url,type\n,benign\n  ,phishing\n", False, "every one of the 2 rows has an empty URL"),
        ("a quarter of the declared rows", "url,type\nhttp://a.example/,benign\n", False, "urls has 1, far fewer"),
    ],
)
def test_malicious_urls_small_or_empty_csv_keeps_good_data(
    small_urls, fake_mirror, data_dir, case, text, allow_small, match
):
    out = fw.run_recipe(small_urls, network=False)
    before = _tree(out)
    _urls_mirror(fake_mirror, text)
    with pytest.raises((fw.IncompleteDataError, fw.MalformedDataError), match=match):
        fw.run_recipe(small_urls, network=False, allow_small=allow_small)
    assert _tree(out) == before


def test_malicious_urls_empty_urls_dropped_and_counted():
    text = GOOD_URLS.rstrip("\n") + "\n,benign\n   ,malware\n"
    df = malicious_urls.parse_csv(text.encode(), where="x.csv")
    assert len(df) == 7 and (df["url"].str.strip() != "").all() and df.attrs["dropped_empty_url"] == 2


def test_malicious_urls_manifest_reports_dropped_rows(small_urls, fake_mirror, data_dir):
    _urls_mirror(fake_mirror, GOOD_URLS.rstrip("\n") + "\n,benign\n")
    out = fw.run_recipe(small_urls, network=False)
    counts = json.loads((out / "MANIFEST.json").read_text())["counts"]
    assert counts["dropped_empty_url"] == 1 and counts["total"] == 7


# ----------------------------------------------------------------------------- the completeness rule itself
VARIANT = fw.Variant("v", (), "test", {"train": 1000, "test": 200, "extra": None})


@pytest.mark.parametrize(
    "measured, allow_small, expected",
    [
        ({"train": 1000, "test": 200, "extra": 1}, False, []),
        ({"train": 950, "test": 190, "extra": 5}, False, []),  # within the tolerance
        ({"train": 1000, "extra": 1}, False, ["test is missing"]),
        ({"train": 1000, "test": 0, "extra": 1}, True, ["test is empty"]),
        ({"train": 1000, "test": 200, "extra": 0}, False, ["extra is empty"]),
        ({"train": 10, "test": 200, "extra": 1}, False, ["train has 10, far fewer than the 1,000"]),
        ({"train": 10, "test": 200, "extra": 1}, True, []),
        ({}, True, ["train is missing", "test is missing", "extra is missing"]),
    ],
)
def test_size_problems(measured, allow_small, expected):
    problems = fw.size_problems(VARIANT, measured, allow_small=allow_small)
    assert len(problems) == len(expected) and all(e in p for e, p in zip(expected, problems))


def test_every_recipe_declares_what_each_variant_promises():
    for name in data_recipes.names():
        recipe = data_recipes.get_recipe(name)
        for variant in recipe.variants:
            assert variant.sizes, f"{name}/{variant.name} declares no sizes"
            assert all(v is None or v > 0 for v in variant.sizes.values())
    full = ar.RECIPE.variant("full")
    assert set(full.sizes) == {"bal_train", "eval", "unbal_train"}


# ----------------------------------------------------------------------------- installed but incomplete
def _install_incomplete_urls(data_dir: Path, manifest_extra: dict):
    folder = data_dir / "malicious-urls"
    folder.mkdir(parents=True)
    (folder / "urls.csv").write_text("url,type,label\nhttp://a/,benign,0\n")
    manifest = {"recipe": "malicious-urls", "variant": "full", "scale": "full", "sources": [], **manifest_extra}
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize(
    "extra, reason",
    [
        ({}, "older version"),
        ({"sizes": {"urls": 1}}, "far fewer"),
        ({"sizes": {}}, "missing"),
        ({"variant": "nope", "sizes": {"urls": 10**6}}, "does not have"),
    ],
)
def test_incomplete_installed_folder_is_not_served(data_dir, extra, reason):
    folder = _install_incomplete_urls(data_dir, extra)
    recipe = data_recipes.get_recipe("malicious-urls")
    assert reason in recipe.problem() and not recipe.is_prepared()
    for mode in ("auto", "real"):
        with pytest.raises(fw.IncompleteDataError, match=f"{reason}.*prepare malicious-urls --force"):
            resolve_source("malicious-urls", mode)
    assert (folder / "urls.csv").exists()  # reported, not deleted


def test_incomplete_installed_folder_is_prepared_again_from_the_mirror(small_urls, data_dir):
    _install_incomplete_urls(data_dir, {})
    folder = resolve_source("malicious-urls", "auto")
    assert json.loads((folder / "MANIFEST.json").read_text())["sizes"] == {"urls": 7}


# ----------------------------------------------------------------------------- CLI exit codes
def test_prepare_by_name_exits_non_zero_when_not_available(data_dir, fake_mirror, capsys):
    assert cli(["prepare", "csic2010", "--offline"]) == 3
    err = capsys.readouterr().err
    assert "[not available] csic2010" in err and "how to get it" in err
    assert all(line.count("csic2010") for line in err.strip().splitlines() if line.startswith("  - "))


def test_prepare_all_keeps_going_and_lists_every_failure(small_urls, fake_mirror, data_dir, capsys):
    _urls_mirror(fake_mirror, "url,type\n")  # empty: incomplete
    (fake_mirror / "deeplog-hdfs").mkdir()
    (fake_mirror / "deeplog-hdfs" / "hdfs_train").write_text("1 2 3\n")  # wrong hash
    (fake_mirror / "deeplog-hdfs" / "hdfs_test_abnormal").write_text("1 2 3\n")
    assert cli(["prepare", "all", "--offline"]) == 1
    captured = capsys.readouterr()
    tail = captured.err.split("previous prepared data were left intact:")[1].strip().splitlines()
    assert [line.strip().split(":")[0] for line in tail] == ["- malicious-urls", "- deeplog-hdfs"]
    assert "Could not get" in captured.err and "csic2010" in captured.err  # not available: listed as well
    # only unavailable datasets: `all` still reports them with a non-zero status, as by name
    _urls_mirror(fake_mirror, GOOD_URLS)
    for f in ("hdfs_train", "hdfs_test_abnormal"):
        (fake_mirror / "deeplog-hdfs" / f).unlink()
    assert cli(["prepare", "all", "--offline"]) == 3
    assert "[ok] malicious-urls" in capsys.readouterr().out  # kept going: what could be prepared was
    assert cli(["prepare", "malicious-urls", "csic2010", "--offline"]) == 3


def test_prepare_by_name_with_small_source_exits_1_and_flag_installs(small_urls, fake_mirror, data_dir, capsys):
    _urls_mirror(fake_mirror, "url,type\nhttp://a.example/,benign\n")
    assert cli(["prepare", "malicious-urls", "--offline"]) == 1
    assert "--allow-small" in capsys.readouterr().err
    assert cli(["prepare", "malicious-urls", "--offline", "--allow-small"]) == 0


# ----------------------------------------------------------------------------- environment paths
@pytest.mark.parametrize(
    "variable, getter", [(env.DATA_ENV, env.data_dir), (env.CACHE_ENV, env.cache_dir), (env.MIRROR_ENV, env.mirror_dir)]
)
@pytest.mark.parametrize("where", ["file", "below a file"])
def test_env_path_pointing_at_a_file(tmp_path, monkeypatch, variable, getter, where):
    f = tmp_path / "regular.txt"
    f.write_text("x")
    value = f if where == "file" else f / "sub"
    monkeypatch.setenv(variable, str(value))
    with pytest.raises(env.EnvPathError) as info:
        getter()
    message = str(info.value)
    assert message.startswith(f"{variable}={value}: ") and "regular file" in message and "\n" not in message


@pytest.mark.parametrize("variable", [env.DATA_ENV, env.CACHE_ENV, env.MIRROR_ENV])
@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_env_path_that_is_a_link_to_nowhere_is_named_as_such(tmp_path, monkeypatch, variable, kind):
    """It used to read "cannot create files (File exists)" or "no such folder"."""
    link = tmp_path / "link"
    link.symlink_to(link if kind == "loop" else tmp_path / "nowhere")
    monkeypatch.setenv(variable, str(link))
    getter = {env.DATA_ENV: env.data_dir, env.CACHE_ENV: env.cache_dir, env.MIRROR_ENV: env.mirror_dir}[variable]
    with pytest.raises(env.EnvPathError) as info:
        getter()
    expected = "a symbolic link that loops" if kind == "loop" else "a symbolic link to a missing"
    assert str(info.value).startswith(f"{variable}={link}: {expected}") and "\n" not in str(info.value)


def test_env_paths_accepted(tmp_path, monkeypatch):
    monkeypatch.setenv(env.DATA_ENV, str(tmp_path / "new" / "data"))  # created on first write
    assert env.data_dir() == tmp_path / "new" / "data"
    monkeypatch.setenv(env.MIRROR_ENV, str(tmp_path))
    assert env.mirror_dir() == tmp_path
    monkeypatch.setenv(env.MIRROR_ENV, str(tmp_path / "missing"))
    with pytest.raises(env.EnvPathError, match="PATE_STUDY_MIRROR=.*no such folder"):
        env.mirror_dir()
    monkeypatch.setenv(env.CACHE_ENV, "")
    assert env.cache_dir().name == "pate_study"


def test_data_cli_and_loaders_name_the_variable(tmp_path, monkeypatch, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    monkeypatch.delenv(env.MIRROR_ENV, raising=False)
    monkeypatch.setenv(env.DATA_ENV, str(f))
    assert cli(["prepare", "pate2018-votes", "--offline"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: PATE_STUDY_DATA={f}: is a regular file")
    with pytest.raises(env.EnvPathError, match="PATE_STUDY_DATA"):
        resolve_source("csic2010", "auto")


# ----------------------------------------------------------------------------- one-line messages
@pytest.mark.parametrize(
    "data",
    [b'url,type\n"http://a,benign\n', b"url,type\na,benign\nb,benign,x,y\n", b"\xff\xfe\x00garbage"],
)
def test_parser_errors_are_one_line(data):
    with pytest.raises(fw.DataError) as info:
        malicious_urls.parse_csv(data, where="x.csv")
    assert "\n" not in str(info.value) and str(info.value).startswith("x.csv: ")


def test_data_error_messages_are_one_line():
    assert str(fw.MalformedDataError("a.csv: bad\n  line 2\n\n")) == "a.csv: bad; line 2"
    assert "\n" not in str(fw.NotAvailableError("x\nhow to get it: y"))


# ----------------------------------------------------------------------------- relative paths, silent stand-ins
@pytest.mark.parametrize(
    "variable, getter", [(env.DATA_ENV, env.data_dir), (env.CACHE_ENV, env.cache_dir), (env.MIRROR_ENV, env.mirror_dir)]
)
def test_a_relative_folder_is_refused_naming_the_variable(tmp_path, monkeypatch, variable, getter):
    """A relative PATE_STUDY_DATA prepared from the repository root named another folder for a notebook in
    notebooks/, which then got the stand-in without a word."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reldata").mkdir()
    monkeypatch.setenv(variable, "reldata")
    with pytest.raises(env.EnvPathError) as info:
        getter()
    assert str(info.value).startswith(f"{variable}=reldata: a relative path") and str(tmp_path / "reldata") in str(
        info.value
    )


def test_auto_says_visibly_when_a_configured_data_folder_lacks_the_dataset(data_dir, caplog):
    import logging

    with caplog.at_level(logging.WARNING):
        assert resolve_source("pate2018-votes", "auto") is None
    line = next(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "not prepared in $PATE_STUDY_DATA" in line and "synthetic stand-in" in line
    assert str(data_dir) not in line  # no machine path: the line lands in committed executed notebooks


# ----------------------------------------------------------------------------- things in the wrong place
def test_a_folder_or_a_symlink_loop_in_place_of_a_mirror_file_is_named(fake_mirror, data_dir):
    folder = fake_mirror / "pate2018-votes"
    folder.mkdir()
    (folder / "mnist_250_teachers.npy").mkdir()
    with pytest.raises(fw.DataError, match=r"mnist_250_teachers.npy: a folder in the mirror \(PATE_STUDY_MIRROR="):
        resolve_source("pate2018-votes", "auto")
    (folder / "mnist_250_teachers.npy").rmdir()
    (folder / "mnist_250_teachers.npy").symlink_to(folder / "mnist_250_teachers.npy")
    with pytest.raises(fw.DataError, match="mnist_250_teachers.npy: a symbolic link that loops"):
        resolve_source("pate2018-votes", "auto")


def test_a_file_where_the_mirror_folder_of_a_dataset_belongs_is_named(fake_mirror, data_dir):
    """``$PATE_STUDY_MIRROR/pate2018-votes`` a regular file (or a link that loops): named as such, not "not in the
    mirror"; the file is kept."""
    (fake_mirror / "pate2018-votes").write_text("not a folder")
    with pytest.raises(
        fw.DataError, match=r"pate2018-votes: a regular file in the mirror \(PATE_STUDY_MIRROR=.*folder"
    ):
        resolve_source("pate2018-votes", "auto")
    assert (fake_mirror / "pate2018-votes").read_text() == "not a folder"
    (fake_mirror / "pate2018-votes").unlink()
    (fake_mirror / "pate2018-votes").symlink_to(fake_mirror / "pate2018-votes")
    with pytest.raises(fw.DataError, match="pate2018-votes: a symbolic link that loops in the mirror"):
        resolve_source("pate2018-votes", "auto")


def test_a_regular_file_where_the_dataset_folder_belongs_is_named(data_dir):
    data_dir.mkdir()
    (data_dir / "pate2018-votes").write_text("not a folder")
    with pytest.raises(fw.DataError, match=r"pate2018-votes: a regular file where the prepared folder"):
        resolve_source("pate2018-votes", "auto")
    assert (data_dir / "pate2018-votes").read_text() == "not a folder"


def test_a_manifest_cut_short_is_named(data_dir):
    folder = _install_incomplete_urls(data_dir, {})
    text = (folder / "MANIFEST.json").read_text()
    (folder / "MANIFEST.json").write_text(text[: len(text) // 2])
    problem = data_recipes.get_recipe("malicious-urls").problem()
    assert f"its manifest {folder / 'MANIFEST.json'} is unreadable" in problem
    with pytest.raises(fw.IncompleteDataError, match="MANIFEST.json is unreadable"):
        resolve_source("malicious-urls", "real")
