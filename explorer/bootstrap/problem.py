"""What every kernel bootstrap problem holds: its name, the N data rows D0 and the kernel (core: numpy only).

The GP-regression problem of [MO03] (:class:`explorer.gp_bootstrap.problem.RegressionProblem`) and the SVM problem
of [MO03b] (:class:`explorer.svm_bootstrap.problem.SVMProblem`) add their own fields (noise, sites, the kernel
matrix K, held-out rows) to :class:`KernelProblem`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.kernels import Kernel

__all__ = ["KernelProblem"]


@dataclass(frozen=True)
class KernelProblem:
    """A bootstrap problem's data rows D0 (inputs ``X`` of shape (N, d), targets or labels ``y`` of shape (N,)), its
    ``name`` and its ``kernel``; the kernel matrix is built on :attr:`kernel_inputs`."""

    name: str
    X: np.ndarray
    y: np.ndarray
    kernel: Kernel

    @property
    def n(self) -> int:
        """N, the number of data rows."""
        return self.y.shape[0]

    def sample_size(self, s_over_n):
        """S = (S/N)·N, the mean bootstrap sample size of eq. (11) at ``s_over_n`` (a float or an array): the one place
        S/N becomes S."""
        return s_over_n * self.n

    @property
    def kernel_inputs(self) -> np.ndarray:
        """The inputs the kernel matrix K is built on: the data rows ``X`` (a subclass may merge identical rows)."""
        return self.X

    def cross(self, X_other: np.ndarray) -> np.ndarray:
        """Cross-kernel k(X_other, kernel_inputs) between other inputs and the inputs of K.

        Parameters
        ----------
        X_other : ndarray of shape (M, d)
            Inputs (a single input of shape (d,) is taken as M = 1).

        Returns
        -------
        ndarray of shape (M, n_K)
            k(x_m, x_i) for every other input m and input i of K (n_K = N unless a subclass merges rows).
        """
        return self.kernel(np.atleast_2d(X_other), self.kernel_inputs)
