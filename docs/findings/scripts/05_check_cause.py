"""Diagnostic behind docs/findings/05_audioset_multilabel.md (Fig 5.18): why the confidence check lowers the student's
mAP on the full schedule but raised it on a 600-step one. Table 5.4's releases at n = 5,000, th_e 0.2, σ_e 0.3 without
and with the check (th_c 0.4, σ_c 0.6); students (3 seeds, one stacked call, as in notebook 05) on: every query
without the check; the check's answered queries with its labels; a random subset of the same size without the check
(the cost of fewer queries); the check's queries with the no-check release's labels (what choosing those queries is
worth). At 600 steps and at the recipe's 3,000. Reads notebook 04's cached votes (run 04 first, paper profile):

    PATE_STUDY_MIRROR=... OMP_NUM_THREADS=1 .venv/bin/python docs/findings/scripts/05_check_cause.py
"""

from __future__ import annotations

import logging

import numpy as np
from _paper_votes import paper_votes

from pate_study.experiments.audioset import release_privacy, students

N_QUERIES, SEEDS, SCHEDULES = 5000, (0, 1, 2), (600, 3000)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    p, spec, cv, info = paper_votes()
    _, (no_check, check) = release_privacy.released_labels(
        cv, [N_QUERIES], [0.2], [None, 0.4], delta=p["delta"], seed=p["seed"]
    )
    answered = np.asarray(check["answered"], dtype=bool)
    k = int(answered.sum())
    random_rows = np.zeros(N_QUERIES, dtype=bool)
    random_rows[np.random.default_rng(123).choice(N_QUERIES, k, replace=False)] = True
    arms = (
        (f"no check, all {N_QUERIES}", no_check["labels"], np.ones(N_QUERIES, dtype=bool)),
        (f"check, its {k} answered queries", check["labels"], answered),
        (f"no check, a random {k}", no_check["labels"], random_rows),
        (f"no check labels on the check's {k} queries", no_check["labels"], answered),
    )
    for steps in SCHEDULES:
        student_spec = spec.replace(steps=steps, eval_every=steps, patience=None)
        for name, labels, rows in arms:
            maps = [
                r["map"]
                for r in students.train_student(
                    info["pool_features"][:N_QUERIES],
                    labels,
                    rows,
                    info["test_features"],
                    cv.test_labels,
                    student_spec,
                    seeds=SEEDS,
                )
            ]
            logging.info(
                "%d steps | %s | student mAP %.4f ± %.4f (sd over %d seeds)",
                steps,
                name,
                np.mean(maps),
                np.std(maps, ddof=1),
                len(maps),
            )


if __name__ == "__main__":
    main()
