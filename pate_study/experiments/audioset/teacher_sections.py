"""Notebook 04's sections (Muschiol 2021, Fig 2.1, Table 4.1, Figs 5.1-5.12, A.1-A.5), one call each.

:func:`data_section` loads the subsets into a :class:`TeacherStudy`; every later section takes that study and the
notebook's :class:`~pate_study.reporting.outputs.NotebookOutputs`, trains or reads what it needs (:mod:`.pipeline`),
draws its figures (:mod:`.teacher_figures`), judges its claims (:mod:`.teacher_claims`), saves and records them,
keeps on the study what later sections read, and returns what the notebook cell shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pate_study.experiments.audioset import data as as_data
from pate_study.experiments.audioset import diagnostics, pipeline, teachers, thesis_tables
from pate_study.experiments.audioset import teacher_figures as figures
from pate_study.experiments.audioset.teacher_claims import ablations as teacher_ablations
from pate_study.experiments.audioset.teacher_claims import classes as teacher_classes
from pate_study.experiments.audioset.teacher_claims import curves as teacher_curves
from pate_study.experiments.audioset.teacher_claims import findings as teacher_findings
from pate_study.experiments.audioset.teacher_claims import models
from pate_study.experiments.audioset.teacher_claims import sampler as teacher_sampler
from pate_study.experiments.audioset.teacher_config import TeachersConfig
from pate_study.reporting.outputs import MarkdownText, NotebookOutputs, markdown_list
from pate_study.reporting.plots import save_and_show

#: The per-class figures' two teachers: Fig A.2/A.4's "baseline" (big 1) and Fig A.3/A.5's "big 10".
CONCERNED = {"baseline": ("big", 1), "big 10": ("big", 10)}


@dataclass
class TeacherStudy:
    """What notebook 04's sections share: the subsets and Table 4.1 (:func:`data_section`), the notebook's settings
    (``config``); then the teachers (:func:`teachers_section`: ``runs`` / ``inputs`` by (subset, T), one per replicate
    ensemble, replicate 0 first; ``replicate_seeds``), the ablations (:func:`ablation_section`), the log-Mel CNNs
    and every item's record (``records``, by item id without the ``muschiol2021-`` prefix) the findings read."""

    datasets: dict
    table41: pd.DataFrame
    scale: str
    stamps: dict[str, str]
    data_stamp: str
    config: TeachersConfig
    spec: teachers.TeacherSpec | None = None
    runs: dict | None = None
    inputs: dict | None = None
    replicate_seeds: tuple[int, ...] = ()
    teacher_stamp: str = ""
    ablation: dict | None = None
    ablation_settings: dict = field(default_factory=dict)
    synthetic_clips: bool = True
    records: dict[str, dict] = field(default_factory=dict)

    @property
    def big(self):
        return self.datasets["big"]

    @property
    def teacher_counts(self) -> list[int]:
        return list(self.config.teacher_counts)

    @property
    def student_fraction(self) -> float:
        return self.config.student_fraction

    @property
    def val_fraction(self) -> float:
        return self.config.val_fraction

    @property
    def seed(self) -> int:
        return self.config.seed

    def first(self) -> dict:
        """Every ensemble's first replicate, by (subset, T): what a figure draws (one ensemble per curve)."""
        return {k: v[0] for k, v in self.runs.items()}


def _record(study: TeacherStudy, item: str, record: dict, out: NotebookOutputs) -> dict:
    out.record(item, **record)
    study.records[item.removeprefix("muschiol2021-")] = record
    return record


def data_section(data: str, config: TeachersConfig, out: NotebookOutputs) -> TeacherStudy:
    """Table 4.1: the two label subsets (:func:`.data.load_subsets`), their sizes beside the thesis's, saved and
    recorded; returns the study of notebook 04's settings ``config`` that the later sections share (its
    ``table41_view`` is what the cell shows)."""
    datasets = as_data.load_subsets(data, seed=config.seed)
    scale, stamps, data_stamp = as_data.source_stamps(datasets)
    table41 = thesis_tables.table_4_1(
        datasets,
        teacher_counts=list(config.teacher_counts),
        student_fraction=config.student_fraction,
        val_fraction=config.val_fraction,
        seed=config.seed,
    )
    out.save_table(table41.drop(columns=["verdict_rule"]), "muschiol2021-table4.1", data=data_stamp)
    study = TeacherStudy(datasets, table41, scale, stamps, data_stamp, config)
    _record(study, "muschiol2021-table4.1", models.table_4_1_record(table41), out)
    return study


def table41_view(study: TeacherStudy) -> pd.DataFrame:
    """Table 4.1 as the notebook shows it (without the rule and reason columns)."""
    return study.table41.drop(columns=["verdict_rule", "verdict_reason"])


def siren_section(study: TeacherStudy, out: NotebookOutputs, *, data: str) -> dict:
    """Fig 2.1: a siren's log-Mel spectrogram (a real Siren clip when raw audio is prepared, else a stamped
    synthetic stand-in); an illustration, not comparable."""
    mel, source = as_data.siren_log_mel(data, seed=study.seed)
    save_and_show(figures.siren_figure(mel), "muschiol2021-fig2.1", out, data=source)
    record = dict(
        frames=int(mel.shape[0]),
        mel_bands=int(mel.shape[1]),
        synthetic=source.startswith("synthetic"),
        **models.siren_verdict(source, mel.shape).as_record(),
    )
    return _record(study, "muschiol2021-fig2.1", record, out)


def sampler_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Fig 5.9: the classes the balanced and the random sampler draw from teacher 0's partition of "big 10" in
    ``sampler_iterations`` batches, judged over ``replicates.sampler_seeds`` sampler seeds
    (:func:`.teacher_claims.sampler.sampler_item`)."""
    iterations, batch_size = study.config.sampler_iterations, study.config.sampler_batch
    labels = study.big.splits["bal_train"].labels
    split = as_data.pool_split(
        len(labels), student_fraction=study.student_fraction, val_fraction=study.val_fraction, seed=study.seed
    )
    part = as_data.teacher_partitions(split, 10, seed=study.seed).train[0]
    occ, rec = teacher_sampler.sampler_item(
        labels,
        part,
        study.big.class_names,
        iterations=iterations,
        batch_size=batch_size,
        seed=study.seed,
        n_seeds=study.config.replicates.sampler_seeds,
    )
    title = f"big 10, teacher 0 ({len(part)} clips): top class balanced = {rec['top_class_balanced']}"
    data = f"{study.scale}: {study.stamps['big']}; teacher 0 of big 10"
    save_and_show(figures.sampler_figure(occ, iterations, batch_size, title), "muschiol2021-fig5.9", out, data=data)
    _record(study, "muschiol2021-fig5.9", rec, out)
    return MarkdownText(f"**Fig 5.9: {rec['verdict']}** ({rec['verdict_rule']})")


#: the settings of notebook 04 that are fields of :class:`.teachers.TeacherSpec` under the same name
RECIPE_FIELDS = ("hidden", "dropout", "batch_size", "steps", "eval_every", "patience", "sampler", "mixup_alpha")


def recipe(config: TeachersConfig) -> teachers.TeacherSpec:
    """The embedding-MLP teachers' recipe (:class:`.teachers.TeacherSpec`) of notebook 04's settings."""
    same = {name: getattr(config, name) for name in RECIPE_FIELDS}
    return teachers.teacher_spec(**same, lr=config.learning_rate)


def teachers_section(study: TeacherStudy) -> pd.DataFrame:
    """The teachers of every ensemble size on both subsets, the replicate ensembles of a size in one stacked
    training call (:func:`.pipeline.teacher_ensembles`; their votes are cached, where notebook 05 reads them), by
    the settings' :func:`recipe` and ``replicates.teachers`` (``seeds``: one replicate ensemble per seed;
    ``counts``: the teacher counts trained once per seed, the others with the first seed only). Returns the
    ensembles' summary."""
    config = study.config
    spec = recipe(config)
    rep = config.replicates.teachers.as_record()
    runs, inputs = pipeline.teacher_ensembles(
        {s: study.datasets[s] for s in as_data.SUBSETS},
        spec,
        study.teacher_counts,
        student_fraction=study.student_fraction,
        val_fraction=study.val_fraction,
        curve_clips=config.curve_clips,
        seed=study.seed,
        replicates=rep.get("seeds"),
        replicate_counts=rep.get("counts"),
        device=config.device,
        backend=config.backend,
        teachers_per_task=config.teachers_per_task,
    )
    study.spec, study.runs, study.inputs = spec, runs, inputs
    study.replicate_seeds = as_data.replicate_seeds(rep.get("seeds"), study.seed)
    replicated = {s: [t for (s2, t), v in runs.items() if s2 == s and len(v) > 1] for s in as_data.SUBSETS}
    which = "; ".join(f"{s} {v}" for s, v in replicated.items() if v)
    study.teacher_stamp = (
        f"{study.scale}: {study.stamps['big']} / {study.stamps['small']}; "
        + teachers.spec_stamp(spec)
        + (
            f"; {len(study.replicate_seeds)} replicate ensembles (seeds {list(study.replicate_seeds)}) of {which} "
            "teachers, one (the first seed) of the other counts"
            if which
            else f"; one ensemble per count (seed {study.replicate_seeds[0]})"
        )
    )
    return thesis_tables.ensemble_summary(runs, inputs)


def teacher_curves_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Fig 5.1: the mean teacher curves per ensemble size; "fewer clips, lower mAP" judged at every step."""
    fig = figures.teacher_curves_figure(study.first(), as_data.SUBSETS, study.teacher_counts)
    save_and_show(
        fig, "muschiol2021-fig5.1", out, data=study.teacher_stamp + "; curves of each count's first replicate"
    )
    rec = teacher_curves.teacher_curves_record(study.runs, as_data.SUBSETS, study.teacher_counts, study.table41)
    _record(study, "muschiol2021-fig5.1", rec, out)
    return MarkdownText(f"**Fig 5.1: {rec['verdict']}**")


def micro_curves_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Figs 5.2 / 5.3: micro-averaged PR and ROC curves of each ensemble's teacher 0, judged on intervals over the
    largest ensemble's teachers and on ``n_boot`` bootstrap resamples of the test clips."""
    labels = {s: study.inputs[s, 1][0].Y_test for s in as_data.SUBSETS}
    fig_pr, fig_roc, auc = figures.micro_curve_figures(study.first(), labels, as_data.SUBSETS, study.teacher_counts)
    rec52, rec53 = teacher_curves.micro_curve_records(
        study.runs,
        auc,
        as_data.SUBSETS,
        study.teacher_counts,
        labels,
        n_boot=study.config.replicates.n_boot,
        seed=study.seed,
    )
    data = study.teacher_stamp + "; selected checkpoints (not iteration 30,000); curves of each first replicate"
    for item, fig, rec in (("muschiol2021-fig5.2", fig_pr, rec52), ("muschiol2021-fig5.3", fig_roc, rec53)):
        save_and_show(fig, item, out, data=data)
        _record(study, item, rec, out)
    return MarkdownText(f"**Fig 5.2: {rec52['verdict']}; Fig 5.3: {rec53['verdict']}**")


def similar_teachers_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Fig 5.6: every teacher of "big 10"; "no significant difference between the teachers" judged on their spread
    against the test set's noise (:func:`.teacher_claims.curves.similar_teachers_record`)."""
    run = study.runs["big", 10][0]
    save_and_show(
        figures.all_teachers_figure(run), "muschiol2021-fig5.6", out, data=study.teacher_stamp + "; big 10, replicate 0"
    )
    rec = teacher_curves.similar_teachers_record(
        run, study.inputs["big", 10][0].Y_test, n_boot=study.config.replicates.n_boot, seed=study.seed
    )
    _record(study, "muschiol2021-fig5.6", rec, out)
    return MarkdownText(f"**Fig 5.6: {rec['verdict']}** {rec['verdict_reason']}")


def ablation_section(study: TeacherStudy) -> pd.DataFrame:
    """The ablation arms on "big 10" (:func:`.teachers.ablation_settings`, :func:`.pipeline.ablation_arms`) over
    ``ablation_batch_sizes`` and ``ablation_learning_rates``: the first ``ablation.teachers`` teachers of
    ``ablation.seeds`` replicate big-10 ensembles (the first replicate seeds: each its own pool split, partitions and
    training seeds), one stacked call per arm; ``ablation.hidden``: the MLP sizes, ``weight_max`` and
    ``temperature``: the adaptive class weights' bound and scale (:class:`.teachers.TeacherSpec`). Returns the arms'
    table."""
    config = study.config
    settings = config.ablation.as_record()
    batch_sizes, learning_rates = list(config.ablation_batch_sizes), list(config.ablation_learning_rates)
    spec = study.spec.replace(weight_max=settings["weight_max"], weight_temperature=settings["temperature"])
    arms = teachers.ablation_settings(spec, batch_sizes, learning_rates, settings["hidden"])
    seeds = study.replicate_seeds[: int(settings["seeds"])]
    if len(seeds) < int(settings["seeds"]) or len(seeds) < 2:
        raise ValueError(
            f'ablation["seeds"]={settings["seeds"]}: expected 2 to {len(study.replicate_seeds)} (the replicate '
            'ensembles of teacher_replicates["seeds"], whose big-10 partitions the ablations replicate)'
        )
    stack = pipeline.replicate_stack(
        study.big, "big", 10, seeds, student_fraction=study.student_fraction, val_fraction=study.val_fraction
    )
    study.ablation = pipeline.ablation_arms(
        stack,
        spec,
        arms,
        n_teachers=settings["teachers"],
        curve_clips=config.curve_clips,
        device=config.device,
        backend=config.backend,
        teachers_per_task=config.teachers_per_task,
    )
    study.ablation_settings = dict(settings, batch_sizes=list(batch_sizes), learning_rates=list(learning_rates))
    return thesis_tables.ablation_table(study.ablation)


def ablation_figures_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Figs 5.7, 5.8, 5.10, 5.12, 5.11: each ablation's curves (the recipe arm labelled with its value, every arm's
    steps in the stamp) and its claims (:func:`.teacher_claims.ablations.ablation_records`)."""
    s = study.ablation_settings
    items = teacher_ablations.ablation_records(
        study.ablation, study.spec, s["batch_sizes"], s["learning_rates"], s["weight_max"], s["temperature"]
    )
    lines = []
    for item, arm_names, title, rec in items:
        n = s["teachers"] * s["seeds"]
        stamp = (
            f"{study.teacher_stamp}; the first {s['teachers']} teachers of {s['seeds']} replicate big-10 ensembles "
            "(each its own pool split, partitions and training seeds); "
            + figures.arm_steps_stamp(study.ablation, arm_names)
        )
        save_and_show(figures.ablation_figure(study.ablation, arm_names, title, n), item, out, data=stamp)
        _record(study, item, rec, out)
        lines.append(f"{item.removeprefix('muschiol2021-')} ({title}): **{rec['verdict']}**")
    return markdown_list(lines)


def logmel_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Figs 5.4 / 5.5: the log-Mel CNNs (:func:`.pipeline.logmel_arms`) on the settings' ``logmel`` clips, trained
    as ``logmel_run`` says with the head ``logmel_head``, and Fig 5.4's "ResNets train up to five times faster than
    VGG" on the CNNs' training work per clip at the thesis's widths and input (:func:`.teachers.training_flops`,
    deterministic)."""
    config = study.config
    clips, t = config.logmel.as_record(), config.logmel_run.as_record()
    head = None if config.logmel_head is None else list(config.logmel_head)
    arch = clips["architectures"]
    X, Y, source = as_data.load_logmel_clips(
        clips["data"], "big", n_clips=clips["clips"], n_classes=clips["classes"], frames=t["frames"], seed=study.seed
    )
    parts, val, test = as_data.logmel_test_split(
        len(Y),
        student_fraction=study.student_fraction,
        val_fraction=study.val_fraction,
        n_teachers=t["teachers"],
        seed=study.seed,
    )
    spec = study.spec.replace(steps=t["steps"], eval_every=t["eval_every"], lr=t["lr"])
    logmel = pipeline.logmel_arms(
        arch,
        X,
        Y,
        parts,
        val,
        test,
        spec,
        imagenet_weights=dict(config.imagenet_weights),
        width_scale=t["width_scale"],
        head=head,
        seed=study.seed,
        device=config.device,
        backend=config.backend,
        teachers_per_task=config.teachers_per_task,
        speed=t["speed"],
    )
    stamp = teachers.logmel_stamp(source, t["width_scale"], head, t["steps"], t["teachers"], t["speed"])
    flops = teachers.training_flops(arch, n_classes=len(study.big.class_names))
    study.synthetic_clips = clips["data"] == "synthetic"
    fig54 = figures.logmel_figure(logmel, [(a, "random init") for a in arch], "log-Mel CNNs")
    save_and_show(fig54, "muschiol2021-fig5.4", out, data=stamp)
    hidden = study.ablation_settings["hidden"]
    rec54 = models.architecture_record(
        logmel, arch, study.synthetic_clips, study.ablation, hidden, list(study.spec.hidden), flops
    )
    _record(study, "muschiol2021-fig5.4", rec54, out)
    arms55 = [k for k in logmel if k[0] == arch[0]]
    note = "" if len(arms55) > 1 else "; no ImageNet weights given: random-init arm only"
    fig55 = figures.logmel_figure(logmel, arms55, "transfer learning", with_init=True)
    save_and_show(fig55, "muschiol2021-fig5.5", out, data=stamp + note)
    rec55 = _record(study, "muschiol2021-fig5.5", models.transfer_record(logmel, arms55), out)
    return markdown_list(
        [
            f"Fig 5.4: **{rec54['verdict']}** (curves: {rec54['verdict_curves']}; ResNets up to five times faster, "
            f"on counted work: {rec54['verdict_speed']})",
            f"Fig 5.5: **{rec55['verdict']}**",
        ]
    )


def class_ap_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Fig A.1: the big baseline's AP per class beside its training clips (the figure: the first replicate);
    "no correlation" judged over the replicate single models and a bootstrap over the classes."""
    names = study.big.class_names
    ap = np.stack([r.class_ap[0] for r in study.runs["big", 1]])
    counts = np.stack([i.Y[i.teacher_pool].sum(0) for i in study.inputs["big", 1]])
    save_and_show(
        figures.class_ap_figure(ap[0], counts[0], names),
        "muschiol2021-figA.1",
        out,
        data=study.teacher_stamp + "; big baseline, first replicate",
    )
    rec = _record(
        study, "muschiol2021-figA.1", teacher_classes.class_ap_record(ap, counts, names, seed=study.seed), out
    )
    return MarkdownText(f"**Fig A.1: {rec['verdict']}**")


def class_curves_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Figs A.2 / A.3: teacher 0 of the baseline and of "big 10" (first replicates) scored per class at every
    evaluation of its run (:func:`.teachers.class_ap_at_evaluations`); the headline values at the selected
    checkpoint, judged over the replicates (teacher 0 of each) and a paired bootstrap of the test clips."""
    runs, inputs = study.runs, study.inputs
    curves = {
        key: teachers.class_ap_at_evaluations(inputs[k][0], runs[k][0], study.spec) for key, k in CONCERNED.items()
    }
    selected = {
        key: (np.stack([r.class_ap[0] for r in runs[k]]), runs[k][0].best_step[0]) for key, k in CONCERNED.items()
    }
    groups = {key: diagnostics.ranked_classes(ap[0]) for key, (ap, _) in selected.items()}
    test = {key: (inputs[k][0].Y_test, np.stack([r.probabilities[0] for r in runs[k]])) for key, k in CONCERNED.items()}
    recs = teacher_classes.class_curve_records(
        curves, selected, groups, study.big.class_names, test, n_boot=study.config.replicates.n_boot, seed=study.seed
    )
    for item, key, rec in zip(("muschiol2021-figA.2", "muschiol2021-figA.3"), CONCERNED, recs):
        fig = figures.class_curves_figure(*curves[key][::-1], groups[key], study.big.class_names, key)
        data = (
            f"{study.teacher_stamp}; {key}, teacher 0 (trained alone) at each of its {rec['evaluations']} "
            f"evaluations; classes ranked at the selected step {rec['selected_step']}"
        )
        save_and_show(fig, item, out, data=data)
        _record(study, item, rec, out)
    return MarkdownText(f"**Fig A.2: {recs[0]['verdict']}; Fig A.3: {recs[1]['verdict']}**")


def class_roc_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """Figs A.4 / A.5: per-class ROC curves of teacher 0 (the figure), the claims over every teacher of the
    ensemble and a bootstrap of the test clips (:func:`.teacher_claims.classes.class_roc_record`)."""
    lines = []
    for item, key in (("muschiol2021-figA.4", "baseline"), ("muschiol2021-figA.5", "big 10")):
        reps, labels = study.runs[CONCERNED[key]], study.inputs[CONCERNED[key]][0].Y_test
        # the baseline over its replicate single models; big 10 over the teachers of its first replicate
        probs = np.stack([r.probabilities[0] for r in reps]) if key == "baseline" else reps[0].probabilities
        fig = figures.class_roc_figure(labels, probs[0], study.big.class_names, key)
        save_and_show(
            fig, item, out, data=study.teacher_stamp + f"; {key}, teacher 0 of the first replicate, selected checkpoint"
        )
        rec = teacher_classes.class_roc_record(
            labels, probs, key, n_boot=study.config.replicates.n_boot, seed=study.seed
        )
        _record(study, item, rec, out)
        lines.append(f"{item.removeprefix('muschiol2021-')}: **{rec['verdict']}**")
    return markdown_list(lines)


def findings_section(study: TeacherStudy, out: NotebookOutputs) -> MarkdownText:
    """The findings, each computed from this run (:func:`.teacher_claims.findings.teacher_findings`), recorded and
    shown."""
    lines = teacher_findings.teacher_findings(
        study.table41,
        study.runs,
        study.ablation,
        study.records,
        study.teacher_counts,
        study.spec.steps,
        diagnostics.min_clips_per_class(study.big.splits["bal_train"].labels),
        study.synthetic_clips,
    )
    text = "\n".join(lines)
    out.record("findings", n_lines=len(lines), text=text)
    return MarkdownText(text)
