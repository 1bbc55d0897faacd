"""The ideas compared and every choice Visca (2021) §4.1 leaves open (:class:`DeepLogConfig`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pate_study.core.contract import COUNT, OPEN_UNIT, POSITIVE, ContractError, Range, StudyContract

KRR = "k-RR per symbol (baseline)"
IDEA1_MEASURED = "Idea 1: EM on embedding cosine, Δu measured"
IDEA1_ANALYTIC = "Idea 1: EM on embedding cosine, Δu = 2"
IDEA2 = "Idea 2: seq2seq + EM on output probabilities"
IDEA3 = "Idea 3: seq2seq + Laplace on latent"
IDEA4 = "Idea 4: seq2seq + Laplace on output probabilities"
IDEA5 = "Idea 5: seq2seq + classifier, Laplace on latent"
IDEAS = (KRR, IDEA1_MEASURED, IDEA1_ANALYTIC, IDEA2, IDEA3, IDEA4, IDEA5)
#: the registry figure of each idea (k-RR is drawn on every figure as the baseline)
FIGURE_OF = {
    IDEA1_MEASURED: "visca2021-fig4.3",
    IDEA1_ANALYTIC: "visca2021-fig4.3",
    IDEA2: "visca2021-fig4.4",
    IDEA3: "visca2021-fig4.5",
    IDEA4: "visca2021-fig4.6",
    IDEA5: "visca2021-fig4.7",
}


@dataclass(frozen=True)
class DeepLogConfig(StudyContract):
    """Notebook 03's settings: every choice Visca (2021) §4.1 leaves open (it states none of them). The defaults are
    the paper profile (the thesis's scale: a balanced subset of 8,000 sessions); the profile files hold only
    overrides (:mod:`pate_study.core.contract`). ``seed`` is the notebook's seed, handed in by the notebook."""

    n_sequences: Annotated[int, Range(10)] = 8000  # "a balanced subset of 8000 sequences"
    max_len: Annotated[int, COUNT] = 50  # model limit; longer sessions are left out of the subset (counted)
    test_fraction: Annotated[float, OPEN_UNIT] = 0.2  # the synthetic release is made of the test split
    val_fraction: Annotated[float, OPEN_UNIT] = (
        0.1  # of the whole subset, taken from the non-test part (early stopping)
    )
    embedding_dim: Annotated[int, COUNT] = 16
    hidden: Annotated[int, COUNT] = 32  # recurrent width = latent dimension of the seq2seq models
    lr: Annotated[float, POSITIVE] = 3e-3  # Adam
    batch_size: Annotated[int, COUNT] = 128
    max_epochs: Annotated[int, COUNT] = 60
    patience: Annotated[int, COUNT] = 3
    epsilons: tuple[Annotated[float, POSITIVE], ...] = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0)
    n_repeats: Annotated[int, COUNT] = 10  # independent draws of every synthetic test set (the intervals' replicates)
    n_model_seeds: Annotated[int, COUNT] = 3  # each model trained once per seed, each on its own subset and split
    n_boot: Annotated[int, COUNT] = 1000  # bootstrap resamples of the test split behind the control's interval
    idea5_train_epsilon: Annotated[float, POSITIVE] = 100.0  # Laplace noise on Idea 5's latent in training: 2/ε
    idea5_classifier_weight: Annotated[float, Range(0)] = 1.0
    torch_threads: Annotated[int, COUNT] = 1  # these models are tiny: one thread avoids OpenMP spinning on a shared CPU
    seed: Annotated[int, Range(0)] = 0

    def __post_init__(self) -> None:
        """The annotations' checks, then the two fractions' sum and a non-empty ε grid."""
        super().__post_init__()
        if self.test_fraction + self.val_fraction >= 1:
            raise ContractError(
                [
                    f"DeepLogConfig: test_fraction={self.test_fraction}, val_fraction={self.val_fraction}: expected "
                    "two fractions in (0, 1) summing to less than 1"
                ]
            )
        if not self.epsilons:
            raise ContractError(["DeepLogConfig: epsilons: expected a non-empty list of positive numbers, found ()"])
