"""A served app soaked by a class: does its memory come back, and do page closes log tracebacks?

    python benchmarks/bench_soak.py                 # 15 minutes, 3 sessions
    python benchmarks/bench_soak.py --minutes 3     # a quick run (1 minute of warm-up)
    python benchmarks/bench_soak.py --sessions 5 --cache-mb 128

Starts ``explorer serve`` (a subprocess with its local Dask cluster, as ``bench_served_load.py`` does) and headless
Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright's Python package). ``--sessions`` pages then take
turns doing one random action each: switch tabs, type an S/N or move its slider with the keyboard, run and cancel a
Monte-Carlo, apply a "Reproduce a figure" preset; every page is closed and opened again (a new link, a new seed, so
new results for the caches) every 40-80 s. Every 10 s the resident memory (RSS) of the server process, of its Dask
scheduler if it runs in a process of its own, and of its other children (the Dask worker processes) is sampled. It
prints:

- the *warm* level: the RSS once the server has warmed up and built and computed its first pages: the pages are
  opened once the server's log says its own warm-up (``explorer serve --warm-up``, the default) finished and the
  server and its workers are idle,
  then every first page shows its figure and every job the server started has ended (the median of three
  samples, 10 s apart, taken then, before any action); and, for comparison, the level at the end of the warm-up
  (``--warmup`` minutes, default a fifth of the run, at least 1) that earlier runs called warm;
- the *growth per hour* after the warm-up (a least-squares line through the samples), and the growth over the run;
- the RSS ``--after`` seconds (default 120) after the last page closed, against the warm level (target: within
  10 %; also the server process and its scheduler together when the scheduler runs apart), and the result
  caches' budget for comparison (target: no growth beyond it);
- the tracebacks in the server's log (target: none), with their last lines.

The server listens on the first free port of 5300-5399; ``--serve-arg`` passes more options to ``explorer serve``
(e.g. ``--serve-arg=--no-warm-up``). The actions' own timings are not measured: on a shared machine only the
memory figures mean something.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import psutil
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_served_load import CHROMIUM_ARGS  # noqa: E402
from served_trace import all_jobs_ended  # noqa: E402
from serving import launch, load  # noqa: E402

from explorer.runtime.caches import BUDGET_ENV, budget_from_env  # noqa: E402
from explorer.views.pages import MENU_NAMES  # noqa: E402

GP_TABS = {"Learning curve": "curve", "Predictive distribution": "distribution", "L1 map": "l1",
           "Test inputs": "holdout"}
OTHER_TABS = ("SVM bootstrap", "Model selection", "Fast bootstrap")
#: The links a page opens (a new seed each time: the caches keep filling, as with a class trying settings).
LINKS = ("?dataset=toy&tab=curve&curve_mc_samples=100&seed={seed}",
         "?dataset=boston&tab=distribution&mc_samples=2000&seed={seed}",
         "?dataset=toy&tab=l1&mc_samples=1000&seed={seed}",
         "?dataset=boston&tab=curve&curve_mc_samples=50&seed={seed}",
         "?dataset=toy&tab=holdout&seed={seed}")
#: Seconds between two samples of the memory, and the range of a page's life before it is closed and reopened.
SAMPLE_EVERY = 10.0
PAGE_LIFE = (40.0, 80.0)
ACTION_TIMEOUT_MS = 8_000


class Session:
    """One browser page of the class: opened on a random link, closed and opened again when its life is over."""

    def __init__(self, browser, url: str, rng: random.Random):
        self.browser, self.url, self.rng = browser, url, rng
        self.page, self.closes_at = None, 0.0

    def open(self) -> None:
        context = self.browser.new_context(viewport={"width": 1400, "height": 900})
        self.page = context.new_page()
        self.page.set_default_timeout(ACTION_TIMEOUT_MS)
        self.link = self.rng.choice(LINKS).format(seed=self.rng.randrange(10**6))
        self.page.goto(self.url + self.link, wait_until="commit", timeout=300_000)
        self.closes_at = time.monotonic() + self.rng.uniform(*PAGE_LIFE)

    def close(self) -> None:
        if self.page is not None:
            self.page.context.close()
            self.page = None


def switch_tab(page, rng: random.Random) -> None:
    title = rng.choice([*GP_TABS, *OTHER_TABS])
    page.locator(".bk-tab", has_text=title).first.click()


def _gp_tab(page, rng: random.Random) -> str:
    """Open a GP tab (its controls are in the sidebar) and return its key."""
    title = rng.choice(list(GP_TABS))
    page.locator(".bk-tab", has_text=title).first.click()
    return GP_TABS[title]


def type_s_over_n(page, rng: random.Random) -> None:
    _gp_tab(page, rng)
    box = page.locator(".explorer-s-over-n input").first
    box.click()
    box.press("Control+a")
    box.type(f"{rng.choice((0.5, 0.8, 1.0, 1.5, 2.0, 3.0)):g}")
    box.press("Enter")


def move_slider(page, rng: random.Random) -> None:
    _gp_tab(page, rng)
    handle = page.locator(".explorer-s-over-n .noUi-handle").first
    handle.focus()
    for _ in range(rng.randint(1, 4)):
        handle.press(rng.choice(("ArrowLeft", "ArrowRight")))


def run_and_cancel(page, rng: random.Random) -> None:
    tab = _gp_tab(page, rng)
    run = page.locator(f".explorer-run-{tab} button").first
    if run.is_enabled():
        run.click()
    page.wait_for_timeout(rng.uniform(500, 3000))
    cancel = page.locator(f".explorer-cancel-{tab} button").first
    if rng.random() < 0.6 and cancel.is_enabled():
        cancel.click()


def apply_preset(page, rng: random.Random) -> None:
    page.locator(".explorer-presets button").first.click()
    page.get_by_text(rng.choice(sorted(MENU_NAMES.values())), exact=True).first.click()  # the menu's own labels


ACTIONS = {"switch tab": switch_tab, "type S/N": type_s_over_n, "move slider": move_slider,
           "run/cancel": run_and_cancel, "preset": apply_preset}


def rss_mb(server: psutil.Process) -> tuple[float, float, float]:
    """Resident memory of the server process, of its Dask scheduler's process (0 if the scheduler runs inside the
    server) and of all its other children together (the workers), MB."""
    scheduler = workers = 0
    for child in server.children(recursive=True):
        try:
            rss, command = child.memory_info().rss, " ".join(child.cmdline())
        except psutil.NoSuchProcess:  # a worker restarting
            continue
        if "distributed.Scheduler" in command or "dask scheduler" in command:
            scheduler += rss
        else:
            workers += rss
    return server.memory_info().rss / 1e6, scheduler / 1e6, workers / 1e6


def free_port(first: int = 5300, last: int = 5399) -> int:
    """A free port of this benchmark's range."""
    for port in range(first, last + 1):
        with socket.socket() as s, contextlib.suppress(OSError):  # taken: the next one
            s.bind(("127.0.0.1", port))
            return port
    raise SystemExit(f"no free port in {first}-{last}")


def start_server(port: int, workers: int, log, trace: str, extra: list[str]) -> subprocess.Popen:
    """``explorer serve`` traced as ``bench_served_load.start_server`` starts it, with ``extra`` arguments."""
    serve = ["--port", str(port), "--no-show", "--workers", str(workers), *extra]
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {here!r}); import served_trace; "
                                 f"served_trace.serve({trace!r}, {serve!r})"]
    # EXPLORER_LOG_LEVEL=info: the server logs what the result caches hold as each session ends
    return launch(cmd, port, log, env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "EXPLORER_LOG_LEVEL": "info"})


def growth_per_hour(times: list[float], values: list[float]) -> float:
    """Slope of the least-squares line through (seconds, MB), in MB per hour."""
    if len(times) < 2:
        return float("nan")
    return float(np.polyfit(np.asarray(times), np.asarray(values), 1)[0] * 3600)


def tracebacks(log_text: str) -> collections.Counter:
    """The tracebacks in a log, counted by their last line (the exception)."""
    found = collections.Counter()
    for block in log_text.split("Traceback (most recent call last):")[1:]:
        lines = [line for line in block.splitlines() if line and not line.startswith((" ", "\t"))]
        found[lines[0][:160] if lines else "?"] += 1
    return found


def settled(server: psutil.Process, seconds: float = 10.0, cpu: float = 0.10, timeout: float = 900.0) -> float:
    """Wait until neither the server nor any of its children has used more than ``cpu`` of a core over ``seconds``
    (the server's own warm-up, ``explorer serve --warm-up``, has ended; an idle Dask worker uses 2-5 % and the
    server, whose thread runs the local cluster's scheduler and so answers the workers' heartbeats, 5-7 %: with
    5 % the wait never ended on some machines); return the
    seconds waited."""
    started = time.monotonic()

    def cpu_seconds() -> dict[int, float]:
        used = {}
        for process in [server, *server.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                times = process.cpu_times()
                used[process.pid] = times.user + times.system
        return used

    while time.monotonic() - started < timeout:
        before = cpu_seconds()
        time.sleep(seconds)
        after = cpu_seconds()
        if all(after[pid] - before.get(pid, 0.0) < cpu * seconds for pid in after):
            break
    return time.monotonic() - started


def built(sessions: list[Session], trace: str, timeout: float = 900.0) -> float:
    """Wait until every page shows the figure of its link's tab and every job the server started has ended (for
    5 s); return the seconds waited."""
    started = time.monotonic()
    for session in sessions:
        tab = re.search(r"tab=(\w+)", session.link).group(1)
        session.page.locator(f".explorer-plot-{tab} canvas").first.wait_for(timeout=1e3 * timeout)
    idle_since = None
    while time.monotonic() - started < timeout:
        if not all_jobs_ended(trace):
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= 5.0:
            break
        time.sleep(0.5)
    return time.monotonic() - started


def warmed_up(log, timeout: float = 900.0) -> float:
    """Wait until the server's log (the file ``log``, at ``EXPLORER_LOG_LEVEL=info``) says its warm-up finished;
    return the seconds waited. Read with ``pread``: the server writes through the same file offset."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if b"warm-up: finished" in os.pread(log.fileno(), os.fstat(log.fileno()).st_size, 0):
            break
        time.sleep(1.0)
    return time.monotonic() - started


def soak(args, browser, url: str, server: psutil.Process, trace: str, log) -> tuple[list, list, collections.Counter,
                                                                                collections.Counter]:
    """Drive the sessions for ``args.minutes``; return the warm samples (seconds, server MB, scheduler MB, workers
    MB: three, 10 s apart, once the first pages are built and idle), the memory samples of the run, the actions
    done by kind, and those that failed by kind (a control not on the page, or not in time)."""
    if "--no-warm-up" not in args.serve_arg:
        print(f"  the server's warm-up finished after {warmed_up(log):.0f} s", flush=True)
    quiet = settled(server)
    print(f"  server idle after {quiet:.0f} s", flush=True)
    rng = random.Random(args.seed)
    sessions = [Session(browser, url, random.Random(rng.random())) for _ in range(args.sessions)]
    for session in sessions:
        session.open()
    waited = built(sessions, trace)
    warm = []
    for _ in range(3):
        time.sleep(SAMPLE_EVERY)
        warm.append((0.0, *rss_mb(server)))
    print(f"  first pages built and idle after {waited:.0f} s; warm: server {np.median([w[1] for w in warm]):.0f} MB, "
          f"scheduler {np.median([w[2] for w in warm]):.0f} MB, workers {np.median([w[3] for w in warm]):.0f} MB "
          f"(load average {load()})", flush=True)
    started = time.monotonic()
    samples, done, failed, next_sample = [], collections.Counter(), collections.Counter(), started
    while time.monotonic() - started < 60 * args.minutes:
        if time.monotonic() >= next_sample:
            samples.append((time.monotonic() - started, *rss_mb(server)))
            next_sample += SAMPLE_EVERY
            if len(samples) % 6 == 1:
                at, main, scheduler, children = samples[-1]
                print(f"  {at / 60:4.1f} min: server {main:.0f} MB, scheduler {scheduler:.0f} MB, workers "
                      f"{children:.0f} MB, "
                      f"{sum(done.values())} actions, {done['reopen']} reopened", flush=True)
        for session in sessions:
            if time.monotonic() >= session.closes_at:
                session.close()
                session.open()
                done["reopen"] += 1
                continue
            name = rng.choice(list(ACTIONS))
            try:
                ACTIONS[name](session.page, rng)
                done[name] += 1
            except PlaywrightError:
                failed[name] += 1
            session.page.wait_for_timeout(rng.uniform(300, 1500))
    for session in sessions:
        session.close()
    return warm, samples, done, failed


def after_close(server: psutil.Process, seconds: float) -> list[tuple[float, float, float]]:
    """Memory samples for ``seconds`` after the last page closed."""
    started, samples = time.monotonic(), []
    while time.monotonic() - started < seconds:
        time.sleep(SAMPLE_EVERY)
        samples.append((time.monotonic() - started, *rss_mb(server)))
    return samples


def report(warm: list, samples: list, closed: list, warmup: float, budget_mb: float) -> None:
    minute = [s for s in samples if s[0] <= warmup][-3:]  # the last samples of the warm-up (earlier runs' "warm")
    later = [s for s in samples if s[0] >= warmup]
    columns = [(1, "server"), (2, "scheduler"), (3, "workers")] if any(s[2] for s in samples) else [(1, "server"),
                                                                                                    (3, "workers")]
    if len(columns) == 3:
        columns.insert(2, ("server+scheduler", "server + scheduler"))

    def value(sample, column):
        return sample[1] + sample[2] if column == "server+scheduler" else sample[column]

    for column, label in columns:
        level, old = (float(np.median([value(s, column) for s in w])) for w in (warm, minute))
        slope = growth_per_hour([s[0] for s in later], [value(s, column) for s in later])
        end, after = value(later[-1], column), value(closed[-1], column)
        print(f"{label}: warm {level:.0f} MB (built and idle; {old:.0f} MB at the end of the warm-up); growth after "
              f"warm-up {slope:+.0f} MB/h (linear fit over {len(later)} samples), {end - level:+.0f} MB by the end "
              f"of the soak; {after:.0f} MB {closed[-1][0]:.0f} s after the last page closed = "
              f"{100 * (after / level - 1):+.1f} % of warm ({100 * (after / old - 1):+.1f} % of the end of the "
              f"warm-up; target within 10 %)")
    total_warm = float(np.median([s[1] + s[2] + s[3] for s in warm]))
    peak = max(s[1] + s[2] + s[3] for s in later)
    print(f"every process: warm {total_warm:.0f} MB, peak {peak:.0f} MB after warm-up (+{peak - total_warm:.0f} "
          f"MB; the result caches' budget is {budget_mb:.0f} MB)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=15.0,
                        help="length of the soak (default 15; 3 for a quick run)")
    parser.add_argument("--sessions", type=int, default=3, help="browser pages acting at once (default 3)")
    parser.add_argument("--warmup", type=float, default=None,
                        help="minutes of warm-up before the growth is measured (default a fifth, at least 1)")
    parser.add_argument("--after", type=float, default=120.0,
                        help="seconds to wait after the last page closed before the last sample (default 120)")
    parser.add_argument("--workers", type=int, default=2, help="local Dask workers of the server (default 2)")
    parser.add_argument("--cache-mb", type=float, default=None,
                        help=f"the result caches' budget (${BUDGET_ENV} of the server; default its own default)")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                        help="an extra argument of explorer serve, e.g. --serve-arg=--no-warm-up (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random actions (default 0)")
    parser.add_argument("--log", default=None, help="keep the server's log in this file (default: a temporary file)")
    args = parser.parse_args(argv)
    warmup = 60 * (args.warmup if args.warmup is not None else max(1.0, args.minutes / 5))
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs Debian's chromium (apt-get install chromium)")
    if args.cache_mb is not None:
        os.environ[BUDGET_ENV] = f"{args.cache_mb:g}"  # the server inherits it
    budget_mb = budget_from_env() / 1e6
    print(f"load average at start: {load()}; {args.sessions} sessions for {args.minutes:g} min (warm-up "
          f"{warmup / 60:g} min), {args.workers} Dask workers, result caches' budget {budget_mb:g} MB")
    port = free_port()
    with (open(args.log, "w+b") if args.log else tempfile.TemporaryFile()) as log, \
            tempfile.NamedTemporaryFile("r") as trace, sync_playwright() as pw:
        server = start_server(port, args.workers, log, trace.name, args.serve_arg)
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            warm, samples, done, failed = soak(args, browser, f"http://127.0.0.1:{port}/", psutil.Process(server.pid),
                                               trace.name, log)
            browser.close()  # the last pages closed: every session of the server ends
            closed = after_close(psutil.Process(server.pid), args.after)
        finally:
            server.terminate()
            server.wait(timeout=120)
        log.seek(0)
        log_text = log.read().decode(errors="replace")
        found = tracebacks(log_text)
    print(f"actions: {sum(done.values())} ({', '.join(f'{k} {v}' for k, v in done.most_common())}); "
          f"{sum(failed.values())} failed ({', '.join(f'{k} {v}' for k, v in failed.most_common())}: a control not on "
          f"the page at that moment, or not in {ACTION_TIMEOUT_MS / 1e3:g} s)")
    report(warm, samples, closed, warmup, budget_mb)
    held = re.findall(r"the result caches hold ([\d.]+) MB in (\d+) results", log_text)
    if held:
        print(f"result caches when the last session ended: {held[-1][0]} MB in {held[-1][1]} results (the numpy "
              f"arrays of the shared results; budget {budget_mb:g} MB)")
    print(f"tracebacks in the server's log: {sum(found.values())} (target 0)")
    for line, count in found.most_common(10):
        print(f"  {count} x {line}")
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
