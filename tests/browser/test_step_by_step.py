""""Bootstrap, step by step" in a real headless browser: the bare URL opens it; Draw 1, 10, 100, Play/Pause and a
click on a point update the count, the histogram and the running estimate, with no console error; screenshots at
1280x720 in normal and Presentation mode for the README (``docs/screenshots/step-by-step*.png``).

The figures are patched in place (new columns in their data sources), so the test reads the page's Bokeh data
sources: the stacked bars of the histogram (columns left/right/top/bottom) and the running estimate (B, eps).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from explorer.views.step_by_step.state import GRID_POINTS, KEEP_CURVES
from tests.conftest import ARTIFACTS, open_page, type_value

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

#: Per data source of the page: its column names and its number of rows.
SOURCES_JS = """() => {
  const out = [];
  for (const doc of window.Bokeh.documents) {
    for (const model of doc.all_models) {
      if (model.type !== 'ColumnDataSource' && model.constructor.name !== 'ColumnDataSource') continue;
      const data = model.data;
      const keys = data instanceof Map ? [...data.keys()] : Object.keys(data);
      const first = keys.length ? (data instanceof Map ? data.get(keys[0]) : data[keys[0]]) : [];
      out.push([keys.sort().join(','), first.length]);
    }
  }
  return out;
}"""


#: The earlier fits (the data source of many NaN-separated curves) and the running estimate's B columns, as the page
#: holds them after the server streamed them (new rows only; the oldest curve dropped by ``rollover``).
STREAMED_JS = """() => {
  const out = {fits: [], B: []};
  for (const doc of window.Bokeh.documents) {
    for (const model of doc.all_models) {
      if (model.type !== 'ColumnDataSource' && model.constructor.name !== 'ColumnDataSource') continue;
      const data = model.data;
      const get = (key) => data instanceof Map ? data.get(key) : data[key];
      const y = get('y'), b = get('B');
      if (y && y.length > 302) out.fits.push(Array.from(y, (v) => Number.isNaN(v) ? null : v));
      if (b && b.length) out.B.push(Array.from(b));
    }
  }
  return out;
}"""


#: The labels of the page's axes (Bokeh axis models), in document order.
AXIS_LABELS_JS = """() => {
  const out = [];
  for (const doc of window.Bokeh.documents) {
    for (const model of doc.all_models) {
      if (typeof model.axis_label === 'string') out.push(model.axis_label);
    }
  }
  return out;
}"""


def _rows(page, columns: str) -> list[int]:
    """Rows of every data source whose columns are ``columns`` (sorted, comma-separated)."""
    return [n for keys, n in page.evaluate(SOURCES_JS) if keys == columns]


#: The histogram's bars drawn: the finite rows of the data sources of stacked bars (a figure drawn anew by HoloViews
#: with no bar holds one row of NaN).
BARS_JS = """() => {
  let n = 0;
  for (const doc of window.Bokeh.documents) {
    for (const model of doc.all_models) {
      if (model.type !== 'ColumnDataSource' && model.constructor.name !== 'ColumnDataSource') continue;
      const data = model.data;
      const top = data instanceof Map ? data.get('top') : data['top'];
      const left = data instanceof Map ? data.get('left') : data['left'];
      if (top && left) n += Array.from(top).filter((v) => Number.isFinite(v)).length;
    }
  }
  return n;
}"""


def _bars(page) -> int:
    """The histogram's stacked bars drawn (one per bin and multiplicity with resamples in it)."""
    return page.evaluate(BARS_JS)


def _sentence(page) -> str:
    """The text of the sentence at the top (a Panel pane: its text is in its shadow root)."""
    return page.locator(".explorer-steps-sentence").first.evaluate("el => (el.shadowRoot || el).textContent")


def _count(page) -> int:
    text = _sentence(page)
    found = re.search(r"([\d,]+) resamples?;", text)
    return int(found.group(1).replace(",", "")) if found else 0


def _wait_count(page, n: int) -> None:
    page.locator(".explorer-steps-sentence", has_text=f"{n:,} resample").first.wait_for(timeout=60_000)


def _click(page, name: str) -> None:
    page.locator(f".explorer-steps-{name} button").first.click()


def test_the_step_by_step_page_draws_plays_and_picks_a_point(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(120_000)
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(server)  # the bare URL: the first page
    page.locator(".bk-tab.bk-active", has_text="Bootstrap, step by step").first.wait_for()
    page.locator(".explorer-steps-sentence", has_text="No resample drawn yet").first.wait_for()
    page.locator(".explorer-steps-plot-data canvas").first.wait_for()
    assert _bars(page) == 0  # no bar yet: only the theory's outlines

    _click(page, "draw-1")
    _wait_count(page, 1)
    _click(page, "draw-10")
    _wait_count(page, 11)
    assert _bars(page) > 0  # the histogram of f_i, stacked by multiplicity
    running = max(_rows(page, "B,eps"))
    _click(page, "draw-100")
    _wait_count(page, 111)
    assert max(_rows(page, "B,eps")) > running  # the running estimate grew
    assert "the last left out" in _sentence(page)

    # Play: one resample at a time until Pause
    page.locator(".explorer-steps-play button").first.click()
    for _ in range(120):
        if _count(page) >= 115:
            break
        page.wait_for_timeout(250)
    assert _count(page) >= 115
    page.locator(".explorer-steps-play button", has_text="Pause").first.click()
    paused, before = _count(page), -1
    for _ in range(20):  # the draws asked for before the click (a late tick asks for up to 3) still land
        page.wait_for_timeout(2000)  # (a draw takes more than a second on a loaded machine)
        before, paused = paused, _count(page)
        if paused == before:
            break
    page.wait_for_timeout(1500)
    assert _count(page) == paused  # paused: nothing more is drawn

    # what the server streamed added up in the page: the last 20 earlier fits, each GRID_POINTS long and closed
    # by a NaN, and the running estimate's B rising to the count
    streamed = page.evaluate(STREAMED_JS)
    assert len(streamed["fits"]) == 1
    fits = streamed["fits"][0]
    assert len(fits) == (KEEP_CURVES - 1) * (GRID_POINTS + 1)
    assert [i for i, v in enumerate(fits) if v is None] == list(range(GRID_POINTS, len(fits), GRID_POINTS + 1))
    estimates = [b for b in streamed["B"] if len(b) > 2]  # not the theories' horizontal lines
    assert len(estimates) == 3  # the estimate and its ± 1 SE band
    for b in estimates:
        assert all(later > earlier for earlier, later in zip(b, b[1:])) and b[-1] == paused

    # a click on the data picks the nearest point as point i
    index = page.locator(".explorer-steps-input-index input").first
    before = index.input_value()
    box = page.locator(".explorer-steps-plot-data canvas").first.bounding_box()
    for fx in (0.3, 0.7, 0.5):  # (the ringed point 0 may be the nearest to one of them)
        page.mouse.click(box["x"] + fx * box["width"], box["y"] + 0.5 * box["height"])
        for _ in range(20):  # the click goes to the server and the index back (slow on a loaded machine)
            page.wait_for_timeout(250)
            if index.input_value() != before:
                break
        if index.input_value() != before:
            break
    assert index.input_value() != before

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "step-by-step.png"))
    page.locator("button", has_text="Presentation").first.click()
    page.wait_for_timeout(2500)  # the figures are drawn again, larger
    page.screenshot(path=str(SCREENSHOTS / "step-by-step-presentation.png"))
    _click(page, "reset")
    page.locator(".explorer-steps-sentence", has_text="No resample drawn yet").first.wait_for()
    assert errors == []
    page.close()


def test_a_link_reopens_the_step_by_step_page_with_its_values(server, browser):
    page = open_page(browser, server + "?tab=curve")  # from another page
    page.locator(".bk-tab", has_text="Bootstrap, step by step").first.click()
    page.locator(".explorer-steps-dataset select").first.select_option("teacher")
    type_value(page.locator(".explorer-steps-n-points input").first, "40")
    # a short link: only what differs from the defaults (the page itself is the default one)
    page.wait_for_function("() => /[?&]steps_n_points=40(&|$)/.test(window.location.href)"
                           " && /[?&]steps_dataset=teacher(&|$)/.test(window.location.href)")
    link = page.url
    page.close()
    again = open_page(browser, link)
    again.locator(".bk-tab.bk-active", has_text="Bootstrap, step by step").first.wait_for()
    again.locator(".explorer-steps-sentence", has_text="N = 40 data points").first.wait_for()
    assert again.locator(".explorer-steps-dataset select").first.input_value() == "teacher"
    again.close()


def _slide(page, key: str) -> None:
    """Move the S/N slider one step with the keyboard (as a lecturer nudges it) and let it go."""
    handle = page.locator(".explorer-steps-s-over-n .noUi-handle").first
    handle.focus()
    handle.press(key)


def test_resamples_are_kept_across_an_s_over_n_change_and_the_glossary_opens(server, browser):
    """Issue 36: a nudge of the S/N slider starts an empty set and says the earlier resamples are kept; nudging it
    back shows them again (count, histogram, running estimate). The histogram's axis says what it shows in every
    state. The header's Glossary opens on this page and on another."""
    page = open_page(browser, server)
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.locator(".explorer-steps-sentence", has_text="No resample drawn yet").first.wait_for()
    page.locator(".explorer-steps-plot-histogram canvas").first.wait_for()
    assert "probability per bin (theory)" in page.evaluate(AXIS_LABELS_JS)  # the theory alone, before any draw
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "step-by-step-before.png"))

    _click(page, "draw-10")
    _wait_count(page, 10)
    labels = page.evaluate(AXIS_LABELS_JS)
    assert "resamples per bin" in labels and "probability per bin (theory)" not in labels
    bars, running = _bars(page), max(_rows(page, "B,eps"))
    assert bars > 0 and running >= 10

    _slide(page, "ArrowRight")  # S/N 1.00 → 1.05: a new, empty set; the 10 are kept
    page.locator(".explorer-steps-sentence", has_text="kept (10 resamples at S/N = 1.00)").first.wait_for()
    for _ in range(20):  # the figures are drawn anew (a new problem): wait until their bars are gone
        if _bars(page) == 0:
            break
        page.wait_for_timeout(250)
    assert "No resample drawn yet" in _sentence(page) and _bars(page) == 0
    assert "probability per bin (theory)" in page.evaluate(AXIS_LABELS_JS)
    page.screenshot(path=str(ARTIFACTS / "step-by-step-new-s-over-n.png"))

    _slide(page, "ArrowLeft")  # back to 1.00: the same 10 resamples, histogram and running estimate
    _wait_count(page, 10)
    for _ in range(40):  # the figures are drawn anew (a new problem): wait for their bars and estimate
        if _bars(page) == bars and max(_rows(page, "B,eps")) == running:
            break
        page.wait_for_timeout(250)
    assert _bars(page) == bars and max(_rows(page, "B,eps")) == running
    assert "resamples per bin" in page.evaluate(AXIS_LABELS_JS)
    page.screenshot(path=str(ARTIFACTS / "step-by-step-back.png"))

    page.locator(".explorer-glossary-button button").first.click()
    glossary = page.locator(".explorer-glossary", has_text="Replica theory").first
    glossary.wait_for(state="visible")
    page.screenshot(path=str(ARTIFACTS / "step-by-step-glossary.png"))
    page.keyboard.press("Escape")
    page.locator("#pn-closeModal").first.click() if page.locator("#pn-closeModal").first.is_visible() else None
    glossary.wait_for(state="hidden")
    page.locator(".bk-tab", has_text="Learning curve").first.click()  # another page: the same header
    page.locator(".explorer-glossary-button button").first.click()
    glossary.wait_for(state="visible")
    assert errors == []
    page.close()
