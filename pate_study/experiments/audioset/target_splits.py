"""The Audio Set target's three splits of the big subset's eval clips, and the reporting labels kept sealed.

The target ("a private student of mean test mAP ≥ 0.13 at ε ≤ 300 for the whole procedure", judged by
:mod:`.target`) is chosen on one split and reported on another that no choice looked at. The eval clips are cut
once, by the seed the protocol states (``configs/05_audioset_multilabel/target_protocol.yaml``), into

* the **query pool**: the student's unlabelled public data, the only rows the teachers answer; its true labels are
  never read;
* the **validation split**: what the selection reads (the candidate runs' students are scored on it);
* the **reporting split**: read once, after the selection is final (:class:`SealedLabels`).

Which eval clips an earlier choice looked at (the code and the history of ``experiments/audioset`` and of
notebook 05's configs): notebook 05 cut the eval clips into a 5,000-clip query pool and a 2,722-clip test set
(:func:`.data.query_test_split`, seed 0). The old **test set's** labels chose the student schedule (3,000 steps,
adopted after 600-step students missed the target), the frontier's candidate releases (taken from earlier runs
scored on it) and the frontier's best release; its clips can serve the validation split or the query pool, never
the reporting split. The old **pool's** labels were read by notebook 05's thesis tables (Tables 5.1-5.3 and A.6 on
the pool; the release-noise sweeps' F1; the frontier table's release F1 column; the Table 5.4 diagnostic student
trained on the pool's true labels) and by notebook 04's teacher scores (every eval clip), and by no recorded choice
of the students or the frontier (the frontier's release thresholds were introduced without a recorded rule; the
frontier table prints each release's F1 on the pool's labels beside it, which is disclosed in the protocol). So
the reporting split is drawn from the old pool only, and the validation split and query pool from the rest.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

#: the second element of the split's seed sequence (the first is the protocol's seed): the target's own stream
SPLIT_STREAM = 5_013


@dataclasses.dataclass(frozen=True)
class TargetSplits:
    """Indices (sorted, disjoint, together every eval clip) into the subset's eval clips: ``query`` (the student's
    unlabelled pool), ``validation`` (read by the selection), ``reporting`` (read once, at the end); ``seed``: the
    protocol's split seed."""

    query: np.ndarray
    validation: np.ndarray
    reporting: np.ndarray
    seed: int

    def __post_init__(self) -> None:
        parts = [np.asarray(getattr(self, k), dtype=np.int64) for k in ("query", "validation", "reporting")]
        for name, a in zip(("query", "validation", "reporting"), parts):
            if a.ndim != 1 or a.size == 0:
                raise ValueError(f"{name}: expected a non-empty 1-d array of eval-clip indices")
            object.__setattr__(self, name, a)
        every = np.concatenate(parts)
        if np.unique(every).size != every.size:
            raise ValueError("query, validation, reporting: the splits overlap")

    @property
    def n_eval(self) -> int:
        return int(self.query.size + self.validation.size + self.reporting.size)

    def sizes(self) -> dict[str, int]:
        return {
            "query": int(self.query.size),
            "validation": int(self.validation.size),
            "reporting": int(self.reporting.size),
        }


def target_splits(
    n_eval: int,
    earlier_pool: Any,
    *,
    reporting_fraction: float,
    validation_fraction: float,
    seed: int,
) -> TargetSplits:
    """The eval clips cut once (module docstring): the reporting split is ``round(reporting_fraction · n_eval)``
    clips drawn from ``earlier_pool`` (notebook 05's former query pool, the clips whose labels no choice read), the
    validation split ``round(validation_fraction · n_eval)`` clips drawn from the rest, the query pool what is left.
    Both draws come from ``numpy.random.default_rng([seed, SPLIT_STREAM])``."""
    n_eval = int(n_eval)
    pool = np.unique(np.asarray(earlier_pool, dtype=np.int64))
    if pool.size and (pool.min() < 0 or pool.max() >= n_eval):
        raise ValueError(f"earlier_pool: expected indices in [0, {n_eval}) (the eval clips)")
    for name, f in (("reporting_fraction", reporting_fraction), ("validation_fraction", validation_fraction)):
        if not 0 < float(f) < 1:
            raise ValueError(f"{name}={f!r}: expected a fraction in (0, 1)")
    n_rep, n_val = int(round(reporting_fraction * n_eval)), int(round(validation_fraction * n_eval))
    if n_rep > pool.size:
        raise ValueError(
            f"reporting_fraction={reporting_fraction}: {n_rep} reporting clips, more than the {pool.size} clips of "
            "the earlier query pool they must come from"
        )
    if n_rep < 1 or n_val < 1 or n_eval - n_rep - n_val < 1:
        raise ValueError(
            f"reporting_fraction={reporting_fraction}, validation_fraction={validation_fraction}: expected every "
            f"split non-empty on {n_eval} eval clips"
        )
    rng = np.random.default_rng([int(seed), SPLIT_STREAM])
    reporting = np.sort(rng.permutation(pool)[:n_rep])
    rest = rng.permutation(np.setdiff1d(np.arange(n_eval), reporting))
    return TargetSplits(np.sort(rest[n_val:]), np.sort(rest[:n_val]), reporting, int(seed))


class SealedLabels:
    """The reporting split's true labels, readable only through :meth:`open` with the final selection: the
    selection code path cannot read them (it never receives this object's labels, and opening it needs the object
    the selection returns). ``opened`` counts the reads."""

    def __init__(self, labels: Any, final_type: type) -> None:
        labels = np.array(labels, dtype=bool, copy=True)
        if labels.ndim != 2:
            raise ValueError(f"labels: expected [n_clips, n_labels], got shape {labels.shape}")
        labels.setflags(write=False)
        self._sealed = labels
        self._final_type = final_type
        self.opened = 0

    @property
    def shape(self) -> tuple[int, int]:
        return self._sealed.shape

    def open(self, selection: Any) -> np.ndarray:
        """The labels, given the final selection (an instance of the type named at construction); else refused."""
        if not isinstance(selection, self._final_type) or not getattr(selection, "final", False):
            raise PermissionError(
                "the reporting split's labels are read once the selection is final: pass the final selection"
            )
        self.opened += 1
        return self._sealed

    def __repr__(self) -> str:
        return f"SealedLabels({self.shape[0]} clips x {self.shape[1]} labels, opened {self.opened} times)"
