"""Class rooms: a lecturer's room where every student's phone adds resamples to one pooled figure (issue 48).

No page here (no Panel): a :class:`Room` holds the students, the rounds and the questions; a :class:`RoomRegistry`
(one per server process, :data:`registry`) opens rooms, finds them by code and draws the students' resamples on a
thread of its own, so the server's event loop never computes. The pages (``explorer/views/classroom/``) read a room
(its ``version`` changes with every change) and call its methods.

What a full lecture hall cannot break:

- A room's code has 72 random bits (``secrets``), the lecturer's token 128: neither is guessable. Every change of
  the room (settings, questions, reveal, reset, close, export) needs the token.
- At most ``capacity`` students (default :data:`ROOM_CAPACITY`); the next one is told the room is full. A student
  who comes back with the link of their first visit (the page writes their key into it) is the same student.
- A student's draws are limited to :data:`DRAW_RATE` a second (bursts of :data:`DRAW_BURST`): more are refused
  quietly, never queued.
- Memory is bounded whatever the class does: per round a histogram of
  :data:`~explorer.gp_bootstrap.class_draws.N_BINS` bins and five numbers, the last resample of each student
  (N + M numbers), the answers (one per student per question, at most :data:`MAX_QUESTIONS` questions) and the draw
  log for the CSV export, at most :data:`LOG_LIMIT` rows of 17 bytes (the histogram keeps counting after it);
  :data:`KEEP_ROUNDS` rounds are kept. With N ≤ 200 points and 300 students a room holds less than
  :data:`MEMORY_BOUND_MB` MB (``tests/runtime/test_rooms.py`` fills one), and a server holds at most :data:`MAX_ROOMS`
  rooms.
- A room closes when the lecturer closes it or after :data:`IDLE_EXPIRY` seconds without a draw, an answer or a
  lecturer's action; its students' pages then say "The room was closed.".

Every refusal is one sentence (a :class:`RoomError` the page shows) and one line in the server's log; it changes
nothing.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from explorer.gp_bootstrap import class_draws
from explorer.gp_bootstrap.class_draws import ClassProblem, PooledDraws, StudentDraws

__all__ = ["RoomError", "Question", "Round", "Student", "Room", "RoomRegistry", "registry", "ROOM_CAPACITY",
           "IDLE_EXPIRY", "MEMORY_BOUND_MB", "DRAW_RATE", "DRAW_BURST", "LOG_LIMIT", "KEEP_ROUNDS", "MAX_ROOMS", "MAX_QUESTIONS",
           "QUESTIONS", "CODE_BYTES", "TOKEN_BYTES"]

log = logging.getLogger(__name__)

#: Students a room takes by default (``explorer serve --room-capacity``).
ROOM_CAPACITY = 300
#: Seconds without a draw, an answer or a lecturer's action after which a room closes (2 hours).
IDLE_EXPIRY = 2 * 3600.0
#: Draws a second a student may ask for, on average; beyond it they are refused quietly.
DRAW_RATE = 5.0
#: Draws a student may ask for at once (the phone's "Draw 10").
DRAW_BURST = 10
#: Draws of a round logged for the CSV export (student, draw, f_i, s_i: 17 bytes each).
LOG_LIMIT = 60_000
#: Rounds a room keeps: the current one and the previous one ("compare with the previous round").
KEEP_ROUNDS = 2
#: Rooms a server holds at once.
MAX_ROOMS = 20
#: What a room holds at most (MB) with N <= 200 points and 300 students, whatever they do.
MEMORY_BOUND_MB = 8.0
#: Questions a round keeps (the oldest dropped first).
MAX_QUESTIONS = 20
#: Random bytes of a room's code (72 bits, 12 characters) and of the lecturer's token (128 bits).
CODE_BYTES, TOKEN_BYTES = 9, 16
#: The questions about f_i a lecturer can ask before the draws: key → (question, what the theory and the pool say).
QUESTIONS = {
    "sd": "What will the bootstrap standard deviation of f_i be?",
    "mean": "What will the bootstrap mean of f_i be?",
    "left_out": "What share of the resamples will leave point i out (a number between 0 and 1)?",
}


class RoomError(ValueError):
    """A request a room refuses: the message is one sentence for the page."""


def _refuse(message: str, what: str) -> RoomError:
    """Log ``what`` (one line) and return the error that says ``message``."""
    log.warning("class room: refused %s", what)
    return RoomError(message)


@dataclass
class Question:
    """A question of a round: ``kind`` "number" or "choice" (then ``choices``), the students' ``answers`` (student
    index → a number or a choice), ``revealed`` once the lecturer shows the theory's and the pool's values."""

    key: str
    text: str
    kind: str = "number"
    choices: tuple[str, ...] = ()
    answers: dict[int, float | str] = field(default_factory=dict)
    revealed: bool = False
    theory: float = float("nan")
    pooled: float = float("nan")


@dataclass
class Round:
    """One set of settings: its problem, the pooled draws, each student's draws so far and last resample, the
    draw log (for the CSV) and the questions."""

    index: int
    problem: ClassProblem
    pooled: PooledDraws
    drawn: dict[int, int] = field(default_factory=dict)       # student → draws asked (the next draw's index j)
    last: dict[int, StudentDraws] = field(default_factory=dict)
    log_rows: int = 0
    log_student: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    log_draw: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    log_value: np.ndarray = field(default_factory=lambda: np.zeros(0))
    log_k: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    questions: list[Question] = field(default_factory=list)

    def record(self, student: int, draws: StudentDraws) -> None:
        """Pool ``draws`` of ``student`` and log them (up to :data:`LOG_LIMIT` rows)."""
        self.pooled = class_draws.pool(self.pooled, draws.values, draws.multiplicity)
        self.last[student] = draws
        n = min(draws.values.size, LOG_LIMIT - self.log_rows)
        if n <= 0:
            return
        if self.log_rows + n > self.log_value.size:  # grow by doubling, never past LOG_LIMIT
            size = min(max(2 * self.log_value.size, self.log_rows + n, 1024), LOG_LIMIT)
            self.log_student, self.log_draw, self.log_value, self.log_k = (
                np.resize(a, size) for a in (self.log_student, self.log_draw, self.log_value, self.log_k))
        rows = slice(self.log_rows, self.log_rows + n)
        self.log_student[rows] = student
        self.log_draw[rows] = draws.start + np.arange(n)
        self.log_value[rows] = draws.values[:n]
        self.log_k[rows] = np.minimum(draws.multiplicity[:n], 127)
        self.log_rows += n

    def theory_and_pool(self, key: str) -> tuple[float, float]:
        """What the theory (eq. 60 mixture) and the pooled draws say to the question ``key`` of :data:`QUESTIONS`."""
        (mean, sd), (p_mean, p_sd) = (class_draws.mixture_moments(self.problem.solution, self.problem.index),
                                      class_draws.pooled_moments(self.pooled))
        if key == "mean":
            return mean, p_mean
        if key == "sd":
            return sd, p_sd
        if key == "left_out":
            share = self.pooled.left_out / self.pooled.n if self.pooled.n else float("nan")
            return math.exp(-self.problem.s_over_n), share  # P(s_i = 0) = e^(−S/N)
        return float("nan"), float("nan")


@dataclass
class Student:
    """A student of a room: ``index`` (their seeds), a secret ``key`` (their link), a token bucket of draws."""

    index: int
    key: str
    tokens: float = float(DRAW_BURST)
    stamp: float = 0.0

    @property
    def pseudonym(self) -> str:
        return f"S{self.index + 1:03d}"

    def take(self, n: int, now: float) -> int:
        """Draws of ``n`` allowed now (the token bucket: :data:`DRAW_RATE` a second, at most :data:`DRAW_BURST`)."""
        self.tokens = min(float(DRAW_BURST), self.tokens + (now - self.stamp) * DRAW_RATE)
        self.stamp = now
        allowed = int(min(n, math.floor(self.tokens)))
        self.tokens -= allowed
        return max(allowed, 0)


class Room:
    """A class room: code, lecturer's token, seed, students, rounds and questions; every method is thread-safe.

    ``version`` grows with every change the pages show (a draw pooled, a student joined, a question, a round,
    the room closed): a page redraws when it changed.
    """

    def __init__(self, problem: ClassProblem, *, capacity: int = ROOM_CAPACITY, seed: int | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.code = secrets.token_urlsafe(CODE_BYTES)
        self.token = secrets.token_urlsafe(TOKEN_BYTES)
        self.seed = int(seed) if seed is not None else secrets.randbits(63)
        self.capacity = int(capacity)
        self.clock = clock
        self.touched = clock()
        self.closed = ""                  # why the room closed ("" while open)
        self.version = 0
        self.students: dict[str, Student] = {}
        self.rounds: list[Round] = []
        self.pending: dict[tuple[int, int], int] = {}  # (round, student) → draws asked, not drawn yet
        self.lock = threading.RLock()
        self._new_round(problem)

    # ------------------------------------------------------------------ students
    def join(self, key: str | None = None) -> Student:
        """The student whose link holds ``key`` (a student coming back), or a new one.

        Raises
        ------
        RoomError
            If the room is closed, ``key`` is no student's of this room, or the room is full.
        """
        with self.lock:
            self._check_open()
            if key:
                if key not in self.students:
                    raise _refuse("This student link is not one of this room's: open the room's join link again.",
                                  f"an unknown student key in room {self.code[:4]}…")
                return self.students[key]
            if len(self.students) >= self.capacity:
                raise _refuse(f"This room is full ({self.capacity} students): ask the lecturer.",
                              f"student {self.capacity + 1} of room {self.code[:4]}… (full)")
            student = Student(len(self.students), secrets.token_urlsafe(TOKEN_BYTES), stamp=self.clock())
            self.students[student.key] = student
            self._changed()
            return student

    def request_draws(self, student: Student, n: int) -> int:
        """Ask for ``n`` draws of ``student`` in the current round; returns how many the rate limit let through
        (they are drawn by :meth:`RoomRegistry.request_draws`'s thread)."""
        with self.lock:
            self._check_open()
            allowed = student.take(int(n), self.clock())
            if allowed:
                key = (self.current.index, student.index)
                self.pending[key] = self.pending.get(key, 0) + allowed
                self.touched = self.clock()
            return allowed

    def take_pending(self) -> list[tuple[Round, int, int, int]]:
        """The draws asked and not drawn yet, as (round, student, first draw j, n); reserves their indices j."""
        with self.lock:
            asked, self.pending = self.pending, {}
            rounds = {r.index: r for r in self.rounds}
            work = []
            for (index, student), n in asked.items():
                if index in rounds:  # a round dropped meanwhile (two new rounds in a row): nothing to pool it into
                    r = rounds[index]
                    start = r.drawn.get(student, 0)
                    r.drawn[student] = start + n
                    work.append((r, student, start, n))
            return work

    def add_draws(self, r: Round, student: int, draws: StudentDraws) -> None:
        """Pool ``draws`` of ``student`` into round ``r``."""
        with self.lock:
            r.record(student, draws)
            self._changed()

    def answer(self, student: Student, text: str) -> float | str:
        """Record ``student``'s answer to the open question (a number, or one of its choices); returns it.

        Raises
        ------
        RoomError
            If no question is open, or the answer is not a number where one is asked (or not a choice).
        """
        with self.lock:
            self._check_open()
            q = self.question
            if q is None or q.revealed:
                raise _refuse("No question is open now.", "an answer with no open question")
            value = _parse_answer(q, text)
            q.answers[student.index] = value
            self.touched = self.clock()
            self._changed()
            return value

    # ------------------------------------------------------------------ the lecturer
    def check_lecturer(self, token: str | None) -> None:
        """Raise :class:`RoomError` unless ``token`` is this room's lecturer token."""
        if not token or not secrets.compare_digest(str(token), self.token):
            raise _refuse("This lecturer link is not valid for this room: only the link made when the room was "
                          "started can change it.", f"a forged lecturer token for room {self.code[:4]}…")

    def new_round(self, token: str, problem: ClassProblem) -> Round:
        """Start a round with ``problem`` (new settings, or a reset with the same): the old pool is kept as the
        previous round."""
        with self.lock:
            self.check_lecturer(token)
            self._check_open()
            return self._new_round(problem)

    def ask(self, token: str, key: str, text: str = "", choices: tuple[str, ...] = ()) -> Question:
        """Open a question: ``key`` one of :data:`QUESTIONS` (a number), or "choice" with ``text`` and two or more
        ``choices``.

        Raises
        ------
        RoomError
            If the token is not the lecturer's, or a choice question has no text or fewer than two choices.
        """
        with self.lock:
            self.check_lecturer(token)
            self._check_open()
            if key in QUESTIONS:
                q = Question(key, QUESTIONS[key])
            else:
                choices = tuple(c.strip() for c in choices if c.strip())
                if not text.strip() or len(choices) < 2:
                    raise _refuse("A choice question needs its text and at least two choices, separated by ';'.",
                                  "a choice question without text or choices")
                q = Question("choice", text.strip(), "choice", choices)
            self.current.questions = [*self.current.questions, q][-MAX_QUESTIONS:]
            self.touched = self.clock()
            self._changed()
            return q

    def reveal(self, token: str) -> Question:
        """Show the theory's and the pooled draws' values beside the class's answers to the open question."""
        with self.lock:
            self.check_lecturer(token)
            q = self.question
            if q is None:
                raise _refuse("No question has been asked in this round.", "a reveal with no question")
            q.theory, q.pooled = self.current.theory_and_pool(q.key)
            q.revealed = True
            self.touched = self.clock()
            self._changed()
            return q

    def close(self, token: str | None = None, reason: str = "The room was closed.") -> None:
        """Close the room (the lecturer's ``token``; None: the server closes it, e.g. idle) and free its rounds."""
        with self.lock:
            if token is not None:
                self.check_lecturer(token)
            if self.closed:
                return
            self.closed = reason
            self.rounds = [Round(r.index, r.problem, r.pooled) for r in self.rounds[-1:]]  # the figure stays
            self.pending = {}
            self._changed()

    def export_csv(self, token: str) -> str:
        """The current round as CSV: one row per draw logged (student pseudonym, draw j, f_i, s_i) and one per
        answer (question number, answer), after ``#`` lines giving the settings and the seed."""
        with self.lock:
            self.check_lecturer(token)
            r = self.current
            names = {s.index: s.pseudonym for s in self.students.values()}
            out = io.StringIO()
            out.write(f"# class room round {r.index + 1}; room seed {self.seed}; point i = {r.problem.index}; "
                      + "; ".join(f"{k} = {v}" for k, v in r.problem.settings) + "\n")
            if r.pooled.n > r.log_rows:
                out.write(f"# the first {r.log_rows} of {r.pooled.n} draws (the log keeps {LOG_LIMIT})\n")
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(["student", "record", "index", "value", "s_i"])
            for j in range(r.log_rows):
                writer.writerow([names.get(int(r.log_student[j]), ""), "draw", int(r.log_draw[j]),
                                 f"{r.log_value[j]:.10g}", int(r.log_k[j])])
            for number, q in enumerate(r.questions, start=1):
                for student, value in q.answers.items():
                    writer.writerow([names.get(student, ""), "answer", number, value, ""])
            return out.getvalue()

    # ------------------------------------------------------------------ what the pages read
    @property
    def current(self) -> Round:
        return self.rounds[-1]

    @property
    def previous(self) -> Round | None:
        return self.rounds[-2] if len(self.rounds) > 1 else None

    @property
    def question(self) -> Question | None:
        """The round's last question (open or revealed), None if none was asked."""
        questions = self.current.questions
        return questions[-1] if questions else None

    def idle(self, now: float) -> bool:
        """Whether nothing happened for :data:`IDLE_EXPIRY` seconds."""
        return now - self.touched > IDLE_EXPIRY

    def _check_open(self) -> None:
        if self.closed:
            raise _refuse(self.closed, f"a request to closed room {self.code[:4]}…")

    def _new_round(self, problem: ClassProblem) -> Round:
        index = self.rounds[-1].index + 1 if self.rounds else 0
        r = Round(index, problem, PooledDraws(class_draws.class_bins(problem),
                                              np.zeros(class_draws.N_BINS, dtype=np.int64)))
        self.rounds = [*self.rounds, r][-KEEP_ROUNDS:]
        self.touched = self.clock()
        self._changed()
        return r

    def _changed(self) -> None:
        self.version += 1


def _parse_answer(q: Question, text: str) -> float | str:
    """``text`` as an answer to ``q``: a finite number, or one of its choices (raises :class:`RoomError`)."""
    text = str(text).strip()
    if q.kind == "choice":
        if text not in q.choices:
            raise _refuse(f"Choose one of: {', '.join(q.choices)}.", "an answer that is none of the choices")
        return text
    try:
        value = float(text.replace(",", ".").replace("−", "-"))
    except ValueError:
        value = float("nan")
    if not math.isfinite(value):
        raise _refuse("Type a number, e.g. 0.25.", "an answer that is not a number")
    return value


class RoomRegistry:
    """The rooms of one server process: opened by a lecturer, found by their code, drawn on one thread.

    ``refusal`` (not empty) refuses every room with that sentence: a server of several processes
    (``num_procs``) cannot share a room between them, so it starts none.
    """

    def __init__(self, capacity: int = ROOM_CAPACITY, *, max_rooms: int = MAX_ROOMS,
                 clock: Callable[[], float] = time.monotonic):
        self.capacity, self.max_rooms, self.clock = int(capacity), int(max_rooms), clock
        self.refusal = ""
        self.rooms: dict[str, Room] = {}
        self.closed_codes: deque[str] = deque(maxlen=1000)
        self.lock = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explorer-class-draws")
        self.busy: set[str] = set()  # rooms whose draws the thread is drawing now

    def configure(self, capacity: int | None = None, refusal: str | None = None) -> None:
        """Set the capacity of the rooms opened from now on, or refuse rooms with the sentence ``refusal``."""
        if capacity is not None:
            if int(capacity) < 1:
                raise ValueError(f"A room's capacity must be at least 1 student, got {capacity}.")
            self.capacity = int(capacity)
        if refusal is not None:
            self.refusal = refusal

    def open(self, problem: ClassProblem, seed: int | None = None) -> Room:
        """A new room for ``problem``.

        Raises
        ------
        RoomError
            If this server refuses rooms (several processes) or holds :data:`MAX_ROOMS` rooms already.
        """
        self.expire()
        if self.refusal:
            raise _refuse(self.refusal, "a room on a server of several processes")
        with self.lock:
            if len(self.rooms) >= self.max_rooms:
                raise _refuse(f"This server holds {self.max_rooms} class rooms already: close one first.",
                              "a room beyond the server's limit")
            room = Room(problem, capacity=self.capacity, seed=seed, clock=self.clock)
            self.rooms[room.code] = room
        log.info("class room %s… opened (capacity %d)", room.code[:4], room.capacity)
        return room

    def get(self, code: str | None) -> Room:
        """The open room of ``code``.

        Raises
        ------
        RoomError
            If no room has that code, or it was closed or expired.
        """
        self.expire()
        code = (code or "").strip()
        with self.lock:
            room = self.rooms.get(code)
            if room is None:
                if code and code in self.closed_codes:
                    raise _refuse("The room was closed.", f"a request to closed room {code[:4]}…")
                raise _refuse(f"There is no class room with the code {code[:24]!r}: check the link, or scan the "
                              "room's QR code again.", "an unknown room code")
            return room

    def close(self, room: Room, token: str | None = None) -> None:
        """Close ``room`` (with the lecturer's ``token``; None: the server closes it) and forget it."""
        room.close(token)
        with self.lock:
            if self.rooms.pop(room.code, None) is not None:
                self.closed_codes.append(room.code)
                log.info("class room %s… closed", room.code[:4])

    def expire(self) -> None:
        """Close the rooms idle for :data:`IDLE_EXPIRY` seconds."""
        now = self.clock()
        for room in [r for r in list(self.rooms.values()) if r.idle(now)]:
            room.close(None, "The room was closed after two hours without activity.")
            self.close(room)

    def changed_since(self, room: Room, seen: int, force: bool = False) -> bool:
        """Whether a page that last showed ``room`` at version ``seen`` has something new to show (always with
        ``force``); an idle room is closed first (:meth:`expire`), so its pages show that it closed."""
        if room.idle(room.clock()):  # two hours without activity: the room closes (and its pages say so)
            self.expire()
        return force or room.version != seen

    def request_draws(self, room: Room, student: Student, n: int) -> int:
        """Ask for ``n`` draws of ``student`` (rate limited: :meth:`Room.request_draws`), drawn on the registry's
        thread and pooled into the room; returns how many were taken."""
        allowed = room.request_draws(student, n)
        if allowed:
            with self.lock:
                start = room.code not in self.busy
                self.busy.add(room.code)
            if start:
                self.executor.submit(self._draw, room)
        return allowed

    def _draw(self, room: Room) -> None:
        """Draw what the students of ``room`` asked for, until nothing is left (on the registry's thread)."""
        while True:
            with self.lock:
                work = room.take_pending()
                if not work:
                    self.busy.discard(room.code)
                    return
            for r, student, start, n in work:
                try:
                    draws = class_draws.draw_for_student(r.problem, room.seed, r.index, student, start, n)
                except Exception:  # noqa: BLE001 - a failed draw must not stop the room's thread: say it
                    log.exception("class room %s…: a draw failed", room.code[:4])
                    continue
                room.add_draws(r, student, draws)


#: The rooms of this server process (one process holds a room; :func:`explorer.serving.server.serve` refuses rooms
#: when it runs several).
registry = RoomRegistry()
