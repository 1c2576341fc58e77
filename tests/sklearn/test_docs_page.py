"""The J+aB example of docs/user_guide/sklearn.md runs and prints what the page says (tests/test_docs.py runs the
page's first two blocks; this runs the last three: data, theory, MAPIE)."""
import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("mapie")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "sklearn.md"


@pytest.mark.docs
def test_the_jackknife_plus_example_runs_and_prints_the_pages_output():
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 6  # the GPR example (2), the constructor's signature, the J+aB example (3)
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for block in blocks[3:]:
            exec(compile(block, str(PAGE), "exec"), namespace)
    low, high, mapie_low, mapie_high = (namespace[k] for k in ("low", "high", "mapie_low", "mapie_high"))
    assert low.shape == high.shape == mapie_low.shape == (101,) and np.all(low < high)
    shown = re.findall(r"<!-- output -->\n```text\n(.*?)\n```", text, re.S)[-1]
    assert printed.getvalue().strip() == shown
    width = mapie_high - mapie_low
    assert np.median(np.abs(low - mapie_low) / width) < 0.02 and np.median(np.abs(high - mapie_high) / width) < 0.02
    assert (PAGE.parent / "sklearn_jab.png").is_file() and "sklearn_jab.png" in text
