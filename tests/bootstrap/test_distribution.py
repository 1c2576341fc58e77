"""Eq. (60) at one input (``predictive_density``, ``bin_probabilities``) as the :class:`BootstrapDistribution` of
that input: its bins are the integral of its density, and a point mass has no density."""
from __future__ import annotations

import numpy as np
from scipy import integrate

from explorer.bootstrap import replica
from explorer.bootstrap.distribution import bin_probabilities, bootstrap_distribution, predictive_density


def _solution(K: np.ndarray, y: np.ndarray, s_over_n: float = 1.0) -> replica.ReplicaSolution:
    return replica.solve_replica(K, y, 0.1, s_over_n * len(y))


def test_bin_probabilities_integrate_the_density():
    """The mass of each bin is the density integrated over it by quadrature (an independent computation)."""
    rng = np.random.default_rng(11)
    X = rng.uniform(-2, 2, 25)
    K = np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2) + 1e-10 * np.eye(25)
    sol = _solution(K, np.sin(2 * X) + 0.1 * rng.standard_normal(25))
    for i in (0, 7, 24):
        mu = bootstrap_distribution(sol, rows=[i]).mean()[0]
        edges = mu + np.linspace(-3, 3, 13)
        by_quadrature = [integrate.quad(lambda h: predictive_density(sol, i, h), a, b, epsabs=1e-12, limit=200)[0]
                         for a, b in zip(edges[:-1], edges[1:], strict=True)]
        np.testing.assert_allclose(bin_probabilities(sol, i, edges), by_quadrature, rtol=1e-7, atol=1e-10)


def test_a_point_mass_has_no_density_and_its_mass_falls_where_its_components_are():
    """Boston with the paper's model at S/N = 0.5: input 413 has λ_c ≥ 0, so every component of eq. (60) there is a
    point mass; its density is 0 (it was NaN when the density divided by a zero sd) and the bins around the
    components' means hold all their weight."""
    from explorer import datasets
    from explorer.gp_bootstrap.problem import regression_problem
    from explorer.kernels import paper_rbf

    data = datasets.load("boston")
    problem = regression_problem(data, paper_rbf(data.inputs, l2=2.0), 0.1)
    sol = replica.solve_replica(problem.operator, problem.y, problem.noise_var, problem.sample_size(0.5))
    dist = bootstrap_distribution(sol, rows=[413])
    assert np.all(dist.sds == 0)
    assert np.array_equal(predictive_density(sol, 413, np.linspace(-3, 3, 31)), np.zeros(31))
    means = dist.means[0]
    edges = np.array([means.min() - 1.0, means.max() + 1.0])
    np.testing.assert_allclose(bin_probabilities(sol, 413, edges), [dist.weights.sum()], rtol=1e-12)
