"""Web pools split by URL or by row, the duplicate rates, the split comparison, and same seed -> same tables."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from pate_study.experiments import student_privacy as study
from pate_study.experiments.student_privacy import splits, web
from pate_study.experiments.student_privacy.pools import student_pool_mask

POOL = 1000  # synthetic stand-in: 5,000 requests, benign ones without parameters repeat many times


def _pools(split, seed=0):
    return study.web_pools("synthetic", seed=seed, student_pool_size=POOL, split=split)


def tiny_config(n_features, max_epochs=2, **changes):
    """The smallest web study that runs every step (shared with tests/experiments/test_student_privacy.py)."""
    settings = web.WebStudyConfig(
        n_teachers=4,
        teacher_samples=60,
        teacher_threshold_samples=30,
        student_queries=60,
        student_threshold=30,
        student_validation=100,
        n_students=2,
        n_teacher_seeds=1,
        hidden=(8,),
        max_epochs=max_epochs,
        batch_size=32,
        learning_rate=0.003,
    )
    config = web.study_config(settings, n_features=n_features, levels=[None])
    return dataclasses.replace(config, **changes)


def test_url_split_keeps_every_url_on_one_side_row_split_does_not():
    by_url, by_row = _pools("url"), _pools("row")
    assert not set(by_url.teacher_urls) & set(by_url.student_urls)
    assert len(set(by_row.teacher_urls) & set(by_row.student_urls)) > 0  # copies of a request on both sides
    # same pool sizes, so only the split differs
    assert (len(by_row.y_student), len(by_row.y_teacher)) == (len(by_url.y_student), len(by_url.y_teacher))
    assert len(by_url.y_student) >= POOL
    # the URL split draws students' rows by URL group; the row split row by row
    assert by_url.student_groups is by_url.student_urls and by_row.student_groups is None
    assert "split by distinct URL" in by_url.description and "split row by row" in by_row.description
    # the row split of the students' pool is a uniform sample: both URL ids map back to the same requests
    assert by_row.X_student.shape[1] == by_url.X_student.shape[1]


@pytest.mark.parametrize("split", ["url", "row"])
def test_same_seed_same_pools_other_seed_other_pools(split):
    a, b, c = _pools(split), _pools(split), _pools(split, seed=1)
    assert (a.X_student != b.X_student).nnz == 0 and np.array_equal(a.y_student, b.y_student)
    assert np.array_equal(a.student_urls, b.student_urls) and np.array_equal(a.teacher_urls, b.teacher_urls)
    assert not np.array_equal(a.student_urls[:50], c.student_urls[:50])


def test_bad_split_names_the_parameter():
    with pytest.raises(ValueError, match=r"split='rows'.*'url'.*'row'"):
        study.web_pools("synthetic", seed=0, student_pool_size=POOL, split="rows")
    with pytest.raises(ValueError, match="split="):
        student_pool_mask(np.arange(10), 5, "URL", 0)


def test_student_pool_mask_row_split_takes_as_many_rows_as_the_url_split():
    codes = np.repeat(np.arange(20), np.arange(1, 21))  # URL k has k + 1 copies: 210 rows
    by_url, by_row = (student_pool_mask(codes, 50, s, seed=3) for s in ("url", "row"))
    assert by_url.sum() == by_row.sum() >= 50
    assert not set(codes[by_url]) & set(codes[~by_url])
    assert set(codes[by_row]) & set(codes[~by_row])


def test_feature_keys_equal_exactly_for_equal_rows():
    X = sp.csr_matrix(np.array([[0, 0.5, 0.5], [0, 0.5, 0.5], [0.5, 0, 0.5], [0, 0.5, 0.5 + 1e-9]]))
    keys = splits.feature_keys(X)
    assert keys[0] == keys[1] and keys[0] != keys[2] and keys[0] != keys[3]
    assert list(splits.feature_keys(X.toarray())) == list(keys)  # dense and sparse agree


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("PATE_STUDY_CACHE", str(tmp_path_factory.mktemp("cache")))
    n_features = _pools("url").n_features
    arms = splits.split_comparison(
        "synthetic", seed=0, student_pool_size=POOL, vocabulary="all", config=tiny_config(n_features)
    )
    yield arms, n_features
    patch.undo()


@pytest.mark.slow
def test_split_comparison_duplicates_and_table(comparison):
    arms, _ = comparison
    assert list(arms) == ["row", "url"]
    url, row = arms["url"].students, arms["row"].students
    for column in ("validation_url_in_teachers", "validation_url_in_own", "query_url_in_teachers"):
        assert (url[column] == 0).all(), column
        assert row[column].between(0, 1).all()
    assert (row["validation_url_in_teachers"] > 0).all()  # repeated benign requests reach both sides
    # a URL duplicate is a feature duplicate (same URL, same TF-IDF row)
    assert (row["validation_features_in_teachers"] >= row["validation_url_in_teachers"]).all()
    # the URL split's validation rows come from URLs the student did not train on; the row split's need not
    for rows in arms["url"].result.student_rows["no noise"]:
        assert len(rows.validation) == 100
    table = splits.split_table(arms, paper={"tpr": 0.842, "tnr": 0.935})
    assert list(table.columns[:2]) == ["row split", "URL split"]
    assert table.loc["student balanced accuracy", "paper (no noise)"] == pytest.approx((0.842 + 0.935) / 2)
    assert table.loc["student balanced accuracy", "earlier claim, row split (withdrawn)"] == 0.91
    assert table.loc["student TPR", "URL split"] == pytest.approx(url["student_tpr"].median())
    verdict = splits.split_verdict(table, data_reason="other data")
    assert verdict.verdict == "not comparable" and "own earlier measurement" in verdict.reason
    text = splits.split_findings(table)
    assert f"{table.loc['student TNR', 'row split']:.3f} (row)" in text
    with pytest.raises(ValueError, match="level="):
        splits.duplicate_shares(
            study.web_pools("synthetic", seed=0, student_pool_size=POOL), arms["url"].result, level="0.1"
        )


def test_sosa_no_noise_rates():
    rows = [
        {"n_teachers": 100, "tpr_pct": 81.2, "tnr_pct": 94.5},
        {"n_teachers": 250, "tpr_pct": 84.2, "tnr_pct": 93.5},
    ]
    assert splits.sosa_no_noise_rates(rows, 250) == pytest.approx({"tpr": 0.842, "tnr": 0.935})
    with pytest.raises(ValueError, match="n_teachers=7"):
        splits.sosa_no_noise_rates(rows, 7)


@pytest.mark.slow
def test_web_tables_deterministic_with_sparse_teachers_retrained(comparison, tmp_path, monkeypatch):
    """The web path (sparse-input teachers, two noise levels): same seed, teachers retrained from an empty cache,
    identical student tables, votes included (a flipped vote would move ensemble_accuracy or the ε columns)."""
    arms, n_features = comparison
    monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path))
    again = splits.split_comparison(
        "synthetic", seed=0, student_pool_size=POOL, vocabulary="all", config=tiny_config(n_features), splits=("url",)
    )
    assert list(tmp_path.glob("ensemble-*.pt")), "the teachers should have been trained again"
    pd.testing.assert_frame_equal(arms["url"].students, again["url"].students)
    pools = _pools("url")
    config = tiny_config(n_features, noise_levels=(0.5, None))
    runs = []
    for cache in ("a", "b"):  # each run trains its own teachers
        monkeypatch.setenv("PATE_STUDY_CACHE", str(tmp_path / cache))
        runs.append(study.run_study_on(pools, config, progress=False))
    first, second = runs
    pd.testing.assert_frame_equal(first.students, second.students)
    pd.testing.assert_frame_equal(first.top_vote_shares, second.top_vote_shares)
