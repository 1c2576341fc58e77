"""The downloads every tab shares: strict JSON text of results holding numpy values and NaN, plain CSV with a
JSON settings sidecar, figure pages that open offline."""
import io
import json

import holoviews as hv
import numpy as np
import pandas as pd
import pytest

from explorer.views.common.files.exports import (
    MEDIA_TYPES,
    NAME_PART_CHARS,
    Export,
    csv_table,
    download_button,
    download_name,
    export,
    html_page,
    json_ready,
    json_text,
    settings_json,
)
from tests.views.common.offline import assert_offline_page


def test_json_text_writes_nan_as_null_and_numpy_as_python():
    payload = {"mean": np.array([0.5, np.nan]), "n": np.int64(3), "sd": np.float32(np.inf),
               "nested": {"values": (1.5, float("nan")), "name": "se"}}
    text = json_text(payload)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"mean": [0.5, None], "n": 3, "sd": None,
                                "nested": {"values": [1.5, None], "name": "se"}}
    assert type(json_ready(np.float64(2.0))) is float and type(json_ready(np.int32(2))) is int
    assert json_text({"a": 1}, indent=None) == '{"a": 1}'


def test_json_ready_writes_null_for_nan_and_python_numbers_for_numpy():
    value = {"a": np.array([1.0, np.nan, np.inf]), "b": (np.int64(3), np.float32(0.5)), "c": [{"d": -np.inf}],
             "e": "text", "f": None, "g": np.bool_(True)}
    ready = json_ready(value)
    assert ready == {"a": [1.0, None, None], "b": [3, 0.5], "c": [{"d": None}], "e": "text", "f": None, "g": True}
    assert type(ready["b"][0]) is int and type(ready["g"]) is bool
    assert json.loads(json.dumps(ready, allow_nan=False)) == ready  # strict JSON: no NaN or Infinity



def test_html_page_inlines_bokeh_and_requests_nothing_even_with_panel_loaded():
    import panel as pn  # Panel's models add an ESM shim to every bokeh.resources.INLINE page

    pn.extension()
    figure = hv.Curve(([1, 2, 3], [2, 1, 3]), label="a") * hv.Scatter(([1], [2]))
    assert_offline_page(html_page(figure, "title"))


def test_csv_table_has_one_plain_header_and_the_sidecar_holds_the_settings():
    frame = pd.DataFrame({"x": [1.0, 2.0], "label": ["a, b", "c"]})
    text = csv_table(frame)
    assert text.splitlines()[0] == "x,label"
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(text)), frame)
    sidecar = json.loads(settings_json("demo", {"seed": np.int64(3), "tol": np.nan}, ["demo.csv"]))
    assert sidecar == {"export": "demo", "files": ["demo.csv"], "settings": {"seed": 3, "tol": None}}


@pytest.mark.parametrize("parts, ext, name", [
    (("learning curve", "boston"), "csv", "learning-curve_boston.csv"),
    (("Predictive distribution", "boston", "input 17"), "csv", "predictive-distribution_boston_input-17.csv"),
    (("settings", "Learning curve", "boston"), "json", "settings_learning-curve_boston.json"),
    (("L1 map", "../../etc/passwd", ""), "html", "l1-map_etc-passwd.html"),  # no path, no empty part
    (("curves", "Ä" * 5), "csv", "curves.csv"),
])
def test_download_names_say_what_they_hold_in_safe_characters(parts, ext, name):
    assert download_name(*parts, ext=ext) == name


def test_a_long_part_is_cut():
    assert download_name("curve", "x" * 200, ext="csv") == f"curve_{'x' * NAME_PART_CHARS}.csv"


def test_a_download_button_takes_its_name_from_the_settings_when_clicked():
    state = {"what": "boston"}
    item = export("csv", "CSV", "csv", lambda s: download_name("learning curve", s["what"], ext="csv"),
                  lambda s: f"a,b\n1,{s['what']}\n")
    button = download_button(item, state, "demo-csv")
    assert button.filename == "learning-curve_boston.csv" and button.css_classes == ["demo-csv"]
    state["what"] = "toy"
    assert button.callback().getvalue() == "a,b\n1,toy\n" and button.filename == "learning-curve_toy.csv"
    assert item.media_type == "text/csv" and item.extension == "csv"
    with pytest.raises(ValueError, match="media type"):
        Export("x", "X", "text/plain", str, str)


def _declared_exports():
    """Every page's declared downloads, with the page's name."""
    from explorer.views.fast_bootstrap import exports as fast
    from explorer.views.gp_bootstrap import exports as gp
    from explorer.views.model_selection import exports as selection
    from explorer.views.svm_bootstrap import exports as svm

    for tab, items in gp.EXPORTS.items():
        yield from ((f"gp {tab}", item) for item in items)
    for page, items in (("svm", svm.EXPORTS), ("selection", selection.EXPORTS),
                        ("selection experiments", selection.EXPERIMENT_EXPORTS), ("fast", fast.EXPORTS)):
        yield from ((page, item) for item in items)


def test_every_page_declares_its_downloads_in_one_protocol():
    """One declaration per download (name, label, media type, file name and text as functions of the state): the
    label names the media type's format, the name is unique on its page and starts with the extension."""
    seen = set()
    for page, item in _declared_exports():
        assert isinstance(item, Export) and item.media_type in MEDIA_TYPES.values()
        assert f"({item.extension.upper()})" in item.label and item.name.split("-")[0] == item.extension, (page, item)
        assert (page, item.name) not in seen
        seen.add((page, item.name))
        assert callable(item.filename) and callable(item.text)
