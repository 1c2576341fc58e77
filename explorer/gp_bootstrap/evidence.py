r"""Hyperparameters of the GP on the user's own data: the maximum of the evidence (marginal likelihood).

[MO03] fixes boston's kernel and noise by hand (l² = 73.54, σ² = 0.01, with the square loss of its eq. (50)). Data of another scale needs its own:
the evidence log p(y | X) = log N(y | 0, K + σ²I) (Rasmussen & Williams eq. 2.30) is maximised over the lengthscale ℓ
(one per input column with ``ard=True``, automatic relevance determination) and the signal variance σ_f² of a
squared-exponential kernel and the noise variance σ², for two models of the same data:

* the exact GP (:func:`maximum_evidence`, K = k(X, X) dense, O(n³) per evaluation). :func:`fit_to_data` is what the
  app and the command line call on the user's data: that maximum on at most :data:`EVIDENCE_ROWS` rows drawn at
  random (:func:`subsample_rows`, seed :data:`SUBSAMPLE_SEED`), so both choose the same model for the same file;
* the rank-m Nyström GP, K̃ = ΦΦᵀ (:func:`maximum_evidence_lowrank`, O(N m²) per evaluation): Φ = K_nL C⁻ᵀ with
  C Cᵀ = W = K_LL + ε I (ε = ``NYSTROM_JITTER`` σ_f², as :func:`explorer.lowrank.nystrom_features`) on m landmark rows
  drawn once by :func:`explorer.lowrank.draw_landmarks` — the draw of ``nystrom_features`` itself — and kept fixed,
  so that the objective is a smooth function of θ = (log ℓ, log σ_f², log σ²). It optimises on all rows, or with
  ``max_rows`` on a random subsample of them (the landmarks and ``max_rows`` − m others); the command line and the
  app pass no ``max_rows``.

The evidence of a given K is :func:`log_evidence`, written once against a kernel operator
(:mod:`explorer.operators`): a dense K by a Cholesky factor with the jitter ladder of :mod:`explorer.regression`,
features Φ by the determinant lemma and the Woodbury identity; the value and gradient formulas of each are in
:mod:`explorer.operators.log_evidence`.

Core module: numpy and scipy only.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import optimize

from explorer import lowrank
from explorer.gp_bootstrap.evidence_fits import EvidenceFit, LowRankEvidenceFit
from explorer.kernels import SquaredExponential, check_inputs, data_driven_hyperparameters
from explorer.lowrank import check_rank
from explorer.operators import as_operator
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel
from explorer.operators.log_evidence import BLOCK_ROWS
from explorer.progress import NO_HOOKS, Hooks
from explorer.validation import noise_variance

__all__ = ["EvidenceFit", "maximum_evidence", "fit_to_data", "subsample_rows", "EVIDENCE_STARTS", "NOISE_FLOOR",
           "EVIDENCE_ROWS", "SUBSAMPLE_SEED", "log_evidence", "LowRankEvidenceFit", "lowrank_log_evidence",
           "nystrom_log_evidence", "maximum_evidence_lowrank", "LOWRANK_EVIDENCE_KERNELS", "LOWRANK_BOX", "BLOCK_ROWS"]

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
#: the order of [MO03]'s boston setting (σ² = 0.01 for var(medv) = 84.6, 1.2e-4), below which the ADATAP theory
#: of a nearly noise-free target stops converging (a noise-free sin(x) target: σ² → 4e-7 v, ADATAP broke down).
NOISE_FLOOR = 1e-4
_BOX = {"lengthscale": (1e-3, 1e3), "signal_var": (1e-4, 1e4), "noise_var": (NOISE_FLOOR, 1e2)}
#: Kernels :func:`maximum_evidence_lowrank` fits (the analytic gradient of K_nL is written for these).
LOWRANK_EVIDENCE_KERNELS = ("se",)
#: Search box of :func:`maximum_evidence_lowrank` around the data-driven start, in factors of ℓ₀ (the median distance)
#: and v = var(y): the box of :func:`maximum_evidence`, so that the low-rank and the dense fit search alike.
LOWRANK_BOX = _BOX
#: Errors of a failed evaluation (a singular matrix at an extreme point): that point counts as -inf evidence.
_NUMERICAL = (np.linalg.LinAlgError, FloatingPointError, ValueError)


class _ExactGP:
    """The GP with covariance k on the rows X: K = k(X, X) as a dense operator, R&W eqs. (2.30) and (5.9)."""

    def __init__(self, X: np.ndarray):
        self.X = X

    def log_evidence(self, kernel: SquaredExponential, y: np.ndarray, noise_var: float) -> tuple[float, np.ndarray]:
        """log p(y | X) and its gradient w.r.t. ``np.append(kernel.theta, log σ²)``."""
        K, dK = kernel(self.X, eval_gradient=True)
        return DenseKernel(K).log_evidence(y, noise_var, dK)


class _NystromGP:
    """The Nyström GP on the rows X with the fixed landmark inputs X_L: K̃ = ΦΦᵀ as a feature operator."""

    def __init__(self, X: np.ndarray, X_L: np.ndarray):
        self.X, self.X_L = X, X_L

    def log_evidence(self, kernel: SquaredExponential, y: np.ndarray, noise_var: float, eval_gradient: bool = True):
        """log p(y | X) and (or None) its gradient w.r.t. (full θ of the squared-exponential ``kernel``, log σ²)."""
        operator, U, C = FeatureKernel.nystrom(kernel, self.X, self.X_L)
        return operator.nystrom_log_evidence(kernel, self.X, self.X_L, U, C, y, noise_var, eval_gradient)


class _NegativeEvidence:
    """φ = log(ℓ, σ_f², σ²) (ℓ_1..ℓ_d first with ARD) ↦ (−log p(y | X), −gradient) of a model (the exact GP on X
    unless another is given), counting the evaluations; ``hooks.check`` before each, ``step`` after each iteration."""

    def __init__(self, X: np.ndarray, y: np.ndarray, model=None, hooks: Hooks = NO_HOOKS, max_iter: int = 0):
        self.X, self.y, self.hooks, self.max_iter = X, y, hooks, max_iter
        self.model = _ExactGP(X) if model is None else model
        self.n_eval = self.n_iter = 0

    def __call__(self, phi: np.ndarray) -> tuple[float, np.ndarray]:
        self.hooks.check(self.n_iter, self.max_iter, "iterations")
        self.n_eval += 1
        try:
            with np.errstate(all="ignore"):
                value, grad = self.model.log_evidence(_kernel(phi), self.y, float(np.exp(phi[-1])))
        except _NUMERICAL:
            return np.inf, np.zeros(phi.size)
        if not (np.isfinite(value) and np.all(np.isfinite(grad))):
            return np.inf, np.zeros(phi.size)
        return -value, -grad  # theta of SquaredExponential: (log ℓ_j..., log σ_f²), then log σ² (R&W eq. 5.9)

    def iteration(self, _phi) -> None:
        self.n_iter += 1
        self.hooks.step(self.n_iter, self.max_iter, "iterations", "maximum evidence")


def _kernel(phi: np.ndarray) -> SquaredExponential:
    """The kernel of φ: one lengthscale, or one per input column when φ has more than three entries."""
    ell = np.exp(phi[:-2])
    return SquaredExponential(ell if ell.size > 1 else float(ell[0]), float(np.exp(phi[-2])))


def _start(start, factors: tuple[float, float, float], d: int) -> np.ndarray:
    """φ₀ = log(a ℓ₀ (d times), b v, c v) for the factors (a, b, c) of ``EVIDENCE_STARTS``."""
    a, b, c = factors
    return np.log([a * start.lengthscale] * d + [b * start.signal_var, c * start.signal_var])


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
        phi0 = _start(start, (a, b, c), d)
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


# --------------------------------------------------------------------------- the evidence of a given K


def log_evidence(K, y, noise_var) -> float:
    """log N(y | 0, K + σ²I), R&W eq. (2.30), for a kernel operator K (:mod:`explorer.operators`).

    A dense K by a Cholesky factor of K + σ²I (with :mod:`explorer.regression`'s jitter ladder), features Φ
    (K = ΦΦᵀ) in O(N m²) by the determinant lemma and the Woodbury identity (:mod:`explorer.operators.log_evidence`).

    Parameters
    ----------
    K : KernelOperator, ndarray of shape (N, N) or LowRankFeatures
        The prior covariance of the N training inputs (:func:`explorer.operators.as_operator`).
    y : array_like of shape (N,)
        Targets (prior mean 0).
    noise_var : float
        σ² > 0.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``K`` is malformed (as :func:`~explorer.operators.as_operator` checks it), ``y`` does not hold one finite
        target per input, or σ² ≤ 0.

    Examples
    --------
    >>> phi = np.array([[1.0], [2.0]]); y = np.array([0.5, -0.5])
    >>> bool(np.isclose(log_evidence(phi @ phi.T, y, 0.1), lowrank_log_evidence(phi, y, 0.1)))
    True
    """
    operator, y = as_operator(K), np.asarray(y, dtype=float)
    if y.shape != (operator.n,) or not np.all(np.isfinite(y)):
        raise ValueError(f"`y` must hold N = {operator.n} finite targets, one per training input, got shape "
                         f"{y.shape}. Remove rows with NaN or inf first.")
    return operator.log_evidence(y, _noise_iv(noise_var))


def _evidence_iv(phi, y, noise_var) -> tuple[np.ndarray, np.ndarray, float]:
    phi, y = np.asarray(phi, dtype=float), np.asarray(y, dtype=float)
    if phi.ndim != 2 or phi.shape[1] < 1 or not np.all(np.isfinite(phi)):
        raise ValueError(f"`phi` must be a finite (N, m) feature matrix with m >= 1, got shape {phi.shape}. "
                         "It holds one feature row φ(x_i) per training input.")
    if y.shape != (phi.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"`y` must hold N = {phi.shape[0]} finite targets, one per row of `phi`, got shape "
                         f"{y.shape}. Remove rows with NaN or inf from both.")
    return phi, y, _noise_iv(noise_var)


def _noise_iv(noise_var) -> float:
    """σ² > 0 (with σ² = 0 the covariance ΦΦᵀ of rank m < N is singular)."""
    return noise_variance(noise_var)


def lowrank_log_evidence(phi, y, noise_var) -> float:
    """log N(y | 0, ΦΦᵀ + σ²I) in O(N m²), by the determinant lemma and the Woodbury identity (module docstring).

    Parameters
    ----------
    phi : array_like of shape (N, m)
        Features Φ, K̃ = ΦΦᵀ (any m; m ≥ N is allowed and costs O(N m²) too).
    y : array_like of shape (N,)
        Targets (prior mean 0).
    noise_var : float
        σ² > 0.

    Returns
    -------
    float
        The log evidence, R&W eq. (2.30) with K = ΦΦᵀ.

    Raises
    ------
    ValueError
        If ``phi`` is not a finite 2-D array, ``y`` does not hold one finite target per row, or σ² ≤ 0.

    Examples
    --------
    >>> phi = np.array([[1.0], [2.0]]); y = np.array([0.5, -0.5])
    >>> from scipy.stats import multivariate_normal
    >>> bool(np.isclose(lowrank_log_evidence(phi, y, 0.1), multivariate_normal(cov=phi @ phi.T + 0.1 * np.eye(2)).logpdf(y)))
    True
    """
    phi, y, noise_var = _evidence_iv(phi, y, noise_var)
    return log_evidence(FeatureKernel(phi), y, noise_var)


# --------------------------------------------------------------------------- Nyström evidence and its gradient


def _theta_names(lengthscale) -> list[str]:
    """Names of the full θ of a squared exponential, as ``hyperparameter_names`` spells them."""
    d = np.size(lengthscale)
    return (["lengthscale"] if np.ndim(lengthscale) == 0 else [f"lengthscale_{j}" for j in range(d)]) + ["signal_var"]


def _nystrom_iv(kernel, X, y, noise_var, landmarks):
    if not isinstance(kernel, SquaredExponential):
        raise ValueError(f"`kernel` must be a SquaredExponential (the analytic gradient of K_nL is written for it), "
                         f"got {type(kernel).__name__}. Use explorer.kernels.make_kernel('se', d).")
    X = check_inputs(X)
    y, idx = np.asarray(y, dtype=float), np.asarray(landmarks)
    if y.shape != (X.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"`y` must hold one finite target per row of X, shape ({X.shape[0]},), got {y.shape}.")
    if idx.ndim != 1 or idx.dtype.kind not in "iu" or np.unique(idx).size != idx.size or idx.size == 0 \
            or idx.min() < 0 or idx.max() >= X.shape[0]:
        raise ValueError(f"`landmarks` must be distinct row indices in 0..{X.shape[0] - 1}, got {landmarks!r}.")
    kernel(X[:1])  # an ARD lengthscale of the wrong length raises here
    return X, y, _noise_iv(noise_var), idx


def nystrom_log_evidence(kernel, X, y, noise_var, landmarks, eval_gradient=False):
    """log p(y | X) of the Nyström GP of a squared-exponential ``kernel`` on fixed landmarks, and its gradient.

    Φ is :func:`explorer.lowrank.nystrom_features` ``(kernel, X, m, landmarks=landmarks)``; the value is
    :func:`lowrank_log_evidence` of it. The gradient (module docstring) is taken with respect to
    ``np.append(kernel.theta, log(noise_var))``, as :func:`explorer.regression.log_evidence` takes it.

    Parameters
    ----------
    kernel : SquaredExponential
        k, one lengthscale or one per input column (ARD); hyperparameters in ``fixed`` are left out of the gradient.
    X, y, noise_var
        As in :func:`explorer.regression.log_evidence` (N rows, prior mean 0), with σ² > 0.
    landmarks : array_like of int, shape (m,)
        Distinct landmark rows of ``X`` (0-based).
    eval_gradient : bool, optional
        As in :func:`~explorer.regression.log_evidence`.

    Returns
    -------
    float, or (float, ndarray of shape (p + 1,))
        The log evidence of the Nyström GP, and with ``eval_gradient`` its gradient, as
        :func:`~explorer.regression.log_evidence` returns them.

    Raises
    ------
    ValueError
        If ``kernel`` is not a SquaredExponential, the data or landmarks are malformed, or σ² ≤ 0.
    numpy.linalg.LinAlgError
        If K_LL + jitter is not numerically positive definite.
    """
    X, y, noise_var, idx = _nystrom_iv(kernel, X, y, noise_var, landmarks)
    full = SquaredExponential(kernel.params["lengthscale"], kernel.params["signal_var"])
    value, grad = _NystromGP(X, X[idx]).log_evidence(full, y, noise_var, eval_gradient)
    if not eval_gradient:
        return value
    names = _theta_names(kernel.params["lengthscale"])
    keep = [names.index(name) for name in kernel.hyperparameter_names] + [len(names)]
    return value, grad[keep]


# --------------------------------------------------------------------------- maximum evidence of the Nyström GP


def _fit_iv(X, y, rank, kernel, max_iter, max_rows):
    X, y = _data_iv(X, y)
    if str(kernel).lower() not in (*LOWRANK_EVIDENCE_KERNELS, "rbf"):
        raise ValueError(f"`kernel` must be one of {LOWRANK_EVIDENCE_KERNELS}, got {kernel!r}: the analytic "
                         "gradient of the Nyström features is written for the squared exponential.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"`max_iter` must be a positive integer, got {max_iter!r}. It bounds L-BFGS-B's iterations.")
    if max_rows is not None and (isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer))
                                 or max_rows < check_rank(rank, X.shape[0])):
        raise ValueError(f"`max_rows` must be None or an integer >= the rank m = {rank}, got {max_rows!r}. "
                         "It is the number of rows the optimiser sees.")
    return X, y, check_rank(rank, X.shape[0])


def _rows(gen: np.random.Generator, n: int, landmarks: np.ndarray, max_rows: int | None) -> np.ndarray:
    """All rows, or the landmarks and ``max_rows`` − m other rows drawn at random (sorted)."""
    if max_rows is None or max_rows >= n:
        return np.arange(n)
    others = np.setdiff1d(np.arange(n), landmarks)
    return np.sort(np.concatenate([landmarks, gen.choice(others, max_rows - landmarks.size, replace=False)]))


def _note(fit_rows: int, n: int, m: int, ard: bool) -> str:
    which = "ℓ_1..ℓ_d (ARD)" if ard else "ℓ"
    subset = f"; optimised on a random {fit_rows:,} of the rows, evidence of all" if fit_rows < n else ""
    return (f"{which}, σ_f², σ² of largest evidence of the rank-{m} Nyström GP on {n:,} rows (squared exponential, "
            f"fixed landmarks, L-BFGS-B with the analytic O(N m²) gradient{subset})")


def maximum_evidence_lowrank(X, y, *, rank: int, rng=0, kernel: str = "se", ard: bool = False, max_iter: int = 100,
                             max_rows: int | None = None, hooks: Hooks | None = None) -> LowRankEvidenceFit:
    """ℓ, σ_f² and σ² that maximise the evidence of the rank-m Nyström GP of a squared-exponential kernel.

    The m landmark rows are drawn once from ``rng`` by :func:`explorer.lowrank.draw_landmarks`, the draw of
    :func:`explorer.lowrank.nystrom_features` (so ``nystrom_features(kernel, X, m, rng=rng)`` has the same landmarks),
    and kept fixed, so the evidence (:func:`nystrom_log_evidence`) is a smooth function of θ = (log ℓ, log σ_f², log σ²).
    One L-BFGS-B run on θ with the analytic gradient, from the data-driven start of :func:`maximum_evidence`
    (ℓ₀ the median distance, σ_f² = var(y), σ² = 0.1 var(y)), inside the same box (``LOWRANK_BOX``;
    σ² ≥ ``NOISE_FLOOR`` · var(y)). Each evaluation costs O(N m²) time and O(N m) memory, N the rows optimised on.

    Rows: the optimiser sees all n rows by default, or with ``max_rows`` a random subsample of them — the m landmarks
    and ``max_rows`` − m other rows drawn without replacement from the same generator, after the landmarks (``n_fit``
    of the result) — and the reported ``log_evidence`` is then the evidence of all n rows at the optimum found. The
    start (ℓ₀, var(y)) is taken on the rows optimised on. The command line and the app fit on all rows (no
    ``max_rows``).

    Parameters
    ----------
    X, y
        As in :func:`maximum_evidence`.
    rank : int
        m, the number of landmarks (1 ≤ m ≤ min(n, ``MAX_RANK``)).
    rng : Generator, int or None, optional
        Seed of the landmarks (and of the rows of ``max_rows``).
    kernel : str, optional
        One of ``LOWRANK_EVIDENCE_KERNELS``.
    ard : bool, optional
        As in :func:`maximum_evidence`.
    max_iter : int, optional
        L-BFGS-B iterations (at most 3 ``max_iter`` evaluations).
    max_rows : int, optional
        Optimise on the landmarks and ``max_rows`` − m other rows drawn at random (None: all rows); the reported
        evidence is of all n rows at the optimum found.
    hooks : Hooks, optional
        ``check`` before each evaluation, ``step`` after each iteration (progress and cancellation).

    Returns
    -------
    LowRankEvidenceFit

    Raises
    ------
    ValueError
        As in :func:`maximum_evidence`, or if ``rank``, ``kernel``, ``max_iter`` or
        ``max_rows`` is out of range.
    numpy.linalg.LinAlgError
        If the Nyström evidence of all n rows is not finite at the optimum found.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (400, 1)); y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(400)
    >>> fit = maximum_evidence_lowrank(X, y, rank=20)
    >>> 0.5 < fit.lengthscale < 3 and 0.005 < fit.noise_var < 0.02
    True
    """
    X, y, m = _fit_iv(X, y, rank, kernel, max_iter, max_rows)
    gen = np.random.default_rng(rng)
    landmarks = lowrank.draw_landmarks(X.shape[0], m, gen)  # the draw of nystrom_features(rng=rng)
    rows = _rows(gen, X.shape[0], landmarks, max_rows)
    start, d = data_driven_hyperparameters(X[rows], y[rows]), X.shape[1] if ard else 1
    theta0, bounds = _start(start, EVIDENCE_STARTS[0], d), _box(start.lengthscale, start.signal_var, d)
    objective = _NegativeEvidence(X[rows], y[rows], _NystromGP(X[rows], X[landmarks]), hooks or NO_HOOKS, max_iter)
    res = optimize.minimize(objective, theta0, jac=True, method="L-BFGS-B", bounds=bounds, callback=objective.iteration,
                            options={"maxiter": max_iter, "maxfun": 3 * max_iter})
    objective.hooks.step(objective.n_iter, objective.n_iter, "iterations", "maximum evidence")
    best = _kernel(res.x)
    value = -float(res.fun) if rows.size == X.shape[0] else \
        nystrom_log_evidence(best, X, y, float(np.exp(res.x[-1])), landmarks)
    if not np.isfinite(value):
        raise np.linalg.LinAlgError("the Nyström evidence could not be evaluated at any point of the search "
                                    "(numerically singular matrices). Standardise the data.")
    return LowRankEvidenceFit(best.params["lengthscale"], float(np.exp(res.x[-2])), float(np.exp(res.x[-1])), value,
                              landmarks, m, X.shape[0], rows.size, objective.n_iter, objective.n_eval,
                              bool(res.success), bool(res.x[-1] <= bounds[-1, 0] + 1e-9),
                              _note(rows.size, X.shape[0], m, ard))
