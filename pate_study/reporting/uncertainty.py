"""One uncertainty model for every "paper vs ours" number: an :class:`Estimate` is our value with an interval over
the random sources behind it, and the verdict rules (:mod:`pate_study.reporting.claims`) read only that interval.

One module of over 800 lines on purpose: every interval a verdict reads is computed here, by the three methods
below, so an independent reader re-derives any interval from one file and the replicate rows.

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

Every estimate keeps the replicate-level data it was computed from (:class:`Derivation`: the replicate values, the
cluster labels, both arms of a paired difference, the bootstrap draws of the statistic or of the replicate mean, the
draws of :func:`one_run_range`, a summary's mean, sd and n) and what was applied after (clipping, a monotone map).
From it the same interval is recomputed at another level (:meth:`Estimate.at_level`: the family rule of
:mod:`pate_study.reporting.verdicts` re-reads intervals at stricter levels) and written beside the item's outputs
(:mod:`pate_study.reporting.replicates`), so every printed interval can be re-derived from the repository.

A claim of no difference between ``k`` groups is judged by a test, not an interval: :func:`heterogeneity_test`, the
Wald chi-squared test of equal means with the covariance of the ``k`` estimates from a shared bootstrap.

Inputs are checked at the boundary (:mod:`pate_study.reporting.checks`): a bad value raises a ``ValueError`` naming
the parameter. Only NaN replicates are dropped, and only where a function says so (a replicate that gave no number);
an infinite value is refused.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import chi2
from scipy.stats import f as f_law
from scipy.stats import t as student_t

from pate_study.reporting import checks

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
#: The method of :func:`heterogeneity_test`.
WALD_METHOD = "Wald chi-squared test"

#: The random sources a comparison may name (free text is allowed; these are the usual ones).
TEACHER_SEED = "teacher training seed and partition"
SAMPLER_SEED = "sampler seed"
RELEASE_NOISE = "release-noise draw"
STUDENT_SEED = "student training seed"
TEST_SET = "test examples"
#: the released queries of a PATE release, resampled to score a noisy release against the noise-free one
POOL_QUERIES = "pool queries"

#: How a :class:`Derivation` computes an interval from its rows (the replicates file's ``statistic`` column).
MEAN = "mean of replicates"
CLUSTER_MEANS = "mean of cluster means"
PERCENTILE = "bootstrap percentile"
COMBINED = "replicate mean with bootstrap"
CENTRAL_RANGE = "central range of draws"
SUMMARY = "mean from summary"
WELCH = "Welch difference from summaries"
EXACT = "exact"
ONE_RUN = "one run"
STATISTICS = (MEAN, CLUSTER_MEANS, PERCENTILE, COMBINED, CENTRAL_RANGE, SUMMARY, WELCH, EXACT, ONE_RUN)
#: How the per-replicate values of a paired estimate come from its arms (the ``pairing`` column).
PAIRINGS = ("", "a − b", "log a − log b")


@dataclass(frozen=True, eq=False)
class Derivation:
    """The replicate-level data an :class:`Estimate` is computed from, and how (``statistic``, one of
    :data:`STATISTICS`; the replicates file's columns of the same names):

    - :data:`MEAN`: the t-interval of ``values`` (``[R]``, NaN replicates dropped), df ``R − 1``;
    - :data:`CLUSTER_MEANS`: the t-interval of the cluster means of ``values`` by ``clusters``, df ``G − 1``;
    - :data:`PERCENTILE`: ``point`` (the statistic on the full sample) and the percentile interval of ``draws``
      (``[n_boot]``, NaN draws ignored; numpy's linear quantiles), widened to contain ``point``;
    - :data:`COMBINED`: ``values`` (``[R]``, each replicate on the full test set) and ``draws`` (``[n_boot]``, the
      replicate mean on each resample): each side ``mean ∓ √(h_t² + (mean − q)²)`` (the module docstring);
    - :data:`CENTRAL_RANGE`: the median and the central quantiles of ``draws``;
    - :data:`SUMMARY`: ``summaries[0] = (mean, sd, n)``, a t-interval; :data:`WELCH`: ``summaries = (a, b)``,
      Welch's interval of ``mean_a − mean_b`` (a side with ``n < 2`` or no sd enters as a constant);
    - :data:`EXACT`: ``point``, a zero-width interval; :data:`ONE_RUN`: ``point``, unbounded.

    ``a`` / ``b``: the two arms of a paired estimate, ``values`` their per-replicate ``pairing`` (``"a − b"`` or
    ``"log a − log b"``); ``transforms``: what was applied after, in order (``("clip", low, high)``, ``("affine",
    a, b)``, ``("exp",)``, ``("log",)``, ``("function", name, function, increasing)``)."""

    statistic: str
    values: np.ndarray | None = None
    clusters: np.ndarray | None = None
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    draws: np.ndarray | None = None
    point: float | None = None
    summaries: tuple[tuple[float, float, int], ...] = ()
    pairing: str = ""
    transforms: tuple[tuple, ...] = ()

    def __post_init__(self) -> None:
        checks.choice(self.statistic, "statistic", STATISTICS)
        checks.choice(self.pairing, "pairing", PAIRINGS)

    def raw(self, level: float) -> tuple[float, float, float]:
        """``(value, low, high)`` at the two-sided ``level``, before :attr:`transforms`."""
        stat = self.statistic
        if stat in (MEAN, CLUSTER_MEANS):
            data = cluster_means(self.values, self.clusters) if stat == CLUSTER_MEANS else self.values
            mean, low, high = (float(x) for x in t_bounds(data, level))
            return mean, low, high
        if stat == PERCENTILE:
            low, high = (float(x) for x in percentile_bounds(self.draws, level))
            return self.point, min(low, self.point), max(high, self.point)
        if stat == COMBINED:
            mean, t_low, _ = (float(x) for x in t_bounds(self.values, level))
            h_t = mean - t_low if math.isfinite(t_low) else 0.0  # one replicate: no replicate spread measured
            q_low, q_high = (float(x) for x in percentile_bounds(self.draws, level))
            low = mean - math.sqrt(h_t**2 + max(mean - q_low, 0.0) ** 2)
            high = mean + math.sqrt(h_t**2 + max(q_high - mean, 0.0) ** 2)
            return mean, min(low, mean), max(high, mean)
        if stat == CENTRAL_RANGE:
            low, median, high = (float(x) for x in np.quantile(self.draws, [(1 - level) / 2, 0.5, (1 + level) / 2]))
            return median, low, high
        if stat == SUMMARY:
            mean, sd, n = self.summaries[0]
            half = float(student_t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
            return mean, mean - half, mean + half
        if stat == WELCH:
            d, var, df = _welch_parts(self.summaries)
            half = float(student_t.ppf(0.5 + level / 2, df)) * math.sqrt(var)
            return d, d - half, d + half
        if stat == EXACT:
            return self.point, self.point, self.point
        return self.point, -math.inf, math.inf  # ONE_RUN

    def df(self) -> float | None:
        """The t law's degrees of freedom (``None`` without one)."""
        if self.statistic == MEAN:
            return float(np.isfinite(self.values).sum() - 1)
        if self.statistic == CLUSTER_MEANS:
            return float(cluster_means(self.values, self.clusters).size - 1)
        if self.statistic == COMBINED and np.isfinite(self.values).sum() >= 2:
            return float(np.isfinite(self.values).sum() - 1)
        if self.statistic == SUMMARY:
            return float(self.summaries[0][2] - 1)
        if self.statistic == WELCH:
            return float(_welch_parts(self.summaries)[2])
        return None

    def evaluate(self, level: float) -> tuple[float, float, float]:
        """``(value, low, high)`` at ``level`` with :attr:`transforms` applied: the estimate's numbers."""
        value, low, high = self.raw(level)
        for t in self.transforms:
            value, low, high = _apply(t, value, low, high)
        return value, low, high

    def with_transform(self, transform: tuple) -> Derivation:
        return dataclasses.replace(self, transforms=(*self.transforms, transform))

    @property
    def rederivable(self) -> bool:
        """Whether the rows and named transforms suffice to recompute the interval (no unnamed function)."""
        return not any(t[0] == "function" for t in self.transforms)

    def transform_record(self) -> list[list]:
        """The transforms as JSON lists (a function by its name only)."""
        return [list(t[:2]) if t[0] == "function" else list(t) for t in self.transforms]

    def rounded(self, digits: int) -> Derivation:
        """The same derivation with every stored number rounded to ``digits`` significant digits (as written); paired
        values are re-paired from the rounded arms, as a reader of the rows pairs them."""

        def r(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else round_array(a, digits)

        a, b, values = r(self.a), r(self.b), r(self.values)
        if self.pairing and a is not None and b is not None:  # a reader pairs the written arms, not the values
            with np.errstate(divide="ignore", invalid="ignore"):
                values = a - b if self.pairing == "a − b" else np.log(a) - np.log(b)
        return dataclasses.replace(
            self,
            values=values,
            a=a,
            b=b,
            draws=r(self.draws),
            point=None if self.point is None else float(round_array(np.array([self.point]), digits)[0]),
            summaries=tuple(
                (float(round_array(np.array([m]), digits)[0]), float(round_array(np.array([sd]), digits)[0]), n)
                for m, sd, n in self.summaries
            ),
        )


def round_array(values: np.ndarray, digits: int) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (NaN and ±inf kept), exactly as ``f"{x:.{digits}g}"``
    writes them."""
    a = np.asarray(values, dtype=np.float64)
    return np.array([float(f"{x:.{digits}g}") for x in a.ravel()], dtype=np.float64).reshape(a.shape)


def _apply(transform: tuple, value: float, low: float, high: float) -> tuple[float, float, float]:
    kind = transform[0]
    if kind == "clip":
        lower, upper = transform[1], transform[2]
        return value, min(max(low, lower), upper), max(min(high, upper), lower)
    if kind == "affine":
        a, b = transform[1], transform[2]
        ends = (a * low + b, a * high + b)
        return a * value + b, min(ends), max(ends)
    if kind in ("exp", "log"):
        f = math.exp if kind == "exp" else _log
        return f(value), f(low), f(high)
    function, increasing = transform[2], transform[3]
    ends = (function(low), function(high))
    return function(value), *(ends if increasing else ends[::-1])


def _log(x: float) -> float:
    return -math.inf if x == 0 else math.log(x)


def _welch_parts(summaries: Sequence[tuple[float, float, int]]) -> tuple[float, float, float]:
    """``(mean_a − mean_b, variance of it, Satterthwaite df)`` of two summaries; a side with ``n < 2`` or no sd
    enters as a constant."""
    (ma, sa, na), (mb, sb, nb) = summaries
    parts = [(s**2 / n, n) for s, n in ((sa, na), (sb, nb)) if n >= 2 and math.isfinite(s)]
    var = sum(v for v, _ in parts)
    df = var**2 / sum(v**2 / (n - 1) for v, n in parts) if var > 0 else float(min(n for _, n in parts) - 1)
    return ma - mb, var, df


def _transform_of(function: Callable[[float], float], increasing: bool, points: Sequence[float], name: str) -> tuple:
    """The named transform ``function`` is on ``points`` (an affine map, exp or log), else an unnamed function."""
    finite = [x for x in points if math.isfinite(x)]

    def same(f: Callable[[float], float]) -> bool:
        try:
            return all(math.isclose(function(x), f(x), rel_tol=1e-12, abs_tol=1e-12) for x in finite)
        except (ArithmeticError, ValueError, TypeError):
            return False

    try:
        b = float(function(0.0))
        a = float(function(1.0)) - b
    except (ArithmeticError, ValueError, TypeError):
        a = b = math.nan
    if math.isfinite(a) and math.isfinite(b) and a != 0 and same(lambda x: a * x + b):
        return ("affine", a + 0.0, b + 0.0)  # + 0.0: no "-0.0" in the record
    if same(math.exp):
        return ("exp",)
    if all(x > 0 for x in finite) and same(math.log):
        return ("log",)
    return ("function", name or getattr(function, "__name__", "function"), function, increasing)


@dataclass(frozen=True)
class Estimate:
    """Our value with its interval over the named random sources.

    ``value`` is the point estimate (the mean over replicates, or the metric on the full test set); ``low`` /
    ``high`` bound it at ``level``; ``n_replicates`` is ``R`` (1 when only the test set is resampled); ``sources``
    the random sources the interval covers, ``unreplicated`` those behind the number that it does not; ``method``
    one of :data:`METHODS`; ``n_boot`` the bootstrap resamples (0 without a bootstrap). A clustered estimate
    (:data:`CLUSTER_METHOD`): ``n_replicates`` is the number of clusters ``G``, ``cluster_sources`` the sources
    that make a cluster (the first of ``sources``), ``n_units`` the replicates nested in them (0 otherwise).
    ``derivation``: the replicate-level data behind the interval (:class:`Derivation`), set by every constructor
    of this module (an exact or unreplicated value gets its own); ``None`` for an interval built directly from
    numbers, which then cannot be re-derived nor re-read at another level."""

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
    derivation: Derivation | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        checks.choice(self.method, "method", METHODS)
        set_(self, "value", checks.number(self.value, "value"))
        set_(self, "low", checks.number(self.low, "low", finite=False))
        set_(self, "high", checks.number(self.high, "high", finite=False))
        if not self.low <= self.value <= self.high:
            raise ValueError(f"low={self.low} <= value={self.value} <= high={self.high} does not hold")
        set_(self, "n_replicates", checks.count(self.n_replicates, "n_replicates", maximum=10**12))
        set_(self, "level", checks.level(self.level))
        set_(self, "n_boot", checks.count(self.n_boot, "n_boot", minimum=0, maximum=10**12))
        set_(self, "n_units", checks.count(self.n_units, "n_units", minimum=0, maximum=10**12))
        for name in ("sources", "unreplicated", "cluster_sources"):
            set_(self, name, checks.names(getattr(self, name), name))
        if self.derivation is not None and not isinstance(self.derivation, Derivation):
            raise ValueError(f"derivation: expected a Derivation or None, got {type(self.derivation).__name__}")
        if self.derivation is None and self.method == "exact" and self.low == self.value == self.high:
            set_(self, "derivation", Derivation(EXACT, point=self.value))
        elif self.derivation is None and self.method == "none" and math.isinf(self.low) and math.isinf(self.high):
            set_(self, "derivation", Derivation(ONE_RUN, point=self.value))

    def within(self, lower: float, upper: float) -> Estimate:
        """The estimate with its interval clipped to where the quantity can lie (a rate in ``[0, 1]``, a distance
        ``>= 0``): a t-interval ignores a quantity's range, so on few replicates it can reach past it; clipping moves
        only ends that lie where no value can, so a verdict that reads the interval changes only where the claim's
        band itself reaches past the range. The clip is kept in the derivation (re-derivable)."""
        lower = checks.number(lower, "lower", finite=False)
        upper = checks.number(upper, "upper", finite=False)
        if lower > upper:
            raise ValueError(f"lower={lower} > upper={upper}: expected lower <= upper")
        if not lower <= self.value <= upper:
            raise ValueError(f"value {self.value} lies outside the quantity's range [{lower}, {upper}]")
        transform = ("clip", lower, upper)
        _, low, high = _apply(transform, self.value, self.low, self.high)
        derivation = self.derivation.with_transform(transform) if self.derivation else None
        return dataclasses.replace(self, low=low, high=high, derivation=derivation)

    @property
    def half_width(self) -> float:
        """The larger of the two sides' distances from ``value`` (``inf`` when unbounded)."""
        return max(self.value - self.low, self.high - self.value)

    @property
    def df(self) -> float | None:
        """The degrees of freedom of the interval's t law (Welch: Satterthwaite's; clustered: ``G − 1``), ``None``
        without one (a bootstrap, an exact value) or without a derivation."""
        return self.derivation.df() if self.derivation is not None else None

    @property
    def rederivable(self) -> bool:
        """Whether the replicate data recompute this estimate's numbers (no unnamed map, no number changed after
        it was built)."""
        d = self.derivation
        if d is None or not d.rederivable:
            return False
        return all(_same(x, y) for x, y in zip(d.evaluate(self.level), (self.value, self.low, self.high)))

    def transform_record(self) -> list[list]:
        """What was applied after the interval was computed (the record's ``transform``)."""
        return self.derivation.transform_record() if self.derivation is not None else []

    def at_level(self, level: float) -> Estimate:
        """The same estimate with its interval recomputed at another two-sided ``level`` from its replicate data
        (the family rule of :mod:`pate_study.reporting.verdicts` reads intervals at stricter levels)."""
        level = checks.level(level)
        if self.derivation is None:
            raise ValueError(
                f"at_level: this {self.method} estimate was built without its replicate data (use the constructors of"
                " pate_study.reporting.uncertainty), so it cannot be recomputed at another level"
            )
        value, low, high = self.derivation.evaluate(level)
        return dataclasses.replace(self, value=value, low=low, high=high, level=level)

    def render(self, fmt: str = ".4g") -> str:
        """``"estimate [low, high] over N replicates of SOURCES"`` with the method and level, as INDEX.md shows it
        (a bootstrap: "over B bootstrap resamples of SOURCES"; both combined: "over N replicates of SOURCES and B
        bootstrap resamples of test examples"); the sources the interval omits follow ("not replicated: ...")."""
        checks.text(fmt, "fmt")
        try:
            format(1.0, fmt)
        except ValueError:
            raise ValueError(f"fmt={fmt!r}: expected a number format such as '.4g'") from None
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

    def map(self, function: Callable[[float], float], *, increasing: bool = True, name: str = "") -> Estimate:
        """The estimate of ``function(quantity)`` for a monotone ``function`` (interval ends map to ends; a
        decreasing function swaps them), e.g. ``1 - x`` or ``log``. An affine map, ``exp`` and ``log`` are
        recognised on the estimate's own numbers and kept re-derivable; any other function is named (``name``) in
        the record but cannot be recomputed from the rows."""
        checks.callable_(function, "function")
        increasing = checks.flag(increasing, "increasing")
        checks.text(name, "name", empty=True)
        transform = _transform_of(function, increasing, (self.value, self.low, self.high), name)
        if transform[0] == "affine" and (transform[1] > 0) != increasing:
            raise ValueError(
                f"increasing={increasing}: the function {'increases' if transform[1] > 0 else 'decreases'} (a·x + b"
                f" with a = {transform[1]:g})"
            )
        value, low, high = _apply(transform, self.value, self.low, self.high)
        if transform[0] == "function" and not (low <= value <= high):
            raise ValueError(f"increasing={increasing}: the function does not map the interval's ends in that order")
        derivation = self.derivation.with_transform(transform) if self.derivation else None
        return dataclasses.replace(self, value=value, low=low, high=high, derivation=derivation)


def _same(x: float, y: float) -> bool:
    if math.isinf(x) or math.isinf(y):
        return x == y
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def _estimate(
    derivation: Derivation,
    level: float,
    method: str,
    sources: Sequence[str],
    unreplicated: Sequence[str] = (),
    *,
    n_replicates: int = 1,
    n_boot: int = 0,
    n_units: int = 0,
    cluster_sources: Sequence[str] = (),
) -> Estimate:
    """The :class:`Estimate` a derivation gives at ``level`` (every constructor of this module ends here)."""
    value, low, high = derivation.evaluate(level)
    return Estimate(
        value,
        low,
        high,
        n_replicates,
        tuple(sources),
        method,
        level,
        n_boot,
        tuple(unreplicated),
        n_units,
        tuple(cluster_sources),
        derivation,
    )


def t_bounds(values: Any, level: float = LEVEL, axis: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised t-interval along ``axis``: ``(mean, low, high)`` with half-width
    ``t_{(1+level)/2, R-1} · sd / √R`` (sd ddof 1). NaN replicates are dropped per slice (a replicate that gave no
    number); ±inf is refused; with fewer than two replicates left the bounds are ``-inf`` / ``+inf`` (no spread
    measured)."""
    level = checks.level(level)
    a = checks.array(values, "values", ndim=None, nan=True)
    try:
        a = np.moveaxis(a, checks.count(axis, "axis", minimum=-a.ndim, maximum=a.ndim - 1), -1)
    except ValueError:
        raise ValueError(f"axis={axis!r}: expected an axis of the {a.ndim}-d values") from None
    n = np.isfinite(a).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.nansum(np.where(np.isfinite(a), a, 0.0), -1) / np.maximum(n, 1), np.nan)
        sq = np.nansum(np.where(np.isfinite(a), (a - mean[..., None]) ** 2, 0.0), -1)
        sd = np.sqrt(sq / np.maximum(n - 1, 1))
        half = student_t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(np.maximum(n, 1))
    half = np.where(n >= 2, half, np.inf)
    return mean, mean - half, mean + half


def _replicates(values: Any, name: str) -> np.ndarray:
    """A 1-d array of replicate values with at least one number (NaN allowed: dropped; ±inf refused)."""
    a = checks.array(values, name, ndim=1, nan=True)
    if not np.isfinite(a).any():
        raise ValueError(f"{name}: no replicate gave a number (all NaN)")
    return a


def t_interval(
    values: Sequence[float], sources: Sequence[str], *, level: float = LEVEL, unreplicated: Sequence[str] = ()
) -> Estimate:
    """The :class:`Estimate` of a mean over ``R`` replicate values (one per replicate of ``sources``): a t-interval;
    NaN replicates are dropped (a replicate that gave no number), an infinite one is refused; a single replicate
    gives ``method="none"`` (unbounded)."""
    a = _replicates(values, "values")
    sources, unreplicated = checks.names(sources, "sources"), checks.names(unreplicated, "unreplicated")
    return _t_estimate(Derivation(MEAN, values=a), checks.level(level), sources, unreplicated)


def _t_estimate(derivation: Derivation, level: float, sources: tuple, unreplicated: tuple) -> Estimate:
    """The t-interval estimate of a derivation over replicate values (one finite replicate: unbounded)."""
    finite = derivation.values[np.isfinite(derivation.values)]
    if finite.size < 2:
        return dataclasses.replace(
            unreplicated_estimate(float(finite[0]), [*unreplicated, *sources]),
            derivation=dataclasses.replace(derivation, statistic=ONE_RUN, point=float(finite[0])),
        )
    return _estimate(derivation, level, "t-interval", sources, unreplicated, n_replicates=int(finite.size))


def _arms(a: Any, b: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = checks.array(a, "a", ndim=1, nan=True), checks.array(b, "b", ndim=1, nan=True)
    if a.shape != b.shape:
        raise ValueError(f"a, b: expected two arms over the same {what}, got shapes {a.shape} and {b.shape}")
    return a, b


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    sources: Sequence[str],
    *,
    level: float = LEVEL,
    unreplicated: Sequence[str] = (),
) -> Estimate:
    """The estimate of ``mean(a − b)`` over paired replicates (replicate ``r`` of both arms shares its seeds and
    partition, so the shared part cancels): a t-interval of the per-replicate differences (a pair with a NaN arm
    is dropped)."""
    a, b = _arms(a, b, "replicates")
    diff = _replicates(a - b, "a − b")
    derivation = Derivation(MEAN, values=diff, a=a, b=b, pairing="a − b")
    return _t_estimate(
        derivation, checks.level(level), checks.names(sources, "sources"), checks.names(unreplicated, "unreplicated")
    )


def bootstrap_rows(n_examples: int, n_boot: int, seed: int) -> np.ndarray:
    """``[n_boot, n_examples]`` row indices drawn with replacement from ``numpy.random.default_rng(seed)``: the
    same resamples for every arm scored on the same test set (a paired bootstrap). At most
    :data:`~pate_study.reporting.checks.MAX_CELLS` indices."""
    n_examples = checks.count(n_examples, "n_examples", maximum=checks.MAX_CELLS)
    n_boot = checks.count(n_boot, "n_boot")
    if n_examples * n_boot > checks.MAX_CELLS:
        raise ValueError(
            f"n_boot={n_boot} x n_examples={n_examples}: expected at most {checks.MAX_CELLS:,} row indices in all"
        )
    return np.random.default_rng(checks.seed(seed)).integers(0, n_examples, (n_boot, n_examples))


def bootstrap_weights(rows: np.ndarray) -> np.ndarray:
    """The resamples of :func:`bootstrap_rows` as counts ``[n_boot, n_examples]`` (how often each example is
    drawn): a metric that is a sum over examples is then one matrix product per resample set."""
    r = checks.array(rows, "rows", ndim=2)
    if not np.all(r == np.floor(r)) or r.min() < 0:
        raise ValueError("rows: expected non-negative integer row indices (bootstrap_rows)")
    n = r.shape[1]
    if r.max() >= n:
        raise ValueError(f"rows: expected indices below the {n} examples of a resample, got {int(r.max())}")
    ri = r.astype(np.int64)
    return np.stack([np.bincount(x, minlength=n) for x in ri]).astype(np.float64)


def percentile_bounds(draws: Any, level: float = LEVEL, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised percentile interval of bootstrap ``draws`` along ``axis`` (NaN draws ignored: a resample on which
    the statistic is undefined; numpy's linear quantiles)."""
    level = checks.level(level)
    d = checks.array(draws, "draws", ndim=None, nan=True, inf=True)
    try:
        axis = checks.count(axis, "axis", minimum=-d.ndim, maximum=d.ndim - 1)
    except ValueError:
        raise ValueError(f"axis={axis!r}: expected an axis of the {d.ndim}-d draws") from None
    with np.errstate(invalid="ignore"), _quiet_nan():
        q = np.nanquantile(d, [0.5 - level / 2, 0.5 + level / 2], axis=axis)
    return q[0], q[1]


@contextlib.contextmanager
def _quiet_nan() -> Iterator[None]:
    """Silence numpy's "All-NaN slice" / "Mean of empty slice" warnings (the result is NaN, which callers check)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def bootstrap_draws(metric: Callable[..., float], arrays: Sequence[np.ndarray], rows: np.ndarray) -> np.ndarray:
    """``metric(*(a[r] for a in arrays))`` for every resample ``r`` of ``rows`` (:func:`bootstrap_rows`)."""
    checks.callable_(metric, "metric")
    arrays = _example_arrays(arrays)
    r = np.asarray(rows)
    if r.ndim != 2 or r.dtype.kind not in "iu":
        raise ValueError(f"rows: expected [n_boot, n] integer row indices (bootstrap_rows), got shape {r.shape}")
    n = len(arrays[0])
    if r.size and (r.min() < 0 or r.max() >= n):
        raise ValueError(f"rows: expected indices into the {n} examples")
    return np.array([metric(*(a[x] for a in arrays)) for x in r], dtype=np.float64)


def _example_arrays(arrays: Any) -> list[np.ndarray]:
    if isinstance(arrays, np.ndarray) or not isinstance(arrays, (list, tuple)) or not arrays:
        raise ValueError("arrays: expected a non-empty list of per-example arrays (rows = examples)")
    out = [np.asarray(a) for a in arrays]
    if any(a.ndim < 1 for a in out):
        raise ValueError("arrays: expected per-example arrays (rows = examples), got a scalar")
    lengths = [len(a) for a in out]
    if len(set(lengths)) != 1 or lengths[0] < 1:
        raise ValueError(f"arrays: expected arrays of the same number (>= 1) of examples, got lengths {lengths}")
    return out


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
    checks.callable_(metric, "metric")
    arrays = _example_arrays(arrays)
    value = checks.number(metric(*arrays), "metric(full sample)")
    return from_bootstrap(
        value,
        bootstrap_draws(metric, arrays, bootstrap_rows(len(arrays[0]), n_boot, seed)),
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
    """An :class:`Estimate` from a full-sample ``value`` and its bootstrap ``draws`` (``[n_boot]``; NaN draws
    ignored, ±inf refused; percentile interval, widened to contain ``value`` if a skewed resample distribution
    leaves it outside). ``n_boot`` counts the draws that gave a number."""
    value = checks.number(value, "value")
    d = checks.array(draws, "draws", ndim=1, nan=True)
    if d.size > checks.MAX_RESAMPLES:
        raise ValueError(f"draws: expected at most {checks.MAX_RESAMPLES:,} draws, got {d.size:,}")
    if not np.isfinite(d).any():
        raise ValueError("draws: no resample gave a number (all NaN)")
    return _estimate(
        Derivation(PERCENTILE, draws=d, point=value),
        checks.level(level),
        "percentile bootstrap",
        checks.names(sources, "sources"),
        checks.names(unreplicated, "unreplicated"),
        n_boot=int(np.isfinite(d).sum()),
    )


def combined_bounds(replicates: Any, draws: Any, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised :func:`combined_interval`: ``replicates`` ``[..., R]`` (each replicate's metric on the full test
    set), ``draws`` ``[n_boot, ..., R]`` (each replicate's metric on the same resampled rows). Returns
    ``(mean, low, high)`` of the mean over replicates; see the module's docstring for how the two combine."""
    r = checks.array(replicates, "replicates", ndim=None, nan=True)
    d = checks.array(draws, "draws", ndim=None, nan=True)
    if d.shape[1:] != r.shape:
        raise ValueError(f"draws: expected shape [n_boot, *{list(r.shape)}] (one row per resample), got {d.shape}")
    mean, t_low, _ = t_bounds(r, level)
    h_t = np.where(np.isfinite(t_low), mean - t_low, 0.0)  # one replicate: no replicate spread measured
    with _quiet_nan():
        boot_mean = np.nanmean(d, axis=-1)  # [n_boot, ...]: the replicate mean per resample
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
    (:func:`bootstrap_rows`; ``[n_boot]`` also accepted when ``R = 1``). Interval: the t-interval half-width and
    the percentile bootstrap's half-widths of the replicate mean added in quadrature, per side (module docstring).
    With ``R = 1`` it is the bootstrap alone and the replicated sources are reported as not replicated.
    ``resampled`` names what the bootstrap resamples (the test examples, or e.g. :data:`POOL_QUERIES`); it is the
    estimate's last source. NaN replicates or draws (no number) are dropped from the means; ±inf refused."""
    r = _replicates(replicates, "replicates")
    d = checks.array(draws, "draws", ndim=(1, 2), nan=True)
    if d.ndim == 1 and r.size == 1:
        d = d[:, None]
    if d.ndim != 2 or d.shape[1] != r.size:
        raise ValueError(
            f"draws: expected shape [n_boot, {r.size}] (one column per replicate, the same resampled rows), got"
            f" {d.shape}"
        )
    if d.shape[0] > checks.MAX_RESAMPLES:
        raise ValueError(f"draws: expected at most {checks.MAX_RESAMPLES:,} resamples, got {d.shape[0]:,}")
    sources, unreplicated = checks.names(sources, "sources"), checks.names(unreplicated, "unreplicated")
    resampled = checks.text(resampled, "resampled")
    level = checks.level(level)
    with _quiet_nan():
        boot_mean = np.nanmean(d, axis=1)  # the replicate mean per resample
    if not np.isfinite(boot_mean).any():
        raise ValueError("draws: no resample gave a number (all NaN)")
    derivation = Derivation(COMBINED, values=r, draws=boot_mean)
    n = int(r.size)
    if n < 2:
        return _estimate(
            derivation,
            level,
            "percentile bootstrap",
            (resampled,),
            tuple(dict.fromkeys([*unreplicated, *sources])),
            n_boot=d.shape[0],
        )
    return _estimate(
        derivation,
        level,
        "t-interval + percentile bootstrap",
        (*sources, resampled),
        unreplicated,
        n_replicates=n,
        n_boot=d.shape[0],
    )


def one_run_range(draws: Any, sources: Sequence[str], level: float = LEVEL) -> Estimate:
    """Where *one run* of a randomised mechanism falls: the central ``level`` range of ``R`` draws of its outcome
    (empirical quantiles (1 ± level)/2, numpy's linear rule; the value is the median). Not an interval for a mean:
    the range a single run's number lands in, for asking whether a printed number can be one run of the mechanism
    (a claim of kind ``"one-run"`` in :mod:`pate_study.reporting.claims`). ``draws``: ``[R]`` finite, ``R >= 2``."""
    d = checks.array(draws, "draws", ndim=1, min_size=2)
    if d.size > checks.MAX_RESAMPLES:
        raise ValueError(f"draws: expected at most {checks.MAX_RESAMPLES:,} draws, got {d.size:,}")
    return _estimate(
        Derivation(CENTRAL_RANGE, draws=d),
        checks.level(level),
        ONE_RUN_METHOD,
        checks.names(sources, "sources"),
        n_replicates=int(d.size),
    )


def exact(value: float) -> Estimate:
    """A number with no random source behind it (e.g. an ε computed from fixed inputs): a zero-width interval."""
    value = checks.number(value, "value")
    return Estimate(value, value, value, 1, (), "exact", derivation=Derivation(EXACT, point=value))


def unreplicated(value: float, sources: Sequence[str]) -> Estimate:
    """One run of ``sources`` with nothing replicated: the value with an unbounded interval (every claim on it is
    inconclusive), the sources named as not replicated."""
    value = checks.number(value, "value")
    return Estimate(
        value,
        -math.inf,
        math.inf,
        1,
        (),
        "none",
        unreplicated=checks.names(sources, "sources"),
        derivation=Derivation(ONE_RUN, point=value),
    )


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
    a, b = _arms(a, b, "replicates")
    if np.any(a <= 0) or np.any(b <= 0):
        raise ValueError("a, b: expected positive replicate values (a ratio is read through its logarithm)")
    logs = _replicates(np.log(a) - np.log(b), "log a − log b")
    derivation = Derivation(MEAN, values=logs, a=a, b=b, pairing="log a − log b")
    e = _t_estimate(
        derivation, checks.level(level), checks.names(sources, "sources"), checks.names(unreplicated, "unreplicated")
    )
    return e.map(math.exp)


def _summary(mean: Any, sd: Any, n: Any, where: str) -> tuple[float, float, int]:
    """A summary ``(mean, sd, n)`` checked: a finite mean, a non-negative sd (NaN: no spread measured), an integer
    ``n >= 1``."""
    mean = checks.number(mean, f"{where}mean")
    sd = checks.number(sd, f"{where}sd", finite=True, allow_nan=True)
    if sd < 0:
        raise ValueError(f"{where}sd={sd}: expected a standard deviation >= 0")
    n = checks.count(n, f"{where}n", maximum=10**12)
    return mean, sd, n


def t_interval_from_summary(
    mean: float, sd: float, n: int, sources: Sequence[str], *, level: float = LEVEL, unreplicated: Sequence[str] = ()
) -> Estimate:
    """:func:`t_interval` from a table's summary of ``n`` replicates (their ``mean`` and ``sd`` with ddof 1): with
    ``n < 2`` or a NaN sd nothing was replicated (``method="none"``, unbounded, the sources named unreplicated).
    Prefer :func:`t_interval` on the replicates themselves: a summary cannot be re-derived from replicate rows."""
    mean, sd, n = _summary(mean, sd, n, "")
    sources, unreplicated = checks.names(sources, "sources"), checks.names(unreplicated, "unreplicated")
    if n < 2 or not math.isfinite(sd):
        return unreplicated_estimate(mean, [*unreplicated, *sources])
    derivation = Derivation(SUMMARY, summaries=((mean, sd, n),))
    return _estimate(derivation, checks.level(level), "t-interval", sources, unreplicated, n_replicates=n)


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
    arms = []
    for name, arm in (("a", a), ("b", b)):
        if not isinstance(arm, (tuple, list)) or len(arm) != 3:
            raise ValueError(f"{name}: expected (mean, sd, n), got {arm!r}"[:120])
        arms.append(_summary(*arm, f"{name}: "))
    (ma, sa, na), (mb, sb, nb) = arms
    sources, unreplicated = checks.names(sources, "sources"), checks.names(unreplicated, "unreplicated")
    level = checks.level(level)
    replicated = [n >= 2 and math.isfinite(s) for _, s, n in arms]
    missing = tuple(
        dict.fromkeys(
            [*unreplicated, *(() if all(replicated) else (f"{s} of one side (a single run)" for s in sources))]
        )
    )
    if not any(replicated):
        return unreplicated_estimate(ma - mb, missing)
    derivation = Derivation(WELCH, summaries=tuple(arms))
    n = min(n for (_, _, n), ok in zip(arms, replicated) if ok)
    return _estimate(derivation, level, "t-interval", sources, missing, n_replicates=n)


def unreplicated_estimate(value: float, sources: Sequence[str]) -> Estimate:
    """:func:`unreplicated` (an alias whose name does not shadow an ``unreplicated=`` argument)."""
    return unreplicated(value, sources)


def cluster_means(values: Any, clusters: Any) -> np.ndarray:
    """The mean of the finite ``values`` of each cluster (``clusters``: one label per value), in sorted label
    order; clusters with no finite value are left out."""
    a = checks.array(values, "values", ndim=1, nan=True)
    labels = checks.labels(clusters, "clusters", a.size)
    finite = np.isfinite(a)
    groups, inverse = np.unique(labels[finite], return_inverse=True)
    sums = np.bincount(inverse, weights=a[finite], minlength=groups.size)
    return sums / np.bincount(inverse, minlength=groups.size)


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
    NaN values are dropped (and a cluster left with none); ±inf is refused."""
    a = _replicates(values, "values")
    labels = checks.labels(clusters, "clusters", a.size)
    return _clustered(
        Derivation(CLUSTER_MEANS, values=a, clusters=labels), cluster_sources, unit_sources, level, unreplicated
    )


def _clustered(
    derivation: Derivation, cluster_sources: Any, unit_sources: Any, level: Any, unreplicated: Any
) -> Estimate:
    cluster_sources = checks.names(cluster_sources, "cluster_sources")
    unit_sources = checks.names(unit_sources, "unit_sources")
    unreplicated = checks.names(unreplicated, "unreplicated")
    level = checks.level(level)
    a, labels = derivation.values, derivation.clusters
    finite = np.isfinite(a)
    groups, sizes = np.unique(labels[finite], return_counts=True)
    as_mean = dataclasses.replace(derivation, statistic=MEAN)
    if groups.size < 2:
        return _t_estimate(as_mean, level, unit_sources, (*unreplicated, *cluster_sources))
    if np.all(sizes == 1):
        return _t_estimate(as_mean, level, (*cluster_sources, *unit_sources), unreplicated)
    return _estimate(
        derivation,
        level,
        CLUSTER_METHOD,
        (*cluster_sources, *unit_sources),
        unreplicated,
        n_replicates=int(groups.size),
        n_units=int(finite.sum()),
        cluster_sources=cluster_sources,
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
    a, b = _arms(a, b, "units")
    diff = _replicates(a - b, "a − b")
    labels = checks.labels(clusters, "clusters", diff.size)
    derivation = Derivation(CLUSTER_MEANS, values=diff, clusters=labels, a=a, b=b, pairing="a − b")
    return _clustered(derivation, cluster_sources, unit_sources, level, unreplicated)


def cluster_bootstrap_rows(clusters: Sequence[Any], n_boot: int, seed: int) -> list[np.ndarray]:
    """``n_boot`` two-stage resamples of units nested in clusters, from ``numpy.random.default_rng(seed)``: draw the
    clusters with replacement, then within each drawn cluster its units with replacement (Davison & Hinkley 1997,
    *Bootstrap Methods and their Application*, §3.8, resampling both stages; it tends to overstate the variance
    slightly, the safe side). Each resample is an index array into the units (sizes vary when clusters do). With
    one cluster it is the ordinary bootstrap of the units. ``n_boot`` times the units at most
    :data:`~pate_study.reporting.checks.MAX_CELLS` (checked before any draw)."""
    if isinstance(clusters, (str, bytes)) or clusters is None:
        raise ValueError(f"clusters: expected a 1-d array of labels, got {type(clusters).__name__}")
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size < 1:
        raise ValueError(f"clusters: expected a 1-d array of at least one label, got shape {labels.shape}")
    labels = checks.labels(labels, "clusters", labels.size)
    n_boot = checks.count(n_boot, "n_boot")
    members = [np.flatnonzero(labels == g) for g in np.unique(labels)]
    # a resample holds sum of the drawn clusters' sizes: at most n_boot x the largest cluster x G units
    most = n_boot * max(m.size for m in members) * len(members)
    if most > checks.MAX_CELLS:
        raise ValueError(
            f"n_boot={n_boot}: {len(members)} clusters of up to {max(m.size for m in members)} units would draw up to"
            f" {most:,} indices; expected at most {checks.MAX_CELLS:,}"
        )
    rng = np.random.default_rng(checks.seed(seed))
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
    checks.callable_(metric, "metric")
    v = checks.array(values, "values", ndim=1)
    labels = checks.labels(clusters, "clusters", v.size)
    cluster_sources = checks.names(cluster_sources, "cluster_sources")
    unit_sources = checks.names(unit_sources, "unit_sources")
    unreplicated = checks.names(unreplicated, "unreplicated")
    one = np.unique(labels).size < 2
    rows = cluster_bootstrap_rows(labels, n_boot, seed)
    draws = np.array([metric(v[r]) for r in rows], dtype=np.float64)
    return from_bootstrap(
        checks.number(metric(v), "metric(values)"),
        draws,
        level=level,
        sources=unit_sources if one else (*cluster_sources, *unit_sources),
        unreplicated=(*unreplicated, *cluster_sources) if one else unreplicated,
    )


def wald_equal_means(values: np.ndarray, draws: np.ndarray, n_examples: int | None = None) -> tuple[float, int, float]:
    """``(W, df, p)``: the Wald chi-squared statistic of "the ``k`` means are equal" for estimates ``values``
    (``[k]``) whose covariance is that of ``draws`` (``[n_boot, k]``, the same resamples for every group), its
    degrees of freedom and p-value. ``W = (Cθ)ᵀ (C Σ Cᵀ)⁺ (Cθ)`` with ``C`` the ``k − 1`` contrasts of each group
    against the last (any basis of contrasts gives the same ``W``), df the rank ``r`` of ``C Σ Cᵀ`` (``k − 1``
    unless the draws leave a contrast without noise; a non-zero difference along such a contrast gives
    ``W = inf``). p: ``P[χ²_r > W]``; with ``n_examples`` (the resampled units behind the covariance, ``ν = n − 1``)
    Hotelling's calibration for a covariance estimated from them (Hotelling 1931, *Ann. Math. Statist.* 2:360-378):
    ``P[F_{r, ν−r+1} > W (ν − r + 1) / (ν r)]``, which a covariance from a few hundred examples needs (χ² alone
    then rejects a true null 6-8 % of the time at 5 %)."""
    k = values.size
    cov = np.cov(draws, rowvar=False, ddof=1).reshape(k, k)
    contrasts = np.hstack([np.eye(k - 1), -np.ones((k - 1, 1))])
    d = contrasts @ values
    eigen, vectors = np.linalg.eigh(contrasts @ cov @ contrasts.T)
    keep = eigen > max(eigen.max(), 0.0) * k * 1e-12
    z = vectors[:, keep].T @ d
    residual = d - vectors[:, keep] @ z
    df = int(keep.sum())
    if np.linalg.norm(residual) > 1e-9 * np.linalg.norm(values) + 1e-300:
        return math.inf, max(df, 1), 0.0
    if df == 0:
        return 0.0, 1, 1.0
    statistic = float(np.sum(z**2 / eigen[keep]))
    if n_examples is None:
        return statistic, df, float(chi2.sf(statistic, df))
    nu = n_examples - 1
    return statistic, df, float(f_law.sf(statistic * (nu - df + 1) / (nu * df), df, nu - df + 1))


@dataclass(frozen=True, eq=False)
class HeterogeneityTest:
    """The Wald chi-squared test that ``k`` estimates have equal means (:func:`heterogeneity_test`): ``statistic``
    W, ``df``, ``p_value``; ``values`` ``[k]`` and ``draws`` ``[n_boot, k]`` are the data it was computed from;
    ``groups`` the groups' names; ``sources`` what the bootstrap resamples (and the groups' replicated sources),
    ``unreplicated`` what it does not. Judged by a claim of kind ``"homogeneity"``
    (:mod:`pate_study.reporting.claims`)."""

    statistic: float
    df: int
    p_value: float
    values: np.ndarray
    draws: np.ndarray
    sources: tuple[str, ...]
    groups: tuple[str, ...] = ()
    unreplicated: tuple[str, ...] = ()
    method: str = WALD_METHOD
    n_examples: int | None = None

    @property
    def n_boot(self) -> int:
        return int(self.draws.shape[0])

    def render(self, fmt: str = ".4g") -> str:
        """ "Wald χ² = W on df df, p = P: equal means of the k groups ..." as INDEX.md shows it."""
        k = self.values.size
        names = f" ({', '.join(self.groups)})" if self.groups and len(", ".join(self.groups)) < 80 else ""
        text = (
            f"Wald χ² = {self.statistic:{fmt}} on {self.df} df, p = {self.p_value:.2g}: equal means of {k} groups"
            f"{names} ({format(min(self.values), fmt)} to {format(max(self.values), fmt)}), covariance over"
            f" {self.n_boot} shared bootstrap resamples of {', '.join(self.sources) or 'no source'}"
        )
        return text + (f"; not replicated: {', '.join(self.unreplicated)}" if self.unreplicated else "")

    def as_record(self) -> dict[str, Any]:
        """The record's evidence keys (``value`` is the statistic; no interval)."""
        return {
            "value": self.statistic,
            "low": None,
            "high": None,
            "method": self.method,
            "level": None,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "n_replicates": int(self.values.size),
            "n_units": 0,
            "n_boot": self.n_boot,
            "sources": list(self.sources),
            "unreplicated": list(self.unreplicated),
            "cluster_sources": [],
            "groups": list(self.groups),
            "n_examples": self.n_examples,
            "transform": [],
        }


def heterogeneity_test(
    values: Sequence[float],
    draws: Any,
    sources: Sequence[str],
    *,
    groups: Sequence[str] = (),
    unreplicated: Sequence[str] = (),
    n_examples: int | None = None,
) -> HeterogeneityTest:
    """Test that ``k`` groups' estimates have equal means when they share one test set: ``values`` ``[k]`` each
    group's statistic on the full test set, ``draws`` ``[n_boot, k]`` each group's statistic on the same resampled
    rows (:func:`bootstrap_rows`), whose covariance estimates that of the ``k`` estimates (Efron & Tibshirani 1993,
    §6; the groups are correlated through the shared test set). The Wald test of the ``k − 1`` contrasts
    (:func:`wald_equal_means`; Wald 1943, *Trans. AMS* 54:426-482; Rao 1973, *Linear Statistical Inference*,
    §6e) is Cochran's Q (Cochran 1954, *Biometrics* 10:101-129: ``Σ w_i (θ_i − θ̄_w)²`` with ``w_i`` the inverse
    variances) when the estimates are independent, and generalises it to correlated ones; under equal means ``W``
    is approximately chi-squared with ``k − 1`` df. ``n_boot`` must exceed ``k`` (a covariance of full rank); a
    few hundred per group keep the estimated covariance's noise small. ``n_examples``: the number of test examples
    the bootstrap resamples; given, the p-value takes Hotelling's F calibration for a covariance estimated from them
    (:func:`wald_equal_means`), which keeps the size near 5 % on a test set of a few hundred examples."""
    v = checks.array(values, "values", ndim=1, min_size=2)
    d = checks.array(draws, "draws", ndim=2)
    k = v.size
    if d.shape[1] != k:
        raise ValueError(f"draws: expected shape [n_boot, {k}] (one column per group), got {d.shape}")
    if not k + 1 <= d.shape[0] <= checks.MAX_RESAMPLES:
        raise ValueError(
            f"draws: expected between {k + 1} and {checks.MAX_RESAMPLES:,} resamples (more than the {k} groups), got"
            f" {d.shape[0]}"
        )
    groups = checks.names(groups, "groups")
    if groups and len(groups) != k:
        raise ValueError(f"groups: expected {k} names (one per value), got {len(groups)}")
    if n_examples is not None:
        n_examples = checks.count(n_examples, "n_examples", minimum=k + 1, maximum=checks.MAX_CELLS)
    statistic, df, p = wald_equal_means(v, d, n_examples)
    return HeterogeneityTest(
        statistic,
        df,
        p,
        v,
        d,
        checks.names(sources, "sources"),
        groups,
        checks.names(unreplicated, "unreplicated"),
        n_examples=n_examples,
    )
