"""Multi-label PATE accounting (Muschiol 2021, Theorems 11–14 and Eq. 4.8): what is printed, and what is computed.

For a student: with multi-label data each query releases a whole binary vector
(one bit per label), GNThreshold: c_i = [m_i + N(0, σ²) > th] on the averaged
teacher votes m_i ∈ [0, 1]. The thesis analyses it like GNMax: a
data-independent RDP bound s·λ, and Papernot et al. 2018 Theorem 6 (the
thesis's Theorem 11; "Theorem 6" in this package always means Papernot et al.'s) for a
data-dependent one, with q̃ of Theorem 13,
q̃ = 1 − Π_i Φ(|s_i − th|/σ) (labels treated as independent, as the thesis does;
:func:`multilabel_logq`).

What the thesis prints (Muschiol 2021 §4.2.3, Theorems 11–14 and Eq. 4.8):

* Theorem 12: GNThreshold is (λ, nλ/(2σ²))-RDP, n = number of labels.
* Theorem 14: μ2 = √(2σ² log(1/q̃)/n), μ1 = 1 + μ2 (the orders minimising A
  and B when ε_i = nμ_i/(2σ²)).
* Eq. 4.8: D_λ = min{ log((1−q̃)A(q̃, μ2, ε2)^{λ−1} + q̃ B(q̃, μ2, ε2)^{λ−1})/(λ−1), λ/σ² },
  "with ε1 = nμ1/(2σ²) and ε2 = nμ2/(2σ²)" from Theorem 12, the first term
  evaluated only if q ≤ 1, μ1 ≥ λ, μ2 > 1 and
  q̃ ≤ e^{(μ1−1)ε2}/(μ2/(μ1−1) · μ2/(μ2−1))^{μ2}.
  So the cap λ/σ² is the multi-class GNMax bound, not Theorem 12's nλ/(2σ²);
  B(q̃, μ2, ε2) is a typo for Papernot's B(q̃, μ1, ε1), and the condition is a
  garbled copy of Papernot's q̃ ≤ e^{(μ2−1)ε2}/(μ1/(μ1−1) · μ2/(μ2−1))^{μ2}.

What is computed, by ``bound`` (:data:`BOUNDS`; :func:`multilabel_slope` gives the
data-independent slope, :func:`theorem6_params` the Theorem 6 inputs):

* ``"theorem12"``: Theorem 12 + Theorem 14, everything with s = n/(2σ²) (per-label
  sensitivity 1, vote-count units) and Papernot's B(μ1, ε1) and condition.
* ``"vote_fraction"``: the same with s = n/(2T²σ²), the Gaussian mechanism (the thesis's Theorem 6, not
  Papernot et al.'s) with ℓ2 sensitivity √n/T: with σ in vote-fraction units
  (how the thesis uses it, σ_e = 0.3) one teacher moves each fraction by at most
  1/T (needs ``n_teachers``). The tightest option for σ in vote-fraction units
  (the others' data-independent bounds are then larger, Theorem 12's by T²).
* ``"eq4_8"``: Eq. 4.8 exactly as printed: cap λ/σ²; inside Theorem 6, μ's from
  Theorem 14 and ε's from Theorem 12 (s = n/(2σ²)); B(q̃, μ2, ε2) and the printed
  condition, "μ1 ≥ λ" inclusive (``rdp`` variant ``"muschiol_printed"``); like every
  bound here the result is floored at 0, which the thesis does not print. Not a
  proven bound: the typos, and in vote-count units a cap below Theorem 12's own
  nλ/(2σ²) for n ≥ 3.
* ``"eq4_8_corrected"``: the same combination (cap λ/σ², Theorem 12/14 μ's and ε's)
  with Papernot's B(q̃, μ1, ε1) and condition.
* ``"gnmax_slope"``: the multi-class GNMax analysis (Papernot et al. 2018 Prop. 8
  and 10) transplanted: 1/σ² as cap *and* in μ2 = σ√(log 1/q̃), ε_i = μ_i/σ². This
  is what this module called ``"eq4_8"`` before; it is not what Eq. 4.8 prints.

Finding (independent review, checked by ``tests/privacy/test_multilabel.py``):
with vote fractions and thresholds in [0, 1], |s_i − th| ≤ 1, so q̃ ≥ 1 − Φ(1/σ)^n and
−log q̃ ≲ 1/(2σ²) + O(log(1/σ)), which is not above the slope n/(2σ²) (n ≥ 2) of
``"theorem12"``, ``"eq4_8"`` and ``"eq4_8_corrected"`` nor 1/σ² of ``"gnmax_slope"``
in the thesis's range of σ: for every σ < 0.768 when n ≥ 2, and more as n grows
(σ < 1.167 at n = 3, σ < 3.18 at n = 5; q̃'s minimum grows with n). Then μ2 ≤ 1,
Theorem 6 never applies, and the data-dependent ε equals the data-independent one
for every input: :func:`theorem6_possible` checks
this at the worst case |s_i − th| = 1, and a reviewer's grid of 500 queries ×
n ∈ {2, 5, 153} × σ ∈ {0.05, 0.1, 0.3} × th ∈ {0, 0.2, 0.5} agrees. Only
``"vote_fraction"`` yields data-dependent savings (n = 5, σ = 0.1, T = 50, 500
queries, δ = 10⁻⁸, data-independent 118.4: 34.4 on the reviewer's vote fractions,
90.3 on seeded uniform fractions with th = 0 here). Hence the thesis's Table 5.4
gains (268.4 vs 418.4) cannot come from Theorem 12 or Eq. 4.8.

Confident-GNThreshold's check (a :class:`~pate_study.privacy.options.ConfidenceCheck`) is charged on every
query (§5.3), by Theorem 6 on the binary answered/not event (q = min(Pr, 1 − Pr)) with slope Δ²/(2σ_c²) for
``ConfidenceRule.MAX`` and n_top·Δ²/(2σ_c²) for ``ConfidenceRule.PRINTED``, the all-top-n rule of Definition 12
as printed (Δ = 1/T for ``Bound.VOTE_FRACTION``, 1 otherwise); the GNThreshold step is charged as a
:class:`~pate_study.privacy.options.Charge` says: on answered queries (``Cost.REALIZED``, the default) or weighted
by Pr[answered] (``Cost.EXPECTED``: an ``ExpectedCost``, not a guarantee). Orders and conversion come in an
:class:`~pate_study.privacy.options.Accounting`; the adaptive threshold is ``Threshold.ADAPTIVE`` and the bounds
are :class:`~pate_study.privacy.options.Bound` (each equal to its string, which is still accepted).

Table 5.4 of the thesis matches none of these: its entries fit
ε = 0.2·N + ln(10⁸) exactly, i.e. order 2 and a per-query RDP of 0.2 at order
2 (our fit to Muschiol 2021 Table 5.4, :func:`pate_study.experiments.audioset.bound_forensics.table54_fit`). Every
accountant here exposes its order grid, the composed per-order RDP (``rdp_or_logmgf``) and ``PrivacySpent.at_order(2)``
so that those numbers can be examined.

Noise convention: σ is the standard deviation of the one Gaussian draw per label added to the vote
fraction m_i (σ_e of the thesis); on vote counts that is σ·T. Dziedzic et al. 2023's pipeline adds σ to each
of the two counts (T − p, p), i.e. σ/√2 on their difference (``multiwinner`` module docstring).

Adaptive threshold (Definition 11): charged, not left out. The threshold is computed from the noise-free
private votes; one teacher can move it across [0, 1] (exact enumeration at T = 5, 4 labels, σ = 0.3,
δ = 10⁻³: exact ε 9.22 against 5.84 from treating it as fixed, ``exact_profile``), so every bound is
replaced by the Gaussian mechanism on m − th·1 with per-label sensitivity 1/T + 1
(:func:`adaptive_threshold_slope`); the as-fixed value stays in ``details["epsilon_threshold_as_fixed"]``
only to be shown beside it. A private adaptive rule is in ``adaptive_k`` (after Zhu & Wang 2022).

Leaks the thesis does not charge (listed in :data:`UNCHARGED_LEAKS` and in the
result's details): dropping
training samples with many labels (§4.2.2) is a data-dependent choice on
private data; the printed confidence check's values m_j − th_e with the adaptive
threshold (for a fixed threshold the top-n selection is covered by the check's
slope, see :data:`UNCHARGED_LEAKS`); and a data-dependent ε is itself
data-dependent (release it with smooth sensitivity, ``smooth_sensitivity``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import check_fractions
from pate_study.privacy.accounting import (
    ExpectedCost,
    PrivacySpent,
    account,
    epsilon_curve,
    expected_cost,
    paper2018_orders,
    query_mode,
    resolve_rdp_orders,
)
from pate_study.privacy.aggregators import confident_gnthreshold_check, resolve_thresholds
from pate_study.privacy.options import (
    DEFAULT_ACCOUNTING,
    Accounting,
    Bound,
    Charge,
    ConfidenceCheck,
    ConfidenceRule,
    Cost,
    Threshold,
    choice,
)
from pate_study.privacy.rdp import step2_weights
from pate_study.privacy.rdp_curves import (
    gaussian_tail_logsf,
    log_prod_ndtr,
    rdp_data_dependent,
    total_rdp_data_dependent,
)

__all__ = [
    "BOUNDS",
    "UNCHARGED_LEAKS",
    "multilabel_logq",
    "multilabel_slope",
    "theorem6_params",
    "bound_validity",
    "adaptive_label_sensitivity",
    "adaptive_threshold_slope",
    "is_adaptive",
    "extended_orders",
    "theorem6_possible",
    "rdp_gnthreshold",
    "confidence_logpr",
    "gnthreshold_epsilon",
    "confident_gnthreshold_epsilon",
    "confident_gnthreshold_data_independent",
    "min_logq",
    "gnthreshold_epsilon_at_logq",
    "gnthreshold_spent_at_logq",
]

#: Every bound (:class:`~pate_study.privacy.options.Bound`), in the order the tables show them.
BOUNDS = tuple(Bound)

UNCHARGED_LEAKS = (
    "adaptive threshold: computed from the noise-free private votes (Definition 11); the thesis's analysis "
    "treats it as fixed (that value is kept in details['epsilon_threshold_as_fixed'] and is NOT a guarantee); "
    "the printed epsilon charges it by the threshold's own sensitivity (adaptive_threshold_slope)",
    "dropping training samples with many labels (§4.2.2): a data-dependent choice on private data, not charged",
    "printed confidence check with the adaptive threshold: the checked values m_j - th_e depend on the private "
    "votes through th_e, which can jump when one teacher changes; charged with per-value sensitivity "
    "Delta + 1 (th_e in [0, 1]) instead of Delta (with a fixed threshold the top-n selection is covered: "
    "sorting moves each checked value by at most one teacher's shift Delta)",
    "a data-dependent epsilon depends on the private votes; releasing it needs smooth sensitivity",
)


def extended_orders(n_below_two: int = 60) -> np.ndarray:
    """Orders 1 + 10^t, t from −3 to 0 (``n_below_two`` log-spaced values below 2), joined to Papernot et al.
    2018's grid [2, 500] (:func:`~pate_study.privacy.accounting.paper2018_orders`).

    The multi-label ε of a few thousand queries at the thesis's σ is minimised below λ = 2 (slope·N large
    against log(1/δ)), so on the 2018 grid it sits at the edge λ = 2; this grid reaches λ = 1.001.
    """
    below = 1.0 + np.logspace(-3.0, 0.0, int(n_below_two))[:-1]
    return np.concatenate([below, paper2018_orders()])


def is_adaptive(threshold: Any) -> bool:
    """Whether ``threshold`` is :attr:`~pate_study.privacy.options.Threshold.ADAPTIVE` (or its string); any other
    string is refused naming ``threshold``; a number or one number per query is a fixed threshold."""
    return isinstance(threshold, str) and choice("threshold", threshold, Threshold) is Threshold.ADAPTIVE


@constrained(threshold="label_threshold", sigma="noise_scale")
def multilabel_logq(fractions: Any, threshold: Any, sigma: float) -> np.ndarray:
    """log q̃ per query, Muschiol 2021 Theorem 13: q̃ = 1 − Π_i Φ(|s_i − th|/σ).

    ``threshold`` is a number, one number per query, or :attr:`~pate_study.privacy.options.Threshold.ADAPTIVE`.
    Computed as log(1 − exp(Σ_i log Φ(|s_i − th|/σ))), and as logsumexp_i log Φ̄(|s_i − th|/σ)
    where the product is too close to 1 for that (:func:`_log_prod_ndtr`).
    """
    m = check_fractions(fractions)
    th = resolve_thresholds(m, threshold)
    return log_prod_ndtr(np.abs(m - th[:, None]) / sigma)[1]


@constrained(threshold="label_threshold", sigma="noise_scale", n_labels="count")
def min_logq(threshold: Any, sigma: float, n_labels: int) -> float:
    """The smallest log q̃ (Theorem 13) that any vote fractions in [0, 1] can give over ``n_labels`` labels.

    Each factor Φ(|s_i − th|/σ) is largest at the farthest vote, |s_i − th| ≤ max(th, 1 − th) for a fixed
    threshold th ∈ [0, 1] (≤ 1 for ``"adaptive"``, whose threshold moves with the votes), so
    q̃ ≥ 1 − Φ(d_max/σ)^n (the bound of the module docstring's finding, per threshold). A printed q average
    below exp(min_logq) cannot come from Theorem 13 with this σ on vote fractions.
    """
    if is_adaptive(threshold):
        d = 1.0
    else:
        th = float(threshold)
        if not 0.0 <= th <= 1.0:
            raise ValueError(f"threshold={threshold!r}: expected a fixed threshold in [0, 1] or 'adaptive'")
        d = max(th, 1.0 - th)
    return float(log_prod_ndtr(np.full((1, n_labels), d / sigma))[1][0])


@constrained(sigma="noise_scale", n_labels="count", n_teachers="count")
def multilabel_slope(
    sigma: float, n_labels: int, bound: Bound = Bound.THEOREM12, n_teachers: int | None = None
) -> float:
    """Slope s of the data-independent RDP s·λ of GNThreshold (the cap of the data-dependent bound).

    ``"theorem12"``: n/(2σ²) (Muschiol 2021 Theorem 12 as printed, per-label
    sensitivity 1); ``"vote_fraction"``: n/(2T²σ²) (per-label sensitivity 1/T of
    vote fractions; needs ``n_teachers``); ``"eq4_8"``, ``"eq4_8_corrected"``,
    ``"gnmax_slope"``: 1/σ² (the λ/σ² printed in Eq. 4.8, the multi-class GNMax bound).
    """
    return theorem6_params(sigma, n_labels, bound, n_teachers)[1]


CAPPED_BOUNDS = (Bound.EQ4_8, Bound.EQ4_8_CORRECTED, Bound.GNMAX_SLOPE)


@constrained(sigma="noise_scale", n_labels="count", n_teachers="count", threshold="label_threshold")
def theorem6_params(
    sigma: float, n_labels: int, bound: Bound = Bound.THEOREM12, n_teachers: int | None = None, threshold: Any = None
) -> tuple[float, float, str]:
    """Inputs of the data-dependent bound: (slope s of μ's and ε's, cap slope c, Theorem 6 variant).

    μ2 = √(−log q̃ / s), μ1 = μ2 + 1, ε_i = s·μ_i, and the RDP at order λ is capped
    at c·λ (see ``rdp.rdp_data_dependent``). Per bound (module docstring):
    ``"theorem12"`` (n/(2σ²), n/(2σ²), ``"paper2018"``); ``"vote_fraction"``
    (n/(2T²σ²), n/(2T²σ²), ``"paper2018"``); ``"eq4_8"`` (n/(2σ²), 1/σ²,
    ``"muschiol_printed"``, i.e. B(q̃, μ2, ε2) and the printed condition);
    ``"eq4_8_corrected"`` (n/(2σ²), 1/σ², ``"paper2018"``); ``"gnmax_slope"``
    (1/σ², 1/σ², ``"paper2018"``).

    Validity (checked here, reported by :func:`bound_validity`):

    * ``"eq4_8"``, ``"eq4_8_corrected"``, ``"gnmax_slope"`` cap at λ/σ². GNThreshold on vote fractions with σ in
      vote-fraction units is the Gaussian mechanism with ℓ2 sensitivity √n/T (Muschiol 2021 Theorem 6, the
      Gaussian mechanism; Mironov 2017 Prop. 7), RDP nλ/(2T²σ²), so λ/σ² is an upper bound only when
      n ≤ 2T². Outside (or when ``n_teachers`` is not given, so the condition cannot be checked) the cap, and
      ``"gnmax_slope"``'s slope, fall back to the valid n/(2T²σ²) (with T) or n/(2σ²) (without T: per-label
      sensitivity ≤ 1 for fractions in [0, 1]).
    * ``threshold="adaptive"`` (Definition 11): the threshold is a function of the private votes, so each
      compared value m_i − th moves by up to Δ + 1 (Δ = one teacher's shift, th ∈ [0, 1]); the release is the
      Gaussian mechanism on m − th·1 with that sensitivity per label, and every bound is replaced by
      :func:`adaptive_threshold_slope` (slope and cap; Theorem 6 of Papernot et al. 2018 then still applies
      with q̃ computed at the votes' own threshold, but with this slope it never beats the cap).
    """
    n = n_labels
    bound = choice("bound", bound, Bound)
    if is_adaptive(threshold):
        s = adaptive_threshold_slope(sigma, n, bound, n_teachers)
        return s, s, "paper2018"
    thm12 = n / (2.0 * sigma**2)
    gnmax = 1.0 / sigma**2
    if bound == "theorem12":
        return thm12, thm12, "paper2018"
    if bound in CAPPED_BOUNDS:
        valid = _cap_valid(n, n_teachers)
        if not valid:
            gnmax = max(gnmax, thm12 if n_teachers is None else n / (2.0 * n_teachers**2 * sigma**2))
        if bound == "eq4_8":
            return thm12, gnmax, "muschiol_printed"
        if bound == "eq4_8_corrected":
            return thm12, gnmax, "paper2018"
        return gnmax, gnmax, "paper2018"
    s = n / (2.0 * _teachers(n_teachers) ** 2 * sigma**2)
    return s, s, "paper2018"


def _teachers(n_teachers: int | None) -> int:
    """The number of teachers T a vote-fraction bound needs (checked at the boundary when given)."""
    if n_teachers is None:
        raise ValueError("n_teachers: bound='vote_fraction' needs the number of teachers T")
    return n_teachers


def _cap_valid(n_labels: int, n_teachers: int | None) -> bool:
    """Whether the cap λ/σ² bounds GNThreshold's RDP nλ/(2T²σ²) on vote fractions: n ≤ 2T² (T known)."""
    return n_teachers is not None and n_labels <= 2 * n_teachers**2


@constrained(n_labels="count", n_teachers="count", threshold="label_threshold")
def bound_validity(n_labels: int, bound: Bound, n_teachers: int | None = None, threshold: Any = None) -> str:
    """One sentence saying which bound :func:`theorem6_params` used: the one asked for, or its valid fallback."""
    bound = choice("bound", bound, Bound)
    if is_adaptive(threshold):
        return (
            "adaptive threshold (Definition 11): charged by the threshold's sensitivity, "
            "per-label Delta + 1 (adaptive_threshold_slope), in place of every bound"
        )
    if bound not in CAPPED_BOUNDS:
        return "valid: per-label sensitivity of vote fractions <= the bound's"
    if _cap_valid(n_labels, n_teachers):
        return f"valid: cap lambda/sigma^2 holds since n = {n_labels} <= 2T^2 = {2 * n_teachers**2}"
    if n_teachers is None:
        return "fallback: cap lambda/sigma^2 unchecked without n_teachers; used n lambda/(2 sigma^2)"
    return (
        f"fallback: cap lambda/sigma^2 invalid since n = {n_labels} > 2T^2 = {2 * n_teachers**2}; "
        "used n lambda/(2 T^2 sigma^2)"
    )


@constrained(n_teachers="count")
def adaptive_label_sensitivity(bound: Bound = Bound.VOTE_FRACTION, n_teachers: int | None = None) -> float:
    """Largest change of one compared value m_i − th under Definition 11 when one teacher changes: Δ + 1,
    at most 2 (m_i and th both lie in [0, 1]); Δ = 1/T for ``"vote_fraction"`` (1 without T), else 1."""
    if bound == "vote_fraction" and n_teachers is not None:
        return min(1.0 / n_teachers + 1.0, 2.0)
    return 2.0


@constrained(sigma="noise_scale", n_labels="count", n_teachers="count")
def adaptive_threshold_slope(
    sigma: float, n_labels: int, bound: Bound = Bound.VOTE_FRACTION, n_teachers: int | None = None
) -> float:
    """Sound slope of GNThreshold with the adaptive threshold (Muschiol 2021 Definition 11): n·Δ_a²/(2σ²).

    The release c_i = [m_i − th(m) + N(0, σ²) > 0] is post-processing of the Gaussian mechanism on the vector
    m − th(m)·1, whose ℓ2 sensitivity is at most √n·Δ_a with Δ_a = :func:`adaptive_label_sensitivity`
    (Gaussian mechanism, Muschiol 2021 Theorem 6; Mironov 2017 Prop. 7). The threshold can jump across [0, 1]
    when one teacher changes (the exact enumeration of ``exact_profile`` finds such pairs), so no bound that
    treats it as fixed is valid; at σ = 0.3 and n = 161 this slope is ≈ 930 per query: no useful guarantee.
    """
    return n_labels * adaptive_label_sensitivity(bound, n_teachers) ** 2 / (2.0 * sigma**2)


@constrained(
    sigma="noise_scale", n_labels="count", n_teachers="count", max_distance="positive", threshold="label_threshold"
)
def theorem6_possible(
    sigma: float,
    n_labels: int,
    bound: Bound = Bound.THEOREM12,
    n_teachers: int | None = None,
    max_distance: float = 1.0,
    threshold: Any = None,
) -> bool:
    """Whether Theorem 6 can apply to *any* query, i.e. whether the data-dependent bound can ever help.

    q̃ (Theorem 13) decreases in every |s_i − th|, so its smallest value over all
    inputs with |s_i − th| ≤ ``max_distance`` (1 for fractions and thresholds in
    [0, 1]) is 1 − Φ(max_distance/σ)^n. Theorem 6 needs μ2 = √(−log q̃ / s) > 1;
    if that fails at the smallest q̃ it fails everywhere, and the data-dependent ε
    equals the data-independent one for every input: then this returns False.
    True means only that some input may get a smaller bound.
    """
    slope, _, _ = theorem6_params(sigma, n_labels, bound, n_teachers, threshold)
    logq_min = float(log_prod_ndtr(np.full((1, n_labels), max_distance / float(sigma)))[1][0])
    return -logq_min > slope


def _label_sensitivity(bound: Bound, n_teachers: int | None) -> float:
    return 1.0 / _teachers(n_teachers) if bound == "vote_fraction" else 1.0


@constrained(threshold="label_threshold", sigma="noise_scale", n_teachers="count")
def rdp_gnthreshold(
    fractions: Any,
    threshold: Any,
    sigma: float,
    orders: Any = "paper2018",
    bound: Bound = Bound.THEOREM12,
    n_teachers: int | None = None,
) -> np.ndarray:
    """Per-query data-dependent RDP ``[n_queries, n_orders]`` of GNThreshold (Muschiol 2021 Thms 11, 13, 14; Eq. 4.8).

    Theorem 6 of Papernot et al. 2018 with q̃ of Theorem 13 and the slope, cap and
    variant of :func:`theorem6_params` (so μ2 = √(2σ² log(1/q̃)/n) for ``"theorem12"``), evaluated at ``orders``
    (the axis of the result, each > 1), not an accounting setting.
    """
    m = check_fractions(fractions)
    slope, cap, variant = theorem6_params(sigma, m.shape[1], bound, n_teachers, threshold)
    return rdp_data_dependent(
        multilabel_logq(m, threshold, sigma), slope, resolve_rdp_orders(orders), cap_slope=cap, variant=variant
    )


@constrained(threshold="label_threshold", check="confidence_check")
def confidence_logpr(fractions: Any, threshold: Any, check: ConfidenceCheck) -> tuple[np.ndarray, np.ndarray]:
    """(log Pr[answered], log Pr[not answered]) of the Confident-GNThreshold check (Muschiol 2021 Def. 12) that
    ``check`` (:class:`~pate_study.privacy.options.ConfidenceCheck`: th_c, σ_c, rule, top_n) describes.

    ``ConfidenceRule.MAX``: Φ̄((th_c − max_i m_i)/σ_c). ``ConfidenceRule.PRINTED``: Π over the top-n
    labels of Φ̄((th_c − (m_j − th_e))/σ_c) (independent noises).
    """
    m = check_fractions(fractions)
    if check.rule is ConfidenceRule.MAX:
        z = (m.max(axis=1) - check.threshold) / check.sigma
        return gaussian_tail_logsf(-z, 1.0), gaussian_tail_logsf(z, 1.0)
    th = resolve_thresholds(m, threshold)
    n = min(check.top_n, m.shape[1])
    top = -np.sort(-m, axis=1)[:, :n] - th[:, None]
    return log_prod_ndtr((top - check.threshold) / check.sigma)


def confident_check_weights(
    m: np.ndarray, th: np.ndarray, check: ConfidenceCheck, charge: Charge
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two steps of a confident multi-label release on vote fractions ``m`` at per-query thresholds ``th``
    (Muschiol 2021 Def. 12; Papernot et al. 2018, Algorithm 1): the check's (log Pr[answered], log Pr[not answered])
    (:func:`confidence_logpr`) and the answering step's weight per query as ``charge`` says
    (:func:`~pate_study.privacy.rdp.step2_weights`: the run's answered queries, or the check re-drawn exactly as
    :func:`~pate_study.privacy.aggregators.confident_gnthreshold_check` draws it in the release)."""
    logpr, log_not = confidence_logpr(m, th, check)
    weights = step2_weights(
        charge.cost.value,
        logpr,
        charge.answered,
        charge.rng,
        lambda gen: confident_gnthreshold_check(
            m, th, check.threshold, check.sigma, check.rule.value, check.top_n, gen
        ),
    )
    return logpr, log_not, weights


def _data(fractions: Any, n_queries: Any, n_labels: Any) -> tuple[int, int, np.ndarray | None]:
    n, m = query_mode(n_queries, fractions, check_fractions, data_name="fractions")
    if m is not None:
        return n, m.shape[1], np.ascontiguousarray(m)
    if n_labels is None:
        raise ValueError("n_labels: the data-independent bound needs the number of labels")
    return n, n_labels, None


def _leaks(threshold: Any, confident_rule: str | None) -> list[str]:
    """Uncharged leaks of a run (the adaptive threshold and the printed check with it are charged now, see
    :data:`UNCHARGED_LEAKS` entries 0 and 2)."""
    return [UNCHARGED_LEAKS[1], UNCHARGED_LEAKS[3]]


@constrained(
    sigma="noise_scale",
    delta="delta",
    threshold="label_threshold",
    n_queries="count",
    n_labels="count",
    n_teachers="count",
    accounting="accounting",
)
def gnthreshold_epsilon(
    *,
    sigma: float,
    delta: float,
    threshold: Any = 0.5,
    fractions: Any = None,
    n_queries: int | None = None,
    n_labels: int | None = None,
    bound: Bound = Bound.THEOREM12,
    n_teachers: int | None = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """(ε, δ) of GNThreshold / GNThreshold Adaptive (``threshold=Threshold.ADAPTIVE``) over all queries (Muschiol
    2021 Theorems 11–14).

    ``n_queries`` + ``n_labels``: data-independent c·λ per query (the cap of
    :func:`multilabel_slope`: Theorem 12, the vote-fraction slope, or Eq. 4.8's λ/σ²);
    ``fractions``: data-dependent (Theorem 6 with q̃ of Theorem 13, inputs from
    :func:`theorem6_params`). ``accounting`` (:class:`~pate_study.privacy.options.Accounting`): the order grid and
    the conversion; Muschiol Eq. 2.10 is the basic conversion, the default.
    """
    n, n_lab, m = _data(fractions, n_queries, n_labels)
    logq = None if m is None else multilabel_logq(m, threshold, sigma)
    return gnthreshold_spent_at_logq(logq, n, n_lab, sigma, delta, threshold, bound, n_teachers, accounting)


@constrained(
    n="count",
    n_lab="count",
    sigma="noise_scale",
    delta="delta",
    threshold="label_threshold",
    n_teachers="count",
    accounting="accounting",
)
def gnthreshold_spent_at_logq(
    logq, n, n_lab, sigma, delta, threshold, bound, n_teachers, accounting: Accounting = DEFAULT_ACCOUNTING
) -> PrivacySpent:
    """:func:`gnthreshold_epsilon` from log q̃ (:func:`multilabel_logq`; None: data-independent), for callers that
    compare several bounds on the same votes and compute log q̃ once (arguments positional).

    With ``threshold="adaptive"`` the result charges the threshold's sensitivity (:func:`theorem6_params`) and
    ``details["epsilon_threshold_as_fixed"]`` keeps what the thesis's analysis gives (the threshold treated as
    fixed: not a guarantee, shown only beside the sound value)."""
    adaptive = is_adaptive(threshold)
    bound = choice("bound", bound, Bound)
    common = {"delta": delta, "accounting": accounting, "accountant": "multilabel2021", "n_queries": n}
    extra = {}
    if adaptive:
        as_fixed = _gnthreshold_curve(logq, n, n_lab, sigma, bound, n_teachers, None)
        extra["epsilon_threshold_as_fixed"] = account(
            as_fixed,
            **common,
            mechanism="gnthreshold-adaptive (threshold treated as fixed: not a guarantee)",
            data_dependent=logq is not None,
            warn=False,
        ).epsilon
    return account(
        _gnthreshold_curve(logq, n, n_lab, sigma, bound, n_teachers, threshold),
        **common,
        mechanism="gnthreshold-adaptive" if adaptive else "gnthreshold",
        data_dependent=logq is not None,
        sigma=float(sigma),
        bound=bound.value,
        n_labels=n_lab,
        threshold=Threshold.ADAPTIVE.value if adaptive else float(np.mean(threshold)),
        bound_validity=bound_validity(n_lab, bound, n_teachers, threshold),
        uncharged_leaks=_leaks(threshold, None),
        **extra,
    )


def _gnthreshold_curve(logq, n, n_lab, sigma, bound, n_teachers, threshold):
    """Composed RDP per order of GNThreshold (data-independent when ``logq`` is None)."""
    slope, cap, variant = theorem6_params(sigma, n_lab, bound, n_teachers, threshold)

    def total(grid: np.ndarray) -> np.ndarray:
        if logq is None:
            return n * cap * grid
        return total_rdp_data_dependent(logq, slope, grid, cap_slope=cap, variant=variant)

    return total


def _check_slope(check: ConfidenceCheck, n_labels: int, bound: Bound, n_teachers: int | None, threshold: Any) -> float:
    """RDP slope of the confidence check on the binary answered event: n_checked·Δ²/(2σ_c²), n_checked = 1 for
    ``ConfidenceRule.MAX`` and top_n for ``PRINTED``; Δ = 1/T for ``Bound.VOTE_FRACTION``, else 1, and Δ + 1 for
    the printed check with the adaptive threshold (the checked values m_j − th_e move with the threshold)."""
    n_checked = 1 if check.rule is ConfidenceRule.MAX else min(check.top_n, n_labels)
    sens = _label_sensitivity(bound, n_teachers)
    if check.rule is ConfidenceRule.PRINTED and is_adaptive(threshold):
        sens = adaptive_label_sensitivity(bound, n_teachers)
    return n_checked * sens**2 / (2.0 * check.sigma**2)


@constrained(
    threshold="label_threshold",
    sigma="noise_scale",
    check="confidence_check",
    delta="delta",
    n_teachers="count",
    charge="charge",
    accounting="accounting",
)
def confident_gnthreshold_epsilon(
    *,
    fractions: Any,
    threshold: Any,
    sigma: float,
    check: ConfidenceCheck,
    delta: float,
    bound: Bound = Bound.THEOREM12,
    n_teachers: int | None = None,
    charge: Charge = Charge(),
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent | ExpectedCost:
    """(ε, δ) of Confident-GNThreshold (Muschiol 2021 Definition 12, §4.2.4, §5.3; Theorems 11–14).

    ``check`` (:class:`~pate_study.privacy.options.ConfidenceCheck`): th_c, σ_c and which vote fractions are
    checked (``ConfidenceRule.PRINTED``, all top-n values m_j − th_e, is the definition as printed). The check is
    charged on every query (Theorem 6 on the binary event, see module docstring); the GNThreshold step as
    ``charge`` says (:class:`~pate_study.privacy.options.Charge`): ``Cost.REALIZED`` (the default, the guarantee
    of the run: answered queries only, from ``charge.answered`` or from re-running the check with ``charge.rng``
    as ``aggregators.confident_gnthreshold`` does) or ``Cost.EXPECTED`` (Pr[answered] · step: returned as an
    :class:`~pate_study.privacy.accounting.ExpectedCost`, expected, not a guarantee). ``accounting``: orders and
    conversion.
    """
    bound = choice("bound", bound, Bound)
    m = np.ascontiguousarray(check_fractions(fractions))
    resolve_thresholds(m, threshold)
    n, n_lab = m.shape
    slope, cap, variant = theorem6_params(sigma, n_lab, bound, n_teachers, threshold)
    slope_c = _check_slope(check, n_lab, bound, n_teachers, threshold)
    logpr, log_not, weights = confident_check_weights(m, resolve_thresholds(m, threshold), check, charge)
    logq = multilabel_logq(m, threshold, sigma)

    def curve(slope, cap, variant, slope_c):
        def total(grid: np.ndarray) -> np.ndarray:
            step1 = total_rdp_data_dependent(np.minimum(logpr, log_not), slope_c, grid)
            return step1 + total_rdp_data_dependent(logq, slope, grid, weights, cap_slope=cap, variant=variant)

        return total

    total = curve(slope, cap, variant, slope_c)
    common = {"delta": delta, "accounting": accounting, "accountant": "multilabel2021", "n_queries": n}
    extra = {}
    if is_adaptive(threshold):  # the thesis's accounting beside: threshold treated as fixed (not a guarantee)
        s_f, c_f, v_f = theorem6_params(sigma, n_lab, bound, n_teachers)
        extra["epsilon_threshold_as_fixed"] = account(
            curve(s_f, c_f, v_f, _check_slope(check, n_lab, bound, n_teachers, None)),
            **common,
            mechanism="confident-gnthreshold (threshold as fixed: not a guarantee)",
            data_dependent=True,
            warn=False,
        ).epsilon

    spent = account(
        total,
        **common,
        mechanism="confident-gnthreshold",
        data_dependent=True,
        cost=charge.cost.value,
        expected_answered=math.fsum(weights.tolist()),
        sigma=float(sigma),
        **check.as_params(),
        bound=bound.value,
        n_labels=n_lab,
        bound_validity=bound_validity(n_lab, bound, n_teachers, threshold),
        uncharged_leaks=_leaks(threshold, check.rule.value),
        **extra,
    )
    return expected_cost(spent) if charge.cost is Cost.EXPECTED else spent


@constrained(
    n_queries="count",
    n_labels="count",
    sigma="noise_scale",
    check="confidence_check",
    delta="delta",
    n_teachers="count",
    threshold="label_threshold",
    accounting="accounting",
)
def confident_gnthreshold_data_independent(
    *,
    n_queries: int,
    n_labels: int,
    sigma: float,
    check: ConfidenceCheck,
    delta: float,
    n_teachers: int | None = None,
    bound: Bound = Bound.THEOREM12,
    threshold: Any = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> PrivacySpent:
    """Data-independent (ε, δ) of Confident-GNThreshold over ``n_queries`` queries: every query pays the
    check's slope n_checked·Δ²/(2σ_c²) (n_checked = 1 for ``ConfidenceRule.MAX``, top_n for ``PRINTED``;
    Δ = 1/T for ``Bound.VOTE_FRACTION``, else 1; ``check``'s th_c is not read: the bound holds for any) and the
    GNThreshold cap of ``bound`` (:func:`multilabel_slope`), i.e. (λ, n·(c_check + c_step)·λ)-RDP by composition
    (Mironov 2017 Prop. 1), converted at δ. Needs no votes. ``threshold=Threshold.ADAPTIVE``: the step's cap is
    :func:`adaptive_threshold_slope` and the printed check's Δ is Δ + 1 (the checked values m_j − th_e move with
    the threshold), as in :func:`confident_gnthreshold_epsilon`.
    """
    bound = choice("bound", bound, Bound)
    _, cap, _ = theorem6_params(sigma, n_labels, bound, n_teachers, threshold)
    cap_c = _check_slope(check, n_labels, bound, n_teachers, threshold)
    return account(
        lambda grid, c=cap + cap_c: n_queries * c * grid,
        delta=delta,
        accounting=accounting,
        accountant="multilabel2021",
        mechanism="confident-gnthreshold",
        n_queries=n_queries,
        data_dependent=False,
        cost="all_answered",
        bound=bound.value,
        n_labels=n_labels,
    )


@constrained(
    sigma="noise_scale", n_labels="count", n_queries="count", delta="delta", n_teachers="count", accounting="accounting"
)
def gnthreshold_epsilon_at_logq(
    logq: Any,
    *,
    sigma: float,
    n_labels: int,
    n_queries: int,
    delta: float,
    bound: Bound = Bound.VOTE_FRACTION,
    n_teachers: int | None = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> np.ndarray:
    """ε of ``n_queries`` GNThreshold queries that each have the same log q̃ (fixed threshold), for every value of
    ``logq`` (any shape; log space throughout): the data-dependent RDP of one query at q̃ (Papernot et al. 2018
    Theorem 6 with Muschiol 2021 Theorem 13's q̃, the slope and cap of :func:`theorem6_params`;
    :func:`~pate_study.privacy.rdp_curves.rdp_data_dependent`), composed over the queries (Mironov 2017 Prop. 1:
    ``n_queries`` times it) and converted per order (``accounting``'s conversion; Mironov 2017 Prop. 3 for basic,
    :func:`~pate_study.privacy.accounting.epsilon_curve`), minimised over ``orders``. What Figs 5.16 / A.12 / A.13's
    markers are for a bucket of identical queries; ``logq = 0`` (q̃ = 1) is the data-independent ε."""
    lq = np.asarray(logq, dtype=np.float64)
    if np.any(np.isnan(lq)) or np.any(lq > 0):
        raise ValueError("logq: expected log q̃ <= 0 (q̃ in [0, 1]), no NaN")
    slope, cap, variant = theorem6_params(sigma, n_labels, bound, n_teachers)
    grid = resolve_rdp_orders(accounting.orders)
    per_query = rdp_data_dependent(lq.ravel(), slope, grid, cap_slope=cap, variant=variant)  # [k, n_orders]
    conversion = Accounting(conversion=accounting.conversion)  # the orders are the curves' own: grid
    eps = np.array([np.min(epsilon_curve(grid, n_queries * row, delta, accounting=conversion)) for row in per_query])
    return eps.reshape(lq.shape)
