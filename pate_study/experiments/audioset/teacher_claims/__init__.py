"""The rules that turn notebook 04's numbers (teachers on the released VGGish embeddings) into verdicts against
Muschiol 2021 (agrees, differs, inconclusive, not comparable; :mod:`pate_study.reporting.verdicts`), each claim
declared next to the function that judges it. Each function states its rule; none reads a number typed in: the
thesis's values come from :func:`pate_study.reporting.registry.published`. Callers import the module they use:

* :mod:`.models`: Table 4.1, Fig 2.1, Figs 5.4 and 5.5 (architectures, speed), the transfer;
* :mod:`.curves`: Figs 5.1 to 5.3 and 5.6, the teachers' curves;
* :mod:`.classes`: Figs A.1 to A.5, the per-class curves;
* :mod:`.seeds`: the paired comparison over seeds the ablations use;
* :mod:`.sampler`: Fig 5.9, the sampler's class occurrence;
* :mod:`.ablations`: Figs 5.7 to 5.12, the ablations;
* :mod:`.findings`: the findings text.
"""
