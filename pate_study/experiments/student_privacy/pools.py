"""Data pools of the two case studies: unit-l1 features split into the teachers' pool and the students' pool."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pate_study.data import ecg, web
from pate_study.learning.features import l1_normalize, url_tfidf

logger = logging.getLogger(__name__)

#: The mirror's ECG sample: one stratified draw of 100 beats per class from each MIT-BIH file, fixed in the mirror
#: (data_recipes/ecg_heartbeat.py), so no run of ours varies it.
ECG_SAMPLE = "data sample (the mirror's stratified 500 + 500 beats: one fixed draw of MIT-BIH)"
#: The web pools: CSIC 2010's distinct URLs (or rows) split at random between the teachers' and the students' pools
#: (:func:`student_pool_mask`, seeded by the run's seed), one split per run.
POOL_SPLIT = "pool split (the requests split at random between the teachers' and the students' pools)"
#: A synthetic stand-in is itself one random draw (seeded by the run's seed).
SYNTHETIC_DRAW = "synthetic data draw"


def data_draws(source: Any, sample: str = "") -> tuple[str, ...]:
    """The random draw behind a loaded dataset that a run cannot vary: the synthetic stand-in's draw; ``sample`` (its
    name) when the real data are a sample of the files (``source.scale`` other than "full", e.g. the mirror's ECG
    sample); nothing for the full real files (``source``: a :class:`pate_study.data.DataSource`)."""
    if source.kind == "synthetic":
        return (SYNTHETIC_DRAW,)
    return (sample,) if sample and source.scale != "full" else ()


@dataclass(frozen=True)
class Pools:
    """Unit-l1 features split into the teachers' pool and the students' pool (with labels)."""

    X_teacher: Any
    y_teacher: np.ndarray
    X_student: Any
    y_student: np.ndarray
    n_features: int
    source: Any  # pate_study.data.DataSource
    description: str  # how the pools were made
    split: str = "file"  # how the pools were separated: "file" (ECG), "url" or "row" (web, see web_pools)
    teacher_urls: np.ndarray | None = None  # URL id per teacher-pool row (web; identical requests share one)
    student_urls: np.ndarray | None = None  # URL id per student-pool row (web)
    #: the random draws behind the pools themselves that no replicate of a run varies (every student and every
    #: teacher ensemble of the run reads the same pools): named as not replicated on every interval
    unreplicated: tuple[str, ...] = ()

    @property
    def student_groups(self) -> np.ndarray | None:
        """The groups a student's rows are drawn by
        (:func:`~pate_study.experiments.student_privacy.pipeline.student_rows`):
        the URL ids when the pools are split by URL, else None (row-wise draws, as a row split implies)."""
        return self.student_urls if self.split == "url" else None


def ecg_pools(data: str, *, seed: int) -> Pools:
    """ECG beats, l1-normalised in float64: teachers get ``mitbih_train``, students ``mitbih_test``
    (the sources do not say which file fed which role; this split keeps teachers and students disjoint)."""
    beats = ecg.load(data, seed=seed)
    return Pools(
        l1_normalize(beats.X_train.astype(np.float64)),
        beats.y_train,
        l1_normalize(beats.X_test.astype(np.float64)),
        beats.y_test,
        beats.X_train.shape[1],
        beats.source,
        f"teachers: train file ({len(beats.y_train):,} beats); students: test file ({len(beats.y_test):,} beats)",
        unreplicated=data_draws(beats.source, ECG_SAMPLE),
    )


WEB_SPLITS = ("url", "row")


def check_split(split: str) -> None:
    """A clear error for an unknown ``split`` of :func:`web_pools`."""
    if split not in WEB_SPLITS:
        raise ValueError(
            f"split={split!r}: expected 'url' (no URL in both pools) or 'row' (rows split at random, "
            "copies of a URL may be in both pools)"
        )


def student_pool_mask(url_codes: np.ndarray, student_pool_size: int, split: str, seed: int) -> np.ndarray:
    """Which rows form the students' pool (True) rather than the teachers' (seeded).

    ``split="url"``: the first distinct URLs of a random order that reach ``student_pool_size`` rows, with all
    their copies, so no URL is on both sides. ``split="row"``: as many rows as the URL split takes (so both
    splits have pools of the same sizes), drawn at random row by row, so copies of a URL land on both sides.
    """
    check_split(split)
    rows_per_url = np.bincount(url_codes)
    url_order = np.random.default_rng([seed, 4]).permutation(len(rows_per_url))
    n_student_urls = int(np.searchsorted(np.cumsum(rows_per_url[url_order]), student_pool_size)) + 1
    by_url = np.isin(url_codes, url_order[:n_student_urls])
    if split == "url":
        return by_url
    by_row = np.zeros(len(url_codes), bool)
    by_row[np.random.default_rng([seed, 8]).permutation(len(url_codes))[: int(by_url.sum())]] = True
    return by_row


def web_pools(data: str, *, seed: int, student_pool_size: int, vocabulary: str = "all", split: str = "url") -> Pools:
    """Web requests as TF-IDF over the 500 most frequent URL tokens, each row l1-normalised.

    Many requests repeat (CSIC 2010 has 18,216 distinct URLs in 97,065 rows), so by default (``split="url"``)
    the split is by distinct URL: a URL and all its copies go either to the teachers or to the students
    (seeded), and within the student pool the URL is kept as a group, so a student's validation rows never
    repeat its query rows (:func:`~pate_study.experiments.student_privacy.pipeline.student_rows`).
    ``split="row"`` splits rows at random into pools of the same sizes and lets students draw their rows
    row-wise too: copies of one request can be a teacher's training row, a student's query and a student's
    validation row (what a split that ignores repeats does; kept to measure what repeats are worth).
    ``vocabulary="all"`` fits the vocabulary on every row, as the sources did (it lets private teacher data
    shape the features); ``"students"`` fits it on the student pool only.
    """
    check_split(split)
    requests = web.load(data, seed=seed)
    frame = requests.frame
    if not 0 < student_pool_size < len(frame):
        raise ValueError(f"student_pool_size={student_pool_size}: expected 0 < size < {len(frame)} rows")
    if vocabulary not in ("all", "students"):
        raise ValueError(f"vocabulary={vocabulary!r}: expected 'all' (as the sources) or 'students'")
    url_codes, distinct = pd.factorize(frame["url"])
    student_mask = student_pool_mask(url_codes, student_pool_size, split, seed)
    X, _ = url_tfidf(frame["url"].tolist(), fit_on=None if vocabulary == "all" else student_mask)
    X = X.astype(np.float64)
    empty = np.asarray(abs(X).sum(axis=1)).ravel() == 0
    if empty.any():  # no vocabulary token: not a unit-l1 vector, so curator B cannot privatise it
        logger.warning("dropping %d requests without any of the %d vocabulary tokens", int(empty.sum()), X.shape[1])
    y = frame["label"].to_numpy().astype(np.int64)
    shuffle = np.random.default_rng([seed, 6]).permutation(len(frame))  # row order carries no information
    teacher_rows = shuffle[~student_mask[shuffle] & ~empty[shuffle]]
    student_rows = shuffle[student_mask[shuffle] & ~empty[shuffle]]
    how = (
        "split by distinct URL ({:,} distinct URLs; no URL on both sides)"
        if split == "url"
        else "split row by row ({:,} distinct URLs, copies of one on both sides; students draw rows, not URLs)"
    )
    return Pools(
        X[teacher_rows],
        y[teacher_rows],
        X[student_rows],
        y[student_rows],
        X.shape[1],
        requests.source,
        f"{len(teacher_rows):,} teacher rows and {len(student_rows):,} student-pool rows "
        f"{how.format(len(distinct))}, vocabulary fitted on "
        f"{'all rows' if vocabulary == 'all' else 'the student pool'}, {int(empty.sum())} rows without "
        "vocabulary tokens dropped",
        split=split,
        teacher_urls=url_codes[teacher_rows],
        student_urls=url_codes[student_rows],
        unreplicated=(*data_draws(requests.source), POOL_SPLIT),
    )
