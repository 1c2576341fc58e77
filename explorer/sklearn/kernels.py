"""The prior covariance and the noise variance σ² of a scikit-learn Gaussian-process kernel ([MO03] eq. (50)).

A ``WhiteKernel`` term of a sum is noise; everything else is the prior covariance K the replica theory runs on.
"""
from __future__ import annotations

from sklearn.gaussian_process.kernels import Kernel, Sum, WhiteKernel

from explorer.validation import noise_variance

__all__ = ["split_noise", "gp_model"]


def split_noise(kernel: Kernel) -> tuple[Kernel | None, float]:
    """The prior covariance and the white-noise level of a scikit-learn kernel.

    The ``WhiteKernel`` terms of a (nested) ``Sum`` are noise, their levels add up; every other term is the prior
    covariance (a ``WhiteKernel`` inside a product stays in it).

    Parameters
    ----------
    kernel : sklearn.gaussian_process.kernels.Kernel
        A kernel, e.g. ``ConstantKernel() * RBF() + WhiteKernel()``.

    Returns
    -------
    prior : Kernel or None
        The sum of the terms that are not noise (None if every term is a ``WhiteKernel``).
    noise_level : float
        The sum of the ``noise_level`` of the ``WhiteKernel`` terms (0 if there is none).

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    >>> split_noise(RBF(2.0) + WhiteKernel(0.1))
    (RBF(length_scale=2), 0.1)
    """
    if isinstance(kernel, WhiteKernel):
        return None, float(kernel.noise_level)
    if isinstance(kernel, Sum):
        (a, noise_a), (b, noise_b) = split_noise(kernel.k1), split_noise(kernel.k2)
        prior = b if a is None else a if b is None else Sum(a, b)
        return prior, noise_a + noise_b
    return kernel, 0.0


def gp_model(kernel: Kernel, alpha: float) -> tuple[Kernel, float]:
    """The prior covariance and σ² = alpha + white-noise levels of ``kernel``, or a ValueError if one is missing
    (σ² checked by :func:`explorer.validation.noise_variance`, the one message for it)."""
    prior, white = split_noise(kernel)
    if prior is None:
        raise ValueError(f"The kernel {kernel} is only WhiteKernel noise; the replica theory needs a prior "
                         "covariance. Add a term such as RBF().")
    return prior, noise_variance(float(alpha) + white)
