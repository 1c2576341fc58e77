"""Session state of the Gaussian-process pages ([MO03]): the controls, the core results for them, background jobs.

Nothing here builds a widget or a plot (CONTRIBUTING.md, UI layer). :class:`GPBootstrapState` holds the user's
settings as parameters and, as output parameters, what the compute core returns for them. Fast theory
(one ADATAP solve, ~50-100 ms at N ≈ 500) runs when a setting changes; the theory learning curve, every theory of
large data (the low-rank mode) and every Monte-Carlo bootstrap run on worker threads, report progress, can be
cancelled, publish partial results and land in caches shared by all sessions of the server (same settings → instant).

Only the work the active tab needs is done (``tab``); the other tabs catch up when they are opened. The state holds
its concerns as components in modules of their own: what the settings may be
(:mod:`explorer.views.gp_bootstrap.settings`), the jobs, caches and computations
(:mod:`explorer.views.gp_bootstrap.jobs`), the data (:class:`explorer.views.gp_bootstrap.data.GPData`) and where the
kernel's values come from (:class:`explorer.views.gp_bootstrap.hyperparameters.Hyperparameters`). The jobs run on the machinery every tab shares
(:class:`~explorer.views.common.state.jobs.JobRunner`, the component ``job_runner``).
"""

from __future__ import annotations

import numpy as np
import param

from explorer import kernels
from explorer.bootstrap import replica
from explorer.gp_bootstrap import evidence as gp_evidence
from explorer.gp_bootstrap import experiments
from explorer.gp_bootstrap import problem as problems
from explorer.gp_bootstrap.l1 import scaled_bin_width
from explorer.gp_bootstrap.linear_response import LinearResponseMoments
from explorer.gp_bootstrap.stages import (
    VG_MF_LOSSES,
    CurveMC,
    CurvePoint,
    HoldoutTheory,
    LinearResponseCurve,
    TheoryCurve,
    theory_error,
)
from explorer.views.common.files.uploads import UPLOAD
from explorer.views.common.state import controls, errors
from explorer.views.common.state.data_source import DataSourced
from explorer.views.common.state.declarations import applies, control, control_names, invalidating
from explorer.views.common.state.jobs import HasJobs, JobRunner, output
from explorer.views.common.state.values import CheckedState
from explorer.views.gp_bootstrap.data import GPData, subsample_rows
from explorer.views.gp_bootstrap.errors import WORDING
from explorer.views.gp_bootstrap.hyperparameters import Hyperparameters
from explorer.views.gp_bootstrap.jobs import (
    JOBS,
    NOT_RUN_MESSAGE,
    EvidenceRequest,
    GPSettings,
    JobInputs,
    mc_grid,
    plan,
)
from explorer.views.gp_bootstrap.problems_of_settings import GPProblems
from explorer.views.gp_bootstrap.settings import (
    APPROXIMATIONS,
    BIN_WIDTH,
    CSV_PREFIX,
    EVIDENCE_ROWS,
    EXPECTED_ERRORS,
    FITTED_DATASETS,
    GP_TABS,
    HOLDOUT_TAB,
    HYPERPARAMETERS,
    IJ_LOSSES,
    KERNELS,
    LOSSES,
    LOW_RANK_GRID,
    LOW_RANK_ROWS,
    MAX_COLUMNS,
    MAX_MC_VALUES,
    MAX_ROWS,
    MC_GRID,
    MC_KINDS,
    METHODS,
    OUTPUTS,
    RANK_BOUNDS,
    REFRESH_STAGES,
    REGRESSION_DATASETS,
    SUBSAMPLE_SEED,
    THEORY_GRID,
    fits_ard,
    is_csv,
    kernel_is,
    kernel_is_not,
    loss_is,
)
from explorer.views.gp_bootstrap.settings import DATA_STAGES as DATA
from explorer.views.gp_bootstrap.settings import KERNEL_STAGES as KERNEL
from explorer.views.gp_bootstrap.settings import PROBLEM_STAGES as PROBLEM
from explorer.views.gp_bootstrap.settings import THEORY_STAGES as THEORY

__all__ = [
    "GPBootstrapState", "TheoryCurve", "METHODS", "APPROXIMATIONS", "IJ_LOSSES", "VG_MF_LOSSES", "CurvePoint",
    "CurveMC", "HoldoutTheory", "REGRESSION_DATASETS", "UPLOAD", "CSV_PREFIX", "KERNELS", "LOSSES", "GP_TABS",
    "MC_KINDS", "MC_GRID", "THEORY_GRID", "BIN_WIDTH", "URL_PARAMETERS", "describe_error", "theory_error",
    "MAX_ROWS", "MAX_COLUMNS", "MAX_MC_VALUES", "SUBSAMPLE_SEED", "EVIDENCE_ROWS", "HYPERPARAMETERS",
    "LOW_RANK_ROWS", "LOW_RANK_GRID", "RANK_BOUNDS", "FITTED_DATASETS", "subsample_rows", "LinearResponseCurve",
    "HOLDOUT_TAB",
]


def describe_error(err: BaseException) -> str:
    """A readable one-paragraph message for an error of the compute core or the data."""
    return errors.describe_error(err, WORDING)


# ------------------------------------------------------------------------------------ the state


class GPBootstrapState(CheckedState, HasJobs, DataSourced):
    """Controls of the Gaussian-process bootstrap tabs ([MO03]) and the core results for them, for one
    session (or notebook).

    Set the controls (``dataset``, ``kernel``, ``s_over_n``, ...); the outputs (``problem``, ``solution``,
    ``theory_curve``, ``linear_response``, ``curve_mc``, ``distribution``, ``holdout_theory``, ``holdout_ij``,
    ``holdout_mc``, ``error``) follow for the active ``tab`` (every change refreshes, also before the first
    :meth:`refresh`). Call :meth:`wait` to block until background jobs are done (in a script their results and
    progress are applied by ``wait``, see :func:`~explorer.runtime.sessions.script_dispatcher`); ``jobs[kind]``
    reports each job ("theory", "linear_response" and ``MC_KINDS``).
    """

    job_specs = JOBS
    outputs = OUTPUTS
    auto_run_parameter = "auto_mc"
    not_run_message = NOT_RUN_MESSAGE
    expected_errors = EXPECTED_ERRORS
    error_wordings = WORDING

    # --- data (each control declares its sidebar group, what its change makes stale and when it applies)
    dataset = param.Selector(default="boston", objects=list(REGRESSION_DATASETS), label="Dataset",
                             doc="Regression data: shipped boston ([MO03] §5), generated toy ([LSWV05] eq. 19), "
                                 "teacher (GP teacher, [Fis16]) or diamonds (53,940 rows, low-rank kernel), a CSV "
                                 "of the data directory, or an upload.", metadata=control("Data", invalidates=DATA))
    target = controls.target("a CSV dataset to predict", metadata=control("Data", invalidates=DATA, applies=is_csv))
    subsample = param.Boolean(default=False, label=f"Use a random subsample of {MAX_ROWS:,} rows",
                              doc=f"An uploaded CSV with more than {MAX_ROWS:,} rows is refused (the theory solves "
                                  f"an N × N system on the server at every change), a CSV of the data folder uses the "
                                  f"low-rank kernel (Rank m); ticked, the pages use {MAX_ROWS:,} of its rows drawn at "
                                  f"random (seed {SUBSAMPLE_SEED}, kept in their file order) and the exact kernel.",
                              metadata=control("Data", invalidates=DATA, applies=is_csv))
    rank = param.Integer(default=256, bounds=RANK_BOUNDS, label="Rank m (large data)",
                         doc=f"Data of more than {MAX_ROWS:,} rows from the server (diamonds, a CSV of the data "
                             "folder) use a low-rank kernel K ≈ ΦΦᵀ built from m of their rows (Nyström landmarks "
                             f"drawn with seed {SUBSAMPLE_SEED}): a larger m is closer to the exact kernel and slower "
                             "(the time grows as N·m²). Theory and Monte-Carlo both use this kernel. "
                             "docs/derivations/low_rank.md",
                         metadata=control("Data", invalidates=PROBLEM, applies=lambda s: s.low_rank))
    standardize = controls.standardize(
        "over all rows (datasets.standardization, as `explorer learning-curve --standardize`)",
        "The paper kernel scales the inputs itself; the other kernels need it on raw data such as boston.",
        metadata=control("Data", invalidates=DATA))
    holdout = param.Integer(default=50, bounds=(1, 1000), softbounds=(1, 200), label="Held-out rows",
                            doc="The first rows kept out as test inputs in the 'Test inputs' tab (Fig. 2: 50); "
                                "the bootstrap resamples the rest.", metadata=control("Data", invalidates=PROBLEM))
    # --- model
    kernel = param.Selector(default="paper", objects=list(KERNELS), label="Kernel",
                            doc="Covariance function: 'paper' is [MO03]'s RBF exp(−Σ_j (x_j−x'_j)²/(v_j l²)) "
                                "with v_j the sd of input j; or squared exponential (se), rational quadratic "
                                "(rq), exponential, Matérn 3/2, Matérn 5/2, periodic.",
                            metadata=control("Model", invalidates=("kernel start", "hyperparameters", *PROBLEM)))
    ard = param.Boolean(default=False, label="One lengthscale per input (ARD)",
                        doc="For a CSV with the se kernel: choose one lengthscale ℓ_j per input column by maximum "
                            "evidence (automatic relevance determination); the theory and Monte-Carlo use that "
                            "kernel, and the note lists ℓ_j (a large ℓ_j: input j hardly matters).",
                        metadata=control("Model", invalidates=DATA, applies=fits_ard))
    l2 = param.Number(default=problems.PAPER_L2, bounds=(1e-3, 1e6), softbounds=(1.0, 500.0),
                      label="l² (paper kernel)", doc="Squared global lengthscale l² of the paper kernel (73.54).",
                      metadata=control("Model", invalidates=KERNEL, applies=kernel_is("paper")))
    lengthscale = param.Number(default=1.0, bounds=(1e-6, 1e9), softbounds=(0.01, 100.0), label="Lengthscale",
                               doc="Lengthscale ℓ of the chosen kernel, in the units of the inputs.",
                               metadata=control("Model", invalidates=("kernel start", *KERNEL),
                                                applies=kernel_is_not("paper")))
    signal_var = param.Number(default=1.0, bounds=(1e-9, 1e12), softbounds=(0.01, 100.0),
                              label="Signal variance", doc="Prior variance of the latent function, k(x, x).",
                              metadata=control("Model", invalidates=("kernel start", *KERNEL),
                                               applies=kernel_is_not("paper")))
    alpha = param.Number(default=1.0, bounds=(1e-3, 1e3), softbounds=(0.1, 10.0), label="α (rq)",
                         doc="Shape parameter α of the rational quadratic kernel.",
                         metadata=control("Model", invalidates=KERNEL, applies=kernel_is("rq")))
    period = param.Number(default=1.0, bounds=(1e-4, 1e6), softbounds=(0.1, 10.0), label="Period",
                          doc="Period of the periodic kernel, in the units of the inputs.",
                          metadata=control("Model", invalidates=KERNEL, applies=kernel_is("periodic")))
    noise_var = param.Number(default=problems.PAPER_NOISE_VAR, bounds=(1e-8, 1e8), softbounds=(1e-4, 1.0),
                             label="Noise σ²", doc="Noise variance σ² of the GP, eq. (50) ([MO03]: 0.01).",
                             metadata=control("Model", invalidates=("hyperparameters", *PROBLEM)))
    # --- bootstrap
    s_over_n = param.Number(default=1.0, bounds=(0.05, 5.0), step=0.05, label="Bootstrap size S/N",
                            doc="How large each bootstrap sample is: it draws S of the N training points with "
                                "replacement (some twice, about N·e^(−S/N) not at all); S/N = 1 is Efron's classical "
                                "bootstrap. [MO03] §3, eq. (11).",
                            metadata=control("Bootstrap", invalidates=THEORY, widget="EditableFloatSlider",
                                             throttled=True, format="0.00"))  # never 1.8500000000000003
    loss = param.Selector(default="square", objects=list(LOSSES), label="Test loss",
                          doc="Loss of the learning curve: square (eq. 45) or smoothed ε-insensitive (eq. 46).",
                          metadata=control("Bootstrap", invalidates=(*THEORY, "curve figure")))
    eps = param.Number(default=0.1, bounds=(1e-4, 1e3), softbounds=(0.01, 2.0), label="ε",
                       doc="Half-width ε of the insensitive tube of the ε-insensitive loss ([MO03]: 0.1).",
                       metadata=control("Bootstrap", invalidates=("loss parameters", *THEORY), applies=loss_is("eps-insensitive")))
    beta = param.Number(default=0.1, bounds=(0.01, 1.0), label="β",
                        doc="Relative width β of the quadratic zone of the ε-insensitive loss ([MO03]: 0.1).",
                        metadata=control("Bootstrap", invalidates=("loss parameters", *THEORY), applies=loss_is("eps-insensitive")))
    curve_mc_samples = controls.mc_samples(500, (50, 5000), "MC samples per S (learning curve)",
                                           f"Monte-Carlo bootstrap samples at each S/N of {MC_GRID}.",
                                           metadata=control("Bootstrap", invalidates=("mc",)))
    mc_samples = controls.mc_samples(5000, (500, 50_000), "MC samples (distribution, test inputs)",
                                     "Monte-Carlo bootstrap samples for the predictive distribution, the L1 map and "
                                     "the test inputs.", metadata=control("Bootstrap", invalidates=("mc",)))
    seed = controls.seed(metadata=control("Bootstrap", invalidates=("mc",)))
    auto_mc = param.Boolean(default=True, label="Run Monte-Carlo automatically",
                            doc="Start the Monte-Carlo bootstrap of the active tab whenever the settings change.",
                            metadata=control("Bootstrap", invalidates=("jobs",)))
    # --- view: in a tab, not in the sidebar; the page's own ``tab`` carries the open tab in a link
    input_index = param.Integer(default=0, bounds=(0, 100_000), label="Input index i",
                                doc="Training input whose bootstrap distribution is shown (0-based row of D0).",
                                metadata=control(None, invalidates=("distribution figure",)))
    show_components = param.Boolean(default=False, label="Show Poisson components",
                                    doc="Draw the components of the eq. (60) mixture: k copies of input i "
                                        "in the sample, k = 0, 1, 2, ...",
                                    metadata=control(None, invalidates=("distribution figure",)))
    tab = param.Selector(default="curve", objects=list(GP_TABS), label="Tab",
                         doc="The active view: learning curve, predictive distribution, L1 map or test inputs.",
                         metadata=control(None, invalidates=("jobs", "figures"), link=False))
    data_dir = param.String(default=None, allow_None=True, constant=True, precedence=-1, label="Data directory",
                            doc="Folder whose *.csv files are offered as datasets (EXPLORER_DATA_DIR).")

    # --- outputs (set by the state, read by the views)
    problem = output(problems.RegressionProblem, "Problem",
                     "data, kernel and K of D0 (or its features Φ, K ≈ ΦΦᵀ, on large data).")
    solution = output(replica.ReplicaSolution, "ADATAP solution", "the replica solution at S/N (eqs. 54-59).")
    theory_curve = output(TheoryCurve, "Theory learning curve", "ε(S) of the theory on THEORY_GRID.")
    linear_response = output(LinearResponseCurve, "Linear response and leave-one-out",
                             "ε_IJ(S) (square loss) and the leave-one-out limit on THEORY_GRID.")
    curve_mc = output(CurveMC, "Monte-Carlo learning curve", "MC points so far.")
    distribution = output(experiments.DistributionComparison, "Distribution comparison",
                          "MC samples at every input, L1 distances and noise floor.")
    holdout_theory = output(HoldoutTheory, "Held-out theory", "eq. (48) at the held-out inputs.")
    holdout_ij = output(LinearResponseMoments, "Held-out linear response",
                        "the first-order infinitesimal-jackknife mean and variance at the held-out inputs.")
    holdout_mc = output(experiments.HoldoutComparison, "Held-out comparison",
                        "theory and MC moments at the held-out inputs.")
    evidence = output((gp_evidence.EvidenceFit, gp_evidence.LowRankEvidenceFit), "Evidence maximum",
                      "the hyperparameters of largest evidence on the current CSV data, once computed.")

    def __init__(self, **params):
        dataset = params.pop("dataset", None)  # may name a file of data_dir: set once the choices are known
        super().__init__(**params)
        self.job_runner = JobRunner(self)
        self.data = GPData(self)
        self.problems = GPProblems(self)
        self.data.init_choices()
        if dataset is not None:
            self.dataset = dataset
        # a CSV starts from the hyperparameters of largest evidence unless the caller set them
        hyper = invalidating(self, "hyperparameters")  # the kernel's and the noise's values
        self.hyper = Hyperparameters(self, self.data.fits_evidence() and not set(params) & set(hyper))
        # registered before the refresh: they run first: the new kernel computes with its new start
        self.param.watch(self.hyper.on_kernel, list(invalidating(self, "kernel start")))
        self.param.watch(self.hyper.on_data, list(invalidating(self, "evidence")))
        self.param.watch(self.hyper.on_hyperparameter, list(hyper))
        self.param.watch(self._on_change, list(invalidating(self, *REFRESH_STAGES)))
        self._long_mc = False  # the current problem's Monte-Carlo waits for its button (low-rank path)
        self.param.watch(self.hyper.on_evidence, ["evidence"])
        self.jobs["evidence"].param.watch(self.hyper.on_evidence_error, ["error"])
        self.jobs["problem"].param.watch(self._on_problem_built, ["message"])
        for kind in ("problem", "solution", "holdout_theory", "holdout_ij"):  # the theory every figure needs
            self.jobs[kind].param.watch(self._on_problem_error, ["error"])

    # ----------------------------------------------------------------------------- public API

    @property
    def index(self) -> int:
        """``input_index`` clipped to the rows of the current problem."""
        n = self.problem.n if self.problem is not None else 1
        return min(int(self.input_index), n - 1)

    def run_mc(self, kind: str | None = None) -> None:
        """Start the Monte-Carlo job of ``kind`` (default: the active tab's) even if auto_mc is off."""
        self.run(kind or self.mc_kind)

    @property
    def low_rank(self) -> bool:
        """Whether the current data run the low-rank path (more than MAX_ROWS rows from the server): K ≈ ΦΦᵀ of
        rank ``rank``, the theory and Monte-Carlo on LOW_RANK_GRID, the distribution pages on a sample of inputs."""
        try:
            return self.data.large()
        except EXPECTED_ERRORS:
            return False

    @property
    def mapped_inputs(self) -> np.ndarray | None:
        """The training inputs the distribution and L1 pages cover on large data (a random sample drawn from ``seed``
        as the Monte-Carlo draws them); None when they cover every input (:meth:`GPProblems.mapped_inputs`)."""
        return self.problems.mapped_inputs()

    @property
    def mc_grid(self) -> tuple[float, ...]:
        """S/N of the Monte-Carlo points of the learning curve (MC_GRID, or LOW_RANK_GRID on large data)."""
        return mc_grid(self.problem) if self.problem is not None else MC_GRID

    def _auto_run(self) -> bool:
        """Monte-Carlo starts by itself (``auto_mc``) except on large data, where it takes minutes: its button."""
        return super()._auto_run() and not self._long_mc

    @property
    def mc_kind(self) -> str:
        """The Monte-Carlo job the active tab shows."""
        return "distribution" if self.tab == "l1" else self.tab  # the L1 map shows the distribution's

    def upload_csv(self, filename: str, content: bytes | str) -> None:
        """Use an uploaded CSV as the dataset; its last column becomes the target until another is picked.

        A file that cannot be read clears the figures and says why in ``error``; a readable one starts from the
        hyperparameters of largest evidence on it (``evidence``)."""
        self.data.upload(filename, content)

    def apply_url(self, values: dict) -> None:
        """Apply link parameters one by one, skipping (and reporting) those that are invalid."""
        bad = []
        for name, value in values.items():
            try:
                setattr(self, name, value)
            except Exception:  # noqa: BLE001 - any invalid link value is reported, never raised
                bad.append(f"{name}={value!r}")
        self.linked(set(values))
        self.tell("link", f"Ignored link parameter(s) that do not fit this app: {', '.join(bad)}." if bad else "")

    def linked(self, names: set[str]) -> None:
        """A link or a preset set ``names``: hyperparameters among them stay, also those equal to the current
        values (no change event then), and no evidence search of the data replaces them."""
        self.hyper.linked(names)

    def data_driven_start(self) -> kernels.DataDrivenHyperparameters:
        """ℓ and σ_f² from the current data (:func:`explorer.kernels.data_driven_hyperparameters`)."""
        data = self.data.load()
        return kernels.data_driven_hyperparameters(data.inputs, data.targets)

    @property
    def bin_width(self) -> float:
        """Δh of the predictive-distribution histograms: 0.2 · sd(y)/sd(boston's target) of the training targets
        (:func:`~explorer.gp_bootstrap.l1.scaled_bin_width`; boston: the paper's 0.2)."""
        if self.distribution is not None:
            return self.distribution.l1.bin_width
        return scaled_bin_width(self.problem.y) if self.problem is not None else BIN_WIDTH

    @property
    def hyperparameter_source(self) -> str:
        """Where the kernel's values come from (``HYPERPARAMETERS``): the controls as set, the evidence maximum
        on the data, or that maximum while it is being computed."""
        return self.hyper.source

    @property
    def ard_lengthscales(self) -> np.ndarray | None:
        """ℓ_1..ℓ_d of the kernel, one per input column, while ``ard`` is ticked for CSV data with the se kernel and
        its evidence maximum is known (None otherwise: one ℓ, ``lengthscale``)."""
        return self.hyper.lengthscales()

    def data_file(self) -> dict | None:
        """The CSV file behind the data: ``{"file": its name, "sha256": of its text}``; None for the shipped and
        generated sets."""
        return self.data.file()

    def data_label(self) -> str:
        """The data in a few words, for file names (``GPData.label``)."""
        return self.data.label()

    def _on_problem_built(self, event) -> None:
        if event.new == "done":
            self.refresh()  # the low-rank problem is in the cache: compute with it

    def _on_problem_error(self, event) -> None:
        if event.new:  # the features or the theory (a job on large data) failed: say why over the figure
            self.refuse(event.new)

    def _loss_key(self) -> tuple:
        return (self.loss, *self.loss_params.values())

    @property
    def loss_params(self) -> dict:
        """Parameters of the chosen loss for ``losses.get_loss``: its declared parameters (ε and β of the
        ε-insensitive loss; none of the square loss)."""
        return {name: float(getattr(self, name)) for name in invalidating(self, "loss parameters") if applies(self, name)}

    @property
    def current_theory_error(self) -> float | None:
        """Theory ε at the current S/N from ``solution`` (eq. 45 or 46); None without a solution."""
        return None if self.solution is None else theory_error(self.solution, self.loss, self.loss_params)

    def _on_change(self, *events) -> None:
        """Every change of a control refreshes, also before the first :meth:`refresh` (a link, a notebook)."""
        self.refresh()

    def _prepare_jobs(self) -> JobInputs:
        settings = GPSettings.read(self)  # the form at the click: nothing after reads a control
        self.data.sync_target()
        evidence = self.hyper.choose() if self.hyper.pending else None
        if evidence is not None:
            return plan(settings, evidence=EvidenceRequest(*evidence))
        if settings.tab != HOLDOUT_TAB:
            self.tell("holdout")  # the held-out rows matter in the 'Test inputs' tab only
        inputs = self.problems.prepare(settings)
        if inputs.problem is not None:
            self._long_mc = inputs.long_mc
        return inputs

#: Every declared control of the state: what a link carries (``declarations.link_names``) and ``tab``, which the
#: page's own ``tab`` carries in a link.
URL_PARAMETERS = control_names(GPBootstrapState)
