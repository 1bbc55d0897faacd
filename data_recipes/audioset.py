"""Recipe: Audio Set v1 (Gemmeke et al. 2017): CSVs, ontology and the released 128-d VGGish embeddings.

Embeddings: ``features.tar.gz`` (about 2.4 GB; ``audioset_v1_embeddings/{bal_train,eval,unbal_train}/
*.tfrecord``) from storage.googleapis.com, or the project mirror's ``features_bal_train_eval.tar.gz``
(bal_train + eval only). The tar is streamed with :mod:`tarfile` (nothing extracted to disk); every
record's two masked CRC-32C values are verified (:mod:`data_recipes.tfrecord`).

Prepared, per split (``bal_train``, ``eval``, and ``unbal_train`` when present):
``{split}_embeddings.npy`` uint8 [n, 10, 128] (zero-padded), ``{split}_n_frames.npy`` uint8 [n],
``{split}_labels.npy`` bool [n, 527] (multi-hot over class_labels_indices.csv),
``{split}_video_ids.npy`` str [n], ``{split}_start.npy`` / ``{split}_end.npy`` float32 [n].
Also copies ``class_labels_indices.csv`` and ``ontology.json``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path
from typing import Mapping

import numpy as np

from data_recipes.framework import (
    Fetched,
    MalformedDataError,
    Recipe,
    SourceFile,
    Variant,
    atomic_save_npy,
    read_source_bytes,
    require,
)
from data_recipes.tfrecord import check_crcs, parse_sequence_example, split_records

N_CLASSES = 527
N_FRAMES = 10
DIM = 128
SPLITS = ("bal_train", "eval", "unbal_train")
_CSV = "http://storage.googleapis.com/us_audioset/youtube_corpus/v1/csv/"
LABELS = SourceFile(
    "class_labels_indices.csv",
    urls=(_CSV + "class_labels_indices.csv",),
    sha256="cdd1049833c4b86127c2773ac0d14a2754b6a6d0d1798002ed5c66e699708429",
)
ONTOLOGY = SourceFile(
    "ontology.json",
    urls=("https://raw.githubusercontent.com/audioset/ontology/master/ontology.json",),
    sha256="d305439cfa218558c4ed295883fb77894ff7c58ae0082a5bb635bcf3f72c786a",
)
BAL_SEGMENTS = SourceFile(
    "balanced_train_segments.csv",
    urls=(_CSV + "balanced_train_segments.csv",),
    sha256="3b83e5ff9ed72cfda37d4e36ce08250e107c1ea70f109f6ab6668ac200db5e94",
)
MIRROR_TAR = SourceFile(
    "features_bal_train_eval.tar.gz", sha256="75efc51a976f280180972271226517ef668ee18d3485f013b55ca197f2a2f8c3"
)
FULL_TAR = SourceFile(
    "features.tar.gz",
    urls=("http://storage.googleapis.com/eu_audioset/youtube_corpus/v1/features/features.tar.gz",),
    large=True,
    size=2_400_000_000,
)
#: split -> expected clips, checked exactly (None: not checked exactly)
EXPECTED = {"bal_train": 22160, "eval": 20371, "unbal_train": None}
#: unbalanced_train_segments.csv of release v1 lists 2,042,985 segments; the embeddings of a few are
#: missing from features.tar.gz, so this size is checked with the framework's tolerance, not exactly
UNBAL_TRAIN_SEGMENTS = 2_042_985
_BAL_EVAL = {"bal_train": EXPECTED["bal_train"], "eval": EXPECTED["eval"]}
VARIANTS = (
    Variant(
        "bal_train_eval",
        (LABELS, ONTOLOGY, BAL_SEGMENTS, MIRROR_TAR),
        "bal_train (22,160 clips) + eval (20,371 clips); unbal_train not included",
        _BAL_EVAL,
    ),
    Variant(
        "full",
        (LABELS, ONTOLOGY, BAL_SEGMENTS, FULL_TAR),
        "full: bal_train + eval + unbal_train",
        {**_BAL_EVAL, "unbal_train": UNBAL_TRAIN_SEGMENTS},
    ),
)
_SPLIT_RE = re.compile(r"(?:^|/)audioset_v1_embeddings/([a-z_]+)/[^/]+\.tfrecord$")


def read_class_labels(data: bytes, *, where: str) -> list[tuple[str, str]]:
    """class_labels_indices.csv -> [(mid, display_name)] in index order (must be 0..526)."""
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise MalformedDataError(f"{where}: not a UTF-8 CSV ({exc})") from exc
    require(rows and rows[0] == ["index", "mid", "display_name"], f"{where}: expected header index,mid,display_name")
    out = []
    for i, row in enumerate(rows[1:]):
        require(len(row) == 3, f"{where}: row {i + 2} has {len(row)} columns, expected 3")
        require(row[0] == str(i), f"{where}: row {i + 2} has index {row[0]!r}, expected {i}")
        out.append((row[1], row[2]))
    require(len(out) == N_CLASSES, f"{where}: expected {N_CLASSES} classes, got {len(out)}")
    seen: dict[str, int] = {}
    for i, (mid, _) in enumerate(out):
        require(mid not in seen, f"{where}: row {i + 2} repeats class {mid!r} of row {seen.get(mid, 0) + 2}")
        seen[mid] = i
    return out


def read_ontology(data: bytes, *, where: str) -> list[dict]:
    """ontology.json -> its list of classes, each with a string ``id`` and ``name`` and a list ``child_ids``
    (the fields the subset rules read); MalformedDataError naming ``where`` otherwise."""
    try:
        entries = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedDataError(f"{where}: not valid JSON ({exc})") from exc
    require(isinstance(entries, list) and entries, f"{where}: expected a JSON list of classes")
    for i, e in enumerate(entries):
        require(
            isinstance(e, dict)
            and isinstance(e.get("id"), str)
            and isinstance(e.get("name"), str)
            and isinstance(e.get("child_ids"), list),
            f"{where}: entry {i} lacks a string id, a string name or a child_ids list",
        )
    return entries


def decode_records(payloads: list[bytes], names: list[str], n_classes: int = N_CLASSES) -> dict[str, np.ndarray]:
    """Decode Audio Set SequenceExamples into compact arrays (see module docstring)."""
    n = len(payloads)
    emb = np.zeros((n, N_FRAMES, DIM), dtype=np.uint8)
    n_frames = np.zeros(n, dtype=np.uint8)
    labels = np.zeros((n, n_classes), dtype=bool)
    vids = np.empty(n, dtype="<U16")
    start = np.zeros(n, dtype=np.float32)
    end = np.zeros(n, dtype=np.float32)
    for i, p in enumerate(payloads):
        try:
            ctx, lists = parse_sequence_example(p)
        except (IndexError, UnicodeDecodeError, MalformedDataError) as exc:
            raise MalformedDataError(f"{names[i]}: undecodable SequenceExample ({exc})") from exc
        frames = lists.get("audio_embedding")
        require(
            frames is not None and "video_id" in ctx and "labels" in ctx,
            f"{names[i]}: record lacks video_id, labels or audio_embedding",
        )
        require(len(frames) <= N_FRAMES, f"{names[i]}: {len(frames)} frames, expected at most {N_FRAMES}")
        for j, fr in enumerate(frames):
            require(len(fr) == 1 and len(fr[0]) == DIM, f"{names[i]}: frame {j} is not {DIM} bytes")
            emb[i, j] = np.frombuffer(fr[0], dtype=np.uint8)
        n_frames[i] = len(frames)
        lab = ctx["labels"]
        require(all(0 <= k < n_classes for k in lab), f"{names[i]}: label index outside 0..{n_classes - 1}")
        labels[i, lab] = True
        vids[i] = ctx["video_id"][0].decode("ascii")
        start[i] = ctx.get("start_time_seconds", [0.0])[0]
        end[i] = ctx.get("end_time_seconds", [0.0])[0]
    return {"embeddings": emb, "n_frames": n_frames, "labels": labels, "video_ids": vids, "start": start, "end": end}


def read_embeddings_tar(path: Path, *, where: str | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Stream a features tar(.gz) and return {split: arrays}; CRCs are verified per split."""
    where = where or str(path)
    per_split: dict[str, tuple[list, list, list, list, list]] = {}
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                m = _SPLIT_RE.search(member.name)
                if not member.isfile() or m is None:
                    continue
                split = m.group(1)
                require(split in SPLITS, f"{where}: unexpected split folder {split!r} ({member.name})")
                data = tar.extractfile(member).read()
                heads, payloads, lc, dc = split_records(data, where=f"{where}:{member.name}")
                acc = per_split.setdefault(split, ([], [], [], [], []))
                acc[0].extend(heads)
                acc[1].extend(payloads)
                acc[2].append(lc)
                acc[3].append(dc)
                acc[4].extend(f"{where}:{member.name} record {k}" for k in range(len(payloads)))
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise MalformedDataError(f"{where}: cannot read the tar archive ({exc}); truncated or corrupt") from exc
    require(per_split, f"{where}: no audioset_v1_embeddings/<split>/*.tfrecord files inside")
    out = {}
    for split, (heads, payloads, lc, dc, names) in per_split.items():
        check_crcs(heads, payloads, np.concatenate(lc), np.concatenate(dc), names)
        out[split] = decode_records(payloads, names)
    return out


def _prepare(fetched: Mapping[str, Fetched], out: Path, variant: Variant) -> dict:
    lab = fetched[LABELS.name]
    read_class_labels(read_source_bytes(lab.path), where=str(lab.path))
    onto = fetched[ONTOLOGY.name]
    read_ontology(read_source_bytes(onto.path), where=str(onto.path))
    shutil.copyfile(lab.path, out / LABELS.name)
    shutil.copyfile(onto.path, out / ONTOLOGY.name)
    tar = fetched[variant.files[-1].name]
    splits = read_embeddings_tar(tar.path)
    counts = {}
    for split, arrays in splits.items():
        expected = EXPECTED.get(split)
        n = len(arrays["labels"])
        require(expected is None or n == expected, f"{tar.path}: split {split} has {n} clips, expected {expected}")
        for key, arr in arrays.items():
            atomic_save_npy(out / f"{split}_{key}.npy", arr)
        counts[split] = {
            "clips": n,
            "labels_per_clip": round(float(arrays["labels"].sum(1).mean()), 4),
            "clips_with_fewer_than_10_frames": int((arrays["n_frames"] < N_FRAMES).sum()),
        }
    return counts


ARRAYS = ("embeddings", "n_frames", "labels", "video_ids", "start", "end")


def _verify(out: Path) -> None:
    """The prepared folder's structure: class list and ontology as :func:`read_class_labels` and
    :func:`read_ontology` accept them, and per split six arrays of one length with 527 label columns
    (memory-mapped: cheap enough to run before every load)."""
    read_class_labels((out / LABELS.name).read_bytes(), where=str(out / LABELS.name))
    read_ontology((out / ONTOLOGY.name).read_bytes(), where=str(out / ONTOLOGY.name))
    found = [s for s in SPLITS if (out / f"{s}_labels.npy").exists()]
    require(found, f"{out}: no split prepared")
    for s in found:
        arrays = {k: np.load(out / f"{s}_{k}.npy", mmap_mode="r") for k in ARRAYS}
        emb, lab = arrays["embeddings"], arrays["labels"]
        require(
            emb.shape[1:] == (N_FRAMES, DIM) and lab.shape == (emb.shape[0], N_CLASSES),
            f"{out}: {s}_embeddings.npy {emb.shape} and {s}_labels.npy {lab.shape} do not match "
            f"[n, {N_FRAMES}, {DIM}] and [n, {N_CLASSES}]",
        )
        lengths = {k: a.shape[0] for k, a in arrays.items()}
        require(len(set(lengths.values())) == 1, f"{out}: the {s} arrays disagree on the number of clips {lengths}")


def _measure(out: Path) -> dict[str, int]:
    """Clips per prepared split."""
    return {
        s: int(np.load(out / f"{s}_labels.npy", mmap_mode="r").shape[0])
        for s in SPLITS
        if (out / f"{s}_labels.npy").is_file()
    }


RECIPE = Recipe(
    name="audioset",
    folder="audioset",
    version="1",
    title="Audio Set v1: VGGish embeddings, labels, ontology",
    variants=VARIANTS,
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get=(
        "put class_labels_indices.csv, ontology.json, balanced_train_segments.csv and "
        "features_bal_train_eval.tar.gz (or the official features.tar.gz) into $PATE_STUDY_MIRROR/audioset/; "
        "or run `python -m data_recipes prepare audioset --allow-large` to download features.tar.gz (~2.4 GB)"
    ),
    licence="CC BY 4.0 (Google)",
)


def read_embeddings_tar_bytes_for_test(data: bytes) -> dict[str, dict[str, np.ndarray]]:
    """:func:`read_embeddings_tar` on in-memory tar bytes (tests and fixtures)."""
    with tempfile.NamedTemporaryFile(suffix=".tar.gz") as f:
        f.write(data)
        f.flush()
        return read_embeddings_tar(Path(f.name))
