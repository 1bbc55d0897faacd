"""Reading TFRecord files of ``tf.train.SequenceExample`` without TensorFlow.

TFRecord framing (one record): ``uint64 length`` (little endian), ``uint32 masked_crc32c(length
bytes)``, ``payload``, ``uint32 masked_crc32c(payload)``. The mask is
``((crc >> 15) | (crc << 17)) + 0xa282ead8`` (mod 2**32), CRC-32C = Castagnoli polynomial
0x1EDC6F41 (reflected 0x82F63B78). Both CRCs are verified, vectorised over many records at
once (numpy, byte-wise table method run in lock step over the records).

Protobuf wire format (proto3): each field is a varint key ``field_number << 3 | wire_type``
followed by a varint (type 0), 8 bytes (1), a varint length + bytes (2) or 4 bytes (5).
Only the messages of ``tensorflow/core/example/{example,feature}.proto`` are decoded.
"""

from __future__ import annotations

import struct
from typing import Iterator

import numpy as np

from data_recipes.framework import MalformedDataError

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8


def _make_table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(_POLY), t >> 1).astype(np.uint32)
    return t


CRC_TABLE = _make_table()


def crc32c_many(buffers: list[bytes]) -> np.ndarray:
    """CRC-32C of each buffer (uint32 array), all computed together.

    Buffers are sorted by length (descending) so that at byte position j the still-active
    buffers form a prefix; one table lookup per position updates all of them.
    """
    n = len(buffers)
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    lengths = np.fromiter((len(b) for b in buffers), dtype=np.int64, count=n)
    order = np.argsort(-lengths, kind="stable")
    sorted_len = lengths[order]
    maxlen = int(sorted_len[0])
    crc = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    if maxlen > 0:
        flat = np.frombuffer(b"".join(buffers[i] for i in order), dtype=np.uint8)
        mat = np.zeros((n, maxlen), dtype=np.uint8)
        mat[np.arange(maxlen)[None, :] < sorted_len[:, None]] = flat
        cols = np.ascontiguousarray(mat.T)
        del mat
        active = n - np.cumsum(np.bincount(sorted_len, minlength=maxlen + 1))[:maxlen]
        table = CRC_TABLE
        for j in range(maxlen):
            k = active[j]
            c = crc[:k]
            crc[:k] = table[(c ^ cols[j, :k]) & 0xFF] ^ (c >> 8)
    crc ^= np.uint32(0xFFFFFFFF)
    out = np.empty(n, dtype=np.uint32)
    out[order] = crc
    return out


def mask_crc(crc: np.ndarray) -> np.ndarray:
    """TFRecord's masked CRC (see module docstring)."""
    c = crc.astype(np.uint64)
    return (((c >> 15) | (c << 17)) + _MASK_DELTA).astype(np.uint64) & 0xFFFFFFFF


def split_records(data: bytes, *, where: str) -> tuple[list[bytes], list[bytes], np.ndarray, np.ndarray]:
    """Split a TFRecord file into (length_bytes, payloads, stored length CRCs, stored data CRCs)."""
    heads, payloads, len_crcs, data_crcs = [], [], [], []
    pos, n = 0, len(data)
    while pos < n:
        if pos + 12 > n:
            raise MalformedDataError(f"{where}: truncated record header at byte {pos}")
        (length,) = struct.unpack_from("<Q", data, pos)
        heads.append(data[pos : pos + 8])
        (lc,) = struct.unpack_from("<I", data, pos + 8)
        start = pos + 12
        end = start + length
        if end + 4 > n:
            raise MalformedDataError(
                f"{where}: record {len(payloads)} claims {length} bytes but the file ends "
                f"at byte {n} (truncated file or corrupt length)"
            )
        payloads.append(data[start:end])
        (dc,) = struct.unpack_from("<I", data, end)
        len_crcs.append(lc)
        data_crcs.append(dc)
        pos = end + 4
    return heads, payloads, np.array(len_crcs, dtype=np.uint64), np.array(data_crcs, dtype=np.uint64)


def check_crcs(
    heads: list[bytes], payloads: list[bytes], len_crcs: np.ndarray, data_crcs: np.ndarray, names: list[str]
) -> None:
    """Verify both masked CRC-32C values of every record; MalformedDataError naming the first bad one."""
    bad_len = np.flatnonzero(mask_crc(crc32c_many(heads)) != len_crcs)
    if bad_len.size:
        raise MalformedDataError(f"{names[bad_len[0]]}: bad length CRC-32C (corrupt record header)")
    bad = np.flatnonzero(mask_crc(crc32c_many(payloads)) != data_crcs)
    if bad.size:
        raise MalformedDataError(f"{names[bad[0]]}: bad data CRC-32C (corrupt record payload)")


# ----------------------------------------------------------------------------- protobuf
def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise MalformedDataError("varint too long")


def iter_fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """Yield (field_number, wire_type, a, b): for wire type 0 a is the value; otherwise [a, b) is the span."""
    while pos < end:
        key, pos = _varint(buf, pos)
        fn, wt = key >> 3, key & 7
        if wt == 2:
            ln, pos = _varint(buf, pos)
            yield fn, 2, pos, pos + ln
            pos += ln
        elif wt == 0:
            v, pos = _varint(buf, pos)
            yield fn, 0, v, 0
        elif wt == 5:
            yield fn, 5, pos, pos + 4
            pos += 4
        elif wt == 1:
            yield fn, 1, pos, pos + 8
            pos += 8
        else:
            raise MalformedDataError(f"unsupported protobuf wire type {wt}")
    if pos != end:
        raise MalformedDataError("protobuf field runs past the end of its message")


def parse_feature(buf: bytes, start: int, end: int):
    """tf.train.Feature -> list[bytes] | list[float] | list[int]."""
    for fn, wt, a, b in iter_fields(buf, start, end):
        out: list = []
        if fn == 1:  # BytesList
            for f2, w2, s, e in iter_fields(buf, a, b):
                if f2 == 1 and w2 == 2:
                    out.append(buf[s:e])
            return out
        if fn == 2:  # FloatList
            for f2, w2, s, e in iter_fields(buf, a, b):
                if f2 == 1 and w2 == 2:
                    out.extend(np.frombuffer(buf[s:e], dtype="<f4").tolist())
                elif f2 == 1 and w2 == 5:
                    out.append(struct.unpack_from("<f", buf, s)[0])
            return out
        if fn == 3:  # Int64List
            for f2, w2, s, e in iter_fields(buf, a, b):
                if f2 == 1 and w2 == 2:
                    p = s
                    while p < e:
                        v, p = _varint(buf, p)
                        out.append(v - (1 << 64) if v >= 1 << 63 else v)
                elif f2 == 1 and w2 == 0:
                    out.append(s - (1 << 64) if s >= 1 << 63 else s)
            return out
    return []


def _map_entries(buf: bytes, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    """Entries of a proto map<string, Message> field (key = field 1, value = field 2)."""
    for fn, wt, a, b in iter_fields(buf, start, end):
        if fn != 1 or wt != 2:
            continue
        key, span = "", (0, 0)
        for f2, w2, s, e in iter_fields(buf, a, b):
            if f2 == 1:
                key = buf[s:e].decode("utf-8")
            elif f2 == 2:
                span = (s, e)
        yield key, span[0], span[1]


def parse_sequence_example(buf: bytes) -> tuple[dict, dict]:
    """tf.train.SequenceExample -> (context {name: values}, feature_lists {name: [values per step]})."""
    context, lists = {}, {}
    for fn, wt, a, b in iter_fields(buf, 0, len(buf)):
        if fn == 1 and wt == 2:
            for key, s, e in _map_entries(buf, a, b):
                context[key] = parse_feature(buf, s, e)
        elif fn == 2 and wt == 2:
            for key, s, e in _map_entries(buf, a, b):
                lists[key] = [
                    parse_feature(buf, s2, e2) for f3, w3, s2, e2 in iter_fields(buf, s, e) if f3 == 1 and w3 == 2
                ]
    return context, lists


# ----------------------------------------------------------------------------- writing (fixtures, tests)
def _enc_varint(v: int) -> bytes:
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(fn: int, payload: bytes) -> bytes:
    return _enc_varint(fn << 3 | 2) + _enc_varint(len(payload)) + payload


def encode_feature(values, kind: str) -> bytes:
    """Encode a tf.train.Feature: kind 'bytes', 'float' (packed) or 'int64' (packed)."""
    if kind == "bytes":
        inner = b"".join(_field(1, v) for v in values)
        return _field(1, inner)
    if kind == "float":
        return _field(2, _field(1, np.asarray(values, dtype="<f4").tobytes()))
    if kind == "int64":
        return _field(3, _field(1, b"".join(_enc_varint(int(v)) for v in values)))
    raise ValueError(f"kind={kind!r}: expected 'bytes', 'float' or 'int64'")


def encode_sequence_example(context: dict[str, bytes], lists: dict[str, list[bytes]]) -> bytes:
    """Encode a SequenceExample from already-encoded Feature messages."""
    ctx = b"".join(_field(1, _field(1, k.encode()) + _field(2, v)) for k, v in context.items())
    fl = b"".join(
        _field(1, _field(1, k.encode()) + _field(2, b"".join(_field(1, f) for f in feats)))
        for k, feats in lists.items()
    )
    return _field(1, ctx) + _field(2, fl)


def frame_record(payload: bytes) -> bytes:
    """One TFRecord frame around ``payload`` (with both masked CRCs)."""
    head = struct.pack("<Q", len(payload))
    lc, dc = mask_crc(crc32c_many([head, payload]))
    return head + struct.pack("<I", int(lc)) + payload + struct.pack("<I", int(dc))
