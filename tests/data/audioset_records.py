"""Audio Set fixture builders shared by the data tests: TFRecord SequenceExamples and a features tar."""

from __future__ import annotations

import io
import tarfile

import numpy as np

from data_recipes.tfrecord import encode_feature, encode_sequence_example, frame_record


def make_record(vid: str, labels, n_frames=10, seed=0) -> bytes:
    """One framed Audio Set SequenceExample (video id, 30-40 s, labels, random uint8 embeddings)."""
    rng = np.random.default_rng(seed)
    ctx = {
        "video_id": encode_feature([vid.encode()], "bytes"),
        "start_time_seconds": encode_feature([30.0], "float"),
        "end_time_seconds": encode_feature([40.0], "float"),
        "labels": encode_feature(labels, "int64"),
    }
    frames = [encode_feature([rng.integers(0, 256, 128, dtype=np.uint8).tobytes()], "bytes") for _ in range(n_frames)]
    return frame_record(encode_sequence_example(ctx, {"audio_embedding": frames}))


def make_tar(records: dict[str, bytes]) -> bytes:
    """A gzip tar with ``audioset_v1_embeddings/<name>`` members, as in the official features archive."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in records.items():
            info = tarfile.TarInfo(f"audioset_v1_embeddings/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
