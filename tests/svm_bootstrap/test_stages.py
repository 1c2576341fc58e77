"""The stages of [MO03b]'s learning curve (theory_curve, mc_curve in explorer.svm_bootstrap.stages) against
the functions they join, and their partial results."""

import pytest

from explorer import datasets
from explorer.progress import Cancelled, Hooks
from explorer.svm_bootstrap import montecarlo as svm
from explorer.svm_bootstrap import svm_replica
from explorer.svm_bootstrap.problem import BROAD_LENGTHSCALE, svm_problem
from explorer.svm_bootstrap.stages import mc_curve, theory_curve, theory_learning_curve


@pytest.fixture(scope="module")
def crabs():
    return svm_problem(datasets.load("crabs"), BROAD_LENGTHSCALE)


def test_theory_curve_joins_the_theory_and_the_leave_one_out_limits(crabs):
    published = []
    curve = theory_curve(crabs, [2.0, 0.5], hooks=Hooks(partial=published.append))
    assert curve.points == theory_learning_curve(crabs, [2.0, 0.5])
    d0 = svm.fit_hard_margin(crabs.K, crabs.y_sites)
    counts = crabs.sites.counts
    assert curve.loo_approximate == svm_replica.loo_limit(crabs.K, crabs.y_sites, counts=counts, solution=d0).error
    assert curve.loo_exact == svm.leave_one_out(crabs.K, crabs.y_sites, counts=counts, solution=d0).error
    assert curve.complete and curve.grid == (2.0, 0.5)
    # solved in ascending S/N: 0.5 first, then both; then eq. (20) before the literal leave-one-out
    assert [[p.s_over_n for p in c.points] for c in published] == [[0.5], [2.0, 0.5], [2.0, 0.5]]
    assert published[-1].loo_approximate == curve.loo_approximate and published[-1].loo_exact is None
    with pytest.raises(Cancelled, match="after 0 of 2 values of S/N"):
        theory_curve(crabs, [2.0, 0.5], hooks=Hooks(should_stop=lambda: True))


def test_mc_curve_is_the_monte_carlo_learning_curve(crabs):
    published = []
    curve = mc_curve(crabs, [0.5, 1.0], 10, rng=4, hooks=Hooks(partial=published.append))
    d0 = svm.fit_hard_margin(crabs.K, crabs.y_sites)
    plain = svm.bootstrap_learning_curve(crabs.K, crabs.y_sites, [0.5 * crabs.n, 1.0 * crabs.n], 10,
                                         row_site=crabs.sites.row_site, rng=4, init=d0)
    assert [p.mc_mean for p in curve.points] == plain.value.tolist()
    assert [p.mc_se for p in curve.points] == plain.se.tolist()
    assert [len(c.points) for c in published] == [1, 2] and published[-1] == curve
    with pytest.raises(ValueError, match="`mc_samples` must be at least 1, got 0"):
        mc_curve(crabs, [1.0], 0)
