"""The smoke check of notebooks/02_web_requests.ipynb: what it must have recorded (not only that it ran)."""

from notebook_checks.shared import check_accounting, check_verdicts


def check(scalars: dict, params: dict) -> None:
    """02_web_requests: accounting, verdicts, Sosa's tables filled for every ensemble size, hypotheses recorded."""
    check_accounting(scalars, params)
    check_verdicts(
        scalars,
        [
            "make2021-fig13",
            "make2021-fig14",
            "make2021-fig15",
            "visca2021-fig4.13",
            "sosa2021-table4.1",
            "sosa2021-table4.2",
            "sosa2021-fig4.4",
        ],
    )
    table42 = scalars["sosa2021-table4.2"]
    ours = [
        r for r in table42["rows"] if isinstance(r.get("ours_teacher_epsilon"), (int, float))
    ]  # NaN is stored as "nan"
    assert {r["n_teachers"] for r in ours} == set(params["sosa_teachers"])
    assert len(ours) == len(params["sosa_teachers"]) * (len(params["sosa_scales"]) + int(params["include_no_noise"]))
    assert all(r["verdict"] for r in table42["rows"] if isinstance(r.get("paper_teacher_epsilon"), (int, float)))
    assert len(table42["setting_hypotheses"]) == 8  # order grids λ ≤ 8, 32 × δ 1e-5, 0.05 × T 1,000, 1,200
    validation = scalars["validation_rows"]
    for level, row in validation.items():
        if isinstance(row, dict):  # the share of anomalous validation rows is the pool's (stratified)
            assert abs(row["validation_positive_share"] - validation["pool_positive_share"]) < 0.01, level
    split = scalars["sosa2021-beyond-split"]  # row split vs URL split, no noise
    check_verdicts(scalars, ["sosa2021-beyond-split"])
    table = split["table"]
    for metric in ("student TPR", "student TNR", "student balanced accuracy", "student accuracy"):
        assert 0 <= table[metric]["row split"] <= 1 and 0 <= table[metric]["URL split"] <= 1, metric
    for shared in (
        "validation rows whose URL is in the teachers' rows",
        "validation rows whose URL is in the student's training rows",
        "queries whose URL is in the teachers' rows",
    ):
        assert table[shared]["URL split"] == 0, shared  # the URL split keeps every URL on one side
