r"""The test error of a selected model on held-out data ([Fis16] §5.1): SMSE (eq. 5.1) and MSLL.

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer import regression
from explorer.kernels import Kernel, check_inputs

__all__ = ["TestError", "test_error"]

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class TestError:
    """Test error of a selected model (§5.1): SMSE (eq. 5.1) and mean standardized log loss (R&W §2.5)."""

    smse: float
    msll: float


def test_error(kernel: Kernel, noise_var: float, X, y, X_test, y_test) -> TestError:
    """SMSE ‖y* − f̄‖²/(N* var(y*)) (eq. 5.1, sample variance ddof=0) and MSLL (R&W eq. 2.34 and §2.5).

    MSLL is the mean over test cases of −log p(y*_i | D) + log N(y*_i | mean(y), var(y)), the predictive
    density including the noise σ², standardized by the trivial Gaussian fitted to the training targets.

    Parameters
    ----------
    kernel : Kernel
        Covariance of the selected model.
    noise_var : float
        σ² of the selected model, >= 0.
    X : array_like of shape (N, d)
        Training inputs.
    y : array_like of shape (N,)
        Training targets.
    X_test : array_like of shape (N*, d)
        Test inputs.
    y_test : array_like of shape (N*,)
        Test targets, N* >= 2.

    Returns
    -------
    TestError
        ``smse`` and ``msll``.

    Raises
    ------
    ValueError
        If the training data are invalid (as :func:`explorer.regression.fit`), ``X_test`` is not a
        finite 2-D array with d columns, or ``y_test`` is not of shape (N*,) with N* >= 2.
    """
    post = regression.fit(kernel, X, y, noise_var)
    X_test, y_test = check_inputs(X_test, "X_test"), np.asarray(y_test, dtype=float)
    if y_test.shape != (X_test.shape[0],) or y_test.size < 2:
        raise ValueError(f"`y_test` must be 1-D with one target per row of X_test (at least 2), got shape "
                         f"{y_test.shape} for X_test of shape {X_test.shape}.")
    mean, var = post.predict(X_test, return_var=True)
    var = var + noise_var
    smse = np.mean((y_test - mean) ** 2) / np.var(y_test)                # eq. (5.1)
    nlp = 0.5 * (_LOG_2PI + np.log(var)) + 0.5 * (y_test - mean) ** 2 / var
    m0, v0 = np.mean(post.y), np.var(post.y)
    nlp0 = 0.5 * (_LOG_2PI + np.log(v0)) + 0.5 * (y_test - m0) ** 2 / v0
    return TestError(smse=float(smse), msll=float(np.mean(nlp - nlp0)))
