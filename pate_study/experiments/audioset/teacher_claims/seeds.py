"""The comparison of two arms over the same seeds that notebook 04's ablations judge with: a 95 % t-interval of
the paired differences, and each arm's values per seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pate_study.experiments.audioset.diagnostics import curves
from pate_study.experiments.audioset.verdict_rules import TEACHER, judged
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim
from pate_study.reporting.verdicts import Verdict


@dataclass(frozen=True)
class SeedComparison:
    """Two ablation arms compared seed replicate by seed replicate: ``a`` / ``b`` the arms' statistic per replicate
    (mean over the replicate's teachers), ``estimate`` the paired t-interval of ``a − b``
    (:func:`pate_study.reporting.uncertainty.paired_difference`); ``margin`` its mean and ``tolerance`` its
    half-width (recorded)."""

    a: np.ndarray
    b: np.ndarray
    estimate: unc.Estimate

    @property
    def margin(self) -> float:
        return self.estimate.value

    @property
    def tolerance(self) -> float:
        return self.estimate.half_width

    def as_record(self, name: str) -> dict[str, Any]:
        """``{name}_margin``, ``{name}_tolerance`` (the interval's half-width), ``{name}_interval`` and the per-seed
        differences ``{name}_per_seed``."""
        return {
            f"{name}_margin": self.margin,
            f"{name}_tolerance": self.tolerance,
            f"{name}_interval": [self.estimate.low, self.estimate.high],
            f"{name}_per_seed": [float(x) for x in self.a - self.b],
        }

    def claim(self, rule: str, reason: str, sentence: str = "Muschiol 2021, §5.1") -> Verdict:
        """The verdict of the claim ``a − b > 0`` (``rule``: the quantity) on the paired interval
        (:func:`pate_study.reporting.claims.judge`); ``reason``: the measured numbers."""
        claim = Claim(rule, sentence, rule, "direction", TEACHER)
        per_seed = ", ".join(f"{x:+.4f}" for x in self.a - self.b)
        return judged(claim, self.estimate, note=f"{reason}; per seed {per_seed}")


def seed_comparison(a: np.ndarray, b: np.ndarray) -> SeedComparison:
    """The rule every ablation of notebook 04 is decided by. Arms ``A`` and ``B`` train the same partitions with the
    same training seeds in replicate ``r`` (:func:`.pipeline.ablation_arms`), so they are compared as pairs:
    ``d_r = a_r − b_r`` (``a`` / ``b``: the statistic per replicate, :func:`replicate_values`), and the claim reads the
    95 % t-interval of the mean of ``d`` over the ``R`` replicates (no floor: the interval alone decides, *agrees* /
    *differs* only when it lies wholly on one side of 0). Needs ``R >= 2`` (one seed measures no spread)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(
            f"seed_comparison: expected two arms' values over the same >= 2 seed replicates (the notebook's "
            f'ablation["seeds"] >= 2), got shapes {a.shape} and {b.shape}'
        )
    return SeedComparison(a, b, unc.paired_difference(a, b, TEACHER))


def replicate_values(run: Any, what: str = "final") -> np.ndarray:
    """One ablation arm's statistic per seed replicate (``run.replicate``; None: one replicate), each the mean over the
    replicate's teachers: ``"final"`` mAP on the test set at the selected checkpoint, ``"first"`` curve-sample mAP at
    the first evaluation, ``"best_step"`` the selected step."""
    rep = np.zeros(run.n_teachers, int) if run.replicate is None else np.asarray(run.replicate)
    if what == "first":
        c = curves(run)
        per = c.iloc[0].reindex(range(run.n_teachers)).to_numpy(float)
    elif what in ("final", "best_step"):
        per = np.asarray(run.map if what == "final" else run.best_step, float)
    else:
        raise ValueError(f"what={what!r}: expected 'final', 'first' or 'best_step'")
    return np.array([float(np.nanmean(per[rep == r])) for r in np.unique(rep)])
