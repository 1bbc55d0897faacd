"""What notebooks 01 (ECG) and 02 (web requests) do alike, so that each of their cells is one package call.

Each function here is one step both notebooks take the same way: the noise levels from the parameters, a figure
saved and shown, the signal left after curator B's noise (MAKE 2021 §3.2), the accounting invariants recorded,
and the verdicts recorded under every registry id that names the same published figure or table, then shown as
Markdown (:class:`~pate_study.reporting.outputs.MarkdownText`: a cell that ends with it renders it). The
study-specific sections are in :mod:`.ecg_sections` and :mod:`.web_sections`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from pate_study.experiments.student_privacy.accounting import noise_signal_table
from pate_study.experiments.student_privacy.pipeline import StudyResult
from pate_study.reporting.outputs import MarkdownText, NotebookOutputs
from pate_study.reporting.verdicts import Verdict


def noise_levels(rhos: Sequence[float], include_no_noise: bool) -> list:
    """The student-noise levels of a run: every ρ, then ``None`` (no noise) when ``include_no_noise``."""
    return list(rhos) + ([None] if include_no_noise else [])


def signal_section(levels: Sequence, X_student, out: NotebookOutputs) -> pd.DataFrame:
    """How much of a unit-l1 row survives curator B's Lap(1/ρ) noise (:func:`.accounting.noise_signal_table`),
    recorded as ``noise_over_mean_coordinate`` and ``linear_readout_snr_bound`` per level; returns the table."""
    signal = noise_signal_table(levels, "rho", X_student)
    out.record("noise_over_mean_coordinate", **dict(zip(signal["level"], signal["noise_std_over_mean_coordinate"])))
    out.record("linear_readout_snr_bound", **dict(zip(signal["level"], signal["linear_readout_snr_bound"])))
    return signal


def accounting_invariants(result: StudyResult) -> dict:
    """What the run's ε_dep must respect, as numbers: data-dependent never above data-independent on the same
    λ grid, continuous λ never above the integer grid, and how far Theorem 3's own q condition (Papernot et al.
    2017) moves ε_dep from the reference code's q < 0.5."""
    students, independent = result.students, result.data_independent
    return dict(
        data_independent=independent,
        max_dependent_minus_independent_same_grid=float(
            (students["eps_moments_int"] - independent["eps_moments_int"]).max()
        ),
        max_continuous_minus_integer=float((students["eps_moments_cont"] - students["eps_moments_int"]).max()),
        max_abs_theorem_minus_reference_q=float(
            (students["eps_moments_int_theorem_q"] - students["eps_moments_int"]).abs().max()
        ),
    )


def record_accounting(result: StudyResult, out: NotebookOutputs) -> dict:
    """Record :func:`accounting_invariants` of ``result`` under ``accounting``; return them."""
    return out.record("accounting", **accounting_invariants(result))


def verdicts_markdown(verdicts: Mapping[str, Verdict]) -> str:
    """One Markdown bullet per item: ``item``: **verdict** (rule): reason."""
    return "\n".join(
        f"* `{item}`: **{v.verdict}** ({v.rule}){': ' + v.reason if v.reason else ''}" for item, v in verdicts.items()
    )


def record_verdicts(verdicts: Mapping[str, Verdict], same_as: Mapping[str, str], out: NotebookOutputs) -> MarkdownText:
    """Record each verdict under its item id and under the id of the same figure in another source
    (``same_as``, e.g. MAKE 2021 Fig. 10 = Visca 2021 Fig. 4.15); return them as Markdown."""
    for item, verdict in verdicts.items():
        for target in (item, same_as.get(item)):
            if target:
                out.record(target, **verdict.as_record())
    return MarkdownText(verdicts_markdown(verdicts))
