"""What the kernel operators offer for the log evidence and its gradient (explorer.gp_bootstrap.evidence).

Mixed into :class:`~explorer.operators.dense.DenseKernel` and :class:`~explorer.operators.features.FeatureKernel`.
Core module: numpy and scipy only.
"""
from __future__ import annotations

__all__ = ["DenseEvidence", "FeatureEvidence"]


class DenseEvidence:
    """For a dense K (:class:`~explorer.operators.dense.DenseKernel`): the log evidence and its gradient (explorer.gp_bootstrap.evidence)."""


class FeatureEvidence:
    """For K = ΦΦᵀ (:class:`~explorer.operators.features.FeatureKernel`): the log evidence and its gradient (explorer.gp_bootstrap.evidence)."""
