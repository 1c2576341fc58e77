"""Resampling Explorer: analytical approximations of resampling averages, side by side with Monte-Carlo.

The compute core uses numpy and scipy only. At its top are the pieces every paper uses (``kernels``,
``lowrank``, ``regression``, ``losses``, ``datasets``, ``resampling``, ``progress``, ``validation``, ``chunks``,
``engine``), the bootstrap machinery several papers share (``bootstrap``: the replica/ADATAP theory, dense and
low-rank, and the Monte-Carlo estimates); below it one subpackage per paper:

- ``gp_bootstrap``    [MO03]: replica/ADATAP bootstrap of GP regression and its Monte-Carlo;
- ``svm_bootstrap``   [MO03b]: the same for the hard-margin SVM classifier;
- ``model_selection`` [Fis16]: approximation set coding next to evidence and cross-validation;
- ``fast_bootstrap``  [LSWV05]: the fast bootstrap of model complexity.

The views (``explorer.views``), the app (``explorer.app``), the CLI (``explorer.cli``) and the scikit-learn
estimator (``explorer.sklearn``, needs scikit-learn) sit on top.
"""

__version__ = "0.1.0"
