"""Seed 000 (Malzahn & Opper, JMLR 2003): bootstrap averages of GP regression without retraining.

The ADATAP theory itself (eqs. 45-67) is :mod:`explorer.bootstrap.replica` (dense) and
:mod:`explorer.bootstrap.lowrank` (K ≈ ΦΦᵀ), shared with the other papers. Here: ``montecarlo`` the
Monte-Carlo bootstrap it is compared with (on a kernel matrix or features), ``l1`` the L1 distances between Monte-Carlo
histograms and the eq. (60) mixture, ``problems`` the regression problem (dense or low-rank) and ``paths`` the
computations on each, ``stages`` the stages the CLI and the app share (theory and Monte-Carlo learning curves,
held-out moments), ``steps`` the resamples one at a time (the "Bootstrap, step by step" page), ``experiments`` the
comparisons behind the paper's figures; ``variational`` and ``mean_field`` the variational-Gaussian and mean-field
replica approximations of Fig. 1 (derivation: ``docs/derivations/vg_mf.md``); ``linear_response`` and
``linear_response_lowrank`` the infinitesimal jackknife and closed-form leave-one-out (``docs/linear_response.md``);
``evidence`` and ``evidence_lowrank`` the hyperparameters of largest evidence.
"""
