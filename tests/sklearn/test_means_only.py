"""ReplicaBootstrapRegressor solves for the means at fit and for the variances (eq. (57) of [MO03]) only when asked:
jackknife+-after-bootstrap intervals and ``predict`` never solve eq. (57), and give the numbers the full solve gives
(the same arithmetic on the same Δλ: equal to 1e-12 relative, room only for a BLAS that sums in another order from one
call to the next). That those numbers are right is checked against literal refits and MAPIE in test_against_refits.py.
"""
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.kernel_approximation import Nystroem  # noqa: E402
from sklearn.kernel_ridge import KernelRidge  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from explorer.bootstrap import replica  # noqa: E402
from explorer.operators.dense import DenseSitePosterior  # noqa: E402
from explorer.operators.features import FeatureSitePosterior  # noqa: E402
from explorer.sklearn import ReplicaBootstrapRegressor  # noqa: E402

RTOL = 1e-12
JAB = "jackknife+-after-bootstrap"


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 4))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 5 * X[:, 2] + rng.standard_normal(n)
    return X, y


def _estimators():
    return {"kernel-ridge-rbf": KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5),
            "nystroem-ridge": make_pipeline(StandardScaler(), Nystroem(gamma=0.1, n_components=40, random_state=0),
                                            Ridge(alpha=0.1))}


@pytest.fixture(params=list(_estimators()))
def fitted(request):
    X, y = _data(300)
    return _estimators()[request.param].fit(X, y), X, y, _data(50, seed=1)[0]


def _no_eq_57(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("eq. (57) was solved")

    for posterior in (DenseSitePosterior, FeatureSitePosterior):
        monkeypatch.setattr(posterior, "solve_hadamard", refuse)


def test_jab_intervals_and_predict_never_solve_eq_57(fitted, monkeypatch):
    est, X, y, X_test = fitted
    _no_eq_57(monkeypatch)
    boot = ReplicaBootstrapRegressor.from_estimator(est, X, y)
    low, high = boot.predict_interval(X_test, 0.9, method=JAB)
    assert np.all(low < high) and boot.predict(X_test).shape == (50,)
    assert boot._solution is None  # nothing asked for the variances
    with pytest.raises(AssertionError, match="eq. .57. was solved"):  # the percentile interval needs them
        boot.predict_interval(X_test, 0.9)


def test_jab_bounds_and_means_of_the_means_only_path_equal_the_full_paths(fitted):
    est, X, y, X_test = fitted
    means_first = ReplicaBootstrapRegressor.from_estimator(est, X, y)
    jab_means = means_first.predict_interval(X_test, 0.8, method=JAB)
    mean_means = means_first.predict(X_test)
    full_first = ReplicaBootstrapRegressor.from_estimator(est, X, y)
    mean_full, std_full = full_first.predict(X_test, return_std=True)  # solves eq. (57) before any J+aB
    assert full_first._solution is not None
    jab_full = full_first.predict_interval(X_test, 0.8, method=JAB)
    for a, b in zip(jab_full, jab_means):
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=0)
    np.testing.assert_allclose(mean_means, mean_full, rtol=RTOL, atol=0)
    # what the core's full solve gives for the same problem, through the same estimator
    sol = replica.solve_replica(full_first.problem_.operator, full_first.problem_.y, full_first.noise_var_,
                                float(len(y)))
    for field in ("dl", "gam", "lam", "lam_c", "m"):
        np.testing.assert_allclose(getattr(means_first.solution_, field), getattr(sol, field), rtol=RTOL, atol=0)


def test_the_full_solution_is_solved_once_and_kept(fitted):
    est, X, y, X_test = fitted
    boot = ReplicaBootstrapRegressor.from_estimator(est, X, y)
    assert boot.solution_ is boot.solution_
    assert boot.means_.n_iter == boot.solution_.n_iter and boot.solution_.converged
    boot.fit(X, y)  # a new fit forgets it
    assert boot._solution is None


def test_an_unfitted_estimator_has_no_solution():
    boot = ReplicaBootstrapRegressor()
    assert not hasattr(boot, "solution_") and not hasattr(boot, "means_")
