"""The GP-regression bootstrap problem of seed 000: training data D0, kernel, noise σ² and the kernel matrix K.

:func:`regression_problem` builds a :class:`RegressionProblem` from a data set (the paper preset by default); the
stages (:mod:`.stages`) and the comparisons (:mod:`.experiments`) take it. Core module: numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.bootstrap.problem import KernelProblem
from explorer.datasets import Dataset, holdout_split
from explorer.kernels import Kernel, paper_rbf

__all__ = ["PAPER_NOISE_VAR", "PAPER_L2", "RegressionProblem", "regression_problem"]

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
    if dataset.task != "regression":
        raise ValueError(f"Dataset {dataset.name!r} is a {dataset.task} task; the GP-regression bootstrap "
                         "needs a real-valued target.")
    X, y, X_test, y_test = holdout_split(dataset, holdout, 10)
    if kernel is None:
        kernel = paper_rbf(X, l2=PAPER_L2, scale="sd")
    if not (np.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"`noise_var` must be positive, got {noise_var}. It is the noise variance σ².")
    K = kernel(X)
    return RegressionProblem(dataset.name, X, y, kernel, float(noise_var), K, X_test, y_test)
