"""Composed privacy totals must not depend on memory layout, alignment or thread count.

A table cell once differed by one ulp between two hosts (3.965470209462577 vs
3.9654702094625773). The accountants now sum in a fixed order (``rdp_curves``
module docstring); these tests run them on the same votes laid out differently
in memory and require bit-identical results.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pate_study.privacy import moments, multilabel, multiwinner, rdp
from pate_study.privacy.accounting import ExpectedCost, OrderAtGridEdgeWarning
from pate_study.privacy.options import Bound, Charge, ConfidenceCheck, ConfidenceRule

ROOT = Path(__file__).resolve().parents[2]


def _layouts(a: np.ndarray) -> dict[str, np.ndarray]:
    """The same values as C-contiguous, Fortran-ordered, misaligned (8-byte offset) and strided arrays."""
    misaligned_buffer = np.zeros(a.size + 1, dtype=a.dtype)
    misaligned = misaligned_buffer[1:].reshape(a.shape)
    misaligned[...] = a
    wide = np.zeros((a.shape[0], 2 * a.shape[1]), dtype=a.dtype)
    wide[:, ::2] = a
    rows = np.zeros((2 * a.shape[0], a.shape[1]), dtype=a.dtype)
    rows[::2] = a
    out = {
        "c": np.ascontiguousarray(a),
        "fortran": np.asfortranarray(a),
        "misaligned": misaligned,
        "strided_columns": wide[:, ::2],
        "strided_rows": rows[::2],
    }
    for name, arr in out.items():
        assert np.array_equal(arr, a), name
    assert not out["fortran"].flags.c_contiguous and not out["strided_columns"].flags.c_contiguous
    assert out["misaligned"].ctypes.data % 16 != out["c"].ctypes.data % 16 or out["misaligned"].ctypes.data % 64 != 0
    return out


def _votes(n: int = 3000, m: int = 10, teachers: int = 250, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(m, 0.3), size=n)
    return rng.multinomial(teachers, p)


def _fractions(n: int = 2000, k: int = 12, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    far = rng.random((n, k)) < 0.5
    return np.where(far, rng.uniform(0.0, 0.05, (n, k)), rng.uniform(0.95, 1.0, (n, k)))


ACCOUNTANTS = {
    "gnmax": lambda v: rdp.gnmax_epsilon(sigma=40.0, delta=1e-5, votes=v),
    "lnmax_rdp": lambda v: rdp.lnmax_rdp_epsilon(gamma=0.05, delta=1e-5, votes=v),
    "moments": lambda v: moments.moments_epsilon(gamma=0.05, delta=1e-5, votes=v),
    "confident_gnmax": lambda v: rdp.confident_gnmax_epsilon(
        threshold=150, sigma1=50, sigma2=40, delta=1e-5, votes=v, rng=0
    ),
    "confident_gnmax_expected": lambda v: rdp.confident_gnmax_epsilon(
        threshold=150, sigma1=50, sigma2=40, delta=1e-5, votes=v, cost="expected"
    ),
}


def _epsilon(spent) -> float:
    """ε of a guarantee, or the expected ε of an expected cost (which has no ``epsilon``)."""
    return spent.expected_epsilon if isinstance(spent, ExpectedCost) else spent.epsilon


def _same(results: dict) -> None:
    ref = results["c"]
    for name, spent in results.items():
        assert _epsilon(spent) == _epsilon(ref), (name, _epsilon(spent).hex(), _epsilon(ref).hex())
        assert np.array_equal(spent.rdp_or_logmgf, ref.rdp_or_logmgf), name


@pytest.mark.parametrize("name", sorted(ACCOUNTANTS))
def test_multiclass_accountants_are_bit_identical_across_layouts(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        _same({k: ACCOUNTANTS[name](v) for k, v in _layouts(_votes()).items()})


def test_multilabel_accountants_are_bit_identical_across_layouts():
    results_t6, results_conf = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        for k, m in _layouts(_fractions()).items():
            results_t6[k] = multilabel.gnthreshold_epsilon(
                sigma=0.1, delta=1e-8, threshold=0.5, fractions=m, bound="vote_fraction", n_teachers=50
            )
            results_conf[k] = multilabel.confident_gnthreshold_epsilon(
                fractions=m,
                threshold=0.5,
                sigma=0.1,
                check=ConfidenceCheck(0.6, 0.2, ConfidenceRule.MAX),
                delta=1e-8,
                bound=Bound.VOTE_FRACTION,
                n_teachers=50,
                charge=Charge(rng=5),
            )
        independent = multilabel.gnthreshold_epsilon(
            sigma=0.1, delta=1e-8, n_queries=2000, n_labels=12, bound="vote_fraction", n_teachers=50
        )
    assert results_t6["c"].epsilon < independent.epsilon  # Theorem 6 applies: the summation path is exercised
    _same(results_t6)
    _same(results_conf)


def test_multiwinner_accountants_are_bit_identical_across_layouts():
    rng = np.random.default_rng(2)
    positives = np.where(rng.random((1500, 20)) < 0.5, rng.integers(0, 4, (1500, 20)), rng.integers(46, 51, (1500, 20)))
    results_binary, results_tau = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        for k, v in _layouts(positives).items():
            results_binary[k] = multiwinner.binary_pate_epsilon(positive_votes=v, n_teachers=50, sigma=6.0, delta=1e-8)
            results_tau[k] = multiwinner.tau_pate_epsilon(
                clipped_sums=v.astype(np.float64), threshold=25.0, tau=2.0, sigma=6.0, delta=1e-8
            )
    _same(results_binary)
    _same(results_tau)


_SUBPROCESS = """
import json, warnings, numpy as np
from pate_study.privacy import rdp, moments
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
v = rng.multinomial(250, rng.dirichlet(np.full(10, 0.3), size=3000))
print(json.dumps([rdp.gnmax_epsilon(sigma=40.0, delta=1e-5, votes=v).epsilon.hex(),
                  moments.moments_epsilon(gamma=0.05, delta=1e-5, votes=v).epsilon.hex()]))
"""


@pytest.mark.slow
def test_accountants_are_bit_identical_across_thread_counts():
    outputs = []
    for threads in ("1", "2"):
        env = {
            "OMP_NUM_THREADS": threads,
            "OPENBLAS_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads,
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
        }
        done = subprocess.run(
            [sys.executable, "-c", _SUBPROCESS], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
        )
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
