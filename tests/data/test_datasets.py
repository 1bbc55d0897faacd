"""Dataset recipes and loaders: real mirror files, fixtures in the real formats, bad inputs."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import numpy as np
import pytest
from audioset_records import make_record, make_tar

from data_recipes import audioset as ar
from data_recipes import csic2010, deeplog_hdfs, ecg_heartbeat, ecml_pkdd2007, malicious_urls
from data_recipes import framework as fw
from data_recipes import get_recipe as fw_recipe
from data_recipes.tfrecord import parse_sequence_example
from pate_study.data import DataSource, audioset, deeplog, ecg, pate2018, resolve_source, web

FIX = Path(__file__).parent / "fixtures"


def _tree(path: Path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- source selection
def test_datasource_stamp():
    s = DataSource("real", "CSIC 2010", "97,065 requests (25.8% anomalous)", "full", "mirror")
    assert s.stamp() == "real: CSIC 2010 via mirror, 97,065 requests (25.8% anomalous)"
    assert (
        DataSource("synthetic", "CSIC 2010", "seed 0, 5,000 requests", "seed 0").stamp()
        == "synthetic stand-in for CSIC 2010 (seed 0, 5,000 requests)"
    )


def test_resolve_source_modes(data_dir):
    with pytest.raises(ValueError, match="data="):
        resolve_source("csic2010", "maybe")
    assert resolve_source("csic2010", "synthetic") is None
    assert resolve_source("csic2010", "auto") is None
    with pytest.raises(FileNotFoundError, match="make data-csic2010"):
        resolve_source("csic2010", "real")


# ----------------------------------------------------------------------------- synthetic stand-ins
@pytest.mark.slow
def test_synthetic_loaders_have_real_schemas(data_dir):
    e = ecg.load("synthetic", seed=1)
    assert e.X_train.shape[1] == 187 and e.X_train.dtype == np.float32 and set(np.unique(e.y_train)) <= set(range(5))
    assert 0.75 < (e.y_train == 0).mean() < 0.9  # about MIT-BIH's 82.8% N
    assert (ecg.load("synthetic", seed=1).X_train == e.X_train).all()
    w = web.load("synthetic")
    assert list(w.frame.columns) == ["url", "label", "source"] and 0.02 < w.frame["label"].mean() < 0.1
    assert 0.2 < web.load_csic2010("synthetic").frame["label"].mean() < 0.32
    v = pate2018.load("synthetic", synthetic_scale=0.02)
    assert all((c.sum(1) == 250).all() and c.dtype == np.int64 for c in v.counts.values())
    a = audioset.load("synthetic")
    s = a.splits["bal_train"]
    assert s.embeddings.shape[1:] == (10, 128) and s.embeddings.dtype == np.uint8 and s.labels.shape[1] == 527
    assert 1.5 < s.labels.sum(1).mean() < 2.5
    freq = np.sort(s.labels.sum(0))[::-1]
    assert freq[0] > 20 * max(freq[-50], 1)  # long-tailed
    d = deeplog.load("synthetic")
    assert all(x.dtype == np.int64 for x in d.normal[:5]) and d.source.kind == "synthetic"


# ----------------------------------------------------------------------------- CSIC 2010
def test_csic_parser_on_fixture():
    df = csic2010.parse_requests((FIX / "csic_sample.txt").read_text(), where="fixture")
    assert list(df["method"]) == ["GET", "POST", "GET"]
    assert df.loc[1, "body"] == "id=3&nombre=Vino+Rioja&precio=100%27+OR"
    assert df.loc[1, "request"].endswith("anadir.jsp?id=3&nombre=Vino+Rioja&precio=100%27+OR")
    assert df.loc[2, "request"] == df.loc[2, "url"]


def test_csic_truncated_gzip_keeps_prepared_data(fake_mirror, data_dir, monkeypatch):
    folder = fake_mirror / "csic2010"
    folder.mkdir()
    text = (FIX / "csic_sample.txt").read_bytes()
    for name in csic2010.EXPECTED:
        (folder / f"{name}.gz").write_bytes(gzip.compress(text))
    monkeypatch.setattr(csic2010, "EXPECTED", {k: (v[0], 3) for k, v in csic2010.EXPECTED.items()})
    files = tuple(fw.SourceFile(f.name) for f in csic2010.FILES)
    recipe = dataclasses.replace(csic2010.RECIPE, variants=(fw.Variant("full", files, "fixture"),))
    out = fw.run_recipe(recipe, network=False)
    before = _tree(out)
    good = (folder / "normalTrafficTest.txt.gz").read_bytes()
    (folder / "normalTrafficTest.txt.gz").write_bytes(good[: len(good) // 2])
    with pytest.raises(fw.MalformedDataError, match="truncated or corrupt"):
        fw.run_recipe(recipe, network=False)
    assert _tree(out) == before


def test_csic_no_requests_is_an_error():
    with pytest.raises(fw.MalformedDataError, match="no HTTP request line"):
        csic2010.parse_requests("hello\nworld\n", where="x.txt")


@pytest.mark.slow
@pytest.mark.mirror
def test_csic_real_and_web_loader(mirror, data_dir):
    w = web.load("real")
    assert len(w.frame) == 97_065 and int(w.frame["label"].sum()) == 25_065
    assert w.sources == ("csic2010",)
    assert w.source.stamp().startswith("real: CSIC 2010 via mirror, 97,065 requests (25.8% anomalous)")
    assert "not available: ECML/PKDD 2007, Malicious URLs" in w.source.description


# ----------------------------------------------------------------------------- ECML/PKDD, Malicious URLs
def test_ecml_parser_on_fixture():
    df = ecml_pkdd2007.parse_xml((FIX / "ecml_sample.xml").read_bytes(), where="fixture")
    assert list(df["attack_type"]) == ["Valid", "SqlInjection", "PathTransversal"]
    assert list(df["label"]) == [0, 1, 1]
    assert df.loc[0, "url"] == "/shop/catalog/view.asp?item=42&lang=en" and df.loc[2, "url"] == "/../../etc/passwd"


def test_ecml_bad_xml():
    data = (FIX / "ecml_sample.xml").read_bytes()
    with pytest.raises(fw.MalformedDataError, match="not well-formed"):
        ecml_pkdd2007.parse_xml(data[:-40], where="cut.xml")
    with pytest.raises(fw.MalformedDataError, match="unknown class"):
        ecml_pkdd2007.parse_xml(data.replace(b"SqlInjection", b"Bogus"), where="x.xml")


def test_malicious_urls_parser_and_merge(fake_mirror, data_dir):
    df = malicious_urls.parse_csv((FIX / "malicious_phish_sample.csv").read_bytes(), where="fixture")
    assert len(df) == 7 and list(df["label"]) == [1, 0, 0, 1, 1, 1, 0]
    with pytest.raises(fw.MalformedDataError, match="2 columns"):
        malicious_urls.parse_csv(b"url,type,extra\na,benign,1\n", where="x.csv")
    with pytest.raises(fw.MalformedDataError, match="unknown type"):
        malicious_urls.parse_csv(b"url,type\na,spam\n", where="x.csv")
    # both fixture sources in a fake mirror: the merged table reports its sources and balance
    (fake_mirror / "malicious-urls").mkdir()
    (fake_mirror / "malicious-urls" / "malicious_phish.csv").write_bytes(
        (FIX / "malicious_phish_sample.csv").read_bytes()
    )
    (fake_mirror / "ecml-pkdd2007").mkdir()
    (fake_mirror / "ecml-pkdd2007" / "learning_dataset.xml").write_bytes((FIX / "ecml_sample.xml").read_bytes())
    # the fixtures are far smaller than the data cards declare: installed only on explicit request
    for name in ("malicious-urls", "ecml-pkdd2007"):
        with pytest.raises(fw.IncompleteDataError, match="--allow-small"):
            fw.run_recipe(fw_recipe(name), network=False)
        fw.run_recipe(fw_recipe(name), network=False, allow_small=True)
    w = web.load("real")
    assert w.sources == ("ecml-pkdd2007", "malicious-urls") and len(w.frame) == 10
    assert set(w.frame["source"]) == {"ecml-pkdd2007", "malicious-urls"} and w.frame["label"].sum() == 6
    assert "CSIC 2010" in w.source.description  # reported as not available


# ----------------------------------------------------------------------------- ECG
def test_ecg_parser_and_bad_inputs():
    x, y = ecg_heartbeat.parse_csv((FIX / "mitbih_sample.csv").read_bytes(), where="fixture")
    assert x.shape == (10, 187) and list(np.bincount(y)) == [2] * 5
    rows = (FIX / "mitbih_sample.csv").read_text().splitlines()
    with pytest.raises(fw.MalformedDataError, match="expected 188 columns"):
        ecg_heartbeat.parse_csv("\n".join(r.rsplit(",", 1)[0] for r in rows).encode(), where="short.csv")
    bad = rows[:]
    bad[3] = bad[3].replace(bad[3].split(",")[5], "abc", 1)
    with pytest.raises(fw.MalformedDataError, match="non-numeric value at row 4"):
        ecg_heartbeat.parse_csv("\n".join(bad).encode(), where="nan.csv")
    with pytest.raises(fw.MalformedDataError, match="labels"):
        ecg_heartbeat.parse_csv("\n".join(r.rsplit(",", 1)[0] + ",7" for r in rows).encode(), where="lab.csv")


@pytest.mark.mirror
def test_ecg_sample_from_mirror_says_sample(mirror, data_dir):
    e = ecg.load("real")
    assert e.X_train.shape == (500, 187) and e.X_test.shape == (500, 187)
    assert list(np.bincount(e.y_train)) == [100] * 5
    assert "sample" in e.source.scale and "sample" in e.source.stamp()


# ----------------------------------------------------------------------------- DeepLog
def test_deeplog_parser():
    seqs = deeplog_hdfs.parse_sequences((FIX / "hdfs_sample").read_text(), where="fixture")
    assert [len(s) for s in seqs] == [13, 21, 6]
    with pytest.raises(fw.MalformedDataError, match="is not a log key"):
        deeplog_hdfs.parse_sequences("1 2 x\n", where="bad")


@pytest.mark.mirror
def test_deeplog_real(mirror, data_dir):
    d = deeplog.load("real")
    assert len(d.normal) == 4855 and len(d.abnormal) == 16838
    lengths = [len(s) for s in d.normal]
    assert min(lengths) == 13 and max(lengths) == 42
    assert d.normal[0].dtype == np.int64


# ----------------------------------------------------------------------------- Audio Set
def _audioset_mirror(mirror_dir: Path, real: Path | None, tar_bytes: bytes):
    folder = mirror_dir / "audioset"
    folder.mkdir(exist_ok=True)
    if real is not None:
        for f in ("class_labels_indices.csv", "ontology.json", "balanced_train_segments.csv"):
            (folder / f).write_bytes((real / "audioset" / f).read_bytes())
    (folder / "features_bal_train_eval.tar.gz").write_bytes(tar_bytes)


def test_tfrecord_roundtrip():
    rec = make_record("abc", [0, 137, 500], n_frames=7)
    ctx, lists = parse_sequence_example(rec[12:-4])
    assert ctx["video_id"] == [b"abc"] and ctx["labels"] == [0, 137, 500] and ctx["start_time_seconds"] == [30.0]
    assert len(lists["audio_embedding"]) == 7
    out = ar.read_embeddings_tar_bytes_for_test(make_tar({"bal_train/ab.tfrecord": rec + make_record("d", [1], 10, 1)}))
    s = out["bal_train"]
    assert s["embeddings"].shape == (2, 10, 128) and list(s["n_frames"]) == [7, 10]
    assert list(np.flatnonzero(s["labels"][0])) == [0, 137, 500] and list(s["video_ids"]) == ["abc", "d"]


@pytest.mark.mirror
def test_audioset_bad_crc_and_missing_label_file(mirror, fake_mirror, data_dir, monkeypatch):
    real = mirror
    monkeypatch.setenv("PATE_STUDY_MIRROR", str(fake_mirror))
    monkeypatch.setattr(ar, "EXPECTED", {"bal_train": 2, "eval": 1, "unbal_train": None})
    tar_files = {
        "bal_train/a.tfrecord": make_record("a", [0, 1]) + make_record("b", [300], 9),
        "eval/c.tfrecord": make_record("c", [526]),
    }
    _audioset_mirror(fake_mirror, real, make_tar(tar_files))
    variant = fw.Variant(
        "bal_train_eval",
        (ar.LABELS, ar.ONTOLOGY, ar.BAL_SEGMENTS, fw.SourceFile("features_bal_train_eval.tar.gz")),
        "fixture",
    )
    recipe = dataclasses.replace(ar.RECIPE, variants=(variant,))
    out = fw.run_recipe(recipe, network=False)
    before = _tree(out)
    assert np.load(out / "eval_labels.npy")[0, 526]
    # flip one payload byte of the second record: its data CRC no longer matches
    rec = bytearray(tar_files["bal_train/a.tfrecord"])
    rec[-50] ^= 0xFF
    _audioset_mirror(fake_mirror, None, make_tar({**tar_files, "bal_train/a.tfrecord": bytes(rec)}))
    with pytest.raises(fw.MalformedDataError, match="bad data CRC-32C"):
        fw.run_recipe(recipe, network=False)
    assert _tree(out) == before
    # the label file missing from the mirror: not available, prepared data untouched
    _audioset_mirror(fake_mirror, None, make_tar(tar_files))
    (fake_mirror / "audioset" / "class_labels_indices.csv").unlink()
    with pytest.raises(fw.NotAvailableError, match="class_labels_indices.csv"):
        fw.run_recipe(recipe, network=False)
    assert _tree(out) == before


@pytest.mark.slow
@pytest.mark.mirror
def test_audioset_real_prepare_and_subsets(audioset_prepared, monkeypatch):
    monkeypatch.setenv("PATE_STUDY_DATA", str(audioset_prepared))
    monkeypatch.delenv("PATE_STUDY_MIRROR", raising=False)
    a = audioset.load("real")
    bal, ev = a.splits["bal_train"], a.splits["eval"]
    assert bal.embeddings.shape == (22_160, 10, 128) and ev.labels.shape == (20_371, 527)
    assert bal.embeddings.dtype == np.uint8 and bal.n_frames.max() == 10
    assert 1.5 < bal.labels.sum(1).mean() < 3
    big = audioset.load("real", subset="big")
    assert 140 <= len(big.class_names) <= 170
    names = set(big.class_names)
    assert {
        "Church bell",
        "Jackhammer",
        "Bus",
        "Train",
        "Siren",
        "Fire alarm",
        "Boing",
        "Rustle",
        "Bicycle",
        "Male speech, man speaking",
        "Vehicle",
    } <= names
    assert not names & {"Music", "Guitar", "Piano", "Singing"}
    small = audioset.load("real", subset="small")
    assert len(small.class_names) == 15 and {"Church bell", "Jackhammer", "Bus", "Train"} <= set(small.class_names)
    assert small.splits["eval"].labels.any(1).all()


@pytest.mark.slow
def test_audio_path_with_mocked_download(tmp_path):
    """Raw-audio recipe on synthetic audio: the download is mocked, one video 'removed'."""
    import soundfile as sf

    from data_recipes import audioset_audio as aa

    def fake_download(vid, start, end, dest):
        if vid == "gone":
            raise RuntimeError("Video unavailable")
        t = np.arange(int(aa.SR * (end - start))) / aa.SR
        path = dest.with_suffix(".wav")
        sf.write(path, 0.3 * np.sin(2 * np.pi * 440 * t), aa.SR)
        return path

    segs = [("abc", 30.0, 40.0, ["/m/09x0r"]), ("gone", 0.0, 10.0, ["/m/09x0r"]), ("short", 5.0, 12.0, [])]
    mels, kept, failed = aa.fetch_log_mels(segs, downloader=fake_download, workdir=tmp_path)
    assert [k[0] for k in kept] == ["abc", "short"] and list(failed) == ["gone"]
    assert all(m.shape == (aa.N_TIME, aa.N_MELS) for m in mels)
    band = int(np.argmax(mels[0].mean(0)))
    assert band < 20  # 440 Hz energy sits in a low Mel band
