"""Every rule that turns a number of notebooks 04 and 05 into a verdict against Muschiol 2021 (agrees, differs,
not comparable; :mod:`pate_study.verdicts`), and the thesis's claims checked on our tables. Each function states
its rule; none reads a number typed in: the thesis's values come from :func:`pate_study.registry.published`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pate_study.privacy import multilabel
from pate_study.registry import published
from pate_study.verdicts import Verdict, agrees, differs, not_comparable, within_tolerance

from .release import DELTA


def table_4_1_verdict(subset: str, label: str, paper: dict, ours: dict, kind: str) -> Verdict:
    """Sizes: not comparable (the thesis' crawled ~343k / ~96k clips vs the released bal_train
    embeddings); class number: must agree for "small" (15); for "big" ours is a documented rule."""
    if kind != "real":
        return not_comparable("synthetic stand-in data: sizes are of the stand-in, not of Audio Set")
    scale = (f"{ours['overall_size']:,} bal_train clips here vs {paper['overall_size']:,} crawled clips in the thesis "
             f"({ours['overall_size'] / paper['overall_size']:.1%}); test {ours['test_size']:,} official eval clips of "
             f"the subset vs {paper['test_size']:,} (the thesis' crawl lost removed videos)")
    classes = within_tolerance(paper["class_number"], ours["class_number"], atol=0.5, quantity="class number")
    if classes.verdict == "agrees":
        return not_comparable(f"class number agrees ({ours['class_number']}); sizes differ by construction: {scale}",
                              rule="class number exact; sizes not comparable (different clip sources)")
    return not_comparable(f"class number {ours['class_number']} vs {paper['class_number']} (the thesis lists no "
                          f"classes; ours is the documented ontology rule); {scale}",
                          rule="class number exact; sizes not comparable (different clip sources)")


def siren_verdict(source: str, shape: tuple[int, ...]) -> Verdict:
    """Fig 2.1 is an illustration of one (unnamed) siren clip: a synthetic stand-in cannot agree with it, and
    a real clip is another clip; the format (1001 frames x 64 bands for 10 s) holds by construction of
    the features, so it is stated, not counted as agreement."""
    fmt = f"{shape[0]} frames x {shape[1]} Mel bands (1001 x 64 for a 10 s clip by construction of the features)"
    if source.startswith("synthetic"):
        return not_comparable(f"synthetic stand-in siren, not the thesis' real clip; {fmt}",
                              rule="an illustration of a clip: a stand-in cannot agree with it")
    return not_comparable(f"a real Siren clip of Audio Set, not necessarily the thesis' (which it does not name); {fmt}",
                          rule="an illustration of a clip: a different clip cannot agree with it")


def thesis_baseline_maps() -> dict[str, float]:
    """The baseline teachers' mAP printed in the thesis' tables: small from Table A.1, big from Table 5.1
    (its Fig 5.1 text says ~0.65 / ~0.35 instead; notes §9)."""
    small = {r["n_teachers"]: r for r in published("muschiol2021-tableA.1")["rows"]}["baseline"]["map"]
    big = {r["n_teachers"]: r for r in published("muschiol2021-table5.1")["rows"]}["baseline"]["map_raw"]
    return {"small": float(small), "big": float(big)}


def scale_range(table41: pd.DataFrame) -> tuple[float, float]:
    """Smallest and largest ratio of our bal_train clips to the thesis' clips over the subsets (Table 4.1)."""
    r = table41.groupby("block").ratio_ours_to_thesis.first()
    return float(r.min()), float(r.max())


def adaptive_weights_verdict(plain_map: float, adaptive_map: float, *, tolerance: float = 0.01) -> Verdict:
    """Fig 5.11, §5.1.3: "weight scaling in the loss function has no positive effect". Agrees when the
    adaptive arm's final mAP does not exceed plain BCE's by more than ``tolerance`` (declared before the run)."""
    rule = f"adaptive-weight final mAP <= plain BCE's + {tolerance} (\"no positive effect\")"
    gain = adaptive_map - plain_map
    if gain <= tolerance:
        return agrees(rule=rule)
    return differs(f"adaptive class weights raise the final mAP by {gain:+.3f} (embedding MLPs, validation-based weights)",
                   rule=rule)


def class_curve_verdict(thesis_value: float, ours: float, what: str) -> Verdict:
    """Figs A.2/A.3: per-class AP levels of the thesis' ResNets on log-Mel (274k / 27k clips) against our
    embedding MLPs on 6.2k / 0.6k clips: a different model, input and scale, so not comparable."""
    return not_comparable(f"{what}: {ours:.3f} here vs ~{thesis_value} in the thesis; embedding MLPs on 128-d VGGish clip "
                          "embeddings of a few thousand clips vs ResNets on log-Mel of 274k / 27k clips",
                          rule="per-class AP levels depend on model, input and data scale")


def architecture_verdict(final: dict[str, dict[str, float]]) -> Verdict:
    """Fig 5.4 on real log-Mel clips: the thesis' VGGs reach "slightly higher mAP" but a worse AUC than its
    ResNets. ``final``: architecture -> {"mAP", "auc"} at the last evaluation (mean over teachers)."""
    rule = "mean final mAP of VGG-11/19 >= ResNet-18/34's and mean final AUC below theirs"
    fam = {f: [final[a] for a in final if a.startswith(f)] for f in ("vgg", "resnet")}
    if not fam["vgg"] or not fam["resnet"]:
        return not_comparable("needs both VGG and ResNet arms", rule=rule)
    mean = {f: {m: float(np.mean([r[m] for r in rows])) for m in ("mAP", "auc")} for f, rows in fam.items()}
    if mean["vgg"]["mAP"] >= mean["resnet"]["mAP"] and mean["vgg"]["auc"] < mean["resnet"]["auc"]:
        return agrees(rule=rule)
    return differs(f"VGG mAP {mean['vgg']['mAP']:.3f} / AUC {mean['vgg']['auc']:.3f} vs ResNet "
                   f"{mean['resnet']['mAP']:.3f} / {mean['resnet']['auc']:.3f}", rule=rule)


def confidence_rule_verdict(t53: pd.DataFrame, item_id: str = "muschiol2021-table5.3") -> pd.DataFrame:
    """Which confidence rule reproduces the thesis's answered shares: per rule, (i) whether the answered
    share is the same for every th_e (as printed), (ii) mean |ours − printed| of the answered percentages."""
    paper = pd.DataFrame(published(item_id)["rows"])
    out = []
    for rule, sub in t53.groupby("rule", sort=False):
        cols = [c for c in sub.columns if c.startswith("answered_pct_")]
        constant = bool(all(sub.groupby("n_teachers")[c].nunique().max() == 1 for c in cols))
        merged = sub.merge(paper, on=["n_teachers", "threshold"], suffixes=("", "_paper"))
        diffs = np.concatenate([(merged[c] - merged[f"{c}_paper"]).abs().dropna().to_numpy(float) for c in cols])
        out.append({"rule": rule, "answered_share_independent_of_th_e": constant,
                    "mean_abs_diff_answered_pct": float(diffs.mean()) if diffs.size else np.nan})
    return pd.DataFrame(out)


def trend_verdict_table_5_2(t52: pd.DataFrame) -> Verdict:
    """The thesis's Table 5.2 reading: for every fixed threshold, more teachers give higher precision and
    lower recall (Muschiol §5.2, §6). Checked on our rows (teacher counts > 1)."""
    rule = "per fixed threshold: precision non-decreasing and recall non-increasing from 10 to 20 to 50 teachers"
    fixed = t52[(t52["threshold"] != "adaptive") & (t52["n_teachers"] != "baseline")].copy()
    fixed["t"] = fixed["n_teachers"].astype(int)
    bad = []
    for th, sub in fixed.groupby("threshold"):
        sub = sub.sort_values("t")
        if not (np.all(np.diff(sub["precision"]) >= -1e-9) and np.all(np.diff(sub["recall"]) <= 1e-9)):
            bad.append(th)
    if bad:
        return differs(f"the trend fails at thresholds {bad} on our embedding teachers", rule=rule)
    return agrees(rule=rule)


def findings(sweep: pd.DataFrame, t54: pd.DataFrame, mw: pd.DataFrame, bounds: pd.DataFrame,
             rules: pd.DataFrame | None = None, aud: pd.DataFrame | None = None) -> list[str]:
    """Statements computed from the notebook's own tables (no number typed in)."""
    out = []
    ad = sweep[(sweep["threshold"] == "adaptive") & (sweep["sigma_e"] > 0)]
    if len(ad):
        r = ad.iloc[(ad["sigma_e"] - 0.3).abs().argmin()]
        out.append(f"Definition 11 (adaptive th_e) at σ_e={r['sigma_e']:g}: sound ε {r['epsilon']:.4g} (the threshold "
                   f"charged by its own sensitivity) against {r['epsilon_threshold_as_fixed']:.4g} from the thesis's "
                   "accounting, which treats the threshold as fixed and is not a guarantee")
    if rules is not None and len(rules):
        budget = float(rules["budget_epsilon"].iloc[0])
        eq = rules[np.isclose(rules["epsilon"], budget, rtol=1e-6) | (rules["epsilon"] < budget)]
        ranked = ", ".join(f"{r.rule}{'' if r.rule.startswith('fixed') or r.rule.startswith('adaptive-k') else f' σ={r.sigma:.3g}'} "
                           f"F1 {r.f1:.3f}" for r in eq.sort_values("f1", ascending=False).itertuples())
        out.append(f"at equal ε {budget:.1f} (δ={DELTA:g}, {len(rules) and 'same votes'}): {ranked}")
    if aud is not None and len(aud):
        caught = aud[aud["violation"].astype(bool)]
        out.append("audit: claims violated by the empirical lower bound: " + ("; ".join(
            f"{r.release} ({r.claim}, {r.mechanism}, σ_e={r.sigma_e:g}): {r.empirical_epsilon_lower:.2f} > "
            f"{r.claimed_epsilon:.2f}" for r in caught.itertuples()) or "none"))
    s = sweep[sweep["sigma_e"] > 0].copy()
    s["ratio"] = s["epsilon"] / s["epsilon_data_independent"]
    by = s.groupby("threshold")["ratio"].agg(["min", "max"])
    for th, r in by.iterrows():
        out.append(f"GNThreshold th_e={th}: data-dependent / data-independent ε (vote-fraction bound) ranges "
                   f"{r['min']:.3f}–{r['max']:.3f} over the σ_e grid"
                   + (" — no saving" if r["min"] > 0.999 else ""))
    fixed = bounds[bounds["threshold"] != "adaptive"]
    never = list(dict.fromkeys(fixed[~fixed["theorem6_possible"].astype(bool)]["bound"]))
    if never:
        out.append(f"bounds for which Theorem 6 can never apply at this σ with a fixed th_e (data-dependent = "
                   f"data-independent by construction): {', '.join(never)}")
    if len(t54) and "eps_thesis_grid" in t54:
        fixed54 = t54[t54["th_e"] != "adaptive"]
        ratio = fixed54["eps_data_dependent"] / fixed54["eps_thesis_grid"]
        out.append(f"orders: Table 5.4's best orders lie at {t54['order'].min():.3f}–{t54['order'].max():.3f}, below "
                   f"the thesis grid's first order 2; there ε is {ratio.min():.2f}–{ratio.max():.2f}× the value on the "
                   "thesis grid (fixed th_e)")
    if len(t54):
        best = t54.loc[t54["map"].idxmax()]
        low = t54.loc[t54["eps_data_dependent"].idxmin()]
        out.append(f"students: best mAP {best['map']:.3f} (n={best['n_samples']}, th_e={best['th_e']}, "
                   f"th_c={best['th_c']}, ε={best['eps_data_dependent']:.1f}); lowest ε "
                   f"{low['eps_data_dependent']:.1f} with mAP {low['map']:.3f}")
    if len(mw):
        sub = mw.loc[mw.groupby("mechanism")["f1"].idxmax()]
        for _, r in sub.sort_values("f1", ascending=False).iterrows():
            out.append(f"{r['mechanism']}: best macro F1 {r['f1']:.3f} at σ_e={r['sigma_e']:g} "
                       f"(ε {r['epsilon']:.1f}, data-independent {r['epsilon_data_independent']:.1f})")
    return out


#: the thesis's teacher pools and class counts (Table 4.1), per subset.
THESIS_SCALE = {161: "~274k crawled clips (153 classes, not listed)", 15: "76,656 crawled clips (15 classes, not listed)"}


def scale_verdict(data: str, what: str, *, teacher_pool: int | None = None, n_labels: int | None = None,
                  extra: str = "") -> Verdict:
    """Verdict for numbers of our embedding teachers beside the thesis's ResNet teachers: the same definitions
    on different teachers (embedding MLPs on ``teacher_pool`` bal_train clips, ``n_labels`` classes, vs ImageNet
    ResNets on log-Mel of the thesis's teacher pool of the same subset, Table 4.1), ensembles scored on eval-clip
    queries."""
    if data == "synthetic":
        return not_comparable(f"{what}: synthetic stand-in teachers, not Audio Set")
    pool = f"{teacher_pool:,}" if teacher_pool else "a few thousand"
    labels = n_labels or 161
    thesis = THESIS_SCALE.get(labels, THESIS_SCALE[161] if labels > 15 else THESIS_SCALE[15])
    return not_comparable(f"{what}: embedding-MLP teachers on {pool} released bal_train embeddings ({labels} classes) "
                          f"vs the thesis's ImageNet ResNets on log-Mel of {thesis}; same definitions, different "
                          "teachers, data and scale" + (f"; {extra}" if extra else ""),
                          rule="same quantity, different data and teachers")


def _claim(claim: str, thesis: str, ours: str, holds: bool | None, rule: str, kind: str = "real") -> dict:
    if kind == "synthetic":
        v = not_comparable("synthetic stand-in teachers: a direction on them says nothing about Audio Set", rule=rule)
    elif holds is None:
        v = not_comparable(f"not evaluable on our tables: {ours}", rule=rule)
    else:
        v = agrees(rule=rule) if holds else differs(f"on our votes: {ours}", rule=rule)
    return {"claim": claim, "thesis": thesis, "ours": ours, **v.as_record()}


def ensemble_claims(t51: pd.DataFrame, t52: pd.DataFrame, t53: pd.DataFrame, kind: str = "real") -> pd.DataFrame:
    """The thesis's qualitative readings of Tables 5.1-5.3 (§5.2, §5.5), each checked on our tables: the
    directions are comparable even where the values are not (different teachers and scale); on the synthetic
    stand-in (``kind="synthetic"``) every claim is *not comparable*."""
    base = t51[t51["n_teachers"] == "baseline"]
    ens = t51[t51["n_teachers"] != "baseline"].copy()
    ens["t"] = ens["n_teachers"].astype(int)
    ens = ens.sort_values("t")
    rows = []
    if len(base) and len(ens):
        b_f1, b_map = float(base["ensemble_f1"].iloc[0]), float(base["map_raw"].iloc[0])
        best_f1, best_map = float(ens["ensemble_f1"].max()), float(ens["map_raw"].max())
        rows.append(_claim("no ensemble beats the single model on all data (best-threshold F1 and raw mAP)",
                           "baseline F1 0.256 / mAP 0.268 above every ensemble (Table 5.1)",
                           f"baseline F1 {b_f1:.3f} / mAP {b_map:.3f}; best ensemble F1 {best_f1:.3f} / mAP {best_map:.3f}",
                           best_f1 <= b_f1 and best_map <= b_map,
                           "best ensemble F1 <= baseline F1 and best ensemble raw mAP <= baseline raw mAP", kind))
        rows.append(_claim("raw mAP falls as teachers get more and smaller partitions",
                           "0.219 > 0.199 > 0.186 for 10 > 20 > 50 teachers",
                           " > ".join(f"{m:.3f}" for m in ens["map_raw"]) + f" for {', '.join(map(str, ens['t']))}",
                           bool(np.all(np.diff(ens["map_raw"].to_numpy(float)) <= 0)),
                           "raw mAP non-increasing in the number of teachers", kind))
        beats = (ens["ensemble_f1"] > ens["teacher_avg_f1"]).to_numpy()
        rows.append(_claim("the ensemble beats its average teacher (F1 at the ensemble's best threshold)",
                           "0.228 vs 0.167, 0.204 vs 0.136, 0.173 vs 0.112",
                           ", ".join(f"{a:.3f} vs {b:.3f}" for a, b in zip(ens["ensemble_f1"], ens["teacher_avg_f1"])),
                           bool(beats.all()), "ensemble F1 > average teacher F1 for every teacher count", kind))
    conf = t53[(t53["rule"] == "max") & (t53["threshold"] == "0.2")].set_index("n_teachers")
    plain = t52[t52["threshold"] == "0.2"].set_index("n_teachers")["f1"]
    gains = {t: float(conf.loc[t, "f1_conf06"] / plain.loc[t]) for t in conf.index if t in plain.index and plain.loc[t] > 0}
    ok = {t: g for t, g in gains.items() if np.isfinite(g)}
    ours = ", ".join(f"{t}: {100 * (g - 1):+.0f} %" for t, g in ok.items()) or "no query passes the check"
    rows.append(_claim("the confidence check (th_c = 0.6) raises F1 on the answered queries (th_e = 0.2)",
                       "+35 % (10 teachers) to +64 % (50 teachers), Table 5.3", ours,
                       all(g > 1 for g in ok.values()) if ok else None,
                       "F1 with the check > F1 without, per teacher count", kind))
    return pd.DataFrame(rows)


def saving_contrast_verdict(sweep: pd.DataFrame, n_labels: int, tol: float = 0.01,
                            kind: str = "real") -> tuple[Verdict, dict]:
    """Fig 5.13's reading: at th_e = 0.2 the data-dependent ε equals the data-independent one, while
    th_e = 0.4 and adaptive save (§5.3). Checked on our sweep (smallest ratio over the σ_e grid per th_e)."""
    s = sweep[sweep["sigma_e"] > 0]
    ratio = (s["epsilon"] / s["epsilon_data_independent"]).groupby(s["threshold"]).min().to_dict()
    rule = f"ratio >= {1 - tol:g} at th_e=0.2 and < {1 - tol:g} at th_e=0.4 and adaptive (min over σ_e)"
    need = ("0.2", "0.4", "adaptive")
    if not all(k in ratio for k in need):
        return not_comparable(f"the sweep lacks thresholds {[k for k in need if k not in ratio]}", rule=rule), ratio
    if kind == "synthetic":
        return not_comparable("synthetic stand-in votes", rule=rule), ratio
    none_at_02 = ratio["0.2"] >= 1 - tol
    saves = {k: ratio[k] < 1 - tol for k in ("0.4", "adaptive")}
    if none_at_02 and all(saves.values()):
        return agrees(rule=rule), ratio
    parts = "; ".join(f"th_e={k}: smallest ratio {ratio[k]:.3f}" for k in need)
    if not saves["adaptive"]:
        parts += (". Adaptive: the threshold is computed from the private votes, so the sound accounting charges its "
                  "sensitivity (per label 1/T + 1, multilabel.adaptive_threshold_slope), under which Theorem 6 never "
                  "applies; the thesis's saving comes from accounting the threshold as if it were fixed")
    if not saves["0.4"]:
        parts += (f". q̃ (Theorem 13) multiplies {n_labels} per-label factors Φ(|m_i − th|/σ_e), so it stays near 1 "
                  "unless nearly every label's vote is far from th_e, and Theorem 6 then saves nothing")
    return differs(parts, rule=rule), ratio


def q_average_verdict(t54: pd.DataFrame, *, sigma_e: float = 0.3, n_labels_thesis: int = 153) -> tuple[Verdict, pd.DataFrame]:
    """Table 5.4's q average beside ours, and beside the smallest q̃ Theorem 13 allows at σ_e on vote fractions
    over the thesis's 153 labels (:func:`pate_study.privacy.multilabel.min_logq`)."""
    paper = pd.DataFrame(published("muschiol2021-table5.4")["rows"])
    rows = []
    for th, sub in paper.groupby("th_e", sort=False):
        threshold = th if th == "adaptive" else float(th)
        floor = math.exp(multilabel.min_logq(threshold, sigma_e, n_labels_thesis))
        ours = t54[t54["th_e"] == th]["q_average"]
        rows.append({"th_e": th, "thesis_q_average_min": float(sub["q_average"].min()),
                     "floor_153_labels": floor, "ours_q_average_min": float(ours.min()) if len(ours) else np.nan,
                     "thesis_below_floor": bool(sub["q_average"].min() < floor)})
    table = pd.DataFrame(rows)
    rule = "printed q average >= the smallest q̃ that Theorem 13 can give at σ_e = 0.3 on vote fractions (153 labels)"
    bad = table[table["thesis_below_floor"]]
    if len(bad):
        return differs("the thesis's q averages " + ", ".join(
            f"{r.thesis_q_average_min:.3f} (th_e={r.th_e}, floor {r.floor_153_labels:.3f})" for r in bad.itertuples())
            + " lie below what Theorem 13 allows with σ_e = 0.3 on vote fractions in [0, 1]: its noise there cannot "
            "be on that scale, so its ε and q̃ are not the quantity ours are", rule=rule), table
    return agrees(rule=rule), table


def adaptive_privacy_verdict(t54: pd.DataFrame, kind: str = "real") -> Verdict:
    """Fig 5.19's reading (§5.4): "the adaptive threshold mechanism allows for much stronger privacy guarantees
    than similar aggregation configurations". A direction any scale can test: per (n, th_c), the adaptive row's
    ε divided by the fixed th_e rows' smallest ε, with the adaptive threshold charged by its own sensitivity."""
    rule = "ε adaptive / smallest ε of a fixed th_e at the same (n, th_c) < 1 for every (n, th_c)"
    ad = t54[t54["th_e"] == "adaptive"]
    fixed = t54[t54["th_e"] != "adaptive"]
    if ad.empty or fixed.empty:
        return not_comparable("the table lacks adaptive or fixed-threshold rows", rule=rule)
    if kind == "synthetic":
        return not_comparable("synthetic stand-in votes", rule=rule)
    best = fixed.groupby(["n_samples", "th_c"])["eps_data_dependent"].min()
    ratio = {f"n={n}, th_c={c}": float(e / best.loc[(n, c)]) for n, c, e in
             zip(ad["n_samples"], ad["th_c"], ad["eps_data_dependent"]) if (n, c) in best.index}
    text = "; ".join(f"{k}: {v:.3g}×" for k, v in ratio.items())
    if all(v < 1 for v in ratio.values()):
        return agrees(rule=rule)
    return differs(f"{text}. The adaptive threshold is computed from the private votes and one teacher can move it "
                   "across [0, 1]; charged by that sensitivity its ε is far larger, not smaller. The thesis's "
                   "'stronger guarantee' treats the threshold as fixed (eps_threshold_as_fixed, not a guarantee)",
                   rule=rule)


def student_claim(best_student_map: float, single_model_map: float, kind: str = "real") -> Verdict:
    """The thesis's student reading (§5.4, Table 5.4 vs Table 5.1): the best student stays below the single
    non-private model (0.104 vs 0.268)."""
    rule = "best student mAP < single model mAP (test set)"
    if kind == "synthetic":
        return not_comparable("synthetic stand-in teachers", rule=rule)
    if best_student_map < single_model_map:
        return agrees(rule=rule)
    return differs(f"best student mAP {best_student_map:.3f} >= single model {single_model_map:.3f}", rule=rule)


def confidence_claims(sweep: pd.DataFrame, fixed: pd.DataFrame, adaptive: pd.DataFrame, sigma_c: float = 0.6,
                      kind: str = "real") -> pd.DataFrame:
    """Figs 5.14/5.15's readings (§5.3), per σ_e shared by the sweeps, at ``sigma_c``: the check (th_e = 0.4,
    th_c = 0.6) raises F1 (thesis: doubles it) and costs more ε (about 1.5×) than GNThreshold without it;
    with the adaptive threshold the confident mechanism costs less ε than with th_e = 0.4 (about half).
    Our ε is the realised one (GNThreshold charged on answered queries only), as in the thesis's §5.3 text."""
    plain = sweep[(sweep["threshold"] == "0.4") & (sweep["sigma_e"] > 0)].set_index("sigma_e")
    pick = lambda c: c[np.isclose(c["sigma_c"], sigma_c)].set_index("sigma_e")  # noqa: E731
    conf, conf_ad = pick(fixed), pick(adaptive)
    common = sorted(set(plain.index) & set(conf.index) & set(conf_ad.index))
    if not common:
        return pd.DataFrame([_claim("confidence sweeps", "", "no common σ_e", None, "", kind)])
    f1 = conf.loc[common, "f1"].to_numpy(float) / plain.loc[common, "f1"].to_numpy(float)
    eps = conf.loc[common, "epsilon"].to_numpy(float) / plain.loc[common, "epsilon"].to_numpy(float)
    ad = conf_ad.loc[common, "epsilon"].to_numpy(float) / conf.loc[common, "epsilon"].to_numpy(float)
    fmt = lambda r: ", ".join(f"σ_e={s:g}: {x:.2f}×" for s, x in zip(common, r))  # noqa: E731
    finite = lambda r: bool(np.all(np.isfinite(r))) or None  # noqa: E731
    out = pd.DataFrame([
        _claim("Fig 5.14: the check raises F1 (th_e = 0.4, th_c = 0.6)", "F1 about doubles", fmt(f1),
               bool(np.all(f1 > 1)) if finite(f1) else None, "F1 with check / without > 1 at every σ_e", kind),
        {"claim": "Fig 5.14: the check costs more ε", "thesis": "ε about 1.5× higher", "ours": fmt(eps),
         **not_comparable("different quantities: the thesis adds the check's cost to every query's GNThreshold cost "
                          "(Table 5.4: ε with a check > without), ours is the realised cost, GNThreshold charged only on "
                          "the answered queries; charged on every query, ε with the check exceeds ε without by "
                          "construction (the check's slope is added)", rule="ε with check / without > 1").as_record()},
        _claim("Fig 5.15: adaptive th_e makes the confident mechanism cheaper than th_e = 0.4", "about half the ε",
               fmt(ad), bool(np.all(ad < 1)) if finite(ad) else None, "ε adaptive / ε th_e=0.4 < 1 at every σ_e", kind),
    ])
    if kind != "synthetic" and finite(ad) and not np.all(ad < 1):
        out.loc[2, "verdict_reason"] = (f"on our votes: {fmt(ad)}; the adaptive threshold is charged by its own "
                                        "sensitivity (it is computed from the private votes), which the thesis's "
                                        "accounting leaves out; treated as fixed (not a guarantee) both thresholds pay "
                                        "about the same, since the max-rule check does not depend on th_e and q̃ ≈ 1")
    return out
