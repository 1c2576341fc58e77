"""The header's "Reproduce a figure" menu at 1280×720, normal and Presentation mode, in headless Chromium (issue 36):
every entry on one line, the whole list within the screen (scrolling inside it), the button's label clear of its
caret."""

from __future__ import annotations

import pytest

from tests.conftest import open_page

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720


def _presentation(page, on: bool) -> None:
    if page.evaluate("() => document.body.classList.contains('explorer-presentation')") != on:
        page.locator(".explorer-presentation-switch button").first.click()
    page.wait_for_function(f"() => document.body.classList.contains('explorer-presentation') === {str(on).lower()}")


def _inside(box: dict) -> bool:
    return box["x"] >= -1 and box["y"] >= -1 and box["x"] + box["width"] <= WIDTH + 1 \
        and box["y"] + box["height"] <= HEIGHT + 1


@pytest.mark.parametrize("presentation", [False, True], ids=["normal", "presentation"])
def test_the_presets_menu_shows_one_line_entries_within_the_screen(server, browser, presentation):
    page = open_page(browser, server + "?tab=curve", WIDTH, HEIGHT)
    button = page.locator(".explorer-presets .bk-btn").first
    button.wait_for()
    _presentation(page, presentation)
    page.wait_for_timeout(500)
    # the label and the caret fit the button (in Presentation mode the label ran into the caret)
    assert button.evaluate("e => e.scrollWidth <= e.clientWidth"), button.evaluate("e => [e.scrollWidth, e.clientWidth]")
    button.click()
    menu = page.locator(".explorer-presets .bk-Menu").first
    menu.wait_for()
    page.wait_for_timeout(300)
    box = menu.bounding_box()
    assert _inside(box), box
    items = page.locator(".explorer-presets .bk-Menu .bk-item")
    heights = [items.nth(i).bounding_box()["height"] for i in range(items.count())]
    print(f"{'presentation' if presentation else 'normal'}: menu {box}, {len(heights)} entries of height "
          f"{min(heights):.0f}-{max(heights):.0f} px")
    assert len(heights) >= 17 and max(heights) <= min(heights) + 2, heights  # none wraps onto a second line
    items.nth(items.count() - 1).scroll_into_view_if_needed()  # the last entry: reached by scrolling the menu
    assert _inside(items.nth(items.count() - 1).bounding_box()) and _inside(menu.bounding_box())
    page.close()
