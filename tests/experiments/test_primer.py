"""experiments/primer.py: the lab's small computations against closed forms."""

import os
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pate_study.experiments import primer
from pate_study.privacy import aggregators, confident_gnmax_epsilon


def test_one_moved_vote_has_l1_distance_two():
    counts = np.array([4, 0, 1])
    moved = primer.move_one_vote(counts, 0, 1)
    assert moved.tolist() == [3, 1, 1] and primer.l1_sensitivity([(counts, moved)]) == 2
    with pytest.raises(ValueError, match="no vote to move"):
        primer.move_one_vote(counts, 1, 0)


def test_laplace_log_ratio_is_bounded_and_gaussian_is_not():
    x = np.linspace(-50, 50, 2001)
    lap = primer.laplace_log_ratio(x, sensitivity=2.0, scale=4.0)
    assert np.abs(lap).max() == pytest.approx(0.5)
    gauss = primer.gaussian_log_ratio(x, f_d=0.0, f_d_prime=1.0, sigma=1.0)
    np.testing.assert_allclose(gauss, 0.5 - x)  # ((x−1)² − x²)/2, a line
    direct = stats.norm.logpdf(x, 0, 1) - stats.norm.logpdf(x, 1, 1)
    np.testing.assert_allclose(gauss, direct, atol=1e-9)


def test_gaussian_loss_tail_matches_its_definition():
    rng = np.random.default_rng(0)
    o = rng.normal(0.0, 2.0, size=400_000)
    loss = primer.gaussian_log_ratio(o, f_d=0.0, f_d_prime=1.5, sigma=2.0)
    assert np.mean(loss > 0.3) == pytest.approx(primer.gaussian_loss_tail(0.3, sensitivity=1.5, sigma=2.0), abs=3e-3)


def test_moments_order_is_renyi_order_minus_one():
    rng = np.random.default_rng(1)
    votes = np.stack([rng.multinomial(250, q) for q in rng.dirichlet(np.full(10, 0.2), size=50)])
    table = primer.moments_vs_rdp(votes, gamma=0.05)
    np.testing.assert_allclose(table["logmgf_over_lambda"], table["rdp_at_lambda_plus_1"], rtol=1e-12)
    assert (table["rdp_order_alpha"] == table["moment_lambda"] + 1).all()


def test_local_dp_table_claims_two_rho():
    table = primer.local_dp_table([0.5], n_samples=20_000, seed=0)
    assert table.loc[0, "epsilon"] == pytest.approx(1.0)
    assert table.loc[0, "epsilon_audited_lower_bound"] <= 1.0


def test_fig5_verdict():
    curve = primer.mgf_bound_curve(gamma=0.05, delta=1e-5, n_queries=1000)
    assert primer.fig5_verdict(curve).verdict == "agrees"
    assert primer.fig5_verdict(curve, paper_epsilon=20.2).verdict == "differs"


def test_fig5_verdict_is_labelled_analytic_and_never_counted_as_evidence():
    """The minimum depends on Q, γ and δ only: an analytic claim (reporting.claims.analytic), labelled so in the
    record, with the rule it applied (both printed numbers within half their last digit)."""
    curve = primer.mgf_bound_curve(gamma=0.05, delta=1e-5, n_queries=1000)
    for verdict in (primer.fig5_verdict(curve), primer.fig5_verdict(curve, paper_lambda=1.6)):
        record = verdict.as_record()
        assert verdict.basis == record["verdict_basis"] == "analytic"
        assert record["verdict_reason"].startswith("analytic: holds for any data")
        assert record["verdict_rule"].startswith("analytic, for any data: ε*_ind (printed to 4 decimals)")
        assert "λ* (printed to 5 decimals)" in record["verdict_rule"]
    assert primer.fig5_verdict(curve, paper_lambda=1.6).verdict == "differs"


@pytest.mark.slow
def test_a_figure_on_the_first_rows_says_so_in_its_stamp():
    """The primer's aggregator and smooth-sensitivity figures use the first rows of a vote matrix: their stamp says
    how many of how many (reduced scale); on the whole matrix, the plain stamp."""
    rows = primer.load_votes("mnist", data="synthetic", n_rows=50, seed=0)
    total = rows.n_available
    assert rows.dataset == "mnist" and total > 50 and rows.stamp() == rows.source.stamp()
    assert rows.reduced_stamp(30) == f"{rows.stamp()}; reduced scale: the first 30 of the {total:,} mnist queries"
    assert rows.reduced_stamp(10**6).endswith(f"the first 50 of the {total:,} mnist queries")  # only rows loaded
    whole = primer.load_votes("mnist", data="synthetic", n_rows=total, seed=0)
    assert whole.reduced_stamp(total) == whole.stamp()


def test_least_unanimous_query_and_the_neighbouring_histograms():
    counts = np.array([[9, 1], [6, 4], [5, 5], [7, 3]])
    assert primer.least_unanimous_query(counts) == 2
    table = primer.neighbouring_histograms([5, 3, 2], from_class=0, to_class=1)
    assert table.loc["n(D)"].tolist() == [5, 3, 2] and table.loc["n(D')"].tolist() == [4, 4, 2]
    with pytest.raises(ValueError, match="^counts: expected a non-empty 2-D array"):
        primer.least_unanimous_query(np.array([3, 4]))


@pytest.mark.slow
def test_votes_notice_says_visibly_when_the_real_votes_cannot_be_had(monkeypatch):
    """The lab prepares the votes itself; when that fails the notice names the reason and the fix, and the rows
    are the stamped stand-in (never presented as real)."""
    import data_recipes
    from pate_study.data import pate2018

    def unavailable(name, network=True):
        raise data_recipes.NotAvailableError(f"{name}: network unavailable (test)")

    monkeypatch.setattr(data_recipes, "prepare", unavailable)
    monkeypatch.setattr(pate2018, "resolve_source", lambda name, data="auto": None)
    rows = primer.load_votes("mnist", data="auto", n_rows=50, seed=0, prepare=True)
    assert rows.source.kind == "synthetic" and rows.counts.shape == (50, 10)
    assert "SYNTHETIC" in rows.notice and "network unavailable (test)" in rows.notice
    # the fixes it names work in the lab's light venv (no torch): a copy beside the notebook, the recipe's command
    assert (
        "pate2018-votes/" in rows.notice
        and primer.PREPARE_VOTES in rows.notice
        and "make data-votes" not in rows.notice
    )
    asked = primer.load_votes("mnist", data="synthetic", n_rows=5, seed=0, prepare=True)
    assert "you asked for it" in asked.notice


def test_lnmax_privacy_loss_is_bounded_by_two_gamma_with_the_kl_mean():
    gamma = 0.3
    loss = primer.lnmax_privacy_loss_samples(gamma, n_samples=200_000, seed=1)
    assert np.abs(loss).max() <= 2 * gamma + 1e-12
    assert np.isclose(loss.max(), 2 * gamma) and np.isclose(loss.min(), -2 * gamma)  # atoms at ±2γ are reached
    assert loss.mean() == pytest.approx(primer.lnmax_privacy_loss_mean(gamma), abs=5 * 2 * gamma / np.sqrt(loss.size))


def test_gaussian_tight_delta_against_the_issue_value_and_the_privacy_profile():
    """Balle & Wang 2018 Thm 8 at σ = Δ = ε = 1 is 0.127 (the loss tail alone is 0.309); it equals
    E[(1 − e^{ε − ℓ})₊] under M(D), computed here by quadrature."""
    from scipy import integrate, stats

    assert primer.gaussian_tight_delta(1.0, sigma=1.0) == pytest.approx(0.1269, abs=1e-4)
    assert primer.gaussian_loss_tail(1.0, sensitivity=1.0, sigma=1.0) == pytest.approx(0.3085, abs=1e-4)
    for eps, sigma in [(0.5, 2.0), (2.0, 0.7)]:

        def integrand(x):
            loss = ((x - 1.0) ** 2 - x**2) / (2 * sigma**2)
            return stats.norm.pdf(x, 0.0, sigma) * max(0.0, 1 - np.exp(eps - loss))

        exact, _ = integrate.quad(integrand, -50, 50, limit=200)
        assert primer.gaussian_tight_delta(eps, sigma=sigma) == pytest.approx(exact, rel=1e-6, abs=1e-12)
    assert primer.classic_gaussian_sigma(0.5, 1e-5) == pytest.approx(np.sqrt(2 * np.log(1.25e5)) / 0.5)


def test_sliders_degrade_to_one_static_figure_outside_an_interactive_kernel(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from pate_study.tooling import sliders

    shown = []
    monkeypatch.setattr(sliders, "display", shown.append)
    drawn = []
    sliders.slider_plot(
        lambda epsilon: drawn.append(epsilon) or sliders.laplace_neighbours(epsilon), epsilon=(0.1, 3.0, 0.1, 1.0)
    )
    assert drawn == [1.0] and len(shown) == 1  # one figure at the starting value, no widget
    monkeypatch.setenv("PATE_STUDY_RUNNER", "paper")
    monkeypatch.setattr(sliders, "in_kernel", lambda: True)
    assert not sliders.widgets_available()  # the runner's kernel: static, so the executed copy shows the figure
    with pytest.raises(ValueError, match="slider sigma"):
        sliders.slider_plot(sliders.gaussian_neighbours, sigma=(1.0, 4.0, 0.1, 5.0))
    for fig in (sliders.lnmax_answer(np.array([5, 3, 2]), 0.1), sliders.gaussian_neighbours(2.0)):
        assert fig.axes


def test_aggregator_comparison_plots_the_guarantee_of_its_run_and_labels_the_expected_cost():
    rng = np.random.default_rng(5)
    counts = rng.multinomial(250, [0.7, *[0.3 / 9] * 9], size=60)
    kw = dict(threshold=200.0, sigma1=150.0, sigma2=40.0, delta=1e-5)
    settings = primer.AggregatorSettings(gamma=0.05, sigma=40.0, seed=3, **kw)
    table = primer.aggregator_comparison(counts, settings, n_points=3)
    last = table.iloc[-1]
    run = aggregators.confident_gnmax(counts, 200.0, 150.0, 40.0, np.random.default_rng(3))
    assert last["confident_answered"] == run.n_answered
    assert (
        last["confident_gnmax_realised"] == confident_gnmax_epsilon(votes=counts, answered=run.answered, **kw).epsilon
    )
    assert (
        last["confident_gnmax_expected"]
        == confident_gnmax_epsilon(votes=counts, cost="expected", **kw).expected_epsilon
    )


def test_load_votes_names_the_notebook_parameter_that_asked_for_no_rows():
    """Lab 07 passes its n_queries as the rows to load: a count below 1 names n_queries, not an internal name."""
    with pytest.raises(ValueError, match=r"^n_queries: expected at least 1 vote row, got -5"):
        primer.load_votes("mnist", data="synthetic", n_rows=-5, seed=0, rows_name="n_queries")
    with pytest.raises(ValueError, match=r"^votes_queries: "):
        primer.load_votes("mnist", data="synthetic", n_rows=0, seed=0)


def test_a_copy_of_the_released_votes_beside_the_lab_is_prepared_without_the_network(tmp_path, monkeypatch):
    """A lecturer copies the mirror's ``pate2018-votes/`` into the students' folder: the lab prepares it (checksums
    verified) with the network off and no mirror set, and the mirror variable is left as it was."""
    import shutil

    import data_recipes
    from data_recipes import framework
    from pate_study.core.env import MIRROR_ENV

    mirror = os.environ.get(MIRROR_ENV, "")
    source = Path(mirror) / "pate2018-votes" if mirror else None
    if source is None or not source.is_dir():
        pytest.skip("needs the released votes in $PATE_STUDY_MIRROR/pate2018-votes")
    students = tmp_path / "labs"
    shutil.copytree(source, students / "pate2018-votes")
    monkeypatch.setenv("PATE_STUDY_DATA", str(tmp_path / "data"))
    monkeypatch.delenv(MIRROR_ENV)

    def no_network(*args, **kwargs):
        raise AssertionError("the network was used although the votes were copied beside the lab")

    monkeypatch.setattr(framework, "download", no_network)
    rows = primer.load_votes("mnist", data="auto", n_rows=640, seed=0, prepare=True, students_folder=students)
    assert rows.source.kind == "real" and rows.counts.shape == (640, 10) and "real" in rows.notice
    assert MIRROR_ENV not in os.environ and data_recipes.get_recipe("pate2018-votes").is_prepared()
    (students / "pate2018-votes" / "mnist_250_teachers.npy").write_bytes(b"not the released file")
    monkeypatch.setenv("PATE_STUDY_DATA", str(tmp_path / "data-2"))
    monkeypatch.setattr(framework, "download", lambda *a, **k: (_ for _ in ()).throw(OSError("offline (test)")))
    broken = primer.load_votes("mnist", data="auto", n_rows=5, seed=0, prepare=True, students_folder=students)
    assert broken.source.kind == "synthetic" and "the copy in pate2018-votes/" in broken.notice
