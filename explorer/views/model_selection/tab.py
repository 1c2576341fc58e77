"""The model-selection tab of [Fis16]: the controls of a :class:`~explorer.views.model_selection.state.SelectionState`
and its figures and tables (:mod:`explorer.views.model_selection.figures`) on the common frame of
:class:`~explorer.views.common.layout.tab.JobTab`, with the "Experiments" sub-panel
(:class:`~explorer.views.model_selection.experiments_tab.SelectionExperimentsPanel`) beside it.
"""

from __future__ import annotations

import holoviews as hv
import panel as pn
import param

from explorer.views.common.files.exports import Export
from explorer.views.common.layout.tab import JobTab
from explorer.views.common.layout.widgets import (
    Revision,
    csv_upload,
    declared_sidebar,
    layers,
    live,
)
from explorer.views.model_selection.experiments_state import SelectionExperimentState
from explorer.views.model_selection.experiments_tab import SelectionExperimentsPanel
from explorer.views.model_selection.exports import EXPORTS
from explorer.views.model_selection.figures import FIGURES, optima_frame, ranking_frame, summary
from explorer.views.model_selection.state import SelectionState

__all__ = ["SelectionTab"]

#: The main figure (first, as high as the screen allows): the criteria along the hyperparameter.
_MAIN = "curves"


class SelectionTab(JobTab):
    """[Fis16] model selection as a tab. Sub-panel "Explore": controls, job progress with Run/Cancel, the
    criteria on one normalised axis, the predictive mean ± 2σ of each selected model, the ranking of functional
    forms and the optima table, CSV/HTML exports (CSS classes ``explorer-selection-…``). Sub-panel
    "Experiments": :class:`SelectionExperimentsPanel`.

    In a served session the tab sends the jobs' updates to the session's event loop and closes the state
    when the session ends. The state starts computing when the tab is first rendered (``__panel__``).
    """

    state = param.ClassSelector(class_=SelectionState, label="State",
                                doc="The model-selection session state the tab shows.")
    experiments = param.ClassSelector(class_=SelectionExperimentState, label="Experiments",
                                      doc="The thesis-experiments state of the 'Experiments' sub-panel.")

    css_prefix = "explorer-selection"
    run_label = "Run"

    def __init__(self, **params):
        if params.get("experiments") is None:
            params["experiments"] = SelectionExperimentState()
        super().__init__(**params)
        self.experiments_panel = SelectionExperimentsPanel(state=self.experiments)
        s = self.state
        self.upload = csv_upload(self._css("upload"), s.upload_csv, on_refused=s.refuse)
        self._figures: dict[str, hv.Overlay] = {}   # the newest figure of each plot, as drawn
        self.streams: dict[str, Revision] = {}
        self.plots = {what: pn.pane.HoloViews(sizing_mode="stretch_width", min_height=430, linked_axes=False,
                                              css_classes=[self._css(f"plot-{what}")]) for what in FIGURES}
        self.plots[_MAIN] = self.main_figure(None, self._css(f"plot-{_MAIN}"))  # first, as high as the screen allows
        self.status = pn.pane.Markdown("", css_classes=[self._css("status")], sizing_mode="stretch_width")
        self.tables = {what: pn.pane.DataFrame(frame(s), index=False, sizing_mode="stretch_width",
                                               css_classes=[self._css(what)])
                       for what, frame in (("ranking", ranking_frame), ("optima", optima_frame))}
        s.param.watch(self._on_results, ["curves", "optima", "ranking", "problem"])
        self._on_results()
        self.param.watch(self._on_placement, ["controls_in_sidebar", "presentation"])
        self._on_placement()
        self.subtabs = pn.Tabs(sizing_mode="stretch_width", css_classes=[self._css("subtabs")])
        self.subtabs.param.watch(self._on_subtab, "active")
        panels = s.param.subpanel.objects  # the open sub-panel is a setting: a link names it
        self.subtabs.param.watch(lambda e: setattr(s, "subpanel", panels[e.new]), "active")
        s.param.watch(lambda e: setattr(self.subtabs, "active", panels.index(e.new)), "subpanel")

    def exports(self) -> tuple[Export, ...]:
        return EXPORTS

    def _on_results(self, *events) -> None:
        for what in FIGURES:
            self._redraw(what)
        self.status.object = summary(self.state)
        self.tables["ranking"].object = ranking_frame(self.state)
        self.tables["optima"].object = optima_frame(self.state)

    def _redraw(self, what: str) -> None:
        """Show the state's figure ``what``: in place when it has the same layers as the one on the page, else as a
        new Bokeh figure.

        Given other layers, HoloViews changes the figure on the page in place: it adds renderers in one message and
        moves the legend beside the plot in the next. A browser still building the figure (the tab opened a moment
        before a result came) then lays the plot out before the legend's view exists and logs "cannot find a view
        for Legend" at every repaint. A new figure arrives whole, in one message.
        """
        figure = self.styled(FIGURES[what](self.state), fill=what == _MAIN)
        old = self._figures.get(what)
        self._figures[what] = figure
        if old is not None and layers(old) == layers(figure):
            self.streams[what].event(revision=self.streams[what].revision + 1)
            return
        self.streams[what] = stream = Revision()
        self.plots[what].object = live(lambda: self._figures[what], stream)

    def _on_placement(self, *events) -> None:
        """The Experiments sub-panel shows its controls where the tab shows its own, and draws as the tab does."""
        self.experiments_panel.param.update(controls_in_sidebar=self.controls_in_sidebar,
                                            presentation=self.presentation)

    def _on_subtab(self, *events) -> None:
        """The sidebar shows the controls of the open sub-panel."""
        if self._controls is not None:
            explore, experiments = self._controls.objects
            explore.visible, experiments.visible = self.subtabs.active == 0, self.subtabs.active == 1

    def restyle(self) -> None:
        self._on_results()

    def control_column(self) -> pn.Column:
        """The controls of the Explore sub-panel (the state's declared groups, the upload after the dataset), then
        (hidden until that sub-panel is open) the Experiments'."""
        upload = [pn.pane.Markdown("Upload a regression CSV (header row, numeric columns):", margin=(0, 10)),
                  self.upload]
        explore = declared_sidebar(self.state, self.widgets, inserts={"dataset": upload}, sizing_mode="stretch_width",
                                   css_classes=[self._css("controls")])
        experiments = self.experiments_panel.controls
        experiments.visible = False
        return pn.Column(explore, experiments, sizing_mode="stretch_width")

    def content(self) -> pn.Column:
        # the figures one above the other and the tables one above the other: each gets the whole width
        tables = pn.Column("#### Ranking of functional forms (rank 1 = lowest = best)", self.tables["ranking"],
                           "#### Selected hyperparameters", self.tables["optima"], sizing_mode="stretch_width")
        return self.figure_frame(self.plots[_MAIN], self.status, *[self.plots[w] for w in FIGURES if w != _MAIN],
                                 tables)

    def layout(self) -> pn.Tabs:
        """The Explore sub-panel (controls beside it unless in the sidebar) and the Experiments sub-panel."""
        if self.controls_in_sidebar:
            explore = pn.Column(self.content(), sizing_mode="stretch_width", css_classes=[self._css("tab")])
        else:
            explore = pn.Row(pn.Column(self.controls.objects[0], width=300), self.content(),
                             sizing_mode="stretch_width", css_classes=[self._css("tab")])
        self.subtabs[:] = [("Explore", explore), ("Experiments", self.experiments_panel)]
        self.subtabs.active = self.state.param.subpanel.objects.index(self.state.subpanel)
        return self.subtabs
