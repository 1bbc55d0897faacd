"""Recipe framework: mirror lookup, hashes, atomic prepare, manifest, resumable download, CLI."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import json
import threading
from pathlib import Path

import numpy as np
import pytest

import data_recipes
from data_recipes import framework as fw
from data_recipes.__main__ import main as cli
from data_recipes.pate2018 import RECIPE as PATE

FIX = Path(__file__).parent / "fixtures"


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _votes(n=6, classes=10, seed=0):
    rng = np.random.default_rng(seed)
    return np.stack([rng.multinomial(250, np.full(classes, 1 / classes)) for _ in range(n)]).astype(np.float64)


def _fake_pate(mirror: Path, shapes=None, corrupt: str | None = None):
    """Write three small vote files into a fake mirror and a recipe declaring their hashes."""
    folder = mirror / "pate2018-votes"
    folder.mkdir(exist_ok=True)
    files = []
    shapes = shapes or {"mnist": (6, 10), "svhn": (5, 10), "adult": (4, 2)}
    for k, (r, c) in shapes.items():
        p = folder / f"{k}_250_teachers.npy"
        np.save(p, _votes(r, c))
        files.append(fw.SourceFile(p.name, sha256=_sha(p.read_bytes())))
        if corrupt == k:
            p.write_bytes(p.read_bytes()[:-8] + b"\0" * 8)
    return files, shapes


@pytest.fixture
def small_pate(fake_mirror, monkeypatch):
    files, shapes = _fake_pate(fake_mirror)
    monkeypatch.setattr("data_recipes.pate2018.SHAPES", shapes)
    return dataclasses.replace(PATE, variants=(fw.Variant("full", tuple(files), "full"),))


def test_data_root_default_is_repo_data(monkeypatch):
    monkeypatch.delenv("PATE_STUDY_DATA", raising=False)
    assert fw.data_root() == Path(fw.__file__).resolve().parents[1] / "data"


def test_prepare_writes_arrays_and_manifest(small_pate, data_dir):
    out = fw.run_recipe(small_pate, network=False)
    assert out == data_dir / "pate2018-votes"
    votes = np.load(out / "mnist.npy")
    assert votes.dtype == np.int64 and (votes.sum(1) == 250).all()
    man = json.loads((out / "MANIFEST.json").read_text())
    assert man["recipe"] == "pate2018-votes" and man["version"] == PATE.version
    assert {s["origin"] for s in man["sources"]} == {"mirror"} and all(s["verified"] for s in man["sources"])
    assert man["counts"]["adult"]["queries"] == 4 and "prepared_at" in man
    assert not [p for p in data_dir.iterdir() if p.name.startswith(".tmp")]


def test_the_log_names_the_data_folder_relative_to_the_working_folder(small_pate, data_dir, monkeypatch, caplog):
    """Inside the working folder (a checkout's data/, as CI and make test use it) the log lines, which a notebook's
    executed copy shows when it prepares its data, name no machine's folders; outside it the path is as given."""
    monkeypatch.chdir(data_dir.parent)
    with caplog.at_level("INFO", logger="data_recipes.framework"):
        fw.run_recipe(small_pate, network=False)
    lines = [r.getMessage() for r in caplog.records]
    assert "prepared pate2018-votes -> prepared/pate2018-votes" in lines
    assert not [line for line in lines if str(data_dir.parent) in line]
    elsewhere = data_dir.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert fw.shown_path(data_dir) == str(data_dir)


def test_checksum_mismatch_leaves_previous_data_intact(small_pate, fake_mirror, data_dir):
    out = fw.run_recipe(small_pate, network=False)
    before = _tree(out)
    p = fake_mirror / "pate2018-votes" / "svhn_250_teachers.npy"
    p.write_bytes(p.read_bytes()[:-1] + b"\x01")
    with pytest.raises(fw.ChecksumError, match="svhn_250_teachers.npy"):
        fw.run_recipe(small_pate, network=False)
    assert _tree(out) == before
    assert not [x for x in data_dir.iterdir() if x.name.startswith(".tmp")]


def test_malformed_content_leaves_previous_data_intact(small_pate, fake_mirror, data_dir, monkeypatch):
    out = fw.run_recipe(small_pate, network=False)
    before = _tree(out)
    # a correctly hashed file whose rows do not sum to 250
    p = fake_mirror / "pate2018-votes" / "adult_250_teachers.npy"
    bad = _votes(4, 2)
    bad[0, 0] += 1
    np.save(p, bad)
    files = tuple(
        dataclasses.replace(f, sha256=_sha((fake_mirror / "pate2018-votes" / f.name).read_bytes()))
        for f in small_pate.variants[0].files
    )
    recipe = dataclasses.replace(small_pate, variants=(fw.Variant("full", files, "full"),))
    with pytest.raises(fw.MalformedDataError, match="row 0 to 251"):
        fw.run_recipe(recipe, network=False)
    assert _tree(out) == before


def test_missing_file_is_not_available(small_pate, fake_mirror, data_dir):
    (fake_mirror / "pate2018-votes" / "adult_250_teachers.npy").unlink()
    with pytest.raises(fw.NotAvailableError, match="adult_250_teachers.npy") as info:
        fw.run_recipe(small_pate, network=False)
    assert "how to get it" in str(info.value) and "\n" not in str(info.value)
    assert not (data_dir / "pate2018-votes").exists()


def test_mirror_accepts_gzip_copy_of_declared_file(fake_mirror):
    raw = b"hello mirror\n" * 50
    spec = fw.SourceFile("file.txt", sha256=_sha(raw))
    (fake_mirror / "ds").mkdir()
    with gzip.open(fake_mirror / "ds" / "file.txt.gz", "wb") as f:
        f.write(raw)
    path = fw.find_in_mirror("ds", spec)
    assert path.name == "file.txt.gz"
    assert fw.verify_copy(path, spec)[1] is True
    assert fw.read_source_bytes(path) == raw
    # and a plain copy of a file declared as .gz, matched through alt_sha256
    spec_gz = fw.SourceFile("other.txt.gz", sha256="0" * 64, alt_sha256=(_sha(raw),))
    (fake_mirror / "ds" / "other.txt").write_bytes(raw)
    assert fw.verify_copy(fw.find_in_mirror("ds", spec_gz), spec_gz) == (_sha(raw), True)


def test_mirror_rejects_wrong_content(fake_mirror):
    spec = fw.SourceFile("file.txt", sha256=_sha(b"expected"))
    (fake_mirror / "ds").mkdir()
    (fake_mirror / "ds" / "file.txt").write_bytes(b"something else")
    with pytest.raises(fw.ChecksumError, match="file.txt"):
        fw.verify_copy(fw.find_in_mirror("ds", spec), spec)


class _Handler(http.server.BaseHTTPRequestHandler):
    payload = b""
    cut_first = True
    ranges: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        rng = self.headers.get("Range")
        type(self).ranges.append(rng)
        data = self.payload
        if rng:
            start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            body = data[start:]
        else:
            self.send_response(200)
            body = data
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if type(self).cut_first and not rng:
            type(self).cut_first = False
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


def test_download_resumes_after_interruption(tmp_path):
    payload = np.random.default_rng(0).bytes(300_000)
    _Handler.payload, _Handler.cut_first, _Handler.ranges = payload, True, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/votes.npy"
        spec = fw.SourceFile("votes.npy", urls=(url,), sha256=_sha(payload))
        dest = tmp_path / "votes.npy"
        with pytest.raises(fw.NotAvailableError, match="interrupted"):
            fw.download(url, dest, spec, timeout=10)
        part = dest.with_name("votes.npy.part")
        assert part.stat().st_size == len(payload) // 2 and not dest.exists()
        digest, verified = fw.download(url, dest, spec, timeout=10)
        assert verified and digest == _sha(payload) and dest.read_bytes() == payload and not part.exists()
        assert _Handler.ranges == [None, f"bytes={len(payload) // 2}-"]
        # a download whose content does not match the hash is rejected and removed
        bad = fw.SourceFile("x.npy", urls=(url,), sha256="0" * 64)
        with pytest.raises(fw.ChecksumError):
            fw.download(url, tmp_path / "x.npy", bad, timeout=10)
        assert not (tmp_path / "x.npy").exists() and not (tmp_path / "x.npy.part").exists()
    finally:
        server.shutdown()


def test_unreachable_network_is_not_available(tmp_path):
    spec = fw.SourceFile("f", urls=("http://127.0.0.1:9/f",), sha256="0" * 64)
    with pytest.raises(fw.NotAvailableError, match="network unavailable"):
        fw.download(spec.urls[0], tmp_path / "f", spec, timeout=2)


def test_cli_list_and_prepare_exit_codes(small_pate, fake_mirror, data_dir, monkeypatch, capsys):
    monkeypatch.setattr("data_recipes.pate2018.RECIPE", small_pate)
    assert cli(["list"]) == 0
    assert "pate2018-votes" in capsys.readouterr().out
    assert cli(["prepare", "pate2018-votes", "--offline"]) == 0
    assert (data_dir / "pate2018-votes" / "MANIFEST.json").exists()
    # nothing else is in the fake mirror: 'all' prepares what it can, lists the rest and exits 3
    assert cli(["prepare", "all", "--offline"]) == 3
    captured = capsys.readouterr()
    assert "[ok] pate2018-votes" in captured.out
    assert "Could not get" in captured.err and "csic2010" in captured.err and "how to get it" in captured.err
    # a corrupt file: non-zero exit, previous data intact
    before = _tree(data_dir / "pate2018-votes")
    p = fake_mirror / "pate2018-votes" / "mnist_250_teachers.npy"
    p.write_bytes(b"garbage")
    assert cli(["prepare", "pate2018-votes", "--offline", "--force"]) == 1
    assert _tree(data_dir / "pate2018-votes") == before
    assert cli(["prepare", "no-such-dataset"]) == 2


@pytest.mark.mirror
def test_pate2018_from_real_mirror(mirror, data_dir):
    out = data_recipes.prepare("pate2018-votes", network=False)
    for key, shape in {"mnist": (9000, 10), "svhn": (26032, 10), "adult": (16281, 2)}.items():
        v = np.load(out / f"{key}.npy")
        assert v.shape == shape and v.dtype == np.int64 and (v.sum(1) == 250).all()
