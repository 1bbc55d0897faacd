"""Prepared folders are checked before use: the recipe's structure check runs whenever a loader asks for the
folder (:meth:`Recipe.problem`), so a file edited or damaged after installation is found, named and re-prepared
(or refused with the command that prepares it again) instead of being served."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_framework import small_pate  # noqa: F401 - fixture

from data_recipes import audioset as recipe
from data_recipes import framework as fw
from pate_study.data import audioset


def _labels_csv(n=recipe.N_CLASSES, duplicate: int | None = None) -> str:
    rows = [f"{i},/m/{i:04d},class {i}" for i in range(n)]
    if duplicate is not None:  # the row repeated right after itself, later indices renumbered
        rows.insert(duplicate + 1, rows[duplicate])
        rows = [f"{i},{r.split(',', 1)[1]}" for i, r in enumerate(rows)][:n]
    return "index,mid,display_name\n" + "\n".join(rows) + "\n"


def _ontology() -> str:
    return json.dumps([{"id": f"/m/{i:04d}", "name": f"class {i}", "child_ids": []} for i in range(recipe.N_CLASSES)])


@pytest.fixture
def folder(tmp_path):
    """A tiny prepared Audio Set folder (3 clips per split) with the real structure."""
    (tmp_path / "class_labels_indices.csv").write_text(_labels_csv())
    (tmp_path / "ontology.json").write_text(_ontology())
    for split in ("bal_train", "eval"):
        np.save(tmp_path / f"{split}_embeddings.npy", np.zeros((3, 10, 128), np.uint8))
        np.save(tmp_path / f"{split}_n_frames.npy", np.full(3, 10, np.uint8))
        np.save(tmp_path / f"{split}_labels.npy", np.zeros((3, recipe.N_CLASSES), bool))
        np.save(tmp_path / f"{split}_video_ids.npy", np.array(["a", "b", "c"]))
        np.save(tmp_path / f"{split}_start.npy", np.zeros(3, np.float32))
        np.save(tmp_path / f"{split}_end.npy", np.full(3, 10, np.float32))
    return tmp_path


def test_an_intact_folder_passes(folder):
    recipe.RECIPE.verify(folder)
    labels = audioset.class_labels(folder)
    assert len(labels) == 527 and labels[10] == ("/m/0010", "class 10")


def test_a_duplicated_class_row_is_named_with_its_row(folder):
    """The case that shifted every label column after index 10: 528 names for 527 columns."""
    (folder / "class_labels_indices.csv").write_text(_labels_csv(duplicate=10))
    with pytest.raises(
        fw.MalformedDataError,
        match=r"class_labels_indices\.csv: row 13 repeats class '/m/0010' "
        r"of row 12",
    ):
        audioset.class_labels(folder)
    with pytest.raises(fw.MalformedDataError, match="repeats class"):
        recipe.RECIPE.verify(folder)


@pytest.mark.parametrize(
    "text, match",
    [
        ("index,mid,display_name\n0,/m/0,a\n", "expected 527 classes, got 1"),
        ("index,mid\n", "expected header index,mid,display_name"),
        (_labels_csv().replace("\n5,/m/0005,class 5\n", "\n6,/m/0005,class 5\n"), "row 7 has index '6', expected 5"),
    ],
)
def test_other_damaged_class_lists_are_named(folder, text, match):
    (folder / "class_labels_indices.csv").write_text(text)
    with pytest.raises(fw.MalformedDataError, match=match):
        audioset.class_labels(folder)


def test_a_class_list_that_is_not_utf8_is_named(folder):
    (folder / "class_labels_indices.csv").write_bytes(b"index,mid,display_name\n0,\xff\xfe,x\n")
    with pytest.raises(fw.MalformedDataError, match=r"class_labels_indices\.csv: not a UTF-8 CSV"):
        audioset.class_labels(folder)


@pytest.mark.parametrize(
    "content, match",
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "expected a JSON list"),
        (b'[{"id": "/m/0"}]', "entry 0 lacks"),
        (b"\xff\xfe\x00", "not valid JSON"),
    ],
)
def test_a_damaged_ontology_names_the_file(folder, content, match):
    (folder / "ontology.json").write_bytes(content)
    with pytest.raises(fw.MalformedDataError, match=rf"ontology\.json: {match}"):
        audioset.Ontology.from_file(folder / "ontology.json")


def test_an_unreadable_ontology_names_the_file(folder):
    (folder / "ontology.json").unlink()
    (folder / "ontology.json").mkdir()  # reading a folder fails for every user, root included
    with pytest.raises(fw.MalformedDataError, match=r"ontology\.json: unreadable .*prepare audioset --force"):
        audioset.Ontology.from_file(folder / "ontology.json")


def test_arrays_of_different_lengths_are_refused(folder):
    np.save(folder / "eval_start.npy", np.zeros(4, np.float32))
    with pytest.raises(fw.MalformedDataError, match=r"the eval arrays disagree on the number of clips"):
        recipe.RECIPE.verify(folder)


def test_a_prepared_file_damaged_after_installation_is_a_problem_of_the_folder(small_pate, data_dir, monkeypatch):
    monkeypatch.setattr(fw, "get_recipe", lambda name: small_pate, raising=False)
    out = fw.run_recipe(small_pate, network=False)
    assert small_pate.problem() is None
    np.save(out / "mnist.npy", np.zeros((2, 2), np.int64))
    assert "its prepared files fail the recipe's check" in small_pate.problem()
    assert "mnist.npy: bad prepared array" in small_pate.problem()
