"""A disk that fills (or a folder that cannot be written) while data are prepared: one line naming the variable,
the path and the bytes needed; the previously prepared data stay as they were; nothing half-written is left."""

from __future__ import annotations

import errno

import numpy as np
import pytest
from test_framework import _tree, small_pate  # noqa: F401 - fixture

from data_recipes import files
from data_recipes import framework as fw
from data_recipes.__main__ import main as cli


def test_a_full_disk_while_preparing_is_one_line_and_keeps_the_old_data(small_pate, data_dir, file_size_limit):
    first = fw.run_recipe(small_pate, network=False)
    before = _tree(first)
    with file_size_limit(200), pytest.raises(files.WriteFailedError) as err:
        fw.run_recipe(small_pate, network=False)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"PATE_STUDY_DATA={data_dir}")
    assert "bytes needed" in message and "previous content is kept" in message
    assert _tree(first) == before
    assert not [p for p in data_dir.iterdir() if p.name.startswith(".tmp")]


def test_the_cli_reports_a_full_disk_in_one_line(small_pate, data_dir, file_size_limit, monkeypatch, capsys):
    monkeypatch.setattr("data_recipes.get_recipe", lambda name: small_pate)
    monkeypatch.setattr("data_recipes.__main__.get_recipe", lambda name: small_pate)
    with file_size_limit(200):
        code = cli(["prepare", "pate2018-votes", "--offline"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: PATE_STUDY_DATA=") and "bytes needed" in err[0]


def test_numpy_short_write_names_the_bytes_numpy_asked_for(tmp_path, file_size_limit):
    """numpy's own wording ("N requested and M written") is turned into "N bytes needed"."""
    big = np.zeros(50_000, dtype=np.uint8)
    with file_size_limit(10_000), pytest.raises(files.WriteFailedError) as err:
        files.atomic_write(tmp_path / "a.npy", lambda tmp: big.tofile(tmp))
    assert "50,000 bytes needed" in str(err.value)
    assert not list(tmp_path.iterdir())


def test_a_read_only_data_folder_is_refused_before_any_work(small_pate, data_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(files.tempfile, "mkstemp", refuse)
    with pytest.raises(files.FolderNotWritableError) as err:
        fw.run_recipe(small_pate, network=False)
    assert str(err.value).startswith(f"PATE_STUDY_DATA={data_dir}: cannot create files") and "Read-only" in str(
        err.value
    )


@pytest.mark.skipif(
    not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
    reason="root writes into read-only folders",
)
def test_a_folder_without_write_permission_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(files.FolderNotWritableError, match="cannot create files"):
            files.check_writable(folder, label="PATE_STUDY_DATA=x")
    finally:
        folder.chmod(0o755)


def test_an_error_of_the_writer_itself_is_not_disguised_as_a_full_disk(tmp_path):
    def buggy(tmp):
        raise RuntimeError("shape mismatch in the writer")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        files.atomic_write(tmp_path / "x.bin", buggy)
