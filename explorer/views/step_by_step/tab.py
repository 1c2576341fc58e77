"""The "Bootstrap, step by step" tab: Draw 1 / 10 / 100 / 1000, Play/Pause, Reset and the S/N slider above the
three figures (the data with the last resample, f_i stacked by multiplicity, the running Efron estimate).

The buttons ask the state for resamples drawn in the background (:meth:`StepState.request_draws`); when they
arrive, each figure gets its new columns written into the drawn figure (a patch: no figure is built again), and
only a new problem, a new style or a first drawing goes through HoloViews.
"""

from __future__ import annotations

import time

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used by the figures)
import numpy as np
import panel as pn
import param
from panel.io.callbacks import PeriodicCallback

from explorer.runtime.compat import drawn_plots
from explorer.views.common.drawing.patching import forget_frames, patch_layers
from explorer.views.common.layout.presentation import FIGURE_HEIGHT
from explorer.views.common.layout.tab import MAIN_FIGURE_CSS, JobTab
from explorer.views.common.layout.widgets import Revision, declared_sidebar, live
from explorer.views.common.state.declarations import view_options
from explorer.views.step_by_step import figures
from explorer.views.step_by_step.state import DRAWS, StepState

__all__ = ["StepTab", "PLAY_PERIOD_MS"]

_PLOTS = {"data": figures.data_plot, "histogram": figures.histogram_plot, "running": figures.running_plot}
_LAYERS = {"data": figures.data_layers, "histogram": figures.histogram_layers, "running": figures.running_layers}

#: Milliseconds between two resamples while playing (5 a second).
PLAY_PERIOD_MS = 200
#: Narrowest a figure is drawn (px): in a narrower page the figures wrap onto further rows.
FIGURE_MIN_WIDTH = 270
#: Most resamples one tick of Play draws to catch up when the server ran its ticks late (a busy machine).
PLAY_CATCH_UP = 3


class StepTab(JobTab):
    """The step-by-step page's one tab. CSS classes ``explorer-steps-…`` (``-draw-<n>``, ``-play``, ``-reset``,
    ``-sentence``, ``-plot-data``, ``-plot-histogram``, ``-plot-running``)."""

    state = param.ClassSelector(class_=StepState, label="State", doc="The session state the tab shows.")

    css_prefix = "explorer-steps"

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        self.slider = pn.widgets.FloatSlider.from_param(s.param.s_over_n, value_throttled=s.s_over_n,
                                                        css_classes=[self._css("s-over-n")], width=230,
                                                        format="0.00")
        self.draws = [self._button(f"Draw {n}" if n == 1 else f"{n}", f"draw-{n}", lambda e, n=n: s.request_draws(n))
                      for n in DRAWS]
        self.play = pn.widgets.Toggle(label="Play", color="success", css_classes=[self._css("play")],
                                      width=84)
        self.play.param.watch(self._on_play, "value")
        self.reset = self._button("Reset", "reset", lambda e: s.reset(), color="warning")
        # a class room for these settings: its link (the lecturer's projector view) or why none opened, under it
        self.class_room = self._button("Start a class room", "class-room", self._start_room, color="light")
        self.class_room.width = 150
        self.room_link = pn.pane.HTML("", visible=False, css_classes=[self._css("class-room-link")],
                                      sizing_mode="stretch_width")
        self.sentence = pn.pane.Markdown("", css_classes=[self._css("sentence")], sizing_mode="stretch_width")
        self.streams = {what: Revision() for what in ("data", "histogram", "running")}
        # a click on the data picks point i: the Tap stream drives the data figure's DynamicMap itself (a stream
        # only linked to a DynamicMap of an overlay by ``source=`` gets no click from Bokeh)
        self.tap = hv.streams.Tap(transient=True)
        self.tap.add_subscriber(self._on_tap)
        figures_of = {what: live(lambda what=what: self.styled(_PLOTS[what](self.state), fill=True),
                                 self.streams[what]) for what in _PLOTS}
        figures_of["data"] = hv.DynamicMap(lambda revision, x, y: self.styled(_PLOTS["data"](self.state), fill=True),
                                           streams=[self.streams["data"], self.tap], cache_size=1)
        # each figure as high as a tab's main figure (the first screen, less one line of buttons), at least
        # FIGURE_MIN_WIDTH wide
        self.plots = {what: pn.pane.HoloViews(
            figure, sizing_mode="stretch_width", min_height=300, min_width=FIGURE_MIN_WIDTH, linked_axes=False,
            styles={"flex": f"1 1 {FIGURE_MIN_WIDTH}px", "height": FIGURE_HEIGHT},
            css_classes=[self._css(f"plot-{what}")]) for what, figure in figures_of.items()}
        self._callback = None
        self._played = (time.monotonic(), 0)
        s.param.watch(self._redraw, ["problem", "solution"])
        s.param.watch(self._on_draw, ["n_drawn", "drawing"])
        # a control that computes nothing (point i) only updates the figures that show it
        s.param.watch(self._on_index, list(view_options(s)))
        self._redraw()

    def run_buttons(self) -> dict:
        return {}

    def _button(self, label: str, name: str, action, color: str = "primary") -> pn.widgets.Button:
        button = pn.widgets.Button(label=label, color=color, css_classes=[self._css(name)], width=84)
        button.on_click(action)
        return button

    # --- updates
    def _redraw(self, *events) -> None:
        """Draw every figure anew through HoloViews (new problem or style)."""
        for stream in self.streams.values():
            stream.event(revision=stream.revision + 1)
        self.sentence.object = self.state.sentence()

    def _update(self, whats) -> None:
        """Patch the figures ``whats`` with the state's new data; draw anew those that cannot be patched."""
        for what in whats:
            figure = _LAYERS[what](self.state)
            pane, stream = self.plots[what], self.streams[what]
            if patch_layers(pane, figure.layers, figure.ranges):
                # patched on the page: a page that draws the figure anew must evaluate it again
                stream.update(revision=stream.revision + 1)
                forget_frames(pane)
                self._retitle(pane, figure.title, figure.ylabel)
            else:
                stream.event(revision=stream.revision + 1)

    @staticmethod
    def _retitle(pane: pn.pane.HoloViews, title: str, ylabel: str = "") -> None:
        """Give the figure ``pane`` has drawn the ``title`` and, where given, the y axis label ``ylabel``."""
        for plot in drawn_plots(pane):
            model = getattr(plot.state, "title", None)  # the figure's Title
            if model is not None and getattr(model, "text", title) != title:
                model.text = title
            axis = plot.handles.get("yaxis")
            if ylabel and axis is not None and axis.axis_label != ylabel:
                axis.axis_label = ylabel

    def _on_draw(self, *events) -> None:
        if any(event.name == "n_drawn" for event in events):
            with pn.io.hold():
                self._update(("data", "histogram", "running"))
                self.sentence.object = self.state.sentence()
        else:
            self.sentence.object = self.state.sentence()

    def _on_index(self, *events) -> None:
        with pn.io.hold():
            self._update(("data", "histogram"))

    def restyle(self) -> None:
        self._redraw()

    def _on_tap(self, x=None, y=None, **kwargs) -> None:
        """A click on the data: the nearest training point becomes point i."""
        p = self.state.problem
        if p is None or x is None or y is None:
            return
        scale = np.ptp(p.X[:, 0]) or 1.0, np.ptp(p.y) or 1.0
        distance = ((p.X[:, 0] - x) / scale[0]) ** 2 + ((p.y - y) / scale[1]) ** 2
        self.state.input_index = int(np.argmin(distance))

    def _start_room(self, event) -> None:
        """Open a class room for the page's settings (:func:`explorer.views.classroom.entry.start_room`)."""
        from explorer.views.classroom.entry import start_room  # the class room's pages: only once asked for

        self.room_link.object = start_room(self.state)
        self.room_link.visible = True

    def _on_play(self, event) -> None:
        self.state.playing = event.new
        self.play.label = "Pause" if event.new else "Play"
        self._played = (time.monotonic(), 0)  # (when Play started, resamples it asked for since)
        if event.new:
            if self._callback is None:
                # a "background" callback: Panel's busy indicator is one for the whole server, and a tick of every
                # playing session would set it, and every open page's spinner, on and off (unlogged: 5 a second)
                self._callback = PeriodicCallback(callback=self._tick, period=PLAY_PERIOD_MS, background=True,
                                                  log=False)
            self._callback.start()
        elif self._callback is not None:
            self._callback.stop()

    def _tick(self) -> None:
        """One resample per tick; a tick that comes late (a busy server skips ticks) also draws those it missed,
        at most :data:`PLAY_CATCH_UP`, so that Play keeps its pace of 1000 / PLAY_PERIOD_MS a second."""
        if not self.state.playing:
            return
        started, asked = self._played
        due = int((time.monotonic() - started) * 1000 / PLAY_PERIOD_MS) - asked
        n = min(max(due, 1), PLAY_CATCH_UP)
        self._played = (started, asked + n) if due <= PLAY_CATCH_UP else (time.monotonic(), 0)
        self.state.request_draws(n)

    # --- layout
    def control_column(self) -> pn.Column:
        return declared_sidebar(self.state, self.widgets, sizing_mode="stretch_width",
                                css_classes=[self._css("controls")])

    def content(self) -> pn.Column:
        buttons = pn.FlexBox(*self.draws, self.play, self.reset, self.slider, self.class_room, flex_wrap="wrap",
                             align_items="center", sizing_mode="stretch_width")
        head = [alert for alert in (self.error, self.notice) if alert is not None]
        # figure first: the three figures side by side (all of them on the first screen of a projector; wrapped
        # onto further rows where the page is narrower, e.g. a notebook's output beside the controls), the buttons
        # in one line under them, then the sentence and any message (appearing, they move no figure)
        figures = pn.FlexBox(*self.plots.values(), flex_wrap="wrap", sizing_mode="stretch_width",
                             css_classes=[self._css("figures"), MAIN_FIGURE_CSS])
        return pn.Column(figures, buttons, self.room_link, self.sentence, *head, sizing_mode="stretch_width",
                         css_classes=[self._css("content")])
