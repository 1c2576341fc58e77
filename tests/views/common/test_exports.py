"""The exports every tab shares: values made ready for JSON."""
import json

import numpy as np

from explorer.views.common.exports import json_ready


def test_json_ready_writes_null_for_nan_and_python_numbers_for_numpy():
    value = {"a": np.array([1.0, np.nan, np.inf]), "b": (np.int64(3), np.float32(0.5)), "c": [{"d": -np.inf}],
             "e": "text", "f": None, "g": np.bool_(True)}
    ready = json_ready(value)
    assert ready == {"a": [1.0, None, None], "b": [3, 0.5], "c": [{"d": None}], "e": "text", "f": None, "g": True}
    assert type(ready["b"][0]) is int and type(ready["g"]) is bool
    assert json.loads(json.dumps(ready, allow_nan=False)) == ready  # strict JSON: no NaN or Infinity
