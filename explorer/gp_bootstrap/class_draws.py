"""A class draws together: each student's resamples of the step-by-step problem, seeded so that a class can be
replayed, and what the pooled draws are compared with: the replica theory's Poisson mixture of Gaussians for the
prediction f_i at point i, [MO03] eq. (60), as on the step-by-step page's histogram.

Student k's draw j of round r in a room of seed s is resample j of the seed sequence
``SeedSequence(s, spawn_key=(r, k))`` (:func:`student_seed`): the resample
:func:`~explorer.gp_bootstrap.steps.draw_resamples` draws as its sample j from that root, so a class is replayed draw
for draw from the room seed, whatever order the students pressed their buttons in.

The pooled summary a room keeps is bounded whatever the class does: a histogram on fixed bins
(:func:`class_bins`, the eq. (60) mixture's range; values outside count in the end bins), the number, sum and sum
of squares of the values, and the number of draws that left point i out (:class:`PooledDraws`). Its moments are
compared with the mixture's (:func:`mixture_moments`).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from explorer.bootstrap import replica
from explorer.gp_bootstrap import steps

__all__ = ["ClassProblem", "StudentDraws", "PooledDraws", "student_seed", "draw_for_student", "class_bins",
           "mixture_moments", "mixture_density", "pool", "pooled_moments", "N_BINS"]

#: Bins of a round's pooled histogram.
N_BINS = 40


@dataclass(frozen=True)
class ClassProblem:
    """What a room's round draws: the GP problem of the step-by-step page and the replica solution at S/N.

    Attributes
    ----------
    K : ndarray of shape (N, N)
        Prior covariance of the training inputs.
    y : ndarray of shape (N,)
        Targets.
    noise_var : float
        Noise variance σ², eq. (50).
    s_over_n : float
        Bootstrap size S/N (each point comes s_i ~ Poisson(S/N) times).
    index : int
        The point i whose prediction f_i every draw reports.
    solution : ReplicaSolution
        ADATAP at S/N: the eq. (60) mixture at point i.
    x : ndarray of shape (N,)
        The 1-D inputs (for drawing a student's resample).
    grid : ndarray of shape (M,)
        Inputs on which a student's fitted GP mean is drawn.
    K_grid : ndarray of shape (M, N)
        Prior covariance between ``grid`` and the training inputs.
    settings : tuple of (str, str)
        The settings in words ("Kernel", "se"), as the pages show them and the CSV export lists them.
    """

    K: np.ndarray
    y: np.ndarray
    noise_var: float
    s_over_n: float
    index: int
    solution: replica.ReplicaSolution
    x: np.ndarray
    grid: np.ndarray
    K_grid: np.ndarray
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def n(self) -> int:
        """Number N of training points."""
        return int(self.y.shape[0])


@dataclass(frozen=True)
class StudentDraws:
    """Draws ``start`` .. ``start + B − 1`` of one student.

    Attributes
    ----------
    start : int
        Index j of the first draw.
    values : ndarray of shape (B,)
        f_i of each resample's GP mean.
    multiplicity : ndarray of int of shape (B,)
        s_i: how often each resample drew point i.
    last_occupations : ndarray of int of shape (N,)
        s of the last resample.
    last_curve : ndarray of shape (M,)
        The last resample's GP mean on the problem's grid.
    """

    start: int
    values: np.ndarray
    multiplicity: np.ndarray
    last_occupations: np.ndarray
    last_curve: np.ndarray


@dataclass(frozen=True)
class PooledDraws:
    """The pooled summary of a round: ``counts`` per bin of ``edges``, and the moments of the values.

    Attributes
    ----------
    edges : ndarray of shape (n_bins + 1,)
    counts : ndarray of int of shape (n_bins,)
    n : int
        Number of draws pooled.
    total, total_sq : float
        Sum and sum of squares of the values.
    left_out : int
        Draws whose resample left point i out (s_i = 0).
    """

    edges: np.ndarray
    counts: np.ndarray
    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    left_out: int = 0


def student_seed(room_seed: int, round_index: int, student: int) -> np.random.SeedSequence:
    """The root seed of student ``student``'s draws in round ``round_index`` of a room of seed ``room_seed``.

    Examples
    --------
    >>> student_seed(7, 0, 3).spawn_key
    (0, 3)
    """
    if min(int(round_index), int(student)) < 0:
        raise ValueError(f"`round_index` and `student` must be >= 0, got {round_index} and {student}.")
    return np.random.SeedSequence(int(room_seed), spawn_key=(int(round_index), int(student)))


def draw_for_student(problem: ClassProblem, room_seed: int, round_index: int, student: int, start: int,
                     n: int) -> StudentDraws:
    """Draws ``start`` .. ``start + n − 1`` of a student: resamples of :func:`student_seed` and f_i of each fit.

    Parameters
    ----------
    problem : ClassProblem
    room_seed, round_index, student : int
        As in :func:`student_seed`.
    start : int
        The student's number of draws so far (index j of the first new one).
    n : int
        Number of draws, >= 1.

    Returns
    -------
    StudentDraws
    """
    if int(n) < 1:
        raise ValueError(f"`n` must be at least 1, got {n}.")
    seed = student_seed(room_seed, round_index, student)
    last = steps.draw_resamples(problem.K, problem.y, problem.noise_var, problem.s_over_n, int(start),
                                int(start) + int(n), rng=seed, K_test=problem.K_grid)
    i = problem.index
    return StudentDraws(int(start), last.train[:, i], last.occupations[:, i], last.occupations[-1],
                        last.test[-1])


def class_bins(problem: ClassProblem, n_bins: int = N_BINS) -> np.ndarray:
    """Fixed bin edges of a round: the eq. (60) mixture's range at point i (component means ± 4 sd)."""
    return steps.histogram_edges(problem.solution, problem.index, n_bins=n_bins)


def pool(pooled: PooledDraws, values: ArrayLike, multiplicity: ArrayLike) -> PooledDraws:
    """``pooled`` with ``values`` (f_i of more draws; s_i of each in ``multiplicity``) added; values outside the
    edges count in the end bins."""
    values = np.asarray(values, dtype=float).reshape(-1)
    edges = pooled.edges
    bins = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, edges.size - 2)
    counts = pooled.counts + np.bincount(bins, minlength=edges.size - 1)
    return PooledDraws(edges, counts, pooled.n + values.size, pooled.total + float(values.sum()),
                       pooled.total_sq + float(values @ values),
                       pooled.left_out + int(np.count_nonzero(np.asarray(multiplicity) == 0)))


def pooled_moments(pooled: PooledDraws) -> tuple[float, float]:
    """Mean and standard deviation (ddof = 1) of the pooled values; NaN where there are too few."""
    if pooled.n == 0:
        return float("nan"), float("nan")
    mean = pooled.total / pooled.n
    if pooled.n == 1:
        return mean, float("nan")
    var = max(pooled.total_sq - pooled.n * mean * mean, 0.0) / (pooled.n - 1)
    return mean, float(np.sqrt(var))


def mixture_moments(sol: replica.ReplicaSolution, i: int) -> tuple[float, float]:
    """Mean and standard deviation of the eq. (60) mixture at point i: Σ p_k m_k and
    √(Σ p_k (sd_k² + m_k²) − mean²), with the weights renormalised over the components kept."""
    mix = replica.mixture_components(sol, i)
    w = mix.weights / mix.weights.sum()
    mean = float(w @ mix.means)
    var = float(w @ (mix.sds ** 2 + mix.means ** 2)) - mean * mean
    return mean, float(np.sqrt(max(var, 0.0)))


def mixture_density(sol: replica.ReplicaSolution, i: int, h: ArrayLike) -> np.ndarray:
    """The eq. (60) mixture's density at the values ``h`` of f_i: Σ_k p_k N(h; m_k, sd_k²); ndarray like ``h``.
    (With K ∝ I the components are point masses: zeros.)"""
    mix = replica.mixture_components(sol, i)
    h = np.asarray(h, dtype=float)
    if mix.sds[0] <= 0:
        return np.zeros_like(h)
    z = (h[..., None] - mix.means) / mix.sds
    return (np.exp(-0.5 * z * z) / (np.sqrt(2 * np.pi) * mix.sds)) @ mix.weights
