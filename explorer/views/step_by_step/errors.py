"""What the step-by-step page says when its core fails: it refits the Gaussian process of [MO03] on each resample,
so it words the errors as the Gaussian-process page does (:mod:`explorer.views.gp_bootstrap.errors`). The common
wordings follow (:data:`explorer.views.common.state.errors.COMMON`)."""

from __future__ import annotations

from explorer.views.gp_bootstrap.errors import WORDING

__all__ = ["WORDING"]
