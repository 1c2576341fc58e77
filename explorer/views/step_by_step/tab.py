"""The "Bootstrap, step by step" tab: Draw 1 / 10 / 100 / 1000, Play/Pause, Reset and the S/N slider above the
three figures (the data with the last resample, f_i stacked by multiplicity, the running Efron estimate)."""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh options used by the figures)
import numpy as np
import panel as pn
import param

from explorer.views.common.session import bind_to_session
from explorer.views.common.tab import JobTab
from explorer.views.common.widgets import Revision, live, param_widgets
from explorer.views.step_by_step.figures import data_plot, histogram_plot, running_plot
from explorer.views.step_by_step.state import DRAWS, StepState

__all__ = ["StepTab", "PLAY_PERIOD_MS"]

#: Milliseconds between two resamples while playing (5 a second).
PLAY_PERIOD_MS = 200


class StepTab(JobTab):
    """The step-by-step page's one tab. CSS classes ``explorer-steps-…`` (``-draw-<n>``, ``-play``, ``-reset``,
    ``-sentence``, ``-plot-data``, ``-plot-histogram``, ``-plot-running``)."""

    state = param.ClassSelector(class_=StepState, label="State", doc="The session state the tab shows.")

    css_prefix = "explorer-steps"

    def __init__(self, **params):
        if params.get("state") is None:
            params["state"] = StepState()
        super().__init__(**params)
        s = self.state
        bind_to_session(s)
        self.widgets = param_widgets(s, {
            "dataset": pn.widgets.Select, "n_points": pn.widgets.IntInput, "kernel": pn.widgets.Select,
            "lengthscale": pn.widgets.FloatInput, "signal_var": pn.widgets.FloatInput,
            "alpha": pn.widgets.FloatInput, "period": pn.widgets.FloatInput, "noise_var": pn.widgets.FloatInput,
            "seed": pn.widgets.IntInput, "input_index": pn.widgets.IntInput}, self.css_prefix)
        self.slider = pn.widgets.FloatSlider.from_param(s.param.s_over_n, value_throttled=s.s_over_n,
                                                        css_classes=[self._css("s-over-n")],
                                                        sizing_mode="stretch_width")
        self.draws = [self._button(f"Draw {n}" if n == 1 else f"{n}", f"draw-{n}", lambda e, n=n: s.draw(n))
                      for n in DRAWS]
        self.play = pn.widgets.Toggle(label="Play", color="success", css_classes=[self._css("play")],
                                      width=90)
        self.play.param.watch(self._on_play, "value")
        self.reset = self._button("Reset", "reset", lambda e: s.reset(), color="warning")
        self.sentence = pn.pane.Markdown("", css_classes=[self._css("sentence")], sizing_mode="stretch_width")
        self.streams = {what: Revision() for what in ("data", "histogram", "running")}
        figures = {"data": data_plot, "histogram": histogram_plot, "running": running_plot}
        self.plots = {what: pn.pane.HoloViews(
            live(lambda what=what: self.styled(figures[what](self.state)), self.streams[what]),
            sizing_mode="stretch_width", min_height=330, linked_axes=False, css_classes=[self._css(f"plot-{what}")])
            for what in figures}
        self.tap = hv.streams.Tap(source=self.plots["data"].object, transient=True)
        self.tap.add_subscriber(self._on_tap)
        self._callback = None
        s.param.watch(self._redraw, ["n_drawn", "problem", "solution"])
        s.param.watch(self._on_index, ["input_index"])
        self._redraw()

    def run_buttons(self) -> dict:
        return {}

    def _button(self, label: str, name: str, action, color: str = "primary") -> pn.widgets.Button:
        button = pn.widgets.Button(label=label, color=color, css_classes=[self._css(name)], width=90)
        button.on_click(action)
        return button

    # --- updates
    def _redraw(self, *events) -> None:
        for stream in self.streams.values():
            stream.event(revision=stream.revision + 1)
        self.sentence.object = self.state.sentence()

    def _on_index(self, *events) -> None:
        for what in ("data", "histogram"):
            self.streams[what].event(revision=self.streams[what].revision + 1)

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

    def _on_play(self, event) -> None:
        self.state.playing = event.new
        self.play.label = "Pause" if event.new else "Play"
        if event.new:
            if self._callback is None:
                self._callback = pn.state.add_periodic_callback(self._tick, period=PLAY_PERIOD_MS)
            else:
                self._callback.start()
        elif self._callback is not None:
            self._callback.stop()

    def _tick(self) -> None:
        if self.state.playing:
            self.state.draw(1)

    # --- layout
    def control_column(self) -> pn.Column:
        w = self.widgets
        return pn.Column(
            "### Data", w["dataset"], w["n_points"], "### Kernel and noise", w["kernel"], w["lengthscale"],
            w["signal_var"], w["alpha"], w["period"], w["noise_var"], "### Resamples", w["seed"], w["input_index"],
            sizing_mode="stretch_width", css_classes=[self._css("controls")])

    def content(self) -> pn.Column:
        buttons = pn.FlexBox(*self.draws, self.play, self.reset, pn.Column("S/N", self.slider, width=260),
                             flex_wrap="wrap", align_items="center", sizing_mode="stretch_width")
        head = [alert for alert in (self.error, self.notice) if alert is not None]
        figures = pn.Row(self.plots["data"], self.plots["histogram"], sizing_mode="stretch_width")
        return pn.Column(*head, self.sentence, buttons, figures, self.plots["running"],
                         sizing_mode="stretch_width", css_classes=[self._css("content")])
