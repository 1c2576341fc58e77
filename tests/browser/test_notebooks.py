"""The teaching notebooks live in a real JupyterLab, offline, in headless Chromium (as a student runs them).

Starts JupyterLab on 127.0.0.1 (a free port, a token, no browser; HOME and the Jupyter directories in a temporary
folder, so the user's configuration is neither read nor touched) on a copy of ``notebooks/``, opens a notebook,
runs all cells and waits for the kernel to go idle (the replica notebook twice in the same kernel, as a student
who runs it again). Every request to a host other than 127.0.0.1 is recorded and refused (a lecture room without
internet). Then it checks that the figures render, that nothing was asked of another host (after the load and
after the embedded view built new figures), that the console shows no errors (no comm errors after the second
run), that the embedded output fits the notebook's width, and that the embedded view still computes: another
dataset redraws its plot, a number typed into S/N and Enter (no blur) recomputes; in the step-by-step notebook the
embedded page draws (Draw 1, 10, Play and Pause change the number of resamples its sentence states). Screenshots go
to ``artifacts/``.
Skips when chromium, Playwright or JupyterLab is missing, unless ``EXPLORER_REQUIRE_BROWSER=1`` (set by
``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import ARTIFACTS, _require_browser, free_port

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TOKEN = "explorer-test-token"
#: JupyterLab's settings for the test: no news pop-up over the page, every cell in the page (not only the
#: visible ones, JupyterLab's default), so that the embedded view can be found and scrolled to.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):  # after the browser: no server is started when the test skips
    """JupyterLab on a free port of 127.0.0.1, serving a copy of the notebooks; yields its base URL."""
    _require_browser(importlib.util.find_spec("jupyterlab") is not None,
                     "JupyterLab is not installed (pip install -e '.[notebook]')")
    home = tmp_path_factory.mktemp("jupyter-home")
    root = home / "notebooks"
    shutil.copytree(NOTEBOOKS, root)  # JupyterLab saves what it runs: never into the repository
    for name, settings in LAB_SETTINGS.items():
        path = home / "config" / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    env = dict(os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_DATA_DIR=str(home / "data"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               IPYTHONDIR=str(home / "ipython"), OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(NOTEBOOKS.parent), os.environ.get("PYTHONPATH")])))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with (home / "lab.log").open("w+") as log:  # a file, not a pipe: a chatty server never blocks
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
             f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",
             "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--LabApp.expose_app_in_browser=True"],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 180
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=30) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            proc.kill()
            log.seek(0)
            pytest.fail(f"JupyterLab did not answer on {base}: {log.read()[-2000:]}")
        yield base
        proc.terminate()
        proc.wait(timeout=30)


class Notebook:
    """A notebook open in JupyterLab, with the requests to other hosts and the console errors of its page."""

    def __init__(self, browser, base: str, name: str):
        self.page = page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(120_000)
        self.external: list[str] = []
        self.errors: list[str] = []
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("request", lambda request: self.external.append(request.url) if _external(request.url) else None)
        page.route(_external, lambda route: route.abort())  # no network: nothing leaves the machine
        self.base = base
        page.goto(f"{base}/lab/tree/{name}?reset&token={TOKEN}")  # a fresh workspace: only this notebook
        self._wait_kernel_idle(timeout=180_000)

    def _wait_kernel_idle(self, timeout: float) -> None:
        self.page.wait_for_function(
            """() => {
                const nb = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                const kernel = nb && nb.sessionContext && nb.sessionContext.session
                               && nb.sessionContext.session.kernel;
                const busy = [...document.querySelectorAll('.jp-InputArea-prompt')]
                             .some(p => p.textContent.includes('*'));
                return kernel && kernel.status === 'idle' && !busy;
            }""", timeout=timeout)

    def run_all(self) -> None:
        """Run all cells and wait until the kernel is idle again."""
        self.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        self.page.wait_for_timeout(2000)
        self._wait_kernel_idle(timeout=900_000)
        errors = self.page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t or "Error" in t]
        assert tracebacks == [], tracebacks

    def close(self) -> None:
        """Close the page and shut its kernel down (the next test's notebook gets the machine to itself)."""
        self.page.close()
        headers = {"Authorization": f"token {TOKEN}"}
        with urllib.request.urlopen(urllib.request.Request(f"{self.base}/api/sessions", headers=headers)) as r:
            sessions = json.load(r)
        for session in sessions:
            urllib.request.urlopen(urllib.request.Request(f"{self.base}/api/sessions/{session['id']}",
                                                          method="DELETE", headers=headers)).close()

    def screenshot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / name))
        assert (ARTIFACTS / name).stat().st_size > 10_000


def _external(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname != "127.0.0.1"


def _text(page, selector: str) -> str:
    return page.locator(f"{selector} div").first.inner_text()  # the text lives in the shadow root


def _wait_text_change(page, selector: str, before: str, contains: str, timeout: float = 180.0) -> str:
    deadline = time.time() + timeout
    text = before
    while time.time() < deadline:
        text = _text(page, selector)
        if text != before and contains in text:
            return text
        page.wait_for_timeout(250)
    raise AssertionError(f"{selector} did not change to show {contains!r}: still {text!r}")


def _fits(page, selector: str) -> None:
    """No visible element of the output holding ``selector`` (in its shadow roots too) runs past the right edge
    of that output area (nothing cut at the right)."""
    overflow = page.locator(selector).first.evaluate("""(host) => {
        let area = host;  // the output area around host, across the shadow roots between them
        while (!area.classList || !area.classList.contains('jp-OutputArea-output')) {
            area = area.parentElement || area.getRootNode().host;
        }
        const right = area.getBoundingClientRect().right + 1;
        const out = [];
        const walk = (root) => {
            for (const el of root.querySelectorAll('*')) {
                const box = el.getBoundingClientRect();
                const style = getComputedStyle(el);
                // a glyph renderer's node spans its data, which the plot's canvas clips: the canvas is checked
                const clipped = typeof el.className === 'string' && el.className.includes('bk-GlyphRenderer');
                if (box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && box.right > right
                    && !clipped) {
                    out.push(`${el.tagName}.${el.className} right=${Math.round(box.right)} > ${Math.round(right)}`);
                }
                if (el.shadowRoot) walk(el.shadowRoot);
            }
        };
        walk(area);
        return out;
    }""")
    assert overflow == [], (selector, overflow[:10])


#: What the browser's console shows when Panel's messages on the notebook's comm interleave or get lost.
COMM_ERRORS = ("Expected binary fragment", "buffer for id", "_apply_json_patch")


def test_replica_notebook_runs_offline_and_its_view_stays_live(lab, browser):
    nb = Notebook(browser, lab, "replica_bootstrap.ipynb")
    page = nb.page
    nb.run_all()
    nb.run_all()  # again, in the same kernel: the first run's views and jobs must not disturb the second's
    assert page.locator(".jp-OutputArea-output canvas").count() >= 5  # the figures of the notebook rendered
    page.locator(".explorer-tabs").first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    assert nb.external == [], nb.external  # offline after Run All: nothing asked of another host
    assert nb.errors == [], nb.errors
    nb.screenshot("notebook-replica-holdout.png")  # the view opens on the state's tab: the notebook's last
    page.locator(".explorer-tabs .bk-tab", has_text="Learning curve").first.click()
    page.locator(".explorer-plot-curve canvas").first.wait_for()  # the embedded view's figure
    nb.screenshot("notebook-replica-view.png")
    _fits(page, ".explorer-tabs")
    page.locator(".explorer-tabs .bk-tab", has_text="Predictive distribution").first.click()
    page.locator(".explorer-plot-distribution canvas").first.wait_for()
    page.locator(".explorer-tabs .bk-tab", has_text="Learning curve").first.click()

    # pick another dataset in the embedded view: its learning curve is recomputed and redrawn
    status = _wait_text_change(page, ".explorer-status-curve", "", "boston")
    page.locator(".explorer-dataset select").first.select_option("toy")
    status = _wait_text_change(page, ".explorer-status-curve", status, "toy")

    page.wait_for_timeout(500)
    nb.screenshot("notebook-replica-toy.png")
    assert nb.external == [], nb.external  # the models built for the new tabs and dataset are inline too
    assert [e for e in nb.errors if any(c in e for c in COMM_ERRORS)] == [], nb.errors
    assert nb.errors == [], nb.errors
    nb.close()


def test_svm_notebook_runs_offline_and_its_tab_stays_live(lab, browser):
    nb = Notebook(browser, lab, "svm_bootstrap.ipynb")
    page = nb.page
    nb.run_all()
    assert page.locator(".jp-OutputArea-output canvas").count() >= 3
    page.locator(".explorer-svm-plot-curve canvas").first.wait_for()
    page.locator(".explorer-svm-tab").first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    assert nb.external == [], nb.external  # offline after Run All: nothing asked of another host
    assert nb.errors == [], nb.errors
    nb.screenshot("notebook-svm-tab.png")
    _fits(page, ".explorer-svm-tab")

    status = _text(page, ".explorer-svm-status-curve")
    page.locator(".explorer-svm-dataset select").first.select_option("wisconsin")
    status = _wait_text_change(page, ".explorer-svm-status-curve", status, "wisconsin")

    page.wait_for_timeout(500)
    nb.screenshot("notebook-svm-wisconsin.png")

    # a number typed into S/N applies on Enter, without leaving the field
    field = _text(page, ".explorer-svm-status-field")
    s_over_n = page.locator(".explorer-svm-s-over-n input").first
    s_over_n.click()
    s_over_n.fill("2")
    s_over_n.press("Enter")
    _wait_text_change(page, ".explorer-svm-status-field", field, "S/N = 2")
    assert page.evaluate("() => document.activeElement.closest('.explorer-svm-tab') !== null")  # no blur
    nb.screenshot("notebook-svm-enter.png")
    assert nb.external == [], nb.external  # the models built for the new dataset are inline too
    assert nb.errors == [], nb.errors
    nb.close()


def _resamples(sentence: str) -> int:
    """The number of resamples drawn that the step-by-step page's sentence states (0 before the first)."""
    found = re.search(r"(\d[\d,]*) resamples?\b", sentence)
    return int(found.group(1).replace(",", "")) if found else 0


@pytest.fixture(scope="module")
def step_notebook(lab, browser):
    """The step-by-step notebook after Run All (its embedded page is the last output)."""
    nb = Notebook(browser, lab, "bootstrap_step_by_step.ipynb")
    nb.run_all()
    nb.page.locator(".explorer-steps-plot-running canvas").first.wait_for()  # the embedded page's last figure
    nb.page.locator(".explorer-steps-tab").first.scroll_into_view_if_needed()
    nb.page.wait_for_timeout(500)
    yield nb
    nb.close()


def test_step_by_step_notebook_runs_offline_and_its_page_draws(step_notebook):
    nb = step_notebook
    page = nb.page
    assert page.locator(".jp-OutputArea-output canvas").count() >= 10  # 7 figures of the cells, 3 of the page
    assert nb.external == [], nb.external  # offline after Run All: nothing asked of another host
    assert nb.errors == [], nb.errors
    nb.screenshot("notebook-step-by-step-page.png")

    # the page starts from no resample (the notebook reset it); Draw 1, 10, then Play and Pause draw more
    sentence = _text(page, ".explorer-steps-sentence")
    assert _resamples(sentence) == 0, sentence
    page.wait_for_timeout(2000)  # the page's widgets connected to the kernel (a click before may be lost)
    page.locator(".explorer-steps-draw-1 button").first.click()
    sentence = _wait_text_change(page, ".explorer-steps-sentence", sentence, "1 resample")
    page.locator(".explorer-steps-draw-10 button").first.click()
    sentence = _wait_text_change(page, ".explorer-steps-sentence", sentence, "11 resamples")
    page.locator(".explorer-steps-play button").first.click()
    page.wait_for_timeout(3000)
    page.locator(".explorer-steps-play button").first.click()  # Pause
    counts = [_resamples(_text(page, ".explorer-steps-sentence"))]
    for _ in range(10):  # resamples asked for before the pause may still arrive, then the count stays
        page.wait_for_timeout(1500)
        counts.append(_resamples(_text(page, ".explorer-steps-sentence")))
        if counts[-1] == counts[-2]:
            break
    assert counts[-1] == counts[-2] > 11, counts
    nb.screenshot("notebook-step-by-step-played.png")
    assert nb.external == [], nb.external  # the figures redrawn by the page are inline too
    assert [e for e in nb.errors if any(c in e for c in COMM_ERRORS)] == [], nb.errors
    assert nb.errors == [], nb.errors


def test_step_by_step_notebook_page_fits_the_notebook(step_notebook):
    _fits(step_notebook.page, ".explorer-steps-tab")
