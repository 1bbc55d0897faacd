"""The ideas compared and every choice Visca (2021) §4.1 leaves open (:class:`DeepLogConfig`)."""

from __future__ import annotations

from dataclasses import dataclass

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
class DeepLogConfig:
    """Every choice the thesis leaves open (Visca 2021 §4.1 states none of them)."""

    n_sequences: int = 8000  # "a balanced subset of 8000 sequences"
    max_len: int = 50  # model limit; longer sessions are left out of the subset (counted)
    test_fraction: float = 0.2
    val_fraction: float = 0.1  # of the whole subset, taken from the non-test part
    embedding_dim: int = 16
    hidden: int = 32  # recurrent width = latent dimension of the seq2seq models
    lr: float = 3e-3
    batch_size: int = 128
    max_epochs: int = 30
    patience: int = 3
    epsilons: tuple = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0)
    n_repeats: int = 10  # independent draws of every synthetic test set (the replicates of the verdicts' intervals)
    n_model_seeds: int = 3  # each model trained once per seed (the training-seed replicates of the intervals)
    n_boot: int = 1000  # bootstrap resamples of the test split behind the control's interval
    idea5_train_epsilon: float = 100.0  # Laplace noise on the latent while training Idea 5: scale 2/ε
    idea5_classifier_weight: float = 1.0
    torch_threads: int = 1  # these models are tiny: one thread avoids OpenMP spinning on a shared CPU
    seed: int = 0

    def __post_init__(self) -> None:
        if (
            not 0 < self.test_fraction < 1
            or not 0 < self.val_fraction < 1
            or self.test_fraction + self.val_fraction >= 1
        ):
            raise ValueError(
                f"test_fraction={self.test_fraction}, val_fraction={self.val_fraction}: expected two "
                "fractions in (0, 1) summing to less than 1"
            )
        if not self.epsilons or any(float(e) <= 0 for e in self.epsilons):
            raise ValueError(f"epsilons={self.epsilons!r}: expected a non-empty list of positive numbers")
        if int(self.n_repeats) < 1:
            raise ValueError(f"n_repeats={self.n_repeats!r}: expected at least 1")
        if int(self.n_model_seeds) < 1:
            raise ValueError(f"n_model_seeds={self.n_model_seeds!r}: expected at least 1 model seed")
        if int(self.n_boot) < 1:
            raise ValueError(f"n_boot={self.n_boot!r}: expected at least 1 bootstrap resample")
