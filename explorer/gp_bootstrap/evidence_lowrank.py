r"""The evidence of the low-rank GP, K̃ = ΦΦᵀ, and its maximum over the hyperparameters, in O(N m²) time.

The model is the subset-of-regressors GP of :mod:`explorer.lowrank`: y ~ N(0, ΦΦᵀ + σ²I) with Φ of shape (N, m).
With A = σ²I_m + ΦᵀΦ = LLᵀ (an m×m Cholesky factor, never an N×N matrix):

* log det(ΦΦᵀ + σ²I) = (N − m) log σ² + 2 Σ_k log L_kk   (matrix determinant lemma),
* yᵀ(ΦΦᵀ + σ²I)⁻¹y = (yᵀy − ‖L⁻¹Φᵀy‖²) / σ²              (Woodbury identity),

so log p(y | X) = −½ yᵀ(ΦΦᵀ + σ²I)⁻¹y − ½ log det(ΦΦᵀ + σ²I) − (N/2) log 2π, R&W eq. (2.30) for K̃.

:func:`maximum_evidence_lowrank` maximises it for Nyström features of a squared-exponential kernel,
Φ = K_nL C⁻ᵀ with C Cᵀ = W = K_LL + ε I (ε = ``NYSTROM_JITTER`` σ_f², as :func:`explorer.lowrank.nystrom_features`), on
m landmark rows drawn once and kept fixed, so that the objective is a smooth function of θ = (log ℓ, log σ_f², log σ²).
Its analytic gradient (derived here; U = K_nL, β = A⁻¹Φᵀy, α = (ΦΦᵀ + σ²I)⁻¹y = (y − Φβ)/σ²):

* ∂ log p/∂θ_j = −Σ (G ∘ ∂U/∂θ_j) / 2 − Σ (H ∘ ∂W/∂θ_j) / 2 for a kernel hyperparameter, with
  G = 2 (Φ A⁻¹ − α βᵀ) C⁻¹ (N×m) and H = C⁻ᵀ (σ² A⁻¹ − I + β βᵀ) C⁻¹ (m×m);
* ∂ log p/∂ log σ_f² = −(m − σ² tr A⁻¹ − βᵀβ) / 2 (K̃ is proportional to σ_f², ε included);
* ∂ log p/∂ log σ² = −(N − m + σ² tr A⁻¹ − σ² αᵀα) / 2.

For the squared exponential ∂U/∂ log ℓ_j = U ∘ (x_ij − x_kj)²/ℓ_j², so every term is one pass over blocks of rows of
Φ: O(N m²) time (three BLAS-3 products of N×m by m×m) and O(N m) memory per evaluation.

Core module: numpy and scipy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, optimize

from explorer.gp_bootstrap.evidence import EVIDENCE_STARTS, NOISE_FLOOR
from explorer.kernels import SquaredExponential, check_inputs, data_driven_hyperparameters
from explorer.lowrank import NYSTROM_JITTER, LowRankFeatures, check_rank, nystrom_features
from explorer.progress import NO_HOOKS, Hooks

__all__ = ["LowRankEvidenceFit", "lowrank_log_evidence", "nystrom_log_evidence", "maximum_evidence_lowrank",
           "LOWRANK_EVIDENCE_KERNELS", "LOWRANK_BOX", "BLOCK_ROWS"]

#: Kernels :func:`maximum_evidence_lowrank` fits (the analytic gradient of K_nL is written for these).
LOWRANK_EVIDENCE_KERNELS = ("se",)
#: Search box around the data-driven start, in factors of ℓ₀ (the median distance) and v = var(y): the box of
#: :func:`explorer.gp_bootstrap.evidence.maximum_evidence`, so that the low-rank and the dense fit search alike.
LOWRANK_BOX = {"lengthscale": (1e-3, 1e3), "signal_var": (1e-4, 1e4), "noise_var": (NOISE_FLOOR, 1e2)}
#: Rows of Φ handled at once in the gradient pass: bounds the N×m temporaries to BLOCK_ROWS×m (16 MB at m = 256).
BLOCK_ROWS = 8192
_LOG_2PI = np.log(2.0 * np.pi)
#: Errors of a failed evaluation (a singular matrix at an extreme point): that point counts as −inf evidence.
_NUMERICAL = (np.linalg.LinAlgError, FloatingPointError, ValueError)


@dataclass(frozen=True, eq=False)
class LowRankEvidenceFit:
    """The squared-exponential hyperparameters of largest evidence of a rank-m Nyström GP.

    Attributes
    ----------
    lengthscale : float, or ndarray of shape (d,) with ``ard=True``
        ℓ (or ℓ_j) at the maximum.
    signal_var, noise_var : float
        σ_f² and σ² at the maximum.
    log_evidence : float
        log p(y | X) of the rank-m Nyström GP there, on all ``n`` rows.
    landmarks : ndarray of int, shape (m,)
        The landmark rows (0-based, sorted), fixed during the optimisation.
    rank : int
        m.
    n : int
        Rows of the data.
    n_fit : int
        Rows the optimiser saw (``n``, or ``max_rows`` of them drawn at random).
    n_iter, n_evaluations : int
        L-BFGS-B iterations and evidence evaluations (value and gradient together).
    converged : bool
        Whether L-BFGS-B met its tolerance.
    at_noise_floor : bool
        Whether σ² stopped at its lower bound ``NOISE_FLOOR`` · var(y).
    note : str
        One line: what was fitted, how and on which rows.
    """

    lengthscale: float | np.ndarray
    signal_var: float
    noise_var: float
    log_evidence: float
    landmarks: np.ndarray = field(repr=False)
    rank: int
    n: int
    n_fit: int
    n_iter: int
    n_evaluations: int
    converged: bool
    at_noise_floor: bool
    note: str

    @property
    def kernel(self) -> SquaredExponential:
        """The fitted covariance k, a :class:`~explorer.kernels.SquaredExponential`."""
        return SquaredExponential(self.lengthscale, self.signal_var)

    def features(self, X) -> LowRankFeatures:
        """The fitted Nyström features Φ on the inputs ``X`` of the fit (shape (n, d)), same landmarks."""
        return nystrom_features(self.kernel, X, self.rank, landmarks=self.landmarks)


# --------------------------------------------------------------------------- the evidence of given features


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
    if not (np.ndim(noise_var) == 0 and np.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"`noise_var` must be a finite number > 0, got {noise_var!r}. It is σ², the noise "
                         "variance; with σ² = 0 the covariance ΦΦᵀ of rank m < N is singular.")
    return float(noise_var)


def _woodbury(phi: np.ndarray, y: np.ndarray, noise_var: float) -> tuple[np.ndarray, np.ndarray, float]:
    """L with LLᵀ = A = σ²I + ΦᵀΦ, v = L⁻¹Φᵀy and log p(y | X) of y ~ N(0, ΦΦᵀ + σ²I)."""
    n, m = phi.shape
    A = phi.T @ phi
    A[np.diag_indices_from(A)] += noise_var
    L = linalg.cholesky(A, lower=True)  # A ≥ σ²I: positive definite for σ² > 0
    v = linalg.solve_triangular(L, phi.T @ y, lower=True)
    log_det = (n - m) * np.log(noise_var) + 2.0 * np.sum(np.log(np.diag(L)))  # determinant lemma
    quad = (y @ y - v @ v) / noise_var  # Woodbury
    return L, v, float(-0.5 * (quad + log_det + n * _LOG_2PI))


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
    return _woodbury(*_evidence_iv(phi, y, noise_var))[2]


# --------------------------------------------------------------------------- Nyström evidence and its gradient


def _theta_names(lengthscale) -> list[str]:
    """Names of the full θ of a squared exponential, as ``hyperparameter_names`` spells them."""
    d = np.size(lengthscale)
    return (["lengthscale"] if np.ndim(lengthscale) == 0 else [f"lengthscale_{j}" for j in range(d)]) + ["signal_var"]


def _nystrom_phi(kernel: SquaredExponential, X: np.ndarray, X_L: np.ndarray):
    """U = K_nL, Φ = U C⁻ᵀ and C, C Cᵀ = K_LL + ``NYSTROM_JITTER`` σ_f² I (:func:`explorer.lowrank.nystrom_features`).

    U is kept for the gradient (a second N×m array rather than a second pass of N m kernel values).
    """
    W = kernel(X_L)
    W[np.diag_indices_from(W)] += NYSTROM_JITTER * kernel.params["signal_var"]  # mean diag K_LL = σ_f²
    C = linalg.cholesky(W, lower=True)
    U, phi = np.empty((X.shape[0], X_L.shape[0])), np.empty((X.shape[0], X_L.shape[0]))
    for start in range(0, X.shape[0], BLOCK_ROWS):
        rows = slice(start, start + BLOCK_ROWS)
        U[rows] = kernel(X[rows], X_L)
        phi[rows] = linalg.solve_triangular(C, U[rows].T, lower=True, check_finite=False).T
    return U, phi, C


def _cross_lengthscale_terms(kernel, X, X_L, U, phi, R, alpha, a) -> np.ndarray:
    """Σ_ik G_ik ∂U_ik/∂ log ℓ_j for each j (shape (d,)), G = 2 (Φ R − α aᵀ), R = A⁻¹C⁻¹, a = C⁻ᵀβ, in row blocks.

    With P = U ∘ G and z = x/ℓ: Σ_ik P_ik (z_ij − z_kj)² = Σ_i z_ij² (P1)_i − 2 Σ_i z_ij (P Z_L)_ij + Σ_k z_kj² (Pᵀ1)_k.
    """
    ell = np.asarray(kernel.params["lengthscale"])
    Z_L, out = X_L / ell, np.zeros(X.shape[1])
    for start in range(0, X.shape[0], BLOCK_ROWS):
        rows = slice(start, start + BLOCK_ROWS)
        P = phi[rows] @ R
        P -= np.outer(alpha[rows], a)
        P *= U[rows]  # P = U ∘ G / 2, in place: one block×m temporary
        Z = X[rows] / ell
        out += (Z * Z).T @ P.sum(axis=1) - 2.0 * np.einsum("ij,ij->j", Z, P @ Z_L) + P.sum(axis=0) @ (Z_L * Z_L)
    return 2.0 * out


def _nystrom_evidence(kernel, X, y, noise_var, X_L, eval_gradient):
    """log p and, with ``eval_gradient``, its gradient w.r.t. (full θ of ``kernel``, log σ²); see the module docstring."""
    U, phi, C = _nystrom_phi(kernel, X, X_L)
    L, v, value = _woodbury(phi, y, noise_var)
    if not eval_gradient:
        return value, None
    return value, _nystrom_gradient(kernel, X, y, noise_var, X_L, U, phi, C, L, v)


def _nystrom_gradient(kernel, X, y, noise_var, X_L, U, phi, C, L, v) -> np.ndarray:
    """∂ log p/∂(log ℓ, log σ_f², log σ²) from the factors of the value (formulas of the module docstring)."""
    n, m = phi.shape
    beta = linalg.solve_triangular(L, v, lower=True, trans="T")  # β = A⁻¹Φᵀy
    alpha = (y - phi @ beta) / noise_var  # α = (ΦΦᵀ + σ²I)⁻¹y
    A_inv = linalg.cho_solve((L, True), np.eye(m))
    C_inv = linalg.solve_triangular(C, np.eye(m), lower=True)
    R, a = A_inv @ C_inv, C_inv.T @ beta  # G = 2 (Φ R − α aᵀ): one m×m matrix, so each row block costs one GEMM
    H = C_inv.T @ (noise_var * A_inv - np.eye(m) + np.outer(beta, beta)) @ C_inv
    d_cross = _cross_lengthscale_terms(kernel, X, X_L, U, phi, R, alpha, a)
    if np.ndim(kernel.params["lengthscale"]) == 0:
        d_cross = d_cross.sum(keepdims=True)  # one ℓ: the sum of the per-column derivatives
    dW = kernel(X_L, eval_gradient=True)[1][..., :-1]  # ∂K_LL/∂ log ℓ_j (ε does not depend on ℓ)
    tr = float(np.sum(A_inv.diagonal()))
    d_f = [d_cross + np.einsum("kl,klj->j", H, dW), [m - noise_var * tr - beta @ beta],  # f = −2 log p + const
           [n - m + noise_var * tr - noise_var * (alpha @ alpha)]]
    return -0.5 * np.concatenate(d_f)


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
    value, grad = _nystrom_evidence(full, X, y, noise_var, X[idx], eval_gradient)
    if not eval_gradient:
        return value
    names = _theta_names(kernel.params["lengthscale"])
    keep = [names.index(name) for name in kernel.hyperparameter_names] + [len(names)]
    return value, grad[keep]


# --------------------------------------------------------------------------- maximum evidence


class _NegativeEvidence:
    """θ = (log ℓ, log σ_f², log σ²) ↦ (−log p, −gradient) of the Nyström GP on fixed landmark inputs."""

    def __init__(self, X, y, X_L, hooks: Hooks, max_iter: int):
        self.X, self.y, self.X_L, self.hooks, self.max_iter = X, y, X_L, hooks, max_iter
        self.n_eval = self.n_iter = 0

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        self.hooks.check(self.n_iter, self.max_iter, "iterations")
        self.n_eval += 1
        try:
            with np.errstate(all="ignore"):
                value, grad = _nystrom_evidence(_kernel(theta), self.X, self.y, float(np.exp(theta[-1])), self.X_L,
                                                True)
        except _NUMERICAL:
            return np.inf, np.zeros_like(theta)
        if not (np.isfinite(value) and np.all(np.isfinite(grad))):
            return np.inf, np.zeros_like(theta)
        return -value, -grad

    def iteration(self, _theta) -> None:
        self.n_iter += 1
        self.hooks.step(self.n_iter, self.max_iter, "iterations", "maximum evidence")


def _kernel(theta: np.ndarray) -> SquaredExponential:
    ell = np.exp(theta[:-2])
    return SquaredExponential(ell if ell.size > 1 else float(ell[0]), float(np.exp(theta[-2])))


def _start_and_bounds(X, y, ard: bool) -> tuple[np.ndarray, np.ndarray]:
    """θ₀ = log(ℓ₀, v, 0.1 v) (``EVIDENCE_STARTS[0]``) and the ``LOWRANK_BOX`` around it, shape (p,) and (p, 2)."""
    start = data_driven_hyperparameters(X, y)
    a, b, c = EVIDENCE_STARTS[0]
    d = X.shape[1] if ard else 1
    theta0 = np.log([a * start.lengthscale] * d + [b * start.signal_var, c * start.signal_var])
    scale = [start.lengthscale] * d + [start.signal_var] * 2
    box = [LOWRANK_BOX["lengthscale"]] * d + [LOWRANK_BOX["signal_var"], LOWRANK_BOX["noise_var"]]
    return theta0, np.log([[s * lo, s * hi] for s, (lo, hi) in zip(scale, box)])


def _fit_iv(X, y, rank, kernel, max_iter, max_rows):
    X, y = check_inputs(X), np.asarray(y, dtype=float)
    if X.shape[0] < 3 or y.shape != (X.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"`X` (n, d) and `y` (n,) must describe the same n >= 3 finite cases, got shapes "
                         f"{X.shape} and {y.shape}. Use a table with at least 3 rows of numbers.")
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

    The m landmark rows are drawn once from ``rng`` (as :func:`explorer.lowrank.nystrom_features` draws them) and kept
    fixed, so the evidence (:func:`nystrom_log_evidence`) is a smooth function of θ = (log ℓ, log σ_f², log σ²).
    One L-BFGS-B run on θ with the analytic gradient, from the data-driven start of
    :func:`explorer.gp_bootstrap.evidence.maximum_evidence` (ℓ₀ the median distance, σ_f² = var(y), σ² = 0.1 var(y)),
    inside the same box (``LOWRANK_BOX``; σ² ≥ ``NOISE_FLOOR`` · var(y)). Each evaluation costs O(N m²) time and
    O(N m) memory.

    Parameters
    ----------
    X, y
        As in :func:`explorer.gp_bootstrap.evidence.maximum_evidence`.
    rank : int
        m, the number of landmarks (1 ≤ m ≤ min(n, ``MAX_RANK``)).
    rng : Generator, int or None, optional
        Seed of the landmarks (and of the rows of ``max_rows``).
    kernel : str, optional
        One of ``LOWRANK_EVIDENCE_KERNELS``.
    ard : bool, optional
        As in :func:`~explorer.gp_bootstrap.evidence.maximum_evidence`.
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
        As in :func:`~explorer.gp_bootstrap.evidence.maximum_evidence`, or if ``rank``, ``kernel``, ``max_iter`` or
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
    landmarks = np.sort(gen.choice(X.shape[0], size=m, replace=False))  # nystrom_features(rng=rng)'s draw
    rows = _rows(gen, X.shape[0], landmarks, max_rows)
    theta0, bounds = _start_and_bounds(X[rows], y[rows], ard)
    objective = _NegativeEvidence(X[rows], y[rows], X[landmarks], hooks or NO_HOOKS, max_iter)
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
