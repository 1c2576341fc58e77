"""Bootstrap occupation numbers s = (s_1, ..., s_N), eqs. (10)-(11) of seed 000 and eq. (7) of seed 004.

Every paper's Monte-Carlo draws its resamples here: Poisson occupation numbers (the factorising weight
W(s)) or multinomial ones (fixed sample size S).

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np

from explorer.validation import positive_int, positive_S

__all__ = ["SCHEMES", "occupation_numbers"]

SCHEMES = ("poisson", "multinomial")

RngLike = np.random.Generator | int | None


def occupation_numbers(n_inputs: int, S: float, n_samples: int, *, scheme: str = "poisson",
                       rng: RngLike = None) -> np.ndarray:
    """Occupation numbers s of ``n_samples`` bootstrap samples of N = ``n_inputs`` points.

    ``"poisson"``: s_i ~ Poisson(S/N) independently, the factorising weight W(s) of eq. (11) of
    seed 000 (sample size Poisson with mean S). ``"multinomial"``: S points drawn with replacement,
    sum_i s_i = S exactly (S must be a whole number).

    Parameters
    ----------
    n_inputs : int
        Number N of training points, >= 1.
    S : float
        Mean bootstrap sample size, > 0 (the fixed sample size for ``"multinomial"``); S = N is the
        classical bootstrap.
    n_samples : int
        Number of bootstrap samples, >= 1.
    scheme : {"poisson", "multinomial"}, optional
        Resampling model.
    rng : Generator, int or None, optional
        Random generator or seed, passed to ``np.random.default_rng``.

    Returns
    -------
    ndarray of int of shape (n_samples, n_inputs)
        Row b holds the occupation numbers s_1, ..., s_N of sample b.

    Raises
    ------
    ValueError
        If ``n_inputs`` or ``n_samples`` is not a positive integer, ``S`` is not positive and finite,
        ``scheme`` is unknown, or ``S`` is not whole with ``scheme="multinomial"``.
    """
    n_inputs, S, n_samples, scheme = _occupation_iv(n_inputs, S, n_samples, scheme)
    return _draw_occupations(n_inputs, S, n_samples, scheme, np.random.default_rng(rng))


def _draw_occupations(n_inputs, S, n_samples, scheme, rng: np.random.Generator) -> np.ndarray:
    if scheme == "poisson":
        return rng.poisson(S / n_inputs, size=(n_samples, n_inputs))  # eq. (11)
    return rng.multinomial(int(S), np.full(n_inputs, 1.0 / n_inputs), size=n_samples)


def _occupation_iv(n_inputs, S, n_samples, scheme):
    n_inputs = positive_int(n_inputs, "n_inputs", "It is the number N of training points.")
    n_samples = positive_int(n_samples, "n_samples", "It is the number of bootstrap samples.")
    S = positive_S(S)
    if scheme not in SCHEMES:
        raise ValueError(f"`scheme` must be one of {SCHEMES}, got {scheme!r}.")
    if scheme == "multinomial" and S != round(S):
        raise ValueError(f"With scheme='multinomial' `S` is the fixed sample size and must be a "
                         f"whole number, got {S}. Round it, or use scheme='poisson' (S = mean).")
    return n_inputs, S, n_samples, scheme
