"""Server-side timing for ``bench_served_load.py``: when each websocket connection receives a widget value and when
it next sends a figure revision.

``bench_served_load.py`` starts the server as ``python -c "import served_trace; served_trace.serve(LOG, ARGS)"``:
Bokeh's ``WSHandler.on_message`` and tornado's ``WebSocketHandler.write_message`` (through which Bokeh and Panel
write) are wrapped so that every received message fragment that sets an ``attr: "value"`` and every sent message that carries a
``data-revision`` is appended to ``LOG`` (and the start and end of every background job) as ``<connection id> <event> <time.time()>
[<value>]``. The server's own time for a theory update is then the time from receiving the new S/N to sending the
redrawn figure, on the same connection (without the page's time to send the value and to receive the reply).
"""
from __future__ import annotations

import json
import sys
import threading
import time


def install(path: str) -> None:
    """Wrap Bokeh's websocket handler so that it logs value changes and revisions to ``path``."""
    from bokeh.server.views.ws import WSHandler
    from tornado.websocket import WebSocketHandler

    log, lock = open(path, "a", buffering=1), threading.Lock()
    on_message, write_message = WSHandler.on_message, WebSocketHandler.write_message

    def record(handler, event: str, extra: str = "") -> None:
        with lock:
            log.write(f"{id(handler)} {event} {time.time():.6f} {extra}\n")

    async def traced_on_message(self, fragment):
        if isinstance(fragment, str) and "value" in fragment:
            try:
                values = [e.get("new") for e in json.loads(fragment).get("events", []) if e.get("attr") == "value"]
            except (ValueError, AttributeError):
                values = []
            for value in values:
                if isinstance(value, (int, float)):
                    record(self, "value", repr(value))
        return await on_message(self, fragment)

    def traced_write_message(self, message, binary=False):
        if isinstance(message, str) and "data-revision" in message:
            record(self, "revision")
        return write_message(self, message, binary)

    from explorer.views.common.state.jobs import Job
    job_start = Job.start

    def traced_job_start(self, target):
        record(self, f"job-{self.kind}")

        def traced_target():
            try:
                target()
            finally:
                record(self, f"jobend-{self.kind}")

        return job_start(self, traced_target)

    Job.start = traced_job_start
    WSHandler.on_message = traced_on_message
    WebSocketHandler.write_message = traced_write_message  # Bokeh's handler and Panel both write through it


def server_times(path: str, values: list[float]) -> list[float]:
    """Seconds from receiving each of ``values`` to the next revision sent on the same connection."""
    events = [line.split() for line in open(path)]
    times = []
    for value in values:
        received = [(who, float(at)) for who, event, at, *rest in events
                    if event == "value" and rest and float(rest[0]) == value]
        if not received:
            continue
        who, at = received[0]  # the first arrival (Enter); a second one (e.g. on blur) changes nothing
        sent = [float(t) for w, event, t, *_ in events if w == who and event == "revision" and float(t) > at]
        if sent:
            times.append(min(sent) - at)
    return times


def jobs_running(path: str, kind: str, since: float, at: float) -> int:
    """How many jobs of ``kind`` that started after ``since`` were running at ``at`` (times from ``time.time()``)."""
    events = [line.split() for line in open(path)]
    started = {who: float(t) for who, event, t, *_ in events if event == f"job-{kind}" and float(t) >= since}
    ended = {who: float(t) for who, event, t, *_ in events if event == f"jobend-{kind}"}
    return sum(1 for who, t in started.items() if t <= at < ended.get(who, float("inf")))


def all_jobs_ended(path: str) -> bool:
    """Whether every background computation the server started has ended."""
    started, ended = set(), set()
    for who, event, *_ in (line.split() for line in open(path)):
        if event.startswith("job-"):
            started.add(who)
        elif event.startswith("jobend-"):
            ended.add(who)
    return started <= ended


def value_times(path: str, values: list[float]) -> list[float]:
    """When each of ``values`` first reached the server."""
    events = [line.split() for line in open(path)]
    first = {}
    for who, event, at, *rest in events:
        if event == "value" and rest and float(rest[0]) in values:
            first.setdefault(float(rest[0]), float(at))
    return [first[v] for v in values if v in first]


def serve(path: str, argv: list[str]) -> None:
    """Run ``explorer serve`` (``argv`` after ``serve``) with the websocket handler traced to ``path``."""
    install(path)
    from explorer.cli import main
    sys.exit(main(["serve", *argv]))
