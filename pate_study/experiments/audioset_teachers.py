"""Audio Set teachers (Muschiol 2021, ch. 4.3-5.1): data sets, sampler statistics and teacher studies.

Real-data path: the released 128-d VGGish embeddings of bal_train (teacher/student pools) and
eval (test set), restricted to the "big" or "small" label subset (:mod:`pate_study.data.audioset`).
The thesis trained ImageNet-pretrained ResNets on log-Mel spectrograms of ~343k crawled clips;
here the teachers are embedding MLPs on ~7.8k (big) / ~1.3k (small) clips: "real data at
reduced scale". The log-Mel CNNs (:func:`pate_study.learning.models.logmel_model`) are the GPU path.

Splits (:func:`pool_split`): the subset's bal_train clips are shuffled once (seed) and cut into
the teacher pool (``1 - student_fraction``; the thesis' 80 %) and the student pool (the thesis'
20 %); the validation split for checkpoint selection is taken from the student pool
(``val_fraction`` of all clips). The student pool is the public side of PATE, so selecting teacher
checkpoints on it costs no privacy, and the test set (eval) is never used for selection (the
thesis selected on its test set, §9 of the notes). Teachers get disjoint, equal partitions of the
teacher pool (:func:`pate_study.learning.partitions.make_partitions`).
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pate_study.data import audioset
from pate_study.reporting.registry import published
from pate_study.reporting.verdicts import Verdict, agrees, differs, not_comparable, within_tolerance

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
    synthetic siren of :func:`synthetic_siren` through :func:`pate_study.learning.features.log_mel_librosa`."""
    from pate_study.learning.features import log_mel_librosa

    if data != "synthetic":
        clip = _prepared_siren_clip()
        if clip is not None:
            return clip
    return log_mel_librosa(synthetic_siren(seed=seed)), (
        "synthetic siren (tone gliding 650-1500 Hz every 4 s, 3 harmonics; raw Audio Set audio not prepared), "
        "log-Mel 44.1 kHz, hop 441, n_fft 2048, 64 bands, dB")


def siren_verdict(source: str, shape: tuple[int, ...]) -> Verdict:
    """Fig 2.1 is an illustration of one (unnamed) siren clip: a synthetic stand-in cannot agree with it, and
    a real clip is another clip; the format (1001 frames x 64 bands for 10 s) holds by construction of
    the features, so it is stated, not counted as agreement."""
    fmt = f"{shape[0]} frames x {shape[1]} Mel bands (1001 x 64 for a 10 s clip by construction of the features)"
    if source.startswith("synthetic"):
        return not_comparable(f"synthetic stand-in siren, not the thesis' real clip; {fmt}",
                              rule="an illustration of a clip: a stand-in cannot agree with it")
    return not_comparable(f"a real Siren clip of Audio Set, not necessarily the thesis' (which it does not name); {fmt}",
                          rule="an illustration of a clip: a different clip cannot agree with it")


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


# ----------------------------------------------------------------------------- thesis numbers used in the text
def thesis_baseline_maps() -> dict[str, float]:
    """The baseline teachers' mAP printed in the thesis' tables: small from Table A.1, big from Table 5.1
    (its Fig 5.1 text says ~0.65 / ~0.35 instead; notes §9)."""
    small = {r["n_teachers"]: r for r in published("muschiol2021-tableA.1")["rows"]}["baseline"]["map"]
    big = {r["n_teachers"]: r for r in published("muschiol2021-table5.1")["rows"]}["baseline"]["map_raw"]
    return {"small": float(small), "big": float(big)}


def scale_range(table41: pd.DataFrame) -> tuple[float, float]:
    """Smallest and largest ratio of our bal_train clips to the thesis' clips over the subsets (Table 4.1)."""
    r = table41.groupby("block").ratio_ours_to_thesis.first()
    return float(r.min()), float(r.max())


def min_clips_per_class(labels: np.ndarray) -> int:
    """Fewest clips of any class (bal_train has at least ~59 per class: a nearly flat distribution)."""
    return int(np.asarray(labels, bool).sum(0).min())


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
    """Average precision per class; NaN for classes without a positive clip."""
    from pate_study.learning.metrics import average_precision_per_class

    return average_precision_per_class(labels, scores)


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


def sampler_batches(labels: np.ndarray, ids: np.ndarray, kind: str, *, iterations: int = 1000, batch_size: int = 64,
                    seed: int = 0) -> np.ndarray:
    """``int [iterations, batch_size]`` clip ids drawn from the rows ``ids`` by the ``"balanced"``
    sampler (Muschiol §4.4.2, :class:`pate_study.learning.samplers.LabelBalancedStream`) or ``"random"``
    (successive random permutations, :class:`pate_study.learning.samplers.PermutationStream`)."""
    import torch

    from pate_study.learning.samplers import LabelBalancedStream, PermutationStream

    ids = np.asarray(ids, dtype=np.int64)
    if kind == "balanced":
        stream = LabelBalancedStream(np.asarray(labels)[ids], ids, rng=np.random.default_rng(seed))
        draw = stream.draw
    elif kind == "random":
        perm = PermutationStream(ids, torch.Generator().manual_seed(int(seed)))
        draw = lambda k: perm.draw(k).numpy()  # noqa: E731
    else:
        raise ValueError(f"sampler={kind!r}: expected 'balanced' or 'random'")
    return np.stack([draw(batch_size) for _ in range(iterations)])


def sampler_statistics(labels: np.ndarray, ids: np.ndarray, *, iterations: int = 1000, batch_size: int = 64,
                       seed: int = 0) -> pd.DataFrame:
    """Fig 5.9: per-class occurrences in ``iterations`` batches of ``batch_size`` for the balanced and
    the random sampler over the same rows; one row per class (``balanced``, ``random`` counts) and
    the class's count in the rows themselves (``in_partition``)."""
    Y = np.asarray(labels, bool)
    counts = {k: class_occurrences(Y, sampler_batches(Y, ids, k, iterations=iterations, batch_size=batch_size,
                                                      seed=seed)) for k in ("balanced", "random")}
    return pd.DataFrame({"class_index": np.arange(Y.shape[1]), "in_partition": Y[np.asarray(ids)].sum(0), **counts})


def teacher_partitions(split: PoolSplit, n_teachers: int, *, seed: int = 0):
    """Disjoint, equal partitions of the teacher pool (``floor(pool / T)`` clips each; indices into
    the subset's bal_train clips), drawn by :func:`pate_study.learning.partitions.make_partitions`."""
    from pate_study.learning.partitions import make_partitions

    size = len(split.teacher) // n_teachers
    if size < 1:
        raise ValueError(f"n_teachers={n_teachers}: more teachers than the {len(split.teacher)} clips of the "
                         f"teacher pool; use at most {len(split.teacher)} teachers")
    return make_partitions(int(split.teacher.max()) + 1, n_teachers, size, seed=seed, pool=split.teacher)


def occurrence_spread(counts: np.ndarray) -> float:
    """Spread of per-class occurrence counts: max / median over classes that occur (Fig 5.9's "tighter")."""
    c = np.asarray(counts, float)
    c = c[c > 0]
    return float(c.max() / np.median(c)) if c.size else float("nan")


# ----------------------------------------------------------------------------- embedding teachers
def clip_features(split: audioset.Split) -> np.ndarray:
    """``float32 [n, 128]``: each clip's VGGish embedding frames averaged over its real frames, mapped
    from the released uint8 quantisation to about [-2, 2] by the fixed (data-independent) ``(x - 128) / 64``."""
    emb = split.embeddings.astype(np.float32)
    frames = np.maximum(split.n_frames.astype(np.float32), 1)[:, None]
    mask = (np.arange(emb.shape[1])[None] < split.n_frames[:, None])[:, :, None]
    return (((emb - 128.0) / 64.0) * mask).sum(1) / frames


@dataclass(frozen=True)
class TeacherSpec:
    """Embedding-MLP teacher recipe (Muschiol §5.1.3 transferred to embeddings): ``hidden`` widths,
    ``dropout``, Adam ``lr``, ``batch_size``, a step schedule of ``steps`` with an evaluation every
    ``eval_every`` steps, the ``sampler`` ("balanced" §4.4.2 or "random"), mixup ``mixup_alpha``
    (None: off; not stated in the thesis, 1.0 after PANNs) and the checkpoint criterion on the
    validation split (``select_on``). ``patience``: early stopping after that many evaluations without
    a better validation score (the thesis stops "after a decrease in performance ... is detected";
    None: all ``steps``). ``class_weights``: None (plain BCE, the thesis' final recipe) or "adaptive"
    (§5.1.3, Fig 5.11: :class:`pate_study.learning.training.AdaptiveClassWeights` with ``weight_max`` and
    ``weight_temperature``)."""

    hidden: tuple[int, ...] = (256, 256)
    dropout: float = 0.5
    lr: float = 1e-3
    batch_size: int = 64
    steps: int = 1000
    eval_every: int = 100
    sampler: str = "balanced"
    mixup_alpha: float | None = 1.0
    select_on: str = "mAP"
    patience: int | None = None
    class_weights: str | None = None
    weight_max: float = 4.0
    weight_temperature: float = 0.1

    def __post_init__(self) -> None:
        if self.class_weights not in (None, "adaptive"):
            raise ValueError(f"class_weights={self.class_weights!r}: expected None (plain BCE) or 'adaptive' (§5.1.3)")

    def evaluation_hook(self):
        """The ``on_evaluate`` hook of :func:`pate_study.learning.training.train_stacked` for ``class_weights`` (or None)."""
        from pate_study.learning.training import AdaptiveClassWeights

        if self.class_weights == "adaptive":
            return AdaptiveClassWeights(self.weight_max, self.weight_temperature)
        return None

    def replace(self, **kw) -> "TeacherSpec":
        import dataclasses

        return dataclasses.replace(self, **{k: (tuple(v) if k == "hidden" else v) for k, v in kw.items()})


@dataclass
class TeacherRun:
    """One trained ensemble: ``history`` (step, teacher, split, metric, value; split "curve" = the
    fixed eval sample scored during training), ``best_step`` per teacher, final per-teacher ``map`` /
    ``auc`` and per-class ``class_ap`` ``[T, C]`` on the full test set at the selected checkpoints,
    ``probs0`` (teacher 0's test probabilities) and ``train_counts`` ``[T, C]`` (positives per teacher);
    ``seconds``: wall time (volatile: logged, not a result); ``weight_trace``: with adaptive class weights,
    per evaluation and teacher the min / mean / max weight (:class:`pate_study.learning.training.AdaptiveClassWeights`)."""

    name: str
    n_teachers: int
    spec: TeacherSpec
    history: pd.DataFrame
    best_step: np.ndarray
    map: np.ndarray
    auc: np.ndarray
    class_ap: np.ndarray
    probs0: np.ndarray
    train_counts: np.ndarray
    seconds: float
    weight_trace: pd.DataFrame | None = None


def _stacked_probabilities(model, params, source, n_rows: int, chunk: int = 2048):
    """Per-teacher probabilities ``[T, n, C]`` of a trained stack on all ``n_rows`` rows of ``source``
    (computed on the model's device, returned on the CPU)."""
    import torch

    dev = getattr(model, "device", torch.device("cpu"))
    params = [p.to(dev) for p in params]
    out = []
    with torch.no_grad():
        for c0 in range(0, n_rows, chunk):
            rows = torch.arange(c0, min(n_rows, c0 + chunk), device=dev)
            out.append(torch.sigmoid(model.forward(params, [], source, rows, training=False)).float().cpu())
    return torch.cat(out, dim=1).numpy()


def train_teachers(X: np.ndarray, Y: np.ndarray, partitions, val: np.ndarray, X_test: np.ndarray,
                   Y_test: np.ndarray, spec: TeacherSpec, *, seed: int = 0, curve_clips: int = 2000,
                   name: str = "", last: bool = False, device: str | None = None, backend: str = "local",
                   teachers_per_task: int | None = None) -> TeacherRun:
    """Train one embedding-MLP teacher per partition with :func:`pate_study.learning.training.train_stacked`
    (stacked, step schedule, per-teacher sampler/mixup, shared validation split ``val`` for checkpoint
    selection), recording validation and test-sample ("curve": ``curve_clips`` fixed eval clips) mAP/AUC
    every ``eval_every`` steps; then score every teacher on the full test set. ``last=True`` keeps the
    final parameters (used for per-class curves over iterations). ``device``: "cpu", "cuda" or None
    (:func:`pate_study.core.device.choose_device`: CUDA when available, else the CPU; the same seed gives the
    same CPU results as before). ``spec.class_weights="adaptive"`` updates per-class loss weights at every
    evaluation (Fig 5.11). The wall time is logged (and kept in ``seconds``), never recorded as a result.

    ``backend="ray"`` / ``teachers_per_task``: the teachers in shards, one Ray task each
    (:func:`pate_study.experiments.audioset_distributed.train_teachers_sharded`; ``device`` applies in each task)."""
    if backend != "local" or teachers_per_task is not None:  # cluster path (issue 15); the local path is below
        from pate_study.experiments.audioset_distributed import train_teachers_sharded

        return train_teachers_sharded(X, Y, partitions, val, X_test, Y_test, spec, seed=seed, curve_clips=curve_clips,
                                      name=name, last=last, device=device, backend=backend,
                                      teachers_per_task=teachers_per_task)
    import time

    import torch

    from pate_study.core.device import choose_device
    from pate_study.learning.stacked import StackedMLP
    from pate_study.learning.training import TrainConfig, teacher_seeds, train_stacked

    start = time.perf_counter()
    dev = choose_device(device)
    n = partitions.n_teachers
    seeds = teacher_seeds(seed, n)
    model = StackedMLP((X.shape[1], *spec.hidden, Y.shape[1]), seeds, dropout=spec.dropout, device=dev)
    config = TrainConfig(task="multilabel", lr=spec.lr, batch_size=spec.batch_size, max_steps=spec.steps,
                         eval_every=spec.eval_every, sampler=spec.sampler, mixup_alpha=spec.mixup_alpha,
                         selection="last" if last else "validation", select_on=spec.select_on,
                         step_patience=None if last else spec.patience, allow_empty_labels=True)
    curve = np.sort(np.random.default_rng(seed).permutation(len(X_test))[:curve_clips])
    val_rows = np.tile(np.asarray(val, dtype=np.int64), (n, 1))
    res = train_stacked(model, X, Y.astype(np.float32), partitions.train, val_rows, config, seeds,
                        device=dev, test=(X_test[curve], Y_test[curve].astype(np.float32)),
                        progress=False, desc=name or "teachers", on_evaluate=(hook := spec.evaluation_hook()))
    history = res.history.replace({"split": {"test": "curve"}})
    probs = _stacked_probabilities(model, res.params, model.source(X_test, "X_test"), len(X_test))
    ap = np.stack([per_class_ap(Y_test, p) for p in probs])
    from pate_study.learning.metrics import mean_roc_auc

    auc = np.array([mean_roc_auc(Y_test, p) for p in probs])  # noqa: per teacher
    seconds = time.perf_counter() - start
    logger.info("%s: %d teachers, %d steps on %s in %.1f s", name or "teachers", n, spec.steps, dev, seconds)
    return TeacherRun(name, n, spec, history, res.best_step, np.nanmean(ap, axis=1), auc, ap, probs[0],
                      Y[partitions.train].sum(1), seconds, pd.DataFrame(hook.trace) if hook is not None else None)


def run_seed(seed: int, subset: str, n_teachers: int) -> int:
    """A distinct seed per (subset, teacher count), so that no two ensembles share initialisations."""
    return int(seed) * 10_007 + SUBSETS.index(subset) * 1_000 + int(n_teachers)


def first_teachers(partitions, k: int):
    """The partitions of the first ``k`` teachers (ablations train a few teachers of "big 10")."""
    from pate_study.learning.partitions import Partitions

    return Partitions(partitions.train[:k])


def curves(run: TeacherRun | pd.DataFrame, metric: str = "mAP", split: str = "curve") -> pd.DataFrame:
    """``step x teacher`` table of one metric from a run's history (or a history frame itself); a teacher
    stopped early has NaN after its last evaluation."""
    h = run.history if isinstance(run, TeacherRun) else run
    h = h[(h.split == split) & (h.metric == metric)]
    return h.pivot_table(index="step", columns="teacher", values="value")


def curve_stats(run: TeacherRun | pd.DataFrame, metric: str = "mAP", split: str = "curve") -> pd.DataFrame:
    """Per step, over the teachers (the one place the notebook's curves are summarised): ``mean``, ``min``,
    ``max`` of ``metric`` over the teachers still training at that step, and ``teachers`` (how many; fewer
    once early stopping removed some). Index: step."""
    c = curves(run, metric, split)
    return pd.DataFrame({"mean": c.mean(axis=1), "min": c.min(axis=1), "max": c.max(axis=1),
                         "teachers": c.notna().sum(axis=1)})


def curve_wobble(run: TeacherRun | pd.DataFrame, metric: str = "mAP", split: str = "curve") -> float:
    """Mean absolute change of the teachers' mean curve between evaluations (Fig 5.8's "stabler")."""
    return float(curve_stats(run, metric, split)["mean"].diff().abs().mean())


def adaptive_weights_verdict(plain_map: float, adaptive_map: float, *, tolerance: float = 0.01) -> Verdict:
    """Fig 5.11, §5.1.3: "weight scaling in the loss function has no positive effect". Agrees when the
    adaptive arm's final mAP does not exceed plain BCE's by more than ``tolerance`` (declared before the run)."""
    rule = f"adaptive-weight final mAP <= plain BCE's + {tolerance} (\"no positive effect\")"
    gain = adaptive_map - plain_map
    if gain <= tolerance:
        return agrees(rule=rule)
    return differs(f"adaptive class weights raise the final mAP by {gain:+.3f} (embedding MLPs, validation-based weights)",
                   rule=rule)


def class_curve_verdict(thesis_value: float, ours: float, what: str) -> Verdict:
    """Figs A.2/A.3: per-class AP levels of the thesis' ResNets on log-Mel (274k / 27k clips) against our
    embedding MLPs on 6.2k / 0.6k clips: a different model, input and scale, so not comparable."""
    return not_comparable(f"{what}: {ours:.3f} here vs ~{thesis_value} in the thesis; embedding MLPs on 128-d VGGish clip "
                          "embeddings of a few thousand clips vs ResNets on log-Mel of 274k / 27k clips",
                          rule="per-class AP levels depend on model, input and data scale")


def architecture_verdict(final: dict[str, dict[str, float]]) -> Verdict:
    """Fig 5.4 on real log-Mel clips: the thesis' VGGs reach "slightly higher mAP" but a worse AUC than its
    ResNets. ``final``: architecture -> {"mAP", "auc"} at the last evaluation (mean over teachers)."""
    rule = "mean final mAP of VGG-11/19 >= ResNet-18/34's and mean final AUC below theirs"
    fam = {f: [final[a] for a in final if a.startswith(f)] for f in ("vgg", "resnet")}
    if not fam["vgg"] or not fam["resnet"]:
        return not_comparable("needs both VGG and ResNet arms", rule=rule)
    mean = {f: {m: float(np.mean([r[m] for r in rows])) for m in ("mAP", "auc")} for f, rows in fam.items()}
    if mean["vgg"]["mAP"] >= mean["resnet"]["mAP"] and mean["vgg"]["auc"] < mean["resnet"]["auc"]:
        return agrees(rule=rule)
    return differs(f"VGG mAP {mean['vgg']['mAP']:.3f} / AUC {mean['vgg']['auc']:.3f} vs ResNet "
                   f"{mean['resnet']['mAP']:.3f} / {mean['resnet']['auc']:.3f}", rule=rule)


def checkpoint_class_ap(X: np.ndarray, Y: np.ndarray, train_rows: np.ndarray, X_test: np.ndarray, Y_test: np.ndarray,
                        spec: TeacherSpec, checkpoints, *, seed: int = 0) -> np.ndarray:
    """Per-class test AP ``[len(checkpoints), C]`` of one teacher after each number of steps in
    ``checkpoints`` (Figs A.2/A.3). Each checkpoint is the same seeded run stopped there (the loop is
    deterministic on the CPU, so a shorter run is a prefix of a longer one)."""
    from pate_study.learning.partitions import Partitions

    rows = Partitions(np.asarray(train_rows, dtype=np.int64)[None])
    out = []
    for s in checkpoints:
        run = train_teachers(X, Y, rows, np.zeros(0, np.int64), X_test, Y_test,
                             spec.replace(steps=int(s), eval_every=int(s)), seed=seed, curve_clips=1, last=True)
        out.append(run.class_ap[0])
    return np.stack(out)


# ----------------------------------------------------------------------------- log-Mel CNN teachers
def train_logmel_teachers(architecture: str, X: np.ndarray, Y: np.ndarray, partitions, val: np.ndarray,
                          X_test: np.ndarray, Y_test: np.ndarray, spec: TeacherSpec, *, width_scale: int = 1,
                          head: tuple[int, ...] | None = None, weights: str | None = None, seed: int = 0,
                          device: str | None = None, backend: str = "local",
                          teachers_per_task: int | None = None) -> tuple[pd.DataFrame, str, float]:
    """Muschiol's log-Mel teachers (:func:`pate_study.learning.models.logmel_model`), stacked with
    :class:`pate_study.learning.stacked.StackedModule` and trained by the same loop (bf16 autocast on CUDA,
    float32 on the CPU). ``weights``: a torchvision ImageNet state dict for every teacher
    (:func:`pate_study.learning.models.load_imagenet_weights`), else random init. Returns the history, the
    weights stamp and the wall time.

    ``backend="ray"`` / ``teachers_per_task``: the teachers in shards, one Ray task (one GPU) each; ``X`` may
    then be the path of a ``.npy`` on shared storage
    (:func:`pate_study.experiments.audioset_distributed.train_logmel_teachers_sharded`)."""
    if backend != "local" or teachers_per_task is not None:  # cluster path (issue 15); the local path is below
        from pate_study.experiments.audioset_distributed import train_logmel_teachers_sharded

        return train_logmel_teachers_sharded(architecture, X, Y, partitions, val, X_test, Y_test, spec,
                                             width_scale=width_scale, head=head, weights=weights, seed=seed,
                                             device=device, backend=backend, teachers_per_task=teachers_per_task)
    import time

    import torch

    from pate_study.core.device import choose_device
    from pate_study.learning.models import load_imagenet_weights, logmel_model, weights_stamp
    from pate_study.learning.stacked import StackedModule
    from pate_study.learning.training import TrainConfig, teacher_seeds, train_stacked

    start = time.perf_counter()
    dev = choose_device(device)
    n = partitions.n_teachers
    seeds = teacher_seeds(seed, n)
    modules = []
    for s in seeds[:, 0]:
        torch.manual_seed(int(s))
        m = logmel_model(architecture, Y.shape[1], width_scale=width_scale, dropout=spec.dropout, head=head)
        if weights:
            load_imagenet_weights(m, weights)
        modules.append(m)
    stamp = weights_stamp(modules[0])
    model = StackedModule(modules, seeds, device=dev)
    config = TrainConfig(task="multilabel", lr=spec.lr, batch_size=spec.batch_size, max_steps=spec.steps,
                         eval_every=spec.eval_every, sampler=spec.sampler, mixup_alpha=spec.mixup_alpha,
                         select_on=spec.select_on, allow_empty_labels=True)
    with deterministic_kernels(dev):
        res = train_stacked(model, X, Y.astype(np.float32), partitions.train,
                            np.tile(np.asarray(val, np.int64), (n, 1)), config, seeds, device=dev,
                            test=(X_test, Y_test.astype(np.float32)), progress=False, desc=architecture)
    seconds = time.perf_counter() - start
    logger.info("%s: %d teachers, %d steps on %s in %.1f s", architecture, n, spec.steps, dev, seconds)
    return res.history.replace({"split": {"test": "curve"}}), stamp, seconds


@contextlib.contextmanager
def deterministic_kernels(device):
    """Deterministic kernels for the CNN teachers on the CPU: ``torch.use_deterministic_algorithms`` and
    oneDNN's deterministic mode (``torch.backends.mkldnn``; its convolution backward may otherwise reduce
    across threads in a run-dependent order), restored afterwards. Results still depend on the thread
    count (a different reduction split), which is part of the provenance (:func:`pate_study.core.device.describe_device`).
    On CUDA nothing changes (bf16 autocast; cuDNN's choices are not pinned)."""
    import torch

    if getattr(device, "type", str(device)) != "cpu":
        yield
        return
    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.backends.mkldnn.deterministic)
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.mkldnn.deterministic = True
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.backends.mkldnn.deterministic = before[2]


def load_logmel_clips(data: str, subset: str = "big", *, n_clips: int = 240, n_classes: int = 10, frames: int = 64,
                      seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """Log-Mel clips for the CNN teachers: ``data="real"`` reads the prepared raw-audio recipe
    ``audioset-audio`` (``log_mel.npy`` [n, 1001, 64], labels restricted to the subset's classes;
    FileNotFoundError naming the recipe when it is not prepared); ``"synthetic"`` draws
    :func:`synthetic_log_mel_clips`. Returns ``(X, Y, provenance)``."""
    if data == "synthetic":
        X, Y = synthetic_log_mel_clips(n_clips, n_classes, frames=frames, seed=seed)
        return X, Y, (f"synthetic log-Mel clips ({n_clips} clips x {frames} frames x 64 bands, {n_classes} classes, "
                      f"seed {seed}): code path only")
    if data != "real":
        raise ValueError(f"logmel_data={data!r}: expected 'real' or 'synthetic'")
    import data_recipes

    recipe = data_recipes.get_recipe("audioset-audio")
    if not recipe.is_prepared():
        raise FileNotFoundError("logmel_data='real': raw Audio Set audio is not prepared; run `make data-audioset-audio` "
                                "(python -m data_recipes prepare audioset-audio; needs yt-dlp and network) or use 'synthetic'")
    folder = data_recipes.prepared_dir("audioset-audio")
    labels = np.load(folder / "labels.npy")
    emb = audioset.load("real", subset=subset)
    import csv

    embedding_folder = audioset.resolve_source(audioset.NAME, "real")
    with open(embedding_folder / "class_labels_indices.csv", newline="") as f:
        index = {row[1]: int(row[0]) for row in list(csv.reader(f))[1:]}
    cols = np.array([index[m] for m in emb.class_mids])
    Y = labels[:, cols]
    keep = np.flatnonzero(Y.any(1))
    X = np.load(folder / "log_mel.npy", mmap_mode="r")[keep]
    return np.asarray(X, np.float32), Y[keep], f"real: {len(keep):,} Audio Set clips with raw audio (recipe audioset-audio), {subset} subset"
