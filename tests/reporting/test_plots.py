"""Plot helpers for readable notebook figures: compact tick labels, histograms with point masses."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after matplotlib.use("Agg")
import numpy as np  # noqa: E402 - after matplotlib.use("Agg")
import pytest  # noqa: E402 - after matplotlib.use("Agg")

from pate_study.reporting.plots import compact_ticks, hist_with_atoms  # noqa: E402 - after matplotlib.use("Agg")


def test_compact_ticks_are_few_and_short():
    fig, ax = plt.subplots()
    ax.plot([-0.1, 0.1], [0, 1])
    compact_ticks(ax, "x", nbins=5)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert 3 <= len(labels) <= 7 and "0" in labels
    assert all(len(label) <= 5 for label in labels), labels  # "−0.05", never "−0.050"
    plt.close(fig)


def test_hist_with_atoms_separates_point_masses_and_keeps_total_mass_one():
    rng = np.random.default_rng(0)
    samples = np.concatenate([np.full(450, -0.1), np.full(500, 0.1), rng.uniform(-0.1, 0.1, 50)])
    fig, ax = plt.subplots()
    masses = hist_with_atoms(ax, samples, [-0.1, 0.1], bins=10)
    assert masses[-0.1] == pytest.approx(0.45) and masses[0.1] == pytest.approx(0.5)
    assert masses["continuous"] == pytest.approx(0.05)
    area = sum(p.get_height() * p.get_width() for p in ax.patches)
    assert area == pytest.approx(0.05)  # histogram normalised by all samples: area + atoms = 1
    assert max(p.get_height() for p in ax.patches) < 1.0  # no spike of height mass / bin width
    plt.close(fig)
    with pytest.raises(ValueError, match="samples is empty"):
        hist_with_atoms(plt.subplots()[1], [], [0.0])


def test_box_by_level_draws_the_same_figure_twice():
    """The students overlaid on the boxes are jittered by a seeded generator, so reruns give the same image."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from pate_study.reporting.plots import box_by_level

    frame = pd.DataFrame({"level": ["no noise"] * 10 + ["ρ = 0.1"] * 10, "accuracy": np.linspace(0.1, 0.9, 20)})
    images = []
    for _ in range(2):
        np.random.seed(None)  # whatever the global state, the figure must not change
        fig, ax = plt.subplots()
        box_by_level(ax, frame, "accuracy", ["no noise", "ρ = 0.1"], xlabel="level", ylabel="accuracy")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=50)
        plt.close(fig)
        images.append(buffer.getvalue())
    assert images[0] == images[1]
