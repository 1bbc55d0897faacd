"""The smoke check of notebooks/05_audioset_multilabel.ipynb: what it must have recorded (not only that it ran)."""

import math

from pate_study.reporting.verdicts import VERDICTS


def check(scalars: dict, params: dict) -> None:
    """05_audioset_multilabel: set-up, the confidence rules, the accounting invariants and the Table 5.4 fit."""
    setup = scalars["setup"]
    assert setup["query_pool"] >= min(params["student_runs"]["min_pool"], setup["query_pool"] + setup["test"] - 200)
    assert setup["test"] > 0
    # the "max" rule's answered share cannot depend on th_e; it is the one that matches the thesis's constant shares
    assert scalars["muschiol2021-table5.3"]["max_rule_constant"] is True
    for item in ("muschiol2021-fig5.13", "muschiol2021-figA.7", "muschiol2021-fig5.14", "muschiol2021-fig5.15"):
        assert scalars[item]["min_ratio_dependent_to_independent"] <= 1 + 1e-9, item
    assert scalars["muschiol2021-table5.4"]["max_dependent_minus_independent"] <= 1e-6
    assert scalars["table54_fit"]["all_fit_rounds_to_printed"] is True
    beyond = scalars["muschiol2021-beyond-multiwinner"]
    for mech in ("gnthreshold", "binary", "tau", "powerset"):
        assert math.isfinite(beyond[f"{mech}_epsilon"]) and 0 <= beyond[f"{mech}_student_map"] <= 1
    assert scalars["findings"]["lines"], "the findings cell must print computed statements"
    # teachers come from notebook 04's train_teachers: every teacher count reports its selected steps
    assert set(setup["mean_best_step"]) == {str(t) for t in setup["teacher_counts"]}
    # the audits: no violation of the package's claims; half-noise twins and the thesis's accounting of the
    # adaptive threshold (Definition 11, threshold treated as fixed) caught
    audit = scalars["muschiol2021-gnthreshold-audit"]
    assert audit["violations_sound_claims"] == 0 and audit["broken_caught"] == audit["n_broken"] > 0
    assert audit["adaptive_as_fixed_caught"] == audit["n_as_fixed"] > 0
    assert audit["wrong_accounting_caught"] == audit["n_wrong_accounting"] > 0  # the top-k vote at √k/T
    t54 = scalars["muschiol2021-table5.4"]
    for key in ("best_student_map", "student_true_labels_map", "student_noise_free_labels_map", "class_prior_map"):
        assert 0 <= t54[key] <= 1, key
    assert t54["q_average_verdict"] in VERDICTS
