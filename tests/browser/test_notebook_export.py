"""A teaching notebook exported to HTML shows its figures offline, in headless Chromium.

Executes ``notebooks/seed000_replica_bootstrap.ipynb`` with nbconvert (a kernel that imports this checkout's
``explorer``; HOME and the Jupyter directories in a temporary folder), exports it to HTML with the README's
command (``--template-file notebooks/offline.html.j2``) and opens the file in Chromium with every request
that is not ``file:``, ``data:`` or ``blob:`` recorded and refused (a reader without internet). Then it checks
that every output holding a Bokeh figure shows it (a canvas of non-zero size), that nothing was asked of
another host and that the console shows no errors. There is no kernel behind the page: the embedded view
shows its state at export time and its widgets do nothing, which is not tested. A screenshot goes to
``artifacts/``. Skips when chromium, Playwright or nbconvert is missing, unless ``EXPLORER_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import _require_browser, save_screenshot

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TEMPLATE = NOTEBOOKS / "offline.html.j2"
NOTEBOOK = "seed000_replica_bootstrap.ipynb"
#: In the page's console, what Panel says when Bokeh's or Panel's JavaScript never arrived.
PANEL_MISSING = "Panel: ERROR"


def _nbconvert(home: Path, *args: str) -> None:
    """``jupyter nbconvert ARGS`` in ``home`` with a kernel that imports this checkout's ``explorer``."""
    env = dict(os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_DATA_DIR=str(home / "data"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               IPYTHONDIR=str(home / "ipython"), OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(NOTEBOOKS.parent), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", *args], check=False, cwd=home, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def exported(browser, tmp_path_factory):  # after the browser: nothing is executed when the test skips
    """The teaching notebook executed (``executed.ipynb``) and exported to HTML (``NAME.html``); yields both."""
    _require_browser(importlib.util.find_spec("nbconvert") is not None,
                     "nbconvert is not installed (pip install -e '.[notebook]')")
    home = tmp_path_factory.mktemp("nbconvert-home")
    shutil.copy(NOTEBOOKS / NOTEBOOK, home / NOTEBOOK)  # executed in a copy: never into the repository
    _nbconvert(home, "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=600",
               "--output", "executed.ipynb", NOTEBOOK)
    _nbconvert(home, "--to", "html", "--template-file", str(TEMPLATE), "--output", "exported.html",
               "executed.ipynb")
    return home / "executed.ipynb", home / "exported.html"


def _figure_cells(notebook: Path) -> int:
    """How many code cells of ``notebook`` have an output that embeds a Bokeh figure."""
    cells = json.loads(notebook.read_text())["cells"]
    return sum(any('"name":"Figure"' in "".join(out.get("data", {}).get("text/html", ""))
                   for out in cell.get("outputs", []))
               for cell in cells if cell["cell_type"] == "code")


def _local(url: str) -> bool:
    return urlsplit(url).scheme in ("file", "data", "blob")


#: The code cells of the page with a visible canvas (width and height over 100 px), across shadow roots.
DRAWN_CELLS = """() => [...document.querySelectorAll('.jp-CodeCell')].filter((cell) => {
    const drawn = (root) => [...root.querySelectorAll('*')].some((el) => {
        const box = el.getBoundingClientRect();
        return (el.tagName === 'CANVAS' && box.width > 100 && box.height > 100)
               || (el.shadowRoot !== null && drawn(el.shadowRoot));
    });
    return drawn(cell);
}).length"""


def test_exported_replica_notebook_shows_its_figures_offline(exported, browser):
    executed, html = exported
    figures = _figure_cells(executed)
    assert figures >= 6  # Fig. 1 twice, Fig. 3-4, Fig. 5, Fig. 2 and the app's view

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    external: list[str] = []
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text)
            if msg.type == "error" or PANEL_MISSING in msg.text else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def refuse(route):  # no network: nothing leaves the machine
        external.append(route.request.url)
        route.abort()

    page.route(lambda url: not _local(url), refuse)
    page.goto(html.as_uri())
    page.wait_for_function(f"({DRAWN_CELLS})() >= {figures}", timeout=120_000)
    page.wait_for_timeout(1000)  # late requests or errors of the last figures
    assert page.evaluate(DRAWN_CELLS) == figures
    assert external == [], external  # nothing asked of another host
    assert errors == [], errors
    page.locator(".explorer-tabs").first.scroll_into_view_if_needed()
    save_screenshot(page, "notebook-seed000-exported.png")
    page.close()

