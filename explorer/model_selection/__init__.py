"""Seed 001 (Fischer, ETH 2016): GP model selection by approximation set coding.

``asc`` the ASC mutual information, ``criteria`` every criterion (evidence, LOO, k-fold, ASC, .632) and the
optimisation over hyperparameters, ``problem`` the data of one selection, ``stages`` the stages the CLI and the
app share on it (criterion curves, selected hyperparameters, ranking), ``experiments`` the thesis experiments.
"""
