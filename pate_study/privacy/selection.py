"""The privacy cost of choosing the best of several private runs (hyperparameter selection), accounted.

Publishing the best of several private releases computed on the same data releases information about all of
them: the choice is a function of every candidate. Two honest accountings:

* **Composition** (Mironov 2017, "Rényi differential privacy", Proposition 1; post-processing, Proposition 9):
  when the candidates are a fixed, finite set chosen before looking at their results and the published one is the
  best by a score computed from the candidates' outputs (and public data), the selection is post-processing of
  the joint release of all candidates, whose RDP at each order is the sum of the candidates' RDP
  (:func:`compose_candidates`, :func:`selection_spent`). For K identical runs that is K times one run.
* **Random stopping** (Papernot & Steinke, "Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022,
  arXiv:2110.03620): run one private algorithm Q (each run may draw its hyperparameters at random, independently)
  a random number K of times and output only the best run. When K follows a truncated negative binomial
  distribution D_{η,γ} (Theorem 2; η = 1 is the geometric, η = 0 the logarithmic distribution) or a Poisson
  distribution (Theorem 6), the RDP of the whole procedure is one run's RDP plus a small overhead, not K times it
  (:func:`truncated_negative_binomial_rdp`, :func:`poisson_rdp`). These bounds hold only for that mechanism (the
  number of runs random and drawn as stated, independent of the data), never for a fixed set of candidates.

Theorem 2 (Papernot & Steinke 2022): if Q is (λ, ε)-RDP and (λ̂, ε̂)-RDP with λ > 1, λ̂ ≥ 1, and
K ~ D_{η,γ} (η > −1, 0 < γ < 1), with P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · Π_{l=0}^{k−1} (l + η)/(l + 1) for
k ≥ 1, the best-of-K algorithm is (λ, ε′)-RDP with

    ε′ = ε + (1 + η)(1 − 1/λ̂) ε̂ + (1 + η) log(1/γ)/λ̂ + log(E[K])/(λ − 1),

E[K] = η(1 − γ)/(γ(1 − γ^η)) for η ≠ 0 and (1/γ − 1)/log(1/γ) for η = 0. λ̂ is free: the bound here takes the
best λ̂ on the order grid (the same minimum for every λ).

Theorem 6 (Papernot & Steinke 2022): if Q is (λ, ε)-RDP and (ε̂, δ̂)-DP with e^ε̂ ≤ 1 + 1/(λ − 1), and
K ~ Poisson(μ) (K = 0 outputs nothing), the best-of-K algorithm is (λ, ε′)-RDP with ε′ = ε + μ δ̂ + log(μ)/(λ − 1).
Here ε̂ = log(1 + 1/(λ − 1)) and δ̂ is the δ of Q at ε̂ from its RDP curve (Canonne, Kamath & Steinke 2020,
Proposition 12, the conversion of :func:`~pate_study.privacy.accounting.epsilon_curve` ``"improved"`` solved for
δ, minimised over the grid). μ ≥ 1 is required (as dp-accounting's ``_compute_rdp_repeat_and_select`` does): for
μ < 1 the term log(μ)/(λ − 1) pulls the bound below one run's RDP and, for small μ, below zero, which no Rényi
divergence is, so the bound cannot hold there.

**What the theorems assume of Q, and what this module requires.** Both theorems take Q's RDP guarantee as a
guarantee for *every* pair of neighbouring datasets, in both directions: D_λ(Q(D) ‖ Q(D′)) ≤ ε(λ) for all
neighbours D, D′ (either order), the definition of (λ, ε)-RDP (Mironov 2017, Definition 4) the theorems assume.
A data-dependent curve (Papernot et al. 2018, Theorem 6 on the votes at hand) bounds the divergence for one dataset
against its neighbours in one direction; fed to these bounds it can give an ε below the exact divergence of the
best-of-K mechanism (on two-outcome mechanisms, as low as a tenth of it: ``tests/privacy/test_selection.py``).
So the random-stopping functions take Q's curve as a :class:`DataIndependentRdp`, an object that says the curve
holds for every neighbouring pair both ways (and why, in ``basis``): build one from a data-independent
:class:`~pate_study.privacy.accounting.PrivacySpent` (:meth:`DataIndependentRdp.from_spent`, which refuses a
data-dependent result or a realised cost) or directly from a curve whose worst case the caller has derived
(``DataIndependentRdp(orders, rdp, mechanism=..., basis=...)``). :func:`random_stopping_spent` also accepts a
data-independent ``PrivacySpent`` as is (it goes through :meth:`~DataIndependentRdp.from_spent`), e.g. the
top-k vote release's ``topk_epsilon(k=..., n_teachers=..., sigma=..., n_queries=..., n_labels=..., delta=...)``.

Both results are finally made monotone in the order (the Rényi divergence is non-decreasing in its order, van Erven
& Harremoës 2014, Theorem 3): the bound at λ is the smallest bound at any order ≥ λ on the grid.
Everything is computed in log space and vectorised over orders.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Sequence

import numpy as np
from scipy import optimize, special

from pate_study.privacy._boundary import constrained
from pate_study.privacy._validation import check_choice, check_orders
from pate_study.privacy.accounting import PrivacySpent, account, resolve_rdp_orders
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting

__all__ = [
    "DISTRIBUTIONS",
    "DataIndependentRdp",
    "compose_candidates",
    "selection_spent",
    "truncated_negative_binomial_pmf",
    "truncated_negative_binomial_mean",
    "truncated_negative_binomial_gamma",
    "truncated_negative_binomial_pgf",
    "truncated_negative_binomial_rdp",
    "poisson_rdp",
    "rdp_delta",
    "random_stopping_spent",
]

#: the distributions of the number of runs that :func:`random_stopping_spent` accepts.
DISTRIBUTIONS = ("truncated_negative_binomial", "poisson")
#: the parameters of each distribution (a parameter of the other one is refused, never ignored)
DISTRIBUTION_PARAMETERS = {"truncated_negative_binomial": ("eta", "gamma", "mean"), "poisson": ("mu",)}


# ---------------------------------------------------------------------------------------------- input checks


def _number(name: str, value: Any) -> float:
    """``value`` as a float: a real number (not a bool, a string or None), NaN and infinities passed on."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise ValueError(f"{name}: expected a number, got {type(value).__name__} {value!r}"[:200])
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"{name}: expected a number within the float range, got an integer of {len(str(value))} digits"
        ) from None


def _float_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array: real numbers only (no strings, None, complex or nested objects)."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:  # ragged nesting, ints past int64
        raise ValueError(f"{name}: expected an array of numbers ({exc})"[:200]) from None
    if raw.dtype == object:
        try:
            raw = raw.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{name}: expected an array of numbers, got entries that are not numbers") from None
    if raw.dtype == bool or not np.issubdtype(raw.dtype, np.number) or np.issubdtype(raw.dtype, np.complexfloating):
        raise ValueError(f"{name}: expected an array of real numbers, got dtype {raw.dtype}")
    return raw.astype(np.float64)


def _check_curves(orders: Any, rdp: Any) -> tuple[np.ndarray, np.ndarray]:
    """Orders > 1 (strictly increasing) and one RDP curve ``[n_orders]``, non-negative (inf allowed), no NaN."""
    grid = check_orders(_float_array("orders", orders), 1.0)
    values = _float_array("rdp", rdp)
    if values.shape != grid.shape:
        raise ValueError(f"rdp: expected one value per order (shape {grid.shape}), got shape {values.shape}")
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError("rdp: expected non-negative RDP values (no NaN)")
    return grid, values


def _monotone(rdp: np.ndarray) -> np.ndarray:
    """Smallest value at this or any larger order (RDP is non-decreasing in the order)."""
    return np.minimum.accumulate(rdp[..., ::-1], axis=-1)[..., ::-1]


# ------------------------------------------------------------------------------- the guarantee of one run


@dataclasses.dataclass(frozen=True, eq=False)
class DataIndependentRdp:
    """An RDP curve of one run Q that holds for every pair of neighbouring datasets, in both directions.

    ``rdp[i] ≥ D_α(Q(D) ‖ Q(D′))`` at ``α = orders[i]`` for all neighbours D, D′, either order: the (α, ε)-RDP of
    Mironov 2017, Definition 4, which Papernot & Steinke 2022's Theorems 2 and 6 assume of Q (module docstring). A
    data-dependent curve is not one (it holds for the dataset at hand, in one direction).

    Attributes:
        orders: the order grid (each > 1, strictly increasing).
        rdp: Q's RDP at each order (non-negative; inf allowed: no finite bound at that order).
        mechanism: what Q is (shown in the result's ``mechanism``).
        basis: why the curve holds for every neighbouring pair both ways, e.g. "Gaussian mechanism, l2 sensitivity
            sqrt(2k)/T, Mironov 2017 Prop. 7, composed over n queries" (stored in the result's details).
        n_queries: the queries one run answers (for the result's ``n_queries``).
    """

    orders: np.ndarray
    rdp: np.ndarray
    mechanism: str
    basis: str
    n_queries: int = 1

    def __post_init__(self) -> None:
        grid, values = _check_curves(self.orders, self.rdp)
        for name in ("mechanism", "basis"):
            text = getattr(self, name)
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{name}: expected a non-empty text, got {text!r}"[:200])
        if isinstance(self.n_queries, bool) or not isinstance(self.n_queries, (numbers.Integral, np.integer)):
            raise ValueError(f"n_queries: expected a positive integer, got {self.n_queries!r}"[:200])
        if int(self.n_queries) < 1:
            raise ValueError(f"n_queries: expected a positive integer, got {self.n_queries!r}")
        object.__setattr__(self, "orders", grid)
        object.__setattr__(self, "rdp", values)
        object.__setattr__(self, "n_queries", int(self.n_queries))

    @classmethod
    def from_spent(cls, spent: Any, name: str = "one_run") -> DataIndependentRdp:
        """The composed RDP curve of a data-independent :class:`~pate_study.privacy.accounting.PrivacySpent`.

        Refused, naming ``name``: anything but a ``PrivacySpent``; a 2017 log-MGF curve (not RDP); a
        data-dependent result (``data_dependent``: its curve bounds one direction for the votes at hand); a
        realised cost (``cost="realized"``: the cost of the transcript one run released, whose answered queries
        depend on the data; another run answers others)."""
        if not isinstance(spent, PrivacySpent):
            raise ValueError(
                f"{name}: expected a DataIndependentRdp or a data-independent PrivacySpent, got {type(spent).__name__}"
            )
        if spent.accountant == "moments2017":
            raise ValueError(f"{name}: a 2017 log-MGF curve, not an RDP curve; account the run with an RDP accountant")
        if spent.data_dependent:
            raise ValueError(
                f"{name}: a data-dependent RDP curve ({spent.mechanism}) bounds the divergence for the data at hand "
                "in one direction; Papernot & Steinke 2022's Theorems 2 and 6 need a guarantee for every pair of "
                "neighbouring datasets both ways: account one run data-independently (n_queries instead of the "
                "votes) or pass a DataIndependentRdp whose basis says why it holds for every pair"
            )
        if spent.cost == "realized":
            raise ValueError(
                f"{name}: a realised cost ({spent.mechanism}) is the cost of the queries one run answered, which "
                "depend on the data; random stopping needs one run's guarantee fixed in advance (cost='all_answered')"
            )
        return cls(
            np.array(spent.orders, dtype=np.float64),
            np.array(spent.rdp_or_logmgf, dtype=np.float64),
            mechanism=spent.mechanism,
            basis=f"data-independent {spent.accountant} accounting of {spent.mechanism}"
            + (f" ({spent.cost})" if spent.cost else ""),
            n_queries=spent.n_queries,
        )


def _one_run(one_run: Any) -> DataIndependentRdp:
    """``one_run`` as a :class:`DataIndependentRdp` (a data-independent ``PrivacySpent`` converted; else refused)."""
    return one_run if isinstance(one_run, DataIndependentRdp) else DataIndependentRdp.from_spent(one_run)


# ----------------------------------------------------------------------------------------------- composition


def compose_candidates(rdp_curves: Any) -> np.ndarray:
    """RDP per order of releasing every candidate run: the sum over runs (Mironov 2017, Proposition 1).

    ``rdp_curves`` ``[n_runs, n_orders]`` on one order grid. Choosing the best candidate by any score of the
    candidates' outputs (and public data) is post-processing of this joint release (Mironov 2017, Proposition 9),
    so this is the RDP of the selection among a fixed, finite set of candidates. Summed with ``math.fsum`` per
    order (independent of the runs' order).
    """
    values = _float_array("rdp_curves", rdp_curves)
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 1:
        raise ValueError(f"rdp_curves: expected a 2-D array [n_runs >= 1, n_orders >= 1], got shape {values.shape}")
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError("rdp_curves: expected non-negative RDP values (no NaN)")
    return np.array([math.fsum(col) for col in values.T.tolist()], dtype=np.float64)


@constrained(delta="delta", accounting="curve_accounting")
def selection_spent(
    candidates: Sequence[PrivacySpent], *, delta: float, accounting: Accounting = DEFAULT_ACCOUNTING, warn: bool = True
) -> PrivacySpent:
    """(ε, δ) of publishing the best of a fixed set of candidate releases: composition of all of them.

    Every candidate must carry an RDP curve (``rdp_or_logmgf``) on the same order grid (RDP accountants; not the
    2017 moments accountant): the orders are the candidates', so ``accounting`` gives the conversion only (other
    orders than the default are refused, not dropped). The result's ``details`` list the candidates' own ε and the
    largest of them (what would be printed if the selection were not charged).
    """
    if isinstance(candidates, (str, bytes, PrivacySpent)) or not isinstance(candidates, Sequence):
        raise ValueError(
            f"candidates: expected a list of PrivacySpent (the candidate releases), got {type(candidates).__name__}"
        )
    spent = list(candidates)
    if not spent:
        raise ValueError("candidates: expected at least one candidate release")
    for i, s in enumerate(spent):
        if not isinstance(s, PrivacySpent):
            raise ValueError(f"candidates[{i}]: expected a PrivacySpent, got {type(s).__name__}")
    grid = spent[0].orders
    for i, s in enumerate(spent):
        if s.accountant == "moments2017":
            raise ValueError(f"candidates[{i}]: a 2017 log-MGF curve, not an RDP curve; compose RDP results only")
        if s.orders.shape != grid.shape or not np.allclose(s.orders, grid, rtol=0, atol=1e-12):
            raise ValueError(f"candidates[{i}]: order grid differs from candidates[0]'s; account all on one grid")
    total = compose_candidates(np.stack([s.rdp_or_logmgf for s in spent]))
    own = [float(s.epsilon) for s in spent]
    return account(
        total,
        delta=delta,
        accounting=Accounting(grid, accounting.conversion),
        accountant="selection",
        mechanism=f"best of {len(spent)} fixed candidates (composition)",
        n_queries=sum(s.n_queries for s in spent),
        data_dependent=any(s.data_dependent for s in spent),
        warn=warn,
        n_candidates=len(spent),
        candidate_epsilons=own,
        largest_candidate_epsilon=max(own),
    )


# ------------------------------------------------------------------------------------- random stopping


def _tnb_eta(name: str, value: Any) -> float:
    """The η of D_{η,γ}: a finite number > −1 (Papernot & Steinke 2022, Definition 1)."""
    eta = _number(name, value)
    if not (math.isfinite(eta) and eta > -1.0):
        raise ValueError(
            f"{name}: expected a finite number > -1 (shape of the truncated negative binomial), got {value!r}"
        )
    return eta


def _tnb_gamma(name: str, value: Any) -> float:
    """The γ of D_{η,γ}: a number in (0, 1) (Papernot & Steinke 2022, Definition 1)."""
    gamma = _number(name, value)
    if not 0.0 < gamma < 1.0:
        raise ValueError(
            f"{name}: expected a number in (0, 1) (the truncated negative binomial's gamma), got {value!r}"
        )
    return gamma


def _check_runs(k: Any) -> np.ndarray:
    """Numbers of runs ``k``: integers ≥ 1 (integral floats accepted), as float64 (exact up to 2^53)."""
    ks = _float_array("k", k)
    if not np.all(np.isfinite(ks)) or np.any(ks != np.floor(ks)) or np.any(ks < 1):
        bad = ks[~(np.isfinite(ks) & (ks == np.floor(ks)) & (ks >= 1))].ravel()[0]
        raise ValueError(f"k: expected whole numbers of runs >= 1, got {float(bad)!r}")
    return ks


@constrained(eta=_tnb_eta, gamma=_tnb_gamma)
def truncated_negative_binomial_pmf(k: Any, eta: float, gamma: float) -> np.ndarray:
    """P[K = k] of D_{η,γ} (Papernot & Steinke 2022, Definition 1), k a whole number ≥ 1 (any shape), from its log:
    k log(1 − γ) + log|Γ(k + η)/(Γ(η) Γ(k + 1))| − log|γ^{−η} − 1| (the product Π_{l<k} (l + η)/(l + 1) in closed
    form, so a large k costs no loop); η = 0: (1 − γ)^k/(k log(1/γ))."""
    ks = _check_runs(k)
    log1mg = math.log1p(-gamma)
    if eta == 0.0:
        return np.exp(ks * log1mg - np.log(ks) - math.log(-math.log(gamma)))
    # for −1 < η < 0 the factor l = 0 (Γ(η) < 0) and γ^{−η} − 1 are both negative: their ratio is the ratio of |·|
    log_product = special.gammaln(ks + eta) - special.gammaln(eta) - special.gammaln(ks + 1.0)
    log_norm = math.log(abs(math.expm1(-eta * math.log(gamma))))
    return np.exp(ks * log1mg + log_product - log_norm)


@constrained(eta=_tnb_eta, gamma=_tnb_gamma)
def truncated_negative_binomial_mean(eta: float, gamma: float) -> float:
    """E[K] of D_{η,γ} (Papernot & Steinke 2022, §2): η(1 − γ)/(γ(1 − γ^η)), η ≠ 0; (1/γ − 1)/log(1/γ), η = 0."""
    if eta == 0.0:
        return (1.0 / gamma - 1.0) / -math.log(gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


#: the interval of log γ searched by :func:`truncated_negative_binomial_gamma` (γ from e^-700 to just below 1)
_LOG_GAMMA_RANGE = (-700.0, -1e-12)


@constrained(eta=_tnb_eta)
def truncated_negative_binomial_gamma(eta: float, mean: float) -> float:
    """The γ of D_{η,γ} with E[K] = ``mean`` (> 1; E[K] decreases from ∞ to 1 as γ goes from 0 to 1). A mean
    beyond what γ ∈ [e^-700, 1 − 1e-12] reaches (astronomically many runs, or a mean within about 1e-12 of 1) is
    refused, naming ``mean`` and the range."""
    target = _number("mean", mean)
    if not (math.isfinite(target) and target > 1.0):
        raise ValueError(f"mean: expected a finite expected number of runs > 1, got {mean!r}")

    def gap(log_gamma: float) -> float:
        return math.log(truncated_negative_binomial_mean(eta, math.exp(log_gamma))) - math.log(target)

    low, high = _LOG_GAMMA_RANGE
    if not gap(low) >= 0.0 or not gap(high) <= 0.0:
        reach = [truncated_negative_binomial_mean(eta, math.exp(x)) for x in (high, low)]
        raise ValueError(
            f"mean: expected an expected number of runs from {reach[0]:.15g} to {reach[1]:.3g} (what D_eta,gamma "
            f"reaches at eta={eta:g} in double precision), got {mean!r}"
        )
    return math.exp(optimize.brentq(gap, low, high, xtol=1e-15, rtol=1e-14))


@constrained(eta=_tnb_eta, gamma=_tnb_gamma)
def truncated_negative_binomial_pgf(x: Any, eta: float, gamma: float) -> np.ndarray:
    """E[x^K] of D_{η,γ}, x ∈ [0, 1]: ((1 − (1 − γ)x)^{−η} − 1)/(γ^{−η} − 1), η ≠ 0; log(1 − (1 − γ)x)/log γ, η = 0
    (the negative binomial series Σ_k Π_{l<k}(l + η)/(l + 1) y^k = (1 − y)^{−η} − 1)."""
    xs = _float_array("x", x)
    if not np.all((xs >= 0.0) & (xs <= 1.0)):
        raise ValueError("x: expected values in [0, 1] (no NaN)")
    y = np.log1p(-(1.0 - gamma) * xs)
    if eta == 0.0:
        return y / math.log(gamma)
    return np.expm1(-eta * y) / math.expm1(-eta * math.log(gamma))


@constrained(eta=_tnb_eta, gamma=_tnb_gamma)
def truncated_negative_binomial_rdp(one_run: DataIndependentRdp, eta: float, gamma: float) -> np.ndarray:
    """RDP per order (on ``one_run.orders``) of the best of K ~ D_{η,γ} runs of Q, from Q's data-independent RDP
    curve (Papernot & Steinke 2022, Theorem 2; a data-dependent curve is refused: module docstring).

    ε′(λ) = ε(λ) + min_λ̂ [(1 + η)((1 − 1/λ̂)ε(λ̂) + log(1/γ)/λ̂)] + log(E[K])/(λ − 1), λ̂ over the grid, then made
    monotone in λ (module docstring).
    """
    run = _one_run(one_run)
    grid, values = run.orders, run.rdp
    hat = np.min((1.0 - 1.0 / grid) * values - math.log(gamma) / grid)
    log_mean = math.log(truncated_negative_binomial_mean(eta, gamma))
    return _monotone(values + (1.0 + eta) * hat + log_mean / (grid - 1.0))


def rdp_delta(orders: Any, rdp: Any, epsilon: Any) -> np.ndarray:
    """δ(ε) of a mechanism from its RDP curve: Canonne, Kamath & Steinke 2020, Proposition 12 solved for δ,
    log δ = (α − 1)(ε(α) − ε + log(1 − 1/α)) − log α, minimised over the orders α of the grid, capped at 1.

    ``epsilon``: one target ε per entry (any shape); returns δ of that shape.
    """
    grid, values = _check_curves(orders, rdp)
    eps = _float_array("epsilon", epsilon)
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError("epsilon: expected non-negative values")
    am1 = grid - 1.0
    log_delta = am1 * (values - eps[..., None] + np.log1p(-1.0 / grid)) - np.log(grid)
    return np.exp(np.minimum(np.min(log_delta, axis=-1), 0.0))


def _poisson_mean(name: str, value: Any) -> float:
    """Theorem 6's μ: a finite mean number of runs ≥ 1 (module docstring)."""
    mu = _number(name, value)
    if not (math.isfinite(mu) and mu >= 1.0):
        raise ValueError(
            f"{name}: expected a finite mean number of runs >= 1 (below 1, Theorem 6's term log(mu)/(lambda - 1) "
            f"takes the bound below one run's RDP, and below 0 for small mu: it does not hold there), got {value!r}"
        )
    return mu


@constrained(mu=_poisson_mean)
def poisson_rdp(one_run: DataIndependentRdp, mu: float) -> np.ndarray:
    """RDP per order (on ``one_run.orders``) of the best of K ~ Poisson(μ) runs of Q, from Q's data-independent
    RDP curve (Papernot & Steinke 2022, Theorem 6; μ ≥ 1; a data-dependent curve is refused: module docstring).

    ε′(λ) = ε(λ) + μ δ̂(λ) + log(μ)/(λ − 1) with ε̂ = log(1 + 1/(λ − 1)) and δ̂ = :func:`rdp_delta` at ε̂ from
    the same RDP curve; then made monotone in λ (module docstring).
    """
    run = _one_run(one_run)
    grid, values = run.orders, run.rdp
    eps_hat = np.log1p(1.0 / (grid - 1.0))
    delta_hat = rdp_delta(grid, values, eps_hat)
    return _monotone(values + mu * delta_hat + math.log(mu) / (grid - 1.0))


@constrained(delta="delta", accounting="curve_accounting", eta=_tnb_eta, gamma=_tnb_gamma, mu=_poisson_mean)
def random_stopping_spent(
    one_run: DataIndependentRdp | PrivacySpent,
    *,
    distribution: str,
    delta: float,
    accounting: Accounting = DEFAULT_ACCOUNTING,
    eta: float | None = None,
    gamma: float | None = None,
    mean: float | None = None,
    mu: float | None = None,
    warn: bool = True,
) -> PrivacySpent:
    """(ε, δ) of the best of a random number K of runs of one mechanism Q (Papernot & Steinke 2022).

    ``one_run``: Q's guarantee for every pair of neighbouring datasets, both ways: a :class:`DataIndependentRdp`,
    or a data-independent :class:`~pate_study.privacy.accounting.PrivacySpent` (converted by
    :meth:`DataIndependentRdp.from_spent`; a data-dependent result or a realised cost is refused, module
    docstring). ``distribution="truncated_negative_binomial"`` with ``eta`` and either ``gamma`` or ``mean`` (E[K];
    Theorem 2); ``"poisson"`` with ``mu`` ≥ 1 (Theorem 6); a parameter of the other distribution is refused, not
    ignored. Valid only when K is drawn from that distribution, independently of the data, and only the best run
    is published. The orders are the one run's curve's, so ``accounting`` gives the conversion only (other orders
    than the default are refused, not dropped). ``details``: the distribution's parameters, ``expected_runs``, the
    one run's ε at the same δ and conversion (``one_run_epsilon``) and the curve's ``basis``.
    """
    check_choice("distribution", distribution, DISTRIBUTIONS)
    given = {"eta": eta, "gamma": gamma, "mean": mean, "mu": mu}
    foreign = [
        name for name, value in given.items() if value is not None and name not in DISTRIBUTION_PARAMETERS[distribution]
    ]
    if foreign:
        raise ValueError(
            f"{'/'.join(foreign)}: not a parameter of distribution={distribution!r}, which takes "
            f"{' and '.join(DISTRIBUTION_PARAMETERS[distribution])}; remove it"
        )
    run = _one_run(one_run)
    on_curve = Accounting(resolve_rdp_orders(run.orders), accounting.conversion)
    if distribution == "poisson":
        if mu is None:
            raise ValueError("mu: distribution='poisson' needs the mean number of runs mu")
        total = poisson_rdp(run, mu)
        params: dict = {"mu": float(mu), "expected_runs": float(mu)}
    else:
        if eta is None or (gamma is None) == (mean is None):
            raise ValueError(
                "eta/gamma/mean: the truncated negative binomial needs eta and exactly one of gamma or mean"
            )
        g = truncated_negative_binomial_gamma(eta, mean) if gamma is None else gamma
        total = truncated_negative_binomial_rdp(run, eta, g)
        params = {"eta": float(eta), "gamma": g, "expected_runs": truncated_negative_binomial_mean(eta, g)}
    one = account(
        run.rdp,
        delta=delta,
        accounting=on_curve,
        accountant="selection",
        mechanism=run.mechanism,
        n_queries=run.n_queries,
        data_dependent=False,
        warn=False,
    )
    return account(
        total,
        delta=delta,
        accounting=on_curve,
        accountant="selection",
        mechanism=f"best of K ~ {distribution} runs of {run.mechanism} (random stopping)",
        n_queries=run.n_queries,
        data_dependent=False,
        warn=warn,
        one_run_epsilon=float(one.epsilon),
        distribution=distribution,
        basis=run.basis,
        **params,
    )
