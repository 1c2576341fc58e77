"""What every page says when its core or its data fails: one table of wordings, one function that picks one.

A job or a control that meets an expected error (:attr:`~explorer.views.common.jobs.BackgroundJobs.expected_errors`)
shows a sentence, never a traceback. :data:`WORDING` holds every such sentence: per page (its key in the registry,
:mod:`explorer.views.pages`), the errors it words in its own vocabulary (the advice names that page's controls),
then what every page says (:data:`COMMON`). ``{err}`` stands for the error's own message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.bootstrap.replica import ConvergenceError
from explorer.datasets import DatasetError
from explorer.engine import EngineError
from explorer.svm_bootstrap.classifier import NotSeparableError

__all__ = ["Wording", "WORDING", "COMMON", "describe_error"]


@dataclass(frozen=True)
class Wording:
    """The sentence for errors of type ``kind`` (and, if given, for which ``when(err)`` holds)."""

    kind: type[BaseException]
    text: str
    when: Callable[[BaseException], bool] | None = None

    def fits(self, err: BaseException) -> bool:
        """Whether this wording is the one for ``err``."""
        return isinstance(err, self.kind) and (self.when is None or self.when(err))


#: What every page says after its own wordings: bad data, a message the core or the engine wrote for the user
#: (ValueError, the Dask engine's errors), anything else with its type.
COMMON = (Wording(DatasetError, "The data cannot be used: {err}"),
          Wording(ValueError, "{err}"),
          Wording(EngineError, "{err}"),
          Wording(BaseException, "{type}: {err}"))

#: Every page's own wordings, by page key, first match wins.
WORDING: dict[str, tuple[Wording, ...]] = {
    "gp": (
        Wording(ConvergenceError, "The replica (ADATAP) theory did not converge: {err} Try a larger noise σ², another "
                                  "S/N or other kernel hyperparameters."),
        Wording(np.linalg.LinAlgError, "The kernel matrix could not be factorised ({err}). Increase the noise σ² or "
                                       "change the kernel hyperparameters (e.g. a shorter lengthscale)."),
        Wording(FloatingPointError, "The computation became numerically unstable ({err}). Increase the noise σ² or "
                                    "change the kernel."),
    ),
    "svm": (
        Wording(NotSeparableError, "The data cannot be separated by a hard-margin SVM: {err}",
                when=lambda err: "identical inputs" in str(err)),
        Wording(NotSeparableError, "The data cannot be separated by a hard-margin SVM with this kernel: {err} A "
                                   "shorter lengthscale L (a narrower kernel) separates more data; conflicting rows "
                                   "must be removed."),
        Wording(ConvergenceError, "The replica (ADATAP) theory did not converge: {err} Narrow kernels (small L) and "
                                  "large S/N are the hardest cases; try a broader kernel or a smaller S/N."),
        Wording(np.linalg.LinAlgError, "The kernel matrix could not be factorised ({err}). Change the lengthscale L."),
        Wording(FloatingPointError, "The computation became numerically unstable ({err}). Change the lengthscale L."),
    ),
    "selection": (
        Wording(ConvergenceError, "The replica theory of the bootstrap .632 criterion did not converge: {err} Leave "
                                  "out 'bootstrap632' or change the kernel."),
        Wording(np.linalg.LinAlgError, "The covariance matrix could not be factorised ({err}). Duplicate inputs with "
                                       "tiny noise are the usual cause: standardise the data or change the kernel."),
        Wording(FloatingPointError, "The computation became numerically unstable ({err}). Standardise the data or "
                                    "change the kernel."),
    ),
    "fastboot": (
        Wording(ConvergenceError, "The replica theory did not converge: {err} Switch the replica theory off or change "
                                  "the kernel width or the γ grid."),
        Wording(np.linalg.LinAlgError, "A least-squares or kernel system could not be solved ({err}). Change the model "
                                       "settings."),
    ),
}


def describe_error(err: BaseException, page: str | None = None) -> str:
    """The sentence a page (by key; None: the common wordings only) shows for ``err``."""
    wording = next(w for w in (*WORDING.get(page, ()), *COMMON) if w.fits(err))  # COMMON ends with any error
    return wording.text.format(err=err, type=type(err).__name__)
