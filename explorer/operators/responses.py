"""What the kernel operators offer for the linear response in the bootstrap weights: infinitesimal jackknife and leave-one-out limit (explorer.gp_bootstrap.linear_response).

Mixed into :class:`~explorer.operators.dense.DenseKernel` and :class:`~explorer.operators.features.FeatureKernel`.
Core module: numpy and scipy only.
"""
from __future__ import annotations

__all__ = ["DenseResponses", "FeatureResponses"]


class DenseResponses:
    """For a dense K (:class:`~explorer.operators.dense.DenseKernel`): the linear response in the bootstrap weights: infinitesimal jackknife and leave-one-out limit (explorer.gp_bootstrap.linear_response)."""


class FeatureResponses:
    """For K = ΦΦᵀ (:class:`~explorer.operators.features.FeatureKernel`): the linear response in the bootstrap weights: infinitesimal jackknife and leave-one-out limit (explorer.gp_bootstrap.linear_response)."""
