"""Features of the three case studies.

* URLs (Sosa 2021 §4.1; MAKE 2021 §4.2): unigram tokens of the URL, TF-IDF over the 500 most
  frequent tokens, each vector l1-normalised (scikit-learn ``TfidfVectorizer``).
* Audio (Muschiol 2021 §4.3.2): log-Mel spectrogram, 44.1 kHz, hop 441, n_fft 2048, 64 Mel bands,
  dB; a 10 s clip gives 1001 x 64. librosa on the CPU (:func:`log_mel_librosa`) and a batched
  torch implementation for the GPU (:func:`log_mel_torch`) that matches it.
* ECG beats (Kachuee et al. 2018 as used by MAKE 2021): 187 samples at 125 Hz, used as given;
  :func:`l1_normalize` for the student's local Laplace mechanism on unit-l1 vectors (MAKE 2021 §4.2.2).

URL tokenisation rule (the sources show tokens such as "javascript", "php", "sfish", "?" and
"login" but do not state the rule): lower-case the URL, then every maximal run of ASCII letters
and digits is a token and every other non-blank character is a token of its own. So
``"/login.php?user=sfish"`` -> ``["/", "login", ".", "php", "?", "user", "=", "sfish"]``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from pate_study.core.device import choose_device

logger = logging.getLogger(__name__)

__all__ = [
    "URL_TOKEN_PATTERN",
    "tokenize_url",
    "url_tfidf",
    "UrlTfidf",
    "SAMPLE_RATE",
    "HOP_LENGTH",
    "N_FFT",
    "N_MELS",
    "log_mel_librosa",
    "log_mel_torch",
    "ECG_LENGTH",
    "ECG_RATE",
    "check_ecg_beats",
    "l1_normalize",
]

URL_TOKEN_PATTERN = re.compile(r"[a-z0-9]+|[^a-z0-9\s]")


def tokenize_url(url: str) -> list[str]:
    """Unigram tokens of ``url`` (rule in the module docstring)."""
    return URL_TOKEN_PATTERN.findall(url.lower())


class UrlTfidf:
    """TF-IDF vectoriser for URLs with the vocabulary fitted on a chosen subset.

    ``idf="sklearn"`` (default): scikit-learn's smoothed idf, ln((1 + N) / (1 + df)) + 1.
    ``idf="printed"``: Sosa (2021) Eqs. 4.2-4.3 as printed, tf = count / terms in document and
    idf = N / df (no logarithm). The l1 normalisation makes the tf denominator irrelevant.
    """

    def __init__(self, max_features: int = 500, idf: str = "sklearn") -> None:
        if idf not in ("sklearn", "printed"):
            raise ValueError(f"idf={idf!r}: expected 'sklearn' or 'printed'")
        if int(max_features) != max_features or max_features < 1:
            raise ValueError(f"max_features={max_features!r}: expected a positive integer")
        self.max_features = int(max_features)
        self.idf_kind = idf
        self._vec: TfidfVectorizer | CountVectorizer | None = None
        self._idf: np.ndarray | None = None

    def fit(self, urls: Iterable[str]) -> UrlTfidf:
        urls = _check_urls(urls, "urls")
        kw = dict(tokenizer=tokenize_url, token_pattern=None, lowercase=False, max_features=self.max_features)
        if self.idf_kind == "sklearn":
            self._vec = TfidfVectorizer(norm="l1", dtype=np.float32, **kw).fit(urls)
        else:
            self._vec = CountVectorizer(dtype=np.float32, **kw)
            counts = self._vec.fit_transform(urls)
            df = np.bincount(counts.indices, minlength=counts.shape[1])
            self._idf = (counts.shape[0] / np.maximum(df, 1)).astype(np.float32)
        return self

    @property
    def vocabulary(self) -> list[str]:
        if self._vec is None:
            raise ValueError("UrlTfidf: call fit() first")
        return list(self._vec.get_feature_names_out())

    def transform(self, urls: Iterable[str]) -> sp.csr_matrix:
        """``float32`` CSR ``[n, max_features]``; rows with no in-vocabulary token are all zero."""
        if self._vec is None:
            raise ValueError("UrlTfidf: call fit() first")
        urls = _check_urls(urls, "urls")
        X = self._vec.transform(urls)
        if self.idf_kind == "printed":
            X = sp.csr_matrix(X.multiply(self._idf[None, :]))
            X = l1_normalize(X)
        return sp.csr_matrix(X, dtype=np.float32)


def _check_urls(urls: Iterable[str], name: str) -> list[str]:
    urls = list(urls)
    if not urls or not all(isinstance(u, str) for u in urls):
        raise ValueError(f"{name}: expected a non-empty sequence of strings")
    return urls


def url_tfidf(
    urls: Sequence[str],
    fit_on: Sequence[bool] | np.ndarray | None = None,
    max_features: int = 500,
    idf: str = "sklearn",
) -> tuple[sp.csr_matrix, UrlTfidf]:
    """TF-IDF features of ``urls`` with the vocabulary and idf fitted on ``urls[fit_on]``.

    ``fit_on=None`` (the faithful default) fits on the whole dataset, as the sources did, which lets
    private (teacher) data shape the features; pass a boolean mask of teacher-only or public rows to
    fit on them instead.
    """
    urls = _check_urls(urls, "urls")
    if fit_on is None:
        fit_urls = urls
    else:
        mask = np.asarray(fit_on)
        if mask.dtype != bool or mask.shape != (len(urls),):
            raise ValueError(f"fit_on: expected a boolean mask of length {len(urls)}")
        fit_urls = [u for u, keep in zip(urls, mask) if keep]
    vec = UrlTfidf(max_features, idf).fit(fit_urls)
    return vec.transform(urls), vec


# ---------------------------------------------------------------------------- audio
SAMPLE_RATE, HOP_LENGTH, N_FFT, N_MELS = 44_100, 441, 2048, 64
_DB_DEFAULTS = dict(ref=1.0, amin=1e-10, top_db=80.0)  # librosa.power_to_db defaults


def _mel_basis(sr: int, n_fft: int, n_mels: int, fmin: float, fmax: float | None) -> np.ndarray:
    import librosa  # librosa (numba) takes seconds to import: only the log-Mel paths pay it

    return librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax)


def log_mel_librosa(
    y: np.ndarray,
    sr: int = SAMPLE_RATE,
    n_fft: int = N_FFT,
    hop_length: int = HOP_LENGTH,
    n_mels: int = N_MELS,
    fmin: float = 0.0,
    fmax: float | None = None,
    top_db: float | None = 80.0,
) -> np.ndarray:
    """Log-Mel spectrogram ``[frames, n_mels]`` in dB (Muschiol 2021 §4.3.2), librosa on the CPU.

    ``librosa.feature.melspectrogram`` (power 2, Hann window, ``center=True``, zero padding,
    Slaney Mel filters) then ``librosa.power_to_db(ref=1.0, amin=1e-10, top_db=top_db)``. fmin, fmax
    and top_db are not stated in the source; librosa's defaults are used. 10 s at 44.1 kHz -> 1001 x 64.
    """
    import librosa  # librosa (numba) takes seconds to import: only the log-Mel paths pay it

    y = np.asarray(y, dtype=np.float32)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y: expected a non-empty 1-d waveform, got shape {y.shape}")
    S = librosa.feature.melspectrogram(
        y=y,
        sr=sr,
        n_fft=n_fft,
        hop_length=hop_length,
        n_mels=n_mels,
        fmin=fmin,
        fmax=fmax,
        power=2.0,
        center=True,
        pad_mode="constant",
    )
    return librosa.power_to_db(S, ref=1.0, amin=1e-10, top_db=top_db).T


def log_mel_torch(
    y: np.ndarray | torch.Tensor,
    sr: int = SAMPLE_RATE,
    n_fft: int = N_FFT,
    hop_length: int = HOP_LENGTH,
    n_mels: int = N_MELS,
    fmin: float = 0.0,
    fmax: float | None = None,
    top_db: float | None = 80.0,
    device: str | torch.device | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Batched log-Mel (same definition as :func:`log_mel_librosa`): ``[batch, samples]``
    -> ``[batch, frames, n_mels]``.

    ``torch.stft`` with a periodic Hann window, ``center=True`` and zero padding, power 2, the
    librosa Mel matrix, ``10 log10(max(S, 1e-10))`` and per-clip ``top_db`` clipping. Use
    ``dtype=torch.float64`` for the tightest agreement; float32 differs from librosa by ~2e-5 dB
    on test signals (tested at 1e-3 dB).
    """
    dev = choose_device(device)
    x = torch.as_tensor(y).to(device=dev, dtype=dtype)
    if x.dim() == 1:
        x = x.unsqueeze(0)
    if x.dim() != 2 or x.shape[1] == 0:
        raise ValueError(f"y: expected [samples] or [batch, samples], got shape {tuple(x.shape)}")
    window = torch.hann_window(n_fft, periodic=True, dtype=dtype, device=dev)
    spec = torch.stft(
        x, n_fft=n_fft, hop_length=hop_length, window=window, center=True, pad_mode="constant", return_complex=True
    )
    power = spec.real**2 + spec.imag**2  # [batch, freq, frames]
    mel = torch.as_tensor(_mel_basis(sr, n_fft, n_mels, fmin, fmax), dtype=dtype, device=dev)
    S = torch.matmul(mel, power)  # [batch, mels, frames]
    db = 10.0 * torch.log10(torch.clamp(S, min=1e-10))
    if top_db is not None:
        db = torch.maximum(db, db.amax(dim=(1, 2), keepdim=True) - top_db)
    return db.transpose(1, 2)


# ---------------------------------------------------------------------------- ECG and l1
ECG_LENGTH, ECG_RATE = 187, 125


def check_ecg_beats(X: Any) -> np.ndarray:
    """ECG beats as given: ``float32 [n, 187]`` (125 Hz, zero-padded), validated."""
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or X.shape[1] != ECG_LENGTH:
        raise ValueError(f"X: expected ECG beats of shape [n, {ECG_LENGTH}], got {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X: ECG beats contain NaN or infinite values")
    return X


def l1_normalize(X: Any, eps: float = 1e-12) -> Any:
    """Scale every row to unit l1 norm (rows of zeros stay zero).

    The student's local mechanism (MAKE 2021 §4.2.2) adds Lap(1/rho) noise to unit-l1 vectors,
    whose l1 diameter 2 is the mechanism's sensitivity. Accepts numpy arrays, torch tensors and
    scipy sparse matrices (returned as CSR).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float32 if X.dtype != np.float64 else np.float64)
        norms = np.asarray(abs(X).sum(axis=1)).ravel()
        scale = np.where(norms > eps, 1.0 / np.maximum(norms, eps), 0.0)
        return sp.csr_matrix(sp.diags(scale.astype(X.dtype)) @ X)
    if isinstance(X, torch.Tensor):
        norms = X.abs().sum(dim=-1, keepdim=True)
        return torch.where(norms > eps, X / norms.clamp_min(eps), torch.zeros_like(X))
    X = np.asarray(X, dtype=float) if not np.issubdtype(np.asarray(X).dtype, np.floating) else np.asarray(X)
    norms = np.abs(X).sum(axis=-1, keepdims=True)
    return np.where(norms > eps, X / np.maximum(norms, eps), 0.0).astype(X.dtype)
