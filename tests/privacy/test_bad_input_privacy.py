"""Bad input to the privacy command line and library, written as a careless or hostile user would: each is refused
with one line naming the file, flag or parameter and what was expected (no traceback, no silent wrong number);
next to each refusal, the nearest good input is still accepted."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np
import pytest

from pate_study.privacy import _validation as validation
from pate_study.privacy import adaptive_k, confident_gnmax_epsilon, gnmax_epsilon, moments_epsilon, topk_vote
from pate_study.privacy.__main__ import RANGES, as_flag_message, build_parser, main, overflow_message
from pate_study.privacy.options import Accounting

INT64_MAX = np.iinfo(np.int64).max


def run_cli(capsys, *args):
    try:
        code = main(["epsilon", *args])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line_refusal(code, out, err, *names):
    assert code == 2 and not out, (code, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for name in names:
        assert name in err, (name, err)


GNMAX = ["--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5"]


# ------------------------------------------------------------------------------ vote totals that overflow int64
def test_vote_rows_whose_int64_totals_wrap_are_refused_naming_the_file(tmp_path, capsys):
    path = tmp_path / "wrapped.npy"
    np.save(path, np.array([[INT64_MAX, INT64_MAX, 3], [1, 0, 0]], dtype=np.int64))  # int64 row totals: 1 and 1
    code, out, err = run_cli(capsys, *GNMAX, "--votes", str(path))
    assert_one_line_refusal(code, out, err, f"--votes {path}", "row 0", "2^53")


@pytest.mark.parametrize(
    "votes",
    [
        np.array([[INT64_MAX, INT64_MAX, 3], [1, 0, 0]], dtype=np.int64),
        np.array([[2**64 - 1, 2, 0], [1, 0, 0]], dtype=np.uint64),
        np.array([[1e308, 1e308], [1e308, 1e308]]),  # float64 totals inf: an OverflowError before
        np.array([[2.0**53, 1.0], [1.0, 2.0**53]]),  # 2^53 + 1 rounds to 2^53: still refused
        np.array([[2**53, 0], [0, 2**53]], dtype=np.int64),
    ],
)
def test_the_library_refuses_vote_totals_from_2_to_the_53_on(votes):
    with pytest.raises(ValueError, match=r"^votes: row 0 sums to .*below 2\^53"):
        gnmax_epsilon(sigma=40, delta=1e-5, votes=votes)
    with pytest.raises(ValueError, match=r"^votes: row 0 sums to"):
        moments_epsilon(gamma=0.05, delta=1e-5, votes=votes)


def test_vote_totals_just_below_2_to_the_53_are_still_accepted():
    votes = np.array([[2**52, 2**52 - 1, 0], [0, 2**53 - 1, 0]], dtype=np.int64)  # totals 2^53 - 1
    assert validation.check_counts(votes, keep_integers=True) is votes
    validation.check_vote_totals_fit(np.array([[3, 0], [1, 2]]))  # the usual case: no copy, no error
    validation.check_counts(votes.astype(np.float64))


def test_negative_or_non_finite_counts_are_still_named_by_the_count_check():
    with pytest.raises(ValueError, match="non-negative"):
        validation.check_counts(np.array([[-INT64_MAX, INT64_MAX, 5]]))
    with pytest.raises(ValueError, match="finite"):
        validation.check_counts(np.array([[np.inf, 1.0]]))


# ------------------------------------------------------------------------------------------------- adaptive k
def test_adaptive_k_params_refuses_a_slope_that_gives_an_infinite_sigma():
    with pytest.raises(ValueError, match=r"^rdp_slope: expected a per-query RDP slope .* got 1e-320") as exc:
        adaptive_k.adaptive_k_params(1e-320, 6, 5)
    assert "\n" not in str(exc.value) and "slopes in [" in str(exc.value)
    with pytest.raises(ValueError, match=r"^rdp_slope:"):
        adaptive_k.adaptive_k_params(1e300, 6, 5)  # σ = 4e-151, under the noise-scale range
    with pytest.raises(ValueError, match=r"^rdp_slope:"):
        adaptive_k.adaptive_k_params(5e-324, 6, 5, k_share=0.99999)  # 2T²(1 − s)c underflows to 0


def test_adaptive_k_params_is_unchanged_inside_the_range():
    sigma, b = adaptive_k.adaptive_k_params(0.4, 161, 50, k_share=0.25)
    assert sigma == math.sqrt(161 / (2.0 * 50**2 * 0.75 * 0.4))
    assert b == 4.0 / (50 * math.sqrt(2.0 * 0.25 * 0.4))


@pytest.mark.parametrize("k_share", ["0.5", True, float("nan"), 0.0, 1.0, None, [0.5]])
def test_adaptive_k_params_names_k_share(k_share):
    with pytest.raises(ValueError, match=r"^k_share: expected a share in the open interval \(0, 1\)") as exc:
        adaptive_k.adaptive_k_params(0.4, 6, 5, k_share=k_share)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("gumbel_scale", [1e-300, 1e-151, 1e151, 0.0, float("inf")])
def test_adaptive_k_epsilon_names_a_gumbel_scale_that_overflows(gumbel_scale):
    with pytest.raises(ValueError, match=r"^gumbel_scale: expected "):
        adaptive_k.adaptive_k_epsilon(
            sigma=1.0, gumbel_scale=gumbel_scale, delta=1e-5, n_teachers=5, n_queries=10, n_labels=6
        )


@pytest.mark.filterwarnings("ignore::pate_study.privacy.accounting.OrderAtGridEdgeWarning")
@pytest.mark.parametrize("gumbel_scale", validation.NOISE_SCALE_RANGE)
def test_adaptive_k_epsilon_at_the_ends_of_the_noise_range_has_no_overflow_error(gumbel_scale):
    spent = adaptive_k.adaptive_k_epsilon(
        sigma=1.0, gumbel_scale=gumbel_scale, delta=1e-5, n_teachers=1, n_queries=10, n_labels=6
    )
    assert spent.epsilon > 0


# ------------------------------------------------------------------------- the flag at fault, numbers readable
def test_a_huge_n_queries_names_that_flag_only_in_scientific_notation(capsys):
    code, out, err = run_cli(capsys, *GNMAX, "--n-queries", "1" + "0" * 400)
    assert_one_line_refusal(code, out, err, "argument --n-queries: ", "1e+400", "1.79769e+308")
    assert "--sigma" not in err.split("see")[0] and "--gamma" not in err


def test_the_largest_n_queries_gives_a_huge_epsilon_rather_than_an_error(capsys):
    code, out, err = run_cli(capsys, *GNMAX, "--n-queries", str(int(sys.float_info.max)))
    epsilon = json.loads(out)["epsilon"]
    assert code == 0 and (epsilon is None or epsilon > 1e300), err


def test_a_library_message_names_the_flag_the_user_typed(capsys):
    code, out, err = run_cli(capsys, *GNMAX, "--n-queries", "10", "--orders", "int:1:5")
    assert_one_line_refusal(code, out, err, "error: --orders: expected every order > 1")


def test_an_overflow_message_names_only_the_flags_given():
    args = build_parser().parse_args(["epsilon", *GNMAX, "--n-queries", "10"])
    message = overflow_message(OverflowError("math range error"), args)
    assert "--sigma 40" in message and "--n-queries 10" in message
    assert "--gamma" not in message and "--sigma1" not in message and "\n" not in message
    assert as_flag_message("n_queries: expected a positive integer", args).startswith("--n-queries: ")
    assert as_flag_message("votes: row 0", argparse.Namespace(command="epsilon")) == "votes: row 0"


@pytest.mark.parametrize(
    "value, text",
    [
        (10**300, "1e+300"),
        (-(10**400), "-1e+400"),
        (10**5000, "1e+5000"),
        (9999999 * 10**20, "1e+27"),
        (123, "123"),
        (1e300, "1e+300"),
    ],
    ids=["1e300", "-1e400", "1e5000", "rounds-up", "small", "float"],
)
def test_number_text_never_prints_hundreds_of_digits(value, text):
    assert validation.number_text(value) == text


# ------------------------------------------------------------------------------------------- symbolic links
def test_a_symlink_loop_given_to_votes_is_named_as_a_loop(tmp_path, capsys):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    os.symlink(b, a)
    os.symlink(a, b)
    code, out, err = run_cli(capsys, *GNMAX, "--votes", str(a))
    assert_one_line_refusal(code, out, err, f"--votes {a}", "symbolic link loop", "cannot be resolved")
    assert "no such file" not in err


def test_a_dangling_symlink_given_to_votes_names_its_target(tmp_path, capsys):
    link = tmp_path / "votes.npy"
    os.symlink(tmp_path / "gone.npy", link)
    code, out, err = run_cli(capsys, *GNMAX, "--votes", str(link))
    assert_one_line_refusal(code, out, err, f"--votes {link}", "symbolic link to", "gone.npy", "does not exist")


def test_a_symlink_to_a_good_file_is_followed(tmp_path, capsys):
    np.save(tmp_path / "real.npy", np.array([[3, 1], [2, 2]]))
    os.symlink(tmp_path / "real.npy", tmp_path / "link.npy")
    code, out, err = run_cli(capsys, *GNMAX, "--votes", str(tmp_path / "link.npy"))
    assert code == 0, err


# ------------------------------------------------------------------- one constraints table, library and CLI
def _cli_accepts(flag: str, value: float) -> bool:
    base = {
        "sigma": ["--aggregator", "gnmax"],
        "gamma": ["--aggregator", "lnmax"],
        "delta": ["--aggregator", "gnmax", "--sigma", "1"],
        "threshold": ["--aggregator", "confident-gnmax", "--sigma1", "1", "--sigma2", "1"],
        "sigma1": ["--aggregator", "confident-gnmax", "--threshold", "1", "--sigma2", "1"],
        "sigma2": ["--aggregator", "confident-gnmax", "--threshold", "1", "--sigma1", "1"],
        "n_queries": ["--aggregator", "gnmax", "--sigma", "1"],
    }[flag]
    line = ["epsilon", *base, f"--{flag.replace('_', '-')}={value!r}"]
    if flag != "delta":
        line.append("--delta=1e-5")
    if flag != "n_queries":
        line.append("--n-queries=10")
    try:
        build_parser().parse_args(line)
    except SystemExit:
        return False
    return True


def _library_accepts(flag: str, value: float) -> bool:
    checks = {
        "sigma": lambda v: gnmax_epsilon(sigma=v, delta=1e-5, n_queries=10, accounting=Accounting([2.0, 8.0])),
        "sigma1": lambda v: confident_gnmax_epsilon(
            threshold=1.0, sigma1=v, sigma2=1.0, delta=1e-5, n_queries=10, accounting=Accounting([2.0, 8.0])
        ),
        "sigma2": lambda v: confident_gnmax_epsilon(
            threshold=1.0, sigma1=1.0, sigma2=v, delta=1e-5, n_queries=10, accounting=Accounting([2.0, 8.0])
        ),
        "threshold": lambda v: validation.check_threshold("threshold", v, -np.inf, np.inf, "a count"),
        "delta": lambda v: gnmax_epsilon(sigma=1.0, delta=v, n_queries=10, accounting=Accounting([2.0, 8.0])),
        "gamma": lambda v: validation.check_parameter("gamma", v),
        "n_queries": lambda v: gnmax_epsilon(sigma=1.0, delta=1e-5, n_queries=v, accounting=Accounting([2.0, 8.0])),
    }
    try:
        checks[flag](value)
    except ValueError:
        return False
    return True


def _probes(interval: validation.Interval) -> list:
    if interval.integer:
        return [interval.low - 1, interval.low, interval.high, interval.high + 1]
    return [
        np.nextafter(interval.low, -np.inf),
        interval.low,
        np.nextafter(interval.low, np.inf),
        np.nextafter(interval.high, -np.inf),
        interval.high,
        np.nextafter(interval.high, np.inf),
    ]


@pytest.mark.filterwarnings("ignore::pate_study.privacy.accounting.OrderAtGridEdgeWarning")
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # n_queries = 1.8e308: ε = inf in rdp.py
@pytest.mark.parametrize("flag", ["sigma", "sigma1", "sigma2", "threshold", "delta", "gamma", "n_queries"])
def test_the_cli_and_the_library_accept_and_refuse_the_same_bounds(flag):
    interval = validation.PARAMETER_CONSTRAINTS[validation.PARAMETER_KINDS[flag]]
    for value in _probes(interval):
        value = int(value) if interval.integer else float(value)
        expected = interval.contains(value)
        assert _cli_accepts(flag, value) == expected, (flag, value)
        assert _library_accepts(flag, value) == expected, (flag, value)


def test_the_cli_ranges_are_a_view_of_the_table():
    for flag, (low, high, what) in RANGES.items():
        entry = validation.PARAMETER_CONSTRAINTS[validation.PARAMETER_KINDS[flag]]
        assert (low, high, what) == (entry.low, entry.high, entry.what)
    assert validation.NOISE_SCALE_RANGE == RANGES["sigma"][:2] == (1e-150, 1e150)


# ------------------------------------------------------------------------------------ resources: one line too
def test_an_order_grid_that_cannot_be_allocated_names_orders(capsys):
    # numpy refuses the 7 PiB array at once (nothing is allocated): a MemoryError, a traceback before
    code, out, err = run_cli(capsys, *GNMAX, "--n-queries", "10", "--orders", "int:2:1000000000000000")
    assert_one_line_refusal(
        code, out, err, "error: --orders int:2:1000000000000000: ", "does not fit in memory", "--orders paper2018"
    )


def test_ctrl_c_is_one_line_and_status_130(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("pate_study.privacy.__main__.run", interrupted)
    code, out, err = run_cli(capsys, *GNMAX, "--n-queries", "10")
    assert code == 130 and not out and err.strip() == "interrupted: no epsilon was printed"


def test_adaptive_k_params_message_prints_slopes_past_the_float_range():
    with pytest.raises(ValueError, match=r"^rdp_slope: .* the slopes in \[.*e\+3\d\d\]"):  # no OverflowError
        adaptive_k.adaptive_k_params(1e-320, 2**53 - 1, 1, k_share=1e-300)


@pytest.mark.parametrize("mu, accepted", [(1e-300, True), (1e150, True), (1e200, False), (0.0, False)])
def test_the_table_holds_the_range_of_a_gaussian_mu(mu, accepted):
    """The range in which the Gaussian mechanism's exact ε (``topk_vote.gaussian_epsilon``) is finite."""
    if accepted:
        assert validation.check_parameter("mu", mu) == mu
    else:
        with pytest.raises(ValueError, match=r"^mu: expected a Gaussian mechanism's μ = Δ₂/σ in \(0, 1e\+150\]"):
            validation.check_parameter("mu", mu)


def test_gaussian_epsilon_names_mu_past_its_range():
    with pytest.raises(ValueError, match=r"^mu: "):
        topk_vote.gaussian_epsilon(mu=1e200, delta=1e-5)
