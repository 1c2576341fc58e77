""""Bootstrap, step by step" for a room: the server's time and bytes per step, and a class playing at once.

    python benchmarks/bench_step_by_step.py                          # classes of 10 and 30, 20 s of Play
    python benchmarks/bench_step_by_step.py --sessions 10 --seconds 30 --browser-class 10 --nice-class 15

Measures, in one run:

- *server time per step* (in this process, no browser): for N = 30 and N = 200, the time of one resample's
  computation (on the draw's own thread, :meth:`StepState.request_draws`) and the time the session's event loop
  spends showing it (appending it and patching the three figures, :meth:`StepTab._on_draw`), for Draw 1 and
  Draw 1000, with the figures drawn into a Bokeh document as on a page; and the bytes one step sends to the page
  after 300 resamples, against the bytes of its figures' data;
- *Draw 1000 in the browser* (``explorer serve``, headless Chromium at 1280x720): from the click to the page saying
  "1,111 resamples" (after Draw 1, 10, 100), on the idle server and again while the class plays (target ~1 s at
  N = 30, idle);
- *a class playing*: for each size K of ``--sessions`` (default 10 and 30), K sessions press Play at once; after
  ``--seconds`` the resamples each has drawn per second (target >= 4 each; Play asks for 5 a second) and the
  server's CPU. The students are :class:`serving.LightSession` clients: each receives and applies everything the
  server sends, as a page does, but draws nothing (in a class the students' own machines draw);
- with ``--browser-class K``: the same with K headless Chromiums on this machine. They draw every step and share
  its 2 cores with the server (``--nice-class N`` lowers their priority): a measure of this machine more than of the
  server.

The load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from serving import LightSession, free_port, launch, load

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]
#: The number of resamples the page says it has drawn (its sentence is a Panel pane, inside shadow roots).
COUNT_JS = """() => {
  const find = (root) => {
    const hit = root.querySelector('.explorer-steps-sentence');
    if (hit) return hit;
    for (const node of root.querySelectorAll('*')) {
      if (node.shadowRoot) { const inner = find(node.shadowRoot); if (inner) return inner; }
    }
    return null;
  };
  const host = find(document);
  const text = host ? (host.shadowRoot || host).textContent : '';
  const m = text.match(/([\\d,]+) resamples?;/);
  return m ? parseInt(m[1].replace(/,/g, '')) : 0;
}"""


def server_time_per_step(n_points: int, repeats: int = 30) -> dict[str, float]:
    """Seconds of the draw's thread and of the event loop per step (median of ``repeats``), as on a page."""
    import panel as pn
    from bokeh.document import Document

    from explorer.views.step_by_step.tab import StepTab

    tab = StepTab()
    tab.state.n_points = n_points
    pn.panel(tab).get_root(Document())  # the figures drawn, as in a browser's session
    state = tab.state
    state.refresh()
    out = {}
    for label, n in (("draw 1", 1), ("draw 1000", 1000)):
        compute, loop = [], []
        for _ in range(repeats if n == 1 else 3):
            t0 = time.perf_counter()
            drawn = state._compute(state._draw_inputs(n))  # what the draw's thread does
            t1 = time.perf_counter()
            state._drawn(drawn, "")                        # what the session's event loop does
            t2 = time.perf_counter()
            compute.append(t1 - t0)
            loop.append(t2 - t1)
        out[f"{label}: thread"], out[f"{label}: event loop"] = statistics.median(compute), statistics.median(loop)
    state.close()
    return out


def bytes_per_step(n_points: int = 30, drawn: int = 300) -> tuple[int, int]:
    """The bytes one more resample sends to a page after ``drawn`` (the PATCH-DOC message of its changes) and the
    bytes of the data its three figures hold."""
    import panel as pn
    from bokeh.document import Document
    from bokeh.protocol import Protocol

    from explorer.views.step_by_step.tab import StepTab

    tab = StepTab()
    tab.state.n_points = n_points
    doc = Document()
    doc.add_root(pn.panel(tab).get_root(doc))
    tab.state.refresh()
    tab.state.wait()
    tab.state.draw(drawn)
    events: list = []
    doc.callbacks.on_change(events.append)
    tab.state.draw(1)
    message = Protocol().create("PATCH-DOC", events)
    sent = len(message.header_json) + len(message.content_json) + sum(memoryview(b.data).nbytes
                                                                       for b in message.buffers)
    held = sum(len(column) * 8 for pane in tab.plots.values() for plot, _ in pane._plots.values()
               for sub in plot.subplots.values() for column in sub.handles["source"].data.values())
    tab.state.close()
    return sent, held


def start_server(port: int, log) -> subprocess.Popen:
    return launch([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-show", "--no-warm-up"],
                  port, log)


def cpu_seconds(pid: int) -> float:
    """CPU seconds the process ``pid`` has used (user and system)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settled_counts(pages, timeout: float = 120.0) -> list[int]:
    """The count each page shows once it stays the same for 2 s (a busy browser shows the server's draws late)."""
    return settled([lambda page=page: page.evaluate(COUNT_JS) for page in pages], timeout)


def open_page(browser, url: str):
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.set_default_timeout(300_000)
    page.goto(url)
    page.locator(".explorer-steps-sentence", has_text="No resample drawn yet").first.wait_for()
    page.locator(".explorer-steps-plot-data canvas").first.wait_for()
    return page


def click(page, name: str) -> None:
    page.locator(f".explorer-steps-{name} button").first.click()


def wait_count(page, n: int, timeout: float = 120.0) -> float:
    """Seconds until the page says it has drawn ``n`` resamples."""
    t0 = time.perf_counter()
    page.wait_for_function(f"() => ({COUNT_JS})() >= {n}", timeout=timeout * 1000, polling=20)
    return time.perf_counter() - t0


def draw_1000(page) -> float:
    """Draw 1, 10, 100, then the seconds from clicking "1000" to the page showing 1,111 resamples."""
    for name, total in (("draw-1", 1), ("draw-10", 11), ("draw-100", 111)):
        click(page, name)
        wait_count(page, total)
    t0 = time.perf_counter()
    click(page, "draw-1000")
    wait_count(page, 1111)
    return time.perf_counter() - t0


def light_class(url: str, k: int, seconds: float, server_pid: int, teacher) -> None:
    """K light sessions play for ``seconds``; the teacher's browser draws 1,111 meanwhile. Prints the rates."""
    students = [LightSession(url) for _ in range(k)]
    try:
        toggles = [student.find("explorer-steps-play") for student in students]
        sentences = [student.find("explorer-steps-sentence") for student in students]
        cpu0, t0 = cpu_seconds(server_pid), time.perf_counter()
        for student, toggle in zip(students, toggles):
            student.set(toggle, "active", True)
        time.sleep(seconds / 2)
        teacher.locator(".explorer-steps-reset button").first.click()
        teacher.locator(".explorer-steps-sentence", has_text="No resample drawn yet").first.wait_for()
        busy = draw_1000(teacher)
        time.sleep(max(seconds / 2 - busy, 0.0))
        for student, toggle in zip(students, toggles):
            student.set(toggle, "active", False)
        t1 = time.perf_counter()
        cpu = cpu_seconds(server_pid) - cpu0
        counts = settled([lambda s=s: resamples(s.text or "") for s in sentences])
        rates = [n / (t1 - t0) for n in counts]
        print(f"\n# a class of {k} playing for {t1 - t0:.0f} s (light sessions; Play asks for 5 a second), load "
              f"average {load()}")
        print("resamples per second per session: " + " ".join(f"{r:.1f}" for r in rates))
        print(f"least {min(rates):.2f}, mean {statistics.mean(rates):.2f}; least / target 4 = {min(rates) / 4:.2f}")
        print(f"server CPU: {cpu / (t1 - t0):.2f} of a core; {1000 * cpu / (sum(counts) + 1111):.1f} ms per "
              f"resample drawn and sent")
        print(f"the teacher's Draw 1000 in the browser meanwhile: {busy:.2f} s", flush=True)
    finally:
        for student in students:
            student.close()


def resamples(text: str) -> int:
    """The number of resamples a page's sentence says it has drawn (0 before the first)."""
    found = re.search(r"([\d,]+) resamples?;", text)
    return int(found.group(1).replace(",", "")) if found else 0


def settled(counts, timeout: float = 120.0) -> list[int]:
    """The values of the callables ``counts`` once they stay the same for 2 s (the last draws still arrive)."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        now = [count() for count in counts]
        if now == last:
            return now
        last = now
        time.sleep(2.0)
    return last


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 30],
                        help="sizes of the classes of light sessions playing at once (default 10 30)")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of Play measured (default 20)")
    parser.add_argument("--browser-class", type=int, default=0,
                        help="also a class of this many headless Chromiums on this machine (default 0: none)")
    parser.add_argument("--nice-class", type=int, default=0, help="niceness of the class's browsers (default 0)")
    args = parser.parse_args(argv)
    print(f"load average at the start: {load()}")

    print("\n# server time per step (median; in-process, figures drawn into a Bokeh document)")
    for n in (30, 200):
        times = server_time_per_step(n)
        print(f"N = {n}: " + ", ".join(f"{k} {1000 * v:.1f} ms" for k, v in times.items()))
    sent, held = bytes_per_step()
    print(f"sent to the page per step after 300 resamples (N = 30): {sent / 1000:.1f} kB, of {held / 1000:.1f} kB "
          f"in its figures ({sent / held:.2f})")

    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with open(os.devnull, "wb") as log, sync_playwright() as pw:
        server = start_server(port, log)
        try:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            teacher = open_page(browser, url)
            idle = draw_1000(teacher)
            print(f"\n# Draw 1000 at N = 30 in the browser, idle server: {idle:.2f} s (target ~1 s)", flush=True)
            for k in args.sessions:
                light_class(url, k, args.seconds, server.pid, teacher)
            if args.browser_class:
                browser_class(pw, browser, chromium, url, args, server.pid, teacher, idle)
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(f"\nload average at the end: {load()}")


def browser_class(pw, browser, chromium: str, url: str, args, server_pid: int, teacher, idle: float) -> None:
    """``args.browser_class`` headless Chromiums play for ``args.seconds``; the teacher draws 1,111 meanwhile."""
    if args.nice_class:
        script = f"/tmp/nice-chromium-{os.getpid()}"
        with open(script, "w") as f:
            f.write(f'#!/bin/sh\nexec nice -n {args.nice_class} "{chromium}" "$@"\n')
        os.chmod(script, 0o755)
        class_browser = pw.chromium.launch(executable_path=script, args=CHROMIUM_ARGS)
    else:
        class_browser = browser
    pages = [open_page(class_browser, url) for _ in range(args.browser_class)]
    cpu0, started = cpu_seconds(server_pid), []
    for page in pages:
        click(page, "play")
        started.append(time.perf_counter())
    time.sleep(args.seconds / 2)
    teacher.locator(".explorer-steps-reset button").first.click()
    teacher.locator(".explorer-steps-sentence", has_text="No resample drawn yet").first.wait_for()
    busy = draw_1000(teacher)  # the teacher draws 1,111 while the class plays
    time.sleep(args.seconds / 2)
    stopped = []
    for page in pages:
        click(page, "play")  # Pause
        stopped.append(time.perf_counter())
    cpu = cpu_seconds(server_pid) - cpu0
    counts = settled_counts(pages)  # what the server drew, once each browser has shown it
    rates = [n / (t1 - t0) for n, t0, t1 in zip(counts, started, stopped)]
    drawn = sum(counts) + 1111
    print(f"\n# {args.browser_class} browsers on this machine playing for {args.seconds:.0f} s (Play asks for 5 a "
          f"second), load average {load()}")
    print("resamples per second per session (drawn by the server, from Play to Pause): "
          + " ".join(f"{r:.1f}" for r in rates))
    print(f"least {min(rates):.1f}, mean {statistics.mean(rates):.1f}; least / target 4 = {min(rates) / 4:.2f}")
    print(f"server CPU time per resample drawn and shown, all sessions: {1000 * cpu / drawn:.1f} ms "
          f"({cpu:.1f} s for {drawn:,})")
    print(f"Draw 1000 while they play: {busy:.2f} s ({busy / idle:.1f} x idle)", flush=True)


if __name__ == "__main__":
    main()
