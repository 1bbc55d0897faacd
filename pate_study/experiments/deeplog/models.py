"""The non-private models of the study: the control classifier, Idea 1's RNN, the autoencoder and the joint model."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from pate_study.experiments.deeplog.config import DeepLogConfig
from pate_study.experiments.deeplog.subset import Prepared
from pate_study.learning.sequence_models import (
    Seq2SeqAutoencoder,
    Seq2SeqClassifier,
    SequenceClassifier,
    count_parameters,
    fit_seq2seq,
)
from pate_study.learning.student import fit_model, predict_scores


@contextlib.contextmanager
def torch_threads(n: int):
    """Run torch with ``n`` intra-op threads, restoring the previous setting afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class Models:
    control: SequenceClassifier
    idea1_rnn: SequenceClassifier
    autoencoder: Seq2SeqAutoencoder
    joint: Seq2SeqClassifier
    info: dict = field(default_factory=dict)


def _fit_classifier(prepared: Prepared, config: DeepLogConfig, cell: str, seed: int) -> tuple[SequenceClassifier, int]:
    model = SequenceClassifier(
        prepared.vocabulary.size, embedding_dim=config.embedding_dim, hidden=config.hidden, cell=cell
    )
    fit = fit_model(
        model,
        prepared.train.padded.tokens,
        prepared.train.labels,
        "binary",
        prepared.val.padded.tokens,
        prepared.val.labels,
        lr=config.lr,
        batch_size=config.batch_size,
        max_epochs=config.max_epochs,
        patience=config.patience,
        seed=seed,
        device="cpu",
    )
    return fit.model, fit.epochs


#: seeds used by one set of models (control, Idea 1's RNN, autoencoder, joint model): model seed ``s`` trains them
#: from ``config.seed + MODELS_PER_SEED * s + j``, so seed 0 is the single set the study trained before
MODELS_PER_SEED = 4


def train_models(prepared: Prepared, config: DeepLogConfig, model_seed: int = 0) -> Models:
    """The control (GRU), Idea 1's simple RNN, the autoencoder (Ideas 2-4) and the joint model (Idea 5),
    all trained non-privately on the train split (Adam; early stopping on the validation split), from the
    seeds of replicate ``model_seed`` (initialisation, batch order and Idea 5's training noise)."""
    with torch_threads(config.torch_threads):
        return _train_models(prepared, config, config.seed + MODELS_PER_SEED * int(model_seed))


def train_seeds(
    prepared: Prepared | Sequence[Prepared], config: DeepLogConfig, *, progress: bool = True
) -> list[Models]:
    """:func:`train_models` once per model seed ``0 … n_model_seeds − 1``, seed ``s`` on ``prepared[s]`` (its own
    subset and split, :func:`.subset.prepare_replicates`; one :class:`Prepared` for every seed if given one): the
    replicates that the verdicts' intervals cross with the noise draws. A loop: the four architectures (a GRU, an
    Elman RNN and two seq2seq GRUs with early stopping per model) are not stacked."""
    data = [prepared] * config.n_model_seeds if isinstance(prepared, Prepared) else list(prepared)
    if len(data) != config.n_model_seeds:
        raise ValueError(f"prepared: expected one per model seed ({config.n_model_seeds}), got {len(data)}")
    return [
        train_models(data[s], config, s)
        for s in tqdm(range(config.n_model_seeds), desc="model seeds", disable=not progress)
    ]


def _train_models(prepared: Prepared, config: DeepLogConfig, seed: int) -> Models:
    torch.manual_seed(seed)
    control, control_epochs = _fit_classifier(prepared, config, "gru", seed)
    idea1, idea1_epochs = _fit_classifier(prepared, config, "rnn", seed + 1)
    kw = dict(
        val_tokens=prepared.val.padded.tokens,
        lr=config.lr,
        batch_size=config.batch_size,
        max_epochs=config.max_epochs,
        patience=config.patience,
    )
    ae = fit_seq2seq(
        Seq2SeqAutoencoder(prepared.vocabulary.size, embedding_dim=config.embedding_dim, hidden=config.hidden),
        prepared.train.padded.tokens,
        seed=seed + 2,
        **kw,
    )
    train_scale = 2.0 / config.idea5_train_epsilon  # Laplace scale on the unit-l1 latent (l1 diameter 2)
    joint = fit_seq2seq(
        Seq2SeqClassifier(prepared.vocabulary.size, embedding_dim=config.embedding_dim, hidden=config.hidden),
        prepared.train.padded.tokens,
        prepared.train.labels,
        val_labels=prepared.val.labels,
        noise_scale=train_scale,
        classifier_weight=config.idea5_classifier_weight,
        seed=seed + 3,
        **kw,
    )
    info = {
        "control": {"parameters": count_parameters(control), "epochs": control_epochs},
        "idea1_rnn": {"parameters": count_parameters(idea1), "epochs": idea1_epochs},
        "autoencoder": {"parameters": count_parameters(ae.model), "epochs": ae.epochs},
        "joint": {
            "parameters": count_parameters(joint.model),
            "epochs": joint.epochs,
            "train_noise_scale": train_scale,
        },
    }
    return Models(control, idea1, ae.model, joint.model, info)


def classify(model: SequenceClassifier, tokens: np.ndarray) -> np.ndarray:
    """0/1 predictions (probability ≥ 0.5) of a sequence classifier."""
    return (predict_scores(model, tokens, "binary", device="cpu") >= 0.5).astype(np.int64)


def accuracy(model: SequenceClassifier, tokens: np.ndarray, labels: np.ndarray) -> float:
    return float((classify(model, tokens) == np.asarray(labels)).mean())
