"""A page is a folder and one line (issue 51, item 2): ``explorer/views/common`` imports no page, each page keeps its
error wordings, presets and glossary entries in its own folder, and a page defined in the test folder
(``tests/views/minimal_page``) joins the served app by one line in the registry (``explorer/views/pages.py``):
its tab, its preset, its glossary entry and its own error wording show, and nothing else of the app was changed."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import free_port, wait_for_http

ROOT = Path(__file__).resolve().parents[2]
VIEWS = ROOT / "explorer" / "views"
#: The page folders of explorer/views (every folder with a page.py), by name.
PAGE_FOLDERS = sorted(p.parent.name for p in VIEWS.glob("*/page.py"))


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports, at any depth (a function's imports too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


def test_no_module_of_views_common_imports_a_page():
    assert len(PAGE_FOLDERS) >= 5, PAGE_FOLDERS  # the folders are found
    pages = tuple(f"explorer.views.{name}" for name in (*PAGE_FOLDERS, "pages"))  # a page, or the registry of them
    found = {f"{path.relative_to(ROOT)}: {module}" for path in (VIEWS / "common").rglob("*.py")
             for module in _imports(path) if module.startswith(pages)}
    assert found == set()


def test_each_page_keeps_its_wordings_presets_and_glossary_in_its_folder():
    from explorer.views.pages import PAGES

    for page in PAGES:
        folder = page.build.__module__.rsplit(".", 1)[0]  # explorer.views.<folder>
        assert all(type(p).__module__ == "explorer.views.common.state.presets" for p in page.presets)
        own = sys.modules[f"{folder}.page"].__dict__
        assert own.get("PRESETS", ()) == page.presets and own.get("GLOSSARY", ()) == page.glossary, folder
    states = {"gp": "explorer.views.gp_bootstrap", "svm": "explorer.views.svm_bootstrap",
              "selection": "explorer.views.model_selection", "fastboot": "explorer.views.fast_bootstrap",
              "steps": "explorer.views.step_by_step"}
    assert {page.key for page in PAGES} == set(states)
    for key, folder in states.items():
        errors = __import__(f"{folder}.errors", fromlist=["WORDING"])
        state_module = __import__(f"{folder}.state", fromlist=["*"])
        owners = [v for v in vars(state_module).values() if isinstance(v, type) and v.__module__ == state_module.__name__
                  and getattr(v, "error_wordings", None) is not None]
        assert owners and all(cls.error_wordings is errors.WORDING for cls in owners), (key, owners)


def test_the_registry_takes_the_minimal_page_with_one_line():
    from tests.views.minimal_page import serve

    before = (ROOT / "explorer" / "views" / "pages.py").read_text(encoding="utf-8").splitlines()
    after = serve.registry_with_the_minimal_page().splitlines()
    added = [line for line in after if line not in before]
    changed = [line for line in before if line not in after]
    assert len(changed) == 1 and changed[0].startswith("PAGES: tuple[Page, ...] = (")  # the PAGES line
    assert [line for line in added if line] == [serve.IMPORT, changed[0][:-1] + ", MINIMAL)"]  # and its import


def test_the_minimal_page_s_state_words_its_errors_itself():
    from tests.views.minimal_page.state import MinimalState

    state = MinimalState()
    state.refresh()
    assert state.squares == (1, 4, 9, 16) and state.error == ""
    state.count = 7
    assert state.error.startswith("The minimal page cannot list these squares (seven is unlucky)")
    state.close()


@pytest.fixture(scope="module")
def served(browser):
    """The app, served with the registry plus the minimal page (``minimal_page/serve.py``); yields its URL."""
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "views" / "minimal_page" / "serve.py"),
                                 str(port)], stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        url = f"http://127.0.0.1:{port}/"
        wait_for_http(url, proc, log=log)
        yield url
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.browser
def test_a_page_of_the_test_folder_is_served_with_its_tab_preset_glossary_and_error(served, browser):
    from tests.conftest import console_errors, new_page

    page = new_page(browser)
    errors = console_errors(page)
    page.goto(served + "?tab=minimal")
    page.locator(".explorer-minimal-squares", has_text="Squares: 1, 4, 9, 16").first.wait_for()
    assert page.locator(".bk-tab", has_text="Minimal page").count() >= 1
    page.locator(".explorer-minimal-count input").first.fill("7")
    page.locator(".explorer-minimal-count input").first.press("Enter")
    page.locator(".explorer-minimal-error", has_text="The minimal page cannot list these squares").first.wait_for()
    page.locator(".explorer-presets button").first.click()  # the header's "Reproduce a figure" menu lists its preset
    page.get_by_text("The test folder, a minimal page — Three squares", exact=True).first.click()
    page.locator(".explorer-minimal-squares", has_text="Squares: 1, 4, 9").first.wait_for()
    page.locator(".explorer-glossary-button button").first.click()
    page.locator(".explorer-glossary", has_text="A page of the test folder that lists squares").first.wait_for(
        state="visible")
    page.close()
    assert errors == []
