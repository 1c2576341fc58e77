"""States shared by the GP tabs' tests: the learning-curve tab computed on the generated ``teacher`` set (N = 64)
with 20 Monte-Carlo samples per S, so that a file using them runs in seconds."""
import pytest

TIMEOUT = 180


def computed_state(**params):
    """A GP state on ``teacher`` with 20 Monte-Carlo samples per S of the learning curve and ``params``, refreshed,
    its jobs finished without an error."""
    from explorer.views.gp_bootstrap.state import GPBootstrapState

    s = GPBootstrapState(**{"dataset": "teacher", "auto_mc": True, "curve_mc_samples": 20, **params})
    s.refresh()
    assert s.wait(TIMEOUT), "background jobs did not finish in time"
    assert s.error == "", s.error
    return s


def computed_curve(**params):
    """The learning-curve tab's :func:`computed_state`, with its theory and its Monte-Carlo complete."""
    s = computed_state(tab="curve", **params)
    assert s.theory_curve is not None and s.curve_mc is not None and s.curve_mc.complete, s.error
    return s


@pytest.fixture(scope="module")
def square():
    """The learning-curve tab under the square loss."""
    return computed_curve()


@pytest.fixture(scope="module")
def eps():
    """The learning-curve tab under the ε-insensitive loss."""
    return computed_curve(loss="eps-insensitive")
