"""The frame every tab shares: Run/Cancel with the progress, message and error of its jobs, the error of its
settings, its download buttons, and the layout they sit in. The tabs differ in their controls and figures.

Figure first: a tab's main figure comes first, as high as the screen allows
(:data:`~explorer.views.common.layout.presentation.FIGURE_HEIGHT`); Run, Cancel and the jobs' progress share one line
under it, and every message, warning and table goes below, so that nothing that appears later moves the figure."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import holoviews as hv
import panel as pn
import param

from explorer.runtime.sessions import bind_to_session
from explorer.views.common.files.exports import Export, download_button
from explorer.views.common.layout.presentation import FIGURE_HEIGHT, axis_text, presented
from explorer.views.common.layout.widgets import (
    declared_widgets,
    job_indicators,
    message_alert,
    show_applicable,
    terms_line,
)
from explorer.views.common.state.errors import over_figure

__all__ = ["JobTab", "DeferredTab", "MAIN_FIGURE_CSS", "filling"]

#: The CSS class of a tab's main figure (the browser tests measure it against the screen).
MAIN_FIGURE_CSS = "explorer-main-figure"
#: The width of a job's progress bar in the line under the figure when a tab shows several jobs.
_LINE_PROGRESS_WIDTH = 90

#: A job message (a ``<pre>``) wraps at the width of its box.
_WRAP = ":host pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }"


class JobTab(pn.viewable.Viewer):
    """Base of the tabs: a ``state`` (a :class:`~explorer.views.common.state.jobs.HasJobs` state, whose ``job_runner``
    runs its jobs) shown with Run and Cancel buttons, a :class:`~explorer.views.common.layout.widgets.JobIndicators` per
    job, the state's ``error`` (if ``shows_error``) and download buttons.

    A subclass declares a ``state`` parameter (a tab that ``owns_state`` makes one of its class when it is given none)
    and sets ``css_prefix``; its state's declared controls get widgets (``widgets``), each visible while its control
    applies, unless it says ``declared_controls = False``; it may override :meth:`shown_jobs` (name → job kind; default every job),
    :meth:`run_kind` (the kind Run and Cancel act on; default every kind), :meth:`run_buttons` (e.g. one Run
    button per job kind), :meth:`exports`, :meth:`control_column` (its controls laid out), :meth:`content` (the
    rest) and :meth:`restyle` (redraw the figures through :meth:`styled`). It calls ``super().__init__`` first,
    then builds its figures. If the tab ``owns_state``, the state computes when
    the tab is first rendered (``__panel__``) unless something refreshed it before.

    The tab shows its controls in a column beside its content, unless ``controls_in_sidebar``: then the page
    shows :attr:`controls` in its sidebar (the app does, for the open tab) and the tab only its content.
    ``presentation`` draws the figures with larger fonts and thicker lines (the app's header switch).
    """

    controls_in_sidebar = param.Boolean(default=False, label="Controls in the sidebar",
                                        doc="The page shows the tab's controls in its sidebar; the tab's content "
                                            "then leaves them out.")
    presentation = param.Boolean(default=False, label="Presentation",
                                 doc="Draw the figures for a projector: larger fonts, thicker lines.")

    #: CSS classes ``<css_prefix>-run``, ``-cancel``, ``-error``, ``-progress-<name>``, ...
    css_prefix: ClassVar[str] = "explorer"
    run_label: ClassVar[str] = "Run Monte-Carlo"
    progress_width: ClassVar[int] = 160
    #: Prefix each job message with its kind ("curve: done"), for tabs that show several jobs.
    label_messages: ClassVar[bool] = True
    #: The CSS class of the whole tab is ``<css_prefix>-<tab_css>``.
    tab_css: ClassVar[str] = "tab"
    #: Show the state's ``error`` above the jobs (a tab whose page shows it elsewhere says False).
    shows_error: ClassVar[bool] = True
    #: The tab starts its state (False when a view shares the state among its tabs and starts it itself).
    owns_state: ClassVar[bool] = True
    #: The tab shows the controls its state declares: ``widgets`` holds a widget for each
    #: (:func:`~explorer.views.common.layout.widgets.declared_widgets`), with the CSS class
    #: ``<css_prefix>-<name with - for _>``, visible while its control applies (its declaration's ``applies``);
    #: else ``widgets`` is empty (the page shows them elsewhere).
    declared_controls: ClassVar[bool] = True

    def __init__(self, **params):
        if params.get("state") is None and self.owns_state:
            params["state"] = type(self).param["state"].class_()
        super().__init__(**params)
        bind_to_session(self.state)  # a served session's: its job updates go to the session's loop
        self.widgets = declared_widgets(self.state, self.css_prefix) if self.declared_controls else {}
        if self.widgets:
            show_applicable(self.state, self.widgets)
        self.runs = {name: self._run_button(name, label, kind) for name, (label, kind) in self.run_buttons().items()}
        self.run = self.runs.get("run")
        self.cancel = pn.widgets.Button(label="Cancel", color="warning", css_classes=[self._css("cancel")])
        self.cancel.on_click(lambda event: self.state.cancel(self.run_kind()))
        self.indicators = job_indicators(self.state, self.css_prefix, self._on_job, width=self.progress_width,
                                         kinds=self.shown_jobs(), css=self._job_css,
                                         label_messages=self.label_messages)
        for message in self.indicators.message.values():  # long messages wrap instead of running off the page
            message.stylesheets = [*message.stylesheets, _WRAP]
        self.error = (message_alert(self.state, "error", f"{self.css_prefix}-error") if self.shows_error
                      else None)
        self.notice = (message_alert(self.state, "notice", f"{self.css_prefix}-notice", alert_type="warning")
                       if self.shows_error and "notice" in self.state.param else None)
        self.downloads = [download_button(item, self.state, self._css(item.name)) for item in self.exports()]
        for name in self.indicators.kinds:
            self._on_job(name)
        self._controls: pn.Column | None = None
        self.param.watch(lambda event: self.restyle(), "presentation")

    # --- what a tab declares
    def shown_jobs(self) -> dict[str, str]:
        """The jobs the tab shows: indicator name → job kind of the state."""
        return {kind: kind for kind in self.state.jobs}

    def run_kind(self) -> str | None:
        """The job kind Run and Cancel act on; None for every kind."""
        return None

    def run_buttons(self) -> dict[str, tuple[str, str | None]]:
        """The Run buttons: name (CSS class ``<css_prefix>-<name>``) → (label, the job kind it starts, None for
        every kind). Default: one button ``run`` labelled ``run_label`` for :meth:`run_kind`."""
        return {"run": (self.run_label, self.run_kind())}

    def exports(self) -> tuple[Export, ...]:
        """The tab's downloads: declarations of its page's ``exports`` module (CSS class ``<prefix>-<name>``)."""
        return ()

    def control_column(self) -> pn.Column | None:
        """The tab's controls (built once, by :attr:`controls`); None when it has none."""
        return None

    def content(self) -> pn.viewable.Viewable:
        """The tab without its controls (e.g. :meth:`frame` around its figures)."""
        return self.frame()

    def restyle(self) -> None:
        """Redraw the figures after ``presentation`` changed (a tab with figures overrides it)."""

    def styled(self, figure, fill: bool = False, align: bool = True):
        """``figure`` as ``presentation`` asks (see :func:`~explorer.views.common.layout.presentation.presented`); with
        ``fill``, also without a fixed height (:func:`filling`: the main figure fills its pane); with ``align``
        False, its frame is not aligned with the frames of the figures in the same column (:func:`_own_frame`)."""
        figure = presented(figure, self.presentation)
        if not isinstance(figure, (hv.Overlay, hv.Element)):
            return figure
        hooks = [*figure.opts.get().kwargs.get("hooks", []), axis_text(self.presentation)]
        return figure.opts(hooks=[*hooks, *([_fill_height] if fill else []), *([] if align else [_own_frame])])

    def main_figure(self, figure, css_class: str, **options) -> pn.pane.HoloViews:
        """The pane of the tab's main figure (CSS classes ``css_class`` and :data:`MAIN_FIGURE_CSS`): the width of
        the tab, the height of :data:`~explorer.views.common.layout.presentation.FIGURE_HEIGHT`. Draw ``figure`` through
        ``styled(..., fill=True)``."""
        return pn.pane.HoloViews(figure, sizing_mode="stretch_width", linked_axes=False,
                                 styles={"height": FIGURE_HEIGHT}, css_classes=[css_class, MAIN_FIGURE_CSS],
                                 **options)

    @property
    def controls(self) -> pn.Column | None:
        """The column of :meth:`control_column`, built on first use (the app puts it in its sidebar)."""
        if self._controls is None:
            self._controls = self.control_column()
        return self._controls

    def layout(self) -> pn.viewable.Viewable:
        """The controls (unless ``controls_in_sidebar``) beside the :meth:`content`, in an element with the CSS
        class ``<css_prefix>-tab`` (a tab without controls: the content as it is)."""
        if self.controls is None:
            return self.content()
        css = [self._css(self.tab_css)]
        if self.controls_in_sidebar:
            return pn.Column(self.content(), sizing_mode="stretch_width", css_classes=css)
        return pn.Row(pn.Column(self.controls, width=300), self.content(), sizing_mode="stretch_width",
                      css_classes=css)

    def _css(self, what: str) -> str:
        return f"{self.css_prefix}-{what}"

    def _job_css(self, what: str, name: str) -> str:
        """The CSS class of the indicator ``what`` ("progress", "job-message", "job-error") of job ``name``."""
        return f"{self.css_prefix}-{what}-{name}"

    def _run_button(self, name: str, label: str, kind: str | None) -> pn.widgets.Button:
        button = pn.widgets.Button(label=label, color="primary", css_classes=[self._css(name)])
        button.on_click(lambda event: self.state.run(kind))
        return button

    # --- updates
    def _on_job(self, name: str, *events) -> None:
        """A job's status changed: Cancel is enabled while a job it stops runs (the indicators follow by themselves)."""
        kinds = [self.run_kind()] if self.run_kind() else list(self.indicators.kinds.values())
        self.cancel.disabled = not any(self.state.jobs[k].running for k in kinds)

    # --- layout
    def job_row(self) -> pn.Row:
        """The Run buttons, Cancel and the progress bar and message of each job."""
        ind = self.indicators
        if len(ind.kinds) == 1:
            (name,) = ind.kinds
            ind.message[name].param.update(sizing_mode="stretch_width", min_width=150)
            return pn.FlexBox(*self.runs.values(), self.cancel, ind.progress[name], ind.message[name],
                              flex_wrap="wrap", align_items="center", sizing_mode="stretch_width")
        # several jobs: the buttons, then one column per job below them (a message wraps at its bar's width;
        # the columns wrap onto more lines where the tab is narrow)
        for name in ind.kinds:
            ind.message[name].width = self.progress_width
        jobs = pn.FlexBox(*[pn.Column(ind.progress[name], ind.message[name], margin=(0, 5)) for name in ind.kinds],
                          flex_wrap="wrap", sizing_mode="stretch_width")  # wraps in a narrow notebook
        return pn.Column(pn.Row(*self.runs.values(), self.cancel), jobs, sizing_mode="stretch_width")

    def export_row(self, *extra) -> pn.FlexBox:
        """The download buttons (and ``extra`` elements after them), wrapping onto more lines when narrow."""
        return pn.FlexBox(*self.downloads, *extra, flex_wrap="wrap", align_items="center", sizing_mode="stretch_width")

    def job_line(self, *extra) -> pn.FlexBox:
        """One line: the Run buttons, Cancel, each job's progress bar and message, then ``extra`` (e.g. a control
        the demonstration turns); it wraps onto more lines where the tab is narrow."""
        ind = self.indicators
        several = len(ind.kinds) > 1
        jobs = []
        for name in ind.kinds:
            if several:
                ind.progress[name].width = _LINE_PROGRESS_WIDTH
            ind.message[name].param.update(width=None, sizing_mode=None, margin=(0, 10, 0, 5))
            jobs.append(pn.Row(ind.progress[name], ind.message[name], align="center", margin=(0, 5)))
        return pn.FlexBox(*self.runs.values(), self.cancel, *jobs, *extra, flex_wrap="wrap", align_items="center",
                          sizing_mode="stretch_width", css_classes=[self._css("job-line")])

    def figure_frame(self, figure, *body, line=(), terms: str = "", css_class: str | None = None) -> pn.Column:
        """Figure first: ``figure``, then :meth:`job_line` (with ``line``), the line ``terms`` (e.g. what N and S
        are, CSS class ``<css_prefix>-terms``), the jobs' errors, ``body`` and the export row, in one column; the
        state's error and notice lie over the figure (:func:`~explorer.views.common.state.errors.over_figure`), in the
        first screen. Nothing above the figure: a message or warning that appears later never moves it."""
        words = [terms_line(terms, self._css("terms"))] if terms else []
        return pn.Column(over_figure(figure, self.error, self.notice), self.job_line(*line), *words,
                         *self.indicators.error.values(), *body,
                         self.export_row(), sizing_mode="stretch_width",
                         css_classes=[css_class] if css_class else [])

    def frame(self, *body, css_class: str | None = None) -> pn.Column:
        """The state's error, the job row, the jobs' errors, ``body`` and the export row, in one column (a panel
        without a main figure; a tab with one uses :meth:`figure_frame`)."""
        head = [alert for alert in (self.error, self.notice) if alert is not None]
        return pn.Column(*head, self.job_row(), *self.indicators.error.values(), *body, self.export_row(),
                         sizing_mode="stretch_width", css_classes=[css_class] if css_class else [])

    def __panel__(self):
        if self.owns_state and not self.state.started:
            self.state.refresh()  # first shown: compute the settings now
        return self.layout()


def filling(figure):
    """``figure`` (an element or overlay) whose Bokeh plot fills the height of its pane (:meth:`JobTab.main_figure`),
    not the height its options give. A hook on the drawn plot, not ``height=None``: HoloViews pads the axis ranges by
    the aspect of ``width`` and ``height``, and the learning curve's in-place patch
    (:func:`~explorer.views.common.drawing.patching.patch_overlay`) pads them as the figure's functions declare them. The
    options are set in place."""
    return figure.opts(hooks=[*figure.opts.get().kwargs.get("hooks", []), _fill_height])


def _fill_height(plot, element) -> None:
    """HoloViews hook: the Bokeh figure has no height of its own (its pane's CSS height applies)."""
    plot.state.height = None


def _own_frame(plot, element) -> None:
    """HoloViews hook: the Bokeh figure's frame is not aligned with the frames of the other figures of its column.

    Bokeh aligns the frames of the figures of a column (``frame_align``): a figure below with a wider legend narrows
    the frame of the figure above, and while a figure below is redrawn with new legend items its frame is laid out
    for a moment about 120 px wide, the figure above with it. That moment's drawing lies left of the canvas but its
    first column of pixels, which Bokeh's later drawings do not clear (they clear from x = 0.5): the thin "squashed
    copy" of the SVM learning curve at its left edge (issue 23)."""
    plot.state.frame_align = False


class DeferredTab(pn.viewable.Viewer):
    """A tab of the page whose view is made when the page first opens it; its state exists from the start.

    Building a tab's widgets and figures is most of the cost of a page (about 1.5 s of the server's event loop
    for the seven tabs); a class opening the page at once queues every other session's updates behind it. The
    state computes from the start all the same (:meth:`start`), so that a tab opened later shows finished
    figures, and the URL and the presets reach its parameters without building anything.

    ``make(state, **states)`` builds the view (a :class:`JobTab`); ``states`` are further states it is given
    by name (e.g. ``experiments``), also readable as attributes.
    """

    state = param.Parameter(default=None, precedence=-1, doc="The tab's session state.")
    presentation = param.Boolean(default=False, label="Presentation",
                                 doc="Draw the figures for a projector (passed on to the view).")

    def __init__(self, make: Callable[..., JobTab], state, **states):
        super().__init__(state=state)
        self._make, self._states, self._view = make, states, None
        self.param.watch(lambda event: self._view is not None and setattr(self._view, "presentation", event.new),
                         "presentation")

    def __getattr__(self, name: str):
        states = self.__dict__.get("_states") or {}
        if name in states:
            return states[name]
        raise AttributeError(name)

    @property
    def extra_states(self) -> dict:
        """The further states given by name (e.g. ``{"experiments": ...}``)."""
        return dict(self._states)

    def start(self) -> None:
        """Start computing the state's settings (a view would do it when first shown)."""
        if not self.state.started:
            self.state.refresh()

    @property
    def built(self) -> bool:
        """Whether the view has been made."""
        return self._view is not None

    @property
    def view(self) -> JobTab:
        """The tab's view, made on first use."""
        if self._view is None:
            self._view = self._make(self.state, **self._states)
            self._view.presentation = self.presentation
        return self._view

    def __panel__(self):
        return self.view.__panel__()
