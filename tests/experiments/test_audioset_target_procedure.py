"""The Audio Set target procedure: the protocol file, the random search drawn before the data, its charge (the same
as privacy.selection's for the procedure run), the selection that never reads the reporting split, the verdict."""

from __future__ import annotations

import dataclasses
import inspect
import math

import numpy as np
import pytest
import yaml
from test_audioset_students_frontier import TINY

from pate_study.experiments.audioset import release_frontier, target, teachers
from pate_study.experiments.audioset.target_splits import SealedLabels, TargetSplits
from pate_study.experiments.audioset.votes import synthetic_teacher_probabilities
from pate_study.privacy import selection
from pate_study.privacy.accounting import account
from pate_study.privacy.options import Accounting
from pate_study.reporting import uncertainty as unc

PROTOCOL_FILE = "configs/05_audioset_multilabel/target_protocol.yaml"


def _protocol(tmp_path, **changes) -> target.Protocol:
    """A small protocol (2 candidates, E[K] 2, 2 executions per ensemble) written to a file and loaded."""
    data = {
        "target": {"map": 0.13, "epsilon": 300, "delta": 1e-8},
        "splits": {"seed": 1, "reporting_fraction": 0.3, "validation_fraction": 0.2},
        "teachers": {"n_teachers": 8, "min_ensembles": 2, "replicate_seeds": [1, 2]},
        "candidates": [
            dict(mechanism="topk", k=2, sigma_e=0.3, th_e=0.3, n_queries=40, query_choice="random", self_training=None),
            dict(mechanism="tau", k=2, sigma_e=0.4, th_e=0.3, n_queries=60, query_choice="diverse", self_training=1.0),
        ],
        "student": {"steps": 12},
        "charge": {"distribution": "truncated_negative_binomial", "eta": 1, "expected_runs": 2},
        "procedure": {"seed": 5, "executions_per_ensemble": 2},
        "reporting": {"n_boot": 20, "seed": 3},
        "disclosure": "a test protocol",
    }
    for key, value in changes.items():
        data[key] = value
    path = tmp_path / "protocol.yaml"
    path.write_text(yaml.safe_dump(data))
    return target.load_protocol(path)


def _instance(n_eval=300, n_labels=6, d=8, n_ensembles=2, n_teachers=8, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random((n_eval, n_labels)) < 0.2
    y[np.arange(n_eval), rng.integers(0, n_labels, n_eval)] = True
    x = (y @ rng.normal(0, 1, (n_labels, d)) + rng.normal(0, 0.5, (n_eval, d))).astype(np.float32)
    votes = [synthetic_teacher_probabilities(y, n_teachers, seed=seed + 10 + g) for g in range(n_ensembles)]
    return x, y, votes


def test_the_committed_protocol_loads_and_names_its_commit():
    p = target.load_protocol(PROTOCOL_FILE)
    assert p.path == PROTOCOL_FILE and len(p.sha256) == 64 and p.commit not in ("", "unknown")
    assert (
        p.min_ensembles >= 3
        and len(p.replicate_seeds) >= 3
        and p.delta == 1e-8
        and p.epsilon_max == 300
        and p.target_map == 0.13
    )
    assert p.disclosure and p.candidates


def test_a_bad_protocol_is_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="section 'charge'"):
        _protocol(tmp_path, charge={"distribution": "truncated_negative_binomial", "eta": 1})
    with pytest.raises(ValueError, match="replicate_seeds"):
        _protocol(tmp_path, teachers={"n_teachers": 8, "min_ensembles": 2, "replicate_seeds": [1, 1]})
    with pytest.raises(ValueError, match=r"candidates\[0\]"):
        _protocol(tmp_path, candidates=[{"mechanism": "gnthreshold"}])
    with pytest.raises(ValueError, match="expected the sections"):
        (tmp_path / "x.yaml").write_text("target: {}\n")
        target.load_protocol(tmp_path / "x.yaml")
    with pytest.raises(ValueError, match="unreadable"):
        target.load_protocol(tmp_path / "missing.yaml")


@pytest.mark.slow
def test_the_runs_are_drawn_before_any_data_and_k_follows_the_stated_distribution(tmp_path):
    p = _protocol(tmp_path)
    runs = target.draw_runs(p, 2)
    assert runs == target.draw_runs(p, 2)  # the seeds alone decide them
    assert {(r.ensemble, r.execution) for r in runs} == {(e, r) for e in range(2) for r in range(2)}
    eta, gamma = target.k_distribution(p)
    rng = np.random.default_rng(0)
    ks = np.array([target.sample_runs(rng, eta, gamma) for _ in range(20_000)])
    assert ks.min() >= 1 and ks.mean() == pytest.approx(2.0, rel=0.03)
    for k in (1, 2, 3):
        assert (ks == k).mean() == pytest.approx(selection.truncated_negative_binomial_pmf(k, eta, gamma), abs=0.01)


def test_the_charged_epsilon_is_privacy_selections_for_the_procedure_run(tmp_path):
    p = _protocol(tmp_path)
    got = target.procedure_privacy(p, n_teachers=8, n_labels=6)
    # by hand: each candidate's data-independent curve, their maximum per order, random stopping with the same
    # distribution and E[K]
    curves = [
        release_frontier.frontier_spent(c.release, n_teachers=8, n_queries=c.n_queries, n_labels=6, delta=1e-8)
        for c in p.candidates
    ]
    worst = np.max([c.rdp_or_logmgf for c in curves], axis=0)
    one = account(
        worst,
        delta=1e-8,
        accounting=Accounting(curves[0].orders),
        accountant="multilabel2021",
        mechanism="one run",
        n_queries=60,
        data_dependent=False,
        warn=False,
    )
    expected = selection.random_stopping_spent(
        one, distribution="truncated_negative_binomial", eta=1.0, mean=2.0, delta=1e-8, warn=False
    )
    assert got["procedure_epsilon"] == pytest.approx(expected.epsilon, rel=1e-9)
    assert got["_spent"].details["expected_runs"] == pytest.approx(2.0)
    assert got["one_run_epsilon"] == pytest.approx(max(c.epsilon for c in curves), rel=1e-9)
    assert got["one_run_epsilon"] < got["procedure_epsilon"] < 2 * got["one_run_epsilon"]
    assert got["one_run_epsilon_exact_gaussian"] <= got["one_run_epsilon"]
    assert "Papernot & Steinke" in got["procedure_charge"]


def test_the_selection_never_reads_the_reporting_split(tmp_path, monkeypatch):
    p = _protocol(tmp_path)
    x, y, votes = _instance()
    splits = TargetSplits(np.arange(0, 150), np.arange(150, 220), np.arange(220, 300), 1)
    spec = teachers.TeacherSpec(**TINY)
    # the procedure has no parameter through which a reporting label could come in
    assert not {"sealed", "y_reporting", "reporting_labels"} & set(inspect.signature(target.run_procedure).parameters)
    sealed = SealedLabels(y[splits.reporting], target.FinalSelection)
    opened_during_selection = []
    real_open = SealedLabels.open

    def spy(self, selection_):
        opened_during_selection.append(in_selection)
        return real_open(self, selection_)

    monkeypatch.setattr(SealedLabels, "open", spy)
    in_selection = True
    final = target.run_procedure(
        p,
        [v[:, splits.query] for v in votes],
        x[splits.query],
        x[splits.validation],
        y[splits.validation],
        x[splits.reporting],
        spec,
    )
    in_selection = False
    assert opened_during_selection == [] and sealed.opened == 0
    # the published runs are the validation maxima, and a non-final selection cannot open the labels
    for _, g in final.runs.groupby(["ensemble", "execution"]):
        assert g.loc[g["published"], "validation_map"].item() == g["validation_map"].max()
    with pytest.raises(PermissionError):
        sealed.open(dataclasses.replace(final, final=False))
    privacy = target.procedure_privacy(p, n_teachers=8, n_labels=6)
    record = target.report(final, sealed, p, privacy, splits)
    assert sealed.opened == 1 and opened_during_selection == [False, False]  # the refused try, then the report
    assert record["n_teacher_ensembles"] == 2 and record["protocol_sha256"] == p.sha256
    assert record["target_verdict"] in ("met", "not met", "inconclusive")
    assert record["procedure_epsilon"] == pytest.approx(privacy["procedure_epsilon"])
    # the reporting labels change nothing the selection chose
    again = target.run_procedure(
        p,
        [v[:, splits.query] for v in votes],
        x[splits.query],
        x[splits.validation],
        y[splits.validation],
        x[splits.reporting],
        spec,
    )
    assert again.runs.equals(final.runs)


def _estimate(values_by_ensemble, spread=0.002):
    scores_rows, boots = [], []
    rng = np.random.default_rng(0)
    import pandas as pd

    for e, vals in enumerate(values_by_ensemble):
        for r, v in enumerate(vals):
            scores_rows.append({"ensemble": e, "execution": r, "map": v})
            boots.append(v + rng.normal(0, spread, 30))
    return target.target_estimate(pd.DataFrame(scores_rows), np.stack(boots, axis=1))


def test_the_target_is_met_only_above_the_target_and_within_the_budget(tmp_path):
    p = _protocol(tmp_path)
    above = _estimate([[0.16, 0.161], [0.158, 0.162], [0.163, 0.159]])
    assert above.low > 0.13 and above.n_replicates == 3 and unc.TEACHER_SEED in above.sources
    assert target.target_verdict(above, 296.0, p).verdict == "agrees"
    assert target.target_verdict(above, 301.0, p).verdict == "differs"  # the budget decides, whatever the mAP
    below = _estimate([[0.10, 0.101], [0.099, 0.102], [0.1, 0.098]])
    assert target.target_verdict(below, 296.0, p).verdict == "differs"
    straddling = _estimate([[0.12, 0.14], [0.125, 0.145], [0.11, 0.15]], spread=0.01)
    assert straddling.low < 0.13 < straddling.high
    assert target.target_verdict(straddling, 296.0, p).verdict == "inconclusive"
    assert target.TARGET_WORDS["agrees"] == "met" and target.TARGET_WORDS["differs"] == "not met"
    assert math.isfinite(above.high)
