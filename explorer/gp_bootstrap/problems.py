"""The GP-regression bootstrap problem of seed 000: training data D0, kernel, noise σ² and the kernel matrix K.

:func:`regression_problem` builds a :class:`RegressionProblem` from a data set (the paper preset by default), and
:func:`low_rank_problem` a :class:`LowRankRegressionProblem` whose kernel matrix is ΦΦᵀ (:mod:`explorer.lowrank`),
never formed; the stages (:mod:`~explorer.gp_bootstrap.stages`) and the comparisons (:mod:`~explorer.gp_bootstrap.experiments`) take either (:mod:`~explorer.gp_bootstrap.paths`
runs each computation on the path of its problem). Core module: numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.bootstrap.problem import KernelProblem
from explorer.datasets import Dataset, holdout_split
from explorer.kernels import Kernel, paper_rbf
from explorer.lowrank import LowRankFeatures, low_rank_features

__all__ = ["PAPER_NOISE_VAR", "PAPER_L2", "RegressionProblem", "regression_problem", "LowRankRegressionProblem",
           "low_rank_problem"]

#: Seed 000's Boston setting (Fig. 1): σ² = 0.01, RBF exp(−Σ_j (x_j − x'_j)²/(v_j l²)), l² = 73.54, v_j = sd.
PAPER_NOISE_VAR = 0.01
PAPER_L2 = 73.54


@dataclass(frozen=True)
class RegressionProblem(KernelProblem):
    """A GP-regression bootstrap problem: training data D0, kernel, noise σ² and K = k(X, X)."""

    noise_var: float
    K: np.ndarray = field(repr=False)
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None


def regression_problem(
    dataset: Dataset,
    kernel: Kernel | None = None,
    noise_var: float = PAPER_NOISE_VAR,
    *,
    holdout: int = 0,
) -> RegressionProblem:
    """Build a problem from a dataset; kernel None means the paper preset (``paper_rbf``, l² = 73.54).

    ``holdout`` > 0 keeps the first ``holdout`` rows as test inputs (Fig. 2: the first 50 of boston),
    the rest is D0.

    Parameters
    ----------
    dataset : Dataset
        A regression data set.
    kernel : Kernel, optional
        Covariance function; default ``paper_rbf(X, l2=PAPER_L2, scale="sd")`` on the training rows (Fig. 1).
    noise_var : float
        Noise variance σ²; default ``PAPER_NOISE_VAR`` = 0.01 (Fig. 1).
    holdout : int
        Number of leading rows kept as test inputs (``X_test``, ``y_test``); 0 keeps none.

    Returns
    -------
    RegressionProblem
        D0, the kernel, σ² and K = k(X, X) of shape (N, N), N = n − ``holdout``.

    Raises
    ------
    ValueError
        If the data set is not a regression task, ``holdout`` leaves fewer than 10 training rows or is
        negative, or ``noise_var`` is not positive.
    """
    X, y, X_test, y_test, kernel = _training_rows(dataset, kernel, noise_var, holdout)
    return RegressionProblem(dataset.name, X, y, kernel, float(noise_var), kernel(X), X_test, y_test)


def _training_rows(dataset: Dataset, kernel: Kernel | None, noise_var: float, holdout: int):
    """D0 and the held-out rows of a regression data set, and the kernel (the paper preset on D0 if None)."""
    if dataset.task != "regression":
        raise ValueError(f"Dataset {dataset.name!r} is a {dataset.task} task; the GP-regression bootstrap "
                         "needs a real-valued target.")
    X, y, X_test, y_test = holdout_split(dataset, holdout, 10)
    if kernel is None:
        kernel = paper_rbf(X, l2=PAPER_L2, scale="sd")
    if not (np.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"`noise_var` must be positive, got {noise_var}. It is the noise variance σ².")
    return X, y, X_test, y_test, kernel


@dataclass(frozen=True)
class LowRankRegressionProblem(KernelProblem):
    """A GP-regression bootstrap problem whose prior covariance on D0 is ΦΦᵀ (Φ of shape (N, m)): no N×N matrix.

    The model is the subset-of-regressors GP of :mod:`explorer.lowrank`: k̃(x, x') = φ(x)ᵀφ(x'); the theory and the
    Monte-Carlo both use it, and test inputs get their features from ``features.transform``.
    """

    noise_var: float
    features: LowRankFeatures = field(repr=False)
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None

    @property
    def phi(self) -> np.ndarray:
        """Φ, ndarray of shape (N, m)."""
        return self.features.phi

    def cross(self, X_other: np.ndarray) -> np.ndarray:
        """Features φ(x) of other inputs, ndarray of shape (M, m): k̃(x, x_i) = φ(x)ᵀφ_i (not k itself)."""
        return self.features.transform(np.atleast_2d(X_other))


def low_rank_problem(
    dataset: Dataset,
    kernel: Kernel | None = None,
    noise_var: float = PAPER_NOISE_VAR,
    *,
    rank: int,
    method: str = "nystrom",
    rng=0,
    holdout: int = 0,
) -> LowRankRegressionProblem:
    """Build a low-rank problem from a dataset: :func:`regression_problem`'s D0, kernel and σ², with K ≈ ΦΦᵀ.

    Parameters
    ----------
    dataset, kernel, noise_var, holdout
        As in :func:`regression_problem`.
    rank : int
        m, the number of features (Nyström landmarks or random Fourier features).
    method : {"nystrom", "rff"}
        The feature map (:func:`explorer.lowrank.low_rank_features`).
    rng : Generator, int or None
        Seed of the landmarks (Nyström) or frequencies (random features).

    Returns
    -------
    LowRankRegressionProblem
        D0, the kernel, σ² and the features Φ of shape (N, m).

    Raises
    ------
    ValueError
        As :func:`regression_problem`, and for a rank outside 1..min(N, MAX_RANK) or a feature map the kernel has not.
    """
    X, y, X_test, y_test, kernel = _training_rows(dataset, kernel, noise_var, holdout)
    features = low_rank_features(kernel, X, rank, method=method, rng=rng)
    return LowRankRegressionProblem(dataset.name, X, y, kernel, float(noise_var), features, X_test, y_test)
