"""What the fast-bootstrap page says when its core fails ([LSWV05]): the replica theory beside it, a
least-squares or kernel system; the advice names its controls. The common wordings follow
(:data:`explorer.views.common.state.errors.COMMON`)."""

from __future__ import annotations

import numpy as np

from explorer.bootstrap.replica import ConvergenceError
from explorer.views.common.state.errors import Wording

__all__ = ["WORDING"]

#: The fast-bootstrap page's own wordings, first match wins.
WORDING: tuple[Wording, ...] = (
    Wording(ConvergenceError, "The replica theory did not converge: {err} Switch the replica theory off or change "
                              "the kernel width or the γ grid."),
    Wording(np.linalg.LinAlgError, "A least-squares or kernel system could not be solved ({err}). Change the model "
                                   "settings."),
)
