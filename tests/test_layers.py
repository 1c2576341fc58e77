"""The compute core must never import the UI stack (DEVELOPERS.md, STYLE.md: Layers), and the layout of the
package (a few shared modules at the top, the shared bootstrap machinery, one core subpackage per paper that imports
no other paper) must not silently regress."""
import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import explorer

UI_STACK = ("panel", "holoviews", "bokeh", "param")
NOT_CORE = ("explorer.views", "explorer.cli", "explorer.app")
PAPERS = {"gp_bootstrap", "svm_bootstrap", "model_selection", "fast_bootstrap"}
#: What more than one paper uses (the replica theory's cavity base, the Monte-Carlo estimates).
SHARED = {"bootstrap"}
MAX_TOP_LEVEL_MODULES = 10


def _is_core(name: str) -> bool:
    outside = any(name == top or name.startswith(top + ".") for top in NOT_CORE)
    return not outside and name.rsplit(".", 1)[-1] != "__main__"


# walk_packages imports the packages it descends into (views and cli too) in this process; each core module
# is then imported alone in a fresh interpreter, where nothing else has been imported before it.
CORE = sorted(m.name for m in pkgutil.walk_packages(explorer.__path__, "explorer.") if _is_core(m.name))


def test_the_walk_finds_every_core_subpackage():
    assert {f"explorer.{paper}" for paper in PAPERS} <= set(CORE)
    assert {"explorer.kernels", "explorer.bootstrap.replica", "explorer.fast_bootstrap.lssvm"} <= set(CORE)


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_neither_ui_stack_nor_views(module):
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        f"ui = {UI_STACK!r}\n"
        f"not_core = {NOT_CORE!r}\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ui)))\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith(not_core))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ui, views = (out.stdout.splitlines() + ["", ""])[:2]
    assert ui == "", f"{module} imports the UI stack: {ui}"
    assert views == "", f"{module} imports views, cli or app: {views}"


def test_layout_few_top_level_modules_and_one_core_subpackage_per_paper():
    top = list(pkgutil.iter_modules(explorer.__path__))
    modules = sorted(m.name for m in top if not m.ispkg)
    packages = {m.name for m in top if m.ispkg}
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
    assert packages - {"views", "cli"} == PAPERS | SHARED


def _imported_modules(path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_no_paper_imports_another_paper(paper):
    root = next(iter(explorer.__path__))
    others = tuple(f"explorer.{other}" for other in PAPERS - {paper})
    found = {f"{path.name}: {name}" for path in (Path(root) / paper).glob("*.py")
             for name in _imported_modules(path) if name.startswith(others)}
    assert not found, f"explorer.{paper} imports another paper: {sorted(found)}"
