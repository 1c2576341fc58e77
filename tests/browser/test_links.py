"""Every view is a link, in a real browser: set controls of the SVM, Model selection and Fast bootstrap tabs,
read the page URL, open it in a new page, and find the same tab open with the same values."""

from __future__ import annotations

import re

import pytest

from tests.conftest import type_value

pytestmark = pytest.mark.browser

CASES = {
    # tab in the URL, its title, prefix of its CSS classes and of its query, (control, kind, value)
    "svm": ("SVM bootstrap", "explorer-svm", "svm_", [("dataset", "select", "pima"), ("lengthscale", "input", "1.5")]),
    "selection": ("Model selection", "explorer-selection", "sel_",
                  [("dataset", "select", "toy"), ("n-points", "input", "40")]),
    "fastboot": ("Fast bootstrap", "explorer-fastboot", "fb_", [("model", "select", "rbfn"), ("seed", "input", "3")]),
}


def _set(page, css: str, kind: str, value: str) -> None:
    element = page.locator(f".{css} {kind}").first
    if kind == "select":
        element.select_option(value)
    else:
        type_value(element, value)


def _read(page, css: str, kind: str) -> str:
    return page.locator(f".{css} {kind}").first.input_value()


@pytest.mark.parametrize("tab", list(CASES))
def test_a_link_reopens_the_tab_with_its_values(server, browser, tab):
    title, prefix, query_prefix, controls = CASES[tab]
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(120_000)
    page.goto(server)
    page.locator(".bk-tab", has_text=title).first.click()
    page.wait_for_function(f"() => /[?&]tab={tab}(&|$)/.test(window.location.href)")
    for name, kind, value in controls:
        _set(page, f"{prefix}-{name}", kind, value)
        query = query_prefix + name.replace("-", "_")
        page.wait_for_function(f"() => /[?&]{re.escape(query)}={re.escape(value)}(\\.0)?(&|$)/"
                               ".test(window.location.href)")
    link = page.url
    page.close()

    again = browser.new_page(viewport={"width": 1400, "height": 900})
    again.set_default_timeout(120_000)
    again.goto(link)
    again.locator(".bk-tab.bk-active", has_text=title).first.wait_for()
    for name, kind, value in controls:
        css = f"{prefix}-{name}"
        again.locator(f".{css} {kind}").first.wait_for(state="visible")
        assert _read(again, css, kind) in (value, value + ".0"), (name, link)
    again.close()
