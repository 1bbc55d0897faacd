"""Command line ``python -m pate_study.privacy epsilon``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pate_study.privacy import confident_gnmax_epsilon, gnmax_epsilon, lnmax_rdp_epsilon, moments_epsilon
from pate_study.privacy.__main__ import main
from pate_study.privacy.options import Accounting

ROOT = Path(__file__).resolve().parents[2]


def run_cli(capsys, *args):
    try:
        code = main(["epsilon", *args])
    except SystemExit as exc:  # argparse's own refusals (a flag's value out of its range)
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_subprocess_prints_json():
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pate_study.privacy",
            "epsilon",
            "--aggregator",
            "lnmax",
            "--gamma",
            "0.05",
            "--delta",
            "1e-5",
            "--n-queries",
            "1000",
            "--orders",
            "continuous",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    d = json.loads(res.stdout)
    assert d["epsilon"] == pytest.approx(20.17427, rel=1e-6)
    assert d["order"] == pytest.approx(1.51743, rel=1e-5)
    for key in ("epsilon", "order", "delta", "n_queries", "accountant", "conversion"):
        assert key in d


def test_integer_moments_default(capsys):
    code, out, _ = run_cli(capsys, "--aggregator", "lnmax", "--gamma", "0.05", "--delta", "1e-6", "--n-queries", "900")
    d = json.loads(out)
    assert code == 0 and d["accountant"] == "moments2017" and d["order"] == 2
    assert d["epsilon"] == pytest.approx(20.4078, abs=5e-5)
    assert "note" not in d  # a data-independent guarantee needs no caveat


def test_rdp_gnmax_conversions(capsys):
    for conv, expected in (("basic", 5.9959), ("improved", 5.3777)):
        code, out, _ = run_cli(
            capsys,
            "--aggregator",
            "gnmax",
            "--sigma",
            "40",
            "--delta",
            "1e-5",
            "--n-queries",
            "1000",
            "--conversion",
            conv,
        )
        assert code == 0 and json.loads(out)["epsilon"] == pytest.approx(expected, abs=5e-5)


def test_votes_file_first_and_confident(tmp_path, capsys):
    rng = np.random.default_rng(0)
    top = rng.integers(100, 251, 300)
    votes = np.stack([top, 250 - top, np.zeros_like(top)], 1)
    path = tmp_path / "votes.npy"
    np.save(path, votes)
    code, out, _ = run_cli(
        capsys, "--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5", "--votes", str(path), "--first", "100"
    )
    d = json.loads(out)
    api = gnmax_epsilon(sigma=40, delta=1e-5, votes=votes[:100])
    assert code == 0 and d["n_queries"] == 100 and d["data_dependent"]
    assert d["epsilon"] == api.epsilon and d["order"] == api.order
    assert "not publishable as is" in d["note"]  # a data-dependent epsilon is said to be one, like an expectation
    common = [
        "--aggregator",
        "confident-gnmax",
        "--threshold",
        "200",
        "--sigma1",
        "50",
        "--sigma2",
        "40",
        "--delta",
        "1e-5",
        "--votes",
        str(path),
    ]
    conf = dict(threshold=200, sigma1=50, sigma2=40, delta=1e-5, votes=votes)
    code, out, _ = run_cli(capsys, *common)  # the default: the guarantee of one run, seed 0, stated
    d = json.loads(out)
    api = confident_gnmax_epsilon(**conf, cost="realized", rng=0)
    assert code == 0 and d["cost"] == "realized" and d["seed"] == 0 and 0 < d["expected_answered"] < 300
    assert d["epsilon"] == api.epsilon and d["expected_answered"] == api.expected_answered == d["n_answered"]
    code, out, _ = run_cli(capsys, *common, "--cost", "realized", "--seed", "1")
    d2 = json.loads(out)
    api = confident_gnmax_epsilon(**conf, cost="realized", rng=1)
    assert d2["cost"] == "realized" and d2["seed"] == 1 and d2["expected_answered"] == int(d2["expected_answered"])
    assert d2["epsilon"] == api.epsilon and d2["expected_answered"] == api.expected_answered
    code, out, _ = run_cli(capsys, *common, "--cost", "expected")  # Table 2's expected cost, under its own name
    d1 = json.loads(out)
    api = confident_gnmax_epsilon(**conf, cost="expected")
    assert code == 0 and d1["cost"] == "expected" and "epsilon" not in d1 and "seed" not in d1
    assert d1["expected_epsilon"] == api.expected_epsilon and d1["note"] == "expected, not a guarantee"
    assert d1["expected_answered"] == api.expected_answered and 0 < d1["expected_answered"] < 300
    code, out, _ = run_cli(
        capsys,
        "--aggregator",
        "lnmax",
        "--gamma",
        "0.05",
        "--delta",
        "1e-5",
        "--votes",
        str(path),
        "--q-condition",
        "reference_code",
        "--q-variant",
        "approx",
    )
    d3 = json.loads(out)
    api = moments_epsilon(
        gamma=0.05,
        delta=1e-5,
        votes=votes,
        accounting=Accounting("int:1:8"),
        q_condition="reference_code",
        q_variant="approx",
    )
    assert code == 0 and d3["q_variant"] == "approx" and d3["epsilon"] == api.epsilon
    code, out, _ = run_cli(
        capsys,
        "--aggregator",
        "lnmax",
        "--gamma",
        "0.05",
        "--delta",
        "1e-5",
        "--votes",
        str(path),
        "--accountant",
        "rdp2018",
        "--conversion",
        "improved",
    )
    api = lnmax_rdp_epsilon(gamma=0.05, delta=1e-5, votes=votes, accounting=Accounting(conversion="improved"))
    assert code == 0 and json.loads(out)["epsilon"] == api.epsilon


@pytest.mark.parametrize(
    "args, match",
    [
        (["--aggregator", "gnmax", "--gamma", "1", "--delta", "1e-5", "--n-queries", "3"], "needs --sigma"),
        (
            ["--aggregator", "lnmax", "--gamma", "1", "--sigma", "1", "--delta", "1e-5", "--n-queries", "3"],
            "--sigma is not",
        ),
        (
            [
                "--aggregator",
                "gnmax",
                "--sigma",
                "1",
                "--accountant",
                "moments2017",
                "--delta",
                "1e-5",
                "--n-queries",
                "3",
            ],
            "LNMax only",
        ),
        (
            ["--aggregator", "gnmax", "--sigma", "1", "--orders", "continuous", "--delta", "1e-5", "--n-queries", "3"],
            "continuous",
        ),
        (
            ["--aggregator", "lnmax", "--gamma", "1", "--conversion", "basic", "--delta", "1e-5", "--n-queries", "3"],
            "--conversion",
        ),
        (
            ["--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--n-queries", "3", "--first", "2"],
            "--first needs --votes",
        ),
        (
            [
                "--aggregator",
                "confident-gnmax",
                "--threshold",
                "1",
                "--sigma1",
                "1",
                "--sigma2",
                "1",
                "--delta",
                "1e-5",
                "--n-queries",
                "3",
                "--cost",
                "realized",
            ],
            "--cost applies",
        ),
        (
            ["--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--n-queries", "3", "--seed", "1"],
            "--seed applies",
        ),
        (
            [
                "--aggregator",
                "confident-gnmax",
                "--threshold",
                "1",
                "--sigma1",
                "1",
                "--sigma2",
                "1",
                "--delta",
                "1e-5",
                "--n-queries",
                "3",
                "--seed",
                "1",
            ],
            "--seed applies",
        ),
        (
            [
                "--aggregator",
                "confident-gnmax",
                "--threshold",
                "1",
                "--sigma1",
                "1",
                "--sigma2",
                "1",
                "--delta",
                "1e-5",
                "--votes",
                "v.npy",
                "--cost",
                "expected",
                "--seed",
                "1",
            ],
            "--seed is only used with --cost realized",
        ),
    ],
)
def test_invalid_combinations_exit_2(capsys, args, match):
    with pytest.raises(SystemExit) as exc:
        main(["epsilon", *args])
    assert exc.value.code == 2
    assert match in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, match",
    [
        (["--aggregator", "gnmax", "--sigma", "1", "--delta", "2", "--n-queries", "3"], "delta"),
        (["--aggregator", "gnmax", "--sigma", "-1", "--delta", "1e-5", "--n-queries", "3"], "sigma"),
        (["--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--n-queries", "0"], "--n-queries"),
        (["--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--votes", "/nonexistent.npy"], "no such file"),
    ],
)
def test_bad_values_exit_2(capsys, args, match):
    code, _, err = run_cli(capsys, *args)
    assert code == 2 and match in err


def test_bad_votes_file(tmp_path, capsys):
    path = tmp_path / "v.npy"
    np.save(path, np.array([[1.5, 2.0]]))
    code, _, err = run_cli(capsys, "--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--votes", str(path))
    assert code == 2 and "integer" in err
    np.save(path, np.array([[1, 2]]))
    code, _, err = run_cli(
        capsys, "--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--votes", str(path), "--first", "5"
    )
    assert code == 2 and "--first 5" in err and "pass at most 1" in err


# ------------------------------------------------------------------------------------------- numeric edges
def _strict(text: str) -> dict:
    """json.loads that refuses NaN/Infinity (what a strict parser such as JavaScript's JSON.parse does)."""

    def refuse(token):
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


_BASE = {
    "gamma": ["--aggregator", "lnmax"],
    "sigma": ["--aggregator", "gnmax"],
    "sigma1": ["--aggregator", "confident-gnmax", "--threshold", "200", "--sigma2", "40"],
    "sigma2": ["--aggregator", "confident-gnmax", "--threshold", "200", "--sigma1", "150"],
    "threshold": ["--aggregator", "confident-gnmax", "--sigma1", "150", "--sigma2", "40"],
}


@pytest.fixture(scope="module")
def tie_votes(tmp_path_factory):
    """Votes with ties and unanimity: the extremes of q for a data-dependent bound."""
    path = tmp_path_factory.mktemp("votes") / "ties.npy"
    np.save(path, np.array([[125, 125, 0], [250, 0, 0], [100, 100, 50]]))
    return path


@pytest.mark.parametrize("flag", sorted(_BASE))
@pytest.mark.parametrize("end", [0, 1])
@pytest.mark.parametrize("data", ["n-queries", "votes"])
def test_every_numeric_flag_at_both_ends_of_its_range_gives_strict_json(capsys, tie_votes, flag, end, data):
    from pate_study.privacy.__main__ import RANGES

    value = RANGES[flag][end]
    source = ["--n-queries", "1000"] if data == "n-queries" else ["--votes", str(tie_votes)]
    code, out, err = run_cli(capsys, *_BASE[flag], f"--{flag}={value!r}", "--delta", "1e-5", *source)
    assert code == 0, err
    d = _strict(out)
    assert d["epsilon"] is None and d["non_finite"]["epsilon"] == "inf" or np.isfinite(d["epsilon"])


@pytest.mark.parametrize("flag", sorted(_BASE))
@pytest.mark.parametrize("value", ["1e-200", "1e300", "-1e300", "nan", "inf", "-inf", "ten"])
def test_a_value_outside_its_range_names_the_flag(capsys, flag, value):
    from pate_study.privacy.__main__ import RANGES

    low, high, _ = RANGES[flag]
    try:
        inside = low <= float(value) <= high
    except ValueError:
        inside = False
    if inside:
        pytest.skip(f"{value} lies inside the range of --{flag}")
    code, out, err = run_cli(capsys, *_BASE[flag], f"--{flag}={value}", "--delta", "1e-5", "--n-queries", "10")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert f"argument --{flag}: " in err


@pytest.mark.parametrize("flag", ["--orders", "--sigma", "--delta", "--n-queries", "--votes"])
def test_an_empty_value_is_an_error_not_the_default(capsys, flag):
    args = {"--sigma": "40", "--delta": "1e-5", "--n-queries": "10", "--orders": "paper2018"}
    args[flag] = ""
    if flag == "--votes":
        del args["--n-queries"]
    line = ["--aggregator", "gnmax"] + [f"{k}={v}" for k, v in args.items()]
    code, out, err = run_cli(capsys, *line)
    assert code == 2 and not out and f"argument {flag}: " in err


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--n-queries", "1e3"),
        ("--n-queries", "10.0"),
        ("--first", "0"),
        ("--n-teachers", "-2"),
        ("--seed", "-1"),
        ("--delta", "0"),
        ("--delta", "1"),
        ("--delta", "nan"),
    ],
)
def test_counts_and_delta_are_checked_where_they_enter(capsys, flag, value):
    args = {"--sigma": "40", "--delta": "1e-5", "--n-queries": "10"}
    args[flag] = value
    code, _, err = run_cli(capsys, "--aggregator", "gnmax", *[f"{k}={v}" for k, v in args.items()])
    assert code == 2 and f"argument {flag}: " in err


def test_an_infinite_epsilon_is_printed_as_null_with_the_reason():
    from pate_study.privacy.__main__ import strict_json

    d = _strict(
        strict_json(
            {"epsilon": float("inf"), "order": 2.0, "curve": [1.0, float("nan")], "inner": {"x": float("-inf")}}
        )
    )
    assert d["epsilon"] is None and d["curve"] == [1.0, None] and d["inner"] == {"x": None}
    assert d["non_finite"] == {"epsilon": "inf", "curve[1]": "nan", "inner.x": "-inf"}
    assert "no finite guarantee" in d["non_finite_reason"]
