"""Recipe: ECML/PKDD 2007 Discovery Challenge web-traffic data (LIRMM; Raïssi, Brissaud et al.).

XML: ``<dataset>`` of ``<sample id="...">`` elements, each with ``<reqContext>`` (os, webserver,
runningLdap, runningSqlDb, runningXpath), ``<class>`` (``<type>``: Valid or one of the 7 attack
classes XSS, SqlInjection, LdapInjection, XPathInjection, PathTransversal, OsCommanding, SSI;
``<inContext>``) and ``<request>`` (method, protocol, uri, query, headers, body; text often in
CDATA). Published counts: 35,006 valid and 15,110 attacks. No stable public URL or published
SHA-256 is known: the file must be placed in the mirror (accepted unverified; its hash is
recorded in MANIFEST.json).

Prepared: ``requests.csv`` with columns method, uri, query, url, attack_type, label, id.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Mapping

import pandas as pd

from data_recipes.framework import Fetched, MalformedDataError, Recipe, SourceFile, Variant, read_source_bytes, require

FILES = (SourceFile("learning_dataset.xml"),)
ATTACK_CLASSES = ("XSS", "SqlInjection", "LdapInjection", "XPathInjection", "PathTransversal", "OsCommanding", "SSI")
CLASSES = ("Valid",) + ATTACK_CLASSES
COLUMNS = ["method", "uri", "query", "url", "attack_type", "label", "id"]
#: published counts (challenge description; data card of csic2010 lists them)
PUBLISHED = {"valid": 35006, "attacks": 15110}


def _text(elem, path: str) -> str:
    node = elem.find(path)
    return "" if node is None or node.text is None else node.text.strip()


def _declares_entities(data: bytes) -> bool:
    """Whether the XML declares entities (the "billion laughs" bomb and external entities need them); checked in
    the encodings an XML file may use without a declaration (UTF-8, UTF-16 either way)."""
    return any(
        marker in data for marker in (b"<!ENTITY", "<!ENTITY".encode("utf-16-le"), "<!ENTITY".encode("utf-16-be"))
    )


def parse_xml(data: bytes, *, where: str = "<xml>") -> pd.DataFrame:
    """Parse the challenge XML into one row per sample (columns: see module docstring).

    ``url`` = uri, plus ``?query`` when the query is non-empty. MalformedDataError on XML
    syntax errors (a truncated file included), entity declarations (an expansion bomb: refused before parsing;
    expat's own amplification limit is the second guard), a sample without ``<class><type>``/``<request><uri>``,
    or an unknown class.
    """
    require(
        not _declares_entities(data),
        f"{where}: declares XML entities (<!ENTITY ...>), which the challenge "
        "file never does; refused (entity expansion can exhaust memory)",
    )
    rows = []
    try:
        for _, elem in ET.iterparse(io.BytesIO(data), events=("end",)):
            if elem.tag != "sample":
                continue
            sid = elem.get("id", "")
            kind = _text(elem, "class/type")
            uri = _text(elem, "request/uri")
            require(kind != "", f"{where}: sample id={sid!r} has no <class><type>")
            require(
                kind in CLASSES, f"{where}: sample id={sid!r} has unknown class {kind!r}; expected one of {CLASSES}"
            )
            require(uri != "", f"{where}: sample id={sid!r} has no <request><uri>")
            query = _text(elem, "request/query")
            url = uri + ("?" + query if query else "")
            rows.append((_text(elem, "request/method"), uri, query, url, kind, int(kind != "Valid"), sid))
            elem.clear()
    except ET.ParseError as exc:  # also expat's "limit on input amplification factor ... breached"
        raise MalformedDataError(f"{where}: not well-formed XML ({exc})") from exc
    require(len(rows) > 0, f"{where}: no <sample> elements found")
    return pd.DataFrame(rows, columns=COLUMNS)


def _prepare(fetched: Mapping[str, Fetched], out: Path, variant: Variant) -> dict:
    f = fetched[FILES[0].name]
    df = parse_xml(read_source_bytes(f.path), where=str(f.path))
    df.to_csv(out / "requests.csv", index=False)
    return {
        "total": len(df),
        "attacks": int(df["label"].sum()),
        "classes": {k: int(v) for k, v in df["attack_type"].value_counts().items()},
    }


def _verify(out: Path) -> None:
    df = pd.read_csv(out / "requests.csv", keep_default_na=False)
    require(list(df.columns) == COLUMNS, f"{out}/requests.csv: bad columns")


def _measure(out: Path) -> dict[str, int]:
    """Valid and attack samples in the prepared table."""
    label = pd.read_csv(out / "requests.csv", keep_default_na=False, usecols=["label"])["label"]
    return {"valid": int((label == 0).sum()), "attacks": int((label == 1).sum())}


RECIPE = Recipe(
    name="ecml-pkdd2007",
    folder="ecml-pkdd2007",
    version="1",
    title="ECML/PKDD 2007 Discovery Challenge (web traffic)",
    variants=(Variant("full", FILES, "full", sizes=PUBLISHED),),
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get=(
        "obtain the challenge's learning dataset XML (ECML/PKDD 2007 Discovery Challenge, LIRMM; "
        "copies circulate on GitHub) and save it as $PATE_STUDY_MIRROR/ecml-pkdd2007/learning_dataset.xml"
    ),
    licence="research use (challenge data)",
)
