"""The words of the model-selection page ([Fis16]) in the app's glossary."""

from __future__ import annotations

from explorer.views.common.layout.glossary import Entry

__all__ = ["GLOSSARY"]

#: The page's own words, after those every page shares (:data:`explorer.views.common.layout.glossary.WORDS`).
GLOSSARY = (
    Entry("ASC (approximation set coding)",
          "A model-selection criterion: the model wins whose posteriors, computed from two data sets of the same "
          "source, agree the most (their posterior agreement, a mutual information at a resolution β). Compared "
          "with the evidence and cross-validation.",
          "[Fis16]"),
)
