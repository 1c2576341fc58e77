"""The hyperparameters of an upload: the maximum of the GP evidence, checked against scikit-learn's
GaussianProcessRegressor (same kernel, its own optimiser) and against a brute-force grid around the optimum."""

import itertools

import numpy as np
import pytest

from explorer import regression
from explorer.gp_bootstrap.evidence import EvidenceFit, maximum_evidence
from explorer.kernels import SquaredExponential
from explorer.progress import Cancelled, Hooks


@pytest.fixture
def data(rng):
    X = rng.uniform(-3, 3, size=(50, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.standard_normal(50)
    return X, y


def _evidence(X, y, ell, s2, noise):
    return regression.log_evidence(SquaredExponential(ell, s2), X, y, noise)


def test_the_fit_is_a_frozen_result_whose_value_is_the_evidence_at_its_point(data):
    X, y = data
    fit = maximum_evidence(X, y)
    assert isinstance(fit, EvidenceFit) and fit.n == 50 and fit.converged
    with pytest.raises(AttributeError):
        fit.noise_var = 1.0
    assert fit.log_evidence == pytest.approx(_evidence(X, y, fit.lengthscale, fit.signal_var, fit.noise_var),
                                             rel=1e-12)


def test_no_point_of_a_grid_around_the_maximum_has_more_evidence(data):
    """Brute force: 9³ points within a factor 1.5 of each hyperparameter; the optimiser's point wins (up to its
    tolerance, 1e-6 in log evidence)."""
    X, y = data
    fit = maximum_evidence(X, y)
    factors = np.geomspace(1 / 1.5, 1.5, 9)
    grid = [_evidence(X, y, fit.lengthscale * a, fit.signal_var * b, fit.noise_var * c)
            for a, b, c in itertools.product(factors, repeat=3)]
    assert max(grid) <= fit.log_evidence + 1e-6


def test_the_maximum_agrees_with_scikit_learn(data):
    """sklearn: ConstantKernel · RBF + WhiteKernel, no target normalisation (prior mean 0, as here), 5 restarts.
    Same model, so the same maximum: log evidence to 1e-4, hyperparameters to 1 % (a flat optimum)."""
    sk_gp = pytest.importorskip("sklearn.gaussian_process")
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, y = data
    kernel = ConstantKernel(1.0, (1e-5, 1e5)) * RBF(1.0, (1e-5, 1e5)) + WhiteKernel(0.1, (1e-8, 1e3))
    sk = sk_gp.GaussianProcessRegressor(kernel, alpha=1e-12, normalize_y=False, n_restarts_optimizer=5,
                                        random_state=0).fit(X, y)
    fit = maximum_evidence(X, y)
    s2, ell, noise = sk.kernel_.k1.k1.constant_value, sk.kernel_.k1.k2.length_scale, sk.kernel_.k2.noise_level
    assert fit.log_evidence == pytest.approx(sk.log_marginal_likelihood_value_, abs=1e-4)
    assert fit.log_evidence >= sk.log_marginal_likelihood_value_ - 1e-6
    assert (fit.lengthscale, fit.signal_var, fit.noise_var) == pytest.approx((ell, s2, noise), rel=1e-2)


def test_rescaling_the_target_rescales_the_variances(data):
    """ℓ is unchanged and σ_f², σ² scale by c² when y is multiplied by c (the search box follows the data)."""
    X, y = data
    base, scaled = maximum_evidence(X, y), maximum_evidence(X, 100 * y)
    assert scaled.lengthscale == pytest.approx(base.lengthscale, rel=1e-3)
    assert (scaled.signal_var, scaled.noise_var) == pytest.approx((1e4 * base.signal_var, 1e4 * base.noise_var),
                                                                  rel=1e-3)


def test_too_few_rows_say_what_is_needed():
    with pytest.raises(ValueError, match="must describe the same n >= 3 finite cases"):
        maximum_evidence(np.zeros((2, 1)), np.zeros(2))


def test_a_stop_request_cancels_between_runs(data):
    with pytest.raises(Cancelled):
        maximum_evidence(*data, hooks=Hooks(should_stop=lambda: True))


def test_a_noise_free_target_stops_at_the_stated_noise_floor(rng):
    from explorer.gp_bootstrap.evidence import NOISE_FLOOR

    X = rng.normal(size=(60, 2))
    y = np.sin(X[:, 0])
    fit = maximum_evidence(X, y)
    assert fit.at_noise_floor and fit.noise_var == pytest.approx(NOISE_FLOOR * np.var(y, ddof=1), rel=1e-6)
    assert not maximum_evidence(X, y + 0.3 * rng.standard_normal(60)).at_noise_floor
