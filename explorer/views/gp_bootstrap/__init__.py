"""Views of [MO03] (GP bootstrap): the session state (:mod:`~explorer.views.gp_bootstrap.state`), its figures (:mod:`~explorer.views.gp_bootstrap.figures`), the four
GP tabs (:mod:`~explorer.views.gp_bootstrap.tab`), presets (:mod:`~explorer.views.gp_bootstrap.presets`) and the page declaration (:mod:`~explorer.views.gp_bootstrap.page`)."""

# Each page package exports its state and its tab; everything else is imported from the module that holds it.
from explorer.views.gp_bootstrap.state import GPBootstrapState
from explorer.views.gp_bootstrap.tab import GPBootstrapView

__all__ = ["GPBootstrapState", "GPBootstrapView"]
