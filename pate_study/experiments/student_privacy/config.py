"""Configuration of one student-privacy study (sizes, noise levels, models) and fitting it to the data.

Choices where the sources are silent are fields of :class:`StudentPrivacyConfig` (see the package docstring).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pate_study.learning.ensemble import EnsembleConfig

NO_NOISE = "no noise"
PARAMETRISATIONS = ("rho", "scale")
STUDENT_FEATURES = ("clean", "privatized")


@dataclass(frozen=True)
class StudentPrivacyConfig:
    """Sizes, noise levels and models of one student-privacy study.

    ``noise_levels``: ρ values (``parametrisation="rho"``, noise Lap(1/ρ), MAKE/Visca) or Laplace scales b
    (``"scale"``, Sosa's "student ε"); ``None`` stands for "no noise".
    ``disjoint_students``: every student of a level gets its own rows of the student pool (no two students
    share a query or a validation row); otherwise each student draws independently (the sources' "a
    different random sample").
    ``n_teacher_seeds``: teacher ensembles trained, each with its own training seed and partition of the teacher
    pool; the ``n_students`` students of a level are split across them (student ``k`` labelled by ensemble
    ``k mod n_teacher_seeds`` at every level), so every interval covers the teacher seed too (students nested in
    ensembles: :func:`pate_study.reporting.uncertainty.clustered_interval`) at no extra student.
    """

    task: str  # "multiclass" (ECG) or "binary" (web)
    n_classes: int
    n_teachers: int
    teacher_train: int
    teacher_threshold: int  # per-teacher Youden split (binary); 0 for multiclass
    student_queries: int  # T, the queries the teachers answer
    student_threshold: int  # the student's Youden split (binary); 0 for multiclass
    student_validation: int
    noise_levels: tuple  # floats and None
    parametrisation: str = "rho"
    n_students: int = 10
    gamma: float = 0.05
    delta: float = 1e-5
    max_integer_order: int = 8
    teacher: EnsembleConfig = field(default_factory=EnsembleConfig)
    student: EnsembleConfig = field(default_factory=EnsembleConfig)
    student_features: str = "clean"
    feature_scale: float = 1.0  # models see feature_scale · x (post-processing; see run_study)
    min_teacher_train: int = 25  # below this, fit_sizes uses fewer teachers instead of smaller partitions
    label_control: bool = True  # also train students on shuffled labels (what the labels contribute)
    disjoint_students: bool = False
    seed: int = 0
    n_teacher_seeds: int = 1  # teacher ensembles, each its own seed and partition; student k asks ensemble k mod n

    def __post_init__(self) -> None:
        if self.parametrisation not in PARAMETRISATIONS:
            raise ValueError(f"parametrisation={self.parametrisation!r}: expected one of {PARAMETRISATIONS}")
        if self.student_features not in STUDENT_FEATURES:
            raise ValueError(f"student_features={self.student_features!r}: expected one of {STUDENT_FEATURES}")
        sizes = (
            "n_teachers",
            "teacher_train",
            "student_queries",
            "student_validation",
            "n_students",
            "n_teacher_seeds",
        )
        for name in sizes:
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r}: expected a positive integer")
        if not 1 <= int(self.n_teacher_seeds) <= int(self.n_students):
            raise ValueError(
                f"n_teacher_seeds={self.n_teacher_seeds!r}: expected an integer from 1 to n_students={self.n_students}"
                " (each teacher ensemble labels at least one student)"
            )
        if not self.noise_levels:
            raise ValueError("noise_levels: expected at least one level (a float, or None for no noise)")
        for level in self.noise_levels:
            if level is not None and not (np.isfinite(level) and level > 0):
                raise ValueError(f"noise_levels: {level!r} is not a positive number or None")

    def level_label(self, level: float | None) -> str:
        return NO_NOISE if level is None else f"{level:g}"

    @property
    def level_order(self) -> list[str]:
        """The labels of ``noise_levels`` in the order they were given (the order of every table and figure)."""
        return [self.level_label(level) for level in self.noise_levels]

    @property
    def rows_per_student(self) -> int:
        return self.student_queries + self.student_threshold + self.student_validation


def level_key(level: Any) -> str:
    """One spelling per noise level ("1.0", 1 and "1" -> "1"; "no noise" stays), so paper and ours merge."""
    return NO_NOISE if level is None or str(level) == NO_NOISE else f"{float(level):g}"


def noise_keyword(level: float, parametrisation: str) -> dict:
    """The local mechanism's keyword for a noise level: rho (MAKE's Lap(1/rho)) or scale (Sosa's b)."""
    return {"rho": level} if parametrisation == "rho" else {"scale": level}


def fit_sizes(
    config: StudentPrivacyConfig, n_teacher_pool: int, n_student_pool: int, min_teacher_train: int = 25
) -> tuple[StudentPrivacyConfig, list[str]]:
    """The largest feasible sizes for the available data, and a note for every change.

    Teachers need ``n_teachers × (train + threshold)`` disjoint rows: first the per-teacher sizes shrink
    in proportion; if a teacher would get fewer than ``min_teacher_train`` training rows, the number of
    teachers shrinks instead. A student needs ``queries + threshold + validation`` rows of the student
    pool (all students together when ``disjoint_students``); if the pool is smaller, the three shrink in
    proportion.
    """
    notes = []
    per_teacher = config.teacher_train + config.teacher_threshold
    changes: dict[str, Any] = {}
    if config.n_teachers * per_teacher > n_teacher_pool:
        factor = n_teacher_pool / (config.n_teachers * per_teacher)
        train = int(config.teacher_train * factor)
        threshold = int(config.teacher_threshold * factor)
        n_teachers = config.n_teachers
        if train < min_teacher_train:
            train = min(config.teacher_train, min_teacher_train)
            threshold = int(config.teacher_threshold * train / config.teacher_train)
            n_teachers = max(1, n_teacher_pool // (train + threshold))
        changes.update(n_teachers=n_teachers, teacher_train=train, teacher_threshold=threshold)
        notes.append(
            f"teachers: {n_teachers} x ({train} train + {threshold} threshold) rows "
            f"(paper: {config.n_teachers} x ({config.teacher_train} + {config.teacher_threshold}); "
            f"{n_teacher_pool:,} rows available)"
        )
    sharing = config.n_students if config.disjoint_students else 1
    available = n_student_pool // sharing
    if config.rows_per_student > available:
        factor = available / config.rows_per_student
        changes.update(
            student_queries=max(1, int(config.student_queries * factor)),
            student_threshold=int(config.student_threshold * factor),
            student_validation=max(1, int(config.student_validation * factor)),
        )
        notes.append(
            f"students: {changes['student_queries']} queries + {changes['student_threshold']} threshold + "
            f"{changes['student_validation']} validation rows (paper: {config.student_queries} + "
            f"{config.student_threshold} + {config.student_validation}; pool {n_student_pool:,}"
            + (f" shared by {sharing} disjoint students" if sharing > 1 else "")
            + ")"
        )
    return dataclasses.replace(config, **changes), notes
