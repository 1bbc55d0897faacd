"""The Audio Set target procedure, as pre-registered in ``configs/05_audioset_multilabel/target_protocol.yaml``.

The target this study set itself: a private student of mean test mAP ≥ 0.13 with ε ≤ 300 (δ = 10⁻⁸) for the whole
procedure, every release and every selection charged. The procedure (:func:`run_procedure`), per fresh teacher
ensemble and per execution, is Papernot & Steinke's random search (ICLR 2022, "Hyperparameter tuning with Renyi
differential privacy", §3: run one randomised algorithm Q a random number K of times, publish only the best run):

1. draw K from the protocol's distribution (the truncated negative binomial D_{η,γ}, their Definition 1) with the
   protocol's seed, independently of the data (:func:`draw_runs`);
2. each run draws one candidate setting uniformly from the protocol's candidate space, answers that setting's
   number of queries (chosen from public information only, :func:`choose_queries`) with its release mechanism
   (:func:`.release_frontier.frontier_labels`) on the ensemble's votes, and trains a student on the released labels (the
   teachers' recipe on its fixed schedule, kept at the last step; with the semi-supervised option a second student
   on every pool row, pseudo-labels on the unanswered ones: :mod:`.target_students`);
3. every run's student is scored on the **validation split**; the run with the highest validation mAP is
   published (ties: the earliest run).

Privacy (:func:`procedure_privacy`): one run Q is a mixture, with data-independent weights, of the candidates'
releases, followed by post-processing (the student, its validation score). Its RDP at each order is at most the
largest candidate's: for two mixtures with the same weights, exp((α − 1)·D_α) is a weighted sum of the components'
(each jointly convex in its pair: van Erven & Harremoës 2014, "Rényi divergence and Kullback-Leibler divergence",
Theorem 13), so D_α of the mixtures is at most the largest component's. Each candidate's curve is
data-independent (Gaussian mechanisms of fixed sensitivity, :func:`.release_frontier.frontier_spent`), so their maximum
holds for every pair of neighbouring datasets in both directions, what Papernot & Steinke's Theorem 2 needs. The
whole procedure is charged by :func:`pate_study.privacy.selection.random_stopping_spent` on that curve with the
protocol's distribution and E[K]. Beside it: the exact ε of one run (the largest candidate's exact Gaussian ε; a
mixture of (ε, δ)-DP mechanisms with data-independent weights is (ε, δ)-DP).

Reporting (:func:`report`): the selection is final before the reporting split's labels are opened
(:class:`.target_splits.SealedLabels` opens only with the :class:`FinalSelection` that :func:`run_procedure`
returns; :func:`run_procedure` takes no reporting label). Each published student is scored on the reporting split
and on ``n_boot`` resamples of its rows; the estimate is the mean over the G teacher ensembles of each ensemble's
mean over its executions, its interval the t-interval over the G ensemble means (G − 1 degrees of freedom: the
executions of one ensemble share its teachers, so they are not independent replicates of the teacher partition;
Cochran 1977, *Sampling Techniques*, §10.2) combined with the percentile bootstrap of the reporting rows
(:func:`pate_study.reporting.uncertainty.combined_interval`). *Met* only when the whole interval is at or above the
target mAP and the procedure's ε is at most the budget (:func:`target_verdict`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import yaml

from pate_study.core.paths import REPO_ROOT, resolve_from_root
from pate_study.experiments.audioset.release import ORDERS
from pate_study.experiments.audioset.release_frontier import frontier_labels, frontier_spent
from pate_study.experiments.audioset.students import bootstrap_map
from pate_study.experiments.audioset.target_splits import SealedLabels, TargetSplits, target_splits
from pate_study.experiments.audioset.target_students import StudentTask, self_training_tasks, stacked_students
from pate_study.experiments.audioset.teachers import TeacherSpec
from pate_study.learning import metrics
from pate_study.learning.semisupervised import LabelledPool
from pate_study.privacy import selection, topk_vote
from pate_study.privacy.accounting import OrderAtGridEdgeWarning, PrivacySpent, account
from pate_study.privacy.options import Accounting
from pate_study.reporting import uncertainty as unc
from pate_study.reporting.claims import Claim, judge
from pate_study.reporting.verdicts import Verdict, combine

logger = logging.getLogger(__name__)

#: how the answered queries are chosen from the query pool (data-independent, or from public features only)
QUERY_CHOICES = ("random", "diverse")
#: the distributions of K the procedure draws (Papernot & Steinke 2022, Definition 1; K >= 1 always)
K_DISTRIBUTIONS = ("truncated_negative_binomial",)
#: the random source "which runs and settings the procedure drew", named beside the seeds in the estimate
RANDOM_SEARCH = "random-search draws (number of runs K, each run's setting)"
#: what the estimate's bootstrap resamples
REPORTING_ROWS = "reporting-split examples"
#: the sources the target's estimate replicates (the ensembles are the clusters)
TARGET_SOURCES = (unc.TEACHER_SEED, unc.RELEASE_NOISE, unc.STUDENT_SEED, RANDOM_SEARCH)
#: the registry item the target is recorded under
TARGET_ITEM = "pate_study-audioset-target"
#: the keys of the protocol file, by section (every one required, no other accepted)
PROTOCOL_KEYS = {
    "target": ("map", "epsilon", "delta"),
    "splits": ("seed", "reporting_fraction", "validation_fraction"),
    "teachers": ("n_teachers", "min_ensembles", "replicate_seeds"),
    "candidates": None,
    "student": ("steps",),
    "charge": ("distribution", "eta", "expected_runs"),
    "procedure": ("seed", "executions_per_ensemble"),
    "reporting": ("n_boot", "seed"),
    "disclosure": None,
}
CANDIDATE_KEYS = ("mechanism", "k", "sigma_e", "th_e", "n_queries", "query_choice", "self_training")


# ----------------------------------------------------------------------------------------------- the protocol
@dataclasses.dataclass(frozen=True)
class Candidate:
    """One setting a run may draw: the release (``mechanism`` top-k or τ, ``k``, ``sigma_e`` on vote fractions,
    ``th_e``), the number of answered queries ``n_queries`` and how they are chosen (``query_choice``), and the
    semi-supervised step (``self_training``: None for none, else the share of the query pool the second student
    trains on, answered rows and the most confident pseudo-labelled ones: ``keep`` of
    :func:`pate_study.learning.semisupervised.self_training_set`)."""

    mechanism: str
    k: int
    sigma_e: float
    th_e: float
    n_queries: int
    query_choice: str = "random"
    self_training: float | None = None

    def __post_init__(self) -> None:
        if self.mechanism not in ("topk", "tau"):
            raise ValueError(f"mechanism={self.mechanism!r}: expected 'topk' or 'tau' (the target's candidates)")
        if self.query_choice not in QUERY_CHOICES:
            raise ValueError(f"query_choice={self.query_choice!r}: expected one of {QUERY_CHOICES}")
        if int(self.n_queries) < 10 or int(self.k) < 1 or not float(self.sigma_e) > 0:
            raise ValueError(f"candidate {self.label()}: expected n_queries >= 10, k >= 1 and sigma_e > 0")
        if self.self_training is not None and not 0.0 < float(self.self_training) <= 1.0:
            raise ValueError(f"self_training={self.self_training!r}: expected null or a share of pool rows in (0, 1]")

    @property
    def release(self) -> dict:
        """The release setting of :func:`.release_frontier.frontier_labels` and
        :func:`.release_frontier.frontier_spent`."""
        return {"mechanism": self.mechanism, "sigma_e": float(self.sigma_e), "k": int(self.k), "th_e": float(self.th_e)}

    def label(self) -> str:
        ssl = "" if self.self_training is None else f", self-training on {self.self_training:g} of the pool"
        return (
            f"{self.mechanism} k {self.k} σ_e {self.sigma_e:g} th_e {self.th_e:g}, {self.n_queries} "
            f"{self.query_choice} queries{ssl}"
        )


@dataclasses.dataclass(frozen=True)
class Protocol:
    """The pre-registered protocol (:func:`load_protocol`): the file (``path`` relative to the repository, its
    SHA-256 and the commit that last changed it) and every setting the confirming run reads."""

    path: str
    sha256: str
    commit: str
    target_map: float
    epsilon_max: float
    delta: float
    split_seed: int
    reporting_fraction: float
    validation_fraction: float
    n_teachers: int
    min_ensembles: int
    replicate_seeds: tuple[int, ...]
    candidates: tuple[Candidate, ...]
    student_steps: int
    distribution: str
    eta: float
    expected_runs: float
    procedure_seed: int
    executions_per_ensemble: int
    n_boot: int
    boot_seed: int
    disclosure: str

    def splits(self, n_eval: int, earlier_pool: Any) -> TargetSplits:
        """The eval clips cut by the protocol's split seed and fractions (:func:`.target_splits.target_splits`)."""
        return target_splits(
            n_eval,
            earlier_pool,
            reporting_fraction=self.reporting_fraction,
            validation_fraction=self.validation_fraction,
            seed=self.split_seed,
        )


def protocol_commit(path: Path) -> str:
    """The short hash of the last commit that changed ``path``, with ``+modified`` when the file differs from it
    (``uncommitted`` when no commit has it; ``unknown`` outside git)."""
    try:
        commit = subprocess.run(
            ["git", "log", "-1", "--format=%h", "--", str(path)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", str(path)], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    if not commit:
        return "uncommitted"
    return commit + ("+modified" if changed else "")


def _section(data: dict, name: str, where: str) -> Any:
    keys = PROTOCOL_KEYS[name]
    value = data.get(name)
    if keys is None:
        return value
    if not isinstance(value, dict) or set(value) != set(keys):
        have = sorted(value) if isinstance(value, dict) else repr(value)
        raise ValueError(f"{where}: section {name!r}: expected the keys {list(keys)}, got {have}")
    return value


def _candidates(entries: Any, where: str) -> tuple[Candidate, ...]:
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{where}: section 'candidates': expected a non-empty list of settings")
    out = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or set(e) != set(CANDIDATE_KEYS):
            have = sorted(e) if isinstance(e, dict) else repr(e)
            raise ValueError(f"{where}: candidates[{i}]: expected the keys {list(CANDIDATE_KEYS)}, got {have}")
        try:
            out.append(Candidate(**{k: e[k] for k in CANDIDATE_KEYS}))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: candidates[{i}]: {exc}") from None
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: candidates: a setting is listed twice")
    return tuple(out)


def _seeds(seeds: Any, minimum: int, where: str) -> tuple[int, ...]:
    if (
        not isinstance(seeds, list)
        or len(seeds) < minimum
        or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in seeds)
        or len(set(seeds)) != len(seeds)
    ):
        raise ValueError(
            f"{where}: teachers.replicate_seeds: expected at least {minimum} distinct non-negative integers, got "
            f"{seeds!r}"
        )
    return tuple(int(x) for x in seeds)


def load_protocol(path: Any) -> Protocol:
    """The protocol file (YAML; a relative path is taken from the repository root), checked: every section of
    :data:`PROTOCOL_KEYS` with exactly its keys, the candidates with :data:`CANDIDATE_KEYS`; a bad file is refused
    in one line naming it and the section. Records the file's SHA-256 and :func:`protocol_commit`."""
    full = resolve_from_root(path)
    try:
        raw = full.read_bytes()
    except OSError as exc:
        raise ValueError(f"target protocol {path}: unreadable ({exc.strerror or exc})") from None
    where = f"target protocol {path}"
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or set(data) != set(PROTOCOL_KEYS):
        have = sorted(data) if isinstance(data, dict) else repr(data)
        raise ValueError(f"{where}: expected the sections {list(PROTOCOL_KEYS)}, got {have}")
    s = {name: _section(data, name, where) for name in PROTOCOL_KEYS}
    if s["charge"]["distribution"] not in K_DISTRIBUTIONS:
        raise ValueError(f"{where}: charge.distribution: expected one of {K_DISTRIBUTIONS}")
    if not isinstance(s["disclosure"], str) or not s["disclosure"].strip():
        raise ValueError(f"{where}: section 'disclosure': expected the text of what earlier exploration informed")
    try:
        rel = str(full.relative_to(REPO_ROOT))
    except ValueError:
        rel = full.name
    return Protocol(
        path=rel,
        sha256=hashlib.sha256(raw).hexdigest(),
        commit=protocol_commit(full),
        target_map=float(s["target"]["map"]),
        epsilon_max=float(s["target"]["epsilon"]),
        delta=float(s["target"]["delta"]),
        split_seed=int(s["splits"]["seed"]),
        reporting_fraction=float(s["splits"]["reporting_fraction"]),
        validation_fraction=float(s["splits"]["validation_fraction"]),
        n_teachers=int(s["teachers"]["n_teachers"]),
        min_ensembles=int(s["teachers"]["min_ensembles"]),
        replicate_seeds=_seeds(s["teachers"]["replicate_seeds"], int(s["teachers"]["min_ensembles"]), where),
        candidates=_candidates(s["candidates"], where),
        student_steps=int(s["student"]["steps"]),
        distribution=str(s["charge"]["distribution"]),
        eta=float(s["charge"]["eta"]),
        expected_runs=float(s["charge"]["expected_runs"]),
        procedure_seed=int(s["procedure"]["seed"]),
        executions_per_ensemble=int(s["procedure"]["executions_per_ensemble"]),
        n_boot=int(s["reporting"]["n_boot"]),
        boot_seed=int(s["reporting"]["seed"]),
        disclosure=" ".join(s["disclosure"].split()),
    )


# ------------------------------------------------------------------------------------------ the query choice
def choose_queries(features: np.ndarray, n: int, how: str, seed: int) -> np.ndarray:
    """``n`` distinct rows of the query pool (sorted) to be answered, from public information only: ``"random"``, a
    uniform random subset (``numpy.random.default_rng(seed)``; data-independent); ``"diverse"``, greedy
    farthest-point (k-centre) sampling on the standardised public features from a random first row (Gonzalez 1985,
    "Clustering to minimize the maximum intercluster distance", Theor. Comput. Sci. 38; the core-set choice of
    Sener & Savarese 2018, ICLR, §4.2), which spreads the answered queries over the pool."""
    x = np.asarray(features, dtype=np.float64)
    n_pool, n = x.shape[0], int(n)
    if not 1 <= n <= n_pool:
        raise ValueError(f"n_queries={n}: expected between 1 and the {n_pool} rows of the query pool")
    if how not in QUERY_CHOICES:
        raise ValueError(f"query_choice={how!r}: expected one of {QUERY_CHOICES}")
    rng = np.random.default_rng(seed)
    if how == "random":
        return np.sort(rng.permutation(n_pool)[:n])
    z = (x - x.mean(0)) / np.maximum(x.std(0), 1e-12)
    chosen = np.empty(n, dtype=np.int64)
    chosen[0] = rng.integers(n_pool)
    dist = ((z - z[chosen[0]]) ** 2).sum(1)
    for i in range(1, n):
        chosen[i] = int(np.argmax(dist))
        dist = np.minimum(dist, ((z - z[chosen[i]]) ** 2).sum(1))
    return np.sort(chosen)


# ---------------------------------------------------------------------------------- the runs, drawn in advance
def k_distribution(protocol: Protocol) -> tuple[float, float]:
    """(η, γ) of the protocol's D_{η,γ}: γ solved for the protocol's E[K]
    (:func:`pate_study.privacy.selection.truncated_negative_binomial_gamma`)."""
    return protocol.eta, selection.truncated_negative_binomial_gamma(protocol.eta, protocol.expected_runs)


def sample_runs(rng: np.random.Generator, eta: float, gamma: float, *, tail: float = 1e-15) -> int:
    """One K ~ D_{η,γ} by inversion of its distribution function
    (:func:`pate_study.privacy.selection.truncated_negative_binomial_pmf`), from one uniform draw of ``rng``; the
    support is cut where the remaining mass is below ``tail`` (a draw there returns the last k)."""
    u = rng.random()
    k, cdf, block = 0, 0.0, 64
    while True:
        ks = np.arange(k + 1, k + block + 1)
        pmf = selection.truncated_negative_binomial_pmf(ks, eta, gamma)
        cum = cdf + np.cumsum(pmf)
        hit = np.flatnonzero(cum >= u)
        if hit.size:
            return int(ks[hit[0]])
        if 1.0 - cum[-1] < tail:
            return int(ks[-1])
        k, cdf = int(ks[-1]), float(cum[-1])


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of one execution: the ensemble and execution it belongs to, its index among the execution's
    ``n_runs`` (K), the candidate it drew and its seeds (queries, release noise, students)."""

    ensemble: int
    execution: int
    run: int
    n_runs: int
    candidate: int
    query_seed: int
    release_seed: int
    student_seed: int


def draw_runs(protocol: Protocol, n_ensembles: int) -> list[Run]:
    """Every run of every execution, drawn before any data is read: per (ensemble e, execution r) the generator
    ``numpy.random.default_rng([procedure seed, e, r])`` draws K (:func:`sample_runs`), then per run the candidate
    (uniform over the protocol's) and three seeds."""
    eta, gamma = k_distribution(protocol)
    runs = []
    for e in range(int(n_ensembles)):
        for r in range(protocol.executions_per_ensemble):
            rng = np.random.default_rng([protocol.procedure_seed, e, r])
            k = sample_runs(rng, eta, gamma)
            for j in range(k):
                c = int(rng.integers(len(protocol.candidates)))
                seeds = rng.integers(0, 2**31 - 1, size=3)
                runs.append(Run(e, r, j, k, c, int(seeds[0]), int(seeds[1]), int(seeds[2])))
    return runs


# ----------------------------------------------------------------------------------------------- the privacy
def one_run_spent(candidates: Sequence[Candidate], *, n_teachers: int, n_labels: int, delta: float) -> PrivacySpent:
    """The data-independent RDP guarantee of one run (module docstring): at each order of
    :data:`.release.ORDERS` the largest candidate's RDP (:func:`.release_frontier.frontier_spent`), converted at
    ``delta``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderAtGridEdgeWarning)
        spent = [
            frontier_spent(c.release, n_teachers=n_teachers, n_queries=c.n_queries, n_labels=n_labels, delta=delta)
            for c in candidates
        ]
        curve = np.max(np.stack([s.rdp_or_logmgf for s in spent]), axis=0)
        return account(
            curve,
            delta=delta,
            accounting=Accounting(spent[0].orders),
            accountant="multilabel2021",
            mechanism="one run of the Audio Set target procedure (a candidate release drawn uniformly)",
            n_queries=max(c.n_queries for c in candidates),
            data_dependent=False,
            warn=False,
            candidate_epsilons=[float(s.epsilon) for s in spent],
            candidate_epsilons_exact_gaussian=[topk_vote.gaussian_composition_epsilon(s) for s in spent],
        )


def procedure_privacy(protocol: Protocol, *, n_teachers: int, n_labels: int) -> dict[str, Any]:
    """The whole procedure's (ε, δ): Papernot & Steinke's Theorem 2 on :func:`one_run_spent`'s curve with the
    protocol's D_{η,γ} (:func:`pate_study.privacy.selection.random_stopping_spent`); beside it one run's ε (RDP and
    exact Gaussian) and how it was charged."""
    one = one_run_spent(protocol.candidates, n_teachers=n_teachers, n_labels=n_labels, delta=protocol.delta)
    eta, gamma = k_distribution(protocol)
    total = selection.random_stopping_spent(
        one, distribution=protocol.distribution, eta=eta, gamma=gamma, delta=protocol.delta, warn=False
    )
    exact_one = max(one.details["candidate_epsilons_exact_gaussian"])
    how = (
        f"random stopping (Papernot & Steinke 2022, Theorem 2): K ~ truncated negative binomial, eta {eta:g}, "
        f"gamma {gamma:.6g}, E[K] {protocol.expected_runs:g}, drawn from seed {protocol.procedure_seed}; one run = "
        f"a candidate drawn uniformly from the {len(protocol.candidates)} of the protocol, charged at the largest "
        f"candidate RDP per order (data-independent, every neighbouring pair both ways); RDP orders from "
        f"{float(ORDERS[0]):g}, basic conversion, delta {protocol.delta:g}"
    )
    return {
        "procedure_epsilon": float(total.epsilon),
        "procedure_delta": float(protocol.delta),
        "procedure_order": float(total.order),
        "procedure_charge": how,
        "one_run_epsilon": float(one.epsilon),
        "one_run_epsilon_exact_gaussian": float(exact_one),
        "candidate_epsilons": [float(e) for e in one.details["candidate_epsilons"]],
        "k_distribution": protocol.distribution,
        "k_eta": float(eta),
        "k_gamma": float(gamma),
        "k_expected_runs": float(protocol.expected_runs),
        "_spent": total,
        "_one_run": one,
    }


# ------------------------------------------------------------------------------------------- the procedure
@dataclasses.dataclass(frozen=True)
class FinalSelection:
    """What :func:`run_procedure` returns once every execution's choice is made: ``runs`` (one row per run: its
    :class:`Run` fields, the candidate, labels released per answered query, validation mAP, ``published``),
    ``published`` (per (ensemble, execution) the published student's probabilities on the reporting rows), the
    wall ``seconds`` (logged, not a result) and ``final`` (True: the reporting labels may be opened)."""

    runs: pd.DataFrame
    published: dict[tuple[int, int], np.ndarray]
    seconds: float
    final: bool = True


def _release(votes: np.ndarray, candidate: Candidate, rows: np.ndarray, seed: int) -> np.ndarray:
    return frontier_labels(votes[:, rows], candidate.release, np.random.default_rng(seed))


def run_procedure(
    protocol: Protocol,
    votes: Sequence[np.ndarray],
    x_query: np.ndarray,
    x_validation: np.ndarray,
    y_validation: np.ndarray,
    x_reporting: np.ndarray,
    spec: TeacherSpec,
) -> FinalSelection:
    """The procedure (module docstring) on each fresh ensemble's ``votes`` (``[T, n_query, C]``: its teachers'
    probabilities on the query pool, one array per ensemble) and the public features of the query pool, the
    validation split (with its labels ``y_validation``, which the selection reads) and the reporting split (its
    features only: the published students are scored there; no reporting label is an argument). Every student of
    every run trains in a few stacked calls (:func:`.target_students.stacked_students`), ``spec`` at the protocol's
    number of steps."""
    start = time.perf_counter()
    g = len(votes)
    if g < protocol.min_ensembles:
        raise ValueError(f"votes: {g} teacher ensembles, the protocol asks for at least {protocol.min_ensembles}")
    for i, v in enumerate(votes):
        if np.shape(v)[:2] != (protocol.n_teachers, len(x_query)):
            raise ValueError(
                f"votes[{i}]: shape {np.shape(v)}, expected [{protocol.n_teachers}, {len(x_query)}, C] (its "
                "teachers on the query pool)"
            )
    spec = spec.replace(steps=protocol.student_steps, eval_every=protocol.student_steps, patience=None)
    runs = draw_runs(protocol, g)
    n_q, n_v = len(x_query), len(x_validation)
    scored = np.concatenate([x_query, x_validation, x_reporting]).astype(np.float32)
    tasks, pools, rows_out = [], [], []
    for run in runs:
        c = protocol.candidates[run.candidate]
        rows = choose_queries(x_query, c.n_queries, c.query_choice, run.query_seed)
        labels = _release(np.asarray(votes[run.ensemble]), c, rows, run.release_seed)
        tasks.append(StudentTask(rows, labels, run.student_seed))
        pools.append(LabelledPool(n_q, rows, labels))
        rows_out.append(
            {**dataclasses.asdict(run), "setting": c.label(), "labels_per_query": float(labels.sum(1).mean())}
        )
    logger.info("target: %d runs over %d ensembles x %d executions", len(runs), g, protocol.executions_per_ensemble)
    probs = stacked_students(x_query, tasks, scored, spec)
    ssl = [i for i, run in enumerate(runs) if protocol.candidates[run.candidate].self_training is not None]
    if ssl:
        second = [
            self_training_tasks(
                [pools[i]],
                [probs[i][:n_q]],
                [runs[i].student_seed + 1],
                keep=float(protocol.candidates[runs[i].candidate].self_training),
            )[0][0]
            for i in ssl
        ]
        for i, p in zip(ssl, stacked_students(x_query, second, scored, spec)):
            probs[i] = p
    frame = pd.DataFrame(rows_out)
    frame["validation_map"] = [metrics.mean_average_precision(y_validation, p[n_q : n_q + n_v]) for p in probs]
    frame["published"] = False
    published = {}
    for (e, r), grp in frame.groupby(["ensemble", "execution"], sort=True):
        best = int(grp["validation_map"].idxmax())  # the first of equal maxima: the earliest run
        frame.loc[best, "published"] = True
        published[int(e), int(r)] = probs[best][n_q + n_v :]
    seconds = time.perf_counter() - start
    logger.info("target: %d students in %.1f s", len(runs) + len(ssl), seconds)
    return FinalSelection(frame, published, seconds)


# ------------------------------------------------------------------------------------------- the reporting
def target_claim(protocol: Protocol) -> Claim:
    """The study's stated target on the published students' mean reporting-split mAP (a direction claim)."""
    return Claim(
        "student mAP",
        f"this study's target: a private student of mean test mAP >= {protocol.target_map:g}",
        "mean reporting-split mAP of the published students, over teacher ensembles x executions of the procedure",
        "direction",
        TARGET_SOURCES,
        boundary=float(protocol.target_map),
    )


def budget_claim(protocol: Protocol) -> Claim:
    """The budget on the whole procedure's ε (a direction claim below the budget, read off an exact number)."""
    return Claim(
        "whole-procedure epsilon",
        f"this study's budget: epsilon <= {protocol.epsilon_max:g} at delta = {protocol.delta:g} for the whole "
        "procedure, every release and every selection charged",
        "epsilon of the whole procedure (random stopping over the protocol's candidates)",
        "direction",
        boundary=float(protocol.epsilon_max),
        side="below",
    )


#: the target's words for the verdicts (the registry's rule: agrees = met, differs = not met)
TARGET_WORDS = {"agrees": "met", "differs": "not met", "inconclusive": "inconclusive", "not comparable": "inconclusive"}


def target_verdict(estimate: unc.Estimate, epsilon: float, protocol: Protocol) -> Verdict:
    """*agrees* (met) only when the whole interval of ``estimate`` is at or above the target mAP and ``epsilon``
    (exact given the protocol) is at most the budget; *differs* (not met) when either lies wholly on the other
    side; else *inconclusive* (:func:`pate_study.reporting.verdicts.combine` of the two claims)."""
    return combine(
        {
            "student mAP": judge(target_claim(protocol), estimate),
            "whole-procedure epsilon": judge(budget_claim(protocol), unc.exact(float(epsilon))),
        }
    )


def published_scores(
    final: FinalSelection, sealed: SealedLabels, protocol: Protocol
) -> tuple[pd.DataFrame, np.ndarray]:
    """The published students on the reporting split, read once the selection is final: per (ensemble, execution)
    the mAP, and ``[n_boot, n_published]`` their mAP on the same ``n_boot`` resamples of the reporting rows
    (:func:`pate_study.reporting.uncertainty.bootstrap_rows` with the protocol's seed)."""
    y = sealed.open(final)
    rows = unc.bootstrap_rows(len(y), protocol.n_boot, protocol.boot_seed)
    keys = sorted(final.published)
    maps = [metrics.mean_average_precision(y, final.published[k]) for k in keys]
    boot = np.stack([bootstrap_map(y, final.published[k], rows) for k in keys], axis=1)
    frame = pd.DataFrame({"ensemble": [k[0] for k in keys], "execution": [k[1] for k in keys], "map": maps})
    return frame, boot


def target_estimate(scores: pd.DataFrame, boot: np.ndarray) -> unc.Estimate:
    """The mean over ensembles of each ensemble's mean mAP over its executions, with the t-interval over the
    ensemble means combined with the bootstrap of the reporting rows (module docstring), clipped to [0, 1] where an
    mAP can lie (:meth:`pate_study.reporting.uncertainty.Estimate.within`)."""
    ensembles = np.sort(scores["ensemble"].unique())
    means = np.array([scores.loc[scores["ensemble"] == e, "map"].mean() for e in ensembles])
    draws = np.stack([boot[:, (scores["ensemble"] == e).to_numpy()].mean(1) for e in ensembles], axis=1)
    return unc.combined_interval(means, draws, TARGET_SOURCES, resampled=REPORTING_ROWS).within(0.0, 1.0)


def report(
    final: FinalSelection, sealed: SealedLabels, protocol: Protocol, privacy: dict[str, Any], splits: TargetSplits
) -> dict[str, Any]:
    """The target's record (``scalars.json`` under :data:`TARGET_ITEM`): the verdict (:func:`target_verdict`,
    with its standard record keys) as met / not met / inconclusive, the estimate and interval, the numbers of
    ensembles, executions and runs, the whole procedure's ε and how it was charged, one run's RDP and exact Gaussian
    ε, the protocol's file, SHA-256 and commit, the splits, and what each published student was."""
    scores, boot = published_scores(final, sealed, protocol)
    est = target_estimate(scores, boot)
    verdict = target_verdict(est, privacy["procedure_epsilon"], protocol)
    runs = final.runs
    chosen = runs[runs["published"]]
    return {
        **verdict.as_record(),
        "target_verdict": TARGET_WORDS[verdict.verdict],
        "target_map": float(protocol.target_map),
        "epsilon_max": float(protocol.epsilon_max),
        "target_estimate": est.render(),
        "target_map_mean": float(est.value),
        "target_map_low": float(est.low),
        "target_map_high": float(est.high),
        "n_teacher_ensembles": int(scores["ensemble"].nunique()),
        "n_teachers": int(protocol.n_teachers),
        "executions_per_ensemble": int(protocol.executions_per_ensemble),
        "n_runs": int(len(runs)),
        "ensemble_means": [float(x) for x in scores.groupby("ensemble")["map"].mean()],
        "published_maps": [float(x) for x in scores["map"]],
        "published_settings": chosen["setting"].value_counts().to_dict(),
        "runs_per_execution": [int(x) for x in runs.groupby(["ensemble", "execution"])["n_runs"].first()],
        **{k: v for k, v in privacy.items() if not k.startswith("_")},
        "protocol_file": protocol.path,
        "protocol_commit": protocol.commit,
        "protocol_sha256": protocol.sha256,
        "protocol_disclosure": protocol.disclosure,
        "splits": {**splits.sizes(), "seed": splits.seed},
        "reporting_boot": int(protocol.n_boot),
    }


def run_target(
    protocol: Protocol,
    splits: TargetSplits,
    votes: Sequence[np.ndarray],
    features: np.ndarray,
    labels: np.ndarray,
    spec: TeacherSpec,
) -> dict[str, Any]:
    """The confirming run: the reporting split's labels sealed first (:class:`.target_splits.SealedLabels`), the
    procedure on the fresh ensembles' ``votes`` on ``splits.query`` (one ``[T, n_query, C]`` array per ensemble),
    selected on the validation split (:func:`run_procedure`), then the reporting split read once (:func:`report`).
    ``features`` / ``labels``: every eval clip's public features and true labels, in eval order. Returns the record,
    the runs table and the procedure's wall seconds (logged, not recorded)."""
    features, labels = np.asarray(features, dtype=np.float32), np.asarray(labels, dtype=bool)
    if len(features) != splits.n_eval or labels.shape[0] != splits.n_eval:
        raise ValueError(
            f"features {features.shape}, labels {labels.shape}: expected one row per eval clip ({splits.n_eval})"
        )
    sealed = SealedLabels(labels[splits.reporting], FinalSelection)
    y_validation = labels[splits.validation].copy()
    privacy = procedure_privacy(protocol, n_teachers=np.shape(votes[0])[0], n_labels=labels.shape[1])
    final = run_procedure(
        protocol,
        votes,
        features[splits.query],
        features[splits.validation],
        y_validation,
        features[splits.reporting],
        spec,
    )
    record = report(final, sealed, protocol, privacy, splits)
    logger.info("target procedure: %d runs in %.1f s (wall; not recorded)", len(final.runs), final.seconds)
    return {"record": record, "runs": final.runs, "seconds": final.seconds}
