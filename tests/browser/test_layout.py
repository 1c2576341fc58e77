"""Every tab fits the screen, in a real headless browser (Debian's chromium driven by Playwright's Python package).

Serves ``explorer serve`` on a free port and opens every tab and sub-panel at 1280×720 (a projector) and at
1920×1080. Once a tab has rendered and its jobs have finished (its Cancel button is disabled), no visible
element of the page may reach past the right edge of the window: the test walks every element, inside the
shadow roots of Panel's and Bokeh's components too, and lists those whose box ends right of it. At 1280×720 it
saves a screenshot of each tab to ``docs/screenshots/<tab>.png`` (the README shows them). Skips when chromium or
Playwright is missing, unless ``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
#: GP settings of the page: the paper's boston with Monte-Carlo counts that finish in about a minute here.
QUERY = "?dataset=boston&curve_mc_samples=100&mc_samples=2000&show_components=true&input_index=3"
#: (screenshot name, tab title, sub-panel title or None, a CSS class the tab shows, its Cancel button's class,
#: the job messages that say "done" once its results are complete, or (CSS class, text) to wait for).
TABS = [
    ("learning-curve", "Learning curve", None, "explorer-plot-curve", "explorer-cancel-curve",
     ["explorer-job-message-curve", ("explorer-status-curve", "theory on")]),
    ("predictive-distribution", "Predictive distribution", None, "explorer-plot-distribution",
     "explorer-cancel-distribution", ["explorer-job-message-distribution"]),
    ("l1-map", "L1 map", None, "explorer-plot-l1", "explorer-cancel-l1", ["explorer-job-message-l1"]),
    ("test-inputs", "Test inputs", None, "explorer-plot-holdout", "explorer-cancel-holdout",
     ["explorer-job-message-holdout"]),
    ("svm-bootstrap", "SVM bootstrap", None, "explorer-svm-plot-field", "explorer-svm-cancel",
     [f"explorer-svm-job-message-{kind}" for kind in ("theory", "curve", "field")]),
    ("model-selection", "Model selection", "Explore", "explorer-selection-plot-predictions",
     "explorer-selection-cancel", [f"explorer-selection-job-message-{kind}" for kind in ("curves", "optima",
                                                                                         "ranking")]),
    ("model-selection-experiments", "Model selection", "Experiments", "explorer-experiment-plot",
     "explorer-experiment-cancel", []),  # runs on demand only: the empty sub-panel with its controls
    ("fast-bootstrap", "Fast bootstrap", None, "explorer-fastboot-plot-generalization", "explorer-fastboot-cancel",
     ["explorer-fastboot-job-message-fast"]),
]

#: Visible elements (nonzero size, not hidden by CSS) whose box ends right of the window, with their shadow hosts.
OVERFLOW_JS = """
() => {
  const width = window.innerWidth, found = [];
  const describe = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
      ? '.' + el.className.trim().split(/\\s+/).slice(0, 3).join('.') : '');
  const visit = (root, path) => {
    for (const el of root.querySelectorAll('*')) {
      const rect = el.getBoundingClientRect();
      const shown = rect.width > 0 && rect.height > 0
          && el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
      // a glyph renderer's node spans its data, which the figure's canvas clips: the canvas itself is checked
      const clipped = typeof el.className === 'string' && el.className.includes('bk-GlyphRenderer');
      if (shown && rect.right > width + 1 && !clipped) {
        found.push(`${path}${describe(el)} right=${Math.round(rect.right)}`);
      }
      if (el.shadowRoot && shown) visit(el.shadowRoot, path + describe(el) + ' > ');
    }
  };
  visit(document, '');
  return found;
}
"""


#: The size of the smallest figure canvas of the element with the given CSS class (its shadow roots included).
CANVAS_JS = """
(css) => {
  const sizes = [];
  const canvases = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'CANVAS') {
        const rect = el.getBoundingClientRect();
        if (rect.width > 0 || rect.height > 0) sizes.push([rect.width, rect.height]);
      }
      if (el.shadowRoot) canvases(el.shadowRoot);
    }
  };
  const find = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList && el.classList.contains(css)) { canvases(el); if (el.shadowRoot) canvases(el.shadowRoot); }
      else if (el.shadowRoot) find(el.shadowRoot);
    }
  };
  find(document);
  return sizes;
}
"""


def _open(page, title: str, sub: str | None) -> None:
    page.locator(".bk-tab", has_text=title).first.click()
    if sub is not None:
        page.locator(".bk-tab", has_text=sub).first.click()


def _wait_until_rendered(page, shows: str, cancel: str, done: list) -> None:
    """The tab's figure has a canvas, its jobs are done (messages, Cancel disabled) and the page has settled."""
    page.locator(f".{shows} canvas").first.wait_for(timeout=120_000)
    for message in done:
        css, text = message if isinstance(message, tuple) else (f"{message} pre", "done")
        page.locator(f".{css}", has_text=text).first.wait_for(timeout=900_000)
    button = page.locator(f".{cancel} button").first
    button.wait_for(timeout=60_000)
    page.wait_for_function("(el) => el.disabled", arg=button.element_handle(), timeout=900_000, polling=1000)
    page.wait_for_timeout(1500)  # the last figure update and re-layout


# 1920x1080 in the slow run (every tab and its jobs again: about a minute and a half of the default run's 15)
@pytest.mark.parametrize("width,height", [(1280, 720), pytest.param(1920, 1080, marks=pytest.mark.slow)])
def test_every_tab_fits_the_window(server, browser, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(120_000)
    page.goto(server + QUERY)
    page.locator(".explorer-sidebar").first.wait_for()
    overflowing = {}
    for name, title, sub, shows, cancel, done in TABS:
        _open(page, title, sub)
        _wait_until_rendered(page, shows, cancel, done)
        found = page.evaluate(OVERFLOW_JS)
        canvases = page.evaluate(CANVAS_JS, shows)
        if name != "model-selection-experiments":  # its figure is a placeholder text until a run
            # every tab draws a figure of a readable size
            # (a figure's canvases; small ones are its legend's glyphs)
            if not any(w >= 250 and h >= 200 for w, h in canvases):
                found = [*found, f"no figure canvas of at least 250 x 200 px: {canvases}"]
        if found:
            overflowing[name] = found[:10] + ([f"... {len(found) - 10} more"] if len(found) > 10 else [])
        if width == 1280:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
            assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000
    page.close()
    for name, found in overflowing.items():
        print(name, *found, sep="\n  ")  # the whole list (pytest shortens the assertion message)
    assert overflowing == {}, overflowing
