"""A student's phone page in a class room: "Draw a resample" and "Draw 10", their own last resample (small), the
class's figure, and the lecturer's question when one is open. Nothing on it changes the room but the student's
own draws and answer.

Made for a phone (390 × 844 px, no horizontal scrolling, buttons 64 px high); it polls its room every
:data:`REFRESH_MS` ms and redraws only what changed. The student's key goes into the page's link, so that a
student who reloads or comes back with that link is the same student (their draws stay pooled whatever happens to
their connection).
"""

from __future__ import annotations

import html

import panel as pn

from explorer.runtime.rooms import Room, RoomError, RoomRegistry, Student
from explorer.runtime.sessions import refresh_in_background
from explorer.views.classroom import figures

__all__ = ["StudentView", "REFRESH_MS"]

#: Milliseconds between two looks of a phone at its room.
REFRESH_MS = 1500
_CSS = "explorer-class"
_BIG = {"font-size": "20px"}
#: The colours of the phone's message: a sentence that something went through, one that it did not.
SUCCESS_COLOUR, ERROR_COLOUR = "#1d6b2a", "#8a1c1c"


class StudentView(pn.viewable.Viewer):
    """The phone page of ``student`` in ``room``. CSS classes ``explorer-class-…`` (``-draw-1``, ``-draw-10``,
    ``-mine``, ``-figure``, ``-own``, ``-question``, ``-answer``, ``-send``, ``-message``, ``-closed``)."""

    def __init__(self, room: Room, registry: RoomRegistry, student: Student, **params):
        super().__init__(**params)
        self.room, self.registry, self.student = room, registry, student
        self._seen, self._note, self._asked = -1, ("", False), None  # (sentence, whether it reports a success)
        self._round, self._drawn = -1, -1  # the round and own draws the figures show
        self._shown = None
        css = lambda name: [f"{_CSS}-{name}"]  # noqa: E731
        self.header = pn.pane.HTML(f"<div style='font-size:18px'>Class room · you are <b>{student.pseudonym}</b>"
                                   "</div>", sizing_mode="stretch_width")
        self.draws = [self._button(label, n) for label, n in (("Draw a resample", 1), ("Draw 10", 10))]
        self.mine = pn.pane.HTML("", css_classes=css("mine"), sizing_mode="stretch_width", styles=_BIG)
        self.message = pn.pane.HTML("", css_classes=css("message"), sizing_mode="stretch_width", visible=False,
                                    styles=_BIG)
        self.own_fig, self.own_sources = figures.resample_figure(height=190)
        self.class_fig, self.class_sources = figures.class_figure(height=300, tools="", mine=True)
        self.class_fig.legend.label_text_font_size = "11px"
        self.own = pn.pane.Bokeh(self.own_fig, css_classes=css("own"), sizing_mode="stretch_width")
        self.plot = pn.pane.Bokeh(self.class_fig, css_classes=css("figure"), sizing_mode="stretch_width")
        self.question = pn.pane.HTML("", css_classes=css("question"), sizing_mode="stretch_width", styles=_BIG)
        self.number = pn.widgets.TextInput(placeholder="your answer, e.g. 0.25", css_classes=css("answer"),
                                           sizing_mode="stretch_width", height=56, stylesheets=[":host input "
                                                                                                "{font-size: 20px}"])
        self.choice = pn.widgets.RadioButtonGroup(options=["-"], css_classes=css("choice"),
                                                  sizing_mode="stretch_width", height=56, orientation="vertical")
        self.send = pn.widgets.Button(label="Send my answer", color="success", css_classes=css("send"),
                                      sizing_mode="stretch_width", height=64, stylesheets=[":host button "
                                                                                           "{font-size: 20px}"])
        self.send.on_click(lambda event: self._answer())
        self.ask_card = pn.Column(self.question, self.number, self.choice, self.send, visible=False,
                                  sizing_mode="stretch_width", styles={"border": "2px solid #ff7f0e",
                                                                       "border-radius": "8px", "padding": "8px"})
        self.closed = pn.pane.HTML("", css_classes=css("closed"), visible=False, sizing_mode="stretch_width",
                                   styles={"font-size": "24px"})
        # what the page shows while the room is open (replaced by the sentence once closed: a Bokeh pane cannot be
        # hidden by ``visible`` in Panel 1.8, whose stylesheet check then fails)
        self.body = pn.Column(self.header, *self.draws, self.message, self.mine, self.ask_card, self.plot, self.own,
                              sizing_mode="stretch_width", styles={"max-width": "100%"})
        self.refresh()
        refresh_in_background(self.refresh, REFRESH_MS)  # served: the page asks the room every REFRESH_MS

    def _button(self, label: str, n: int) -> pn.widgets.Button:
        b = pn.widgets.Button(label=label, color="primary", css_classes=[f"{_CSS}-draw-{n}"], height=64,
                              sizing_mode="stretch_width", stylesheets=[":host button {font-size: 22px}"])
        b.on_click(lambda event: self._draw(n))
        return b

    def _draw(self, n: int) -> None:
        try:
            taken = self.registry.request_draws(self.room, self.student, n)
        except RoomError as err:
            self._note = (str(err), False)
        else:  # refused quietly beyond the rate limit: said, not queued
            self._note = ("", False) if taken == n else ("Slow down a little: a few draws a second at most.", False)
        self.refresh(force=True)

    def _answer(self) -> None:
        q = self.room.question
        text = self.choice.value if q is not None and q.kind == "choice" else self.number.value
        try:
            value = self.room.answer(self.student, str(text or ""))
            self._note = (f"Your answer {value:.4g} was sent." if isinstance(value, float) else
                          f"Your answer “{value}” was sent.", True)
        except RoomError as err:
            self._note = (str(err), False)
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Show the room's state if it changed since last shown."""
        room = self.room
        if not self.registry.changed_since(room, self._seen, force):
            return
        with room.lock:
            self._seen = room.version
            current, closed, q = room.current, room.closed, room.question
            # what this page shows: another student joining changes nothing here (no message to this phone)
            shown = (current.index, current.pooled.n, closed, id(q), q is not None and q.revealed,
                     q is not None and self.student.index in q.answers, self._note)
            if shown == self._shown and not force:
                return
            self._shown = shown
            last = current.last.get(self.student.index)
            drawn = int(last.start + last.values.size) if last is not None else 0
            own = figures.resample_columns(current, self.student.index) if (current.index, drawn) != (
                self._round, self._drawn) else {}
            mine = float(last.values[-1]) if last is not None else None
            columns = figures.histogram_columns(current, None, mine)
        with pn.io.hold():
            if closed:
                self._show_closed(closed)
                return
            figures.show_histogram(self.class_fig, self.class_sources, columns, whole=current.index != self._round)
            self.class_fig.title.text = f"The class: {current.pooled.n:,} resamples"
            if (current.index, drawn) != (self._round, self._drawn):  # the student's own resample: when it changed
                for name, data in own.items():
                    self.own_sources[name].data = data
            self._round, self._drawn = current.index, drawn
            self.mine.object = self._mine_words(drawn, last, current.problem.index)
            self._show_question(q)
            text, success = self._note
            self.message.object, self.message.visible = html.escape(text), bool(text)
            self.message.styles = {**_BIG, "color": SUCCESS_COLOUR if success else ERROR_COLOUR}

    @staticmethod
    def _mine_words(drawn: int, last, i: int) -> str:
        if last is None:
            return "Press <b>Draw a resample</b>: your phone draws a bootstrap sample of the data and fits the GP."
        k = int(last.multiplicity[-1])
        times = {0: "left out", 1: "drawn once", 2: "drawn twice"}.get(k, f"drawn {k} times")
        return (f"You drew <b class='{_CSS}-my-count'>{drawn}</b> resample{'s' if drawn != 1 else ''}; the last "
                f"gave f_i = <b>{last.values[-1]:.3f}</b> (point i = {i} {times}).")

    def _show_question(self, q) -> None:
        open_ = q is not None and not q.revealed
        self.ask_card.visible = open_
        if not open_:
            return
        if q is not self._asked:  # a new question: empty fields
            self._asked = q
            self.number.value = ""
            if q.kind == "choice":
                self.choice.options = list(q.choices)
                self.choice.value = None
        mine = q.answers.get(self.student.index)
        said = f"<b>{html.escape(q.text)}</b>"
        if mine is not None:
            said += f"<br>Your answer: {mine:.4g}" if isinstance(mine, float) else f"<br>Your answer: {html.escape(mine)}"
        self.question.object = said
        self.number.visible, self.choice.visible = q.kind != "choice", q.kind == "choice"

    def _show_closed(self, reason: str) -> None:
        self.closed.object, self.closed.visible = html.escape(reason), True
        if len(self.body.objects) > 2:
            self.body.objects = [self.header, self.closed]

    def __panel__(self) -> pn.viewable.Viewable:
        return self.body

