"""Audio Set v1 VGGish embeddings (Gemmeke et al. 2017) and Muschiol 2021's label subsets.

``load(data, *, subset=None|"big"|"small", seed)`` returns :class:`AudioSetEmbeddings` with one
:class:`Split` per available split ("bal_train", "eval", and "unbal_train" with the full tar).

Label subsets (Muschiol 2021 §4.1.1: "big", 153 urban/environmental classes without the Music
subtree; "small", 15 classes incl. the named easy Church bell/Jackhammer and hard Bus/Train).
The default big rule (161 classes here) drops the Speech node but keeps its children: the thesis
names Vehicle the most frequent big class (Fig 5.9) and shows "male speech" (Fig A.1).
The thesis lists no classes, so both are derived from ``ontology.json`` by the documented,
parameterised rules of :func:`big_classes` and :func:`small_classes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import data_recipes
from data_recipes.audioset import LABELS, ONTOLOGY, read_class_labels, read_ontology
from data_recipes.framework import MalformedDataError
from pate_study.data import DataSource, manifest_origin, read_manifest, resolve_source

LABELS_FILE, ONTOLOGY_FILE = LABELS.name, ONTOLOGY.name
_REPREPARE = "prepare it again: python -m data_recipes prepare audioset --force"

NAME = "audioset"
N_CLASSES = 527
BIG_INCLUDE = ("Sounds of things", "Onomatopoeia", "Speech", "Natural sounds")
BIG_EXCLUDE = ("Music", "Domestic sounds, home sounds", "Liquid", "Mechanisms", "Telephone")
# Nodes removed on their own (their children stay). "Speech" (5,735 of the 11,466 bal_train clips of
# the rule without it) would be by far the most frequent class, yet the thesis names Vehicle the most
# frequent one (Fig 5.9) and keeps "male speech" (Fig A.1): so the node goes, its children stay.
BIG_DROP_NODES = ("Speech",)
SMALL_NAMED = ("Church bell", "Jackhammer", "Bus", "Train", "Siren", "Fire alarm")


@dataclass(frozen=True)
class Split:
    """embeddings uint8 [n, 10, 128] (zero-padded; n_frames real frames), labels bool [n, C]."""

    embeddings: np.ndarray
    n_frames: np.ndarray
    labels: np.ndarray
    video_ids: np.ndarray
    start: np.ndarray
    end: np.ndarray


@dataclass(frozen=True)
class AudioSetEmbeddings:
    """splits: {name: Split}; class_mids / class_names: the label columns (after subsetting)."""

    splits: dict[str, Split]
    class_mids: tuple[str, ...]
    class_names: tuple[str, ...]
    source: DataSource


def class_labels(folder: Path) -> list[tuple[str, str]]:
    """``[(mid, display name)]`` of the prepared ``class_labels_indices.csv`` in column order, parsed and checked
    by the recipe's own reader (header, indices 0..526 in order, 527 distinct classes): a duplicated or missing
    row would shift every label column after it. MalformedDataError naming the file and row otherwise."""
    path = Path(folder) / LABELS_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MalformedDataError(f"{path}: unreadable ({exc.strerror or exc}); {_REPREPARE}") from exc
    return read_class_labels(data, where=str(path))


# ----------------------------------------------------------------------------- ontology rules
class Ontology:
    """Parent/child structure of ontology.json restricted to questions the subset rules ask."""

    def __init__(self, entries: list[dict]):
        self.by_id = {e["id"]: e for e in entries}
        self.by_name = {e["name"]: e["id"] for e in entries}
        self.parents: dict[str, list[str]] = {}
        for e in entries:
            for c in e["child_ids"]:
                self.parents.setdefault(c, []).append(e["id"])

    @classmethod
    def from_file(cls, path: Path) -> "Ontology":
        """The ontology in ``path``; MalformedDataError naming the file when it is unreadable, not JSON, or lacks
        the fields the rules read (:func:`data_recipes.audioset.read_ontology`)."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise MalformedDataError(f"{path}: unreadable ({exc.strerror or exc}); {_REPREPARE}") from exc
        return cls(read_ontology(data, where=str(path)))

    def node(self, name: str) -> str:
        if name not in self.by_name:
            raise ValueError(f"ontology has no class named {name!r}")
        return self.by_name[name]

    def descendants(self, mid: str) -> set[str]:
        out, stack = set(), [mid]
        while stack:
            x = stack.pop()
            if x not in out:
                out.add(x)
                stack.extend(self.by_id[x]["child_ids"])
        return out

    def has_path_avoiding(self, mid: str, blocked: set[str], roots: set[str]) -> bool:
        """True if some chain of parents from ``mid`` reaches one of ``roots`` without touching ``blocked``."""
        stack, seen = [mid], set()
        while stack:
            x = stack.pop()
            if x in blocked or x in seen:
                continue
            if x in roots:
                return True
            seen.add(x)
            stack.extend(self.parents.get(x, []))
        return False


def big_classes(
    ontology: Ontology,
    class_mids: list[str],
    *,
    include: tuple[str, ...] = BIG_INCLUDE,
    exclude: tuple[str, ...] = BIG_EXCLUDE,
    multi_parent: str = "keep",
    drop_nodes: tuple[str, ...] = BIG_DROP_NODES,
) -> list[str]:
    """Muschiol's "big" set, by rule: every labelled class (of the 527) below one of ``include``,
    minus the subtrees of ``exclude``, minus the single classes ``drop_nodes`` (their children stay;
    default: the Speech node, see ``BIG_DROP_NODES``). ``multi_parent="keep"``: a class under an excluded node that
    also hangs below an included node through a path avoiding every excluded node is kept
    (e.g. Church bell: Bell sits under both Sounds of things and Music); ``"drop"``: excluded anyway.
    Returns mids in class-index order.
    """
    if multi_parent not in ("keep", "drop"):
        raise ValueError(f"multi_parent={multi_parent!r}: expected 'keep' or 'drop'")
    inc_roots = {ontology.node(n) for n in include}
    inc = set().union(*(ontology.descendants(r) for r in inc_roots))
    exc_roots = {ontology.node(n) for n in exclude}
    exc = set().union(*(ontology.descendants(r) for r in exc_roots))
    dropped = {ontology.node(n) for n in drop_nodes}
    out = []
    for mid in class_mids:
        if mid not in inc or mid in dropped:
            continue
        if mid in exc and (multi_parent == "drop" or not ontology.has_path_avoiding(mid, exc_roots, inc_roots)):
            continue
        out.append(mid)
    return out


def small_classes(
    ontology: Ontology,
    big: list[str],
    label_counts: dict[str, int],
    *,
    n: int = 15,
    named: tuple[str, ...] = SMALL_NAMED,
) -> list[str]:
    """Muschiol's "small" set, by rule: the ``named`` classes (thesis easy/hard examples), then the
    most frequent (by ``label_counts``; ties by mid) leaf classes of ``big`` that are neither an
    ancestor nor a descendant of a chosen class, until ``n``. Returns mids in selection order."""
    chosen = [ontology.node(x) for x in named]
    missing = [x for x, m in zip(named, chosen) if m not in big]
    if missing:
        raise ValueError(f"named={missing}: not in the big class set")
    leaves = [m for m in big if not (ontology.descendants(m) - {m}) & set(big)]
    for mid in sorted(leaves, key=lambda m: (-label_counts.get(m, 0), m)):
        if len(chosen) >= n:
            break
        related = any(mid in ontology.descendants(c) or c in ontology.descendants(mid) for c in chosen)
        if mid not in chosen and not related:
            chosen.append(mid)
    return chosen


# ----------------------------------------------------------------------------- synthetic
def synthetic(
    n_train: int = 2000, n_eval: int = 1000, *, n_classes: int = N_CLASSES, seed: int = 0, mean_labels: float = 2.0
) -> dict[str, Split]:
    """Multi-label embeddings with class structure: long-tailed class frequencies (Zipf, exponent 1),
    about ``mean_labels`` labels per clip (at least one), embeddings = mean of the clip's class
    prototypes plus noise, quantised to uint8 like the released embeddings."""
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, n_classes + 1)
    freq = freq[rng.permutation(n_classes)]
    proto = rng.normal(128, 40, size=(n_classes, 128))

    def make(n, offset):
        p = np.minimum(1.0, freq * (mean_labels - 1) / freq.sum())
        labels = rng.random((n, n_classes)) < p
        labels[np.arange(n), rng.choice(n_classes, size=n, p=freq / freq.sum())] = True
        centre = labels @ proto / labels.sum(1, keepdims=True)
        emb = centre[:, None, :] + rng.normal(0, 20, size=(n, 10, 128))
        return Split(
            np.clip(np.rint(emb), 0, 255).astype(np.uint8),
            np.full(n, 10, np.uint8),
            labels,
            np.array([f"syn{offset + i:08d}" for i in range(n)]),
            np.zeros(n, np.float32),
            np.full(n, 10, np.float32),
        )

    return {"bal_train": make(n_train, 0), "eval": make(n_eval, n_train)}


def _subset(splits: dict[str, Split], cols: np.ndarray, drop_unlabelled: bool) -> dict[str, Split]:
    out = {}
    for k, s in splits.items():
        lab = s.labels[:, cols]
        keep = lab.any(1) if drop_unlabelled else np.ones(len(lab), bool)
        out[k] = Split(s.embeddings[keep], s.n_frames[keep], lab[keep], s.video_ids[keep], s.start[keep], s.end[keep])
    return out


def load(
    data: str = "auto",
    *,
    subset: str | None = None,
    seed: int = 0,
    drop_unlabelled: bool = True,
    n_synthetic: tuple[int, int] = (2000, 1000),
    big_kwargs: dict | None = None,
) -> AudioSetEmbeddings:
    """Load embeddings; ``subset`` "big"/"small" keeps those label columns (and, with
    ``drop_unlabelled``, only clips carrying at least one of them, Muschiol §4.3.1)."""
    if subset not in (None, "big", "small"):
        raise ValueError(f"subset={subset!r}: expected None, 'big' or 'small'")
    folder = resolve_source(NAME, data)
    if folder is None:
        splits = synthetic(*n_synthetic, seed=seed)
        mids = [f"/syn/{i:03d}" for i in range(N_CLASSES)]
        names = [f"class {i}" for i in range(N_CLASSES)]
        if subset is not None:
            k = 153 if subset == "big" else 15
            counts = splits["bal_train"].labels.sum(0)
            cols = np.sort(np.argsort(-counts, kind="stable")[:k])
            splits = _subset(splits, cols, drop_unlabelled)
            mids, names = [mids[i] for i in cols], [names[i] for i in cols]
        n = {k: len(s.labels) for k, s in splits.items()}
        lpc = splits["bal_train"].labels.sum(1).mean()
        desc = (
            f"seed {seed}, "
            + ", ".join(f"{k} {v:,}" for k, v in n.items())
            + f" clips, {len(mids)} classes, {lpc:.2f} labels/clip"
        )
        return AudioSetEmbeddings(
            splits, tuple(mids), tuple(names), DataSource("synthetic", "Audio Set", desc, f"seed {seed}")
        )
    m = read_manifest(folder)  # resolve_source has run the recipe's structure check on the folder
    mids, names = map(list, zip(*class_labels(folder)))
    splits = {}
    for split in ("bal_train", "eval", "unbal_train"):
        if (folder / f"{split}_labels.npy").exists():
            splits[split] = Split(
                *(
                    np.load(folder / f"{split}_{k}.npy")
                    for k in ("embeddings", "n_frames", "labels", "video_ids", "start", "end")
                )
            )
    if subset is not None:
        onto = Ontology.from_file(folder / ONTOLOGY_FILE)
        big = big_classes(onto, mids, **(big_kwargs or {}))
        chosen = big
        if subset == "small":
            train = splits["bal_train"].labels.sum(0)
            chosen = small_classes(onto, big, {mid: int(c) for mid, c in zip(mids, train)})
        if not chosen:
            raise ValueError(
                f"subset={subset!r} with big_kwargs={big_kwargs!r}: the rule selects no class; "
                f"widen include / narrow exclude"
            )
        index = {mid: i for i, mid in enumerate(mids)}
        cols = np.array(sorted(index[c] for c in chosen))
        splits = _subset(splits, cols, drop_unlabelled)
        empty = [k for k, s in splits.items() if not s.labels.any()]
        if empty:
            raise ValueError(
                f"subset={subset!r} with big_kwargs={big_kwargs!r}: no clip of split(s) {empty} carries "
                f"one of its {len(cols)} classes; choose classes that occur in the data"
            )
        mids, names = [mids[i] for i in cols], [names[i] for i in cols]
    n = {k: len(s.labels) for k, s in splits.items()}
    desc = (
        ", ".join(f"{k} {v:,}" for k, v in n.items())
        + f" clips, {len(mids)} classes"
        + (f" ({subset} subset)" if subset else "")
    )
    return AudioSetEmbeddings(
        splits,
        tuple(mids),
        tuple(names),
        DataSource("real", "Audio Set VGGish embeddings", desc, m.get("scale", "full"), manifest_origin(m)),
    )


# ----------------------------------------------------------------------------- raw audio (recipe audioset-audio)
AUDIO_NAME = "audioset-audio"


@dataclass(frozen=True)
class AudioClips:
    """The prepared raw-audio recipe ``audioset-audio``: ``log_mel`` float ``[n, 1001, 64]`` (memory-mapped: only
    the rows a caller indexes are read), ``labels`` bool ``[n, 527]`` in the columns of ``class_labels_indices.csv``,
    ``video_ids`` ``[n]``."""

    log_mel: np.ndarray
    labels: np.ndarray
    video_ids: np.ndarray


def audio_clips() -> AudioClips | None:
    """The prepared raw-audio clips, or None when the recipe ``audioset-audio`` is not prepared (it needs yt-dlp
    and network: ``make data-audioset-audio``)."""
    try:
        if not data_recipes.get_recipe(AUDIO_NAME).is_prepared():
            return None
        folder = data_recipes.prepared_dir(AUDIO_NAME)
    except (KeyError, ValueError, FileNotFoundError):
        return None
    return AudioClips(
        np.load(folder / "log_mel.npy", mmap_mode="r"),
        np.load(folder / "labels.npy"),
        np.load(folder / "video_ids.npy"),
    )


def class_index(name: str, data: str = "real") -> int:
    """Column of the class ``name`` (display name, e.g. "Siren") in the 527 columns of ``class_labels_indices.csv``
    (:func:`class_labels`); ValueError naming the class when it is not there."""
    names = [n for _, n in class_labels(resolve_source(NAME, data))]
    if name not in names:
        raise ValueError(f"class {name!r} not in {LABELS_FILE}")
    return names.index(name)


def class_columns(mids, data: str = "real") -> np.ndarray:
    """Columns of the classes ``mids`` in the 527 columns of ``class_labels_indices.csv`` (:func:`class_labels`)."""
    index = {mid: i for i, (mid, _) in enumerate(class_labels(resolve_source(NAME, data)))}
    missing = [m for m in mids if m not in index]
    if missing:
        raise ValueError(f"class mids {missing[:5]} not in {LABELS_FILE}")
    return np.array([index[m] for m in mids])
