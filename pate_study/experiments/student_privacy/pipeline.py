"""The pipeline both case studies share: teachers, privatised queries, LNMax labels, accounting, students.

For every noise level and student: draw the student's query, threshold and validation rows
(:func:`student_rows`); curator B privatises the queries (:func:`privatize`); the teachers vote; LNMax labels
the queries; the data-dependent ε is computed from the vote counts. Then all students of the level are trained
at once (independent MLPs through the vectorised ensemble trainer) and scored on their own validation rows,
next to a label control (the same students trained on their labels shuffled).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm.auto import tqdm

from pate_study.experiments.student_privacy.accounting import (
    consensus_summary,
    data_dependent_epsilons,
    data_independent_epsilons,
)
from pate_study.experiments.student_privacy.config import StudentPrivacyConfig, fit_sizes, noise_keyword
from pate_study.experiments.student_privacy.pools import Pools
from pate_study.learning.ensemble import query_ensemble, train_ensemble
from pate_study.learning.ensemble_cache import cached_ensemble
from pate_study.learning.metrics import binary_report, multiclass_report
from pate_study.learning.partitions import Partitions, make_partitions
from pate_study.privacy.aggregators import lnmax
from pate_study.privacy.mechanisms import local_laplace, local_laplace_epsilon

logger = logging.getLogger(__name__)


def teacher_partitions(n_pool: int, config: StudentPrivacyConfig, replicate: int = 0) -> Partitions:
    """Disjoint per-teacher train / threshold index sets into the teacher pool for teacher ensemble ``replicate``
    (seeded by ``config.seed`` and the replicate; replicate 0 keeps the single-ensemble design's partition)."""
    need = config.n_teachers * (config.teacher_train + config.teacher_threshold)
    if need > n_pool:
        raise ValueError(f"teacher pool has {n_pool} rows, the partitions need {need}; call fit_sizes first")
    seed = [config.seed, 1] if replicate == 0 else [config.seed, 1, replicate]
    return make_partitions(
        n_pool, config.n_teachers, config.teacher_train, threshold_size=config.teacher_threshold, seed=seed
    )


def teacher_training_seed(config: StudentPrivacyConfig, replicate: int = 0) -> int:
    """The training seed (initialisation, shuffling) of teacher ensemble ``replicate``: ``config.seed`` for
    replicate 0 (the single-ensemble design's), one derived from it and the replicate otherwise."""
    if replicate == 0:
        return int(config.seed)
    return int(np.random.SeedSequence([config.seed, 6, replicate]).generate_state(1)[0])


def teacher_of_student(student: int, config: StudentPrivacyConfig) -> int:
    """The teacher ensemble that labels student ``student`` at every level: ``student mod n_teacher_seeds``."""
    return int(student) % int(config.n_teacher_seeds)


def dense(X: Any) -> np.ndarray:
    """A float64 dense copy of ``X`` (dense or sparse)."""
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


def privatize(X_unit_l1: Any, level: float | None, parametrisation: str, rng: np.random.Generator) -> np.ndarray:
    """Trusted curator B: x + Lap(b)^d with b = 1/ρ or b = level (MAKE §3.2); a copy when ``level`` is None."""
    X = dense(X_unit_l1)
    if level is None:
        return X.copy()
    return local_laplace(X, rng=rng, **noise_keyword(level, parametrisation))


def _class_counts(n: int, shares: np.ndarray) -> np.ndarray:
    """``n`` split over classes in proportion to ``shares`` (largest remainder, so the counts sum to ``n``)."""
    exact = n * shares / shares.sum()
    counts = np.floor(exact).astype(int)
    counts[np.argsort(counts - exact)[: n - counts.sum()]] += 1
    return counts


def stratified_choice(
    candidates: np.ndarray, labels: np.ndarray, n: int, shares: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """``n`` of ``candidates`` without replacement, class c making up ``shares[c]`` of them (``labels`` index
    classes of the whole pool)."""
    picked = []
    for c, k in enumerate(_class_counts(n, np.asarray(shares, dtype=float))):
        of_class = candidates[labels[candidates] == c]
        if len(of_class) < k:
            raise ValueError(
                f"student_validation={n}: needs {k} rows of class {c} sharing no group with the "
                f"student's queries, only {len(of_class)} exist; use a larger student_pool_size"
            )
        picked.append(rng.choice(of_class, size=k, replace=False))
    return rng.permutation(np.concatenate(picked))


@dataclass(frozen=True)
class StudentRows:
    """Indices into the student pool: the queries the teachers answer, the threshold and validation rows."""

    queries: np.ndarray
    threshold: np.ndarray
    validation: np.ndarray


#: Smallest share of the pool's groups on a student's query side (see :func:`student_rows`).
MIN_QUERY_SIDE_SHARE = 1 / 3
#: Group splits tried before :func:`student_rows` gives up (each is a fresh random split).
MAX_SPLIT_ATTEMPTS = 50


def _fits(candidates: np.ndarray, labels: np.ndarray, counts: np.ndarray) -> bool:
    return all((labels[candidates] == c).sum() >= k for c, k in enumerate(counts))


def student_rows(
    y_pool: np.ndarray, config: StudentPrivacyConfig, rng: np.random.Generator, groups: np.ndarray | None = None
) -> StudentRows:
    """A student's query, threshold and validation rows of the student pool, disjoint, drawn independently of
    every other student.

    Without ``groups``: a uniform sample without replacement. With ``groups`` (the URL of each web request;
    in CSIC 2010 a handful of URLs hold thousands of rows each): the pool's distinct groups are split at random
    between the student's query side (a share max((q + t)/(q + t + v), 1/3) of them) and its validation side;
    queries + threshold rows and validation rows are each drawn from their side *with the pool's class
    balance*. So the validation rows share no group with what the student trained on, can include the most
    repeated groups (a row-wise query draw would always claim those), have the population's class balance,
    and differ from student to student. A split whose sides cannot hold the draws is redrawn (up to
    ``MAX_SPLIT_ATTEMPTS`` times).
    """
    q, t, v = config.student_queries, config.student_threshold, config.student_validation
    n_pool = len(y_pool)
    if groups is None:
        idx = rng.choice(n_pool, size=q + t + v, replace=False)
        return StudentRows(idx[:q], idx[q : q + t], idx[q + t :])
    shares = np.bincount(y_pool) / n_pool
    need_seen, need_unseen = _class_counts(q + t, shares), _class_counts(v, shares)
    distinct = np.unique(groups)
    query_share = max((q + t) / (q + t + v), MIN_QUERY_SIDE_SHARE)
    for _ in range(MAX_SPLIT_ATTEMPTS):
        query_side = np.isin(groups, distinct[rng.random(len(distinct)) < query_share])
        seen_side, unseen_side = np.flatnonzero(query_side), np.flatnonzero(~query_side)
        if _fits(seen_side, y_pool, need_seen) and _fits(unseen_side, y_pool, need_unseen):
            seen = stratified_choice(seen_side, y_pool, q + t, shares, rng)
            return StudentRows(seen[:q], seen[q:], stratified_choice(unseen_side, y_pool, v, shares, rng))
    raise ValueError(
        f"student_queries + student_threshold = {q + t} and student_validation = {v}: no split of the "
        f"pool's {len(distinct):,} groups into a query side and a validation side held both with the "
        f"pool's class balance in {MAX_SPLIT_ATTEMPTS} tries; use a larger student_pool_size or fewer rows"
    )


def disjoint_student_rows(n_pool: int, config: StudentPrivacyConfig, rng: np.random.Generator) -> list[StudentRows]:
    """``n_students`` students with no row in common (a random partition of the pool into equal blocks)."""
    q, t, per = config.student_queries, config.student_threshold, config.rows_per_student
    if config.n_students * per > n_pool:
        raise ValueError(
            f"disjoint_students: {config.n_students} x {per} rows > pool of {n_pool}; call fit_sizes first"
        )
    order = rng.permutation(n_pool)
    blocks = order[: config.n_students * per].reshape(config.n_students, per)
    return [StudentRows(b[:q], b[q : q + t], b[q + t :]) for b in blocks]


def _report(task: str, y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> dict:
    """Flat metrics of the student and of the majority-class baseline (the validation rows' own majority
    class: the strongest constant classifier, so the comparison is not flattering to the student)."""
    if task == "binary":
        rep = binary_report(y_true, y_pred)
        keys = ("accuracy", "balanced_accuracy", "tpr", "tnr", "f1")
        out = {k: rep[k] for k in keys}
        out.update({f"baseline_{k}": rep["baseline"][k] for k in keys})
        return out
    rep = multiclass_report(y_true, y_pred, n_classes=n_classes)
    out = {k: rep[k] for k in ("accuracy", "balanced_accuracy", "macro_f1")}
    out.update({f"recall_class{c}": r for c, r in rep["per_class_recall"].items()})
    out.update({f"predicted_share_class{c}": float(np.mean(y_pred == c)) for c in range(n_classes)})
    out.update({f"baseline_{k}": rep["baseline"][k] for k in ("accuracy", "balanced_accuracy", "macro_f1")})
    return out


def prediction_shares_and_recalls(y_true: np.ndarray, predictions: dict[str, np.ndarray], n_classes: int) -> dict:
    """Per predictor and class c: the share of predictions equal to c (``{name}_predicted_share_class{c}``) and the
    recall of class c (``{name}_recall_class{c}``, NaN when c is absent): enough to see a collapse onto one class and
    to reweight accuracy to other class priors (Σ_c prior_c · recall_c)."""
    out = {}
    for name, y_pred in predictions.items():
        for c in range(n_classes):
            here = y_true == c
            out[f"{name}_predicted_share_class{c}"] = float(np.mean(y_pred == c))
            out[f"{name}_recall_class{c}"] = float(np.mean(y_pred[here] == c)) if here.any() else float("nan")
    return out


@dataclass
class StudentDraw:
    """Everything one student of one noise level needs and produced: its rows, its training set (features
    it trains on, PATE's labels, threshold rows with true labels), its validation set and its table row."""

    row: dict
    train_X: np.ndarray
    train_y: np.ndarray
    threshold_X: np.ndarray
    threshold_y: np.ndarray
    validation_X: np.ndarray
    validation_y: np.ndarray
    validation_index: np.ndarray
    top_vote_shares: np.ndarray


def query_teachers(
    ensemble,
    X_student_pool: Any,
    y_student_pool: np.ndarray,
    rows: StudentRows,
    config: StudentPrivacyConfig,
    level: float | None,
    student: int,
    rng: np.random.Generator,
) -> StudentDraw:
    """One student: privatise its queries, collect the teachers' votes, label them with LNMax and account."""
    X_clean = dense(X_student_pool[rows.queries])
    X_noisy = privatize(X_clean, level, config.parametrisation, rng)
    votes = query_ensemble(ensemble, X_noisy * config.feature_scale).counts
    y_q = y_student_pool[rows.queries]
    labels = lnmax(votes, config.gamma, rng).labels
    y_val = y_student_pool[rows.validation]
    row = {
        "level": config.level_label(level),
        "student": student,
        "student_epsilon": float("inf")
        if level is None
        else local_laplace_epsilon(**noise_keyword(level, config.parametrisation)),
        "ensemble_accuracy": float(np.mean(votes.argmax(1) == y_q)),
        "pate_accuracy": float(np.mean(labels == y_q)),
        "label_agreement_with_plurality": float(np.mean(labels == votes.argmax(1))),
        "n_queries": len(rows.queries),
        "n_validation": len(rows.validation),
        "query_majority_share": float(np.bincount(y_q).max() / len(y_q)),
        "validation_majority_share": float(np.bincount(y_val).max() / len(y_val)),
    }
    if config.task == "binary":
        row.update(query_positive_share=float(y_q.mean()), validation_positive_share=float(y_val.mean()))
    else:
        row.update(prediction_shares_and_recalls(y_q, {"ensemble": votes.argmax(1), "pate": labels}, config.n_classes))
    row.update(consensus_summary(votes, config.gamma))
    row.update(
        data_dependent_epsilons(
            votes, gamma=config.gamma, delta=config.delta, max_integer_order=config.max_integer_order
        )
    )
    return StudentDraw(
        row=row,
        train_X=X_clean if config.student_features == "clean" else X_noisy,
        train_y=labels,
        threshold_X=dense(X_student_pool[rows.threshold]),
        threshold_y=y_student_pool[rows.threshold],
        validation_X=dense(X_student_pool[rows.validation]),
        validation_y=y_val,
        validation_index=rows.validation,
        top_vote_shares=votes.max(1) / votes.sum(1),
    )


def train_and_score(
    draws: list[StudentDraw],
    config: StudentPrivacyConfig,
    seed: int,
    labels: list[np.ndarray],
    prefix: str,
    progress: bool = False,
) -> None:
    """Train one student per draw at once on ``labels`` (+ its threshold rows' true labels) and add its
    validation metrics, prefixed, to each draw's row."""
    S, q, t, v = len(draws), config.student_queries, config.student_threshold, config.student_validation
    X_train = np.concatenate([d.train_X for d in draws] + [d.threshold_X for d in draws])
    y_train = np.concatenate(list(labels) + [d.threshold_y for d in draws])
    partitions = Partitions(train=np.arange(S * q).reshape(S, q), threshold=S * q + np.arange(S * t).reshape(S, t))
    students = train_ensemble(
        (X_train * config.feature_scale).astype(np.float32),
        y_train,
        partitions,
        config.student,
        seed=seed,
        progress=progress,
    )
    X_val = (np.concatenate([d.validation_X for d in draws]) * config.feature_scale).astype(np.float32)
    own = students.own_probabilities(X_val, np.arange(S * v).reshape(S, v))
    predictions = (own >= students.thresholds[:, None]).astype(int) if config.task == "binary" else own.argmax(-1)
    for draw, predicted in zip(draws, predictions):
        report = _report(config.task, draw.validation_y, predicted, config.n_classes)
        draw.row.update(
            {f"{prefix}_{m}": x for m, x in report.items() if prefix == "student" or not m.startswith("baseline_")}
        )


def mean_pairwise_overlap(index_sets: list[np.ndarray]) -> float:
    """Mean over pairs of students of |A ∩ B| / |A| for their validation rows (0: disjoint, 1: identical)."""
    pairs = [len(np.intersect1d(a, b)) / len(a) for i, a in enumerate(index_sets) for b in index_sets[i + 1 :]]
    return float(np.mean(pairs)) if pairs else float("nan")


@dataclass(frozen=True)
class LevelResult:
    """All students of one noise level: one table row each, the plurality vote shares of all their queries, the
    mean pairwise overlap of their validation rows, and each student's rows of the student pool."""

    students: pd.DataFrame
    top_vote_shares: np.ndarray
    validation_overlap: float
    rows: list


def run_level(
    ensembles,
    X_student_pool: Any,
    y_student_pool: np.ndarray,
    config: StudentPrivacyConfig,
    level_index: int,
    level: float | None,
    *,
    groups: np.ndarray | None = None,
    progress: bool = False,
) -> LevelResult:
    """All students of one noise level: queries, votes, LNMax labels, accounting, student training, metrics.

    The levels are paired arms: student ``k`` draws the same rows (queries, threshold, validation) and is the same
    member of a stack with the same initialisation and shuffling seed at every level; only its noise draws (curator
    B's privatisation, LNMax) are drawn per level. Student ``k`` asks teacher ensemble ``k mod n_teacher_seeds``
    (``ensembles``: one per teacher seed, or a single ensemble) at every level, and its row says which
    (``teacher_seed``). So a level's effect is read off per-student differences, the shared rows, seeds and ensemble
    cancelling, nested in the ensembles (:func:`pate_study.reporting.uncertainty.clustered_paired_difference`)."""
    S = config.n_students
    ensembles = list(ensembles) if isinstance(ensembles, (list, tuple)) else [ensembles]
    if len(ensembles) != config.n_teacher_seeds:
        raise ValueError(
            f"ensembles: expected n_teacher_seeds={config.n_teacher_seeds} ensembles, got {len(ensembles)}"
        )
    if config.disjoint_students:
        rows = disjoint_student_rows(len(y_student_pool), config, np.random.default_rng([config.seed, 7]))
    draws, drawn_rows = [], []
    for k in range(S):
        mine = (
            rows[k]
            if config.disjoint_students
            else student_rows(y_student_pool, config, np.random.default_rng([config.seed, 2, k]), groups)
        )
        drawn_rows.append(mine)
        noise = np.random.default_rng([config.seed, 4, level_index, k])
        teacher = teacher_of_student(k, config)
        draws.append(query_teachers(ensembles[teacher], X_student_pool, y_student_pool, mine, config, level, k, noise))
        draws[-1].row["teacher_seed"] = teacher
    student_seed = int(np.random.SeedSequence([config.seed, 3]).generate_state(1)[0])
    train_and_score(draws, config, student_seed, [d.train_y for d in draws], "student", progress)
    if config.label_control:  # same students, PATE's labels shuffled within each student: no feature-label link
        shuffle = np.random.default_rng([config.seed, 5, level_index])
        train_and_score(
            draws, config, student_seed, [shuffle.permutation(d.train_y) for d in draws], "control", progress
        )
    return LevelResult(
        pd.DataFrame([d.row for d in draws]),
        np.concatenate([d.top_vote_shares for d in draws]),
        mean_pairwise_overlap([d.validation_index for d in draws]),
        drawn_rows,
    )


@dataclass
class StudyResult:
    """Tidy outputs of :func:`run_study`."""

    config: StudentPrivacyConfig
    students: pd.DataFrame  # one row per (noise level, student)
    top_vote_shares: pd.DataFrame  # per level: share of teachers voting for the plurality, per query
    data_independent: dict
    teachers: dict  # ensemble facts (size, rows per teacher, epochs, number of teacher seeds)
    scale_notes: list = field(default_factory=list)
    validation_overlap: dict = field(default_factory=dict)  # level -> mean pairwise overlap of validation rows
    student_rows: dict = field(default_factory=dict)  # level -> each student's StudentRows (student-pool indices)
    n_student_pool: int = 0  # rows of the student pool the students draw from
    unreplicated: tuple = ()  # random sources behind every number that no replicate varies (the pools' own draw)

    @property
    def level_order(self) -> list[str]:
        return self.config.level_order


def train_teachers(
    X_pool: Any, y_pool: np.ndarray, config: StudentPrivacyConfig, *, progress: bool = True, replicate: int = 0
):
    """Train (or load from the cache) teacher ensemble ``replicate`` on its disjoint partitions of the teacher pool,
    with its own training seed (:func:`teacher_partitions`, :func:`teacher_training_seed`)."""
    partitions = teacher_partitions(X_pool.shape[0], config, replicate)
    X_model = X_pool * config.feature_scale if config.feature_scale != 1 else X_pool
    seed = teacher_training_seed(config, replicate)
    ensemble, key = cached_ensemble(X_model, y_pool, partitions, config.teacher, seed=seed, progress=progress)
    logger.info(
        "teachers %d: %d x %d rows, cache key %s", replicate, partitions.n_teachers, partitions.train.shape[1], key[:12]
    )
    return ensemble, partitions


def train_teacher_ensembles(
    X_pool: Any, y_pool: np.ndarray, config: StudentPrivacyConfig, *, progress: bool = True
) -> list:
    """``[(ensemble, partitions)]``, one per teacher seed (``config.n_teacher_seeds``; :func:`train_teachers`)."""
    return [
        train_teachers(X_pool, y_pool, config, progress=progress, replicate=r) for r in range(config.n_teacher_seeds)
    ]


def run_study(
    X_teacher_pool: Any,
    y_teacher_pool: np.ndarray,
    X_student_pool: Any,
    y_student_pool: np.ndarray,
    config: StudentPrivacyConfig,
    *,
    student_groups: np.ndarray | None = None,
    unreplicated: tuple = (),
    progress: bool = True,
) -> StudyResult:
    """Run the whole study (the teacher ensembles once, one per teacher seed, then every noise level). Inputs must
    be unit-l1 rows.

    ``student_groups``: optional group of each student-pool row (see :func:`student_rows`). ``unreplicated``: the
    random sources behind the pools themselves that no replicate of this run varies (:attr:`.pools.Pools.unreplicated`),
    kept on the result so that every interval names them.
    """
    config, notes = fit_sizes(config, X_teacher_pool.shape[0], X_student_pool.shape[0], config.min_teacher_train)
    for note in notes:
        logger.warning("reduced scale: %s", note)
    trained = train_teacher_ensembles(X_teacher_pool, y_teacher_pool, config, progress=progress)
    ensembles = [ensemble for ensemble, _ in trained]
    levels = {
        config.level_label(level): run_level(
            ensembles, X_student_pool, y_student_pool, config, i, level, groups=student_groups
        )
        for i, level in enumerate(tqdm(config.noise_levels, desc="noise levels", disable=not progress))
    }
    partitions = trained[0][1]
    teachers = {
        "n_teachers": partitions.n_teachers,
        "train_rows": int(partitions.train.shape[1]),
        "threshold_rows": int(partitions.threshold.shape[1]),
        "median_epochs": float(np.median(np.concatenate([np.asarray(e.epochs) for e in ensembles]))),
        "n_teacher_seeds": len(ensembles),
    }
    independent = data_independent_epsilons(
        n_queries=config.student_queries,
        gamma=config.gamma,
        delta=config.delta,
        max_integer_order=config.max_integer_order,
    )
    shares = [pd.DataFrame({"level": label, "top_vote_share": r.top_vote_shares}) for label, r in levels.items()]
    return StudyResult(
        config,
        pd.concat([r.students for r in levels.values()], ignore_index=True),
        pd.concat(shares, ignore_index=True),
        independent,
        teachers,
        notes,
        {label: r.validation_overlap for label, r in levels.items()},
        {label: r.rows for label, r in levels.items()},
        int(X_student_pool.shape[0]),
        tuple(unreplicated),
    )


def run_study_on(pools: Pools, config: StudentPrivacyConfig, *, progress: bool = True) -> StudyResult:
    """:func:`run_study` on one :class:`~.pools.Pools`: its teachers' and students' rows, the groups a student's rows
    are drawn by (:attr:`.pools.Pools.student_groups`) and the draws behind the pools that no replicate varies
    (:attr:`.pools.Pools.unreplicated`)."""
    return run_study(
        pools.X_teacher,
        pools.y_teacher,
        pools.X_student,
        pools.y_student,
        config,
        student_groups=pools.student_groups,
        unreplicated=pools.unreplicated,
        progress=progress,
    )
