"""``explorer serve`` warms up at start unless told not to, and the page says so in its sidebar (served:
tests/browser/test_warm_up.py)."""
import pytest

from explorer.cli import build_parser

pn = pytest.importorskip("panel")


def test_serve_warms_up_by_default_and_not_with_no_warm_up(monkeypatch):
    monkeypatch.delenv("EXPLORER_WARM_UP", raising=False)
    assert build_parser().parse_args(["serve"]).warm_up is True
    assert build_parser().parse_args(["serve", "--no-warm-up"]).warm_up is False
    monkeypatch.setenv("EXPLORER_WARM_UP", "0")
    assert build_parser().parse_args(["serve"]).warm_up is False


def test_the_page_says_while_the_warm_up_runs_and_not_after(dask_engine):
    from explorer.app import create_app
    from explorer.app.warmup import WarmUp
    from explorer.views.common.layout.page import PageContext

    warm = WarmUp(PageContext(engine=dask_engine), presets=())
    app = create_app(engine=dask_engine, warm_up=warm)
    try:
        (note,) = [p for p in app.sidebar if "explorer-warm-up" in getattr(p, "css_classes", [])]
        assert note.visible and "still warming up (0 of 1 views ready)" in note.object
        warm.finished = True
        again = create_app(engine=dask_engine, warm_up=warm)
        assert not [p for p in again.sidebar if "explorer-warm-up" in getattr(p, "css_classes", [])][0].visible
        for view in again.pages.values():
            for state in view.states.values():
                state.close()
    finally:
        for view in app.pages.values():
            for state in view.states.values():
                state.close()
