"""Recipe: ECG Heartbeat Categorization Dataset, MIT-BIH part (Kachuee, Fazeli, Sarrafzadeh 2018).

Rows: 187 samples in [0, 1] (125 Hz, zero-padded) then the class 0..4 = N, S, V, F, Q; no header.
Variants, tried mirror first and in this order:

- ``full-csv``: ``mitbih_train.csv`` (87,554 rows) and ``mitbih_test.csv`` (21,892) as on Kaggle
  (``shayanfazeli/heartbeat``; account needed, so mirror only);
- ``full-zip``: the same files zipped, public plain-HTTP copies in GitHub
  csuustc/ECG-Heartbeat-Classification;
- ``sample``: the project mirror's stratified sample, ``mitbih_{train,test}_sample.csv``
  (500 rows each, 100 per class).

No SHA-256 is published for the full files: they are accepted unverified (hash recorded in
MANIFEST.json) and checked by shape, row count and value range.

Prepared: ``{train,test}_X.npy`` float32 [n, 187] and ``{train,test}_y.npy`` int64 [n].
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

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

N_SAMPLES = 187
CLASS_NAMES = ("N", "S", "V", "F", "Q")
_GH = "https://github.com/csuustc/ECG-Heartbeat-Classification/raw/master/"
#: source file -> expected rows (None: not checked)
EXPECTED_ROWS = {
    "mitbih_train.csv": 87554,
    "mitbih_test.csv": 21892,
    "mitbih_train.csv.zip": 87554,
    "mitbih_test.csv.zip": 21892,
    "mitbih_train_sample.csv": 500,
    "mitbih_test_sample.csv": 500,
}
_FULL = {"train": EXPECTED_ROWS["mitbih_train.csv"], "test": EXPECTED_ROWS["mitbih_test.csv"]}
VARIANTS = (
    Variant("full-csv", (SourceFile("mitbih_train.csv"), SourceFile("mitbih_test.csv")), "full", _FULL),
    Variant(
        "full-zip",
        (
            SourceFile("mitbih_train.csv.zip", urls=(_GH + "mitbih_train.csv.zip",)),
            SourceFile("mitbih_test.csv.zip", urls=(_GH + "mitbih_test.csv.zip",)),
        ),
        "full",
        _FULL,
    ),
    Variant(
        "sample",
        (
            SourceFile(
                "mitbih_train_sample.csv", sha256="b968670d311117c06df6fc74f42a15e8392b68f7330a1cc77de2aec2af431061"
            ),
            SourceFile(
                "mitbih_test_sample.csv", sha256="ef6b9661bf4fddb14838cf9c3a108c6982b04f750bef2aa59c551f344ef4f607"
            ),
        ),
        "stratified sample: 500 + 500 rows, 100 per class (not the full 109,446 beats)",
        {"train": EXPECTED_ROWS["mitbih_train_sample.csv"], "test": EXPECTED_ROWS["mitbih_test_sample.csv"]},
    ),
)


def parse_csv(data: bytes, *, where: str = "<csv>") -> tuple[np.ndarray, np.ndarray]:
    """Parse MIT-BIH rows: 188 numeric columns, values in [0, 1], last column an integer class 0..4."""
    try:
        df = pd.read_csv(io.BytesIO(data), header=None, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise MalformedDataError(f"{where}: not a readable CSV ({exc}); expected {N_SAMPLES + 1} columns") from exc
    require(
        df.shape[1] == N_SAMPLES + 1,
        f"{where}: expected {N_SAMPLES + 1} columns (187 samples + label), got {df.shape[1]}",
    )
    values = df.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.argwhere(~np.isfinite(values))
    require(
        bad.size == 0,
        f"{where}: non-numeric value at row {bad[0][0] + 1 if bad.size else 0}, "
        f"column {bad[0][1] + 1 if bad.size else 0}",
    )
    x, y = values[:, :N_SAMPLES], values[:, N_SAMPLES]
    require(bool(((x >= 0) & (x <= 1)).all()), f"{where}: samples outside [0, 1]")
    require(bool(np.isin(y, np.arange(5)).all()), f"{where}: labels must be integers 0..4 (N, S, V, F, Q)")
    return x.astype(np.float32), y.astype(np.int64)


def _read(f: Fetched) -> bytes:
    if f.spec.name.endswith(".zip"):
        try:
            with zipfile.ZipFile(f.path) as z:
                inner = f.spec.name[: -len(".zip")]
                require(inner in z.namelist(), f"{f.path}: zip has no member {inner}")
                return z.read(inner)
        except zipfile.BadZipFile as exc:
            raise MalformedDataError(f"{f.path}: not a valid zip ({exc})") from exc
    return read_source_bytes(f.path)


def _prepare(fetched: Mapping[str, Fetched], out: Path, variant: Variant) -> dict:
    counts = {}
    for split, spec in zip(("train", "test"), variant.files):
        f = fetched[spec.name]
        x, y = parse_csv(_read(f), where=str(f.path))
        expected = EXPECTED_ROWS.get(spec.name)
        require(expected is None or len(y) == expected, f"{f.path}: expected {expected} rows, got {len(y)}")
        atomic_save_npy(out / f"{split}_X.npy", x)
        atomic_save_npy(out / f"{split}_y.npy", y)
        counts[split] = {"rows": int(len(y)), "per_class": {c: int((y == i).sum()) for i, c in enumerate(CLASS_NAMES)}}
    return counts


def _verify(out: Path) -> None:
    for split in ("train", "test"):
        x, y = (np.load(out / f"{split}_{k}.npy", mmap_mode="r") for k in ("X", "y"))  # header only: cheap
        require(x.ndim == 2 and x.shape[1] == N_SAMPLES and len(x) == len(y), f"{out}: bad {split} arrays")


def _measure(out: Path) -> dict[str, int]:
    """Beats per prepared split."""
    return {
        s: int(np.load(out / f"{s}_y.npy", mmap_mode="r").shape[0])
        for s in ("train", "test")
        if (out / f"{s}_y.npy").is_file()
    }


RECIPE = Recipe(
    name="ecg-heartbeat",
    folder="ecg-heartbeat",
    version="1",
    title="ECG Heartbeat Categorization Dataset (MIT-BIH part)",
    variants=VARIANTS,
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get=(
        "full files: downloaded from github.com/csuustc/ECG-Heartbeat-Classification (zips), or "
        "put mitbih_train.csv and mitbih_test.csv from Kaggle 'shayanfazeli/heartbeat' into "
        "$PATE_STUDY_MIRROR/ecg-heartbeat/"
    ),
    licence="MIT-BIH: ODC-By 1.0",
)
