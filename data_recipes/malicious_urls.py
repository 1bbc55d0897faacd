"""Recipe: Malicious URLs dataset (Kaggle ``sid321axn/malicious-urls-dataset``, ``malicious_phish.csv``).

CSV with a header and two columns ``url,type``; ``type`` is benign, defacement, phishing or
malware; 651,191 rows. Rows whose URL is empty (or only whitespace) are dropped and counted in
the manifest (``dropped_empty_url``). Kaggle needs an account, so the file must be placed in the mirror
(accepted unverified; its SHA-256 is recorded in MANIFEST.json).

Prepared: ``urls.csv`` with columns url, type, label (0 benign, 1 otherwise).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Mapping

import pandas as pd

from data_recipes.framework import Fetched, MalformedDataError, Recipe, SourceFile, Variant, read_source_bytes, require

FILES = (SourceFile("malicious_phish.csv"),)
TYPES = ("benign", "defacement", "phishing", "malware")
PUBLISHED_ROWS = 651_191


def parse_csv(data: bytes, *, where: str = "<csv>") -> pd.DataFrame:
    """Parse ``malicious_phish.csv``: a header ``url,type`` and rows of exactly those two fields (a row with an
    extra field is refused, not read with its first field as an index); known types only; empty URLs dropped
    (``df.attrs["dropped_empty_url"]`` counts them); at least one row left. MalformedDataError names ``where``.
    """
    try:
        raw = pd.read_csv(
            io.BytesIO(data), dtype=str, keep_default_na=False, encoding="utf-8", encoding_errors="replace", header=None
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise MalformedDataError(f"{where}: not a readable CSV of 2 fields per row ({exc})") from exc
    header = [str(c).strip() for c in raw.iloc[0]] if len(raw) else []
    require(header == ["url", "type"], f"{where}: expected the 2 columns ['url', 'type'], got {header}")
    df = raw.iloc[1:].set_axis(["url", "type"], axis=1).reset_index(drop=True)
    require(len(df) > 0, f"{where}: the header has no rows below it")
    empty = df["url"].str.strip() == ""
    df = df.loc[~empty].reset_index(drop=True)
    df.attrs["dropped_empty_url"] = int(empty.sum())
    require(len(df) > 0, f"{where}: every one of the {int(empty.sum())} rows has an empty URL")
    bad = ~df["type"].isin(TYPES)
    require(
        not bad.any(),
        f"{where}: {int(bad.sum())} rows with an unknown type (first: "
        f"{df.loc[bad, 'type'].iloc[0] if bad.any() else ''!r}); expected {TYPES}",
    )
    df["label"] = (df["type"] != "benign").astype(int)
    return df


def _prepare(fetched: Mapping[str, Fetched], out: Path, variant: Variant) -> dict:
    f = fetched[FILES[0].name]
    df = parse_csv(read_source_bytes(f.path), where=str(f.path))
    df.to_csv(out / "urls.csv", index=False)
    return {
        "total": len(df),
        "malicious": int(df["label"].sum()),
        "dropped_empty_url": df.attrs["dropped_empty_url"],
        "types": {k: int(v) for k, v in df["type"].value_counts().items()},
    }


def _verify(out: Path) -> None:
    df = pd.read_csv(out / "urls.csv", keep_default_na=False, nrows=5)
    require(list(df.columns) == ["url", "type", "label"], f"{out}/urls.csv: bad columns")


def _measure(out: Path) -> dict[str, int]:
    """Rows of the prepared table."""
    return {"urls": len(pd.read_csv(out / "urls.csv", keep_default_na=False, usecols=["label"]))}


RECIPE = Recipe(
    name="malicious-urls",
    folder="malicious-urls",
    version="1",
    title="Malicious URLs dataset (malicious_phish.csv)",
    variants=(Variant("full", FILES, "full", sizes={"urls": PUBLISHED_ROWS}),),
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get=(
        "download malicious_phish.csv from https://www.kaggle.com/datasets/sid321axn/malicious-urls-dataset "
        "(Kaggle account needed) into $PATE_STUDY_MIRROR/malicious-urls/"
    ),
    licence="as stated on the Kaggle dataset page (not verified here)",
)
