r"""The Monte-Carlo bootstrap on the chunked operator: weighted m-dimensional solves, Efron's estimator streamed.

Sample b at S/N refits the low-rank GP on its occupation numbers s (s copies at σ² are one point at σ²/s, [MO03]
sec. 5): A_s = I_m + Φᵀ diag(w) Φ, μ_s = A_s⁻¹ Φᵀ(w ∘ y), w = s/σ², f(x; s) = φ(x)ᵀ μ_s — the arithmetic of
:meth:`explorer.operators.features.FeatureKernel.posterior_weights`, with Φᵀ diag(w) Φ and Φᵀ(w ∘ y) summed over the
chunks in chunk order. A batch of samples costs two passes: the chunks' (batch, m, m) and (batch, m) pieces, then
each chunk's left-out losses given the batch's μ (no sample's predictions are kept). Efron's estimate and its
delta-method standard error are those of the streamed reduction of :mod:`explorer.gp_bootstrap.montecarlo`
(n_i counted first, the losses summed, then Y_b from the occupations drawn again).

**Seeds.** Occupations are Poisson(S/N) (the ``"poisson"`` scheme). Sample b draws the occupations of row block j
(fixed blocks of :data:`OCCUPATION_BLOCK` rows) from ``chunks.child_seed(root, chunks.s_over_n_group(S/N), b, j)``,
so they are the same whatever the chunks and the workers; a chunk draws the blocks it overlaps. They are not the
occupations of the in-memory Monte-Carlo (which draws the N-vector of sample b from one generator: a chunk would
have to draw all N to find its rows) — the same distribution, other draws. The numbers are identical whatever the
workers (chunk order), and equal to round-off whatever the chunk size (the sums over rows in another grouping).

Runtime module: numpy and scipy (and the core's seeds and estimates).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from explorer.chunks import child_seed, root_seed, s_over_n_group
from explorer.distributed import passes

__all__ = ["OCCUPATION_BLOCK", "BATCH", "ChunkedMonteCarlo", "block_occupations", "row_occupations",
           "weighted_systems", "weighted_refit_means",
           "chunked_bootstrap_error"]

#: Rows whose occupations one sample draws from one child seed.
OCCUPATION_BLOCK = 65_536

#: Samples refitted per pass (each chunk returns batch × m × m numbers: 4 MB at 32 and m = 128).
BATCH = 32


def block_occupations(root: np.random.SeedSequence, group: int, sample: int, block: int, n: int, nu: float
                      ) -> np.ndarray:
    """Poisson(ν) occupations of the rows of block ``block`` (of N = ``n``) in sample ``sample``."""
    rows = max(0, min(OCCUPATION_BLOCK, n - block * OCCUPATION_BLOCK))
    return np.random.default_rng(child_seed(root, group, sample, block)).poisson(nu, rows)


def row_occupations(root, group: int, samples: range, start: int, stop: int, n: int, nu: float) -> np.ndarray:
    """Occupations of rows ``start`` .. ``stop − 1`` in each of ``samples``, shape (len(samples), stop − start)."""
    first, last = start // OCCUPATION_BLOCK, (stop - 1) // OCCUPATION_BLOCK
    out = np.empty((len(samples), stop - start), dtype=np.int64)
    for r, b in enumerate(samples):
        pieces = [block_occupations(root, group, b, j, n, nu) for j in range(first, last + 1)]
        out[r] = np.concatenate(pieces)[start - first * OCCUPATION_BLOCK:stop - first * OCCUPATION_BLOCK]
    return out


# ------------------------------------------------------------------------------------------- on a worker


def _left_out_count(part, fmap, y, start, stop, n, nu, root, group, n_samples) -> np.ndarray:
    return (row_occupations(root, group, range(n_samples), start, stop, n, nu) == 0).sum(axis=0)


def weighted_systems(phi: np.ndarray, occ: np.ndarray, y: np.ndarray, noise_var: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """For each row s of the occupations ``occ`` (samples × the chunk's rows): Φ_cᵀ diag(w) Φ_c and Φ_cᵀ(w ∘ y_c),
    w = s/σ² (the chunk's pieces of a weighted refit's M×M system A_s and its right-hand side)."""
    m = phi.shape[1]
    A, rhs = np.zeros((len(occ), m, m)), np.zeros((len(occ), m))
    for r, s in enumerate(occ):
        a = np.flatnonzero(s)
        w = s[a] / noise_var
        P = phi[a]
        rhs[r] = P.T @ (w * y[a])
        P = P * np.sqrt(w)[:, None]
        A[r] = P.T @ P
    return A, rhs


def weighted_refit_means(A: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The weights μ_s of each weighted refit from its summed pieces: A_s = I_m + Φᵀ diag(w) Φ (⪰ I, so Cholesky
    without jitter), μ_s = A_s⁻¹ Φᵀ(w ∘ y). ``A`` (samples × m × m) gains its identity in place."""
    mu = np.empty(rhs.shape)
    for r in range(len(rhs)):
        A[r][np.diag_indices(A.shape[1])] += 1.0
        mu[r] = linalg.cho_solve(linalg.cho_factor(A[r], lower=True, check_finite=False), rhs[r],
                                 check_finite=False)
    return mu


def _weighted_systems(part, fmap, y, start, stop, n, nu, root, group, samples, noise_var):
    """For each sample of the batch: Φ_cᵀ diag(w) Φ_c and Φ_cᵀ(w ∘ y_c), w = s/σ² (the chunk's pieces of A_s)."""
    phi = passes.features(part, fmap)
    return weighted_systems(phi, row_occupations(root, group, samples, start, stop, n, nu), y, noise_var)


def _left_out_losses(part, fmap, y, start, stop, n, nu, root, group, samples, mu, n_test):
    """Σ_b δ_bi (f_b(x_i) − y_i)² per row (n_c,) and X_b = Σ_i δ_bi (f_b − y_i)²/n_i per sample (batch,)."""
    phi = passes.features(part, fmap)
    occ = row_occupations(root, group, samples, start, stop, n, nu)
    sums, x = np.zeros(y.size), np.zeros(len(samples))
    for r, s in enumerate(occ):
        out = np.flatnonzero(s == 0)
        losses = (phi[out] @ mu[r] - y[out]) ** 2
        sums[out] += losses
        x[r] = np.sum(losses / n_test[out])
    return sums, x


def _left_out_ratio_sums(part, fmap, y, start, stop, n, nu, root, group, n_samples, ratio) -> np.ndarray:
    """Y_b = Σ_{i in chunk} [s_bi = 0] R_i/n_i for every sample."""
    occ = row_occupations(root, group, range(n_samples), start, stop, n, nu)
    return (occ == 0) @ ratio


# ------------------------------------------------------------------------------------------- here


@dataclass(frozen=True)
class ChunkedMonteCarlo:
    """Efron's Monte-Carlo estimate of ε(S) (eq. 17 of [MO03]) on the chunks, its standard error and the counts."""

    s_over_n: float
    value: float
    se: float
    n_samples: int
    per_input: np.ndarray
    n_test: np.ndarray


def chunked_bootstrap_error(op, y: np.ndarray, noise_var: float, S: float, n_samples: int, *, rng=0,
                            batch: int = BATCH) -> ChunkedMonteCarlo:
    """The Monte-Carlo bootstrap test error ε(S), square loss, of ``n_samples`` refits on the chunked operator
    ``op`` (see the module docstring): 2 + 2·⌈B/batch⌉ passes over the data."""
    n = op.n
    nu = S / n
    root, group = root_seed(rng), s_over_n_group(nu)
    o = op.rows.offsets
    bounds = [(int(o[c]), int(o[c + 1])) for c in range(len(op.parts))]

    def run(task, per_chunk_extra, *shared):
        client = op.client
        small = [client.submit(passes.value, a, pure=False) for a in shared]
        futures = [client.submit(task, part, op._fmap(), y_c, a, b, n, nu, root, group, *small, *extra, pure=False)
                   for part, y_c, (a, b), extra in zip(op.parts, op.rows.split(y), bounds, per_chunk_extra)]
        op.passes_made["passes"] += 1
        try:
            return client.gather(futures)
        finally:
            client.cancel(futures + small)

    none = [()] * len(bounds)
    n_test = np.concatenate(run(_left_out_count, none, n_samples))
    sums, x = np.zeros(n), np.zeros(n_samples)
    for start in range(0, n_samples, batch):
        samples = range(start, min(start + batch, n_samples))
        pieces = run(_weighted_systems, none, samples, noise_var)
        A = passes_sum([p[0] for p in pieces])
        rhs = passes_sum([p[1] for p in pieces])
        mu = weighted_refit_means(A, rhs)
        losses = run(_left_out_losses, [(t,) for t in op.rows.split(n_test)], samples, mu)
        sums += np.concatenate([p[0] for p in losses])
        x[start:start + len(samples)] = passes_sum([p[1] for p in losses])
    used = n_test > 0
    per_input = np.full(n, np.nan)
    per_input[used] = sums[used] / n_test[used]                           # eq. (17), ratio per input
    ratio = np.where(used, per_input, 0.0) / np.maximum(n_test, 1)
    y_b = passes_sum(run(_left_out_ratio_sums, [(r,) for r in op.rows.split(ratio)], n_samples))
    psi = (x - y_b) * (n_samples / used.sum())
    se = float(np.sqrt(psi @ psi / (n_samples * (n_samples - 1)))) if n_samples > 1 else float("nan")
    return ChunkedMonteCarlo(nu, float(per_input[used].mean()), se, n_samples, per_input, n_test)


def passes_sum(pieces: list) -> np.ndarray:
    """Σ pieces in the order given (chunk order)."""
    total = np.array(pieces[0], copy=True)
    for piece in pieces[1:]:
        total += piece
    return total
