"""``make figures``: execute the notebooks through papermill and rebuild ``figures/INDEX.md``.

For every ``notebooks/<stem>.ipynb`` the parameters come from ``configs/<stem>/<profile>.yaml`` and what the runner
must know about the notebook (its datasets, the notebooks it waits for, its reference time) from its manifest
``configs/<stem>/notebook.yaml``; the runner adds ``profile`` and ``output_dir``. One run, in order, one module each:

0. **Checks** (:mod:`.configs`, :mod:`.manifest`, :mod:`.yamlfile`): every parameter file of the run against its
   notebook's parameters cell, every manifest against what it may hold, one line per problem naming the file, the
   key, what was expected and what was found; nothing runs until all are fixed (exit status 2). One run per
   checkout (``build/figures.lock``, :mod:`.cli`). Staging folders an interrupted run left are removed, recognised
   by the runner's marker beside them (:mod:`.staging`).
1. **Data** (:mod:`.datasets`): the datasets the manifests list, prepared once through the data recipes.
2. **Notebooks** (:mod:`.execution`, :mod:`.staging`, :mod:`.jobs`, :mod:`.schedule`): each writes into
   ``figures/.tmp-<stem>-<profile>``, which replaces its output folder as a whole when it succeeds: ``figures/<stem>``
   for the paper profile (the other profiles' subfolders in it are kept), ``figures/<stem>/<profile>`` for any other
   (``smoke`` is git-ignored, ``gpu`` is committed beside the paper outputs), with the executed notebook
   ``figures/<stem>/<stem>.ipynb`` (volatile metadata stripped: the same seed gives the same bytes); ``build/`` gets
   the executed notebook and its HTML rendering. A failing notebook keeps its previous outputs and stops no other.
   ``--jobs N`` runs N side by side, longest chain first, one OpenMP/MKL thread per kernel.
3. **Summary** (:mod:`.summary`): every notebook's time and outputs by data status, the commands that turn
   stand-ins into real data, where to read the results; printed and written to ``build/summary.<profile>.md``. The
   command exits non-zero when a notebook failed.

Every module reads the folders through :mod:`.layout` at call time, so the whole runner can be pointed at another
tree (a test's toy checkout). The command line::

    python -m pate_study.tooling.runner figures --profile paper [--data network|offline|skip] [--jobs 2] \\
        [--notebooks 00_dp_primer ...]
    python -m pate_study.tooling.runner index
"""
