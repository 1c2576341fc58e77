"""The "Bootstrap, step by step" page (issue 24): the resamples one at a time beside the theory of [MO03]. The
session state (:mod:`~explorer.views.step_by_step.state`), its figures (:mod:`~explorer.views.step_by_step.figures`), the tab (:mod:`~explorer.views.step_by_step.tab`), presets (:mod:`~explorer.views.step_by_step.presets`) and
the page declaration (:mod:`~explorer.views.step_by_step.page`)."""

# Each page package exports its state and its tab; everything else is imported from the module that holds it.
from explorer.views.step_by_step.state import StepState
from explorer.views.step_by_step.tab import StepTab

__all__ = ["StepState", "StepTab"]
