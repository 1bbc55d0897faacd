"""Muschiol 2021's multi-label bounds examined on our votes (notebook 05's forensics, not an accountant of the
package): every bound of :data:`pate_study.privacy.multilabel.BOUNDS` side by side on the same votes, each beside its
data-independent value (:func:`multilabel_bounds`); the fit of Table 5.4's printed data-independent ε, which no
formula the thesis states gives (:func:`table54_fit`); and the q̃ at which the data-dependent analysis starts to pay
(:func:`break_even_q`). The accountants they call are in :mod:`pate_study.privacy.multilabel`."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.optimize import brentq

from pate_study.privacy._validation import check_fractions, check_n_queries, check_noise_scale, check_positive
from pate_study.privacy.accounting import ExpectedCost, PrivacySpent, resolve_rdp_orders
from pate_study.privacy.multilabel import (
    BOUNDS,
    confident_gnthreshold_data_independent,
    confident_gnthreshold_epsilon,
    gnthreshold_epsilon_at_logq,
    gnthreshold_spent_at_logq,
    multilabel_logq,
    theorem6_possible,
)
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting, Bound, Charge, ConfidenceCheck, charge_of, choice


@dataclasses.dataclass(frozen=True, eq=False)
class BoundComparison:
    """One multi-label bound on one set of votes: data-dependent and data-independent results side by side.

    Attributes:
        bound: one of :data:`~pate_study.privacy.multilabel.BOUNDS`.
        data_dependent: :class:`~pate_study.privacy.accounting.PrivacySpent` on the votes (Theorem 6 with q̃ of Theorem
        13); an
            :class:`~pate_study.privacy.accounting.ExpectedCost` (not a guarantee) when charged with
            ``cost="expected"``.
        data_independent: :class:`~pate_study.privacy.accounting.PrivacySpent` for the same number of queries (c·λ per
        query). theorem6_possible: whether any input could get below the data-independent bound
            (:func:`~pate_study.privacy.multilabel.theorem6_possible`); False means both results are equal by
            construction.
        uncharged_leaks: what the analysis does not charge (:data:`~pate_study.privacy.multilabel.UNCHARGED_LEAKS`).
    """

    bound: str
    data_dependent: PrivacySpent | ExpectedCost
    data_independent: PrivacySpent
    theorem6_possible: bool
    uncharged_leaks: tuple[str, ...]

    def to_dict(self) -> dict:
        """Flat JSON-friendly row (ε, order and per-query RDP at order 2 of both results)."""
        dd, di = self.data_dependent, self.data_independent
        head = (
            {"expected_epsilon": dd.expected_epsilon, "note": dd.note}
            if isinstance(dd, ExpectedCost)
            else {"epsilon": dd.epsilon}
        )
        row = {
            "bound": self.bound,
            **head,
            "order": dd.order,
            "epsilon_data_independent": di.epsilon,
            "order_data_independent": di.order,
            "theorem6_possible": self.theorem6_possible,
            "n_queries": dd.n_queries,
            "uncharged_leaks": list(self.uncharged_leaks),
        }
        if np.any(np.isclose(dd.orders, 2.0, rtol=0, atol=1e-9)):
            row["rdp_per_query_at_order2"] = dd.at_order(2.0)[1] / dd.n_queries
            row["rdp_per_query_at_order2_data_independent"] = di.at_order(2.0)[1] / di.n_queries
        if dd.cost is not None:
            row["cost"] = dd.cost
            row["expected_answered"] = dd.expected_answered
        return row


def multilabel_bounds(
    *,
    fractions: Any,
    threshold: Any,
    sigma: float,
    delta: float,
    n_teachers: int,
    bounds: tuple[Bound, ...] = BOUNDS,
    check: ConfidenceCheck | None = None,
    charge: Charge = Charge(),
    accounting: Accounting = DEFAULT_ACCOUNTING,
) -> list[BoundComparison]:
    """Every bound of :data:`~pate_study.privacy.multilabel.BOUNDS` (:class:`~pate_study.privacy.options.Bound`) on the
    same votes (Muschiol 2021 Eq. 4.8 as printed and corrected, Theorem 12, per-label vote-fraction sensitivity, the
    GNMax slope), each beside its data-independent value.

    GNThreshold when ``check`` is None, else Confident-GNThreshold with that
    :class:`~pate_study.privacy.options.ConfidenceCheck` and ``charge`` as in
    :func:`~pate_study.privacy.multilabel.confident_gnthreshold_epsilon` (with ``Cost.REALIZED``, the default, give
    ``charge.answered`` so that every bound charges the same run; ``Cost.EXPECTED`` puts an expected cost, not a
    guarantee, in ``data_dependent``). log q̃ (Theorem 13) is computed once and shared by the bounds. The
    data-independent value charges every query the cap c·λ of the bound (and, with a check, the check's data-independent
    slope too). Uncharged leaks are listed per result.
    """
    charge = charge_of(charge)
    m = np.ascontiguousarray(check_fractions(fractions))
    n, n_lab = m.shape
    t = check_n_queries(n_teachers, name="n_teachers")
    bounds = tuple(choice("bounds", b, Bound) for b in bounds)
    confident = check is not None
    out = []
    logq = None if confident else multilabel_logq(m, threshold, sigma)  # once, shared by the bounds
    checked = dict(threshold=threshold, sigma=sigma, check=check, delta=delta, n_teachers=t, accounting=accounting)
    for b in bounds:
        if confident:
            dd = confident_gnthreshold_epsilon(fractions=m, bound=b, charge=charge, **checked)
            di = confident_gnthreshold_data_independent(n_queries=n, n_labels=n_lab, bound=b, **checked)
        else:
            dd = gnthreshold_spent_at_logq(logq, n, n_lab, sigma, delta, threshold, b, t, accounting)
            di = gnthreshold_spent_at_logq(None, n, n_lab, sigma, delta, threshold, b, t, accounting)
        out.append(
            BoundComparison(
                b.value,
                dd,
                di,
                theorem6_possible(sigma, n_lab, b, t, threshold=threshold),
                tuple(dd.details["uncharged_leaks"]),
            )
        )
    return out


#: Muschiol 2021 Table 5.4, data-independent ε of the rows without a confidence check (n queries -> ε).
TABLE54_DATA_INDEPENDENT = {2000: 418.4, 5000: 1018.4}


def table54_fit(
    *,
    n_queries: tuple[int, ...] = tuple(TABLE54_DATA_INDEPENDENT),
    printed: tuple[float, ...] = tuple(TABLE54_DATA_INDEPENDENT.values()),
    sigma: float = 0.3,
    n_labels: int = 153,
    n_teachers: int = 50,
    delta: float = 1e-8,
    order: float = 2.0,
    rate: float = 0.2,
    decimals: int = 1,
    orders: Any = "paper2018",
) -> dict:
    """The fit of Table 5.4's data-independent ε, and what each formula the thesis states gives instead.

    The printed values (418.4, 1018.4 for N = 2000, 5000; σ_e = 0.3, δ = 10⁻⁸) satisfy
    ε = r·N + ln(1/δ)/(λ − 1) at λ = 2 with r = ``rate`` = 0.2 per query (the basic conversion,
    Muschiol Eq. 2.10, at the grid's first order), to the printed ``decimals``; the
    least-squares r through the printed values is returned too. The per-query RDP at λ = 2 of each stated
    formula, with n = 153 labels and T = 50 teachers:

    * ``"theorem12"``: nλ/(2σ²) (Theorem 12);
    * ``"eq4_8"``: λ/σ² (the cap printed in Eq. 4.8, the multi-class GNMax bound);
    * ``"gaussian_unit"``: λ/(2σ²) (the thesis's Gaussian mechanism, Theorem 6 of §2, with GS = 1: one label);
    * ``"vote_fraction"``: nλ/(2T²σ²) (per-label sensitivity 1/T of vote fractions; the package's correct
      slope for σ in vote-fraction units, not stated in the thesis).

    Returns ``{"fit": [...], "formulas": [...], "rdp_per_query_fit": r, ...}``: per N the printed
    value, the fit, their difference and whether the fit rounds to the printed value; per (N, formula) the per-query RDP
    at λ, ε at λ, the optimal ε over ``orders`` (basic conversion) and the σ that would make the formula give the
    fitted per-query RDP.
    """
    if len(n_queries) != len(printed):
        raise ValueError("printed: expected one printed value per entry of n_queries")
    sigma = check_noise_scale("sigma", sigma)
    k = check_n_queries(n_labels, name="n_labels")
    t = check_n_queries(n_teachers, name="n_teachers")
    log_inv_delta = -math.log(check_positive("delta", delta))
    lam = float(order)
    if not lam > 1:
        raise ValueError(f"order: expected an order > 1, got {order}")
    ns = [check_n_queries(x) for x in n_queries]
    rate = check_positive("rate", rate)
    conversion_term = log_inv_delta / (lam - 1.0)
    # least-squares per-query RDP at λ through the printed values, the conversion term held fixed
    rate_ls = math.fsum((p - conversion_term) * x for x, p in zip(ns, printed)) / math.fsum(x * x for x in ns)
    fit = []
    for x, p in zip(ns, printed):
        value = rate * x + conversion_term
        fit.append(
            {
                "n_queries": x,
                "printed": p,
                "fit": value,
                "difference": p - value,
                "fit_rounds_to_printed": round(value, decimals) == round(p, decimals),
            }
        )
    slopes = {  # per-query RDP = slope · λ
        "theorem12": k / (2.0 * sigma**2),
        "eq4_8": 1.0 / sigma**2,
        "gaussian_unit": 1.0 / (2.0 * sigma**2),
        "vote_fraction": k / (2.0 * t**2 * sigma**2),
    }
    grid = resolve_rdp_orders(orders)
    formulas = []
    for x in ns:
        for name, s in slopes.items():
            best = float(np.min(x * s * grid + log_inv_delta / (grid - 1.0)))
            formulas.append(
                {
                    "n_queries": x,
                    "formula": name,
                    "rdp_per_query_at_order": s * lam,
                    "epsilon_at_order": x * s * lam + log_inv_delta / (lam - 1.0),
                    "epsilon_best_order": best,
                    "sigma_matching_fit": sigma * math.sqrt(s * lam / rate),
                }
            )
    return {
        "fit": fit,
        "formulas": formulas,
        "rdp_per_query_fit": rate,
        "rdp_per_query_least_squares": rate_ls,
        "order": lam,
        "conversion_term": conversion_term,
    }


def break_even_q(
    ratio: float,
    *,
    sigma: float,
    n_labels: int,
    n_queries: int,
    delta: float,
    bound: Bound = Bound.VOTE_FRACTION,
    n_teachers: int | None = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
    logq_min: float = -60.0,
) -> float:
    """The largest q̃ at which the data-dependent ε of ``n_queries`` identical queries
    (:func:`~pate_study.privacy.multilabel.gnthreshold_epsilon_at_logq`) is at most ``ratio`` times the data-independent
    one (q̃ = 1): the break-even of the data-dependent analysis (``ratio`` just below 1: where it first pays; 0.5: where
    it halves the cost). ε is non-decreasing in q̃ (Papernot et al. 2018 Theorem 6's bound increases with q where it
    applies, and is capped by the data-independent slope), so the answer is found by bisection on log q̃ in
    [``logq_min``, 0] (``scipy.optimize.brentq``, to 1e-10 in log q̃). NaN when even q̃ = exp(``logq_min``) does
    not reach the ratio."""
    if not 0.0 < ratio < 1.0:
        raise ValueError(f"ratio={ratio!r}: expected a share of the data-independent ε in (0, 1)")
    kw = dict(
        sigma=sigma,
        n_labels=n_labels,
        n_queries=n_queries,
        delta=delta,
        bound=bound,
        n_teachers=n_teachers,
        accounting=accounting,
    )
    target = ratio * float(gnthreshold_epsilon_at_logq(0.0, **kw))

    def gap(lq: float) -> float:
        return float(gnthreshold_epsilon_at_logq(lq, **kw)) - target

    if gap(logq_min) > 0:
        return math.nan
    return float(math.exp(brentq(gap, logq_min, 0.0, xtol=1e-10)))
