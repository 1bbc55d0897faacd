"""benchmarks/bench_scale.py runs end to end at a tiny scale and reports time and memory for every stage (nothing
is timed or compared here: performance numbers belong in benchmarks/README.md), and its thesis sizes are the
thesis's (Muschiol 2021 Table 4.1, big 50)."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_scale.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_scale", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_scale", mod)
    spec.loader.exec_module(mod)
    return mod


def test_thesis_sizes_are_table_4_1_big_50():
    mod = _module()
    sz = mod.sizes(1.0)
    assert (sz["train_clips"], sz["test_clips"], sz["labels"], sz["teachers"]) == (342_979, 5_960, 153, 50)
    assert sz["unbal_clips"] == 2_042_985 and not sz["floored"]
    split, parts, public = mod._pools(sz, seed=0)
    assert len(split.teacher) == 308_681 and parts.train.shape == (50, 6_173)
    assert len(public) == 34_298 and not np.intersect1d(public, split.teacher).size
    assert len(mod._student_sizes(len(public))) * 9 == 18


@pytest.mark.slow
def test_every_stage_reports_time_and_memory(tmp_path):
    mod = _module()
    out = tmp_path / "scale.json"
    work = tmp_path / "work"
    work.mkdir()
    mod.main(
        [
            "--scale",
            "0.0005",
            "--steps",
            "1",
            "2",
            "--threads",
            "1",
            "--loader-seconds",
            "0.2",
            "--student-extra",
            "5",
            "--workdir",
            str(work),
            "--out",
            str(out),
        ]
    )
    report = json.loads(out.read_text())
    assert list(report["stages"]) == list(mod.STAGES)
    for stage, row in report["stages"].items():
        assert row["wall_s"] > 0 and row["peak_rss_mib"] > 0 and row["peak_anon_mib"] > 0, stage
    assert report["stages"]["aggregate"]["releases"] == 18 and report["stages"]["students"]["students"] == 18
    assert np.isfinite(report["stages"]["teachers"]["seconds_per_evaluation"])  # timed (tiny here: noise may dominate)
    assert set(report["estimate"]) >= {"teachers_s", "students_s", "total_s"}
    assert list(work.iterdir()) == []  # the memory-mapped data are deleted afterwards
