"""The hard-margin SVM bootstrap of seed 004 in the explorer: session state, figures, exports and a tab.

:class:`SVMState` (param, no widgets) holds the controls and, as output parameters, what the compute
core (``explorer.svm_bootstrap.experiments``) returns for them: the bootstrap learning curve ε(S) of the replica
theory (eq. 17) and of the Monte-Carlo bootstrap (eq. 6) with the S → ∞ levels (approximate leave-one-out,
eq. 20, and literal leave-one-out), and the internal-field distribution with p(−1|x) at held-out test inputs
(eqs. 18-19 vs MC). Every computation runs as a background :class:`~explorer.views.common.jobs.Job` (progress,
cancel) and lands in a result cache shared by the sessions, as in :mod:`explorer.views.gp_bootstrap.state`.

The figure functions (:func:`learning_curve_plot`, :func:`field_plot`) and the exports (:func:`csv_text`, a
plain table with the settings in its JSON sidecar :func:`settings_text`, and :func:`html_text`) only arrange
those results; :class:`SVMTab` lays them out (seed 004, Fig. 1 left/right).
The state computes nothing until :meth:`SVMState.refresh` is first called (the tab calls it when shown).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import numpy as np
import pandas as pd
import panel as pn
import param

from explorer import datasets
from explorer.bootstrap import replica
from explorer.progress import Hooks
from explorer.svm_bootstrap import experiments as svm_experiments
from explorer.svm_bootstrap import montecarlo as svm
from explorer.svm_bootstrap import replica as svm_replica
from explorer.svm_bootstrap.experiments import SVMFieldComparison, SVMProblem, TheoryPoint
from explorer.views.common.caches import lru
from explorer.views.common.exports import Export, csv_table, data_name, download_name, html_page, settings_json
from explorer.views.common.jobs import BackgroundJobs, Job
from explorer.views.common.session import bind_to_session
from explorer.views.common.tab import JobTab
from explorer.views.common.uploads import UPLOAD, Upload, file_settings, use_uploaded_table
from explorer.views.common.values import CheckedState
from explorer.views.common.widgets import Revision, csv_upload, live, param_widgets

__all__ = [
    "SVMState", "SVMTab", "SVMTheoryCurve", "SVMCurveMC", "SVMCurvePoint", "SVM_DATASETS", "UPLOAD",
    "MAX_ROWS", "SVM_GRID", "JOB_KINDS", "EXPORT_COLUMNS", "describe_error",
    "learning_curve_plot", "field_plot", "large_gaps", "GAP_THRESHOLD", "curve_frame", "field_frame", "curve_summary", "field_summary",
    "csv_text", "html_text", "settings", "settings_text", "settings_line", "export_filename",
]


#: The shipped two-class datasets of seed 004 (sonar is a user CSV: upload it).
SVM_DATASETS = ("crabs", "wisconsin", "pima")
#: Most rows of an uploaded CSV (seed 004's largest set, wisconsin, has 683): the kernel matrix and the replica
#: theory's N × N systems are built for every change of L in the session.
MAX_ROWS = 1000
#: The S/N values offered for the learning curve (theory and Monte-Carlo at each).
SVM_GRID = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
#: Background jobs: the theory curve with the S → ∞ levels, the MC curve, the fields at test inputs.
JOB_KINDS = ("theory", "curve", "field")
#: Controls that change what has to be computed (``test_index`` only picks what is shown).
_COMPUTE_PARAMETERS = ("dataset", "target", "lengthscale", "curve_grid", "curve_mc_samples", "s_over_n",
                       "mc_samples", "holdout", "seed", "auto_mc")
_OUTPUTS = ("problem", "test_problem", "theory_curve", "curve_mc", "field")

#: Errors a user can cause with the controls; they become a message, never a traceback.
EXPECTED_ERRORS = (replica.ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError, OSError,
                   IndexError)

#: Columns of the CSV exports.
EXPORT_COLUMNS = {
    "curve": ["s_over_n", "S", "theory", "converged", "n_iter", "residual", "mc_mean", "mc_se", "mc_samples",
              "loo_approximate", "loo_exact"],
    "field": ["test_input", "y_test", "theory_mean", "theory_var", "theory_p_negative", "mc_mean", "mc_var",
              "mc_p_negative", "mc_p_negative_se", "mc_samples"],
}


# ------------------------------------------------------------------------------------ result objects


@dataclass(frozen=True)
class SVMTheoryCurve:
    """Theory ε(S) (eq. 17) on the grid computed so far, and the S → ∞ levels once known.

    ``loo_approximate`` is eq. (20), the limit of the theory; ``loo_exact`` the literal leave-one-out
    error, the limit of the Monte-Carlo bootstrap (None until computed).
    """

    points: tuple[TheoryPoint, ...]
    grid: tuple[float, ...]
    n: int
    loo_approximate: float | None = None
    loo_exact: float | None = None

    @property
    def complete(self) -> bool:
        return len(self.points) == len(self.grid) and self.loo_exact is not None

    @property
    def unconverged(self) -> tuple[TheoryPoint, ...]:
        return tuple(p for p in self.points if not p.converged)


@dataclass(frozen=True)
class SVMCurvePoint:
    """Efron's bootstrap classification error (eq. 6) at one S/N from Monte-Carlo, with its standard error."""

    s_over_n: float
    mc_mean: float
    mc_se: float
    mc_samples: int


@dataclass(frozen=True)
class SVMCurveMC:
    """Monte-Carlo points of the learning curve computed so far, in the order of ``grid``."""

    points: tuple[SVMCurvePoint, ...]
    grid: tuple[float, ...]

    @property
    def complete(self) -> bool:
        return len(self.points) == len(self.grid)


def describe_error(err: BaseException) -> str:
    """A readable one-paragraph message for an error of the SVM core or the data."""
    if isinstance(err, svm.NotSeparableError) and "identical inputs" in str(err):
        return f"The data cannot be separated by a hard-margin SVM: {err}"
    if isinstance(err, svm.NotSeparableError):
        return (f"The data cannot be separated by a hard-margin SVM with this kernel: {err} "
                "A shorter lengthscale L (a narrower kernel) separates more data; conflicting rows must be removed.")
    if isinstance(err, replica.ConvergenceError):
        return (f"The replica (ADATAP) theory did not converge: {err} Narrow kernels (small L) and large S/N are "
                "the hardest cases; try a broader kernel or a smaller S/N.")
    if isinstance(err, np.linalg.LinAlgError):
        return f"The kernel matrix could not be factorised ({err}). Change the lengthscale L."
    if isinstance(err, FloatingPointError):
        return f"The computation became numerically unstable ({err}). Change the lengthscale L."
    if isinstance(err, datasets.DatasetError):
        return f"The data cannot be used: {err}"
    return str(err) if isinstance(err, ValueError) else f"{type(err).__name__}: {err}"


# ------------------------------------------------------------------------------------ caches

_PROBLEMS = lru("svm_bootstrap.problems", 16)  # SVMProblem per (dataset, L, holdout)
_THEORY = lru("svm_bootstrap.theory", 32)      # SVMTheoryCurve per (problem, grid)
_CURVES = lru("svm_bootstrap.curves", 32)      # SVMCurveMC per (problem, grid, samples, seed)
_FIELDS = lru("svm_bootstrap.fields", 16, weigh=lambda f: f.mc_fields.nbytes,
              max_weight=200e6)                # SVMFieldComparison per (problem, S/N, samples, seed)


# ------------------------------------------------------------------------------------ computations


def _theory_curve(problem: SVMProblem, grid: tuple[float, ...], job: Job) -> SVMTheoryCurve:
    """Theory at each S/N in turn (cancellable in between), then eq. (20) and literal leave-one-out."""
    points: list[TheoryPoint] = []
    hooks = Hooks(progress=job.report, should_stop=job.should_stop)
    for j, v in enumerate(grid):
        hooks.check(j, len(grid), "values of S/N")
        job.report(j / (len(grid) + 1), f"replica theory at S/N = {v:g} ({j + 1}/{len(grid)})")
        points.append(svm_experiments.theory_learning_curve(problem, [v])[0])
        job.partial(SVMTheoryCurve(tuple(points), grid, problem.n))
    job.report(len(grid) / (len(grid) + 1), "S → ∞: leave-one-out limits")
    d0 = svm.fit_hard_margin(problem.K, problem.y_sites)
    counts = problem.sites.counts
    approx = svm_replica.loo_limit(problem.K, problem.y_sites, counts=counts, solution=d0).error
    job.partial(SVMTheoryCurve(tuple(points), grid, problem.n, approx))
    exact = svm.leave_one_out(problem.K, problem.y_sites, counts=counts, solution=d0).error
    return SVMTheoryCurve(tuple(points), grid, problem.n, approx, exact)


def _mc_curve(problem: SVMProblem, grid: tuple[float, ...], mc_samples: int, seed: int, job: Job,
              executor) -> SVMCurveMC:
    """Efron's estimator at every S/N of ``grid`` (``svm.bootstrap_learning_curve``, all S at once on
    ``executor``); ``job.partial`` gets the curve whenever one more S is complete.

    The same root seed, grid and warm start (the SVM on D0) as ``svm_experiments.svm_learning_curve``: the
    points equal ``explorer svm-curve``'s for the same seed.
    """
    d0 = svm.fit_hard_margin(problem.K, problem.y_sites)
    s_over_n = dict(zip((np.asarray(grid) * problem.n).tolist(), grid))

    def as_points(curve) -> SVMCurveMC:
        return SVMCurveMC(tuple(SVMCurvePoint(float(s_over_n[S]), float(value), float(se), mc_samples)
                                for S, value, se in zip(curve.s_values.tolist(), curve.value, curve.se)), grid)

    curve = svm.bootstrap_learning_curve(
        problem.K, problem.y_sites, np.asarray(grid) * problem.n, mc_samples, row_site=problem.sites.row_site,
        rng=seed, init=d0, executor=executor,
        hooks=Hooks(progress=job.report, should_stop=job.should_stop, partial=lambda c: job.partial(as_points(c))))
    return as_points(curve)


def _field(problem: SVMProblem, v: float, mc_samples: int, seed: int, job: Job, executor) -> SVMFieldComparison:
    return svm_experiments.svm_field_comparison(problem, v, mc_samples, rng=seed, executor=executor,
                                                hooks=Hooks(progress=job.report, should_stop=job.should_stop))


# ------------------------------------------------------------------------------------ the state


class SVMState(CheckedState, BackgroundJobs, param.Parameterized):
    """Controls of the SVM bootstrap view and the core results for them, for one session (or notebook).

    Set the controls, call :meth:`refresh` (later changes refresh by themselves), then :meth:`wait`
    for the background jobs. Outputs: ``problem`` (D0 for the learning curve), ``test_problem`` (D0
    without the first ``holdout`` rows, which become test inputs), ``theory_curve``, ``curve_mc``,
    ``field`` and ``error``; ``jobs[kind]`` reports each job (kinds ``JOB_KINDS``).
    """

    # --- data
    dataset = param.Selector(default="crabs", objects=list(SVM_DATASETS), label="Dataset",
                             doc="Two-class data of seed 004: crabs (species B/O, 200 rows), wisconsin (683), "
                                 "pima (532), or an uploaded CSV (e.g. sonar). Inputs are standardised.")
    target = param.Selector(default=None, objects=[], allow_None=True, label="Target column",
                            doc="Column of an uploaded CSV holding the two class labels; every other column "
                                "is an input.")
    # --- model
    lengthscale = param.Number(default=svm_experiments.BROAD_LENGTHSCALE, bounds=(1e-3, 1e4),
                               softbounds=(0.3, 10.0), step=0.1, label="Lengthscale L",
                               doc="L of the kernel K(x, x') = exp(−|x − x'|²/(2L²)) on standardised inputs. "
                                   "Broad kernels (L ≈ 3) suit the theory; narrow ones (L < 1) degrade it.")
    # --- learning curve (Fig. 1 left)
    curve_grid = param.ListSelector(default=[0.5, 1.0, 2.0], objects=list(SVM_GRID), label="S/N values",
                                    doc="Bootstrap sizes S/N of the learning curve: theory and Monte-Carlo at each.")
    curve_mc_samples = param.Integer(default=200, bounds=(1, 100_000), softbounds=(20, 5000),
                                     label="MC samples per S (curve)",
                                     doc="Monte-Carlo bootstrap samples at each S/N; every sample is one "
                                         "hard-margin SVM training (a quadratic programme).")
    # --- field at a test input (Fig. 1 right)
    s_over_n = param.Number(default=1.0, bounds=(0.05, 10.0), softbounds=(0.1, 4.0), step=0.05,
                            label="S/N (field distribution)",
                            doc="Bootstrap size S/N of the internal-field distribution at the test inputs "
                                "(seed 004 Fig. 1 right: S = N).")
    mc_samples = param.Integer(default=1000, bounds=(2, 100_000), softbounds=(100, 20_000),
                               label="MC samples (field)",
                               doc="Monte-Carlo bootstrap samples for the field distribution and p(−1|x).")
    holdout = param.Integer(default=10, bounds=(1, 1000), softbounds=(1, 50), label="Held-out test inputs",
                            doc="The first rows are kept out of D0 as test inputs x ∉ D0 for the field "
                                "distribution; the learning curve uses all rows.")
    test_index = param.Integer(default=0, bounds=(0, 999), label="Test input",
                               doc="Which held-out test input (0-based, among the first 'Held-out test inputs' "
                                   "rows) the field distribution shows.")
    seed = param.Integer(default=0, bounds=(0, 2**31 - 1), label="Seed",
                         doc="Seed of the Monte-Carlo random generator; same settings and seed, same numbers.")
    auto_mc = param.Boolean(default=True, label="Run Monte-Carlo automatically",
                            doc="Start the Monte-Carlo bootstrap whenever the settings change (else press Run).")

    # --- outputs
    problem = param.ClassSelector(class_=SVMProblem, default=None, allow_None=True, precedence=-1,
                                  label="Problem", doc="Output: D0 (all rows), kernel and merged sites of the curve.")
    test_problem = param.ClassSelector(class_=SVMProblem, default=None, allow_None=True, precedence=-1,
                                       label="Problem with test inputs",
                                       doc="Output: D0 without the held-out rows, which are its X_test.")
    theory_curve = param.ClassSelector(class_=SVMTheoryCurve, default=None, allow_None=True, precedence=-1,
                                       label="Theory learning curve",
                                       doc="Output: ε(S) of eq. (17) and the S → ∞ levels (so far).")
    curve_mc = param.ClassSelector(class_=SVMCurveMC, default=None, allow_None=True, precedence=-1,
                                   label="Monte-Carlo learning curve", doc="Output: MC points so far.")
    field = param.ClassSelector(class_=SVMFieldComparison, default=None, allow_None=True, precedence=-1,
                                label="Field comparison",
                                doc="Output: theory (eqs. 18-19) and MC fields with p(−1|x) at the test inputs.")

    _job_kinds = JOB_KINDS
    _outputs = _OUTPUTS
    _not_run_message = "Monte-Carlo not run yet: press 'Run Monte-Carlo'."
    expected_errors = EXPECTED_ERRORS
    describe_error = staticmethod(describe_error)

    def __init__(self, **params):
        super().__init__(**params)
        self._init_jobs()
        self._upload: tuple[str, str, str] | None = None  # (file name, text, sha256)
        self._columns: list[str] = []
        self.param.watch(self._on_change, list(_COMPUTE_PARAMETERS))

    # ----------------------------------------------------------------------------- public API

    @property
    def index(self) -> int:
        """``test_index`` clipped to the held-out rows."""
        return min(int(self.test_index), int(self.holdout) - 1)

    def run_mc(self) -> None:
        """Start the Monte-Carlo jobs even if ``auto_mc`` is off, or again after a cancel or a failure."""
        self.run()

    def _auto_run(self) -> bool:
        return bool(self.auto_mc)

    def upload_csv(self, filename: str, content: bytes | str, target: str | None = None) -> None:
        """Use an uploaded CSV as the dataset; ``target`` (default: the last column) holds the two labels."""
        columns = use_uploaded_table(self, filename, content, target, "inputs and a class label")
        if columns is not None:
            self._columns = columns

    @property
    def uploaded_file(self) -> Upload | None:
        """The CSV uploaded in this session (name, text, SHA-256), if any."""
        return self._upload

    # ----------------------------------------------------------------------------- settings → problems

    def _dataset_key(self) -> tuple:
        if self.dataset == UPLOAD:
            if self._upload is None:
                raise datasets.DatasetError("no CSV has been uploaded in this session; upload the file again.")
            return ("upload", self._upload[2], self.target)
        return ("shipped", self.dataset)

    def _load_dataset(self) -> datasets.Dataset:
        if self.dataset != UPLOAD:
            return datasets.load(self.dataset)
        if self.target is None:
            raise datasets.DatasetError("choose the column of the CSV file that holds the class labels.")
        name, text, _ = self._upload
        data = datasets.load_csv(io.StringIO(text), self.target, name=Path(name).stem, task="classification")
        if data.n > MAX_ROWS:
            raise datasets.DatasetError(f"{name} has {data.n} rows; the SVM bootstrap here takes at most {MAX_ROWS} "
                                        "(its replica theory solves N × N systems on the server). Upload a random "
                                        f"sample of at most {MAX_ROWS} rows.")
        return data

    def _problem(self, holdout: int) -> tuple[tuple, SVMProblem]:
        key = (self._dataset_key(), float(self.lengthscale), int(holdout))
        return key, _PROBLEMS.get_or_compute(
            key, lambda: svm_experiments.svm_problem(self._load_dataset(), float(self.lengthscale), holdout=holdout))

    # ----------------------------------------------------------------------------- refresh

    def _refresh_outputs(self) -> None:
        key, problem = self._problem(0)
        test_key, test_problem = self._problem(int(self.holdout))
        self.param.test_index.bounds = (0, int(self.holdout) - 1)
        if self.test_index > self.holdout - 1:
            self._assign("test_index", int(self.holdout) - 1)
        self._assign("problem", problem)
        self._assign("test_problem", test_problem)
        grid = tuple(sorted(float(v) for v in self.curve_grid))
        if not grid:
            raise ValueError("Choose at least one value of S/N for the learning curve.")
        samples, seed, v, field_samples = int(self.curve_mc_samples), int(self.seed), float(self.s_over_n), \
            int(self.mc_samples)
        self._request("theory", (key, grid), "theory_curve", _THEORY,
                      lambda job: _theory_curve(problem, grid, job), optional=False)
        self._request("curve", (key, grid, samples, seed), "curve_mc", _CURVES,
                      lambda job: _mc_curve(problem, grid, samples, seed, job, self.executor))
        self._request("field", (test_key, v, field_samples, seed), "field", _FIELDS,
                      lambda job: _field(test_problem, v, field_samples, seed, job, self.executor))


# ------------------------------------------------------------------------------------ figures

S_DIM = hv.Dimension("s_over_n", label="S/N")
ERR_DIM = hv.Dimension("error", label="bootstrap classification error ε(S)")
H_DIM = hv.Dimension("h", label="internal field f(x) at the test input")
DENSITY_DIM = hv.Dimension("density", label="density")
THEORY_COLOR, MC_COLOR, APPROX_COLOR, EXACT_COLOR = "#1f77b4", "#d62728", "#2ca02c", "#7f7f7f"
_SIZE = dict(responsive=True, height=430)
_EMPTY = np.array([])
#: |theory − Monte-Carlo| beyond this many Monte-Carlo standard errors is flagged in the learning curve.
GAP_THRESHOLD = 3.0


@dataclass(frozen=True)
class SVMGap:
    """Theory (eq. 17) − Monte-Carlo (eq. 6) at one S/N, in units of the Monte-Carlo standard error."""

    s_over_n: float
    mc_mean: float
    gap: float
    gap_se: float


def large_gaps(state: SVMState, threshold: float = GAP_THRESHOLD) -> tuple[SVMGap, ...]:
    """The S/N where the converged theory is more than ``threshold`` Monte-Carlo standard errors from
    Monte-Carlo, |ε_theory − ε_MC| > threshold · se_MC (a zero standard error flags any nonzero gap)."""
    theory, mc = state.theory_curve, state.curve_mc
    if theory is None or mc is None:
        return ()
    at = {round(p.s_over_n, 12): p.theory for p in theory.points if p.converged}
    gaps = []
    for p in mc.points:
        if round(p.s_over_n, 12) not in at:
            continue
        gap = at[round(p.s_over_n, 12)] - p.mc_mean
        gap_se = gap / p.mc_se if p.mc_se > 0 else (np.inf * np.sign(gap) if gap else 0.0)
        if abs(gap_se) > threshold:
            gaps.append(SVMGap(p.s_over_n, p.mc_mean, gap, float(gap_se)))
    return tuple(gaps)


def _framewise(*elements):
    return [e.opts(framewise=True) for e in elements]


def learning_curve_plot(state: SVMState) -> hv.Overlay:
    """ε(S) of the theory (eq. 17, line) and Monte-Carlo (eq. 6, ± 1 s.e.) vs S/N, seed 004 Fig. 1 left,
    with the S → ∞ levels: approximate leave-one-out (eq. 20, where the theory goes) and the literal
    leave-one-out error (where the bootstrap goes). Unconverged theory points are left out."""
    theory, mc = state.theory_curve, state.curve_mc
    points = [p for p in (theory.points if theory is not None else ()) if p.converged]
    ts, tv = np.array([p.s_over_n for p in points]), np.array([p.theory for p in points])
    mpts = mc.points if mc is not None else ()
    ms = np.array([p.s_over_n for p in mpts])
    mean, se = np.array([p.mc_mean for p in mpts]), np.array([p.mc_se for p in mpts])
    grid = theory.grid if theory is not None else tuple(state.curve_grid) or (1.0,)
    span = np.array([min(grid), max(grid)])

    def level(value):
        return (span, np.full(2, value)) if value is not None else (_EMPTY, _EMPTY)

    flagged = large_gaps(state)

    layers = _framewise(
        hv.Curve((ts, tv), S_DIM, ERR_DIM, label="replica theory, eq. (17)").opts(color=THEORY_COLOR, line_width=2),
        hv.Scatter((ts, tv), S_DIM, ERR_DIM).opts(color=THEORY_COLOR, size=6),
        hv.ErrorBars((ms, mean, se), S_DIM, [ERR_DIM, "se"]).opts(color=MC_COLOR),
        hv.Scatter((ms, mean), S_DIM, ERR_DIM, label="Monte-Carlo (± 1 s.e.)").opts(color=MC_COLOR, size=9,
                                                                                   marker="square"),
        hv.Curve(level(theory.loo_approximate if theory else None), S_DIM, ERR_DIM,
                 label="S → ∞: approximate LOO, eq. (20)").opts(color=APPROX_COLOR, line_dash="dashed"),
        hv.Curve(level(theory.loo_exact if theory else None), S_DIM, ERR_DIM,
                 label="S → ∞: exact leave-one-out").opts(color=EXACT_COLOR, line_dash="dotted", line_width=2),
        hv.Scatter(([g.s_over_n for g in flagged], [g.mc_mean for g in flagged]), S_DIM, ERR_DIM,
                   label=f"theory − MC > {GAP_THRESHOLD:g} s.e.").opts(
            color="black", marker="circle", size=20, fill_alpha=0, line_width=2),
    )
    title = f"Bootstrap learning curve, {_problem_label(state)}:\nlower error is better"
    # padding: the points at the first and last S/N are drawn whole, not cut by the frame
    return hv.Overlay(layers).opts(legend_position="right", legend_opts={"click_policy": "hide"}, title=title,
                                   show_grid=True, padding=0.06, **_SIZE)


def _field_data(state: SVMState):
    field = state.field
    if field is None:
        return None, 0
    return field, min(state.index, field.theory_mean.size - 1)


def field_plot(state: SVMState, bins: int = 40) -> hv.Overlay:
    """Bootstrap density of the internal field at held-out test input ``test_index``: the theory's Gaussian
    (eqs. 18-19) vs the Monte-Carlo histogram, p(−1|x) of both in the legend and title (Fig. 1 right).
    The dotted line at f = 0 is the decision boundary: p(−1|x) is the mass to its left."""
    field, j = _field_data(state)
    edges, density, h, rho = np.array([0.0, 1.0]), np.array([0.0]), _EMPTY, _EMPTY
    th_label, mc_label, title = "theory, eqs. (18)-(19)", "Monte-Carlo", "Internal field at a test input"
    if field is not None:
        samples = field.mc_fields[:, j]
        mu, sd = field.theory_mean[j], math.sqrt(max(field.theory_var[j], 0.0))
        lo = min(samples.min(), mu - 4 * sd, -0.1)
        hi = max(samples.max(), mu + 4 * sd, 0.1)
        density, edges = np.histogram(samples, bins=bins, range=(lo, hi), density=True)
        h = np.linspace(lo, hi, 400)
        rho = np.exp(-0.5 * ((h - mu) / sd) ** 2) / (sd * math.sqrt(2 * math.pi)) if sd > 0 else np.zeros_like(h)
        pt, pm, pse = field.theory_p_negative[j], field.mc_p_negative[j], field.mc_p_negative_se[j]
        th_label = f"theory, eqs. (18)-(19): p(−1|x) = {pt:.3f}"
        mc_label = f"Monte-Carlo ({samples.size} SVMs): p(−1|x) = {pm:.3f} ± {pse:.3f}"
        label = "" if field.y_test is None else f", true label {field.y_test[j]:+g}"
        title = (f"Test input {j}{label}, S/N = {field.s_over_n:g}:\np(−1|x) theory {pt:.3f}, "
                 f"MC {pm:.3f} ± {pse:.3f}")
    layers = _framewise(
        hv.Histogram((edges, density), kdims=[H_DIM], vdims=[DENSITY_DIM], label=mc_label).opts(
            color=MC_COLOR, fill_alpha=0.35, line_color=MC_COLOR),
        hv.Curve((h, rho), H_DIM, DENSITY_DIM, label=th_label).opts(color=THEORY_COLOR, line_width=2),
    )
    return (hv.Overlay(layers) * hv.VLine(0.0).opts(color="black", line_dash="dotted")).opts(
        legend_position="right", legend_opts={"click_policy": "hide"}, title=title, show_grid=True, **_SIZE)


def _problem_label(state: SVMState) -> str:
    p = state.problem
    return f"{p.name} (N = {p.n}, L = {state.lengthscale:.4g})" if p is not None else state.dataset


def curve_summary(state: SVMState) -> str:
    """One line on the learning curve: progress of both parts, unconverged theory points, the S → ∞ levels."""
    theory, mc = state.theory_curve, state.curve_mc
    parts = [f"**{_problem_label(state)}**"]
    if state.problem is not None and state.problem.n_sites < state.problem.n:
        parts.append(f"{state.problem.n_sites} distinct inputs (identical rows merged)")
    grid = len(state.curve_grid)
    parts.append(f"theory: {len(theory.points) if theory else 0}/{grid} values of S/N")
    parts.append(f"Monte-Carlo: {len(mc.points) if mc else 0}/{grid}")
    if theory is not None and theory.loo_approximate is not None:
        exact = "…" if theory.loo_exact is None else f"{theory.loo_exact:.4g}"
        parts.append(f"S → ∞: approximate LOO {theory.loo_approximate:.4g}, exact LOO {exact}")
    text = " · ".join(parts)
    flagged = large_gaps(state)
    if flagged:
        where = ", ".join(f"{g.s_over_n:g} ({g.gap_se:+.1f} s.e.)" for g in flagged)
        text += (f"\n\n⚠ Theory and Monte-Carlo differ by more than {GAP_THRESHOLD:g} standard errors at "
                 f"S/N = {where} (circled in the figure).")
    if theory is not None and theory.unconverged:
        bad = ", ".join(f"S/N = {p.s_over_n:g} (residual {p.residual:.1e})" for p in theory.unconverged)
        text += (f"\n\n⚠ The replica theory did not converge at {bad}: those points are not drawn. Narrow "
                 "kernels and large S/N are the hard cases.")
    return text


def field_summary(state: SVMState) -> str:
    """One line on the field distribution: the test input, the bootstrap size, theory convergence."""
    field, j = _field_data(state)
    if field is None:
        return f"Held-out test inputs: the first {state.holdout} rows (not in D0)."
    tp = state.test_problem
    text = (f"Test input {j} of {field.theory_mean.size} held out; D0 has N = {tp.n if tp else '?'} rows; "
            f"S/N = {field.s_over_n:g}; theory mean {field.theory_mean[j]:.3g}, sd "
            f"{math.sqrt(field.theory_var[j]):.3g}; MC mean {field.mc_fields[:, j].mean():.3g}, sd "
            f"{field.mc_fields[:, j].std(ddof=1) if field.mc_fields.shape[0] > 1 else float('nan'):.3g}")
    if not field.converged:
        text += f" · ⚠ theory not converged (residual {field.residual:.1e})"
    return text


# ------------------------------------------------------------------------------------ tables and exports


def curve_frame(state: SVMState) -> pd.DataFrame:
    """Theory and Monte-Carlo at every S/N computed so far, with the S → ∞ levels on every row."""
    theory, mc = state.theory_curve, state.curve_mc
    rows: dict[float, dict] = {}
    for p in (theory.points if theory is not None else ()):
        rows[round(p.s_over_n, 12)] = {"S": p.S, "theory": p.theory, "converged": p.converged, "n_iter": p.n_iter,
                                       "residual": p.residual}
    for p in (mc.points if mc is not None else ()):
        rows.setdefault(round(p.s_over_n, 12), {}).update(mc_mean=p.mc_mean, mc_se=p.mc_se, mc_samples=p.mc_samples)
    levels = {"loo_approximate": theory.loo_approximate if theory else None,
              "loo_exact": theory.loo_exact if theory else None}
    return pd.DataFrame([{"s_over_n": v, **r, **levels} for v, r in sorted(rows.items())],
                        columns=EXPORT_COLUMNS["curve"])


def field_frame(state: SVMState) -> pd.DataFrame:
    """Theory and Monte-Carlo field moments and p(−1|x) at every held-out test input."""
    f = state.field
    if f is None:
        return pd.DataFrame(columns=EXPORT_COLUMNS["field"])
    m = f.theory_mean.size
    B = f.mc_fields.shape[0]
    return pd.DataFrame({
        "test_input": np.arange(m), "y_test": f.y_test if f.y_test is not None else np.full(m, np.nan),
        "theory_mean": f.theory_mean, "theory_var": f.theory_var, "theory_p_negative": f.theory_p_negative,
        "mc_mean": f.mc_fields.mean(axis=0), "mc_var": f.mc_fields.var(axis=0, ddof=1) if B > 1 else np.nan,
        "mc_p_negative": f.mc_p_negative, "mc_p_negative_se": f.mc_p_negative_se, "mc_samples": B,
    }, columns=EXPORT_COLUMNS["field"])


_FIGURES = {"curve": learning_curve_plot, "field": field_plot}
_FRAMES = {"curve": curve_frame, "field": field_frame}


def export_filename(state: SVMState, what: str, ext: str) -> str:
    """The name of a download: what it holds, the data and, for the field, the test input
    (``svm-learning-curve_crabs.csv``, ``svm-field_crabs_test-input-3.html``, ``settings_svm_crabs.json``)."""
    upload = state._upload[0] if state.dataset == UPLOAD and state._upload is not None else None
    data = data_name(state.dataset, upload)
    if what == "settings":
        return download_name("settings", "svm", data, ext=ext)
    return download_name(f"svm {_EXPORT_NAMES[what]}", data, *([f"test input {state.index}"] if what == "field"
                                                                 else []), ext=ext)


def settings(state: SVMState) -> dict:
    """The controls behind the figures and tables, for the JSON sidecar of the CSV exports: the data, the
    kernel K(x, x') = exp(−|x − x'|²/(2L²)) and its lengthscale, the S/N values, the Monte-Carlo sizes and the
    seed."""
    out = {"dataset": state.dataset, "kernel": "squared_exponential", "lengthscale": float(state.lengthscale),
           "curve_grid": sorted(float(v) for v in state.curve_grid), "curve_mc_samples": int(state.curve_mc_samples),
           "s_over_n": float(state.s_over_n), "mc_samples": int(state.mc_samples), "holdout": int(state.holdout),
           "test_index": int(state.index), "seed": int(state.seed)}
    if state.dataset == UPLOAD:
        out.update(target=state.target, **file_settings(state.uploaded_file))
    return out


def settings_text(state: SVMState) -> str:
    """The JSON sidecar of the CSV exports: ``{"export", "files", "settings"}`` (:func:`settings`)."""
    return settings_json("hard-margin SVM bootstrap (seed 004)", settings(state),
                         [export_filename(state, what, "csv") for what in _FRAMES])


def settings_line(state: SVMState) -> str:
    """The controls behind a figure, in one line (the title of its HTML page)."""
    target = f" target={state.target}" if state.dataset == UPLOAD else ""
    grid = ",".join(f"{v:g}" for v in sorted(state.curve_grid))
    return (f"dataset={state.dataset}{target} lengthscale={state.lengthscale:g} S/N grid={grid} "
            f"curve_mc_samples={state.curve_mc_samples} field S/N={state.s_over_n:g} mc_samples={state.mc_samples} "
            f"holdout={state.holdout} test_index={state.index} seed={state.seed}")


def csv_text(state: SVMState, what: str) -> str:
    """CSV of the ``what`` ("curve" or "field") table: one header line (``EXPORT_COLUMNS[what]``), then the rows;
    the settings are in the sidecar :func:`settings_text`."""
    return csv_table(_FRAMES[what](state))


def html_text(state: SVMState, what: str) -> str:
    """The ``what`` ("curve" or "field") figure as a standalone HTML page (Bokeh, resources inlined)."""
    return html_page(_FIGURES[what](state), f"Resampling Explorer: SVM {what} — {settings_line(state)}")


# ------------------------------------------------------------------------------------ the tab

_EXPORT_NAMES = {"curve": "Learning curve", "field": "Field"}


class SVMTab(JobTab):
    """Seed 004 Fig. 1 as a tab: controls, job progress with Run/Cancel, the learning curve (left), the
    internal-field distribution at a test input (right), CSV/HTML exports. CSS classes ``explorer-svm-…``.

    In a served session the tab sends the jobs' updates to the session's event loop and closes the state
    when the session ends. The state starts computing when the tab is first rendered (``__panel__``).
    """

    state = param.ClassSelector(class_=SVMState, label="State", doc="The SVM session state the tab shows.")

    css_prefix = "explorer-svm"

    def __init__(self, **params):
        if params.get("state") is None:
            params["state"] = SVMState()
        super().__init__(**params)
        s = self.state
        bind_to_session(s)
        self.widgets = self._make_widgets()
        self.upload = csv_upload("explorer-svm-upload", s.upload_csv, on_refused=s.refuse)
        self.streams = {"curve": Revision(), "field": Revision()}
        self.plots = {what: pn.pane.HoloViews(
            live(lambda what=what: self.styled(_FIGURES[what](self.state)), self.streams[what]),
            sizing_mode="stretch_width", min_height=430, linked_axes=False, css_classes=[f"explorer-svm-plot-{what}"])
            for what in ("curve", "field")}
        self.status = {what: pn.pane.Markdown("", css_classes=[f"explorer-svm-status-{what}"],
                                              sizing_mode="stretch_width") for what in ("curve", "field")}
        s.param.watch(self._on_curve, ["theory_curve", "curve_mc", "problem"])
        s.param.watch(self._on_field, ["field", "test_index", "test_problem"])
        self._on_curve()
        self._on_field()

    def exports(self) -> list[Export]:
        def text(fmt: str, what: str):
            return lambda: csv_text(self.state, what) if fmt == "csv" else html_text(self.state, what)
        def name(what: str, fmt: str):
            return lambda: export_filename(self.state, what, fmt)
        return [*(Export(name(what, fmt), f"{_EXPORT_NAMES[what]} ({fmt.upper()})",
                         f"explorer-svm-{fmt}-{what}", text(fmt, what))
                  for what in ("curve", "field") for fmt in ("csv", "html")),
                Export(name("settings", "json"), "Settings (JSON)", "explorer-svm-json-settings",
                       lambda: settings_text(self.state))]

    def _make_widgets(self) -> dict[str, pn.widgets.Widget]:
        s = self.state
        kinds = {"dataset": pn.widgets.Select, "target": pn.widgets.Select, "lengthscale": pn.widgets.FloatInput,
                 "curve_grid": pn.widgets.MultiChoice, "curve_mc_samples": pn.widgets.IntInput,
                 "s_over_n": pn.widgets.FloatInput, "mc_samples": pn.widgets.IntInput,
                 "holdout": pn.widgets.IntInput, "test_index": pn.widgets.IntInput, "seed": pn.widgets.IntInput,
                 "auto_mc": pn.widgets.Checkbox}
        widgets = param_widgets(s, kinds, "explorer-svm")
        widgets["target"].visible = s.dataset == UPLOAD
        s.param.watch(lambda e: setattr(widgets["target"], "visible", e.new == UPLOAD), "dataset")
        return widgets

    # --- updates
    def _on_job(self, name: str, *events) -> None:
        super()._on_job(name, *events)
        if name == "theory" and hasattr(self, "status"):
            self._on_curve()

    def _on_curve(self, *events) -> None:
        self.streams["curve"].event(revision=self.streams["curve"].revision + 1)
        self.status["curve"].object = curve_summary(self.state)

    def _on_field(self, *events) -> None:
        self.streams["field"].event(revision=self.streams["field"].revision + 1)
        self.status["field"].object = field_summary(self.state)

    def restyle(self) -> None:
        self._on_curve()
        self._on_field()

    def control_column(self) -> pn.Column:
        w = self.widgets
        return pn.Column(
            "### Data", w["dataset"], pn.pane.Markdown("Upload a two-class CSV (header row, numeric inputs):",
                                                       margin=(0, 10)),
            self.upload, w["target"], "### Kernel", w["lengthscale"],
            "### Learning curve", w["curve_grid"], w["curve_mc_samples"],
            "### Field at a test input", w["s_over_n"], w["mc_samples"], w["holdout"], w["test_index"],
            "### Monte-Carlo", w["seed"], w["auto_mc"],
            sizing_mode="stretch_width", css_classes=["explorer-svm-controls"])

    def content(self) -> pn.Column:
        # one figure above the other: each gets the whole width and its legend beside the data
        return self.frame(self.status["curve"], self.plots["curve"], self.status["field"], self.plots["field"])
