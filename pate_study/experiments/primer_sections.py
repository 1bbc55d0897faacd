"""The primer's sections (notebook 00) and the second lab's (notebook 07), one call each: every figure and table
saved, every scalar recorded through the notebook's :class:`~pate_study.reporting.outputs.NotebookOutputs`, and
what the cell shows returned. The computations are in :mod:`pate_study.experiments.primer` and
:mod:`pate_study.experiments.pate2018_lab`; the exercises' checks in :mod:`pate_study.tooling.exercises`."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pate_study.experiments import pate2018_lab, primer
from pate_study.privacy import smooth_sensitivity as ss
from pate_study.reporting.outputs import NotebookOutputs, show_findings
from pate_study.reporting.plots import compact_ticks, hist_with_atoms, save_and_show
from pate_study.reporting.session import run_by_runner

#: One colour per mechanism across the primer's figures.
COLOR = {
    "Laplace": "tab:blue",
    "Gaussian": "tab:orange",
    "LNMax": "tab:blue",
    "GNMax": "tab:orange",
    "confident GNMax": "tab:green",
    "bound": "tab:red",
    "neutral": "tab:gray",
}
#: The stamp of a figure computed from formulas only.
ANALYTIC = "analytic (no data)"


def load_votes(
    dataset: str, *, data: str, n_rows: int, seed: int, prepare: bool, rows_name: str = "votes_queries"
) -> primer.VoteRows:
    """The first ``n_rows`` votes of one PATE 2018 vote matrix (:func:`primer.load_votes`), their notice shown. With
    ``prepare`` (a lab in JupyterLab), a copy of the released files in ``pate2018-votes/`` beside the notebook (the
    kernel's working folder) is tried first."""
    votes = primer.load_votes(
        dataset,
        data=data,
        n_rows=n_rows,
        seed=seed,
        prepare=prepare,
        rows_name=rows_name,
        students_folder=Path.cwd() if prepare else None,
    )
    show_findings(votes.notice)
    return votes


def lab2_votes(config: pate2018_lab.Lab2Config, *, data: str, seed: int) -> tuple[primer.VoteRows, np.ndarray]:
    """The second lab's votes: the first ``config.n_queries`` rows of ``config.votes_dataset`` (:func:`load_votes`,
    the released files beside the notebook tried first when a student runs it, not the runner), and their count
    matrix, the ``votes`` the exercises read (one row per query, one column per class)."""
    rows = load_votes(
        config.votes_dataset,
        data=data,
        n_rows=config.n_queries,
        seed=seed,
        prepare=not run_by_runner(),
        rows_name="n_queries",
    )
    return rows, rows.counts


# ------------------------------------------------------------------------------------------------ notebook 00


def laplace_densities_section(out: NotebookOutputs) -> None:
    """Visca 2021 Fig. 2.4: the Laplace densities of the Wikipedia figure it reproduces (analytic)."""
    densities = primer.laplace_densities(np.linspace(-10, 10, 801))
    fig, ax = plt.subplots()
    for (mu, b), curve in densities.groupby(["mu", "b"], sort=False):
        ax.plot(curve["x"], curve["density"], label=f"μ = {mu:g}, b = {b:g}")
    ax.set(xlabel="x", ylabel="Lap(x | μ, b)", title="Laplace densities (analytic)")
    ax.legend(fontsize=9)
    save_and_show(fig, "visca2021-fig2.4", out, data=ANALYTIC)


def laplace_ratio_section(out: NotebookOutputs, *, epsilon: float = 1.0, sensitivity: float = 1.0) -> None:
    """The Laplace mechanism on neighbours f(D) = 0, f(D') = Δ and its log density ratio, bounded by ±ε = ±Δ/b
    (Dwork & Roth 2014, Theorem 3.6); the largest |log ratio| recorded."""
    b = sensitivity / epsilon
    x = np.linspace(-6, 7, 801)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax1.plot(x, np.exp(-np.abs(x) / b) / (2 * b), color=COLOR["Laplace"], label="M(D): f(D) + Lap(b), f(D) = 0")
    ax1.plot(
        x,
        np.exp(-np.abs(x - sensitivity) / b) / (2 * b),
        color=COLOR["Laplace"],
        ls="--",
        label=f"M(D'): f(D') = Δ = {sensitivity:g}",
    )
    ax1.set(xlabel="output x", ylabel="density", title="Laplace mechanism on neighbours (analytic)")
    ax1.legend(fontsize=9)
    ratio = primer.laplace_log_ratio(x, sensitivity=sensitivity, scale=b)
    ax2.plot(x, ratio, color=COLOR["Laplace"], label="log p_D(x)/p_D'(x)")
    ax2.axhline(epsilon, ls="--", color=COLOR["bound"], label="±ε = ±Δ/b")
    ax2.axhline(-epsilon, ls="--", color=COLOR["bound"])
    ax2.set(
        xlabel="output x",
        ylabel="log density ratio",
        ylim=(-2.5 * epsilon, 2.5 * epsilon),
        title="bounded by ε everywhere",
    )
    ax2.legend(fontsize=9)
    fig.tight_layout()
    save_and_show(fig, "pate_study-primer-laplace-ratio", out, data=ANALYTIC)
    out.record(
        "pate_study-primer-laplace-ratio",
        epsilon=epsilon,
        max_abs_log_ratio=float(np.abs(ratio).max()),
        summary="Laplace log density ratio stays within ±ε = ±Δ/b",
    )


def pate_picture_section(votes: primer.VoteRows, query: int, *, gamma: float, seed: int, out: NotebookOutputs) -> None:
    """One LNMax answer drawn in full (Papernot et al. 2017, §2.1): the teachers' votes on ``query``, the noisy
    counts n_j + Lap(1/γ) and the released label; the plurality and the released label recorded."""
    one = primer.noisy_votes(votes.counts[query], gamma=gamma, seed=seed)
    winner = int(one["noisy"].idxmax())
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.bar(one["class"] - 0.2, one["votes"], width=0.4, color=COLOR["neutral"], label="teacher votes n_j")
    ax.bar(one["class"] + 0.2, one["noisy"], width=0.4, color=COLOR["LNMax"], label=f"n_j + Lap(1/γ), γ = {gamma:g}")
    top = max(one["votes"].max(), one["noisy"].max())
    ax.set_ylim(min(0, one["noisy"].min() * 1.2), 1.35 * top)
    ax.annotate(
        "released label",
        (winner + 0.2, one["noisy"].max()),
        xytext=(0, 0.2 * top),
        textcoords="offset points",
        ha="center",
        fontsize=10,
        color=COLOR["bound"],
        arrowprops={"arrowstyle": "-|>", "color": COLOR["bound"], "lw": 1.5},
    )
    ax.set(
        xlabel="class j",
        ylabel="count",
        xticks=one["class"],
        title=f"One LNMax answer: query {query}, {votes.kind_label} {votes.dataset} votes",
    )
    ax.legend(fontsize=9, loc="upper left")
    save_and_show(fig, "pate_study-primer-pate-picture", out, data=votes.stamp())
    out.record(
        "pate_study-primer-pate-picture",
        query=query,
        plurality=int(one["votes"].idxmax()),
        released=winner,
        summary="one LNMax answer drawn in full",
    )


def privacy_loss_section(*, gamma: float, loss_samples: int, seed: int, out: NotebookOutputs) -> None:
    """The privacy-loss random variable of LNMax's noisy histogram (Visca 2021 Eq. 4.2), simulated: |ℓ| ≤ 2γ, its
    mean beside the closed-form KL divergence; recorded under ``laplace_mechanism``."""
    epsilon = 2 * gamma
    loss = primer.lnmax_privacy_loss_samples(gamma, n_samples=loss_samples, seed=seed)
    fig, ax = plt.subplots()
    hist_with_atoms(ax, loss, [-epsilon, 0.0, epsilon], color=COLOR["LNMax"], atom_color=COLOR["bound"])
    compact_ticks(ax, "x")
    kl = primer.lnmax_privacy_loss_mean(gamma)
    ax.axvline(loss.mean(), color="k", label=f"mean {loss.mean():.5f} (KL: {kl:.5f})")
    ax.set(
        xlabel="privacy loss ℓ(o)",
        ylabel="density",
        title=f"Privacy loss of LNMax's noisy histogram, γ = {gamma:g}: |ℓ| ≤ 2γ (simulated, no data)",
    )
    ax.legend(fontsize=9)
    stamp = f"simulated: {loss_samples:,} two-coordinate Laplace draws, seed {seed}"
    save_and_show(fig, "pate_study-primer-privacy-loss", out, data=stamp)
    out.record(
        "laplace_mechanism",
        epsilon=epsilon,
        max_abs_privacy_loss=float(np.abs(loss).max()),
        empirical_loss_mean=float(loss.mean()),
        theoretical_loss_mean=kl,
    )


def gaussian_section(out: NotebookOutputs, *, eps_grid=(0.5, 1.0, 2.0, 4.0)) -> pd.DataFrame:
    """Muschiol 2021 Fig. 2.3: the Gaussian mechanism's output densities on neighbours and its unbounded privacy
    loss beside Laplace's; the sufficient δ = Pr[ℓ > ε] and the tight δ (Balle & Wang 2018, Theorem 8) at σ = Δ = 1
    recorded under ``gaussian_mechanism`` and returned as a table."""
    x = np.linspace(-4, 5, 601)
    neighbours = primer.neighbouring_output_densities(x, f_d=0.0, f_d_prime=1.0, sigma=1.0)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for (name, curve), ls in zip(neighbours.groupby("dataset", sort=False), ["-", "--"]):
        ax1.plot(curve["x"], curve["density"], color=COLOR["Gaussian"], ls=ls, label=name)
    ax1.set(xlabel="mechanism output", ylabel="density", title="Output distributions on neighbouring data sets")
    ax1.legend(fontsize=9)
    gauss = primer.gaussian_log_ratio(x, f_d=0.0, f_d_prime=1.0, sigma=1.0)
    laplace = primer.laplace_log_ratio(x, sensitivity=1.0, scale=1.0)
    ax2.plot(x, gauss, color=COLOR["Gaussian"], label="Gaussian, σ = 1: unbounded")
    ax2.plot(x, laplace, color=COLOR["Laplace"], label="Laplace, b = 1: within ±1")
    ax2.axhline(1.0, ls="--", color=COLOR["bound"], lw=1, label="ε = 1")
    ax2.set(xlabel="mechanism output", ylabel="log p_D(x)/p_D'(x)", title="Privacy loss at each output (analytic)")
    ax2.legend(fontsize=9)
    fig.tight_layout()
    save_and_show(fig, "muschiol2021-fig2.3", out, data=ANALYTIC)
    tails = {f"{e:g}": primer.gaussian_loss_tail(e, sensitivity=1.0, sigma=1.0) for e in eps_grid}
    tight = {f"{e:g}": primer.gaussian_tight_delta(e, sigma=1.0, sensitivity=1.0) for e in eps_grid}
    out.record(
        "gaussian_mechanism",
        loss_tail_probability=tails,
        tight_delta=tight,
        log_ratio_range=[float(gauss.min()), float(gauss.max())],
    )
    return pd.DataFrame({"Pr[ℓ > ε] (sufficient δ)": tails, "tight δ": tight}).rename_axis("ε (σ = Δ = 1)")


def moments_bound_section(
    *, gamma: float, delta: float, n_queries: int, max_integer_order: int, out: NotebookOutputs
) -> primer.MgfBoundCurve:
    """MAKE 2021 Fig. 5 = Visca 2021 Fig. 4.8: the data-independent bound (2Qγ²λ(λ+1) + ln(1/δ))/λ over λ, its
    continuous and integer-order minima; recorded with the analytic verdict (:func:`primer.fig5_verdict`)."""
    fig5 = primer.mgf_bound_curve(gamma=gamma, delta=delta, n_queries=n_queries, max_integer_order=max_integer_order)
    continuous, integer = fig5.continuous, fig5.integer_orders
    fig, ax = plt.subplots()
    ax.plot(continuous["order"], continuous["epsilon"], color=COLOR["LNMax"], label="(2Qγ²λ(λ+1) + ln(1/δ))/λ")
    ax.plot(
        integer["order"],
        integer["epsilon"],
        "o",
        color=COLOR["neutral"],
        label=f"integer orders (2017 reference code): min {fig5.epsilon_integer:.4f} at λ = {fig5.order_integer}",
    )
    ax.plot(
        [fig5.lambda_star],
        [fig5.epsilon_star],
        "*",
        ms=14,
        color=COLOR["bound"],
        label=f"ε* = {fig5.epsilon_star:.4f} at λ* = {fig5.lambda_star:.5f}",
    )
    ax.set(
        xlabel="moments order λ",
        ylabel="ε bound",
        ylim=(0, 60),
        title=f"Data-independent ε, Q = {n_queries}, γ = {gamma:g}, δ = {delta:g} (analytic)",
    )
    ax.legend(fontsize=9)
    save_and_show(fig, ["make2021-fig5", "visca2021-fig4.8"], out, data=ANALYTIC)
    verdict = primer.fig5_verdict(fig5)
    out.record(
        "make2021-fig5",
        epsilon_star=fig5.epsilon_star,
        lambda_star=fig5.lambda_star,
        epsilon_integer_orders=fig5.epsilon_integer,
        order_integer=fig5.order_integer,
        basic_composition=2 * n_queries * gamma,
        **verdict.as_record(),
    )
    out.record("visca2021-fig4.8", epsilon_star=fig5.epsilon_star, lambda_star=fig5.lambda_star, **verdict.as_record())
    return fig5


def grid_comparison_section(*, gamma: float, max_integer_order: int, out: NotebookOutputs) -> pd.DataFrame:
    """The same bound minimised over continuous λ and over λ = 1..L in the ECG setting (Q = 900, δ = 1e-6);
    recorded under ``grid_comparison``."""
    ecg_setting = primer.grid_comparison(gamma=gamma, delta=1e-6, n_queries=900, max_integer_order=max_integer_order)
    out.record("grid_comparison", ecg_setting=ecg_setting)
    return pd.DataFrame(ecg_setting, index=["ECG setting (Q = 900, δ = 1e-6)"])


def moments_vs_rdp_section(
    votes: primer.VoteRows, *, n_queries: int, gamma: float, max_integer_order: int, out: NotebookOutputs
) -> pd.DataFrame:
    """The 2017 log-MGF over λ beside the 2018 RDP at α = λ + 1 on the first ``n_queries`` votes
    (:func:`primer.moments_vs_rdp`): equal; their largest difference recorded under ``moments_vs_rdp``."""
    table = primer.moments_vs_rdp(votes.counts[:n_queries], gamma=gamma, max_moment=max_integer_order)
    difference = (table["logmgf_over_lambda"] - table["rdp_at_lambda_plus_1"]).abs().max()
    out.record("moments_vs_rdp", max_abs_difference=float(difference), n_queries=int(min(n_queries, len(votes.counts))))
    return table


def aggregators_section(
    votes: primer.VoteRows,
    *,
    n_queries: int,
    gamma: float,
    sigma: float,
    threshold: float,
    sigma1: float,
    sigma2: float,
    delta: float,
    seed: int,
    out: NotebookOutputs,
) -> pd.DataFrame:
    """LNMax, GNMax and confident GNMax on the same first ``n_queries`` votes (:func:`primer.aggregator_comparison`):
    ε after Q queries and the released labels' agreement with the plurality; the figure is stamped with the rows it
    used (fewer than the whole vote matrix: reduced scale). Returns the table."""
    settings = primer.AggregatorSettings(gamma, sigma, threshold, sigma1, sigma2, delta, seed)
    compare = primer.aggregator_comparison(votes.counts[:n_queries], settings)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
    curves = [
        ("lnmax_independent", "LNMax", "--", f"LNMax γ = {gamma:g}, data-independent (moments, continuous λ)"),
        ("lnmax_moments_2017", "LNMax", "-", "LNMax, data-dependent (2017 moments, λ ≤ 8)"),
        ("gnmax_independent", "GNMax", "--", f"GNMax σ = {sigma:g}, data-independent (RDP)"),
        ("gnmax_dependent", "GNMax", "-", "GNMax, data-dependent (RDP)"),
        (
            "confident_gnmax_realised",
            "confident GNMax",
            "-",
            f"confident GNMax T = {threshold:g}, σ1 = {sigma1:g}, σ2 = {sigma2:g}, run of seed {seed}",
        ),
        (
            "confident_gnmax_expected",
            "confident GNMax",
            ":",
            "confident GNMax, expected cost (Table 2; not a guarantee)",
        ),
    ]
    for col, mech, ls, label in curves:
        ax1.plot(compare["n_queries"], compare[col], marker="o", ms=3, ls=ls, color=COLOR[mech], label=label)
    ax1.set(
        xscale="log",
        xlabel="student queries Q",
        ylabel=f"ε (δ = {delta:g})",
        ylim=(0, None),
        title=f"ε after Q queries ({votes.kind_label} {votes.dataset} votes)",
    )
    ax1.legend(fontsize=9)
    agreement = [
        ("lnmax_label_agreement", "LNMax"),
        ("gnmax_label_agreement", "GNMax"),
        ("confident_label_agreement", "confident GNMax"),
    ]
    for col, mech in agreement:
        label = mech + (" (answered only)" if mech.startswith("confident") else "")
        ax2.plot(compare["n_queries"], compare[col], marker="o", ms=3, color=COLOR[mech], label=label)
    ax2.set(
        xscale="log",
        xlabel="student queries Q",
        ylabel="released label = plurality",
        ylim=(0, 1.02),
        title=f"Label quality, seed {seed} ({votes.kind_label} votes)",
    )
    ax2.legend(fontsize=9, loc="lower left")
    fig.tight_layout()
    stamp = votes.reduced_stamp(n_queries)
    save_and_show(fig, "pate_study-primer-aggregators", out, data=stamp)
    last = compare.iloc[-1]
    out.record(
        "votes",
        dataset=votes.dataset,
        source=stamp,
        n_queries=int(last["n_queries"]),
        epsilon_dependent=float(last["lnmax_moments_2017"]),
        epsilon_independent=float(last["lnmax_independent"]),
    )
    out.record(
        "pate_study-primer-aggregators",
        **{k: (float(v) if k != "n_queries" else int(v)) for k, v in last.items()},
        gnmax_rdp_one_answer={alpha: alpha / sigma**2 for alpha in (2, 8, 32)},
        summary="LNMax vs GNMax vs confident GNMax on the same votes",
    )
    return compare


def smooth_sensitivity_section(
    votes: primer.VoteRows,
    *,
    n_queries: int,
    sigma: float,
    order: float,
    beta: float,
    sigma_ss: float,
    delta: float,
    n_draws: int,
    seed: int,
    out: NotebookOutputs,
) -> pd.Series:
    """GNMax's data-dependent ε on the first ``n_queries`` votes released with smooth sensitivity (Papernot et al.
    2018, App. B; :func:`~pate_study.privacy.smooth_sensitivity.smooth_sensitivity_release`, its noise drawn from
    ``seed``): the spread of the released ε (:func:`primer.released_epsilon_draws`, from ``seed + 1``) beside the
    unpublishable data-dependent value; the figure is stamped with the rows it used. Returns the release's
    numbers."""
    counts = votes.counts[:n_queries]
    release = ss.smooth_sensitivity_release(
        counts, int(counts[0].sum()), sigma, order, beta, sigma_ss, delta, np.random.default_rng(seed)
    )
    released = primer.released_epsilon_draws(release, n_draws=n_draws, seed=seed + 1)
    unpublishable = release.rdp_data_dependent - np.log(delta) / (release.order - 1)
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.hist(released, bins=60, color=COLOR["GNMax"], alpha=0.75, label=f"released ε, {n_draws} draws of the GNSS noise")
    ax.axvline(
        unpublishable,
        color=COLOR["bound"],
        lw=2,
        label=f"data-dependent ε at α = {release.order:g}: {unpublishable:.3f} (not publishable)",
    )
    ax.axvline(
        release.expected_epsilon,
        color="k",
        ls="--",
        label=f"expected release {release.expected_epsilon:.3f} ± {release.epsilon_std:.3f}",
    )
    ax.set_ylim(top=1.45 * ax.get_ylim()[1])
    ax.set(
        xlabel="ε",
        ylabel="draws",
        title=f"Smooth-sensitivity release, GNMax σ = {sigma:g}, {len(counts)} queries ({votes.kind_label} votes)",
    )
    ax.legend(fontsize=9)
    save_and_show(fig, "pate_study-primer-smooth-sensitivity", out, data=votes.reduced_stamp(n_queries))
    out.record(
        "pate_study-primer-smooth-sensitivity",
        epsilon_data_dependent=float(unpublishable),
        expected_epsilon=release.expected_epsilon,
        epsilon_std=release.epsilon_std,
        rdp_gnss=release.rdp_gnss,
        smooth_sensitivity=release.smooth_sensitivity,
        order=release.order,
        summary="data-dependent ε released with GNSS noise",
    )
    return pd.Series(release.to_dict())


def local_dp_section(rhos, *, n_samples: int, seed: int, out: NotebookOutputs) -> pd.DataFrame:
    """The student's local Laplace randomiser on unit-l1 vectors (MAKE 2021; Visca 2021 §4.2.2): claimed ε = 2ρ,
    audited lower bounds and the noise per coordinate (:func:`primer.local_dp_table`); recorded under
    ``local_dp``. Returns the table."""
    local = primer.local_dp_table(rhos, n_samples=n_samples, seed=seed)
    fig, ax1 = plt.subplots()
    ax1.plot(local["rho"], local["epsilon"], marker="o", color=COLOR["Laplace"], label="claimed ε = 2ρ")
    ax1.plot(
        local["rho"],
        local["epsilon_audited_lower_bound"],
        marker="x",
        ls="",
        ms=9,
        color=COLOR["bound"],
        label="audited lower bound",
    )
    ax1.set(
        xlabel="ρ", ylabel="ε", ylim=(0, None), title="Curator B's Laplace randomiser on unit-l1 vectors (simulated)"
    )
    ax2 = ax1.twinx()
    ax2.plot(local["rho"], local["noise_std"], color=COLOR["neutral"], ls=":", label="noise std √2/ρ per coordinate")
    ax2.set(ylabel="noise standard deviation", ylim=(0, None))
    ax2.grid(False)
    ax1.legend(loc="upper left", fontsize=9)
    ax2.legend(loc="upper right", fontsize=9)
    save_and_show(fig, "pate_study-primer-local-dp", out, data=f"simulated: {n_samples:,} draws per audit, seed {seed}")
    out.record("local_dp", rows=local.to_dict("records"))
    return local


def audit_section(*, gamma: float, n_trials: int, confidence: float, seed: int, out: NotebookOutputs) -> pd.DataFrame:
    """Empirical lower bounds on ε for LNMax, correct and broken, and the primer's other mechanisms
    (:func:`primer.audit_table`); recorded under ``audit``, saved as a table. Returns the table."""
    audit = primer.audit_table(gamma=gamma, n_trials=n_trials, confidence=confidence, seed=seed)
    lnmax_row, broken_row = audit.iloc[0], audit.iloc[1]
    out.record(
        "audit",
        lnmax_lower_bound=lnmax_row["epsilon_lower_bound"],
        lnmax_claimed=lnmax_row["epsilon_claimed"],
        broken_lower_bound=broken_row["epsilon_lower_bound"],
        broken_claimed=broken_row["epsilon_claimed"],
        confidence=confidence,
        trials=n_trials,
    )
    out.save_table(
        audit.reset_index(names="audit"),
        "pate_study-primer-audit",
        data=f"simulated: {n_trials:,} trials per neighbour (LNMax rows), seed {seed}",
    )
    return audit


# ------------------------------------------------------------------------------------------------ notebook 07


def answered_section(
    votes: primer.VoteRows,
    *,
    threshold: float,
    sigma1: float,
    sigma2: float,
    n_runs: int,
    seed: int,
    out: NotebookOutputs,
) -> None:
    """Confident GNMax's answered queries over ``n_runs`` runs of the noisy check beside the expected count
    Σ_i Φ((max_j n_ij − T)/σ1) (Papernot et al. 2018, Algorithm 1); recorded under ``pate_study-lab2-answered``."""
    counts = votes.counts
    runs = pate2018_lab.realised_answered(
        counts, threshold=threshold, sigma1=sigma1, sigma2=sigma2, n_runs=n_runs, seed=seed
    )
    expected = pate2018_lab.expected_answered(counts, threshold=threshold, sigma1=sigma1)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.hist(runs, bins=max(5, n_runs // 2), color="tab:green", alpha=0.8, label=f"{n_runs} runs of the noisy check")
    ax.axvline(expected, color="k", ls="--", label=f"expected {expected:.1f}")
    ax.set(
        xlabel="answered queries",
        ylabel="runs",
        title=f"Confident GNMax, T = {threshold:g}, σ1 = {sigma1:g}, "
        f"{len(counts)} {votes.kind_label} {votes.dataset} queries",
    )
    ax.legend(fontsize=9)
    save_and_show(fig, "pate_study-lab2-answered", out, data=votes.stamp())
    out.record(
        "pate_study-lab2-answered",
        expected=expected,
        runs_mean=float(runs.mean()),
        runs_std=float(runs.std(ddof=1)),
        runs_min=int(runs.min()),
        runs_max=int(runs.max()),
        n_queries=len(counts),
    )


def conversions_section(
    votes: primer.VoteRows, *, threshold: float, sigma1: float, sigma2: float, delta: float, out: NotebookOutputs
) -> pd.DataFrame:
    """Confident GNMax's ε, data-dependent and data-independent, basic and improved conversions
    (:func:`pate2018_lab.conversions`); saved and recorded under ``pate_study-lab2-conversions``."""
    table = pate2018_lab.conversions(votes.counts, threshold=threshold, sigma1=sigma1, sigma2=sigma2, delta=delta)
    out.save_table(table, "pate_study-lab2-conversions", data=votes.stamp())
    out.record("pate_study-lab2-conversions", **{f"{r.analysis}_{r.conversion}": r.epsilon for r in table.itertuples()})
    return table


def q_section(votes: primer.VoteRows, *, sigma: float, q_cutoff: float, out: NotebookOutputs) -> None:
    """Theorem 6's q for GNMax on every vote row (Papernot et al. 2018, Prop. 7), as log₁₀ q, the cutoff marked;
    the fraction below it recorded under ``pate_study-lab2-q``."""
    log_q = pate2018_lab.log10_q(votes.counts, sigma=sigma)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.hist(np.maximum(log_q, -30), bins=60, color="tab:orange")
    ax.axvline(np.log10(q_cutoff), color="tab:red", ls="--", label=f"q = {q_cutoff:g}")
    ax.set(
        xlabel="log₁₀ q (values below −30 drawn at −30)",
        ylabel="queries",
        title=f"Theorem 6's q, GNMax σ = {sigma:g}, {votes.kind_label} {votes.dataset} votes",
    )
    ax.legend(fontsize=9)
    save_and_show(fig, "pate_study-lab2-q", out, data=votes.stamp())
    out.record("pate_study-lab2-q", fraction_below_cutoff=float(np.mean(log_q < np.log10(q_cutoff))), cutoff=q_cutoff)
