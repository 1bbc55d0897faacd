"""Notebook 05's sections (Muschiol 2021 §4.2, §5.2-5.4 and the frontier beyond it), one call each.

:func:`setup` reads the notebook's parameters, loads notebook 04's ensembles' votes and returns a :class:`Study05`;
every section takes it, computes its tables and figures (:mod:`.thesis_tables`, :mod:`.release`, :mod:`.pipeline`,
:mod:`.figures`), saves them, records its scalars and verdicts (:mod:`.release_claims`, :mod:`.students`), keeps
what a later section reads in ``study.results`` and returns what the notebook cell shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from pate_study.data import audioset
from pate_study.experiments.audioset import (
    bound_forensics,
    figures,
    pipeline,
    release,
    release_frontier,
    release_privacy,
    students,
    target,
    target_figures,
    teachers,
    thesis_tables,
)
from pate_study.experiments.audioset.data import clip_features, query_test_split
from pate_study.experiments.audioset.release_claims import analytic, noise_free, student_figures
from pate_study.experiments.audioset.release_claims import appendix as release_appendix
from pate_study.experiments.audioset.release_claims import common as release_common
from pate_study.experiments.audioset.release_claims import findings as release_findings
from pate_study.experiments.audioset.release_claims import students as release_students
from pate_study.experiments.audioset.release_claims import sweeps as release_sweeps
from pate_study.experiments.audioset.release_config import MultilabelConfig
from pate_study.experiments.audioset.teachers import TeacherSpec
from pate_study.experiments.audioset.votes import CachedVotes
from pate_study.reporting.outputs import NotebookOutputs
from pate_study.reporting.plots import use_style

#: Figs 5.16, A.12, A.13: the q̃ histograms, one per σ_e of the ``histogram_sigmas`` parameter, in this order.
HISTOGRAM_ITEMS = ("muschiol2021-fig5.16", "muschiol2021-figA.12", "muschiol2021-figA.13")


@dataclass
class Study05:
    """What every section of notebook 05 reads: the outputs, the settings (``config``, :class:`MultilabelConfig`),
    the data asked for (``requested_data``: auto, real or synthetic), the big subset's ensembles (``big``, by
    teacher count: one per replicate seed, :func:`.pipeline.ensemble_votes`) and their set-up (``info``), the
    teachers' and the students' recipes, the data stamp (``data``), the largest and second-largest teacher counts,
    the scale for the verdicts, and ``results``: what a section computed that a later one reads (by name)."""

    out: NotebookOutputs
    config: MultilabelConfig
    requested_data: str
    big: dict[int, list[CachedVotes]]
    info: dict[str, Any]
    spec: TeacherSpec
    student_spec: TeacherSpec
    data: str
    t_max: int
    t_mid: int
    scale: dict[str, Any]
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def votes(self) -> CachedVotes:
        """The first replicate of the largest ensemble (big T_max): what a single-ensemble table shows (the q̃
        histograms, the bounds side by side, the audit's companions), stamped so."""
        return self.big[self.t_max][0]

    @property
    def replicates(self) -> list[CachedVotes]:
        """Every replicate ensemble of big T_max: what the releases and students are replicated over."""
        return self.big[self.t_max]

    def ensemble_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`.pipeline.ensemble_votes` that name notebook 04's teachers."""
        return ensemble_kwargs(self.config)


#: the settings of notebook 05 that name notebook 04's teachers beside their recipe, under the names
#: :func:`.pipeline.ensemble_votes` and :func:`.pipeline.replicate_eval_votes` take
TEACHER_SETTINGS = ("curve_clips", "seed", "device", "backend", "teachers_per_task")


def ensemble_kwargs(config: MultilabelConfig) -> dict[str, Any]:
    """The keyword arguments of :func:`.pipeline.ensemble_votes` beside the recipe that name notebook 04's teachers
    (the curve sample, seed, device and shard plan enter the votes' cache key; ``teacher_replicates`` the replicate
    ensembles)."""
    replicates = config.teacher_replicates.as_record()
    named = {k: getattr(config, k) for k in TEACHER_SETTINGS}
    return named | {"replicates": replicates["seeds"], "replicate_counts": replicates["counts"]}


def teacher_recipes(config: MultilabelConfig) -> tuple[TeacherSpec, TeacherSpec]:
    """Notebook 04's teacher recipe from notebook 05's ``teacher_*`` settings, and the students' recipe: the
    teachers' on its full schedule (``teacher_steps``), kept at the last step (no early stopping)."""
    spec = teachers.teacher_spec_from_parameters(config.as_record())
    return spec, spec.replace(eval_every=config.teacher_steps, patience=None)


def setup(data: str, config: MultilabelConfig, out: NotebookOutputs) -> Study05:
    """Torch threads and the plot style from notebook 05's settings ``config``, the teachers' and the students'
    recipes (:func:`teacher_recipes`), the big subset's ensembles' votes on the ``data`` asked for (read from the
    cache notebook 04 filled, or trained through the same call), the data stamp and the recorded set-up."""
    torch.set_num_threads(int(config.torch_threads))
    use_style()
    spec, student_spec = teacher_recipes(config)
    counts = list(config.teacher_counts)
    big, info = pipeline.ensemble_votes(
        counts, spec, data=data, subset="big", min_pool=config.student_runs.min_pool, **ensemble_kwargs(config)
    )
    stamp, record = noise_free.setup_record(info, spec, counts)
    out.record("setup", **record)
    return Study05(
        out=out,
        config=config,
        requested_data=data,
        big=big,
        info=info,
        spec=spec,
        student_spec=student_spec,
        data=stamp,
        t_max=max(counts),
        t_mid=sorted(counts)[-2],
        scale=dict(teacher_pool=info["teacher_pool"], n_labels=info["n_labels"]),
    )


def noise_free_section(study: Study05) -> pd.DataFrame:
    """Tables 5.1 / 5.2: the noise-free ensembles (each table the mean over the replicate ensembles,
    :func:`.thesis_tables.replicated_noise_free_tables`), their claims judged over the replicate ensembles and the
    pool-query bootstrap (:func:`.thesis_tables.replicated_tolerance`); Table 5.3's frame kept for the next section.
    Shows the claims."""
    s, out = study, study.out
    t51, t52, t53 = thesis_tables.replicated_noise_free_tables(s.big)
    tol = thesis_tables.replicated_tolerance(s.big, seed=s.config.seed)
    claims = noise_free.ensemble_claims(t51, t52, t53, kind=s.info["kind"], tolerance=tol)
    out.save_table(thesis_tables.table_5_1_beside(t51), "muschiol2021-table5.1", data=s.data, float_format="{:.3f}")
    out.save_table(thesis_tables.table_5_2_beside(t52), "muschiol2021-table5.2", data=s.data, float_format="{:.3f}")
    out.record("muschiol2021-table5.1", **noise_free.table_5_1_record(t51, claims, s.info["kind"], s.scale, tol))
    out.record("muschiol2021-table5.2", **noise_free.table_5_2_record(t52, tol))
    s.results.update(t51=t51, t53=t53, claims=claims)
    return claims[["claim", "thesis", "ours", "verdict"]]


def confidence_rule_section(study: Study05) -> pd.DataFrame:
    """Table 5.3: the confidence check under both rules, and which reproduces the printed answered shares."""
    s = study
    t53 = s.results["t53"]
    s.out.save_table(thesis_tables.table_5_3_beside(t53), "muschiol2021-table5.3", data=s.data, float_format="{:.3f}")
    s.out.record(
        "muschiol2021-table5.3", **noise_free.table_5_3_record(t53, s.results["claims"], s.info["kind"], s.scale)
    )
    return noise_free.confidence_rule_verdict(t53)


def appendix_section(study: Study05) -> list[str]:
    """Tables A.1-A.3 on the 15-class "small" subset (when ``run_small``): computed once, printed and judged from
    the same frames. Shows the items saved."""
    s = study
    if not s.config.run_small:
        return []
    small, info_small = pipeline.ensemble_votes(
        list(s.config.teacher_counts), s.spec, data=s.requested_data, subset="small", min_pool=0, **s.ensemble_kwargs()
    )
    scale = dict(teacher_pool=info_small["teacher_pool"], n_labels=info_small["n_labels"])
    appendix = thesis_tables.replicated_noise_free_tables(small, appendix=True)
    saved = []
    for item, frame in thesis_tables.appendix_tables(*appendix).items():
        s.out.save_table(frame, item, data=release_common.small_stamp(info_small), float_format="{:.3f}")
        saved.append(item)
    tol = thesis_tables.replicated_tolerance(small, best_of=thesis_tables.APPENDIX_A1_THRESHOLDS, seed=s.config.seed)
    for item, rec in release_appendix.appendix_records(*appendix, info_small["kind"], scale, tol).items():
        s.out.record(item, **rec)
    return saved


def prediction_counts_section(study: Study05) -> pd.DataFrame:
    """Fig A.6: predictions vs labels of the most and least frequent classes, noise-free (the figure: each count's
    first replicate ensemble); the claims judged over big T_max's replicate ensembles and ``release_sweeps.boot``
    pool-query resamples of their counts. Shows big T_max's counts (first replicate)."""
    s = study
    counts = {t: thesis_tables.prediction_counts(s.big[t][0]) for t in s.config.teacher_counts}
    stamp = s.data + "; counts of each count's first replicate ensemble"
    s.out.save_figure(figures.prediction_counts_figure(counts), "muschiol2021-figA.6", data=stamp)
    draws = thesis_tables.replicated_rare_draws(s.replicates, n_boot=s.config.release_sweeps.boot, seed=s.config.seed)
    record = release_appendix.prediction_counts_record(counts[s.t_max], s.info["kind"], s.scale, draws)
    s.out.record("muschiol2021-figA.6", **record)
    return counts[s.t_max]


def noise_sweep_section(study: Study05) -> pd.DataFrame:
    """Figs 5.13 / A.7: GNThreshold over σ_e for big T_max and T_mid, on every replicate ensemble (its own noise
    draws, :func:`.release.draws_per_replicate` of ``release_sweeps.draws`` per point, and release-noise seed
    ``seed + g``; the same ``release_sweeps.boot`` pool resamples for all), joined by
    :func:`.release.replicate_sweeps`. Shows big T_max's sweep without its per-draw arrays."""
    s, c = study, study.config
    sweeps = {
        t: release.replicate_sweeps(
            [
                release.noise_sweep(
                    cv,
                    c.release_sweeps.sigmas_e,
                    n_account=c.accounting.n_account,
                    delta=c.accounting.delta,
                    seed=c.seed,
                    draw_seed=c.seed + g,
                    n_draws=release.draws_per_replicate(c.release_sweeps.draws, len(s.big[t])),
                    n_boot=c.release_sweeps.boot,
                )
                for g, cv in enumerate(s.big[t])
            ]
        )
        for t in (s.t_max, s.t_mid)
    }
    for t, item in ((s.t_max, "muschiol2021-fig5.13"), (s.t_mid, "muschiol2021-figA.7")):
        fig = figures.sweep_figure(sweeps[t], f"GNThreshold, big {t}", c.accounting.delta, c.accounting.n_account)
        s.out.save_figure(fig, item, data=s.data)
        s.out.record(item, **release_sweeps.sweep_record(sweeps[t], s.info["n_labels"], s.info["kind"]))
    s.results["sweeps"] = sweeps
    return release.summary(sweeps[s.t_max]).round(3)


def confidence_sweep_section(study: Study05) -> pd.DataFrame:
    """Figs 5.14, 5.15, A.8-A.11: Confident-GNThreshold over (σ_c, σ_e) with the release-noise draws of
    :func:`noise_sweep_section`; each figure's claims beside its ensemble's plain sweep. Shows the claims."""
    s, c = study, study.config
    conf = release.confidence_sweeps(
        s.big,
        s.t_max,
        s.t_mid,
        c.release_sweeps.sigmas_e,
        c.release_sweeps.sigmas_c,
        n_account=c.accounting.n_account,
        delta=c.accounting.delta,
        seed=c.seed,
        n_draws=c.release_sweeps.draws,
        n_boot=c.release_sweeps.boot,
    )
    for item, t, th, thc in release.confidence_runs(s.t_max, s.t_mid):
        title = f"Confident-GNThreshold, big {t}, th_e={th}, th_c={thc}"
        s.out.save_figure(figures.confidence_figure(conf[item], title), item, data=s.data)
    claims, records = release_sweeps.confidence_records(
        s.results["sweeps"], conf, s.t_max, s.t_mid, s.info["kind"], s.scale
    )
    for item, rec in records.items():
        s.out.record(item, **rec)
    s.results["confidence_claims"] = claims
    return claims[["claim", "thesis", "ours", "verdict"]]


def q_histogram_section(study: Study05) -> list[str]:
    """Figs 5.16, A.12, A.13: q̃ per log bucket and the bucket's ε, and the break-even claim checked analytically
    at this run's setting (:func:`.release_claims.analytic.break_even_verdict`). Shows each item's verdict."""
    s, c = study, study.config
    shown = []
    for sig, item in zip(c.release_sweeps.histogram_sigmas, HISTOGRAM_ITEMS):
        h = release_privacy.q_histogram(s.votes, sig, n_account=c.accounting.n_account, delta=c.accounting.delta)
        s.out.save_figure(figures.q_histogram_figure(h, sig), item, data=s.data)
        rec = analytic.q_histogram_record(
            h, sig, item, s.info["kind"], s.info["n_labels"], s.scale, n_teachers=s.t_max, delta=c.accounting.delta
        )
        s.out.record(item, **rec)
        shown.append(f"{item}: {rec['verdict']}")
    return shown


def accounting_section(study: Study05) -> pd.DataFrame:
    """Every bound side by side on the same votes, the fit of Table 5.4's printed ε, and the adaptive rules at
    equal ε. Shows the adaptive rules."""
    s, c = study, study.config
    bounds = release_privacy.bounds_table(
        s.votes, n_account=c.accounting.n_account, delta=c.accounting.delta, seed=c.seed
    )
    s.out.save_table(bounds, "muschiol2021-accounting-bounds", data=s.data, float_format="{:.4g}")
    fit = bound_forensics.table54_fit(n_labels=s.info["n_labels"], n_teachers=s.t_max)
    s.out.record("table54_fit", **release_students.table54_fit_record(fit))
    rules = release_privacy.adaptive_rules(
        s.votes, 0.3, n_account=c.accounting.n_account, delta=c.accounting.delta, seed=c.seed
    )
    s.out.save_table(rules, "muschiol2021-adaptive-rules", data=s.data, float_format="{:.4g}")
    s.out.record("muschiol2021-adaptive-rules", **release_students.adaptive_rules_record(rules))
    s.results.update(bounds=bounds, rules=rules)
    return rules.round(3)


def replicated_references(study: Study05, thresholds: tuple, units: list[tuple[int, int]]) -> pd.DataFrame:
    """Beside Table 5.4 (:func:`.students.reference_rows`): the first replicate's single model, aggregate and class
    prior, the single model's row carrying its mAP on every replicate unit's ensemble (``map_units``, the unit's
    ensemble in ``map_clusters``: replicate ``g`` of the single model beside the students of ensemble ``g``, paired
    in the claim that the students stay below it) when the single model has one replicate per ensemble."""
    singles = study.big.get(1, [study.votes])
    refs = pd.DataFrame(students.reference_rows(singles[0], study.votes, *thresholds))
    if len(singles) == len(study.replicates) > 1:
        per = [students.reference_rows(one, cv, *thresholds)[0]["map"] for one, cv in zip(singles, study.replicates)]
        refs["map_units"] = [[per[g] for g, _ in units]] + [None] * (len(refs) - 1)
        refs["map_clusters"] = [[g for g, _ in units]] + [None] * (len(refs) - 1)
    return refs


def students_section(study: Study05) -> pd.DataFrame:
    """Table 5.4 and Figs 5.17-5.19: students per (n, th_e, th_c) over the replicate units of
    :func:`.pipeline.replicate_units` (a teacher ensemble, its own release-noise draw and a student seed each), the
    references and diagnostics (first ensemble), the σ sweeps of the figures (Table 5.4's point reused) and their
    claims. Shows Table 5.4 beside the thesis."""
    s, c = study, study.config
    cv, pool_x, test_x = s.votes, s.info["pool_features"], s.info["test_features"]
    t54, rows54 = pipeline.student_sweep(
        s.replicates,
        pool_x,
        test_x,
        c.student_runs.sizes,
        c.student_runs.thresholds,
        c.student_runs.confidences,
        s.student_spec,
        delta=c.accounting.delta,
        seed=c.seed,
        seeds=c.student_runs.seeds,
        backend=c.backend,
    )
    thresholds = thesis_tables.best_thresholds(s.results["t51"], s.t_max)
    refs = replicated_references(s, thresholds, pipeline.replicate_units(len(s.replicates), c.student_runs.seeds))
    n_max = max(c.student_runs.sizes)
    diag = pd.DataFrame(
        students.student_diagnostics(
            cv, pool_x, test_x, n_max, c.student_runs.thresholds[0], s.student_spec, seed=c.seed
        )
    )
    units = pipeline.replicate_units(len(s.replicates), c.student_runs.seeds)
    stamp = s.data + (
        f"; {len(units)} replicate units per release (teacher ensemble, release-noise draw, student seed): "
        + ", ".join(f"ensemble {g} / seed {st}" for g, st in units)
        + "; references and diagnostics on the first ensemble"
    )
    for frame, item in (
        (
            thesis_tables.table_5_4_beside(t54.drop(columns=["map_units", "map_clusters"], errors="ignore")),
            "muschiol2021-table5.4",
        ),
        (refs.drop(columns=["map_units", "map_clusters"], errors="ignore"), "muschiol2021-table5.4-references"),
        (diag, "muschiol2021-table5.4-student-diagnostics"),
    ):
        s.out.save_table(frame, item, data=stamp, float_format="{:.3f}")
    rec54, v_q, v54 = release_students.table_5_4_record(t54, refs, diag, s.info["kind"], s.scale)
    s.out.record("muschiol2021-table5.4", **rec54)
    sig = pipeline.sigma_students(
        s.replicates,
        pool_x,
        test_x,
        student_figures.STUDENT_FIGURES,
        *c.student_runs.sigmas,
        s.student_spec,
        n_queries=n_max,
        delta=c.accounting.delta,
        seed=c.seed,
        seeds=c.student_runs.seeds,
        table54_rows=rows54,
    )
    for item, th, thcs in student_figures.STUDENT_FIGURES:
        rows = student_figures.student_rows(t54, th, thcs)
        fig = figures.students_figure(rows, refs, th, thcs[0], c.accounting.delta, sig[sig["item"] == item])
        s.out.save_figure(fig, item, data=s.data)
        s.out.record(item, **student_figures.student_figure_record(t54, item, th, thcs, v54, s.info["kind"], sig))
    s.results.update(t54=t54, refs=refs, rec54=rec54, v_q=v_q)
    return thesis_tables.table_5_4_beside(t54.drop(columns=["map_units", "map_clusters"], errors="ignore")).round(3)


#: the audit's data stamp: simulated draws on small instances, no data
AUDIT_DATA = (
    "simulated draws (no data): GNThreshold 5 teachers x 4 labels, adaptive-k 4 x 3, top-k vote 3 x 3, one query"
)


def audit_section(study: Study05) -> dict[str, Any]:
    """Every published release against an empirical audit (:func:`.release_privacy.gnthreshold_audit`). Shows the
    record."""
    s, c = study, study.config
    aud = release_privacy.gnthreshold_audit(c.audit.sigmas, n_samples=c.audit.samples, seed=c.seed)
    s.out.save_table(aud, "muschiol2021-gnthreshold-audit", data=AUDIT_DATA, float_format="{:.3f}")
    s.out.save_figure(figures.audit_figure(aud), "muschiol2021-gnthreshold-audit-fig", data=AUDIT_DATA)
    record = release_findings.audit_record(aud)
    s.out.record("muschiol2021-gnthreshold-audit", **record)
    s.results.update(audit_table=aud, audit=record)
    return record


def multiwinner_section(study: Study05) -> pd.DataFrame:
    """Binary, τ- and powerset PATE on the same votes (Dziedzic et al. 2023), a student per mechanism at σ_e 0.3.
    Shows the table."""
    s, c = study, study.config
    mw, labels = release_frontier.multiwinner_sweep(
        s.votes,
        c.multiwinner.sigmas,
        n_account=c.accounting.n_account,
        delta=c.accounting.delta,
        tau=c.multiwinner.tau,
        seed=c.seed,
    )
    mw_students = pipeline.multiwinner_students(
        mw, labels, s.info["pool_features"], s.info["test_features"], s.votes.test_labels, s.student_spec
    )
    table = mw.merge(mw_students[["mechanism", "sigma_e", "map"]], on=["mechanism", "sigma_e"], how="left")
    stamp = s.data + "; first replicate ensemble, one release-noise draw, one student seed (not replicated)"
    s.out.save_table(table, "muschiol2021-beyond-multiwinner", data=stamp, float_format="{:.4g}")
    fig = figures.multiwinner_figure(mw, mw_students, c.accounting.delta, c.accounting.n_account)
    s.out.save_figure(fig, "muschiol2021-beyond-multiwinner-fig", data=stamp)
    s.out.record("muschiol2021-beyond-multiwinner", **release_findings.multiwinner_record(mw, mw_students))
    s.results["multiwinner"] = mw
    return table.round(4)


def frontier_section(study: Study05) -> list[str]:
    """The privacy-utility frontier on the first ``max(student_sizes)`` pool queries (one release per setting, three
    student seeds), what choosing its best release by test mAP would cost (charged: the composition of the
    candidates within the budget), the thesis's settings beside it. Shows the findings; the figure is drawn with the
    target (:func:`target_section`)."""
    s, c = study, study.config
    cv, pool_x, test_x = s.votes, s.info["pool_features"], s.info["test_features"]
    n_max = max(c.student_runs.sizes)
    settings = release_frontier.frontier_settings(
        c.frontier.sigmas, c.frontier.topk_settings, c.frontier.multiwinner_sigmas
    )
    front, _ = pipeline.frontier_students(
        cv,
        pool_x,
        test_x,
        settings,
        s.student_spec,
        n_queries=n_max,
        delta=c.accounting.delta,
        seed=c.seed,
        seeds=c.student_runs.seeds,
        backend=c.backend,
    )
    stamp = s.data + f"; {n_max} queries, student seeds {list(c.student_runs.seeds)}, {c.teacher_steps} fixed steps"
    s.out.save_table(front, "pate_study-audioset-frontier", data=stamp, float_format="{:.4g}")
    selection = release_frontier.frontier_selection_privacy(
        front, n_teachers=cv.n_teachers, delta=c.accounting.delta, n_labels=cv.pool_probabilities.shape[2]
    )
    summary = students.frontier_summary(front, s.results["t54"], selection=selection)
    lines = students.frontier_findings(front, summary)
    s.out.record("pate_study-audioset-frontier", **summary, findings=lines)
    s.results.update(frontier=front, frontier_stamp=stamp)
    return lines


def target_run(config: MultilabelConfig, data: str) -> dict[str, Any]:
    """The confirming run of the study's target from notebook 05's settings ``config`` and the ``data`` asked for
    alone (so that a script runs exactly what the notebook runs): the protocol (``frontier.target_protocol``), the
    teachers' and students' recipes (:func:`teacher_recipes`), the big subset's eval clips with their features and
    labels, notebook 05's former query pool (:func:`.data.query_test_split` with ``student_runs.min_pool`` and
    ``seed``: the clips the reporting split is drawn from), the protocol's splits, the votes on the query pool of the
    fresh replicate ensembles the protocol names (:func:`.pipeline.replicate_eval_votes`; notebook 04 trains the
    same seeds when its ``teacher_replicates`` lists them, so they are read from its cache) and
    :func:`.target.run_target`. Returns its result with the replicate seeds and the data stamp."""
    spec, student_spec = teacher_recipes(config)
    protocol = target.load_protocol(config.frontier.target_protocol)
    ds = audioset.load(data, subset="big", seed=config.seed)
    ev = ds.splits["eval"]
    former_pool, _ = query_test_split(len(ev.labels), min_pool=config.student_runs.min_pool, seed=config.seed)
    splits = protocol.splits(len(ev.labels), former_pool)
    rv = pipeline.replicate_eval_votes(
        spec,
        list(protocol.replicate_seeds),
        splits.query,
        n_teachers=protocol.n_teachers,
        data=data,
        **{k: getattr(config, k) for k in TEACHER_SETTINGS},
    )
    x_eval = clip_features(ev)
    if not np.array_equal(rv.features, x_eval[splits.query]):
        raise ValueError("teacher_replicates: the replicate ensembles' eval clips are not this subset's")
    run = target.run_target(protocol, splits, rv.probabilities, x_eval, ev.labels, student_spec)
    run["record"]["teacher_replicate_seeds"] = [int(x) for x in rv.seeds]
    run["stamp"] = (
        f"{ds.source.stamp()}; {protocol.path} at {protocol.commit}; teacher replicate seeds {list(rv.seeds)}"
    )
    return run


def target_section(study: Study05) -> pd.Series:
    """The study's target, by the pre-registered protocol (``frontier["target_protocol"]``, :func:`target_run`):
    recorded under :data:`.target.TARGET_ITEM` with the runs table, and the frontier figure drawn with the
    procedure's point. Shows the record's main lines."""
    s, c = study, study.config
    run = target_run(c, s.requested_data)
    record = run["record"]
    s.out.save_table(run["runs"], target.TARGET_ITEM, data=run["stamp"], float_format="{:.4g}")
    s.out.record(target.TARGET_ITEM, **record)
    fig = target_figures.frontier_figure(
        s.results["frontier"], s.results["t54"], s.results["refs"], record, delta=c.accounting.delta
    )
    s.out.save_figure(
        fig, "pate_study-audioset-frontier", data=s.results["frontier_stamp"] + "; target: " + run["stamp"]
    )
    keys = (
        "target_verdict",
        "target_estimate",
        "procedure_epsilon",
        "one_run_epsilon",
        "one_run_epsilon_exact_gaussian",
        "n_teacher_ensembles",
        "n_runs",
        "protocol_commit",
    )
    return pd.Series({k: record[k] for k in keys}, name=target.TARGET_ITEM)


def findings_section(study: Study05) -> pd.Series:
    """The findings computed from this run's numbers (:func:`.release_claims.findings.multilabel_findings`),
    recorded."""
    s, r = study, study.results
    lines = release_findings.multilabel_findings(
        r["sweeps"][s.t_max],
        r["t54"],
        r["multiwinner"],
        r["bounds"],
        r["rules"],
        r["audit_table"],
        pd.concat([r["claims"], r["confidence_claims"]]),
        r["rec54"],
        r["audit"],
        max(s.config.student_runs.sizes),
        s.t_max,
        r["v_q"],
    )
    s.out.record("findings", lines=lines)
    return pd.Series(lines, name="findings")
