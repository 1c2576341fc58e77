"""The occupation numbers of the bootstrap in the replica theory of [MO03]: the Poisson weights of eq. (11), the series
of eqs. (51), (55) without cancellation, and the 1-D root of eqs. (61)-(62) that starts the iteration (Appendix A.2).

Core module: numpy and scipy only.
"""
from __future__ import annotations

import numpy as np
from scipy import optimize, stats

__all__ = ['SERIES_TAIL', 'ROW_BLOCK', 'row_blocks', 'poisson_weights', 'update_delta_lambda', 'root_delta_lambda']


#: Tail mass of the Poisson occupation distribution dropped from the series of eqs. (51), (55), (60).
SERIES_TAIL = 1e-16


def poisson_weights(v: float, tail: float = SERIES_TAIL) -> np.ndarray:
    """Weights p_k = v^k e^(−v)/k!, k = 0..k_max, with the dropped tail mass below ``tail`` (eq. 11).

    Parameters
    ----------
    v : float
        The Poisson mean S/N, positive.
    tail : float
        Largest tail mass P(k > k_max) that is dropped.

    Returns
    -------
    ndarray of shape (k_max + 1,)
        p_0 .. p_k_max, renormalised to sum to one.

    Raises
    ------
    ValueError
        If ``v`` is not a positive finite number.
    """
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"`v` = S/N must be positive, got {v}.")
    k_max = int(stats.poisson.isf(tail, v)) + 1
    p = stats.poisson.pmf(np.arange(k_max + 1), v)
    return p / p.sum()


#: Sites whose (sites × terms) arrays of the series over k are formed at once: the series are row-wise, so blocks
#: change no number, and the temporaries stay at ROW_BLOCK·(k_max + 1) doubles (~10 MB) instead of growing with N
#: (160 bytes a site each at S/N = 1: 1.6 GB per array at N = 10⁷, where the rows are in chunks on a cluster).
ROW_BLOCK = 65_536


def row_blocks(n: int, block: int = ROW_BLOCK):
    """Slices of ``block`` consecutive rows covering n: an elementwise step on them needs no temporary of size N (where
    N is large, with the rows in chunks on a cluster, the N-vectors this process holds are its memory)."""
    return (slice(start, start + block) for start in range(0, n, block))


def update_delta_lambda(dl_c: np.ndarray, p: np.ndarray, noise_var: float, out: np.ndarray | None = None) -> np.ndarray:
    """Eq. (55): Δλ = (Σ_k p_k/(Δλ_c + k/σ²))⁻¹ − Δλ_c, written as Δλ_c (1 − q)/q with q = Σ_k p_k Δλ_c/(Δλ_c + k/σ²)
    and 1 − q summed as its own series (eqs. 51, 55: no cancellation), a block of ROW_BLOCK rows at a time.

    ``out`` (may be ``dl_c`` itself: each block is read before it is written) receives the result; by default a new
    array. Where N is large the N-vectors are the memory: q and 1 − q never exist whole.
    """
    kc = np.arange(p.size) / noise_var
    out = np.empty(dl_c.shape) if out is None else out
    for start in range(0, dl_c.size, ROW_BLOCK):
        rows = slice(start, start + ROW_BLOCK)
        a = dl_c[rows, None]
        q = (p * (a / (a + kc))).sum(axis=1)
        update = (p * (kc / (a + kc))).sum(axis=1)  # 1 − q
        update *= dl_c[rows]
        update /= q
        out[rows] = update
    return out


def root_delta_lambda(omega: np.ndarray, P: float, n: int, noise_var: float, S: float) -> float:
    """The 1-D root of eqs. (61)-(62) given the kernel eigenvalues ω (see initial_delta_lambda)."""
    p = poisson_weights(S / n)
    kc = np.arange(p.size) / noise_var

    def excess(log_dl: float) -> float:
        dl = np.exp(log_dl)
        G = P / n * np.sum(omega / (1 + omega * dl))  # eq. (61)
        a = 1 - P / n * np.sum(omega * dl / (1 + omega * dl))  # = 1 − G Δλ, without cancellation
        return float(np.sum(p / (a + G * kc)) - 1.0)  # eq. (62)

    lo, hi = -30.0, 5.0
    while excess(hi) < 0 and hi < 60:
        hi += 5.0
    if excess(lo) > 0 or excess(hi) < 0:
        raise ValueError("Could not bracket the start value of Δλ (eqs. 61-62); is K a kernel matrix?")
    return float(np.exp(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12)))

