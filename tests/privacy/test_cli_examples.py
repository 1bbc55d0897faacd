"""The examples of ``python -m pate_study.privacy epsilon --help`` run as printed, in a fresh process, and print
what their comments say (the vote-file example on a small vote file the test writes, so it passes without data)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pate_study.privacy import confident_gnmax_epsilon, moments_epsilon
from pate_study.privacy.options import Accounting

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "python -m pate_study.privacy"


def _python(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def printed_examples(help_text: str) -> list[str]:
    """The command lines of the help's examples, shell continuations (a trailing backslash) joined."""
    commands, current = [], ""
    for line in help_text.splitlines():
        text = line.strip()
        if current:
            current += " " + text.rstrip("\\").strip()
        elif text.startswith(f"{PROGRAM} "):
            current = text.rstrip("\\").strip()
        else:
            continue
        if not text.endswith("\\"):
            commands.append(current)
            current = ""
    return commands


@pytest.fixture(scope="module")
def help_text(tmp_path_factory) -> str:
    res = _python(["-m", "pate_study.privacy", "epsilon", "--help"], tmp_path_factory.mktemp("help"))
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture
def votes(tmp_path) -> np.ndarray:
    """250 teachers, 10 classes, 200 queries with a clear plurality on most: the shape of the PATE 2018 votes."""
    rng = np.random.default_rng(0)
    counts = rng.multinomial(250, [0.7, *[0.3 / 9] * 9], size=200)
    np.save(tmp_path / "votes.npy", counts)
    return counts


def test_the_help_has_two_examples_one_data_independent_one_on_a_vote_file(help_text):
    commands = printed_examples(help_text)
    assert len(commands) == 2, commands
    assert "--aggregator lnmax" in commands[0] and "--n-queries" in commands[0]
    assert "--aggregator confident-gnmax" in commands[1] and "--votes votes.npy" in commands[1]
    assert "numpy.save" in help_text and "pate2018-votes" in help_text  # how to use one's own votes, or the paper's


@pytest.mark.slow
def test_each_example_runs_as_printed_and_prints_what_it_says(help_text, votes, tmp_path):
    lnmax, confident = printed_examples(help_text)
    results = []
    for command in (lnmax, confident):
        words = shlex.split(command)
        assert words[0] == "python"
        res = _python(words[1:], tmp_path)
        assert res.returncode == 0, (command, res.stderr)
        results.append(json.loads(res.stdout))
    independent, on_votes = results
    assert f"{independent['epsilon']:.4f}" == "20.7565" and independent["order"] == 2  # as the comment says
    assert "20.7565" in help_text
    assert (
        independent["epsilon"]
        == moments_epsilon(gamma=0.05, delta=1e-5, n_queries=1000, accounting=Accounting("int:1:8")).epsilon
    )
    run = confident_gnmax_epsilon(threshold=200, sigma1=150, sigma2=40, delta=1e-5, votes=votes, rng=0)
    assert on_votes["cost"] == "realized" and on_votes["seed"] == 0  # the guarantee of one stated run, as it says
    assert "prints epsilon, seed and expected_answered" in help_text
    assert on_votes["epsilon"] == run.epsilon and on_votes["expected_answered"] == run.expected_answered
    assert 0 < on_votes["expected_answered"] < len(votes) and on_votes["votes_file"] == "votes.npy"
