"""The GP-regression bootstrap problem of [MO03]: training data D0, kernel, noise σ² and the prior covariance of D0 as
a kernel operator — the dense kernel matrix K, or K ≈ ΦΦᵀ with the features Φ of a low-rank model
(:mod:`explorer.lowrank`, never an N×N matrix).

One constructor builds it for the command line, the app and the scikit-learn estimator: :func:`build_problem` from
arrays, :func:`regression_problem` from a data set (held-out rows, the paper preset). Every input is validated there,
once, with one message per rule (σ² by :func:`explorer.validation.noise_variance`, the rank by
:func:`explorer.lowrank.check_rank`); the computations trust the fields. S = (S/N)·N is
:meth:`~explorer.bootstrap.problem.KernelProblem.sample_size`. Core module: numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.bootstrap.problem import KernelProblem
from explorer.datasets import Dataset, holdout_split
from explorer.kernels import Kernel, paper_rbf
from explorer.lowrank import LowRankFeatures, low_rank_features
from explorer.operators import KernelOperator, offers, require
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel
from explorer.validation import noise_variance

__all__ = ["PAPER_NOISE_VAR", "PAPER_L2", "RegressionProblem", "build_problem", "regression_problem"]

#: [MO03]'s Boston setting (Fig. 1): σ² = 0.01, RBF exp(−Σ_j (x_j − x'_j)²/(v_j l²)), l² = 73.54, v_j = sd.
PAPER_NOISE_VAR = 0.01
PAPER_L2 = 73.54


@dataclass(frozen=True)
class RegressionProblem(KernelProblem):
    """A GP-regression bootstrap problem: training data D0, kernel, noise σ² and the prior covariance of D0.

    Attributes
    ----------
    noise_var : float
        σ² > 0.
    operator : KernelOperator
        The prior covariance of D0: :class:`~explorer.operators.dense.DenseKernel` (K = k(X, X)) or
        :class:`~explorer.operators.features.FeatureKernel` (K = ΦΦᵀ).
    X_test, y_test : ndarray or None
        Held-out rows.
    features : LowRankFeatures or None
        The low-rank model (Φ and the map φ(x) to new inputs) when the operator is one of features.
    """

    noise_var: float
    operator: KernelOperator = field(repr=False)
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    features: LowRankFeatures | None = field(default=None, repr=False)

    @property
    def K(self) -> np.ndarray:
        """The N×N kernel matrix (a dense problem only: VG, MF and the step-by-step page need it)."""
        return require(self.operator, "dense_matrix", "the N×N kernel matrix")()

    @property
    def phi(self) -> np.ndarray:
        """Φ of shape (N, m) (a low-rank problem only)."""
        if self.features is None:
            raise AttributeError("A dense problem has no features Φ; build it with a rank for a low-rank model.")
        return self.features.phi

    @property
    def low_rank(self) -> bool:
        """Whether the model is the low-rank one, K = ΦΦᵀ (what the outputs report as the model)."""
        return self.features is not None

    def features_record(self) -> dict | None:
        """What rebuilds ΦΦᵀ (method, rank, landmarks, jitter) for the outputs of a low-rank problem, None for a dense one."""
        return None if self.features is None else self.features.as_dict()

    def kernel_note(self, seed_option: str = "the seed") -> str | None:
        """The line outputs print above the model when the kernel is an approximation K ≈ ΦΦᵀ (what Φ is and what
        needs the N×N matrix), None when it is the kernel matrix itself — a report of the model, like
        :meth:`features_record`, not a choice of computation."""
        if self.features is None:
            return None
        needs = "" if offers(self.operator, "dense_matrix") else "; VG and MF: dense path only"
        return f"low-rank kernel K ≈ ΦΦᵀ: {self.features.description(seed_option)}{needs}"

    def cross(self, X_other: np.ndarray) -> np.ndarray:
        """The model's cross terms with other inputs, what eq. (48) and the Monte-Carlo take at test inputs: k(x, x_i)
        of shape (M, N) for a dense problem, the features φ(x) of shape (M, m) for a low-rank one
        (k̃(x, x_i) = φ(x)ᵀφ_i: no M×N matrix)."""
        if self.features is not None:
            return self.features.transform(np.atleast_2d(X_other))
        return super().cross(X_other)


def build_problem(name: str, X: np.ndarray, y: np.ndarray, kernel: Kernel | None, noise_var: float, *,
                  rank: int | None = None, method: str = "nystrom", rng=0, X_test: np.ndarray | None = None,
                  y_test: np.ndarray | None = None, features: LowRankFeatures | np.ndarray | None = None
                  ) -> RegressionProblem:
    """The one constructor of a GP-regression bootstrap problem.

    Parameters
    ----------
    name : str
        What the outputs call the data.
    X : ndarray of shape (N, d)
        Training inputs D0.
    y : ndarray of shape (N,)
        Targets.
    kernel : Kernel or None
        The covariance function (a scikit-learn kernel works too: it is called k(X) and k(X, Y)); None only with
        ``features``.
    noise_var : float
        σ² > 0.
    rank : int, optional
        m, the number of features of a low-rank model K ≈ ΦΦᵀ; None (default) for the dense kernel matrix.
    method : {"nystrom", "rff"}
        The feature map of a low-rank model (:func:`explorer.lowrank.low_rank_features`).
    rng : Generator, int or None
        Seed of the landmarks (Nyström) or frequencies (random features).
    X_test, y_test : ndarray, optional
        Held-out rows.
    features : LowRankFeatures, optional
        Given features Φ of the training inputs (K = ΦΦᵀ as they are, e.g. the explicit features of a fitted
        estimator, :func:`~explorer.lowrank.given_features` of the array): ``rank``, ``method`` and ``rng`` are then
        not used.

    Returns
    -------
    RegressionProblem
        With a :class:`~explorer.operators.dense.DenseKernel` of K = k(X, X), or a
        :class:`~explorer.operators.features.FeatureKernel` of Φ (N × m).

    Raises
    ------
    ValueError
        If σ² is not a positive finite number, or the rank is not in 1..min(N, MAX_RANK) or the feature map is not
        one the kernel has.
    """
    noise_var = noise_variance(noise_var)
    if features is not None:
        return RegressionProblem(name, X, y, kernel, noise_var, FeatureKernel.of(features), X_test, y_test, features)
    if kernel is None:
        raise ValueError("build_problem needs a kernel, or the features Φ of one (`features`).")
    if rank is None:
        return RegressionProblem(name, X, y, kernel, noise_var, DenseKernel(kernel(X)), X_test, y_test)
    features = low_rank_features(kernel, X, rank, method=method, rng=rng)  # checks the rank
    return RegressionProblem(name, X, y, kernel, noise_var, FeatureKernel(features.phi), X_test, y_test, features)


def regression_problem(
    dataset: Dataset,
    kernel: Kernel | None = None,
    noise_var: float = PAPER_NOISE_VAR,
    *,
    holdout: int = 0,
    rank: int | None = None,
    method: str = "nystrom",
    rng=0,
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
    rank, method, rng
        A low-rank model of m = ``rank`` features, as in :func:`build_problem`; None (default) for the dense K.

    Returns
    -------
    RegressionProblem
        D0, the kernel, σ² and the prior covariance of D0 (N = n − ``holdout`` rows).

    Raises
    ------
    ValueError
        If the data set is not a regression task, ``holdout`` leaves fewer than 10 training rows or is
        negative, or an input of :func:`build_problem` is invalid.
    """
    if dataset.task != "regression":
        raise ValueError(f"Dataset {dataset.name!r} is a {dataset.task} task; the GP-regression bootstrap "
                         "needs a real-valued target.")
    X, y, X_test, y_test = holdout_split(dataset, holdout, 10)
    if kernel is None:
        kernel = paper_rbf(X, l2=PAPER_L2, scale="sd")
    return build_problem(dataset.name, X, y, kernel, noise_var, rank=rank, method=method, rng=rng, X_test=X_test,
                         y_test=y_test)

