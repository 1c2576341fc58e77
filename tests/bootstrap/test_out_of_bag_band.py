"""OutOfBagMeans.jackknife_plus on features computes only the candidate rows of each order statistic (a band of the
residuals and the rows of largest leverage bound); its bounds are those of the order statistics over all N out-of-bag
means (:func:`jackknife_plus_bounds` on the (M, N) matrix of ``at``).

The two differ only in how BLAS sums t(x) over the m features (a block of rows instead of all of them) and in μ(x) =
u(x)ᵀ(Ψᵀγ) in place of t(x)ᵀγ: round-off of order m·ε relative to the values, so 1e-12 of the interval's scale.
"""
import numpy as np
import pytest

from explorer.bootstrap import out_of_bag, replica_means
from explorer.bootstrap.out_of_bag import jackknife_plus_bounds, out_of_bag_means
from explorer.operators.features import FeatureKernel

N, M_FEATURES, NOISE = 3000, 60, 0.1


def _problem(seed=0, outliers=0):
    """Random Fourier features of 2-D inputs; ``outliers`` rows far out (high leverage, large out-of-bag shifts)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    X[:outliers] *= 4.0
    y = np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(N)
    y[:outliers] += 3.0 * rng.standard_normal(outliers)
    W, b = rng.normal(size=(2, M_FEATURES)), rng.uniform(0, 2 * np.pi, M_FEATURES)

    def features(A):
        return np.cos(A @ W + b) * np.sqrt(2.0 / M_FEATURES)

    X_test = np.vstack([rng.normal(size=(150, 2)), 5.0 * rng.normal(size=(10, 2))])  # some far from the data
    return FeatureKernel.of(features(X)), y, features(X_test)


def _scale(low, high):
    return np.max(np.abs(np.concatenate([low, high])))


@pytest.mark.parametrize("outliers", [0, 30])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.99])
def test_the_candidate_rows_give_the_order_statistics_of_all_rows(outliers, confidence):
    K, y, phi_test = _problem(outliers=outliers)
    oob = out_of_bag_means(replica_means.solve_replica_means(K, y, NOISE, float(N)), K)
    low, high = oob.jackknife_plus(phi_test, confidence)
    low_all, high_all = jackknife_plus_bounds(oob.at(phi_test)[1], oob.residuals, confidence)
    scale = _scale(low_all, high_all)
    np.testing.assert_allclose(low, low_all, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(high, high_all, rtol=0, atol=1e-12 * scale)
    _, narrow, r_narrow, wide, bound = oob._ranking
    assert wide.size == int(np.ceil(out_of_bag.WIDE_SHARE * N)) and np.isfinite(bound)


def test_the_band_leaves_most_rows_out(monkeypatch):
    """What makes it fast: at N = 3,000 the rows computed for most test inputs are a small part of N (the band is
    per group of test inputs of similar ‖u(x)‖; the group of the inputs farthest from the data needs more)."""
    K, y, phi_test = _problem()
    oob = out_of_bag_means(replica_means.solve_replica_means(K, y, NOISE, float(N)), K)
    computed = []
    rows_at = type(oob.covariances).rows_at

    def counting(self, u, rows=None):
        computed.append(self.psi.shape[0] if rows is None else len(rows))
        return rows_at(self, u, rows)

    monkeypatch.setattr(type(oob.covariances), "rows_at", counting)
    oob.jackknife_plus(phi_test[:150], 0.9)  # the test inputs near the data
    assert len(computed) == 8 and np.median(computed) < 0.1 * N


def test_test_inputs_a_check_refuses_are_computed_from_all_rows(monkeypatch):
    """A negative margin makes the band empty, so that no candidate can be the order statistic: every test input
    takes the path over all N rows, which must give the same bounds."""
    K, y, phi_test = _problem(seed=1)
    oob = out_of_bag_means(replica_means.solve_replica_means(K, y, NOISE, float(N)), K)
    low_all, high_all = jackknife_plus_bounds(oob.at(phi_test)[1], oob.residuals, 0.9)
    monkeypatch.setattr(out_of_bag, "CHECK_RTOL", -1e6)
    low, high = oob.jackknife_plus(phi_test, 0.9)
    scale = _scale(low_all, high_all)
    np.testing.assert_allclose(low, low_all, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(high, high_all, rtol=0, atol=1e-12 * scale)


def test_no_test_input_gives_empty_bounds():
    K, y, phi_test = _problem()
    oob = out_of_bag_means(replica_means.solve_replica_means(K, y, NOISE, float(N)), K)
    low, high = oob.jackknife_plus(phi_test[:0], 0.9)
    assert low.shape == high.shape == (0,)
