"""Notebook 05's settings as one contract (:class:`MultilabelConfig`), whose defaults are the paper profile.

The teachers are notebook 04's: the ``teacher_*`` keys, ``curve_clips``, ``device``, ``backend`` and
``teachers_per_task`` equal 04's in every profile where 05 reads 04's ensembles (paper, gpu), so 05 reads their
votes from the cache 04 filled (``tests/experiments/test_audioset_configs.py`` checks it). The grouped settings
(``accounting``, ``release_sweeps``, ``student_runs``, ``multiwinner``, ``frontier``, ``audit``) are nested contracts;
an override of one key of a group keeps the group's other values. Muschiol 2021 §5.2-5.4 gives the thesis's grids;
where it is silent the values are ours and said so beside the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pate_study.core.contract import COUNT, OPEN_UNIT, POSITIVE, Range, StudyContract
from pate_study.experiments.audioset.teacher_config import TeacherReplicates

#: a noise standard deviation of the release (σ_e, σ_c)
SIGMA = Annotated[float, POSITIVE]
#: a threshold or confidence level of the release, in [0, 1]
LEVEL = Annotated[float, Range(0, 1)]


@dataclass(frozen=True)
class AccountingSettings(StudyContract):
    """Thesis §5.3: ε over the first ``n_account`` queries at ``delta``."""

    n_account: Annotated[int, COUNT] = 1000
    delta: Annotated[float, OPEN_UNIT] = 1e-8


@dataclass(frozen=True)
class ReleaseSweeps(StudyContract):
    """Figs 5.13-5.15 (σ_e, σ_c), 5.16 / A.12 / A.13 (the histograms' σ_e, in that order); ``draws`` release-noise
    draws per point (stacked on the cached votes), ``boot`` bootstrap resamples of the scored pool queries."""

    sigmas_e: tuple[SIGMA, ...] = (0.1, 0.2, 0.3, 0.5)
    sigmas_c: tuple[SIGMA, ...] = (0.3, 0.6)
    histogram_sigmas: tuple[SIGMA, SIGMA, SIGMA] = (0.4, 0.2, 0.6)
    draws: Annotated[int, COUNT] = 10
    boot: Annotated[int, COUNT] = 200


@dataclass(frozen=True)
class StudentRuns(StudyContract):
    """Table 5.4 (query counts, thresholds th_e, confidences th_c: None = no check) over student seeds; Figs
    5.17-5.19: the σ_e (σ_c 0.6) and the σ_c (σ_e 0.3) swept; ``min_pool``: the query pool holds at least Table
    5.4's largest count."""

    sizes: tuple[Annotated[int, COUNT], ...] = (2000, 5000)
    thresholds: tuple[LEVEL | Literal["adaptive"], ...] = (0.2, 0.4, "adaptive")
    confidences: tuple[LEVEL | None, ...] = (None, 0.4, 0.6)
    seeds: tuple[Annotated[int, Range(0)], ...] = (0, 1, 2)
    sigmas: tuple[tuple[SIGMA, ...], tuple[SIGMA, ...]] = ((0.1, 0.2, 0.3), (0.3, 0.9))
    min_pool: Annotated[int, COUNT] = 5000


@dataclass(frozen=True)
class MultiwinnerSettings(StudyContract):
    """Binary, τ and powerset PATE: their σ and τ."""

    sigmas: tuple[SIGMA, ...] = (0.1, 0.2, 0.3, 0.5)
    tau: Annotated[float, POSITIVE] = 2.0


@dataclass(frozen=True)
class FrontierSettings(StudyContract):
    """The frontier beyond the thesis: GNThreshold's σ_e (th_e 0.4), top-k settings (k, σ_e, th_e), multi-winner
    σ_e, and the study's target: ``target_protocol``, the pre-registered protocol its confirming run reads (its
    commit is recorded)."""

    sigmas: tuple[SIGMA, ...] = (0.1, 0.2, 0.3)
    topk_settings: tuple[tuple[Annotated[int, COUNT], SIGMA, LEVEL], ...] = (
        (2, 0.1, 0.3),
        (3, 0.1, 0.3),
        (2, 0.2, 0.4),
        (3, 0.2, 0.4),
    )
    multiwinner_sigmas: tuple[SIGMA, ...] = (0.1, 0.2)
    target_protocol: str = "configs/05_audioset_multilabel/target_protocol.yaml"


@dataclass(frozen=True)
class AuditSettings(StudyContract):
    """The GNThreshold audit: its σ_e values (0.3 as in Table 5.4) and Monte Carlo samples."""

    sigmas: tuple[SIGMA, ...] = (0.3, 0.5)
    samples: Annotated[int, COUNT] = 200_000


@dataclass(frozen=True)
class MultilabelConfig(StudyContract):
    """Notebook 05's settings (Muschiol 2021 §4.2, §5.2-5.4 and the frontier beyond it); the defaults are the paper
    profile. ``seed`` is the notebook's seed, handed in by the notebook."""

    backend: Literal["local", "ray"] = "local"  # ray: the README's "When one machine is not enough"
    teachers_per_task: Annotated[int, COUNT] | None = None  # Ray: teachers per task (None: one task per ensemble)
    teacher_counts: tuple[Annotated[int, COUNT], ...] = (1, 10, 20, 50)
    # notebook 04's teacher recipe (audioset.teachers.TeacherSpec): with 04's values, 05 reads 04's votes
    teacher_hidden: tuple[Annotated[int, COUNT], ...] = (128, 128)
    teacher_dropout: Annotated[float, Range(0, 1, high_inclusive=False)] = 0.5
    teacher_lr: Annotated[float, POSITIVE] = 0.003
    teacher_batch_size: Annotated[int, COUNT] = 64
    teacher_steps: Annotated[int, COUNT] = 3000  # the best checkpoint by validation mAP (bal_train split) is kept
    teacher_eval_every: Annotated[int, COUNT] = 100
    teacher_patience: Annotated[int, COUNT] | None = 5  # evaluations without a better validation mAP
    teacher_sampler: Literal["balanced", "random"] = "balanced"  # balanced: thesis §4.4.2
    teacher_mixup_alpha: Annotated[float, Range(0)] = 1.0  # not stated in the thesis; PANNs' value
    curve_clips: Annotated[int, COUNT] = 800  # clips scored during training (curves; never used for selection)
    teacher_replicates: TeacherReplicates = TeacherReplicates()  # notebook 04's replicate ensembles
    device: Literal["cpu", "cuda"] | None = None  # None: CUDA when available, else the CPU (in the votes' key)
    torch_threads: Annotated[int, COUNT] = 1  # tiny MLPs: one thread is faster than two on a shared 2-core machine
    run_small: bool = True  # Tables A.1-A.3 on the 15-class "small" subset
    accounting: AccountingSettings = AccountingSettings()
    release_sweeps: ReleaseSweeps = ReleaseSweeps()
    student_runs: StudentRuns = StudentRuns()
    multiwinner: MultiwinnerSettings = MultiwinnerSettings()
    frontier: FrontierSettings = FrontierSettings()
    audit: AuditSettings = AuditSettings()
    seed: Annotated[int, Range(0)] = 0
