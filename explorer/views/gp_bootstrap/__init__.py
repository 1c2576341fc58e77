"""Views of seed 000 (GP bootstrap): the session state (:mod:`.state`), its figures (:mod:`.figures`), the four
GP tabs (:mod:`.tab`), presets (:mod:`.presets`) and the page declaration (:mod:`.page`)."""

# Each page package exports its state and its tab; everything else is imported from the module that holds it.
from explorer.views.gp_bootstrap.state import GPBootstrapState
from explorer.views.gp_bootstrap.tab import GPBootstrapView

__all__ = ["GPBootstrapState", "GPBootstrapView"]
