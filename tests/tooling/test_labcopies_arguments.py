"""``python -m pate_study.tooling.labcopies``'s arguments: a folder argument that is empty (an unset shell variable)
or a file is refused in one line naming ``--folder``, before any copy is written; a folder that cannot take the
copies is one line too."""

from __future__ import annotations

import os

import pytest

from pate_study.tooling import labcopies


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_folder_argument_is_refused_and_nothing_written_here(tmp_path, monkeypatch, capsys, value):
    """``--folder ""`` used to write the copies into the current folder."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        labcopies.main(["--folder", value])
    assert stop.value.code == 2 and list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--folder" in err and "empty" in err


def test_a_file_in_place_of_the_folder_is_named(tmp_path, capsys):
    (tmp_path / "labs").write_text("a file")
    for value in (tmp_path / "labs", tmp_path / "labs" / "sub"):
        with pytest.raises(SystemExit):
            labcopies.main(["--folder", str(value)])
        assert "not a folder" in capsys.readouterr().err
    assert (tmp_path / "labs").read_text() == "a file"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_one_line(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert labcopies.main(["--folder", str(folder)]) == 2
    finally:
        folder.chmod(0o700)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write the copies" in err[0]
