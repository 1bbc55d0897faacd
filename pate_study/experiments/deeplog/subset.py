"""The balanced subset of real HDFS sessions, its split, and what the data give away before any mechanism:
duplicates across splits and the length alone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pate_study.data import DataSource
from pate_study.data import deeplog as deeplog_data
from pate_study.experiments.deeplog.config import DeepLogConfig


@dataclass(frozen=True)
class Split:
    padded: deeplog_data.PaddedSequences
    labels: np.ndarray
    sequences: list  # the log keys, unpadded


@dataclass(frozen=True)
class Prepared:
    vocabulary: deeplog_data.Vocabulary
    train: Split
    val: Split
    test: Split
    source: DataSource
    counts: dict  # sessions in the files, excluded long sessions, subset and split sizes


def subset_seed(config: DeepLogConfig, replicate: int = 0) -> int:
    """The seed of replicate ``replicate``'s balanced subset and split: ``config.seed`` for replicate 0 (the
    single-subset design's), one derived from it and the replicate otherwise."""
    if replicate == 0:
        return int(config.seed)
    return int(np.random.SeedSequence([config.seed, 9, replicate]).generate_state(1)[0])


def prepare(logs: deeplog_data.LogSequences, config: DeepLogConfig, replicate: int = 0) -> Prepared:
    """Balanced subset (:func:`~pate_study.data.deeplog.balanced_subset`), vocabulary over both files, and the
    train / validation / test split (the subset is already shuffled; the split takes consecutive blocks), drawn for
    replicate ``replicate`` (:func:`subset_seed`)."""
    subset = deeplog_data.balanced_subset(
        logs.normal, logs.abnormal, config.n_sequences, max_len=config.max_len, seed=subset_seed(config, replicate)
    )
    vocab = deeplog_data.build_vocabulary(logs.normal, logs.abnormal)
    n = len(subset.sequences)
    n_test, n_val = int(round(config.test_fraction * n)), int(round(config.val_fraction * n))
    blocks = {"test": slice(0, n_test), "val": slice(n_test, n_test + n_val), "train": slice(n_test + n_val, n)}
    splits = {
        name: Split(
            deeplog_data.pad_sequences(subset.sequences[b], vocab, config.max_len),
            subset.labels[b],
            subset.sequences[b],
        )
        for name, b in blocks.items()
    }
    counts = {
        "normal_sessions": len(logs.normal),
        "abnormal_sessions": len(logs.abnormal),
        "excluded_normal_longer_than_max_len": subset.excluded_normal,
        "excluded_abnormal_longer_than_max_len": subset.excluded_abnormal,
        "vocabulary_size": vocab.size,
        **{f"{k}_size": len(s.labels) for k, s in splits.items()},
        "test_abnormal_share": float(splits["test"].labels.mean()),
    }
    return Prepared(vocab, splits["train"], splits["val"], splits["test"], logs.source, counts)


def prepare_replicates(logs: deeplog_data.LogSequences, config: DeepLogConfig) -> list[Prepared]:
    """One :func:`prepare` per model seed: model seed ``s`` trains and is scored on replicate ``s``'s own balanced
    subset and split, so the seeds replicate the data's draw too (the subset, which sessions train, which test)."""
    return [prepare(logs, config, s) for s in range(config.n_model_seeds)]


def data_description(prepared: Prepared, config: DeepLogConfig) -> str:
    """The stamp for every output: the data source and the subsets actually used."""
    c = prepared.counts
    per_seed = f", one subset and split per model seed ({config.n_model_seeds})" if config.n_model_seeds > 1 else ""
    return (
        f"{prepared.source.stamp()}; balanced subset of {config.n_sequences:,} sessions of length ≤ {config.max_len}"
        f" (train {c['train_size']:,} / val {c['val_size']:,} / test {c['test_size']:,}){per_seed}"
    )


def length_only_accuracy(train: Split, test: Split) -> float:
    """Accuracy on the test split of the rule 'majority label of the training sessions of the same length'
    (overall majority for unseen lengths): what a length-preserving release gives away for free."""
    by_len: dict[int, list[int]] = {}
    for n, y in zip(train.padded.lengths, train.labels):
        by_len.setdefault(int(n), []).append(int(y))
    overall = int(np.mean(train.labels) >= 0.5)
    rule = {n: int(np.mean(ys) >= 0.5) for n, ys in by_len.items()}
    pred = np.array([rule.get(int(n), overall) for n in test.padded.lengths])
    return float((pred == test.labels).mean())


def duplication(prepared: Prepared) -> dict:
    """Exact duplicates: share of test sessions whose sequence also occurs in the train split, number of distinct
    sequences, and sequences that occur with both labels in the subset."""

    def as_text(seqs):
        return [" ".join(map(str, s)) for s in seqs]

    train_text, test_text = as_text(prepared.train.sequences), as_text(prepared.test.sequences)
    train_set = set(train_text)
    labels_of: dict[str, set] = {}
    for split in (prepared.train, prepared.val, prepared.test):
        for t, y in zip(as_text(split.sequences), split.labels):
            labels_of.setdefault(t, set()).add(int(y))
    return {
        "test_share_seen_in_train": float(np.mean([t in train_set for t in test_text])),
        "distinct_sequences_in_subset": len(labels_of),
        "sequences_with_both_labels": sum(len(v) == 2 for v in labels_of.values()),
    }
