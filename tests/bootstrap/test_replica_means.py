"""explorer.bootstrap.replica_means.solve_replica_means and solve_variances: the ADATAP solve that stops before eq. (57)
([MO03]) gives the first moments of the full solve, and completing it gives the full solve.

Both paths run the same iteration of eqs. (54)-(55) and the same arithmetic on the same Δλ, so the fields are compared
for equality to 1e-12 relative: that leaves room only for a BLAS that sums in another order from one call to the next
(none of ours does), not for any difference of method. That the full solve is right is checked elsewhere against
independent computations (literal refits, Monte-Carlo; tests/bootstrap, tests/sklearn); here only that the means-only
path is the same numbers.
"""
import numpy as np
import pytest

from explorer import datasets, kernels, lowrank
from explorer.bootstrap import replica, replica_means
from explorer.bootstrap.out_of_bag import out_of_bag_means
from explorer.operators.dense import DenseKernel
from explorer.operators.features import FeatureKernel

N, NOISE = 120, 0.05
RTOL = 1e-12
MEANS = ("dl", "dl_c", "gam", "gam_c", "m", "G_diag")
RECORD = ("converged", "n_iter", "residual", "tol", "method", "jitter", "features_rank", "S", "noise_var")


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.2 * rng.standard_normal(n)
    return X, y


def _rbf(a, b, gamma=0.5):
    return np.exp(-gamma * ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))


def _kernels():
    X, _ = _data()
    rng = np.random.default_rng(1)
    phi = np.hstack([np.cos(X @ rng.normal(size=(2, 30)) + rng.uniform(0, 6, 30)) * np.sqrt(2 / 30),
                     np.ones((N, 1))])
    return {"dense": DenseKernel(_rbf(X, X)), "features": FeatureKernel.of(phi)}


def _rank_deficient():
    """Rank-30 Nyström K = ΦΦᵀ of 500 rows given densely, five rows far from the landmarks: the dense iteration
    breaks down and the solve takes the features of K's non-zero eigenvalues (as in test_rank_deficient.py)."""
    d = datasets.load("diamonds")
    X, y = d.inputs[:500], d.targets[:500]
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    X[:5] += 8.0
    phi = lowrank.nystrom_features(kernels.SquaredExponential(1.0), X, 30, rng=0, landmarks=np.arange(10, 40)).phi
    return phi @ phi.T, y


def _problem(name):
    """(K, y, σ², S)."""
    if name == "rank-deficient":
        return *_rank_deficient(), 0.1, 500.0
    return _kernels()[name], _data()[1], NOISE, 1.5 * N


NAMES = ["dense", "features", "rank-deficient"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("precision", ["mixed", "double"])
def test_the_means_are_those_of_the_full_solve(name, precision):
    K, y, noise, S = _problem(name)
    full = replica.solve_replica(K, y, noise, S, precision=precision, tol=1e-6)
    means = replica_means.solve_replica_means(K, y, noise, S, precision=precision, tol=1e-6)
    assert isinstance(means, replica_means.ReplicaMeans) and not hasattr(means, "lam")
    for field in MEANS:
        np.testing.assert_allclose(getattr(means, field), getattr(full, field), rtol=RTOL, atol=0, err_msg=field)
    np.testing.assert_allclose(means.cavity_mean, full.cavity_mean, rtol=RTOL, atol=0)
    for field in RECORD:
        assert getattr(means, field) == getattr(full, field), field
    assert (means.features_rank > 0) == (name == "rank-deficient")


@pytest.mark.parametrize("name", NAMES)
def test_completing_the_means_with_the_variances_is_the_full_solve(name):
    K, y, noise, S = _problem(name)
    full = replica.solve_replica(K, y, noise, S)
    completed = replica_means.solve_variances(replica_means.solve_replica_means(K, y, noise, S), K)
    assert isinstance(completed, replica.ReplicaSolution)
    for field in MEANS + ("lam", "lam_c"):
        np.testing.assert_allclose(getattr(completed, field), getattr(full, field), rtol=RTOL, atol=0,
                                   err_msg=field)
    for field in RECORD:
        assert getattr(completed, field) == getattr(full, field), field


def test_the_out_of_bag_means_need_only_the_means():
    """J+aB's out-of-bag means and bounds from the means-only path equal the full path's (features, 1e-12)."""
    K = _kernels()["features"]
    X, y = _data()
    cross = K.phi[:17] * 0.9  # any features of test inputs
    from_full = out_of_bag_means(replica.solve_replica(K, y, NOISE, float(N)), K)
    from_means = out_of_bag_means(replica_means.solve_replica_means(K, y, NOISE, float(N)), K)
    for a, b in zip(from_full.at(cross), from_means.at(cross)):
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=0)
    for a, b in zip(from_full.jackknife_plus(cross, 0.8), from_means.jackknife_plus(cross, 0.8)):
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=0)


def test_the_means_only_solve_never_solves_eq_57(monkeypatch):
    """No conjugate-gradient (or dense) solve of eq. (57) is made: the means-only path works with it removed."""
    from explorer.operators.features import FeatureSitePosterior

    def refuse(*args, **kwargs):
        raise AssertionError("eq. (57) was solved")

    monkeypatch.setattr(FeatureSitePosterior, "solve_hadamard", refuse)
    K = _kernels()["features"]
    _, y = _data()
    means = replica_means.solve_replica_means(K, y, NOISE, float(N))
    assert means.converged
    with pytest.raises(AssertionError, match="eq. .57. was solved"):
        replica_means.solve_variances(means, K)


def test_a_means_only_iteration_that_does_not_converge_says_so_with_its_last_iterate():
    K = _kernels()["dense"]
    _, y = _data()
    with pytest.raises(replica.ConvergenceError, match="did not converge") as info:
        replica_means.solve_replica_means(K, y, NOISE, float(N), max_iter=1, precision="double")
    assert isinstance(info.value.last, replica_means.ReplicaMeans) and not info.value.last.converged


def test_solve_variances_takes_only_means():
    K = _kernels()["dense"]
    _, y = _data()
    with pytest.raises(TypeError, match="ReplicaMeans"):
        replica_means.solve_variances(replica.solve_replica(K, y, NOISE, float(N)), K)
