"""Recipe: raw Audio Set audio -> log-Mel arrays (the Muschiol 2021 input pipeline, §4.3.2).

For each segment (YouTube id, start, end) of ``balanced_train_segments.csv``: download the
audio with yt-dlp (optional dependency, imported lazily), cut the 10 s segment, resample to
44.1 kHz mono and store the log-Mel spectrogram (hop 441, n_fft 2048, 64 Mel bands, dB:
librosa). Videos disappear from
YouTube, so the result is always a subset: the manifest reports how many were obtained.

Not part of ``prepare all`` (slow, network-heavy). The number of segments is limited by
``$PATE_STUDY_AUDIO_LIMIT`` (default 100).

Prepared: ``log_mel.npy`` float32 [n, 1001, 64] (time x Mel), ``video_ids.npy``, ``start.npy``,
``labels.npy`` (bool [n, 527]), and ``failed.json`` (id -> reason).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np
from tqdm.auto import tqdm

from data_recipes.audioset import BAL_SEGMENTS, LABELS, N_CLASSES, read_class_labels
from data_recipes.framework import Fetched, Recipe, Variant, atomic_save_npy, read_source_bytes, require

logger = logging.getLogger(__name__)
SR = 44_100
HOP = 441
N_FFT = 2048
N_MELS = 64
SEGMENT_S = 10.0
N_TIME = int(SR * SEGMENT_S) // HOP + 1  # 1001 frames with centred STFT

Downloader = Callable[[str, float, float, Path], Path]


def read_segments(data: bytes, *, where: str) -> list[tuple[str, float, float, list[str]]]:
    """Parse an Audio Set segments CSV (``#`` comment lines; YTID, start, end, "mid,mid")."""
    out = []
    for i, row in enumerate(csv.reader(io.StringIO(data.decode("utf-8")), skipinitialspace=True)):
        if not row or row[0].startswith("#"):
            continue
        require(len(row) == 4, f"{where}: line {i + 1} has {len(row)} columns, expected 4")
        try:
            out.append((row[0], float(row[1]), float(row[2]), row[3].split(",")))
        except ValueError as exc:
            raise ValueError(f"{where}: line {i + 1}: non-numeric start/end ({exc})") from exc
    return out


def yt_dlp_downloader(video_id: str, start: float, end: float, dest: Path) -> Path:
    """Download the best audio stream of ``video_id`` with yt-dlp into ``dest`` (any container)."""
    try:
        import yt_dlp  # optional dependency (pyproject extra "audio")
    except ImportError as exc:
        raise RuntimeError("yt-dlp is not installed: pip install 'pate_study[audio]'") from exc
    opts = {
        "format": "bestaudio/best",
        "outtmpl": str(dest.with_suffix(".%(ext)s")),
        "quiet": True,
        "noplaylist": True,
        "download_ranges": yt_dlp.utils.download_range_func(None, [(start, end)]),
    }
    with yt_dlp.YoutubeDL(opts) as ydl:
        info = ydl.extract_info(f"https://www.youtube.com/watch?v={video_id}", download=True)
        return Path(ydl.prepare_filename(info))


def log_mel(y: np.ndarray, sr: int = SR) -> np.ndarray:
    """Log-Mel spectrogram [time, 64] in dB relative to the clip's maximum (Muschiol 2021 §4.3.2 parameters)."""
    import librosa  # heavy (numba, ~2 s): only when raw audio is converted, an opt-in recipe

    mel = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS)
    return librosa.power_to_db(mel, ref=np.max).T.astype(np.float32)


def cut_segment(path: Path, start: float | None = None, duration: float = SEGMENT_S) -> np.ndarray:
    """Load ``path`` as 44.1 kHz mono, take ``duration`` s from ``start`` (None: file start), zero-pad."""
    import librosa  # heavy (numba, ~2 s): only when raw audio is converted, an opt-in recipe

    y, _ = librosa.load(str(path), sr=SR, mono=True, offset=start or 0.0, duration=duration)
    n = int(SR * duration)
    return np.pad(y, (0, max(0, n - len(y))))[:n]


def fetch_log_mels(
    segments: Iterable[tuple[str, float, float, list[str]]],
    *,
    downloader: Downloader | None = None,
    workdir: Path | None = None,
    already_cut: bool = True,
):
    """Download and convert segments; return (log_mels, kept segments, failures {id: reason}).

    ``downloader(video_id, start, end, dest) -> path`` (default: yt-dlp with a download range, so
    the file already holds just the segment: ``already_cut``).
    """
    downloader = downloader or yt_dlp_downloader
    mels, kept, failed = [], [], {}
    segments = list(segments)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for vid, start, end, mids in tqdm(segments, desc="audio segments", disable=None):
            try:
                path = downloader(vid, start, end, Path(tmp) / vid)
                y = cut_segment(path, None if already_cut else start, min(SEGMENT_S, end - start))
                y = np.pad(y, (0, int(SR * SEGMENT_S) - len(y)))
                mels.append(log_mel(y))
                kept.append((vid, start, end, mids))
            except Exception as exc:  # a removed video must not stop the run; reasons are reported
                failed[vid] = f"{type(exc).__name__}: {exc}"
    logger.info("obtained %d of %d segments", len(kept), len(segments))
    return mels, kept, failed


def _prepare(
    fetched: Mapping[str, Fetched], out: Path, variant: Variant, *, downloader: Downloader | None = None
) -> dict:
    mids = [m for m, _ in read_class_labels(read_source_bytes(fetched[LABELS.name].path), where=LABELS.name)]
    index = {m: i for i, m in enumerate(mids)}
    segs = read_segments(read_source_bytes(fetched[BAL_SEGMENTS.name].path), where=BAL_SEGMENTS.name)
    limit = int(os.environ.get("PATE_STUDY_AUDIO_LIMIT", "100"))
    mels, kept, failed = fetch_log_mels(segs[:limit], downloader=downloader)
    require(
        len(kept) > 0,
        f"no audio segment could be obtained ({len(failed)} failed; first: {next(iter(failed.values()), '')})",
    )
    labels = np.zeros((len(kept), N_CLASSES), dtype=bool)
    for i, (_, _, _, ms) in enumerate(kept):
        labels[i, [index[m] for m in ms if m in index]] = True
    atomic_save_npy(out / "log_mel.npy", np.stack(mels).astype(np.float32))
    atomic_save_npy(out / "video_ids.npy", np.array([k[0] for k in kept]))
    atomic_save_npy(out / "start.npy", np.array([k[1] for k in kept], dtype=np.float32))
    atomic_save_npy(out / "labels.npy", labels)
    (out / "failed.json").write_text(json.dumps(failed, indent=1))
    return {"requested": min(limit, len(segs)), "obtained": len(kept), "failed": len(failed)}


def _verify(out: Path) -> None:
    mel = np.load(out / "log_mel.npy", mmap_mode="r")
    require(mel.ndim == 3 and mel.shape[2] == N_MELS, f"{out}/log_mel.npy: expected [n, time, {N_MELS}]")


def _measure(out: Path) -> dict[str, int]:
    """Clips obtained (a subset by design: videos disappear, so no size is declared)."""
    return (
        {"clips": int(np.load(out / "log_mel.npy", mmap_mode="r").shape[0])} if (out / "log_mel.npy").is_file() else {}
    )


RECIPE = Recipe(
    name="audioset-audio",
    folder="audioset",
    version="1",
    title="Audio Set raw audio (yt-dlp) -> log-Mel",
    variants=(
        Variant(
            "bal_train_subset",
            (LABELS, BAL_SEGMENTS),
            "subset of balanced-train segments still on YouTube",
            {"clips": None},
        ),
    ),
    prepare=_prepare,
    verify=_verify,
    measure=_measure,
    how_to_get="pip install yt-dlp; python -m data_recipes prepare audioset-audio "
    "(network; PATE_STUDY_AUDIO_LIMIT segments)",
    licence="YouTube terms; Audio Set labels CC BY 4.0",
    in_all=False,
)
