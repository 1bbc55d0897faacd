"""The adaptive threshold's sensitivity, pinned (Muschiol 2021 Definition 11): on constructed vote fractions one
teacher's replacement moves the threshold across almost all of [0, 1], so a compared value m_i − th moves by almost
1/T + 1. Any per-label sensitivity below that (e.g. 1/T + 0.3) fails here."""

from __future__ import annotations

import numpy as np
import pytest

from pate_study.privacy import multilabel
from pate_study.privacy.aggregators import adaptive_thresholds


def neighbouring_fractions(n_middle: int, n_teachers: int, eta: float = 1e-2) -> tuple[np.ndarray, np.ndarray]:
    """Two vote-fraction vectors one teacher apart (every label moves by at most 1/T: a teacher's probabilities lie
    in [0, 1]) whose adaptive thresholds sit at the top and at the bottom of [0, 1].

    m: 1, then ``n_middle`` labels spaced g apart below a top gap g(1 + η), then 0 (bottom gap g), plus a witness
    label duplicating a middle value c: the largest gap is the top one (th ≈ 1 − g/2). m': the top gap shrinks to
    g(1 − η) and the bottom one grows to g(1 + 2η) (the middle labels move up by at most 2ηg), and the witness moves
    up by 1/T: the largest gap is the bottom one (th ≈ g/2). The witness's m_i − th changes by 1/T + 1 − O(g).
    """
    h = 1.0 / n_teachers
    g = 1.0 / (n_middle + 1 + eta)
    middle = 1.0 - g * (1 + eta) - g * np.arange(n_middle)
    middle2 = 1.0 - g * (1 - eta) - g * (1 - eta / max(n_middle - 1, 1)) * np.arange(n_middle)
    c = middle[n_middle // 2]
    return np.concatenate([[1.0], middle, [0.0, c]]), np.concatenate([[1.0], middle2, [0.0, c + h]])


def largest_change(m: np.ndarray, m2: np.ndarray) -> float:
    """max_i |(m_i − th(m)) − (m'_i − th(m'))| with th of Definition 11 (``aggregators.adaptive_thresholds``)."""
    th, th2 = adaptive_thresholds(np.stack([m, m2]))
    return float(np.max(np.abs((m - th) - (m2 - th2))))


@pytest.mark.parametrize("n_teachers", [2, 5, 50, 250])
def test_threshold_jumps_across_the_unit_interval(n_teachers):
    m, m2 = neighbouring_fractions(10_000, n_teachers)
    assert np.all(np.abs(m - m2) <= 1.0 / n_teachers + 1e-15)  # one teacher apart
    assert m2.min() >= 0.0 and m2.max() <= 1.0
    th, th2 = adaptive_thresholds(np.stack([m, m2]))
    assert th > 0.9999 and th2 < 1e-4


@pytest.mark.parametrize("n_teachers", [2, 5, 50, 250])
def test_sensitivity_covers_the_largest_change_and_no_smaller_value_does(n_teachers):
    sensitivity = multilabel.adaptive_label_sensitivity("vote_fraction", n_teachers)
    changes = [largest_change(*neighbouring_fractions(n, n_teachers)) for n in (10, 100, 10_000)]
    assert changes == sorted(changes)  # approaching 1/T + 1 as the gaps shrink
    assert max(changes) <= sensitivity
    # the construction reaches within 2e-4 of the sensitivity: any value smaller by more is refuted
    assert max(changes) >= sensitivity - 2e-4
    assert max(changes) > 1.0 / n_teachers + 0.9998


def test_sensitivity_enters_the_slope():
    s = multilabel.adaptive_label_sensitivity("vote_fraction", 5)
    assert multilabel.adaptive_threshold_slope(0.5, 3, "vote_fraction", 5) == pytest.approx(3 * s**2 / (2 * 0.25))
