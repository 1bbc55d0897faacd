"""Computations behind ``notebooks/03_deeplog_synthetic.ipynb``: Visca (2021) §4.1, DP synthetic DeepLog
HDFS log-key sequences (Figs 4.1-4.7), with the guarantee each idea really gives.

Pipeline (all sizes are :class:`DeepLogConfig` parameters; the thesis states none of them):

1. a balanced subset of the real sessions (4,000 normal + 4,000 abnormal of length ≤ ``max_len``), split
   into train / validation / test (stratified by the shuffle);
2. the *control*: a GRU classifier trained on the real train split, scored on the real test split (every model
   is trained once per model seed, ``n_model_seeds``, each seed on its own subset and split, so the seeds replicate
   the data's draw too; the verdicts' intervals cross the seeds with the noise draws);
3. each idea is a generator trained (when it has a model) on the train split and applied to the *test*
   split; the control scores the synthetic test sequences against their original labels, and the
   normalised Hamming distance (:func:`normalised_hamming`) measures how far they moved;
4. every plotted ε is converted into the guarantee per symbol, per sequence and per data set by
   :func:`guarantee_table`, with the package's privacy code.

The ideas (``IDEAS``): k-RR (baseline beyond the thesis), Idea 1 (exponential mechanism on embedding cosine
similarity; Δu measured on the embedding table as the thesis did, and Δu = 2 analytic), Idea 2 (exponential
mechanism on the autoencoder's output distribution, Δu = 1), Idea 3 (Laplace on the unit-l1 latent, then
renormalised), Idea 4 (Laplace on the output probabilities, then argmax), Idea 5 (Idea 3 on a seq2seq trained
jointly with a classifier and latent noise).

Module by module (the shape of :mod:`pate_study.experiments.student_privacy`):

* :mod:`.config`: the ideas' names and :class:`DeepLogConfig` (every size and ε grid; the thesis states none);
* :mod:`.subset`: the balanced subset, its split, duplicates and the length-only rule;
* :mod:`.listings`: where the published listings of Figs 4.1/4.2 sit in the files;
* :mod:`.models`: the non-private control, Idea 1's RNN, the autoencoder and the joint model;
* :mod:`.generators`: the ideas' synthetic sequences;
* :mod:`.runs`: every idea at every ε, and the diagnostics (reconstruction floor, unseen sequences, permuted lengths);
* :mod:`.guarantees`: the guarantee each idea really gives, beside the thesis's claim;
* :mod:`.figures`, :mod:`.verdicts`, :mod:`.findings`: the figures, the verdicts and the findings;
* :mod:`.sections`: notebook 03's sections, one call each (save, record, show).

Notebook 03 calls :mod:`.sections` and builds its settings with :class:`.config.DeepLogConfig`; the study's other
names are re-exported here for code and tests (``from pate_study.experiments import deeplog``).
"""

from __future__ import annotations

from pate_study.experiments.deeplog.config import (
    FIGURE_OF,
    IDEA1_ANALYTIC,
    IDEA1_MEASURED,
    IDEA2,
    IDEA3,
    IDEA4,
    IDEA5,
    IDEAS,
    KRR,
    DeepLogConfig,
)
from pate_study.experiments.deeplog.figures import plot_idea
from pate_study.experiments.deeplog.findings import accuracy_course, findings_lines, reach_table, reconstruction_note
from pate_study.experiments.deeplog.generators import (
    cosine_utility,
    exponential_output_sequences,
    idea1_tables,
    measured_sensitivity,
    noisy_latent_sequences,
    noisy_output_sequences,
    output_probabilities,
    per_symbol_sequences,
)
from pate_study.experiments.deeplog.guarantees import (
    FIGURE_GUARANTEE,
    LENGTH_NOTE,
    guarantee_summary,
    guarantee_table,
    worst_over_seeds,
)
from pate_study.experiments.deeplog.listings import (
    locate_listing,
    run_length_counts,
    shortened_run,
    token_edit_distance,
)
from pate_study.experiments.deeplog.models import accuracy, train_models, train_seeds
from pate_study.experiments.deeplog.runs import (
    length_permutation_test,
    normalised_hamming,
    reconstruction,
    run_ideas,
    summarise,
    unseen_test_accuracy,
)
from pate_study.experiments.deeplog.subset import (
    Split,
    data_description,
    duplication,
    length_only_accuracy,
    prepare,
    prepare_replicates,
)
from pate_study.experiments.deeplog.verdicts import (
    at_epsilon,
    control_accuracy_estimate,
    control_verdict,
    idea_verdicts,
    listing_verdict,
)

__all__ = [
    "FIGURE_GUARANTEE",
    "FIGURE_OF",
    "IDEA1_ANALYTIC",
    "IDEA1_MEASURED",
    "IDEA2",
    "IDEA3",
    "IDEA4",
    "IDEA5",
    "IDEAS",
    "KRR",
    "LENGTH_NOTE",
    "Split",
    "DeepLogConfig",
    "accuracy",
    "accuracy_course",
    "at_epsilon",
    "control_accuracy_estimate",
    "control_verdict",
    "cosine_utility",
    "data_description",
    "duplication",
    "exponential_output_sequences",
    "findings_lines",
    "guarantee_summary",
    "guarantee_table",
    "idea1_tables",
    "idea_verdicts",
    "length_only_accuracy",
    "length_permutation_test",
    "listing_verdict",
    "locate_listing",
    "measured_sensitivity",
    "noisy_latent_sequences",
    "noisy_output_sequences",
    "normalised_hamming",
    "output_probabilities",
    "per_symbol_sequences",
    "plot_idea",
    "prepare",
    "prepare_replicates",
    "reach_table",
    "reconstruction",
    "reconstruction_note",
    "run_length_counts",
    "shortened_run",
    "run_ideas",
    "summarise",
    "token_edit_distance",
    "train_models",
    "train_seeds",
    "unseen_test_accuracy",
    "worst_over_seeds",
]
