"""A class room under a lecture hall's load (issue 48, point 8): S students on a real ``explorer serve``, each
drawing a resample every P seconds for M minutes, and the lecturer's projector view.

    python benchmarks/bench_class.py                          # 60 students, a draw every 2 s each, 5 minutes
    python benchmarks/bench_class.py --students 10 --minutes 1

Everyone goes through the server's websocket protocol, as a browser does (:class:`serving.LightSession`, Bokeh's
Python client: it receives and applies every message the server sends, draws nothing): the lecturer's session of
the step-by-step page presses "Start a class room", the lecturer's projector view opens from the link it gives,
the students' phone pages open from the join link and press "Draw a resample". The students' sessions run in a
process of their own (their clients' work would otherwise delay the lecturer's, whose times are measured).

Measured:

- *draw to figure*: the k-th draw asked (the students' clicks in time order) counts as shown when the projector's
  pooled count (written with the figure, in one update) reaches k: p50 and p95 seconds (target p95 <= 1 s);
- *draws lost*: draws asked minus draws the projector shows at the end (target 0), and *failed connections*
  (target 0);
- the server's CPU (its own process; the Dask workers do nothing for a room) and memory (RSS) before the room,
  during the run and after the room closed and the students left (target: within 10 % of before). The server
  runs under the C library's allocator, as ``explorer serve`` does by default (``PYTHONMALLOC=pymalloc python
  benchmarks/bench_class.py`` measures it under Python's own: every session's objects are freed, yet +27-31 % at
  60 students, the arenas pinned by a few long-lived objects).

The machine's load average is printed at the start and the end: on a shared machine the figures are only as good
as the idle cores.
"""
from __future__ import annotations

import argparse
import html
import multiprocessing as mp
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from playwright.sync_api import sync_playwright
from serving import LightSession, free_port, launch, load

ROOT = Path(__file__).resolve().parents[1]


def _text(session: LightSession, css: str) -> str:
    return html.unescape(str(session.find(css).text))


def _says_closed(session: LightSession) -> bool:
    """Whether a phone page says its room was closed (the sentence replaces the page once closed)."""
    try:
        return "The room was closed" in _text(session, "explorer-class-closed")
    except StopIteration:
        return False


def _wait(predicate, timeout: float, what: str, step: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(step)


def students_process(join: str, students: int, period: float, minutes: float, out) -> None:
    """Open ``students`` phone pages of ``join`` and click "Draw a resample" on each every ``period`` seconds
    (staggered) for ``minutes``; send back (click times, failed connections, sessions closed)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sessions, failed = [], 0
    for _ in range(students):
        try:
            sessions.append(LightSession(join, timeout=120))
        except RuntimeError:
            failed += 1
    out.send(("joined", len(sessions), failed))
    buttons = [s.find("explorer-class-draw-1") for s in sessions]
    clicks: list[float] = []
    start = time.time() + 1.0
    end = start + 60 * minutes
    offsets = [period * k / max(len(sessions), 1) for k in range(len(sessions))]
    tick = 0
    while True:
        due = [(start + tick * period + offset, k) for k, offset in enumerate(offsets)]
        if due[0][0] >= end:
            break
        for at, k in due:
            time.sleep(max(at - time.time(), 0.0))
            _click(sessions[k], buttons[k], clicks)
        tick += 1
    time.sleep(3.0)
    out.send(("clicks", clicks, failed))
    out.recv()  # the lecturer closed the room
    time.sleep(3.0)
    closed = sum(_says_closed(s) for s in sessions)
    for s in sessions:
        s.close()
    out.send(("closed", closed))


def _click(session: LightSession, button, clicks: list[float]) -> None:
    """Click ``button`` as a phone does, noting the time the click leaves for the server: the phone's tap (the
    benchmark's clients share one process, where a click may wait behind the other pages' updates; a phone has
    only its own page)."""
    from bokeh.events import ButtonClick

    def send() -> None:
        clicks.append(time.time())
        session.document.callbacks.send_event(ButtonClick(button))

    session.loop.add_callback(send)


#: In the projector's page: every change of its pooled count, with the epoch time (s) the page showed it (a look
#: every 20 ms at the count written with the figure).
RECORDER_JS = """() => {
  const find = (root) => {
    const el = root.querySelector('.explorer-class-counts');
    if (el) return el;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) { const f = find(e.shadowRoot); if (f) return f; }
    return null;
  };
  const host = find(document);
  window.__seen = [];
  let last = -1;
  setInterval(() => {
    const m = /([\\d,]+) draws pooled/.exec(host.shadowRoot ? host.shadowRoot.textContent : host.textContent);
    const n = m ? parseInt(m[1].replace(/,/g, '')) : -1;
    if (n !== last) { last = n; window.__seen.push([Date.now() / 1000, n]); }
  }, 20);
  return host !== null;
}"""


class Projector:
    """The lecturer's projector view in headless Chromium (a real page, drawing every update): every change of its
    pooled count, with the time the page showed it."""

    def __init__(self, pw, url: str):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        self.browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                          args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        self.page = self.browser.new_page(viewport={"width": 1280, "height": 720})
        self.page.set_default_timeout(300_000)
        self.page.goto(url)
        self.page.locator(".explorer-class-counts").first.wait_for()
        self.page.wait_for_timeout(2000)
        assert self.page.evaluate(RECORDER_JS)

    @property
    def seen(self) -> list[tuple[float, int]]:
        return [(float(t), int(n)) for t, n in self.page.evaluate("() => window.__seen")]

    def pooled(self) -> int:
        seen = self.seen
        return seen[-1][1] if seen else -1

    def close_room(self) -> None:
        self.page.locator(".explorer-class-close button").click()

    def close(self) -> None:
        self.browser.close()


def latencies(clicks: list[float], seen: list[tuple[float, int]]) -> list[float]:
    """Seconds from the k-th click to the first time the projector showed at least k draws (clicks unmatched:
    left out)."""
    out, j = [], 0
    for k, clicked in enumerate(sorted(clicks), start=1):
        while j < len(seen) and seen[j][1] < k:
            j += 1
        if j == len(seen):
            break
        out.append(seen[j][0] - clicked)
    return out


def rss_mb(proc: psutil.Process) -> float:
    return proc.memory_info().rss / 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60, help="students (default 60)")
    parser.add_argument("--period", type=float, default=2.0, help="seconds between a student's draws (default 2)")
    parser.add_argument("--minutes", type=float, default=5.0, help="minutes of drawing (default 5)")
    parser.add_argument("--settle", type=float, default=60.0,
                        help="seconds after the room closed and the students left before the memory is read again "
                             "(default 60: the server frees a closed page's session within about 30 s)")
    args = parser.parse_args(argv)
    print(f"load average at start: {load()}; {args.students} students, a draw every {args.period:g} s each for "
          f"{args.minutes:g} min")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-warm-up", "--no-show",
           "--room-capacity", str(max(args.students, 1))]
    with tempfile.TemporaryFile() as log, sync_playwright() as pw:
        server = launch(cmd, port, log)
        proc = psutil.Process(server.pid)
        try:
            run(args, base, proc, pw)
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                print("the server did not stop within 60 s of SIGTERM: killed")
                server.kill()
            log.seek(0)
            lines = log.read().decode(errors="replace").splitlines()
            print(f"server log: {len(lines)} lines, {sum('Traceback' in x for x in lines)} tracebacks")
    print(f"load average at the end: {load()}")


def run(args, base: str, proc: psutil.Process, pw) -> None:
    step = LightSession(base + "/")
    step.click(step.find("explorer-steps-class-room"))
    link = step.find("explorer-steps-class-room-link")
    _wait(lambda: "lecture?room=" in html.unescape(str(link.text)), 120, "the room's link")
    text = str(link.text)
    while "&amp;" in text:  # the link's HTML, escaped once by Panel's model and once by the page
        text = html.unescape(text)
    code, key = re.search(r"lecture\?room=([\w-]+)&key=([\w-]+)", text).groups()
    lecture = f"/lecture?room={code}&key={key}"
    time.sleep(5.0)
    before = rss_mb(proc)
    projector = Projector(pw, base + lecture)
    print(f"server before the room's pages: RSS {before:.0f} MB")
    here, there = mp.Pipe()
    students = mp.get_context("spawn").Process(
        target=students_process, args=(f"{base}/class?room={code}", args.students, args.period, args.minutes, there))
    t0 = time.time()
    students.start()
    _, joined, failed = here.recv()
    print(f"{joined} students joined in {time.time() - t0:.0f} s ({failed} failed connections); RSS "
          f"{rss_mb(proc):.0f} MB")
    cpu0, wall0, peak = proc.cpu_times(), time.time(), 0.0
    samples = []
    while not here.poll(1.0):
        peak = max(peak, rss_mb(proc))
        samples.append(proc.cpu_percent(None))
    _, clicks, failed = here.recv()
    cpu1, wall1 = proc.cpu_times(), time.time()
    deadline = time.monotonic() + 60  # the last draws reach the projector (those that never do are lost)
    while projector.pooled() < len(clicks) and time.monotonic() < deadline:
        time.sleep(0.5)
    shown = projector.pooled()
    lat = latencies(clicks, projector.seen) or [float("nan")]
    cpu = 100 * ((cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)) / (wall1 - wall0)
    q = statistics.quantiles(lat, n=20) if len(lat) >= 20 else [float("nan")] * 19
    print(f"draws asked {len(clicks)}, shown on the projector {shown}, lost {len(clicks) - shown}; failed "
          f"connections {failed}")
    print(f"draw to the projector's figure: p50 {statistics.median(lat):.3f} s, p95 {q[18]:.3f} s, max "
          f"{max(lat):.3f} s (target p95 <= 1 s)")
    print(f"server during the run: CPU {cpu:.0f} % of one core (mean), RSS peak {peak:.0f} MB")
    projector.close_room()
    time.sleep(2.0)
    here.send("closed")
    _, closed = here.recv()
    students.join(timeout=120)
    projector.close()
    step.close()
    print(f"room closed: {closed} of {joined} phones say so; RSS {rss_mb(proc):.0f} MB at once")
    time.sleep(args.settle)
    after = rss_mb(proc)
    print(f"server {args.settle:.0f} s after the room closed and every page left: RSS {after:.0f} MB "
          f"({100 * (after - before) / before:+.1f} % of before; target within 10 %)")


if __name__ == "__main__":
    main()
