"""The SVM bootstrap tab ([MO03b], Fig. 1): controls, job progress, the two figures and their exports."""

from __future__ import annotations

import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used below)
import panel as pn
import param

from explorer.views.common.files.exports import Export
from explorer.views.common.layout.tab import JobTab
from explorer.views.common.layout.widgets import (
    BOOTSTRAP_TERMS,
    Revision,
    csv_upload,
    declared_sidebar,
    live,
)
from explorer.views.common.state.declarations import view_options
from explorer.views.svm_bootstrap.exports import EXPORTS
from explorer.views.svm_bootstrap.figures import FIGURES, curve_summary, field_summary
from explorer.views.svm_bootstrap.state import SVMState

__all__ = ["SVMTab"]


class SVMTab(JobTab):
    """[MO03b] Fig. 1 as a tab: controls, job progress with Run/Cancel, the learning curve (left), the
    internal-field distribution at a test input (right), CSV/HTML exports. CSS classes ``explorer-svm-…``.

    In a served session the tab sends the jobs' updates to the session's event loop and closes the state
    when the session ends. The state starts computing when the tab is first rendered (``__panel__``).
    """

    state = param.ClassSelector(class_=SVMState, label="State", doc="The SVM session state the tab shows.")

    css_prefix = "explorer-svm"

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        self.upload = csv_upload("explorer-svm-upload", s.upload_csv, on_refused=s.refuse)
        self.streams = {"curve": Revision(), "field": Revision()}
        # the learning curve is the main figure: first, as high as the screen allows; the field under it (whose frame
        # and wider legend do not set the curve's: align=False)
        self.plots = {"curve": self.main_figure(
            live(lambda: self.styled(FIGURES["curve"](self.state), fill=True, align=False), self.streams["curve"]),
            "explorer-svm-plot-curve"),
            "field": pn.pane.HoloViews(
            live(lambda: self.styled(FIGURES["field"](self.state)), self.streams["field"]),
            sizing_mode="stretch_width", min_height=430, linked_axes=False, css_classes=["explorer-svm-plot-field"])}
        self.status = {what: pn.pane.Markdown("", css_classes=[f"explorer-svm-status-{what}"],
                                              sizing_mode="stretch_width") for what in ("curve", "field")}
        s.param.watch(self._on_curve, ["theory_curve", "curve_mc", "problem"])
        # the field figure redraws for a new field or test problem and for a control that only picks what it shows
        s.param.watch(self._on_field, ["field", "test_problem", *view_options(s)])
        self._on_curve()
        self._on_field()

    def exports(self) -> tuple[Export, ...]:
        return EXPORTS

    # --- updates
    def _on_job(self, name: str, *events) -> None:
        super()._on_job(name, *events)
        if name == "theory" and hasattr(self, "status"):
            self._on_curve()

    def _on_curve(self, *events) -> None:
        self.streams["curve"].event(revision=self.streams["curve"].revision + 1)
        self.status["curve"].object = curve_summary(self.state)

    def _on_field(self, *events) -> None:
        self.streams["field"].event(revision=self.streams["field"].revision + 1)
        self.status["field"].object = field_summary(self.state)

    def restyle(self) -> None:
        self._on_curve()
        self._on_field()

    def control_column(self) -> pn.Column:
        upload = [pn.pane.Markdown("Upload a two-class CSV (header row, numeric inputs):", margin=(0, 10)), self.upload]
        return declared_sidebar(self.state, self.widgets, inserts={self.state.param.dataset.name: upload},
                                sizing_mode="stretch_width", css_classes=["explorer-svm-controls"])

    def content(self) -> pn.Column:
        # one figure above the other: each gets the whole width and its legend beside the data
        return self.figure_frame(self.plots["curve"], self.status["curve"], self.status["field"], self.plots["field"],
                                 terms=BOOTSTRAP_TERMS)
