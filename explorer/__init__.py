"""Resampling Explorer: analytical approximations of resampling averages, side by side with Monte-Carlo.

The compute core (``kernels``, ``regression``, ``montecarlo``, ``replica``, ``compare``, ``datasets``)
uses numpy and scipy only; the views, the app and the CLI sit on top of it.
"""

__version__ = "0.1.0"
