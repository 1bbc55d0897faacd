"""The Audio Set target's confirming run, alone: exactly what notebook 05's target cell computes
(``experiments.audioset.release_sections.target_run`` with the paper profile's parameters), without the thesis
sections around it. Run once, after the protocol (``configs/05_audioset_multilabel/target_protocol.yaml``) was
committed; never re-run to pass. Writes the record (JSON) and the runs table (CSV) into OUT_DIR and logs the wall
time of the procedure. From the repository root:

    PATE_STUDY_MIRROR=... OMP_NUM_THREADS=1 .venv/bin/python docs/findings/scripts/05_target_confirming_run.py OUT_DIR
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import torch
import yaml

from pate_study.experiments.audioset import release_sections, teachers

CONFIG = "configs/05_audioset_multilabel/paper.yaml"


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    p = release_sections.flat_parameters(yaml.safe_load(open(CONFIG)))
    torch.set_num_threads(int(p["torch_threads"]))
    spec = teachers.teacher_spec_from_parameters(p)
    student_spec = spec.replace(eval_every=p["teacher_steps"], patience=None)  # as release_sections.setup
    start = time.perf_counter()
    run = release_sections.target_run(p, spec, student_spec)
    logging.info(
        "target_run: %.1f s wall in all (replicate votes included); the procedure %.1f s",
        time.perf_counter() - start,
        run["seconds"],
    )
    (out / "record.json").write_text(json.dumps(run["record"], indent=1, default=str))
    run["runs"].to_csv(out / "runs.csv", index=False)
    for key in (
        "target_verdict",
        "target_estimate",
        "procedure_epsilon",
        "one_run_epsilon_exact_gaussian",
        "ensemble_means",
        "published_settings",
        "protocol_commit",
    ):
        logging.info("%s: %s", key, run["record"][key])


if __name__ == "__main__":
    main()
