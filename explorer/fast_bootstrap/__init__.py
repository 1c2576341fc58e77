"""[LSWV05] (Lendasse et al., Neurocomputing 2005): the fast bootstrap for model-structure selection.

``lssvm`` and ``networks`` the models (``family`` what a model family provides), ``bootstrap`` the full and the fast
bootstrap with the F test; ``problem`` the data as the bootstrap sees them, the model family and the Table 1/2
settings, ``stages`` the replica theory's optimism of the LS-SVM and the run-time estimates the CLI and the app
share, ``experiments`` the comparison of both bootstraps (and the replica theory).
"""
