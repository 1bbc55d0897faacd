"""The smoke check of notebooks/07_pate2018_lab.ipynb: what it must have recorded (not only that it ran)."""

import math


def check(scalars: dict, params: dict) -> None:
    """07_pate2018_lab: the runs of the noisy check scatter around the closed-form expectation (binomial-like
    spread: the mean of n_runs runs within 5 standard errors), the improved conversion never exceeds the basic one,
    and data-dependent never exceeds data-independent."""
    answered = scalars["pate_study-lab2-answered"]
    assert 0 < answered["expected"] < answered["n_queries"] == params["n_queries"]
    se = max(answered["runs_std"], 1.0) / math.sqrt(params["n_runs"])
    assert abs(answered["runs_mean"] - answered["expected"]) <= 5 * se
    conv = scalars["pate_study-lab2-conversions"]
    for analysis in ("data-dependent", "data-independent"):
        assert conv[f"{analysis}_improved"] <= conv[f"{analysis}_basic"]
    for conversion in ("basic", "improved"):
        assert conv[f"data-dependent_{conversion}"] <= conv[f"data-independent_{conversion}"]
    assert 0 <= scalars["pate_study-lab2-q"]["fraction_below_cutoff"] <= 1
