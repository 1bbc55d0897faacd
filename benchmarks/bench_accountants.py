"""Benchmark: vectorised data-dependent GNMax RDP accountant vs a per-query Python loop.

Computes the data-dependent RDP of GNMax (Papernot et al. 2018, Theorem 6 with
Proposition 7's q and Proposition 10's orders) for ``--queries`` vote vectors
× the paper2018 order grid, composed over queries and converted to (ε, δ), with

* ``pate_study.privacy.rdp.gnmax_epsilon`` (vectorised over queries × orders), and
* loop A: a straightforward Python loop over queries and orders with scalar
  ``math`` (the style of the 2017 reference code's moments loop), and
* loop B: a Python loop over queries with numpy over the orders (the style of
  the 2018 reference code),

both written here independently of the package. Each loop is timed on the
first ``--scalar-loop-queries`` / ``--loop-queries`` queries and its per-query
time extrapolated to ``--queries`` (keeps the run short); the largest relative
difference between the per-order RDP totals is computed on that subset. Every
timing is the best of ``--repeats`` runs (the machine may be shared).

``--hard`` uses votes where every query is in Theorem 6's range up to order ≥ 500
(2,000 teachers split between two classes, top class 1,200–2,000 votes).

``--multilabel`` times the multi-label accountants instead: 5,000 queries × 160
labels of 50 seeded teachers × the paper2018 grid, one configuration per line:
``bound_forensics.multilabel_bounds`` (all five bounds, data-dependent and data-independent) for
GNThreshold and Confident-GNThreshold, and the three later mechanisms of ``multiwinner``
(Binary voting plain and confident with both costs, τ voting jointly and per label, Powerset voting
from cached set counts) and the adaptive-k release's accountant. Vote summaries (counts, clipped sums, set counts) are
computed once, outside the timings, as a notebook caches them.

Usage::

    python benchmarks/bench_accountants.py [--queries 100000] [--loop-queries 2000] [--scalar-loop-queries 300] [--hard]
    python benchmarks/bench_accountants.py --multilabel [--queries 5000] [--labels 160]
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from scipy.special import log_ndtr

from pate_study.experiments.audioset import bound_forensics
from pate_study.privacy import adaptive_k, multiwinner, rdp
from pate_study.privacy.accounting import ExpectedCost, OrderAtGridEdgeWarning, paper2018_orders
from pate_study.privacy.options import Accounting, Charge, ConfidenceCheck, ConfidenceRule, Threshold
from pate_study.privacy.rdp_curves import theorem6_terms


def make_votes(n_queries: int, n_classes: int, n_teachers: int, seed: int) -> np.ndarray:
    """Seeded vote counts with mixed consensus: multinomial votes under Dirichlet(0.3) class probabilities."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n_classes, 0.3), size=n_queries)
    return rng.multinomial(n_teachers, p)


def make_hard_votes(n_queries: int, n_classes: int, seed: int) -> np.ndarray:
    """Seeded high-consensus votes: 2,000 teachers, top class 1,200–2,000 votes, the rest in the second class."""
    rng = np.random.default_rng(seed)
    top = rng.integers(1200, 2001, n_queries)
    votes = np.zeros((n_queries, n_classes), dtype=np.int64)
    votes[:, 0], votes[:, 1] = top, 2000 - top
    return votes


def best_time(fn, repeats: int) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls and the last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def _log1mexp(x: float) -> float:
    return math.log(-math.expm1(x)) if x > -0.693 else math.log1p(-math.exp(x))


def _scalar_terms(row: np.ndarray, sigma: float) -> tuple:
    """Per-query scalars: log q (Prop. 7), μ1, μ2, ε1, ε2 (Prop. 10) and Theorem 6's conditions."""
    var = sigma**2
    counts = [float(c) for c in row]
    j = max(range(len(counts)), key=counts.__getitem__)
    terms = [float(log_ndtr(-(counts[j] - c) / (math.sqrt(2) * sigma))) for i, c in enumerate(counts) if i != j]
    mx = max(terms)
    logq = min(mx + math.log(sum(math.exp(t - mx) for t in terms)), math.log(1 - 1 / len(counts)))
    mu2 = math.sqrt(var * -logq)
    mu1 = mu2 + 1
    eps1, eps2 = mu1 / var, mu2 / var
    valid = (
        mu2 > 1
        and -logq > eps2
        and logq <= (mu2 - 1) * eps2 - mu2 * (math.log(mu1 / (mu1 - 1)) + math.log(mu2 / (mu2 - 1)))
    )
    return logq, mu1, mu2, eps1, eps2, valid


def loop_rdp_total(votes: np.ndarray, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Per-query loop of the same formulas (reference-code style)."""
    total = np.zeros_like(orders)
    var = sigma**2
    for row in votes:
        logq, mu1, mu2, eps1, eps2, valid = _scalar_terms(row, sigma)
        ret = orders / var
        if valid:
            log1q = _log1mexp(logq)
            log_a = (orders - 1) * (log1q - _log1mexp((logq + eps2) * (1 - 1 / mu2)))
            log_b = (orders - 1) * (eps1 - logq / (mu1 - 1))
            log_s = np.logaddexp(log1q + log_a, logq + log_b)
            mask = orders < mu1
            ret = np.where(mask, np.minimum(ret, log_s / (orders - 1)), ret)
        total += ret
    return total


def scalar_loop_rdp_total(votes: np.ndarray, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Pure-Python loop over queries *and* orders with scalar ``math`` (2017 reference-code style)."""
    total = [0.0] * len(orders)
    var = sigma**2
    for row in votes:
        logq, mu1, mu2, eps1, eps2, valid = _scalar_terms(row, sigma)
        for k, a in enumerate(orders):
            value = a / var
            if valid and a < mu1:
                log1q = _log1mexp(logq)
                la = log1q + (a - 1) * (log1q - _log1mexp((logq + eps2) * (1 - 1 / mu2)))
                lb = logq + (a - 1) * (eps1 - logq / (mu1 - 1))
                hi, lo = max(la, lb), min(la, lb)
                value = min(value, (hi + math.log1p(math.exp(lo - hi))) / (a - 1))
            total[k] += value
    return np.array(total)


def make_teacher_votes(n_queries: int, n_labels: int, n_teachers: int, seed: int) -> np.ndarray:
    """Seeded binary teacher votes [T, n, k]: per label a positive rate near 0 (most), near 1 or undecided."""
    rng = np.random.default_rng(seed)
    u = rng.random((n_queries, n_labels))
    rate = np.where(u < 0.03, 0.9, np.where(u < 0.06, 0.5, 0.02))
    return rng.random((n_teachers, n_queries, n_labels)) < rate[None]


def multilabel_main(args) -> None:
    """Time one configuration of each multi-label accountant on 5,000 × 160 seeded votes."""
    teachers = 50
    n = args.queries
    votes = make_teacher_votes(n, args.labels, teachers, args.seed)
    positives = multiwinner.positive_votes(votes)
    fractions = positives / teachers
    sums = multiwinner.clip_votes(votes, 3.0)
    set_counts, _ = multiwinner.powerset_counts(votes)
    print(
        f"multi-label accountants: {n} queries x {args.labels} labels x {len(paper2018_orders())} orders "
        f"(paper2018), {teachers} teachers; best of {args.repeats}"
    )
    configs = [
        (
            "multilabel_bounds GNThreshold th=0.4 sigma=0.3 (5 bounds)",
            lambda: bound_forensics.multilabel_bounds(
                fractions=fractions, threshold=0.4, sigma=0.3, delta=1e-8, n_teachers=teachers
            ),
        ),
        (
            "multilabel_bounds GNThreshold adaptive sigma=0.3 (5 bounds)",
            lambda: bound_forensics.multilabel_bounds(
                fractions=fractions, threshold=Threshold.ADAPTIVE, sigma=0.3, delta=1e-8, n_teachers=teachers
            ),
        ),
        (
            "multilabel_bounds GNThreshold th=0.5 sigma=0.05 (5 bounds, Theorem 6 possible for vote_fraction)",
            lambda: bound_forensics.multilabel_bounds(
                fractions=fractions, threshold=0.5, sigma=0.05, delta=1e-8, n_teachers=teachers
            ),
        ),
        (
            "multilabel_bounds Confident th=0.4 sigma=0.3 th_c=0.6 sigma_c=0.6 (5 bounds)",
            lambda: bound_forensics.multilabel_bounds(
                fractions=fractions,
                threshold=0.4,
                sigma=0.3,
                delta=1e-8,
                n_teachers=teachers,
                check=ConfidenceCheck(0.6, 0.6, ConfidenceRule.PRINTED),
                charge=Charge(rng=0),
            ),
        ),
        (
            "binary_pate_epsilon sigma=8",
            lambda: multiwinner.binary_pate_epsilon(
                positive_votes=positives, n_teachers=teachers, sigma=8.0, delta=1e-8
            ),
        ),
        (
            "binary_pate_costs T_c=35 sigma1=10 sigma=8 (expected + realised)",
            lambda: multiwinner.binary_pate_costs(
                positive_votes=positives,
                n_teachers=teachers,
                sigma=8.0,
                check=ConfidenceCheck(threshold=35.0, sigma=10.0),
                delta=1e-8,
                rng=0,
            ),
        ),
        (
            "tau_pate_epsilon tau=3 sigma=8",
            lambda: multiwinner.tau_pate_epsilon(
                clipped_sums=sums, threshold=teachers / 2, tau=3.0, sigma=8.0, delta=1e-8
            ),
        ),
        (
            "tau_pate_epsilon tau=3 sigma=8 composition=per_label (capped at the joint bound)",
            lambda: multiwinner.tau_pate_epsilon(
                clipped_sums=sums, threshold=teachers / 2, tau=3.0, sigma=8.0, delta=1e-8, composition="per_label"
            ),
        ),
        (
            "adaptive_k_epsilon sigma=0.35 b=0.19 (data-independent)",
            lambda: adaptive_k.adaptive_k_epsilon(
                fractions=fractions, n_teachers=teachers, sigma=0.35, gumbel_scale=0.19, delta=1e-8
            ),
        ),
        (
            "powerset_pate_epsilon sigma=8 (cached set counts)",
            lambda: multiwinner.powerset_pate_epsilon(
                set_counts=set_counts, n_labels=args.labels, sigma=8.0, delta=1e-8
            ),
        ),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        configs[0][1]()  # first call imports scipy.special lazily; not part of any timing
        for name, fn in configs:
            t, out = best_time(fn, args.repeats)
            if isinstance(out, list):
                eps = ", ".join(f"{r.bound} {r.data_dependent.epsilon:.4g}" for r in out)
            elif isinstance(out, dict):
                eps = ", ".join(
                    f"{k} {v.expected_epsilon:.6g} (expected, not a guarantee)"
                    if isinstance(v, ExpectedCost)
                    else f"{k} {v.epsilon:.6g}"
                    for k, v in out.items()
                )
            else:
                eps = f"{out.epsilon:.6g}"
            print(f"{t:7.3f} s  {name}: eps {eps}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=None, help="default 100000 (5000 with --multilabel)")
    parser.add_argument("--labels", type=int, default=160, help="--multilabel: number of labels")
    parser.add_argument("--multilabel", action="store_true", help="time the multi-label accountants instead")
    parser.add_argument("--loop-queries", type=int, default=2_000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--teachers", type=int, default=250)
    parser.add_argument("--sigma", type=float, default=40.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--scalar-loop-queries", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hard", action="store_true", help="high-consensus votes: Theorem 6 applies to every query")
    args = parser.parse_args()
    if args.multilabel:
        args.queries = args.queries or 5_000
        multilabel_main(args)
        return
    args.queries = args.queries or 100_000

    orders = paper2018_orders()
    if args.hard:
        votes = make_hard_votes(args.queries, args.classes, args.seed)
        teachers = 2000
    else:
        votes = make_votes(args.queries, args.classes, args.teachers, args.seed)
        teachers = args.teachers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)  # the best order may be 2, the grid's first
        t_vec, spent = best_time(
            lambda: rdp.gnmax_epsilon(sigma=args.sigma, delta=args.delta, votes=votes, accounting=Accounting(orders)),
            args.repeats,
        )
    logq = rdp.gnmax_logq(votes, args.sigma)
    n_valid = int(np.count_nonzero(theorem6_terms(logq, 1 / args.sigma**2).valid))

    sub = votes[: args.loop_queries]
    t_loop, loop_total = best_time(lambda: loop_rdp_total(sub, args.sigma, orders), args.repeats)
    t_loop *= args.queries / len(sub)
    vec_total = rdp.total_rdp_data_dependent(rdp.gnmax_logq(sub, args.sigma), 1 / args.sigma**2, orders)
    rel = float(np.max(np.abs(vec_total - loop_total) / np.maximum(np.abs(loop_total), 1e-300)))

    sub_s = votes[: args.scalar_loop_queries]
    t_scalar, scalar_total = best_time(lambda: scalar_loop_rdp_total(sub_s, args.sigma, orders), args.repeats)
    t_scalar *= args.queries / len(sub_s)
    vec_s = rdp.total_rdp_data_dependent(rdp.gnmax_logq(sub_s, args.sigma), 1 / args.sigma**2, orders)
    rel_s = float(np.max(np.abs(vec_s - scalar_total) / np.maximum(np.abs(scalar_total), 1e-300)))

    print(
        f"GNMax data-dependent RDP: {args.queries} queries x {len(orders)} orders (paper2018), "
        f"{args.classes} classes, {teachers} teachers, sigma={args.sigma}; Theorem 6 applies to {n_valid} queries"
    )
    print(f"epsilon={spent.epsilon:.6f} at order {spent.order:g} (delta={args.delta}, basic conversion)")
    print(f"vectorised:          {t_vec:.3f} s (best of {args.repeats})")
    print(
        f"loop A, Python over queries and orders (scalar math): {t_scalar:.1f} s "
        f"(extrapolated from {len(sub_s)} queries, best of {args.repeats}); speed ratio {t_scalar / t_vec:.0f}x; "
        f"max relative diff {rel_s:.2e}"
    )
    print(
        f"loop B, Python over queries, numpy over orders:       {t_loop:.1f} s "
        f"(extrapolated from {len(sub)} queries, best of {args.repeats}); speed ratio {t_loop / t_vec:.0f}x; "
        f"max relative diff {rel:.2e}"
    )


if __name__ == "__main__":
    main()
