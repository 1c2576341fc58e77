"""Panel views of the Gaussian-process page: its four tabs and the whole view, each a ``pn.viewable.Viewer`` (the
sidebar of controls is :mod:`~explorer.views.gp_bootstrap.sidebar`, imported here as before).

Widgets are made per instance from the state's parameters (``from_param``), never as class attributes,
so that every session has its own. Every main element carries a stable CSS class ``explorer-…``
(listed in :data:`CSS`) for browser tests and the tour.
"""

from __future__ import annotations

import time
from typing import ClassVar

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from explorer.gp_bootstrap.l1 import BOSTON_TARGET_SD
from explorer.views.common.drawing.patching import forget_frames, patch_overlay
from explorer.views.common.files.exports import Export
from explorer.views.common.layout.presentation import FIGURE_HEIGHT
from explorer.views.common.layout.tab import MAIN_FIGURE_CSS, JobTab
from explorer.views.common.layout.widgets import (
    BOOTSTRAP_TERMS,
    LazyTabs,
    Revision,
    live,
    param_widget,
)
from explorer.views.common.state.declarations import invalidating
from explorer.views.gp_bootstrap import exports as gp_exports
from explorer.views.gp_bootstrap import figures
from explorer.views.gp_bootstrap.sidebar import GPControls
from explorer.views.gp_bootstrap.state import GP_TABS, HOLDOUT_TAB, GPBootstrapState

__all__ = ["GPControls", "LearningCurveTab", "DistributionTab", "L1Tab", "HoldoutTab", "GPBootstrapView",
           "GP_TAB_TITLES", "GP_CSS"]

GP_TAB_TITLES = dict(zip(GP_TABS, ("Learning curve", "Predictive distribution", "L1 map", "Test inputs")))

#: The stable CSS classes of the Gaussian-process part of the page, for browser tests and the tour ({tab}: curve,
#: distribution, l1, holdout; {name}: a parameter of GPBootstrapState with "_" written "-", e.g. explorer-s-over-n). Panel renders
#: each element in a shadow root under the element carrying the class; Playwright's CSS selectors pierce it,
#: e.g. ".explorer-dataset select", ".explorer-s-over-n input", ".explorer-status-curve div".
GP_CSS = {
    "controls": "explorer-controls",            # the sidebar column
    "widget": "explorer-{name}",                # dataset, target, subsample, holdout, kernel, ard, l2, lengthscale, signal-var,
                                                # alpha, period, noise-var, s-over-n, loss, eps, beta,
                                                # curve-mc-samples, mc-samples, seed, auto-mc, input-index,
                                                # show-components
    "upload": "explorer-upload",                # FileInput (input[type=file])
    "tabs": "explorer-tabs",                    # LazyTabs; headers are .bk-tab with the GP_TAB_TITLES texts
    "tab": "explorer-tab-{tab}",                # the content column of a tab
    "error": "explorer-error",                  # Alert over the tab's figure: settings that cannot be computed
                                                # (hidden when none; it covers the figure)
    "notice": "explorer-notice",                # Alert over the top of the tab's figure: ignored link parameters,
                                                # missing data directory, hyperparameters chosen by maximum evidence
    "plot": "explorer-plot-{tab}",              # the HoloViews pane of the tab's figure
    "inputs": "explorer-inputs-plot",           # the tappable scatter of the distribution tab
    "status": "explorer-status-{tab}",          # Markdown summary line (text changes with the results)
    "revision": "explorer-revision-{tab}",      # <span data-revision="n">: n counts figure updates (no text)
    "progress": "explorer-progress-{tab}",      # Progress bar (value 0..100)
    "job_message": "explorer-job-message-{tab}",  # Str: "Monte-Carlo at S/N = 1: 256/500 samples", "done", ...
    "job_error": "explorer-job-error-{tab}",    # Alert: a failed background job
    "theory": "explorer-theory-{tab}",          # Str: the theory's progress while it computes ("" when idle)
    "run": "explorer-run-{tab}", "cancel": "explorer-cancel-{tab}",  # Buttons (cancel disabled when idle)
    "csv": "explorer-csv-{tab}", "html": "explorer-html-{tab}",      # FileDownload buttons: plain CSV, HTML page
    "json": "explorer-json-{tab}",              # FileDownload: the settings behind the CSV (JSON sidecar)
    "summary": "explorer-l1-summary",           # Markdown table of the L1 tab
    "worst": "explorer-worst-table",            # Tabulator of the worst inputs (click a row)
}


def _widget(state: GPBootstrapState, name: str, kind: type[pn.widgets.Widget] = pn.widgets.FloatInput,
            **options) -> pn.widgets.Widget:
    """A widget linked to ``state.<name>``, with the stable CSS class ``explorer-<name>``."""
    return param_widget(state, name, kind, "explorer", **options)


# ------------------------------------------------------------------------------------------ tabs


class _Tab(JobTab):
    """A Gaussian-process tab: the job row of its Monte-Carlo job, the figure, the status line and the exports
    (CSS classes ``explorer-<what>-<tab>``); it redraws only while shown, hidden tabs catch up when opened."""

    state = param.ClassSelector(class_=GPBootstrapState, label="State", doc="The session state the tab shows.")

    tab: ClassVar[str]
    kind: ClassVar[str]                       # the Monte-Carlo job kind the tab shows
    redraw_on: ClassVar[tuple[str, ...]]      # outputs of the state the figure depends on (controls: "<tab> figure")
    progress_width = 220
    label_messages = False
    owns_state = False                        # the view (or the app) starts the shared state
    declared_controls = False                 # the page's sidebar shows them (GPControls)

    #: The jobs whose progress the theory line shows (those that run before the tab's figure has its theory).
    theory_jobs: ClassVar[tuple[str, ...]] = ("evidence", "problem", "solution")

    def __init__(self, **params):
        super().__init__(**params)
        t = self.tab
        # the theory's progress: a view of the jobs' status (Panel redraws it when one of them changes)
        statuses = [self.state.jobs[kind].param for kind in self.theory_jobs]
        self.theory_line = pn.pane.Str(
            pn.bind(self._theory_text, *[p[name] for p in statuses for name in ("running", "message", "progress")]),
            css_classes=[f"explorer-theory-{t}"], margin=(0, 10), styles={"color": "#555"})
        self.revision = 0
        self._stale = True
        self._patched = False
        self.stream = Revision()
        self.plot = self.plot_pane()
        self.status_line = pn.pane.Markdown("", css_classes=[f"explorer-status-{t}"], sizing_mode="stretch_width")
        self.revision_line = pn.pane.HTML("", css_classes=[f"explorer-revision-{t}"], styles={"color": "#888"})
        self.csv, self.html, self.json = self.downloads
        # and the controls declared to change the figures of every tab or of this one (e.g. the input shown)
        self.state.param.watch(self._on_state, [*self.redraw_on,
                                                *invalidating(self.state, "figures", f"{t} figure")])
        self.redraw()

    def plot_pane(self) -> pn.viewable.Viewable:
        """The element that shows :meth:`figure` (CSS class ``explorer-plot-<tab>``)."""
        return self.main_figure(self.figure(), f"explorer-plot-{self.tab}")

    def shown_jobs(self) -> dict[str, str]:
        return {self.tab: self.kind}

    def run_kind(self) -> str:
        return self.kind

    def exports(self) -> tuple[Export, ...]:
        return gp_exports.EXPORTS[self.tab]

    def _css(self, what: str) -> str:
        return f"explorer-{what}-{self.tab}"

    def _theory_text(self, *status) -> str:
        """The theory's progress in one line while a job of ``theory_jobs`` runs (seconds to a minute on large
        data, where it runs off the event loop), empty otherwise; ``status``: the jobs' (running, message, progress)
        the line depends on."""
        jobs = self.state.jobs
        running = [jobs[kind] for kind in self.theory_jobs if jobs[kind].running]
        return f"Theory: {running[0].message} ({running[0].progress:.0%})" if running else ""

    def figure_frame(self, figure, *body, **options) -> pn.Column:
        return super().figure_frame(figure, self.theory_line, *body, **options)

    @property
    def progress(self) -> pn.indicators.Progress:
        return self.indicators.progress[self.tab]

    @property
    def job_message(self) -> pn.pane.Str:
        return self.indicators.message[self.tab]

    @property
    def job_error(self) -> pn.pane.Alert:
        return self.indicators.error[self.tab]

    def figure(self):
        """The live figure: a DynamicMap re-evaluated on every redraw."""
        return live(lambda: self.styled(figures.figure(self.state, self.tab), fill=True), self.stream)

    def restyle(self) -> None:
        self._on_state()

    # --- updates
    def _on_state(self, *events) -> None:
        self._stale = True
        if self.state.tab == self.tab:
            self.redraw()

    def redraw(self) -> None:
        """Update the figure (only while the tab is shown; hidden tabs catch up when opened).

        ``revision`` counts the updates; the page holds it, invisibly, as ``data-revision`` of the revision line
        (with the update's server time in ``data-ms``).
        """
        if not self._stale:
            return
        self._stale = False
        t0 = time.perf_counter()
        self.revision += 1
        with pn.io.hold():  # one message to the browser
            self._patched = self.patch()
            # a figure drawn by HoloViews changes many models: one model-graph update at the end (Bokeh walks the
            # whole page for it, which a patch that only writes data and ranges does not need)
            with pn.io.hold(freeze=not self._patched):
                self.draw()
                self.status_line.object = self.describe()
        # for browser tests and benchmarks only: an empty element (no debug text on a projector)
        self.revision_line.object = (f"<span data-revision='{self.revision}' "
                                     f"data-ms='{1e3 * (time.perf_counter() - t0):.0f}'></span>")

    def patch(self) -> bool:
        """Update the drawn figure in place (see :mod:`~explorer.views.common.drawing.patching`); ``False`` when it must
        be drawn by HoloViews."""
        return False

    def draw(self) -> None:
        """Everything :meth:`redraw` updates: the figure through HoloViews unless :meth:`patch` updated it."""
        if not self._patched:
            self.stream.event(revision=self.revision)

    def describe(self) -> str:
        return ""

    # --- layout
    def export_row(self, *extra) -> pn.FlexBox:
        return super().export_row(pn.HSpacer(), self.revision_line, *extra)

    def content(self) -> pn.Column:
        return self.figure_frame(self.plot, self.status_line, terms=BOOTSTRAP_TERMS,
                                 css_class=f"explorer-tab-{self.tab}")


class LearningCurveTab(_Tab):
    """Bootstrap learning curve ε(S): ADATAP, approximate ADATAP, VG, MF, the linear response (IJ), the
    leave-one-out limit and Monte-Carlo ([MO03], Fig. 1; docs/linear_response.md), with the table of each
    method's gap to Monte-Carlo at the Monte-Carlo points."""

    tab, kind = "curve", "curve"
    redraw_on = ("theory_curve", "linear_response", "curve_mc", "solution", "problem")
    theory_jobs = ("evidence", "problem", "solution", "theory")

    def __init__(self, **params):
        self.gaps = pn.pane.Markdown("", css_classes=["explorer-gaps-curve"], sizing_mode="stretch_width")
        # the theory-gap warning sits under the figure: when Monte-Carlo finishes it never pushes the figure down
        self.warning = pn.pane.Markdown("", css_classes=["explorer-warning-curve"], sizing_mode="stretch_width")
        self.note = pn.pane.Markdown("", css_classes=["explorer-note-curve"], sizing_mode="stretch_width",
                                     visible=False)
        self._restyled = False
        super().__init__(**params)
        for kind in ("theory", "linear_response"):
            self.state.jobs[kind].param.watch(self._on_state, ["running", "error"])

    def restyle(self) -> None:
        self._restyled = True  # new styles: HoloViews draws them (patch_overlay writes data only)
        super().restyle()

    def patch(self) -> bool:
        restyled, self._restyled = self._restyled, False
        if restyled or not patch_overlay(self.plot, figures.learning_curve_layers(self.state), figures.CURVE_PADDING):
            return False
        # patched on the page: a page that draws the figure anew must evaluate it again, not take the cache
        self.stream.update(revision=self.revision)
        forget_frames(self.plot)
        return True

    def draw(self) -> None:
        super().draw()
        self.gaps.object = figures.gap_table(self.state)
        self.warning.object = figures.gap_sentence(self.state)
        self.note.object = figures.vg_mf_note(self.state)
        self.note.visible = bool(self.note.object)

    def content(self) -> pn.Column:
        return self.figure_frame(self.plot, self.status_line, self.warning, self.note, self.gaps,
                                 terms=BOOTSTRAP_TERMS, css_class=f"explorer-tab-{self.tab}")

    def describe(self) -> str:
        s, theory, mc = self.state, self.state.theory_curve, self.state.curve_mc
        parts = [f"**{figures.problem_label(s)}**"]
        theory_job = s.jobs["theory"]
        if s.error:  # nothing is computed for these settings: the message over the figure says why
            return " · ".join([*parts, "not computed: see the message over the figure"])
        if s.hyperparameter_source == "evidence pending":
            return " · ".join([*parts, "choosing the kernel's hyperparameters by maximum evidence (see the note over "
                                       "the figure)"])
        if theory is None:
            parts.append(f"theory: {theory_job.error or 'computing…'}")
        else:
            parts.append(f"theory on {theory.s_over_n.size} values of S/N")
            if theory.theory_vg is not None and np.isnan(theory.theory_vg).all():
                parts.append("VG and MF: computing…")
        if s.linear_response is None:
            what = "IJ and leave-one-out limit" if s.loss == "square" else "leave-one-out limit (IJ: square loss only)"
            parts.append(f"{what}: {s.jobs['linear_response'].error or 'computing…'}")
        if s.solution is not None and theory is not None:
            parts.append(f"ε(S/N = {s.solution.s_over_n:g}) = {s.current_theory_error:.4g} "
                         f"({s.solution.n_iter} ADATAP iterations)")
        done = len(mc.points) if mc is not None else 0
        parts.append(f"Monte-Carlo: {done}/{len(s.mc_grid)} values of S/N")
        return " · ".join(parts)


class DistributionTab(_Tab):
    """Bootstrap distribution of the prediction at one input: MC histogram vs eq. (60) (Fig. 3-4)."""

    tab, kind = "distribution", "distribution"
    redraw_on = ("solution", "distribution", "problem")

    def __init__(self, **params):
        self._points_stream, self._ring_stream = Revision(), Revision()
        self._points_key: tuple = ()
        super().__init__(**params)
        points = live(lambda: self.styled(figures.inputs_points(self.state)), self._points_stream)
        ring = live(lambda: self.styled(figures.selected_input(self.state)), self._ring_stream)
        self.tap = hv.streams.Selection1D(source=points)
        self.tap.param.watch(self._on_tap, "index")
        self.inputs = pn.pane.HoloViews(points * ring, sizing_mode="stretch_width", min_height=430, linked_axes=False,
                                        css_classes=["explorer-inputs-plot"])
        self.index = _widget(self.state, "input_index", pn.widgets.IntInput, sizing_mode=None, width=180)
        self.components = _widget(self.state, "show_components", pn.widgets.Checkbox, sizing_mode=None)

    def draw(self) -> None:
        super().draw()
        s = self.state
        key = (id(s.solution), id(s.distribution), id(s.problem))
        key = (*key, self.presentation)
        if key != self._points_key:  # the scatter only changes with the results, not with the selection
            self._points_key = key
            self._points_stream.event(revision=self.revision)
        self._ring_stream.event(revision=self.revision)

    def _on_tap(self, event) -> None:
        if event.new:
            self.state.input_index = figures.tapped_input(self.state, event.new[0])

    def describe(self) -> str:
        s, dist = self.state, self.state.distribution
        if s.solution is None:
            return ""
        text = f"**{figures.problem_label(s)}**, S/N = {s.solution.s_over_n:g}, input i = {s.index}"
        if s.problem is not None:
            text += f", target y_i = {s.problem.y[s.index]:.4g}, theory bootstrap mean {s.solution.m[s.index]:.4g}"
        pos = figures.mapped_position(s, s.index)
        if dist is not None and pos is not None:
            text += f" · L1(MC, theory) = {dist.l1.l1[pos]:.3f} (noise floor {dist.noise_floor.l1[pos]:.3f})"
        elif dist is not None:
            text += (f" · the Monte-Carlo kept {dist.inputs.size:,} inputs drawn at random, not this one: click a point "
                     "of the scatter below, or a row of the L1 map's table")
        return text + f" · bins of width {s.bin_width:.4g} (0.2 × sd(target) / boston's {BOSTON_TARGET_SD:.4f})"

    def content(self) -> pn.Column:
        # one above the other: the histogram gets the whole width (beside the scatter it was ~200 px wide); the input
        # and the components, which a demonstration turns, in the line under the histogram
        return self.figure_frame(self.plot, self.status_line, self.inputs, line=(self.index, self.components),
                                 terms=BOOTSTRAP_TERMS, css_class="explorer-tab-distribution")


class L1Tab(_Tab):
    """L1 distances between MC histograms and the theory at all inputs, with the noise floor (Fig. 5)."""

    tab, kind = "l1", "distribution"
    redraw_on = ("distribution", "problem")

    def __init__(self, **params):
        self.summary = pn.pane.Markdown("", css_classes=["explorer-l1-summary"], sizing_mode="stretch_width")
        self.worst = pn.widgets.Tabulator(pd.DataFrame(columns=figures.EXPORT_COLUMNS["l1"]), selectable=1,
                                          disabled=True, show_index=False, height=420, sizing_mode="stretch_width",
                                          css_classes=["explorer-worst-table"])
        super().__init__(**params)
        self.worst.param.watch(self._on_select, "selection")

    def draw(self) -> None:
        super().draw()
        self.summary.object = _summary_table(figures.l1_summary(self.state))
        self.worst.value = figures.worst_inputs_frame(self.state).round(4)

    def _on_select(self, event) -> None:
        if event.new and self.worst.value is not None and len(self.worst.value):
            row = self.worst.value.iloc[event.new[0]]
            self.state.param.update(input_index=int(row["input"]), tab="distribution")

    def content(self) -> pn.Column:
        table = pn.Column("#### Worst inputs (click a row to open it)", self.worst, sizing_mode="stretch_width")
        return self.figure_frame(self.plot, self.summary, table, terms=BOOTSTRAP_TERMS, css_class="explorer-tab-l1")


def _summary_table(summary: dict | None) -> str:
    if summary is None:
        return "L1 summary: waiting for the Monte-Carlo bootstrap…"
    m, f = summary["measured"], summary["noise_floor"]
    return ("| | L1 ≤ 0.1 | L1 ≥ 0.2 | max L1 |\n|---|---|---|---|\n"
            f"| MC histogram vs theory | {m['frac_le_0_1']:.1%} | {m['frac_ge_0_2']:.1%} | {m['max']:.4f} |\n"
            f"| noise floor (theory vs its own {f['n_samples']} samples) | {f['frac_le_0_1']:.1%} | "
            f"{f['frac_ge_0_2']:.1%} | {f['max']:.4f} |\n\n"
            f"Histogram bins of width {m['bin_width']:.4g}: they follow the target's scale, 0.2 × sd(target) / "
            f"{BOSTON_TARGET_SD:.4f} (boston's target sd, so boston keeps the paper's 0.2, Fig. 5), and the noise floor "
            "uses the same bins: rescaling the target leaves these numbers unchanged. "
            "[MO03] reports 86.2 %, 2 % and 0.3109 for boston at S = N.")


class HoldoutTab(_Tab):
    """Bootstrap mean and variance at held-out inputs, theory (eq. 48) and linear response (IJ) vs Monte-Carlo
    (Fig. 2)."""

    tab = kind = HOLDOUT_TAB
    redraw_on = ("holdout_theory", "holdout_ij", "holdout_mc")
    theory_jobs = ("evidence", "problem", "holdout_theory", "holdout_ij")

    def figure(self):
        panels = [live(lambda what=what: self.styled(figures.holdout_overlay(self.state, what), fill=True),
                       self.stream) for what in ("mean", "var")]
        return hv.Layout(panels).cols(2)

    def plot_pane(self) -> pn.Row:
        """The mean and the variance side by side, one figure each: as one HoloViews layout (a Bokeh grid) that
        Bokeh sometimes laid out at zero size when the tab was opened while its results arrived."""
        panes = [pn.pane.HoloViews(panel, sizing_mode="stretch_width", linked_axes=False,
                                   styles={"height": FIGURE_HEIGHT}) for panel in self.figure()]
        return pn.Row(*panes, sizing_mode="stretch_width", css_classes=[f"explorer-plot-{self.tab}", MAIN_FIGURE_CSS])

    def describe(self) -> str:
        th, mc = self.state.holdout_theory, self.state.holdout_mc
        if th is None:
            return ""
        text = (f"The first {th.mean.size} rows are held out; the bootstrap resamples the other N = {th.n_train}, "
                f"S/N = {th.s_over_n:g}. IJ: the first-order linear response (infinitesimal jackknife) in the "
                "bootstrap weights, no refits.")
        if mc is not None:
            text += f" Monte-Carlo: {mc.mc_samples} samples."
        return text


# ------------------------------------------------------------------------------------------ the whole view


class GPBootstrapView(pn.viewable.Viewer):
    """The Gaussian-process bootstrap ([MO03]) without a page template: sidebar controls and the four tabs
    (shows in a notebook; in the app its tabs are the first four of the page, :mod:`~explorer.views.gp_bootstrap.page`)."""

    state = param.ClassSelector(class_=GPBootstrapState, label="State", doc="The session state shown.")

    def __init__(self, **params):
        if params.get("state") is None:
            params["state"] = GPBootstrapState()
        super().__init__(**params)
        s = self.state
        self.controls = GPControls(state=s)
        self.tab_views = {view.tab: view for view in (LearningCurveTab(state=s), DistributionTab(state=s),
                                                      L1Tab(state=s), HoldoutTab(state=s))}
        self._tabs = None

    @property
    def tabs(self) -> LazyTabs:
        """The four tabs on their own tab bar (made on first use: in the app the page's tab bar holds them)."""
        if self._tabs is None:
            s = self.state
            self._tabs = LazyTabs(*[(GP_TAB_TITLES[t], view) for t, view in self.tab_views.items()],
                                  active=GP_TABS.index(s.tab), css_classes=["explorer-tabs"],
                                  sizing_mode="stretch_width")
            self._tabs.param.watch(lambda e: setattr(s, "tab", GP_TABS[e.new]), "active")
            s.param.watch(lambda e: setattr(self._tabs, "active", GP_TABS.index(e.new)), "tab")
        return self._tabs

    @property
    def error(self) -> pn.pane.Alert:
        """The state's error as the open tab shows it, over its figure (hidden while there is none)."""
        return self.tab_views[self.state.tab].error

    @property
    def notice(self) -> pn.pane.Alert:
        """The state's notice as the open tab shows it, over the top of its figure (hidden while there is none)."""
        return self.tab_views[self.state.tab].notice

    @property
    def main(self) -> pn.Column:
        """The tabs (e.g. a notebook's main area); each shows the state's error and notice over its figure."""
        return pn.Column(self.tabs, sizing_mode="stretch_width")

    def __panel__(self):
        """Sidebar and tabs side by side, e.g. in a notebook (after ``pn.extension("tabulator")``)."""
        if self.state.problem is None and not self.state.error:
            self.state.refresh()  # shown without the app: compute the defaults now
        return pn.Row(pn.Column(self.controls, width=320), self.main, sizing_mode="stretch_width")
