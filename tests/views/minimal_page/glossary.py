"""The minimal page's words in the app's glossary."""
from __future__ import annotations

from explorer.views.common.layout.glossary import Entry

__all__ = ["GLOSSARY"]

GLOSSARY = (Entry("Minimal page", "A page of the test folder that lists squares: the smallest page the app takes.",
                  "—"),)
