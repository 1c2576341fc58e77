r"""The prior covariance K of the training inputs as an operator: what the replica equations of [MO03] need of it.

The replica/ADATAP theory, the Monte-Carlo bootstrap and the linear response are written once against
:class:`KernelOperator`; each way of holding K is one implementation:

* :class:`~explorer.operators.dense.DenseKernel` — the N×N matrix K in memory (Cholesky factorisations, O(N³));
* :class:`~explorer.operators.features.FeatureKernel` — K = ΦΦᵀ with the features Φ (N × m) in memory, never forming
  an N×N matrix (push-through and Woodbury identities, O(N m²)).

What the equations ask (G = (K⁻¹ + diag Δλ)⁻¹, [MO03] eq. (36)):

* ``spectrum`` — the kernel's eigenvalues for the start value of Appendix A.2, eqs. (61)-(62);
* ``jittered`` — the operator with round-off repaired (a dense K that is slightly indefinite);
* ``in_precision`` — the operator in single precision, for the first iterations of eqs. (54)-(55);
* ``site_variances`` — diag G at Δλ (eq. 54);
* ``site_posterior`` — G at Δλ as a :class:`SitePosterior`: diag G, products G v (eq. 34) and the system
  (G∘G − diag d) λ = r of eq. (57);
* ``test_moments`` — the cross terms at test inputs of eq. (48); ``with_jitter`` the matrix a solution used;
* ``closing`` — the closing of eqs. (57), (59) the implementation is accurate with (``"literal"`` or
  ``"fixed-point"``, see :mod:`explorer.bootstrap.replica`).

A capability an implementation does not offer is a method it does not have: :func:`require` turns its absence into
:class:`UnsupportedOperation` with one sentence (VG and MF, for instance, need the dense matrix).

Core module: numpy and scipy only. Nothing outside this package calls numpy's or scipy's linear algebra on K.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["KernelOperator", "SitePosterior", "UnsupportedOperation", "require", "offers", "as_operator", "dense_matrix_of"]


class UnsupportedOperation(TypeError):
    """A computation needs an operation this kind of kernel operator does not offer."""


@runtime_checkable
class SitePosterior(Protocol):
    """G = (K⁻¹ + diag Δλ)⁻¹ ([MO03] eq. 36) at one Δλ, in double precision."""

    def diagonal(self) -> np.ndarray:
        """diag G, shape (N,)."""

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """G v, shape (N,) (eq. 34: m = G γ)."""

    def solve_hadamard(self, d: np.ndarray, e: np.ndarray, r: np.ndarray, hooks, n_iter: int
                       ) -> tuple[np.ndarray, str]:
        """λ of (G∘G − diag d) λ = r (eq. 57), e = d − (diag G)² > 0; returns (λ, "" or why it failed)."""


@runtime_checkable
class KernelOperator(Protocol):
    """The prior covariance K of N training inputs, as the replica equations use it."""

    closing: str
    name: str  # what messages call the kernel: "K", "phi"

    @property
    def n(self) -> int:
        """N, the number of training inputs."""

    def spectrum(self, subset: int | str | None = None, rng: Any = 0) -> tuple[np.ndarray, float]:
        """(ω, P): eigenvalues of K (or of a random N/P subset of its rows and columns), Appendix A.2."""

    def jittered(self):
        """Iterator of (operator, jitter): the operator itself first, then with round-off repaired."""

    def in_precision(self, dtype) -> KernelOperator:
        """The same operator computing in ``dtype`` (np.float32 or np.float64)."""

    def site_variances(self, dl: np.ndarray, keep: dict | None = None) -> np.ndarray:
        """diag G at Δλ = ``dl`` (eq. 54); ``keep`` may remember the factorisation for :meth:`site_posterior`."""

    def site_posterior(self, dl: np.ndarray, keep: dict | None = None) -> SitePosterior:
        """G at Δλ = ``dl`` in double precision, reusing a factorisation ``keep`` remembered at the same Δλ."""

    def with_jitter(self, jitter: float) -> KernelOperator:
        """K + jitter·I (what a solution with ``ReplicaSolution.jitter`` was computed on)."""

    def test_moments(self, dl: np.ndarray, gam: np.ndarray, lam: np.ndarray, cross: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (48): γᵀ Tᵀk(x) and −k(x)ᵀ T diag(λ) Tᵀ k(x), T = (I + diag(Δλ) K)⁻¹, at the inputs of ``cross``
        (k(x, x_i) for a dense K, φ(x) for features)."""


def require(operator: object, method: str, purpose: str) -> Any:
    """``operator.method``, or :class:`UnsupportedOperation` naming what needs it and which kinds offer it.

    Parameters
    ----------
    operator : KernelOperator
        The kernel operator.
    method : str
        The name of the method a computation needs.
    purpose : str
        What needs it, for the message ("the variational-Gaussian approximation").

    Returns
    -------
    callable
        The bound method.

    Raises
    ------
    UnsupportedOperation
        If ``operator`` has no such method.
    """
    found = getattr(operator, method, None)
    if found is None:
        raise UnsupportedOperation(
            f"{purpose[:1].upper()}{purpose[1:]} needs {method}, which a {type(operator).__name__} does not offer: "
            "it runs on a dense kernel matrix only.")
    return found


def offers(operator: object, method: str) -> bool:
    """Whether ``operator`` has the method ``method`` (a computation that needs it can run on it)."""
    return callable(getattr(operator, method, None))


def as_operator(K) -> KernelOperator:
    """A kernel operator from what a caller holds: an operator as it is, features Φ (``LowRankFeatures``) as a
    :class:`~explorer.operators.features.FeatureKernel`, an N×N array as a :class:`~explorer.operators.dense.DenseKernel`.

    Raises
    ------
    ValueError
        If an array is not a finite, symmetric, square matrix of at least 2 rows (as ``DenseKernel`` checks).
    """
    from explorer.lowrank import LowRankFeatures
    from explorer.operators.dense import DenseKernel
    from explorer.operators.features import FeatureKernel

    if isinstance(K, (DenseKernel, FeatureKernel)) or isinstance(K, KernelOperator):
        return K
    if isinstance(K, LowRankFeatures):
        return FeatureKernel.of(K)
    return DenseKernel.of(K)


def dense_matrix_of(K, purpose: str):
    """The N×N kernel matrix for a computation that needs it whole (VG and MF of [MO03] §5): an array as it is, an
    operator's ``dense_matrix()``; :class:`UnsupportedOperation` for features or an operator without one.

    Raises
    ------
    UnsupportedOperation
        If ``K`` is features Φ or an operator that offers no dense matrix; the message names ``purpose``.
    """
    if not isinstance(K, KernelOperator) and not hasattr(K, "phi"):
        return K
    return require(as_operator(K), "dense_matrix", purpose)()
