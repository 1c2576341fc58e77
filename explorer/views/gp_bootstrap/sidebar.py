"""The sidebar of the Gaussian-process page: the data, model and bootstrap controls of a
:class:`~explorer.views.gp_bootstrap.state.GPBootstrapState`, each visible while it applies (its declaration)."""

from __future__ import annotations

import panel as pn
import param

from explorer.views.common.layout.widgets import (
    csv_upload,
    declared_sidebar,
    declared_widgets,
    respond_at_once,
    show_applicable,
)
from explorer.views.common.state.declarations import applies, control_names
from explorer.views.gp_bootstrap.state import GPBootstrapState

__all__ = ["GPControls"]



class GPControls(pn.viewable.Viewer):
    """The sidebar: data, model and bootstrap settings of a :class:`GPBootstrapState`."""

    state = param.ClassSelector(class_=GPBootstrapState, label="State", doc="The session state the controls edit.")

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        # the widgets, groups, order and visibility rules are the state's declarations of its controls
        w = declared_widgets(s, "explorer")
        respond_at_once(w["s_over_n"])
        self.upload = csv_upload("explorer-upload", s.upload_csv, on_refused=s.refuse)
        self.widgets = w
        # each visible while it applies (its declaration); the lengthscale also hides for ARD (_update_visibility)
        self._applicable = show_applicable(s, {name: x for name, x in w.items() if name != "lengthscale"})
        s.param.watch(self._update_visibility, [*control_names(s), "error"])  # rank: the data as loaded
        self._update_visibility()
        upload = [pn.pane.Markdown("Upload a CSV (header row, numeric columns):", margin=(0, 10)), self.upload]
        self._column = declared_sidebar(s, w, inserts={"dataset": upload}, css_classes=["explorer-controls"],
                                        sizing_mode="stretch_width")

    def _update_visibility(self, *events) -> None:
        """Each control visible while it applies (its declaration, also after a change of the data's ``error``);
        with ARD the kernel has one ℓ per input (the note lists them): no single lengthscale to set."""
        s, w = self.state, self.widgets
        self._applicable()
        w["lengthscale"].visible = applies(s, "lengthscale") and not (w["ard"].visible and s.ard)

    def __panel__(self):
        return self._column
