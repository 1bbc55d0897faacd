"""Reading user-supplied ``.npy`` files safely: header first, nothing allocated until it adds up.

:func:`load_npy` is the one door through which the project reads an ``.npy`` file it did not write
itself (a ``--votes`` file, a vote file in the mirror). It reads the format header (NumPy format
specification, ``numpy.lib.format``: magic ``\\x93NUMPY``, version, header length, a Python-literal
dict with ``descr``, ``fortran_order``, ``shape``) without touching the data, then checks, before any
array is allocated:

- the file is an ``.npy`` file at all (an empty file, a CSV/text file, an ``.npz`` archive or a
  pickle are named as such, with the conversion that fixes them);
- the dtype is a plain numeric one (object arrays would need unpickling, which is never done:
  ``allow_pickle`` stays False and is never suggested);
- the data length the header promises (product of the shape x item size) equals the bytes that
  follow the header: a truncated file, or a header claiming a huge shape, is refused without
  allocating anything.

Every message is one line naming the file (and the flag or parameter it came from), the problem and
the fix. Errors are :class:`NpyFileError` (a ValueError).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import numpy as np

from data_recipes.files import one_line

__all__ = ["NpyFileError", "NpyHeader", "read_npy_header", "load_npy"]

_MAGIC = b"\x93NUMPY"
_ZIP = b"PK\x03\x04"
_PICKLE_PROTOCOLS = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
_MAX_HEADER = 100_000  # numpy.load refuses headers over 10,000 bytes by default
_SAVE_HINT = "save one numeric array with numpy.save(path, array)"


class NpyFileError(ValueError):
    """A file that should be a numeric ``.npy`` array is not one (message: one line)."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


class NpyHeader:
    """What an ``.npy`` header declares: dtype, shape, Fortran order, data offset and data length."""

    def __init__(self, dtype: np.dtype, shape: tuple[int, ...], fortran_order: bool, offset: int):
        self.dtype, self.shape, self.fortran_order, self.offset = dtype, shape, fortran_order, offset

    @property
    def data_bytes(self) -> int:
        """Bytes of array data the header promises (Python ints: no overflow for huge shapes)."""
        n = 1
        for d in self.shape:
            n *= d
        return n * self.dtype.itemsize


def _label(path: Path, flag: str | None) -> str:
    return f"{flag} {path}" if flag else str(path)


def _what_is_it(head: bytes) -> str:
    """A guess at what a non-.npy file is, from its first bytes, with the fix."""
    if head.startswith(_ZIP):
        return (
            f"is a zip/.npz archive, not a single .npy array; load it with numpy.load, pick the array "
            f"(e.g. numpy.load(path)['votes']) and {_SAVE_HINT}"
        )
    if head[:2] in _PICKLE_PROTOCOLS:
        return (
            f"is a Python pickle, which is never unpickled here (it can run code); convert the object "
            f"to a numeric array and {_SAVE_HINT}"
        )
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return f"is not an .npy file (it does not start with the .npy magic bytes); {_SAVE_HINT}"
    if text.strip() and all(ch.isprintable() or ch in "\r\n\t" for ch in text):
        return (
            f"is a text file (starts {text[:30]!r}), not an .npy array; if it is CSV, convert it with "
            f"numpy.save(path, numpy.loadtxt(csv_path, delimiter=',', dtype=numpy.int64))"
        )
    return f"is not an .npy file (it does not start with the .npy magic bytes); {_SAVE_HINT}"


def read_npy_header(path: str | os.PathLike, *, flag: str | None = None) -> NpyHeader:
    """Parse and check the header of an ``.npy`` file without reading its data.

    Raises NpyFileError (naming ``flag`` and the file) when the file is missing, empty, not an .npy
    file, holds Python objects, or its length disagrees with what the header declares.
    """
    path = Path(path)
    label = _label(path, flag)
    if not path.exists():
        raise NpyFileError(f"{label}: no such file; check the path")
    if not path.is_file():
        raise NpyFileError(f"{label}: not a regular file; pass the path of an .npy file")
    size = path.stat().st_size
    if size == 0:
        raise NpyFileError(f"{label}: the file is empty; {_SAVE_HINT}")
    with open(path, "rb") as f:
        head = f.read(10)
        if not head.startswith(_MAGIC):
            raise NpyFileError(f"{label}: {_what_is_it(head + f.read(54))}")
        if len(head) < 10:
            raise NpyFileError(f"{label}: truncated .npy header ({size} bytes); the file is cut short: save it again")
        major = head[6]
        if major == 1:
            hlen, start = int.from_bytes(head[8:10], "little"), 10
        elif major in (2, 3):
            more = f.read(2)
            if len(more) < 2:
                raise NpyFileError(f"{label}: truncated .npy header ({size} bytes); save it again")
            hlen, start = int.from_bytes(head[8:10] + more, "little"), 12
        else:
            raise NpyFileError(f"{label}: unknown .npy format version {major}.{head[7]}; {_SAVE_HINT}")
        if hlen > _MAX_HEADER:
            raise NpyFileError(
                f"{label}: .npy header declares {hlen:,} header bytes (numpy writes a few hundred); "
                "the file is corrupt: save it again"
            )
        if start + hlen > size:
            raise NpyFileError(
                f"{label}: truncated .npy header (declares {hlen} header bytes, the file has "
                f"{size}); the file is cut short: save it again"
            )
        raw = f.read(hlen)
    try:
        meta = ast.literal_eval(raw.decode("latin-1" if major < 3 else "utf-8"))
        descr, fortran, shape = meta["descr"], meta["fortran_order"], tuple(meta["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError, UnicodeDecodeError, MemoryError, RecursionError):
        raise NpyFileError(f"{label}: unreadable .npy header; the file is corrupt: save it again") from None
    if not all(isinstance(d, int) and d >= 0 for d in shape) or not isinstance(fortran, bool):
        raise NpyFileError(f"{label}: .npy header declares an invalid shape {shape!r}; the file is corrupt")
    try:
        dtype = np.dtype(descr) if not isinstance(descr, list) else np.dtype([tuple(x) for x in descr])
    except (TypeError, ValueError):
        raise NpyFileError(f"{label}: .npy header declares an unknown dtype {descr!r}; {_SAVE_HINT}") from None
    header = NpyHeader(dtype, shape, fortran, start + hlen)
    if dtype.hasobject:
        raise NpyFileError(
            f"{label}: holds Python objects (dtype {dtype}), which would need unpickling and are "
            f"never loaded here; convert them to a numeric array and {_SAVE_HINT}"
        )
    if dtype.names is not None or dtype.subdtype is not None:
        raise NpyFileError(f"{label}: structured dtype {dtype} is not a plain numeric array; {_SAVE_HINT}")
    have = size - header.offset
    if have != header.data_bytes:
        problem = "truncated" if have < header.data_bytes else "longer than its header says"
        raise NpyFileError(
            f"{label}: {problem}: the header declares shape {shape} of {dtype} "
            f"({header.data_bytes:,} bytes of data) but the file holds {have:,}; "
            "the file is corrupt or cut short: save it again"
        )
    return header


def load_npy(
    path: str | os.PathLike, *, flag: str | None = None, numeric: bool = True, mmap: bool = False
) -> np.ndarray:
    """Load a checked ``.npy`` file (see :func:`read_npy_header`); never unpickles.

    ``numeric``: require an integer, unsigned, float or bool dtype (not strings, dates or complex).
    ``mmap``: memory-map instead of reading (the caller may then slice before copying).
    """
    path = Path(path)
    header = read_npy_header(path, flag=flag)
    kind = header.dtype.kind
    if numeric and kind not in "biuf":
        raise NpyFileError(f"{_label(path, flag)}: expected numbers, got dtype {header.dtype}; {_SAVE_HINT}")
    try:
        return np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, OSError, EOFError) as exc:  # unexpected after the checks above; still one line
        raise NpyFileError(f"{_label(path, flag)}: cannot read the .npy array ({exc}); save it again") from exc
