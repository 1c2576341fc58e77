"""The lecturer's projector view of a class room: the join link and its QR code, the number of students and of
draws pooled, the class's histogram with the theory's curve over it (live), the answers to the question; in the
sidebar the lecturer's controls (a new round at other settings, a question, reveal, the CSV, close the room).

The page polls its room every :data:`REFRESH_MS` ms on the session's event loop and writes only what changed (new
columns of the figures' sources); a new round's settings are solved on a thread of their own. Every control needs
the room's lecturer token, which only the link of the page that started the room holds.
"""

from __future__ import annotations

import html
import io
import threading

import numpy as np
import panel as pn
import segno

from explorer.runtime.rooms import Room, RoomError, RoomRegistry
from explorer.runtime.sessions import refresh_in_background
from explorer.views.classroom import figures
from explorer.views.classroom.room_problem import problem_at, settings_words

__all__ = ["LecturerView", "REFRESH_MS", "join_url", "qr_svg"]

#: Milliseconds between two looks of the projector at its room (the draw-to-figure latency's floor).
REFRESH_MS = 250
_CSS = "explorer-class"
#: The question menu: its words → a key of :data:`~explorer.runtime.rooms.QUESTIONS`, or "choice".
QUESTION_MENU = {"The bootstrap standard deviation of f_i (a number)": "sd",
                 "The bootstrap mean of f_i (a number)": "mean",
                 "The share of resamples leaving point i out (a number)": "left_out",
                 "My own question with choices": "choice"}


def join_url(origin: str, code: str) -> str:
    """The short link students open: ``<origin>/class?room=<code>``."""
    return f"{origin.rstrip('/')}/class?room={code}"


def qr_svg(url: str, scale: int = 6) -> str:
    """The QR code of ``url`` as inline SVG (drawn here: no network service)."""
    return segno.make(url, error="m").svg_inline(scale=scale)


class LecturerView(pn.viewable.Viewer):
    """The projector view of ``room`` (lecturer token checked before): :meth:`__panel__` is the main area,
    :attr:`controls` the sidebar. CSS classes ``explorer-class-…`` (``-join``, ``-qr``, ``-counts``, ``-figure``,
    ``-question``, ``-answers``, ``-message``, ``-new-round``, ``-ask``, ``-reveal``, ``-close``, ``-csv``)."""

    def __init__(self, room: Room, registry: RoomRegistry, origin: str, **params):
        super().__init__(**params)
        self.room, self.registry, self.token = room, registry, room.token
        self.url = join_url(origin, room.code)
        self._seen, self._note, self._shown, self._asked = -1, "", None, 0
        css = lambda name: [f"{_CSS}-{name}"]  # noqa: E731
        self.join = pn.pane.HTML(f"<div style='font-size:20px'>Join on your phone: scan the code or open<br><b "
                                 f"style='font-size:21px;font-family:monospace;word-break:break-all'>"
                                 f"{html.escape(self.url)}</b></div>", css_classes=css("join"),
                                 sizing_mode="stretch_width")
        self.qr = pn.pane.HTML(qr_svg(self.url), css_classes=css("qr"), width=230, height=230)
        self.counts = pn.pane.HTML("", css_classes=css("counts"), styles={"font-size": "22px"})
        self.settings = pn.pane.HTML("", css_classes=css("settings"), sizing_mode="stretch_width")
        self.message = pn.pane.Alert("", alert_type="warning", visible=False, css_classes=css("message"),
                                     sizing_mode="stretch_width")
        self.figure, self.sources = figures.class_figure(height=370)
        self.plot = pn.pane.Bokeh(self.figure, css_classes=css("figure"), sizing_mode="stretch_width")
        self.answers_fig, self.answer_sources, self.answer_lines = figures.answers_figure(height=170)
        self.question = pn.pane.HTML("", css_classes=css("question"), sizing_mode="stretch_width",
                                     styles={"font-size": "18px"})
        # shown while a question is asked (a Column: a Bokeh pane cannot be hidden by ``visible`` in Panel 1.8)
        self.answers = pn.Column(pn.pane.Bokeh(self.answers_fig, css_classes=css("answers"),
                                               sizing_mode="stretch_width"), visible=False, sizing_mode="stretch_width")
        self.controls = self._controls()
        self.refresh()
        refresh_in_background(self.refresh, REFRESH_MS)  # served: the page asks the room every REFRESH_MS

    # ------------------------------------------------------------------ controls
    def _controls(self) -> pn.Column:
        p = self.room.current.problem
        button = lambda label, name, action, color="primary": self._button(label, name, action, color)  # noqa: E731
        self.s_over_n = pn.widgets.FloatSlider(label="Bootstrap size S/N", start=0.05, end=5.0, step=0.05,
                                               value=p.s_over_n, css_classes=[f"{_CSS}-s-over-n"])
        self.index = pn.widgets.IntSlider(label="Point i", start=0, end=p.n - 1, value=p.index,
                                          css_classes=[f"{_CSS}-index"])
        self.compare = pn.widgets.Checkbox(label="Compare with the previous round", value=False,
                                           css_classes=[f"{_CSS}-compare"])
        self.compare.param.watch(lambda e: self.refresh(force=True), "value")
        self.menu = pn.widgets.Select(label="Question", options=QUESTION_MENU, css_classes=[f"{_CSS}-menu"])
        self.own_text = pn.widgets.TextInput(label="Your question", placeholder="One bump or several?",
                                             css_classes=[f"{_CSS}-own-text"])
        self.own_choices = pn.widgets.TextInput(label="Its choices, separated by ';'", placeholder="one; several",
                                                css_classes=[f"{_CSS}-own-choices"])
        csv = pn.widgets.FileDownload(callback=self._csv, filename="class-round.csv", label="Download the round (CSV)",
                                      css_classes=[f"{_CSS}-csv"], color="light", sizing_mode="stretch_width")
        return pn.Column(
            pn.pane.Markdown("**A new round** (the pool so far is kept as the previous round)"),
            self.s_over_n, self.index,
            button("New round with these settings", "new-round", self._new_round),
            self.compare,
            pn.pane.Markdown("**Predict first**: ask before the class draws"),
            self.menu, self.own_text, self.own_choices,
            pn.Row(button("Ask", "ask", self._ask), button("Reveal", "reveal", self._reveal, "success")),
            pn.pane.Markdown("**The room**: the figure's PNG is in its toolbar (the disk icon)"),
            csv, button("Close the room", "close", self._close, "danger"),
            sizing_mode="stretch_width", css_classes=[f"{_CSS}-controls"])

    @staticmethod
    def _button(label: str, name: str, action, color: str) -> pn.widgets.Button:
        b = pn.widgets.Button(label=label, color=color, css_classes=[f"{_CSS}-{name}"],
                              sizing_mode="stretch_width")
        b.on_click(lambda event: action())
        return b

    def _act(self, action) -> None:
        """Run a lecturer's action; a refusal is the page's message."""
        try:
            action()
            self._note = ""
        except RoomError as err:
            self._note = str(err)
        self.refresh(force=True)

    def _new_round(self) -> None:
        settings = {**dict(self.room.current.problem.settings), "s_over_n": float(self.s_over_n.value),
                    "input_index": int(self.index.value)}
        self._note = "Solving the theory at the new settings…"
        self.refresh(force=True)

        def solve() -> None:  # off the event loop; the room is thread-safe and the page sees its new version
            try:
                self.room.new_round(self.token, problem_at(settings))
                self._note = ""
            except RoomError as err:
                self._note = str(err)
            except Exception as err:  # noqa: BLE001 - a failed solve must say why, not kill the page
                self._note = f"The theory could not be solved at these settings ({type(err).__name__}: {err})."
            self._seen = -1
        threading.Thread(target=solve, name="explorer-class-round", daemon=True).start()

    def _ask(self) -> None:
        key = self.menu.value
        choices = tuple(str(self.own_choices.value).split(";"))
        self._act(lambda: self.room.ask(self.token, key, str(self.own_text.value), choices))

    def _reveal(self) -> None:
        self._act(lambda: self.room.reveal(self.token))

    def _close(self) -> None:
        self._act(lambda: self.registry.close(self.room, self.token))

    def _csv(self) -> io.StringIO:
        return io.StringIO(self.room.export_csv(self.token))

    # ------------------------------------------------------------------ what the projector shows
    def refresh(self, force: bool = False) -> None:
        """Show the room's state if it changed since last shown (every :data:`REFRESH_MS` ms)."""
        room = self.room
        if not self.registry.changed_since(room, self._seen, force):
            return
        with room.lock:
            self._seen = room.version
            current, previous, q = room.current, room.previous, room.question
            n_students, closed = len(room.students), room.closed
            columns = figures.histogram_columns(current, previous if self.compare.value else None)
            answers = figures.answers_columns(q)
        with pn.io.hold():
            shown = (current.index, bool(self.compare.value))  # what the whole figure shows: else only bars change
            figures.show_histogram(self.figure, self.sources, columns, whole=shown != self._shown)
            self._shown = shown
            self.figure.title.text = f"Round {current.index + 1}: the class's {current.pooled.n:,} resamples and the theory"
            self.counts.object = (f"<b>{n_students}</b> student{'s' if n_students != 1 else ''} joined · "
                                  f"<b class='{_CSS}-pooled'>{current.pooled.n:,}</b> draws pooled")
            self.settings.object = f"Round {current.index + 1}: {html.escape(settings_words(current.problem))}"
            asked = (id(q), len(q.answers), q.revealed) if q is not None else None
            if asked != self._asked:  # the question's figure: when an answer came or the lecturer revealed
                self._show_question(q, answers)
                self._asked = asked
            note = closed or self._note
            self.message.object, self.message.visible = note, bool(note)

    def _show_question(self, q, answers: dict) -> None:
        if q is None:
            self.question.object, self.answers.visible = "No question asked in this round.", False
            return
        said = f"<b>{html.escape(q.text)}</b> — {len(q.answers)} answer{'s' if len(q.answers) != 1 else ''}"
        if q.kind == "choice":
            tally = {c: sum(1 for v in q.answers.values() if v == c) for c in q.choices}
            said += "<br>" + " · ".join(f"{html.escape(c)}: {k}" for c, k in tally.items())
        if q.revealed and q.kind != "choice":
            said += (f"<br>The theory, eq. (60): <b>{q.theory:.3g}</b> · the class's pooled draws: "
                     f"<b>{q.pooled:.3g}</b>" + (f" · the class's median answer: <b>"
                                                  f"{np.median(list(q.answers.values())):.3g}</b>" if q.answers else ""))
        self.question.object = said
        self.answer_sources["dots"].data = {"x": answers["x"], "y": answers["y"]}
        self.answers_fig.x_range.update(start=answers["range"][0], end=answers["range"][1])
        self.answers_fig.y_range.update(start=0, end=answers["top"])
        self.answers_fig.xaxis.major_label_overrides = answers["labels"]
        if answers["labels"]:
            self.answers_fig.xaxis.ticker = list(answers["labels"])
        for name, value in (("theory", q.theory), ("pooled", q.pooled)):
            line = self.answer_lines[name]
            line.visible = bool(q.revealed and np.isfinite(value))
            line.location = float(value) if np.isfinite(value) else 0.0
        self.answers.visible = True

    def __panel__(self) -> pn.viewable.Viewable:
        left = pn.Column(self.join, self.qr, self.counts, width=300)
        right = pn.Column(self.plot, self.settings, self.question, self.answers, sizing_mode="stretch_width")
        return pn.Column(self.message, pn.Row(left, right, sizing_mode="stretch_width"), sizing_mode="stretch_width")
