"""explorer.distributed is runtime: it may import dask/distributed and the core, never the UI stack or the pages."""
import subprocess
import sys


def test_the_distributed_package_imports_no_ui_stack_and_no_pages():
    code = ("import sys, explorer.distributed, explorer.distributed.operator, explorer.distributed.rows\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('panel', 'param', 'holoviews', 'bokeh', 'sklearn') or m.startswith(('explorer.views', 'explorer.app')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
