"""The model family of [LSWV05]: models indexed by a complexity q, what the bootstrap of :mod:`~explorer.fast_bootstrap.bootstrap` selects.

:class:`~explorer.fast_bootstrap.lssvm.LSSVM` (q = γ), :class:`~explorer.fast_bootstrap.networks.RBFN` (q = P
kernels) and :class:`~explorer.fast_bootstrap.networks.MLP` (q = P hidden units) are model families; any class
with these attributes and :meth:`ModelFamily.predict_path` is one as well.
"""
from __future__ import annotations

from typing import ClassVar, Protocol

import numpy as np

__all__ = ["ModelFamily"]


class ModelFamily(Protocol):
    """A family of regressors indexed by a complexity q ([LSWV05] §2), trained anew for every q.

    Attributes
    ----------
    name : str
        The family's key, as ``--model`` of ``explorer fast-bootstrap`` ("ls-svm", "rbfn", "mlp").
    complexity : str
        What q is, in words ("regularization parameter γ", "number of hidden units P").
    integer : bool
        Whether q takes whole values only.
    """

    name: ClassVar[str]
    complexity: ClassVar[str]
    integer: ClassVar[bool]

    def predict_path(self, X: np.ndarray, y: np.ndarray, grid: np.ndarray, X_eval: np.ndarray,
                     weights: np.ndarray | None = None, rng=None) -> np.ndarray:
        """Predictions at ``X_eval`` of the models trained on (X, y) with every complexity q of ``grid``.

        A training point present c_i times in a bootstrap sample is given once with multiplicity c_i: every sum
        of squares over the sample becomes Σ_i c_i e_i², which is training on the duplicated points.

        Parameters
        ----------
        X : ndarray of shape (n, d)
            Distinct training inputs.
        y : ndarray of shape (n,)
            Targets.
        grid : ndarray of shape (G,)
            Complexities q.
        X_eval : ndarray of shape (m, d)
            Evaluation inputs.
        weights : ndarray of shape (n,), optional
            Positive multiplicities c_i of the training points (default all one).
        rng : Generator, int or None
            Random source of the training (k-means starts, initial weights); a deterministic family ignores it.

        Returns
        -------
        ndarray of shape (G, m)
            h^q(x) for every q of ``grid`` and every evaluation input.
        """
