"""Notebook 04's ablations, Figs 5.7 to 5.12: mixup, the sampler, the batch size, the learning rate (with the end
slope of a run cut off still improving) and the adaptive weights, each judged over seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pate_study.experiments.audioset.diagnostics import curve_wobble, curves
from pate_study.experiments.audioset.teacher_claims.seeds import replicate_values, seed_comparison
from pate_study.experiments.audioset.teachers import thesis_length_arms
from pate_study.experiments.audioset.verdict_rules import TEACHER
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.replicates import printed_rows
from pate_study.reporting.verdicts import Verdict, combine, not_comparable


def _best_other(ablation: dict, arms: dict, keep) -> Any:
    """The key of ``arms`` (value -> arm name) other than ``keep`` whose arm has the highest mean final mAP."""
    others = [k for k in arms if k != keep]
    return max(others, key=lambda k: replicate_values(ablation[arms[k]]).mean()) if others else None


def _seeds_record(ablation: dict, name: str) -> dict[str, Any]:
    run = ablation[name]
    seeds = 1 if run.replicate is None else int(np.unique(run.replicate).size)
    return {"seeds": seeds, "teachers_per_seed": run.n_teachers // seeds}


def mixup_record(ablation: dict) -> dict[str, Any]:
    """Fig 5.7, §5.1.3's two claims on mixup, each decided by :func:`seed_comparison`: "a slight improvement can be
    seen ... if the mixup technique is applied" (final mAP with mixup − without > 0) and "especially in the early
    stages of the training, mixup helps to learn faster" (curve-sample mAP at the first evaluation with − without
    > 0); the item's verdict combines both (:func:`pate_study.reporting.verdicts.combine`)."""
    with_, without = ablation["recipe"], ablation["no mixup"]
    final = seed_comparison(replicate_values(with_), replicate_values(without))
    early = seed_comparison(replicate_values(with_, "first"), replicate_values(without, "first"))
    step = int(curves(with_).index[0])
    v_final = final.claim(
        '"slight improvement": final mAP with mixup − without > 0',
        f"final mAP {final.a.mean():.3f} with vs {final.b.mean():.3f} without",
    )
    v_early = early.claim(
        f'"mixup helps to learn faster" early: mAP at the first evaluation (step {step}) with mixup − without > 0',
        f"first-evaluation mAP {early.a.mean():.3f} with vs {early.b.mean():.3f} without",
    )
    v = combine(
        {"slight improvement": v_final, "learns faster early": v_early},
        context="mixup on 128-d clip embeddings of embedding MLPs, not on log-Mel images of ResNets",
    )
    return dict(
        map_mixup=float(final.a.mean()),
        map_no_mixup=float(final.b.mean()),
        first_eval_map_mixup=float(early.a.mean()),
        first_eval_map_no_mixup=float(early.b.mean()),
        first_eval_step=step,
        verdict_slight_improvement=v_final.verdict,
        verdict_learns_faster_early=v_early.verdict,
        **final.as_record("final"),
        **early.as_record("first_eval"),
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def sampler_arm_record(ablation: dict) -> dict[str, Any]:
    """Fig 5.8: the thesis's direction, "the classifier learns much slower with the random sampling technique" (§5.1):
    curve-sample mAP at the first evaluation, balanced − random > 0, decided by :func:`seed_comparison`. On
    bal_train, already balanced, a weaker test of the same direction; oscillation and final mAP are recorded beside."""
    bal, rnd = ablation["recipe"], ablation["random sampler"]
    early = seed_comparison(replicate_values(bal, "first"), replicate_values(rnd, "first"))
    final = seed_comparison(replicate_values(bal), replicate_values(rnd))
    osc = {k: curve_wobble(ablation[k]) for k in ("recipe", "random sampler")}
    v = early.claim(
        "balanced sampling learns faster: first-evaluation mAP balanced − random > 0",
        f"first-evaluation mAP balanced {early.a.mean():.3f} vs random {early.b.mean():.3f}; final mAP "
        f"balanced − random {final.margin:+.3f} (± {final.tolerance:.3f}); on bal_train, already balanced (the "
        "thesis sampled its crawl of the unbalanced set, where Speech has 1M labels), a weaker test of the "
        "same direction",
    )
    return dict(
        map_balanced=float(final.a.mean()),
        map_random=float(final.b.mean()),
        first_eval_map_balanced=float(early.a.mean()),
        first_eval_map_random=float(early.b.mean()),
        mean_abs_curve_change_balanced=osc["recipe"],
        mean_abs_curve_change_random=osc["random sampler"],
        **early.as_record("first_eval"),
        **final.as_record("final"),
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def batch_size_record(ablation: dict, by_arm: dict, by_arm_epochs: dict, recipe_batch: int = 64) -> dict[str, Any]:
    """Fig 5.10: "the batch size of 64 achieves the best mAP" (the recipe's batch is 64), compared twice, each by
    :func:`seed_comparison` against the best other batch: at equal STEPS (``by_arm``: batch size -> arm name; a
    larger batch sees more clips per step, batch 64 eight times batch 8's) and at equal EPOCHS (``by_arm_epochs``: the
    same clips seen, :func:`.teachers.equal_epochs`; the recipe's own batch maps to the recipe arm in both). Both
    comparisons are recorded; the item's verdict combines them."""
    rec, claims = {}, {}
    for label, arms in (("equal_steps", by_arm), ("equal_epochs", by_arm_epochs)):
        by_batch = {b: float(replicate_values(ablation[a]).mean()) for b, a in arms.items()}
        rec.update(
            {f"map_batch_{b}" + ("" if label == "equal_steps" else "_equal_epochs"): m for b, m in by_batch.items()}
        )
        other = _best_other(ablation, arms, recipe_batch)
        if recipe_batch not in arms or other is None:
            claims[label] = not_comparable(
                "not evaluable on this run: one batch size only",
                rule=f"final mAP at batch {recipe_batch} − the best other batch > 0 ({label.replace('_', ' ')})",
            )
            continue
        c = seed_comparison(replicate_values(ablation[arms[recipe_batch]]), replicate_values(ablation[arms[other]]))
        rec.update(c.as_record(label))
        claims[label] = c.claim(
            f"final mAP at batch {recipe_batch} − the best other batch ({other}) > 0 at {label.replace('_', ' ')}",
            ", ".join(f"batch {b}: {m:.3f}" for b, m in by_batch.items()),
        )
        rec[f"best_batch_{label}"] = int(max(by_batch, key=by_batch.get))
    v = combine(
        {
            "batch 64 best at equal steps": claims["equal_steps"],
            "batch 64 best at equal epochs": claims["equal_epochs"],
        },
        context="the thesis compares over iterations (equal steps); at equal epochs every batch sees the same clips",
    )
    best = rec.get("best_batch_equal_steps", recipe_batch)
    return dict(
        rec,
        best_batch=best,
        best_batch_size=best,
        verdict_equal_steps=claims["equal_steps"].verdict,
        verdict_equal_epochs=claims["equal_epochs"].verdict,
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def final_slope(run: Any, per_steps: int = 1000) -> unc.Estimate:
    """How fast an arm still improves at its end: per seed replicate, the mean over its teachers of the curve-sample
    mAP change between the last two evaluations, per ``per_steps`` steps; a t-interval over the replicates
    (:func:`pate_study.reporting.uncertainty.t_interval`; one replicate: unbounded). A slope whose interval lies wholly
    above 0 is a run cut off while still improving."""
    c = curves(run.history)
    if len(c) < 2:
        return unc.unreplicated(0.0, TEACHER)
    steps = c.index.to_numpy(float)
    per = (c.iloc[-1] - c.iloc[-2]).reindex(range(run.n_teachers)).to_numpy(float) * per_steps / (steps[-1] - steps[-2])
    rep = np.zeros(run.n_teachers, int) if run.replicate is None else np.asarray(run.replicate)
    return unc.t_interval([float(np.nanmean(per[rep == r])) for r in np.unique(rep)], TEACHER)


def cut_off(v: Verdict, still_improving: float, lr: float, slope: unc.Estimate | None = None) -> Verdict:
    """A claim in favour of the lowest rate judged on a run cut off before it converged: when some of its teachers
    still improve at their last step (``still_improving``: their share) or its end slope (:func:`final_slope`) lies
    wholly above 0, its final mAP and selected step are lower bounds of the converged ones, so a *differs* (the lowest
    rate behind) is not shown and becomes *inconclusive*, marked cut off, the slope and its interval in the reason;
    an *agrees* stands (the bound already clears the other rate). Running the rate to convergence instead is outside
    the paper profile's time budget (the thesis-length arm already trains 10,000 steps)."""
    rising = slope is not None and slope.low > 0
    if v.verdict != "differs" or (still_improving <= 0 and not rising):
        return v
    at_end = f"; mAP change per 1,000 steps at its end {slope.render('.4f')}" if slope is not None else ""
    return Verdict(
        "inconclusive",
        v.rule,
        f"cut off: {100 * still_improving:.0f} % of the lr {lr:g} teachers still "
        f"improve at their last step{at_end}, so its numbers are lower bounds of the converged ones; {v.reason}",
        basis=v.basis,
        estimate=v.estimate,
        evidence=v.evidence,
        shown=(*v.shown, *((s.key, s.estimate) for s in v.steps)),  # no longer judged, still printed
    )


def learning_rate_record(ablation: dict, by_arm: dict, steps: int, long_arms: dict | None = None) -> dict[str, Any]:
    """Fig 5.12, §5.1.3: "learning rates greater than 0.0001 let the model converge early, but the best performance
    is reached with the lowest evaluated learning rate". Two claims, each by :func:`seed_comparison`: final mAP at the
    lowest rate − the other's > 0, and the selected (best validation) step at the lowest rate − at the other's > 0
    (converges later; floor: one evaluation spacing). Both are judged at the thesis's length where the run has those
    arms (``long_arms``: the lowest rate and the recipe's over :data:`.teachers.THESIS_ITERATIONS` steps without early
    stopping, :func:`.teachers.thesis_length`), since on the recipe's schedule (``by_arm``: learning rate -> arm name,
    against the best other rate) early stopping ends the slow rate near the class prior long before it converges;
    the recipe-schedule verdicts are recorded beside (``verdict_*_recipe_schedule``)."""
    by_lr = {lr: float(replicate_values(ablation[a]).mean()) for lr, a in by_arm.items()}
    low, other = min(by_lr), _best_other(ablation, by_arm, min(by_lr))
    best = max(by_lr, key=by_lr.get)
    rec = dict(
        **{f"map_lr_{lr:g}": m for lr, m in by_lr.items()},
        **{
            f"best_step_lr_{lr:g}": float(replicate_values(ablation[a], "best_step").mean()) for lr, a in by_arm.items()
        },
        best_lr=float(best),
        recommended_learning_rate=float(best),
    )
    if other is None:
        v = not_comparable(
            "not evaluable on this run: one learning rate only",
            rule="final mAP at the lowest learning rate − the best other > 0",
        )
        return dict(rec, **v.as_record())
    lo, hi = ablation[by_arm[low]], ablation[by_arm[other]]
    final = seed_comparison(replicate_values(lo), replicate_values(hi))
    conv = seed_comparison(replicate_values(lo, "best_step"), replicate_values(hi, "best_step"))
    v_short = final.claim(
        f"final mAP at the lowest rate ({low:g}) − the best other rate ({other:g}) > 0 on the recipe's "
        f"schedule (at most {steps} steps, early stopping)",
        ", ".join(f"lr {lr:g}: {m:.3f}" for lr, m in by_lr.items())
        + f" (lr {low:g}: mean selected step {conv.a.mean():.0f}"
        + (
            f", then early stopping after {lo.spec.patience} evaluations without a better validation mAP)"
            if lo.spec.patience
            else f" of {steps}, no early stopping)"
        ),
    )
    v_conv = conv.claim(
        f"larger rates converge earlier: selected step at {low:g} − at {other:g} > 0",
        f"mean selected step {conv.a.mean():.0f} at {low:g} vs {conv.b.mean():.0f} at {other:g} of at most {steps}",
    )
    extra: dict[str, Any] = {}
    long_arms = {lr: a for lr, a in (long_arms or {}).items() if a in ablation}
    v_best = v_short
    if len(long_arms) == 2:
        (l_lr, l_arm), (o_lr, o_arm) = sorted(long_arms.items())
        long_lo, long_hi = ablation[l_arm], ablation[o_arm]
        long = seed_comparison(replicate_values(long_lo), replicate_values(long_hi))
        n_long = int(long_lo.spec.steps)
        still = float(np.mean(np.asarray(long_lo.best_step) >= n_long))
        v_best = long.claim(
            f"final mAP at the lowest rate ({l_lr:g}) − the recipe's ({o_lr:g}) > 0 at the thesis's length "
            f"({n_long} steps, no early stopping)",
            f"lr {l_lr:g}: {long.a.mean():.3f}, lr {o_lr:g}: {long.b.mean():.3f} after {n_long} steps; "
            f"{100 * still:.0f} % of the lr {l_lr:g} teachers select their last step (still improving)",
        )
        long_conv = seed_comparison(replicate_values(long_lo, "best_step"), replicate_values(long_hi, "best_step"))
        v_conv_short, v_conv = (
            v_conv,
            long_conv.claim(
                f"larger rates converge earlier: selected step at {l_lr:g} − at {o_lr:g} > 0 at the thesis's length",
                f"mean selected step {long_conv.a.mean():.0f} at {l_lr:g} vs {long_conv.b.mean():.0f} at {o_lr:g} of "
                f"{n_long}",
            ),
        )
        slope = final_slope(long_lo)
        v_best, v_conv = cut_off(v_best, still, l_lr, slope), cut_off(v_conv, still, l_lr, slope)
        extra = dict(
            **long.as_record("thesis_length"),
            **long_conv.as_record("thesis_length_best_step"),
            map_lr_thesis_length={f"{l_lr:g}": float(long.a.mean()), f"{o_lr:g}": float(long.b.mean())},
            thesis_length_steps=n_long,
            lowest_rate_share_selecting_last_step=still,
            lowest_rate_end_slope_per_1000_steps=slope.value,
            lowest_rate_end_slope_interval=[slope.low, slope.high],
            lowest_rate_cut_off=bool(still > 0 or slope.low > 0),
            verdict_lowest_rate_best_recipe_schedule=v_short.verdict,
            verdict_larger_rates_converge_earlier_recipe_schedule=v_conv_short.verdict,
            # the end slope the reason prints beside the verdict (a cut-off claim's estimate is in its shown)
            printed_replicates=printed_rows({"lowest rate end slope per 1000 steps": slope}),
        )
    v = combine(
        {"lowest rate best": v_best, "larger rates converge earlier": v_conv},
        context=""
        if len(long_arms) == 2
        else "no thesis-length arms in this run: the final mAP is compared "
        "on the recipe's schedule, where early stopping may decide it as much as the rate",
    )
    return dict(
        rec,
        compared_lr=float(other),
        verdict_lowest_rate_best=v_best.verdict,
        verdict_larger_rates_converge_earlier=v_conv.verdict,
        **final.as_record("final"),
        **conv.as_record("best_step"),
        **extra,
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def adaptive_weights_record(ablation: dict, weight_max: float, weight_temperature: float) -> dict[str, Any]:
    """Fig 5.11: plain BCE against adaptive class weights, "no positive effect": final mAP plain − adaptive > 0 by
    :func:`seed_comparison` (the rule of :func:`adaptive_weights_verdict` with the tolerance from the seeds)."""
    trace = ablation["adaptive weights"].weight_trace
    spread = float((trace["max"] / trace["min"]).max()) if trace is not None and len(trace) else 1.0
    c = seed_comparison(replicate_values(ablation["recipe"]), replicate_values(ablation["adaptive weights"]))
    v = c.claim(
        'plain BCE final mAP − adaptive-weight final mAP > 0 ("no positive effect")',
        f"adaptive class weights change the final mAP by {-c.margin:+.3f} (embedding MLPs, validation-based weights)",
    )
    return dict(
        map_plain=float(c.a.mean()),
        map_adaptive=float(c.b.mean()),
        auc_plain=float(ablation["recipe"].auc.mean()),
        auc_adaptive=float(ablation["adaptive weights"].auc.mean()),
        weight_max=weight_max,
        weight_temperature=weight_temperature,
        largest_weight_ratio_between_classes=spread,
        weights_from="validation per-class AP",
        **c.as_record("final"),
        **_seeds_record(ablation, "recipe"),
        **v.as_record(),
    )


def ablation_records(
    ablation: dict, spec, batch_sizes, learning_rates, weight_max: float, weight_temperature: float
) -> list[tuple[str, list[str], str, dict]]:
    """Notebook 04's ablation items in order (Figs 5.7, 5.8, 5.10, 5.12, 5.11): ``(item, arms plotted, title,
    record)``; the arms of batch size and learning rate are the recipe's own (``spec``) or ``"batch b"`` (equal
    steps), ``"batch b, equal epochs"`` / ``"lr x"`` (:func:`.teachers.ablation_settings`)."""
    batch_arms = {b: ("recipe" if b == spec.batch_size else f"batch {b}") for b in batch_sizes}
    epoch_arms = {b: ("recipe" if b == spec.batch_size else f"batch {b}, equal epochs") for b in batch_sizes}
    lr_arms = {lr: ("recipe" if lr == spec.lr else f"lr {lr:g}") for lr in learning_rates}
    long_arms = {lr: a for lr, a in thesis_length_arms(spec, learning_rates).items() if a in ablation}
    batch_plotted = list(dict.fromkeys([*batch_arms.values(), *epoch_arms.values()]))
    return [
        ("muschiol2021-fig5.7", ["recipe", "no mixup"], "mixup", mixup_record(ablation)),
        (
            "muschiol2021-fig5.8",
            ["recipe", "random sampler"],
            "balanced vs random sampler",
            sampler_arm_record(ablation),
        ),
        (
            "muschiol2021-fig5.10",
            batch_plotted,
            "batch size",
            batch_size_record(ablation, batch_arms, epoch_arms, spec.batch_size),
        ),
        (
            "muschiol2021-fig5.12",
            [*lr_arms.values(), *long_arms.values()],
            "learning rate",
            learning_rate_record(ablation, lr_arms, spec.steps, long_arms),
        ),
        (
            "muschiol2021-fig5.11",
            ["recipe", "adaptive weights"],
            "plain BCE vs adaptive class weights",
            adaptive_weights_record(ablation, weight_max, weight_temperature),
        ),
    ]
