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


# ------------------------------------------------------------------------------------------------ ARD


@pytest.fixture
def relevance(rng):
    """y depends on x0 strongly, on x1 weakly and not at all on x2 (the case ARD exists for)."""
    X = rng.normal(size=(80, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(80)
    return X, y


def test_the_ard_gradient_is_the_finite_difference_of_the_evidence(relevance):
    """The objective's gradient in φ = log(ℓ_1, ℓ_2, ℓ_3, σ_f², σ²) (R&W eq. 5.9 through the kernel's ARD theta)
    against central differences of log p(y | X) itself (step 1e-5 in log space: error ~1e-10 · |third
    derivative|, so rel 1e-5)."""
    from explorer.gp_bootstrap.evidence import _NegativeEvidence

    X, y = relevance
    phi = np.log([0.7, 2.0, 5.0, 1.3, 0.05])
    value, grad = _NegativeEvidence(X, y)(phi)

    def log_p(p):
        return regression.log_evidence(SquaredExponential(np.exp(p[:3]), np.exp(p[3])), X, y, np.exp(p[4]))

    h = 1e-5
    numeric = [(log_p(phi + h * e) - log_p(phi - h * e)) / (2 * h) for e in np.eye(5)]
    assert -value == pytest.approx(log_p(phi), rel=1e-12)
    assert -grad == pytest.approx(numeric, rel=1e-5, abs=1e-7)


def test_ard_finds_the_relevant_inputs_and_fits_at_least_as_well(relevance):
    """One ℓ per input: the irrelevant x2 gets a much longer ℓ than x0 and x1 (x0, the strongest, the shortest),
    and the ARD maximum, a superset of the isotropic model, has at least its evidence; its log evidence is the
    evidence at its point (an independent evaluation)."""
    X, y = relevance
    ard, iso = maximum_evidence(X, y, ard=True), maximum_evidence(X, y)
    ell = ard.lengthscale
    assert ard.ard and ell.shape == (3,) and ell[0] < ell[1] and ell[2] > 5 * ell[1]
    assert ard.log_evidence >= iso.log_evidence - 1e-6
    assert ard.log_evidence == pytest.approx(
        regression.log_evidence(SquaredExponential(ell, ard.signal_var), X, y, ard.noise_var), rel=1e-12)
    assert ard.kernel.params["lengthscale"].tolist() == ell.tolist()
    assert ard.note.startswith("ℓ_1..ℓ_d (ARD), σ_f², σ² by maximum evidence on all 80 rows")


# ------------------------------------------------------------------------------------------------ fit_to_data


def test_fit_to_data_is_the_maximum_on_the_stated_random_rows(rng):
    """More rows than ``max_rows``: the maximum of exactly the rows of ``subsample_rows`` (seed given), and the
    fit says which; at most ``max_rows`` rows: all of them, no seed."""
    from explorer.gp_bootstrap.evidence import EVIDENCE_ROWS, SUBSAMPLE_SEED, fit_to_data, subsample_rows

    X = rng.normal(size=(120, 2))
    y = np.sin(X[:, 0]) + 0.2 * rng.standard_normal(120)
    fit = fit_to_data(X, y, max_rows=50, seed=4)
    rows = subsample_rows(120, 50, 4)
    ref = maximum_evidence(X[rows], y[rows])
    assert rows.size == 50 and np.all(np.diff(rows) > 0)
    assert not np.array_equal(rows, subsample_rows(120, 50, 5))
    assert (fit.lengthscale, fit.signal_var, fit.noise_var, fit.log_evidence) == (
        ref.lengthscale, ref.signal_var, ref.noise_var, ref.log_evidence)
    assert (fit.n, fit.n_data, fit.seed) == (50, 120, 4)
    assert fit.note == "ℓ, σ_f², σ² by maximum evidence on 50 of 120 rows drawn at random, seed 4"
    whole = fit_to_data(X, y)
    assert EVIDENCE_ROWS >= 120 and SUBSAMPLE_SEED == 0
    assert (whole.n, whole.n_data, whole.seed, whole.lengthscale) == (120, 120, None,
                                                                      maximum_evidence(X, y).lengthscale)
    assert fit_to_data(X, y, max_rows=50, ard=True).lengthscale.shape == (2,)


def test_fit_to_data_refuses_a_bound_below_three_rows(data):
    from explorer.gp_bootstrap.evidence import fit_to_data

    with pytest.raises(ValueError, match="`max_rows` must be a whole number >= 3, got 2"):
        fit_to_data(*data, max_rows=2)
