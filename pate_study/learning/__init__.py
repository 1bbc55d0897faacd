"""The learning side: features, models, the one training loop (``training``) over stacked models (``stacked``),
samplers, teacher partitions and ensembles, votes, students, sequence models, metrics, and the local/Ray shard
runner (``distributed``). Imports ``core`` only; never ``privacy``, ``reporting`` or ``experiments``."""
