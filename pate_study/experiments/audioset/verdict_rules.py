"""The rules both Audio Set notebooks' verdicts share (:mod:`.teacher_verdicts` for notebook 04,
:mod:`.release_verdicts` for notebook 05): the tolerances inside which a difference that decides one of Muschiol
2021's directions is *inconclusive* (the same both ways), and the direction rule itself
(:func:`pate_study.reporting.verdicts.direction`) with a run that did not evaluate a setting marked as such.
"""
from __future__ import annotations

import numpy as np

from pate_study.reporting.verdicts import Verdict, not_comparable
from pate_study.reporting.verdicts import direction as _direction


#: The fallback tolerance (absolute, on mAP / F1 / precision / recall in [0, 1]) inside which a difference that
#: decides a direction is *inconclusive*, the same both ways, where nothing was measured: 0.005 is half the smallest
#: step the thesis's tables print a claim on (0.01). Notebook 05 replaces it by measured spreads
#: (:func:`.tables.score_tolerance` on the noise-free tables, :func:`seed_tolerance` on the students).
SCORE_TOLERANCE = 0.005


def direction(margin: float, tolerance: float, *, rule: str, reason: str) -> Verdict:
    """:func:`pate_study.reporting.verdicts.direction`, or *not comparable* when this run has no finite margin (a
    profile that did not run one of the compared settings)."""
    if not np.isfinite(margin):
        return not_comparable(f"not evaluable on this run: {reason}", rule=rule)
    return _direction(margin, tolerance, rule=rule, reason=reason)


#: The same for a ratio that decides a direction (F1 or ε with / without a mechanism): ±5 %.
RATIO_TOLERANCE = 0.05


def seed_tolerance(sd_a: float, n_a: int, sd_b: float = 0.0, n_b: int = 1) -> float:
    """Twice the standard error of a difference of two seed means, 2 √(sd_a² / n_a + sd_b² / n_b) (sd with ddof 1
    over ``n_a`` / ``n_b`` seeds; ``sd_b = 0`` compares a mean with a constant): a difference inside it is inside the
    seed spread. With a single seed (sd NaN: no spread measured) it is :data:`SCORE_TOLERANCE`."""
    if not (np.isfinite(sd_a) and np.isfinite(sd_b)):
        return SCORE_TOLERANCE
    return float(2 * np.sqrt(sd_a**2 / n_a + sd_b**2 / n_b))


def measured_tolerance(tolerance: float | dict, *keys: str) -> float:
    """The tolerance of one difference: a number is used as is; a measured spread (``{"sd": {difference: sd}}``,
    :func:`.tables.score_tolerance`) gives twice the largest sd among the differences named ``keys`` (about a 95 %
    band), or :data:`SCORE_TOLERANCE` when none of them was measured."""
    if not isinstance(tolerance, dict):
        return float(tolerance)
    found = [tolerance["sd"][k] for k in keys if np.isfinite(tolerance["sd"].get(k, np.nan))]
    return 2 * max(found) if found else SCORE_TOLERANCE


def every_step(margins, tolerances, *, rule: str, reason: str) -> Verdict:
    """A claim that must hold at every step, each step with its own margin and tolerance: *differs* when one step
    goes the other way beyond its tolerance, else *inconclusive* when one lies inside its tolerance, else *agrees*
    (:func:`direction` on the deciding step)."""
    m, t = np.asarray(margins, float), np.asarray(tolerances, float)
    ok = np.isfinite(m) & np.isfinite(t)
    if not ok.any():
        return direction(float("nan"), 0.0, rule=rule, reason=reason)
    m, t = m[ok], t[ok]
    i = int(np.argmin(m + t)) if np.min(m + t) < 0 else int(np.argmin(m - t))
    return direction(float(m[i]), float(t[i]), rule=rule, reason=reason)
