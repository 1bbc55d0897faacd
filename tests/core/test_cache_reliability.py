"""The verified cache under hostile conditions: an entry and its sidecar replaced together (a pickle; an entry of
the wrong shape full of NaN), a read-only cache, a full cache. Every case ends in a recomputation with a warning,
never in a raw exception, a served wrong entry, or a lost result."""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import pickle

import pytest
import torch

from data_recipes import files
from pate_study.core import io
from pate_study.core.io import CacheExpectation, load_cache_entry, save_cache_entry
from pate_study.learning.ensemble_cache import _cached_votes


def _forge(path, payload_bytes: bytes):
    """Replace an entry *and* its sidecar, so that the checksum agrees with the forged bytes."""
    path.write_bytes(payload_bytes)
    side = {"sha256": hashlib.sha256(payload_bytes).hexdigest(), "size": len(payload_bytes), "format": io.CACHE_FORMAT}
    path.with_suffix(path.suffix + ".json").write_text(json.dumps(side))


@pytest.fixture
def entry(tmp_path):
    path = tmp_path / "votes.pt"
    save_cache_entry(path, {"probabilities": torch.full((3, 4), 0.25)})
    return path


EXPECT = {"probabilities": CacheExpectation(shape=(3, 4), dtype="float32")}


def test_an_intact_entry_meets_its_expectation(entry):
    assert torch.equal(load_cache_entry(entry, expect=EXPECT)["probabilities"], torch.full((3, 4), 0.25))


def test_a_pickle_with_a_matching_sidecar_is_rejected_not_raised(entry, caplog):
    _forge(entry, pickle.dumps({"probabilities": [1, 2, 3]}, protocol=2))
    with caplog.at_level(logging.WARNING):
        assert load_cache_entry(entry) is None
    assert "rejected" in caplog.text and "unreadable" in caplog.text
    assert not entry.exists()


@pytest.mark.parametrize(
    "forged, why",
    [
        ({"probabilities": torch.full((5, 4), float("nan"))}, "shape"),
        ({"probabilities": torch.full((3, 4), float("nan"))}, "NaN"),
        ({"probabilities": torch.zeros((3, 4), dtype=torch.float64)}, "dtype"),
        ({"other": torch.zeros(3)}, "missing"),
        ({"probabilities": [0.25] * 12}, "expected an array"),
    ],
)
def test_an_entry_unlike_its_keys_declared_output_is_rejected(entry, tmp_path, forged, why, caplog):
    scratch = tmp_path / "scratch.pt"
    torch.save(forged, scratch)
    _forge(entry, scratch.read_bytes())
    with caplog.at_level(logging.WARNING):
        assert load_cache_entry(entry, expect=EXPECT) is None
    assert why in caplog.text


def test_nested_names_are_checked(tmp_path):
    path = tmp_path / "shard.pt"
    save_cache_entry(path, {"result": {"votes": torch.ones(2, 3)}})
    assert load_cache_entry(path, expect={"result.votes": CacheExpectation((2, None), "float32")}) is not None
    assert load_cache_entry(path, expect={"result.votes": CacheExpectation((3, None))}) is None


def test_a_rejected_entry_in_a_read_only_cache_is_ignored_with_a_warning(entry, monkeypatch, caplog):
    entry.write_bytes(b"garbage")
    real_unlink = type(entry).unlink

    def read_only(self, missing_ok=False):
        if self.parent == entry.parent:
            raise OSError(errno.EROFS, "Read-only file system")
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(type(entry), "unlink", read_only)
    monkeypatch.setattr(
        files.tempfile, "mkstemp", lambda **kw: (_ for _ in ()).throw(OSError(errno.EROFS, "Read-only file system"))
    )
    with caplog.at_level(logging.WARNING):
        assert load_cache_entry(entry) is None  # recomputed by the caller, no crash on delete
    assert "cannot remove the rejected cache entry" in caplog.text
    assert "will be returned but not cached" in caplog.text


def test_a_miss_in_a_read_only_cache_is_announced_before_the_work(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path))
    monkeypatch.setattr(
        files.tempfile, "mkstemp", lambda **kw: (_ for _ in ()).throw(OSError(errno.EROFS, "Read-only file system"))
    )
    with caplog.at_level(logging.WARNING):
        assert load_cache_entry(tmp_path / "missing.pt") is None
    assert f"PATE_STUDY_CACHE={tmp_path}" in caplog.text and "Read-only" in caplog.text


def test_a_full_cache_keeps_the_result_and_the_old_entry(entry, file_size_limit, caplog, monkeypatch):
    monkeypatch.setenv("PATE_STUDY_CACHE", str(entry.parent))
    old = entry.read_bytes()
    big = {"probabilities": torch.zeros(100_000)}
    with file_size_limit(len(old) + 1000), caplog.at_level(logging.WARNING):
        assert save_cache_entry(entry, big) is None  # no exception: the caller keeps its trained result
    assert entry.read_bytes() == old and torch.equal(load_cache_entry(entry)["probabilities"], torch.full((3, 4), 0.25))
    line = next(r.getMessage() for r in caplog.records if "cannot write" in r.getMessage())
    assert "\n" not in line and line.startswith(f"PATE_STUDY_CACHE={entry.parent}: cannot write {entry}")
    assert "400,000 bytes needed" in line
    assert not [p for p in entry.parent.iterdir() if p.name.endswith(".tmp.pt")]


def test_an_open_rank_expectation_checks_the_leading_sizes_at_any_rank(tmp_path):
    path = tmp_path / "votes.pt"
    open_rank = {"probabilities": CacheExpectation(shape=(None, 4, ...))}
    for shape in ((3, 4), (3, 4, 7)):  # binary / multiclass [N, Q] and multilabel [N, Q, L] votes
        save_cache_entry(path, {"probabilities": torch.zeros(shape)})
        assert load_cache_entry(path, expect=open_rank) is not None
    for shape in ((3, 5), (3, 5, 7), (4,)):  # another query count, or too few dimensions
        save_cache_entry(path, {"probabilities": torch.zeros(shape)})
        assert load_cache_entry(path, expect=open_rank) is None


def test_the_package_caches_refuse_a_forged_entry_of_the_wrong_shape(tmp_path):
    """The real callers declare their outputs: the teacher votes' cache and 05's teacher-probability cache
    recompute an entry that was replaced together with its sidecar by one of the wrong shape or full of NaN."""
    import numpy as np

    from pate_study.core import cache
    from pate_study.learning.voting import TeacherVotes

    queries = np.zeros((5, 2), dtype=np.float32)
    calls = []

    def compute():
        calls.append(1)
        return TeacherVotes("binary", np.full((3, 5), 0.5, np.float32), np.ones((3, 5), np.int8))

    first = _cached_votes("ensemble-key", queries, compute, "cpu", tmp_path)
    again = _cached_votes("ensemble-key", queries, compute, "cpu", tmp_path)
    assert len(calls) == 1 and np.array_equal(first.probabilities, again.probabilities)
    key = cache.cache_key("votes", device="cpu", ensemble="ensemble-key", queries=queries)
    path = cache.entry_path("votes", key, tmp_path)
    forged = TeacherVotes("binary", np.full((3, 9), np.nan, np.float32), np.ones((3, 9), np.int8)).state()
    cache.store("votes", key, forged, tmp_path)  # a well-formed entry with a valid sidecar, wrong shape
    assert _cached_votes("ensemble-key", queries, compute, "cpu", tmp_path).probabilities.shape == (3, 5)
    assert len(calls) == 2 and path.exists()  # recomputed and stored again

    probabilities = {
        "probabilities": CacheExpectation((3, 5, 4), "float32"),
        "best_step": CacheExpectation((3,), "int64"),
    }
    cache.store(
        "teacher-probabilities",
        "k" * 64,
        {"probabilities": torch.full((3, 5, 4), float("nan")), "best_step": torch.zeros(3, dtype=torch.int64)},
        tmp_path,
    )
    assert cache.load("teacher-probabilities", "k" * 64, tmp_path, expect=probabilities) is None


def test_an_entry_copied_with_its_sidecar_under_another_keys_name_is_not_served(tmp_path, caplog):
    """Seed 1 must never get seed 0's votes: the sidecar names the full key, and it must be the entry's own."""
    import shutil

    from pate_study.core import cache

    key0, key1 = (cache.cache_key("votes", device="cpu", seed=seed) for seed in (0, 1))
    cache.store("votes", key0, {"votes": torch.zeros(3)}, tmp_path)
    for suffix in ("", ".json"):
        shutil.copy(
            f"{cache.entry_path('votes', key0, tmp_path)}{suffix}",
            f"{cache.entry_path('votes', key1, tmp_path)}{suffix}",
        )
    with caplog.at_level(logging.WARNING):
        assert cache.load("votes", key1, tmp_path) is None
    assert "sidecar belongs to another entry" in caplog.text and key0[:16] in caplog.text
    assert cache.load("votes", key0, tmp_path) is not None


def test_a_folder_at_the_entrys_path_costs_the_entry_never_the_result(tmp_path, caplog):
    from pate_study.core import cache

    key = cache.cache_key("votes", device="cpu", seed=0)
    cache.entry_path("votes", key, tmp_path).mkdir(parents=True)
    with caplog.at_level(logging.WARNING):
        result = cache.cached(
            "votes",
            key,
            lambda: torch.ones(2),
            to_state=lambda t: {"votes": t},
            from_state=lambda s: s["votes"],
            cache_dir=tmp_path,
        )
    assert torch.equal(result, torch.ones(2))
    line = next(r.getMessage() for r in caplog.records if "in the way" in r.getMessage())
    assert "is a folder" not in line and "(a folder)" in line and "not cached" in line


def test_a_nearly_full_cache_names_the_margin_not_a_file_size(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(files, "free_bytes", lambda path: 1_000_000)
    with caplog.at_level(logging.WARNING):
        assert not io.cache_writable(tmp_path)
    line = caplog.records[-1].getMessage()
    assert "1,000,000 bytes free, less than the 16,777,216-byte margin" in line and "needed" not in line
