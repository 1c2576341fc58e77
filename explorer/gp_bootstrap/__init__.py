"""Seed 000 (Malzahn & Opper, JMLR 2003): bootstrap averages of GP regression without retraining.

``replica`` the ADATAP theory (eqs. 45-67), ``montecarlo`` the Monte-Carlo bootstrap it is compared with,
``l1`` the L1 distances between Monte-Carlo histograms and the eq. (60) mixture, ``problems`` the regression
problem, ``stages`` the stages the CLI and the app share (theory and Monte-Carlo learning curves, held-out
moments), ``experiments`` the comparisons behind the paper's figures; ``variational`` and ``mean_field`` the
variational-Gaussian and mean-field replica approximations of Fig. 1 (derivation: /work/shared/VG_MF.md).
"""
