"""Data-recipe framework: the only code in the project that downloads.

A :class:`Recipe` declares the files a dataset is made of (:class:`SourceFile`:
official URLs and SHA-256) grouped in :class:`Variant` s (e.g. the full ECG files
or the 500-row sample that the mirror holds), and a ``prepare`` function that turns
the verified source files into arrays under ``$PATE_STUDY_DATA/<name>/``.

Lookup order for every file: the local mirror folder named by ``PATE_STUDY_MIRROR``
(layout ``<mirror>/<recipe.folder>/<file>``; the file is looked up by name, by
name + ``.gz`` and by name without ``.gz``), then the network (``urllib``; a
``.part`` file is resumed with an HTTP ``Range`` request and the SHA-256 is verified
before the file is renamed into place).

A mirror copy is accepted when the SHA-256 of its bytes, or of its gunzipped
content, equals one of the declared hashes of the file (``sha256`` of the served
form, ``alt_sha256`` of its compressed/uncompressed forms).

Preparation is atomic at the folder level: the recipe writes into a temporary
sibling folder, the result is verified, and only then swapped in place of the
previous prepared folder. Any failure leaves the previous folder untouched.

Before the swap the framework also checks that the result is complete: every item the variant
promises (``Variant.sizes``: split -> size declared by the data card) must be present in what
``Recipe.measure`` reads back from the written files, non-empty, and at least ``MIN_FRACTION`` of its
declared size (exactly the declared size is not required: a newer release may differ a little). An
incomplete result raises :class:`IncompleteDataError` and nothing is replaced; ``allow_small=True``
(``--allow-small``) installs a non-empty but small result anyway, recorded in the manifest. The same
check runs on an already prepared folder (:meth:`Recipe.problem`), so an incomplete folder left by an
older version is never served as the dataset.

Messages of every error here are one line (file, problem, fix).
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import json
import logging
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np
from tqdm.auto import tqdm

from data_recipes.files import (
    DATA_ENV,
    MIRROR_ENV,
    WriteFailedError,
    atomic_write,
    check_writable,
    data_dir,
    describe_path,
    mirror_dir,
    no_room,
    one_line,
    replace_folder,
    sha256_file,
    shown_path,
    write_failure,
)

logger = logging.getLogger(__name__)

ALLOW_LARGE_ENV = "PATE_STUDY_ALLOW_LARGE"
MANIFEST_NAME = "MANIFEST.json"
_CHUNK = 1 << 20
#: a prepared item smaller than this fraction of its declared size is refused (unless allow_small)
MIN_FRACTION = 0.9


# --------------------------------------------------------------------------- errors
class DataError(ValueError):
    """Base class: source data are corrupt or malformed (exit code 1 in the CLI). Message: one line."""

    def __init__(self, message: object = ""):
        super().__init__(one_line(message))


class ChecksumError(DataError):
    """A file's SHA-256 differs from every declared hash."""


class MalformedDataError(DataError):
    """A file has the right name (and possibly hash) but its content is unusable."""


class IncompleteDataError(DataError):
    """The prepared result lacks a promised item, or an item is empty or much smaller than declared."""


class NotAvailableError(FileNotFoundError):
    """The files are neither in the mirror nor reachable on the network (message: one line).

    Not an error of the data: ``prepare all`` reports it and goes on; ``prepare NAME`` exits 3.
    """

    def __init__(self, message: object = ""):
        super().__init__(one_line(message))


# --------------------------------------------------------------------------- paths
def data_root() -> Path:
    """Where prepared data live: ``$PATE_STUDY_DATA``, else ``<repo>/data``, else ``~/.cache/pate_study/data``.

    Checked by :func:`data_recipes.files.data_dir` (EnvPathError naming the variable when it is a file).
    """
    return data_dir()


def mirror_root() -> Path | None:
    """The mirror folder named by ``$PATE_STUDY_MIRROR`` (None when unset; EnvPathError when not a folder)."""
    return mirror_dir()


def prepared_dir(name: str) -> Path:
    """The prepared folder of recipe ``name`` (may not exist)."""
    return data_root() / name


# --------------------------------------------------------------------------- hashing
def sha256_gunzipped(path: Path) -> str | None:
    """SHA-256 of a gzip file's decompressed content; None if the file is not valid gzip."""
    h = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as f:
            for block in iter(lambda: f.read(_CHUNK), b""):
                h.update(block)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    return h.hexdigest()


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes."""
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def open_source(path: Path):
    """Open a source file for binary reading, transparently gunzipping ``.gz`` content."""
    if is_gzip(path):
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_source_bytes(path: Path) -> bytes:
    """Whole (decompressed) content of a source file; a truncated gzip raises MalformedDataError."""
    try:
        with open_source(path) as f:
            return f.read()
    except (EOFError, OSError, gzip.BadGzipFile) as exc:
        raise MalformedDataError(f"{path}: cannot decompress ({exc}); the file is truncated or corrupt") from exc


# --------------------------------------------------------------------------- declarations
@dataclass(frozen=True)
class SourceFile:
    """One file of a dataset.

    name: the file name as published (and as it appears in the mirror).
    urls: official download URLs, tried in order (empty: manual download only).
    sha256: hash of the file as served by ``urls`` (None: unknown, accepted with a warning
        and recorded in the manifest; the recipe's content checks must then carry the weight).
    alt_sha256: hashes of equivalent forms (the gzip copy in the mirror, the uncompressed file).
    large: a download of this size is only attempted with ``--allow-large`` / $PATE_STUDY_ALLOW_LARGE=1.
    """

    name: str
    urls: tuple[str, ...] = ()
    sha256: str | None = None
    alt_sha256: tuple[str, ...] = ()
    size: int | None = None
    large: bool = False

    @property
    def accepted_hashes(self) -> frozenset[str]:
        return frozenset(h for h in (self.sha256, *self.alt_sha256) if h)

    def mirror_candidates(self) -> list[str]:
        names = [self.name]
        if self.name.endswith(".gz"):
            names.append(self.name[:-3])
        else:
            names.append(self.name + ".gz")
        return names


@dataclass(frozen=True)
class Variant:
    """A complete set of files from which the dataset can be prepared (e.g. "full", "sample").

    sizes: what the prepared variant promises, item (split, file, table) -> size declared by the data
    card (rows, clips, sessions); None: present and non-empty, size not declared. Checked against
    ``Recipe.measure`` before anything is replaced (see :func:`size_problems`).
    """

    name: str
    files: tuple[SourceFile, ...]
    scale: str  # human description, e.g. "full" or "stratified sample (500 + 500 rows)"
    sizes: Mapping[str, int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Fetched:
    """A verified local copy of a source file."""

    spec: SourceFile
    path: Path
    sha256: str
    origin: str  # "mirror" or "network"
    location: str  # mirror path or URL
    verified: bool  # False when the declared hash was unknown


@dataclass
class Recipe:
    """A dataset recipe.

    prepare(fetched, out_dir, variant) writes the prepared arrays into ``out_dir`` and returns
    a dict of counts for the manifest; verify(out_dir) re-reads them and raises on problems;
    measure(out_dir) reads back the size of every item present ({item: rows}), which the
    framework compares with ``Variant.sizes`` before installing.
    """

    name: str
    folder: str
    version: str
    title: str
    variants: tuple[Variant, ...]
    prepare: Callable[[Mapping[str, Fetched], Path, Variant], dict]
    verify: Callable[[Path], None]
    how_to_get: str
    measure: Callable[[Path], dict[str, int]]
    licence: str = ""
    in_all: bool = True  # part of ``prepare all``

    # ----- availability
    def mirror_variant(self) -> Variant | None:
        """First variant whose files are all present (by name) in the mirror."""
        mirror = mirror_root()
        if mirror is None:
            return None
        for variant in self.variants:
            if all(find_in_mirror(self.folder, f, mirror) is not None for f in variant.files):
                return variant
        return None

    def variant(self, name: str) -> Variant | None:
        """The variant called ``name`` (None when the recipe has none of that name)."""
        return next((v for v in self.variants if v.name == name), None)

    def problem(self) -> str | None:
        """Why the prepared folder cannot be served (None when it is fine, "not prepared" when absent).

        Checks the manifest's measured sizes against the promise of its variant, so a folder that an
        older version installed incomplete is re-prepared rather than served, then runs the recipe's ``verify``
        on the installed files (cheap structure checks: headers, shapes, row counts), so a prepared file edited or
        damaged after installation is found before a loader uses it.
        """
        folder = prepared_dir(self.name)
        if folder.exists() and not folder.is_dir():
            raise DataError(
                f"{folder}: {describe_path(folder)} where the prepared folder of {self.name} belongs; "
                f"move it away (prepared data go to {DATA_ENV}={data_root()})"
            )
        manifest = read_manifest(self.name)
        if manifest is None:
            path = folder / MANIFEST_NAME
            if path.exists() or path.is_symlink():
                return (
                    f"its manifest {path} is unreadable (cut short or damaged); prepare it again with "
                    f"`python -m data_recipes prepare {self.name} --force`"
                )
            return "not prepared"
        variant = self.variant(manifest.get("variant", ""))
        if variant is None:
            return f"its manifest names variant {manifest.get('variant')!r}, which recipe {self.name} does not have"
        if "sizes" not in manifest:
            return "prepared by an older version that did not record the sizes of what it prepared"
        problems = size_problems(variant, manifest["sizes"], allow_small=bool(manifest.get("allowed_small")))
        if problems:
            return "; ".join(problems)
        try:  # the recipe's own structure check of what it installed (a hand-edited or damaged folder)
            self.verify(prepared_dir(self.name))
        except (DataError, OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            return f"its prepared files fail the recipe's check ({one_line(exc)})"
        return None

    def is_prepared(self) -> bool:
        """True when a complete prepared folder is installed (see :meth:`problem`)."""
        return self.problem() is None


# --------------------------------------------------------------------------- mirror
def find_in_mirror(folder: str, spec: SourceFile, mirror: Path | None = None) -> Path | None:
    """Path of the mirror copy of ``spec`` (by name, name + .gz, name without .gz), or None."""
    mirror = mirror if mirror is not None else mirror_root()
    if mirror is None:
        return None
    dataset_folder = mirror / folder
    if (dataset_folder.exists() or dataset_folder.is_symlink()) and not dataset_folder.is_dir():
        raise DataError(
            f"{dataset_folder}: {describe_path(dataset_folder)} in the mirror ({MIRROR_ENV}={mirror}) where the "
            f"folder of the {folder} files belongs; replace it with a folder holding them (or remove it)"
        )
    for candidate in spec.mirror_candidates():
        path = mirror / folder / candidate
        if path.is_file():
            return path
        if path.exists() or path.is_symlink():  # there, but not a file: say what it is, never "not in the mirror"
            raise DataError(
                f"{path}: {describe_path(path)} in the mirror ({MIRROR_ENV}={mirror}) where the file "
                f"{spec.name} belongs; replace it with the file (or remove it)"
            )
    return None


def verify_copy(path: Path, spec: SourceFile) -> tuple[str, bool]:
    """Check a local copy against the declared hashes; return (sha256 of the bytes, verified).

    Accepted when the bytes' hash or (for gzip content) the decompressed hash is declared.
    Raises ChecksumError otherwise. With no declared hash the copy is accepted unverified.
    """
    digest = sha256_file(path)
    accepted = spec.accepted_hashes
    if not accepted:
        logger.warning("%s: no published SHA-256 for %s; accepted unverified (sha256 %s)", path, spec.name, digest)
        return digest, False
    if digest in accepted:
        return digest, True
    if is_gzip(path):
        inner = sha256_gunzipped(path)
        if inner in accepted:
            return digest, True
    raise ChecksumError(
        f"{path}: SHA-256 {digest} matches none of the declared hashes of {spec.name} "
        f"({', '.join(sorted(accepted))}); the copy is corrupt or a different version"
    )


# --------------------------------------------------------------------------- network
def download(url: str, dest: Path, spec: SourceFile, *, timeout: float = 60.0) -> tuple[str, bool]:
    """Download ``url`` to ``dest``, resuming ``dest.part`` with an HTTP Range request.

    The finished ``.part`` file is verified (SHA-256 against ``spec``) and renamed into place;
    a hash mismatch deletes the ``.part`` file and raises ChecksumError. An interrupted transfer
    keeps the ``.part`` file and raises NotAvailableError (re-run to resume).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    start = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "pate_study-data-recipes/1"}
    if start:
        headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and start:  # range not satisfiable: the .part file may be complete
            response = None
        else:
            raise NotAvailableError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise NotAvailableError(f"{url}: network unavailable ({exc})") from exc
    if response is not None:
        with response:
            status = getattr(response, "status", 200)
            if start and status != 206:
                logger.info("%s: server ignored the Range request; restarting from 0", url)
                start = 0
            expected = response.headers.get("Content-Length")
            expected = int(expected) if expected is not None else None
            received = 0
            try:
                with (
                    open(part, "ab" if start else "wb") as out,
                    tqdm(
                        total=(expected + start) if expected is not None else None,
                        initial=start,
                        unit="B",
                        unit_scale=True,
                        desc=dest.name,
                        disable=None,
                        leave=False,
                    ) as bar,
                ):
                    for block in iter(lambda: response.read(_CHUNK), b""):
                        out.write(block)
                        received += len(block)
                        bar.update(len(block))
            except (OSError, urllib.error.URLError, ConnectionError) as exc:
                raise NotAvailableError(
                    f"{url}: transfer interrupted after {start + received} bytes ({exc}); "
                    f"run again to resume from {part}"
                ) from exc
            if expected is not None and received < expected:
                raise NotAvailableError(
                    f"{url}: transfer interrupted after {start + received} of "
                    f"{start + expected} bytes; run again to resume from {part}"
                )
    try:
        digest, verified = verify_copy(part, spec)
    except ChecksumError:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, dest)
    return digest, verified


def _large_allowed(allow_large: bool | None) -> bool:
    if allow_large is not None:
        return allow_large
    return os.environ.get(ALLOW_LARGE_ENV, "") not in ("", "0", "false", "no")


def fetch_variant(
    recipe: Recipe, variant: Variant, *, network: bool, allow_large: bool | None = None
) -> dict[str, Fetched]:
    """Get every file of ``variant``: mirror first, then (if ``network``) the official URLs."""
    mirror = mirror_root()
    fetched: dict[str, Fetched] = {}
    for spec in variant.files:
        path = find_in_mirror(recipe.folder, spec, mirror)
        if path is not None:
            digest, verified = verify_copy(path, spec)
            fetched[spec.name] = Fetched(spec, path, digest, "mirror", str(path), verified)
            continue
        if not network or not spec.urls:
            raise NotAvailableError(
                f"{recipe.name}: {spec.name} is not in the mirror"
                + ("" if network else " and network access is off")
                + ("" if spec.urls else " and has no public download URL")
            )
        if spec.large and not _large_allowed(allow_large):
            raise NotAvailableError(
                f"{recipe.name}: {spec.name} is large ({spec.size or '?'} bytes); "
                f"pass --allow-large or set {ALLOW_LARGE_ENV}=1 to download it"
            )
        dest = data_root() / ".downloads" / recipe.folder / spec.name
        errors = []
        if dest.is_file():
            digest, verified = verify_copy(dest, spec)
            fetched[spec.name] = Fetched(spec, dest, digest, "network", str(dest), verified)
            continue
        for url in spec.urls:
            try:
                digest, verified = download(url, dest, spec)
            except NotAvailableError as exc:
                errors.append(str(exc))
                continue
            fetched[spec.name] = Fetched(spec, dest, digest, "network", url, verified)
            break
        else:
            raise NotAvailableError(f"{recipe.name}: could not download {spec.name}: " + "; ".join(errors))
    return fetched


# --------------------------------------------------------------------------- completeness
def size_problems(
    variant: Variant, measured: Mapping[str, int], *, allow_small: bool = False, min_fraction: float = MIN_FRACTION
) -> list[str]:
    """What the measured result lacks against ``variant.sizes`` (empty list: complete).

    Every promised item must be measured and non-empty (always); unless ``allow_small``, at least
    ``min_fraction`` of its declared size.
    """
    problems = []
    for item, declared in variant.sizes.items():
        n = measured.get(item)
        if n is None:
            problems.append(f"{item} is missing (variant {variant.name} promises it)")
        elif n <= 0:
            problems.append(f"{item} is empty")
        elif declared is not None and not allow_small and n < min_fraction * declared:
            problems.append(f"{item} has {n:,}, far fewer than the {declared:,} the data card declares")
    return problems


def check_complete(recipe: Recipe, variant: Variant, measured: Mapping[str, int], *, allow_small: bool) -> None:
    """Raise IncompleteDataError (one line: what is missing or small, and the fix) unless complete."""
    problems = size_problems(variant, measured, allow_small=allow_small)
    if problems:
        small_only = all("far fewer" in p for p in problems)
        fix = (
            "check the source files (a partial download or a sample?); to install a small result on purpose, "
            f"run `python -m data_recipes prepare {recipe.name} --allow-small`"
            if small_only
            else "the source files are incomplete; replace them with the complete release"
        )
        raise IncompleteDataError(
            f"{recipe.name} ({variant.name}): refusing to install an incomplete result: "
            + "; ".join(problems)
            + f"; nothing was replaced; {fix}"
        )


# --------------------------------------------------------------------------- manifest / atomic swap
def read_manifest(name: str) -> dict | None:
    """The MANIFEST.json of a prepared dataset, or None when not prepared."""
    path = prepared_dir(name) / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def run_recipe(
    recipe: Recipe,
    *,
    network: bool = True,
    allow_large: bool | None = None,
    variant: str | None = None,
    allow_small: bool = False,
) -> Path:
    """Fetch, prepare, verify, check complete and atomically install ``recipe``; return the prepared folder.

    Variants are tried in order: first every variant complete in the mirror, then (with
    ``network``) each variant from its URLs. NotAvailableError when none can be fetched;
    ChecksumError/MalformedDataError/IncompleteDataError propagate (previous prepared data stay
    intact). ``allow_small``: install a non-empty result smaller than declared (recorded).
    """
    candidates = [v for v in recipe.variants if variant is None or v.name == variant]
    if not candidates:
        raise ValueError(f"variant={variant!r}: recipe {recipe.name} has variants {[v.name for v in recipe.variants]}")
    reasons: list[str] = []
    chosen = fetched = None
    check_writable(data_root(), label=f"{DATA_ENV}={data_root()}")  # before any download or decoding
    mirror = mirror_root()
    for v in candidates:
        if mirror is not None and all(find_in_mirror(recipe.folder, f, mirror) is not None for f in v.files):
            chosen, fetched = v, fetch_variant(recipe, v, network=False)
            break
    if chosen is None:
        for v in candidates:
            try:
                fetched = _writing(
                    data_root() / ".downloads" / recipe.folder,
                    lambda: fetch_variant(recipe, v, network=network, allow_large=allow_large),
                )
            except NotAvailableError as exc:
                reasons.append(f"[{v.name}] {exc}")
                continue
            chosen = v
            break
    if chosen is None:
        raise NotAvailableError(
            f"{recipe.name} is not available: " + " | ".join(reasons) + f"; how to get it: {recipe.how_to_get}"
        )
    root = data_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / recipe.name
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{recipe.name}-", dir=root))
    try:
        logger.info("preparing %s (%s) into %s", recipe.name, chosen.name, shown_path(tmp))
        counts = _writing(tmp, lambda: recipe.prepare(fetched, tmp, chosen))
        recipe.verify(tmp)
        sizes = recipe.measure(tmp)
        check_complete(recipe, chosen, sizes, allow_small=allow_small)
        manifest = {
            "recipe": recipe.name,
            "version": recipe.version,
            "title": recipe.title,
            "variant": chosen.name,
            "scale": chosen.scale,
            "sources": [
                {
                    "name": f.spec.name,
                    "file": f.path.name,
                    "sha256": f.sha256,
                    "origin": f.origin,
                    "location": f.location,
                    "verified": f.verified,
                }
                for f in fetched.values()
            ],
            "counts": counts,
            "sizes": sizes,
            "declared_sizes": dict(chosen.sizes),
            "allowed_small": bool(allow_small and size_problems(chosen, sizes)),
            "prepared_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True))
        replace_folder(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    logger.info("prepared %s -> %s", recipe.name, shown_path(final))
    return final


def _writing(where: Path, work: Callable[[], object]):
    """``work()``, with a failure to write for lack of space or permission turned into one
    :class:`~data_recipes.files.WriteFailedError` line naming the variable and ``where`` (a recipe writes with
    numpy, pandas, tarfile and shutil, not only through :func:`atomic_write`); prepared data are untouched."""
    try:
        return work()
    except WriteFailedError:
        raise
    except OSError as exc:
        if not no_room(exc, where):
            raise
        raise write_failure(where, exc, None) from exc


def atomic_save_npy(path: Path, array) -> None:
    """np.save through :func:`data_recipes.files.atomic_write` (used inside prepare)."""
    arr = np.asarray(array)
    atomic_write(
        path, lambda tmp: np.save(tmp, arr, allow_pickle=False), needed=arr.nbytes + 64
    )  # data + the smallest .npy header


def require(condition: bool, message: str) -> None:
    """Raise MalformedDataError(message) unless ``condition``."""
    if not condition:
        raise MalformedDataError(message)


def describe_sources(files: Iterable[SourceFile]) -> str:
    return ", ".join(f.name for f in files)
