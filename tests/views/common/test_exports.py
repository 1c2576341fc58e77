"""The downloads every tab shares: strict JSON text of results holding numpy values and NaN."""
import json

import numpy as np

from explorer.views.common.exports import json_ready, json_text


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
