"""Small recurrent models for DeepLog log-key sequences (Visca 2021 §4.1), in plain torch.

Inputs are right-padded index matrices from :func:`pate_study.data.deeplog.pad_sequences` (0 = padding, log
keys 1..K). The thesis gives no architecture, size, optimiser or epoch count; these are small documented
choices, every size a parameter:

* :class:`SequenceClassifier`: embedding -> one recurrent layer (GRU, Elman RNN or LSTM) -> the hidden
  state at the last real token -> one logit (abnormal). The control ("a language model classifier made out
  of RNNs") and Idea 1's "simple RNN with an embedding layer". Float token matrices are accepted (cast to
  long), so :func:`pate_study.learning.student.fit_model` trains it.
* :class:`Seq2SeqAutoencoder`: embedding -> LSTM encoder; the latent is the encoder's last hidden state
  divided by its l1 norm (so every latent lies on the unit l1 sphere, l1 diameter 2); the decoder LSTM
  reads the latent at every step (Keras' RepeatVector pattern) and emits per-position logits over the K
  keys (padding is never produced). Ideas 2-4 use it.
* :class:`Seq2SeqClassifier`: the autoencoder plus a logistic head on the latent, trained jointly with
  Laplace noise on the latent (Idea 5).

:func:`fit_seq2seq` trains either seq2seq model (Adam, early stopping on a validation split with
:class:`pate_study.learning.evaluation.EarlyStopping`). Masking: losses count real positions only.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from pate_study.learning.evaluation import EarlyStopping

logger = logging.getLogger(__name__)

__all__ = [
    "SequenceClassifier",
    "Seq2SeqAutoencoder",
    "Seq2SeqClassifier",
    "Seq2SeqFit",
    "fit_seq2seq",
    "last_real_state",
    "count_parameters",
]

CELLS = {"gru": nn.GRU, "rnn": nn.RNN, "lstm": nn.LSTM}


def _check_size(name: str, value: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise ValueError(f"{name}={value!r}: expected a positive integer")
    return int(value)


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _as_tokens(tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(long tokens trimmed to the longest real sequence, lengths ≥ 1)."""
    tokens = tokens.long()
    lengths = (tokens != 0).sum(dim=1)
    if bool((lengths == 0).any()):
        raise ValueError("tokens: a row has no real token (empty sequence); every row needs at least one log key")
    return tokens[:, : int(lengths.max())], lengths


def last_real_state(outputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """outputs[i, lengths[i] − 1]: with right padding, the state after the last real token (padding that
    follows cannot reach it), which is the masking of a packed sequence without packing."""
    return outputs[torch.arange(outputs.shape[0], device=outputs.device), lengths - 1]


class SequenceClassifier(nn.Module):
    """Embedding -> recurrent layer -> last real state -> one logit (see the module docstring)."""

    def __init__(self, vocab_size: int, *, embedding_dim: int = 16, hidden: int = 32, cell: str = "gru") -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"cell={cell!r}: expected one of {sorted(CELLS)}")
        self.embedding = nn.Embedding(
            _check_size("vocab_size", vocab_size) + 1, _check_size("embedding_dim", embedding_dim), padding_idx=0
        )
        self.rnn = CELLS[cell](embedding_dim, _check_size("hidden", hidden), batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens, lengths = _as_tokens(tokens)
        out, _ = self.rnn(self.embedding(tokens))
        return self.head(last_real_state(out, lengths))

    def symbol_embeddings(self) -> np.ndarray:
        """The embedding rows of the K log keys (padding row dropped), ``[K, embedding_dim]``."""
        return self.embedding.weight.detach().cpu().numpy()[1:].astype(np.float64)


class Seq2SeqAutoencoder(nn.Module):
    """LSTM encoder -> unit-l1 latent -> LSTM decoder fed the latent at every step -> logits over K keys."""

    def __init__(self, vocab_size: int, *, embedding_dim: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.vocab_size = _check_size("vocab_size", vocab_size)
        self.embedding = nn.Embedding(vocab_size + 1, _check_size("embedding_dim", embedding_dim), padding_idx=0)
        self.encoder = nn.LSTM(embedding_dim, _check_size("hidden", hidden), batch_first=True)
        self.decoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    @property
    def latent_dim(self) -> int:
        return self.encoder.hidden_size

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        """Latent ``[n, hidden]`` with unit l1 norm: the last real LSTM state h (in (−1, 1)^hidden) over ‖h‖₁."""
        tokens, lengths = _as_tokens(tokens)
        out, _ = self.encoder(self.embedding(tokens))
        h = last_real_state(out, lengths)
        return h / h.abs().sum(dim=1, keepdim=True).clamp_min(1e-12)

    def decode_logits(self, latent: torch.Tensor, steps: int) -> torch.Tensor:
        """Logits ``[n, steps, K]``; column j is log key index j + 1."""
        out, _ = self.decoder(latent.unsqueeze(1).expand(-1, int(steps), -1).contiguous())
        return self.out(out)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.decode_logits(self.encode(tokens), tokens.shape[1])


class Seq2SeqClassifier(nn.Module):
    """:class:`Seq2SeqAutoencoder` + a logistic head on the (noisy) latent (Idea 5)."""

    def __init__(self, vocab_size: int, *, embedding_dim: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.autoencoder = Seq2SeqAutoencoder(vocab_size, embedding_dim=embedding_dim, hidden=hidden)
        self.head = nn.Linear(hidden, 1)


def _reconstruction_loss(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over real positions only (padding masked out)."""
    mask = tokens != 0
    return F.cross_entropy(logits[mask], tokens[mask] - 1)


@dataclass
class Seq2SeqFit:
    model: nn.Module
    epochs: int
    best_val_loss: float
    history: list[float] = field(default_factory=list)


def _seq2seq_loss(
    model: nn.Module,
    tokens: torch.Tensor,
    labels: torch.Tensor | None,
    *,
    noise_scale: float,
    classifier_weight: float,
    gen: torch.Generator | None,
) -> torch.Tensor:
    ae = model.autoencoder if isinstance(model, Seq2SeqClassifier) else model
    tokens = tokens[:, : int((tokens != 0).sum(1).max())]
    latent = ae.encode(tokens)
    if noise_scale > 0:
        # Lap(b) = b·(E1 − E2) with E1, E2 ~ Exp(1), drawn through the seeded generator
        e = torch.empty((2, *latent.shape), device=latent.device).exponential_(generator=gen)
        latent = latent + noise_scale * (e[0] - e[1])
    loss = _reconstruction_loss(ae.decode_logits(latent, tokens.shape[1]), tokens)
    if isinstance(model, Seq2SeqClassifier):
        loss = loss + classifier_weight * F.binary_cross_entropy_with_logits(model.head(latent).squeeze(1), labels)
    return loss


def fit_seq2seq(
    model: nn.Module,
    tokens: np.ndarray,
    labels: np.ndarray | None = None,
    *,
    val_tokens: np.ndarray | None = None,
    val_labels: np.ndarray | None = None,
    noise_scale: float = 0.0,
    classifier_weight: float = 1.0,
    lr: float = 3e-3,
    batch_size: int = 128,
    max_epochs: int = 30,
    patience: int = 3,
    seed: int = 0,
    progress: bool = False,
) -> Seq2SeqFit:
    """Adam on the masked reconstruction loss (+ ``classifier_weight`` × the head's logistic loss for a
    :class:`Seq2SeqClassifier`, which also needs ``labels``), with Laplace(``noise_scale``) noise on the latent
    during training when > 0 (Idea 5). Early stopping on the validation loss; best parameters restored."""
    joint = isinstance(model, Seq2SeqClassifier)
    if not isinstance(model, (Seq2SeqAutoencoder, Seq2SeqClassifier)):
        raise ValueError(f"model: expected a Seq2SeqAutoencoder or Seq2SeqClassifier, got {type(model).__name__}")
    if joint and (labels is None or (val_tokens is not None and val_labels is None)):
        raise ValueError("labels: a Seq2SeqClassifier needs labels (and val_labels with val_tokens)")
    if noise_scale < 0:
        raise ValueError(f"noise_scale={noise_scale!r}: expected a Laplace scale >= 0")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    X = torch.as_tensor(np.asarray(tokens, dtype=np.int64))
    Y = torch.as_tensor(np.asarray(labels, dtype=np.float32)) if joint else None
    has_val = val_tokens is not None and len(val_tokens) > 0
    if has_val:
        Xv = torch.as_tensor(np.asarray(val_tokens, dtype=np.int64))
        Yv = torch.as_tensor(np.asarray(val_labels, dtype=np.float32)) if joint else None
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    stopper, history, epoch = EarlyStopping(patience), [], 0
    kw = dict(noise_scale=noise_scale, classifier_weight=classifier_weight)
    for epoch in tqdm(range(1, max_epochs + 1), desc="seq2seq", disable=not progress):
        model.train()
        order = torch.randperm(X.shape[0], generator=gen)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            loss = _seq2seq_loss(model, X[idx], Y[idx] if joint else None, gen=gen, **kw)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if not has_val:
            continue
        model.eval()
        with torch.no_grad():
            vl = float(_seq2seq_loss(model, Xv, Yv, gen=torch.Generator().manual_seed(seed + 1), **kw))
        history.append(vl)
        if stopper.update(vl, lambda: copy.deepcopy(model.state_dict())):
            break
    if stopper.state is not None:
        model.load_state_dict(stopper.state)
    model.eval()
    logger.info("seq2seq %s: %d epochs, best validation loss %.4f", type(model).__name__, epoch, stopper.best)
    return Seq2SeqFit(model, epoch, stopper.best if has_val else float("nan"), history)
