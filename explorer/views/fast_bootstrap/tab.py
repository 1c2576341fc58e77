"""The fast-bootstrap tab (seed 002): the controls of
:class:`~explorer.views.fast_bootstrap.state.FastBootstrapState`, its figures and summary, in the frame every
tab shares (:class:`~explorer.views.common.tab.JobTab`)."""

from __future__ import annotations

import panel as pn
import param

from explorer.views.common.exports import Export
from explorer.views.common.session import bind_to_session
from explorer.views.common.tab import JobTab
from explorer.views.common.widgets import REPLICATION_TERMS, csv_upload
from explorer.views.fast_bootstrap.exports import EXPORTS
from explorer.views.fast_bootstrap.figures import generalization_plot, optimism_plot
from explorer.views.fast_bootstrap.state import RUN_LABELS, SERIES, FastBootstrapState
from explorer.views.fast_bootstrap.tables import summary, summary_display

__all__ = ["FastBootstrapTab"]

_FIGURES = {"optimism": optimism_plot, "generalization": generalization_plot}
#: The main figure: first, as high as the screen allows.
_MAIN = "generalization"


class FastBootstrapTab(JobTab):
    """Seed 002 as a tab: controls, job progress with Run/Cancel, optimism and generalization error vs
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
    control_names = ("dataset", "n_points", "series_csv", "series_column", "lags", "model", "lengthscale", "wsf",
                     "max_epochs", "n_init", "full_start", "full_stop", "full_step", "full_replications", "fast_start",
                     "fast_stop", "fast_step", "fast_replications", "log_complexity", "kappa0", "kappa1", "with_full",
                     "with_replica", "replica_points", "auto_run", "seed")
    progress_width = 140
    label_messages = False  # the job messages name their job ("Full bootstrap: 3 of 100 replications done.")

    def __init__(self, **params):
        if params.get("state") is None:
            params["state"] = FastBootstrapState()
        super().__init__(**params)
        s = self.state
        bind_to_session(s)
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
        s.param.watch(self._on_results, ["data", "fast", "full", "replica"])
        s.param.watch(self._on_visibility, ["dataset", "model"])
        self._on_results()
        self._on_visibility()

    def run_buttons(self) -> dict[str, tuple[str, str | None]]:
        return {f"run-{kind}": (RUN_LABELS[kind], kind) for kind in ("fast", "full", "replica")}

    def exports(self) -> tuple[Export, ...]:
        return EXPORTS

    # --- updates
    def _on_visibility(self, *events) -> None:
        """Show the controls of the chosen data source and model, and nothing else."""
        s, w = self.state, self.widgets
        w["n_points"].visible = s.dataset in ("toy", "teacher")
        for name in ("series_column", "lags"):
            w[name].visible = s.dataset == SERIES
        w["series_csv"].visible = s.dataset == SERIES and len(s.param.series_csv.objects) > 1  # a data folder's files
        self.upload.visible = s.dataset == SERIES
        w["lengthscale"].visible = w["with_replica"].visible = w["replica_points"].visible = s.model == "ls-svm"
        self.runs["run-replica"].visible = s.model == "ls-svm"
        w["wsf"].visible = s.model == "rbfn"
        w["max_epochs"].visible = w["n_init"].visible = s.model == "mlp"

    def _on_results(self, *events) -> None:
        for what, figure in _FIGURES.items():
            self.plots[what].object = self.styled(figure(self.state), fill=what == _MAIN)
        self.table.object = summary_display(self.state)
        self.status.object = summary(self.state)

    def restyle(self) -> None:
        self._on_results()

    def control_column(self) -> pn.Column:
        w = self.widgets
        return pn.Column(
            "### Data", w["dataset"], w["n_points"], self.upload, w["series_csv"], w["series_column"], w["lags"],
            "### Model", w["model"], w["lengthscale"], w["wsf"], w["max_epochs"], w["n_init"],
            "### Grids (Tables 1-2)", w["full_start"], w["full_stop"], w["full_step"], w["full_replications"],
            w["fast_start"], w["fast_stop"], w["fast_step"], w["fast_replications"], w["log_complexity"],
            self.reset,
            "### F test, eq. (11)", w["kappa0"], w["kappa1"],
            "### Runs", w["with_full"], w["with_replica"], w["replica_points"], w["auto_run"], w["seed"],
            sizing_mode="stretch_width", css_classes=[self._css("controls")])

    def content(self) -> pn.Column:
        return self.figure_frame(self.plots[_MAIN], self.status, self.plots["optimism"],
                                 "#### Summary (models trained include eq. (7)'s; seconds include eq. (7))", self.table,
                                 terms=REPLICATION_TERMS)
