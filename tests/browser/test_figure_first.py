"""Figure first, in a real headless browser (Debian's chromium driven by Playwright's Python package): on a 1280×720
projector, normal and Presentation mode, the main figure of every tab lies wholly in the first screen without
scrolling and covers at least 40 % of it (issue 23).

The tabs come from the registry (:data:`explorer.views.pages.PAGE_TITLES`), none is named here. A tab's main figure
is the element of CSS class ``explorer-main-figure`` (:meth:`explorer.views.common.layout.tab.JobTab.main_figure`); a tab
without one is measured by its largest figure and reported as an expected failure until its page marks one. Every
tab in both modes, and two presets' tabs, take minutes (``@pytest.mark.slow``); the default run measures the tab
that opens first and the first preset's tab in both modes, and checks that the preset's panel does not move the
figure. The slow test saves the screenshots the README shows,
``docs/screenshots/<tab title>.png`` and ``docs/screenshots/presentation/<tab title>.png``. Skips when chromium or
Playwright is missing, unless ``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from explorer.views.pages import MENU_NAMES, PAGE_TITLES, PRESETS
from tests.conftest import ARTIFACTS, open_page

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
WIDTH, HEIGHT = 1280, 720
#: The least share of the screen the main figure covers.
MIN_SHARE = 0.40
#: Settings whose Monte-Carlo finishes in seconds here (the GP page on the paper's boston).
QUERY = "?dataset=boston&curve_mc_samples=30&mc_samples=500&show_components=true&input_index=3"

#: The box of the open tab's main figure: the visible element of class explorer-main-figure, else the largest
#: visible Bokeh figure (shadow roots included); null when there is none.
MAIN_FIGURE_JS = """
() => {
  const marked = [], figures = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      const shown = r.width > 0 && r.height > 0 && el.checkVisibility({checkVisibilityCSS: true});
      if (shown && el.classList.contains('explorer-main-figure')) marked.push(r);
      else if (shown && el.classList.contains('bk-Figure')) figures.push(r);
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  const area = (r) => r.width * r.height;
  const found = marked.length ? marked : figures.sort((a, b) => area(b) - area(a));
  if (!found.length) return null;
  const r = found[0];
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, marked: marked.length > 0};
}
"""

#: The app's tab bar (the tabs of class explorer-tabs): each title's text and box, and the box of the strip that shows
#: them (a title beyond it is cut off or scrolled away).
TAB_BAR_JS = """
() => {
  const find = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('explorer-tabs') && el.shadowRoot) return el;
      if (el.shadowRoot) { const found = find(el.shadowRoot); if (found) return found; }
    }
    return null;
  };
  const bar = find(document);
  if (!bar) return null;
  const box = (r) => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
  const strip = bar.shadowRoot.querySelector('.bk-headers-wrapper') || bar;
  const tabs = [...bar.shadowRoot.querySelectorAll('.bk-header .bk-tab')];
  return {strip: box(strip.getBoundingClientRect()),
          tabs: tabs.map((t) => ({title: t.textContent.trim(), ...box(t.getBoundingClientRect())}))};
}
"""

#: Whether every visible Cancel button of the page is disabled (its jobs are done).
IDLE_JS = """
() => {
  let busy = false;
  const visit = (root) => {
    for (const el of root.querySelectorAll('button')) {
      if (el.textContent.trim() === 'Cancel' && el.checkVisibility() && !el.disabled) busy = true;
    }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) visit(el.shadowRoot);
  };
  visit(document);
  return !busy;
}
"""


def slug(title: str) -> str:
    """``"Bootstrap, step by step"`` → ``"bootstrap-step-by-step"`` (the screenshots' names)."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def open_tab(page, title: str) -> None:
    page.locator(".bk-tab", has_text=title).first.click()


def set_presentation(page, on: bool) -> None:
    switch = page.locator(".explorer-presentation-switch button").first
    if (page.evaluate("() => document.body.classList.contains('explorer-presentation')")) != on:
        switch.click()
    page.wait_for_function(f"() => document.body.classList.contains('explorer-presentation') === {str(on).lower()}")


def settle(page, timeout: float = 300_000) -> None:
    """The open tab's figure is drawn, its jobs are done and the page has re-laid out."""
    page.wait_for_function(MAIN_FIGURE_JS, timeout=120_000, polling=500)
    page.wait_for_function(IDLE_JS, timeout=timeout, polling=1000)
    page.wait_for_timeout(1500)


def figure_box(page) -> dict:
    """The open tab's main figure: its box, whether it is wholly inside the screen (the page's viewport) and its
    share of the screen."""
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    page.evaluate("() => window.scrollTo(0, 0)")
    box = page.wait_for_function(MAIN_FIGURE_JS, timeout=60_000, polling=500).json_value()
    inside = box["left"] >= -1 and box["top"] >= -1 and box["right"] <= width + 1 and box["bottom"] <= height + 1
    seen = (max(0, min(box["right"], width) - max(box["left"], 0))
            * max(0, min(box["bottom"], height) - max(box["top"], 0)))
    return {**{k: round(v) for k, v in box.items() if k != "marked"}, "marked": box["marked"], "inside": inside,
            "share": round(seen / (width * height), 3)}


def figure_first(box: dict) -> bool:
    return box["marked"] and box["inside"] and box["share"] >= MIN_SHARE


def choose_preset(page, key: str) -> None:
    """Apply the preset ``key`` from the header's menu, as a lecturer would."""
    page.locator(".explorer-presets button").first.click()
    page.get_by_text(MENU_NAMES[key], exact=True).first.click()
    page.locator(".explorer-preset").first.wait_for()


def _page(browser, server, presentation: bool = False, width: int = WIDTH, height: int = HEIGHT):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(120_000)
    page.goto(server + QUERY)
    page.locator(".explorer-sidebar").first.wait_for()
    if presentation:
        set_presentation(page, True)
    return page


def _fast_preset() -> str:
    """A preset of the page that opens first when it has one (its jobs are quick), else the first preset."""
    first = next(iter(PAGE_TITLES))
    return next((p.key for p in PRESETS if p.tab == first), PRESETS[0].key)


def unmarked(boxes: dict) -> None:
    """An expected failure naming the tabs of ``boxes`` whose page marks no main figure."""
    missing = {name: box for name, box in boxes.items() if not box["marked"]}
    if missing:
        pytest.xfail(f"no element of class explorer-main-figure (JobTab.main_figure) on: {missing}")


def cut_titles(bar: dict, width: int) -> list:
    """The tabs of ``bar`` (:data:`TAB_BAR_JS`) not wholly inside the screen of ``width`` px and the strip of the tab
    bar, or not on the first title's line."""
    strip, first = bar["strip"], bar["tabs"][0]
    return [tab for tab in bar["tabs"]
            if tab["left"] < max(0, strip["left"]) - 1 or tab["right"] > min(width, strip["right"]) + 1
            or abs(tab["top"] - first["top"]) > 1]


@pytest.mark.parametrize("width,height", [(WIDTH, HEIGHT), (1920, 1080)])
def test_every_page_title_is_on_the_first_screen(server, browser, width, height):
    page = open_page(browser, server + QUERY, width, height)
    page.locator(".explorer-sidebar").first.wait_for()
    cut = {}
    for presentation in (False, True):
        set_presentation(page, presentation)
        page.wait_for_timeout(1000)  # the sidebar folds or unfolds
        bar = page.evaluate(TAB_BAR_JS)
        assert [tab["title"] for tab in bar["tabs"]] == list(PAGE_TITLES.values())
        cut["presentation" if presentation else "normal"] = cut_titles(bar, width)
    page.close()
    assert cut == {"normal": [], "presentation": []}, cut


@pytest.mark.parametrize("presentation", [False, True], ids=["normal", "presentation"])
def test_the_first_tab_and_the_first_presets_tab_show_their_figure_first(server, browser, presentation):
    page = _page(browser, server, presentation)
    settle(page)
    boxes = {"the tab that opens": figure_box(page)}
    open_tab(page, PAGE_TITLES[PRESETS[0].tab])
    settle(page)
    boxes[PRESETS[0].tab] = figure_box(page)
    page.close()
    failed = {name: box for name, box in boxes.items() if box["marked"] and not figure_first(box)}
    assert failed == {}, failed
    unmarked(boxes)


def test_a_presets_panel_does_not_move_the_figure(server, browser):
    page = _page(browser, server)
    key = _fast_preset()
    preset = next(p for p in PRESETS if p.key == key)
    open_tab(page, PAGE_TITLES[preset.tab])
    settle(page)
    before = figure_box(page)
    choose_preset(page, key)
    settle(page)
    after = figure_box(page)
    page.close()
    assert figure_first(after), (key, after)
    assert (after["top"], after["left"]) == (before["top"], before["left"]), (key, before, after)


@pytest.mark.slow
@pytest.mark.parametrize("width,height", [(WIDTH, HEIGHT), (1920, 1080)])
@pytest.mark.parametrize("presentation", [False, True], ids=["normal", "presentation"])
def test_every_tab_and_two_presets_show_their_figure_first(server, browser, presentation, width, height):
    """Every tab and two presets' tabs, at 1280x720 (saving the README's screenshots) and 1920x1080."""
    page = _page(browser, server, presentation, width, height)
    folder = SCREENSHOTS / "presentation" if presentation else SCREENSHOTS
    folder.mkdir(parents=True, exist_ok=True)
    boxes = {}
    for name, title in PAGE_TITLES.items():
        open_tab(page, title)
        settle(page)
        boxes[name] = figure_box(page)
        if (width, height) == (WIDTH, HEIGHT):
            page.screenshot(path=str(folder / f"{slug(title)}.png"))
            assert (folder / f"{slug(title)}.png").stat().st_size > 10_000
    firsts = {}
    for preset in PRESETS:  # the first preset of the first two pages that have presets
        firsts.setdefault(_page_of(preset.tab), (preset.tab, preset.key))
    for tab, key in list(firsts.values())[:2]:
        choose_preset(page, key)
        open_tab(page, PAGE_TITLES[tab])
        settle(page)
        boxes[f"preset {key}"] = figure_box(page)
    page.close()
    failed = {name: box for name, box in boxes.items() if box["marked"] and not figure_first(box)}
    for name, box in boxes.items():
        print(name, box)
    assert failed == {}, failed
    unmarked(boxes)


def _page_of(tab: str) -> str:
    """The key of the page that has the tab ``tab``."""
    from explorer.views.pages import PAGES

    return next(page.key for page in PAGES if tab in page.tabs)


def test_the_svm_curve_has_no_stray_marks_at_its_left_edge(server, browser):
    """The SVM learning curve's frame is not aligned with the field figure's under it (``JobTab.styled(align=False)``):
    aligned, the field's redraw with its new legend laid both out for a moment about 120 px wide, and that drawing's
    first column of pixels stayed at the curve's left edge (a thin squashed copy of the plot). The canvas's first
    columns are blank once the tab's jobs are done (it opens first here, so its jobs compute while it is shown)."""
    import numpy as np
    from PIL import Image  # (Bokeh's dependency)

    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.set_default_timeout(120_000)
    page.goto(server + "?tab=svm")
    page.locator(".explorer-sidebar").first.wait_for()
    settle(page)
    shot = ARTIFACTS / "svm-curve-left-edge.png"
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".explorer-svm-plot-curve").first.screenshot(path=str(shot))
    page.close()
    edge = np.asarray(Image.open(shot).convert("L"))[:, :3]
    assert (edge < 200).sum() == 0, f"{(edge < 200).sum(axis=0)} dark pixels in the first columns of {shot}"
