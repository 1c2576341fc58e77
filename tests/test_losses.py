"""Test losses of [MO03]: square loss and the smoothed eps-insensitive loss after eq. (46)."""
import numpy as np
import pytest

from explorer.losses import eps_insensitive_loss, get_loss, square_loss

PARAMS = [(0.1, 0.1), (0.5, 0.3), (1.0, 1.0), (0.02, 0.9)]


def test_square_loss_values_and_broadcasting():
    f = np.array([[0.0, 1.0, -2.0], [3.0, 0.5, 0.0]])
    y = np.array([0.0, 2.0, 1.0])
    np.testing.assert_array_equal(square_loss(f, y), (f - y) ** 2)
    assert square_loss(3.0, 1.0) == 4.0


@pytest.mark.parametrize("eps, beta", PARAMS)
def test_eps_insensitive_pieces(eps, beta):
    """Values on each of the three pieces, from the formula after eq. (46) of [MO03]."""
    lo, hi = (1 - beta) * eps, (1 + beta) * eps
    inside, middle, outside = 0.5 * lo, 0.5 * (lo + hi), hi + 0.7
    assert eps_insensitive_loss(inside, 0.0, eps, beta) == 0.0
    assert eps_insensitive_loss(middle, 0.0, eps, beta) == pytest.approx(
        (middle - lo) ** 2 / (4 * beta * eps), rel=1e-14)
    assert eps_insensitive_loss(outside, 0.0, eps, beta) == pytest.approx(outside - eps, rel=1e-14)


@pytest.mark.parametrize("eps, beta", PARAMS)
def test_eps_insensitive_value_and_slope_continuous_at_breakpoints(eps, beta):
    """g and g' match at |delta| = (1 -/+ beta) eps (the quadratic joins 0 and |delta| - eps)."""
    h = 1e-7 * eps
    for b in ((1 - beta) * eps, (1 + beta) * eps):
        for sign in (1.0, -1.0):
            x = sign * b
            left, mid, right = eps_insensitive_loss(np.array([x - h, x, x + h]), 0.0, eps, beta)
            assert abs(right - left) < 3 * h          # value: jump of at most slope (<= 1) * 2h
            slope_l, slope_r = (mid - left) / h, (right - mid) / h
            assert slope_l == pytest.approx(slope_r, abs=1e-5)
    # the exact values at the breakpoints
    np.testing.assert_allclose(
        eps_insensitive_loss(np.array([(1 - beta) * eps, (1 + beta) * eps]), 0.0, eps, beta),
        [0.0, beta * eps], atol=1e-15)


def test_eps_insensitive_is_vectorised_symmetric_and_matches_scalar_calls(rng):
    f, y = rng.normal(scale=0.3, size=(4, 50)), rng.normal(scale=0.3, size=50)
    vec = eps_insensitive_loss(f, y, 0.2, 0.25)
    assert vec.shape == (4, 50)
    scalar = [[eps_insensitive_loss(float(a), float(b), 0.2, 0.25) for a, b in zip(row, y)]
              for row in f]
    np.testing.assert_array_equal(vec, scalar)
    np.testing.assert_array_equal(vec, eps_insensitive_loss(y, f, 0.2, 0.25))
    assert np.all(vec >= 0) and np.all(vec <= np.abs(f - y))


def test_get_loss_names_callables_and_params():
    assert get_loss("square") is square_loss
    assert get_loss("eps-insensitive")(0.5, 0.0) == pytest.approx(0.4)
    assert get_loss("eps_insensitive", eps=0.2, beta=0.5)(0.5, 0.0) == pytest.approx(0.3)

    def absolute(f, y):
        return np.abs(f - y)

    assert get_loss(absolute) is absolute
    assert get_loss(eps_insensitive_loss, eps=0.3)(1.0, 0.0) == pytest.approx(0.7)


@pytest.mark.parametrize("call, match", [
    (lambda: get_loss("hinge"), r"Unknown loss 'hinge'; expected one of \['eps-insensitive', 'square'\]"),
    (lambda: get_loss("square", eps=0.1), "The square loss takes no parameters"),
    (lambda: get_loss("eps-insensitive", width=0.1), r"takes `eps` and `beta`, got \['width'\]"),
    (lambda: get_loss("eps-insensitive", eps=-0.1), "`eps` must be a positive finite number, got -0.1"),
    (lambda: get_loss("eps-insensitive", beta=1.5), r"`beta` must lie in \(0, 1\], got 1.5"),
    (lambda: eps_insensitive_loss(0.0, 0.0, eps=0.0), "`eps` must be a positive finite number, got 0"),
    (lambda: eps_insensitive_loss(0.0, 0.0, beta=0.0), r"`beta` must lie in \(0, 1\], got 0"),
    (lambda: eps_insensitive_loss(0.0, 0.0, beta="a"), r"`beta` must lie in \(0, 1\], got 'a'"),
])
def test_validation_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()
