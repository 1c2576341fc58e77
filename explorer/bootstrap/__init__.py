"""Bootstrap machinery more than one paper uses (core: numpy and scipy only).

:mod:`~explorer.bootstrap.replica`
    the replica/ADATAP theory of the bootstrap for Gaussian-process regression ([MO03]): the cavity base of every
    replica theory here, ``ConvergenceError``, the Poisson occupation weights, warm starts along S. The GP bootstrap
    ([MO03]), the bootstrap .632 criterion ([Fis16]), the LS-SVM optimism ([LSWV05]) and the SVM's replica
    theory ([MO03b]) build on it.
:mod:`~explorer.bootstrap.problem`
    what every kernel bootstrap problem holds (name, data rows, kernel; the cross-kernel to other inputs), the base of
    the GP-regression ([MO03]) and SVM ([MO03b]) problems.
:mod:`~explorer.bootstrap.estimates`
    what a Monte-Carlo bootstrap yields whatever was refitted: the predictions on the samples, Efron's test error
    (eq. 17 of [MO03]) with its standard error, the learning curve ε(S) and the predictive moments.
"""
