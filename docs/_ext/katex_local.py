"""Typeset the documentation's mathematics with the KaTeX that Panel ships: no CDN, no download.

Sphinx's default math renderer, MathJax, is loaded from a CDN. Panel (a dependency of the package) bundles KaTeX
(``panel/dist/bundled/katex/katex@*/dist``); this extension copies its script, its auto-render script and its
stylesheet into ``_static/katex`` and registers an HTML math renderer that writes ``\\(...\\)`` and ``\\[...\\]``,
which KaTeX's auto-render typesets in the browser. Panel ships no KaTeX fonts: the copied stylesheet drops its
``@font-face`` rules, so the browser requests no missing file and typesets with the fallback serif fonts.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import panel
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.math import get_node_equation_number

_FILES = ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js")
_INIT = """document.addEventListener("DOMContentLoaded", function () {
  renderMathInElement(document.body, {
    delimiters: [{left: "\\\\[", right: "\\\\]", display: true}, {left: "\\\\(", right: "\\\\)", display: false}],
    throwOnError: false
  });
});
"""


def katex_dist() -> Path:
    """The ``dist`` folder of the KaTeX bundled with Panel (the newest if there are several)."""
    found = sorted((Path(panel.__file__).parent / "dist" / "bundled" / "katex").glob("katex@*/dist"))
    if not found:
        raise RuntimeError(f"KaTeX is not bundled with panel {panel.__version__} at panel/dist/bundled/katex; "
                           "install a panel release that ships it (1.5 and later do).")
    return found[-1]


def _visit_inline(self, node: nodes.Element) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(r"\(" + self.encode(node.astext()) + r"\)</span>")
    raise nodes.SkipNode


def _visit_block(self, node: nodes.Element) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node.get("number"):
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, "Link to this equation")
        self.body.append("</span>")
    self.body.append(r"\[" + self.encode(node.astext()) + r"\]</div>")
    raise nodes.SkipNode


def _copy_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "katex"
    for name in _FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(katex_dist() / name, target / name)
    # The stylesheet's @font-face rules name fonts/ files that Panel does not ship: without them the browser asks for
    # no missing file and uses the rules' fallback fonts directly.
    css = target / "katex.min.css"
    css.write_text(re.sub(r"@font-face\{[^}]*\}", "", css.read_text(encoding="utf-8")), encoding="utf-8")
    (target / "katex-init.js").write_text(_INIT, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, object]:
    """Register the renderer (conf.py sets ``html_math_renderer = "katex_local"``) and the KaTeX files of every page."""
    app.add_html_math_renderer("katex_local", (_visit_inline, None), (_visit_block, None))
    app.add_css_file("katex/katex.min.css")
    app.add_js_file("katex/katex.min.js", loading_method="defer")
    app.add_js_file("katex/contrib/auto-render.min.js", loading_method="defer")
    app.add_js_file("katex/katex-init.js", loading_method="defer")
    app.connect("build-finished", _copy_assets)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
