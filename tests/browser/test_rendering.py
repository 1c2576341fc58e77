"""Stable rendering and legends for a room, in a real headless browser (issue 36, items 2 and 3).

The text sizes of every figure (title, axis labels, tick labels, legend labels) are read from the Bokeh models in the
page and converted to px (a size in em with the font size of the CSS around the figure, as the canvas resolves it).
On every page (tab) of the registry, in normal and in Presentation mode, every figure has the same sizes, and they
stay the same after a click on a point, a slider change, resamples drawn, a preset, a link and a reload. Legends grow
with Presentation mode as the axis labels do, lie wholly inside their canvas, keep a gap between entries, and show a
glyph for every entry (each entry's renderer has a row to draw it from) before the first resample. A click on a
figure leaves no focus outline. Skips when chromium or Playwright is missing, unless ``EXPLORER_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import pytest

from explorer.views.pages import MENU_NAMES, PAGE_TITLES, PRESETS
from tests.conftest import open_page

pytestmark = pytest.mark.browser

#: The step-by-step page first, and settings whose Monte-Carlo finishes in seconds (the GP pages on boston).
QUERY = "?tab=steps&dataset=boston&curve_mc_samples=30&mc_samples=500"
#: Least legend label size (px) on a screen and on a projector, and least growth of legends and axis labels from
#: normal to Presentation mode.
MIN_LEGEND_PX = {False: 11.0, True: 16.0}
MIN_GROWTH = 1.4

#: Every visible Bokeh figure of the page: its sizes in px, its legends' boxes in canvas coordinates, their spacing
#: and the number of rows of each entry's renderers, and the outline of the page's focused element inside it.
FIGURES_JS = r"""
() => {
  const seen = new Set(), plots = [];
  const walk = (v) => {
    if (!v || seen.has(v)) return;
    seen.add(v);
    if (v.model && v.model.constructor.__name__ === 'Figure') plots.push(v);
    let kids = [];
    try { kids = [...v.children()]; } catch (e) { kids = []; }
    for (const c of kids) walk(c);
  };
  for (const v of Object.values(Bokeh.index)) walk(v);
  const px = (size, base) => {
    const m = /^([0-9.]+)(px|pt|em|rem)$/.exec(String(size));
    if (!m) return null;
    const x = parseFloat(m[1]);
    return Math.round(100 * (m[2] === 'px' ? x : m[2] === 'pt' ? x * 4 / 3 : x * base)) / 100;
  };
  const out = [];
  for (const v of plots) {
    const r = v.el.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0 && v.el.checkVisibility({checkVisibilityCSS: true, visibilityProperty: true}))) continue;
    const base = parseFloat(getComputedStyle(v.el).fontSize), m = v.model;
    const parts = [...m.left, ...m.right, ...m.below, ...m.above, ...m.center];
    const axes = parts.filter((x) => x.constructor.__name__.endsWith('Axis') && x.visible);
    const legends = parts.filter((x) => x.constructor.__name__ === 'Legend' && x.items.length);
    const uniq = (xs) => [...new Set(xs)];
    out.push({
      title: m.title ? m.title.text : '', width: r.width, height: r.height,
      sizes: {title: m.title ? px(m.title.text_font_size, base) : null,
              labels: uniq(axes.filter((a) => a.axis_label).map((a) => px(a.axis_label_text_font_size, base))),
              ticks: uniq(axes.map((a) => px(a.major_label_text_font_size, base))),
              legend: uniq(legends.map((l) => px(l.label_text_font_size, base)))},
      legends: legends.map((l) => {
        const view = [...v.children()].find((c) => c.model === l);
        const b = view && view.bbox;
        return {box: b ? [b.left, b.top, b.right, b.bottom] : null, spacing: l.spacing,
                rows: l.items.map((i) => Math.min(...i.renderers.map((x) => x.data_source.get_length())))};
      }),
    });
  }
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  const style = a ? getComputedStyle(a) : null;
  return {figures: out, focus: style && a.closest('.bk-Canvas, .bk-events') ? style.outlineStyle : 'none'};
}
"""


def figures(page, least: int = 1) -> dict:
    """The visible figures of ``page`` once at least ``least`` are drawn (:data:`FIGURES_JS`)."""
    page.wait_for_function(f"() => ({FIGURES_JS})().figures.length >= {least}", timeout=120_000, polling=500)
    page.wait_for_timeout(1500)  # a redraw under way settles
    return page.evaluate(FIGURES_JS)


def sizes(found: dict) -> dict:
    """The one size of each kind (title, labels, ticks, legend) shared by every figure of ``found``; fails naming the
    figures when they differ."""
    kinds = {}
    for figure in found["figures"]:
        s = figure["sizes"]
        for kind, values in (("title", [s["title"]]), ("labels", s["labels"]), ("ticks", s["ticks"]),
                             ("legend", s["legend"])):
            for value in values:
                kinds.setdefault(kind, {}).setdefault(value, []).append(figure["title"][:40])
    mixed = {kind: found for kind, found in kinds.items() if len(found) != 1}
    assert not mixed, f"figures with different text sizes (px: figures): {mixed}"
    return {kind: next(iter(found)) for kind, found in kinds.items()}


def check_legends(found: dict) -> None:
    """Every legend lies wholly inside its canvas, has a gap between entries and a row to draw each glyph from."""
    for figure in found["figures"]:
        for legend in figure["legends"]:
            left, top, right, bottom = legend["box"]
            assert left >= -1 and top >= -1 and right <= figure["width"] + 1 and bottom <= figure["height"] + 1, (
                f"legend of {figure['title']!r} at {legend['box']} is cut by its {figure['width']:.0f}×"
                f"{figure['height']:.0f} canvas")
            assert legend["spacing"] >= 4, (figure["title"], legend["spacing"])
            assert min(legend["rows"]) >= 1, f"an entry of {figure['title']!r} has no glyph: rows {legend['rows']}"


def set_presentation(page, on: bool) -> None:
    if page.evaluate("() => document.body.classList.contains('explorer-presentation')") != on:
        page.locator(".explorer-presentation-switch button").first.click()
    page.wait_for_function(f"() => document.body.classList.contains('explorer-presentation') === {str(on).lower()}")
    page.wait_for_timeout(2500)  # the figures are redrawn


def open_tab(page, title: str) -> dict:
    page.locator(".bk-tab", has_text=title).first.click()
    return figures(page)


def every_tab(page) -> dict:
    """Each tab's figures (the steps tab, open first, last, so that the page ends on it)."""
    names = [*list(PAGE_TITLES)[1:], next(iter(PAGE_TITLES))]
    return {name: open_tab(page, PAGE_TITLES[name]) for name in names}


def click_a_point(page) -> None:
    """Click the data of the step-by-step page's first figure (the nearest point becomes point i)."""
    box = page.locator(".explorer-steps-plot-data").first.bounding_box()
    page.mouse.click(box["x"] + 0.55 * box["width"], box["y"] + 0.6 * box["height"])
    page.wait_for_timeout(2500)


def move_the_slider(page) -> None:
    """One step of the S/N slider with the keyboard, as a student could."""
    page.locator(".explorer-steps-s-over-n .noUi-handle").first.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(3000)


@pytest.fixture(scope="module")
def normal(server, browser):
    """Sizes of the step-by-step page as it opens (before any resample), then after each action and on every tab."""
    page = open_page(browser, server + QUERY)
    page.locator(".explorer-sidebar").first.wait_for()
    seen = {"opened": figures(page, least=3)}
    click_a_point(page)
    seen["click"] = figures(page, least=3)
    move_the_slider(page)
    seen["slider"] = figures(page, least=3)
    page.locator(".explorer-steps-draw-10 button").first.click()
    page.wait_for_timeout(3000)
    seen["draws"] = figures(page, least=3)
    seen.update({f"tab {name}": found for name, found in every_tab(page).items()})
    preset = PRESETS[0]
    page.locator(".explorer-presets button").first.click()
    page.get_by_text(MENU_NAMES[preset.key], exact=True).first.click()  # sets every control, opens its tab
    page.locator(".bk-tab.bk-active", has_text=PAGE_TITLES[preset.tab]).first.wait_for()
    page.wait_for_timeout(3000)
    seen[f"preset {preset.key}"] = figures(page)
    link = page.url
    page.reload()
    page.locator(".explorer-sidebar").first.wait_for()
    seen["reload"] = figures(page)
    page.close()
    linked = open_page(browser, link)
    linked.locator(".explorer-sidebar").first.wait_for()
    seen["link"] = figures(linked)
    linked.close()
    return seen


@pytest.fixture(scope="module")
def presentation(server, browser):
    """Sizes of every tab in Presentation mode, and after a click and a slider change on the step-by-step page."""
    page = open_page(browser, server + QUERY)
    page.locator(".explorer-sidebar").first.wait_for()
    figures(page, least=3)
    set_presentation(page, True)
    seen = {"switched": figures(page, least=3)}
    seen.update({f"tab {name}": found for name, found in every_tab(page).items()})
    click_a_point(page)
    seen["click"] = figures(page, least=3)
    move_the_slider(page)
    seen["slider"] = figures(page, least=3)
    page.close()
    return seen


def test_a_glyph_for_every_legend_entry_before_the_first_resample(normal):
    check_legends(normal["opened"])
    assert len(normal["opened"]["figures"]) == 3


@pytest.mark.parametrize("mode", ["normal", "presentation"])
def test_every_figure_has_the_same_text_sizes_on_every_page_and_after_every_action(mode, normal, presentation):
    seen = normal if mode == "normal" else presentation
    every = {"figures": [f for found in seen.values() for f in found["figures"]]}
    shared = sizes(every)  # one size of each kind across pages and actions
    assert set(shared) == {"title", "labels", "ticks", "legend"}, shared
    for name, found in seen.items():
        check_legends(found)
        assert found["focus"] == "none", f"{name}: a focused figure has an outline ({found['focus']})"
    assert shared["legend"] >= MIN_LEGEND_PX[mode == "presentation"], shared


def test_legends_grow_with_presentation_mode_as_the_axes_do(normal, presentation):
    small = sizes({"figures": [f for found in normal.values() for f in found["figures"]]})
    large = sizes({"figures": [f for found in presentation.values() for f in found["figures"]]})
    growth = {kind: large[kind] / small[kind] for kind in small}
    assert min(growth.values()) >= MIN_GROWTH, (small, large)
    assert growth["legend"] >= 0.9 * growth["labels"], growth  # the legends as the axis labels, not left behind
