r"""What each fitted scikit-learn regressor the front door takes is in the replica theory: a prior covariance (a
kernel, or explicit features φ with k(x, x') = φ(x)ᵀφ(x')), a noise variance σ², and an affine map of the targets.

Each is the posterior mean of a Gaussian process ([MO03] eq. (50): square loss, noise σ²), and a refit with
``sample_weight`` s is the same GP with noise σ²/s_i at row i — what a bootstrap sample with s_i copies of row i is
([MO03] eqs. (10)-(11)):

* ``Ridge(alpha)``: min Σ s_i (y_i − xᵢᵀβ − b)² + alpha‖β‖², so φ(x) = x, σ² = ``alpha``. An intercept
  (``fit_intercept=True``) is unpenalised: a constant feature √c whose prior variance c = :data:`INTERCEPT_PRIOR`
  ·alpha/N makes the intercept's penalty alpha/c a 10⁻⁸ fraction of its data term N (the tests show that ten times
  more c moves nothing beyond 1e-6 relative). Inputs and targets are centred on their training means first (a flat
  prior on the constant makes that change nothing), so the intercept the theory sees stays near 0.
* ``KernelRidge(alpha, kernel)``: k = the fitted kernel (``gamma``, ``degree``, ``coef0``, ``kernel_params`` as
  the estimator has them, evaluated by scikit-learn's ``pairwise_kernels`` as ``KernelRidge`` does), σ² = ``alpha``,
  no intercept. A kernel that is not positive semi-definite on the training inputs (``sigmoid`` often is not) is a
  ValueError: it is no covariance.
* ``Pipeline(..., Ridge)``: φ(x) = the fitted transformers' output, **held fixed**: the bootstrap is over the rows
  given to the final ``Ridge``; the transformers (a scaler's means, Nyström landmarks) are not refitted per sample.
* ``GaussianProcessRegressor``: its fitted ``kernel_`` without ``WhiteKernel`` terms, σ² = ``alpha`` + their
  levels; with ``normalize_y=True`` the theory runs on (y − mean)/sd and its answers are mapped back (the mean and
  sd of the training targets held fixed, as the fitted model holds them).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from explorer.sklearn.gp_kernels import gp_model
from explorer.validation import noise_variance

__all__ = ["SUPPORTED", "INTERCEPT_PRIOR", "PSD_RTOL", "TheoryModel", "theory_model", "check_kind", "check_supported",
           "check_covariance"]

#: What ``from_estimator`` takes, for the TypeError of anything else.
SUPPORTED = ("Ridge, KernelRidge, a Pipeline whose last step is Ridge (its transformers held fixed), or "
             "GaussianProcessRegressor")

#: The intercept's prior variance is c = INTERCEPT_PRIOR·alpha/N: its penalty alpha/c is 1/INTERCEPT_PRIOR of the
#: data term N of a flat prior.
INTERCEPT_PRIOR = 1e8

#: A kernel matrix whose smallest eigenvalue is below −PSD_RTOL times its largest is not a covariance.
PSD_RTOL = 1e-8

#: Kernels of ``KernelRidge`` that are positive semi-definite whatever their parameters (others are checked).
_PSD_KERNELS = ("linear", "rbf", "laplacian", "chi2", "cosine")


@dataclass(frozen=True)
class TheoryModel:
    """A fitted scikit-learn regressor as the replica theory sees it.

    Attributes
    ----------
    description : str
        What the estimator is in the theory, for messages and ``repr``.
    noise_var : float
        σ² > 0.
    kernel : callable or None
        k(A, B=None) on the estimator's inputs, for a kernel model (None for a feature model).
    features : callable or None
        φ(A) of shape (M, m), for an explicit-feature model (None for a kernel model).
    y_shift, y_scale : float
        The theory runs on (y − y_shift)/y_scale; its means map back as μ·y_scale + y_shift.
    training_features : ndarray of shape (N, m) or None
        φ of the training inputs the model was built on (``features`` of them, computed once), for a feature model.
    """

    description: str
    noise_var: float
    kernel: Callable | None = field(default=None, repr=False)
    features: Callable | None = field(default=None, repr=False)
    y_shift: float = 0.0
    y_scale: float = 1.0
    training_features: np.ndarray | None = field(default=None, repr=False, compare=False)

    def targets(self, y: np.ndarray) -> np.ndarray:
        """The targets the theory runs on, (y − y_shift)/y_scale."""
        return (y - self.y_shift) / self.y_scale


def check_kind(est) -> None:
    """A TypeError naming what is supported if ``est`` is of another kind."""
    final = est.steps[-1][1] if isinstance(est, Pipeline) and est.steps else est
    if isinstance(est, Pipeline) and not isinstance(final, Ridge):
        raise TypeError(f"The pipeline ends in {type(final).__name__}; the replica bootstrap takes {SUPPORTED}.")
    if not isinstance(est, (Ridge, KernelRidge, Pipeline, GaussianProcessRegressor)):
        raise TypeError(f"{type(est).__name__} is not supported: the replica bootstrap takes {SUPPORTED}.")


def check_supported(est) -> None:
    """A TypeError naming what is supported if ``est`` is of another kind; NotFittedError if it is not fitted."""
    check_kind(est)
    # an unfitted GaussianProcessRegressor predicts from its prior, so scikit-learn calls it fitted
    check_is_fitted(est, "X_train_" if isinstance(est, GaussianProcessRegressor) else None)


def theory_model(est, X: np.ndarray, y: np.ndarray) -> TheoryModel:
    """The :class:`TheoryModel` of a fitted supported estimator, on its training data X, y.

    Raises
    ------
    TypeError
        If ``est`` is not of a supported kind (:data:`SUPPORTED`).
    sklearn.exceptions.NotFittedError
        If it is not fitted.
    ValueError
        If its noise variance is not positive, it has one per target or row, or its kernel is no covariance.
    """
    check_supported(est)
    if isinstance(est, Pipeline):
        transformers = est[:-1]
        return _ridge(est[-1], lambda A: transformers.transform(A), X, "Pipeline")
    if isinstance(est, Ridge):
        return _ridge(est, lambda A: np.asarray(A, dtype=float), X, "Ridge")
    if isinstance(est, KernelRidge):
        return _kernel_ridge(est, X)
    return _gpr(est, y)


def _scalar_alpha(est) -> float:
    """The estimator's ``alpha`` as σ², or a ValueError for one per target or per row."""
    alpha = np.asarray(est.alpha, dtype=float)
    if alpha.size != 1:
        raise ValueError(f"{type(est).__name__} has {alpha.size} values of alpha (one per target or row); the "
                         "replica theory needs one noise variance σ² for all rows.")
    return noise_variance(float(alpha.ravel()[0]))


def _ridge(ridge: Ridge, transform: Callable, X: np.ndarray, name: str) -> TheoryModel:
    """φ(x) = transform(x), centred with a constant feature √c if the intercept is fitted; σ² = alpha."""
    if getattr(ridge, "positive", False):
        raise ValueError("Ridge(positive=True) constrains the coefficients, which no Gaussian prior does; the replica "
                         "theory needs positive=False.")
    noise_var = _scalar_alpha(ridge)
    if np.ndim(ridge.coef_) != 1:
        raise ValueError(f"The {name} was fitted on several targets; the replica theory takes one target.")
    what = f"{name}: linear kernel φ(x)ᵀφ(x') of {'the transformed' if name == 'Pipeline' else 'the'} inputs, σ² = alpha"
    transformed = np.asarray(transform(X), dtype=float)  # the training inputs' features, transformed once
    if not ridge.fit_intercept:
        return TheoryModel(what, noise_var, features=lambda A: np.asarray(transform(A), dtype=float),
                           training_features=transformed)
    centre = transformed.mean(axis=0)
    root_c = np.sqrt(INTERCEPT_PRIOR * noise_var / X.shape[0])

    def centred(phi):
        return np.hstack([phi - centre, np.full((phi.shape[0], 1), root_c)])

    return TheoryModel(what + ", flat prior on the intercept", noise_var,
                       features=lambda A: centred(np.asarray(transform(A), dtype=float)),
                       training_features=centred(transformed))


def _kernel_ridge(est: KernelRidge, X: np.ndarray) -> TheoryModel:
    """k = the fitted kernel of ``est`` (as ``KernelRidge`` evaluates it), σ² = alpha."""
    if est.kernel == "precomputed":
        raise ValueError("KernelRidge(kernel='precomputed') has no kernel to evaluate at new inputs; pass the kernel "
                         "itself (a name, a callable or a scikit-learn kernel object).")
    noise_var = _scalar_alpha(est)
    params = (est.kernel_params or {}) if callable(est.kernel) else \
        {"gamma": est.gamma, "degree": est.degree, "coef0": est.coef0}

    def kernel(A, B=None):
        return pairwise_kernels(A, B, metric=est.kernel, filter_params=True, **params)

    name = est.kernel if isinstance(est.kernel, str) else type(est.kernel).__name__
    sure = est.kernel in _PSD_KERNELS or (est.kernel in ("poly", "polynomial") and est.coef0 >= 0
                                          and (est.gamma is None or est.gamma > 0))
    if not sure:
        check_covariance(kernel(X), f"KernelRidge(kernel={name!r})")
    return TheoryModel(f"KernelRidge: kernel {name}, σ² = alpha", noise_var, kernel=kernel)


def check_covariance(K: np.ndarray, what: str) -> None:
    """A ValueError if the kernel matrix K is not positive semi-definite (smallest eigenvalue below −PSD_RTOL·max)."""
    omega = linalg.eigvalsh(K)
    if omega[0] < -PSD_RTOL * max(abs(omega[-1]), np.finfo(float).tiny):
        raise ValueError(f"The kernel matrix of {what} on the training inputs is not positive semi-definite "
                         f"(eigenvalues from {omega[0]:.3g} to {omega[-1]:.3g}), so it is no prior covariance and the "
                         "replica theory cannot take it. Choose parameters that make it one, or another kernel.")


def _gpr(gpr: GaussianProcessRegressor, y: np.ndarray) -> TheoryModel:
    """The fitted ``kernel_`` without its WhiteKernel terms, σ² = alpha + their levels; targets standardised as the
    estimator standardises them (``normalize_y=True``: mean and standard deviation of the training targets)."""
    alpha = np.unique(np.asarray(gpr.alpha, dtype=float))
    if alpha.size != 1:
        raise ValueError("`gpr.alpha` holds one noise level per row; the replica theory needs one noise variance "
                         "for all rows. Use a scalar alpha or a WhiteKernel term.")
    prior, noise_var = gp_model(gpr.kernel_, float(alpha[0]))
    shift, scale = 0.0, 1.0
    if gpr.normalize_y:
        shift, scale = float(np.mean(y)), float(np.std(y))
        scale = scale if scale >= 10 * np.finfo(float).eps else 1.0  # as scikit-learn: a constant y → 1
    what = f"GaussianProcessRegressor: kernel {prior}, σ² = {noise_var:.4g}" + \
        (" on standardised targets" if gpr.normalize_y else "")
    return TheoryModel(what, noise_var, kernel=prior, y_shift=shift, y_scale=scale)
