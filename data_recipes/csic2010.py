"""Recipe: HTTP DATASET CSIC 2010 (Torrano-Giménez, Pérez-Villegas, Álvarez; CSIC, 2010).

Three raw-HTTP files: ``normalTrafficTraining.txt`` (36,000 normal), ``normalTrafficTest.txt``
(36,000 normal), ``anomalousTrafficTest.txt`` (25,065 anomalous). Requests follow each other,
separated by blank lines; a POST body is the first non-empty line(s) after the header block.
The official site (www.isi.csic.es/dataset/) serves plain ``.txt``; the project mirror holds
gzip copies. SHA-256 of both forms: the project's datasets README.

Prepared: ``requests.csv`` with columns method, url, body, request, label (0 normal,
1 anomalous), file. ``request`` is the URL with, for POST/PUT, the body appended as a
query string (``?`` or ``&``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

import pandas as pd

from data_recipes.framework import Fetched, MalformedDataError, Recipe, SourceFile, Variant, read_source_bytes, require

_BASE = "https://www.isi.csic.es/dataset/"
FILES = (
    SourceFile(
        "normalTrafficTraining.txt",
        urls=(_BASE + "normalTrafficTraining.txt",),
        sha256="d3344377d4721b03b906ca232ab44bfd81b9c1356f967ec9d348532ec420f000",
        alt_sha256=("d97103561a8d31e40835f0dc780c55a154f47f1abb40201031bf44b6b902fd24",),
        size=20_640_988,
    ),
    SourceFile(
        "normalTrafficTest.txt",
        urls=(_BASE + "normalTrafficTest.txt",),
        sha256="f4526669566789be7fd99f79e1bc2989ab39e74ab7ed5d667621fe23dce4ea6f",
        alt_sha256=("aee5cbf71d2dc8c07d8a5a5ea44f0ff6a599772ddfe9099d8713285f3bfbe446",),
        size=20_599_204,
    ),
    SourceFile(
        "anomalousTrafficTest.txt",
        urls=(_BASE + "anomalousTrafficTest.txt",),
        sha256="ec77d784966896330869c5b596ede6a716101c14b5f139144915bb10822a03e1",
        alt_sha256=("b2808ca68b0f8398627b64a7e2190fa295bea8f54e0f3d51061229ce199da462",),
        size=16_090_299,
    ),
)
#: file -> (label, expected number of requests); None skips the count check
EXPECTED = {
    "normalTrafficTraining.txt": (0, 36000),
    "normalTrafficTest.txt": (0, 36000),
    "anomalousTrafficTest.txt": (1, 25065),
}
COLUMNS = ["method", "url", "body", "request", "label", "file"]

_REQUEST_LINE = re.compile(
    r"^(GET|POST|PUT|DELETE|HEAD|OPTIONS|TRACE|PATCH|CONNECT) (\S+) (HTTP/\d\.\d)\r?$", re.MULTILINE
)


def parse_requests(text: str, *, where: str = "<text>") -> pd.DataFrame:
    """Split a CSIC 2010 file into requests; return columns method, url, body, request.

    Each request starts with a request line ``METHOD URL HTTP/x.y`` at the start of a line.
    The header block ends at the first blank line; whatever non-blank text follows before
    the next request line is the body (POST/PUT form data), joined with ``&`` if it spans
    several lines. Raises MalformedDataError when no request line is found or a POST has
    headers that never end.
    """
    matches = list(_REQUEST_LINE.finditer(text))
    require(len(matches) > 0, f"{where}: no HTTP request line (e.g. 'GET http://... HTTP/1.1') found")
    require(
        text[: matches[0].start()].strip() == "",
        f"{where}: unexpected text before the first request line: {text[:60]!r}",
    )
    rows = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        block = text[m.end() : end].replace("\r\n", "\n").lstrip("\n")
        head, sep, rest = block.partition("\n\n")
        if not sep and m.group(1) in ("POST", "PUT"):
            raise MalformedDataError(
                f"{where}: request {i} ({m.group(1)} {m.group(2)[:60]}) has no blank line "
                "after its headers (truncated file?)"
            )
        body = "&".join(line.strip() for line in rest.split("\n") if line.strip())
        url = m.group(2)
        request = url
        if body:
            request = url + ("&" if "?" in url else "?") + body
        rows.append((m.group(1), url, body, request))
    return pd.DataFrame(rows, columns=["method", "url", "body", "request"])


def _prepare(fetched: Mapping[str, Fetched], out: Path, variant: Variant) -> dict:
    frames, counts = [], {}
    for spec in variant.files:
        f = fetched[spec.name]
        text = read_source_bytes(f.path).decode("latin-1")
        df = parse_requests(text, where=str(f.path))
        label, expected = EXPECTED[spec.name]
        require(expected is None or len(df) == expected, f"{f.path}: expected {expected} requests, parsed {len(df)}")
        df["label"] = label
        df["file"] = spec.name
        frames.append(df)
        counts[spec.name] = len(df)
    table = pd.concat(frames, ignore_index=True)[COLUMNS]
    table.to_csv(out / "requests.csv", index=False)
    counts["total"] = len(table)
    counts["anomalous"] = int(table["label"].sum())
    counts["methods"] = {k: int(v) for k, v in table["method"].value_counts().items()}
    return counts


def _verify(out: Path) -> None:
    columns = list(pd.read_csv(out / "requests.csv", nrows=0).columns)
    require(columns == COLUMNS, f"{out}/requests.csv: bad columns {columns}")
    labels = pd.read_csv(out / "requests.csv", keep_default_na=False, usecols=["label"])["label"]
    require(set(labels.unique()) <= {0, 1}, f"{out}/requests.csv: labels outside {{0, 1}}")


def _measure(out: Path) -> dict[str, int]:
    """Requests per source file in the prepared table."""
    files = pd.read_csv(out / "requests.csv", keep_default_na=False, usecols=["file"])["file"]
    return {k: int(v) for k, v in files.value_counts().items()}


RECIPE = Recipe(
    name="csic2010",
    folder="csic2010",
    version="1",
    title="HTTP DATASET CSIC 2010",
    variants=(Variant("full", FILES, "full", sizes={k: n for k, (_, n) in EXPECTED.items()}),),
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get=(
        "download the three .txt files from https://www.isi.csic.es/dataset/ (plain or gzipped) "
        "into $PATE_STUDY_MIRROR/csic2010/, then `make data-csic2010`"
    ),
    licence="publicly available for research (CSIC)",
)
