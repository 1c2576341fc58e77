"""The S/N control answers without Panel's 50 ms wait, through the one workaround in ``explorer/runtime/compat.py``
(``handle_changes_at_once``): Panel still waits 50 ms by default (the upstream behaviour; when this test fails, Panel
changed and the workaround goes), an ``EditableFloatSlider``'s parts are the ones that receive the browser's changes,
and outside the tested range of Panel nothing is changed."""
from __future__ import annotations

import logging

import panel as pn

from explorer.runtime import compat
from explorer.views.common.layout.widgets import respond_at_once


def test_panel_waits_50_ms_before_it_handles_a_change_from_the_browser():
    assert pn.widgets.FloatInput()._debounce == 50
    slider = pn.widgets.EditableFloatSlider(start=0, end=1)
    assert [part._debounce for part in (slider, slider._slider, slider._value_edit)] == [50, 50, 50]


def test_a_widget_that_responds_at_once_has_no_wait_in_any_part_and_the_others_keep_panels():
    slider = respond_at_once(pn.widgets.EditableFloatSlider(start=0, end=1))
    assert [part._debounce for part in (slider, slider._slider, slider._value_edit)] == [0, 0, 0]
    plain = respond_at_once(pn.widgets.IntInput())
    assert plain._debounce == 0 and pn.widgets.IntInput()._debounce == 50


def test_outside_the_tested_range_of_panel_the_widget_keeps_panels_wait(monkeypatch, caplog):
    monkeypatch.setitem(compat.TESTED, "panel", ((0, 1), (0, 2)))
    with caplog.at_level(logging.WARNING, logger=compat.__name__):
        slider = respond_at_once(pn.widgets.EditableFloatSlider(start=0, end=1))
    assert slider._slider._debounce == 50 and "outside the range" in caplog.text
    assert compat.drawn_plots(pn.pane.HoloViews()) == []
