"""The scikit-learn estimator of the replica bootstrap: :class:`ReplicaBootstrapRegressor` ([MO03] §4-5, no refits)."""
from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Kernel
from sklearn.utils.validation import check_is_fitted, validate_data

from explorer.bootstrap import replica, replica_means
from explorer.bootstrap.distribution import BootstrapDistribution, bootstrap_distribution
from explorer.bootstrap.out_of_bag import OutOfBagMeans, out_of_bag_means
from explorer.gp_bootstrap import stages
from explorer.sklearn import intervals, problems
from explorer.sklearn.estimators import check_kind, check_supported, theory_model
from explorer.sklearn.gp_kernels import gp_model
from explorer.sklearn.results import BootstrapLearningCurve, generator, is_integer, is_real, seed_of
from explorer.validation import s_over_n_grid

__all__ = ["MAX_EVIDENCE_ROWS", "EXPECTED_FAILED_CHECKS", "ReplicaBootstrapRegressor"]

#: Largest number of rows the hyperparameters are fitted on: maximum evidence costs O(N³) per step of the optimizer,
#: so above this many rows ``fit`` takes them from a random subsample of this size (drawn from ``random_state``; the
#: rows used are in ``evidence_rows_``). The replica theory itself always uses every row.
MAX_EVIDENCE_ROWS = 2_000

#: scikit-learn checks this estimator does not pass, with the reason (handed to ``parametrize_with_checks``).
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


class ReplicaBootstrapRegressor(RegressorMixin, BaseEstimator):
    """Bootstrap averages of kernel and linear regression by the replica/ADATAP theory of [MO03], without refits.

    Without ``estimator``, ``fit`` takes the kernel's hyperparameters by maximum evidence exactly as
    :class:`~sklearn.gaussian_process.GaussianProcessRegressor` (``normalize_y=False``: the prior mean is 0, as in
    the theory) does, then solves the ADATAP equations at S = ``s_over_n``·N for the bootstrap means (eqs. (54)-(56),
    (34), (58); ``means_``); the variances (eqs. (57), (59); ``solution_``) are solved the first time something needs
    them (``predict(return_std=True)``, percentile intervals, ``bootstrap_distribution``), never for ``predict`` or
    jackknife+-after-bootstrap intervals, which need the means only. The model's noise variance
    is σ² = ``alpha`` + the noise levels of the ``WhiteKernel`` terms of a sum; the other terms are the prior
    covariance K.

    With ``estimator`` (a ``Ridge``, ``KernelRidge``, ``Pipeline`` ending in ``Ridge`` or
    ``GaussianProcessRegressor``; :meth:`from_estimator`), the model is that estimator's, mapped onto a Gaussian
    process by :func:`explorer.sklearn.estimators.theory_model` (σ² = its ``alpha``; ``kernel``, ``alpha`` and
    ``optimizer`` are then not used). The bootstrap is that of refitting it with ``sample_weight`` = the occupation
    numbers: a pipeline's transformers are **held fixed** as fitted (a scaler's means, Nyström landmarks), so the
    answers are those of resampling the rows its final ``Ridge`` sees, not of refitting the transformers per sample.

    Parameters
    ----------
    kernel : sklearn.gaussian_process.kernels.Kernel, default=None
        Any scikit-learn kernel (sums, products, ARD length scales). None means
        ``ConstantKernel(1.0) * RBF(1.0)`` with free hyperparameters.
    alpha : float, default=1e-2
        Noise variance added to the diagonal, ≥ 0 ([MO03]'s σ² = 0.01); σ² must come out positive.
    s_over_n : float, default=1.0
        S/N, the mean bootstrap sample size per training row (1: the classical bootstrap; occupation numbers are
        Poisson(S/N), eq. 11).
    rank : int, default=None
        None: the dense N×N path (an explicit-feature model with m ≤ min(N, 4096) features runs on its features
        whatever ``rank``). m: the low-rank path, K ≈ ΦΦᵀ with Nyström features on m landmark rows drawn from
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
    estimator : estimator or None, default=None
        A supported scikit-learn regressor (see above). Fitted, it is used as it is; unfitted (e.g. after
        ``clone``), ``fit`` fits a copy of it on X, y first.

    Attributes
    ----------
    kernel_ : Kernel or None
        The kernel with the fitted hyperparameters (noise terms included); None for an estimator that has none.
    prior_kernel_ : Kernel or None
        Its prior-covariance part (``kernel_`` without its ``WhiteKernel`` terms).
    noise_var_ : float
        σ² = ``alpha`` + the fitted ``WhiteKernel`` noise levels (the estimator's ``alpha`` with ``estimator``).
    evidence_rows_ : ndarray of int
        The rows the hyperparameters were fitted on (all of them up to ``MAX_EVIDENCE_ROWS``; empty if
        ``optimizer`` is None or with ``estimator``).
    estimator_ : estimator or None
        The fitted estimator the model came from (None without ``estimator``).
    model_ : TheoryModel or None
        What ``estimator_`` is in the theory (kernel or features, σ², the targets' shift and scale).
    problem_ : RegressionProblem
        The training data, σ² and K (or the features Φ) the theory ran on (targets as the theory sees them).
    features_ : LowRankFeatures or None
        The features of a low-rank model, else None.
    means_ : explorer.bootstrap.replica_means.ReplicaMeans
        The first moments of the ADATAP solution at S = ``s_over_n``·N (Δλ, Δλ_c, γ, γ_c, m; eqs. (54)-(56), (34),
        (58)), with the convergence record: what ``fit`` solves.
    solution_ : explorer.bootstrap.replica.ReplicaSolution
        The full ADATAP site parameters at S = ``s_over_n``·N, λ and λ_c of eqs. (57), (59) included, with the
        convergence record; completed from ``means_`` (:func:`~explorer.bootstrap.replica_means.solve_variances`, no new
        iteration) the first time it is used, then kept.
    n_features_in_ : int
        Number of input columns.

    Raises
    ------
    explorer.bootstrap.replica.ConvergenceError
        From ``fit`` or ``learning_curve`` when the ADATAP iteration does not converge, or from the first use of
        ``solution_`` when eq. (57) cannot be solved (a RuntimeError whose ``last`` holds the last iterate); the
        message says what to change.

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
                 n_restarts_optimizer=0, tol=1e-3, random_state=None, estimator=None):
        self.kernel = kernel
        self.alpha = alpha
        self.s_over_n = s_over_n
        self.rank = rank
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.tol = tol
        self.random_state = random_state
        self.estimator = estimator

    @classmethod
    def from_gpr(cls, gpr: GaussianProcessRegressor, s_over_n: float = 1.0, **params) -> ReplicaBootstrapRegressor:
        """A fitted estimator from a fitted ``GaussianProcessRegressor``: its ``kernel_``, ``alpha`` and training data,
        hyperparameters as they are (``optimizer=None``).

        Parameters
        ----------
        gpr : GaussianProcessRegressor
            Fitted, with ``normalize_y=False`` (for ``normalize_y=True`` use :meth:`from_estimator` with the
            training targets) and one ``alpha`` for every row.
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
        _refuse(params, "from_gpr", "`gpr`")
        if gpr.normalize_y:
            raise ValueError("from_gpr cannot take a GaussianProcessRegressor fitted with normalize_y=True, whose "
                             "y_train_ holds only the standardised targets: use "
                             "ReplicaBootstrapRegressor.from_estimator(gpr, X, y) with the X, y it was fitted on.")
        alpha = np.unique(np.asarray(gpr.alpha, dtype=float))
        if alpha.size != 1:
            raise ValueError("`gpr.alpha` holds one noise level per row; the replica theory needs one noise variance "
                             "for all rows. Use a scalar alpha or a WhiteKernel term.")
        boot = cls(kernel=gpr.kernel_, alpha=float(alpha[0]), s_over_n=s_over_n, optimizer=None, **params)
        return boot.fit(gpr.X_train_, gpr.y_train_)

    @classmethod
    def from_estimator(cls, est, X: ArrayLike, y: ArrayLike, s_over_n: float = 1.0,
                       **params) -> ReplicaBootstrapRegressor:
        """A fitted estimator from a fitted scikit-learn regressor and the data it was fitted on, without refits.

        ``Ridge`` (σ² = ``alpha``, linear kernel, an intercept with a flat prior), ``KernelRidge`` (its kernel,
        σ² = ``alpha``), a ``Pipeline`` ending in ``Ridge`` (the features its fitted transformers give, **held
        fixed**: the bootstrap resamples the rows the ``Ridge`` sees, the transformers are not refitted) and
        ``GaussianProcessRegressor`` (with ``normalize_y=True`` the theory runs on the standardised targets and its
        answers are mapped back); see :mod:`explorer.sklearn.estimators` for the mapping.

        Parameters
        ----------
        est : estimator
            Fitted, of a supported kind.
        X : array_like of shape (N, d)
            The inputs ``est`` was fitted on.
        y : array_like of shape (N,)
            The targets it was fitted on.
        s_over_n : float, default=1.0
            S/N, as in the constructor.
        **params
            Other constructor parameters (``rank``, ``tol``, ``random_state``); not ``kernel``, ``alpha``,
            ``optimizer`` or ``estimator``.

        Returns
        -------
        ReplicaBootstrapRegressor
            Fitted on X, y with the model of ``est``.

        Raises
        ------
        TypeError
            If ``est`` is of another kind (the message names the supported ones), or ``params`` names a parameter
            ``est`` fixes.
        sklearn.exceptions.NotFittedError
            If ``est`` is not fitted.
        ValueError
            For X, y scikit-learn would refuse (its wordings: wrong number of features, NaN, ...), a noise variance
            that is not positive, or a kernel that is not positive semi-definite.
        """
        check_supported(est)
        _refuse(params, "from_estimator", "`est`", extra={"estimator"})
        return cls(s_over_n=s_over_n, estimator=est, **params).fit(X, y)

    def fit(self, X: ArrayLike, y: ArrayLike) -> ReplicaBootstrapRegressor:
        """Take the model (maximum evidence, or ``estimator``'s), then solve the ADATAP equations at S = (S/N)·N for
        the bootstrap means (eqs. (54)-(56), (34), (58); the variances of eqs. (57), (59) wait until they are used).

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
        X, y = np.array(X, dtype=float), np.array(y, dtype=float)
        rng = generator(self.random_state)
        self._out_of_bag, self._solution = None, None
        if self.estimator is None:
            self.estimator_, self.model_ = None, None
            self.kernel_, self.evidence_rows_ = self._fit_hyperparameters(kernel, X, y, rng)
            self.prior_kernel_, self.noise_var_ = gp_model(self.kernel_, self.alpha)
            self.problem_ = problems.kernel_problem(X, y, self.prior_kernel_, self.noise_var_, self._rank(), rng)
        else:
            self.estimator_ = self._fitted_estimator(X, y)
            self.model_ = theory_model(self.estimator_, X, y)
            self.kernel_ = getattr(self.estimator_, "kernel_", None)
            self.prior_kernel_ = self.model_.kernel if isinstance(self.model_.kernel, Kernel) else None
            self.noise_var_, self.evidence_rows_ = self.model_.noise_var, np.arange(0)
            self.problem_ = problems.model_problem(X, self.model_.targets(y), self.model_, self._rank(), rng)
        self.features_ = self.problem_.features  # None for the dense model
        self.means_ = self._solve(float(self.s_over_n) * len(y))
        return self

    @property
    def solution_(self) -> replica.ReplicaSolution:
        """The full ADATAP solution (λ, λ_c of eqs. (57), (59) included), completed from ``means_`` on first use."""
        if "means_" not in vars(self):
            raise AttributeError(f"This {type(self).__name__} instance is not fitted yet: it has no solution_.")
        if self._solution is None:
            means, operator = self.means_, self.problem_.operator
            self._solution = self._theory(lambda: replica_means.solve_variances(means, operator))
        return self._solution

    def predict(self, X: ArrayLike, return_std: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Bootstrap mean (and standard deviation) of the predictor at inputs X, eq. (48), without refits.

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
        shift, scale = self._target_map()
        if return_std:
            moments = replica.bootstrap_moments(self.solution_, self.problem_.operator, self._cross(X))  # eq. (48)
            return moments.mean * scale + shift, np.sqrt(np.maximum(moments.var, 0.0)) * scale
        return self._bootstrap_mean(X) * scale + shift

    def predict_interval(self, X: ArrayLike, confidence: float = 0.9, method: str = "percentile"
                         ) -> tuple[np.ndarray, np.ndarray]:
        """Bootstrap percentile or jackknife+-after-bootstrap (J+aB) intervals at X, without refits.

        Parameters
        ----------
        X : array_like of shape (M, d)
            Inputs.
        confidence : float, default=0.9
            The mass inside the interval, in (0, 1).
        method : {"percentile", "jackknife+-after-bootstrap"}, default="percentile"
            ``"percentile"``: the (1 ∓ confidence)/2 quantiles of the bootstrap distribution of the predictor (an
            interval for the model's prediction) — eq. (60) at an input equal to a training input, else the Gaussian
            of eq. (48). ``"jackknife+-after-bootstrap"``: a prediction interval for a new target, MAPIE's J+aB
            (absolute residuals, mean aggregation, "plus") with the out-of-bag means μ₋ᵢ(x), μ₋ᵢ(xᵢ) of the theory
            (:mod:`explorer.bootstrap.out_of_bag`; ``docs/derivations/out_of_bag.md``).

        Returns
        -------
        low, high : ndarray of shape (M,)
            The bounds.

        Raises
        ------
        ValueError
            If ``confidence`` is not in (0, 1), ``method`` is unknown, X is not what ``fit`` saw (scikit-learn's
            wordings), or there are too few training rows for J+aB at this confidence.
        """
        check_is_fitted(self)
        confidence = intervals.check_confidence(confidence)
        if method not in intervals.METHODS:
            raise ValueError(f"The 'method' parameter of predict_interval must be a str among "
                             f"{set(intervals.METHODS)}. Got {method!r} instead.")
        X = np.asarray(validate_data(self, X, reset=False), dtype=float)
        shift, scale = self._target_map()
        if method == "percentile":
            rows = intervals.training_rows(X, self.problem_.X)
            low, high = intervals.percentile_interval(
                self.solution_, self.problem_.operator, self._cross(X), rows,
                bootstrap_distribution(self.solution_) if np.any(rows >= 0) else None, confidence)
        else:
            low, high = intervals.jackknife_plus_interval(self.out_of_bag_means(), lambda r: self._cross(X[r]),
                                                          X.shape[0], confidence)
        return low * scale + shift, high * scale + shift

    def out_of_bag_means(self) -> OutOfBagMeans:
        """The theory's out-of-bag means (:func:`explorer.bootstrap.out_of_bag.out_of_bag_means`), on the scale the
        theory runs on (see ``model_``); computed once per fit, from the means alone (``means_``, or the same numbers
        of ``solution_`` if it was already solved)."""
        check_is_fitted(self)
        if getattr(self, "_out_of_bag", None) is None:
            self._out_of_bag = out_of_bag_means(self._first_moments(), self.problem_.operator)
        return self._out_of_bag

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
        dist = bootstrap_distribution(self.solution_, float(tail_mass))  # eq. (60)
        shift, scale = self._target_map()
        if (shift, scale) == (0.0, 1.0):
            return dist
        return BootstrapDistribution(dist.weights, dist.means * scale + shift, dist.sds * scale, dist.s_over_n)

    def learning_curve(self, s_over_n: float | ArrayLike, *, mc_samples: int | None = None,
                       random_state: int | np.random.RandomState | None = None) -> BootstrapLearningCurve:
        """Efron's bootstrap test error ε(S) at each S/N: ADATAP theory (eq. 45), and Monte-Carlo if asked (eq. 17).

        Parameters
        ----------
        s_over_n : float or sequence of float
            Bootstrap sizes S/N, positive.
        mc_samples : int, optional
            Monte-Carlo bootstrap samples per S/N (exact refits of the model); None: theory only.
        random_state : int, RandomState instance or None, default=None
            Seed of the Monte-Carlo; None uses the estimator's ``random_state``.

        Returns
        -------
        BootstrapLearningCurve
            ``theory`` (and ``monte_carlo``, ``standard_error``), ndarrays of shape (n_S,), in the targets' units².

        Raises
        ------
        ValueError
            If an S/N is not positive or ``mc_samples`` < 1.
        explorer.bootstrap.replica.ConvergenceError
            If ADATAP does not converge at one S/N.
        """
        check_is_fitted(self)
        grid = s_over_n_grid(s_over_n)
        problem = self.problem_
        solutions = self._theory(lambda: replica.replica_learning_curve(
            problem.operator, problem.y, problem.noise_var, problem.sample_size(grid), tol=self.tol))
        units = self._target_map()[1] ** 2
        theory = np.array([stages.theory_error(sol, "square") for sol in solutions]) * units  # eq. (45)
        if mc_samples is None:
            return BootstrapLearningCurve(grid, theory)
        seed = seed_of(self.random_state if random_state is None else random_state)
        points = stages.mc_curve(problem, grid, mc_samples, rng=seed).points  # eq. (17)
        return BootstrapLearningCurve(grid, theory, np.array([p.mc_mean for p in points]) * units,
                                      np.array([p.mc_se for p in points]) * units, int(mc_samples))

    def _check_params(self) -> Kernel:
        """The kernel to fit (the default if None), or a ValueError worded as scikit-learn's parameter checks."""
        kernel = ConstantKernel(1.0) * RBF(1.0) if self.kernel is None else self.kernel
        checks = {
            "kernel": (isinstance(kernel, Kernel),
                       "None or an instance of 'sklearn.gaussian_process.kernels.Kernel'"),
            "alpha": (is_real(self.alpha) and self.alpha >= 0, "a float in the range [0, inf)"),
            "s_over_n": (is_real(self.s_over_n) and 0 < self.s_over_n < np.inf, "a float in the range (0, inf)"),
            "rank": (self.rank is None or is_integer(self.rank) and self.rank >= 1,
                     "None or an int in the range [1, inf)"),
            "optimizer": (self.optimizer in (None, "fmin_l_bfgs_b") or callable(self.optimizer),
                          "None, a callable or 'fmin_l_bfgs_b'"),
            "n_restarts_optimizer": (is_integer(self.n_restarts_optimizer) and self.n_restarts_optimizer >= 0,
                                     "an int in the range [0, inf)"),
            "tol": (is_real(self.tol) and 0 < self.tol < 1, "a float in the range (0, 1)"),
        }
        for name, (ok, expected) in checks.items():
            if not ok:
                raise ValueError(f"The '{name}' parameter of {type(self).__name__} must be {expected}. "
                                 f"Got {getattr(self, name)!r} instead.")
        if self.estimator is None:
            gp_model(kernel, self.alpha)  # σ² > 0 before any work
        else:
            check_kind(self.estimator)
        return kernel

    def _fitted_estimator(self, X: np.ndarray, y: np.ndarray):
        """``estimator`` itself if fitted (with scikit-learn's check of X against it), else a fitted copy."""
        est = self.estimator
        try:
            check_is_fitted(est)
        except NotFittedError:  # fit a copy, as a meta-estimator does after clone()
            return clone(est).fit(X, y)
        expected = getattr(est, "n_features_in_", None)
        if expected is not None and X.shape[1] != expected:
            raise ValueError(f"X has {X.shape[1]} features, but {type(est).__name__} is expecting {expected} "
                             "features as input.")
        return est

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

    def _rank(self) -> int | None:
        return None if self.rank is None else int(self.rank)

    def _cross(self, X: np.ndarray) -> np.ndarray:
        """The cross terms of eq. (48) at X: φ(x) of given features, else what the problem gives."""
        if self.features_ is not None and self.features_.method == "given":
            return self.model_.features(X)
        return self.problem_.cross(np.asarray(X, dtype=float))

    def _target_map(self) -> tuple[float, float]:
        """(shift, scale): a theory's mean μ is μ·scale + shift in the targets' units."""
        return (0.0, 1.0) if self.model_ is None else (self.model_.y_shift, self.model_.y_scale)

    def _solve(self, S: float) -> replica_means.ReplicaMeans:
        """ADATAP at S on the fitted problem, for the means (eqs. 54-56, 34, 58)."""
        problem = self.problem_
        return self._theory(lambda: replica_means.solve_replica_means(problem.operator, problem.y, problem.noise_var, S,
                                                                tol=self.tol))

    def _first_moments(self) -> replica.ReplicaSolution | replica_means.ReplicaMeans:
        """The full solution if it was solved already (its means are those of ``means_``), else ``means_``."""
        return self.means_ if self._solution is None else self._solution

    def _bootstrap_mean(self, X: np.ndarray) -> np.ndarray:
        """E_D[f(x)] = k(x)ᵀ T γ at X (eq. 48), on the theory's scale; it needs no λ, so none is solved for it."""
        means = self._first_moments()
        operator = self.problem_.operator.with_jitter(means.jitter)
        return operator.test_moments(means.dl, means.gam, np.zeros(means.n), self._cross(X))[0]

    def _theory(self, solve):
        """``solve()``, with a ConvergenceError that says what to change and whose ``last`` is a full solution (the
        last iterate of the means completed with its variances, as ``solve_replica`` would give it) where it can be."""
        try:
            return solve()
        except replica.ConvergenceError as err:
            raise replica.ConvergenceError(
                f"{type(self).__name__}: {err} (here max_iter is the core's default.) The ADATAP iteration converges "
                "more easily with more noise (a larger `alpha` or WhiteKernel level), a looser `tol` or a smaller "
                "`s_over_n`.", self._completed(err.last)) from err

    def _completed(self, last):
        """``last`` with its variances (:func:`~explorer.bootstrap.replica_means.solve_variances`) if it is a ReplicaMeans
        they can be solved for, else as it is."""
        if not isinstance(last, replica_means.ReplicaMeans):
            return last
        try:
            return replica_means.solve_variances(last, self.problem_.operator)
        except replica.ConvergenceError as err:
            return err.last
        except (FloatingPointError, np.linalg.LinAlgError, ValueError):
            return last


def _refuse(params: dict, method: str, source: str, extra: set | None = None) -> None:
    """A TypeError if ``params`` names a constructor parameter the estimator or GP fixes."""
    taken = sorted(({"kernel", "alpha", "optimizer"} | (extra or set())) & params.keys())
    if taken:
        raise TypeError(f"{method} takes the kernel, alpha and hyperparameters from {source}; do not pass {taken}.")

