"""Checks of the downloads shared by the tabs' tests: a page that opens offline, a CSV that reads back plainly."""
import io
import re

import bokeh
import pandas as pd

#: <script src=...> or <link href=...>: a file from outside the page (a downloaded figure must open offline).
EXTERNAL = re.compile(r"<(?:script|link)\b[^>]*\b(?:src|href)\s*=", re.IGNORECASE)


def assert_offline_page(html: str) -> None:
    """No external script or stylesheet, no Panel/Bokeh CDN, BokehJS itself inlined.

    (The inlined BokehJS mentions cdn.jsdelivr.net in loaders it runs only for MathJax and icon fonts, which
    the figures do not use; so the check is on what the page loads, not on the letters "cdn.".)
    """
    assert EXTERNAL.search(html) is None, EXTERNAL.search(html)
    assert "cdn.holoviz.org" not in html and "cdn.bokeh.org" not in html
    assert f'version="{bokeh.__version__}"' in html  # BokehJS's own source, inlined


def read_plain_csv(text: str, columns: list[str]) -> pd.DataFrame:
    """``text`` read by a plain ``pandas.read_csv`` (no comment option): the header line is ``columns``."""
    assert text.splitlines()[0] == ",".join(columns)
    frame = pd.read_csv(io.StringIO(text))
    assert frame.columns.tolist() == columns
    return frame
