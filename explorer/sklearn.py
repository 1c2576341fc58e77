"""A scikit-learn front door to the replica/ADATAP bootstrap of GP regression (seed 000), without refits.

:class:`ReplicaBootstrapRegressor` is a scikit-learn regressor: ``fit`` takes the kernel's hyperparameters by maximum
evidence as :class:`~sklearn.gaussian_process.GaussianProcessRegressor` does, then solves the ADATAP equations
(54)-(59) at the bootstrap size ``s_over_n`` = S/N. From that one solution come, with no model refitted:

* ``predict(X, return_std=True)`` — the bootstrap mean and standard deviation of the GP predictor at any input
  (eq. 48);
* ``bootstrap_distribution()`` — the whole bootstrap distribution of the predictor at the training inputs, a Poisson
  mixture of Gaussians (eq. 60), with ``pdf``, ``cdf``, ``ppf`` and ``interval`` (bootstrap percentile intervals);
* ``learning_curve(s_over_n)`` — Efron's bootstrap test error ε(S) (eq. 45), and its Monte-Carlo estimate (eq. 17)
  with a standard error when asked.

A fitted ``GaussianProcessRegressor`` becomes one in a line (:meth:`ReplicaBootstrapRegressor.from_gpr`)::

    boot = ReplicaBootstrapRegressor.from_gpr(gpr)
    mean, std = boot.predict(X_test, return_std=True)
    low, high = boot.bootstrap_distribution().interval(0.9)

The model is seed 000's: prior mean 0 (no ``normalize_y``), noise variance σ² = ``alpha`` plus
the noise levels of the ``WhiteKernel`` terms of a sum, prior covariance the sum of the other terms. The compute core
(:mod:`explorer.bootstrap.replica`, :mod:`explorer.gp_bootstrap.problem`, :mod:`explorer.lowrank`) does all the maths;
this adapter only validates, splits the kernel and calls it. It is not core: it imports scikit-learn (the ``sklearn``
extra), and no core module imports it.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Kernel, Sum, WhiteKernel
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from explorer.bootstrap import replica
from explorer.bootstrap.distribution import BootstrapDistribution, bootstrap_distribution
from explorer.gp_bootstrap import stages
from explorer.gp_bootstrap.problem import build_problem
from explorer.validation import s_over_n_grid

__all__ = ["MAX_EVIDENCE_ROWS", "EXPECTED_FAILED_CHECKS", "ReplicaBootstrapRegressor", "BootstrapDistribution",
           "BootstrapLearningCurve", "split_noise"]

#: Largest number of rows the hyperparameters are fitted on: maximum evidence costs O(N³) per step of the optimizer,
#: so above this many rows ``fit`` takes them from a random subsample of this size (drawn from ``random_state``; the
#: rows used are in ``evidence_rows_``). The replica theory itself always uses every row.
MAX_EVIDENCE_ROWS = 2_000

#: scikit-learn checks this estimator does not pass, with the reason (handed to ``parametrize_with_checks``).
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


def split_noise(kernel: Kernel) -> tuple[Kernel | None, float]:
    """The prior covariance and the white-noise level of a scikit-learn kernel.

    The ``WhiteKernel`` terms of a (nested) ``Sum`` are noise, their levels add up; every other term is the prior
    covariance (a ``WhiteKernel`` inside a product stays in it).

    Parameters
    ----------
    kernel : sklearn.gaussian_process.kernels.Kernel
        A kernel, e.g. ``ConstantKernel() * RBF() + WhiteKernel()``.

    Returns
    -------
    prior : Kernel or None
        The sum of the terms that are not noise (None if every term is a ``WhiteKernel``).
    noise_level : float
        The sum of the ``noise_level`` of the ``WhiteKernel`` terms (0 if there is none).

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    >>> split_noise(RBF(2.0) + WhiteKernel(0.1))
    (RBF(length_scale=2), 0.1)
    """
    if isinstance(kernel, WhiteKernel):
        return None, float(kernel.noise_level)
    if isinstance(kernel, Sum):
        (a, noise_a), (b, noise_b) = split_noise(kernel.k1), split_noise(kernel.k2)
        prior = b if a is None else a if b is None else Sum(a, b)
        return prior, noise_a + noise_b
    return kernel, 0.0


@dataclass(frozen=True)
class BootstrapLearningCurve:
    """Efron's bootstrap test error ε(S) along a grid of S/N: the theory (eq. 45) and, if asked, Monte-Carlo (eq. 17).

    Attributes
    ----------
    s_over_n : ndarray of shape (n_S,)
        The grid S/N, in the order given.
    theory : ndarray of shape (n_S,)
        ε(S) of the ADATAP theory, eq. (45).
    monte_carlo : ndarray of shape (n_S,) or None
        Efron's estimator on ``mc_samples`` refits per S (eq. 17), None if not asked.
    standard_error : ndarray of shape (n_S,) or None
        Its Monte-Carlo standard error (delta method).
    mc_samples : int or None
        Bootstrap samples per S of the Monte-Carlo.
    """

    s_over_n: np.ndarray
    theory: np.ndarray
    monte_carlo: np.ndarray | None = None
    standard_error: np.ndarray | None = None
    mc_samples: int | None = None


class ReplicaBootstrapRegressor(RegressorMixin, BaseEstimator):
    """Bootstrap averages of Gaussian-process regression by the replica/ADATAP theory of seed 000, without refits.

    ``fit`` takes the kernel's hyperparameters by maximum evidence exactly as
    :class:`~sklearn.gaussian_process.GaussianProcessRegressor` (``normalize_y=False``: the prior mean is 0, as in
    the theory) does, then solves the ADATAP equations (54)-(59) at S = ``s_over_n``·N. The model's noise variance
    is σ² = ``alpha`` + the noise levels of the ``WhiteKernel`` terms of a sum; the other terms are the prior
    covariance K.

    Parameters
    ----------
    kernel : sklearn.gaussian_process.kernels.Kernel, default=None
        Any scikit-learn kernel (sums, products, ARD length scales). None means
        ``ConstantKernel(1.0) * RBF(1.0)`` with free hyperparameters.
    alpha : float, default=1e-2
        Noise variance added to the diagonal, ≥ 0 (seed 000's σ² = 0.01); σ² must come out positive.
    s_over_n : float, default=1.0
        S/N, the mean bootstrap sample size per training row (1: the classical bootstrap; occupation numbers are
        Poisson(S/N), eq. 11).
    rank : int, default=None
        None: the dense N×N path. m: the low-rank path, K ≈ ΦΦᵀ with Nyström features on m landmark rows drawn from
        ``random_state`` (:func:`explorer.lowrank.nystrom_features`), O(N m²) time: the model is then the
        subset-of-regressors GP of those features, and ``predict`` uses them at new inputs too. The dense path holds
        K (8 N² bytes) and costs O(N³): take a rank above a few thousand rows.
    optimizer : "fmin_l_bfgs_b", callable or None, default="fmin_l_bfgs_b"
        As in ``GaussianProcessRegressor``; None keeps the kernel's hyperparameters. Above ``MAX_EVIDENCE_ROWS``
        rows the evidence is maximised on a random subsample of that many rows (``evidence_rows_``).
    n_restarts_optimizer : int, default=0
        As in ``GaussianProcessRegressor``.
    tol : float, default=1e-3
        Tolerance of the ADATAP iteration: largest relative change of Δλ(i) (the paper's 1e-3), in (0, 1).
    random_state : int, RandomState instance or None, default=None
        Seeds the optimizer's restarts, the evidence subsample and the Nyström landmarks.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel with the fitted hyperparameters (noise terms included).
    prior_kernel_ : Kernel
        Its prior-covariance part (``kernel_`` without its ``WhiteKernel`` terms).
    noise_var_ : float
        σ² = ``alpha`` + the fitted ``WhiteKernel`` noise levels.
    evidence_rows_ : ndarray of int
        The rows the hyperparameters were fitted on (all of them up to ``MAX_EVIDENCE_ROWS``; empty if
        ``optimizer`` is None).
    problem_ : RegressionProblem
        The training data, σ² and K (or the features Φ) the theory ran on.
    features_ : LowRankFeatures or None
        The Nyström features (``rank`` given), else None.
    solution_ : explorer.bootstrap.replica.ReplicaSolution
        The ADATAP site parameters at S = ``s_over_n``·N, with the convergence record.
    n_features_in_ : int
        Number of input columns.

    Raises
    ------
    explorer.bootstrap.replica.ConvergenceError
        From ``fit`` or ``learning_curve`` when the ADATAP iteration does not converge (a RuntimeError whose
        ``last`` holds the last iterate); the message says what to change.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process import GaussianProcessRegressor
    >>> from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    >>> X = np.linspace(0, 5, 30)[:, None]
    >>> y = np.sin(X[:, 0]) + 0.1 * np.random.default_rng(0).standard_normal(30)
    >>> gpr = GaussianProcessRegressor(RBF() + WhiteKernel(), random_state=0).fit(X, y)
    >>> boot = ReplicaBootstrapRegressor.from_gpr(gpr)
    >>> mean, std = boot.predict([[2.5]], return_std=True)
    >>> low, high = boot.bootstrap_distribution().interval(0.9)
    >>> bool(np.all(low < high)), low.shape
    (True, (30,))
    """

    def __init__(self, kernel=None, alpha=1e-2, s_over_n=1.0, rank=None, optimizer="fmin_l_bfgs_b",
                 n_restarts_optimizer=0, tol=1e-3, random_state=None):
        self.kernel = kernel
        self.alpha = alpha
        self.s_over_n = s_over_n
        self.rank = rank
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.tol = tol
        self.random_state = random_state

    @classmethod
    def from_gpr(cls, gpr: GaussianProcessRegressor, s_over_n: float = 1.0, **params) -> ReplicaBootstrapRegressor:
        """A fitted estimator from a fitted ``GaussianProcessRegressor``: its ``kernel_``, ``alpha`` and training data,
        hyperparameters as they are (``optimizer=None``).

        Parameters
        ----------
        gpr : GaussianProcessRegressor
            Fitted, with ``normalize_y=False`` (the theory's prior mean is 0) and one ``alpha`` for every row.
        s_over_n : float, default=1.0
            S/N, as in the constructor.
        **params
            Other constructor parameters (``rank``, ``tol``, ``random_state``); not ``kernel``, ``alpha`` or
            ``optimizer``, which come from ``gpr``.

        Returns
        -------
        ReplicaBootstrapRegressor
            Fitted on ``gpr.X_train_``, ``gpr.y_train_``.

        Raises
        ------
        TypeError
            If ``gpr`` is not a ``GaussianProcessRegressor`` or ``params`` names a parameter ``gpr`` fixes.
        sklearn.exceptions.NotFittedError
            If ``gpr`` is not fitted.
        ValueError
            If ``gpr`` normalises its targets or has one noise level per row.
        """
        if not isinstance(gpr, GaussianProcessRegressor):
            raise TypeError(f"`gpr` must be a fitted GaussianProcessRegressor, got {type(gpr).__name__}.")
        check_is_fitted(gpr, "X_train_")  # an unfitted GaussianProcessRegressor predicts from its prior
        taken = sorted({"kernel", "alpha", "optimizer"} & params.keys())
        if taken:
            raise TypeError(f"from_gpr takes the kernel, alpha and hyperparameters from `gpr`; do not pass {taken}.")
        if gpr.normalize_y:
            raise ValueError("`gpr` was fitted with normalize_y=True; the replica theory has prior mean 0. Refit it "
                             "with normalize_y=False (standardise y yourself if needed).")
        alpha = np.unique(np.asarray(gpr.alpha, dtype=float))
        if alpha.size != 1:
            raise ValueError("`gpr.alpha` holds one noise level per row; the replica theory needs one noise variance "
                             "for all rows. Use a scalar alpha or a WhiteKernel term.")
        boot = cls(kernel=gpr.kernel_, alpha=float(alpha[0]), s_over_n=s_over_n, optimizer=None, **params)
        return boot.fit(gpr.X_train_, gpr.y_train_)

    def fit(self, X: ArrayLike, y: ArrayLike) -> ReplicaBootstrapRegressor:
        """Fit the hyperparameters (maximum evidence), then solve the ADATAP equations (54)-(59) at S = (S/N)·N.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Training inputs, N ≥ 2.
        y : array_like of shape (N,)
            Training targets.

        Returns
        -------
        self : ReplicaBootstrapRegressor
            Fitted.

        Raises
        ------
        ValueError
            For an invalid parameter or input (scikit-learn's messages), or σ² = 0.
        explorer.bootstrap.replica.ConvergenceError
            If the ADATAP iteration does not converge.
        """
        kernel = self._check_params()
        X, y = validate_data(self, X, y, y_numeric=True, ensure_min_samples=2)
        rng = _generator(self.random_state)
        self.kernel_, self.evidence_rows_ = self._fit_hyperparameters(kernel, X, np.asarray(y, dtype=float), rng)
        self.prior_kernel_, self.noise_var_ = _model(self.kernel_, self.alpha)
        self.problem_ = self._problem(np.array(X, dtype=float), np.array(y, dtype=float), rng)
        self.features_ = self.problem_.features  # None for the dense model
        self.solution_ = self._solve(float(self.s_over_n) * len(y))
        return self

    def predict(self, X: ArrayLike, return_std: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Bootstrap mean (and standard deviation) of the GP predictor at inputs X, eq. (48), without refits.

        Parameters
        ----------
        X : array_like of shape (M, d)
            Inputs.
        return_std : bool, default=False
            Also return the bootstrap standard deviation.

        Returns
        -------
        mean : ndarray of shape (M,)
            E_D[f(x)] = k(x)ᵀ T γ.
        std : ndarray of shape (M,)
            √Var_D[f(x)], Var_D[f(x)] = −k(x)ᵀ T diag(λ) Tᵀ k(x) (only with ``return_std=True``).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        moments = replica.bootstrap_moments(self.solution_, self.problem_.operator, self.problem_.cross(np.asarray(X, dtype=float)))  # eq. (48)
        if return_std:
            return moments.mean, np.sqrt(np.maximum(moments.var, 0.0))
        return moments.mean

    def bootstrap_distribution(self, tail_mass: float = 1e-6) -> BootstrapDistribution:
        """The bootstrap distribution of the predictor at the N training inputs, eq. (60), without refits.

        Parameters
        ----------
        tail_mass : float, default=1e-6
            Largest Poisson tail mass P(k > k_max) left out of the mixture (the rest is renormalised).

        Returns
        -------
        BootstrapDistribution
            ``pdf``, ``cdf``, ``ppf`` and ``interval`` at every training input, in the order of the training rows.
        """
        check_is_fitted(self)
        if not (isinstance(tail_mass, numbers.Real) and 0 < tail_mass < 1):
            raise ValueError(f"`tail_mass` must be a number in (0, 1), got {tail_mass!r}.")
        return bootstrap_distribution(self.solution_, float(tail_mass))  # eq. (60)

    def learning_curve(self, s_over_n: float | ArrayLike, *, mc_samples: int | None = None,
                       random_state: int | np.random.RandomState | None = None) -> BootstrapLearningCurve:
        """Efron's bootstrap test error ε(S) at each S/N: ADATAP theory (eq. 45), and Monte-Carlo if asked (eq. 17).

        Parameters
        ----------
        s_over_n : float or sequence of float
            Bootstrap sizes S/N, positive.
        mc_samples : int, optional
            Monte-Carlo bootstrap samples per S/N (exact GP refits on the fitted model); None: theory only.
        random_state : int, RandomState instance or None, default=None
            Seed of the Monte-Carlo; None uses the estimator's ``random_state``.

        Returns
        -------
        BootstrapLearningCurve
            ``theory`` (and ``monte_carlo``, ``standard_error``), ndarrays of shape (n_S,).

        Raises
        ------
        ValueError
            If an S/N is not positive or ``mc_samples`` < 1.
        explorer.bootstrap.replica.ConvergenceError
            If ADATAP does not converge at one S/N.
        """
        check_is_fitted(self)
        grid = s_over_n_grid(s_over_n)
        solutions = self._theory(lambda: replica.replica_learning_curve(self.problem_.operator, self.problem_.y, self.problem_.noise_var, self.problem_.sample_size(grid), tol=self.tol))
        theory = np.array([stages.theory_error(sol, "square") for sol in solutions])  # eq. (45)
        if mc_samples is None:
            return BootstrapLearningCurve(grid, theory)
        seed = _seed(self.random_state if random_state is None else random_state)
        points = stages.mc_curve(self.problem_, grid, mc_samples, rng=seed).points  # eq. (17)
        return BootstrapLearningCurve(grid, theory, np.array([p.mc_mean for p in points]),
                                      np.array([p.mc_se for p in points]), int(mc_samples))

    def _check_params(self) -> Kernel:
        """The kernel to fit (the default if None), or a ValueError worded as scikit-learn's parameter checks."""
        kernel = ConstantKernel(1.0) * RBF(1.0) if self.kernel is None else self.kernel
        checks = {
            "kernel": (isinstance(kernel, Kernel),
                       "None or an instance of 'sklearn.gaussian_process.kernels.Kernel'"),
            "alpha": (_real(self.alpha) and self.alpha >= 0, "a float in the range [0, inf)"),
            "s_over_n": (_real(self.s_over_n) and 0 < self.s_over_n < np.inf, "a float in the range (0, inf)"),
            "rank": (self.rank is None or _integer(self.rank) and self.rank >= 1,
                     "None or an int in the range [1, inf)"),
            "optimizer": (self.optimizer in (None, "fmin_l_bfgs_b") or callable(self.optimizer),
                          "None, a callable or 'fmin_l_bfgs_b'"),
            "n_restarts_optimizer": (_integer(self.n_restarts_optimizer) and self.n_restarts_optimizer >= 0,
                                     "an int in the range [0, inf)"),
            "tol": (_real(self.tol) and 0 < self.tol < 1, "a float in the range (0, 1)"),
        }
        for name, (ok, expected) in checks.items():
            if not ok:
                raise ValueError(f"The '{name}' parameter of {type(self).__name__} must be {expected}. "
                                 f"Got {getattr(self, name)!r} instead.")
        _model(kernel, self.alpha)  # σ² > 0 before any work
        return kernel

    def _fit_hyperparameters(self, kernel: Kernel, X, y, rng: np.random.Generator) -> tuple[Kernel, np.ndarray]:
        """``kernel`` with the hyperparameters of largest evidence (GaussianProcessRegressor's fit, prior mean 0) on
        at most ``MAX_EVIDENCE_ROWS`` rows, and those rows; ``kernel`` as it is if ``optimizer`` is None."""
        if self.optimizer is None:
            return clone(kernel), np.arange(0)
        n = len(y)
        rows = np.arange(n) if n <= MAX_EVIDENCE_ROWS else np.sort(rng.choice(n, MAX_EVIDENCE_ROWS, replace=False))
        gpr = GaussianProcessRegressor(kernel, alpha=self.alpha, optimizer=self.optimizer,
                                       n_restarts_optimizer=self.n_restarts_optimizer, normalize_y=False,
                                       random_state=self.random_state)
        return gpr.fit(X[rows], y[rows]).kernel_, rows

    def _problem(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator):
        """The core's problem on the fitted model: K = k(X, X) (dense) or Nyström features of rank m."""
        prior = self.prior_kernel_  # a scikit-learn kernel is called k(X) and k(X, Y), as the core calls its kernels
        rank = None if self.rank is None else int(self.rank)
        return build_problem("scikit-learn", X, y, prior, self.noise_var_, rank=rank, rng=rng)

    def _solve(self, S: float) -> replica.ReplicaSolution:
        """ADATAP at S on the fitted problem (eqs. 54-59)."""
        return self._theory(lambda: replica.solve_replica(self.problem_.operator, self.problem_.y, self.problem_.noise_var, S, tol=self.tol))

    def _theory(self, solve):
        """``solve()``, with a ConvergenceError that says what to change."""
        try:
            return solve()
        except replica.ConvergenceError as err:
            raise replica.ConvergenceError(
                f"{type(self).__name__}: {err} (here max_iter is the core's default.) The ADATAP iteration converges "
                "more easily with more noise (a larger `alpha` or WhiteKernel level), a looser `tol` or a smaller "
                "`s_over_n`.", err.last) from err


def _model(kernel: Kernel, alpha: float) -> tuple[Kernel, float]:
    """The prior covariance and σ² = alpha + white-noise levels of ``kernel``, or a ValueError if one is missing."""
    prior, white = split_noise(kernel)
    if prior is None:
        raise ValueError(f"The kernel {kernel} is only WhiteKernel noise; the replica theory needs a prior "
                         "covariance. Add a term such as RBF().")
    noise_var = float(alpha) + white
    if not noise_var > 0:
        raise ValueError(f"The noise variance σ² = alpha + WhiteKernel levels must be positive, got {noise_var}. "
                         "Set alpha > 0 or add a WhiteKernel term to the kernel.")
    return prior, noise_var


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and bool(np.isfinite(value))


def _integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _generator(random_state) -> np.random.Generator:
    """A numpy Generator from a scikit-learn ``random_state`` (int, RandomState or None)."""
    return np.random.default_rng(_seed(random_state))


def _seed(random_state) -> int | None:
    """An int seed from a scikit-learn ``random_state``: the int itself, one drawn from a RandomState, or None."""
    if random_state is None or _integer(random_state):
        return random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
