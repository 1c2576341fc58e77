"""The model-selection problem of the core: columns, train/test split, standardisation with training statistics."""
import numpy as np
import pytest

from explorer import datasets
from explorer.datasets import Dataset
from explorer.model_selection.problem import SelectionProblem, selection_problem


def _table(rng, n=30) -> Dataset:
    X = rng.normal(2.0, 3.0, size=(n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=n)
    return Dataset("t", X, y, ("a", "b", "c"), "y", "regression", "three inputs", "")


def test_random_split_and_standardisation_use_the_training_rows(rng):
    data = _table(rng)
    p = selection_problem(data, inputs=("c", "a"), n_train=20, n_test=10, rng=5, standardize=True)
    order = np.random.default_rng(5).permutation(30)
    X, y = data.inputs[:, [2, 0]], data.targets
    train, test = order[:20], order[20:]
    mx, sx = X[train].mean(axis=0), X[train].std(axis=0, ddof=1)  # the sample sd of the training rows
    my, sy = y[train].mean(), y[train].std(ddof=1)
    np.testing.assert_allclose(p.X, (X[train] - mx) / sx, rtol=1e-12)
    np.testing.assert_allclose(p.y_test, (y[test] - my) / sy, rtol=1e-12)
    np.testing.assert_allclose(p.X.std(axis=0, ddof=1), 1.0, rtol=1e-12)
    assert (p.n, p.d, p.n_test, p.feature_names, p.target_name) == (20, 2, 10, ("c", "a"), "y")
    assert p.standardized and not p.teacher


def test_rows_in_order_a_separate_test_set_and_the_caps(rng):
    data, other = _table(rng), _table(rng, 12)
    p = selection_problem(data, n_train=25, n_test=3)
    np.testing.assert_array_equal(p.X, data.inputs[:25])
    np.testing.assert_array_equal(p.y_test, data.targets[25:28])
    assert not p.standardized and p.scaling is None
    q = selection_problem(data, test=other)
    assert q.n == 30 and q.n_test == 12
    np.testing.assert_array_equal(q.X_test, other.inputs)
    # n_train capped at the rows, one fewer with test rows; a single test row is dropped
    assert selection_problem(data, n_train=100).n == 30
    r = selection_problem(data, n_train=100, n_test=5)
    assert r.n == 29 and r.X_test is None and r.n_test == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"inputs": ("z",)}, r"`inputs` names unknown column\(s\) \['z'\]"),
    ({"n_train": 0}, "`n_train` must be at least 1"),
    ({"n_test": -1}, "`n_test` must be 0 or more"),
    ({"n_train": 5}, "model selection needs at least 8"),
    ({"n_test": 3, "test": "self"}, "either as `n_test` rows"),
])
def test_validation_messages(rng, kwargs, message):
    data = _table(rng)
    if kwargs.get("test") == "self":
        kwargs["test"] = data
    with pytest.raises(ValueError, match=message):
        selection_problem(data, **kwargs)


def test_classification_data_and_inconsistent_arrays_are_refused(rng):
    with pytest.raises(ValueError, match="has a classification target"):
        selection_problem(datasets.load("crabs"))
    with pytest.raises(ValueError, match="`test` must be regression data with the input column"):
        selection_problem(_table(rng), inputs=("a",), test=datasets.load("boston"))
    with pytest.raises(ValueError, match="`X_test` and `y_test` must be given together"):
        SelectionProblem("p", np.zeros((3, 1)), np.zeros(3), np.zeros((2, 1)), None, ("x",), "")
