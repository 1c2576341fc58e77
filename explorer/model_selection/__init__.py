"""[Fis16] (Fischer, ETH 2016): GP model selection by approximation set coding.

The criteria, one module per family: ``evidence`` the negative log evidence (and ``CriterionValue``, what every
criterion returns), ``cross_validation`` leave-one-out and K-fold CV in closed form, ``asc`` the ASC mutual
information, ``bootstrap_632`` Efron's .632 bootstrap error from the replica theory; ``criterion`` binds a name of
``CRITERIA`` to its random parts (the folds, the ASC partitions). Then ``optimisation`` the L-BFGS-B restarts over the
hyperparameters, ``selection`` the hyperparameters each criterion selects and the ranking of functional forms,
``curves`` a criterion along one hyperparameter, ``held_out`` the test error of a selected model. ``problem`` the
data of one selection, ``stages`` the stages the CLI and the app share on it (criterion curves, selected
hyperparameters, ranking), ``experiments`` the thesis experiments.
"""
