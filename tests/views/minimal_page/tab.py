"""The minimal page's tab: its squares in one line."""
from __future__ import annotations

import panel as pn
import param

from explorer.views.common.layout.tab import JobTab
from explorer.views.common.layout.widgets import declared_sidebar
from tests.views.minimal_page.state import MinimalState

__all__ = ["MinimalTab"]


class MinimalTab(JobTab):
    """The squares of a :class:`MinimalState` (CSS class ``explorer-minimal-squares``)."""

    state = param.ClassSelector(class_=MinimalState, label="State", doc="The session state shown.")
    css_prefix = "explorer-minimal"

    def __init__(self, **params):
        super().__init__(**params)
        self.squares = pn.pane.Markdown(pn.bind(self._text, self.state.param.squares),
                                        css_classes=["explorer-minimal-squares"])

    @staticmethod
    def _text(squares) -> str:
        return "Squares: " + (", ".join(map(str, squares)) if squares else "none yet")

    def control_column(self) -> pn.Column:
        return declared_sidebar(self.state, self.widgets, sizing_mode="stretch_width")

    def content(self) -> pn.viewable.Viewable:
        return self.frame(self.squares)
