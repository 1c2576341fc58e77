"""The compute core must never import the UI stack (DEVELOPERS.md, STYLE.md: Layers)."""
import subprocess
import sys

CORE = ["explorer.kernels", "explorer.regression", "explorer.gp_bootstrap.montecarlo", "explorer.gp_bootstrap.replica",
        "explorer.gp_bootstrap.l1", "explorer.datasets"]


def test_core_does_not_import_ui_stack():
    code = (
        "import importlib, sys\n"
        f"for m in {CORE!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'panel','holoviews','bokeh','param'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
