"""The layers (CONTRIBUTING.md: Layers) hold — core → runtime → pages → app → server and command line, each importing
only those before it, every module importable first in a fresh interpreter — the compute core never imports the UI
stack, and the layout of the
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
#: Optional dependencies that only an adapter above the core imports (explorer.sklearn: the `sklearn` extra).
ADAPTER_ONLY = ("sklearn",)
#: explorer.sklearn is an adapter, not core: it may import scikit-learn, and no core module may import it.
NOT_CORE = ("explorer.runtime", "explorer.distributed", "explorer.views", "explorer.serving", "explorer.cli", "explorer.app",
            "explorer.sklearn")
PAPERS = {"gp_bootstrap", "svm_bootstrap", "model_selection", "fast_bootstrap"}
#: What more than one paper uses (the replica theory's cavity base, the Monte-Carlo estimates) and the kernel operators
#: the theories are written against (explorer.operators: dense K, features Φ).
SHARED = {"bootstrap", "operators"}
#: What every paper uses at the top: kernels (dense and low-rank), regression, losses, datasets, resampling, progress,
#: validation, chunks and the scikit-learn adapter (the layers above the core are packages: runtime, views, app,
#: serving, cli).
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
        f"ui = {UI_STACK + ADAPTER_ONLY!r}\n"
        f"not_core = {NOT_CORE!r}\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ui)))\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith(not_core))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ui, views = (out.stdout.splitlines() + ["", ""])[:2]
    assert ui == "", f"{module} imports the UI stack or scikit-learn: {ui}"
    assert views == "", f"{module} imports views, cli or app: {views}"


def test_the_sklearn_adapter_is_outside_the_core_and_imports_no_ui_stack():
    pytest.importorskip("sklearn")
    assert "explorer.sklearn" not in CORE
    code = f"import sys, explorer.sklearn\nprint(','.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(UI_STACK)!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"explorer.sklearn imports the UI stack: {out.stdout}"


def test_layout_few_top_level_modules_and_one_core_subpackage_per_paper():
    top = list(pkgutil.iter_modules(explorer.__path__))
    modules = sorted(m.name for m in top if not m.ispkg)
    packages = {m.name for m in top if m.ispkg}
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
    assert packages - {"runtime", "distributed", "views", "app", "serving", "cli", "sklearn"} == PAPERS | SHARED


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


# A leading underscore means "only this module" (CONTRIBUTING.md); another module that needs the name gets a public one.
# Counted: `from explorer.x import _name` and `module._name` where `module` is an imported explorer module, in every
# module of explorer/ (views and app too). Not counted: dunder names, attributes of objects (self._x, a subclass
# using its base class's), private attributes of Panel, param or Bokeh objects.
MAX_PRIVATE_USES = 3
#: "user module: explorer.home._name" -> why it stays (remove an entry once its use is gone).
PRIVATE_USES_ALLOWED: dict[str, str] = {}


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _source_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")[: len(module.split(".")) - node.level + is_package]
    return ".".join(base + ([node.module] if node.module else []))


def _private_uses(path: Path, root: Path, modules: set[str]) -> list[str]:
    """``"user: explorer.home._name"`` for each use in ``path`` of another explorer module's private name."""
    module, tree = _module_name(path, root), ast.parse(path.read_text())
    aliases, uses = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                        for a in node.names if a.name.split(".")[0] == "explorer"}
        elif isinstance(node, ast.ImportFrom):
            source = _source_module(node, module, path.name == "__init__.py")
            if source.split(".")[0] != "explorer":
                continue
            uses += [f"{source}.{a.name}" for a in node.names if _is_private(a.name) and source != module]
            aliases |= {a.asname or a.name: f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in modules}
    for node in ast.walk(tree):
        chain, value = [], getattr(node, "value", None)
        if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
            continue
        while isinstance(value, ast.Attribute):
            chain, value = [value.attr, *chain], value.value
        home = ".".join([aliases.get(getattr(value, "id", None), ""), *chain])
        if home in modules and home != module:
            uses.append(f"{home}.{node.attr}")
    return [f"{module}: {use}" for use in uses]


def test_no_module_uses_another_modules_private_names():
    root = Path(next(iter(explorer.__path__)))
    files = sorted(root.rglob("*.py"))
    modules = {_module_name(path, root) for path in files}
    uses = sorted(use for path in files for use in _private_uses(path, root, modules))
    print(f"{len(uses)} uses of another module's private names:", *uses, sep="\n  ")
    assert not [use for use in uses if use not in PRIVATE_USES_ALLOWED], "give these a public name (CONTRIBUTING.md)"
    assert len(uses) <= MAX_PRIVATE_USES, uses


def test_the_private_name_check_sees_imports_and_module_attributes_only(tmp_path):
    root = tmp_path / "explorer"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "home.py").write_text("def _f(): pass\n")
    user = root / "user.py"
    user.write_text("from explorer.sub import home\nfrom explorer.sub import home as h\nfrom explorer.sub.home import _f\n"
                    "import numpy as np\n\nclass A(home.Base):\n    def g(self):\n        return self._x, super()._y\n\n"
                    "home._f(), h._g, h.__doc__, np._core, h.thing._z\n")
    modules = {"explorer", "explorer.sub", "explorer.sub.home", "explorer.user"}
    assert sorted(_private_uses(user, root, modules)) == [
        "explorer.user: explorer.sub.home._f", "explorer.user: explorer.sub.home._f", "explorer.user: explorer.sub.home._g"]


#: The layers in order (CONTRIBUTING.md): a module may import its own layer and those before it, never one after.
#: The scikit-learn adapter sits on the core beside the runtime (it imports the core only).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("runtime", ("explorer.runtime", "explorer.distributed")),
    ("pages", ("explorer.views",)),
    ("app", ("explorer.app",)),
    ("server and command line", ("explorer.serving", "explorer.cli")),
)
ADAPTERS = ("explorer.sklearn",)


def _layer(module: str) -> int:
    """0 for the core, 1.. for the layers of :data:`LAYERS`, in order; an adapter counts as the runtime's level
    but may import the core only (checked apart)."""
    for level, (_, prefixes) in enumerate(LAYERS, start=1):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return level
    return 1 if module.startswith(ADAPTERS) else 0


def _explorer_imports(path: Path, root: Path) -> set[str]:
    """The explorer modules ``path`` imports (also inside functions: a late import crosses a layer all the same)."""
    module, found = _module_name(path, root), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            source = _source_module(node, module, path.name == "__init__.py")
            if source.split(".")[0] == "explorer":
                found.add(source)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "explorer"}
    return found


def _imports_against_the_layers(root: Path) -> list[str]:
    uses = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        for imported in _explorer_imports(path, root):
            if imported == "explorer":
                continue
            later = _layer(imported) > _layer(module)
            adapter = imported.startswith(ADAPTERS) and not module.startswith(ADAPTERS)
            if later or adapter or (module.startswith(ADAPTERS) and _layer(imported) > 0 and not imported.startswith(ADAPTERS)):
                uses.append(f"{module} imports {imported}")
    return uses


def test_each_layer_imports_only_the_layers_before_it():
    uses = _imports_against_the_layers(Path(next(iter(explorer.__path__))))
    assert uses == [], "\n".join(uses)


def test_the_layer_check_sees_an_import_against_the_layers(tmp_path):
    root = tmp_path / "explorer"
    for folder in ("runtime", "views", "app"):
        (root / folder).mkdir(parents=True)
    (root / "runtime" / "engine.py").write_text("def f():\n    from explorer.views import page\n")
    (root / "views" / "page.py").write_text("from explorer.runtime import engine\n")
    (root / "app" / "layout.py").write_text("from explorer.views.page import x\nfrom explorer.kernels import k\n")
    assert _imports_against_the_layers(root) == ["explorer.runtime.engine imports explorer.views"]


#: Every module of the package, for the first-import test.
ALL_MODULES = sorted(m.name for m in pkgutil.walk_packages(explorer.__path__, "explorer.")
                     if m.name.rsplit(".", 1)[-1] != "__main__")

#: Third-party libraries loaded before the fork, so that each module's import costs only the explorer modules it
#: loads: which of them comes first is all a circular import depends on.
_HEAVY = ("numpy", "scipy.linalg", "scipy.stats", "panel", "holoviews", "bokeh.plotting", "param", "dask",
          "distributed", "sklearn", "segno")

_FIRST_IMPORTS = """
import importlib, os, sys
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
failed = []
for module in sys.argv[1].split(","):
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
        except BaseException as err:
            sys.stderr.write(f"{module}: {type(err).__name__}: {err}\\n")
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status:
        failed.append(module)
print(",".join(failed))
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_every_module_imports_first_in_a_fresh_interpreter():
    """Each module imported first, in a child forked from an interpreter that has loaded only the third-party
    libraries (no explorer module): a circular import between explorer modules fails here, whatever imports them
    in the rest of the suite."""
    out = subprocess.run([sys.executable, "-c", _FIRST_IMPORTS, ",".join(ALL_MODULES), *_HEAVY],
                         capture_output=True, text=True, timeout=600)
    failed = [m for m in out.stdout.strip().split(",") if m]
    assert failed == [], out.stderr[-3000:]
    assert len(ALL_MODULES) > 100
