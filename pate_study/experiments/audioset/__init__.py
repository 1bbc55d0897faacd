"""Audio Set, Muschiol 2021: teachers on the released VGGish embeddings (notebook 04) and the multi-label releases,
their accounting and the students (notebook 05), module by module, each importing only those above it:

* :mod:`.data`: subsets, pool splits, partitions, seeds, clip features, the eval clips' query/test split, log-Mel
  clips (all through :mod:`pate_study.data.audioset`);
* :mod:`.teachers`: the recipe (:class:`~.teachers.TeacherSpec`) and one stacked call per ensemble
  (:func:`~.teachers.train_teachers`), the log-Mel CNN teachers; in this process, on one device;
* :mod:`.diagnostics`: curves, per-class AP, PR/ROC curves, sampler statistics of the teachers' figures;
* :mod:`.votes`: every teacher's probabilities on the eval clips, cached once (notebook 04 stores, notebook 05
  reads) and cut into query pool and test set (:class:`~.votes.CachedVotes`);
* :mod:`.release`: noise-free and noisy aggregation, the confidence check, accounting, Table 5.4's releases and
  the later mechanisms;
* :mod:`.verdict_rules`, :mod:`.teacher_claims` (notebook 04), :mod:`.release_claims` (notebook 05): every rule
  that compares a number with the thesis's; :mod:`.thesis_tables`: the thesis's tables,
  ours beside theirs; :mod:`.figures`: notebook 05's figures;
* :mod:`.students`: students on the released labels;
* :mod:`.shards`: picklable units (plain data in, plain data out) a cluster runs;
* :mod:`.pipeline`: ensembles → votes → students, the only module that picks local or Ray.
"""
