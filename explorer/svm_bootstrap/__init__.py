"""Seed 004 (Malzahn & Opper, NIPS 2003): bootstrap averages of hard-margin support vector classifiers.

``classifier`` the hard-margin SVM, ``montecarlo`` its Monte-Carlo bootstrap, ``replica`` the replica
theory, ``experiments`` the SVM problem and the comparisons.
"""
