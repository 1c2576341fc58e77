"""A teaching notebook exported to HTML shows its figures offline, in headless Chromium.

Executes ``notebooks/replica_bootstrap.ipynb`` (then ``bootstrap_step_by_step.ipynb``: :data:`EXPORTED`)
with nbconvert (a kernel that imports this checkout's ``explorer``; HOME and the Jupyter directories in a temporary
folder), exports it to HTML with the README's
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
#: The notebooks exported: the number of code cells that show a Bokeh figure (at least), the element the
#: screenshot shows and the screenshot's name.
EXPORTED = {
    # Fig. 1 twice, Fig. 3-4, Fig. 5, Fig. 2 and the app's view
    "replica_bootstrap.ipynb": (6, ".explorer-tabs", "notebook-replica-exported.png"),
    # one resample, the histogram twice, the running estimate twice, the page, the exercise
    "bootstrap_step_by_step.ipynb": (7, ".explorer-steps-content", "notebook-step-by-step-exported.png"),
}
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


@pytest.fixture(scope="module", params=list(EXPORTED))
def exported(request, browser, tmp_path_factory):  # after the browser: nothing is executed when the test skips
    """A teaching notebook executed (``executed.ipynb``) and exported to HTML (``exported.html``); yields its name
    and both files."""
    _require_browser(importlib.util.find_spec("nbconvert") is not None,
                     "nbconvert is not installed (pip install -e '.[notebook]')")
    name = request.param
    home = tmp_path_factory.mktemp("nbconvert-home")
    shutil.copy(NOTEBOOKS / name, home / name)  # executed in a copy: never into the repository
    _nbconvert(home, "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=600",
               "--output", "executed.ipynb", name)
    _nbconvert(home, "--to", "html", "--template-file", str(TEMPLATE), "--output", "exported.html",
               "executed.ipynb")
    return name, home / "executed.ipynb", home / "exported.html"


def _figure_cells(notebook: Path) -> list[int]:
    """The indices (among code cells) of the cells of ``notebook`` with an output that embeds a Bokeh figure."""
    cells = [cell for cell in json.loads(notebook.read_text())["cells"] if cell["cell_type"] == "code"]
    return [i for i, cell in enumerate(cells)
            if any('"name":"Figure"' in "".join(out.get("data", {}).get("text/html", ""))
                   for out in cell.get("outputs", []))]


def _local(url: str) -> bool:
    return urlsplit(url).scheme in ("file", "data", "blob")


#: The indices of the code cells of the page that draw a visible canvas (over 100 x 100 px), each canvas
#: counted for the cell that holds it: found across shadow roots, owned by the nearest cell up the tree.
DRAWN_CELLS = """() => {
    const cells = [...document.querySelectorAll('.jp-CodeCell')];
    const drawn = new Set();
    const owner = (el) => {
        for (let node = el; node !== null; node = node.parentNode || node.host || null) {
            if (node.classList && node.classList.contains('jp-CodeCell')) return cells.indexOf(node);
        }
        return -1;
    };
    const visit = (root) => root.querySelectorAll('*').forEach((el) => {
        const box = el.getBoundingClientRect();
        if (el.tagName === 'CANVAS' && box.width > 100 && box.height > 100) drawn.add(owner(el));
        if (el.shadowRoot !== null) visit(el.shadowRoot);
    });
    visit(document);
    return [...drawn].sort((a, b) => a - b);
}"""


def test_exported_notebook_shows_its_figures_offline(exported, browser):
    name, executed, html = exported
    at_least, view, screenshot = EXPORTED[name]
    figures = _figure_cells(executed)
    assert len(figures) >= at_least

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
    wanted = json.dumps(figures)
    page.wait_for_function(f"{wanted}.every((i) => ({DRAWN_CELLS})().includes(i))", timeout=120_000)
    page.wait_for_timeout(1000)  # late requests or errors of the last figures
    drawn = page.evaluate(DRAWN_CELLS)
    assert set(figures) <= set(drawn), (figures, drawn)  # every figure shows, each in its own cell
    assert external == [], external  # nothing asked of another host
    assert errors == [], errors
    page.locator(view).first.scroll_into_view_if_needed()
    save_screenshot(page, screenshot)
    page.close()

