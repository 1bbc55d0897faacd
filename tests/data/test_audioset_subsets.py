"""Muschiol's label subsets: the big rule (Speech node dropped, children kept), its parameters,
bad input, and the pool split behind Table 4.1."""

import numpy as np
import pytest

from pate_study.data import audioset
from pate_study.experiments.audioset.data import pool_split
from pate_study.experiments.audioset.diagnostics import class_occurrences

# A tiny ontology: Speech -> Male speech; Sounds of things -> Vehicle -> Car; Bell under both
# Sounds of things and Music; Music -> Guitar.
ONTOLOGY = [
    {"id": "/s", "name": "Speech", "child_ids": ["/s/male"]},
    {"id": "/s/male", "name": "Male speech, man speaking", "child_ids": []},
    {"id": "/t", "name": "Sounds of things", "child_ids": ["/t/veh", "/t/bell"]},
    {"id": "/t/veh", "name": "Vehicle", "child_ids": ["/t/car"]},
    {"id": "/t/car", "name": "Car", "child_ids": []},
    {"id": "/t/bell", "name": "Bell", "child_ids": []},
    {"id": "/m", "name": "Music", "child_ids": ["/t/bell", "/m/g"]},
    {"id": "/m/g", "name": "Guitar", "child_ids": []},
    {"id": "/o", "name": "Onomatopoeia", "child_ids": []},
    {"id": "/n", "name": "Natural sounds", "child_ids": []},
    {"id": "/d", "name": "Domestic sounds, home sounds", "child_ids": []},
    {"id": "/l", "name": "Liquid", "child_ids": []},
    {"id": "/k", "name": "Mechanisms", "child_ids": []},
    {"id": "/p", "name": "Telephone", "child_ids": []},
]
MIDS = ["/s", "/s/male", "/t/veh", "/t/car", "/t/bell", "/m/g"]


def test_big_rule_drops_the_speech_node_keeps_children():
    onto = audioset.Ontology(ONTOLOGY)
    assert audioset.big_classes(onto, MIDS) == ["/s/male", "/t/veh", "/t/car", "/t/bell"]
    assert audioset.big_classes(onto, MIDS, drop_nodes=()) == ["/s", "/s/male", "/t/veh", "/t/car", "/t/bell"]
    assert audioset.big_classes(onto, MIDS, multi_parent="drop") == ["/s/male", "/t/veh", "/t/car"]
    with pytest.raises(ValueError, match="no class named 'Speach'"):
        audioset.big_classes(onto, MIDS, drop_nodes=("Speach",))


def test_pool_split_is_a_partition_with_the_stated_fractions():
    split = pool_split(1000, student_fraction=0.2, val_fraction=0.1, seed=3)
    allidx = np.concatenate([split.teacher, split.val, split.student])
    assert np.array_equal(np.sort(allidx), np.arange(1000))
    assert (len(split.teacher), len(split.val), len(split.student)) == (800, 100, 100)
    again = pool_split(1000, student_fraction=0.2, val_fraction=0.1, seed=3)
    assert np.array_equal(split.val, again.val)
    assert not np.array_equal(split.val, pool_split(1000, seed=4).val)
    with pytest.raises(ValueError, match="val_fraction"):
        pool_split(1000, student_fraction=0.1, val_fraction=0.2)
    with pytest.raises(ValueError, match="at least 3 clips"):
        pool_split(2)


def test_class_occurrences_counts_positive_labels_of_drawn_clips():
    labels = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]], bool)
    batches = np.array([[0, 0], [2, 1]])
    assert class_occurrences(labels, batches).tolist() == [3, 2, 2]
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 3\)"):
        class_occurrences(labels, np.array([[3]]))


@pytest.mark.slow
@pytest.mark.mirror
def test_real_big_subset_matches_the_thesis_statements(audioset_prepared, monkeypatch):
    monkeypatch.setenv("PATE_STUDY_DATA", str(audioset_prepared))
    monkeypatch.delenv("PATE_STUDY_MIRROR", raising=False)
    big = audioset.load("real", subset="big")
    names = list(big.class_names)
    counts = big.splits["bal_train"].labels.sum(0)
    assert names[int(np.argmax(counts))] == "Vehicle"  # Fig 5.9: Vehicle is the most frequent class
    assert "Speech" not in names and {"Male speech, man speaking", "Church bell", "Boing"} <= set(names)
    assert len(names) == 161
    with_speech = audioset.load("real", subset="big", big_kwargs={"drop_nodes": ()})
    c2 = with_speech.splits["bal_train"].labels.sum(0)
    assert with_speech.class_names[int(np.argmax(c2))] == "Speech"  # the rule is what puts Vehicle on top
    with pytest.raises(ValueError, match="selects no class"):
        audioset.load("real", subset="big", big_kwargs={"include": ("Music",), "exclude": ("Music",)})
