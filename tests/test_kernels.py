"""Covariance functions: properties, gradients, [MO03]'s RBF and scikit-learn agreement."""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from explorer import kernels as kern
from explorer.kernels import (
    Constant,
    Exponential,
    Matern32,
    Matern52,
    Periodic,
    RationalQuadratic,
    SquaredExponential,
    make_kernel,
    paper_rbf,
)

N_FEATURES = 3

KERNELS = [
    SquaredExponential(0.8, 1.7),
    SquaredExponential([0.5, 1.2, 2.0], 0.6),                          # ARD
    RationalQuadratic(0.9, 1.5, 1.3),
    RationalQuadratic([0.7, 1.1, 1.6], 0.4, 0.9),
    Exponential(1.1, 0.7),
    Exponential([0.6, 1.0, 1.9], 1.2),
    Matern32(0.9, 1.4),
    Matern32([0.5, 0.9, 1.3]),
    Matern52(1.3, 0.8),
    Matern52([1.5, 0.7, 1.1], 2.0),
    Periodic(0.9, 1.7, 1.1),
    Periodic([0.6, 1.3, 0.9], 2.1, 0.8),
    Constant(0.7),
    SquaredExponential([0.5, 1.2, 2.0], 0.6, fixed=("signal_var",)),  # a fixed hyperparameter
    Periodic(0.9, 1.7, 1.1, fixed="period"),
    SquaredExponential(0.8) + Periodic(1.2, 2.0, 0.5),                  # sum
    Matern52([1.5, 0.7, 1.1]) * RationalQuadratic(1.0, 2.0, 0.5),       # product
    2.0 * SquaredExponential(1.0, fixed="signal_var") + Exponential(0.5, 0.1),
]
IDS = [repr(k) for k in KERNELS]


@pytest.fixture
def X(rng):
    return rng.normal(size=(12, N_FEATURES))


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_symmetric_psd_and_diag(kernel, X):
    K = kernel(X)
    assert K.shape == (12, 12)
    assert_allclose(K, K.T, rtol=0, atol=0)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    assert_allclose(kernel.diag(X), np.diag(K), rtol=1e-14)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_cross_covariance_matches_joint(kernel, X, rng):
    Y = rng.normal(size=(5, N_FEATURES))
    joint = kernel(np.vstack([X, Y]))
    assert_allclose(kernel(X, Y), joint[:12, 12:], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_gradient_matches_central_differences(kernel, X):
    # Central differences with h = 1e-6: truncation O(h^2 K''') ~ 1e-12, round-off ~ eps/h ~ 1e-10,
    # both far below rtol 1e-6 (atol 1e-9 for entries that are ~0).
    K, dK = kernel(X, eval_gradient=True)
    assert_allclose(K, kernel(X), rtol=1e-15)
    theta, h = kernel.theta, 1e-6
    assert dK.shape == K.shape + theta.shape
    for i in range(theta.size):
        step = h * np.eye(theta.size)[i]
        fd = (kernel.with_theta(theta + step)(X) - kernel.with_theta(theta - step)(X)) / (2 * h)
        assert_allclose(dK[..., i], fd, rtol=1e-6, atol=1e-9,
                        err_msg=kernel.hyperparameter_names[i])


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_theta_roundtrip_and_bounds(kernel):
    p = len(kernel.hyperparameter_names)
    assert kernel.theta.shape == (p,)
    assert kernel.bounds.shape == (p, 2)
    assert np.all(kernel.bounds[:, 0] < kernel.bounds[:, 1])
    new = kernel.with_theta(kernel.theta + 0.1)
    assert type(new) is type(kernel)
    assert new.hyperparameter_names == kernel.hyperparameter_names
    assert_allclose(new.theta, kernel.theta + 0.1, rtol=1e-14, atol=1e-14)
    assert_allclose(kernel.with_theta(kernel.theta).theta, kernel.theta, rtol=1e-14, atol=1e-15)
    assert_allclose(new.bounds, kernel.bounds)


def test_names_theta_and_bounds_follow_fixed():
    k = RationalQuadratic([1.0, 2.0], 3.0, 4.0, fixed=("alpha",), bounds={"signal_var": (0.1, 10)})
    assert k.hyperparameter_names == ("lengthscale_0", "lengthscale_1", "signal_var")
    assert_allclose(k.theta, np.log([1.0, 2.0, 4.0]))
    assert_allclose(k.bounds, np.log([[1e-5, 1e5], [1e-5, 1e5], [0.1, 10]]))
    assert k.with_theta(np.zeros(3)).params["alpha"] == 3.0
    s = k + Constant(2.0)
    assert s.hyperparameter_names[-1] == "k2.value"
    assert s.params["k1.alpha"] == 3.0
    assert isinstance(np.float64(2.0) * k, kern.Product)


def test_equality_and_hash():
    a = SquaredExponential([1.0, 2.0], fixed="signal_var")
    b = SquaredExponential([1, 2], fixed="signal_var")
    assert a == b and hash(a) == hash(b)
    assert a != SquaredExponential([1.0, 2.0]) and a + b == a + b and a + b != a * b


def test_kernels_are_immutable():
    k = SquaredExponential([1.0, 2.0])
    with pytest.raises(AttributeError, match="immutable"):
        k.lengthscale = 3.0
    with pytest.raises(ValueError, match="read-only"):
        k.params["lengthscale"][0] = 5.0


def test_repr_shows_values():
    text = repr(SquaredExponential([0.5, 2.0], 3.0, fixed="signal_var") * Constant(2.0))
    assert text == ("(SquaredExponential(lengthscale=[0.5, 2], signal_var=3, fixed=('signal_var',))"
                    " * Constant(value=2))")


def _explicit_paper_kernel(X, Y, l2, v):
    K = np.empty((len(X), len(Y)))
    for a, x in enumerate(X):
        for b, y in enumerate(Y):
            K[a, b] = np.exp(-sum((x[j] - y[j]) ** 2 / (v[j] * l2) for j in range(len(v))))
    return K


@pytest.mark.parametrize("scale,l2", [("sd", 73.54), ("var", 3.0)])
def test_paper_rbf_matches_seed_formula(rng, scale, l2):
    X = rng.normal(size=(15, 4)) * [1.0, 5.0, 0.2, 30.0]
    Y = rng.normal(size=(6, 4))
    sd = np.array([np.sqrt(np.sum((c - c.mean()) ** 2) / (len(c) - 1)) for c in X.T])
    v = sd if scale == "sd" else sd**2
    k = paper_rbf(X, l2=l2, scale=scale)
    assert_allclose(k(X, Y), _explicit_paper_kernel(X, Y, l2, v), rtol=1e-13)
    assert k.params["signal_var"] == 1.0


@pytest.mark.parametrize("name", kern.KERNEL_NAMES)
def test_make_kernel(name):
    k = make_kernel(name, 2, signal_var=2.0)
    assert k.params["signal_var"] == 2.0
    assert k(np.zeros((1, 2)))[0, 0] == pytest.approx(2.0)
    ard = make_kernel(name, 2, ard=True, lengthscale=0.5)
    assert ard.hyperparameter_names[:2] == ("lengthscale_0", "lengthscale_1")


# --- scikit-learn ---------------------------------------------------------------------------

def _sklearn_pairs():
    sk = pytest.importorskip("sklearn.gaussian_process.kernels")
    C = sk.ConstantKernel
    return [
        (SquaredExponential(0.8, 1.7), C(1.7) * sk.RBF(0.8)),
        (SquaredExponential([0.5, 1.2, 2.0], 0.6), C(0.6) * sk.RBF([0.5, 1.2, 2.0])),
        (SquaredExponential(1.3, fixed="signal_var"), sk.RBF(1.3)),
        (RationalQuadratic(0.9, 1.5, 1.3), C(1.3) * sk.RationalQuadratic(0.9, 1.5)),
        (Exponential([0.6, 1.0, 1.9], 1.2), C(1.2) * sk.Matern([0.6, 1.0, 1.9], nu=0.5)),
        (Matern32(0.9, 1.4), C(1.4) * sk.Matern(0.9, nu=1.5)),
        (Matern32([0.5, 0.9, 1.3], 1.1), C(1.1) * sk.Matern([0.5, 0.9, 1.3], nu=1.5)),
        (Matern52(1.3, 0.8), C(0.8) * sk.Matern(1.3, nu=2.5)),
        (Matern52([1.5, 0.7, 1.1], 2.0), C(2.0) * sk.Matern([1.5, 0.7, 1.1], nu=2.5)),
        (Periodic(0.9, 1.7, 1.1), C(1.1) * sk.ExpSineSquared(0.9, 1.7)),
        (Periodic(0.9, 1.7, fixed="signal_var"), sk.ExpSineSquared(0.9, 1.7)),
    ]


def _one_column_only(kernel):
    return isinstance(kernel, Periodic)  # ExpSineSquared uses the Euclidean distance, see below


_SK_NAME = {"constant_value": "signal_var", "length_scale": "lengthscale", "alpha": "alpha",
            "periodicity": "period"}


def _sklearn_names(sk_kernel):
    """Our hyperparameter names, in scikit-learn's theta order."""
    names = []
    for hp in sk_kernel.hyperparameters:
        ours = _SK_NAME[hp.name.split("__")[-1]]
        names += [ours] if hp.n_elements == 1 else [f"{ours}_{j}" for j in range(hp.n_elements)]
    return names


@pytest.mark.parametrize("index", range(11))
def test_equals_sklearn(index, X, rng):
    ours, theirs = _sklearn_pairs()[index]
    Y = rng.normal(size=(4, N_FEATURES))
    if _one_column_only(ours):
        X, Y = X[:, :1], Y[:, :1]
    assert_allclose(ours(X, Y), theirs(X, Y), rtol=1e-12)
    assert_allclose(ours.diag(X), theirs.diag(X), rtol=1e-12)
    K, dK = ours(X, eval_gradient=True)
    K_sk, dK_sk = theirs(X, eval_gradient=True)
    order = [ours.hyperparameter_names.index(n) for n in _sklearn_names(theirs)]
    assert_allclose(K, K_sk, rtol=1e-12)
    assert_allclose(ours.theta[order], theirs.theta, rtol=1e-12, atol=1e-15)
    assert_allclose(dK[..., order], dK_sk, rtol=1e-10, atol=1e-13)


def test_periodic_is_psd_where_euclidean_exp_sine_squared_is_not(rng):
    # Why Periodic sums sin² over columns instead of following ExpSineSquared in several dimensions.
    sk = pytest.importorskip("sklearn.gaussian_process.kernels")
    X = rng.normal(size=(40, 3))
    assert np.linalg.eigvalsh(sk.ExpSineSquared(0.9, 1.7)(X)).min() < -1e-3
    assert np.linalg.eigvalsh(Periodic(0.9, 1.7)(X)).min() > -1e-10


# --- validation: one test per message ---------------------------------------------------------

def test_rejects_x_not_2d():
    with pytest.raises(ValueError, match=r"`X` must be a 2-D array .* got shape \(5,\)\. Reshape"):
        SquaredExponential()(np.ones(5))


def test_rejects_non_finite_x():
    with pytest.raises(ValueError, match="`X` contains NaN or inf in 1 entries"):
        SquaredExponential()(np.array([[0.0], [np.nan]]))


def test_rejects_gradient_with_y():
    with pytest.raises(ValueError, match="eval_gradient=True needs Y=None"):
        SquaredExponential()(np.ones((3, 1)), np.ones((2, 1)), eval_gradient=True)


def test_rejects_column_mismatch_between_x_and_y():
    with pytest.raises(ValueError, match="same number of columns, got 2 and 3"):
        SquaredExponential()(np.ones((3, 2)), np.ones((2, 3)))


def test_rejects_wrong_ard_length():
    with pytest.raises(ValueError, match="`lengthscale` has 3 entries .* but X has 2 columns"):
        SquaredExponential([1.0, 2.0, 3.0])(np.ones((4, 2)))


def test_rejects_non_positive_hyperparameter():
    with pytest.raises(ValueError, match="`lengthscale` must be positive and finite, got -1"):
        Matern32(-1.0)


def test_rejects_array_where_scalar_expected():
    with pytest.raises(ValueError, match="`period` of Periodic must be a scalar, got shape"):
        Periodic(1.0, [1.0, 2.0])


def test_rejects_unknown_fixed_name():
    with pytest.raises(ValueError, match=r"`fixed` names unknown hyperparameters \['sigma'\]"):
        SquaredExponential(fixed=("sigma",))


def test_rejects_unknown_bounds_name():
    with pytest.raises(ValueError, match=r"`bounds` names unknown hyperparameters \['sigma'\]"):
        SquaredExponential(bounds={"sigma": (1.0, 2.0)})


def test_rejects_bad_bounds():
    with pytest.raises(ValueError, match="bounds of `lengthscale` must be a pair 0 < lower"):
        SquaredExponential(bounds=(2.0, 1.0))


def test_rejects_bad_theta():
    with pytest.raises(ValueError, match=r"`theta` must be a finite array of shape \(2,\)"):
        SquaredExponential().with_theta([0.0])


def test_rejects_combining_with_non_kernel():
    with pytest.raises(TypeError, match="Kernels combine with kernels or positive numbers"):
        SquaredExponential() + "rbf"


def test_paper_rbf_rejects_bad_scale():
    with pytest.raises(ValueError, match='`scale` must be "sd" or "var", got \'std\''):
        paper_rbf(np.eye(3), scale="std")


def test_paper_rbf_rejects_bad_l2():
    with pytest.raises(ValueError, match="`l2` must be positive and finite, got -1"):
        paper_rbf(np.eye(3), l2=-1)


def test_paper_rbf_rejects_constant_column():
    with pytest.raises(ValueError, match=r"columns \[1\] are constant"):
        paper_rbf(np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]))


def test_make_kernel_rejects_unknown_name():
    with pytest.raises(ValueError, match="unknown kernel 'gauss'; choose one of"):
        make_kernel("gauss", 2)


def test_make_kernel_rejects_bad_n_features():
    with pytest.raises(ValueError, match="`n_features` must be a positive integer, got 0"):
        make_kernel("se", 0)



def test_data_driven_hyperparameters_equal_a_brute_force_median_and_variance(rng):
    """ℓ = median of |x_i − x_j| over i < j by an explicit double loop, σ_f² = Σ (y − ȳ)²/(n − 1)."""
    from explorer.kernels import data_driven_hyperparameters

    X, y = rng.normal(size=(37, 3)) * [1.0, 5.0, 0.2], rng.normal(3.0, 2.0, size=37)
    distances = sorted(sum((a - b) ** 2 for a, b in zip(X[i], X[j])) ** 0.5
                       for i in range(len(X)) for j in range(i + 1, len(X)))
    m = len(distances)
    median = distances[m // 2] if m % 2 else 0.5 * (distances[m // 2 - 1] + distances[m // 2])
    variance = sum((v - sum(y) / len(y)) ** 2 for v in y) / (len(y) - 1)
    start = data_driven_hyperparameters(X, y)
    assert start.lengthscale == pytest.approx(median, rel=1e-12)
    assert start.signal_var == pytest.approx(variance, rel=1e-12)
    assert start.n_used == 37 and data_driven_hyperparameters(X, y, max_points=10).n_used == 10


def test_data_driven_hyperparameters_need_two_cases():
    from explorer.kernels import data_driven_hyperparameters

    with pytest.raises(ValueError, match=r"must describe the same n >= 2 cases"):
        data_driven_hyperparameters(np.zeros((1, 2)), np.zeros(1))


def test_data_driven_hyperparameters_use_a_seeded_subsample_of_large_data(rng):
    """More than ``max_points`` inputs: the median of the pairs of ``max_points`` of them drawn with the seed
    (bounded memory: a 90,000-row upload once asked pdist for 32 GB); the variance still uses every target."""
    from scipy.spatial.distance import pdist

    from explorer.kernels import data_driven_hyperparameters

    X, y = rng.normal(size=(3000, 2)), rng.normal(size=3000)
    start = data_driven_hyperparameters(X, y, max_points=200, rng=5)
    chosen = X[np.random.default_rng(5).choice(3000, 200, replace=False)]
    assert start.n_used == 200 and start.lengthscale == np.median(pdist(chosen))
    assert start.signal_var == pytest.approx(np.var(y, ddof=1), rel=1e-12)
    assert data_driven_hyperparameters(X, y, max_points=200, rng=5) == start  # the same seed, the same start
