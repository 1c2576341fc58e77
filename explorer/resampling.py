"""Bootstrap occupation numbers s = (s_1, ..., s_N), eqs. (10)-(11) of [MO03] and eq. (7) of [MO03b].

Every paper's Monte-Carlo draws its resamples here: Poisson occupation numbers (the factorising weight
W(s)) or multinomial ones (fixed sample size S).

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np

from explorer.chunks import SeedLike, item_generator, root_seed, s_over_n_group
from explorer.validation import positive_int, positive_S

__all__ = ["SCHEMES", "occupation_args", "occupation_numbers", "sample_occupations", "check_occupations"]

SCHEMES = ("poisson", "multinomial")


def occupation_numbers(n_inputs: int, S: float, n_samples: int, *, scheme: str = "poisson",
                       rng: SeedLike = None) -> np.ndarray:
    """Occupation numbers s of ``n_samples`` bootstrap samples of N = ``n_inputs`` points.

    ``"poisson"``: s_i ~ Poisson(S/N) independently, the factorising weight W(s) of eq. (11) of
    [MO03] (sample size Poisson with mean S). ``"multinomial"``: S points drawn with replacement,
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
    rng : int, SeedSequence, Generator or None, optional
        Root seed (``chunks.root_seed``). Sample b is drawn from its own generator
        ``chunks.item_generator(root, chunks.s_over_n_group(S / n_inputs), b)``, exactly as the Monte-Carlo
        bootstraps draw their samples, so the occupations of ``bootstrap_predictions(..., rng=seed)`` equal
        ``occupation_numbers(..., rng=seed)``, and sample b at one S/N is sample b of every learning curve
        through that S/N.

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
    n_inputs, S, n_samples, scheme = occupation_args(n_inputs, S, n_samples, scheme)
    return sample_occupations(n_inputs, S, scheme, root_seed(rng), 0, 0, n_samples)


def sample_occupations(n_inputs: int, S: float, scheme: str, root: np.random.SeedSequence, group: int,
                       start: int, stop: int) -> np.ndarray:
    """Occupation numbers of samples ``start`` .. ``stop - 1`` at S/N = S / ``n_inputs`` of a seeded job.

    Sample b is drawn from ``chunks.item_generator(root, chunks.s_over_n_group(S / n_inputs), b)`` alone: it
    depends on the seed, the S/N and b only, so any split of a job into chunks, any list of S/N around this
    one, its order, and any command (CLI, library, app) draw the same samples. Arguments are not checked (see
    :func:`occupation_numbers`).

    Parameters
    ----------
    n_inputs : int
        Number N of points.
    S : float
        Mean (Poisson) or fixed (multinomial) sample size.
    scheme : {"poisson", "multinomial"}
        Resampling model.
    root : numpy.random.SeedSequence
        Root seed of the job.
    group : int
        The caller's group (the index of S on a learning curve); it does not choose the draws, the S/N does.
    start, stop : int
        The samples' range.

    Returns
    -------
    ndarray of int of shape (stop - start, n_inputs)
    """
    key = s_over_n_group(S / n_inputs)
    rows = [_draw_occupations(n_inputs, S, 1, scheme, item_generator(root, key, b)) for b in range(start, stop)]
    return np.concatenate(rows) if rows else np.zeros((0, n_inputs), dtype=np.int64)


def _draw_occupations(n_inputs, S, n_samples, scheme, rng: np.random.Generator) -> np.ndarray:
    if scheme == "poisson":
        return rng.poisson(S / n_inputs, size=(n_samples, n_inputs))  # eq. (11)
    return rng.multinomial(int(S), np.full(n_inputs, 1.0 / n_inputs), size=n_samples)


def occupation_args(n_inputs: int, S: float, n_samples: int, scheme: str) -> tuple[int, float, int, str]:
    """The checked arguments of a bootstrap of ``n_samples`` samples of mean (Poisson) or fixed
    (multinomial) size S from N = ``n_inputs`` points; ValueError naming the first one that is wrong."""
    n_inputs = positive_int(n_inputs, "n_inputs", "It is the number N of training points.")
    n_samples = positive_int(n_samples, "n_samples", "It is the number of bootstrap samples.")
    S = positive_S(S)
    if scheme not in SCHEMES:
        raise ValueError(f"`scheme` must be one of {SCHEMES}, got {scheme!r}.")
    if scheme == "multinomial" and S != round(S):
        raise ValueError(f"With scheme='multinomial' `S` is the fixed sample size and must be a "
                         f"whole number, got {S}. Round it, or use scheme='poisson' (S = mean).")
    return n_inputs, S, n_samples, scheme


def check_occupations(occupations, n_inputs: int, matrix: str = "K") -> np.ndarray:
    """Given occupation numbers s as int64, shape (N,) or (n_samples, N), or a ValueError naming ``matrix``.

    Parameters
    ----------
    occupations : array_like of shape (N,) or (n_samples, N)
        s_i copies of training point i in each sample: non-negative whole numbers.
    n_inputs : int
        N, the number of training inputs of ``matrix``.
    matrix : str
        The name of the kernel operand they must match in messages (``K``, ``phi``).

    Returns
    -------
    ndarray of int64
        The occupation numbers, same shape.
    """
    occ = np.asarray(occupations)
    if occ.ndim not in (1, 2) or occ.shape[-1] != n_inputs:
        raise ValueError(f"`occupations` must have shape ({n_inputs},) or (n_samples, {n_inputs}) "
                         f"to match `{matrix}`, got shape {occ.shape}.")
    whole = np.issubdtype(occ.dtype, np.integer) or np.all(occ == np.round(occ))
    if not whole or np.any(occ < 0):
        raise ValueError("`occupations` must be non-negative integers (s_i copies of point i), got "
                         f"values in [{occ.min()}, {occ.max()}] of dtype {occ.dtype}.")
    return occ.astype(np.int64)
