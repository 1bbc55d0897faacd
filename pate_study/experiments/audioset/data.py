"""Audio Set data for the teachers and the students (Muschiol 2021 §4.3): subsets, pool splits, partitions,
seeds, clip features, the query/test split of the eval clips and the log-Mel clips, all through
:mod:`pate_study.data.audioset` (never a recipe folder directly).

Real-data path: the released 128-d VGGish embeddings of bal_train (teacher/student pools) and eval (test set
and query pool), restricted to the "big" or "small" label subset. The thesis trained ImageNet-pretrained ResNets
on log-Mel spectrograms of ~343k crawled clips; here the teachers are embedding MLPs on ~7.8k (big) / ~1.3k
(small) clips: "real data at reduced scale". The log-Mel CNNs (:func:`pate_study.learning.models.logmel_model`) are the
GPU path.

Splits (:func:`pool_split`): the subset's bal_train clips are shuffled once (seed) and cut into the teacher pool
(``1 - student_fraction``; the thesis' 80 %) and the student pool (the thesis' 20 %); the validation split for
checkpoint selection is taken from the student pool (``val_fraction`` of all clips). The student pool is the
public side of PATE, so selecting teacher checkpoints on it costs no privacy, and the eval clips are never used
for selection (the thesis selected on its test set). Teachers get disjoint, equal partitions of the teacher pool
(:func:`pate_study.learning.partitions.make_partitions`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pate_study.data import audioset
from pate_study.learning.features import log_mel_librosa
from pate_study.learning.partitions import Partitions, make_partitions

logger = logging.getLogger(__name__)

SUBSETS = ("small", "big")
TEACHER_COUNTS = (1, 10, 20, 50)


@dataclass(frozen=True)
class PoolSplit:
    """Indices into a subset's bal_train clips: ``teacher`` pool, ``val`` (checkpoint selection)
    and ``student`` (student training pool); disjoint, together all clips."""

    teacher: np.ndarray
    val: np.ndarray
    student: np.ndarray


def pool_split(n_clips: int, *, student_fraction: float = 0.2, val_fraction: float = 0.1, seed: int = 0) -> PoolSplit:
    """Shuffle ``n_clips`` clips (seed) and cut them into teacher pool / validation / student pool.

    ``student_fraction``: the public side, 0.2 as in Muschiol Table 4.1 (19,139 / 95,795 small,
    68,595 / 342,978 big); ``val_fraction`` (of all clips) is taken out of it, so
    ``0 < val_fraction < student_fraction < 1``.
    """
    if not 0 < val_fraction < student_fraction < 1:
        raise ValueError(
            f"val_fraction={val_fraction}, student_fraction={student_fraction}: expected "
            f"0 < val_fraction < student_fraction < 1 (validation comes out of the student pool)"
        )
    if n_clips < 3:
        raise ValueError(f"n_clips={n_clips}: need at least 3 clips for teacher, validation and student pools")
    order = np.random.default_rng(seed).permutation(n_clips)
    n_public = max(2, int(round(student_fraction * n_clips)))
    n_val = max(1, min(n_public - 1, int(round(val_fraction * n_clips))))
    teacher, public = order[: n_clips - n_public], order[n_clips - n_public :]
    return PoolSplit(np.sort(teacher), np.sort(public[:n_val]), np.sort(public[n_val:]))


def load_subsets(
    data: str = "auto", *, seed: int = 0, big_kwargs: dict | None = None, n_synthetic: tuple[int, int] = (2000, 1000)
) -> dict[str, audioset.AudioSetEmbeddings]:
    """The "small" and "big" subsets (clips with at least one subset label, Muschiol §4.3.1)."""
    return {
        s: audioset.load(data, subset=s, seed=seed, big_kwargs=big_kwargs, n_synthetic=n_synthetic) for s in SUBSETS
    }


def clip_features(split: audioset.Split) -> np.ndarray:
    """``float32 [n, 128]``: each clip's VGGish embedding frames averaged over its real frames, mapped
    from the released uint8 quantisation to about [-2, 2] by the fixed (data-independent) ``(x - 128) / 64``."""
    emb = split.embeddings.astype(np.float32)
    frames = np.maximum(split.n_frames.astype(np.float32), 1)[:, None]
    mask = (np.arange(emb.shape[1])[None] < split.n_frames[:, None])[:, :, None]
    return (((emb - 128.0) / 64.0) * mask).sum(1) / frames


def teacher_partitions(split: PoolSplit, n_teachers: int, *, seed: int = 0):
    """Disjoint, equal partitions of the teacher pool (``floor(pool / T)`` clips each; indices into
    the subset's bal_train clips), drawn by :func:`pate_study.learning.partitions.make_partitions`."""
    size = len(split.teacher) // n_teachers
    if size < 1:
        raise ValueError(
            f"n_teachers={n_teachers}: more teachers than the {len(split.teacher)} clips of the "
            f"teacher pool; use at most {len(split.teacher)} teachers"
        )
    return make_partitions(int(split.teacher.max()) + 1, n_teachers, size, seed=seed, pool=split.teacher)


def run_seed(seed: int, subset: str, n_teachers: int) -> int:
    """A distinct seed per (subset, teacher count), so that no two ensembles share initialisations."""
    return int(seed) * 10_007 + SUBSETS.index(subset) * 1_000 + int(n_teachers)


def first_teachers(partitions, k: int):
    """The partitions of the first ``k`` teachers (ablations train a few teachers of "big 10")."""
    return Partitions(partitions.train[:k])


def query_test_split(
    n_clips: int, *, min_pool: int = 5000, pool_fraction: float = 0.5, min_test: int = 200, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of the subset's eval clips into the student query pool and the test set.

    The pool gets ``max(min_pool, round(pool_fraction·n))`` clips (about half, and at least the
    5,000 queries of Table 5.4), capped so the test set keeps ``min_test`` clips; returns sorted indices.
    """
    if not 0 < pool_fraction < 1:
        raise ValueError(f"pool_fraction={pool_fraction}: expected a fraction in (0, 1)")
    if n_clips < min_test + 1:
        raise ValueError(f"n_clips={n_clips}: need more than min_test={min_test} eval clips")
    n_pool = min(max(int(min_pool), int(round(pool_fraction * n_clips))), n_clips - int(min_test))
    if n_pool < min_pool:
        logger.warning("query pool holds %d clips, fewer than min_pool=%d", n_pool, min_pool)
    order = np.random.default_rng(seed).permutation(n_clips)
    return np.sort(order[:n_pool]), np.sort(order[n_pool:])


def source_stamps(datasets: dict[str, audioset.AudioSetEmbeddings]) -> tuple[str, dict[str, str], str]:
    """What the outputs are stamped with: the scale ("real data at reduced scale" or "synthetic stand-in", from the
    big subset), each subset's source stamp, and both in one line."""
    stamps = {k: d.source.stamp() for k, d in datasets.items()}
    scale = "real data at reduced scale" if datasets["big"].source.kind == "real" else "synthetic stand-in"
    return scale, stamps, f"{scale}: " + "; ".join(f"{k}: {v}" for k, v in stamps.items())


def logmel_test_split(
    n_clips: int, *, student_fraction: float = 0.2, val_fraction: float = 0.1, n_teachers: int = 1, seed: int = 0
) -> tuple[Partitions, np.ndarray, np.ndarray]:
    """The log-Mel CNN teachers' cut of ``n_clips`` clips: a test set of a quarter of the clips (seed + 1), the
    rest by :func:`pool_split` (teacher pool without the test clips, validation without them) and the teachers'
    partitions. Returns ``(partitions, validation rows, test rows)``."""
    split = pool_split(n_clips, student_fraction=student_fraction, val_fraction=val_fraction, seed=seed)
    test = np.random.default_rng(seed + 1).permutation(n_clips)[: max(2, n_clips // 4)]
    parts = teacher_partitions(
        PoolSplit(np.setdiff1d(split.teacher, test), split.val, split.student), n_teachers, seed=seed
    )
    return parts, np.setdiff1d(split.val, test), test


def synthetic_siren(
    duration_s: float = 10.0,
    sr: int = 44_100,
    *,
    low_hz: float = 650.0,
    high_hz: float = 1500.0,
    sweep_s: float = 4.0,
    seed: int = 0,
) -> np.ndarray:
    """A "wail" siren: a tone gliding sinusoidally between ``low_hz`` and ``high_hz`` every
    ``sweep_s`` seconds, with its 2nd and 3rd harmonics and a little noise (seeded)."""
    t = np.arange(int(duration_s * sr)) / sr
    freq = (low_hz + high_hz) / 2 - (high_hz - low_hz) / 2 * np.cos(2 * np.pi * t / sweep_s)
    phase = 2 * np.pi * np.cumsum(freq) / sr
    y = np.sin(phase) + 0.4 * np.sin(2 * phase) + 0.2 * np.sin(3 * phase)
    y += 0.02 * np.random.default_rng(seed).standard_normal(t.size)
    return (0.3 * y / np.abs(y).max()).astype(np.float32)


def siren_log_mel(data: str = "auto", *, seed: int = 0) -> tuple[np.ndarray, str]:
    """Log-Mel ``[frames, 64]`` of a Siren clip for Fig 2.1 and its one-line provenance: the first
    prepared raw-audio clip labelled Siren (recipe ``audioset-audio``) when there is one, else the
    synthetic siren of :func:`synthetic_siren` through :func:`pate_study.learning.features.log_mel_librosa`."""
    if data != "synthetic":
        clip = prepared_siren_clip()
        if clip is not None:
            return clip
    return log_mel_librosa(synthetic_siren(seed=seed)), (
        "synthetic siren (tone gliding 650-1500 Hz every 4 s, 3 harmonics; raw Audio Set audio not prepared), "
        "log-Mel 44.1 kHz, hop 441, n_fft 2048, 64 bands, dB"
    )


def prepared_siren_clip() -> tuple[np.ndarray, str] | None:
    """The first prepared raw-audio clip labelled Siren and its provenance, or None (recipe not prepared, or no
    Siren clip in it)."""
    clips = audioset.audio_clips()
    if clips is None:
        return None
    hits = np.flatnonzero(np.asarray(clips.labels[:, audioset.class_index("Siren")]))
    if hits.size == 0:
        return None
    i = int(hits[0])
    return (
        np.asarray(clips.log_mel[i]),
        f"real: Audio Set clip {clips.video_ids[i]} (Siren), log-Mel from recipe audioset-audio",
    )


def synthetic_log_mel_clips(
    n_clips: int, n_classes: int, *, frames: int = 101, mels: int = 64, mean_labels: float = 1.6, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic multi-label log-Mel clips ``float32 [n, frames, mels]`` (dB-like) and labels ``bool [n, C]``
    for the CPU code path of the log-Mel CNN teachers: class ``c`` is a Gaussian Mel band (own centre and
    width) amplitude-modulated at its own rate; a clip is a noise floor plus its classes' patterns.
    Long-tailed class frequencies (Zipf), about ``mean_labels`` labels per clip (at least one)."""
    if n_clips < 1 or n_classes < 1 or frames < 1 or mels < 1:
        raise ValueError("n_clips, n_classes, frames and mels must be positive")
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, n_classes + 1)
    freq /= freq.sum()
    labels = rng.random((n_clips, n_classes)) < np.minimum(1.0, freq * max(mean_labels - 1, 0))
    labels[np.arange(n_clips), rng.choice(n_classes, size=n_clips, p=freq)] = True
    centre = rng.uniform(4, mels - 4, n_classes)
    width = rng.uniform(1.5, 5.0, n_classes)
    rate = rng.uniform(0.5, 8.0, n_classes) / frames
    band = np.exp(-0.5 * ((np.arange(mels)[None] - centre[:, None]) / width[:, None]) ** 2)  # [C, mels]
    t = np.arange(frames)
    X = rng.normal(-60.0, 4.0, size=(n_clips, frames, mels)).astype(np.float32)
    for i in range(n_clips):
        cls = np.flatnonzero(labels[i])
        phase = rng.uniform(0, 2 * np.pi, cls.size)
        env = 0.5 + 0.5 * np.sin(2 * np.pi * rate[cls, None] * t[None] + phase[:, None])  # [k, frames]
        X[i] += (30.0 * env[:, :, None] * band[cls, None, :]).sum(0)
    return X, labels


def load_logmel_clips(
    data: str, subset: str = "big", *, n_clips: int = 240, n_classes: int = 10, frames: int = 64, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, str]:
    """Log-Mel clips for the CNN teachers: ``data="real"`` reads the prepared raw-audio recipe
    ``audioset-audio`` (``log_mel`` [n, 1001, 64], labels restricted to the subset's classes;
    FileNotFoundError naming the recipe when it is not prepared); ``"synthetic"`` draws
    :func:`synthetic_log_mel_clips`. Returns ``(X, Y, provenance)``."""
    if data == "synthetic":
        X, Y = synthetic_log_mel_clips(n_clips, n_classes, frames=frames, seed=seed)
        return (
            X,
            Y,
            (
                f"synthetic log-Mel clips ({n_clips} clips x {frames} frames x 64 bands, {n_classes} classes, "
                f"seed {seed}): code path only"
            ),
        )
    if data != "real":
        raise ValueError(f'logmel["data"]={data!r}: expected "real" or "synthetic"')
    clips = audioset.audio_clips()
    if clips is None:
        raise FileNotFoundError(
            'logmel["data"]="real": raw Audio Set audio is not prepared; run `make data-audioset-audio` '
            "(python -m data_recipes prepare audioset-audio; needs yt-dlp and network) or use 'synthetic'"
        )
    emb = audioset.load("real", subset=subset)
    Y = clips.labels[:, audioset.class_columns(emb.class_mids)]
    keep = np.flatnonzero(Y.any(1))
    X = clips.log_mel[keep]
    return (
        np.asarray(X, np.float32),
        Y[keep],
        f"real: {len(keep):,} Audio Set clips with raw audio (recipe audioset-audio), {subset} subset",
    )


@dataclass(frozen=True)
class EnsembleInputs:
    """What one ensemble of a subset is trained on: bal_train clip features ``X`` and labels ``Y``, the teachers'
    ``partitions``, the validation rows ``val`` (checkpoint selection), the eval clips' features ``X_test`` and
    labels ``Y_test`` (scored, never selected on), the ensemble's ``seed`` and ``name`` ("big 10") and the rows
    of the whole ``teacher_pool`` (the partitions are cut from it)."""

    X: np.ndarray
    Y: np.ndarray
    partitions: Partitions
    val: np.ndarray
    X_test: np.ndarray
    Y_test: np.ndarray
    seed: int
    name: str
    teacher_pool: np.ndarray


def ensemble_inputs(
    ds: audioset.AudioSetEmbeddings,
    subset: str,
    n_teachers: int,
    *,
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
    seed: int = 0,
) -> EnsembleInputs:
    """The inputs of the ``n_teachers``-teacher ensemble of ``subset`` (1 = the single model on the whole teacher
    pool): :func:`pool_split`, :func:`teacher_partitions` seeded by :func:`run_seed`, :func:`clip_features`. The one
    place they are made, so notebooks 04 and 05 ask for the same ensemble (and the same cached votes)."""
    bal, ev = ds.splits["bal_train"], ds.splits["eval"]
    split = pool_split(len(bal.labels), student_fraction=student_fraction, val_fraction=val_fraction, seed=seed)
    ens_seed = run_seed(seed, subset, n_teachers)
    return EnsembleInputs(
        clip_features(bal),
        bal.labels,
        teacher_partitions(split, n_teachers, seed=ens_seed),
        split.val,
        clip_features(ev),
        ev.labels,
        ens_seed,
        f"{subset} {n_teachers}",
        split.teacher,
    )


def replicate_seeds(seeds: Sequence[int] | None, seed: int) -> tuple[int, ...]:
    """The seeds of the replicate ensembles (a notebook's ``teacher_replicates["seeds"]``): each distinct, none
    negative; None or empty: the study's ``seed`` alone (one ensemble per teacher count, as before replicates)."""
    if seeds is None or len(seeds) == 0:
        return (int(seed),)
    out = tuple(int(s) for s in seeds)
    if any(s < 0 for s in out) or len(set(out)) != len(out) or any(s != x for s, x in zip(out, seeds)):
        raise ValueError(f'teacher_replicates["seeds"]={list(seeds)!r}: expected distinct non-negative integers')
    return out


def replicate_members(
    ds: audioset.AudioSetEmbeddings,
    subset: str,
    n_teachers: int,
    seeds: Sequence[int],
    *,
    student_fraction: float = 0.2,
    val_fraction: float = 0.1,
) -> list[EnsembleInputs]:
    """The inputs of the replicate ensembles of ``subset`` with ``n_teachers`` teachers, one per seed of ``seeds``
    (:func:`ensemble_inputs` with that seed): each replicate draws its own pool split (teacher pool, validation,
    student pool), its own partitions and its own training seeds, so the replicates are independent draws of
    everything random on the teachers' side (the bal_train clips and the eval clips are the same)."""
    return [
        ensemble_inputs(ds, subset, n_teachers, student_fraction=student_fraction, val_fraction=val_fraction, seed=s)
        for s in seeds
    ]
