"""[MO03] (Malzahn & Opper, JMLR 2003): bootstrap averages of GP regression without retraining.

The ADATAP theory itself (eqs. 45-67) is :mod:`explorer.bootstrap.replica` (dense) and
:mod:`explorer.operators` (dense K or K ≈ ΦΦᵀ), shared with the other papers. Here: ``montecarlo`` the
Monte-Carlo bootstrap it is compared with (on a kernel matrix or features), ``l1`` the L1 distances between Monte-Carlo
histograms and the eq. (60) mixture, ``problem`` the regression problem (dense or low-rank, built
once, holding its kernel operator), ``stages`` the stages the CLI and the app share (theory and Monte-Carlo learning curves,
held-out moments), ``steps`` the resamples one at a time (the "Bootstrap, step by step" page), ``experiments`` the
comparisons behind the paper's figures; ``variational`` and ``mean_field`` the variational-Gaussian and mean-field
replica approximations of Fig. 1 (derivation: ``docs/derivations/vg_mf.md``); ``linear_response``
the infinitesimal jackknife and closed-form leave-one-out on a dense K or features Φ (``docs/linear_response.md``);
``evidence`` the hyperparameters of largest evidence (exact and Nyström GP).
"""
