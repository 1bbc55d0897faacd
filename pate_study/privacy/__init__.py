"""Differential-privacy core of ``pate_study`` (numpy + scipy only; never imports torch).

Modules:

* :mod:`~pate_study.privacy.mechanisms`  Laplace / Gaussian noise, the student's local Laplace mechanism, the
  exponential mechanism and k-ary randomized response.
* :mod:`~pate_study.privacy.aggregators`  votes -> labels: LNMax, GNMax, confident / interactive GNMax,
  GNThreshold (fixed, adaptive, confident).
* :mod:`~pate_study.privacy.moments`  Papernot et al. 2017 moments accountant for LNMax.
* :mod:`~pate_study.privacy.rdp`  Papernot et al. 2018 Rényi-DP analysis (GNMax, threshold, LNMax).
* :mod:`~pate_study.privacy.multilabel`  Muschiol 2021 multi-label accounting, as printed and corrected.
* :mod:`~pate_study.privacy.multiwinner`  later multi-label PATE (Dziedzic et al. 2023): Binary, τ and powerset voting.
* :mod:`~pate_study.privacy.topk_vote`  the top-k vote release (each teacher votes for its k most probable
  labels; ℓ2 sensitivity √(2k)/T), its accountant, and top-k or calibrated votes for the mechanisms above.
* :mod:`~pate_study.privacy.rdp_curves`  the shared RDP math: q bounds, Theorem 6, composed (deterministic) totals.
* :mod:`~pate_study.privacy.smooth_sensitivity`  releasing a data-dependent ε (Papernot et al. 2018, App. B).
* :mod:`~pate_study.privacy.accounting`  order grids, RDP -> (ε, δ) conversions, :class:`PrivacySpent`, and
  :func:`~pate_study.privacy.accounting.account`, the one path from a composed curve to a result.
* :mod:`~pate_study.privacy.selection`  the cost of publishing the best of several private runs: composition of
  fixed candidates, and Papernot & Steinke 2022's random-stopping bounds (Theorems 2 and 6).
* :mod:`~pate_study.privacy.audit`  Monte Carlo lower bounds on ε (empirical audits).
* :mod:`~pate_study.privacy.options`  the option objects; :class:`~pate_study.privacy.options.Accounting` (the order
  grid and the conversion) is the one way every accountant takes them (``accounting=``).

Every public function declares its parameters' constraints beside its definition and checks them once, where the
call enters the library (:mod:`~pate_study.privacy._boundary`).

Command line: ``python -m pate_study.privacy epsilon --help``.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> submodule that defines it. Submodules are imported on first access (PEP 562), so that
#: ``import pate_study.privacy`` and ``python -m pate_study.privacy epsilon --help`` load numpy only,
#: not scipy.stats (about 2 s on a shared machine).
_EXPORTS = {
    "_validation": ("ThresholdRangeWarning",),
    "accounting": (
        "ExpectedCost",
        "OrderAtGridEdgeWarning",
        "PrivacySpent",
        "account",
        "epsilon_curve",
        "paper2018_orders",
        "parse_orders",
    ),
    "aggregators": (
        "ABSTAIN",
        "Aggregation",
        "MultiLabelAggregation",
        "adaptive_thresholds",
        "confident_gnmax",
        "confident_gnthreshold",
        "gnmax",
        "gnthreshold",
        "gnthreshold_adaptive",
        "interactive_gnmax",
        "lnmax",
    ),
    "audit": (
        "AuditResult",
        "audit_exponential_mechanism",
        "audit_gnmax",
        "audit_gnthreshold",
        "audit_lnmax",
        "audit_local_laplace",
        "audit_mechanism",
        "audit_randomized_response",
        "audit_topk",
        "standard_audits",
    ),
    "mechanisms": (
        "basic_composition",
        "exponential_mechanism",
        "exponential_mechanism_log_probs",
        "finite_mechanism_epsilon",
        "gaussian_mechanism",
        "gaussian_noise",
        "laplace_epsilon",
        "laplace_mechanism",
        "laplace_noise",
        "local_laplace",
        "local_laplace_epsilon",
        "randomized_response",
        "randomized_response_log_probs",
    ),
    "moments": ("MOMENTS_ACCOUNTING", "logmgf_lnmax", "moments_closed_form", "moments_epsilon"),
    "multilabel": (
        "confident_gnthreshold_epsilon",
        "gnthreshold_epsilon",
        "multilabel_logq",
    ),
    "options": ("Accounting", "Conversion", "DEFAULT_ACCOUNTING"),
    "multiwinner": (
        "binary_pate",
        "binary_pate_epsilon",
        "tau_pate",
        "tau_pate_epsilon",
        "powerset_pate",
        "powerset_pate_epsilon",
        "clip_votes",
    ),
    "selection": (
        "DataIndependentRdp",
        "compose_candidates",
        "poisson_rdp",
        "random_stopping_spent",
        "selection_spent",
        "truncated_negative_binomial_rdp",
    ),
    "topk_vote": (
        "binary_topk_epsilon",
        "calibrated_votes",
        "confident_topk_epsilon",
        "confident_topk_release",
        "gaussian_composition_epsilon",
        "topk_epsilon",
        "topk_exact_epsilon",
        "topk_fractions",
        "topk_release",
        "topk_votes",
    ),
    "rdp": (
        "compose",
        "confident_gnmax_epsilon",
        "gnmax_epsilon",
        "gnmax_logq",
        "lnmax_logq",
        "lnmax_rdp_epsilon",
        "rdp_data_dependent",
        "rdp_gnmax",
        "rdp_pure_dp",
        "rdp_threshold",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first access (PEP 562)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = sorted(_MODULE_OF)
