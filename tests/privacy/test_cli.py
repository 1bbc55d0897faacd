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

ROOT = Path(__file__).resolve().parents[2]


def run_cli(capsys, *args):
    code = main(["epsilon", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_subprocess_prints_json():
    res = subprocess.run(
        [sys.executable, "-m", "pate_study.privacy", "epsilon", "--aggregator", "lnmax", "--gamma", "0.05",
         "--delta", "1e-5", "--n-queries", "1000", "--orders", "continuous"],
        capture_output=True, text=True, cwd=ROOT, check=True,
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


def test_rdp_gnmax_conversions(capsys):
    for conv, expected in (("basic", 5.9959), ("improved", 5.3777)):
        code, out, _ = run_cli(capsys, "--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5",
                               "--n-queries", "1000", "--conversion", conv)
        assert code == 0 and json.loads(out)["epsilon"] == pytest.approx(expected, abs=5e-5)


def test_votes_file_first_and_confident(tmp_path, capsys):
    rng = np.random.default_rng(0)
    top = rng.integers(100, 251, 300)
    votes = np.stack([top, 250 - top, np.zeros_like(top)], 1)
    path = tmp_path / "votes.npy"
    np.save(path, votes)
    code, out, _ = run_cli(capsys, "--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5", "--votes", str(path),
                           "--first", "100")
    d = json.loads(out)
    api = gnmax_epsilon(sigma=40, delta=1e-5, votes=votes[:100])
    assert code == 0 and d["n_queries"] == 100 and d["data_dependent"]
    assert d["epsilon"] == api.epsilon and d["order"] == api.order
    common = ["--aggregator", "confident-gnmax", "--threshold", "200", "--sigma1", "50", "--sigma2", "40",
              "--delta", "1e-5", "--votes", str(path)]
    conf = dict(threshold=200, sigma1=50, sigma2=40, delta=1e-5, votes=votes)
    code, out, _ = run_cli(capsys, *common)
    d = json.loads(out)
    api = confident_gnmax_epsilon(**conf)
    assert code == 0 and d["cost"] == "expected" and 0 < d["expected_answered"] < 300
    assert d["epsilon"] == api.epsilon and d["expected_answered"] == api.expected_answered
    code, out, _ = run_cli(capsys, *common, "--cost", "realized", "--seed", "1")
    d2 = json.loads(out)
    api = confident_gnmax_epsilon(**conf, cost="realized", rng=1)
    assert d2["cost"] == "realized" and d2["expected_answered"] == int(d2["expected_answered"])
    assert d2["epsilon"] == api.epsilon and d2["expected_answered"] == api.expected_answered
    code, out, _ = run_cli(capsys, "--aggregator", "lnmax", "--gamma", "0.05", "--delta", "1e-5", "--votes",
                           str(path), "--q-condition", "reference_code", "--q-variant", "approx")
    d3 = json.loads(out)
    api = moments_epsilon(gamma=0.05, delta=1e-5, votes=votes, orders="int:1:8", q_condition="reference_code",
                          q_variant="approx")
    assert code == 0 and d3["q_variant"] == "approx" and d3["epsilon"] == api.epsilon
    code, out, _ = run_cli(capsys, "--aggregator", "lnmax", "--gamma", "0.05", "--delta", "1e-5", "--votes",
                           str(path), "--accountant", "rdp2018", "--conversion", "improved")
    api = lnmax_rdp_epsilon(gamma=0.05, delta=1e-5, votes=votes, conversion="improved")
    assert code == 0 and json.loads(out)["epsilon"] == api.epsilon


@pytest.mark.parametrize(
    "args, match",
    [
        (["--aggregator", "gnmax", "--gamma", "1", "--delta", "1e-5", "--n-queries", "3"], "needs --sigma"),
        (["--aggregator", "lnmax", "--gamma", "1", "--sigma", "1", "--delta", "1e-5", "--n-queries", "3"],
         "--sigma is not"),
        (["--aggregator", "gnmax", "--sigma", "1", "--accountant", "moments2017", "--delta", "1e-5", "--n-queries",
          "3"], "LNMax only"),
        (["--aggregator", "gnmax", "--sigma", "1", "--orders", "continuous", "--delta", "1e-5", "--n-queries", "3"],
         "continuous"),
        (["--aggregator", "lnmax", "--gamma", "1", "--conversion", "basic", "--delta", "1e-5", "--n-queries", "3"],
         "--conversion"),
        (["--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--n-queries", "3", "--first", "2"],
         "--first needs --votes"),
        (["--aggregator", "confident-gnmax", "--threshold", "1", "--sigma1", "1", "--sigma2", "1", "--delta", "1e-5",
          "--n-queries", "3", "--cost", "realized"], "--cost applies"),
        (["--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--n-queries", "3", "--seed", "1"],
         "--seed"),
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
        (["--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--n-queries", "0"], "n_queries"),
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
    code, _, err = run_cli(capsys, "--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5", "--votes", str(path),
                           "--first", "5")
    assert code == 2 and "--first 5" in err and "pass at most 1" in err
