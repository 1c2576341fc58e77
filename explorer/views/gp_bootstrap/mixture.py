"""The bootstrap distribution the predictive-distribution page draws at one training input: the core's eq. (60)
object, :class:`~explorer.bootstrap.distribution.BootstrapDistribution` ([MO03] eq. (60)), of that input alone.

:func:`~explorer.bootstrap.distribution.bootstrap_distribution` builds the mixture of every training input (0.1 s
at N = 506, seconds at N = 53,940); the page shows one input at a time, so it asks for that input's row alone
(``rows=[i]``).
"""
from __future__ import annotations

from explorer.bootstrap.distribution import BootstrapDistribution, bootstrap_distribution
from explorer.bootstrap.replica import ReplicaSolution

__all__ = ["distribution_at"]


def distribution_at(sol: ReplicaSolution, i: int) -> BootstrapDistribution:
    """The eq. (60) distribution of the predictor at training input ``i`` of ``sol`` (a distribution of one input:
    ``means[0]``, ``sds[0]``; ``pdf(h)`` and ``cdf(h)`` of a 1-d ``h`` at each value).

    Raises
    ------
    IndexError
        If ``i`` is not in 0..N − 1.
    """
    if not 0 <= i < sol.n:
        raise IndexError(f"Input index must be in 0..{sol.n - 1}, got {i}.")
    return bootstrap_distribution(sol, rows=[i])
