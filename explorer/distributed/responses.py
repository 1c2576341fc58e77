"""The linear response in the bootstrap weights on the chunked operator: the leave-one-out limit and the
infinitesimal jackknife (:mod:`explorer.gp_bootstrap.linear_response`), with the expansion point A = ΦΦᵀ + τI of
:mod:`explorer.operators.responses` by Woodbury's identity on C = τI_m + ΦᵀΦ = LLᵀ.

Pass 1 sums ΦᵀΦ and Φᵀy over the chunks (in chunk order); here C, its Cholesky factor and β = C⁻¹Φᵀy; pass 2 gives
each chunk's fitted values Φβ and leverages h_i = ‖L⁻¹φ_i‖², so α = (y − Φβ)/τ and B_ii = (1 − h_i)/τ as
:class:`~explorer.operators.responses.FeatureExpansionPoint` has them. :class:`ChunkedExpansionPoint` offers the
same contractions with B = (I − ΦC⁻¹Φᵀ)/τ, each a pass over the chunks:

* ``test_response(cross)`` — u(x) = ΦC⁻¹φ(x): a map, each chunk its rows Φ_c (C⁻¹φ(x)ᵀ); the (M, N) array u is
  gathered here (the theory of eqs. (3)-(7) holds the derivatives d_i(x) of every training row: 8·M·N bytes);
* ``second_order_shift(u)`` — c u (α∘h), here;
* ``left_out_sums(drawn)`` — eqs. (10)-(13) at the ``drawn`` inputs I: a reduction, each chunk the sums over its
  rows j of P_ji² and h_j P_ji + τB_ii P_ji R_ji² for every i in I (C⁻¹φ_I, m × n_I, broadcast; columns in blocks
  inside the chunk), added in chunk order: O(N n_I m) time, only n_I-vectors travel back;
* ``error_averages`` — :func:`~explorer.operators.responses.drawn_error_averages`.

The arithmetic on each chunk is that of :meth:`FeatureExpansionPoint._left_out_block` on the chunk's rows, so the
numbers equal the in-memory operator's to round-off (the sums over rows grouped by chunk).

Runtime module: numpy and scipy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import linalg

from explorer.distributed import passes
from explorer.operators.responses import IJ_EXACT_ROWS, IJ_INPUTS, drawn_error_averages
from explorer.validation import finite, noise_variance, positive_S

__all__ = ["ChunkedResponses", "ChunkedExpansionPoint", "left_out_chunk", "response_rows"]

#: Entries of each (n_c, b) block of B's columns a worker forms at once for eq. (13) (2^21 float64 = 16 MB; three
#: are alive), as :mod:`explorer.operators.responses` does in memory.
_COLUMN_BLOCK_ENTRIES = 2**21
_MIN_COLUMNS = 32


# ------------------------------------------------------------------------------------------- on a worker


def response_rows(part, fmap, V) -> np.ndarray:
    """The chunk's rows of Φ V, V = C⁻¹φ(x)ᵀ of shape (m, M): its rows of u(x)ᵀ = (B k_x)ᵀ."""
    return passes.features(part, fmap) @ V


def left_out_chunk(part, fmap, V, alpha_I, diag_I, tau, alpha, leverage, slot) -> tuple[np.ndarray, np.ndarray]:
    """The chunk's pieces of Σ_j P_ji² and Σ_j [h_j P_ji + τB_ii P_ji R_ji²] for the n_I drawn inputs i (eqs. 10-13).

    ``V`` = C⁻¹φ_Iᵀ (m, n_I); ``alpha_I``, ``diag_I`` = α_i and B_ii at the drawn inputs; ``alpha``, ``leverage`` the
    chunk's α_j and h_j; ``slot`` the position in I of each of the chunk's rows (−1 if not drawn), where R_ii = 1.
    """
    phi = passes.features(part, fmap)
    n_c, n_i = phi.shape[0], V.shape[1]
    squares, shifts = np.zeros(n_i), np.zeros(n_i)
    width = min(n_i, max(_MIN_COLUMNS, _COLUMN_BLOCK_ENTRIES // max(n_c, 1)))
    own = np.flatnonzero(slot >= 0)                                       # rows of this chunk that are drawn
    for start in range(0, n_i, width):
        stop = min(start + width, n_i)
        R = phi @ V[:, start:stop]                                        # φ_jᵀC⁻¹φ_i = −τB_ji (j ≠ i)
        R *= -1.0 / (tau * diag_I[start:stop])                            # R_ji = B_ji / B_ii
        here = own[(slot[own] >= start) & (slot[own] < stop)]
        R[here, slot[here] - start] = 1.0                                 # R_ii = 1
        P = alpha[:, None] - R * alpha_I[start:stop]                      # α^{(i)}_j, eq. (11); 0 at j = i
        P *= R                                                            # −d^{(i)}_j / c, eq. (12)
        squares[start:stop] = np.einsum("ji,ji->i", P, P)
        R *= R
        shifts[start:stop] = leverage @ P + tau * diag_I[start:stop] * np.einsum("ji,ji->i", P, R)
    return squares, shifts


# ------------------------------------------------------------------------------------------- here


@dataclass(frozen=True)
class ChunkedExpansionPoint:
    """The low-rank GP at W = νI on the chunks: τ, c, L (C = τI_m + ΦᵀΦ = LLᵀ), β = C⁻¹Φᵀy, α = (y − Φβ)/τ and the
    leverages h (N-vectors here, as the theory's); ``op`` runs the passes of the contractions with B."""

    tau: float
    c: float
    weights: np.ndarray
    alpha: np.ndarray
    leverage: np.ndarray
    factor: np.ndarray | None = field(default=None, repr=False)
    op: Any = field(default=None, repr=False, compare=False)

    def diagonal(self) -> np.ndarray:
        """B_ii = (1 − h_i)/τ, shape (N,)."""
        return (1.0 - self.leverage) / self.tau

    def solve(self, b: np.ndarray) -> np.ndarray:
        """C⁻¹ b by the Cholesky factor."""
        return linalg.cho_solve((self.factor, True), b, check_finite=False)

    def test_response(self, cross: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """u(x) = B k_x = ΦC⁻¹φ(x), shape (M, N) (one map pass, gathered here), and k_xᵀα = φ(x)ᵀβ, for ``cross`` =
        φ(x) of shape (M, m)."""
        u = self.op._rows(response_rows, (self.solve(cross.T),)).T          # (M, N): u(x) = Φ C⁻¹ φ(x)
        return u, cross @ self.weights                                      # eq. (5): k_xᵀα = φ(x)ᵀβ

    def second_order_shift(self, u: np.ndarray) -> np.ndarray:
        """c Σ_i u_i α_i h_i (eq. 7, 1 − τB_ii = h_i)."""
        return self.c * (u @ (self.alpha * self.leverage))

    def left_out_sums(self, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """B_ii (N,) and Σ_j P_ji², Σ_j P_ji (1 − τB^{(i)}_jj) for i in ``drawn`` (eqs. 10-13): one reduction pass,
        φ_I computed here from the drawn rows of X (gathered from the chunks that hold them)."""
        op, diag = self.op, self.diagonal()
        drawn = np.asarray(drawn, dtype=np.int64)
        phi_I = op.features_at(op.rows.rows(drawn))                         # φ_i of the drawn inputs, (n_I, m)
        slot = np.full(op.n, -1, dtype=np.int64)
        slot[drawn] = np.arange(drawn.size)
        pieces = op._run(left_out_chunk, (self.solve(phi_I.T), self.alpha[drawn], diag[drawn], self.tau),
                         (self.alpha, self.leverage, slot))
        squares = _ordered(p[0] for p in pieces)
        shifts = _ordered(p[1] for p in pieces)
        return diag, squares, shifts

    def error_averages(self, r, variance, bias, drawn) -> tuple[float, float, float]:
        """Eqs. (14), (15), (9) as :func:`~explorer.operators.responses.drawn_error_averages` (all inputs drawn or
        not), as the in-memory features have them."""
        return drawn_error_averages(r, variance, bias, drawn)


class ChunkedResponses:
    """Mixed into :class:`~explorer.distributed.operator.ChunkedFeatureKernel`: the expansion point of the linear
    response and its contractions (the leave-one-out limit and the infinitesimal jackknife)."""

    @property
    def default_left_out_inputs(self) -> int | None:
        """Inputs at which ``inputs="auto"`` evaluates eq. (13): all (None) up to
        :data:`~explorer.operators.responses.IJ_EXACT_ROWS` rows, else
        :data:`~explorer.operators.responses.IJ_INPUTS` (as the in-memory features)."""
        return None if self.n <= IJ_EXACT_ROWS else IJ_INPUTS

    def check_response_inputs(self, y, noise_var, S, cross=None):
        """Validated ``(y, noise_var, S, cross)``: y of shape (N,) and finite, σ² > 0, S > 0, ``cross`` = φ(x) of
        shape (M, m) and finite if given; a ValueError saying which is wrong."""
        y = np.asarray(y, dtype=float)
        if y.shape != (self.n,):
            raise ValueError(f"`y` must have shape ({self.n},), one target per row, got shape {y.shape}.")
        finite(y, "y", "Remove or impute missing targets.")
        if cross is not None:
            cross = np.ascontiguousarray(np.atleast_2d(cross), dtype=float)
            if cross.ndim != 2 or cross.shape[1] != self.rank:
                raise ValueError(f"`phi_test` must have shape (M, {self.rank}), one feature row per test input, got "
                                 f"shape {cross.shape}. Pass op.features_at(X_test).")
            finite(cross, "phi_test", "Check the test inputs of the feature map.")
        return y, float(noise_variance(noise_var)), positive_S(S), cross

    def expansion_point(self, y: np.ndarray, tau: float, c: float) -> ChunkedExpansionPoint:
        """C = τI_m + ΦᵀΦ factorised, β = C⁻¹Φᵀy, α = (y − Φβ)/τ and the leverages h: two passes."""
        pieces = self._run(passes.gram_and_moment, (), (y,))
        C = _ordered(p[0] for p in pieces)
        moment = _ordered(p[1] for p in pieces)
        C.flat[:: C.shape[0] + 1] += tau                                    # C = τI_m + ΦᵀΦ ⪰ τI
        try:
            L = linalg.cholesky(C, lower=True, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise ValueError("Cholesky factorisation of τI + ΦᵀΦ failed: the features are too large for double "
                             f"precision next to τ = σ²/ν = {tau:.3g}. Rescale them or raise σ².") from exc
        beta = linalg.cho_solve((L, True), moment, check_finite=False)     # β = C⁻¹Φᵀy = Φᵀα
        fitted = self._run(passes.fit_and_leverage, (L, beta))
        alpha = (y - np.concatenate([f[0] for f in fitted])) / tau          # α = By by Woodbury
        return ChunkedExpansionPoint(tau, c, beta, alpha, np.concatenate([f[1] for f in fitted]), L, self)


def _ordered(pieces) -> np.ndarray:
    pieces = list(pieces)
    total = np.array(pieces[0], copy=True)
    for piece in pieces[1:]:
        total += piece
    return total
