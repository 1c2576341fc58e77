"""The fast-bootstrap tab ([LSWV05]): the controls of
:class:`~explorer.views.fast_bootstrap.state.FastBootstrapState`, its figures and summary, in the frame every
tab shares (:class:`~explorer.views.common.layout.tab.JobTab`)."""

from __future__ import annotations

import panel as pn
import param

from explorer.views.common.files.exports import Export
from explorer.views.common.layout.tab import JobTab
from explorer.views.common.layout.widgets import REPLICATION_TERMS, csv_upload, declared_sidebar
from explorer.views.common.state.declarations import applies, control_names, groups
from explorer.views.fast_bootstrap.exports import EXPORTS
from explorer.views.fast_bootstrap.figures import generalization_plot, optimism_plot
from explorer.views.fast_bootstrap.state import GRIDS, JOB_KINDS, RUN_LABELS, SERIES, FastBootstrapState
from explorer.views.fast_bootstrap.tables import summary, summary_display

__all__ = ["FastBootstrapTab"]

_FIGURES = {"optimism": optimism_plot, "generalization": generalization_plot}
#: The main figure: first, as high as the screen allows.
_MAIN = "generalization"


def _offers_choice(widget: pn.widgets.Widget) -> bool:
    """False for a selection with a single option (nothing to choose, e.g. no data folder), else True."""
    return not isinstance(widget, pn.widgets.Select) or len(widget.options) > 1


class FastBootstrapTab(JobTab):
    """[LSWV05] as a tab: controls, job progress with Run/Cancel, optimism and generalization error vs
    complexity (Figs. 2-7), the summary table (Table 1's quantities), JSON/CSV exports. CSS classes
    ``explorer-fastboot-…``: the controls ``explorer-fastboot-<parameter with - for _>``, ``-upload``,
    ``-plot-optimism``, ``-plot-generalization``, ``-summary`` (table), ``-status``, ``-error``,
    ``-progress-<kind>``, ``-job-message-<kind>``, ``-job-error-<kind>``, ``-run-fast``, ``-run-full``, ``-run-replica``,
    ``-cancel``, ``-reset``, ``-json``, ``-csv`` (kinds ``fast``, ``full``, ``replica``).

    In a served session the tab sends the jobs' updates to the session's event loop and closes the state
    when the session ends. The state starts computing when the tab is first rendered (``__panel__``).
    """

    state = param.ClassSelector(class_=FastBootstrapState, label="State",
                                doc="The fast-bootstrap session state the tab shows.")

    css_prefix = "explorer-fastboot"
    progress_width = 140
    label_messages = False  # the job messages name their job ("Full bootstrap: 3 of 100 replications done.")

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        self.upload = csv_upload(self._css("upload"), s.upload_series, on_refused=s.refuse)
        self.reset = pn.widgets.Button(label=s.param.paper_values.label, color="light", sizing_mode="stretch_width",
                                       css_classes=[self._css("reset")])
        self.reset.on_click(lambda event: self.state.reset_to_paper())
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=[self._css("status")])
        # a new figure per result (not a DynamicMap): the x-axis turns log or linear with the model
        self.plots = {what: pn.pane.HoloViews(figure(s), sizing_mode="stretch_width", min_height=360,
                                              linked_axes=False, css_classes=[self._css(f"plot-{what}")])
                      for what, figure in _FIGURES.items()}
        # the generalization error, which selects the complexity, is the main figure: first, as high as the screen
        self.plots[_MAIN] = self.main_figure(self.styled(_FIGURES[_MAIN](s), fill=True), self._css(f"plot-{_MAIN}"))
        self.table = pn.pane.DataFrame(summary_display(s), sizing_mode="stretch_width",
                                       css_classes=[self._css("summary")])
        s.param.watch(self._on_results, list(s.outputs))
        s.param.watch(self._on_visibility, list(control_names(s)))
        self._on_results()
        self._on_visibility()

    def run_buttons(self) -> dict[str, tuple[str, str | None]]:
        return {f"run-{kind}": (RUN_LABELS[kind], kind) for kind in JOB_KINDS}

    def exports(self) -> tuple[Export, ...]:
        return EXPORTS

    # --- updates
    def _on_visibility(self, *events) -> None:
        """Show the controls that apply to the chosen data source and model (their declarations' ``applies``) and
        offer a choice (the data folder's files: none without a folder), the upload for a time series and the
        replica theory's Run button for the LS-SVM, and nothing else."""
        s = self.state
        for name, widget in self.widgets.items():
            widget.visible = applies(s, name) and _offers_choice(widget)
        self.upload.visible = s.dataset == SERIES
        self.runs["run-replica"].visible = s.model == "ls-svm"

    def _on_results(self, *events) -> None:
        for what, figure in _FIGURES.items():
            self.plots[what].object = self.styled(figure(self.state), fill=what == _MAIN)
        self.table.object = summary_display(self.state)
        self.status.object = summary(self.state)

    def restyle(self) -> None:
        self._on_results()

    def control_column(self) -> pn.Column:
        """The declared sidebar (groups and controls in the order of their declarations), with the upload after the
        number of points and "Reset to paper values" after the last control it resets."""
        inserts = {"n_points": [self.upload], groups(self.state)[GRIDS][-1]: [self.reset]}
        return declared_sidebar(self.state, self.widgets, inserts=inserts, sizing_mode="stretch_width",
                                css_classes=[self._css("controls")])

    def content(self) -> pn.Column:
        return self.figure_frame(self.plots[_MAIN], self.status, self.plots["optimism"],
                                 "#### Summary (models trained include eq. (7)'s; seconds include eq. (7))", self.table,
                                 terms=REPLICATION_TERMS)
