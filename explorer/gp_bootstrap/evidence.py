"""Hyperparameters of the GP on the user's own data: the maximum of the evidence (marginal likelihood).

Seed 000 fixes boston's kernel and noise by hand (l² = 73.54, σ² = 0.01). Data of another scale needs its own:
:func:`maximum_evidence` maximises log p(y | X) (Rasmussen & Williams eq. 2.30, :func:`explorer.regression.log_evidence`)
over the lengthscale ℓ and the signal variance σ_f² of a squared-exponential kernel and the noise variance σ².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from explorer import regression
from explorer.kernels import SquaredExponential, check_inputs, data_driven_hyperparameters
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["EvidenceFit", "maximum_evidence", "EVIDENCE_STARTS", "NOISE_FLOOR"]

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


@dataclass(frozen=True)
class EvidenceFit:
    """The squared-exponential GP hyperparameters of largest evidence on some data.

    Attributes
    ----------
    lengthscale, signal_var, noise_var : float
        ℓ, σ_f² and σ² at the maximum.
    log_evidence : float
        log p(y | X) there (R&W eq. 2.30).
    n : int
        Number of rows of the data.
    n_evaluations : int
        Evidence evaluations over all runs.
    converged : bool
        Whether the best run met L-BFGS-B's tolerance.
    at_noise_floor : bool
        Whether σ² stopped at its lower bound ``NOISE_FLOOR`` · var(y) (a nearly noise-free target).
    """

    lengthscale: float
    signal_var: float
    noise_var: float
    log_evidence: float
    n: int
    n_evaluations: int
    converged: bool
    at_noise_floor: bool = False


class _NegativeEvidence:
    """φ = log(ℓ, σ_f², σ²) ↦ (−log p(y | X), −gradient), counting the evaluations."""

    def __init__(self, X: np.ndarray, y: np.ndarray):
        self.X, self.y, self.n_eval = X, y, 0

    def __call__(self, phi: np.ndarray) -> tuple[float, np.ndarray]:
        self.n_eval += 1
        ell, s2, noise = np.exp(phi)
        try:
            with np.errstate(all="ignore"):
                value, grad = regression.log_evidence(SquaredExponential(ell, s2), self.X, self.y, noise, True)
        except _NUMERICAL:
            return np.inf, np.zeros(3)
        return -value, -grad  # theta of SquaredExponential: (log ℓ, log σ_f²), then log σ²


def _box(ell0: float, var: float) -> np.ndarray:
    scale = {"lengthscale": ell0, "signal_var": var, "noise_var": var}
    return np.log([[scale[k] * lo, scale[k] * hi] for k, (lo, hi) in _BOX.items()])


def maximum_evidence(X, y, *, max_iter: int = 200, hooks: Hooks | None = None) -> EvidenceFit:
    """ℓ, σ_f² and σ² of a squared-exponential GP that maximise the evidence log p(y | X) (R&W eq. 2.30).

    L-BFGS-B on the logarithms with the analytic gradient (R&W eq. 5.9), one run from each of
    ``EVIDENCE_STARTS`` around the data's own scale (:func:`explorer.kernels.data_driven_hyperparameters`),
    inside a box of ``_BOX`` factors of that scale (σ² ≥ ``NOISE_FLOOR`` · var(y)). Deterministic: no random starts. Each evaluation costs one
    Cholesky factorisation and one inverse of the n × n matrix K + σ² I.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Inputs, n >= 3.
    y : ndarray of shape (n,)
        Targets (not centred: the GP has prior mean 0, as in the bootstrap tabs).
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
    X, y = check_inputs(X), np.asarray(y, dtype=float)
    if X.shape[0] < 3 or y.shape != (X.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"`X` (n, d) and `y` (n,) must describe the same n >= 3 finite cases, got shapes "
                         f"{X.shape} and {y.shape}. Use a table with at least 3 rows of numbers.")
    start = data_driven_hyperparameters(X, y)
    bounds, hooks = _box(start.lengthscale, start.signal_var), hooks or NO_HOOKS
    objective, best = _NegativeEvidence(X, y), None
    for k, (a, b, c) in enumerate(EVIDENCE_STARTS):
        hooks.check(k, len(EVIDENCE_STARTS), "runs")
        phi0 = np.log([a * start.lengthscale, b * start.signal_var, c * start.signal_var])
        res = optimize.minimize(objective, phi0, jac=True, method="L-BFGS-B", bounds=bounds,
                                options={"maxiter": max_iter})
        hooks.report((k + 1) / len(EVIDENCE_STARTS), f"run {k + 1}/{len(EVIDENCE_STARTS)}")
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise np.linalg.LinAlgError("the evidence could not be evaluated at any point of the search (numerically "
                                    "singular matrices). Standardise the data or remove duplicated rows.")
    ell, s2, noise = (float(v) for v in np.exp(best.x))
    floor = bool(best.x[2] <= bounds[2, 0] + 1e-9)
    return EvidenceFit(ell, s2, noise, float(-best.fun), X.shape[0], objective.n_eval, bool(best.success), floor)
