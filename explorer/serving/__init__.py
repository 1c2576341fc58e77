"""Serving the explorer: the server (:mod:`~explorer.serving.server`: serve, signals, memory
release), the sessions (:mod:`~explorer.serving.sessions`), the result caches the sessions share
(:mod:`~explorer.serving.caches`), the warm-up (:mod:`~explorer.serving.warmup`), the Dask engine the Monte-Carlo runs on
(:mod:`~explorer.serving.engine`) and the server's data folder (:mod:`~explorer.serving.data_folder`).

Beside :mod:`explorer.views` (the pages): the pages' states use the caches, sessions and engine; the server builds the
pages. Nothing here computes a paper's method (the compute core does).
"""
