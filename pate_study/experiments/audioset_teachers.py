"""Audio Set teachers (Muschiol 2021, ch. 4.3-5.1): data sets, sampler statistics and teacher studies.

Real-data path: the released 128-d VGGish embeddings of bal_train (teacher/student pools) and
eval (test set), restricted to the "big" or "small" label subset (:mod:`pate_study.data.audioset`).
The thesis trained ImageNet-pretrained ResNets on log-Mel spectrograms of ~343k crawled clips;
here the teachers are embedding MLPs on ~7.8k (big) / ~1.3k (small) clips: "real data at
reduced scale". The log-Mel CNNs (:func:`pate_study.models.logmel_model`) are the GPU path.

Splits (:func:`pool_split`): the subset's bal_train clips are shuffled once (seed) and cut into
the teacher pool (``1 - student_fraction``; the thesis' 80 %) and the student pool (the thesis'
20 %); the validation split for checkpoint selection is taken from the student pool
(``val_fraction`` of all clips). The student pool is the public side of PATE, so selecting teacher
checkpoints on it costs no privacy, and the test set (eval) is never used for selection (the
thesis selected on its test set, §9 of the notes). Teachers get disjoint, equal partitions of the
teacher pool (:func:`pate_study.ensemble.make_partitions`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pate_study.data import audioset
from pate_study.registry import published
from pate_study.verdicts import Verdict, not_comparable, within_tolerance

logger = logging.getLogger(__name__)

__all__ = [
    "SUBSETS", "TEACHER_COUNTS", "PoolSplit", "pool_split", "load_subsets", "table_4_1",
    "synthetic_siren", "siren_log_mel", "class_occurrences", "top_class",
]

SUBSETS = ("small", "big")
TEACHER_COUNTS = (1, 10, 20, 50)


# ----------------------------------------------------------------------------- data and splits
@dataclass(frozen=True)
class PoolSplit:
    """Indices into a subset's bal_train clips: ``teacher`` pool, ``val`` (checkpoint selection)
    and ``student`` (student training pool); disjoint, together all clips."""

    teacher: np.ndarray
    val: np.ndarray
    student: np.ndarray


def pool_split(n_clips: int, *, student_fraction: float = 0.2, val_fraction: float = 0.1,
               seed: int = 0) -> PoolSplit:
    """Shuffle ``n_clips`` clips (seed) and cut them into teacher pool / validation / student pool.

    ``student_fraction``: the public side, 0.2 as in Muschiol Table 4.1 (19,139 / 95,795 small,
    68,595 / 342,978 big); ``val_fraction`` (of all clips) is taken out of it, so
    ``0 < val_fraction < student_fraction < 1``.
    """
    if not 0 < val_fraction < student_fraction < 1:
        raise ValueError(f"val_fraction={val_fraction}, student_fraction={student_fraction}: expected "
                         f"0 < val_fraction < student_fraction < 1 (validation comes out of the student pool)")
    if n_clips < 3:
        raise ValueError(f"n_clips={n_clips}: need at least 3 clips for teacher, validation and student pools")
    order = np.random.default_rng(seed).permutation(n_clips)
    n_public = max(2, int(round(student_fraction * n_clips)))
    n_val = max(1, min(n_public - 1, int(round(val_fraction * n_clips))))
    teacher, public = order[: n_clips - n_public], order[n_clips - n_public:]
    return PoolSplit(np.sort(teacher), np.sort(public[:n_val]), np.sort(public[n_val:]))


def load_subsets(data: str = "auto", *, seed: int = 0, big_kwargs: dict | None = None,
                 n_synthetic: tuple[int, int] = (2000, 1000)) -> dict[str, audioset.AudioSetEmbeddings]:
    """The "small" and "big" subsets (clips with at least one subset label, Muschiol §4.3.1)."""
    return {s: audioset.load(data, subset=s, seed=seed, big_kwargs=big_kwargs, n_synthetic=n_synthetic)
            for s in SUBSETS}


# ----------------------------------------------------------------------------- Table 4.1
def _row_label(subset: str, n_teachers: int) -> str:
    return "baseline" if n_teachers == 1 else f"{subset} {n_teachers}"


def table_4_1(datasets: dict[str, audioset.AudioSetEmbeddings], *, teacher_counts=TEACHER_COUNTS,
              student_fraction: float = 0.2, val_fraction: float = 0.1, seed: int = 0) -> pd.DataFrame:
    """Muschiol Table 4.1 for our data: per subset and teacher count, overall size (bal_train clips
    of the subset), class number, teacher pool, per-teacher partition (floor of pool / T), student
    pool (without the validation clips), validation and test size (eval clips of the subset), with
    the thesis' printed numbers beside (merged cells = same as baseline) and a verdict per row."""
    thesis = {(r["block"], r["data_set"]): r for r in published("muschiol2021-table4.1")["rows"]}
    rows = []
    for subset, ds in datasets.items():
        n = len(ds.splits["bal_train"].labels)
        split = pool_split(n, student_fraction=student_fraction, val_fraction=val_fraction, seed=seed)
        base = thesis[(subset, "baseline")]
        for t in teacher_counts:
            label = _row_label(subset, t)
            printed = thesis.get((subset, label), {})
            paper = {k: (printed.get(k) if printed.get(k) is not None else base[k]) for k in base
                     if k not in ("block", "data_set")}
            ours = {"overall_size": n, "class_number": len(ds.class_names),
                    "overall_teacher_train": len(split.teacher), "individual_teacher_train": len(split.teacher) // t,
                    "student_train_size": len(split.student), "test_size": len(ds.splits["eval"].labels)}
            v = table_4_1_verdict(subset, label, paper, ours, ds.source.kind)
            rows.append({"block": subset, "data_set": label,
                         **{f"{k}_ours": ours[k] for k in ours}, "validation_size_ours": len(split.val),
                         **{f"{k}_thesis": paper[k] for k in ours},
                         "ratio_ours_to_thesis": round(n / paper["overall_size"], 4), **v.as_record()})
    return pd.DataFrame(rows)


def table_4_1_verdict(subset: str, label: str, paper: dict, ours: dict, kind: str) -> Verdict:
    """Sizes: not comparable (the thesis' crawled ~343k / ~96k clips vs the released bal_train
    embeddings); class number: must agree for "small" (15); for "big" ours is a documented rule."""
    if kind != "real":
        return not_comparable("synthetic stand-in data: sizes are of the stand-in, not of Audio Set")
    scale = (f"{ours['overall_size']:,} bal_train clips here vs {paper['overall_size']:,} crawled clips in the thesis "
             f"({ours['overall_size'] / paper['overall_size']:.1%}); test {ours['test_size']:,} official eval clips of "
             f"the subset vs {paper['test_size']:,} (the thesis' crawl lost removed videos)")
    classes = within_tolerance(paper["class_number"], ours["class_number"], atol=0.5, quantity="class number")
    if classes.verdict == "agrees":
        return not_comparable(f"class number agrees ({ours['class_number']}); sizes differ by construction: {scale}",
                              rule="class number exact; sizes not comparable (different clip sources)")
    return not_comparable(f"class number {ours['class_number']} vs {paper['class_number']} (the thesis lists no "
                          f"classes; ours is the documented ontology rule); {scale}",
                          rule="class number exact; sizes not comparable (different clip sources)")


# ----------------------------------------------------------------------------- Fig 2.1
def synthetic_siren(duration_s: float = 10.0, sr: int = 44_100, *, low_hz: float = 650.0, high_hz: float = 1500.0,
                    sweep_s: float = 4.0, seed: int = 0) -> np.ndarray:
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
    synthetic siren of :func:`synthetic_siren` through :func:`pate_study.features.log_mel_librosa`."""
    from pate_study.features import log_mel_librosa

    if data != "synthetic":
        clip = _prepared_siren_clip()
        if clip is not None:
            return clip
    return log_mel_librosa(synthetic_siren(seed=seed)), (
        "synthetic siren (tone gliding 650-1500 Hz every 4 s, 3 harmonics; raw Audio Set audio not prepared), "
        "log-Mel 44.1 kHz, hop 441, n_fft 2048, 64 bands, dB")


def _prepared_siren_clip() -> tuple[np.ndarray, str] | None:
    import data_recipes

    try:
        recipe = data_recipes.get_recipe("audioset-audio")
        if not recipe.is_prepared():
            return None
        folder = data_recipes.prepared_dir("audioset-audio")
    except (KeyError, ValueError, FileNotFoundError):
        return None
    labels = np.load(folder / "labels.npy", mmap_mode="r")
    siren = _class_index("Siren")
    hits = np.flatnonzero(np.asarray(labels[:, siren]))
    if hits.size == 0:
        return None
    i = int(hits[0])
    vid = np.load(folder / "video_ids.npy")[i]
    mel = np.asarray(np.load(folder / "log_mel.npy", mmap_mode="r")[i])
    return mel, f"real: Audio Set clip {vid} (Siren), log-Mel from recipe audioset-audio"


def _class_index(name: str) -> int:
    folder = audioset.resolve_source(audioset.NAME, "real")
    import csv

    with open(folder / "class_labels_indices.csv", newline="") as f:
        for row in list(csv.reader(f))[1:]:
            if row[2] == name:
                return int(row[0])
    raise ValueError(f"class {name!r} not in class_labels_indices.csv")


# ----------------------------------------------------------------------------- Fig 5.9
def class_occurrences(labels: np.ndarray, batches: np.ndarray) -> np.ndarray:
    """Per-class number of positive labels over the drawn ``batches`` (``int [iterations, batch]``
    clip indices): the quantity of Muschiol Fig 5.9 (class occurrences in 1,000 iterations)."""
    labels = np.asarray(labels, dtype=bool)
    batches = np.asarray(batches)
    if batches.ndim != 2 or batches.size == 0:
        raise ValueError(f"batches of shape {batches.shape}: expected [iterations, batch_size] clip indices")
    if batches.min() < 0 or batches.max() >= len(labels):
        raise ValueError(f"batches: indices must lie in [0, {len(labels)})")
    return labels[batches.ravel()].sum(0).astype(np.int64)


def top_class(counts: np.ndarray, names) -> tuple[str, int]:
    """Name and count of the most frequent class."""
    i = int(np.argmax(counts))
    return str(names[i]), int(counts[i])


# ----------------------------------------------------------------------------- synthetic log-Mel clips
def synthetic_log_mel_clips(n_clips: int, n_classes: int, *, frames: int = 101, mels: int = 64,
                            mean_labels: float = 1.6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
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


# ----------------------------------------------------------------------------- per-class metrics
def per_class_ap(labels: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Average precision per class (sklearn); NaN for classes without a positive clip."""
    from sklearn.metrics import average_precision_score

    Y, S = np.asarray(labels, bool), np.asarray(scores, float)
    if Y.shape != S.shape or Y.ndim != 2:
        raise ValueError(f"labels {Y.shape}, scores {S.shape}: expected equal [n, C] shapes")
    out = np.full(Y.shape[1], np.nan)
    keep = Y.any(0)
    if keep.any():
        out[keep] = average_precision_score(Y[:, keep], S[:, keep], average=None)
    return out


def ranked_classes(ap: np.ndarray, k: int = 10) -> dict[str, np.ndarray]:
    """Class indices of the ``k`` best, ``k`` medium (centred on the median rank) and ``k`` worst
    classes by AP (NaN classes ignored); Muschiol Figs A.2-A.5 do not say how "medium" is chosen."""
    ok = np.flatnonzero(np.isfinite(ap))
    order = ok[np.argsort(-ap[ok], kind="stable")]
    k = min(k, max(1, order.size // 3))
    mid = order.size // 2
    return {"best": order[:k], "medium": order[max(0, mid - k // 2): max(0, mid - k // 2) + k], "worst": order[-k:]}


def micro_curves(labels: np.ndarray, scores: np.ndarray) -> dict[str, np.ndarray]:
    """Micro-averaged PR and ROC curves (all clip-class pairs pooled; the thesis does not state its averaging)."""
    from sklearn.metrics import precision_recall_curve, roc_curve

    y, s = np.asarray(labels, bool).ravel(), np.asarray(scores, float).ravel()
    precision, recall, _ = precision_recall_curve(y, s)
    fpr, tpr, _ = roc_curve(y, s)
    return {"precision": precision, "recall": recall, "fpr": fpr, "tpr": tpr}
