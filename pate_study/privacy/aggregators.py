"""Aggregators: teacher votes -> released labels (the noisy step of PATE).

For a student: each query (a student sample) gets one vote per teacher. An
aggregator adds noise to the vote histogram and releases a label. It returns,
besides the labels, everything an accountant needs: the clean counts, which
queries were answered, and the thresholds used. All functions are vectorised
over queries (rows) and take an explicit seed or ``numpy.random.Generator``.

Multi-class (votes ``int[n_queries, n_classes]``):

* LNMax, argmax_c(n_c + Lap(1/γ)) (Papernot et al. 2017, Eq. 1; MAKE paper
  Eq. 5; Visca 2021 Eq. 4.1). γ is the *inverse* Laplace scale.
* GNMax, argmax_c(n_c + N(0, σ²)) (Papernot et al. 2018, §4.1).
* Confident GNMax (Papernot et al. 2018, Algorithm 1): answer only when
  max_c n_c + N(0, σ1²) ≥ T, then GNMax with σ2; otherwise abstain (⊥).
* Interactive GNMax (Papernot et al. 2018, Algorithm 2): the check uses
  max_c(n_c − |E|·p_c) against the student's baseline p; if it fails and the
  student is confident (max_c p_c > γ_student), the student's own label is
  kept; otherwise ⊥.

Multi-label (per-label vote fractions ``float[n_queries, n_labels]`` in [0, 1];
Muschiol 2021):

* GNThreshold (Definition 10): label i is on iff m_i + N(0, σ²) > th.
* GNThreshold Adaptive (Definition 11): th is the midpoint of the largest gap
  of the noise-free sorted votes (ties: the gap at higher probabilities).
* Confident-GNThreshold (Definition 12 / Algorithm 3) with two rules:
  ``"printed"``: every one of the top-n values of m − th_e, plus independent
  noise N(0, σ_c²), must be ≥ th_c; ``"max"`` (what the thesis's experiments
  imply, §5.2): max_i m_i + N(0, σ_c²) ≥ th_c.

Abstentions are encoded as label ``ABSTAIN = -1``.

Thresholds: every threshold is checked by one rule: a finite number (or one per query) in the range of
``PARAMETER_CONSTRAINTS["threshold"]``, declared at the public boundary (``threshold="threshold"``,
:mod:`~pate_study.privacy._boundary`); a value outside the range of the quantity it is compared with (0..number of
teachers for vote counts, [0, 1] for vote fractions and probabilities) gives a ``ThresholdRangeWarning``
(:func:`~pate_study.privacy._validation.warn_threshold_range`), since the check then depends on the noise only
(allowed: Papernot et al. 2018 use T = 300 with 250 teachers for SVHN).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import (
    as_generator,
    check_choice,
    check_counts,
    check_fractions,
    check_threshold,
    warn_threshold_range,
)
from pate_study.privacy.options import ConfidenceRule

__all__ = [
    "ABSTAIN",
    "Aggregation",
    "MultiLabelAggregation",
    "lnmax",
    "gnmax",
    "confident_gnmax",
    "confident_check",
    "interactive_gnmax",
    "adaptive_thresholds",
    "resolve_thresholds",
    "gnthreshold",
    "gnthreshold_adaptive",
    "confident_gnthreshold",
    "confident_gnthreshold_check",
    "CONFIDENCE_RULES",
]

ABSTAIN = -1
#: the choices of ``rule=`` (:class:`~pate_study.privacy.options.ConfidenceRule`, one place for them)
CONFIDENCE_RULES = tuple(r.value for r in ConfidenceRule)

# Source codes of the interactive mechanism's labels.
SOURCE_TEACHERS, SOURCE_STUDENT, SOURCE_NONE = 0, 1, -1


@dataclasses.dataclass(frozen=True, eq=False)
class Aggregation:
    """Labels released by a multi-class aggregator and what an accountant needs.

    Attributes:
        labels: ``int[n_queries]``, ``ABSTAIN`` (−1) where nothing was released.
        answered: ``bool[n_queries]``, True where the teachers' noisy argmax was
            released (the queries charged the argmax step).
        counts: the clean vote counts ``float[n_queries, n_classes]``.
        mechanism: name of the aggregator.
        params: noise parameters used.
        thresholds: ``float[n_queries]`` threshold T of the check (None without a check).
        check_values: ``float[n_queries]`` the noise-free quantity compared with
            T: max_c n_c (confident) or max_c(n_c − |E| p_c) (interactive).
        source: interactive only: 0 teachers, 1 student, −1 none.
    """

    labels: np.ndarray
    answered: np.ndarray
    counts: np.ndarray
    mechanism: str
    params: dict
    thresholds: np.ndarray | None = None
    check_values: np.ndarray | None = None
    source: np.ndarray | None = None

    @property
    def n_answered(self) -> int:
        """Number of queries answered by the teachers."""
        return int(np.count_nonzero(self.answered))


@dataclasses.dataclass(frozen=True, eq=False)
class MultiLabelAggregation:
    """Binary labels released by a multi-label aggregator.

    Attributes:
        labels: ``bool[n_queries, n_labels]`` (all False on unanswered rows).
        answered: ``bool[n_queries]``.
        fractions: the clean per-label vote fractions.
        thresholds: ``float[n_queries]`` ensemble threshold th used per query.
        mechanism, params: as in :class:`Aggregation`.
    """

    labels: np.ndarray
    answered: np.ndarray
    fractions: np.ndarray
    thresholds: np.ndarray
    mechanism: str
    params: dict

    @property
    def n_answered(self) -> int:
        """Number of answered queries."""
        return int(np.count_nonzero(self.answered))


def _noisy_argmax(counts: np.ndarray, noise: np.ndarray) -> np.ndarray:
    return np.argmax(counts + noise, axis=1).astype(np.int64)


@constrained(gamma="positive")
def lnmax(votes: Any, gamma: float, rng: Any) -> Aggregation:
    """Laplace noisy max, argmax_c(n_c + Lap(1/γ)) (Papernot et al. 2017, Eq. 1; MAKE Eq. 5).

    ``gamma`` is the inverse Laplace scale (noise scale 1/γ); one query is
    (2γ, 0)-DP.
    """
    counts = check_counts(votes)
    noise = as_generator(rng).laplace(0.0, 1.0 / gamma, size=counts.shape)
    labels = _noisy_argmax(counts, noise)
    return Aggregation(labels, np.ones(len(counts), bool), counts, "lnmax", {"gamma": gamma})


@constrained(sigma="noise_scale")
def gnmax(votes: Any, sigma: float, rng: Any) -> Aggregation:
    """Gaussian noisy max, argmax_c(n_c + N(0, σ²)) (Papernot et al. 2018, §4.1)."""
    counts = check_counts(votes)
    noise = as_generator(rng).normal(0.0, sigma, size=counts.shape)
    labels = _noisy_argmax(counts, noise)
    return Aggregation(labels, np.ones(len(counts), bool), counts, "gnmax", {"sigma": sigma})


def _warn_vote_threshold(threshold: Any, counts: np.ndarray, what: str) -> None:
    """Warn when a (checked) vote-count threshold lies outside 0..|E| (|E| = the row total, the number of
    teachers)."""
    teachers = float(counts[0].sum())
    warn_threshold_range("threshold", threshold, 0.0, teachers, f"{what} (0 to the {teachers:g} teachers)", 4)


def confident_check(check_values: np.ndarray, threshold: float, sigma1: float, rng: Any) -> np.ndarray:
    """Step 1 of Papernot et al. 2018 Algorithms 1–2: True where value + N(0, σ1²) ≥ T."""
    gen = as_generator(rng)
    return check_values + gen.normal(0.0, sigma1, size=check_values.shape) >= threshold


@constrained(threshold="threshold", sigma1="noise_scale", sigma2="noise_scale")
def confident_gnmax(votes: Any, threshold: float, sigma1: float, sigma2: float, rng: Any) -> Aggregation:
    """Confident GNMax (Papernot et al. 2018, Algorithm 1).

    If max_c n_c + N(0, σ1²) ≥ T release argmax_c(n_c + N(0, σ2²)), else ⊥.
    The check noise is drawn first, then the argmax noise for every query (so
    the same seed gives the same answered set whatever σ2 is).
    """
    counts = check_counts(votes)
    _warn_vote_threshold(threshold, counts, "max_c n_c, the largest vote count of a query")
    gen = as_generator(rng)
    check_values = counts.max(axis=1)
    answered = confident_check(check_values, threshold, sigma1, gen)
    labels = _noisy_argmax(counts, gen.normal(0.0, sigma2, size=counts.shape))
    labels = np.where(answered, labels, ABSTAIN)
    return Aggregation(
        labels,
        answered,
        counts,
        "confident-gnmax",
        {"threshold": threshold, "sigma1": sigma1, "sigma2": sigma2},
        thresholds=np.full(len(counts), threshold),
        check_values=check_values,
    )


@constrained(threshold="threshold", sigma1="noise_scale", sigma2="noise_scale", student_threshold="threshold")
def interactive_gnmax(
    votes: Any,
    student_probs: Any,
    threshold: float,
    sigma1: float,
    sigma2: float,
    student_threshold: float,
    rng: Any,
) -> Aggregation:
    """Interactive GNMax (Papernot et al. 2018, Algorithm 2).

    With |E| teachers (the row sums of ``votes``) and the student's class
    probabilities p: if max_c(n_c − |E| p_c) + N(0, σ1²) ≥ T, release
    argmax_c(n_c + N(0, σ2²)); else, if max_c p_c > ``student_threshold``,
    keep the student's argmax (no privacy cost); else ⊥.
    """
    counts = check_counts(votes)
    probs = np.asarray(student_probs, dtype=np.float64)
    if probs.ndim == 1:
        probs = probs[None, :]
    if probs.shape != counts.shape:
        raise ValueError(f"student_probs: expected shape {counts.shape} (same as votes), got {probs.shape}")
    if not np.all(np.isfinite(probs)) or np.any(probs < 0) or np.any(np.abs(probs.sum(axis=1) - 1) > 1e-6):
        raise ValueError("student_probs: expected finite non-negative rows that sum to 1")
    _warn_vote_threshold(threshold, counts, "max_c(n_c - |E| p_c), the teachers' lead over the student")
    warn_threshold_range(
        "student_threshold", student_threshold, 1.0 / counts.shape[1], 1.0, "the student's largest class probability"
    )
    gen = as_generator(rng)
    n_teachers = counts.sum(axis=1, keepdims=True)
    check_values = (counts - n_teachers * probs).max(axis=1)
    answered = confident_check(check_values, threshold, sigma1, gen)
    teacher_labels = _noisy_argmax(counts, gen.normal(0.0, sigma2, size=counts.shape))
    student_ok = probs.max(axis=1) > student_threshold
    student_labels = np.argmax(probs, axis=1)
    labels = np.where(answered, teacher_labels, np.where(student_ok, student_labels, ABSTAIN))
    source = np.where(answered, SOURCE_TEACHERS, np.where(student_ok, SOURCE_STUDENT, SOURCE_NONE))
    return Aggregation(
        labels.astype(np.int64),
        answered,
        counts,
        "interactive-gnmax",
        {"threshold": threshold, "sigma1": sigma1, "sigma2": sigma2, "student_threshold": float(student_threshold)},
        thresholds=np.full(len(counts), threshold),
        check_values=check_values,
        source=source,
    )


# ---------------------------------------------------------------- multi-label


def adaptive_thresholds(fractions: Any) -> np.ndarray:
    """Adaptive threshold of Muschiol 2021 Definition 11, one per query.

    Sort the noise-free fractions in descending order k_(1) ≥ … ≥ k_(n); the
    largest adjacent gap d = max_j (k_(j) − k_(j+1)) (first one, i.e. at higher
    probabilities, on ties); th = k_b + d/2 with k_b the lower value at that
    gap. All-equal votes give d = 0 and th = that value. Needs ≥ 2 labels.
    NB: computed from the private votes without noise, so it leaks (uncharged
    by the thesis's analysis; see ``pate_study.privacy.multilabel``).
    """
    m = check_fractions(fractions)
    if m.shape[1] < 2:
        raise ValueError(f"fractions: the adaptive threshold needs at least 2 labels, got {m.shape[1]}")
    k = -np.sort(-m, axis=1)
    gaps = k[:, :-1] - k[:, 1:]
    j = np.argmax(gaps, axis=1)
    rows = np.arange(len(k))
    return k[rows, j + 1] + gaps[rows, j] / 2.0


def resolve_thresholds(m: np.ndarray, threshold: Any) -> np.ndarray:
    if isinstance(threshold, str):
        check_choice("threshold", threshold, ("adaptive",))
        return adaptive_thresholds(m)
    try:
        th = np.asarray(threshold, dtype=np.float64)
    except (TypeError, ValueError):
        th = np.array([np.nan])
    if th.ndim == 0:
        th = np.full(len(m), float(th))
    if th.shape != (len(m),) or not np.all(np.isfinite(th)):
        raise ValueError(f"threshold: expected a finite number, 'adaptive', or one value per query ({len(m)})")
    return check_threshold("threshold", th, 0.0, 1.0, "a label's vote fraction")


@constrained(threshold="label_threshold", sigma="noise_scale")
def gnthreshold(fractions: Any, threshold: Any, sigma: float, rng: Any) -> MultiLabelAggregation:
    """GNThreshold (Muschiol 2021, Definition 10, Eq. 4.1): c_i = 1 iff m_i + N(0, σ²) > th.

    ``threshold`` is a number, one number per query, or ``"adaptive"``
    (Definition 11; see :func:`adaptive_thresholds`).
    """
    m = check_fractions(fractions)
    th = resolve_thresholds(m, threshold)
    noisy = m + as_generator(rng).normal(0.0, sigma, size=m.shape)
    labels = noisy > th[:, None]
    name = "gnthreshold-adaptive" if isinstance(threshold, str) else "gnthreshold"
    return MultiLabelAggregation(labels, np.ones(len(m), bool), m, th, name, {"sigma": sigma, "threshold": threshold})


@constrained(sigma="noise_scale")
def gnthreshold_adaptive(fractions: Any, sigma: float, rng: Any) -> MultiLabelAggregation:
    """GNThreshold Adaptive (Muschiol 2021, Definition 11, Eq. 4.2)."""
    return gnthreshold(fractions, "adaptive", sigma, rng)


def confident_gnthreshold_check(
    fractions: np.ndarray,
    thresholds: np.ndarray,
    confidence_threshold: float,
    sigma_confidence: float,
    rule: str,
    top_n: int,
    rng: Any,
) -> np.ndarray:
    """Step 1 of Confident-GNThreshold (Muschiol 2021, Definition 12 / Algorithm 3): the answered mask.

    ``rule="printed"``: all top-n values of δ = m − th_e plus independent
    N(0, σ_c²) must be ≥ th_c. ``rule="max"``: max_i m_i + N(0, σ_c²) ≥ th_c.
    """
    check_choice("rule", rule, CONFIDENCE_RULES)
    gen = as_generator(rng)
    if rule == "max":
        return confident_check(fractions.max(axis=1), confidence_threshold, sigma_confidence, gen)
    n = min(int(top_n), fractions.shape[1])
    top = -np.sort(-fractions, axis=1)[:, :n] - thresholds[:, None]
    return np.all(top + gen.normal(0.0, sigma_confidence, size=top.shape) >= confidence_threshold, axis=1)


@constrained(
    threshold="label_threshold",
    sigma="noise_scale",
    confidence_threshold="threshold",
    sigma_confidence="noise_scale",
    top_n="count",
)
def confident_gnthreshold(
    fractions: Any,
    threshold: Any,
    sigma: float,
    confidence_threshold: float,
    sigma_confidence: float,
    rng: Any,
    rule: str = "printed",
    top_n: int = 4,
) -> MultiLabelAggregation:
    """Confident-GNThreshold (Muschiol 2021, Definition 12 / Algorithm 3).

    Runs :func:`confident_gnthreshold_check` with ``rule`` (``"printed"`` or
    ``"max"``), then :func:`gnthreshold` on the answered queries. Noise for
    the check is drawn first, then the labels' noise for every query.
    """
    m = check_fractions(fractions)
    gen = as_generator(rng)
    th = resolve_thresholds(m, threshold)
    check_choice("rule", rule, CONFIDENCE_RULES)
    if rule == "max":
        warn_threshold_range("confidence_threshold", confidence_threshold, 0.0, 1.0, "the largest vote fraction")
    else:
        warn_threshold_range(
            "confidence_threshold",
            confidence_threshold,
            -float(th.max()),
            1.0 - float(th.min()),
            "a top vote fraction minus the ensemble threshold",
        )
    answered = confident_gnthreshold_check(m, th, confidence_threshold, sigma_confidence, rule, top_n, gen)
    labels = (m + gen.normal(0.0, sigma, size=m.shape) > th[:, None]) & answered[:, None]
    return MultiLabelAggregation(
        labels,
        answered,
        m,
        th,
        "confident-gnthreshold",
        {
            "sigma": sigma,
            "threshold": threshold,
            "confidence_threshold": float(confidence_threshold),
            "sigma_confidence": sigma_confidence,
            "rule": rule,
            "top_n": top_n,
        },
    )
