import numpy as np
import pytest
import scipy.sparse as sp
import torch

from pate_study.learning.features import (
    check_ecg_beats,
    l1_normalize,
    log_mel_librosa,
    log_mel_torch,
    tokenize_url,
    url_tfidf,
)

URLS = [
    "http://a.com/login.php?user=sfish",
    "/index.php?q=<script>javascript:alert(1)</script>",
    "/images/logo.png",
    "/login",
    "/cgi-bin/test.cgi?x=1&y=2",
]


def test_tokenizer_rule():
    assert tokenize_url("/Login.PHP?user=sfish") == ["/", "login", ".", "php", "?", "user", "=", "sfish"]


def test_url_tfidf_l1_rows_and_vocab_choice():
    X, vec = url_tfidf(URLS, max_features=12)
    assert sp.issparse(X) and X.dtype == np.float32 and X.shape == (5, 12)
    np.testing.assert_allclose(np.asarray(X.sum(1)).ravel(), 1.0, rtol=1e-5)
    assert {"?", "php", "login"} <= set(vec.vocabulary)
    mask = np.array([False, False, True, True, True])
    X2, vec2 = url_tfidf(URLS, fit_on=mask, max_features=50)
    assert "sfish" not in vec2.vocabulary and X2.shape[0] == 5
    Xp, _ = url_tfidf(URLS, max_features=12, idf="printed")
    np.testing.assert_allclose(np.asarray(Xp.sum(1)).ravel(), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="fit_on"):
        url_tfidf(URLS, fit_on=[True])


@pytest.mark.slow
def test_log_mel_shape_and_torch_matches_librosa():
    rng = np.random.default_rng(0)
    sr = 44_100
    t = np.arange(int(0.5 * sr)) / sr
    y = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.normal(size=t.size)).astype(np.float32)
    ref = log_mel_librosa(y)
    assert ref.shape == (int(0.5 * sr) // 441 + 1, 64)
    ours = log_mel_torch(np.stack([y, y * 0.5]), device="cpu", dtype=torch.float64).numpy()
    assert ours.shape == (2, *ref.shape)
    np.testing.assert_allclose(ours[0], ref, atol=1e-3)
    np.testing.assert_allclose(ours[1], log_mel_librosa(y * 0.5), atol=1e-3)
    ours32 = log_mel_torch(y, device="cpu").numpy()[0]
    np.testing.assert_allclose(ours32, ref, atol=1e-3)


def test_ten_second_clip_is_1001_by_64():
    y = np.zeros(441_000, dtype=np.float32)
    assert log_mel_torch(y, device="cpu").shape == (1, 1001, 64)


def test_l1_normalize_dense_sparse_torch():
    X = np.array([[1.0, -3.0], [0.0, 0.0]])
    np.testing.assert_allclose(l1_normalize(X), [[0.25, -0.75], [0.0, 0.0]])
    np.testing.assert_allclose(l1_normalize(sp.csr_matrix(X)).toarray(), [[0.25, -0.75], [0.0, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(l1_normalize(torch.tensor(X)).numpy(), [[0.25, -0.75], [0.0, 0.0]])


def test_ecg_beats_validated():
    assert check_ecg_beats(np.zeros((2, 187))).dtype == np.float32
    with pytest.raises(ValueError, match="187"):
        check_ecg_beats(np.zeros((2, 100)))
