"""Later multi-label PATE: Binary, τ and Powerset voting (Dziedzic et al. 2023), releases and accountants.

One module of over 800 lines on purpose: the three mechanisms share the vote tensors, the per-label GNMax
bound and the composition, and each release stands beside the accountant that charges it (split apart, a
reader would check a release against an accountant in another file).

Source: A. Dziedzic, C. A. Choquette-Choo, N. Dullerud, V. Suriyakumar, A. Shahin Shamsabadi,
M. A. Kaleem, S. Jha, N. Papernot, X. Wang, "Private Multi-Winner Voting for Machine
Learning", PoPETs 2023(1), 527–555 (arXiv 2211.15410). Their public code
(github.com/cleverhans-lab/private-multi-winner-voting, ``analysis/pate.py`` and
``analysis/rdp_cumulative.py``) was read to understand the mechanisms; nothing is copied.

For a student: with T teachers each predicting a binary vector b_t ∈ {0, 1}^k (one bit per
label) for a query, the three mechanisms release a label vector differently:

* **Binary voting** (:func:`binary_pate`): every label is its own 2-class GNMax over the
  counts (T − p_i, p_i) of negative and positive votes, optionally behind a confident-GNMax
  check per label (Papernot et al. 2018, Algorithm 1). Privacy: Proposition 8 / Theorem 6 per
  label (one teacher moves (−1, +1): l2 sensitivity √2, data-independent α/σ² per label), and
  composition over the k labels (k·α/σ² per query).
* **τ voting** (:func:`tau_pate`): each teacher's vector is clipped to l2 norm τ,
  c_t = b_t · min(1, τ/‖b_t‖₂); the sums S_i = Σ_t c_{t,i} get one Gaussian N(0, σ²) each
  and label i is released iff S_i + noise > threshold (fixed, data-independent, e.g. T/2).
  Replacing one teacher changes S by c_t − c'_t with ‖c_t − c'_t‖₂² = ‖c_t‖² + ‖c'_t‖² −
  2⟨c_t, c'_t⟩ ≤ 2τ² (the vectors are non-negative, so ⟨c_t, c'_t⟩ ≥ 0): l2 sensitivity √2·τ and,
  by Mironov 2017 Proposition 7, data-independent RDP α·(√2τ)²/(2σ²) = **α·τ²/σ²** per query (the
  paper's bounded-DP setting; their code's ``compute_rdp_data_independent_multilabel`` with the
  l2 norm uses the same 2τ² squared sensitivity). With add/remove neighbours it would be
  α·τ²/(2σ²); with vote vectors that may be negative, α·2τ²/σ². Their PATE pipeline adds σ to
  both counts (1 − c, c) of a 2-class argmax instead, which is this mechanism with σ/√2 and
  hence α·2τ²/σ² (their ``analyze_multilabel_tau``); the σ here is the noise on S itself.
* **Powerset voting** (:func:`powerset_pate`): GNMax over all 2^k label sets, each teacher
  voting for its own set. Only the sets that occur among the teachers' votes have non-zero
  counts; the 2^k − d sets with no vote are handled exactly, not dropped: the release samples
  the largest of their noises in closed form (the maximum of N i.i.d. N(0, σ²) is
  σ·Φ⁻¹(U^{1/N})), and the accountant adds their (2^k − d)·Φ̄(n*/(√2σ)) to q (Proposition 7).
  Restricting the candidates to the sets the private votes contain would make the output space
  depend on the private data, which no DP analysis covers. Privacy: GNMax, α/σ² per query.

Data-dependent bounds (Papernot et al. 2018 Theorem 6, ``rdp_curves``):

* Binary: per label, q_i = Φ̄(|2p_i − T|/(√2σ)) capped at 1/2; per-label curves summed over labels
  and queries. Confident Binary: the check on max(p_i, T − p_i) charged on every label
  (q = min(Pr, 1 − Pr), slope 1/(2σ1²)), the GNMax step charged as a
  :class:`~pate_study.privacy.options.Charge` says: ``Cost.REALIZED`` (the default, the guarantee of the run:
  only the labels actually answered) **or** ``Cost.EXPECTED`` (Pr[answered] per label,
  returned as an ``ExpectedCost``: expected, not a guarantee); both are reported by :func:`binary_pate_costs`
  (their code reports the expected cost only).
* τ: q = Σ_i Φ̄(|S_i − th|/σ) (union bound over labels, the paper's choice; ``QBound.EXACT``
  uses 1 − Π_i (1 − Φ̄_i), exact because the label noises are independent), with slope τ²/σ².
  The noise-free outcome has probability ≥ 2^{−k} (each bit is right with probability ≥ 1/2),
  so q is **capped at 1 − 2^{−k} (log q ≤ 0)**: their code returns the uncapped union bound,
  whose log exceeds 0 once Σ_i Φ̄_i > 1, and their data-dependent RDP then raises. Here such a
  query simply gets the data-independent α·τ²/σ².
* Powerset: q of GNMax over the 2^k candidates, capped at 1 − 2^{−k}.

Votes come in as arrays (validated, with errors naming the parameter); every function is
vectorised over queries and labels, computes in log space and sums deterministically
(``rdp_curves`` module docstring). All randomness comes from an explicit seed or Generator.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import as_generator
from pate_study.privacy.accounting import ExpectedCost, PrivacySpent, account, expected_cost, query_mode
from pate_study.privacy.options import (
    DEFAULT_ACCOUNTING,
    Accounting,
    Charge,
    ConfidenceCheck,
    ConfidenceRule,
    Cost,
    NoiseConvention,
    QBound,
    TauComposition,
    choice,
)
from pate_study.privacy.rdp import step2_weights
from pate_study.privacy.rdp_curves import (
    gaussian_tail_logsf,
    gnmax_logq_counts,
    log1mexp,
    log_prod_ndtr,
    rdp_data_dependent,
    row_logsumexp,
    total_rdp_data_dependent,
)

__all__ = [
    "MultiWinnerRelease",
    "Q_BOUNDS",
    "check_teacher_votes",
    "positive_votes",
    "clip_votes",
    "powerset_counts",
    "binary_pate",
    "tau_pate",
    "powerset_pate",
    "binary_label_logq",
    "tau_logq",
    "binary_pate_epsilon",
    "binary_pate_costs",
    "tau_pate_epsilon",
    "TAU_COMPOSITIONS",
    "NOISE_CONVENTIONS",
    "union_bound_epsilon",
    "powerset_pate_epsilon",
]

#: q bounds of τ voting: the paper's union bound over labels, or the exact 1 − Π(1 − Φ̄_i) (:class:`QBound`).
Q_BOUNDS = tuple(b.value for b in QBound)
_SQRT2 = math.sqrt(2.0)
_LOG2 = math.log(2.0)


@dataclasses.dataclass(frozen=True, eq=False)
class MultiWinnerRelease:
    """Label vectors released by a multi-winner mechanism.

    Attributes:
        labels: ``bool[n_queries, n_labels]`` (False where not answered).
        answered: ``bool[n_queries, n_labels]``: which labels were released (all True without a
            confidence check; Binary voting's check decides per label).
        mechanism: ``"binary"``, ``"confident-binary"``, ``"tau"`` or ``"powerset"``.
        params: noise parameters used.
    """

    labels: np.ndarray
    answered: np.ndarray
    mechanism: str
    params: dict

    @property
    def n_answered_labels(self) -> int:
        """Number of released labels."""
        return int(np.count_nonzero(self.answered))


# ----------------------------------------------------------------- validation


def check_teacher_votes(teacher_votes: Any, name: str = "teacher_votes") -> np.ndarray:
    """Validate the teachers' binary predictions ``[n_teachers, n_queries, n_labels]`` (values 0/1) as bool."""
    arr = np.asarray(teacher_votes)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected a numeric or boolean array of 0/1 votes, got dtype {arr.dtype}")
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(
            f"{name}: expected a non-empty 3-D array [n_teachers, n_queries, n_labels] of 0/1 votes, "
            f"got shape {arr.shape}"
        )
    if arr.dtype != bool:
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: expected 0/1 votes, found NaN or inf")
        if not np.all((arr == 0) | (arr == 1)):
            raise ValueError(f"{name}: expected binary votes (0 or 1); threshold probabilities first, e.g. probs > 0.5")
    return np.ascontiguousarray(arr.astype(bool))


def _check_positive_votes(votes: Any, n_teachers: int, name: str = "positive_votes") -> np.ndarray:
    """Validate per-label positive-vote counts ``int[n_queries, n_labels]`` in [0, n_teachers]."""
    arr = np.asarray(votes)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name}: expected a numeric array of vote counts, got dtype {arr.dtype}")
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f"{name}: expected a non-empty 2-D array [n_queries, n_labels], got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite vote counts, found NaN or inf")
    if np.any(arr < 0) or np.any(arr > n_teachers) or np.any(arr != np.round(arr)):
        raise ValueError(
            f"{name}: expected integer counts of positive votes in [0, n_teachers={n_teachers}], "
            f"found range [{arr.min()}, {arr.max()}]"
        )
    return np.ascontiguousarray(arr.astype(np.int64))


def _check_sums(sums: Any, name: str = "clipped_sums") -> np.ndarray:
    arr = np.asarray(sums)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name}: expected a numeric array [n_queries, n_labels], got dtype {arr.dtype}")
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f"{name}: expected a non-empty 2-D array [n_queries, n_labels], got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name}: expected finite non-negative sums of clipped votes (see clip_votes)")
    return np.ascontiguousarray(arr)


# -------------------------------------------------------------- vote summaries


def positive_votes(teacher_votes: Any) -> np.ndarray:
    """Per-label number of positive votes ``int[n_queries, n_labels]`` (Binary voting's counts p_i)."""
    b = check_teacher_votes(teacher_votes)
    return np.add.reduce(b, axis=0, dtype=np.int64)


@constrained(tau="positive")
def clip_votes(teacher_votes: Any, tau: float) -> np.ndarray:
    """τ voting's sums S = Σ_t b_t · min(1, τ/‖b_t‖₂), ``float[n_queries, n_labels]`` (Dziedzic et al. 2023, τ voting).

    ‖b_t‖₂ = √(number of positive labels of teacher t); teachers are added one after
    another (a fixed order, so the sums do not depend on memory layout).
    """
    b = check_teacher_votes(teacher_votes)
    sums = np.zeros(b.shape[1:])
    for votes in b:
        norm = np.sqrt(np.count_nonzero(votes, axis=1).astype(np.float64))
        scale = np.minimum(1.0, tau / np.maximum(norm, tau))
        sums += votes * scale[:, None]
    return sums


def powerset_counts(teacher_votes: Any) -> tuple[np.ndarray, np.ndarray]:
    """The label sets that occur among the teachers' votes, per query, and their vote counts.

    Returns (``counts int[n_queries, d]``, ``sets bool[n_queries, d, n_labels]``) with d the
    largest number of distinct sets in any query; columns sorted by count (descending, ties by
    set), padded with count 0 (whose set entries are meaningless and all False).
    """
    b = check_teacher_votes(teacher_votes)
    t, n, k = b.shape
    packed = np.packbits(b, axis=2)  # [T, n, ceil(k/8)] bytes
    n_bytes = packed.shape[2]
    width = -(-n_bytes // 8) * 8
    if width != n_bytes:
        packed = np.concatenate([packed, np.zeros((t, n, width - n_bytes), dtype=np.uint8)], axis=2)
    words = np.ascontiguousarray(packed.transpose(1, 0, 2)).view(np.uint64).reshape(n * t, -1)  # [n·T, W]
    query = np.repeat(np.arange(n), t)
    order = np.lexsort(tuple(words[:, j] for j in range(words.shape[1] - 1, -1, -1)) + (query,))
    words, query = words[order], query[order]
    new = np.ones(n * t, dtype=bool)
    new[1:] = (query[1:] != query[:-1]) | np.any(words[1:] != words[:-1], axis=1)
    starts = np.flatnonzero(new)
    count = np.diff(np.append(starts, n * t))
    uq, uw = query[starts], words[starts]
    by_count = np.lexsort((-count, uq))  # per query, largest count first (ties: set order)
    uq, uw, count = uq[by_count], uw[by_count], count[by_count]
    first = np.searchsorted(uq, np.arange(n))
    pos = np.arange(len(uq)) - first[uq]
    d = int(pos.max()) + 1
    counts = np.zeros((n, d), dtype=np.int64)
    counts[uq, pos] = count
    sets = np.zeros((n, d, k), dtype=bool)
    sets[uq, pos] = np.unpackbits(np.ascontiguousarray(uw).view(np.uint8).reshape(len(uq), -1), axis=1, count=k).astype(
        bool
    )
    return counts, sets


# --------------------------------------------------------------------- releases


def _binary_check(check_values: np.ndarray, threshold: float, sigma_threshold: float, gen) -> np.ndarray:
    """Confident-GNMax check per label: max(p, T − p) + N(0, σ1²) ≥ T_c (Papernot et al. 2018, Algorithm 1)."""
    return check_values + gen.normal(0.0, sigma_threshold, size=check_values.shape) >= threshold


@constrained(n_teachers="count", sigma="noise_scale")
def binary_pate(
    positive_votes: Any, n_teachers: int, sigma: float, rng: Any, check: ConfidenceCheck | None = None
) -> MultiWinnerRelease:
    """Binary voting: per label, argmax of (T − p + N(0, σ²), p + N(0, σ²)) (Dziedzic et al. 2023, Binary voting).

    With a ``check`` (:class:`~pate_study.privacy.options.ConfidenceCheck`, threshold T_c and noise σ1 in vote
    counts) each label is first checked, max(p, T − p) + N(0, σ1²) ≥ T_c (drawn first, for every label), and
    released only then: confident Binary voting; without one, plain Binary voting.
    Ties of the noisy counts go to the negative class.
    """
    t = n_teachers
    p = _check_positive_votes(positive_votes, t)
    gen = as_generator(rng)
    confident = _binary_confidence(check)
    answered = np.ones(p.shape, dtype=bool)
    params = {"sigma": sigma, "n_teachers": t}
    if confident:
        th, s1 = confident.threshold, confident.sigma
        answered = _binary_check(np.maximum(p, t - p).astype(np.float64), th, s1, gen)
        params.update(threshold=th, sigma_threshold=s1)
    noise = gen.normal(0.0, sigma, size=(2,) + p.shape)
    labels = (p + noise[1] > (t - p) + noise[0]) & answered
    return MultiWinnerRelease(labels, answered, "confident-binary" if confident else "binary", params)


def _binary_confidence(check: Any) -> ConfidenceCheck | None:
    """Binary voting's confidence check, or None for plain Binary voting. Its check compares one count per label,
    max(p, T − p), with T_c (Papernot et al. 2018, Algorithm 1), so only ``ConfidenceRule.MAX`` describes it."""
    if check is None:
        return None
    if not isinstance(check, ConfidenceCheck):
        raise ValueError(
            f"check: expected a ConfidenceCheck(threshold, sigma) (pate_study.privacy.options) or None, "
            f"got {type(check).__name__}"
        )
    if check.rule is not ConfidenceRule.MAX:
        raise ValueError(
            f"check.rule: Binary voting checks one count per label, max(p, T - p): expected "
            f"{ConfidenceRule.MAX.value!r}, got {check.rule.value!r}"
        )
    return check


@constrained(threshold="threshold_number", sigma="noise_scale")
def tau_pate(clipped_sums: Any, threshold: float, sigma: float, rng: Any) -> MultiWinnerRelease:
    """τ voting: label i released iff S_i + N(0, σ²) > threshold (Dziedzic et al. 2023, τ voting).

    ``clipped_sums`` from :func:`clip_votes`; ``threshold`` must not depend on the private votes
    (e.g. T/2 for a majority).
    """
    s = _check_sums(clipped_sums)
    labels = s + as_generator(rng).normal(0.0, sigma, size=s.shape) > threshold
    return MultiWinnerRelease(labels, np.ones(s.shape, dtype=bool), "tau", {"sigma": sigma, "threshold": threshold})


@constrained(sigma="noise_scale")
def powerset_pate(teacher_votes: Any, sigma: float, rng: Any) -> MultiWinnerRelease:
    """Powerset voting: GNMax over all 2^k label sets (Dziedzic et al. 2023, Powerset voting).

    The d sets that received votes get their count plus N(0, σ²); the largest noise among the
    2^k − d sets without votes is drawn exactly as σ·Φ⁻¹(U^{1/(2^k − d)}) (in log space), and if it
    wins, the released set is uniform among those sets (rejection sampling of k fair bits).
    """
    from scipy.special import ndtri_exp  # imported on first use (fast package import)

    counts, sets = powerset_counts(teacher_votes)
    gen = as_generator(rng)
    n, d, k = sets.shape
    occurring = counts > 0
    noisy = np.where(occurring, counts + gen.normal(0.0, sigma, size=counts.shape), -np.inf)
    n_occ = occurring.sum(axis=1)
    log_n_empty = np.array([_log_minus_count(k, int(c)) for c in n_occ])
    u = gen.random(n)
    with np.errstate(divide="ignore"):
        empty_max = np.where(np.isfinite(log_n_empty), sigma * ndtri_exp(np.log(u) / np.exp(log_n_empty)), -np.inf)
    best = np.argmax(noisy, axis=1)
    labels = sets[np.arange(n), best].copy()
    empty_wins = np.flatnonzero(empty_max > noisy[np.arange(n), best])
    for i in empty_wins:  # rare unless σ is large; each draw is a uniform set outside the voted ones
        voted = sets[i, occurring[i]]
        while True:
            cand = gen.random(k) < 0.5
            if not np.any(np.all(voted == cand, axis=1)):
                labels[i] = cand
                break
    return MultiWinnerRelease(labels, np.ones((n, k), dtype=bool), "powerset", {"sigma": sigma})


def _log_minus_count(k: int, d: int) -> float:
    """log(2^k − d) (−inf when d = 2^k)."""
    log_total = k * _LOG2
    if d == 0:
        return log_total
    if math.log(d) >= log_total:
        return -math.inf
    return log_total + float(log1mexp(math.log(d) - log_total))


# ------------------------------------------------------------------- q bounds


def binary_label_logq(positive_votes: np.ndarray, n_teachers: int, sigma: float) -> np.ndarray:
    """log q per label of Binary voting: log Φ̄(|2p − T|/(√2σ)), capped at log(1/2) (Papernot et al. 2018, Prop. 7)."""
    gaps = np.abs(2.0 * np.asarray(positive_votes, dtype=np.float64) - n_teachers)
    return np.minimum(gaussian_tail_logsf(gaps, _SQRT2 * sigma), -_LOG2)


def tau_logq(clipped_sums: np.ndarray, threshold: float, sigma: float, q_bound: QBound = QBound.UNION) -> np.ndarray:
    """log q per query of τ voting, capped at log(1 − 2^{−k}) ≤ 0 (see module docstring).

    ``QBound.UNION``: log Σ_i Φ̄(|S_i − th|/σ) (Dziedzic et al. 2023); ``QBound.EXACT``:
    log(1 − Π_i Φ(|S_i − th|/σ)).
    """
    q_bound = choice("q_bound", q_bound, QBound)
    z = np.abs(np.ascontiguousarray(clipped_sums) - threshold) / sigma
    k = z.shape[1]
    logq = row_logsumexp(gaussian_tail_logsf(z, 1.0)) if q_bound is QBound.UNION else log_prod_ndtr(z)[1]
    return np.minimum(logq, float(log1mexp(-k * _LOG2)))


# ------------------------------------------------------------------ accountants


def _label_curves(
    gaps: np.ndarray, logq_of_gap: np.ndarray, slope: float, grid: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """Σ over all labels of Theorem 6 curves, using that a label's curve depends on its vote gap |2p − T| only.

    Labels with equal gaps have equal curves: the total is Σ_gap (Σ weights) · curve(gap), with the
    weights per gap summed by ``np.bincount`` (sequential, deterministic).
    """
    w = np.bincount(gaps.ravel(), weights=None if weights is None else weights.ravel(), minlength=len(logq_of_gap))
    return total_rdp_data_dependent(logq_of_gap, slope, grid, w.astype(np.float64))


@constrained(
    sigma="noise_scale",
    delta="delta",
    n_teachers="count",
    n_queries="count",
    n_labels="count",
    charge="charge",
    accounting="accounting",
)
def binary_pate_epsilon(
    *,
    sigma: float,
    delta: float,
    positive_votes: Any = None,
    n_teachers: int | None = None,
    n_queries: int | None = None,
    n_labels: int | None = None,
    check: ConfidenceCheck | None = None,
    charge: Charge = Charge(),
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent | ExpectedCost:
    """(ε, δ) of (confident) Binary voting (Dziedzic et al. 2023; Papernot et al. 2018 Prop. 8, Theorem 6, Alg. 1).

    Data-independent (``n_queries`` + ``n_labels``): k·α/σ² per query, plus k·α/(2σ1²) for the
    check (every label charged both steps, ``cost="all_answered"``). Data-dependent
    (``positive_votes`` ``int[n_queries, n_labels]`` and ``n_teachers``): Theorem 6 per label
    with q of :func:`binary_label_logq`, composed over labels and queries. With a ``check``
    (:class:`~pate_study.privacy.options.ConfidenceCheck`: T_c and σ1), every label pays the check (Theorem 6 on
    the answered event, slope 1/(2σ1²)) and the GNMax step is charged as ``charge``
    (:class:`~pate_study.privacy.options.Charge`) says: ``Cost.REALIZED`` (the default, the guarantee of the run:
    only the labels in ``charge.answered``, ``bool[n_queries, n_labels]``, e.g. ``MultiWinnerRelease.answered``,
    or re-drawn from ``charge.rng`` exactly as :func:`binary_pate` draws the check) or ``Cost.EXPECTED`` (weighted
    by Pr[answered], what their code reports: returned as an :class:`~pate_study.privacy.accounting.ExpectedCost`,
    expected, not a guarantee). ``accounting``: the order grid and conversion.
    """
    confident = _binary_confidence(check)
    slope = 1.0 / sigma**2
    if positive_votes is None:
        if n_labels is None:
            raise ValueError("n_labels: the data-independent bound needs the number of labels")
        k = n_labels
    if n_teachers is None and positive_votes is not None:
        raise ValueError("n_teachers: the data-dependent bound needs the number of teachers T")
    n, p = query_mode(
        n_queries,
        positive_votes,
        lambda v: _check_positive_votes(v, n_teachers),
        data_name="positive_votes",
    )
    params: dict = {"sigma": sigma}
    if confident:
        params.update(threshold=confident.threshold, sigma_threshold=confident.sigma)
    mechanism = "confident-binary" if confident else "binary"
    common = {"delta": delta, "accounting": accounting, "accountant": "multiwinner2023", "mechanism": mechanism}
    if p is None:
        per_query = k * (slope + (0.5 / confident.sigma**2 if confident else 0.0))
        return account(
            lambda grid: n * per_query * grid,
            **common,
            n_queries=n,
            data_dependent=False,
            cost="all_answered" if confident else None,
            n_labels=k,
            **params,
        )
    t = int(n_teachers)
    k = p.shape[1]
    gaps = np.abs(2 * p - t)
    gap_values = np.arange(t + 1)
    logq = binary_label_logq((t + gap_values) / 2.0, t, sigma)  # log q of each possible gap
    if not confident:
        return account(
            lambda grid: _label_curves(gaps, logq, slope, grid),
            **common,
            n_queries=n,
            data_dependent=True,
            n_labels=k,
            n_teachers=t,
            **params,
        )
    th, s1 = confident.threshold, confident.sigma
    values = np.maximum(p, t - p).astype(np.float64)
    gap_checks = (t + gap_values) / 2.0  # max(p, T − p) of each possible gap
    logpr_of_gap = gaussian_tail_logsf(th - gap_checks, s1)
    log_check_q = np.minimum(logpr_of_gap, gaussian_tail_logsf(gap_checks - th, s1))
    weights = step2_weights(
        charge.cost.value,
        logpr_of_gap[gaps],
        charge.answered,
        charge.rng,
        lambda gen: _binary_check(values, th, s1, gen),
    )

    answered_labels = math.fsum(np.bincount(gaps.ravel(), weights=weights.ravel()).tolist())

    def total(grid: np.ndarray) -> np.ndarray:
        return _label_curves(gaps, log_check_q, 0.5 / s1**2, grid) + _label_curves(gaps, logq, slope, grid, weights)

    spent = account(
        total,
        **common,
        n_queries=n,
        data_dependent=True,
        cost=charge.cost.value,
        expected_answered=answered_labels / k,
        expected_answered_labels=answered_labels,
        n_labels=k,
        n_teachers=t,
        **params,
    )
    return expected_cost(spent) if charge.cost is Cost.EXPECTED else spent


@constrained(
    n_teachers="count",
    sigma="noise_scale",
    delta="delta",
    accounting="accounting",
)
def binary_pate_costs(
    *,
    positive_votes: Any,
    n_teachers: int,
    sigma: float,
    delta: float,
    check: ConfidenceCheck | None = None,
    answered: Any = None,
    rng: Any = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> dict[str, Any]:
    """Confident Binary voting charged both ways on the same votes: ``{"expected": …, "realized": …}``.

    The expected cost is what the paper's code reports (an :class:`~pate_study.privacy.accounting.ExpectedCost`:
    expected, not a guarantee); the realised one (a :class:`PrivacySpent`, the guarantee) charges the GNMax step
    only on the labels a run actually answered (``answered`` or a draw from ``rng``). ``check``: the confidence
    check (:class:`~pate_study.privacy.options.ConfidenceCheck`); ``accounting``: the order grid and conversion.
    """
    check = _binary_confidence(check)
    if check is None:
        raise ValueError("check: binary_pate_costs compares the costs of confident Binary voting: give its check")
    common = dict(
        positive_votes=positive_votes,
        n_teachers=n_teachers,
        sigma=sigma,
        check=check,
        delta=delta,
        accounting=accounting,
    )
    return {
        "expected": binary_pate_epsilon(charge=Charge(Cost.EXPECTED), **common),
        "realized": binary_pate_epsilon(charge=Charge(Cost.REALIZED, answered, rng), **common),
    }


@constrained(
    tau="positive",
    sigma="noise_scale",
    delta="delta",
    threshold="threshold_number",
    n_queries="count",
    accounting="accounting",
)
def tau_pate_epsilon(
    *,
    tau: float,
    sigma: float,
    delta: float,
    clipped_sums: Any = None,
    threshold: float | None = None,
    n_queries: int | None = None,
    q_bound: QBound = QBound.UNION,
    composition: TauComposition = TauComposition.JOINT,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """(ε, δ) of τ voting (Dziedzic et al. 2023; Mironov 2017 Prop. 7; Papernot et al. 2018 Theorem 6).

    σ is the noise on each clipped sum S_i (one draw per label); their two-count pipeline's σ on each of
    (1 − c, c) is σ/√2 here (module docstring). Data-independent (``n_queries``): α·τ²/σ² per query (l2
    sensitivity √2τ). Data-dependent (``clipped_sums`` ``[n_queries, n_labels]`` from :func:`clip_votes` and
    the release ``threshold``):

    * ``TauComposition.JOINT`` (``"joint"``): one Theorem 6 bound per query with slope τ²/σ² and q of
      :func:`tau_logq` (the paper's analysis);
    * ``TauComposition.PER_LABEL`` (``"per_label"``): the labels' noises are independent, so a query's Rényi
      divergence is the sum of the labels' (Mironov 2017 Prop. 1 with equality for independent releases); each
      label is a threshold on S_i with sensitivity ≤ 1 (clipped entries lie in [0, 1]): Theorem 6 with slope 1/(2σ²) and
      q_i = Φ̄(|S_i − th|/σ) capped at 1/2, summed over labels, then capped per query at the joint α·τ²/σ²
      (both are valid bounds on the same divergence). Never looser than the joint data-independent bound,
      and usually far tighter than the joint data-dependent one.

    ``q_bound``: :class:`~pate_study.privacy.options.QBound` (its string works too); ``accounting``: the order grid
    and conversion.
    """
    q_bound = choice("q_bound", q_bound, QBound)
    composition = choice("composition", composition, TauComposition)
    n, s = query_mode(n_queries, clipped_sums, _check_sums, data_name="clipped_sums")
    slope = tau**2 / sigma**2
    params: dict = {"tau": tau, "sigma": sigma}
    common = {"delta": delta, "accounting": accounting, "accountant": "multiwinner2023", "mechanism": "tau"}
    if s is None:
        return account(lambda grid: n * slope * grid, **common, n_queries=n, data_dependent=False, **params)
    if threshold is None:
        raise ValueError("threshold: the data-dependent bound needs the release threshold (e.g. n_teachers / 2)")
    th = threshold
    if composition is TauComposition.PER_LABEL:
        return account(
            lambda grid: _tau_per_label_total(s, th, sigma, slope, grid),
            **common,
            n_queries=n,
            data_dependent=True,
            threshold=th,
            composition=composition.value,
            n_labels=s.shape[1],
            **params,
        )
    logq = tau_logq(s, th, sigma, q_bound)
    return account(
        lambda grid: total_rdp_data_dependent(logq, slope, grid),
        **common,
        n_queries=n,
        data_dependent=True,
        threshold=th,
        q_bound=q_bound.value,
        n_labels=s.shape[1],
        n_capped=_n_capped(logq, s.shape[1]),
        **params,
    )


#: τ voting's compositions (:class:`~pate_study.privacy.options.TauComposition`), as strings.
TAU_COMPOSITIONS = tuple(c.value for c in TauComposition)


def _tau_per_label_total(
    sums: np.ndarray, threshold: float, sigma: float, cap_slope: float, grid: np.ndarray, chunk: int = 64
) -> np.ndarray:
    """Σ over queries of min(Σ_labels Theorem 6 curve (slope 1/(2σ²)), τ²/σ²·α) (see :func:`tau_pate_epsilon`).

    A label's curve depends only on its log q, so Theorem 6 runs once per distinct value (clipped sums take
    few values); queries are then processed in chunks so that memory stays at ``chunk × n_labels × n_orders``;
    the sum over chunks is sequential (deterministic)."""
    grid = np.asarray(grid, dtype=np.float64)
    logq = np.minimum(gaussian_tail_logsf(np.abs(sums - threshold), sigma), -_LOG2)
    values, inverse = np.unique(logq, return_inverse=True)
    curves = rdp_data_dependent(values, 1.0 / (2.0 * sigma**2), grid)
    inverse = inverse.reshape(logq.shape)
    total = np.zeros_like(grid)
    for a in range(0, len(sums), chunk):
        per_query = curves[inverse[a : a + chunk]].sum(axis=1)
        total += np.minimum(per_query, cap_slope * grid[None, :]).sum(axis=0)
    return total


#: Where σ is added (:class:`~pate_study.privacy.options.NoiseConvention`), as strings.
NOISE_CONVENTIONS = tuple(c.value for c in NoiseConvention)


@constrained(sigma="noise_scale", delta="delta", n_queries="count", n_labels="count", accounting="accounting")
def union_bound_epsilon(
    *,
    sigma: float,
    delta: float,
    n_queries: int,
    n_labels: int,
    noise: NoiseConvention = NoiseConvention.SUM,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """Data-independent (ε, δ) of per-label Gaussian thresholds on **raw** binary vote counts (no clipping).

    One teacher changes each count S_i = Σ_t b_{t,i} by at most 1, so ‖ΔS‖₂² ≤ L (L = ``n_labels``): with
    σ on each S_i (``noise="sum"``, one draw per label) the release is the Gaussian mechanism with RDP
    α·L/(2σ²) (Mironov 2017 Prop. 7); with σ on each of the two counts (T − S_i, S_i) of a 2-class argmax
    (``noise="two_counts"``, the Dziedzic et al. 2023 / Papernot et al. 2018 pipeline) the noise on the
    difference is √2σ and the sensitivity of (T − S_i, S_i) is √2 per label: RDP α·L/σ². Calling
    :func:`tau_pate_epsilon` with τ = √L instead charges α·L/σ² for σ on S, twice the first value, because
    τ-clipping's √2τ sensitivity allows non-binary clipped vectors. ``noise``:
    :class:`~pate_study.privacy.options.NoiseConvention` (its string works too); ``accounting``: the order grid and
    conversion.
    """
    n, k = n_queries, n_labels
    noise = choice("noise", noise, NoiseConvention)
    slope = k / (2.0 * sigma**2) if noise is NoiseConvention.SUM else k / sigma**2
    return account(
        lambda grid: n * slope * grid,
        delta=delta,
        accounting=accounting,
        accountant="multiwinner2023",
        mechanism="union-bound",
        n_queries=n,
        data_dependent=False,
        sigma=sigma,
        noise=noise.value,
        n_labels=k,
    )


def _n_capped(logq: np.ndarray, k: int) -> int:
    """Number of queries whose union bound reached the cap 1 − 2^{−k}."""
    return int(np.count_nonzero(logq >= float(log1mexp(-k * _LOG2))))


@constrained(sigma="noise_scale", delta="delta", n_labels="count", n_queries="count", accounting="accounting")
def powerset_pate_epsilon(
    *,
    sigma: float,
    delta: float,
    teacher_votes: Any = None,
    set_counts: Any = None,
    n_labels: int | None = None,
    n_queries: int | None = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """(ε, δ) of Powerset voting: GNMax over the 2^k label sets (Dziedzic et al. 2023; Papernot et al. 2018).

    Data-independent (``n_queries``): α/σ² per query (Proposition 8). Data-dependent
    (``teacher_votes`` ``[n_teachers, n_queries, n_labels]``, or ``set_counts`` from
    :func:`powerset_counts` with ``n_labels``, to reuse the counts across σ): Theorem 6 with
    Proposition 7's q over all 2^k sets, the sets without votes included in closed form, capped
    at 1 − 2^{−k}. ``accounting``: the order grid and conversion.
    """
    slope = 1.0 / sigma**2
    if teacher_votes is not None and set_counts is not None:
        raise ValueError("teacher_votes/set_counts: give one of them, not both")
    if set_counts is not None:
        if n_labels is None:
            raise ValueError("n_labels: set_counts needs the number of labels k (the candidates are the 2^k sets)")
        k = n_labels
        n, counts = query_mode(n_queries, set_counts, lambda c: _check_set_counts(c, k), data_name="set_counts")
    else:
        n, b = query_mode(n_queries, teacher_votes, check_teacher_votes, data_name="teacher_votes")
        counts = None
        if b is not None:
            n, k = b.shape[1], b.shape[2]
            counts = powerset_counts(b)[0]
    common = {"delta": delta, "accounting": accounting, "accountant": "multiwinner2023", "mechanism": "powerset"}
    if counts is None:
        return account(lambda grid: n * slope * grid, **common, n_queries=n, data_dependent=False, sigma=sigma)
    logq = gnmax_logq_counts(counts, sigma, n_candidates_log=k * _LOG2)
    return account(
        lambda grid: total_rdp_data_dependent(logq, slope, grid),
        **common,
        n_queries=n,
        data_dependent=True,
        sigma=sigma,
        n_labels=k,
        mean_distinct_sets=float(np.mean(np.count_nonzero(counts, axis=1))),
    )


def _check_set_counts(counts: Any, k: int, name: str = "set_counts") -> np.ndarray:
    """Validate per-query vote counts of the occurring label sets ``int[n_queries, d]`` (d ≤ 2^k)."""
    arr = np.asarray(counts)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number) or arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f"{name}: expected a non-empty numeric 2-D array [n_queries, d] (see powerset_counts)")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name}: expected non-negative integer vote counts")
    if math.log(arr.shape[1]) > k * _LOG2 + 1e-9:
        raise ValueError(f"{name}: {arr.shape[1]} columns, more than the 2^{k} label sets")
    return np.ascontiguousarray(arr.astype(np.int64))
