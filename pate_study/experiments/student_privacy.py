"""PATE with a locally privatised student (MAKE 2021 §3.2 and §4; Visca 2021 §4.2; Sosa 2021 §4.2.1).

The pipeline both case studies share (ECG heartbeats, web requests):

1. split the data into a teacher pool and a student pool, and the teacher pool into disjoint
   per-teacher partitions (train, and for binary tasks an 800-sample threshold split);
2. train all teachers at once (:func:`pate_study.ensemble.cached_ensemble`, cached on disk);
3. for every student noise level (ρ of Lap(1/ρ), or a Laplace scale b as in Sosa) and every one of
   the ``n_students`` students: draw the student's queries, threshold and validation rows from the
   student pool; trusted curator B privatises the queries (:func:`pate_study.privacy.mechanisms.local_laplace`,
   (2ρ, 0)-DP on unit-l1 vectors); the teachers vote on the privatised queries; LNMax
   (γ, Papernot 2017 Eq. 1 / MAKE Eq. 5) labels them; the data-dependent ε is computed from the teachers'
   vote counts on the privatised queries (before LNMax's noise, as the sources did) with three accountants (the sources' moments accountant on λ = 1..8, the same on
   continuous λ, and the 2018 RDP analysis with the improved conversion);
4. train the students of one noise level at once (they are independent MLPs, so the vectorised
   ensemble trainer serves them too) on their LNMax labels, and evaluate them on their own clean
   validation rows against a majority-class baseline and against a *label control*: the same students
   trained on their labels shuffled (so the labels carry no information about the features) with the
   same threshold rows. What a student scores above its control is what PATE's labels taught it.

Choices where the sources are silent (each is a field of :class:`StudyConfig`):

* the student trains on its *clean* features with the returned labels (``student_features="clean"``;
  Sosa 2021 §4.2.1 says so; the MAKE paper does not say), ``"privatized"`` is the alternative;
* a binary student's decision threshold (Youden's J) is chosen on its threshold rows with their
  *true* labels (the sources' "labelled validation dataset"); these rows are not teacher queries, which
  is what reproduces the published ε*_ind (T = 1,000 for web, 900 for ECG);
* the models see ``feature_scale · x`` (default in the notebooks: the dimension d, so that a unit-l1
  vector's mean coordinate is 1 instead of 1/d); the local mechanism acts on the unit-l1 vector and the
  scaling after it is post-processing, so the guarantees are unchanged;
* rows of the student pool are drawn without replacement within a student and independently across
  students (the sources drew "a different random sample" for each student);
* when the data cannot hold the requested sizes (:func:`fit_sizes`), per-teacher sizes shrink first
  (the number of teachers drives the privacy analysis), then the number of teachers, then the student
  sizes; every change is reported in :attr:`StudyResult.scale_notes`.
"""
from __future__ import annotations

import dataclasses
import logging
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm.auto import tqdm

from ..ensemble import (EnsembleConfig, Partitions, cached_ensemble, make_partitions, query_ensemble,
                        train_ensemble)
from ..metrics import binary_report, multiclass_report
from ..privacy.accounting import OrderAtGridEdgeWarning
from ..privacy.aggregators import lnmax
from ..privacy.mechanisms import local_laplace, local_laplace_epsilon, local_laplace_scale
from ..privacy.moments import moments_closed_form, moments_epsilon
from ..privacy.rdp import lnmax_rdp_epsilon

logger = logging.getLogger(__name__)

NO_NOISE = "no noise"
PARAMETRISATIONS = ("rho", "scale")
STUDENT_FEATURES = ("clean", "privatized")


@dataclass(frozen=True)
class StudyConfig:
    """Sizes, noise levels and models of one student-privacy study.

    ``noise_levels``: ρ values (``parametrisation="rho"``, noise Lap(1/ρ), MAKE/Visca) or Laplace scales b
    (``"scale"``, Sosa's "student ε"); ``None`` stands for "no noise".
    """

    task: str                      # "multiclass" (ECG) or "binary" (web)
    n_classes: int
    n_teachers: int
    teacher_train: int
    teacher_threshold: int         # per-teacher Youden split (binary); 0 for multiclass
    student_queries: int           # T, the queries the teachers answer
    student_threshold: int         # the student's Youden split (binary); 0 for multiclass
    student_validation: int
    noise_levels: tuple            # floats and None
    parametrisation: str = "rho"
    n_students: int = 10
    gamma: float = 0.05
    delta: float = 1e-5
    max_integer_order: int = 8
    teacher: EnsembleConfig = field(default_factory=EnsembleConfig)
    student: EnsembleConfig = field(default_factory=EnsembleConfig)
    student_features: str = "clean"
    feature_scale: float = 1.0     # models see feature_scale · x (post-processing; see run_study)
    min_teacher_train: int = 25    # below this, fit_sizes uses fewer teachers instead of smaller partitions
    label_control: bool = True     # also train students on shuffled labels (what the labels contribute)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.parametrisation not in PARAMETRISATIONS:
            raise ValueError(f"parametrisation={self.parametrisation!r}: expected one of {PARAMETRISATIONS}")
        if self.student_features not in STUDENT_FEATURES:
            raise ValueError(f"student_features={self.student_features!r}: expected one of {STUDENT_FEATURES}")
        for name in ("n_teachers", "teacher_train", "student_queries", "student_validation", "n_students"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r}: expected a positive integer")
        if not self.noise_levels:
            raise ValueError("noise_levels: expected at least one level (a float, or None for no noise)")
        for level in self.noise_levels:
            if level is not None and not (np.isfinite(level) and level > 0):
                raise ValueError(f"noise_levels: {level!r} is not a positive number or None")

    def level_label(self, level: float | None) -> str:
        return NO_NOISE if level is None else f"{level:g}"


def fit_sizes(config: StudyConfig, n_teacher_pool: int, n_student_pool: int,
              min_teacher_train: int = 25) -> tuple[StudyConfig, list[str]]:
    """The largest feasible sizes for the available data, and a note for every change.

    Teachers need ``n_teachers × (train + threshold)`` disjoint rows: first the per-teacher sizes shrink
    in proportion; if a teacher would get fewer than ``min_teacher_train`` training rows, the number of
    teachers shrinks instead. A student needs ``queries + threshold + validation`` rows of the student
    pool; if the pool is smaller, the three shrink in proportion.
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
        notes.append(f"teachers: {n_teachers} x ({train} train + {threshold} threshold) rows "
                     f"(paper: {config.n_teachers} x ({config.teacher_train} + {config.teacher_threshold}); "
                     f"{n_teacher_pool:,} rows available)")
    per_student = config.student_queries + config.student_threshold + config.student_validation
    if per_student > n_student_pool:
        factor = n_student_pool / per_student
        changes.update(student_queries=max(1, int(config.student_queries * factor)),
                       student_threshold=int(config.student_threshold * factor),
                       student_validation=max(1, int(config.student_validation * factor)))
        notes.append(f"students: {changes['student_queries']} queries + {changes['student_threshold']} threshold + "
                     f"{changes['student_validation']} validation rows (paper: {config.student_queries} + "
                     f"{config.student_threshold} + {config.student_validation}; pool {n_student_pool:,})")
    return dataclasses.replace(config, **changes), notes


def teacher_partitions(n_pool: int, config: StudyConfig) -> Partitions:
    """Disjoint per-teacher train / threshold index sets into the teacher pool (seeded by ``config.seed``)."""
    need = config.n_teachers * (config.teacher_train + config.teacher_threshold)
    if need > n_pool:
        raise ValueError(f"teacher pool has {n_pool} rows, the partitions need {need}; call fit_sizes first")
    return make_partitions(n_pool, config.n_teachers, config.teacher_train, threshold_size=config.teacher_threshold,
                           seed=[config.seed, 1])


def _dense(X: Any) -> np.ndarray:
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


def _noise(level: float, parametrisation: str) -> dict:
    """The local mechanism's keyword for a noise level: rho (MAKE's Lap(1/rho)) or scale (Sosa's b)."""
    return {"rho": level} if parametrisation == "rho" else {"scale": level}


def privatize(X_unit_l1: Any, level: float | None, parametrisation: str, rng: np.random.Generator) -> np.ndarray:
    """Trusted curator B: x + Lap(b)^d with b = 1/ρ or b = level (MAKE §3.2); a copy when ``level`` is None."""
    X = _dense(X_unit_l1)
    if level is None:
        return X.copy()
    return local_laplace(X, rng=rng, **_noise(level, parametrisation))


def noise_signal_table(levels: Sequence[float | None], parametrisation: str, n_features: int) -> pd.DataFrame:
    """Per noise level: the Laplace scale b, noise standard deviation √2·b, the mean coordinate 1/d of a
    non-negative unit-l1 vector, their ratio, and the local ε = 2/b (MAKE §3.2)."""
    rows = []
    for level in levels:
        if level is None:
            rows.append({"level": NO_NOISE, "scale_b": 0.0, "noise_std": 0.0, "mean_coordinate": 1 / n_features,
                         "noise_std_over_mean_coordinate": 0.0, "student_epsilon": float("inf")})
            continue
        kw = _noise(level, parametrisation)
        b = local_laplace_scale(**kw)
        rows.append({"level": f"{level:g}", "scale_b": b, "noise_std": np.sqrt(2) * b, "mean_coordinate": 1 / n_features,
                     "noise_std_over_mean_coordinate": np.sqrt(2) * b * n_features,
                     "student_epsilon": local_laplace_epsilon(**kw)})
    return pd.DataFrame(rows)


def data_dependent_epsilons(counts: np.ndarray, *, gamma: float, delta: float, max_integer_order: int = 8) -> dict:
    """ε of one student's queries from the teachers' vote counts (before aggregator noise), three ways:

    * ``eps_moments_int``: Papernot 2017 moments accountant, λ = 1..L (the sources' tool, Thm. 3 with the
      reference code's q < 0.5 condition);
    * ``eps_moments_cont``: the same bound (same q condition) minimised over continuous λ;
    * ``eps_rdp``: Papernot 2018 RDP analysis of LNMax (pure ε = 2γ, data-dependent), improved conversion.
    """
    with warnings.catch_warnings():  # edge optima are expected on the 1..8 grid; recorded as the order
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        integer = moments_epsilon(gamma=gamma, delta=delta, votes=counts, orders=int(max_integer_order),
                                  q_condition="reference_code")
        continuous = moments_epsilon(gamma=gamma, delta=delta, votes=counts, orders="continuous",
                                     q_condition="reference_code")
        renyi = lnmax_rdp_epsilon(gamma=gamma, delta=delta, votes=counts, orders="paper2018", conversion="improved")
    return {"eps_moments_int": integer.epsilon, "order_moments_int": integer.order,
            "eps_moments_cont": continuous.epsilon, "order_moments_cont": continuous.order,
            "eps_rdp": renyi.epsilon, "order_rdp": renyi.order}


def data_independent_epsilons(*, n_queries: int, gamma: float, delta: float, max_integer_order: int = 8) -> dict:
    """The data-independent counterparts of :func:`data_dependent_epsilons` for T = ``n_queries``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        integer = moments_epsilon(gamma=gamma, delta=delta, n_queries=n_queries, orders=int(max_integer_order))
        renyi = lnmax_rdp_epsilon(gamma=gamma, delta=delta, n_queries=n_queries, orders="paper2018",
                                  conversion="improved")
    eps_cont, lam_cont = moments_closed_form(n_queries, gamma, delta)
    return {"eps_moments_int": integer.epsilon, "order_moments_int": integer.order, "eps_moments_cont": eps_cont,
            "order_moments_cont": lam_cont, "eps_rdp": renyi.epsilon, "order_rdp": renyi.order,
            "basic_composition": 2 * gamma * n_queries}


@dataclass
class StudyResult:
    """Tidy outputs of :func:`run_study`."""

    config: StudyConfig
    students: pd.DataFrame                 # one row per (noise level, student)
    top_vote_shares: pd.DataFrame          # per level: share of teachers voting for the plurality, per query
    data_independent: dict
    teachers: dict                         # ensemble facts (size, rows per teacher, epochs)
    scale_notes: list = field(default_factory=list)


def train_teachers(X_pool: Any, y_pool: np.ndarray, config: StudyConfig, *, progress: bool = True):
    """Train (or load from the cache) the teacher ensemble on disjoint partitions of the teacher pool."""
    partitions = teacher_partitions(X_pool.shape[0], config)
    X_model = X_pool * config.feature_scale if config.feature_scale != 1 else X_pool
    ensemble, key = cached_ensemble(X_model, y_pool, partitions, config.teacher, seed=config.seed, progress=progress)
    logger.info("teachers: %d x %d rows, cache key %s", partitions.n_teachers, partitions.train.shape[1], key[:12])
    return ensemble, partitions


def _student_rows(n_pool: int, config: StudyConfig, rng: np.random.Generator,
                  groups: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """A student's query, threshold and validation rows of the student pool, disjoint.

    With ``groups`` (e.g. the URL of each web request, many of which repeat), the validation rows share no
    group with the query and threshold rows, so a student is never scored on copies of what it trained on.
    """
    q, t, v = config.student_queries, config.student_threshold, config.student_validation
    if groups is None:
        idx = rng.choice(n_pool, size=q + t + v, replace=False)
        return idx[:q], idx[q:q + t], idx[q + t:]
    seen = rng.choice(n_pool, size=q + t, replace=False)
    unseen = np.flatnonzero(~np.isin(groups, groups[seen]))
    if len(unseen) < v:
        raise ValueError(f"student_validation={v}: only {len(unseen)} pool rows share no group with the student's "
                         f"{q + t} query and threshold rows; use a larger student pool")
    return seen[:q], seen[q:], rng.choice(unseen, size=v, replace=False)


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
    out.update({f"baseline_{k}": rep["baseline"][k] for k in ("accuracy", "balanced_accuracy", "macro_f1")})
    return out


def _student_predictions(students, X_val: np.ndarray, n_students: int, n_val: int, task: str) -> np.ndarray:
    """Each student's predictions on its own validation rows (``X_val`` stacks the students' blocks)."""
    own = students.own_probabilities(X_val, np.arange(n_students * n_val).reshape(n_students, n_val))
    if task == "binary":
        return (own >= students.thresholds[:, None]).astype(int)
    return own.argmax(-1)


def run_level(ensemble, X_student_pool: Any, y_student_pool: np.ndarray, config: StudyConfig, level_index: int,
              level: float | None, *, groups: np.ndarray | None = None,
              progress: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    """All students of one noise level: queries, votes, LNMax labels, accounting, student training, metrics.

    Returns one row per student and the plurality vote shares of all their queries.
    """
    S, q, t, v = config.n_students, config.student_queries, config.student_threshold, config.student_validation
    rows, shares, train_X, train_y, thr_X, thr_y, val_X, val_y = [], [], [], [], [], [], [], []
    for k in range(S):
        rng = np.random.default_rng([config.seed, 2, level_index, k])
        q_idx, t_idx, v_idx = _student_rows(X_student_pool.shape[0], config, rng, groups)
        X_clean = _dense(X_student_pool[q_idx])
        X_noisy = privatize(X_clean, level, config.parametrisation, rng)
        votes = query_ensemble(ensemble, X_noisy * config.feature_scale).counts
        y_q = y_student_pool[q_idx]
        aggregation = lnmax(votes, config.gamma, rng)
        top = votes.max(1)
        shares.append(top / votes.sum(1))
        row = {"level": config.level_label(level), "student": k,
               "student_epsilon": float("inf") if level is None else local_laplace_epsilon(
                   **_noise(level, config.parametrisation)),
               "ensemble_accuracy": float(np.mean(votes.argmax(1) == y_q)),
               "pate_accuracy": float(np.mean(aggregation.labels == y_q)),
               "label_agreement_with_plurality": float(np.mean(aggregation.labels == votes.argmax(1))),
               "mean_top_vote_share": float(np.mean(shares[-1]))}
        row.update(data_dependent_epsilons(votes, gamma=config.gamma, delta=config.delta,
                                           max_integer_order=config.max_integer_order))
        rows.append(row)
        train_X.append(X_clean if config.student_features == "clean" else X_noisy)
        train_y.append(aggregation.labels)
        thr_X.append(_dense(X_student_pool[t_idx]))
        thr_y.append(y_student_pool[t_idx])
        val_X.append(_dense(X_student_pool[v_idx]))
        val_y.append(y_student_pool[v_idx])
    X_train = (np.concatenate(train_X + thr_X) * config.feature_scale).astype(np.float32)
    X_val = (np.concatenate(val_X) * config.feature_scale).astype(np.float32)
    partitions = Partitions(train=np.arange(S * q).reshape(S, q), threshold=S * q + np.arange(S * t).reshape(S, t))
    student_seed = int(np.random.SeedSequence([config.seed, 3, level_index]).generate_state(1)[0])
    runs = [("student", train_y)]
    if config.label_control:  # same students, PATE's labels shuffled within each student: no feature-label link
        shuffle = np.random.default_rng([config.seed, 5, level_index])
        runs.append(("control", [shuffle.permutation(labels) for labels in train_y]))
    for prefix, labels in runs:
        students = train_ensemble(X_train, np.concatenate(list(labels) + thr_y), partitions, config.student,
                                  seed=student_seed, progress=progress)
        predictions = _student_predictions(students, X_val, S, v, config.task)
        for k in range(S):
            report = _report(config.task, val_y[k], predictions[k], config.n_classes)
            rows[k].update({f"{prefix}_{m}": x for m, x in report.items() if prefix == "student" or
                            not m.startswith("baseline_")})
    return pd.DataFrame(rows), np.concatenate(shares)


def run_study(X_teacher_pool: Any, y_teacher_pool: np.ndarray, X_student_pool: Any, y_student_pool: np.ndarray,
              config: StudyConfig, *, student_groups: np.ndarray | None = None, progress: bool = True) -> StudyResult:
    """Run the whole study (teachers once, then every noise level). Inputs must be unit-l1 rows.

    ``student_groups``: optional group of each student-pool row (see :func:`_student_rows`).
    """
    config, notes = fit_sizes(config, X_teacher_pool.shape[0], X_student_pool.shape[0], config.min_teacher_train)
    for note in notes:
        logger.warning("reduced scale: %s", note)
    ensemble, partitions = train_teachers(X_teacher_pool, y_teacher_pool, config, progress=progress)
    frames, shares = [], []
    for i, level in enumerate(tqdm(config.noise_levels, desc="noise levels", disable=not progress)):
        frame, level_shares = run_level(ensemble, X_student_pool, y_student_pool, config, i, level,
                                        groups=student_groups)
        frames.append(frame)
        shares.append(pd.DataFrame({"level": config.level_label(level), "top_vote_share": level_shares}))
    teachers = {"n_teachers": partitions.n_teachers, "train_rows": int(partitions.train.shape[1]),
                "threshold_rows": int(partitions.threshold.shape[1]),
                "median_epochs": float(np.median(ensemble.epochs))}
    independent = data_independent_epsilons(n_queries=config.student_queries, gamma=config.gamma,
                                            delta=config.delta, max_integer_order=config.max_integer_order)
    return StudyResult(config, pd.concat(frames, ignore_index=True), pd.concat(shares, ignore_index=True),
                       independent, teachers, notes)


# ------------------------------------------------------------------------------------------ data pools
@dataclass(frozen=True)
class Pools:
    """Unit-l1 features split into the teachers' pool and the students' pool (with labels)."""

    X_teacher: Any
    y_teacher: np.ndarray
    X_student: Any
    y_student: np.ndarray
    n_features: int
    source: Any          # pate_study.data.DataSource
    description: str     # how the pools were made
    student_groups: np.ndarray | None = None  # group id per student-pool row (identical requests share one)


def ecg_pools(data: str, *, seed: int) -> Pools:
    """ECG beats, l1-normalised in float64: teachers get ``mitbih_train``, students ``mitbih_test``
    (the sources do not say which file fed which role; this split keeps teachers and students disjoint)."""
    from ..data import ecg
    from ..features import l1_normalize

    beats = ecg.load(data, seed=seed)
    return Pools(l1_normalize(beats.X_train.astype(np.float64)), beats.y_train,
                 l1_normalize(beats.X_test.astype(np.float64)), beats.y_test, beats.X_train.shape[1], beats.source,
                 f"teachers: train file ({len(beats.y_train):,} beats); students: test file ({len(beats.y_test):,} beats)")


def web_pools(data: str, *, seed: int, student_pool_size: int, vocabulary: str = "all") -> Pools:
    """Web requests as TF-IDF over the 500 most frequent URL tokens, each row l1-normalised.

    Many requests repeat (CSIC 2010 has 18,216 distinct URLs in 97,065 rows), so the split is by distinct
    URL: a URL and all its copies go either to the teachers or to the students (seeded), the students' pool
    being the first URLs of a random order that reach ``student_pool_size`` rows. Within the student pool the
    URL is kept as a group, so a student's validation rows never repeat its query rows (:func:`_student_rows`).
    ``vocabulary="all"`` fits the vocabulary on every row, as the sources did (it lets private teacher data
    shape the features); ``"students"`` fits it on the student pool only.
    """
    from ..data import web
    from ..features import url_tfidf

    requests = web.load(data, seed=seed)
    frame = requests.frame
    if not 0 < student_pool_size < len(frame):
        raise ValueError(f"student_pool_size={student_pool_size}: expected 0 < size < {len(frame)} rows")
    if vocabulary not in ("all", "students"):
        raise ValueError(f"vocabulary={vocabulary!r}: expected 'all' (as the sources) or 'students'")
    url_codes, distinct = pd.factorize(frame["url"])
    rows_per_url = np.bincount(url_codes)
    url_order = np.random.default_rng([seed, 4]).permutation(len(distinct))
    n_student_urls = int(np.searchsorted(np.cumsum(rows_per_url[url_order]), student_pool_size)) + 1
    student_mask = np.isin(url_codes, url_order[:n_student_urls])
    X, _ = url_tfidf(frame["url"].tolist(), fit_on=None if vocabulary == "all" else student_mask)
    X = X.astype(np.float64)
    empty = np.asarray(abs(X).sum(axis=1)).ravel() == 0
    if empty.any():  # no vocabulary token: not a unit-l1 vector, so curator B cannot privatise it
        logger.warning("dropping %d requests without any of the %d vocabulary tokens", int(empty.sum()), X.shape[1])
    y = frame["label"].to_numpy().astype(np.int64)
    shuffle = np.random.default_rng([seed, 6]).permutation(len(frame))  # row order carries no information
    teacher_rows = shuffle[~student_mask[shuffle] & ~empty[shuffle]]
    student_rows = shuffle[student_mask[shuffle] & ~empty[shuffle]]
    return Pools(X[teacher_rows], y[teacher_rows], X[student_rows], y[student_rows], X.shape[1], requests.source,
                 f"{len(teacher_rows):,} teacher rows and {len(student_rows):,} student-pool rows split by distinct URL "
                 f"({len(distinct):,} distinct URLs; no URL on both sides), vocabulary fitted on "
                 f"{'all rows' if vocabulary == 'all' else 'the student pool'}, {int(empty.sum())} rows without "
                 "vocabulary tokens dropped", student_groups=url_codes[student_rows])


def median_iqr(students: pd.DataFrame, columns: Sequence[str], levels_order: Sequence[str]) -> pd.DataFrame:
    """Median and interquartile range of each column per noise level (the statistics of MAKE Table 1)."""
    grouped = students.groupby("level")
    parts = {}
    for column in columns:
        parts[f"{column}_median"] = grouped[column].median()
        parts[f"{column}_iqr"] = grouped[column].quantile(0.75) - grouped[column].quantile(0.25)
    return pd.DataFrame(parts).reindex(list(levels_order)).rename_axis("level").reset_index()


def scale_description(result: StudyResult, paper_teachers: str, paper_queries: int) -> str:
    """One line for the provenance stamp: the scale actually run, next to the paper's."""
    t = result.teachers
    rows = f"{t['train_rows']}" + (f" + {t['threshold_rows']}" if t["threshold_rows"] else "")
    return (f"{t['n_teachers']} teachers x {rows} rows (paper {paper_teachers}), "
            f"T = {result.config.student_queries} queries (paper {paper_queries}), {result.config.n_students} students per level")


def _level_key(level: Any) -> str:
    """One spelling per noise level ("1.0", 1 and "1" -> "1"; "no noise" stays), so paper and ours merge."""
    return NO_NOISE if str(level) == NO_NOISE else f"{float(level):g}"


def epsilon_table_vs_paper(students: pd.DataFrame, levels_order: Sequence[str], paper_rows: Sequence[dict],
                           paper_key: str = "rho") -> pd.DataFrame:
    """MAKE Table 1 layout: per level, the paper's median/IQR of ε_dep beside ours with the sources'
    accountant (moments, λ = 1..8) and, for comparison, continuous λ and the RDP analysis."""
    ours = median_iqr(students, ["eps_moments_int", "eps_moments_cont", "eps_rdp"], levels_order)
    paper = pd.DataFrame(list(paper_rows)).rename(columns={paper_key: "level", "eps_dep_median": "paper_median",
                                                          "eps_dep_iqr": "paper_iqr"})
    paper["level"] = paper["level"].map(_level_key)
    table = paper.merge(ours, on="level", how="outer")
    table["level"] = pd.Categorical(table["level"], categories=list(levels_order), ordered=True)
    return table.sort_values("level").reset_index(drop=True)


def per_level_medians(result: StudyResult, columns: Sequence[str]) -> pd.DataFrame:
    """Median of ``columns`` per noise level, in the order of ``result.config.noise_levels``."""
    order = [result.config.level_label(level) for level in result.config.noise_levels]
    return result.students.groupby("level")[list(columns)].median().reindex(order).rename_axis("level").reset_index()


def sosa_table_4_2(results: dict, paper_rows: Sequence[dict]) -> pd.DataFrame:
    """Sosa 2021 Table 4.2 layout: per ensemble size and student noise scale, the paper's teacher ε, TPR, TNR
    beside our medians over the students (teacher ε with the moments accountant, λ = 1..8, as in Table 1)."""
    ours = []
    for n_teachers, result in results.items():
        frame = per_level_medians(result, ["eps_moments_int", "eps_rdp", "student_tpr", "student_tnr"])
        frame.insert(0, "n_teachers", int(n_teachers))
        ours.append(frame)
    ours = pd.concat(ours, ignore_index=True).rename(columns={
        "level": "student_noise_scale", "eps_moments_int": "ours_teacher_epsilon", "eps_rdp": "ours_teacher_epsilon_rdp",
        "student_tpr": "ours_tpr", "student_tnr": "ours_tnr"})
    paper = pd.DataFrame(list(paper_rows)).rename(columns={
        "student_epsilon": "student_noise_scale", "teacher_epsilon": "paper_teacher_epsilon", "tpr": "paper_tpr",
        "tnr": "paper_tnr"})
    paper["student_noise_scale"] = paper["student_noise_scale"].astype(str)
    ours["student_noise_scale"] = ours["student_noise_scale"].map(_level_key)
    paper["student_noise_scale"] = paper["student_noise_scale"].map(_level_key)
    table = paper.merge(ours, on=["n_teachers", "student_noise_scale"], how="outer")
    noise = table["student_noise_scale"].map(lambda s: np.inf if s == NO_NOISE else float(s))
    return table.assign(_noise=noise).sort_values(["n_teachers", "_noise"]).drop(columns="_noise").reset_index(drop=True)


def sosa_table_4_1(results: dict, paper_rows: Sequence[dict]) -> pd.DataFrame:
    """Sosa 2021 Table 4.1: 100 and 250 teachers, no student noise: paper's TPR, TNR, ε beside our medians."""
    rows = []
    for paper in paper_rows:
        result = results.get(int(paper["n_teachers"]))
        ours = {}
        if result is not None and NO_NOISE in set(result.students["level"]):
            clean = result.students.query("level == @NO_NOISE")
            ours = {"ours_tpr_pct": 100 * clean["student_tpr"].median(), "ours_tnr_pct": 100 * clean["student_tnr"].median(),
                    "ours_epsilon": clean["eps_moments_int"].median(), "ours_epsilon_rdp": clean["eps_rdp"].median(),
                    "ours_student_queries": result.config.student_queries}
        rows.append({"n_teachers": paper["n_teachers"], "paper_tpr_pct": paper["tpr_pct"],
                     "paper_tnr_pct": paper["tnr_pct"], "paper_epsilon": paper["epsilon"], **ours})
    return pd.DataFrame(rows)
