"""Hard-margin SVM without bias and its Monte-Carlo bootstrap ([MO03b], eqs. 1, 6, 7).

Tolerances: the active-set solver stops at margin violations below 1e-9 and refines every solve, so
weights agree with independent solvers to ~1e-6 relative (SLSQP's own accuracy is the limit there) and
with scipy's NNLS on a Cholesky factor to 1e-7. Monte-Carlo averages are compared with exact enumerations
within 4 of their own standard errors (false-alarm probability ~6e-5 per comparison; seeds are fixed).
"""
import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import linalg, optimize

from explorer import datasets
from explorer.bootstrap.estimates import BootstrapPredictions
from explorer.progress import Hooks
from explorer.resampling import sample_occupations
from explorer.svm_bootstrap import montecarlo as svm
from tests.conftest import rbf
from tests.conftest import two_rings as toy

pytestmark = pytest.mark.usefixtures("one_blas_thread")


# ----------------------------------------------------------------------------- the solver

@pytest.mark.parametrize("n, length", [(12, 0.5), (30, 1.0), (40, 2.0), (60, 3.0)])
def test_kkt_conditions_hold(rng, n, length):
    X, y, K = toy(rng, n, length)
    mask = rng.random(n) < 0.7
    sol = svm.fit_hard_margin(K, y, mask=mask)
    kkt = sol.kkt_violation()
    assert kkt["dual"] == 0 and kkt["off_training"] == 0          # alpha >= 0, 0 off the training set
    assert kkt["primal"] < 1e-9                                  # y f >= 1 - tol on D
    assert kkt["complementary"] < 1e-8                           # alpha_i (y_i f_i - 1) = 0
    np.testing.assert_allclose(sol.field, K @ (y * sol.alpha), rtol=0, atol=1e-12)
    np.testing.assert_allclose(sol.margins[sol.support], 1.0, atol=1e-8)  # support vectors on the margin


def test_agrees_with_slsqp_on_the_dual(rng):
    """Independent solver: SLSQP on max sum(a) - a^T Q a / 2, a >= 0."""
    X, y, K = toy(rng, 20, 1.0)
    Q = K * np.outer(y, y)
    ours = svm.fit_hard_margin(K, y)
    res = optimize.minimize(lambda a: 0.5 * a @ Q @ a - a.sum(), np.zeros(20), jac=lambda a: Q @ a - 1,
                            bounds=[(0, None)] * 20, method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    assert res.success
    np.testing.assert_allclose(ours.alpha, res.x, rtol=1e-5, atol=1e-5 * res.x.max())


def test_agrees_with_scipy_nnls_on_a_cholesky_factor(rng):
    """The dual is min |R a - b|^2, a >= 0 with Q = R^T R, R^T b = 1 (module docstring)."""
    X, y, K = toy(rng, 40, 1.5)
    R = linalg.cholesky(K * np.outer(y, y), lower=False)
    b = linalg.solve_triangular(R, np.ones(40), trans="T")
    a, _ = optimize.nnls(R, b, maxiter=4000)
    np.testing.assert_allclose(svm.fit_hard_margin(K, y).alpha, a, rtol=1e-7, atol=1e-7 * a.max())


def test_primal_objective_is_minimal_among_feasible_fields(rng):
    """Eq. (1): f^T K^-1 f is smallest at the SVM; moving towards any other feasible field increases it."""
    X, y, K = toy(rng, 25, 1.0)
    sol = svm.fit_hard_margin(K, y)
    beta = y * sol.alpha                                         # f = K beta, f^T K^-1 f = beta^T K beta
    obj = beta @ K @ beta
    for _ in range(20):
        other = svm.fit_hard_margin(K, y, mask=rng.random(25) < 0.5).field  # feasible on a subset only
        scale = 1.0 / max(np.min(y * other), 1e-3) if np.min(y * other) > 0 else None
        if scale is None:
            continue
        b = linalg.solve(K, other * scale, assume_a="pos")       # a field feasible on all points
        assert b @ K @ b >= obj * (1 - 1e-9)


def test_duplicated_points_do_not_change_the_solution(rng):
    X, y, K = toy(rng, 15, 1.0)
    rows = np.concatenate([np.arange(15), [0, 3, 3, 7]])
    dup = svm.fit_hard_margin(K[np.ix_(rows, rows)], y[rows])
    single = svm.fit_hard_margin(K, y)
    np.testing.assert_allclose(dup.field[:15], single.field, rtol=0, atol=1e-8)


def test_warm_start_gives_the_same_solution(rng):
    X, y, K = toy(rng, 40, 1.5)
    full = svm.fit_hard_margin(K, y)
    mask = rng.random(40) < 0.6
    cold, warm = svm.fit_hard_margin(K, y, mask=mask), svm.fit_hard_margin(K, y, mask=mask, init=full)
    np.testing.assert_allclose(warm.field, cold.field, rtol=0, atol=1e-8)


def test_conflicting_identical_inputs_are_not_separable(rng):
    X, y, K = toy(rng, 10, 1.0)
    rows = np.concatenate([np.arange(10), [4]])
    y2 = np.concatenate([y, [-y[4]]])
    with pytest.raises(svm.NotSeparableError, match="not separable"):
        svm.fit_hard_margin(K[np.ix_(rows, rows)], y2)
    with pytest.raises(svm.NotSeparableError, match="identical inputs but labels"):
        svm.merge_identical(X[rows], y2)


def test_merge_identical_on_wisconsin():
    data = datasets.load("wisconsin")
    sites = svm.merge_identical(data.inputs, data.targets)
    assert (sites.n_rows, sites.n_sites) == (683, 449)
    np.testing.assert_array_equal(data.inputs[sites.index][sites.row_site], data.inputs)
    np.testing.assert_array_equal(sites.y[sites.row_site], data.targets)
    assert np.all(np.diff(sites.index) > 0) and sites.counts.sum() == 683 and sites.counts.max() > 10


def test_wisconsin_duplicates_do_not_break_the_solver():
    """683 rows with identical inputs: the row-level K is singular, the solution is that of the sites."""
    data = datasets.load("wisconsin").standardized()
    sites = svm.merge_identical(data.inputs, data.targets)
    K_rows = rbf(data.inputs, data.inputs, 3.0)
    rows = svm.fit_hard_margin(K_rows, data.targets)
    merged = svm.fit_hard_margin(K_rows[np.ix_(sites.index, sites.index)], sites.y)
    np.testing.assert_allclose(rows.field, merged.field[sites.row_site], rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------- Monte-Carlo

def exact_efron_error(K, y, S, row_site=None):
    """Eq. (6) by enumerating which rows are drawn: under eq. (7) rows are present independently with
    probability p = 1 - e^(-S/N), and only the set of present sites matters (hard margin)."""
    row_site = np.arange(len(y)) if row_site is None else row_site
    n_rows = row_site.size
    p = -np.expm1(-S / n_rows)
    num = np.zeros(n_rows)
    for pattern in itertools.product([0, 1], repeat=n_rows):
        b = np.array(pattern)
        present = np.bincount(row_site, weights=b, minlength=len(y)) > 0
        field = svm.fit_hard_margin(K, y, mask=present).field[row_site] if present.any() else np.zeros(n_rows)
        prob = np.prod(np.where(b == 1, p, 1 - p))
        wrong = (y[row_site] * field < 0)
        num += np.where(b == 0, prob * wrong, 0.0)
    return float(np.mean(num / (1 - p)))


@pytest.mark.parametrize("S", [2.0, 5.0, 10.0])
def test_mc_matches_exact_enumeration(rng, S):
    X = rng.normal(size=(5, 2))
    y = np.array([1.0, -1, 1, -1, 1])
    K = rbf(X, X, 1.0)
    exact = exact_efron_error(K, y, S)
    fields = svm.bootstrap_fields(K, y, S, 2500, rng=rng)
    mc = svm.bootstrap_classification_error(fields, y)
    assert exact > 0.05
    assert abs(mc.value - exact) < 4 * mc.se


def test_multinomial_mc_matches_enumeration_of_occupation_vectors(rng):
    """Fixed size S = 4 of N = 4 rows: all 35 occupation vectors with their multinomial probabilities."""
    X = rng.normal(size=(4, 2))
    y = np.array([1.0, -1, 1, -1])
    K = rbf(X, X, 1.0)
    num, den = np.zeros(4), np.zeros(4)
    for s in itertools.product(range(5), repeat=4):
        if sum(s) != 4:
            continue
        s = np.array(s)
        prob = math.factorial(4) / np.prod([math.factorial(k) for k in s]) / 4**4
        field = svm.fit_hard_margin(K, y, mask=s > 0).field
        num += np.where(s == 0, prob * (y * field < 0), 0.0)
        den += np.where(s == 0, prob, 0.0)
    exact = np.mean(num / den)
    mc = svm.bootstrap_classification_error(svm.bootstrap_fields(K, y, 4, 2500, scheme="multinomial", rng=rng), y)
    assert exact > 0.05 and abs(mc.value - exact) < 4 * mc.se


def test_mc_with_merged_rows_matches_exact_enumeration(rng):
    """Six rows on five sites: a row is a test point only in samples where its twin is absent too."""
    X = rng.normal(size=(5, 2))
    y = np.array([1.0, -1, 1, -1, 1])
    K = rbf(X, X, 0.8)
    row_site = np.array([0, 1, 2, 3, 4, 1])
    exact = exact_efron_error(K, y, 4.0, row_site)
    fields = svm.bootstrap_fields(K, y, 4.0, 2500, row_site=row_site, rng=rng)
    mc = svm.bootstrap_classification_error(fields, y[row_site])
    assert abs(mc.value - exact) < 4 * mc.se
    # the twin of row 1 is absent too in a fraction e^(-S/N) of the samples without row 1
    out = fields.occupations[:, 1] == 0
    frac = np.mean(fields.occupations[out, 5] == 0)
    assert abs(frac - np.exp(-4.0 / 6)) < 4 * np.sqrt(frac * (1 - frac) / out.sum())


def efron_by_hand(occ, fields, y_rows):
    """Eq. (6) from its definition: per row, the mean 0-1 loss over the samples leaving it out, averaged over
    the rows left out at least once."""
    ratios = [np.mean(y_rows[i] * fields[occ[:, i] == 0, i] < 0) for i in range(y_rows.size) if (occ[:, i] == 0).any()]
    return float(np.mean(ratios))


def refit_on_duplicated_rows(K, y, row_site, s):
    """The hard-margin SVM trained literally on the bootstrap data set: s_i copies of row i (kernel and labels
    of the duplicated rows); its field at every data row."""
    d = row_site[np.repeat(np.arange(row_site.size), s)]
    if d.size == 0:
        return np.zeros(row_site.size)
    sol = svm.fit_hard_margin(K[np.ix_(d, d)], y[d])
    return (K[row_site][:, d] * (y[d] * sol.alpha)).sum(axis=1)


def test_chunk_size_never_changes_the_result(rng):
    X, y, K = toy(rng, 20, 1.0)
    runs = [svm.bootstrap_fields(K, y, 20, 30, K_test=K[:3], rng=1, chunk_size=c) for c in (1, 7, 1000)]
    for other in runs[1:]:
        np.testing.assert_array_equal(other.occupations, runs[0].occupations)
        np.testing.assert_array_equal(other.train, runs[0].train)
        np.testing.assert_array_equal(other.test, runs[0].test)


def test_sample_b_draws_from_its_own_generator_and_is_a_literal_refit(rng):
    """Sample b's occupations are those of ``sample_occupations`` (group 0); its fields equal the SVM refitted on
    the duplicated rows (fields to 1e-6, the solver's accuracy)."""
    _, y, K = toy(rng, 12, 1.0)
    row_site = np.concatenate([np.arange(12), [2, 5]])          # two rows with a twin
    f = svm.bootstrap_fields(K, y, 10, 8, row_site=row_site, rng=9, chunk_size=3)
    occ = sample_occupations(14, 10.0, "poisson", np.random.SeedSequence(9), 0, 0, 8)
    np.testing.assert_array_equal(f.occupations, occ)
    for s, train in zip(occ, f.train):
        np.testing.assert_allclose(train, refit_on_duplicated_rows(K, y, row_site, s), rtol=0, atol=1e-6)


def test_learning_curve_draws_the_samples_of_each_S_and_publishes_finished_S(rng):
    _, y, K = toy(rng, 15, 1.0)
    published = []
    curve = svm.bootstrap_learning_curve(K, y, [5, 10, 20], 25, rng=12, chunk_size=4,
                                         hooks=Hooks(partial=published.append))
    assert [p.s_values.tolist() for p in published] == [[5], [5, 10], [5, 10, 20]]
    for k, (S, value) in enumerate(zip([5, 10, 20], curve.value)):
        # brute force: the samples of this S (keyed by its S/N), SVMs refitted on duplicated points
        occ = sample_occupations(15, S, "poisson", np.random.SeedSequence(12), k, 0, 25)
        fields = np.array([refit_on_duplicated_rows(K, y, np.arange(15), s) for s in occ])
        assert np.abs(fields).min() > 1e-4                      # no field so close to 0 that 1e-6 flips its sign
        assert value == pytest.approx(efron_by_hand(occ, fields, y), rel=1e-12)  # ratios of counts: exact but for rounding


def test_learning_curve_and_fields_are_the_same_on_dask_and_for_any_chunk_size(dask_engine, rng):
    """Bit for bit: in-process vs the shared Dask cluster (2 worker processes), chunk sizes 1, 7 and 1000."""
    _, y, K = toy(rng, 20, 1.0)
    kwargs = {"row_site": np.concatenate([np.arange(20), [4]]), "rng": 3}
    reference = svm.bootstrap_learning_curve(K, y, [8, 21], 30, **kwargs)
    fields = svm.bootstrap_fields(K, y, 12, 30, K_test=K[:4], **kwargs)
    for chunk_size in (1, 7, 1000):
        for executor in (None, dask_engine.executor):
            other = svm.bootstrap_learning_curve(K, y, [8, 21], 30, chunk_size=chunk_size, executor=executor,
                                                 **kwargs)
            np.testing.assert_array_equal(other.value, reference.value)
            np.testing.assert_array_equal(other.se, reference.se)
            for a, b in zip(other.errors, reference.errors):
                np.testing.assert_array_equal(a.per_input, b.per_input)
            again = svm.bootstrap_fields(K, y, 12, 30, K_test=K[:4], chunk_size=chunk_size, executor=executor,
                                         **kwargs)
            for name in ("occupations", "train", "test"):
                np.testing.assert_array_equal(getattr(again, name), getattr(fields, name))


def test_fields_are_refits_and_test_fields_extend_them(rng):
    X, y, K = toy(rng, 20, 1.0)
    Xt = rng.normal(size=(4, 2))
    f = svm.bootstrap_fields(K, y, 20, 5, K_test=rbf(Xt, X), rng=rng)
    assert isinstance(f, BootstrapPredictions) and f.train.shape == (5, 20) and f.test.shape == (5, 4)
    for s, train, test in zip(f.occupations, f.train, f.test):
        sol = svm.fit_hard_margin(K, y, mask=s > 0)
        np.testing.assert_allclose(train, sol.field, atol=1e-8)
        np.testing.assert_allclose(test, sol.decision_function(rbf(Xt, X)), atol=1e-8)


def test_multinomial_scheme_draws_exactly_S_rows(rng):
    X, y, K = toy(rng, 12, 1.0)
    f = svm.bootstrap_fields(K, y, 12, 10, scheme="multinomial", rng=rng)
    assert np.all(f.occupations.sum(axis=1) == 12)


def test_probability_negative_and_left_out_fields(rng):
    X, y, K = toy(rng, 20, 1.0)
    f = svm.bootstrap_fields(K, y, 10, 200, K_test=K[:2], rng=rng)
    prob = svm.probability_negative(f)
    np.testing.assert_allclose(prob.value, (f.test < 0).mean(axis=0))
    np.testing.assert_allclose(prob.se, np.sqrt(prob.value * (1 - prob.value) / 200))
    out = svm.left_out_fields(f, 3)
    assert out.size == np.sum(f.occupations[:, 3] == 0)
    with pytest.raises(ValueError, match="pass `K_test`"):
        svm.probability_negative(svm.bootstrap_fields(K, y, 10, 2, rng=rng))


def test_learning_curve_progress_and_cancel(rng):
    X, y, K = toy(rng, 15, 1.0)
    calls = []
    curve = svm.bootstrap_learning_curve(K, y, [5, 15], 20, rng=rng, chunk_size=10,
                                         hooks=Hooks(progress=lambda f, msg: calls.append((f, str(msg)))))
    assert curve.value.shape == (2,) and calls[-1] == (1.0, "40/40 samples")
    with pytest.raises(svm.Cancelled, match="after 10 of 20"):
        svm.bootstrap_fields(K, y, 5, 20, rng=rng, chunk_size=10,
                             hooks=Hooks(should_stop=iter([False, True]).__next__))


# ----------------------------------------------------------------------------- leave-one-out

def test_leave_one_out_equals_brute_force(rng):
    X, y, K = toy(rng, 25, 0.7)
    loo = svm.leave_one_out(K, y)
    for i in range(25):
        mask = np.arange(25) != i
        assert loo.margins[i] == pytest.approx(svm.fit_hard_margin(K, y, mask=mask).margins[i], abs=1e-8)
    assert loo.error == np.mean(loo.margins < 0) and loo.error > 0


def test_leave_one_out_rows_with_twins_are_never_errors(rng):
    X, y, K = toy(rng, 25, 0.7)
    counts = np.ones(25, dtype=int)
    loo = svm.leave_one_out(K, y)
    wrong = np.flatnonzero(loo.margins < 0)
    counts[wrong[0]] = 2
    assert svm.leave_one_out(K, y, counts=counts).error == pytest.approx((wrong.size - 1) / 26)


# ----------------------------------------------------------------------------- validation

@pytest.mark.parametrize("kwargs, match", [
    (dict(K=np.ones((3, 2))), "square kernel matrix"),
    (dict(y=np.ones(4)), r"`y` must have shape \(3,\)"),
    (dict(y=np.array([1.0, 0.0, 1.0])), "labels -1 and \\+1"),
    (dict(K=np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1.0]])), "must be symmetric"),
    (dict(K=np.full((3, 3), np.nan)), "must be finite"),
    (dict(mask=np.ones(3)), "boolean array"),
    (dict(tol=0.0), r"`tol` must be in \(0, 1\)"),
])
def test_fit_validation_messages(kwargs, match):
    args = dict(K=np.eye(3), y=np.array([1.0, -1.0, 1.0]))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        svm.fit_hard_margin(**args)


@pytest.mark.parametrize("kwargs, match", [
    (dict(S=-1.0), "`S` must be positive"),
    (dict(n_samples=0), "`n_samples` must be a positive integer"),
    (dict(scheme="jackknife"), "`scheme` must be one of"),
    (dict(row_site=np.array([0, 0, 1])), "map rows onto all 3 sites"),
    (dict(row_site=np.array([0.0, 1.0, 2.0])), "1-D integer array"),
    (dict(K_test=np.ones((2, 4))), r"K_test` must have shape \(M, 3\)"),
    (dict(chunk_size=0), "`chunk_size` must be a positive integer"),
])
def test_bootstrap_validation_messages(kwargs, match):
    args = dict(K=np.eye(3), y=np.array([1.0, -1.0, 1.0]), S=3.0, n_samples=5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        svm.bootstrap_fields(**args)


def test_counts_validation_message():
    with pytest.raises(ValueError, match="`counts` must be positive integers"):
        svm.leave_one_out(np.eye(3), np.array([1.0, -1.0, 1.0]), counts=np.array([1, 0, 1]))


# ----------------------------------------------------------------------------- layers

def test_svm_core_does_not_import_ui_stack():
    code = ("import sys, explorer.svm_bootstrap.montecarlo, explorer.svm_bootstrap.svm_replica, explorer.svm_bootstrap.experiments, "
            "explorer.svm_bootstrap.problem, explorer.svm_bootstrap.stages\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'panel', 'holoviews', 'bokeh', 'param'})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
