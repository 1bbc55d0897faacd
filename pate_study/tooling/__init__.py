"""Tools around the study, outside its import graph (nothing in ``pate_study`` imports them): the notebook runner
behind ``make figures`` (the package ``figures``, started as ``python -m pate_study.tooling.runner``), the JupyterLab
browser check (``labcheck``), the static site (``site``), the primer's exercise checks (``exercises``) and its sliders
(``sliders``)."""
