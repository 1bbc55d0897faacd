"""Sliders for the teaching notebooks: move ε, σ or γ and watch a plot change; a static figure where no one can move.

:func:`slider_plot` draws with ``ipywidgets`` sliders in an interactive JupyterLab kernel, and falls back to one
static figure at the sliders' starting values when the notebook is executed by the runner or papermill
(``$PATE_STUDY_RUNNER`` set: the committed executed copy and its HTML show the figure, not a dead widget), outside a
kernel, or without ipywidgets. The draw functions below are the primer's (§1, §2, §3); each returns a figure.
"""

from __future__ import annotations

from typing import Callable

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from pate_study.experiments import primer
from pate_study.reporting.session import in_kernel, run_by_runner

#: name -> (minimum, maximum, step, starting value)
Slider = tuple[float, float, float, float]


def _show(fig) -> None:
    display(fig)
    plt.close(fig)


def widgets_available() -> bool:
    """True in an interactive kernel with ipywidgets installed (not under the runner, papermill or a script)."""
    if run_by_runner() or not in_kernel():
        return False
    try:
        import ipywidgets  # noqa: F401  (optional at import time: the light install has it, scripts need not)
    except ImportError:
        return False
    return True


def slider_plot(draw: Callable[..., plt.Figure], **sliders: Slider) -> None:
    """Show ``draw(**values)`` with one slider per keyword (``name=(min, max, step, start)``), redrawn when a slider
    is released; a single static figure at the starting values where sliders cannot work."""
    for name, spec in sliders.items():
        if len(spec) != 4 or not spec[0] <= spec[3] <= spec[1] or spec[2] <= 0:
            raise ValueError(
                f"slider {name}: expected (min, max, step > 0, start) with min <= start <= max, got {spec}"
            )
    if not widgets_available():
        _show(draw(**{name: spec[3] for name, spec in sliders.items()}))
        return
    import ipywidgets  # ipywidgets is optional: without it the sliders degrade to a static figure

    controls = {
        name: ipywidgets.FloatSlider(
            min=lo, max=hi, step=step, value=start, description=name, continuous_update=False, readout_format=".3g"
        )
        for name, (lo, hi, step, start) in sliders.items()
    }
    output = ipywidgets.interactive_output(lambda **values: _show(draw(**values)), controls)
    display(ipywidgets.HBox(list(controls.values())), output)


def laplace_neighbours(epsilon: float, sensitivity: float = 1.0) -> plt.Figure:
    """§1: the Laplace mechanism's output densities on neighbours f(D) = 0, f(D') = Δ, and their log-ratio within ±ε."""
    b = sensitivity / epsilon
    x = np.linspace(-6, 7, 601)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
    ax1.plot(x, np.exp(-np.abs(x) / b) / (2 * b), color="tab:blue", label="M(D)")
    ax1.plot(x, np.exp(-np.abs(x - sensitivity) / b) / (2 * b), color="tab:blue", ls="--", label="M(D')")
    ax1.set(xlabel="output x", ylabel="density", title=f"Laplace, b = Δ/ε = {b:.3g}")
    ax1.legend(fontsize=9)
    ax2.plot(x, primer.laplace_log_ratio(x, sensitivity=sensitivity, scale=b), color="tab:blue")
    for sign in (1, -1):
        ax2.axhline(sign * epsilon, ls="--", color="tab:red")
    ax2.set(xlabel="output x", ylabel="log density ratio", ylim=(-3.2, 3.2), title=f"within ±ε = ±{epsilon:.3g}")
    fig.tight_layout()
    return fig


def lnmax_answer(counts: np.ndarray, gamma: float, seed: int = 0) -> plt.Figure:
    """§2: one LNMax answer on a vote row at inverse scale γ: the votes, the noisy votes, the released label."""
    one = primer.noisy_votes(counts, gamma=gamma, seed=seed)
    winner = int(one["noisy"].idxmax())
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ax.bar(one["class"] - 0.2, one["votes"], width=0.4, color="tab:gray", label="votes n_j")
    ax.bar(one["class"] + 0.2, one["noisy"], width=0.4, color="tab:blue", label=f"n_j + Lap(1/γ), γ = {gamma:.3g}")
    ax.bar([winner + 0.2], [one["noisy"].max()], width=0.4, color="tab:red", label="released label")
    ax.set(xlabel="class j", ylabel="count", xticks=one["class"])
    ax.legend(fontsize=9)
    return fig


def gaussian_neighbours(sigma: float, sensitivity: float = 1.0) -> plt.Figure:
    """§3: the Gaussian mechanism's log-ratio (a line, unbounded) at σ, beside the tight δ at ε = 1."""
    x = np.linspace(-4, 5, 401)
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.plot(x, primer.gaussian_log_ratio(x, f_d=0.0, f_d_prime=sensitivity, sigma=sigma), color="tab:orange")
    ax.axhline(1.0, ls="--", color="tab:red", label="ε = 1")
    delta = primer.gaussian_tight_delta(1.0, sigma=sigma, sensitivity=sensitivity)
    ax.set(
        xlabel="mechanism output",
        ylabel="log p_D(x)/p_D'(x)",
        ylim=(-6, 6),
        title=f"σ = {sigma:.3g}: tight δ at ε = 1 is {delta:.3g}",
    )
    ax.legend(fontsize=9)
    return fig
