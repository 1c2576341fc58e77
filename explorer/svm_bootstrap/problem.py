"""The problem of [MO03b] (hard-margin SVM): standardised inputs, ±1 labels, the kernel, the merged sites.

:func:`svm_problem` is the one path from a classification :class:`~explorer.datasets.Dataset` to the
:class:`SVMProblem` the theory (:mod:`~explorer.svm_bootstrap.svm_replica`) and the Monte-Carlo bootstrap
(:mod:`~explorer.svm_bootstrap.montecarlo`) take; the CLI's ``svm-curve`` and the app's SVM tab both build theirs
with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from explorer.bootstrap.problem import KernelProblem
from explorer.datasets import Dataset, holdout_split
from explorer.kernels import Kernel, SquaredExponential
from explorer.svm_bootstrap import montecarlo as svm

__all__ = ["BROAD_LENGTHSCALE", "SVMProblem", "svm_problem"]


#: The "broad" kernel of the issue for crabs and wisconsin: L = √10 on standardised inputs.
BROAD_LENGTHSCALE = math.sqrt(10.0)


@dataclass(frozen=True)
class SVMProblem(KernelProblem):
    """A hard-margin SVM bootstrap problem: data rows D0, kernel, merged sites and K on the sites.

    ``X``, ``y`` hold the N data rows (standardised inputs); ``sites`` merges identical rows, and ``K`` is
    the kernel matrix of the distinct inputs ``X[sites.index]`` (the :attr:`kernel_inputs`, so ``cross`` is
    K(X_other, X_sites)). ``X_test``, ``y_test``: held-out rows.
    """

    sites: svm.Sites
    K: np.ndarray = field(repr=False)
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None

    @property
    def n_sites(self) -> int:
        return self.sites.n_sites

    @property
    def X_sites(self) -> np.ndarray:
        return self.X[self.sites.index]

    @property
    def y_sites(self) -> np.ndarray:
        return self.sites.y

    @property
    def kernel_inputs(self) -> np.ndarray:
        """The sites' inputs ``X_sites``: K is the kernel matrix of the distinct inputs."""
        return self.X_sites

    def k_diag(self, X_other: np.ndarray) -> np.ndarray:
        """K(x, x) at other inputs (the prior variance of the field, needed by eq. 19).

        Parameters
        ----------
        X_other : ndarray of shape (M, d)
            As in :meth:`cross`.

        Returns
        -------
        ndarray of shape (M,)
            K(x_m, x_m).
        """
        return self.kernel.diag(np.atleast_2d(X_other))


def svm_problem(dataset: Dataset, lengthscale: float | Sequence[float] = BROAD_LENGTHSCALE, *,
                holdout: int = 0, standardize: bool = True, kernel: Kernel | None = None) -> SVMProblem:
    """Build a problem from a classification dataset.

    Inputs are standardised (mean 0, sample sd 1) over all rows first; the kernel is
    K(x, x') = exp(−Σ_j (x_j − x'_j)²/(2 L_j²)) with one lengthscale or one per input (or ``kernel``).
    ``holdout`` > 0 keeps the first ``holdout`` rows as test inputs; the rest is D0.

    Parameters
    ----------
    dataset : Dataset
        A two-class data set (labels -1 / +1).
    lengthscale : float or sequence of float
        L, one for all inputs or one per input; default √10 (``BROAD_LENGTHSCALE``). Ignored with ``kernel``.
    holdout : int
        Number of leading rows kept as test inputs (``X_test``, ``y_test``); 0 keeps none.
    standardize : bool
        Standardise the inputs (over all rows, holdout included) before anything else.
    kernel : Kernel, optional
        Covariance function to use instead of the squared exponential with ``lengthscale``.

    Returns
    -------
    SVMProblem
        The N data rows, their merged sites (``svm.merge_identical``) and K of shape (n_sites, n_sites).

    Raises
    ------
    ValueError
        If the data set is not a classification task, ``holdout`` leaves fewer than 2 training rows or is
        negative, or ``lengthscale`` is not one positive number or d of them.
    """
    if dataset.task != "classification":
        raise ValueError(f"Dataset {dataset.name!r} is a {dataset.task} task; the SVM bootstrap needs two classes "
                         "(labels -1/+1). Load a classification dataset or give --target a two-class column.")
    data = dataset.standardized() if standardize else dataset
    X, y, X_test, y_test = holdout_split(data, holdout, 2, "two")
    if kernel is None:
        kernel = SquaredExponential(lengthscale=_lengthscale_iv(lengthscale, data.d))
    sites = svm.merge_identical(X, y)
    K = kernel(X[sites.index])
    return SVMProblem(dataset.name, X, y, kernel, sites, K, X_test, y_test)


def _lengthscale_iv(lengthscale, d: int):
    L = np.atleast_1d(np.asarray(lengthscale, dtype=float))
    if L.ndim != 1 or L.size not in (1, d) or not np.all(np.isfinite(L) & (L > 0)):
        raise ValueError(f"`lengthscale` must be one positive number or {d} (one per input), got "
                         f"{np.asarray(lengthscale).tolist()}.")
    return float(L[0]) if L.size == 1 else L
