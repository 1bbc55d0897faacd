"""The rules that turn notebook 05's numbers (noise-free and noisy multi-label releases, their accounting and the
students) into verdicts against Muschiol 2021 (agrees, differs, inconclusive, not comparable;
:mod:`pate_study.reporting.verdicts`), and the thesis's claims checked on our tables, each claim declared next to the
function that judges it. Each function states its rule; none reads a number typed in: the thesis's values come from
:func:`pate_study.reporting.registry.published`. Callers import the module they use:

* :mod:`.common`: the query pool's estimates, the scale verdict, the claims tables' rows, the stamps;
* :mod:`.noise_free`: Tables 5.1 to 5.3, the setup;
* :mod:`.appendix`: Tables A.1 to A.3, Fig A.6;
* :mod:`.sweeps`: Figs 5.13 to 5.15 and A.8 to A.11, the release-noise sweeps;
* :mod:`.analytic`: the break-even q~ and Figs 5.16, A.12, A.13;
* :mod:`.students`: Table 5.4;
* :mod:`.student_figures`: Figs 5.17 to 5.19;
* :mod:`.findings`: the findings text.
"""
