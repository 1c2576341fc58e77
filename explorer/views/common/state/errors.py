"""What every page says when its core or its data fails: one table of wordings, one function that picks one.

A job or a control that meets an expected error (:attr:`~explorer.views.common.state.jobs.JobHooks.expected_errors`)
shows a sentence, never a traceback. Each page words the errors of its own core in its own vocabulary (the advice
names that page's controls) in its folder (``explorer/views/<page>/errors.py``, ``WORDING``: a tuple of
:class:`Wording`, first match wins); after them comes what every page says (:data:`COMMON`). ``{err}`` stands for the
error's own message. This module knows no page.

Where a tab shows them: over its main figure (:func:`over_figure`), in the first screen. An error covers the figure
(nothing of other settings or another data set shows beside it); a notice lies over the figure's top edge, with a
button that hides it until its text changes. Appearing, neither moves the figure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import panel as pn

from explorer.datasets import DatasetError
from explorer.runtime.engine import EngineError

__all__ = ["Wording", "COMMON", "describe_error", "over_figure", "OVER_FIGURE_CSS"]


@dataclass(frozen=True)
class Wording:
    """The sentence for errors of type ``kind`` (and, if given, for which ``when(err)`` holds)."""

    kind: type[BaseException]
    text: str
    when: Callable[[BaseException], bool] | None = None

    def fits(self, err: BaseException) -> bool:
        """Whether this wording is the one for ``err``."""
        return isinstance(err, self.kind) and (self.when is None or self.when(err))


#: What every page says after its own wordings: bad data, a message the core or the engine wrote for the user
#: (ValueError, the Dask engine's errors), anything else with its type.
COMMON = (Wording(DatasetError, "The data cannot be used: {err}"),
          Wording(ValueError, "{err}"),
          Wording(EngineError, "{err}"),
          Wording(BaseException, "{type}: {err}"))

def describe_error(err: BaseException, wordings: Sequence[Wording] = ()) -> str:
    """The sentence a page shows for ``err``: the first of the page's own ``wordings`` (its folder's
    ``errors.WORDING``) that fits, else the first of :data:`COMMON`."""
    wording = next(w for w in (*wordings, *COMMON) if w.fits(err))  # COMMON ends with any error
    return wording.text.format(err=err, type=type(err).__name__)


#: The CSS classes of :func:`over_figure`: the box of the figure and its messages, the messages' layer over it and
#: the notice's "Hide" button (browser tests measure them against the screen and the figure).
OVER_FIGURE_CSS = {"figure": "explorer-figure-messages", "layer": "explorer-over-figure",
                   "hide": "explorer-hide-notice"}
#: The messages' layer while an error shows: the whole figure, covered (its axes belong to no data).
_COVER = {"position": "absolute", "top": "0", "left": "0", "width": "100%", "height": "100%", "z-index": "5",
          "box-sizing": "border-box", "background": "var(--background-color, #fff)", "padding": "40px 8% 0 8%",
          "max-height": "none", "overflow-y": "auto"}
#: While only a notice shows: a band over the top of the figure (its title), at most half of its height.
_BAND = {"position": "absolute", "top": "4px", "left": "6%", "width": "88%", "height": "auto", "z-index": "5",
         "box-sizing": "border-box", "background": "transparent", "padding": "0", "max-height": "50%",
         "overflow-y": "auto"}


def over_figure(figure, error: pn.pane.Alert | None = None, notice: pn.pane.Alert | None = None) -> pn.Column:
    """``figure`` with a tab's ``error`` and ``notice`` alerts (hidden while empty) over it.

    An error covers the whole figure, its message at the top (a refused upload: no axes of the data shown
    before); a notice lies over the figure's top edge, with a "Hide" button that hides it until its text changes.
    Either sits in the first screen beside the figure it concerns, and neither moves the figure (figure first,
    CONTRIBUTING.md): the layer is positioned over it, out of the page's flow.
    """
    hide = pn.widgets.Button(label="Hide", color="light", width=70, align="center",
                             css_classes=[OVER_FIGURE_CSS["hide"]])
    shown = [alert for alert in (error, notice) if alert is not None]
    row = pn.Row(notice, hide, sizing_mode="stretch_width") if notice is not None else None
    layer = pn.Column(*[error] if error is not None else [], *[row] if row is not None else [],
                      css_classes=[OVER_FIGURE_CSS["layer"]], styles=_BAND)
    hidden = {"text": None}  # the notice text the user hid

    def update(*events) -> None:
        failing = error is not None and error.visible
        noticed = notice is not None and notice.visible and notice.object != hidden["text"]
        if row is not None:
            row.visible = noticed
        layer.param.update(styles=_COVER if failing else _BAND, visible=failing or noticed)

    def hide_notice(event) -> None:
        hidden["text"] = notice.object
        update()

    hide.on_click(hide_notice)
    for alert in shown:
        alert.param.watch(update, ["visible", "object"])
    update()
    return pn.Column(figure, layer, styles={"position": "relative"}, sizing_mode="stretch_width",
                     css_classes=[OVER_FIGURE_CSS["figure"]])
