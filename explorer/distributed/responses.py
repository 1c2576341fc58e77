"""The leave-one-out limit of ε(S) on the chunked operator: the expansion point A = ΦΦᵀ + τI of the linear response
(:mod:`explorer.operators.responses`) by Woodbury's identity on C = τI_m + ΦᵀΦ = LLᵀ, in two passes.

Pass 1 sums ΦᵀΦ and Φᵀy over the chunks (in chunk order); here C, its Cholesky factor and β = C⁻¹Φᵀy; pass 2 gives
each chunk's fitted values Φβ and leverages h_i = ‖L⁻¹φ_i‖², so α = (y − Φβ)/τ and B_ii = (1 − h_i)/τ as
:class:`~explorer.operators.responses.FeatureExpansionPoint` has them. What
:func:`explorer.gp_bootstrap.linear_response.loo_limit` needs (``diagonal`` and ``alpha``) is offered; the
infinitesimal jackknife's contractions with B (``test_response``, ``left_out_sums``) are not (methods it does not
have).

Runtime module: numpy and scipy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from explorer.distributed import passes
from explorer.validation import finite, noise_variance, positive_S

__all__ = ["ChunkedResponses", "ChunkedExpansionPoint"]


@dataclass(frozen=True)
class ChunkedExpansionPoint:
    """The low-rank GP at W = νI on the chunks: τ, c, β = C⁻¹Φᵀy, α = (y − Φβ)/τ and the leverages h (N-vectors
    here, as the theory's)."""

    tau: float
    c: float
    weights: np.ndarray
    alpha: np.ndarray
    leverage: np.ndarray

    def diagonal(self) -> np.ndarray:
        """B_ii = (1 − h_i)/τ, shape (N,)."""
        return (1.0 - self.leverage) / self.tau


class ChunkedResponses:
    """Mixed into :class:`~explorer.distributed.operator.ChunkedFeatureKernel`: the leave-one-out limit."""

    def check_response_inputs(self, y, noise_var, S, cross=None):
        """Validated ``(y, noise_var, S, None)``: y of shape (N,) and finite, σ² > 0, S > 0 (no test inputs here)."""
        if cross is not None:
            raise ValueError("The chunked operator offers the leave-one-out limit only, not the jackknife at test "
                             "inputs.")
        y = np.asarray(y, dtype=float)
        if y.shape != (self.n,):
            raise ValueError(f"`y` must have shape ({self.n},), one target per row, got shape {y.shape}.")
        finite(y, "y", "Remove or impute missing targets.")
        return y, float(noise_variance(noise_var)), positive_S(S), None

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
        return ChunkedExpansionPoint(tau, c, beta, alpha, np.concatenate([f[1] for f in fitted]))


def _ordered(pieces) -> np.ndarray:
    pieces = list(pieces)
    total = np.array(pieces[0], copy=True)
    for piece in pieces[1:]:
        total += piece
    return total
