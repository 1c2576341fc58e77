"""A served app soaked by a class: does its memory come back, and do page closes log tracebacks?

    python benchmarks/bench_soak.py                 # 15 minutes, 3 sessions
    python benchmarks/bench_soak.py --minutes 3     # a quick run (1 minute of warm-up)
    python benchmarks/bench_soak.py --sessions 5 --cache-mb 128

Starts ``explorer serve`` (a subprocess with its local Dask cluster, as ``bench_served_load.py`` does) and headless
Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright's Python package). ``--sessions`` pages then take
turns doing one random action each: switch tabs, type an S/N or move its slider with the keyboard, run and cancel a
Monte-Carlo, apply a "Reproduce a figure" preset; every page is closed and opened again (a new link, a new seed, so
new results for the caches) every 40-80 s. Every 10 s the resident memory (RSS) of the server process and of its
children (the Dask nanny and worker processes) is sampled. It prints:

- the *warm* level: the RSS at the end of the warm-up (``--warmup`` minutes, default a fifth of the run, at least 1);
- the *growth per hour* after the warm-up (a least-squares line through the samples), and the growth over the run;
- the RSS ``--after`` seconds (default 120) after the last page closed, against the warm level (target: within
  10 %), and the result caches' budget for comparison (target: no growth beyond it);
- the tracebacks in the server's log (target: none), with their last lines.

The actions' own timings are not measured: on a shared machine only the memory figures mean something.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import re
import shutil
import sys
import tempfile
import time

import numpy as np
import psutil
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_served_load import CHROMIUM_ARGS, free_port, load, start_server  # noqa: E402

from explorer.views.common.caches import BUDGET_ENV, budget_from_env  # noqa: E402

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
        link = self.rng.choice(LINKS).format(seed=self.rng.randrange(10**6))
        self.page.goto(self.url + link, wait_until="commit", timeout=300_000)
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
    items = page.locator(".bk-item", has_text=re.compile(r"^Seed \d{3} "))  # "Seed 000 Fig. 1 left: ..."
    items.first.wait_for()
    items.nth(rng.randrange(items.count())).click()


ACTIONS = {"switch tab": switch_tab, "type S/N": type_s_over_n, "move slider": move_slider,
           "run/cancel": run_and_cancel, "preset": apply_preset}


def rss_mb(server: psutil.Process) -> tuple[float, float]:
    """Resident memory of the server process and of all its children together, MB."""
    children = 0
    for child in server.children(recursive=True):
        try:
            children += child.memory_info().rss
        except psutil.NoSuchProcess:  # a worker restarting
            pass
    return server.memory_info().rss / 1e6, children / 1e6


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


def soak(args, browser, url: str, server: psutil.Process) -> tuple[list, collections.Counter, collections.Counter]:
    """Drive the sessions for ``args.minutes``; return the memory samples (seconds, server MB, children MB), the
    actions done by kind, and those that failed by kind (a control not on the page, or not in time)."""
    rng = random.Random(args.seed)
    sessions = [Session(browser, url, random.Random(rng.random())) for _ in range(args.sessions)]
    for session in sessions:
        session.open()
    started = time.monotonic()
    samples, done, failed, next_sample = [], collections.Counter(), collections.Counter(), started
    while time.monotonic() - started < 60 * args.minutes:
        if time.monotonic() >= next_sample:
            samples.append((time.monotonic() - started, *rss_mb(server)))
            next_sample += SAMPLE_EVERY
            if len(samples) % 6 == 1:
                at, main, children = samples[-1]
                print(f"  {at / 60:4.1f} min: server {main:.0f} MB, workers {children:.0f} MB, "
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
    return samples, done, failed


def after_close(server: psutil.Process, seconds: float) -> list[tuple[float, float, float]]:
    """Memory samples for ``seconds`` after the last page closed."""
    started, samples = time.monotonic(), []
    while time.monotonic() - started < seconds:
        time.sleep(SAMPLE_EVERY)
        samples.append((time.monotonic() - started, *rss_mb(server)))
    return samples


def report(samples: list, closed: list, warmup: float, budget_mb: float) -> None:
    warm = [s for s in samples if s[0] <= warmup][-3:]  # the last samples of the warm-up
    later = [s for s in samples if s[0] >= warmup]
    for column, label in ((1, "server"), (2, "workers")):
        level = float(np.median([s[column] for s in warm]))
        slope = growth_per_hour([s[0] for s in later], [s[column] for s in later])
        end, after = later[-1][column], closed[-1][column]
        print(f"{label}: warm {level:.0f} MB; growth after warm-up {slope:+.0f} MB/h (linear fit over "
              f"{len(later)} samples), {end - level:+.0f} MB by the end of the soak; {after:.0f} MB "
              f"{closed[-1][0]:.0f} s after the last page closed = {100 * (after / level - 1):+.1f} % of warm "
              f"(target within 10 %)")
    total_warm = float(np.median([s[1] + s[2] for s in warm]))
    peak = max(s[1] + s[2] for s in later)
    print(f"server and workers: warm {total_warm:.0f} MB, peak {peak:.0f} MB after warm-up (+{peak - total_warm:.0f} "
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
        server = start_server(port, args.workers, log, trace.name)
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            samples, done, failed = soak(args, browser, f"http://127.0.0.1:{port}/", psutil.Process(server.pid))
            browser.close()  # the last pages closed: every session of the server ends
            closed = after_close(psutil.Process(server.pid), args.after)
        finally:
            server.terminate()
            server.wait(timeout=120)
        log.seek(0)
        found = tracebacks(log.read().decode(errors="replace"))
    print(f"actions: {sum(done.values())} ({', '.join(f'{k} {v}' for k, v in done.most_common())}); "
          f"{sum(failed.values())} failed ({', '.join(f'{k} {v}' for k, v in failed.most_common())}: a control not on "
          f"the page at that moment, or not in {ACTION_TIMEOUT_MS / 1e3:g} s)")
    report(samples, closed, warmup, budget_mb)
    print(f"tracebacks in the server's log: {sum(found.values())} (target 0)")
    for line, count in found.most_common(10):
        print(f"  {count} x {line}")
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
