"""The registry of the app's pages, in the order of the tab bar: the one place a page is listed.

Each paper's views live in one folder of the same shape (``state``, ``figures``, ``tab``, ``presets``, ``errors``,
``glossary``, ``page``); its ``page.PAGE`` declares the page once (:class:`~explorer.views.common.layout.page.Page`):
its tabs, states, presets and glossary entries, and its state words its errors (``errors.WORDING``). The app
(:func:`explorer.app.create_app`), the links, the "Reproduce a figure" menu, the glossary and the sidebar iterate over
:data:`PAGES`; ``explorer/views/common`` knows no page. Adding a page: a new folder and one line here (its ``PAGE``
in :data:`PAGES`, with its import); ``tests/views/test_a_page_is_a_folder.py`` serves a page of the test folder so.
"""

from __future__ import annotations

import re

from explorer.views.common.layout import glossary
from explorer.views.common.layout.page import Page
from explorer.views.common.state.presets import Preset, PresetError
from explorer.views.fast_bootstrap.page import PAGE as FAST_BOOTSTRAP
from explorer.views.gp_bootstrap.page import PAGE as GP_BOOTSTRAP
from explorer.views.model_selection.page import PAGE as MODEL_SELECTION
from explorer.views.step_by_step.page import PAGE as STEP_BY_STEP
from explorer.views.svm_bootstrap.page import PAGE as SVM_BOOTSTRAP

__all__ = ["PAGES", "PAGE_TITLES", "STATE_LABELS", "PRESETS", "MENU_NAMES", "GLOSSARY", "preset", "glossary_page"]

PAGES: tuple[Page, ...] = (STEP_BY_STEP, GP_BOOTSTRAP, SVM_BOOTSTRAP, MODEL_SELECTION, FAST_BOOTSTRAP)

#: Every tab of the page: its URL name (``?tab=…``) and its title on the tab bar, in order.
PAGE_TITLES: dict[str, str] = {name: title for page in PAGES for name, title in page.tabs.items()}
#: Every state of the page: its URL prefix and what the page calls it.
STATE_LABELS: dict[str, str] = {prefix: label for page in PAGES for prefix, label in page.states.items()}
#: Every "Reproduce a figure" preset, page by page.
PRESETS: tuple[Preset, ...] = tuple(p for page in PAGES for p in page.presets)
#: The app's glossary: the words every page shares, then each page's own, page by page.
GLOSSARY: tuple[glossary.Entry, ...] = (*glossary.WORDS, *(entry for page in PAGES for entry in page.glossary))
#: Each preset's name in the menu: its paper in plain words, then the figure ("Malzahn & Opper 2005, GP bootstrap —
#: Fig. 1 left: square-loss learning curve, boston").
_PAPER_KEY = re.compile(r"^\[\w+\] ")  # a preset's name starts with its paper's key: the menu names the page's citation instead
MENU_NAMES: dict[str, str] = {p.key: f"{page.citation} — {_PAPER_KEY.sub('', p.name)}"
                              for page in PAGES for p in page.presets}


def preset(key: str) -> Preset:
    """The preset named ``key``.

    Raises
    ------
    PresetError
        If no page has a preset ``key``.
    """
    found = {p.key: p for p in PRESETS}
    if key not in found:
        raise PresetError(f"There is no preset {key!r}; the presets are {', '.join(found)}.")
    return found[key]


def glossary_page() -> str:
    """The documentation's glossary page of the app's :data:`GLOSSARY` (``docs/user_guide/glossary.md``, written by
    ``docs/conf.py``)."""
    return glossary.glossary_page(GLOSSARY)
