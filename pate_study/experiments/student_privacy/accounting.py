"""Privacy numbers of the student-privacy studies, all from the accountants of :mod:`pate_study.privacy`.

* the teachers' ε per student, data-dependent and data-independent (:func:`data_dependent_epsilons`,
  :func:`data_independent_epsilons`);
* why the data-dependent bound cannot help at a given scale (:func:`consensus_summary`: Papernot 2017
  Lemma 4's q against Theorem 3's condition);
* how much signal curator B's noise leaves (:func:`noise_signal_table`);
* the two explanations of "ε_dep > ε*_ind" (:func:`epsilon_gap_explanations`) and the (δ, T) settings that
  can produce Sosa's published teacher ε (:func:`sosa_setting_hypotheses`).
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from pate_study.experiments.student_privacy.config import NO_NOISE, noise_keyword
from pate_study.privacy.accounting import OrderAtGridEdgeWarning
from pate_study.privacy.mechanisms import local_laplace_epsilon, local_laplace_scale
from pate_study.privacy.moments import lnmax_q, moments_closed_form, moments_epsilon, theorem3_q_limit
from pate_study.privacy.options import Accounting, Conversion
from pate_study.privacy.rdp import lnmax_rdp_epsilon


def data_dependent_epsilons(counts: np.ndarray, *, gamma: float, delta: float, max_integer_order: int = 8) -> dict:
    """ε of one student's queries from the teachers' vote counts (before aggregator noise), four ways:

    * ``eps_moments_int``: Papernot 2017 moments accountant, λ = 1..L (the sources' tool, Thm. 3 with the
      reference code's q < 0.5 condition);
    * ``eps_moments_int_theorem_q``: the same with Theorem 3's own condition q < (e^{2γ}−1)/(e^{4γ}−1);
    * ``eps_moments_cont``: the reference-code bound minimised over continuous λ;
    * ``eps_rdp``: Papernot 2018 RDP analysis of LNMax (pure ε = 2γ, data-dependent), improved conversion.
    """
    with warnings.catch_warnings():  # edge optima are expected on the 1..8 grid; recorded as the order
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        integer = moments_epsilon(
            gamma=gamma,
            delta=delta,
            votes=counts,
            accounting=Accounting(int(max_integer_order)),
            q_condition="reference_code",
        )
        theorem = moments_epsilon(
            gamma=gamma, delta=delta, votes=counts, accounting=Accounting(int(max_integer_order)), q_condition="theorem"
        )
        continuous = moments_epsilon(
            gamma=gamma, delta=delta, votes=counts, accounting=Accounting("continuous"), q_condition="reference_code"
        )
        renyi = lnmax_rdp_epsilon(
            gamma=gamma, delta=delta, votes=counts, accounting=Accounting("paper2018", Conversion.IMPROVED)
        )
    return {
        "eps_moments_int": integer.epsilon,
        "order_moments_int": integer.order,
        "eps_moments_int_theorem_q": theorem.epsilon,
        "eps_moments_cont": continuous.epsilon,
        "order_moments_cont": continuous.order,
        "eps_rdp": renyi.epsilon,
        "order_rdp": renyi.order,
    }


def data_independent_epsilons(*, n_queries: int, gamma: float, delta: float, max_integer_order: int = 8) -> dict:
    """The data-independent counterparts of :func:`data_dependent_epsilons` for T = ``n_queries``
    (Papernot 2017 Thm. 2 on λ = 1..L and its continuous minimum, the closed form of Visca 2021 §4.2.1;
    the 2018 RDP bound; basic composition 2γT)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        integer = moments_epsilon(
            gamma=gamma, delta=delta, n_queries=n_queries, accounting=Accounting(int(max_integer_order))
        )
        renyi = lnmax_rdp_epsilon(
            gamma=gamma, delta=delta, n_queries=n_queries, accounting=Accounting("paper2018", Conversion.IMPROVED)
        )
    eps_cont, lam_cont = moments_closed_form(n_queries, gamma, delta)
    return {
        "eps_moments_int": integer.epsilon,
        "order_moments_int": integer.order,
        "eps_moments_cont": eps_cont,
        "order_moments_cont": lam_cont,
        "eps_rdp": renyi.epsilon,
        "order_rdp": renyi.order,
        "basic_composition": 2 * gamma * n_queries,
    }


def consensus_summary(counts: np.ndarray, gamma: float) -> dict:
    """How far the teachers' consensus is from helping the data-dependent bound (Papernot 2017 Thm. 3).

    q is Lemma 4's bound on Pr[LNMax ≠ plurality], capped at 1 − 1/m; the data-dependent moment is used only
    where q < (e^{2γ}−1)/(e^{4γ}−1) (≈ 0.475 at γ = 0.05; the reference code uses q < 0.5). With q at the cap
    for every query, ε_dep equals the data-independent bound *by construction*.
    """
    q = lnmax_q(counts, gamma)
    cap = 1.0 - 1.0 / counts.shape[1]
    top = counts.max(1)
    return {
        "median_q": float(np.median(q)),
        "share_q_at_cap": float(np.mean(q >= cap - 1e-12)),
        "share_q_below_theorem_limit": float(np.mean(q < theorem3_q_limit(gamma))),
        "share_q_below_half": float(np.mean(q < 0.5)),
        "mean_top_vote_share": float(np.mean(top / counts.sum(1))),
    }


def row_l2_norms(X: Any) -> np.ndarray:
    """‖x‖₂ of every row (dense or sparse)."""
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1)


def row_nonzeros(X: Any) -> np.ndarray:
    """Number of non-zero coordinates of every row (dense or sparse)."""
    if sp.issparse(X):
        return np.diff(sp.csr_matrix(X).indptr)
    return np.count_nonzero(np.asarray(X), axis=1)


def noise_signal_table(levels: Sequence[float | None], parametrisation: str, X_unit_l1: Any) -> pd.DataFrame:
    """Per noise level: how much of a unit-l1 row survives curator B's Lap(b)^d noise (MAKE §3.2).

    * ``noise_std_over_mean_coordinate``: √2·b over the mean coordinate 1/d (overstates the damage for sparse
      rows, whose mass sits on a few coordinates);
    * ``linear_readout_snr_bound``: for any linear read-out w·x̃ of x̃ = x + noise, signal |w·x| ≤ ‖w‖₂‖x‖₂
      (Cauchy–Schwarz) and noise std √2·b‖w‖₂, so its signal-to-noise ratio is at most ‖x‖₂/(√2·b), given at
      the median row norm of ``X_unit_l1`` (the best any linear model can do on one privatised row);
    * ``student_epsilon``: the local ε = 2/b of curator B.
    """
    d = X_unit_l1.shape[1]
    norm = float(np.median(row_l2_norms(X_unit_l1)))
    nonzeros = float(np.median(row_nonzeros(X_unit_l1)))
    rows = []
    for level in levels:
        row = {
            "level": NO_NOISE if level is None else f"{level:g}",
            "mean_coordinate": 1 / d,
            "median_l2_norm": norm,
            "median_nonzeros": nonzeros,
        }
        if level is None:
            rows.append(
                {
                    **row,
                    "scale_b": 0.0,
                    "noise_std": 0.0,
                    "noise_std_over_mean_coordinate": 0.0,
                    "linear_readout_snr_bound": float("inf"),
                    "student_epsilon": float("inf"),
                }
            )
            continue
        b = local_laplace_scale(**noise_keyword(level, parametrisation))
        rows.append(
            {
                **row,
                "scale_b": b,
                "noise_std": np.sqrt(2) * b,
                "noise_std_over_mean_coordinate": np.sqrt(2) * b * d,
                "linear_readout_snr_bound": norm / (np.sqrt(2) * b),
                "student_epsilon": local_laplace_epsilon(**noise_keyword(level, parametrisation)),
            }
        )
    return pd.DataFrame(rows)


def epsilon_gap_explanations(
    *, n_queries: int, gamma: float, delta: float, extra_queries: int = 0, max_integer_order: int = 8
) -> dict:
    """Two ways a published ε_dep can exceed the published ε*_ind (continuous λ, T = ``n_queries``):

    1. *grid*: ε_dep was minimised over λ = 1..L, whose data-independent minimum lies above the continuous one;
    2. *queries*: ε_dep was charged for ``n_queries + extra_queries`` (e.g. threshold rows labelled by the
       teachers too) while ε*_ind was computed for ``n_queries``.

    Returns the four data-independent bounds (both grids × both T) from the moments accountant.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        out = {}
        for name, T in (("charged", n_queries), ("with_extra", n_queries + extra_queries)):
            out[f"continuous_T_{name}"] = moments_epsilon(
                gamma=gamma, delta=delta, n_queries=T, accounting=Accounting("continuous")
            ).epsilon
            out[f"integer_T_{name}"] = moments_epsilon(
                gamma=gamma, delta=delta, n_queries=T, accounting=Accounting(int(max_integer_order))
            ).epsilon
    out.update(n_queries=int(n_queries), n_queries_with_extra=int(n_queries + extra_queries))
    return out


def sosa_setting_hypotheses(
    published: Iterable[float],
    *,
    deltas: Sequence[float],
    n_queries: Sequence[int],
    gamma: float,
    max_integer_order: int = 8,
    max_integer_orders: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Which (δ, T, order grid) can produce which of Sosa's published teacher ε (hypotheses, not findings).

    With moments λ = 1..L every data-dependent ε lies in [ln(1/δ)/L, ε_ind(T)]: the floor because the summed
    log-moments are ≥ 0 (Eq. 4.9 with Σα = 0 at λ = L), the ceiling because each query's moment is capped at
    the data-independent one (Thm. 2). A published value outside the interval cannot come from that setting.
    The sources state λ = 1..8; ``max_integer_orders`` (default: ``max_integer_order`` only) adds wider grids,
    which lower the floor (ln(1/δ)/L) and leave the ceiling where its optimum lies inside the grid.
    One row per (L, δ, T): floor, ceiling, and the published values inside / outside.
    """
    values = sorted({round(float(v), 4) for v in published})
    rows = []
    for L in (max_integer_order,) if max_integer_orders is None else tuple(max_integer_orders):
        for delta in deltas:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
                floor = moments_epsilon(
                    gamma=gamma, delta=delta, votes=np.array([[10**6, 0]]), accounting=Accounting([float(L)])
                ).epsilon  # one unanimous query: Σα ≈ 0
            for T in n_queries:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
                    ceiling = moments_epsilon(
                        gamma=gamma, delta=delta, n_queries=int(T), accounting=Accounting(int(L))
                    ).epsilon
                inside = [v for v in values if floor - 5e-3 <= v <= ceiling + 5e-3]  # published to 2 decimals
                rows.append(
                    {
                        "max_order": int(L),
                        "delta": delta,
                        "n_queries": int(T),
                        "floor": floor,
                        "ceiling": ceiling,
                        "n_fit": len(inside),
                        "n_published": len(values),
                        "fit": ", ".join(f"{v:g}" for v in inside),
                        "cannot_fit": ", ".join(f"{v:g}" for v in values if v not in inside),
                    }
                )
    return pd.DataFrame(rows)
