"""Notebook 04's claims on intervals: no constant tolerance in the Audio Set rules (notebook 04's and 05's) but the
source's printed precision, and per rule family one constructed input where it must agree (or, for a claim of no
difference without a printed margin, be inconclusive) and one where it must differ."""

import ast
import importlib
import inspect
import pkgutil
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from pate_study.experiments.audioset import diagnostics, release_claims, teacher_claims, teachers, verdict_rules
from pate_study.experiments.audioset.teacher_claims import ablations, curves, models
from pate_study.experiments.audioset.teacher_claims import classes as teacher_classes
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim, judge


def _modules(package) -> tuple:
    """Every module of ``package``: the scans read each, so a claim moved between them stays checked."""
    return tuple(
        importlib.import_module(f"{package.__name__}.{m.name}") for m in pkgutil.iter_modules(package.__path__)
    )


TEACHER_CLAIMS = _modules(teacher_claims)
RELEASE_CLAIMS = _modules(release_claims)
RULE_MODULES = (*TEACHER_CLAIMS, *RELEASE_CLAIMS, verdict_rules)


def _float_constants_in_comparisons(source: str) -> list[str]:
    """Every comparison, or tolerance keyword, of ``source`` that holds a float literal other than 0 or 1."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) or (
            isinstance(node, ast.keyword) and node.arg in ("atol", "rtol", "tolerance", "margin", "floor")
        ):
            for c in ast.walk(node):
                if isinstance(c, ast.Constant) and isinstance(c.value, float) and c.value not in (0.0, 1.0):
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("module", RULE_MODULES, ids=lambda m: ".".join(m.__name__.rsplit(".", 2)[-2:]))
def test_no_constant_tolerance_remains_in_the_audioset_rules(module):
    assert _float_constants_in_comparisons(inspect.getsource(module)) == []
    # the scan finds what it must: the rules as they were (a range below 25 % of the mean, AUC 0.6 / 0.75)
    assert _float_constants_in_comparisons("ok = spread < 0.25 * mean") != []
    assert _float_constants_in_comparisons("ok = auc.min() > 0.6") != []


def test_every_teacher_claims_band_is_printed_or_exact():
    """A claim's boundary is the source's printed number (its half last digit the only tolerance) or exact by
    definition: 0 for a difference, 1 for a ratio, the no-skill AUC 0.5 (§2.1.3)."""
    claims = [c for m in TEACHER_CLAIMS for c in vars(m).values() if isinstance(c, Claim)]
    assert len(claims) >= 8
    exact = {0.0, 1.0, teacher_classes.NO_SKILL_AUC}
    for c in claims:
        assert c.printed or float(c.boundary) in exact, c.name
        assert c.tolerance == (0.0 if not c.printed else c.tolerance)


def test_every_release_claim_judged_on_data_has_a_printed_or_exact_band():
    """Notebook 05's claims judged on data: the boundary is printed (its half last digit the only tolerance) or exact
    (0 for a difference or a count, 1 for a ratio); an analytic claim is checked by the mathematics, not banded."""
    claims = [c for m in RELEASE_CLAIMS for c in vars(m).values() if isinstance(c, Claim) and c.basis == "data"]
    assert {"no prediction of the least frequent classes at a fixed th_e"} <= {c.name for c in claims}
    for c in claims:
        assert c.printed or float(c.boundary) in (0.0, 1.0), c.name


# ----------------------------------------------------------------------------- Fig 5.6
def _ensemble(n_teachers=6, n=400, classes=6, *, strong=None, seed=0):
    """Teachers' test probabilities on one test set: every teacher the same signal plus its own small noise; the
    teachers in ``strong`` see the labels much more clearly."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, classes)) < 0.3).astype(np.float32)
    y[0], y[1] = 1, 0
    probs = np.stack(
        [y + rng.normal(0, 0.2 if t in (strong or ()) else 1.0, y.shape) for t in range(n_teachers)]
    ).astype(np.float32)
    maps = np.array([np.mean(diagnostics.per_class_ap(y, p)) for p in probs])
    return y, SimpleNamespace(map=maps, auc=np.full(n_teachers, 0.8), probabilities=probs)


def test_fig_5_6_is_judged_by_the_heterogeneity_test_the_claim_names():
    """ "No significant difference between the teachers": teachers of equal skill (each its own noise) are found
    not to differ (agrees); three much sharper teachers are found to differ; without the test labels nothing is
    resampled (not evaluable). The old rule (a t-interval over ten dependent ratios) could never agree."""
    y, alike = _ensemble()
    rec = curves.similar_teachers_record(alike, y, n_boot=60)
    assert rec["verdict"] == "agrees" and rec["heterogeneity_p_value"] >= 0.05 and rec["heterogeneity_df"] == 5
    assert "Wald chi-squared" in rec["verdict_rule"]
    y, apart = _ensemble(strong=(0, 1, 2))
    rec = curves.similar_teachers_record(apart, y, n_boot=60)
    assert rec["verdict"] == "differs" and rec["heterogeneity_p_value"] < 0.05
    assert curves.similar_teachers_record(alike)["verdict"] == "not comparable"


# ----------------------------------------------------------------------------- Figs A.4 / A.5
def _scored(n=600, classes=30, *, skill, seed=0):
    """Labels and one teacher's probabilities whose class ``c`` separates the labels with strength ``skill[c]``
    (negative: inverted, an AUC below the no-skill 0.5)."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, classes)) < 0.25).astype(np.float32)
    y[0], y[1] = 1, 0
    return y, (np.asarray(skill)[None, :] * (y - 0.5) + rng.normal(0, 1, y.shape)).astype(np.float32)


@pytest.mark.slow
def test_fig_a_4_every_plotted_class_above_no_skill():
    """Over three replicate single models and the test bootstrap: agrees, or differs with a class scored against its
    labels; one model alone leaves its training seed unreplicated (a source the claim names): inconclusive."""

    def replicates(skill):
        y = _scored(skill=skill)[0]
        return y, np.stack(
            [skill[None, :] * (y - 0.5) + np.random.default_rng(s).normal(0, 1, y.shape) for s in range(3)]
        )

    y, p = replicates(np.linspace(1.0, 4.0, 30))
    rec = teacher_classes.class_roc_record(y, p, "baseline", n_boot=60)
    assert rec["verdict"] == "agrees" and rec["min_auc_plotted_interval"][0] > 0.5
    assert teacher_classes.class_roc_record(y, p[:1], "baseline", n_boot=60)["verdict"] == "inconclusive"
    y, p = replicates(np.r_[np.linspace(1.0, 4.0, 29), -3.0])  # one class scored against its labels
    rec = teacher_classes.class_roc_record(y, p, "baseline", n_boot=60)
    assert rec["verdict"] == "differs" and rec["min_auc_plotted_interval"][1] < 0.5


@pytest.mark.slow
def test_fig_a_5_only_the_worst_classes_near_the_diagonal():
    skill = np.r_[np.full(10, 4.0), np.full(10, 2.0), np.zeros(10)]  # best, medium skilful; worst at the diagonal
    y = _scored(skill=skill)[0]
    probs = np.stack([skill[None, :] * (y - 0.5) + np.random.default_rng(s).normal(0, 1, y.shape) for s in range(3)])
    rec = teacher_classes.class_roc_record(y, probs, "big 10", n_boot=60)
    assert rec["verdict"] == "agrees", rec["verdict_reason"]
    # each judged statistic is recorded as its estimate, inside its interval, the plotted teacher's value beside it
    figure, est = teacher_classes.class_roc_estimates(y, probs, n_boot=60)
    for k in ("min_auc_plotted", "min_auc_best_medium", "medium_minus_worst_auc"):
        low, high = rec[f"{k}_interval"]
        assert rec[k] == est[k].value and low <= rec[k] <= high
        assert rec[f"{k}_figure_teacher"] == figure[k]
    # every class at the diagonal: the medium classes show no skill and sit where the worst do
    flat = np.stack([np.random.default_rng(s).normal(0, 1, y.shape) - 0.8 * (y - 0.5) for s in range(3)])
    rec = teacher_classes.class_roc_record(y, flat, "big 10", n_boot=60)
    assert rec["verdict"] == "differs"


# ----------------------------------------------------------------------------- Fig 5.12: cut off, with its slope
def _rising_arm(last_gain, seeds=3, n=2):
    rows = []
    for t in range(seeds * n):
        rows += [
            (s, t, "curve", "mAP", 0.1 + 0.01 * k + (last_gain[t // n] if s == 30 else 0.0))
            for k, s in enumerate((10, 20, 30))
        ]
    history = pd.DataFrame(rows, columns=["step", "teacher", "split", "metric", "value"])
    return SimpleNamespace(history=history, n_teachers=seeds * n, replicate=np.repeat(np.arange(seeds), n))


def test_fig_5_12_cut_off_names_the_end_slope_and_its_interval():
    rising = ablations.final_slope(_rising_arm([0.010, 0.012, 0.011]))
    assert rising.low > 0 and rising.n_replicates == 3
    flat = ablations.final_slope(_rising_arm([-0.020, -0.022, -0.021]))
    assert flat.high < 0
    behind = judge(Claim("b", "s", "q", "direction"), unc.t_interval([-0.01, -0.012, -0.011], ("seed",)))
    assert behind.verdict == "differs"
    cut = ablations.cut_off(behind, 0.0, 1e-4, rising)  # no teacher selects its last step, yet still rising
    assert cut.verdict == "inconclusive" and "mAP change per 1,000 steps at its end" in cut.reason
    assert ablations.cut_off(behind, 0.0, 1e-4, flat) is behind  # converged: the difference stands


def test_thesis_length_record_carries_the_slope():
    assert "lowest_rate_end_slope_interval" in inspect.getsource(ablations.learning_rate_record)
    assert teachers.THESIS_ITERATIONS >= 10_000


# ----------------------------------------------------------------------------- figures: legends and stamps
def test_recipe_arm_legend_names_its_value_and_stamps_name_each_arms_steps():
    from pate_study.experiments.audioset import figures, teacher_figures

    spec = teachers.TeacherSpec(lr=1e-3, batch_size=64, steps=600)
    assert teacher_figures.arm_label("recipe", "learning rate", spec) == "recipe (lr 0.001)"
    assert teacher_figures.arm_label("recipe", "batch size", spec) == "recipe (batch 64)"
    assert teacher_figures.arm_label("lr 0.0001", "learning rate", spec) == "lr 0.0001"
    arms = {
        "recipe": SimpleNamespace(spec=spec),
        "lr 0.0001, thesis length": SimpleNamespace(spec=spec.replace(steps=6000)),
    }
    assert (
        teacher_figures.arm_steps_stamp(arms, list(arms)) == "recipe: 600 steps; lr 0.0001, thesis length: 6000 steps"
    )
    assert teacher_figures.arm_steps_stamp(arms, ["recipe"]) == "every arm 600 steps"
    # notebook 04's figures live in teacher_figures only
    for name in ("siren_figure", "ablation_figure", "class_roc_figure", "teacher_curves_figure"):
        assert hasattr(teacher_figures, name) and not hasattr(figures, name)


# ----------------------------------------------------------------------------- Fig 5.4: counted training work
def test_fig_5_4_resnets_up_to_five_times_faster_judged_on_counted_work():
    def flops(vgg11, vgg19):
        return {"resnet18": 1.0, "resnet34": 2.0, "vgg11": vgg11, "vgg19": 2.0 * vgg19}

    assert models.speed_verdict(flops(3.0, 4.0)).verdict == "agrees"
    assert models.speed_verdict(flops(3.0, 5.4)).verdict == "agrees"  # within half the printed digit
    assert models.speed_verdict(flops(3.0, 9.0)).verdict == "differs"  # beyond 5 ± 0.5
    assert models.speed_verdict(flops(0.5, 0.8)).verdict == "differs"  # VGG the lighter
    v = models.speed_verdict(flops(3.0, 9.0))
    assert v.basis == "analytic" and v.reason.startswith("analytic: holds for any data") and "not time" in v.reason
    assert models.speed_verdict(None).verdict == "not comparable"
    assert models.speed_verdict({"resnet18": 1.0}).verdict == "not comparable"  # no comparable pair
    assert models.FIG_5_4_SPEED.band() == (1.0, 5.5)


@pytest.mark.slow
def test_training_flops_are_counted_on_shapes_and_grow_with_the_network():
    f = teachers.training_flops(["resnet18", "resnet34", "vgg11"], n_classes=5, frames=32, width_scale=16, head=[8])
    again = teachers.training_flops(["resnet18", "resnet34", "vgg11"], n_classes=5, frames=32, width_scale=16, head=[8])
    assert f == again
    assert 0 < f["resnet18"] < f["resnet34"]
    wide = teachers.training_flops(["resnet18"], n_classes=5, frames=32, width_scale=8, head=[8])
    assert wide["resnet18"] > 2 * f["resnet18"]  # twice the width: about four times the convolutions' work
