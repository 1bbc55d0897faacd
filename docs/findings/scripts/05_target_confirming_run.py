"""The Audio Set target's confirming run, alone: exactly what notebook 05's target cell computes
(``experiments.audioset.release_sections.target_run`` with the paper profile's settings: the defaults of
``MultilabelConfig``, and ``data = "auto"`` as the notebook's parameters cell has it), without the thesis sections
around it. Run once, after the protocol (``configs/05_audioset_multilabel/target_protocol.yaml``) was committed;
never re-run to pass. (It then read the settings from the paper profile's file, which has since become an empty list
of overrides of the same contract: the same values.) Writes the record (JSON) and the runs table (CSV) into OUT_DIR
and logs the wall time of the procedure. From the repository root:

    PATE_STUDY_MIRROR=... OMP_NUM_THREADS=1 .venv/bin/python docs/findings/scripts/05_target_confirming_run.py OUT_DIR
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import torch

from pate_study.experiments.audioset import release_sections
from pate_study.experiments.audioset.release_config import MultilabelConfig

#: notebook 05's paper profile: its contract's defaults, and the parameters cell's ``data``
CONFIG, DATA = MultilabelConfig(), "auto"


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(CONFIG.torch_threads)
    start = time.perf_counter()
    run = release_sections.target_run(CONFIG, DATA)
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
