"""What the kernel operators offer for the weighted solves of Monte-Carlo refits (explorer.gp_bootstrap.montecarlo).

Mixed into :class:`~explorer.operators.dense.DenseKernel` and :class:`~explorer.operators.features.FeatureKernel`.
Core module: numpy and scipy only.
"""
from __future__ import annotations

__all__ = ["DenseRefits", "FeatureRefits"]


class DenseRefits:
    """For a dense K (:class:`~explorer.operators.dense.DenseKernel`): the weighted solves of Monte-Carlo refits (explorer.gp_bootstrap.montecarlo)."""


class FeatureRefits:
    """For K = ΦΦᵀ (:class:`~explorer.operators.features.FeatureKernel`): the weighted solves of Monte-Carlo refits (explorer.gp_bootstrap.montecarlo)."""
