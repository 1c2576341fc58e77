r"""Low-rank kernels K ≈ ΦΦᵀ: Nyström features, random Fourier features, or a feature matrix of the caller's.

With Φ of shape (N, m), m ≪ N, the model is the Gaussian process whose prior covariance on the training inputs is
ΦΦᵀ (the *subset of regressors*, Quiñonero-Candela & Rasmussen 2005): f(x) = φ(x)ᵀw with w ~ N(0, I_m), so
k̃(x, x') = φ(x)ᵀφ(x'). Everything the replica theory and the Monte-Carlo compute on that model costs O(N m²) time
and O(N m) memory, never an N×N matrix (:mod:`explorer.operators.features`). Theory and Monte-Carlo use the same Φ,
so their comparison stays like for like; what the low-rank model gives up against the exact GP is that k̃ ≤ k on
the diagonal (Nyström) or is a random estimate of k (random features), so its predictive variance is too small
far from the landmarks.

* :func:`nystrom_features` — Φ = K_nL C⁻ᵀ with C the lower Cholesky factor of K_LL + jitter·I on m landmark rows
  L of the training inputs (a random subset drawn from a seed by default);
* :func:`random_fourier_features` — Φ = √(s/m)·[cos(XΩᵀ), sin(XΩᵀ)] with frequencies Ω drawn from the spectral
  density of a stationary kernel (Rahimi & Recht 2007; Bochner's theorem);
* :func:`given_features` — a feature matrix the caller passes (e.g. the Cholesky factor of K: then ΦΦᵀ = K).

Core module: numpy and scipy only; plain BLAS-3 products, so an array library with the same operations could run it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from explorer.kernels import (
    Exponential,
    Kernel,
    Matern32,
    Matern52,
    RationalQuadratic,
    SquaredExponential,
    check_inputs,
)

__all__ = ["NYSTROM_JITTER", "MAX_RANK", "FEATURE_METHODS", "LowRankFeatures", "nystrom_features",
           "random_fourier_features", "given_features", "low_rank_features", "check_rank", "draw_landmarks"]

#: Jitter of the landmarks' Cholesky factor, relative to the mean of diag K_LL. K_LL is positive semi-definite in
#: exact arithmetic but singular in practice: two landmarks with equal inputs (diamonds has 146 duplicated rows) or
#: a smooth kernel on close landmarks give eigenvalues at the round-off level, ~m·ε·max diag ≈ 6e-14 relative at
#: m = 256, and potrf fails on a negative one. 1e-8 is a million times that and still changes ΦΦᵀ by at most
#: 1e-8·mean diag on the landmarks (and less elsewhere), far below any noise variance σ² the explorer accepts.
NYSTROM_JITTER = 1e-8

#: Largest rank: Φ has m columns, and the theory factorises m×m matrices (m = 4096 costs 128 MB per matrix and
#: about 20 s per factorisation and product at N = 50,000 on two cores).
MAX_RANK = 4096

FEATURE_METHODS = ("nystrom", "rff")
"""Feature maps a command or a page can name (``given`` features come from code only)."""


@dataclass(frozen=True)
class LowRankFeatures:
    r"""A low-rank kernel K̃ = ΦΦᵀ on N training inputs and the map φ(x) that extends it to new inputs.

    Attributes
    ----------
    phi : ndarray of shape (N, m)
        Φ, one row φ(x_i)ᵀ per training input.
    method : str
        ``"nystrom"``, ``"rff"`` or ``"given"``.
    landmarks : ndarray of int, shape (m,), or None
        Nyström only: 0-based indices of the landmark rows among the training inputs.
    jitter : float
        Nyström only: the value added to the diagonal of K_LL before its Cholesky factor (0 otherwise).
    kernel : Kernel or None
        The kernel the features approximate (None for given features).
    """

    phi: np.ndarray = field(repr=False)
    method: str
    landmarks: np.ndarray | None = None
    jitter: float = 0.0
    kernel: Kernel | None = None
    _landmark_inputs: np.ndarray | None = field(default=None, repr=False)
    _factor: np.ndarray | None = field(default=None, repr=False)
    _frequencies: np.ndarray | None = field(default=None, repr=False)
    _scale: float = 1.0

    @property
    def n(self) -> int:
        """N, the number of training inputs (rows of Φ)."""
        return self.phi.shape[0]

    @property
    def rank(self) -> int:
        """m, the number of features (columns of Φ)."""
        return self.phi.shape[1]

    def transform(self, X) -> np.ndarray:
        """φ(x) at new inputs, shape (M, m): k̃(x, x_i) = φ(x)ᵀφ(x_i), so K̃_cross = transform(X) @ phiᵀ.

        Parameters
        ----------
        X : array_like of shape (M, d)
            Inputs in the training inputs' space.

        Returns
        -------
        ndarray of shape (M, m)
            One feature row per input.

        Raises
        ------
        ValueError
            For given features (they have no map to new inputs) or inputs of the wrong shape.
        """
        if self.method == "nystrom":
            K_xL = self.kernel(check_inputs(X), self._landmark_inputs)
            return linalg.solve_triangular(self._factor, K_xL.T, lower=True).T  # K_xL C⁻ᵀ
        if self.method == "rff":
            return _fourier_map(check_inputs(X), self._frequencies, self._scale)
        raise ValueError("given features have no map to new inputs: pass the test rows' features yourself.")

    def description(self, seed_option: str = "the seed") -> str:
        """How Φ was made, in words: ``"128 Nyström landmarks drawn with --seed, jitter 1e-08 on K_LL"``,
        ``"256 random Fourier features"`` or ``"16 given features"``; ``seed_option`` names where the seed came from."""
        if self.method == "nystrom":
            return f"{self.rank} Nyström landmarks drawn with {seed_option}, jitter {self.jitter:.2g} on K_LL"
        if self.method == "rff":
            return f"{self.rank} random Fourier features"
        return f"{self.rank} given features"

    def as_dict(self) -> dict:
        """What rebuilds ΦΦᵀ, as JSON: ``method``, ``rank``, ``landmarks`` (0-based training rows) and ``jitter``."""
        return {"method": self.method, "rank": self.rank,
                "landmarks": None if self.landmarks is None else self.landmarks.tolist(),
                "jitter": float(self.jitter)}


def check_rank(rank, n: int) -> int:
    """``rank`` as an int in 1..min(N, MAX_RANK), or a ValueError that says which bound it broke."""
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise ValueError(f"The rank m must be a positive integer, got {rank!r}.")
    if rank > n:
        raise ValueError(f"The rank m = {rank} is above the number of training rows N = {n}; take m ≤ N "
                         "(m = N is no saving: use the dense path).")
    if rank > MAX_RANK:
        raise ValueError(f"The rank m = {rank} is above {MAX_RANK}, the largest the low-rank path takes.")
    return int(rank)


def draw_landmarks(n: int, rank: int, rng=0) -> np.ndarray:
    """The m landmark rows of N, drawn uniformly without replacement from ``rng`` and sorted: the one draw behind
    :func:`nystrom_features` and the Nyström evidence fit (:func:`explorer.gp_bootstrap.evidence.maximum_evidence_lowrank`).

    Parameters
    ----------
    n : int
        N, the number of training rows.
    rank : int
        m, the number of landmarks (1 ≤ m ≤ min(N, MAX_RANK), :func:`check_rank`).
    rng : Generator, int or None
        Seed of the draw; a Generator is used as it is (and advanced by the draw).

    Returns
    -------
    ndarray of int, shape (m,)
        0-based landmark rows in increasing order.
    """
    return np.sort(np.random.default_rng(rng).choice(n, size=check_rank(rank, n), replace=False))


def nystrom_features(kernel: Kernel, X, rank: int, *, rng=0, landmarks=None,
                     jitter: float = NYSTROM_JITTER) -> LowRankFeatures:
    """Nyström features Φ = K_nL C⁻ᵀ, C Cᵀ = K_LL + jitter·mean(diag K_LL)·I, on m landmark rows.

    Parameters
    ----------
    kernel : Kernel
        The covariance function k.
    X : array_like of shape (N, d)
        Training inputs.
    rank : int
        m, the number of landmarks (1 ≤ m ≤ min(N, MAX_RANK)).
    rng : Generator, int or None
        Seed of the landmarks: m rows drawn uniformly without replacement (ignored if ``landmarks`` is given).
    landmarks : array_like of int, optional
        The landmark rows themselves (0-based, distinct).
    jitter : float
        Relative jitter of K_LL (see :data:`NYSTROM_JITTER`); the absolute value added is in the result.

    Returns
    -------
    LowRankFeatures
        Φ of shape (N, m), the landmarks (sorted) and the absolute jitter.
    """
    X = check_inputs(X)
    n = X.shape[0]
    if landmarks is None:
        idx = draw_landmarks(n, rank, rng)
    else:
        idx = np.asarray(landmarks)
        if idx.ndim != 1 or idx.dtype.kind not in "iu" or np.unique(idx).size != idx.size \
                or idx.size == 0 or idx.min() < 0 or idx.max() >= n:
            raise ValueError(f"`landmarks` must be distinct row indices in 0..{n - 1}.")
        check_rank(idx.size, n)
        idx = np.sort(idx)  # ΦΦᵀ does not depend on the order; sorted, as drawn ones are
    if not (np.isfinite(jitter) and jitter >= 0):
        raise ValueError(f"`jitter` must be a non-negative number, got {jitter!r}.")
    X_L = X[idx]
    K_LL = kernel(X_L)
    added = float(jitter * np.mean(np.diag(K_LL)))
    try:
        C = linalg.cholesky(K_LL + added * np.eye(idx.size), lower=True)
    except linalg.LinAlgError as err:
        raise ValueError("The landmarks' kernel matrix K_LL is not positive definite even with the jitter "
                         f"{added:.1e}: is the kernel valid?") from err
    phi = _rows_times_inverse_factor(kernel, X, X_L, C)
    return LowRankFeatures(phi, "nystrom", idx, added, kernel, X_L.copy(), C)


def _rows_times_inverse_factor(kernel: Kernel, X: np.ndarray, X_L: np.ndarray, C: np.ndarray,
                               block: int = 8192) -> np.ndarray:
    """K_nL C⁻ᵀ in blocks of rows, so that no more than ``block``×m kernel values exist at once beside Φ."""
    phi = np.empty((X.shape[0], C.shape[0]))
    for start in range(0, X.shape[0], block):
        rows = slice(start, start + block)
        phi[rows] = linalg.solve_triangular(C, kernel(X[rows], X_L).T, lower=True).T
    return phi


def _spectral_frequencies(kernel: Kernel, d: int, n_freq: int, rng: np.random.Generator) -> np.ndarray:
    """n_freq frequencies ω ~ the kernel's spectral density (Bochner), shape (n_freq, d), in units of 1/ℓ_j."""
    z = rng.standard_normal((n_freq, d))
    if isinstance(kernel, SquaredExponential):  # exp(−r²/2): ω ~ N(0, I/ℓ²)
        scale = np.ones(n_freq)
    elif isinstance(kernel, (Exponential, Matern32, Matern52)):  # Matérn ν: Student t with 2ν degrees of freedom
        nu = {Exponential: 0.5, Matern32: 1.5, Matern52: 2.5}[type(kernel)]
        scale = 1.0 / np.sqrt(rng.chisquare(2 * nu, n_freq) / (2 * nu))
    elif isinstance(kernel, RationalQuadratic):  # a Gamma(α, 1/α) scale mixture of squared exponentials
        alpha = kernel.params["alpha"]
        scale = np.sqrt(rng.gamma(alpha, 1.0 / alpha, n_freq))
    else:
        raise ValueError(f"Random Fourier features need a stationary kernel with a known spectral density "
                         f"(se, rq, exponential, matern32, matern52); got {type(kernel).__name__}. "
                         "Use Nyström features (`nystrom`) for it.")
    return z * scale[:, None] / np.asarray(kernel.params["lengthscale"], dtype=float)


def _fourier_map(X: np.ndarray, omega: np.ndarray, scale: float) -> np.ndarray:
    proj = X @ omega.T
    return np.sqrt(scale / omega.shape[0]) * np.hstack([np.cos(proj), np.sin(proj)])


def random_fourier_features(kernel: Kernel, X, rank: int, *, rng=0) -> LowRankFeatures:
    """Random Fourier features: E[ΦΦᵀ] = K for a stationary kernel k(x, x') = s·g(‖(x − x')/ℓ‖²).

    φ(x) = √(s/(m/2))·[cos(Ωx), sin(Ωx)] with m/2 frequencies Ω drawn from the normalised spectral density of g,
    so φ(x)ᵀφ(x') = (s/(m/2)) Σ_k cos(ω_kᵀ(x − x')), an unbiased estimate of k(x, x').

    Parameters
    ----------
    kernel : Kernel
        A squared-exponential, rational-quadratic, exponential or Matérn kernel (ARD allowed).
    X : array_like of shape (N, d)
        Training inputs.
    rank : int
        m, an even number of features (m/2 frequencies), 2 ≤ m ≤ min(N, MAX_RANK).
    rng : Generator, int or None
        Seed of the frequencies.

    Returns
    -------
    LowRankFeatures
        Φ of shape (N, m), method ``"rff"``.
    """
    X = check_inputs(X)
    m = check_rank(rank, X.shape[0])
    if m % 2:
        raise ValueError(f"Random Fourier features come in cos/sin pairs: the rank must be even, got {m}.")
    omega = _spectral_frequencies(kernel, X.shape[1], m // 2, np.random.default_rng(rng))
    scale = float(kernel.params["signal_var"])
    return LowRankFeatures(_fourier_map(X, omega, scale), "rff", None, 0.0, kernel, None, None, omega, scale)


def given_features(phi) -> LowRankFeatures:
    """A feature matrix of the caller's, K̃ = ΦΦᵀ (e.g. Φ = the lower Cholesky factor of K, for which K̃ = K)."""
    phi = np.asarray(phi, dtype=float)
    if phi.ndim != 2 or phi.shape[0] < 2 or phi.shape[1] < 1 or not np.all(np.isfinite(phi)):
        raise ValueError(f"`phi` must be a finite (N, m) matrix with N ≥ 2 and m ≥ 1, got shape {phi.shape}.")
    return LowRankFeatures(phi, "given")


def low_rank_features(kernel: Kernel, X, rank: int, *, method: str = "nystrom", rng=0) -> LowRankFeatures:
    """Features of ``method`` (one of :data:`FEATURE_METHODS`) with ``rank`` columns: the commands' and pages' entry."""
    if method == "nystrom":
        return nystrom_features(kernel, X, rank, rng=rng)
    if method == "rff":
        return random_fourier_features(kernel, X, rank, rng=rng)
    raise ValueError(f"Unknown feature method {method!r}; choose one of {FEATURE_METHODS}.")

