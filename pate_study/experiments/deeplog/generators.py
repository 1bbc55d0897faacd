"""The synthetic-sequence generators of Visca (2021) §4.1.1 (Ideas 1-5) and the k-RR baseline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...data import deeplog as deeplog_data
from ...learning.sequence_models import Seq2SeqAutoencoder
from ...privacy.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_log_probs,
    laplace_mechanism,
    local_laplace,
    randomized_response,
    sample_log_probs,
)
from .config import IDEA1_ANALYTIC, IDEA1_MEASURED, IDEA2, IDEA3, IDEA4, IDEA5, IDEAS, KRR
from .models import Models


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


def per_symbol_sequences(log_probs: np.ndarray, padded: deeplog_data.PaddedSequences, rng) -> np.ndarray:
    """Replace every real symbol a independently by a draw from row a of ``log_probs [K, K]`` (Idea 1, k-RR)."""
    idx = np.where(padded.mask, padded.tokens - 1, 0)
    return with_padding(sample_log_probs(log_probs[idx], rng), padded.lengths)


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
    z = encode_latents(autoencoder, padded.tokens)
    z = z / np.abs(z).sum(axis=1, keepdims=True)  # exact unit l1 in float64 (the float32 encoder is within 1e-6)
    noisy = local_laplace(z, rho=epsilon / 2.0, rng=rng)
    noisy = noisy / np.abs(noisy).sum(axis=1, keepdims=True).clip(min=1e-12)
    return with_padding(
        sample_log_probs(decode_log_probs(autoencoder, noisy, padded.tokens.shape[1]), rng),
        padded.lengths if lengths is None else lengths,
    )


def exponential_output_sequences(probs: np.ndarray, lengths: np.ndarray, epsilon: float, rng) -> np.ndarray:
    """Idea 2: at every position the exponential mechanism with utility p_t(r | x) ∈ [0, 1], Δu = 1."""
    return with_padding(exponential_mechanism(probs, epsilon=epsilon, sensitivity=1.0, rng=rng), lengths)


def noisy_output_sequences(probs: np.ndarray, lengths: np.ndarray, epsilon: float, rng) -> np.ndarray:
    """Idea 4: p_t + Lap(2/ε) per coordinate (a probability vector has l1 sensitivity ≤ 2), then the argmax."""
    return with_padding(
        np.argmax(laplace_mechanism(probs, sensitivity=2.0, epsilon=epsilon, rng=rng), axis=-1), lengths
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
