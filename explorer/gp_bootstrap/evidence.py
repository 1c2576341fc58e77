"""Hyperparameters of the GP on the user's own data: the maximum of the evidence (marginal likelihood).

Seed 000 fixes boston's kernel and noise by hand (l² = 73.54, σ² = 0.01). Data of another scale needs its own:
:func:`maximum_evidence` maximises log p(y | X) (Rasmussen & Williams eq. 2.30, :func:`explorer.regression.log_evidence`)
over the lengthscale ℓ (one per input column with ``ard=True``, automatic relevance determination) and the signal
variance σ_f² of a squared-exponential kernel and the noise variance σ². :func:`fit_to_data` is what the app and the
command line call on the user's data: that maximum on at most :data:`EVIDENCE_ROWS` rows drawn at random
(:func:`subsample_rows`, seed :data:`SUBSAMPLE_SEED`), so both choose the same model for the same file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize

from explorer import regression
from explorer.kernels import SquaredExponential, check_inputs, data_driven_hyperparameters
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["EvidenceFit", "maximum_evidence", "fit_to_data", "subsample_rows", "EVIDENCE_STARTS", "NOISE_FLOOR",
           "EVIDENCE_ROWS", "SUBSAMPLE_SEED"]

#: Seed of the random row subsamples of the user's data (:func:`subsample_rows`): the app's subsample of a large
#: CSV and the rows :func:`fit_to_data` fits on, the same rows in every session, link and command.
SUBSAMPLE_SEED = 0
#: Most rows on which :func:`fit_to_data` maximises the evidence (a random subsample, seed ``SUBSAMPLE_SEED``, when
#: there are more): each evaluation is a Cholesky factorisation and an inverse of an n × n matrix, ~60-80 of them in
#: all (~1 s at 300 rows on the 2-core machine, ~4 s at 500, ~30 s at 1000).
EVIDENCE_ROWS = 300

#: Starts of the L-BFGS-B runs, as factors of the data-driven start (ℓ₀ the median distance, v = var(y)):
#: (ℓ/ℓ₀, σ_f²/v, σ²/v). The best run wins.
EVIDENCE_STARTS = ((1.0, 1.0, 0.1), (0.3, 1.0, 0.01), (3.0, 1.0, 0.3))
#: Search box around the start, in factors of ℓ₀ and v: wide enough for any sensible fit. σ² ≥ NOISE_FLOOR · v:
#: the order of seed 000's boston setting (σ² = 0.01 for var(medv) = 84.6, 1.2e-4), below which the ADATAP theory
#: of a nearly noise-free target stops converging (a noise-free sin(x) target: σ² → 4e-7 v, ADATAP broke down).
NOISE_FLOOR = 1e-4
_BOX = {"lengthscale": (1e-3, 1e3), "signal_var": (1e-4, 1e4), "noise_var": (NOISE_FLOOR, 1e2)}
#: Errors of a failed evaluation (a singular matrix at an extreme point): that point counts as -inf evidence.
_NUMERICAL = (np.linalg.LinAlgError, FloatingPointError, ValueError)


@dataclass(frozen=True, eq=False)
class EvidenceFit:
    """The squared-exponential GP hyperparameters of largest evidence on some data.

    Attributes
    ----------
    lengthscale : float, or ndarray of shape (d,) with ``ard``
        ℓ (or ℓ_1..ℓ_d) at the maximum.
    signal_var, noise_var : float
        σ_f² and σ² at the maximum.
    log_evidence : float
        log p(y | X) there (R&W eq. 2.30).
    n : int
        Number of rows the evidence was maximised on.
    n_evaluations : int
        Evidence evaluations over all runs.
    converged : bool
        Whether the best run met L-BFGS-B's tolerance.
    at_noise_floor : bool
        Whether σ² stopped at its lower bound ``NOISE_FLOOR`` · var(y) (a nearly noise-free target).
    ard : bool
        Whether each input column has its own lengthscale.
    n_data : int or None
        Rows of the data the ``n`` rows were drawn from (:func:`fit_to_data`); None when the fit saw the data it was
        given.
    seed : int or None
        Seed of that draw (None without one).
    """

    lengthscale: float | np.ndarray
    signal_var: float
    noise_var: float
    log_evidence: float
    n: int
    n_evaluations: int
    converged: bool
    at_noise_floor: bool = False
    ard: bool = False
    n_data: int | None = None
    seed: int | None = None

    @property
    def kernel(self) -> SquaredExponential:
        """The fitted covariance k, a :class:`~explorer.kernels.SquaredExponential`."""
        return SquaredExponential(self.lengthscale, self.signal_var)

    @property
    def note(self) -> str:
        """How the values were chosen, in a few words ("maximum evidence on 300 of 3,000 rows drawn at random,
        seed 0")."""
        which = "ℓ_1..ℓ_d (ARD)" if self.ard else "ℓ"
        rows = (f"all {self.n:,} rows" if self.n_data is None or self.n_data == self.n else
                f"{self.n:,} of {self.n_data:,} rows drawn at random, seed {self.seed}")
        floor = "; σ² at its lower bound" if self.at_noise_floor else ""
        return f"{which}, σ_f², σ² by maximum evidence on {rows}{floor}"

    def as_dict(self) -> dict:
        """The fit for JSON: every attribute (``lengthscale`` a list with ``ard``) and ``note``."""
        ell = np.asarray(self.lengthscale).tolist()
        return {"lengthscale": ell, "signal_var": self.signal_var, "noise_var": self.noise_var,
                "log_evidence": self.log_evidence, "rows": self.n, "of_rows": self.n_data, "seed": self.seed,
                "ard": self.ard, "n_evaluations": self.n_evaluations, "converged": self.converged,
                "at_noise_floor": self.at_noise_floor, "note": self.note}


class _NegativeEvidence:
    """φ = log(ℓ, σ_f², σ²) (ℓ_1..ℓ_d first with ARD) ↦ (−log p(y | X), −gradient), counting the evaluations."""

    def __init__(self, X: np.ndarray, y: np.ndarray):
        self.X, self.y, self.n_eval = X, y, 0

    def __call__(self, phi: np.ndarray) -> tuple[float, np.ndarray]:
        self.n_eval += 1
        try:
            with np.errstate(all="ignore"):
                value, grad = regression.log_evidence(_kernel(phi), self.X, self.y, float(np.exp(phi[-1])), True)
        except _NUMERICAL:
            return np.inf, np.zeros(phi.size)
        return -value, -grad  # theta of SquaredExponential: (log ℓ_j..., log σ_f²), then log σ² (R&W eq. 5.9)


def _kernel(phi: np.ndarray) -> SquaredExponential:
    """The kernel of φ: one lengthscale, or one per input column when φ has more than three entries."""
    ell = np.exp(phi[:-2])
    return SquaredExponential(ell if ell.size > 1 else float(ell[0]), float(np.exp(phi[-2])))


def _box(ell0: float, var: float, d: int) -> np.ndarray:
    """Log bounds of φ, shape (d + 2, 2): ``_BOX`` in factors of ℓ₀ (each of the d lengthscales) and of v."""
    scale = {"lengthscale": ell0, "signal_var": var, "noise_var": var}
    rows = [[scale[k] * lo, scale[k] * hi] for k, (lo, hi) in _BOX.items()]
    return np.log(rows[:1] * d + rows[1:])


def maximum_evidence(X, y, *, ard: bool = False, max_iter: int = 200, hooks: Hooks | None = None) -> EvidenceFit:
    """ℓ, σ_f² and σ² of a squared-exponential GP that maximise the evidence log p(y | X) (R&W eq. 2.30).

    L-BFGS-B on the logarithms with the analytic gradient (R&W eq. 5.9), one run from each of
    ``EVIDENCE_STARTS`` around the data's own scale (:func:`explorer.kernels.data_driven_hyperparameters`),
    inside a box of ``_BOX`` factors of that scale (σ² ≥ ``NOISE_FLOOR`` · var(y)). Deterministic: no random starts.
    With ``ard`` every input column j has its own ℓ_j (automatic relevance determination, R&W eq. 5.2), all started
    at the same value and bounded by the same box. Each evaluation costs one Cholesky factorisation and one inverse
    of the n × n matrix K + σ² I.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Inputs, n >= 3.
    y : ndarray of shape (n,)
        Targets (not centred: the GP has prior mean 0, as in the bootstrap tabs).
    ard : bool, optional
        One lengthscale per input column (``lengthscale`` of the result an ndarray of shape (d,)).
    max_iter : int
        L-BFGS-B iterations per run.
    hooks : Hooks, optional
        ``check`` before and ``report`` after each run (progress and cancellation).

    Returns
    -------
    EvidenceFit

    Raises
    ------
    ValueError
        If ``X`` and ``y`` do not describe the same n >= 3 finite cases.
    numpy.linalg.LinAlgError
        If the evidence could not be evaluated at any point.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (40, 1)); y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(40)
    >>> fit = maximum_evidence(X, y)
    >>> 0.5 < fit.lengthscale < 3 and fit.noise_var < 0.05
    True
    """
    X, y = _data_iv(X, y)
    start, d = data_driven_hyperparameters(X, y), X.shape[1] if ard else 1
    bounds, hooks = _box(start.lengthscale, start.signal_var, d), hooks or NO_HOOKS
    objective, best = _NegativeEvidence(X, y), None
    for k, (a, b, c) in enumerate(EVIDENCE_STARTS):
        hooks.check(k, len(EVIDENCE_STARTS), "runs")
        phi0 = np.log([a * start.lengthscale] * d + [b * start.signal_var, c * start.signal_var])
        res = optimize.minimize(objective, phi0, jac=True, method="L-BFGS-B", bounds=bounds,
                                options={"maxiter": max_iter})
        hooks.report((k + 1) / len(EVIDENCE_STARTS), f"run {k + 1}/{len(EVIDENCE_STARTS)}")
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise np.linalg.LinAlgError("the evidence could not be evaluated at any point of the search (numerically "
                                    "singular matrices). Standardise the data or remove duplicated rows.")
    kernel, noise = _kernel(best.x), float(np.exp(best.x[-1]))
    ell = kernel.params["lengthscale"] if ard else float(np.exp(best.x[0]))
    floor = bool(best.x[-1] <= bounds[-1, 0] + 1e-9)
    return EvidenceFit(ell, float(np.exp(best.x[-2])), noise, float(-best.fun), X.shape[0], objective.n_eval,
                       bool(best.success), floor, ard=ard)


def _data_iv(X, y) -> tuple[np.ndarray, np.ndarray]:
    X, y = check_inputs(X), np.asarray(y, dtype=float)
    if X.shape[0] < 3 or y.shape != (X.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"`X` (n, d) and `y` (n,) must describe the same n >= 3 finite cases, got shapes "
                         f"{X.shape} and {y.shape}. Use a table with at least 3 rows of numbers.")
    return X, y


def subsample_rows(n: int, size: int, seed: int = SUBSAMPLE_SEED) -> np.ndarray:
    """``min(size, n)`` of the row indices 0..n−1 drawn without replacement with ``seed``, in increasing order
    (all rows when ``size >= n``).

    Parameters
    ----------
    n : int
        Rows of the data.
    size : int
        Rows wanted.
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    ndarray of int, shape (min(size, n),)
    """
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=min(size, n), replace=False))


def fit_to_data(X, y, *, ard: bool = False, max_rows: int = EVIDENCE_ROWS, seed: int = SUBSAMPLE_SEED,
                hooks: Hooks | None = None) -> EvidenceFit:
    """The model of the user's data in the app and on the command line: :func:`maximum_evidence` on at most
    ``max_rows`` of its rows, drawn at random with ``seed`` (:func:`subsample_rows`) when it has more.

    Parameters
    ----------
    X, y, ard
        As in :func:`maximum_evidence`.
    max_rows : int, optional
        Most rows the evidence is maximised on (default :data:`EVIDENCE_ROWS`), at least 3.
    seed : int, optional
        Seed of the rows (default :data:`SUBSAMPLE_SEED`).
    hooks : Hooks, optional
        Progress and cancellation, as in :func:`maximum_evidence`.

    Returns
    -------
    EvidenceFit
        With ``n`` the rows fitted, ``n_data`` = n and ``seed`` (None when all rows were fitted).

    Raises
    ------
    ValueError, numpy.linalg.LinAlgError
        As :func:`maximum_evidence`; ValueError also for ``max_rows`` < 3.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (500, 1)); y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(500)
    >>> fit = fit_to_data(X, y)
    >>> fit.note
    'ℓ, σ_f², σ² by maximum evidence on 300 of 500 rows drawn at random, seed 0'
    """
    if int(max_rows) != max_rows or max_rows < 3:
        raise ValueError(f"`max_rows` must be a whole number >= 3, got {max_rows!r}. It bounds the rows the evidence "
                         "is maximised on.")
    X, y = _data_iv(X, y)
    n = X.shape[0]
    rows = subsample_rows(n, int(max_rows), seed) if n > max_rows else np.arange(n)
    fit = maximum_evidence(X[rows], y[rows], ard=ard, hooks=hooks)
    return replace(fit, n_data=n, seed=seed if rows.size < n else None)
