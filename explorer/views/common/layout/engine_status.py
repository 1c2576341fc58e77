"""Where the page's Monte-Carlo runs, said on the page: the Dask engine's description and its dashboard link.

One small pane for the page header or sidebar (CSS class ``explorer-engine``); an unreachable scheduler is a
danger alert (``explorer-engine-error``) instead: the page still opens, and its jobs show the same error.
"""

from __future__ import annotations

import html

import panel as pn

from explorer.runtime import engine as dask_engine

__all__ = ["engine_text", "engine_status"]


def engine_text(engine: dask_engine.Engine) -> str:
    """HTML of one line: "Monte-Carlo runs on: <description>", and the Dask dashboard link if there is one."""
    text = f"Monte-Carlo runs on: {html.escape(engine.description)}"
    if engine.cluster is None:  # a scheduler address: say how many workers it has right now
        n = engine.n_workers
        text += f" ({n} worker{'s' if n != 1 else ''})"
    link = engine.dashboard_link
    if link:
        text += (f" · <a href='{html.escape(link, quote=True)}' target='_blank' rel='noopener'>"
                 "Dask dashboard</a>")
    return f"<small>{text}</small>"


def engine_status(engine: dask_engine.Engine | None = None) -> pn.pane.HTML | pn.pane.Alert:
    """The pane saying where Monte-Carlo runs (``engine``; default the process's shared engine).

    If the shared engine cannot start (``$EXPLORER_SCHEDULER`` unreachable) the pane is an alert with the
    engine's one-line message.
    """
    try:
        engine = engine if engine is not None else dask_engine.shared_engine()
        text = engine_text(engine)
    except dask_engine.EngineError as err:
        return pn.pane.Alert(str(err), alert_type="danger", css_classes=["explorer-engine-error"],
                             sizing_mode="stretch_width")
    return pn.pane.HTML(text, css_classes=["explorer-engine"], sizing_mode="stretch_width")
