"""The rules both Audio Set notebooks' verdicts share (:mod:`.teacher_verdicts` for notebook 04,
:mod:`.release_verdicts` for notebook 05): the tolerances inside which a difference that decides one of Muschiol
2021's directions is *inconclusive* (the same both ways), and the direction rule itself
(:func:`pate_study.reporting.verdicts.direction`) with a run that did not evaluate a setting marked as such.
"""
from __future__ import annotations

import numpy as np

from pate_study.reporting.verdicts import Verdict, not_comparable
from pate_study.reporting.verdicts import direction as _direction


#: The tolerance (absolute, on mAP / F1 / precision / recall in [0, 1]) inside which a difference that decides a
#: direction is *inconclusive*, the same both ways. One seed per ensemble (no measured seed spread of these noise-free
#: tables): 0.005 is half the smallest step the thesis's tables print a claim on (0.01).
SCORE_TOLERANCE = 0.005


def direction(margin: float, tolerance: float, *, rule: str, reason: str) -> Verdict:
    """:func:`pate_study.reporting.verdicts.direction`, or *not comparable* when this run has no finite margin (a
    profile that did not run one of the compared settings)."""
    if not np.isfinite(margin):
        return not_comparable(f"not evaluable on this run: {reason}", rule=rule)
    return _direction(margin, tolerance, rule=rule, reason=reason)


#: The same for a ratio that decides a direction (F1 or ε with / without a mechanism): ±5 %.
RATIO_TOLERANCE = 0.05
