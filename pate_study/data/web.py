"""Web requests: CSIC 2010, ECML/PKDD 2007 and Malicious URLs, merged as in MAKE 2021 §4.2.

MAKE 2021: "To merge the datasets, only the URL of each web request was used"; 651,602 requests,
about 95% benign. :func:`load` merges whatever sources are prepared or in the mirror and reports
the sources and the balance it actually has (CSIC 2010 alone: 25.8% anomalous).

Merged table columns: ``url`` (str), ``label`` (0 benign, 1 malicious/anomalous), ``source``
(data_recipes name or "synthetic"). For CSIC 2010 the URL of a POST/PUT request carries its
body as a query string (our choice: the form parameters are where the attacks are).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pate_study.data import DataSource, manifest_origin, read_manifest, resolve_source

SOURCES = ("csic2010", "ecml-pkdd2007", "malicious-urls")
NAMES = {"csic2010": "CSIC 2010", "ecml-pkdd2007": "ECML/PKDD 2007", "malicious-urls": "Malicious URLs"}
COLUMNS = ["url", "label", "source"]


@dataclass(frozen=True)
class WebRequests:
    """frame: DataFrame[url, label, source]; sources: the data_recipes names actually merged."""

    frame: pd.DataFrame
    sources: tuple[str, ...]
    source: DataSource
    origins: dict = field(default_factory=dict)


def _read(name: str, folder) -> pd.DataFrame:
    if name == "csic2010":
        df = pd.read_csv(folder / "requests.csv", keep_default_na=False)
        return pd.DataFrame({"url": df["request"], "label": df["label"], "source": name})
    if name == "ecml-pkdd2007":
        df = pd.read_csv(folder / "requests.csv", keep_default_na=False)
        return pd.DataFrame({"url": df["url"], "label": df["label"], "source": name})
    df = pd.read_csv(folder / "urls.csv", keep_default_na=False)
    return pd.DataFrame({"url": df["url"], "label": df["label"], "source": name})


_PATHS = [
    "/index.jsp",
    "/tienda1/publico/anadir.jsp",
    "/shop/cart.php",
    "/search",
    "/products/view",
    "/account/login",
    "/blog/2021/05/post.html",
    "/images/logo.png",
    "/api/v1/items",
    "/contact",
]
_PARAMS = ["id", "q", "page", "nombre", "precio", "cantidad", "user", "lang", "sort", "ref"]
_WORDS = ["vino", "rioja", "shoes", "book", "red", "summer", "es", "en", "asc", "home", "jamon", "queso"]
_ATTACKS = {
    "sqli": ["' OR '1'='1", "1; DROP TABLE users--", "' UNION SELECT password FROM users--", "1' AND SLEEP(5)--"],
    "xss": ["<script>alert(1)</script>", '"><img src=x onerror=alert(document.cookie)>', "javascript:alert('x')"],
    "traversal": ["../../../../etc/passwd", "..%2f..%2f..%2fwindows%2fwin.ini", "....//....//etc/shadow"],
    "cmdi": ["; cat /etc/passwd", "| ls -la", "`id`", "&& ping -c 1 10.0.0.1"],
}


def synthetic(n: int = 5000, *, anomalous_fraction: float = 0.05, seed: int = 0) -> pd.DataFrame:
    """Benign URLs (paths, parameters, words) and attacks (SQL injection, XSS, path traversal,
    command injection payloads in a parameter); ``anomalous_fraction`` default 5% (MAKE 2021)."""
    if not 0 <= anomalous_fraction <= 1:
        raise ValueError(f"anomalous_fraction={anomalous_fraction}: expected a value in [0, 1]")
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < anomalous_fraction).astype(int)
    kinds = list(_ATTACKS)
    urls = []
    for lab in labels:
        path = _PATHS[rng.integers(len(_PATHS))]
        k = int(rng.integers(0, 4))
        params = [
            f"{_PARAMS[rng.integers(len(_PARAMS))]}={_WORDS[rng.integers(len(_WORDS))]}{rng.integers(100)}"
            for _ in range(k)
        ]
        if lab:
            kind = kinds[rng.integers(len(kinds))]
            payload = _ATTACKS[kind][rng.integers(len(_ATTACKS[kind]))]
            params.insert(int(rng.integers(0, len(params) + 1)), f"{_PARAMS[rng.integers(len(_PARAMS))]}={payload}")
        urls.append("http://localhost:8080" + path + ("?" + "&".join(params) if params else ""))
    return pd.DataFrame({"url": urls, "label": labels, "source": "synthetic"})


def load(
    data: str = "auto",
    *,
    sources: tuple[str, ...] = SOURCES,
    seed: int = 0,
    n_synthetic: int = 5000,
    anomalous_fraction: float = 0.05,
) -> WebRequests:
    """Merged (url, label, source) table from the available ``sources`` (or the synthetic stand-in).

    ``real``: FileNotFoundError when none of ``sources`` is available; missing ones are named in
    the DataSource description.
    """
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"sources={sources!r}: unknown {sorted(unknown)}; expected a subset of {SOURCES}")
    found, origins = {}, {}
    if data != "synthetic":
        errors = []
        for name in sources:
            try:
                folder = resolve_source(name, data)
            except FileNotFoundError as exc:
                errors.append(str(exc))
                continue
            if folder is not None:
                found[name] = folder
                origins[name] = manifest_origin(read_manifest(folder))
        if data == "real" and not found:
            raise FileNotFoundError("no web-request dataset is available: " + " | ".join(errors))
    else:
        resolve_source(sources[0] if sources else "csic2010", "synthetic")  # validates `data`
    if not found:
        frame = synthetic(n_synthetic, anomalous_fraction=anomalous_fraction, seed=seed)
        src = DataSource(
            "synthetic",
            "web requests (CSIC 2010 / ECML-PKDD 2007 / Malicious URLs)",
            f"seed {seed}, {len(frame):,} requests ({frame['label'].mean():.1%} malicious)",
            f"seed {seed}",
        )
        return WebRequests(frame, (), src)
    frame = pd.concat([_read(n, f) for n, f in found.items()], ignore_index=True)[COLUMNS]
    missing = [NAMES[n] for n in sources if n not in found]
    name = " + ".join(NAMES[n] for n in found)
    desc = (
        f"{len(frame):,} requests ({frame['label'].mean():.1%} "
        f"{'anomalous' if list(found) == ['csic2010'] else 'malicious'})"
    )
    if missing:
        desc += f"; not available: {', '.join(missing)}"
    origin = "+".join(sorted(set(origins.values())))
    scale = "full" if not missing else f"{len(found)} of {len(sources)} sources"
    return WebRequests(frame, tuple(found), DataSource("real", name, desc, scale, origin), origins)


def load_csic2010(data: str = "auto", *, seed: int = 0, n_synthetic: int = 5000) -> WebRequests:
    """CSIC 2010 alone (about 26% anomalous); the synthetic stand-in uses that balance."""
    return load(data, sources=("csic2010",), seed=seed, n_synthetic=n_synthetic, anomalous_fraction=25065 / 97065)
