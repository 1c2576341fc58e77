"""What the model-selection page says when its core fails ([Fis16]): the replica theory of the bootstrap .632
criterion, the covariance matrix, the numerics; the advice names its controls. The common wordings follow
(:data:`explorer.views.common.state.errors.COMMON`)."""

from __future__ import annotations

import numpy as np

from explorer.bootstrap.replica import ConvergenceError
from explorer.views.common.state.errors import Wording

__all__ = ["WORDING"]

#: The model-selection page's own wordings, first match wins.
WORDING: tuple[Wording, ...] = (
    Wording(ConvergenceError, "The replica theory of the bootstrap .632 criterion did not converge: {err} Leave "
                              "out 'bootstrap632' or change the kernel."),
    Wording(np.linalg.LinAlgError, "The covariance matrix could not be factorised ({err}). Duplicate inputs with "
                                   "tiny noise are the usual cause: standardise the data or change the kernel."),
    Wording(FloatingPointError, "The computation became numerically unstable ({err}). Standardise the data or "
                                "change the kernel."),
)
