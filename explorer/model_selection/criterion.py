r"""The model-selection criteria by name, with their random parts bound ([Fis16]).

Criteria (lower is better), each a function of the log hyperparameters
``phi = np.append(kernel.theta, log noise_var)`` with an analytic gradient:

==================  ===========================================================================================
``evidence``        negative log evidence −log N(y | 0, K_y), eq. (2.11) of [Fis16], in nats
                    (:mod:`~explorer.model_selection.evidence`)
``loo``             mean negative leave-one-out log predictive probability, closed form (R&W eq. 5.10-5.12)
                    (:mod:`~explorer.model_selection.cross_validation`)
``kfold``           K-fold CV negative log predictive probability, eq. (2.12), in closed form from K_y⁻¹
``asc-boltzmann``   −I, Boltzmann ASC (eq. 4.3, β maximised per partition), see :mod:`explorer.model_selection.asc`
``asc-beta-noise``  −I, β-noise ASC (β = 1)
``asc-bayes``       −I, Bayesian ASC (eq. 4.4)
``bootstrap632``    Efron's .632 estimate e⁻¹ ε_train + (1 − e⁻¹) ε(N) with ε(N) from the replica theory
                    ([MO03] eq. 45 and footnote 3), gradient by implicit differentiation of eqs. (54)-(55)
                    (:mod:`~explorer.model_selection.bootstrap_632`)
==================  ===========================================================================================

A :class:`Criterion` binds a criterion to its random parts (the K folds, the J ASC partitions), drawn once
from ``rng`` so that the function optimised is deterministic. The optimisation over hyperparameters is
:mod:`~explorer.model_selection.optimisation`; the selection and the ranking of functional forms
:mod:`~explorer.model_selection.selection`; the criterion along one hyperparameter
:mod:`~explorer.model_selection.curves`; the test error of a selected model :mod:`~explorer.model_selection.held_out`.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.bootstrap import replica
from explorer.kernels import Kernel
from explorer.model_selection import asc
from explorer.model_selection.bootstrap_632 import bootstrap_632_and_solution
from explorer.model_selection.cross_validation import draw_folds, kfold_cv, loo_cv
from explorer.model_selection.evidence import CriterionValue, negative_log_evidence

__all__ = ["CRITERIA", "CRITERION_LABELS", "NUMERICAL_ERRORS", "Criterion", "make_criterion", "asc_criterion",
           "safe_value"]


CRITERIA = ("evidence", "loo", "kfold", "asc-boltzmann", "asc-beta-noise", "asc-bayes", "bootstrap632")
"""Names accepted by :func:`make_criterion`."""


CRITERION_LABELS = {
    "evidence": "negative log evidence (eq. 2.11)",
    "loo": "LOO-CV neg. log predictive",
    "kfold": "K-fold CV neg. log predictive (eq. 2.12)",
    "asc-boltzmann": "−I, Boltzmann ASC (eq. 4.3)",
    "asc-beta-noise": "−I, β-noise ASC (β = 1)",
    "asc-bayes": "−I, Bayesian ASC (eq. 4.4)",
    "bootstrap632": "bootstrap .632 error (replica, [MO03] eq. 45)",
}
"""Human-readable names, for tables and plot legends."""


_ASC_VARIANTS = {"asc-boltzmann": "boltzmann", "asc-beta-noise": "beta-noise", "asc-bayes": "bayes"}
NUMERICAL_ERRORS = (np.linalg.LinAlgError, FloatingPointError, replica.ConvergenceError)
"""The errors of a criterion evaluated where it breaks down (singular matrices, no replica convergence)."""


def asc_criterion(kernel: Kernel, X, y, noise_var: float, partitions: asc.AscPartitions,
                  variant: str = "beta-noise", entropy: str = "zero", eval_gradient: bool = False) -> CriterionValue:
    """−I of ASC (eq. 4.1) averaged over the partitions (Algorithm 2); see :func:`asc.mutual_information`.

    Parameters
    ----------
    kernel, X, y, noise_var
        As in :func:`~explorer.model_selection.evidence.negative_log_evidence`, with σ² > 0.
    partitions : AscPartitions
        From :func:`asc.draw_partitions` with the same N.
    variant : {"boltzmann", "beta-noise", "bayes"}, optional
        ASC variant (eq. 4.3 with β*, β = 1, eq. 4.4).
    entropy : {"zero", "prior"}, optional
        h(τ): 0 or the prior entropy (eq. 4.2).
    eval_gradient : bool, optional
        As in :func:`~explorer.model_selection.evidence.negative_log_evidence`.

    Returns
    -------
    CriterionValue
        ``criterion="asc-<variant>"``, −I in nats, its gradient of shape (p + 1,) (or None), the number of
        excluded partitions and the β of each partition.

    Raises
    ------
    TypeError, ValueError, SingularPartitionsError, FloatingPointError
        As :func:`asc.mutual_information`.
    """
    res = asc.mutual_information(kernel, X, y, noise_var, partitions, variant, entropy,
                                 eval_gradient=eval_gradient)
    name = "asc-" + variant
    grad = -res.gradient if eval_gradient else None
    return CriterionValue(name, -res.mutual_information, grad, res.n_excluded, res.betas)


@dataclass(frozen=True, eq=False)
class Criterion:
    """A criterion with its random parts fixed: call it as ``crit(kernel, X, y, noise_var, eval_gradient)``.

    Build it with :func:`make_criterion`. ``folds`` (K-fold) and ``partitions`` (ASC) are drawn once, so the
    function is deterministic during an optimisation. ``entropy`` is ASC's h(τ); ``tol`` the replica
    tolerance of ``bootstrap632`` (whose last Δλ warm-starts the next evaluation at the same N).
    """

    name: str
    n: int
    folds: tuple | None = None
    partitions: asc.AscPartitions | None = None
    entropy: str = "zero"
    tol: float = 1e-9
    _warm: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def label(self) -> str:
        """Readable name for tables and legends."""
        extra = "" if self.partitions is None else (
            f", h(τ) = {'0' if self.entropy == 'zero' else 'prior entropy'}, J = "
            f"{self.partitions.n_partitions}, L = {self.partitions.n_subsets}, M = {self.partitions.n_objects}")
        if self.folds is not None:
            extra = f", K = {len(self.folds)}"
        return CRITERION_LABELS[self.name] + extra

    def __call__(self, kernel: Kernel, X, y, noise_var: float, eval_gradient: bool = False) -> CriterionValue:
        if np.shape(y)[0] != self.n:
            raise ValueError(f"criterion {self.name!r} was made for N = {self.n} cases, got {np.shape(y)[0]}. "
                             "Build it with make_criterion(name, n=len(y)).")
        if self.name == "evidence":
            return negative_log_evidence(kernel, X, y, noise_var, eval_gradient)
        if self.name == "loo":
            return loo_cv(kernel, X, y, noise_var, eval_gradient)
        if self.name == "kfold":
            return kfold_cv(kernel, X, y, noise_var, self.folds, eval_gradient)
        if self.name == "bootstrap632":
            return self._bootstrap(kernel, X, y, noise_var, eval_gradient)
        return asc_criterion(kernel, X, y, noise_var, self.partitions, _ASC_VARIANTS[self.name],
                             self.entropy, eval_gradient)

    def _bootstrap(self, kernel, X, y, noise_var, eval_gradient):
        try:
            out, sol = bootstrap_632_and_solution(kernel, X, y, noise_var, eval_gradient, self.tol, self._warm.get("dl"))
        except replica.ConvergenceError:                               # a poor warm start: start afresh
            out, sol = bootstrap_632_and_solution(kernel, X, y, noise_var, eval_gradient, self.tol, None)
        self._warm["dl"] = sol.dl
        return out


def make_criterion(name: str, n: int, *, rng: np.random.Generator | int | None = None, n_folds: int = 10,
                   n_partitions: int = 32, n_subsets: int = 2, n_objects: int = 8,
                   entropy: str = "zero", tol: float = 1e-9) -> Criterion:
    """The criterion ``name`` (one of ``CRITERIA``) for data with ``n`` cases.

    ``n_folds`` K of K-fold CV (capped at n); ``n_partitions`` J, ``n_subsets`` L, ``n_objects`` M and
    ``entropy`` h(τ) of ASC (Algorithm 2; the thesis uses J = 32, L = 2, M = 4 or 8); ``tol`` the replica
    tolerance of ``bootstrap632``. Random parts come from ``rng``.

    Parameters
    ----------
    name : str
        One of ``CRITERIA``.
    n : int
        Number of cases N, >= 3.
    rng : Generator, int or None, optional
        Seed of the folds (``"kfold"``) or partitions (ASC); unused by the other criteria.
    n_folds : int, optional
        K of K-fold CV, capped at N.
    n_partitions, n_subsets, n_objects : int, optional
        J, L and M of ASC (:func:`asc.draw_partitions`).
    entropy : {"zero", "prior"}, optional
        h(τ) of ASC.
    tol : float, optional
        Replica tolerance of ``"bootstrap632"``, in (0, 0.01).

    Returns
    -------
    Criterion
        Callable as ``crit(kernel, X, y, noise_var, eval_gradient)`` on data with N cases.

    Raises
    ------
    ValueError
        If ``name`` is unknown, ``n`` is not an integer >= 3, ``entropy`` is unknown, ``tol`` is out of
        range, or :func:`~explorer.model_selection.cross_validation.draw_folds` / :func:`asc.draw_partitions` reject their counts.
    """
    if name not in CRITERIA:
        raise ValueError(f"unknown criterion {name!r}; choose one of {CRITERIA}.")
    if not (isinstance(n, (int, np.integer)) and n >= 3):
        raise ValueError(f"`n` must be an integer >= 3 (the number of cases), got {n!r}.")
    if entropy not in asc.ENTROPIES:
        raise ValueError(f"`entropy` must be one of {asc.ENTROPIES}, got {entropy!r}.")
    if not (0 < tol < 1e-2):
        raise ValueError(f"`tol` must be in (0, 0.01), got {tol!r}. It is the replica tolerance of "
                         "bootstrap632; the criterion is smooth to about this relative accuracy.")
    gen = np.random.default_rng(rng)
    folds = draw_folds(int(n), min(n_folds, int(n)), gen) if name == "kfold" else None
    parts = (asc.draw_partitions(int(n), n_partitions, n_subsets, n_objects, gen)
             if name in _ASC_VARIANTS else None)
    return Criterion(name=name, n=int(n), folds=folds, partitions=parts, entropy=entropy, tol=tol)


def safe_value(criterion, kernel, X, y, noise_var) -> float:
    """The criterion's value, NaN where it cannot be evaluated (singular matrices, non-convergence)."""
    try:
        with np.errstate(all="ignore"):
            value = float(criterion(kernel, X, y, noise_var).value)
    except NUMERICAL_ERRORS:
        return np.nan
    return value if np.isfinite(value) else np.nan
