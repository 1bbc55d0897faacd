"""The synthetic-sequence generators of Visca (2021) §4.1.1 (Ideas 1-5) and the k-RR baseline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from pate_study.data import deeplog as deeplog_data
from pate_study.experiments.deeplog.config import IDEA1_ANALYTIC, IDEA1_MEASURED, IDEA2, IDEA3, IDEA4, IDEA5, IDEAS, KRR
from pate_study.experiments.deeplog.models import Models
from pate_study.learning.sequence_models import Seq2SeqAutoencoder
from pate_study.privacy.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_log_probs,
    laplace_mechanism,
    local_laplace,
    randomized_response,
    sample_log_probs,
)


def cosine_utility(embeddings: np.ndarray) -> np.ndarray:
    """u(a, r) = cos(e_a, e_r) for every pair of log keys, ``[K, K]`` (Idea 1's utility); values in [−1, 1]."""
    e = np.asarray(embeddings, dtype=np.float64)
    unit = e / np.linalg.norm(e, axis=1, keepdims=True).clip(min=1e-12)
    return np.clip(unit @ unit.T, -1.0, 1.0)


def measured_sensitivity(utility: np.ndarray) -> float:
    """max_r max_{a,b} |u(a, r) − u(b, r)| over the whole vocabulary: the exact Δu *of this table* (the thesis's
    "Δu = 1.96 calculated in practice"). A bound only while the table is fixed; 2 for every cosine table."""
    return float(np.ptp(np.asarray(utility), axis=0).max())


def with_padding(synthetic_index: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices 0..K−1 -> tokens 1..K at real positions, padding 0 after each sequence's end."""
    mask = deeplog_data.padding_mask(lengths, synthetic_index.shape[1])
    return np.where(mask, synthetic_index + 1, 0)


def by_distinct_rows(function, tokens: np.ndarray) -> np.ndarray:
    """``function(tokens)`` for a function that treats each row on its own (a classifier, an encoder), computed once
    per distinct row and in order of length (a model that cuts its batch to the longest row then skips the
    padding steps of short rows); rows ``[n, ...]`` of the result in the order of ``tokens``."""
    tokens = np.asarray(tokens)
    compact = tokens.astype(np.min_scalar_type(int(tokens.max(initial=0))))  # fewer bytes per row to sort
    distinct, inverse = np.unique(compact, axis=0, return_inverse=True)
    order = np.argsort((distinct != 0).sum(axis=1), kind="stable")
    values = np.asarray(function(distinct[order]))
    out = np.empty_like(values)
    out[order] = values
    return out[inverse.reshape(-1)]


def draw_at_real_positions(draw, values, lengths: np.ndarray, max_len: int) -> np.ndarray:
    """Tokens ``[n, max_len]``: ``draw`` (``[m, K]`` -> ``m`` indices 0..K−1, one per row) applied to the real
    positions ``t < lengths[i]`` only, padding 0 after each sequence's end (padding is never drawn nor released).
    ``values``: an array ``[n, max_len, K]``, or a function of the real positions' ``(rows, columns)`` that returns
    their ``[m, K]`` rows."""
    mask = deeplog_data.padding_mask(lengths, max_len)
    rows, columns = np.nonzero(mask)
    table = values(rows, columns) if callable(values) else np.asarray(values)[rows, columns]
    out = np.zeros(mask.shape, dtype=np.int64)
    out[rows, columns] = np.asarray(draw(table)) + 1
    return out


def per_symbol_sequences(log_probs: np.ndarray, padded: deeplog_data.PaddedSequences, rng) -> np.ndarray:
    """Replace every real symbol a independently by a draw from row a of ``log_probs [K, K]`` (Idea 1, k-RR)."""
    tokens = padded.tokens
    return draw_at_real_positions(
        lambda lp: sample_log_probs(lp, rng),
        lambda rows, columns: log_probs[tokens[rows, columns] - 1],
        padded.lengths,
        tokens.shape[1],
    )


@torch.no_grad()
def encode_latents(autoencoder: Seq2SeqAutoencoder, tokens: np.ndarray) -> np.ndarray:
    return autoencoder.encode(torch.as_tensor(tokens)).double().numpy()


@torch.no_grad()
def decode_log_probs(autoencoder: Seq2SeqAutoencoder, latent: np.ndarray, steps: int) -> np.ndarray:
    logits = autoencoder.decode_logits(torch.as_tensor(latent, dtype=torch.float32), steps)
    return torch.log_softmax(logits.double(), dim=-1).numpy()


def output_probabilities(autoencoder: Seq2SeqAutoencoder, padded: deeplog_data.PaddedSequences) -> np.ndarray:
    """p_t(r | x) of the decoder for every position and key, ``[n, max_len, K]`` (Ideas 2 and 4)."""
    return np.exp(decode_log_probs(autoencoder, encode_latents(autoencoder, padded.tokens), padded.tokens.shape[1]))


def noisy_latent_sequences(
    autoencoder: Seq2SeqAutoencoder,
    padded: deeplog_data.PaddedSequences,
    epsilon: float,
    rng,
    *,
    lengths: np.ndarray | None = None,
) -> np.ndarray:
    """Ideas 3 and 5: the unit-l1 latent + Lap(2/ε) per coordinate (the local Laplace mechanism of
    :mod:`pate_study.privacy.mechanisms`, ε per sequence), renormalised to unit l1 (post-processing), decoded,
    each position sampled from the output distribution. ``lengths`` (default: the originals) are the released
    lengths, e.g. permuted across sequences by :func:`length_permutation_test`."""
    z = by_distinct_rows(lambda t: encode_latents(autoencoder, t), padded.tokens)
    z = z / np.abs(z).sum(axis=1, keepdims=True)  # exact unit l1 in float64 (the float32 encoder is within 1e-6)
    noisy = local_laplace(z, rho=epsilon / 2.0, rng=rng)
    noisy = noisy / np.abs(noisy).sum(axis=1, keepdims=True).clip(min=1e-12)
    return decoded_draws(
        autoencoder, noisy, padded.lengths if lengths is None else lengths, padded.tokens.shape[1], rng
    )


#: the rows of a decoding are cut into this many groups of similar length, each decoded to its own longest length
DECODE_GROUPS = 8


def decoded_draws(autoencoder: Seq2SeqAutoencoder, latent: np.ndarray, lengths, max_len: int, rng) -> np.ndarray:
    """Tokens ``[n, max_len]``: each latent decoded (:func:`decode_log_probs`) and every real position sampled from
    its output distribution, padding 0. The decoder is causal (step t reads the latent and steps < t only), so
    rows are decoded in :data:`DECODE_GROUPS` groups sorted by length, each to its own longest length: the steps
    after a row's end, which are never released, are not computed."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros((len(lengths), int(max_len)), dtype=np.int64)
    for rows in np.array_split(np.argsort(lengths, kind="stable"), DECODE_GROUPS):
        if rows.size:
            steps = int(lengths[rows].max())
            out[rows, :steps] = draw_at_real_positions(
                lambda lp: sample_log_probs(lp, rng),
                decode_log_probs(autoencoder, latent[rows], steps),
                lengths[rows],
                steps,
            )
    return out


def exponential_output_sequences(probs: np.ndarray, lengths: np.ndarray, epsilon: float, rng) -> np.ndarray:
    """Idea 2: at every position the exponential mechanism with utility p_t(r | x) ∈ [0, 1], Δu = 1."""
    return draw_at_real_positions(
        lambda p: exponential_mechanism(p, epsilon=epsilon, sensitivity=1.0, rng=rng), probs, lengths, probs.shape[1]
    )


def noisy_output_sequences(probs: np.ndarray, lengths: np.ndarray, epsilon: float, rng) -> np.ndarray:
    """Idea 4: p_t + Lap(2/ε) per coordinate (a probability vector has l1 sensitivity ≤ 2), then the argmax."""
    return draw_at_real_positions(
        lambda p: np.argmax(laplace_mechanism(p, sensitivity=2.0, epsilon=epsilon, rng=rng), axis=-1),
        probs,
        lengths,
        probs.shape[1],
    )


@dataclass(frozen=True)
class Idea1Tables:
    utility: np.ndarray
    measured_delta_u: float


def idea1_tables(models: Models) -> Idea1Tables:
    utility = cosine_utility(models.idea1_rnn.symbol_embeddings())
    return Idea1Tables(utility, measured_sensitivity(utility))


def synthesize(
    idea: str,
    epsilon: float,
    test: deeplog_data.PaddedSequences,
    vocabulary_size: int,
    models: Models,
    idea1: Idea1Tables,
    probs: np.ndarray,
    rng,
) -> np.ndarray:
    """Synthetic versions of the sequences ``test`` (the test split, or it stacked several times) by one idea at one
    ε (see the module docstring); ``probs``: the autoencoder's output probabilities on ``test``."""
    k = int(vocabulary_size)
    if idea == KRR:
        return with_padding(
            randomized_response(np.where(test.mask, test.tokens - 1, 0), k=k, epsilon=epsilon, rng=rng), test.lengths
        )
    if idea in (IDEA1_MEASURED, IDEA1_ANALYTIC):
        du = idea1.measured_delta_u if idea == IDEA1_MEASURED else 2.0
        return per_symbol_sequences(
            exponential_mechanism_log_probs(idea1.utility, epsilon=epsilon, sensitivity=du), test, rng
        )
    if idea == IDEA2:
        return exponential_output_sequences(probs, test.lengths, epsilon, rng)
    if idea == IDEA3:
        return noisy_latent_sequences(models.autoencoder, test, epsilon, rng)
    if idea == IDEA4:
        return noisy_output_sequences(probs, test.lengths, epsilon, rng)
    if idea == IDEA5:
        return noisy_latent_sequences(models.joint.autoencoder, test, epsilon, rng)
    raise ValueError(f"idea={idea!r}: expected one of {IDEAS}")
