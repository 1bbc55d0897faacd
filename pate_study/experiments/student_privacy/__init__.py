"""PATE with a locally privatised student (MAKE 2021 §3.2 and §4; Visca 2021 §4.2; Sosa 2021 §4.2.1).

The pipeline both case studies share (ECG heartbeats, web requests), module by module:

* :mod:`.config`: :class:`StudentPrivacyConfig` (sizes, noise levels, models) and :func:`fit_sizes` (the largest
  sizes the data hold, with a note for every change);
* :mod:`.pools`: the data: unit-l1 rows split into a teacher pool and a student pool;
* :mod:`.pipeline`: teachers on disjoint partitions (cached), ``n_teacher_seeds`` ensembles each with its own
  seed and partition (student ``k`` labelled by ensemble ``k mod n_teacher_seeds``); for every noise level (ρ of
  Lap(1/ρ), or Sosa's Laplace scale b) and student: its rows, curator B's local Laplace noise ((2ρ, 0)-DP on unit-l1
  vectors), the teachers' votes, LNMax labels (γ, Papernot 2017 Eq. 1 / MAKE Eq. 5), the data-dependent ε
  from the vote counts (before LNMax's noise, as the sources did); then the students of one level trained at
  once and scored on their own validation rows against a majority-class baseline and a *label control* (the
  same students trained on their labels shuffled, so what a student scores above it is what PATE's labels
  taught it). One record per student (:class:`StudentDraw`);
* :mod:`.accounting`: the privacy numbers, all from :mod:`pate_study.privacy`;
* :mod:`.paper_tables`: the papers' table layouts, ours beside theirs, with a verdict per row;
* :mod:`.ecg`, :mod:`.web`: what each study's figures describe, its verdicts and its findings;
* :mod:`.figures`: the figures;
* :mod:`.splits`: repeated web requests: the no-noise study on a row-wise and on the URL-disjoint split, side
  by side with the class balance and duplicate rates that could explain a gap.
* :mod:`.ecg_sections`, :mod:`.web_sections`: notebooks 01 and 02, one call per cell (each section saves its
  figures and tables, records its scalars and returns what the cell shows); :mod:`.notebook_sections`: the
  steps both notebooks take alike (signal table, accounting invariants, verdicts under both sources' ids).

Choices where the sources are silent (each is a field of :class:`StudentPrivacyConfig` or a parameter):

* the student trains on its *clean* features with the returned labels (``student_features="clean"``; Sosa
  2021 §4.2.1 says so; the MAKE paper does not say), ``"privatized"`` is the alternative;
* a binary student's decision threshold (Youden's J) is chosen on its threshold rows with their *true*
  labels (the sources' "labelled validation dataset"); these rows are not teacher queries, which is what
  reproduces the published ε*_ind (T = 1,000 for web, 900 for ECG). Whatever a noisy student scores above
  chance without beating its label control comes from these rows, a consequence of this choice;
* the models see ``feature_scale · x`` (the dimension d in the notebooks, so that a unit-l1 vector's mean
  coordinate is 1 instead of 1/d); the scaling after curator B is post-processing;
* each student draws its rows independently (the sources' "a different random sample"), or, with
  ``disjoint_students``, from its own block of the pool; with groups (repeated web URLs) its validation rows
  come from URLs it never queried, with the pool's class balance (:func:`pipeline.student_rows`);
* the accountant uses the reference code's q < 0.5 condition (Theorem 3's own q < 1/(e^{2γ}+1) is computed
  beside it, as ``eps_moments_int_theorem_q``);
* when the data cannot hold the requested sizes (:func:`fit_sizes`), per-teacher sizes shrink first (the
  number of teachers drives the privacy analysis), then the number of teachers, then the student sizes;
  every change is reported in :attr:`StudyResult.scale_notes`.
"""

from pate_study.experiments.student_privacy.accounting import (
    consensus_summary,
    data_dependent_epsilons,
    data_independent_epsilons,
    epsilon_gap_explanations,
    noise_signal_table,
    sosa_setting_hypotheses,
)
from pate_study.experiments.student_privacy.config import (
    NO_NOISE,
    PARAMETRISATIONS,
    STUDENT_FEATURES,
    StudentPrivacyConfig,
    fit_sizes,
    level_key,
)
from pate_study.experiments.student_privacy.paper_tables import (
    epsilon_table_vs_paper,
    median_iqr,
    per_level_medians,
    scale_description,
    sosa_table_4_1,
    sosa_table_4_2,
)
from pate_study.experiments.student_privacy.pipeline import (
    LevelResult,
    StudentDraw,
    StudentRows,
    StudyResult,
    disjoint_student_rows,
    privatize,
    run_level,
    run_study,
    run_study_on,
    student_rows,
    teacher_of_student,
    teacher_partitions,
    train_teacher_ensembles,
    train_teachers,
)
from pate_study.experiments.student_privacy.pools import WEB_SPLITS, Pools, ecg_pools, web_pools

__all__ = [
    "LevelResult",
    "NO_NOISE",
    "PARAMETRISATIONS",
    "STUDENT_FEATURES",
    "WEB_SPLITS",
    "Pools",
    "StudentDraw",
    "StudentRows",
    "StudentPrivacyConfig",
    "StudyResult",
    "consensus_summary",
    "data_dependent_epsilons",
    "data_independent_epsilons",
    "disjoint_student_rows",
    "ecg_pools",
    "epsilon_gap_explanations",
    "epsilon_table_vs_paper",
    "fit_sizes",
    "level_key",
    "median_iqr",
    "noise_signal_table",
    "per_level_medians",
    "privatize",
    "run_level",
    "run_study",
    "run_study_on",
    "scale_description",
    "sosa_setting_hypotheses",
    "sosa_table_4_1",
    "sosa_table_4_2",
    "student_rows",
    "teacher_of_student",
    "teacher_partitions",
    "train_teacher_ensembles",
    "train_teachers",
    "web_pools",
]
