"""Seed 002 (Lendasse et al., Neurocomputing 2005): the fast bootstrap for model-structure selection.

``lssvm`` and ``networks`` the models, ``bootstrap`` the full and the fast bootstrap with the F test,
``experiments`` the Table 1/2 settings and the comparison of both bootstraps.
"""
