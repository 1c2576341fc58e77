"""The words of the fast-bootstrap page ([LSWV05]) in the app's glossary."""

from __future__ import annotations

from explorer.views.common.layout.glossary import Entry

__all__ = ["GLOSSARY"]

#: The page's own words, after those every page shares (:data:`explorer.views.common.layout.glossary.WORDS`).
GLOSSARY = (
    Entry("Fast bootstrap",
          "A cheaper bootstrap for choosing a model's complexity: the optimism (test minus training error) is "
          "computed at a few complexities and fitted by a low-order polynomial, checked by an F test.",
          "[LSWV05] eqs. 8-11"),
)
