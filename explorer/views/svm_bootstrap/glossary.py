"""The words of the SVM bootstrap page ([MO03b]) in the app's glossary."""

from __future__ import annotations

from explorer.views.common.layout.glossary import Entry

__all__ = ["GLOSSARY"]

#: The page's own words, after those every page shares (:data:`explorer.views.common.layout.glossary.WORDS`).
GLOSSARY = (
    Entry("Hard-margin SVM",
          "A support vector classifier that separates the two classes with the widest possible gap and no point "
          "inside it; its bootstrap error is compared with the replica theory.",
          "[MO03b]"),
)
