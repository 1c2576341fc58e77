"""The class room's pages without a browser (issue 48): the figures' columns, a student's and the lecturer's views
on one room, "Start a class room" on the step-by-step page, the server's refusal on several processes and the
command line's --room-capacity."""

from __future__ import annotations

import time

import numpy as np
import pytest

from explorer.gp_bootstrap import class_draws
from explorer.runtime import rooms
from explorer.runtime.rooms import RoomRegistry
from explorer.serving.server import _configure_rooms
from explorer.views.classroom import figures
from explorer.views.classroom.entry import start_room
from explorer.views.classroom.lecturer import LecturerView, join_url, qr_svg
from explorer.views.classroom.room_problem import class_problem, problem_at
from explorer.views.classroom.student import ERROR_COLOUR, SUCCESS_COLOUR, StudentView
from explorer.views.step_by_step.state import StepState
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def state() -> StepState:
    s = StepState(input_index=4)
    s.refresh()
    assert s.problem is not None
    return s


def _drawn(registry: RoomRegistry) -> None:
    registry.executor.submit(lambda: None).result(timeout=60)


def test_the_room_draws_the_step_pages_problem_and_point(state):
    p = class_problem(state)
    assert (p.n, p.index, p.s_over_n) == (state.problem.n, 4, state.s_over_n)
    np.testing.assert_allclose(p.K, state.problem.K)
    again = problem_at(dict(p.settings, s_over_n=0.5))
    assert again.s_over_n == 0.5 and again.solution.S == pytest.approx(0.5 * p.n)


def test_histogram_columns_are_shares_and_the_theory_a_probability_per_bin(state):
    registry = RoomRegistry()
    room = registry.open(class_problem(state))
    student = room.join()
    registry.request_draws(room, student, 10)
    _drawn(registry)
    columns = figures.histogram_columns(room.current, None, mine=0.1)
    assert columns["bars"]["top"].sum() == pytest.approx(1.0)
    edges = room.current.pooled.edges
    # the curve is the eq. (60) density times a bin's width: summed over the bins' centres it is about 1
    centres = 0.5 * (edges[1:] + edges[:-1])
    width = np.diff(edges).mean()
    assert (class_draws.mixture_density(room.current.problem.solution, 4, centres) * width).sum() == \
        pytest.approx(1.0, abs=0.02)
    assert list(columns["mine"]["x"]) == [0.1, 0.1] and columns["previous"]["x"].size == 0


def test_answers_stack_as_dots_and_choices_take_their_places():
    q = rooms.Question("sd", "?", answers={0: 0.3, 1: 0.5, 2: 0.5})
    columns = figures.answers_columns(q)
    assert list(columns["y"]) == [1, 1, 2] and columns["range"][0] < 0.3 < 0.5 < columns["range"][1]
    q = rooms.Question("choice", "?", "choice", ("a", "b"), answers={0: "b", 1: "a", 2: "b"})
    columns = figures.answers_columns(q)
    assert list(columns["x"]) == [1, 0, 1] and list(columns["y"]) == [1, 1, 2]
    assert columns["labels"] == {0: "a", 1: "b"}


def test_a_student_and_the_lecturer_on_one_room(state):
    registry = RoomRegistry()
    room = registry.open(class_problem(state))
    phone = StudentView(room, registry, room.join())
    projector = LecturerView(room, registry, "http://10.0.0.5:5006")
    phone._draw(3)
    _drawn(registry)
    phone.refresh()
    projector.refresh()
    assert "explorer-class-my-count'>3<" in phone.mine.object
    assert "explorer-class-pooled'>3<" in projector.counts.object
    assert projector.url == join_url("http://10.0.0.5:5006/", room.code) == f"http://10.0.0.5:5006/class?room={room.code}"
    assert qr_svg(projector.url).startswith("<svg")
    projector._ask()
    phone.number.value = "lots"
    phone._answer()
    assert phone._note == ("Type a number, e.g. 0.25.", False) and room.question.answers == {}
    assert phone.message.styles["color"] == ERROR_COLOUR
    phone.number.value = "0.4"
    phone._answer()
    assert phone._note == ("Your answer 0.4 was sent.", True) and phone.message.styles["color"] == SUCCESS_COLOUR
    projector._reveal()
    assert "The theory, eq. (60)" in projector.question.object
    projector.s_over_n.value, projector.index.value = 0.5, 2  # a new round at other settings, solved off the loop
    projector._new_round()
    deadline = time.monotonic() + 60
    while room.current.index == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (room.current.index, room.current.problem.s_over_n, room.current.problem.index) == (1, 0.5, 2)
    assert room.previous.pooled.n == 3 and room.current.pooled.n == 0
    projector.compare.value = True  # the previous round's outline appears
    assert projector.sources["previous"].data["x"].size > 0
    assert "Round 2" in projector.settings.object
    projector._close()
    phone.refresh()
    assert phone.closed.object == "The room was closed." and phone.closed in phone.body.objects
    phone._draw(1)
    assert phone._note == ("The room was closed.", False)


def test_start_a_class_room_gives_the_lecturer_link_or_says_why_not(state):
    registry = RoomRegistry()
    said = start_room(state, registry)
    (room,) = registry.rooms.values()
    assert f"./lecture?room={room.code}&amp;key={room.token}" in said
    registry.configure(refusal="Class rooms need a server of one process.")
    assert "need a server of one process" in start_room(state, registry) and len(registry.rooms) == 1


def test_a_server_of_several_processes_refuses_rooms(monkeypatch):
    registry = RoomRegistry()
    monkeypatch.setattr(rooms, "registry", registry)
    _configure_rooms(120, 2)
    assert "this one runs 2 (num_procs)" in registry.refusal
    _configure_rooms(120, 1)
    assert registry.refusal == "" and registry.capacity == 120


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_room_capacity_must_be_a_whole_number_of_students(capsys, value):
    code, out, err = run_cli(capsys, "serve", "--room-capacity", value, "--no-warm-up")
    assert code == 2 and "--room-capacity" in err and "whole number of students" in err


def test_a_phone_left_open_sees_its_room_close_after_two_hours_idle(state):
    now = [0.0]
    registry = RoomRegistry(clock=lambda: now[0])
    room = registry.open(class_problem(state))
    phone = StudentView(room, registry, room.join())
    now[0] += rooms.IDLE_EXPIRY + 1
    phone.refresh()  # the page's next look at its room (every 1.5 s)
    assert "two hours" in phone.closed.object and registry.rooms == {}


def test_the_class_room_pages_have_no_server_wide_busy_indicator():
    """Panel's busy indicator follows every session's events; a phone's page with one would be sent a message at
    every other student's click (explorer.app.CLASS_ROOM_PAGE)."""
    import panel as pn

    from explorer.app import create_student_page

    before = len(pn.state._indicators)
    page = create_student_page()
    assert page.busy_indicator is None and len(pn.state._indicators) == before
