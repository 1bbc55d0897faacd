"""The smoke check of notebooks/01_ecg_student_privacy.ipynb: what it must have recorded (not only that it ran)."""

from notebook_checks.shared import check_accounting, check_verdicts


def check(scalars: dict, params: dict) -> None:
    """01_ecg_student_privacy: accounting, one row per student, verdicts, both designs."""
    check_accounting(scalars, params)
    n_levels = len(params["rhos"]) + int(params["include_no_noise"])
    assert scalars["make2021-table1"]["n_students"] == n_levels * params["n_students"]
    assert scalars["scale"]["n_teachers"] <= params["n_teachers"]
    assert len(scalars["scale"]["designs"]) == 1 + int(params["alt_design"])
    check_verdicts(
        scalars,
        [
            "make2021-fig8",
            "make2021-fig9",
            "make2021-fig10",
            "make2021-fig11",
            "make2021-table1",
            "visca2021-fig4.15",
            "visca2021-fig4.16",
            "visca2021-table4.1",
        ],
    )
    fig11 = scalars["make2021-fig11"]
    assert fig11["epsilon_ind_star"] <= fig11["epsilon_ind_integer"]
    assert 0 <= fig11["n_students_on_integer_bound"] <= fig11["n_students"]
