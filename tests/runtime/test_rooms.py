"""Class rooms (issue 48) without a page: codes and tokens, capacity, the rate limit, seeds that replay a class,
the pooled summary against an independent computation, rounds, questions, expiry, isolation and the CSV."""

from __future__ import annotations

import csv
import io
import logging

import numpy as np
import pytest

from explorer import datasets, kernels
from explorer.bootstrap import replica
from explorer.gp_bootstrap import class_draws, experiments, steps
from explorer.gp_bootstrap.class_draws import ClassProblem
from explorer.runtime import rooms
from explorer.runtime.rooms import Room, RoomError, RoomRegistry


class Clock:
    """A clock the test moves."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def problem() -> ClassProblem:
    data = datasets.load("toy", rng=datasets.GENERATED_DATA_SEED)
    kernel = kernels.make_kernel("se", 1, lengthscale=0.1)
    p = experiments.regression_problem(data, kernel, 0.1, holdout=data.n - 30)
    sol = replica.solve_replica(p.K, p.y, p.noise_var, 1.0 * p.n)
    grid = np.linspace(p.X[:, 0].min(), p.X[:, 0].max(), 50)
    return ClassProblem(p.K, p.y, 0.1, 1.0, 3, sol, p.X[:, 0], grid, kernel(grid[:, None], p.X),
                        (("dataset", "toy"), ("s_over_n", 1.0)))


def draw_now(registry: RoomRegistry, room: Room, student, n: int) -> int:
    taken = registry.request_draws(room, student, n)
    registry.executor.submit(lambda: None).result(timeout=60)  # the draws queued before it are done
    return taken


def test_codes_and_tokens_are_unguessable_and_rooms_isolated(problem):
    registry = RoomRegistry()
    a, b = registry.open(problem), registry.open(problem)
    for room in (a, b):
        assert len(room.code) == 12 and len(room.token) >= 22  # 72 and 128 random bits (url-safe base64)
    assert len({a.code, b.code, a.token, b.token}) == 4
    assert registry.get(a.code) is a and registry.get(b.code) is b
    student = a.join()
    draw_now(registry, a, student, 3)
    assert a.current.pooled.n == 3 and b.current.pooled.n == 0  # room B never sees room A's draws
    with pytest.raises(RoomError, match="not one of this room's"):
        b.join(student.key)  # a student key of room A in room B


def test_unknown_closed_and_forged_requests_change_nothing_and_log_one_line(problem, caplog):
    registry = RoomRegistry()
    room = registry.open(problem)
    student = room.join()
    before = (room.version, room.current.index)
    with caplog.at_level(logging.WARNING, logger="explorer.runtime.rooms"):
        with pytest.raises(RoomError, match="no class room with the code"):
            registry.get("nonexistent")
        with pytest.raises(RoomError, match="lecturer link is not valid"):
            room.new_round("forged", problem)
        with pytest.raises(RoomError, match="lecturer link is not valid"):
            room.close("forged")
        with pytest.raises(RoomError, match="No question is open"):
            room.answer(student, "1")
    assert (room.version, room.current.index, room.closed) == (*before, "")
    assert len(caplog.records) == 4 and all("\n" not in r.getMessage() for r in caplog.records)
    registry.close(room, room.token)
    with pytest.raises(RoomError, match="The room was closed"):
        registry.get(room.code)
    with pytest.raises(RoomError, match="The room was closed"):
        room.request_draws(student, 1)


def test_capacity_the_next_student_is_told_the_room_is_full_and_a_student_can_rejoin(problem):
    registry = RoomRegistry(capacity=2)
    room = registry.open(problem)
    first, second = room.join(), room.join()
    with pytest.raises(RoomError, match=r"This room is full \(2 students\)"):
        room.join()
    assert room.join(first.key) is first  # coming back with one's link: the same student, not a new one
    assert [first.index, second.index] == [0, 1] and len(room.students) == 2
    with pytest.raises(ValueError, match="at least 1 student"):
        registry.configure(capacity=0)


def test_rate_limit_refuses_quietly_beyond_the_burst_and_refills_with_time(problem):
    clock = Clock()
    registry = RoomRegistry(clock=clock)
    room = registry.open(problem)
    student = room.join()
    assert draw_now(registry, room, student, 10) == rooms.DRAW_BURST
    assert draw_now(registry, room, student, 10) == 0  # refused, not queued
    clock.now += 1.0
    assert draw_now(registry, room, student, 10) == int(rooms.DRAW_RATE)
    assert room.current.pooled.n == rooms.DRAW_BURST + int(rooms.DRAW_RATE)
    assert room.pending == {}


def test_a_students_draws_replay_from_the_room_seed_whatever_the_batches(problem):
    registry = RoomRegistry()
    room = registry.open(problem, seed=2024)
    s0, s1 = room.join(), room.join()
    for n in (1, 4, 2):
        draw_now(registry, room, s0, n)
    draw_now(registry, room, s1, 3)
    r = room.current
    mine = r.log_value[:r.log_rows][r.log_student[:r.log_rows] == 0]
    # independently: resamples 0..6 of SeedSequence(2024, spawn_key=(round 0, student 0)), fitted in one go
    seed = np.random.SeedSequence(2024, spawn_key=(0, 0))
    again = steps.draw_resamples(problem.K, problem.y, 0.1, 1.0, 0, 7, rng=seed)
    np.testing.assert_allclose(mine, again.train[:, problem.index], rtol=1e-10)
    assert list(r.log_draw[:r.log_rows][r.log_student[:r.log_rows] == 0]) == list(range(7))
    other = r.log_value[:r.log_rows][r.log_student[:r.log_rows] == 1]
    assert not np.allclose(other, mine[:3])  # another student, other resamples


def test_pooled_summary_matches_the_values_and_the_memory_stays_bounded(problem, monkeypatch):
    monkeypatch.setattr(rooms, "LOG_LIMIT", 25)
    registry = RoomRegistry()
    room = registry.open(problem)
    students = [room.join() for _ in range(4)]
    for s in students:
        for _ in range(4):
            s.tokens = rooms.DRAW_BURST  # no waiting in a test: the bucket is full
            draw_now(registry, room, s, 10)
    r = room.current
    assert r.pooled.n == 160 and r.log_rows == 25 and r.log_value.size == 25  # the log stops, the pool counts on
    values = np.concatenate([class_draws.draw_for_student(problem, room.seed, 0, k, 0, 40).values for k in range(4)])
    counts, _ = np.histogram(np.clip(values, r.pooled.edges[0], r.pooled.edges[-1]), r.pooled.edges)
    np.testing.assert_array_equal(r.pooled.counts, counts)
    mean, sd = class_draws.pooled_moments(r.pooled)
    assert mean == pytest.approx(values.mean(), rel=1e-9) and sd == pytest.approx(values.std(ddof=1), rel=1e-9)
    assert "the first 25 of 160 draws" in room.export_csv(room.token)


def test_mixture_moments_and_density_agree_with_sampling_the_mixture(problem):
    sol, i = problem.solution, problem.index
    mix = replica.mixture_components(sol, i)
    rng = np.random.default_rng(5)
    k = rng.choice(mix.weights.size, size=400_000, p=mix.weights / mix.weights.sum())
    h = rng.normal(mix.means[k], mix.sds[k])
    mean, sd = class_draws.mixture_moments(sol, i)
    assert mean == pytest.approx(h.mean(), abs=4 * h.std() / np.sqrt(h.size))
    assert sd == pytest.approx(h.std(), rel=0.01)
    edges = class_draws.class_bins(problem)
    counts, _ = np.histogram(h, edges)
    centres = 0.5 * (edges[1:] + edges[:-1])
    expected = class_draws.mixture_density(sol, i, centres) * np.diff(edges) * h.size
    big = expected > 2000
    np.testing.assert_allclose(counts[big], expected[big], rtol=0.08)


def test_rounds_keep_the_previous_pool_and_questions_reveal_theory_and_pool(problem):
    registry = RoomRegistry()
    room = registry.open(problem)
    student = room.join()
    draw_now(registry, room, student, 10)
    room.ask(room.token, "sd")
    with pytest.raises(RoomError, match="Type a number"):
        room.answer(student, "about a half")
    assert room.question.answers == {}
    assert room.answer(student, "0,25") == 0.25
    q = room.reveal(room.token)
    assert q.theory == pytest.approx(class_draws.mixture_moments(problem.solution, problem.index)[1])
    assert q.pooled == pytest.approx(class_draws.pooled_moments(room.current.pooled)[1])
    room.new_round(room.token, problem)
    assert room.previous.pooled.n == 10 and room.current.pooled.n == 0 and room.current.index == 1
    room.ask(room.token, "choice", "One bump or several?", ("one", "several", ""))
    with pytest.raises(RoomError, match="Choose one of: one, several"):
        room.answer(student, "three")
    room.answer(student, "several")
    with pytest.raises(RoomError, match="at least two choices"):
        room.ask(room.token, "choice", "Empty?", ("only",))
    for _ in range(3):
        room.new_round(room.token, problem)
    assert len(room.rounds) == rooms.KEEP_ROUNDS


def test_idle_rooms_expire_after_two_hours_and_their_students_are_told(problem):
    clock = Clock()
    registry = RoomRegistry(clock=clock)
    room = registry.open(problem)
    student = room.join()
    clock.now += rooms.IDLE_EXPIRY - 1
    registry.request_draws(room, student, 1)  # activity: the two hours start again
    clock.now += rooms.IDLE_EXPIRY - 1
    assert registry.get(room.code) is room
    clock.now += 2
    with pytest.raises(RoomError, match="The room was closed"):
        registry.get(room.code)
    assert "two hours" in room.closed and registry.rooms == {}


def test_a_server_of_several_processes_refuses_rooms_with_its_sentence(problem):
    registry = RoomRegistry()
    registry.configure(refusal="Class rooms need a server of one process.")
    with pytest.raises(RoomError, match="one process"):
        registry.open(problem)


def test_csv_export_lists_the_draws_and_answers_of_the_round(problem):
    registry = RoomRegistry()
    room = registry.open(problem, seed=1)
    a, b = room.join(), room.join()
    draw_now(registry, room, a, 2)
    draw_now(registry, room, b, 1)
    room.ask(room.token, "mean")
    room.answer(b, "0.5")
    text = room.export_csv(room.token)
    assert text.startswith("# class room round 1; room seed 1; point i = 3")
    rows = list(csv.DictReader(io.StringIO("\n".join(line for line in text.splitlines() if not line.startswith("#")))))
    assert [(r["student"], r["record"], r["index"]) for r in rows] == [
        ("S001", "draw", "0"), ("S001", "draw", "1"), ("S002", "draw", "0"), ("S002", "answer", "1")]
    assert float(rows[-1]["value"]) == 0.5
    with pytest.raises(RoomError):
        room.export_csv("forged")


def test_a_full_room_stays_within_the_memory_bound_it_states():
    """The worst a class can do: N = 200 points, 300 students who all drew (their last resample kept) and answered
    20 questions, a full draw log, in both rounds kept: the room holds less than :data:`MEMORY_BOUND_MB`."""
    import tracemalloc

    data = datasets.load("teacher", rng=datasets.GENERATED_DATA_SEED)
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 1, 200))
    kernel = kernels.make_kernel("se", 1, lengthscale=0.1)
    K, y = kernel(x[:, None], x[:, None]), np.sin(6 * x) + 0.1 * rng.normal(size=200)
    assert data.n  # the shipped data load (the bound is for any N <= 200)
    sol = replica.solve_replica(K, y, 0.1, 200.0)
    grid = np.linspace(0, 1, 150)
    problem = ClassProblem(K, y, 0.1, 1.0, 0, sol, x, grid, kernel(grid[:, None], x[:, None]))
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    room = Room(problem, capacity=300)
    students = [room.join() for _ in range(300)]
    for round_ in range(rooms.KEEP_ROUNDS):
        if round_:
            room.new_round(room.token, ClassProblem(K.copy(), y.copy(), 0.1, 1.0, 0, sol, x, grid,
                                                    kernel(grid[:, None], x[:, None])))
        r = room.current
        for k in range(rooms.LOG_LIMIT // rooms.DRAW_BURST + 300):  # the log fills; every student's last resample
            s = k % 300
            draws = class_draws.StudentDraws(r.drawn.get(s, 0), rng.normal(size=rooms.DRAW_BURST),
                                             rng.poisson(1.0, rooms.DRAW_BURST), rng.poisson(1.0, 200),
                                             rng.normal(size=150))
            r.drawn[s] = r.drawn.get(s, 0) + rooms.DRAW_BURST
            room.add_draws(r, s, draws)
        for q in range(rooms.MAX_QUESTIONS):
            room.ask(room.token, "sd")
            for student in students:
                room.answer(student, str(q + 0.5))
    held = (tracemalloc.get_traced_memory()[0] - before) / 1e6
    tracemalloc.stop()
    assert len(room.rounds) == rooms.KEEP_ROUNDS
    assert all(r.log_rows == rooms.LOG_LIMIT and len(r.last) == 300 for r in room.rounds)
    print(f"a full room holds {held:.1f} MB")
    assert held < rooms.MEMORY_BOUND_MB
