"""What the Gaussian-process pages say when their core fails ([MO03]): the replica theory, the kernel matrix, the
numerics; the advice names their controls (σ², S/N, the kernel). The common wordings follow
(:data:`explorer.views.common.state.errors.COMMON`)."""

from __future__ import annotations

import numpy as np

from explorer.bootstrap.replica import ConvergenceError
from explorer.views.common.state.errors import Wording

__all__ = ["WORDING"]

#: The GP page's own wordings, first match wins.
WORDING: tuple[Wording, ...] = (
    Wording(ConvergenceError, "The replica (ADATAP) theory did not converge: {err} Try a larger noise σ², another "
                              "S/N or other kernel hyperparameters."),
    Wording(np.linalg.LinAlgError, "The kernel matrix could not be factorised ({err}). Increase the noise σ² or "
                                   "change the kernel hyperparameters (e.g. a shorter lengthscale)."),
    Wording(FloatingPointError, "The computation became numerically unstable ({err}). Increase the noise σ² or "
                                "change the kernel."),
)
