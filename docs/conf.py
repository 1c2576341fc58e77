"""Sphinx configuration of the Resampling Explorer documentation.

Build (offline, no warning): ``sphinx-build -W -b html docs docs/_build/html``. Nothing is fetched from the
internet: no intersphinx, the theme's assets are local and mathematics is typeset by the KaTeX that Panel (a
dependency of the package) ships (``_ext/katex_local.py``). The notebooks of ``../notebooks`` are rendered as
stored, without execution (``nb_execution_mode = "off"``); ``docs/notebooks`` is a symbolic link to them.
"""

from __future__ import annotations

import inspect
import os
import sys
from importlib.metadata import version as _version

sys.path.insert(0, os.path.abspath("_ext"))


def _write_glossary() -> None:
    """``user_guide/glossary.md`` from the app's glossary (:func:`explorer.views.pages.glossary_page`),
    rewritten when it differs, so the site's glossary is the app's text (tests/test_doc_examples.py checks the
    committed page is up to date, for readers of the repository)."""
    from explorer.views.pages import glossary_page

    page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "user_guide", "glossary.md")
    text = glossary_page()
    if not os.path.isfile(page) or open(page, encoding="utf-8").read() != text:
        with open(page, "w", encoding="utf-8") as handle:
            handle.write(text)


_write_glossary()

project = "Resampling Explorer"
author = "The Resampling Explorer developers"
copyright = "2026, " + author  # noqa: A001 (Sphinx's name)
release = _version("resampling-explorer")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "sphinx_design",
    "katex_local",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "notebooks/*.html", "notebooks/*.j2", "screenshots/README*"]
templates_path = ["_templates"]
today_fmt = "%Y"  # deterministic builds: no date of the day in the pages
language = "en"

# -- API reference ------------------------------------------------------------------------------------------------
autosummary_generate = True
autosummary_ignore_module_all = True   # a module's page shows what the module itself defines (no re-exports twice)
autosummary_imported_members = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"              # the numpydoc sections carry the types
autodoc_preserve_defaults = True        # signatures show ``rng=None``, not the repr of a default object

numpydoc_show_class_members = False     # autodoc documents the members; numpydoc's tables would repeat them
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# -- MyST and notebooks ---------------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "off"               # the notebooks are executed by the test suite (nbmake), not by the docs build
nb_merge_streams = True

# -- HTML -------------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "Resampling Explorer"
html_static_path: list[str] = []
html_math_renderer = "katex_local"     # _ext/katex_local.py: KaTeX from Panel, no CDN
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "collapse_navigation": True,        # the sidebar of the ~130 API pages shows the open branch only (faster build)
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}


def _skip_aliases(app, what: str, name: str, obj: object, skip: bool, options: object) -> bool | None:
    """Skip a module attribute that is a bound method of an object of another module (``lru = registry.lru`` in
    the views' state modules): an alias, documented where its object is defined, whose signature autodoc cannot
    format as a module-level function."""
    if what == "module" and inspect.ismethod(obj):
        return True
    # scikit-learn puts its metadata-routing methods (``set_fit_request``, ...) on every estimator class; they are
    # scikit-learn's, documented there, and their docstrings cite scikit-learn's glossary.
    if what == "class" and getattr(obj, "__module__", "").startswith("sklearn."):
        return True
    return None


def setup(app) -> None:
    app.connect("autodoc-skip-member", _skip_aliases)
