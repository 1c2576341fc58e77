"""What the SVM bootstrap page says when its core fails ([MO03b]): data no hard-margin SVM separates, the replica
theory, the kernel matrix; the advice names its controls (the lengthscale L, S/N). The common wordings follow
(:data:`explorer.views.common.state.errors.COMMON`)."""

from __future__ import annotations

import numpy as np

from explorer.bootstrap.replica import ConvergenceError
from explorer.svm_bootstrap.classifier import NotSeparableError
from explorer.views.common.state.errors import Wording

__all__ = ["WORDING"]

#: The SVM page's own wordings, first match wins.
WORDING: tuple[Wording, ...] = (
    Wording(NotSeparableError, "The data cannot be separated by a hard-margin SVM: {err}",
            when=lambda err: "identical inputs" in str(err)),
    Wording(NotSeparableError, "The data cannot be separated by a hard-margin SVM with this kernel: {err} A "
                               "shorter lengthscale L (a narrower kernel) separates more data; conflicting rows "
                               "must be removed."),
    Wording(ConvergenceError, "The replica (ADATAP) theory did not converge: {err} Narrow kernels (small L) and "
                              "large S/N are the hardest cases; try a broader kernel or a smaller S/N."),
    Wording(np.linalg.LinAlgError, "The kernel matrix could not be factorised ({err}). Change the lengthscale L."),
    Wording(FloatingPointError, "The computation became numerically unstable ({err}). Change the lengthscale L."),
)
