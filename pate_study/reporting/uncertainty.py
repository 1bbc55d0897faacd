"""One uncertainty model for every "paper vs ours" number: an :class:`Estimate` is our value with an interval over
the random sources behind it, and the verdict rules (:mod:`pate_study.reporting.claims`) read only that interval.

Three interval methods, each stated in the estimate it produces (``method``):

- ``"t-interval"`` over ``R >= 2`` replicates of the named sources (training seeds, sampler seeds, release-noise
  draws): mean ± ``t_{(1+level)/2, R-1} · sd / √R`` (sd with ddof 1; Student 1908, any statistics text, e.g.
  Wasserman 2004, §6.3.2). Replicates that are paired (two arms trained on the same partitions and seeds) are
  compared through the interval of their per-replicate differences (:func:`paired_difference`).
- ``"percentile bootstrap"`` over the finite test set: the metric recomputed on ``n_boot`` resamples of the test
  examples drawn with replacement from an explicit seed, interval = the ``(1-level)/2`` and ``(1+level)/2``
  quantiles of the resampled values (Efron & Tibshirani 1993, ch. 13).
- ``"t-interval + percentile bootstrap"`` for a mean over replicates that share one test set
  (:func:`combined_interval`): the replicates' spread measures the replicated sources given the test set, the
  bootstrap of the *replicate mean* (every replicate scored on the same resampled rows) measures the test set,
  which the replicates share and which therefore does not average out. The two are independent, so their
  variances add; each side of the interval is

      low  = mean − √(h_t² + (mean − q_low)²),   high = mean + √(h_t² + (q_high − mean)²)

  with ``h_t`` the t-interval's half-width and ``q_low`` / ``q_high`` the percentile bootstrap's bounds of the
  replicate mean (a root-sum-of-squares of the two half-widths, per side, so a skewed bootstrap stays skewed).

- ``"t-interval of cluster means"`` over replicates nested in ``G >= 2`` replicates of an outer source (students
  labelled by one of ``G`` teacher ensembles, each trained with its own seed and partition:
  :func:`clustered_interval`, :func:`clustered_paired_difference`): the units of a cluster share its outer draw, so
  they are not independent replicates of it; the cluster means are (Cochran 1977, *Sampling Techniques*, 3rd ed.,
  §9.2 and §10.2, two-stage sampling: the variance of the overall mean estimated from the spread of the primary
  units' means alone; the same "analyse the cluster means" rule as a cluster-robust variance with few clusters,
  Cameron & Miller 2015, *J. Human Resources* 50(2), §VI.C, t with ``G − 1`` degrees of freedom). Value = mean of
  the ``G`` cluster means, interval = their t-interval with ``G − 1`` degrees of freedom; the ``N`` units enter
  only through the cluster means. A median is bootstrapped in two stages (:func:`cluster_bootstrap_rows`).

A source behind the number that was *not* replicated is named in ``unreplicated``; the interval then omits it and
:meth:`Estimate.render` says so. An estimate from a single run with nothing replicated has ``method="none"`` and
an unbounded interval (``low = -inf``, ``high = +inf``): every claim on it is inconclusive, never decided inside
noise that was not measured.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import t as student_t

#: The two-sided level of every interval unless a caller states another.
LEVEL = 0.95

#: Methods an :class:`Estimate` may state.
METHODS = (
    "t-interval",
    "percentile bootstrap",
    "t-interval + percentile bootstrap",
    "exact",
    "none",
    "t-interval of cluster means",
    "central range of draws",
)
#: The method of :func:`clustered_interval` (one of :data:`METHODS`).
CLUSTER_METHOD = "t-interval of cluster means"
#: The method of :func:`one_run_range` (one of :data:`METHODS`): where one run falls, not an interval for a mean.
ONE_RUN_METHOD = "central range of draws"

#: The random sources a comparison may name (free text is allowed; these are the usual ones).
TEACHER_SEED = "teacher training seed and partition"
SAMPLER_SEED = "sampler seed"
RELEASE_NOISE = "release-noise draw"
STUDENT_SEED = "student training seed"
TEST_SET = "test examples"
#: the released queries of a PATE release, resampled to score a noisy release against the noise-free one
POOL_QUERIES = "pool queries"


@dataclass(frozen=True)
class Estimate:
    """Our value with its interval over the named random sources.

    ``value`` is the point estimate (the mean over replicates, or the metric on the full test set); ``low`` /
    ``high`` bound it at ``level``; ``n_replicates`` is ``R`` (1 when only the test set is resampled); ``sources``
    the random sources the interval covers, ``unreplicated`` those behind the number that it does not; ``method``
    one of :data:`METHODS`; ``n_boot`` the bootstrap resamples (0 without a bootstrap). A clustered estimate
    (:data:`CLUSTER_METHOD`): ``n_replicates`` is the number of clusters ``G``, ``cluster_sources`` the sources
    that make a cluster (the first of ``sources``), ``n_units`` the replicates nested in them (0 otherwise)."""

    value: float
    low: float
    high: float
    n_replicates: int
    sources: tuple[str, ...]
    method: str
    level: float = LEVEL
    n_boot: int = 0
    unreplicated: tuple[str, ...] = field(default=())
    n_units: int = 0
    cluster_sources: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method={self.method!r}, expected one of {list(METHODS)}")
        if math.isnan(self.value) or math.isnan(self.low) or math.isnan(self.high):
            raise ValueError(f"value={self.value}, low={self.low}, high={self.high}: expected numbers, not NaN")
        if not self.low <= self.value <= self.high:
            raise ValueError(f"low={self.low} <= value={self.value} <= high={self.high} does not hold")
        if self.n_replicates < 1:
            raise ValueError(f"n_replicates={self.n_replicates}: expected >= 1")
        if not 0 < self.level < 1:
            raise ValueError(f"level={self.level}: expected in (0, 1)")

    def within(self, lower: float, upper: float) -> Estimate:
        """The estimate with its interval clipped to where the quantity can lie (a rate in ``[0, 1]``, a distance
        ``>= 0``): a t-interval ignores a quantity's range, so on few replicates it can reach past it; clipping moves
        only ends that lie where no value can, so a verdict that reads the interval changes only where the claim's
        band itself reaches past the range."""
        if not lower <= self.value <= upper:
            raise ValueError(f"value {self.value} lies outside the quantity's range [{lower}, {upper}]")
        return dataclasses.replace(self, low=min(max(self.low, lower), upper), high=max(min(self.high, upper), lower))

    @property
    def half_width(self) -> float:
        """The larger of the two sides' distances from ``value`` (``inf`` when unbounded)."""
        return max(self.value - self.low, self.high - self.value)

    def render(self, fmt: str = ".4g") -> str:
        """``"estimate [low, high] over N replicates of SOURCES"`` with the method and level, as INDEX.md shows it
        (a bootstrap: "over B bootstrap resamples of SOURCES"; both combined: "over N replicates of SOURCES and B
        bootstrap resamples of test examples"); the sources the interval omits follow ("not replicated: ...")."""
        if self.method == "none":
            text = f"{self.value:{fmt}} (one run; no interval: nothing replicated)"
        elif self.method == "exact":
            text = f"{self.value:{fmt}} (exact: no random source)"
        else:
            interval = f"{self.value:{fmt}} [{self.low:{fmt}}, {self.high:{fmt}}]"
            level = f"{self.level:.0%}"
            if self.method == CLUSTER_METHOD:
                outer = ", ".join(self.cluster_sources)
                inner = ", ".join(s for s in self.sources if s not in self.cluster_sources) or "no source"
                text = (
                    f"{interval} over {self.n_replicates} replicates of {outer} with {self.n_units} replicates of"
                    f" {inner} in all nested in them ({self.method}, {self.n_replicates - 1} df, {level})"
                )
            elif self.method == ONE_RUN_METHOD:
                what = ", ".join(self.sources) or "no source"
                text = (
                    f"{interval}: where one run falls, the central {level} of {self.n_replicates} draws of {what}"
                    " (median and empirical quantiles)"
                )
            elif self.method == "percentile bootstrap":
                what = ", ".join(self.sources) or "no source"
                text = f"{interval} over {self.n_boot} bootstrap resamples of {what} (percentile, {level})"
            else:
                combined = self.method == "t-interval + percentile bootstrap"
                # a combined interval's last source is the one its bootstrap resamples (combined_interval)
                replicated = ", ".join(self.sources[:-1] if combined else self.sources) or "no source"
                boot = f" and {self.n_boot} bootstrap resamples of {self.sources[-1]}" if combined else ""
                text = (
                    f"{interval} over {self.n_replicates} replicate{'s' if self.n_replicates != 1 else ''} of "
                    f"{replicated}{boot} ({self.method}, {level})"
                )
        if self.unreplicated:
            text += f"; not replicated: {', '.join(self.unreplicated)}"
        return text

    def as_record(self) -> dict[str, Any]:
        """Plain values for ``NotebookOutputs.record`` (JSON): value, low, high, n, sources, method, level."""
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "n_replicates": self.n_replicates,
            "sources": list(self.sources),
            "unreplicated": list(self.unreplicated),
            "method": self.method,
            "level": self.level,
            "n_boot": self.n_boot,
            **({"n_units": self.n_units, "cluster_sources": list(self.cluster_sources)} if self.n_units else {}),
        }

    def map(self, function: Callable[[float], float], *, increasing: bool = True) -> Estimate:
        """The estimate of ``function(quantity)`` for a monotone ``function`` (interval ends map to ends; a
        decreasing function swaps them), e.g. ``1 - x`` or ``log``."""
        ends = (function(self.low), function(self.high))
        low, high = ends if increasing else ends[::-1]
        return dataclasses.replace(self, value=function(self.value), low=low, high=high)


def _as_array(values: Any, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    if a.size == 0:
        raise ValueError(f"{name}: expected at least one value, got none")
    return a


def t_bounds(values: Any, level: float = LEVEL, axis: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised t-interval along ``axis``: ``(mean, low, high)`` with half-width
    ``t_{(1+level)/2, R-1} · sd / √R`` (sd ddof 1). NaN replicates are dropped per slice; with fewer than two
    finite replicates the bounds are ``-inf`` / ``+inf`` (no spread measured)."""
    a = np.moveaxis(_as_array(values, "values"), axis, -1)
    n = np.isfinite(a).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.nansum(np.where(np.isfinite(a), a, 0.0), -1) / np.maximum(n, 1), np.nan)
        sq = np.nansum(np.where(np.isfinite(a), (a - mean[..., None]) ** 2, 0.0), -1)
        sd = np.sqrt(sq / np.maximum(n - 1, 1))
        half = student_t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(np.maximum(n, 1))
    half = np.where(n >= 2, half, np.inf)
    return mean, mean - half, mean + half


def t_interval(
    values: Sequence[float], sources: Sequence[str], *, level: float = LEVEL, unreplicated: Sequence[str] = ()
) -> Estimate:
    """The :class:`Estimate` of a mean over ``R`` replicate values (one per replicate of ``sources``): a t-interval;
    a single replicate gives ``method="none"`` (unbounded)."""
    a = _as_array(values, "values").ravel()
    a = a[np.isfinite(a)]
    if a.size == 0:
        raise ValueError("values: no finite replicate")
    if a.size < 2:
        return unreplicated_estimate(float(a[0]), [*unreplicated, *sources])
    mean, low, high = (float(x) for x in t_bounds(a, level))
    return Estimate(mean, low, high, int(a.size), tuple(sources), "t-interval", level, 0, tuple(unreplicated))


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    sources: Sequence[str],
    *,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The estimate of ``mean(a − b)`` over paired replicates (replicate ``r`` of both arms shares its seeds and
    partition, so the shared part cancels): a t-interval of the per-replicate differences."""
    a, b = _as_array(a, "a"), _as_array(b, "b")
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"paired_difference: expected two arms over the same replicates, got shapes {a.shape} and {b.shape}"
        )
    return t_interval(a - b, sources, level=level, unreplicated=unreplicated)


def bootstrap_rows(n_examples: int, n_boot: int, seed: int) -> np.ndarray:
    """``[n_boot, n_examples]`` row indices drawn with replacement from ``numpy.random.default_rng(seed)``: the
    same resamples for every arm scored on the same test set (a paired bootstrap)."""
    if n_examples < 1 or n_boot < 1:
        raise ValueError(f"n_examples={n_examples}, n_boot={n_boot}: expected both >= 1")
    return np.random.default_rng(seed).integers(0, n_examples, (n_boot, n_examples))


def bootstrap_weights(rows: np.ndarray) -> np.ndarray:
    """The resamples of :func:`bootstrap_rows` as counts ``[n_boot, n_examples]`` (how often each example is
    drawn): a metric that is a sum over examples is then one matrix product per resample set."""
    n = rows.shape[1]
    return np.stack([np.bincount(r, minlength=n) for r in rows]).astype(np.float64)


def percentile_bounds(draws: Any, level: float = LEVEL, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised percentile interval of bootstrap ``draws`` along ``axis`` (NaN draws ignored)."""
    d = _as_array(draws, "draws")
    q = np.nanquantile(d, [0.5 - level / 2, 0.5 + level / 2], axis=axis)
    return q[0], q[1]


def bootstrap_draws(metric: Callable[..., float], arrays: Sequence[np.ndarray], rows: np.ndarray) -> np.ndarray:
    """``metric(*(a[r] for a in arrays))`` for every resample ``r`` of ``rows`` (:func:`bootstrap_rows`)."""
    return np.array([metric(*(np.asarray(a)[r] for a in arrays)) for r in rows], dtype=np.float64)


def percentile_bootstrap(
    metric: Callable[..., float],
    arrays: Sequence[np.ndarray],
    *,
    n_boot: int,
    seed: int,
    level: float = LEVEL,
    sources: Sequence[str] = (TEST_SET,),
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The :class:`Estimate` of ``metric`` on the full test set (``arrays``: per-example arrays, rows = examples),
    with the percentile interval of ``n_boot`` resamples of the examples drawn from ``seed``."""
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError(f"percentile_bootstrap: arrays of different lengths {[len(a) for a in arrays]}")
    value = float(metric(*arrays))
    return from_bootstrap(
        value,
        bootstrap_draws(metric, arrays, bootstrap_rows(n, n_boot, seed)),
        level=level,
        sources=sources,
        unreplicated=unreplicated,
    )


def from_bootstrap(
    value: float,
    draws: Any,
    *,
    level: float = LEVEL,
    sources: Sequence[str] = (TEST_SET,),
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """An :class:`Estimate` from a full-sample ``value`` and its bootstrap ``draws`` (percentile interval, widened
    to contain ``value`` if a skewed resample distribution leaves it outside)."""
    d = _as_array(draws, "draws").ravel()
    low, high = (float(x) for x in percentile_bounds(d, level))
    return Estimate(
        float(value),
        min(low, value),
        max(high, value),
        1,
        tuple(sources),
        "percentile bootstrap",
        level,
        int(np.isfinite(d).sum()),
        tuple(unreplicated),
    )


def combined_bounds(replicates: Any, draws: Any, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised :func:`combined_interval`: ``replicates`` ``[..., R]`` (each replicate's metric on the full test
    set), ``draws`` ``[n_boot, ..., R]`` (each replicate's metric on the same resampled rows). Returns
    ``(mean, low, high)`` of the mean over replicates; see the module's docstring for how the two combine."""
    mean, t_low, _ = t_bounds(replicates, level)
    h_t = np.where(np.isfinite(t_low), mean - t_low, 0.0)  # one replicate: no replicate spread measured
    boot_mean = np.nanmean(_as_array(draws, "draws"), axis=-1)  # [n_boot, ...]: the replicate mean per resample
    q_low, q_high = percentile_bounds(boot_mean, level, axis=0)
    low = mean - np.sqrt(h_t**2 + np.maximum(mean - q_low, 0.0) ** 2)
    high = mean + np.sqrt(h_t**2 + np.maximum(q_high - mean, 0.0) ** 2)
    return mean, low, high


def combined_interval(
    replicates: Sequence[float],
    draws: Any,
    sources: Sequence[str],
    *,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
    resampled: str = TEST_SET,
) -> Estimate:
    """The :class:`Estimate` of a mean over ``R`` replicates of ``sources`` that share one test set:
    ``replicates`` ``[R]`` on the full test set, ``draws`` ``[n_boot, R]`` on the same resampled rows
    (:func:`bootstrap_rows`). Interval: the t-interval half-width and the percentile bootstrap's half-widths of the
    replicate mean added in quadrature, per side (module docstring). With ``R = 1`` it is the bootstrap alone and
    the replicated sources are reported as not replicated. ``resampled`` names what the bootstrap resamples (the
    test examples, or e.g. :data:`POOL_QUERIES`); it is the estimate's last source."""
    r = _as_array(replicates, "replicates").ravel()
    d = _as_array(draws, "draws").reshape(-1, r.size)
    mean, low, high = (float(x) for x in combined_bounds(r, d, level))
    if r.size < 2:
        return Estimate(
            mean,
            min(low, mean),
            max(high, mean),
            1,
            (resampled,),
            "percentile bootstrap",
            level,
            d.shape[0],
            tuple(dict.fromkeys([*unreplicated, *sources])),
        )
    return Estimate(
        mean,
        low,
        high,
        int(r.size),
        (*sources, resampled),
        "t-interval + percentile bootstrap",
        level,
        d.shape[0],
        tuple(unreplicated),
    )


def one_run_range(draws: Any, sources: Sequence[str], level: float = LEVEL) -> Estimate:
    """Where *one run* of a randomised mechanism falls: the central ``level`` range of ``R`` draws of its outcome
    (empirical quantiles (1 ± level)/2, numpy's linear rule; the value is the median). Not an interval for a mean:
    the range a single run's number lands in, for asking whether a printed number can be one run of the mechanism
    (a claim of kind ``"one-run"`` in :mod:`pate_study.reporting.claims`). ``draws``: ``[R]`` finite, ``R >= 2``."""
    d = _as_array(draws, "draws").ravel()
    if d.size < 2 or not np.all(np.isfinite(d)):
        raise ValueError(f"draws: expected at least 2 finite draws, got {d.size}")
    lo, median, hi = (float(x) for x in np.quantile(d, [(1 - level) / 2, 0.5, (1 + level) / 2]))
    return Estimate(median, lo, hi, int(d.size), tuple(sources), ONE_RUN_METHOD, level)


def exact(value: float) -> Estimate:
    """A number with no random source behind it (e.g. an ε computed from fixed inputs): a zero-width interval."""
    value = float(value)
    return Estimate(value, value, value, 1, (), "exact")


def unreplicated(value: float, sources: Sequence[str]) -> Estimate:
    """One run of ``sources`` with nothing replicated: the value with an unbounded interval (every claim on it is
    inconclusive), the sources named as not replicated."""
    return Estimate(float(value), -math.inf, math.inf, 1, (), "none", unreplicated=tuple(sources))


def ratio_of_paired(
    a: Sequence[float],
    b: Sequence[float],
    sources: Sequence[str],
    *,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The estimate of the ratio ``a / b`` over paired positive replicates, through the t-interval of the
    per-replicate log ratios mapped back by ``exp`` (the interval of the geometric-mean ratio)."""
    a, b = _as_array(a, "a"), _as_array(b, "b")
    if np.any(a <= 0) or np.any(b <= 0):
        raise ValueError("ratio_of_paired: expected positive replicate values")
    return paired_difference(np.log(a), np.log(b), sources, level=level, unreplicated=unreplicated).map(math.exp)


def t_interval_from_summary(
    mean: float, sd: float, n: int, sources: Sequence[str], *, level: float = LEVEL, unreplicated: Sequence[str] = ()
) -> Estimate:
    """:func:`t_interval` from a table's summary of ``n`` replicates (their ``mean`` and ``sd`` with ddof 1): with
    ``n < 2`` or a NaN sd nothing was replicated (``method="none"``, unbounded, the sources named unreplicated)."""
    mean, sd, n = float(mean), float(sd), int(n)
    if n < 2 or not math.isfinite(sd):
        return unreplicated_estimate(mean, [*unreplicated, *sources])
    half = float(student_t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, n, tuple(sources), "t-interval", level, 0, tuple(unreplicated))


def welch_difference(
    a: tuple[float, float, int],
    b: tuple[float, float, int],
    sources: Sequence[str],
    *,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The estimate of ``mean_a − mean_b`` for two independent sets of replicates, each given as ``(mean, sd, n)``:
    Welch's t-interval (Welch 1947; Satterthwaite degrees of freedom). A side with ``n = 1`` (no spread) enters as a
    constant and its sources are named as not replicated; with neither side replicated the interval is unbounded."""
    (ma, sa, na), (mb, sb, nb) = ((float(m), float(s), int(n)) for m, s, n in (a, b))
    va = sa**2 / na if na >= 2 and math.isfinite(sa) else None
    vb = sb**2 / nb if nb >= 2 and math.isfinite(sb) else None
    missing = tuple(
        dict.fromkeys(
            [
                *unreplicated,
                *(() if va is not None and vb is not None else (f"{s} of one side (a single run)" for s in sources)),
            ]
        )
    )
    if va is None and vb is None:
        return unreplicated_estimate(ma - mb, missing)
    parts = [(v, n) for v, n in ((va, na), (vb, nb)) if v is not None]
    var = sum(v for v, _ in parts)
    df = var**2 / sum(v**2 / (n - 1) for v, n in parts) if var > 0 else float(min(n for _, n in parts) - 1)
    half = float(student_t.ppf(0.5 + level / 2, df)) * math.sqrt(var)
    d = ma - mb
    return Estimate(d, d - half, d + half, min(n for _, n in parts), tuple(sources), "t-interval", level, 0, missing)


def unreplicated_estimate(value: float, sources: Sequence[str]) -> Estimate:
    """:func:`unreplicated` (an alias whose name does not shadow an ``unreplicated=`` argument)."""
    return unreplicated(value, sources)


def _clusters(values: np.ndarray, clusters: Any) -> np.ndarray:
    """``clusters`` as an array of one label per value, checked."""
    labels = np.asarray(clusters)
    if labels.shape != values.shape or values.ndim != 1:
        raise ValueError(
            f"clusters: expected one cluster label per value (shape {values.shape}), got shape {labels.shape}"
        )
    return labels


def cluster_means(values: Any, clusters: Any) -> np.ndarray:
    """The mean of the finite ``values`` of each cluster (``clusters``: one label per value), in sorted label
    order; clusters with no finite value are left out."""
    a = _as_array(values, "values")
    labels = _clusters(a, clusters)
    finite = np.isfinite(a)
    return np.array([a[finite & (labels == g)].mean() for g in np.unique(labels[finite])], dtype=np.float64)


def clustered_interval(
    values: Sequence[float],
    clusters: Sequence[Any],
    cluster_sources: Sequence[str],
    unit_sources: Sequence[str],
    *,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The :class:`Estimate` of a mean over units (students) nested in clusters (the teacher ensembles that labelled
    them, one per replicate of ``cluster_sources``): the t-interval of the ``G`` cluster means with ``G − 1``
    degrees of freedom (:data:`CLUSTER_METHOD`; Cochran 1977, §10.2; Cameron & Miller 2015, §VI.C: see the
    module's docstring). The value is the unweighted mean of the cluster means (each outer draw weighs the same).

    - Every cluster holds one unit: the plain :func:`t_interval` over the units, each a replicate of both the
      cluster's and the unit's sources (the two rules coincide).
    - One cluster only (``G = 1``): the outer source was not replicated: the t-interval over the units, with
      ``cluster_sources`` named as not replicated (what a single teacher ensemble allows).
    NaN values are dropped (and a cluster left with none)."""
    a = _as_array(values, "values")
    labels = _clusters(a, clusters)
    finite = np.isfinite(a)
    if not finite.any():
        raise ValueError("values: no finite replicate")
    a, labels = a[finite], labels[finite]
    groups, sizes = np.unique(labels, return_counts=True)
    if groups.size < 2:
        return t_interval(a, unit_sources, level=level, unreplicated=[*unreplicated, *cluster_sources])
    if np.all(sizes == 1):
        return t_interval(a, [*cluster_sources, *unit_sources], level=level, unreplicated=unreplicated)
    means = cluster_means(a, labels)
    mean, low, high = (float(x) for x in t_bounds(means, level))
    return Estimate(
        mean,
        low,
        high,
        int(groups.size),
        (*cluster_sources, *unit_sources),
        CLUSTER_METHOD,
        level,
        0,
        tuple(unreplicated),
        int(a.size),
        tuple(cluster_sources),
    )


def clustered_paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Any],
    cluster_sources: Sequence[str],
    unit_sources: Sequence[str],
    *,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The estimate of ``mean(a − b)`` over paired units nested in clusters (unit ``k`` of both arms shares its
    seeds, rows and cluster, e.g. the teacher ensemble that labels it at every noise level):
    :func:`clustered_interval` of the per-unit differences."""
    a, b = _as_array(a, "a"), _as_array(b, "b")
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"clustered_paired_difference: expected two arms over the same units, got shapes {a.shape} and {b.shape}"
        )
    return clustered_interval(a - b, clusters, cluster_sources, unit_sources, level=level, unreplicated=unreplicated)


def cluster_bootstrap_rows(clusters: Sequence[Any], n_boot: int, seed: int) -> list[np.ndarray]:
    """``n_boot`` two-stage resamples of units nested in clusters, from ``numpy.random.default_rng(seed)``: draw the
    clusters with replacement, then within each drawn cluster its units with replacement (Davison & Hinkley 1997,
    *Bootstrap Methods and their Application*, §3.8, resampling both stages; it tends to overstate the variance
    slightly, the safe side). Each resample is an index array into the units (sizes vary when clusters do). With
    one cluster it is the ordinary bootstrap of the units."""
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size < 1 or n_boot < 1:
        raise ValueError(f"clusters: expected a 1-d array of labels, n_boot={n_boot} >= 1")
    members = [np.flatnonzero(labels == g) for g in np.unique(labels)]
    rng = np.random.default_rng(seed)
    resamples = []
    for _ in range(n_boot):
        chosen = rng.integers(0, len(members), len(members))
        resamples.append(np.concatenate([rng.choice(members[g], size=members[g].size) for g in chosen]))
    return resamples


def clustered_bootstrap(
    metric: Callable[[np.ndarray], float],
    values: Sequence[float],
    clusters: Sequence[Any],
    cluster_sources: Sequence[str],
    unit_sources: Sequence[str],
    *,
    n_boot: int,
    seed: int,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The :class:`Estimate` of ``metric(values)`` (e.g. a median over students) with the percentile interval of
    its two-stage resamples (:func:`cluster_bootstrap_rows`): the sources of both stages are covered; with one
    cluster only, ``cluster_sources`` are named as not replicated."""
    v = _as_array(values, "values").ravel()
    labels = _clusters(v, clusters)
    one = np.unique(labels).size < 2
    draws = np.array([metric(v[r]) for r in cluster_bootstrap_rows(labels, n_boot, seed)], dtype=np.float64)
    return from_bootstrap(
        float(metric(v)),
        draws,
        level=level,
        sources=tuple(unit_sources) if one else (*cluster_sources, *unit_sources),
        unreplicated=[*unreplicated, *cluster_sources] if one else unreplicated,
    )
