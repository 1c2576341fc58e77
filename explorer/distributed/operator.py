r"""The chunked implementation of :class:`~explorer.operators.KernelOperator`: K = ΦΦᵀ with Φ's rows on the workers.

:class:`ChunkedFeatureKernel` offers what :class:`~explorer.operators.features.FeatureKernel` offers, with the same
arithmetic (A = I + ΦᵀDΦ = LLᵀ, Ψ = ΦL⁻ᵀ, G = ΨΨᵀ; the module docstring of :mod:`explorer.operators.features`),
each O(N m²) step a *pass* over the chunks (:mod:`explorer.distributed.passes`):

* a reduction — each chunk returns an m×m matrix or an m-vector (Φ_cᵀDΦ_c, Ψ_cᵀv_c, ...) and this process adds
  them **in chunk-index order**, whatever order they finished in, so the numbers do not depend on the workers; each
  chunk's piece is one Dask future, so a chunk that Dask computes again after losing a worker is counted once;
* a map — each chunk returns its rows of an N-vector (diag G, G v, (G∘G) v), concatenated here.

What travels: the feature map (landmarks and the m×m factor C, :mod:`explorer.distributed.feature_maps`) once per
operator; per pass the m×m factor L (one small task the chunks depend on, so it is sent once to each worker) and,
when the step needs one, each chunk's piece of an N-vector (Δλ, v); back, m×m pieces or the chunk's rows.

**Where the N-vectors live.** In this process: the theory of :mod:`explorer.bootstrap` is written once on numpy
arrays (Δλ, Δλ_c, γ, λ, m, ..., the Anderson history of eqs. (54)-(55), the conjugate-gradient vectors of eq. (57));
making them chunked arrays would mean a second theory. Each costs 8 N bytes (80 MB at N = 10⁷), and the theory forms
them in place and when needed, so that about 12 are alive at once at the default Anderson memory of 5
(``tests/distributed/test_memory.py`` measures the slope of this process's peak in N); a map's rows are copied into
place as each chunk's piece arrives (:meth:`ChunkedFeatureKernel._rows`), never all the pieces beside their
concatenation. ``benchmarks/bench_distributed.py`` measures the client's peak at N = 10⁷.

**Φ on the workers or computed again.** With ``hold_features`` the workers keep Φ's chunks (8 N m bytes over the
cluster: 1 GB at N = 10⁶, m = 128) and each pass reads them; without, each pass computes Φ_c from X_c (kernel values
N m d and a triangular solve N m²: about the cost of the pass itself). ``"auto"`` holds them when they take at most
:data:`HOLD_FRACTION` of the workers' memory limit.

**The same numbers.** Equal to :class:`FeatureKernel` on the same Φ to round-off (the sums over rows are added in
another order: 1e-10 relative on every quantity, tested on N = 20,000); identical, bit for bit, whatever the number
of workers, the order in which chunks finish, and a worker lost and its chunks computed again.

**Faults.** A worker that dies: Dask computes its chunks again elsewhere (the rows are the results of tasks, never
scattered data) and the numbers are unchanged; a chunk whose workers die :data:`ALLOWED_FAILURES` times stops the
theory with :class:`~explorer.runtime.engine.EngineError` (one sentence). Interrupted (Ctrl-C, a cancelled job),
every pass cancels its tasks before the exception leaves it: a chunk already running finishes (Dask does not stop a
running task; a chunk takes a fraction of a second to seconds), nothing else starts.

Runtime module: numpy, scipy and dask/distributed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import linalg

from explorer.distributed import passes
from explorer.distributed.feature_maps import FeatureMap
from explorer.distributed.responses import ChunkedResponses
from explorer.distributed.rows import RowChunks
from explorer.operators.features import DENSE_FALLBACK_MAX_N, SITE_FLOOR, NeverJittered, solve_hadamard_system
from explorer.progress import NO_HOOKS
from explorer.runtime.engine import EngineError

__all__ = ["HOLD_FRACTION", "ALLOWED_FAILURES", "ChunkedFeatureKernel", "ChunkedSitePosterior", "worker_memory"]

#: ``hold_features="auto"`` keeps Φ on the workers when its chunks take at most this fraction of their memory limit.
HOLD_FRACTION = 0.4

#: Times a chunk may lose its worker before the theory stops (Dask's ``distributed.scheduler.allowed-failures``).
ALLOWED_FAILURES = 3


def worker_memory(client) -> tuple[int, int]:
    """(workers, smallest memory limit in bytes; 0 if a worker has none) of the cluster of ``client``."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    limits = [int(w.get("memory_limit") or 0) for w in workers.values()]
    return len(limits), (min(limits) if limits else 0)


def _ordered_sum(pieces: list) -> Any:
    """Σ pieces, added in the order given (chunk order): the same bits whatever order the chunks finished in."""
    total = np.array(pieces[0], copy=True)
    for piece in pieces[1:]:
        total += piece
    return total


def _floored(G_diag: np.ndarray) -> np.ndarray:
    """diag G floored at SITE_FLOOR times its largest, in place (the same numbers as ``np.maximum`` into a copy)."""
    return np.maximum(G_diag, SITE_FLOOR * G_diag.max(), out=G_diag)


@dataclass(frozen=True, eq=False)
class ChunkedFeatureKernel(ChunkedResponses, NeverJittered):
    """K = ΦΦᵀ with Φ = φ(X) computed on the workers from the chunks of X they hold (see the module docstring).

    Build it with :meth:`of`. Attributes: ``rows`` (the chunks of (X, y)), ``feature_map`` (φ), ``dtype`` (the
    precision of the passes), ``held`` (whether the workers hold Φ), ``passes_made`` (a count of passes over the
    data, for benchmarks).
    """

    rows: RowChunks = field(repr=False)
    feature_map: FeatureMap = field(repr=False)
    map_future: Any = field(repr=False)
    parts: list = field(repr=False)
    held: bool
    dtype: Any = np.float64
    passes_made: dict = field(default_factory=lambda: {"passes": 0}, repr=False, compare=False)
    closing: str = "fixed-point"
    name: str = "phi"

    @classmethod
    def of(cls, rows: RowChunks, feature_map: FeatureMap, *, hold_features: bool | str = "auto") -> ChunkedFeatureKernel:
        """The operator of the features ``feature_map`` of the rows ``rows``, checked: every row finite, Φ not all
        zeros (as :func:`~explorer.operators.features.check_feature_matrix`); a ValueError saying which."""
        client = rows.client
        if rows.n < 2:
            raise ValueError(f"Need at least 2 training points, got {rows.n}.")
        bad = rows.count_non_finite()
        if bad:
            raise ValueError(f"{bad} rows have a NaN or infinite input or target. Clean the data first.")
        if hold_features == "auto":
            workers, limit = worker_memory(client)
            need = 8 * rows.n * feature_map.rank
            hold_features = bool(limit) and need <= HOLD_FRACTION * limit * max(workers, 1)
        map_future = client.submit(passes.value, feature_map, pure=False)
        if hold_features:
            parts = client.map(passes.features, rows.parts, [map_future] * len(rows.parts), pure=False)
        else:
            parts = list(rows.parts)
        op = cls(rows, feature_map, map_future, parts, bool(hold_features))
        if not np.any(op.spectrum()[0]):
            raise ValueError("`phi` is all zeros, so the kernel ΦΦᵀ is 0 and no input is learnt. Check the features.")
        return op

    # ------------------------------------------------------------------------------------------- running passes

    @property
    def client(self):
        return self.rows.client

    def _fmap(self):
        return None if self.held else self.map_future

    def _run(self, task, shared: tuple = (), per_chunk: tuple = ()) -> list:
        """``task(part_c, fmap, *shared, *pieces_c)`` on every chunk; the results in chunk order.

        ``shared`` (small arrays) go to the workers as one task each; ``per_chunk`` are N-vectors (or None), cut
        into the chunks' pieces. Cancels the pass's tasks if anything interrupts it.
        """
        return self._collect(task, shared, per_chunk, lambda futures: self.client.gather(futures))

    def _collect(self, task, shared: tuple, per_chunk: tuple, collect):
        """Submit a pass and ``collect(futures)`` its results (see :meth:`_run`)."""
        client, n = self.client, len(self.parts)
        small = [client.submit(passes.value, a, pure=False) for a in shared]
        pieces = [[None] * n if v is None else self.rows.split(v) for v in per_chunk]
        futures = client.map(task, self.parts, [self._fmap()] * n, *([s] * n for s in small), *pieces, pure=False)
        del pieces
        self.passes_made["passes"] += 1
        try:
            return collect(futures)
        except Exception as exc:
            from distributed.scheduler import KilledWorker

            if isinstance(exc, KilledWorker):
                raise EngineError(f"A chunk of rows lost its Dask worker {ALLOWED_FAILURES} times (out of memory, or "
                                  "stopped); the theory was given up. Give the workers more memory or use smaller "
                                  "--chunk-rows.") from None
            raise
        finally:
            client.cancel(futures + small)

    def _reduce(self, task, shared: tuple = (), per_chunk: tuple = ()):
        return _ordered_sum(self._run(task, shared, per_chunk))

    def _rows(self, task, shared: tuple = (), per_chunk: tuple = ()) -> np.ndarray:
        """The N-vector whose chunks' rows ``task`` returns, each chunk's piece copied into place as it arrives
        (never all the pieces and their concatenation at once: one N-vector here, not two)."""
        from distributed import as_completed

        offsets = self.rows.offsets

        def fill(futures: list) -> np.ndarray:
            chunk_of = {f.key: c for c, f in enumerate(futures)}
            out = None
            for future, piece in as_completed(futures, loop=self.client.loop, with_results=True):
                c = chunk_of[future.key]
                if out is None:
                    out = np.empty((self.n,) + piece.shape[1:], dtype=piece.dtype)
                out[offsets[c]:offsets[c + 1]] = piece
                del piece
            return out

        return self._collect(task, shared, per_chunk, fill)

    # -------------------------------------------------------------------------------------- the operator protocol

    @property
    def n(self) -> int:
        """N, the number of training inputs."""
        return self.rows.n

    @property
    def rank(self) -> int:
        """m, the number of features."""
        return self.feature_map.rank

    def factor(self, dl: np.ndarray | None) -> np.ndarray:
        """L, the lower Cholesky factor of A = I + ΦᵀDΦ in the operator's precision (one pass)."""
        A = self._reduce(passes.gram, (self.dtype,), (dl,))
        A[np.diag_indices_from(A)] += 1.0
        return linalg.cholesky(A, lower=True, check_finite=False)

    def spectrum(self, subset: int | str | None = None, rng=0) -> tuple[np.ndarray, float]:
        """The exact non-zero eigenvalues of ΦΦᵀ (those of the m×m ΦᵀΦ, one pass) and P = 1."""
        return np.clip(linalg.eigvalsh(self._reduce(passes.gram, (np.float64,), (None,))), 0.0, None), 1.0

    def in_precision(self, dtype) -> ChunkedFeatureKernel:
        """The same chunks, each pass computing in ``dtype``."""
        return ChunkedFeatureKernel(self.rows, self.feature_map, self.map_future, self.parts, self.held,
                                    np.dtype(dtype).type, self.passes_made)

    def site_variances(self, dl: np.ndarray, keep: dict | None = None) -> np.ndarray:
        """diag G at Δλ (eq. 54), floored at SITE_FLOOR times its largest (two passes); ``keep`` remembers L."""
        L = self.factor(dl)
        G_diag = _floored(self._rows(passes.site_diagonal, (L,)))
        if keep is not None:
            keep["dl"], keep["L"], keep["G_diag"] = dl, L, G_diag
        return G_diag

    def site_posterior(self, dl: np.ndarray, keep: dict | None = None) -> ChunkedSitePosterior:
        """G = ΨΨᵀ at Δλ in double precision, L reused from ``keep`` if it was remembered at the same Δλ."""
        if keep and np.array_equal(keep.get("dl"), dl) and keep["L"].dtype == np.float64:
            return ChunkedSitePosterior(self, keep["L"], keep["G_diag"])
        double = self if self.dtype == np.float64 else self.in_precision(np.float64)
        return ChunkedSitePosterior(double, double.factor(dl))

    def test_moments(self, dl: np.ndarray, gam: np.ndarray, lam: np.ndarray, cross: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (48) as :meth:`FeatureKernel.test_moments`, ``cross`` = φ(x) of shape (M, m): two passes."""
        cross = np.atleast_2d(np.asarray(cross, dtype=float))
        if cross.ndim != 2 or cross.shape[1] != self.rank:
            raise ValueError(f"`phi_test` must have shape (M, {self.rank}), one column per column of phi, got shape "
                             f"{cross.shape}. Pass features.transform(X_test).")
        if not np.all(np.isfinite(cross)):
            raise ValueError("`phi` and `phi_test` must be finite; found NaN or inf.")
        L = self.factor(dl)
        u = linalg.solve_triangular(L, cross.T, lower=True, check_finite=False)  # L⁻¹ φ(x), shape (m, M)
        pieces = self._run(passes.moment_pieces, (L,), (gam, lam))
        psi_gam, C = _ordered_sum([p[0] for p in pieces]), _ordered_sum([p[1] for p in pieces])
        mean = psi_gam @ u  # eq. (48): γᵀ Tᵀ k(x)
        var = -np.einsum("jk,jk->k", u, C @ u)  # eq. (48): −k(x)ᵀ T diag(λ) Tᵀ k(x)
        return mean, var

    def features_at(self, X: np.ndarray) -> np.ndarray:
        """φ(x) at new inputs, shape (M, m) (what eq. (48) takes as ``cross``)."""
        return self.feature_map.rows(np.atleast_2d(X))


@dataclass(frozen=True, eq=False)
class ChunkedSitePosterior:
    """G = ΨΨᵀ at one Δλ on the chunks: L (m×m) here, Ψ_c = Φ_c L⁻ᵀ computed by each pass."""

    op: ChunkedFeatureKernel = field(repr=False)
    L: np.ndarray = field(repr=False)
    G_diag: np.ndarray | None = field(default=None, repr=False)  # floored (site_variances made it)

    def diagonal(self) -> np.ndarray:
        """diag G, floored at SITE_FLOOR times the largest (one pass unless remembered)."""
        if self.G_diag is not None:  # floored when it was made: flooring again changes nothing
            return self.G_diag
        return _floored(self.op._rows(passes.site_diagonal, (self.L,)))

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """G v = Ψ(Ψᵀv): a reduction and a map."""
        z = self.op._reduce(passes.psi_transpose_times, (self.L,), (v,))
        return self.op._rows(passes.psi_times, (self.L, z))

    def hadamard_product(self, v: np.ndarray) -> np.ndarray:
        """(G∘G) v: M = Ψᵀ diag(v) Ψ (a reduction), then the rows of (ΨM)∘Ψ (a map)."""
        M = self.op._reduce(passes.weighted_psi_gram, (self.L,), (v,))
        return self.op._rows(passes.quadratic_rows, (self.L, M))

    def solve_hadamard(self, d: np.ndarray, e: np.ndarray, r: np.ndarray, hooks=NO_HOOKS, n_iter: int = 0
                       ) -> tuple[np.ndarray, str]:
        """λ of (G∘G − diag d) λ = r (eq. 57) by :func:`~explorer.operators.features.solve_hadamard_system`; the
        dense fallback gathers Ψ (N ≤ DENSE_FALLBACK_MAX_N only)."""

        def gram() -> np.ndarray:
            if self.op.n > DENSE_FALLBACK_MAX_N:
                raise AssertionError("the dense fallback is tried at N <= DENSE_FALLBACK_MAX_N only")
            psi = self.op._rows(passes.rows_of_psi, (self.L,))
            return psi @ psi.T

        return solve_hadamard_system(self.hadamard_product, gram, d, e, r, hooks, n_iter)
