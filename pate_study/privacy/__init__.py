"""Differential-privacy core of ``pate_study`` (numpy + scipy only; never imports torch).

Modules:

* :mod:`~pate_study.privacy.mechanisms`  Laplace / Gaussian noise, the student's local Laplace mechanism.
* :mod:`~pate_study.privacy.aggregators`  votes -> labels: LNMax, GNMax, confident / interactive GNMax,
  GNThreshold (fixed, adaptive, confident).
* :mod:`~pate_study.privacy.moments`  Papernot et al. 2017 moments accountant for LNMax.
* :mod:`~pate_study.privacy.rdp`  Papernot et al. 2018 Rényi-DP analysis (GNMax, threshold, LNMax).
* :mod:`~pate_study.privacy.multilabel`  Muschiol 2021 multi-label accounting, as printed and corrected.
* :mod:`~pate_study.privacy.smooth_sensitivity`  releasing a data-dependent ε (Papernot et al. 2018, App. B).
* :mod:`~pate_study.privacy.accounting`  order grids, RDP -> (ε, δ) conversions, :class:`PrivacySpent`.
* :mod:`~pate_study.privacy.audit`  Monte Carlo lower bounds on ε (empirical audits).

Command line: ``python -m pate_study.privacy epsilon --help``.
"""

from .accounting import OrderAtGridEdgeWarning, PrivacySpent, epsilon_curve, paper2018_orders, parse_orders
from .aggregators import (
    ABSTAIN,
    Aggregation,
    MultiLabelAggregation,
    adaptive_thresholds,
    confident_gnmax,
    confident_gnthreshold,
    gnmax,
    gnthreshold,
    gnthreshold_adaptive,
    interactive_gnmax,
    lnmax,
)
from .audit import (
    AuditResult,
    audit_gnmax,
    audit_gnthreshold,
    audit_lnmax,
    audit_local_laplace,
    audit_mechanism,
    standard_audits,
)
from .mechanisms import gaussian_noise, laplace_noise, local_laplace, local_laplace_epsilon
from .moments import logmgf_lnmax, moments_closed_form, moments_epsilon
from .multilabel import confident_gnthreshold_epsilon, gnthreshold_epsilon, multilabel_logq
from .rdp import (
    compose,
    confident_gnmax_epsilon,
    gnmax_epsilon,
    gnmax_logq,
    lnmax_logq,
    lnmax_rdp_epsilon,
    rdp_data_dependent,
    rdp_gnmax,
    rdp_pure_dp,
    rdp_threshold,
)

__all__ = [
    "ABSTAIN",
    "Aggregation",
    "AuditResult",
    "MultiLabelAggregation",
    "OrderAtGridEdgeWarning",
    "PrivacySpent",
    "adaptive_thresholds",
    "audit_mechanism",
    "audit_gnmax",
    "audit_gnthreshold",
    "audit_lnmax",
    "audit_local_laplace",
    "compose",
    "confident_gnmax",
    "confident_gnmax_epsilon",
    "confident_gnthreshold",
    "confident_gnthreshold_epsilon",
    "epsilon_curve",
    "gaussian_noise",
    "gnmax",
    "gnmax_epsilon",
    "gnmax_logq",
    "gnthreshold",
    "gnthreshold_adaptive",
    "gnthreshold_epsilon",
    "interactive_gnmax",
    "laplace_noise",
    "lnmax",
    "lnmax_logq",
    "lnmax_rdp_epsilon",
    "local_laplace",
    "local_laplace_epsilon",
    "logmgf_lnmax",
    "moments_closed_form",
    "moments_epsilon",
    "multilabel_logq",
    "paper2018_orders",
    "parse_orders",
    "rdp_data_dependent",
    "rdp_gnmax",
    "rdp_pure_dp",
    "rdp_threshold",
    "standard_audits",
]
