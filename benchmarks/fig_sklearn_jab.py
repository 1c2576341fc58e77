"""The figure of docs/user_guide/sklearn.md: J+aB intervals of the replica theory beside MAPIE's (300 refits).

Runs the page's three Python blocks (data, theory, MAPIE) as they are, draws the data and both intervals with Bokeh
(resources inline: nothing is loaded from the internet) and screenshots the plot with headless chromium through
Playwright (Debian's chromium, as the browser tests use). Needs MAPIE (``pip install mapie``).

Run: .venv/bin/python benchmarks/fig_sklearn_jab.py [--out docs/user_guide/sklearn_jab.png]
"""
from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from pathlib import Path

from bokeh.embed import file_html
from bokeh.models import Legend
from bokeh.plotting import figure
from bokeh.resources import INLINE
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "user_guide" / "sklearn.md"


def page_examples() -> dict:
    """The namespace after the J+aB blocks of the page (the last three Python blocks)."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    namespace: dict = {}
    for block in blocks[-3:]:
        exec(compile(block, str(PAGE), "exec"), namespace)
    return namespace


def draw(ns: dict):
    x = ns["X_grid"][:, 0]
    fig = figure(width=760, height=420, x_axis_label="x", y_axis_label="y",
                 title="90 % J+aB prediction intervals, KernelRidge(rbf) on the toy data (N = 200)")
    points = fig.scatter(ns["X"][:, 0], ns["y"], size=4, color="#555555", alpha=0.6)
    theory = fig.varea(x, ns["low"], ns["high"], fill_color="#1f77b4", fill_alpha=0.25)
    mapie_low = fig.line(x, ns["mapie_low"], color="#d62728", line_width=2, line_dash="dashed")
    fig.line(x, ns["mapie_high"], color="#d62728", line_width=2, line_dash="dashed")
    fig.add_layout(Legend(items=[("training data", [points]), ("replica theory: one solve, no refit", [theory]),
                                 ("MAPIE: 300 refits", [mapie_low])], location="top_right"))
    fig.toolbar_location = None
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "user_guide" / "sklearn_jab.png"))
    args = parser.parse_args()
    html = file_html(draw(page_examples()), INLINE, "J+aB")
    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        path = Path(tmp) / "figure.html"
        path.write_text(html, encoding="utf-8")
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 800, "height": 460}, device_scale_factor=2)
        page.goto(path.as_uri())
        page.wait_for_selector(".bk-Canvas, canvas", state="attached")
        page.wait_for_timeout(500)
        page.screenshot(path=args.out, clip={"x": 0, "y": 0, "width": 780, "height": 440})
        browser.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
