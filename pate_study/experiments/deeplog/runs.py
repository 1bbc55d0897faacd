"""Every idea at every ε: the control's accuracy on the synthetic test split and the normalised Hamming distance,
with the diagnostics that explain them (reconstruction floor, unseen sequences, permuted lengths)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from pate_study.data import deeplog as deeplog_data
from pate_study.experiments.deeplog.config import IDEA3, IDEA5, IDEAS, KRR, DeepLogConfig
from pate_study.experiments.deeplog.generators import (
    Idea1Tables,
    by_distinct_rows,
    decode_log_probs,
    encode_latents,
    idea1_tables,
    noisy_latent_sequences,
    output_probabilities,
    synthesize,
    with_padding,
)
from pate_study.experiments.deeplog.models import Models, accuracy, classify, torch_threads
from pate_study.experiments.deeplog.subset import Prepared
from pate_study.privacy.mechanisms import randomized_response


def normalised_hamming(original: np.ndarray, synthetic: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per sequence: the fraction of its real positions whose symbol differs, (1/L_i) Σ_{t<L_i} 1[x_t ≠ y_t] ∈ [0, 1]
    (Hamming distance divided by the sequence's own length; padding ignored)."""
    a, b = np.asarray(original), np.asarray(synthetic)
    lengths = np.asarray(lengths, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(
            f"original, synthetic: expected two [n, max_len] matrices of the same shape, got {a.shape} and {b.shape}"
        )
    if lengths.shape != (a.shape[0],) or lengths.min(initial=1) < 1 or lengths.max(initial=1) > a.shape[1]:
        raise ValueError(f"lengths: expected {a.shape[0]} lengths in 1..{a.shape[1]}")
    mask = deeplog_data.padding_mask(lengths, a.shape[1])
    return ((a != b) & mask).sum(axis=1) / lengths


def tiled(padded: deeplog_data.PaddedSequences, n_repeats: int) -> deeplog_data.PaddedSequences:
    """``n_repeats`` copies of ``padded`` stacked along the rows (copy r holds rows r·n … (r+1)·n − 1): a per-row
    mechanism applied once to the stack draws ``n_repeats`` independent synthetic versions."""
    return deeplog_data.PaddedSequences(
        np.tile(padded.tokens, (int(n_repeats), 1)), np.tile(padded.lengths, int(n_repeats))
    )


def classify_unique(control, tokens: np.ndarray) -> np.ndarray:
    """:func:`pate_study.experiments.deeplog.models.classify` of every row, computed once per distinct row in order
    of length (:func:`pate_study.experiments.deeplog.generators.by_distinct_rows`: the classifier is deterministic;
    near-argmax draws and the test split's own duplicates repeat rows)."""
    return by_distinct_rows(lambda t: classify(control, t), tokens)


def run_ideas(
    prepared: Prepared | Sequence[Prepared],
    models: Models | Sequence[Models],
    config: DeepLogConfig,
    *,
    progress: bool = True,
) -> pd.DataFrame:
    """One row per (model seed, idea, ε, repeat): the control's accuracy on the synthetic test split (original
    labels) and the mean normalised Hamming distance to the originals. ``models``: one set of trained models per
    model seed (:func:`pate_study.experiments.deeplog.models.train_seeds`; a single set is model seed 0); each
    seed's ideas run on that seed's own test split (``prepared``: one per seed, or one for all) and are scored by
    that seed's control. The ``n_repeats`` draws of each (seed, idea, ε) are drawn at once, on the test split stacked
    ``n_repeats`` times (:func:`tiled`), and scored by one pass of the control: the replicates of the mechanism's
    noise (k-RR, exponential-mechanism and Laplace draws), nested in the model seeds, that the verdicts' intervals
    read."""
    seeds = [models] if isinstance(models, Models) else list(models)
    data = [prepared] * len(seeds) if isinstance(prepared, Prepared) else list(prepared)
    if len(data) != len(seeds):
        raise ValueError(f"prepared: expected one per model seed ({len(seeds)}), got {len(data)}")
    rng = np.random.default_rng(config.seed + 100)
    rows = []
    with torch_threads(config.torch_threads):
        for s, trained in enumerate(tqdm(seeds, desc="model seeds", disable=not progress or len(seeds) < 2)):
            prepared = data[s]
            stacked = tiled(prepared.test.padded, config.n_repeats)
            idea1 = idea1_tables(trained)
            probs = np.tile(output_probabilities(trained.autoencoder, prepared.test.padded), (config.n_repeats, 1, 1))
            grid = [(idea, float(e)) for idea in IDEAS for e in config.epsilons]
            rows += [
                {"model_seed": s, **row}
                for idea, eps in tqdm(grid, desc="ideas x epsilon", disable=not progress, leave=False)
                for row in _run_repeats(idea, eps, prepared, stacked, trained, idea1, probs, rng, config.n_repeats)
            ]
    return pd.DataFrame(rows)


def _run_repeats(
    idea: str,
    eps: float,
    prepared: Prepared,
    stacked: deeplog_data.PaddedSequences,
    models: Models,
    idea1: Idea1Tables,
    probs: np.ndarray,
    rng,
    n_repeats: int,
) -> list[dict]:
    """``n_repeats`` synthetic test sets drawn at once: per repeat, the control's accuracy and the mean normalised
    Hamming distance."""
    test = prepared.test
    synthetic = synthesize(idea, eps, stacked, prepared.vocabulary.size, models, idea1, probs, rng)
    correct = (classify_unique(models.control, synthetic) == np.tile(test.labels, n_repeats)).reshape(n_repeats, -1)
    hamming = normalised_hamming(stacked.tokens, synthetic, stacked.lengths).reshape(n_repeats, -1)
    return [
        {"idea": idea, "epsilon": eps, "repeat": r, "accuracy": float(correct[r].mean()), "hamming": float(h.mean())}
        for r, h in enumerate(hamming)
    ]


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof 0) over every model seed and repeat, per idea and ε."""
    g = runs.groupby(["idea", "epsilon"], sort=False)[["accuracy", "hamming"]]
    out = g.mean().join(g.std(ddof=0), rsuffix="_std").reset_index()
    return out


@torch.no_grad()
def reconstruction(models: Models, prepared: Prepared) -> dict:
    """No noise at all (ε = ∞): argmax decoding of each autoencoder; the floor of the Hamming distance."""
    test = prepared.test.padded
    out = {}
    for name, ae in (("autoencoder", models.autoencoder), ("joint", models.joint.autoencoder)):
        lp = decode_log_probs(ae, encode_latents(ae, test.tokens), test.tokens.shape[1])
        synthetic = with_padding(lp.argmax(-1), test.lengths)
        out[name] = {
            "hamming": float(normalised_hamming(test.tokens, synthetic, test.lengths).mean()),
            "control_accuracy": accuracy(models.control, synthetic, prepared.test.labels),
        }
    return out


def unseen_test_accuracy(models: Models, prepared: Prepared) -> dict:
    """The control on the test sequences that do *not* occur verbatim in the train split, and on those that do:
    tests whether the control's score is carried by memorised duplicates."""
    train = {" ".join(map(str, s)) for s in prepared.train.sequences}
    seen = np.array([" ".join(map(str, s)) in train for s in prepared.test.sequences])
    test = prepared.test

    def score(m):
        return accuracy(models.control, test.padded.tokens[m], test.labels[m]) if m.any() else float("nan")

    return {
        "unseen_sequences": int((~seen).sum()),
        "unseen_accuracy": score(~seen),
        "unseen_abnormal_share": float(test.labels[~seen].mean()) if (~seen).any() else float("nan"),
        "seen_sequences": int(seen.sum()),
        "seen_accuracy": score(seen),
    }


def length_permutation_test(
    prepared: Prepared, models: Models, config: DeepLogConfig, *, epsilon: float | None = None
) -> pd.DataFrame:
    """Does the released length lift the control above chance where the content carries no information?

    At the smallest grid ε (default), Ideas 3 and 5 decode a latent that is almost pure noise, and k-RR draws almost
    uniform symbols: the only input left is each sequence's length. Each is scored twice over ``n_repeats`` draws:
    with the original lengths, and with the lengths permuted at random across the test sequences (which breaks the
    length–label link and keeps the length distribution). Accuracy that falls to ≈ 0.5 under the permutation is
    carried by the length; accuracy that stays is carried by something else."""
    test, k = prepared.test, prepared.vocabulary.size
    eps = float(min(config.epsilons) if epsilon is None else epsilon)
    rng = np.random.default_rng(config.seed + 200)
    rows = []
    with torch_threads(config.torch_threads):
        for rep in range(config.n_repeats):
            permuted = rng.permutation(test.padded.lengths)
            for name, lengths in (("original lengths", test.padded.lengths), ("permuted lengths", permuted)):
                draws = {
                    KRR: with_padding(
                        randomized_response(
                            np.where(test.padded.mask, test.padded.tokens - 1, 0), k=k, epsilon=eps, rng=rng
                        ),
                        lengths,
                    ),
                    IDEA3: noisy_latent_sequences(models.autoencoder, test.padded, eps, rng, lengths=lengths),
                    IDEA5: noisy_latent_sequences(models.joint.autoencoder, test.padded, eps, rng, lengths=lengths),
                }
                rows += [
                    {
                        "idea": idea,
                        "epsilon": eps,
                        "lengths": name,
                        "repeat": rep,
                        "accuracy": accuracy(models.control, synthetic, test.labels),
                    }
                    for idea, synthetic in draws.items()
                ]
    runs = pd.DataFrame(rows)
    return runs.groupby(["idea", "lengths"], sort=False)["accuracy"].agg(["mean", "std"]).unstack("lengths")
