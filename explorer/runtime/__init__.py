"""The runtime: what runs the computations of the pages and keeps their results, below the pages and the app.

- :mod:`~explorer.runtime.engine` — the Dask engine the Monte-Carlo chunks run on (a local cluster, or a scheduler's
  address), with progress, cancelling and seeds that make the numbers independent of the workers;
- :mod:`~explorer.runtime.caches` — the result caches the sessions share;
- :mod:`~explorer.runtime.sessions` — the sessions of the served pages, their release and the server's memory;
- :mod:`~explorer.runtime.rooms` — the class rooms: the students' pooled resamples and the lecturer's view of them;
- :mod:`~explorer.runtime.compat` — the one place where an upstream problem of Panel, Bokeh or param is worked around,
  each with its upstream issue and a test.

Layer: imports the compute core and the libraries that run it (Dask, Panel's server state); never a page
(:mod:`explorer.views`), the app or the server (``tests/test_layers.py``).
"""
