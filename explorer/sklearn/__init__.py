"""A scikit-learn front door to the replica/ADATAP bootstrap of [MO03], without refits.

:class:`ReplicaBootstrapRegressor` is a scikit-learn regressor. It fits a Gaussian process itself (``fit``: the
kernel's hyperparameters by maximum evidence), or takes a fitted ``Ridge``, ``KernelRidge``, ``Pipeline`` ending in
``Ridge`` or ``GaussianProcessRegressor`` as it is (:meth:`ReplicaBootstrapRegressor.from_estimator`,
:meth:`ReplicaBootstrapRegressor.from_gpr`): each is the posterior mean of a Gaussian process, and a refit with
``sample_weight`` is what a bootstrap sample is to it. From one solve of the ADATAP equations (54)-(59), with no model
refitted:

* ``predict(X, return_std=True)`` — the bootstrap mean and standard deviation of the predictor at any input (eq. 48);
* ``predict_interval(X, confidence, method)`` — bootstrap percentile intervals (eqs. 48, 60), or
  jackknife+-after-bootstrap prediction intervals from the theory's out-of-bag means
  (:mod:`explorer.bootstrap.out_of_bag`);
* ``bootstrap_distribution()`` — the bootstrap distribution of the predictor at the training inputs (eq. 60);
* ``learning_curve(s_over_n)`` — Efron's bootstrap test error ε(S) (eq. 45), and its Monte-Carlo estimate (eq. 17).

Modules: :mod:`~explorer.sklearn.regressor` (the estimator), :mod:`~explorer.sklearn.estimators` (what each
scikit-learn regressor is in the theory), :mod:`~explorer.sklearn.intervals` (the two kinds of interval),
:mod:`~explorer.sklearn.kernels` (prior and noise of a Gaussian-process kernel), :mod:`~explorer.sklearn.results`.
The compute core does the maths; this adapter validates, maps the estimator and calls it. It is not core: it
imports scikit-learn (the ``sklearn`` extra), and no core module imports it.
"""
from explorer.bootstrap.distribution import BootstrapDistribution
from explorer.sklearn.estimators import SUPPORTED, TheoryModel
from explorer.sklearn.kernels import split_noise
from explorer.sklearn.regressor import EXPECTED_FAILED_CHECKS, MAX_EVIDENCE_ROWS, ReplicaBootstrapRegressor
from explorer.sklearn.results import BootstrapLearningCurve

__all__ = ["MAX_EVIDENCE_ROWS", "EXPECTED_FAILED_CHECKS", "SUPPORTED", "ReplicaBootstrapRegressor",
           "BootstrapDistribution", "BootstrapLearningCurve", "TheoryModel", "split_noise"]
