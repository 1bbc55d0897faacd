"""Exploration behind the Audio Set target's protocol (``configs/05_audioset_multilabel/target_protocol.yaml``),
disclosed there: allowed, not charged in ε, on today's seed-0 ensemble (notebook 04's big 50 teachers) and the
target's **validation split only** (``experiments.audioset.target_splits``; the reporting split's labels and the
query pool's labels are never read here: only the validation rows' labels are taken from the eval labels).

Each arm releases labels on ``n`` answered queries of the target's query pool (chosen ``random`` or ``diverse``)
with one frontier mechanism (top-k / τ) at σ_e, trains a student on them (stage A) and, where asked, a second
student on every pool row with pseudo-labels on the unanswered ones (stage B, the semi-supervised option); both
scored on the validation split (mAP). Run from the repository root (paper profile of notebook 04 run first):

    PATE_STUDY_MIRROR=... OMP_NUM_THREADS=1 .venv/bin/python docs/findings/scripts/05_target_exploration.py ROUND
"""

from __future__ import annotations

import logging
import sys
import time
import warnings

import numpy as np
import yaml
from _paper_votes import paper_votes

from pate_study.data import audioset
from pate_study.experiments.audioset import release, release_frontier, target, target_students
from pate_study.experiments.audioset.data import clip_features
from pate_study.experiments.audioset.target_splits import target_splits
from pate_study.learning import metrics
from pate_study.learning.semisupervised import LabelledPool
from pate_study.privacy import topk_vote

PROTOCOL = "configs/05_audioset_multilabel/target_protocol.yaml"
T, C = 50, 161


def sigma_for(epsilon: float, n: int, k: int) -> float:
    """σ_e of the top-k vote (and τ, same ε) whose data-independent ε over ``n`` queries is ``epsilon``."""
    lo, hi = 0.01, 2.0
    for _ in range(60):
        mid = (lo + hi) / 2
        e = topk_vote.topk_epsilon(
            k=k, n_teachers=T, sigma=mid, delta=1e-8, n_queries=n, n_labels=C, accounting=release.ACCOUNTING
        ).epsilon
        lo, hi = (mid, hi) if e > epsilon else (lo, mid)
    return round(hi, 4)


def data():
    p, spec, cv, info = paper_votes()
    n_eval = len(info["pool_index"]) + len(info["test_index"])
    probs = np.zeros((T, n_eval, C), np.float32)
    probs[:, info["pool_index"]] = cv.pool_probabilities
    probs[:, info["test_index"]] = cv.test_probabilities
    feats = np.zeros((n_eval, info["pool_features"].shape[1]), np.float32)
    feats[info["pool_index"]], feats[info["test_index"]] = info["pool_features"], info["test_features"]
    proto = yaml.safe_load(open(PROTOCOL))["splits"]
    s = target_splits(
        n_eval,
        info["pool_index"],
        reporting_fraction=proto["reporting_fraction"],
        validation_fraction=proto["validation_fraction"],
        seed=proto["seed"],
    )
    ev = audioset.load("real", subset="big", seed=p["seed"]).splits["eval"]
    assert np.array_equal(clip_features(ev), feats)
    y_val = np.asarray(ev.labels, bool)[s.validation]  # the only labels read
    student_spec = spec.replace(eval_every=p["teacher_steps"], patience=None)
    return probs[:, s.query], feats[s.query], feats[s.validation], y_val, student_spec


def run(arms, probs, xq, xv, yv, spec):
    tasks, pools = [], []
    for a in arms:
        rows = target.choose_queries(xq, a["n"], a.get("choice", "random"), seed=a["draw"])
        setting = {"mechanism": a["mech"], "sigma_e": a["sigma_e"], "k": a["k"], "th_e": a["th_e"]}
        labels = release_frontier.frontier_labels(probs[:, rows], setting, np.random.default_rng([a["draw"], 1]))
        a["labels_per_query"] = float(labels.sum(1).mean())
        tasks.append(target_students.StudentTask(rows, labels, a["draw"]))
        pools.append(LabelledPool(len(xq), rows, labels))
    scored = np.concatenate([xq, xv])
    steps = {a.get("steps", spec.steps) for a in arms}
    assert len(steps) == 1
    spec = spec.replace(steps=steps.pop())
    t0 = time.time()
    out = target_students.stacked_students(xq, tasks, scored, spec)
    logging.info("stage A: %d students in %.0f s", len(tasks), time.time() - t0)
    for a, p in zip(arms, out):
        a["val_map_A"] = metrics.mean_average_precision(yv, p[len(xq) :])
        logging.info("A: %s", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in a.items()})
    ssl = [i for i, a in enumerate(arms) if a.get("ssl") is not None]
    if ssl:
        b_tasks = []
        for i in ssl:
            t, _ = target_students.self_training_tasks(
                [pools[i]], [out[i][: len(xq)]], [arms[i]["draw"] + 1], keep=arms[i]["ssl"]
            )
            b_tasks += t
        t0 = time.time()
        out_b = target_students.stacked_students(xq, b_tasks, scored, spec)
        logging.info("stage B: %d students in %.0f s", len(b_tasks), time.time() - t0)
        for i, p in zip(ssl, out_b):
            arms[i]["val_map_B"] = metrics.mean_average_precision(yv, p[len(xq) :])
    for a in arms:
        logging.info("%s", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in a.items()})


def rounds(name: str) -> list[dict]:
    eps = 290.0
    if name == "1":  # the trade between answered queries and σ_e at one-run ε 290 (top-k k 3), th_e, τ, SSL
        arms = []
        for n in (1000, 1500, 2000, 3000, 4000):
            s = sigma_for(eps, n, 3)
            for th in (0.3, 0.4):
                arms.append(dict(mech="topk", k=3, sigma_e=s, th_e=th, n=n, draw=0, ssl=0.0))
        for n in (1500, 3000):
            arms.append(dict(mech="tau", k=3, sigma_e=sigma_for(eps, n, 3), th_e=0.4, n=n, draw=0, ssl=0.0))
        return arms
    if name in ("2", "2b"):  # lower thresholds, k, the query choice, the pseudo-labels' share, steps

        def arm(k, n, th, draw=0, ssl=1.0, choice="random"):
            return dict(mech="topk", k=k, sigma_e=sigma_for(eps, n, k), th_e=th, n=n, draw=draw, ssl=ssl, choice=choice)

        arms = [
            arm(3, 1000, 0.25),
            arm(3, 1500, 0.25),
            arm(3, 1500, 0.2),
            arm(3, 2000, 0.25),
            arm(3, 1500, 0.3, draw=1),
            arm(3, 1500, 0.3, draw=1, choice="diverse"),
            arm(2, 1500, 0.3),
            arm(2, 1500, 0.25),
            arm(3, 1500, 0.3, draw=1, ssl=0.7),
            arm(4, 1500, 0.3),
            arm(3, 1200, 0.3),
            arm(3, 2000, 0.3, draw=1),
        ]
        if name == "2b":  # the same students at half the schedule
            arms = [dict(a, steps=1500) for a in (arms[1], arms[4], arms[6], arms[11])]
        return arms
    if name in ("3", "3b"):  # more labels per teacher (k 4-6), thresholds, a second draw of the best

        def arm(k, n, th, draw=0, choice="random"):
            return dict(mech="topk", k=k, sigma_e=sigma_for(eps, n, k), th_e=th, n=n, draw=draw, ssl=1.0, choice=choice)

        arms = [
            arm(4, 1500, 0.3, draw=1),
            arm(4, 1000, 0.3),
            arm(4, 1500, 0.25),
            arm(5, 1500, 0.3),
            arm(5, 1500, 0.35),
            arm(6, 1500, 0.35),
            arm(4, 2000, 0.3),
            arm(4, 1500, 0.3, choice="diverse"),
            arm(3, 1000, 0.25, draw=1),
            arm(4, 1500, 0.35),
        ]
        if name == "3b":  # half the schedule
            arms = [dict(a, steps=1500) for a in (arm(4, 1500, 0.3), arm(3, 1000, 0.25), arm(4, 1500, 0.3, draw=1))]
        return arms
    if name in ("4", "4b"):  # k 5-8 around th_e 0.25-0.3, n 1,000-2,000, at 1,500 steps (round 3b: no loss)

        def arm(k, n, th, draw=0, steps=1500):
            return dict(mech="topk", k=k, sigma_e=sigma_for(eps, n, k), th_e=th, n=n, draw=draw, ssl=1.0, steps=steps)

        if name == "4b":  # 1,000 steps
            return [arm(4, 1500, 0.3, steps=1000), arm(3, 1000, 0.25, steps=1000), arm(5, 1500, 0.3, steps=1000)]
        return [
            arm(5, 1500, 0.3, draw=1),
            arm(5, 1500, 0.25),
            arm(5, 1000, 0.3),
            arm(5, 2000, 0.3),
            arm(6, 1500, 0.3),
            arm(6, 1500, 0.25),
            arm(8, 1500, 0.3),
            arm(8, 1500, 0.25),
            arm(4, 1500, 0.25, draw=1),
            arm(6, 1000, 0.3),
        ]
    if name == "5":  # the corners of the space at 1,000 steps (round 4b: no loss), self-training only where few labels

        def arm(k, n, th, ssl=None):
            return dict(mech="topk", k=k, sigma_e=sigma_for(eps, n, k), th_e=th, n=n, draw=2, ssl=ssl, steps=1000)

        return [
            arm(8, 1000, 0.3),
            arm(8, 2000, 0.3),
            arm(6, 1000, 0.25),
            arm(6, 2000, 0.25),
            arm(5, 1000, 0.25),
            arm(5, 2000, 0.3),
            arm(6, 1000, 0.3, ssl=1.0),
            arm(6, 1500, 0.3),
        ]
    raise SystemExit(f"round {name!r}: unknown")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    warnings.simplefilter("ignore")
    probs, xq, xv, yv, spec = data()
    run(rounds(sys.argv[1]), probs, xq, xv, yv, spec)


if __name__ == "__main__":
    main()
