r"""Neural-network regressors of [LSWV05] §5.1: the RBF network (eq. 14) and the one-hidden-layer MLP (eq. 13).

Both are :class:`Network` families: model families (:class:`explorer.fast_bootstrap.family.ModelFamily`) indexed
by the number P of hidden units/kernels (the complexity q of [LSWV05]), one network trained for every P. Training
points may carry integer multiplicities c_i (a bootstrap sample given as distinct points with occupation numbers):
every sum of squares over the sample becomes Σ_i c_i e_i², and k-means weighs points by c_i, which is
exactly training on the duplicated points.

**RBFN** (eq. 14) h(x) = Σ_p λ_p exp(−‖x − c_p‖² / (2 WSF σ_p²)): centres c_p by weighted k-means (the best of
``n_init`` Lloyd runs from k-means++ starts), σ_p the root-mean-square distance of the points of cluster p to
its centre (Benoudjit & Verleysen 2003, ref. [3] of [LSWV05]; a cluster of coincident points takes the
mean width of the others), the width scaling factor WSF fixed, output weights λ by (weighted) linear least
squares. No regularisation, as in the paper.

**MLP** (eq. 13) h(x) = Σ_p w_p tanh(Σ_j w_pj x_j + b_p) + b₀. Unlike eq. (13) as printed, the hidden units
and the output have biases (the defaults of the Matlab toolbox the paper used; without them tanh(wx) is
odd and cannot fit the toy data on [0, 1]). Trained without regularisation by Levenberg–Marquardt, as in the
paper — MINPACK's ``lmder`` through :func:`scipy.optimize.least_squares` (``method="lm"``) with the analytic
Jacobian, at most ``max_epochs`` iterations — from ``n_init`` random starts (Nguyen–Widrow-scaled uniform
weights), keeping the one with the lowest training error ("the best model has been selected among several
runs with different weight initializations").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import optimize
from scipy.spatial.distance import cdist

__all__ = ["kmeans", "Clustering", "Network", "RBFN", "MLP"]


def _weights(n: int, weights) -> np.ndarray:
    c = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if c.shape != (n,) or not np.all(c > 0):
        raise ValueError(f"`weights` must be {n} positive multiplicities, got shape {c.shape}.")
    return c


@dataclass(frozen=True)
class Clustering:
    """The result of :func:`kmeans`.

    Attributes
    ----------
    centres : ndarray of shape (P, d)
        The cluster centres.
    labels : ndarray of int, shape (n,)
        The centre each point belongs to.
    """

    centres: np.ndarray
    labels: np.ndarray


def kmeans(X: np.ndarray, n_clusters: int, *, weights: np.ndarray | None = None, rng=None,
           n_init: int = 1, max_iter: int = 300) -> Clustering:
    """Weighted k-means: the best (lowest Σ c_i ‖x_i − c_label‖²) of ``n_init`` Lloyd runs from k-means++
    starts.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The distinct points.
    n_clusters : int
        P, the number of centres, 1 ≤ P ≤ n.
    weights : ndarray of shape (n,), optional
        Multiplicities c_i of the points; default 1.
    rng : Generator, int or None
        Seed of the k-means++ starts.
    n_init : int
        Number of Lloyd runs; the best one is returned.
    max_iter : int
        Largest number of Lloyd iterations per run.

    Returns
    -------
    Clustering
        ``centres`` of shape (P, d) and ``labels`` of shape (n,).

    Raises
    ------
    ValueError
        If P is not between 1 and n, or the weights are invalid.
    """
    X = np.asarray(X, dtype=float)
    c = _weights(X.shape[0], weights)
    if not 1 <= n_clusters <= X.shape[0]:
        raise ValueError(f"`n_clusters` must be between 1 and the number of distinct points {X.shape[0]}, "
                         f"got {n_clusters}.")
    gen = np.random.default_rng(rng)
    runs = [_lloyd(X, c, _kmeans_plus_plus(X, n_clusters, c, gen), max_iter) for _ in range(max(int(n_init), 1))]
    centres, labels = min(runs, key=lambda run: float(c @ np.sum((X - run[0][run[1]]) ** 2, axis=1)))
    return Clustering(centres=centres, labels=labels)


def _lloyd(X, c, centres, max_iter) -> tuple[np.ndarray, np.ndarray]:
    labels = np.full(X.shape[0], -1)
    for _ in range(max_iter):
        new = np.argmin(cdist(X, centres, "sqeuclidean"), axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        centres = _weighted_means(X, labels, c, centres)
    return centres, labels


def _kmeans_plus_plus(X, k, c, gen) -> np.ndarray:
    centres = [X[gen.choice(X.shape[0], p=c / c.sum())]]
    d2 = cdist(X, centres[0][None, :], "sqeuclidean")[:, 0]
    for _ in range(1, k):
        p = c * d2
        i = gen.choice(X.shape[0], p=p / p.sum()) if p.sum() > 0 else gen.integers(X.shape[0])
        centres.append(X[i])
        d2 = np.minimum(d2, cdist(X, X[i][None, :], "sqeuclidean")[:, 0])
    return np.array(centres)


def _weighted_means(X, labels, c, old) -> np.ndarray:
    k = old.shape[0]
    mass = np.bincount(labels, weights=c, minlength=k)
    sums = np.stack([np.bincount(labels, weights=c * X[:, j], minlength=k) for j in range(X.shape[1])], axis=1)
    empty = mass == 0
    return np.where(empty[:, None], old, sums / np.where(empty, 1.0, mass)[:, None])


def _cluster_widths(X, centres, labels, c) -> np.ndarray:
    """σ_p: root-mean-square distance of cluster p's points to its centre (ref. [3] of [LSWV05])."""
    d2 = np.sum((X - centres[labels]) ** 2, axis=1)
    k = centres.shape[0]
    mass = np.bincount(labels, weights=c, minlength=k)
    sigma = np.sqrt(np.bincount(labels, weights=c * d2, minlength=k) / np.maximum(mass, 1e-300))
    ok = sigma > 0
    if not ok.any():  # every cluster a single point: half the mean distance between centres
        return np.full(k, 0.5 * np.mean(cdist(centres, centres)[~np.eye(k, dtype=bool)]) if k > 1 else 1.0)
    return np.where(ok, sigma, sigma[ok].mean())


class Network:
    """A model family indexed by the number P of hidden units or kernels: one network trained for every P.

    A subclass sets ``name`` and ``complexity`` (:class:`~explorer.fast_bootstrap.family.ModelFamily`) and
    implements :meth:`fit_predict`, the training of one network.
    """

    name: ClassVar[str]
    complexity: ClassVar[str]
    integer: ClassVar[bool] = True

    def fit_predict(self, X: np.ndarray, y: np.ndarray, P: int, X_eval: np.ndarray, weights: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
        """h(x) at ``X_eval`` of the network with P units trained on (X, y); ndarray of shape (m,)."""
        raise NotImplementedError

    def predict_path(self, X, y, grid, X_eval, weights=None, rng=None) -> np.ndarray:
        """Predictions of the networks with P = grid[k] units trained on (X, y) (:meth:`fit_predict`).

        Parameters
        ----------
        X, y, X_eval, weights
            As in :meth:`explorer.fast_bootstrap.family.ModelFamily.predict_path`.
        grid : ndarray of shape (G,)
            Numbers of units P, whole numbers in 1..n.
        rng : Generator, int or None
            Random source of the training, one generator for every P in turn.

        Returns
        -------
        ndarray of shape (G, m)
            h(x) for every P and evaluation input.

        Raises
        ------
        ValueError
            If ``weights`` are not n positive multiplicities, or a P of ``grid`` is not a whole number between 1
            and n.
        """
        gen = np.random.default_rng(rng)
        c = _weights(X.shape[0], weights)
        out = np.empty((len(grid), X_eval.shape[0]))
        for k, P in enumerate(grid):
            out[k] = self.fit_predict(X, y, _units(P, X.shape[0]), X_eval, c, gen)
        return out


def _units(P, n_points: int) -> int:
    if float(P) != int(P) or not 1 <= int(P) <= n_points:
        raise ValueError(f"the number of units/kernels must be a whole number between 1 and the number of "
                         f"distinct training points {n_points}, got {P}.")
    return int(P)


@dataclass(frozen=True)
class RBFN(Network):
    """RBF network of eq. (14) of [LSWV05] as a family indexed by the number P of Gaussian kernels.

    Parameters
    ----------
    wsf : float
        Width scaling factor WSF of eq. (14), positive: kernel p has the variance WSF σ_p².
    n_init : int
        Weighted k-means runs from k-means++ starts per training; the centres of the best are kept.
    """

    wsf: float = 8.0
    n_init: int = 5

    name = "rbfn"
    complexity = "number of Gaussian kernels P"

    def __post_init__(self):
        if not (np.isfinite(self.wsf) and self.wsf > 0):
            raise ValueError(f"`wsf` must be positive, got {self.wsf}. It scales the kernel widths, eq. (14).")

    def design(self, X: np.ndarray, centres: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """Φ_ip = exp(−‖x_i − c_p‖² / (2 WSF σ_p²)), eq. (14).

        Parameters
        ----------
        X : ndarray of shape (n, d)
            Inputs.
        centres : ndarray of shape (P, d)
            Kernel centres c_p.
        sigma : ndarray of shape (P,)
            Cluster widths σ_p.

        Returns
        -------
        ndarray of shape (n, P)
            The design matrix Φ.
        """
        return np.exp(-cdist(X, centres, "sqeuclidean") / (2 * self.wsf * sigma[None, :] ** 2))

    def fit_predict(self, X, y, P, X_eval, weights, rng) -> np.ndarray:
        """h(x) of eq. (14) at ``X_eval`` with P kernels: centres by weighted k-means (best of ``n_init``, drawn
        from ``rng``), widths σ_p from the clusters, output weights by weighted least squares."""
        clusters = kmeans(X, P, weights=weights, rng=rng, n_init=self.n_init)
        centres = clusters.centres
        sigma = _cluster_widths(X, centres, clusters.labels, weights)
        r = np.sqrt(weights)
        lam = np.linalg.lstsq(r[:, None] * self.design(X, centres, sigma), r * y, rcond=None)[0]
        return self.design(X_eval, centres, sigma) @ lam


@dataclass(frozen=True)
class MLP(Network):
    """One-hidden-layer tanh perceptron of eq. (13) of [LSWV05] (with biases), trained by Levenberg–Marquardt.

    Parameters
    ----------
    max_epochs : int
        Most Levenberg–Marquardt function evaluations per run, at least 1.
    n_init : int
        Runs from random initial weights per training, at least 1; the one of lowest training error is kept.
    """

    max_epochs: int = 200
    n_init: int = 3

    name = "mlp"
    complexity = "number of hidden units P"

    def __post_init__(self):
        if int(self.max_epochs) < 1 or int(self.n_init) < 1:
            raise ValueError(f"`max_epochs` and `n_init` must be at least 1, got {self.max_epochs}, {self.n_init}.")

    @staticmethod
    def unpack(theta: np.ndarray, P: int, d: int):
        """Split the flat parameter vector θ into the weights of eq. (13).

        Parameters
        ----------
        theta : ndarray of shape (P (d + 2) + 1,)
            Flat parameters in the order (W, b, w, b0).
        P : int
            Number of hidden units.
        d : int
            Number of inputs.

        Returns
        -------
        tuple
            Views (W of shape (P, d), b of shape (P,), w of shape (P,), b0 a scalar) into ``theta``.
        """
        W = theta[:P * d].reshape(P, d)
        return W, theta[P * d:P * (d + 1)], theta[P * (d + 1):P * (d + 2)], theta[-1]

    def forward(self, theta: np.ndarray, X: np.ndarray, P: int) -> np.ndarray:
        """h(x) = Σ_p w_p tanh(W_p · x + b_p) + b0 for every row of X, eq. (13) with biases.

        Parameters
        ----------
        theta : ndarray of shape (P (d + 2) + 1,)
            Flat parameters (:meth:`unpack`).
        X : ndarray of shape (n, d)
            Inputs.
        P : int
            Number of hidden units.

        Returns
        -------
        ndarray of shape (n,)
            The network output at every input.
        """
        W, b, w, b0 = self.unpack(theta, P, X.shape[1])
        return np.tanh(X @ W.T + b) @ w + b0

    def jacobian(self, theta: np.ndarray, X: np.ndarray, P: int) -> np.ndarray:
        """∂h(x_i)/∂θ in the order (W, b, w, b0) of :meth:`unpack`.

        Parameters
        ----------
        theta, X, P
            As in :meth:`forward`.

        Returns
        -------
        ndarray of shape (n, P (d + 2) + 1)
            The Jacobian of :meth:`forward` with respect to θ.
        """
        W, b, w, _ = self.unpack(theta, P, X.shape[1])
        T = np.tanh(X @ W.T + b)
        dT = (1 - T**2) * w[None, :]  # ∂h/∂(pre-activation), (n, P)
        return np.hstack([(dT[:, :, None] * X[:, None, :]).reshape(X.shape[0], -1), dT, T, np.ones((X.shape[0], 1))])

    def fit(self, X: np.ndarray, y: np.ndarray, P: int, weights=None, rng=None) -> np.ndarray:
        """Parameters θ of the best of ``n_init`` Levenberg–Marquardt runs on Σ c_i (h(x_i) − y_i)².

        Parameters
        ----------
        X, y, weights
            As in :meth:`predict_path`.
        P : int
            Number of hidden units.
        rng : Generator, int or None
            Random source of the initial weights.

        Returns
        -------
        ndarray of shape (P (d + 2) + 1,)
            θ of the run with the lowest cost (each run at most ``max_epochs`` function evaluations).
        """
        gen = np.random.default_rng(rng)
        r = np.sqrt(_weights(X.shape[0], weights))

        def residuals(theta):
            return r * (self.forward(theta, X, P) - y)

        def jacobian(theta):
            return r[:, None] * self.jacobian(theta, X, P)

        best = None
        for _ in range(int(self.n_init)):
            fit = optimize.least_squares(residuals, self._initial(P, X, y, gen), jac=jacobian, method="lm",
                                         max_nfev=int(self.max_epochs))
            if best is None or fit.cost < best.cost:
                best = fit
        return best.x

    @staticmethod
    def _initial(P, X, y, gen) -> np.ndarray:
        """Nguyen–Widrow-scaled uniform input weights on standardised scales; small output weights."""
        d = X.shape[1]
        scale = 1.0 / np.maximum(X.std(axis=0), 1e-12)
        W = gen.uniform(-1, 1, size=(P, d)) * scale[None, :] * 0.7 * P ** (1 / d)
        b = -(W @ X.mean(axis=0)) + gen.uniform(-1, 1, size=P) * 0.7 * P ** (1 / d)
        w = gen.uniform(-0.5, 0.5, size=P) * max(y.std(), 1e-12)
        return np.concatenate([W.ravel(), b, w, [y.mean()]])

    def fit_predict(self, X, y, P, X_eval, weights, rng) -> np.ndarray:
        """h(x) of eq. (13) at ``X_eval`` of the best of ``n_init`` MLPs with P hidden units (:meth:`fit`), their
        initial weights drawn from ``rng``."""
        return self.forward(self.fit(X, y, P, weights, rng), X_eval, P)
