"""How a class room is entered: the step-by-step page starts one (:func:`start_room`), the lecturer's link opens its
projector view (:func:`lecturer_content`), the join link a student's phone page (:func:`student_content`). A code
that is unknown or closed, a lecturer link with a forged token, a student link of another room or a full room give
one sentence on the page instead (and one line in the server's log, :mod:`explorer.runtime.rooms`)."""

from __future__ import annotations

import html

import panel as pn

from explorer.runtime import rooms
from explorer.runtime.rooms import RoomError, RoomRegistry
from explorer.views.classroom.lecturer import LecturerView
from explorer.views.classroom.room_problem import class_problem
from explorer.views.classroom.student import StudentView
from explorer.views.step_by_step.state import StepState

__all__ = ["LECTURER_PATH", "STUDENT_PATH", "start_room", "lecturer_content", "student_content", "session_arg",
           "session_origin"]

#: The routes of the lecturer's projector view and of the students' phone page (``explorer serve`` serves them).
LECTURER_PATH, STUDENT_PATH = "/lecture", "/class"


def session_arg(name: str) -> str:
    """The query argument ``name`` of the served session's link ("" if absent or outside a server)."""
    values = (pn.state.session_args or {}).get(name) or [b""]
    return values[0].decode(errors="replace")


def session_origin() -> str:
    """``http://host:port`` as the browser of this session reached the server (its Host header)."""
    headers = pn.state.headers or {}
    host = headers.get("Host") or "127.0.0.1:5006"
    return f"{headers.get('X-Forwarded-Proto', 'http')}://{host}"


def start_room(state: StepState, registry: RoomRegistry | None = None) -> str:
    """Open a room for the step-by-step settings of ``state``; HTML: the link to its projector view (which holds the
    lecturer's token), or the sentence why no room was opened."""
    registry = registry if registry is not None else rooms.registry
    try:
        room = registry.open(class_problem(state))
    except RoomError as err:
        return f"<span class='explorer-class-refused'>{html.escape(str(err))}</span>"
    link = f".{LECTURER_PATH}?room={room.code}&key={room.token}"
    return (f"A class room is open: <a href='{html.escape(link)}' target='_blank' class='explorer-class-open'>"
            "open its projector view ↗</a>. Keep that link to yourself: it holds the room's lecturer key. The "
            "projector view shows the students' join link and its QR code.")


def _refusal(err: RoomError) -> pn.pane.HTML:
    return pn.pane.HTML(f"<p style='font-size:22px'>{html.escape(str(err))}</p>", css_classes=["explorer-class-refused"],
                        sizing_mode="stretch_width")


def lecturer_content(registry: RoomRegistry | None = None) -> tuple[list, list]:
    """The projector view of the room in the session's link (``room`` and ``key``): (main, sidebar) objects."""
    registry = registry if registry is not None else rooms.registry
    try:
        room = registry.get(session_arg("room"))
        room.check_lecturer(session_arg("key"))
    except RoomError as err:
        return [_refusal(err)], []
    view = LecturerView(room, registry, session_origin())
    return [view], [view.controls]


def student_content(registry: RoomRegistry | None = None) -> list:
    """The phone page of the room in the session's link (``room``; ``me``: a student coming back): main objects.
    A new student's key is written into the page's link once the page is shown (a reload keeps the student)."""
    registry = registry if registry is not None else rooms.registry
    key = session_arg("me")
    try:
        room = registry.get(session_arg("room"))
        student = room.join(key or None)
    except RoomError as err:
        return [_refusal(err)]
    if not key and pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        pn.state.onload(lambda: pn.state.location.update_query(me=student.key))
    return [StudentView(room, registry, student)]
