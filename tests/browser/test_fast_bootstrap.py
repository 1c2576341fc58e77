"""The Fast bootstrap tab of the served app in a real headless browser (as ``test_browser.py``: Debian's
chromium driven by Playwright's Python package).

Serves ``explorer serve`` on a free port, lets the (small) learning-curve tab finish, opens the Fast bootstrap tab, switches the model to the RBFN and back
to the LS-SVM (the grids follow Table 1), lowers the replication counts, waits for the fast and the full
bootstrap, the summary table and the figures, checks that the browser console shows no errors and saves a
screenshot to ``artifacts/``. Skips when chromium or Playwright is missing, unless
``EXPLORER_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import console_errors, new_page, save_screenshot, type_value

pytestmark = pytest.mark.browser


def test_fast_bootstrap_tab_runs_in_the_browser_without_console_errors(server, browser):
    page = new_page(browser, 1400, 1100)
    errors = console_errors(page)
    page.on("requestfailed", lambda req: errors.append("FAILED " + req.url))

    # a small learning-curve tab, and let its jobs finish before leaving it (the CPU is then the fast bootstrap's)
    page.goto(server + "?dataset=teacher&tab=curve&curve_mc_samples=20")
    page.locator(".explorer-job-message-curve pre", has_text="done").first.wait_for(timeout=180_000)
    page.locator(".bk-tab", has_text="Fast bootstrap").first.click()
    page.locator(".explorer-fastboot-job-message-fast pre", has_text="Fast bootstrap").first.wait_for()

    # the RBFN: its grids (Table 1: 10..19 kernels) replace the LS-SVM's γ grid
    page.locator(".explorer-fastboot-model select").first.select_option("rbfn")
    page.locator(".explorer-fastboot-status", has_text="number of Gaussian kernels").first.wait_for()
    assert page.locator(".explorer-fastboot-full-start input").first.input_value() in ("10", "10.0")
    # back to the LS-SVM with few replications (seconds, even on a loaded machine)
    page.locator(".explorer-fastboot-model select").first.select_option("ls-svm")
    page.locator(".explorer-fastboot-status", has_text="regularization parameter").first.wait_for()
    type_value(page.locator(".explorer-fastboot-full-replications input").first, "10")
    type_value(page.locator(".explorer-fastboot-fast-replications input").first, "4")
    type_value(page.locator(".explorer-fastboot-replica-points input").first, "8")

    page.locator(".explorer-fastboot-job-message-fast pre", has_text="Fast bootstrap done").first.wait_for(timeout=180_000)
    page.locator(".explorer-fastboot-job-message-full pre", has_text="Full bootstrap done").first.wait_for(timeout=180_000)
    # the new counts reached the table: 4 × 10 reduced-grid models (fast), 10 × 451 γ values (full)
    for count in ("40", "4510"):
        page.locator(".explorer-fastboot-summary td").filter(has_text=re.compile(f"^{count}$")).first.wait_for(
            timeout=180_000)
    page.locator(".explorer-fastboot-summary th", has_text="fast bootstrap").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-summary th", has_text="full bootstrap").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-summary th", has_text="models_trained").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-status", has_text="fast bootstrap selects").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-plot-optimism canvas").first.wait_for(timeout=30_000)
    page.locator(".explorer-fastboot-plot-generalization canvas").first.wait_for(timeout=30_000)
    assert not page.locator(".explorer-fastboot-error").first.is_visible()

    save_screenshot(page, "browser-fastboot.png")
    assert errors == [], "\n".join(errors)
    page.close()
