"""Pages as peers: every paper's views have the same files, a page is declared once in the registry, and the app,
the links and the presets know pages only through it."""

import ast
from pathlib import Path

import pytest

pytest.importorskip("panel")

from explorer.views.common.layout.page import Page, PageContext, PageView  # noqa: E402
from explorer.views.pages import PAGE_TITLES, PAGES, PRESETS, STATE_LABELS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
VIEWS = ROOT / "explorer" / "views"
#: The files every page folder has.
PAGE_SHAPE = {"__init__.py", "state.py", "figures.py", "tab.py", "presets.py", "errors.py", "page.py"}
PAPER_PACKAGES = ("gp_bootstrap", "svm_bootstrap", "model_selection", "fast_bootstrap")


def _page_folders() -> list[Path]:
    return sorted(p for p in VIEWS.iterdir() if p.is_dir() and p.name != "common" and (p / "page.py").exists())


def test_every_page_folder_has_the_same_files():
    folders = _page_folders()
    assert {p.name for p in folders} >= set(PAPER_PACKAGES)
    for folder in folders:
        # a module, or a package of modules (the GP page's figures, one per figure)
        have = {p.name for p in folder.glob("*.py")} | {f"{p.parent.name}.py" for p in folder.glob("*/__init__.py")}
        missing = PAGE_SHAPE - have
        assert not missing, f"{folder.name} lacks {sorted(missing)}"


def test_each_page_folder_declares_one_page_and_the_registry_lists_each_once():
    import importlib

    declared = [importlib.import_module(f"explorer.views.{folder.name}.page").PAGE for folder in _page_folders()]
    assert all(isinstance(page, Page) for page in declared)
    assert sorted(id(p) for p in declared) == sorted(id(p) for p in PAGES)
    assert len({p.key for p in PAGES}) == len(PAGES)


def test_tab_names_prefixes_and_preset_keys_are_unique_across_pages():
    names = [name for page in PAGES for name in page.tabs]
    prefixes = [prefix for page in PAGES for prefix in page.states]
    assert len(names) == len(set(names)) == len(PAGE_TITLES)
    assert len(prefixes) == len(set(prefixes)) == len(STATE_LABELS)
    keys = [p.key for p in PRESETS]
    assert len(keys) == len(set(keys))
    for page in PAGES:  # a page's presets open its own tabs and set its own states only
        for p in page.presets:
            assert p.tab in page.tabs and set(p.settings) <= set(page.states), p.key


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("module", ["app/__init__.py", "views/common/state/links.py", "views/common/state/presets.py",
                                    "views/common/layout/page.py", "views/common/layout/tab.py"])
def test_the_app_links_and_presets_name_no_paper(module):
    imported = _imported_modules(ROOT / "explorer" / module)
    papers = [m for m in imported if any(f".{paper}" in m for paper in PAPER_PACKAGES)]
    assert papers == [], f"{module} imports {papers}"


def test_nothing_in_the_app_reads_a_private_attribute_of_panel_tabs():
    for path in [*(ROOT / "explorer" / "app").rglob("*.py"), *VIEWS.rglob("*.py")]:
        assert "._names" not in path.read_text(), path


def test_each_page_builds_its_states_under_its_prefixes_and_its_tabs_in_order():
    for page in PAGES:
        view = page.view(PageContext())
        try:
            assert isinstance(view, PageView) and list(view.states) == list(page.states)
            assert [title for title, _ in view.tab_items()] == list(page.tabs.values())
        finally:
            for state in view.states.values():
                state.close()


def test_settings_reach_the_state_of_their_prefix():
    from explorer.views.svm_bootstrap.page import PAGE as SVM

    view = SVM.view(PageContext(settings={"svm_dataset": "pima", "dataset": "toy"}))
    try:
        assert view.states["svm_"].dataset == "pima"
    finally:
        view.states["svm_"].close()
