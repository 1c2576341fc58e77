"""The "Bootstrap, step by step" page (issue 24): the resamples one at a time beside the theory of seed 000. The
session state (:mod:`.state`), its figures (:mod:`.figures`), the tab (:mod:`.tab`), presets (:mod:`.presets`) and
the page declaration (:mod:`.page`)."""

# Each page package exports its state and its tab; everything else is imported from the module that holds it.
from explorer.views.step_by_step.state import StepState
from explorer.views.step_by_step.tab import StepTab

__all__ = ["StepState", "StepTab"]
