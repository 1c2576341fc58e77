"""Session state of "Bootstrap, step by step": the settings, the resamples drawn so far and the theory beside them.

Nothing here builds a widget or a plot. The problem (the last ``n_points`` rows of a generated 1-D set, a GP
kernel and noise) and the ADATAP solution at S/N follow the settings; :meth:`StepState.draw` adds resamples
j = B, B + 1, … of ``seed`` (:func:`explorer.gp_bootstrap.steps.draw_resamples`: the learning curve's Monte-Carlo
samples), :meth:`StepState.reset` forgets them. A change of a setting (the S/N slider above all) starts an empty
set of resamples and keeps those drawn so far: going back to those settings shows them again (at most
:data:`KEEP_SETTINGS` earlier settings and :data:`KEEP_RESAMPLES` resamples among them are kept, the oldest dropped
first).

:meth:`StepState.draw` computes where it is called (a notebook cell, a script). The page calls
:meth:`StepState.request_draws` instead: the resamples are drawn on a thread of their own and appended where the
session lives (its ``dispatch``), so the server's event loop only redraws. Requests that arrive while a draw
runs (Play's one-a-tick) are added up and drawn together next, so a busy server draws fewer, larger steps rather
than falling behind.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import param

from explorer import datasets, kernels
from explorer.bootstrap import replica
from explorer.gp_bootstrap import experiments, steps
from explorer.views.common.state import controls
from explorer.views.common.state.declarations import control, invalidating
from explorer.views.common.state.jobs import HasJobs, JobRunner
from explorer.views.common.state.values import CheckedState
from explorer.views.step_by_step import sentences
from explorer.views.step_by_step.errors import WORDING
from explorer.views.step_by_step.sentences import CLEAR_GAP_SE, MIN_RESAMPLES_TO_COMPARE

__all__ = ["StepState", "DATASETS", "DRAWS", "KEEP_CURVES", "GRID_POINTS", "KEEP_SETTINGS", "KEEP_RESAMPLES",
           "CLEAR_GAP_SE", "MIN_RESAMPLES_TO_COMPARE"]

#: The generated 1-D regression sets the page offers (every point visible on one axis).
DATASETS = ("toy", "teacher")
#: The numbers of resamples the Draw buttons add.
DRAWS = (1, 10, 100, 1000)
#: GP means kept for the figure: the last resample's and the ~20 before it (faint).
KEEP_CURVES = 21
#: Inputs on which the GP means are drawn.
GRID_POINTS = 150
#: Earlier settings (e.g. S/N values) whose resamples are kept: going back to them shows them again.
KEEP_SETTINGS = 6
#: Most resamples kept over those earlier settings together: beyond it the oldest settings' resamples are dropped
#: (the settings just left always stay; with N = 30 points 20,000 resamples take about 10 MB).
KEEP_RESAMPLES = 20_000
#: The names the controls give the computations their change makes stale (:func:`control`'s ``invalidates``): the
#: problem (data, kernel, noise), the theory at S/N and the resamples (a new set, those drawn kept for coming back).
_PROBLEM = ("problem", "theory", "resamples")


@dataclass(frozen=True)
class _Drawn:
    """Everything drawn: resamples 0 .. ``stop`` − 1 of settings ``generation`` (the last draw began at ``start``)."""

    generation: int
    start: int
    stop: int
    occupations: np.ndarray
    train: np.ndarray
    curves: np.ndarray
    running: steps.RunningEstimate


@dataclass(frozen=True)
class _Kept:
    """The resamples drawn at earlier settings: ``n_drawn`` of them, with the arrays the figures read."""

    n_drawn: int
    occupations: np.ndarray
    train: np.ndarray
    curves: np.ndarray
    running: steps.RunningEstimate


@dataclass(frozen=True)
class _DrawInputs:
    """What a draw of ``n`` more resamples reads: the problem, the settings and what has been ``drawn``."""

    problem: experiments.RegressionProblem
    s_over_n: float
    seed: int
    K_grid: np.ndarray
    drawn: _Drawn
    n: int


class StepState(CheckedState, HasJobs):
    """Settings of the step-by-step page, the resamples drawn so far and the theory, for one session (or notebook).

    Outputs: ``problem``, ``solution`` (ADATAP at S/N), ``approx_solution`` and ``n_drawn`` (changes on every
    draw; the arrays are ``occupations``, ``train``, ``curves`` and the running estimate ``running``).

    Each control is declared once (:func:`~explorer.views.common.state.declarations.control`): its sidebar group (none
    for S/N, the tab's slider), what it makes stale (the settings the resamples are kept under are those that make
    them stale) and, for α and the period, the kernel it applies to. Every control goes into the link.
    """

    outputs = ("problem", "solution", "approx_solution")
    error_wordings = WORDING
    expected_errors = (replica.ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError,
                       IndexError, datasets.DatasetError)

    dataset = param.Selector(default="toy", objects=list(DATASETS), label="Dataset",
                             doc="Generated 1-D regression data: toy ([LSWV05] eq. 19) or teacher (a GP teacher, "
                                 "[Fis16]); the page uses its last N rows.",
                             metadata=control("Data", invalidates=_PROBLEM))
    n_points = param.Integer(default=30, bounds=(10, 200), label="Points N",
                             doc="Number N of training points: the last N rows of the data set (teacher has 64).",
                             metadata=control("Data", invalidates=_PROBLEM))
    kernel = param.Selector(default="se", objects=list(kernels.KERNEL_NAMES), label="Kernel",
                            doc="Covariance function of the GP: squared exponential (se), rational quadratic (rq), "
                                "exponential, Matérn 3/2, Matérn 5/2, periodic.",
                            metadata=control("Kernel and noise", invalidates=_PROBLEM))
    lengthscale = param.Number(default=0.1, bounds=(1e-4, 1e4), softbounds=(0.01, 1.0), label="Lengthscale",
                               doc="Lengthscale ℓ of the kernel, in the units of x.",
                               metadata=control("Kernel and noise", invalidates=_PROBLEM))
    signal_var = param.Number(default=1.0, bounds=(1e-6, 1e6), softbounds=(0.01, 10.0), label="Signal variance",
                              doc="Prior variance of the latent function, k(x, x).",
                              metadata=control("Kernel and noise", invalidates=_PROBLEM))
    alpha = param.Number(default=1.0, bounds=(1e-3, 1e3), softbounds=(0.1, 10.0), label="α (rq)",
                         doc="Shape parameter α of the rational quadratic kernel.",
                         metadata=control("Kernel and noise", invalidates=_PROBLEM, applies=lambda s: s.kernel == "rq"))
    period = param.Number(default=1.0, bounds=(1e-4, 1e4), softbounds=(0.1, 10.0), label="Period",
                          doc="Period of the periodic kernel, in the units of x.",
                          metadata=control("Kernel and noise", invalidates=_PROBLEM,
                                           applies=lambda s: s.kernel == "periodic"))
    noise_var = param.Number(default=0.1, bounds=(1e-6, 1e4), softbounds=(1e-3, 1.0), label="Noise σ²",
                             doc="Noise variance σ² of the GP, eq. (50); s copies of a point act as one point of "
                                 "noise σ²/s.",
                             metadata=control("Kernel and noise", invalidates=_PROBLEM))
    s_over_n = param.Number(default=1.0, bounds=(0.05, 5.0), step=0.05, label="Bootstrap size S/N",
                            doc="Mean size S of a resample over N: each point comes s_i ~ Poisson(S/N) times "
                                "(S/N = 1 is Efron's classical bootstrap).",
                            metadata=control(None, invalidates=("theory", "resamples")))
    seed = controls.seed("Seed of the resamples: resample j of seed s is sample j of `explorer learning-curve "
                         "--seed s` at this S/N.", metadata=control("Resamples", invalidates=("resamples",)))
    input_index = param.Integer(default=0, bounds=(0, 199), label="Point i",
                                doc="The training point whose bootstrapped prediction f_i is shown (0-based, in the "
                                    "order of the data; click a point to pick it).",
                                metadata=control("Resamples"))
    playing = param.Boolean(default=False, precedence=-1, label="Playing",
                            doc="Draw one resample at a time (the page's Play/Pause).")

    problem = param.ClassSelector(class_=experiments.RegressionProblem, default=None, allow_None=True,
                                  precedence=-1, label="Problem", doc="Output: the N points, kernel and K.")
    solution = param.ClassSelector(class_=replica.ReplicaSolution, default=None, allow_None=True, precedence=-1,
                                   label="ADATAP solution", doc="Output: the replica solution at S/N.")
    approx_solution = param.ClassSelector(class_=replica.ReplicaSolution, default=None, allow_None=True,
                                          precedence=-1, label="Approximate ADATAP",
                                          doc="Output: the approximate replica solution at S/N.")
    n_drawn = param.Integer(default=0, bounds=(0, None), precedence=-1, label="Resamples drawn",
                            doc="Output: how many resamples have been drawn since the last reset.")
    drawing = param.Integer(default=0, bounds=(0, None), precedence=-1, label="Resamples being drawn",
                            doc="Output: how many resamples a background draw (request_draws) is computing now.")

    def __init__(self, **params):
        super().__init__(**params)
        self.job_runner = JobRunner(self)
        self._clear()
        self._queued = 0                               # resamples requested while a draw runs
        self._generation = 0                           # a reset or new settings: draws under way are dropped
        self._busy = False                             # a draw runs (set and cleared where the session lives)
        self._draw_done = threading.Event()            # the running draw's thread has finished (for ``wait``)
        self._draw_done.set()
        self._kept: dict[tuple, _Kept] = {}            # resamples of earlier settings, the oldest first
        self._drawn_key: tuple | None = None           # the settings the resamples shown were drawn at
        self.param.watch(self._on_change, list(invalidating(self)))

    # ----------------------------------------------------------------------------- actions

    def draw(self, n: int = 1) -> None:
        """Add resamples B .. B + n − 1 of ``seed`` (B = ``n_drawn``), their GP means and the running estimate."""
        if self.problem is None:
            return
        self._append(self._compute(self._draw_inputs(int(n))))

    def request_draws(self, n: int = 1) -> None:
        """Draw ``n`` more resamples on a background thread (what the page's buttons do): they appear, with the
        figures, when ready; requests made meanwhile are drawn together next. ``wait`` waits for them."""
        if self.problem is None or self.job_runner.closed:
            return
        self._queued += int(n)
        if not self._busy:
            self._start_draw()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background jobs and draws (see :meth:`~explorer.views.common.state.jobs.JobRunner.wait`)."""
        if not super().wait(timeout):
            return False
        flush = getattr(self.dispatch, "flush", None)
        while self._busy or self._queued:
            if not self._draw_done.wait(timeout):
                return False
            if flush is None:  # the session's loop shows it (a served page): nothing more to wait for here
                return True
            flush()
        return True

    def _draw_inputs(self, n: int) -> _DrawInputs:
        """What a draw of ``n`` more resamples reads (a snapshot: the arrays are replaced, never changed)."""
        drawn = _Drawn(self._generation, self.n_drawn, self.n_drawn, self.occupations, self.train, self.curves,
                       self.running)
        return _DrawInputs(self.problem, float(self.s_over_n), int(self.seed), self._K_grid, drawn, int(n))

    @staticmethod
    def _compute(inputs: _DrawInputs) -> _Drawn:
        """``inputs.n`` more resamples appended to those drawn, with the running estimate (on the draw's thread: the
        session's event loop only shows the result)."""
        p, old = inputs.problem, inputs.drawn
        start, stop = old.stop, old.stop + inputs.n
        new = steps.draw_resamples(p.K, p.y, p.noise_var, inputs.s_over_n, start, stop, rng=inputs.seed,
                                   K_test=inputs.K_grid)
        occupations = np.concatenate([old.occupations, new.occupations])
        train = np.concatenate([old.train, new.train])
        at = steps.running_efron(occupations, train, p.y, steps.checkpoints(start, stop))
        running = steps.RunningEstimate(*(np.concatenate([before, now]) for before, now in
                                          zip((old.running.counts, old.running.value, old.running.se),
                                              (at.counts, at.value, at.se))))
        return _Drawn(old.generation, start, stop, occupations, train,
                      np.concatenate([old.curves, new.test])[-KEEP_CURVES:], running)

    def _start_draw(self) -> None:
        n, self._queued = self._queued, 0
        inputs = self._draw_inputs(n)
        done = self._draw_done = threading.Event()
        self._busy = True
        self.drawing = n

        def run() -> None:
            try:
                drawn = self._compute(inputs)
            except self.expected_errors as err:
                message = self.describe_error(err)
                self.dispatch(lambda: self._drawn(None, message))
            except Exception as err:  # noqa: BLE001 - a bug must not kill the session: say it
                message = f"Unexpected error ({type(err).__name__}: {err}); see the server log."
                self.dispatch(lambda: self._drawn(None, message))
            else:
                self.dispatch(lambda: self._drawn(drawn, ""))
            finally:
                done.set()
        threading.Thread(target=run, name="explorer-steps-draw", daemon=True).start()

    def _drawn(self, drawn: _Drawn | None, error: str) -> None:
        """Session side of a background draw: append it (unless reset meanwhile), then start the next one."""
        self._busy = False
        self.drawing = 0
        if self.job_runner.closed:
            return
        if error:
            self._queued = 0
            self.error = error
            return
        self._append(drawn)
        if self._queued and self.problem is not None:
            self._start_draw()

    def _append(self, drawn: _Drawn) -> None:
        if drawn.generation != self._generation or drawn.start != self.n_drawn:
            return  # drawn for settings or resamples that are gone (a reset, a new S/N)
        self.occupations, self.train, self.curves = drawn.occupations, drawn.train, drawn.curves
        self.running = drawn.running
        self.n_drawn = drawn.stop

    def reset(self) -> None:
        """Forget the resamples drawn at the current settings (and those being drawn); those kept of earlier
        settings stay."""
        self._generation += 1
        self._queued = 0
        self._clear()
        self.n_drawn = 0

    # ----------------------------------------------------------------------------- what the figures read

    @property
    def index(self) -> int:
        """``input_index`` within the N points."""
        n = self.problem.n if self.problem is not None else 1
        return min(int(self.input_index), n - 1)

    @property
    def grid(self) -> np.ndarray:
        """The inputs the GP means are drawn on, ndarray of shape (GRID_POINTS,)."""
        return self._grid

    @property
    def expected_left_out(self) -> float:
        """N e^(−S/N), the mean number of points a resample leaves out."""
        n = self.problem.n if self.problem is not None else self.n_points
        return n * float(np.exp(-self.s_over_n))

    @property
    def theory(self) -> dict[str, float]:
        """ε(S) of ADATAP and of the approximate ADATAP, eq. (45) (empty without a problem)."""
        if self.solution is None:
            return {}
        return {"ADATAP": replica.bootstrap_test_error(self.solution),
                "approx. ADATAP": replica.bootstrap_test_error(self.approx_solution)}

    def kept_s_over_n(self) -> dict[float, int]:
        """The resamples kept at other S/N values with the other settings as now: {S/N: number of resamples}."""
        now = self._settings_key()
        at = invalidating(self).index(self.param.s_over_n.name)
        return {key[at]: kept.n_drawn for key, kept in self._kept.items()
                if key[:at] + key[at + 1:] == now[:at] + now[at + 1:]}

    def sentence(self) -> str:
        """What a bootstrap sample is, what has been drawn and, once it is clear, why the theories and Efron's
        estimate differ (plain words first, the paper's symbols second:
        :func:`~explorer.views.step_by_step.sentences.sentence`)."""
        return sentences.sentence(self, kept_before=bool(self._kept))

    def comparison_sentence(self) -> str:
        """Why ADATAP and Efron's estimate differ, once they differ clearly ("" otherwise:
        :func:`~explorer.views.step_by_step.sentences.comparison_sentence`)."""
        return sentences.comparison_sentence(self)

    # ----------------------------------------------------------------------------- settings → problem

    def _settings_key(self) -> tuple:
        return tuple(getattr(self, name) for name in invalidating(self))

    def _keep_drawn(self) -> None:
        """Keep the resamples shown (under the settings they were drawn at), dropping the oldest kept beyond
        :data:`KEEP_SETTINGS` settings or :data:`KEEP_RESAMPLES` resamples (the settings just left stay)."""
        if self._drawn_key is None or self.n_drawn == 0:
            return
        self._kept.pop(self._drawn_key, None)
        self._kept[self._drawn_key] = _Kept(self.n_drawn, self.occupations, self.train, self.curves, self.running)
        while len(self._kept) > 1 and (len(self._kept) > KEEP_SETTINGS or
                                       sum(k.n_drawn for k in self._kept.values()) > KEEP_RESAMPLES):
            del self._kept[next(iter(self._kept))]

    def _restore_drawn(self, n: int) -> int:
        """Show the resamples kept for the current settings (none: an empty set of N points); how many."""
        key = self._settings_key()
        kept = self._kept.pop(key, None)
        self._drawn_key = key
        self._clear(n)
        if kept is None:
            return 0
        self.occupations, self.train, self.curves, self.running = (kept.occupations, kept.train, kept.curves,
                                                                   kept.running)
        return kept.n_drawn

    def _prepare_jobs(self) -> None:
        data = datasets.load(self.dataset, rng=datasets.GENERATED_DATA_SEED)
        n = min(int(self.n_points), data.n)
        self.tell("n_points", "" if n == int(self.n_points) else
                  f"{data.name} has {data.n} rows: the page uses all {data.n}.")
        kernel = self._kernel()
        problem = experiments.regression_problem(data, kernel, self.noise_var, holdout=data.n - n)
        S = problem.sample_size(float(self.s_over_n))
        solution = replica.solve_replica(problem.K, problem.y, problem.noise_var, S)
        approx = replica.approximate_replica(problem.K, problem.y, problem.noise_var, S)
        x = problem.X[:, 0]
        pad = 0.05 * (x.max() - x.min())
        self._grid = np.linspace(x.min() - pad, x.max() + pad, GRID_POINTS)
        self._K_grid = kernel(self._grid[:, None], problem.X)
        self.param.input_index.bounds = (0, problem.n - 1)
        if self.input_index > problem.n - 1:
            self.input_index = problem.n - 1
        self._generation += 1
        self._queued = 0
        self._keep_drawn()
        n_drawn = self._restore_drawn(problem.n)
        for name, value in (("problem", problem), ("solution", solution), ("approx_solution", approx),
                            ("n_drawn", n_drawn)):
            self._assign(name, value)

    def _kernel(self) -> kernels.Kernel:
        """The kernel named ``kernel`` with the controls of the same names as its hyperparameters."""
        names = kernels.make_kernel(self.kernel, 1).params  # the hyperparameters of that kernel
        return kernels.make_kernel(self.kernel, 1, **{name: getattr(self, name) for name in names})

    def _clear(self, n: int | None = None) -> None:
        n = n if n is not None else (self.problem.n if self.problem is not None else 0)
        self.occupations = np.zeros((0, n), dtype=np.int64)
        self.train = np.zeros((0, n))
        self.curves = np.zeros((0, GRID_POINTS))
        self.running = steps.RunningEstimate(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
        if not hasattr(self, "_grid"):
            self._grid, self._K_grid = np.zeros(GRID_POINTS), None

