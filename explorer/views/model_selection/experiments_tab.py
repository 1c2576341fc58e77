"""The "Experiments" sub-panel of the model-selection tab ([Fis16]): the experiment's controls, Run/Cancel with
progress, its figure, its table and its downloads, for a
:class:`~explorer.views.model_selection.experiments_state.SelectionExperimentState` (which holds the experiments, their
jobs and their figures).
"""

from __future__ import annotations

import panel as pn
import param

from explorer.views.common.files.exports import Export
from explorer.views.common.layout.tab import JobTab
from explorer.views.common.layout.widgets import csv_upload, declared_sidebar
from explorer.views.common.state import declarations
from explorer.views.model_selection.experiments_state import (
    SelectionExperimentState,
    experiment_frame,
    experiment_plot,
    experiment_summary,
)
from explorer.views.model_selection.exports import EXPERIMENT_EXPORTS

__all__ = ["SelectionExperimentsPanel"]


class SelectionExperimentsPanel(JobTab):
    """The thesis experiments as the "Experiments" sub-panel of the model-selection tab: the experiment and its
    settings (only those it uses are shown), the temperature CSV (path or upload), Run/Cancel with progress, the
    figure and the table of the result, CSV/JSON exports. CSS classes ``explorer-experiment-…``.

    Nothing is computed until Run is pressed (a cached result for the settings is shown at once).
    """

    state = param.ClassSelector(class_=SelectionExperimentState, label="State",
                                doc="The experiments state the panel shows.")

    css_prefix = "explorer-experiment"
    run_label = "Run experiment"
    tab_css = "panel"

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        self.upload = csv_upload(self._css("upload"), s.upload_temperature, on_refused=s.refuse)
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=[self._css("status")])
        self.plot = pn.pane.HoloViews(experiment_plot(s), sizing_mode="stretch_width", min_height=430,
                                      linked_axes=False, css_classes=[self._css("plot")])
        self.table = pn.pane.DataFrame(experiment_frame(s), index=False, sizing_mode="stretch_width",
                                       css_classes=[self._css("table")])
        s.param.watch(self._on_result, "result")
        s.param.watch(self._on_settings, list(declarations.control_names(s)))
        self._on_result()
        self._on_settings()

    def _job_css(self, what: str, name: str) -> str:
        return self._css(what)  # one job: explorer-experiment-progress, -job-message, -job-error

    def exports(self) -> tuple[Export, ...]:
        return EXPERIMENT_EXPORTS

    def _on_settings(self, *events) -> None:
        """Show the upload while the temperature series is used, and what the experiment does."""
        s = self.state
        self.upload.visible = s._uses_temperature()
        self.status.object = experiment_summary(s)

    def _on_result(self, *events) -> None:
        self.plot.object = self.styled(experiment_plot(self.state))
        self.table.object = experiment_frame(self.state)
        self.status.object = experiment_summary(self.state)

    def control_column(self) -> pn.Column:
        """The declared controls by group (:func:`declared_sidebar`), the upload after the data folder's CSV."""
        return declared_sidebar(self.state, self.widgets, inserts={"temperature_csv": [self.upload]},
                                sizing_mode="stretch_width", css_classes=[self._css("controls")])

    def content(self) -> pn.Column:
        return self.frame(self.status, self.plot, self.table)

    def restyle(self) -> None:
        self._on_result()
