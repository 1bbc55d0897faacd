"""Command line: ``python -m pate_study.privacy epsilon ...`` prints one JSON object.

Examples::

    # Visca 2021, web case: data-independent LNMax, integer moments 1..8
    python -m pate_study.privacy epsilon --aggregator lnmax --gamma 0.05 --delta 1e-5 --n-queries 1000
    # same, continuous λ (closed form 20.17427 at λ* = 1.51743)
    python -m pate_study.privacy epsilon --aggregator lnmax --gamma 0.05 --delta 1e-5 --n-queries 1000 \\
        --orders continuous
    # Papernot 2018: data-dependent GNMax on a votes file
    python -m pate_study.privacy epsilon --aggregator gnmax --sigma 40 --delta 1e-5 --votes votes.npy --first 1000
    # confident GNMax: the guarantee of one run (realised cost, check noise drawn with --seed, default 0)
    python -m pate_study.privacy epsilon --aggregator confident-gnmax --threshold 300 --sigma1 150 --sigma2 40 \\
        --delta 1e-5 --votes votes.npy
    # the same, Papernot et al. 2018 Table 2's expected cost (printed as expected_epsilon, not a guarantee)
    python -m pate_study.privacy epsilon --aggregator confident-gnmax --threshold 300 --sigma1 150 --sigma2 40 \\
        --delta 1e-5 --votes votes.npy --cost expected

Confident GNMax with ``--votes`` is charged ``--cost realized`` by default: step 2 only on the queries one run of
the noisy check answers, the check's noise drawn from ``--seed`` (default 0, printed as ``"seed"``), so the printed
ε is the guarantee of that stated, reproducible run. ``--cost expected`` prints Papernot et al. 2018 Table 2's
expected cost (step 2 weighted by Pr[answered]) as ``expected_epsilon`` with ``note`` and no ``epsilon``: it is
not a guarantee.

A data-dependent ``epsilon`` (``--votes``) is printed with a ``note`` saying that it is not publishable as is
(:data:`DATA_DEPENDENT_NOTE`): it is a guarantee for the votes it was computed on, and itself a function of them.

Invalid combinations exit with status 2 and a one-line message on stderr naming the flag; so do a library
refusal (its parameter shown as the flag), an overflow (naming the numeric flags given) and a grid of orders too
long for memory (naming ``--orders``). Ctrl-C prints one line and exits with status 130.

Numbers are checked where they enter, against the ranges the library checks too
(:data:`._validation.PARAMETER_CONSTRAINTS`, one table; :data:`RANGES` is its view by flag): finite, and inside
the range where every accountant computes in double precision without dividing by an underflowed zero (noise
scales ``--sigma``, ``--sigma1``, ``--sigma2`` in [1e-150, 1e150]; ``--gamma`` in [1e-100, 1e5];
``--threshold`` with magnitude at most 1e100; ``--delta`` in (0, 1); counts ``--n-queries``, ``--first``,
``--n-teachers`` from 1 to the largest double, 1.8e308; an ε past the float range is printed as null, below).
A flag given an empty value (``--orders=``, as an unset shell variable gives) is an error, not the default.

The output is strict JSON (RFC 8259; ``json.loads(..., parse_constant=...)`` never needed): a value that is not a
finite number, such as an infinite ε (no finite guarantee), is printed as ``null`` and listed in
``"non_finite"`` as ``"inf"``, ``"-inf"`` or ``"nan"`` under its key, with the reason in ``"non_finite_reason"``.

A ``--votes`` file is checked before any ε is computed (:func:`._validation.load_votes_file`):
it must be a numeric ``.npy`` array whose header agrees with the file's length (CSV, ``.npz``,
pickles, empty, truncated files and headers claiming huge shapes are refused before anything is
allocated; nothing is ever unpickled), holding non-negative integer counts with one total per
row (the number of teachers; ``--n-teachers`` when given). A matrix saved transposed is named as
such with its fix; row totals from 2^53 on are refused (summed without the int64 wrap-around that
would make them look small); a symbolic-link loop is named as such. A ``--threshold`` outside 0..number of
teachers is reported on stderr as a warning (the check then depends on the noise only).
"""

from __future__ import annotations

import argparse
import enum
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

from pate_study.core.errors import one_line
from pate_study.privacy._validation import (
    PARAMETER_CONSTRAINTS,
    PARAMETER_KINDS,
    ThresholdRangeWarning,
    check_threshold,
    load_votes_file,
    number_text,
)
from pate_study.privacy.moments import MOMENTS_ACCOUNTING, moments_epsilon
from pate_study.privacy.options import DEFAULT_ACCOUNTING, Accounting, Conversion, Cost
from pate_study.privacy.rdp import Q_CONDITIONS, Q_VARIANTS, confident_gnmax_epsilon, gnmax_epsilon, lnmax_rdp_epsilon

#: The ``note`` printed beside a data-dependent ``epsilon``, as :class:`~.accounting.ExpectedCost` prints its own
#: beside an expectation: the number is a guarantee for these votes, but publishing it reveals something about them.
DATA_DEPENDENT_NOTE = (
    "data-dependent: the guarantee of a run on these votes, not publishable as is (the epsilon is itself a function "
    "of the private votes; release it privately, e.g. with smooth sensitivity, Papernot et al. 2018, Sec. 4.3 and "
    "App. B)"
)


class Aggregator(enum.StrEnum):
    """The aggregator whose cost is printed: LNMax (Papernot et al. 2017), GNMax and confident GNMax (Papernot et
    al. 2018, Algorithm 1)."""

    LNMAX = "lnmax"
    GNMAX = "gnmax"
    CONFIDENT_GNMAX = "confident-gnmax"


class Accountant(enum.StrEnum):
    """The analysis: the 2017 moments accountant (LNMax only) or the 2018 RDP analysis."""

    MOMENTS2017 = "moments2017"
    RDP2018 = "rdp2018"


AGGREGATORS = tuple(a.value for a in Aggregator)
ACCOUNTANTS = tuple(a.value for a in Accountant)
_PARAMS = {
    Aggregator.LNMAX: ("gamma",),
    Aggregator.GNMAX: ("sigma",),
    Aggregator.CONFIDENT_GNMAX: ("threshold", "sigma1", "sigma2"),
}


def _member_of(kind: type[enum.StrEnum]):
    """argparse type: the member of ``kind`` named by the text, or the text itself, which ``choices`` then refuses
    with argparse's own message (``invalid choice: 'x' (choose from ...)``)."""

    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            return text

    parse.__name__ = kind.__name__
    return parse


def default_accountant(aggregator: Aggregator | str) -> Accountant:
    """The accountant used when ``--accountant`` is not given: the moments accountant for LNMax, RDP otherwise."""
    return Accountant.MOMENTS2017 if aggregator == Aggregator.LNMAX else Accountant.RDP2018


#: Where each numeric flag is accepted: (smallest, largest, what), both ends included; a view of the library's
#: table (:data:`._validation.PARAMETER_CONSTRAINTS`), never a copy of its numbers.
RANGES = {
    flag: (
        PARAMETER_CONSTRAINTS[PARAMETER_KINDS[flag]].low,
        PARAMETER_CONSTRAINTS[PARAMETER_KINDS[flag]].high,
        PARAMETER_CONSTRAINTS[PARAMETER_KINDS[flag]].what,
    )
    for flag in ("gamma", "sigma", "sigma1", "sigma2", "threshold")
}
#: The examples of ``epsilon --help`` (``tests/privacy/test_cli_examples.py`` runs each command line as printed).
EXAMPLES = """\
examples:
  # data-independent LNMax (Visca 2021, web case): 1000 answers with noise Lap(1/0.05), moments accountant,
  # integer orders 1..8; prints {"epsilon": 20.7565..., "order": 2, ...}
  python -m pate_study.privacy epsilon --aggregator lnmax --gamma 0.05 --delta 1e-5 --n-queries 1000
  # confident GNMax (Papernot et al. 2018) on a vote file: the guarantee of one run of the check, drawn with
  # --seed (default 0); prints epsilon, seed and expected_answered (the queries that run answered); add
  # --cost expected for Table 2's expected cost (printed as expected_epsilon, not a guarantee)
  python -m pate_study.privacy epsilon --aggregator confident-gnmax --threshold 200 --sigma1 150 --sigma2 40 \\
      --delta 1e-5 --votes votes.npy

votes.npy holds your own teachers' votes: an integer array saved with numpy.save("votes.npy", votes), one row per
query and one column per class, every row summing to the number of teachers. For the votes released with Papernot
et al. 2018 (250 teachers), run python -m data_recipes prepare pate2018-votes and pass --votes the file
pate2018-votes/svhn.npy (or mnist.npy, adult.npy) of the data folder (PATE_STUDY_DATA).
"""

#: Seed of confident GNMax's check noise when ``--seed`` is not given (printed in the output as ``"seed"``).
DEFAULT_SEED = 0

NON_FINITE_REASON = (
    "a value that is not a finite number is printed as null; an infinite epsilon means no finite "
    "guarantee at this delta for these settings"
)


def _range_help(flag: str, text: str) -> str:
    """``text`` followed by the range the table accepts for ``flag`` (``--help`` shows the library's own range)."""
    interval = PARAMETER_CONSTRAINTS[PARAMETER_KINDS[flag]]
    return f"{text}; {interval.what} in {interval.text()}"


def _ranged(flag: str):
    """argparse type: a finite float accepted by the table entry of ``flag`` (argparse prefixes the message with
    the flag's name)."""
    interval = PARAMETER_CONSTRAINTS[PARAMETER_KINDS[flag.lstrip("-")]]

    def parse(text: str) -> float:
        if not text.strip():
            raise argparse.ArgumentTypeError(
                f"empty value (an unset shell variable?); expected {interval.what} in {interval.text()}"
            )
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        problem = interval.problem(value)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return value

    parse.__name__ = flag
    return parse


def _delta(text: str) -> float:
    """argparse type of ``--delta``: a number in the open interval (0, 1) (the table's ``delta`` entry)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    problem = PARAMETER_CONSTRAINTS["delta"].problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def _count(minimum: int, name: str | None = None):
    """argparse type: an integer >= ``minimum`` (digits only: ``1e3`` and ``10.0`` are refused, not truncated),
    and inside the table entry of ``name`` when given (counts: at most the largest double)."""
    interval = PARAMETER_CONSTRAINTS[PARAMETER_KINDS[name]] if name else None

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {shown!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text}")
        problem = interval.problem(value) if interval else None
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return value

    return parse


def _text(text: str) -> str:
    """argparse type of a free-text flag: not empty (an unset shell variable would otherwise mean the default)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "empty value (an unset shell variable?); give a value or leave the flag out for the default"
        )
    return text


def _path(text: str) -> Path:
    return Path(_text(text))


def strict_json(out: dict) -> str:
    """``out`` as strict JSON: non-finite floats become null, listed in ``non_finite`` with the reason."""
    non_finite: dict[str, str] = {}

    def clean(value, key):
        if isinstance(value, float) and not math.isfinite(value):
            non_finite[key] = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
            return None
        if isinstance(value, dict):
            return {k: clean(v, k if key == "" else f"{key}.{k}") for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            cleaned = [clean(v, f"{key}[{i}]") for i, v in enumerate(value)]
            return cleaned
        return value

    result = clean(out, "")
    if non_finite:
        result["non_finite"] = non_finite
        result["non_finite_reason"] = NON_FINITE_REASON
    return json.dumps(result, allow_nan=False)


class _OneLineParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``prog: error: message; see --help`` (no usage block), status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {one_line(message)}; see {self.prog} --help\n")


def build_parser() -> argparse.ArgumentParser:
    """Argument parser of the ``epsilon`` subcommand."""
    parser = _OneLineParser(prog="python -m pate_study.privacy", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    p = sub.add_parser(
        "epsilon",
        help="privacy cost (epsilon, delta) of PATE aggregators as JSON",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--aggregator", type=_member_of(Aggregator), choices=AGGREGATORS, required=True)
    for flag, text in (
        ("gamma", "LNMax inverse Laplace scale (noise Lap(1/gamma))"),
        ("sigma", "GNMax Gaussian noise standard deviation"),
        ("threshold", "confident GNMax threshold T"),
        ("sigma1", "confident GNMax check noise"),
        ("sigma2", "confident GNMax argmax noise"),
    ):
        p.add_argument(f"--{flag}", type=_ranged(f"--{flag}"), help=_range_help(flag, text))
    p.add_argument("--delta", type=_delta, required=True)
    p.add_argument(
        "--accountant",
        type=_member_of(Accountant),
        choices=ACCOUNTANTS,
        help="default: moments2017 for lnmax, rdp2018 otherwise",
    )
    p.add_argument(
        "--orders",
        type=_text,
        help="'int:A:B', 'continuous' (moments2017 only) or 'paper2018'; "
        "default int:1:8 for moments2017, paper2018 for rdp2018",
    )
    p.add_argument(
        "--conversion",
        choices=[c.value for c in Conversion],
        help=f"RDP -> (eps, delta) (rdp2018 only; default {DEFAULT_ACCOUNTING.conversion.value})",
    )
    p.add_argument(
        "--cost",
        choices=[c.value for c in Cost],
        help="confident-gnmax with --votes: realized (default: the guarantee of "
        "one run, drawn with --seed) or expected (Papernot et al. 2018 Table 2, printed as "
        "expected_epsilon: not a guarantee)",
    )
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--n-queries", type=_count(1, "n_queries"), help="number of queries (data-independent bound)")
    group.add_argument("--votes", type=_path, help=".npy file, rows = per-query vote counts (data-dependent bound)")
    p.add_argument("--first", type=_count(1, "first"), help="use only the first N rows of --votes")
    p.add_argument(
        "--n-teachers", type=_count(1, "n_teachers"), help="number of teachers: every row of --votes must sum to it"
    )
    p.add_argument(
        "--seed",
        type=_count(0),
        help=f"seed of the check noise for --cost realized (default {DEFAULT_SEED}; printed in the output)",
    )
    p.add_argument("--q-condition", choices=Q_CONDITIONS, help="LNMax data-dependent condition (default theorem)")
    p.add_argument("--q-variant", choices=Q_VARIANTS, help="LNMax q bound (default sum)")
    p.add_argument("--include-curves", action="store_true", help="add per-order orders/curve/rdp_or_logmgf")
    return parser


def _validate(args: argparse.Namespace) -> str | None:
    """Return an error message for an invalid combination of flags, or None."""
    needed = _PARAMS[args.aggregator]
    for name in needed:
        if getattr(args, name) is None:
            return f"--aggregator {args.aggregator} needs --{name}"
    for agg, names in _PARAMS.items():
        for name in names:
            if name not in needed and getattr(args, name) is not None:
                return f"--{name} is not a parameter of --aggregator {args.aggregator}"
    accountant = Accountant(args.accountant or default_accountant(args.aggregator))
    if accountant is Accountant.MOMENTS2017:
        if args.aggregator != Aggregator.LNMAX:
            return "--accountant moments2017 analyses LNMax only (use --aggregator lnmax)"
        if args.conversion is not None:
            return "--conversion applies to --accountant rdp2018; moments2017 uses eps = min (logmgf - ln delta)/lambda"
    elif args.orders == "continuous":
        return "--orders continuous is only available with --accountant moments2017"
    if args.votes is None and args.first is not None:
        return "--first needs --votes"
    if args.first is not None and args.first <= 0:
        return "--first: expected a positive integer"
    if args.n_teachers is not None and args.n_teachers <= 0:
        return "--n-teachers: expected a positive integer"
    if args.aggregator != Aggregator.LNMAX and (args.q_condition or args.q_variant):
        return "--q-condition/--q-variant apply to --aggregator lnmax only"
    if args.votes is None and (args.q_condition or args.q_variant):
        return "--q-condition/--q-variant need --votes (data-dependent bound)"
    if args.cost is not None and (args.aggregator != Aggregator.CONFIDENT_GNMAX or args.votes is None):
        return "--cost applies to --aggregator confident-gnmax with --votes"
    if args.seed is not None and (args.aggregator != Aggregator.CONFIDENT_GNMAX or args.votes is None):
        return "--seed applies to --aggregator confident-gnmax with --votes (the seed of the check noise)"
    if args.seed is not None and args.cost == Cost.EXPECTED:
        return "--seed is only used with --cost realized (the default); --cost expected draws no noise"
    return None


def _load_votes(path: Path, first: int | None, n_teachers: int | None) -> np.ndarray:
    """The checked vote matrix of ``--votes`` (see the module docstring), cut to ``--first`` rows."""
    votes = load_votes_file(path, flag="--votes", n_teachers=n_teachers)
    if first is not None:
        if first > votes.shape[0]:
            raise ValueError(
                f"--first {first}: exceeds the {votes.shape[0]} rows of --votes {path}; pass at most {votes.shape[0]}"
            )
        votes = votes[:first]
    return votes


def _check_threshold(args: argparse.Namespace, votes: np.ndarray | None) -> None:
    """Warn (ThresholdRangeWarning) when ``--threshold`` lies outside 0..number of teachers."""
    if args.threshold is None:
        return
    teachers = args.n_teachers or (int(votes[0].sum()) if votes is not None else None)
    what = "the largest vote count of a query" + (f" (0 to the {teachers} teachers)" if teachers else "")
    check_threshold("--threshold", args.threshold, 0.0, teachers if teachers else np.inf, what)


def realized_seed(args: argparse.Namespace) -> int | None:
    """The seed of the check noise a confident-GNMax run on ``--votes`` is charged with: ``--seed``, else
    :data:`DEFAULT_SEED` (``--cost realized`` is the default); None for ``--cost expected`` and without votes."""
    if args.aggregator != Aggregator.CONFIDENT_GNMAX or args.votes is None or args.cost == Cost.EXPECTED:
        return None
    return DEFAULT_SEED if args.seed is None else args.seed


def run(args: argparse.Namespace) -> dict:
    """Compute the privacy cost for parsed arguments and return the JSON-ready dict."""
    accountant = Accountant(args.accountant or default_accountant(args.aggregator))
    seed = realized_seed(args)
    data = (
        {"votes": _load_votes(args.votes, args.first, args.n_teachers)}
        if args.votes is not None
        else {"n_queries": args.n_queries}
    )
    _check_threshold(args, data.get("votes"))
    lnmax_opts = {k: v for k, v in (("q_condition", args.q_condition), ("q_variant", args.q_variant)) if v}
    if accountant is Accountant.MOMENTS2017:
        accounting = MOMENTS_ACCOUNTING if args.orders is None else Accounting(orders=args.orders)
        spent = moments_epsilon(gamma=args.gamma, delta=args.delta, accounting=accounting, **lnmax_opts, **data)
    else:
        accounting = Accounting(
            orders=args.orders or DEFAULT_ACCOUNTING.orders,
            conversion=args.conversion or DEFAULT_ACCOUNTING.conversion,
        )
        common = {"delta": args.delta, "accounting": accounting}
        if args.aggregator == Aggregator.LNMAX:
            spent = lnmax_rdp_epsilon(gamma=args.gamma, **lnmax_opts, **common, **data)
        elif args.aggregator == Aggregator.GNMAX:
            spent = gnmax_epsilon(sigma=args.sigma, **common, **data)
        else:
            spent = confident_gnmax_epsilon(
                threshold=args.threshold,
                sigma1=args.sigma1,
                sigma2=args.sigma2,
                cost=args.cost,
                rng=seed,
                **common,
                **data,
            )
    out = spent.to_dict(include_curves=args.include_curves)
    if "epsilon" in out and spent.data_dependent:
        out["note"] = DATA_DEPENDENT_NOTE
    if seed is not None:
        out["seed"] = seed
    out["aggregator"] = Aggregator(args.aggregator).value
    if args.votes is not None:
        out["votes_file"] = str(args.votes)
    return out


def as_flag_message(message: str, args: argparse.Namespace) -> str:
    """A library message that starts with a parameter's name (``orders: expected ...``) with the name written as
    the flag the user typed (``--orders: expected ...``); other messages unchanged."""
    name, sep, rest = message.partition(": ")
    if sep and name in vars(args) and name != "command":
        return f"--{name.replace('_', '-')}: {rest}"
    return message


def overflow_message(exc: ArithmeticError, args: argparse.Namespace) -> str:
    """One line for an overflow the per-flag ranges did not prevent, naming only the numeric flags given on this
    command line (never a flag the user did not pass), with their values."""
    given = [
        f"--{name.replace('_', '-')} {number_text(getattr(args, name))}"
        for name in (*RANGES, "n_queries", "first")
        if isinstance(getattr(args, name, None), (int, float))
    ]
    return (
        f"epsilon cannot be computed in double precision for {', '.join(given) or 'these settings'} "
        f"({type(exc).__name__}: {one_line(exc)}), although each lies in its documented range (see --help); "
        f"please report it with the command line"
    )


def memory_message(exc: MemoryError, args: argparse.Namespace) -> str:
    """One line for an allocation that does not fit: every array the accountants build has one entry per order
    (and per query of ``--votes``), so it names ``--orders`` when given, else ``--votes``, and the way out."""
    detail = f" ({one_line(exc)})" if str(exc) else ""
    if args.orders is not None:
        return (
            f"--orders {args.orders}: the grid of orders does not fit in memory{detail}; use a shorter grid, "
            f"e.g. --orders paper2018 (296 orders from 2 to 500) or int:2:1000"
        )
    if args.votes is not None:
        return (
            f"--votes {args.votes}: the per-order arrays over these votes do not fit in memory{detail}; "
            f"use --first N to account for fewer queries"
        )
    return f"epsilon does not fit in memory for these settings{detail}"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = _validate(args)
    if problem:
        parser.error(f"{args.command}: {problem}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ThresholdRangeWarning)
        try:
            out = run(args)
        except (ValueError, FileNotFoundError) as exc:
            print(f"error: {as_flag_message(one_line(exc), args)}", file=sys.stderr)
            return 2
        except ArithmeticError as exc:  # the per-flag ranges are meant to prevent this: still one line, status 2
            print(f"error: {overflow_message(exc, args)}", file=sys.stderr)
            return 2
        except MemoryError as exc:  # an order grid too long for this machine: one line, status 2
            print(f"error: {memory_message(exc, args)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # Ctrl-C: one line and the shell's status for SIGINT, no traceback
            print("interrupted: no epsilon was printed", file=sys.stderr)
            return 130
    threshold_warned = False
    for w in caught:  # one threshold warning: the CLI's own (naming --threshold), not the API's repeat of it
        if issubclass(w.category, ThresholdRangeWarning):
            if threshold_warned:
                continue
            threshold_warned = True
        print(f"warning: {one_line(w.message)}", file=sys.stderr)
    print(strict_json(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
