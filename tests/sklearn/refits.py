"""Literal refits with ``sample_weight`` for the checks of explorer.sklearn against the bootstrap it stands for.

A bootstrap sample with occupation numbers s_i ~ Poisson(S/N) ([MO03] eq. (11)) is, for every supported estimator, a
refit with ``sample_weight=s`` (s_i copies of row i; a pipeline's transformers held fixed: the weights go to its final
``Ridge``). From B such refits: the bootstrap mean and standard deviation at test inputs, and the jackknife+-after-
bootstrap bounds computed from the refits' own out-of-bag means (rows with s_i = 0), exactly as the theory's are.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline, make_pipeline

from explorer import datasets
from explorer.bootstrap.out_of_bag import jackknife_plus_bounds

#: Rows of diamonds the checks use (a random subset: the dense KernelRidge refits cost O(N³) each).
DIAMONDS_ROWS = 1_000


def split(name: str, seed: int = 0):
    """(X, y, X_test, y_test): a data set standardised on its training rows, 20 % of the rows held out at random."""
    data = datasets.load(name)
    X, y = np.asarray(data.inputs, dtype=float), np.asarray(data.targets, dtype=float)
    rng = np.random.default_rng(seed)
    rows = rng.permutation(X.shape[0])[: DIAMONDS_ROWS if name == "diamonds" else X.shape[0]]
    X, y = X[rows], y[rows]
    cut = int(0.8 * len(y))
    mean, sd = X[:cut].mean(axis=0), X[:cut].std(axis=0)
    X = (X - mean) / sd
    y = (y - y[:cut].mean()) / y[:cut].std()
    return X[:cut], y[:cut], X[cut:], y[cut:]


def models(d: int) -> dict:
    """The three models of issue 50's checks, for inputs of d standardised columns."""
    gamma = 1.0 / (2 * d)
    return {
        "ridge": Ridge(alpha=1.0),
        "kernel-ridge-rbf": KernelRidge(alpha=0.1, kernel="rbf", gamma=gamma),
        "nystroem-ridge": make_pipeline(Nystroem(gamma=gamma, n_components=100, random_state=0), Ridge(alpha=0.1)),
    }


@dataclass(frozen=True)
class Refits:
    """B literal refits: occupations (B, N), predictions at the training inputs (B, N) and at the tests (B, M)."""

    occ: np.ndarray
    train: np.ndarray
    test: np.ndarray

    def mean(self) -> np.ndarray:
        return self.test.mean(axis=0)

    def sd(self) -> np.ndarray:
        return self.test.std(axis=0, ddof=1)

    def jackknife_plus(self, y: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """J+aB bounds from the refits' out-of-bag means (mean over the refits with s_i = 0)."""
        out = (self.occ == 0).astype(float)
        count = out.sum(axis=0)
        if np.any(count == 0):
            raise AssertionError("a training row is in every sample: draw more refits")
        at_train = np.einsum("bi,bi->i", out, self.train) / count
        at_test = (self.test.T @ out) / count  # (M, N)
        return jackknife_plus_bounds(at_test, np.abs(y - at_train), confidence)


def literal_refits(est, X, y, X_test, refits: int, seed: int, s_over_n: float = 1.0) -> Refits:
    """``refits`` refits of a clone of ``est`` with ``sample_weight`` = Poisson(S/N) occupations."""
    occ = np.random.default_rng(seed).poisson(s_over_n, size=(refits, len(y)))
    key = f"{est.steps[-1][0]}__sample_weight" if isinstance(est, Pipeline) else "sample_weight"
    train, test = np.empty(occ.shape), np.empty((refits, X_test.shape[0]))
    model = clone(est)  # a pipeline's transformers see the full X, unweighted, in every refit: the same fitted ones
    for b, s in enumerate(occ):
        fitted = model.fit(X, y, **{key: s.astype(float)})
        train[b], test[b] = fitted.predict(X), fitted.predict(X_test)
    return Refits(occ, train, test)


def relative(theory: np.ndarray, refit: np.ndarray, scale: np.ndarray) -> tuple[float, float, int]:
    """(median, worst, where worst) of |theory − refit|/scale."""
    diff = np.abs(np.asarray(theory) - np.asarray(refit)) / scale
    return float(np.median(diff)), float(diff.max()), int(diff.argmax())
