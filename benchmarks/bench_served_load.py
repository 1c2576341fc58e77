"""A served app under a class's load: K browser sessions computing learning curves, and a theory update meanwhile.

    python benchmarks/bench_served_load.py                  # K = 5 sessions, boston, 300 MC samples per S/N
    python benchmarks/bench_served_load.py --sessions 3 --samples 100 --workers 2
    python benchmarks/bench_served_load.py --nice-class 15  # the class's browsers yield the server's cores

Starts ``explorer serve`` (a subprocess, with its local Dask cluster) and headless Chromium (Debian's
``/usr/bin/chromium`` driven by Playwright's Python package), then measures, in one run:

- *alone*: one session computing the Monte-Carlo learning curve (``?dataset=boston&tab=curve
  &curve_mc_samples=300&seed=1``), from opening the page to its job saying "done";
- *K together*: K sessions opened together, each with its own seed (nothing cached), the same measure;
  the slowdown is their mean over *alone* (target <= 3 on 2 cores; 4.9 before the Dask engine);
- *how busy the machine was* while the session ran alone (``/proc/stat``: the server, its workers and the
  browser alike), and from it the least mean any order of the K sessions could give if each needed that much
  CPU time: one after another, each on every core, opened when they were (and if opened at once). The issue's
  "ideal 2.5" (K sessions over 2 cores) assumes a session alone keeps one core busy; when it keeps both busy,
  sessions opened at once cannot beat (K + 1) / 2;
- *alone on one worker* (``--baseline-workers 1``, a second server afterwards): one session alone on a server
  with one Dask worker, as the issue's baseline had one core per session, and the K sessions' mean over it;
- *theory update*: in another session (``auto_mc=false``: it computes no Monte-Carlo of its own) the time from
  pressing Enter on a new S/N to the learning-curve figure showing its new ``data-revision``, idle and while the
  K sessions compute, in two phases: at once after the server has built the K pages (which starts their jobs),
  while their browsers still load them, and once every page is shown (the server's trace counts how many of
  their jobs were still computing at each update), and in a further session opened meanwhile (a student who
  arrives during the load: also the time to its first curve). "browser" is that time
  in the page (target <= 1 s; 4.0 s before); "server" is the server's own time, from receiving the new value on
  that session's websocket to sending the message that carries the new revision (``served_trace.py`` wraps
  Bokeh's websocket handler; target <= 300 ms); "round trip" adds the page's time to send the value and to receive
  the reply, which under load is a share of the same two cores (all browsers of the benchmark run beside the
  server).

A warm-up session first computes a small curve (worker imports, the boston theory cache); the session alone and
the class start once the server computes nothing (the first page also started the other tabs' jobs). The machine's load
average is printed at the start and the end: on a shared machine the figures are only as good as the idle cores.
The K browsers share the server's cores unless ``--nice-class N`` lowers their priority (in a class they run on
the students' machines).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import served_trace
from playwright.sync_api import sync_playwright
from serving import free_port, launch, load

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]

#: In every page: the epoch time (ms) at which the learning-curve job first says "done" (window.__doneAt), and
#: for the theory updates the time of Enter (__enterAt) and of the websocket messages carrying a revision.
PAGE_SCRIPT = """
window.__revisionMessages = [];
window.__doneAt = null;
window.__runningAt = null;
window.__shownAt = null;
const Socket = window.WebSocket;
window.WebSocket = class extends Socket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (ev) => {
      if (typeof ev.data === 'string' && ev.data.includes('data-revision')) window.__revisionMessages.push(performance.now());
    });
  }
};
document.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') window.__enterAt = performance.now(); }, true);
window.__deepFind = (root, selector) => {
  const hit = root.querySelector(selector);
  if (hit) return hit;
  for (const node of root.querySelectorAll('*')) {
    if (node.shadowRoot) { const found = window.__deepFind(node.shadowRoot, selector); if (found) return found; }
  }
  return null;
};
window.__curveRevision = () => {
  const host = window.__deepFind(document, '.explorer-revision-curve');
  const small = host && (host.shadowRoot ? window.__deepFind(host.shadowRoot, '[data-revision]')
                                         : host.querySelector('[data-revision]'));
  return small ? parseInt(small.getAttribute('data-revision')) : -1;
};
setInterval(() => {
  if (window.__doneAt !== null) return;
  const host = window.__deepFind(document, '.explorer-job-message-curve');
  const text = host ? (host.shadowRoot ? host.shadowRoot.textContent : host.textContent) : '';
  if (host && window.__shownAt === null) window.__shownAt = Date.now();
  if (window.__runningAt === null && /\\d+\\/\\d+/.test(text)) window.__runningAt = Date.now();
  if (/\\bdone\\b/.test(text)) window.__doneAt = Date.now();
}, 100);
"""


def busy_jiffies() -> tuple[int, int]:
    """The CPU time of the whole machine so far, busy and in all, in jiffies (``/proc/stat``: every process counts,
    the benchmark's browsers and the server's workers alike)."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in f.readline().split()[1:9])
    total = user + nice + system + idle + iowait + irq + softirq + steal
    return total - idle - iowait, total


def best_order_mean(opened: list[float], work: float) -> float:
    """The least mean time from opening to done that any order can give sessions opened at ``opened`` (seconds)
    which each need ``work`` seconds of the whole machine: one after another in the order they were opened, each
    on every core (for equal sessions no order and no sharing does better)."""
    done, times = float("-inf"), []
    for at in sorted(opened):
        done = max(done, at) + work
        times.append(done - at)
    return statistics.mean(times)


def alone_on_workers(workers: int, samples: int, dataset: str, pw, chromium: str) -> float:
    """Seconds to a finished learning curve for one session alone on a new server with ``workers`` Dask workers
    (after a warm-up session, once the server computes nothing)."""
    port = free_port()
    with tempfile.TemporaryFile() as log, tempfile.NamedTemporaryFile("r") as trace:
        server = start_server(port, workers, log, trace.name)
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            url = f"http://127.0.0.1:{port}/?dataset={dataset}&tab=curve&curve_mc_samples={{}}&seed={{}}"
            wait_done([open_session(browser, url.format(20, 0))])
            wait_quiet(trace.name)
            [alone] = wait_done([open_session(browser, url.format(samples, 1))])
            return alone
        finally:
            browser.close()
            server.terminate()
            server.wait(timeout=120)


def start_server(port: int, workers: int | None, log, trace: str) -> subprocess.Popen:
    # no warm-up: the measures assume a server that computes only for its sessions
    serve = ["--port", str(port), "--no-show", "--no-warm-up"] + (["--workers", str(workers)] if workers else [])
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {here!r}); import served_trace; "
                                 f"served_trace.serve({trace!r}, {serve!r})"]
    return launch(cmd, port, log, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})


def niced(chromium: str, niceness: int) -> str:
    """A script that starts ``chromium`` at ``nice niceness`` (kept until the benchmark's temporary files go)."""
    script = tempfile.NamedTemporaryFile("w", suffix="-chromium", delete=False)
    script.write(f'#!/bin/sh\nexec nice -n {niceness} "{chromium}" "$@"\n')
    script.close()
    os.chmod(script.name, 0o755)
    return script.name


def open_session(browser, url: str):
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.add_init_script(PAGE_SCRIPT)
    page.set_default_timeout(600_000)
    started = time.time()
    page.goto(url, wait_until="commit")
    return page, started


def wait_done(pages_started, timeout: float = 900.0) -> list[float]:
    """Seconds from opening each page to its learning-curve job saying "done"."""
    deadline, done = time.time() + timeout, {}
    while len(done) < len(pages_started) and time.time() < deadline:
        for i, (page, started) in enumerate(pages_started):
            if i not in done:
                at = page.evaluate("() => window.__doneAt")
                if at is not None:
                    done[i] = at / 1e3 - started
        time.sleep(0.2)
    if len(done) < len(pages_started):
        raise SystemExit(f"only {len(done)} of {len(pages_started)} sessions finished within {timeout} s")
    return [done[i] for i in range(len(pages_started))]


def wait_quiet(trace: str, timeout: float = 300.0) -> None:
    """Until the server computes nothing (its trace shows an end for every job it started)."""
    deadline = time.time() + timeout
    while not served_trace.all_jobs_ended(trace):
        if time.time() > deadline:
            raise SystemExit(f"the server was still computing after {timeout} s")
        time.sleep(0.2)


def wait_shown(pages_started, timeout: float = 300.0) -> None:
    """Until every page shows its learning-curve job (the page is built in the browser)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if all(page.evaluate("() => window.__shownAt !== null") for page, _ in pages_started):
            return
        time.sleep(0.2)
    raise SystemExit(f"the {len(pages_started)} pages were not all shown within {timeout} s")


def settled_revision(page, quiet: float = 0.5) -> int:
    """The learning curve's revision once it has not changed for ``quiet`` seconds (a redraw still on its way
    would otherwise be taken for the answer to the next S/N)."""
    revision = page.evaluate("() => window.__curveRevision()")
    while True:
        page.wait_for_timeout(1e3 * quiet)
        now = page.evaluate("() => window.__curveRevision()")
        if now == revision:
            return revision
        revision = now


def theory_update(page, value: float) -> tuple[float, float]:
    """Type ``value`` as S/N, press Enter: (browser, round trip) seconds to the redrawn learning curve."""
    before = settled_revision(page)
    box = page.locator(".explorer-s-over-n input").first
    box.click()
    box.press("Control+a")
    box.type(f"{value:g}")
    box.press("Enter")
    page.wait_for_function(f"() => window.__curveRevision() > {before}", polling=10, timeout=120_000)
    shown, enter, messages = page.evaluate(
        "() => [performance.now(), window.__enterAt, window.__revisionMessages]")
    reply = min((t for t in messages if t > enter), default=shown)
    return (shown - enter) / 1e3, (reply - enter) / 1e3


def describe(label: str, times: list[tuple[float, float]], handled: list[float]) -> str:
    browser, reply = [t[0] for t in times], [t[1] for t in times]
    return (f"theory update {label}, over {len(times)} S/N changes: browser median {statistics.median(browser):.2f} s "
            f"(max {max(browser):.2f}); server median {1e3 * statistics.median(handled):.0f} ms "
            f"(max {1e3 * max(handled):.0f}); round trip to the reply median {1e3 * statistics.median(reply):.0f} ms "
            f"(max {1e3 * max(reply):.0f})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5, help="K sessions computing together (default 5)")
    parser.add_argument("--samples", type=int, default=300, help="MC samples per S/N (default 300)")
    parser.add_argument("--updates", type=int, default=5,
                        help="S/N changes timed in each phase of the class's load (default 5, at most 5)")
    parser.add_argument("--workers", type=int, default=None, help="local Dask workers (default one per core)")
    parser.add_argument("--dataset", default="boston")
    parser.add_argument("--baseline-workers", type=int, default=1, metavar="N",
                        help="afterwards, one session alone on a new server with N workers (default 1: one core for "
                             "the session, as before the Dask engine; 0: skip)")
    parser.add_argument("--nice-class", type=int, default=0, metavar="N",
                        help="run the K sessions' browser at nice N (default 0: the server's priority). A class's "
                             "browsers run on the students' machines; with N > 0 they only take the cycles the "
                             "server and the Dask workers leave (the measuring session's browser keeps nice 0)")
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs Debian's chromium (apt-get install chromium)")
    print(f"load average at start: {load()} ({os.cpu_count()} cores); the {args.sessions} sessions' browser at "
          f"nice {args.nice_class}")
    base = "?dataset={}&tab=curve&curve_mc_samples={}&seed={}"
    port = free_port()
    trace_path = os.environ.get("EXPLORER_BENCH_TRACE")  # keep the server's trace there (else a temporary file)
    with tempfile.TemporaryFile() as log, tempfile.NamedTemporaryFile("r") as trace, sync_playwright() as pw:
        trace = trace if not trace_path else open(trace_path, "w+")
        server = start_server(port, args.workers, log, trace.name)
        url = f"http://127.0.0.1:{port}/"
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        class_browser = browser if not args.nice_class else pw.chromium.launch(
            executable_path=niced(chromium, args.nice_class), headless=True, args=CHROMIUM_ARGS)
        try:
            wait_done([open_session(browser, url + base.format(args.dataset, 20, 0))])
            watcher, _ = open_session(browser, url + f"?dataset={args.dataset}&tab=curve&auto_mc=false")
            watcher.wait_for_function("() => window.__curveRevision() > 0", polling=100)
            wait_quiet(trace.name)  # the other tabs' first jobs (started by the first page) are done
            idle_values = (1.1, 1.2, 1.3)
            idle = [theory_update(watcher, v) for v in idle_values]
            busy_before = busy_jiffies()
            [alone] = wait_done([open_session(browser, url + base.format(args.dataset, args.samples, 1))])
            busy, total = (after - before for after, before in zip(busy_jiffies(), busy_before))
            wait_quiet(trace.name)
            cores = os.cpu_count()
            print(f"one session alone: {alone:.1f} s ({args.samples} MC samples per S/N, {args.dataset}); the "
                  f"machine's {cores} cores were {100 * busy / total:.0f} % busy meanwhile (server, workers, browser)")
            print(describe("idle", idle, served_trace.server_times(trace.name, list(idle_values))))
            together = [open_session(class_browser, url + base.format(args.dataset, args.samples, 2 + k))
                        for k in range(args.sessions)]
            opened = min(started for _, started in together)
            # every page is built now (goto returns once the server answered): their jobs have started
            phases = {"while the class's pages load and compute": (1.4, 1.6, 1.7, 1.8, 1.9),
                      "in a session opened during the load": (1.45, 1.55, 1.65, 1.75, 1.85),
                      "once their pages are shown, while they compute": (2.1, 2.2, 2.3, 2.4, 2.6)}
            loaded = {}
            for label, values in phases.items():
                page = watcher
                if label.startswith("once"):
                    wait_shown(together)
                elif label.startswith("in a session"):  # a student who opens the page now
                    t0 = time.perf_counter()
                    page, _ = open_session(browser, url + f"?dataset={args.dataset}&tab=curve&auto_mc=false")
                    page.wait_for_function("() => window.__curveRevision() > 0", polling=100, timeout=300_000)
                    late_shown = time.perf_counter() - t0
                loaded[label] = [theory_update(page, v) for v in values[:args.updates]]
            times = wait_done(together)
            for k, (page, started) in enumerate(together):
                marks = page.evaluate("() => [window.__shownAt, window.__runningAt]")
                print(f"  session {k + 1}: opened, page shown, progress shown, done at " + ", ".join(
                    "-" if at is None else f"{at - opened:.1f}" for at in
                    [started, *(None if m is None else m / 1e3 for m in marks), started + times[k]]) +
                    " s after the first was opened")
            print(f"{args.sessions} sessions together: {', '.join(f'{t:.1f}' for t in times)} s; mean "
                  f"{statistics.mean(times):.1f} s -> slowdown {statistics.mean(times) / alone:.2f}x vs alone "
                  f"(target <= 3; ideal {args.sessions / (args.workers or os.cpu_count()):.1f} on "
                  f"{args.workers or os.cpu_count()} workers)")
            floor = best_order_mean([started for _, started in together], alone * busy / total)
            print(f"  least mean any order could give, if each session needs the CPU time of the one alone and they "
                  f"open when they did: {floor:.1f} s -> slowdown {floor / alone:.2f}x (opened at once: "
                  f"{best_order_mean([0.0] * args.sessions, alone * busy / total) / alone:.2f}x)")
            for label, values in phases.items():
                values = list(values[:args.updates])
                running = [served_trace.jobs_running(trace.name, "curve", opened, at)
                           for at in served_trace.value_times(trace.name, values)]
                print(describe(label, loaded[label], served_trace.server_times(trace.name, values)))
                if label.startswith("in a session"):
                    print(f"  that session's page showed its learning curve {late_shown:.1f} s after it was opened")
                print(f"  the class's learning-curve jobs computing when each new S/N reached the server: "
                      f"{', '.join(map(str, running))} of {args.sessions}")
        finally:
            browser.close()
            class_browser.close()
            server.terminate()
            server.wait(timeout=120)
        if args.baseline_workers:
            single = alone_on_workers(args.baseline_workers, args.samples, args.dataset, pw, chromium)
            print(f"one session alone on a server with {args.baseline_workers} worker(s): {single:.1f} s; the "
                  f"{args.sessions} sessions' mean above is {statistics.mean(times) / single:.2f}x that")
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
