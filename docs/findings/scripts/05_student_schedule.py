"""Diagnostic behind docs/findings/05_audioset_multilabel.md ("Students"): the test mAP of a student along the
recipe's full schedule, recorded every 300 steps and never selected on (the notebook keeps the last step).

Reads notebook 04's cached votes through the same call notebook 05 makes (run 04 first, paper profile), takes two
releases of the frontier (top-k k 3, σ_e 0.2, th_e 0.4; GNThreshold σ_e 0.3, th_e 0.4) on the first 5,000 pool
queries and trains one student per seed alone, with the test clips as its evaluation split (true labels, read only
to draw the curve). Run from the repository root:

    PATE_STUDY_MIRROR=... OMP_NUM_THREADS=1 .venv/bin/python docs/findings/scripts/05_student_schedule.py
"""

from __future__ import annotations

import logging

import numpy as np
from _paper_votes import paper_votes

from pate_study.experiments.audioset import release_frontier, teachers
from pate_study.learning.partitions import Partitions

SETTINGS = (
    {"mechanism": "topk", "sigma_e": 0.2, "k": 3, "th_e": 0.4},
    {"mechanism": "gnthreshold", "sigma_e": 0.3, "k": 0, "th_e": 0.4},
)
N_QUERIES, EVERY, SEEDS = 5000, 300, (0, 1, 2)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    p, spec, cv, info = paper_votes()
    x_pool, x_test = info["pool_features"][:N_QUERIES], info["test_features"]
    x = np.concatenate([x_pool, x_test]).astype(np.float32)
    curve_spec = spec.replace(eval_every=EVERY, patience=None)
    for setting in SETTINGS:
        row, labels = release_frontier.frontier_release(cv, setting, N_QUERIES, seed=p["seed"])
        y = np.concatenate([labels, cv.test_labels]).astype(bool)
        for seed in SEEDS:
            run = teachers.train_teachers(
                x,
                y,
                Partitions(np.arange(N_QUERIES)[None]),
                np.arange(N_QUERIES, len(x)),
                x_test,
                cv.test_labels,
                curve_spec,
                seed=seed,
                curve_clips=1,
                last=True,
            )
            h = run.history
            curve = h[(h["split"] == "validation") & (h["metric"] == "mAP")].groupby("step")["value"].first()
            logging.info(
                "%s, ε %.1f, seed %d: test mAP by step %s",
                setting,
                row["epsilon"],
                seed,
                {int(k): round(float(v), 4) for k, v in curve.items()},
            )


if __name__ == "__main__":
    main()
