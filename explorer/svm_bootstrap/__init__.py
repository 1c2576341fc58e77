"""[MO03b] (Malzahn & Opper, NIPS 2003): bootstrap averages of hard-margin support vector classifiers.

``classifier`` the hard-margin SVM, ``montecarlo`` its Monte-Carlo bootstrap, ``svm_replica`` the replica theory;
``problem`` the SVM problem (standardised inputs, labels, kernel, merged sites), ``stages`` the stages the CLI and
the app share on it (the theory's learning curve with its S → ∞ levels, the Monte-Carlo curve), ``experiments``
the comparisons (learning curve of Fig. 1 left, field distribution of Fig. 1 right, timings).
"""
