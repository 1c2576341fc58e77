"""Serve the app whose registry (``explorer/views/pages.py``) has one more line: the minimal page of this folder in
``PAGES`` (with its import). Nothing else of the app changes. ``python tests/views/minimal_page/serve.py PORT``."""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = ROOT / "explorer" / "views" / "pages.py"
#: The line a new page adds to the registry (its PAGE in PAGES); the import of its PAGE goes above it.
IMPORT = "from tests.views.minimal_page.page import PAGE as MINIMAL"


def registry_with_the_minimal_page() -> str:
    """The registry's source with the minimal page last in ``PAGES``."""
    text = REGISTRY.read_text(encoding="utf-8")
    line = re.search(r"^PAGES: tuple\[Page, \.\.\.\] = \((.*)\)$", text, flags=re.M)
    assert line is not None, "the registry's PAGES line changed: update this script"
    added = f"{IMPORT}\n\nPAGES: tuple[Page, ...] = ({line.group(1)}, MINIMAL)"
    return text[:line.start()] + added + text[line.end():]


def main(port: str) -> int:
    import importlib.util

    sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_loader("explorer.views.pages", loader=None, origin=str(REGISTRY))
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(REGISTRY)
    sys.modules["explorer.views.pages"] = module
    exec(compile(registry_with_the_minimal_page(), str(REGISTRY), "exec"), module.__dict__)  # noqa: S102

    from explorer.cli import run

    sys.argv = ["explorer", "serve", "--port", port, "--no-show"]
    return run()


if __name__ == "__main__":  # not when a Dask worker process (spawned) imports this script
    sys.exit(main(sys.argv[1]))
