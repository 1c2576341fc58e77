"""How simple the layer above the core is, in the numbers of issue 38; prints one table (nothing is run or imported).

    python benchmarks/house_metrics.py

* control names repeated by hand, per page: string literals equal to the name of one of the page's controls, in the
  lists, tuples, sets and dict keys of the page's modules, its state included (presets aside,
  ``explorer/views/<page>/presets.py``);
* assignments to third-party attributes: ``X.attr = …`` (or ``setattr(X, …)``) where X's root name was imported
  from a package other than ``explorer``, outside ``explorer/runtime/compat.py`` and in all;
* methods replaced at run time: those assignments, and ``obj.attr = f`` with ``f`` a function of the module on an
  object other than ``self`` (a third party's object reached at run time);
* private third-party attributes read: ``obj._name`` where no module of ``explorer`` defines ``_name`` (distinct names;
  protocol names such as ``_repr_mimebundle_`` aside);
* private third-party attributes outside ``explorer/runtime/compat.py`` (issue 51): every use, read or set, of a
  private name of Panel, Bokeh, param or HoloViews (``obj._name``, ``getattr(obj, "_name")``) that ``explorer`` does
  not define for itself (their installed sources are read for their names, not imported);
* private attributes of a third party's class that a subclass sets (the third party reads them; no target, listed
  so that they are not hidden);
* the largest classes of ``explorer/`` (lines of the class statement).

And the numbers of issue 47 (one replica theory against a kernel operator), ``--root DIR`` for another checkout:

* dense/low-rank switches outside the kernel operators (``explorer/operators``): calls of ``is_low_rank`` or
  ``has_vg_mf``, ``isinstance`` against a dense or low-rank type, and ``<problem>.low_rank`` as a condition;
* places that turn S/N into S: a product with ``<problem>.n`` (the one ``sample_size`` included);
* distinct messages for σ² ≤ 0: string literals (f-string parts joined) that say ``noise_var``/σ² must be positive;
* functions that build a low-rank problem: those that call a feature map and construct a problem;
* modules of ``explorer/bootstrap`` and ``explorer/gp_bootstrap`` over 600 lines.

And of issue 51 (a house a newcomer can walk): private attributes of Panel, Bokeh, param and HoloViews outside
``compat.py`` (above), and, with ``--s-over-n-path`` (this one runs the page once: :func:`s_over_n_path`), the files S/N
passes through on the GP page from the widget to the figure.

And the other numbers of issue 51, ``--house`` alone (the first imports take a minute; with ``--root DIR`` another
checkout's):

* modules that fail a first import: each module imported first in a child forked from an interpreter that loaded
  only the third-party libraries (a circular import between explorer modules fails there);
* imports against the layers: an import of a later layer (core → runtime → pages → app → server and command line;
  the scikit-learn adapter on the core alone), inside functions too;
* top-level modules of ``explorer/``;
* repeated file names with different meanings: a file name in two folders unless every folder is one of a family
  whose members hold the same kind of module (the pages of ``views/`` with ``views/common``, the papers' subpackages
  with ``bootstrap/``, the kernel operators of ``operators/`` with the chunked one of ``distributed/``);
* mentions of "seed 00N" (the papers' file numbers) and of Markdown files that are not in the repository;
* modules over 500 lines.

Read from the source's syntax trees, so a name built at run time escapes it; the numbers are for comparing before and
after a change, and the lists show where each count comes from.
"""
from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "explorer"
PAGES = ("gp_bootstrap", "model_selection", "fast_bootstrap", "step_by_step", "svm_bootstrap")
COMPAT = PACKAGE / "runtime" / "compat.py"


def _trees(package: Path = PACKAGE) -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(package.rglob("*.py"))}


def _state_parameters(tree: ast.Module) -> set[str]:
    """The controls of a state module: names assigned ``param.X(...)`` (or a ``controls.`` helper returning one) in
    its class bodies, without the hidden ones (``precedence=-1``: outputs, the data folder)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (isinstance(item, ast.Assign) and isinstance(item.value, ast.Call)
                        and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name)):
                    func = ast.unparse(item.value.func)
                    hidden = any(k.arg == "precedence" and ast.unparse(k.value) == "-1" for k in item.value.keywords)
                    if func.startswith(("param.", "controls.")) and not hidden:
                        names.add(item.targets[0].id)
    return names - {"name"}


def _collection_literals(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        items = []
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        found += [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return found


def control_repeats(trees: dict[Path, ast.Module]) -> dict[str, int]:
    counts = {}
    for page in PAGES:
        folder = PACKAGE / "views" / page
        state = trees.get(folder / "state.py")
        if state is None:
            continue
        controls = _state_parameters(state)
        literals = Counter()
        for path, tree in trees.items():
            if path.parent == folder and path.name != "presets.py":
                literals.update(name for name in _collection_literals(tree) if name in controls)
        counts[page] = sum(literals.values())
    return counts


def _third_party_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if not a.name.startswith("explorer")}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith("explorer") \
                and node.level == 0 and node.module != "__future__":
            names |= {a.asname or a.name for a in node.names}
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _functions(tree: ast.Module) -> set[str]:
    """The names a bare ``f`` can refer to as a function of the module: its functions and nested functions, not the
    methods of its classes (reached as ``self.f``; a local variable of a method's name is no function)."""
    methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body}
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) not in methods}


#: Public settings a function may be given (documented parameters, not methods): Panel's ``FileDownload.callback``,
#: Bokeh's ``ColumnDataSource.data``.
PUBLIC_SETTINGS = {"callback", "data"}


def _replaces_a_method(node: ast.Assign, functions: set[str]) -> bool:
    """``obj.attr = f`` with ``f`` a function of the module (or a lambda) on an object that is not ``self``: a
    method replaced at run time (the object is often a third party's, reached at run time, e.g. a server's app)."""
    value = node.value
    is_function = isinstance(value, ast.Lambda) or (isinstance(value, ast.Name) and value.id in functions)
    return is_function and any(isinstance(t, ast.Attribute) and _root(t) not in ("self", "cls")
                               and t.attr not in PUBLIC_SETTINGS for t in node.targets)


def third_party_assignments(trees) -> list[str]:
    found = []
    for path, tree in trees.items():
        foreign = _third_party_names(tree)
        functions = _functions(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _replaces_a_method(node, functions) \
                    and not any(_root(t) in foreign for t in node.targets):
                found += [f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(t)}" for t in node.targets]
                continue
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                targets = [t for t in targets if isinstance(t, ast.Attribute)]
            elif isinstance(node, ast.Call) and ast.unparse(node.func) == "setattr" and node.args:
                targets = [node.args[0]]
            for target in targets:
                if _root(target) in foreign:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(target)}")
    return found


def private_reads(trees) -> list[str]:
    ours = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ours.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                ours.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ours.add(node.id)
            elif isinstance(node, ast.arg):
                ours.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_"):
                ours.add(node.value)  # setattr(self, "_values", …)
    found = {}
    for path, tree in trees.items():
        foreign = _third_party_names(tree)
        for node in ast.walk(tree):
            # read from a third party's module or class by name (``pn.theme.Fast._resources``) even where a class of
            # ours defines the same name
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and not node.attr.endswith("_")
                    and (node.attr not in ours or _root(node.value) in foreign)):
                found.setdefault(node.attr, f"{path.relative_to(ROOT)}:{node.lineno}")
    return [f"{name} ({where})" for name, where in sorted(found.items())]


def _our_private_names(trees) -> set[str]:
    """Private names that ``explorer`` defines itself: its functions, classes and their body names, parameters, the
    attributes it sets on ``self``/``cls`` and the names its modules assign."""
    ours = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ours.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ours.add(node.id)
            elif isinstance(node, ast.arg):
                ours.add(node.arg)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                ours.add(node.attr)
            elif isinstance(node, ast.Call) and _name(node.func) in ("setattr", "__setattr__") \
                    and any(isinstance(a, ast.Name) and a.id in ("self", "cls") for a in node.args):
                # setattr(self, "_values", …), object.__setattr__(self, "_values", …)
                ours |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return ours


#: The third parties whose private attributes issue 51 keeps inside ``compat.py``: the page's libraries.
UI_PACKAGES = ("panel", "bokeh", "param", "holoviews")


def third_party_private_names(packages=UI_PACKAGES) -> set[str]:
    """Every private-looking name (``_x``) in the installed sources of ``packages`` (their text is read, nothing is
    imported): a name of ours that a third party does not use is not one of its private attributes."""
    import importlib.util
    import re

    names = set()
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        for path in Path(spec.origin).parent.rglob("*.py"):
            names.update(re.findall(r"\b(_[A-Za-z][A-Za-z0-9_]*)\b", path.read_text(errors="ignore")))
    return names


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and not name.endswith("_")


def private_third_party(trees, compat: Path = COMPAT, theirs: set[str] | None = None) -> list[str]:
    """Private attributes of Panel, Bokeh, param or HoloViews used outside ``compat`` (issue 51 item 6): ``obj._name``
    read or set, and ``getattr``/``setattr``/``hasattr`` with a literal ``"_name"``, where ``_name`` is one of
    ``theirs`` (default :func:`third_party_private_names`) and no module of ``explorer`` defines it for itself (as
    a function, class, parameter or module name, or on ``self``), or ``obj`` is a third party's module or class by
    name. One line per use: ``_name (path:line)``."""
    theirs = third_party_private_names() if theirs is None else theirs
    ours = _our_private_names(trees)
    found = []
    for path, tree in trees.items():
        if path == compat:
            continue
        foreign = _third_party_names(tree)
        where = path.relative_to(ROOT) if ROOT in path.parents else path
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr in theirs \
                    and (node.attr not in ours or _root(node.value) in foreign):
                name = node.attr
            elif (isinstance(node, ast.Call) and _name(node.func) in ("getattr", "setattr", "hasattr")
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                  and isinstance(node.args[1].value, str) and _is_private(node.args[1].value)
                  and node.args[1].value in theirs and node.args[1].value not in ours):
                name = node.args[1].value
            if name is not None:
                found.append(f"{name} ({where}:{node.lineno})")
    return sorted(set(found))


def _is_property(value) -> bool:
    """A property of our own (``started.setter(...)``, ``property(...)``), not a setting the base class reads."""
    return isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in ("setter", "property", "getter")


def private_overrides(trees) -> list[str]:
    """Private attributes of a third party's class that a subclass of ours sets in its body (``_resources``,
    ``_template``): not read by us but by the third party, so as tied to its version as a read."""
    found = []
    for path, tree in trees.items():
        foreign = _third_party_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(_root(base) in foreign for base in node.bases):
                for item in node.body:
                    targets = item.targets if isinstance(item, ast.Assign) else \
                        [item.target] if isinstance(item, ast.AnnAssign) else []
                    found += [f"{node.name}.{t.id} ({path.relative_to(ROOT)}:{item.lineno})" for t in targets
                              if isinstance(t, ast.Name) and t.id.startswith("_") and not t.id.startswith("__")
                              and not _is_property(item.value)]
    return found


def largest_classes(trees, k: int = 5) -> list[tuple[int, str]]:
    sizes = [(node.end_lineno - node.lineno + 1, f"{path.relative_to(ROOT)}:{node.name}")
             for path, tree in trees.items() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    return sorted(sizes, reverse=True)[:k]


#: Types whose ``isinstance`` chooses between the dense and the low-rank computation.
PATH_TYPES = {"LowRankRegressionProblem", "RegressionProblem", "LowRankFeatures", "DenseKernel", "FeatureKernel"}
#: Functions that decide the path by name.
PATH_PREDICATES = {"is_low_rank", "has_vg_mf"}
FEATURE_MAPS = {"nystrom_features", "random_fourier_features", "low_rank_features"}
PROBLEM_TYPES = {"RegressionProblem", "LowRankRegressionProblem"}


def _where(path: Path, node: ast.AST, package: Path) -> str:
    return f"{path.relative_to(package.parent)}:{node.lineno}"


def _name(node: ast.AST) -> str:
    """The last name of a call's function or an attribute chain (``a.b.c`` → ``c``)."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _mentions_problem(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Name, ast.Attribute)) and "problem" in _name(n) for n in ast.walk(node))


def path_switches(trees, package: Path = PACKAGE) -> list[str]:
    """Dense/low-rank switches outside ``explorer/operators`` (see the module docstring)."""
    found = []
    for path, tree in trees.items():
        if (package / "operators") in path.parents:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node.func) in PATH_PREDICATES:
                found.append(f"{_where(path, node, package)} {_name(node.func)}")
            elif isinstance(node, ast.Call) and _name(node.func) == "isinstance" and len(node.args) == 2:
                names = {_name(n) for n in ast.walk(node.args[1])} & PATH_TYPES
                if names:
                    found.append(f"{_where(path, node, package)} isinstance {', '.join(sorted(names))}")
            elif isinstance(node, (ast.If, ast.IfExp, ast.BoolOp, ast.UnaryOp)):
                test = node.test if isinstance(node, (ast.If, ast.IfExp)) else node
                for n in ast.walk(test):
                    if isinstance(n, ast.Attribute) and n.attr == "low_rank" and _mentions_problem(n.value):
                        found.append(f"{_where(path, n, package)} .low_rank")
    return sorted(set(found))


#: Names of an S/N value or grid in the code.
S_OVER_N_NAMES = {"v", "grid", "s_over_n"}


def s_to_S_places(trees, package: Path = PACKAGE) -> list[str]:
    """Products of an S/N (``v``, ``grid``, ``s_over_n``) with ``<problem>.n`` (or ``self.n`` in a problem module):
    where S/N becomes S."""
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    if (isinstance(side, ast.Attribute) and side.attr == "n"
                            and (_mentions_problem(side.value) or path.name in ("problem.py", "problems.py"))
                            and {_name(n) for n in ast.walk(other)} & S_OVER_N_NAMES
                            and "exp" not in {_name(n) for n in ast.walk(other)}):  # N·e^(−S/N) is not S
                        found.append(_where(path, node, package))
    return sorted(set(found))


def _text(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return ""


def noise_messages(trees, package: Path = PACKAGE) -> dict[str, list[str]]:
    """Distinct texts that refuse σ² ≤ 0, each with where it is."""
    found: dict[str, list[str]] = {}
    for path, tree in trees.items():
        parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if id(node) in parts:
                continue
            text = _text(node)
            if (("noise_var" in text or "σ²" in text or "noise variance" in text) and "must be" in text
                    and ("positive" in text or "> 0" in text)):
                found.setdefault(text, []).append(_where(path, node, package))
    return found


def low_rank_builders(trees, package: Path = PACKAGE) -> list[str]:
    """Functions that call a feature map and construct a regression problem."""
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls = {_name(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
                if calls & FEATURE_MAPS and calls & PROBLEM_TYPES:
                    found.append(f"{path.relative_to(package.parent)}:{node.name}")
    return sorted(found)


def long_theory_modules(trees, package: Path = PACKAGE, limit: int = 600) -> list[tuple[int, str]]:
    """Modules of ``bootstrap/`` and ``gp_bootstrap/`` over ``limit`` lines."""
    out = []
    for path in trees:
        if path.parent in (package / "bootstrap", package / "gp_bootstrap"):
            n = len(path.read_text().splitlines())
            if n > limit:
                out.append((n, str(path.relative_to(package.parent))))
    return sorted(out, reverse=True)


def theory_report(package: Path = PACKAGE) -> None:
    """Print the numbers of issue 47 for the checkout whose package is ``package``."""
    trees = _trees(package)
    switches, places = path_switches(trees, package), s_to_S_places(trees, package)
    messages, builders = noise_messages(trees, package), low_rank_builders(trees, package)
    long = long_theory_modules(trees, package)
    print(f"dense/low-rank switches outside explorer/operators: {len(switches)}")
    for line in switches:
        print("   ", line)
    print(f"places that turn S/N into S: {len(places)} ({', '.join(places)})")
    print(f"distinct messages for σ² <= 0: {len(messages)}")
    for text, where in messages.items():
        print("   ", repr(text[:90]), "at", ", ".join(where))
    print(f"functions that build a low-rank problem: {len(builders)} ({', '.join(builders)})")
    print(f"modules of bootstrap/ and gp_bootstrap/ over 600 lines: {len(long)} "
          f"({', '.join(f'{name} {n}' for n, name in long)})")


# ------------------------------------------------------------------------------------ issue 51: S/N's way on the GP page


def s_over_n_path(value: float = 1.35) -> list[str]:
    """The files S/N passes through on the GP page, from the widget to the figure (issue 51 item 3): the modules of
    ``explorer`` with a function that runs between a change of the S/N control and the redrawn learning curve and
    either reads or passes S/N by name (a variable or an attribute ``s_over_n``) or is handed the value itself as an
    argument (``v``, a number). A watcher of every control that is handed the change's event does not count.

    Runs the page once (unlike the rest of this script): a boston state solved at S/N = 1, its sidebar and its
    learning-curve tab drawn into a Bokeh document, then the S/N widget set to ``value``, the jobs waited for and the
    figure redrawn, with a profile hook recording the functions that ran. Returns the files, relative to the root."""
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np
    import param
    from bokeh.document import Document

    from explorer.views.gp_bootstrap.state import GPBootstrapState
    from explorer.views.gp_bootstrap.tab import GPControls, LearningCurveTab

    state = GPBootstrapState(dataset="boston", auto_mc=False)
    state.refresh()
    state.wait(300)
    controls, tab = GPControls(state=state), LearningCurveTab(state=state)
    tab.plot.get_root(Document())  # drawn: a change redraws it (a patch of the drawn figure or a new frame)
    widget = controls.widgets["s_over_n"]
    ran: set = set()

    def holds(x) -> bool:  # the S/N value itself (a number), not a larger structure that holds it
        return isinstance(x, (float, np.floating)) and abs(float(x) - value) < 1e-12

    def profile(frame, event, arg) -> None:
        if event == "call":
            code = frame.f_code
            names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            if ("s_over_n" in code.co_names or "s_over_n" in code.co_varnames  # reads or passes it by name
                    or any(holds(frame.f_locals.get(n)) for n in names)):  # is handed the value itself
                ran.add(code)

    sys.setprofile(profile)
    try:
        with param.edit_constant(widget):  # as the browser sets it: the value, then the throttled value
            widget.param.update(value=value, value_throttled=value)
        state.wait(300)
        tab.redraw()
    finally:
        sys.setprofile(None)
    assert abs(state.s_over_n - value) < 1e-12 and state.solution is not None, "the widget did not reach the state"
    state.close()
    import explorer

    package = Path(explorer.__file__).resolve().parent  # the checkout imported (another one's with PYTHONPATH)
    files = {code.co_filename for code in ran}
    return sorted(str(Path(f).resolve().relative_to(package.parent)) for f in files
                  if Path(f).resolve().is_relative_to(package))


PAPER_FAMILY = {"bootstrap", "gp_bootstrap", "svm_bootstrap", "model_selection", "fast_bootstrap"}
LAYER_PREFIXES = (("explorer.runtime", "explorer.distributed"), ("explorer.views",), ("explorer.app",),
                  ("explorer.serving", "explorer.cli"))
ADAPTERS = ("explorer.sklearn",)
HEAVY_LIBRARIES = ("numpy", "scipy.linalg", "scipy.stats", "panel", "holoviews", "bokeh.plotting", "param", "dask",
                   "distributed", "sklearn", "segno")


def _module_of(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    for level, prefixes in enumerate(LAYER_PREFIXES, start=1):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return level
    return 1 if module.startswith(ADAPTERS) else 0


def layer_violations(trees, package: Path = PACKAGE) -> list[str]:
    """``"module imports later"`` for every import of a later layer (and of the adapter by anything but itself)."""
    found = []
    for path, tree in trees.items():
        module = _module_of(path, package)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                if not name.startswith("explorer."):
                    continue
                adapter_import = name.startswith(ADAPTERS) and not module.startswith(ADAPTERS)
                adapter_up = module.startswith(ADAPTERS) and _layer(name) > 0 and not name.startswith(ADAPTERS)
                if _layer(name) > _layer(module) or adapter_import or adapter_up:
                    found.append(f"{module} imports {name}")
    return sorted(set(found))


def first_import_failures(package: Path = PACKAGE) -> list[str]:
    """Modules of ``package`` that fail when imported first (one forked child each, after the third-party libraries)."""
    import subprocess

    modules = sorted(_module_of(p, package) for p in package.rglob("*.py") if p.name != "__main__.py")
    code = ("import importlib, os, sys\n"
            "for name in sys.argv[2:]:\n"
            "    try: importlib.import_module(name)\n"
            "    except ImportError: pass\n"
            "failed = []\n"
            "for module in sys.argv[1].split(','):\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        try: importlib.import_module(module)\n"
            "        except BaseException: os._exit(1)\n"
            "        os._exit(0)\n"
            "    if os.waitpid(pid, 0)[1]: failed.append(module)\n"
            "print(','.join(failed))\n")
    out = subprocess.run([sys.executable, "-c", code, ",".join(modules), *HEAVY_LIBRARIES], capture_output=True,
                         text=True, cwd=package.parent, timeout=900)
    return [m for m in out.stdout.strip().split(",") if m]


def top_level_modules(package: Path = PACKAGE) -> list[str]:
    """The modules directly inside ``explorer/`` (packages aside)."""
    return sorted(p.stem for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))


def _family(folder: Path, package: Path) -> str | None:
    """The family whose members hold the same kinds of module: a page of views/ (or views/common/...), a paper."""
    rel = folder.relative_to(package).parts
    if len(rel) >= 2 and rel[0] == "views":
        return "views"
    if len(rel) == 1 and rel[0] in PAPER_FAMILY:
        return "papers"
    if len(rel) == 1 and rel[0] in ("operators", "distributed"):  # the chunked operator mirrors the capability files
        return "operators"
    return None


def repeated_names(package: Path = PACKAGE) -> dict[str, list[str]]:
    """File names in two or more folders of ``package`` where the folders are not all of one family."""
    by_name: dict[str, list[Path]] = {}
    for path in package.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            by_name.setdefault(path.name, []).append(path)
    out = {}
    for name, paths in sorted(by_name.items()):
        families = {_family(p.parent, package) for p in paths}
        if len(paths) > 1 and (None in families or len(families) > 1):
            out[name] = sorted(str(p.relative_to(package.parent)) for p in paths)
    return out


#: Files that name what the counts look for on purpose: the notes outside the repository, to forbid them
#: (tests/test_docs.py), and this script's own test, which writes them into a package to count them.
COUNTS_ON_PURPOSE = (Path("tests/test_docs.py"), Path("tests/test_house_metrics.py"))


def _text_files(root: Path):
    for pattern in ("explorer/**/*.py", "tests/**/*.py", "benchmarks/**/*.py", "docs/**/*.md", "docs/**/*.py",
                    "notebooks/*.ipynb", "README.md", "CONTRIBUTING.md", "pyproject.toml"):
        for path in root.glob(pattern):
            if "_build" not in path.parts and ".venv" not in path.parts and "docs/notebooks" not in str(path) \
                    and path.relative_to(root) not in COUNTS_ON_PURPOSE:
                yield path


def seed_mentions(root: Path = ROOT) -> list[str]:
    """``path:line`` of each mention of a paper by its file number (the word "seed" and three digits)."""
    import re

    pattern = re.compile(r"seeds?[ _-]?00[0-9]", re.IGNORECASE)
    return [f"{p.relative_to(root)}:{i}" for p in _text_files(root)
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if pattern.search(line)]


def missing_markdown_files(root: Path = ROOT) -> list[str]:
    """Mentions of a Markdown file name that is nowhere in the repository (``../shared/...`` paths aside:
    the data and papers beside the checkout, which tests skip without)."""
    import re

    present = {p.name for p in root.rglob("*.md") if ".venv" not in p.parts and "_build" not in p.parts}
    pattern = re.compile(r"(\.\./shared/)?([\w./-]*?)([A-Za-z_][\w-]*\.md)\b")
    found = []
    for path in _text_files(root):
        for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in pattern.finditer(line):
                if not m.group(1) and m.group(3) not in present:
                    found.append(f"{path.relative_to(root)}:{i} {m.group(3)}")
    return found


def long_modules(package: Path = PACKAGE, limit: int = 500) -> list[tuple[int, str]]:
    """Modules of ``package`` over ``limit`` lines, longest first."""
    sizes = ((len(p.read_text().splitlines()), str(p.relative_to(package.parent))) for p in package.rglob("*.py"))
    return sorted((s for s in sizes if s[0] > limit), reverse=True)


def house_report(package: Path = PACKAGE) -> None:
    """Print the numbers of issue 51."""
    trees = _trees(package)
    root = package.parent
    for title, lines in (("modules that fail a first import", first_import_failures(package)),
                         ("imports against the layers", layer_violations(trees, package)),
                         ("top-level modules", top_level_modules(package)),
                         ("repeated file names with different meanings",
                          [f"{k}: {', '.join(v)}" for k, v in repeated_names(package).items()]),
                         ("mentions of 'seed 00N'", seed_mentions(root)),
                         ("mentions of Markdown files not in the repository", missing_markdown_files(root)),
                         ("modules over 500 lines", [f"{name} {n}" for n, name in long_modules(package)])):
        print(f"{title}: {len(lines)}")
        for line in lines[:40]:
            print("   ", line)


def main() -> int:
    if "--s-over-n-path" in sys.argv:
        path = s_over_n_path()
        print(f"files S/N passes through on the GP page, widget to figure: {len(path)}")
        for line in path:
            print("   ", line)
        return 0
    if "--house" in sys.argv:  # with --root DIR: another checkout's (before and after a change)
        root = Path(sys.argv[sys.argv.index("--root") + 1]).resolve() if "--root" in sys.argv else ROOT
        house_report(root / "explorer")
        return 0
    if "--root" in sys.argv:
        theory_report(Path(sys.argv[sys.argv.index("--root") + 1]).resolve() / "explorer")
        return 0
    trees = _trees()
    repeats = control_repeats(trees)
    assignments = third_party_assignments(trees)
    outside = [a for a in assignments if not a.startswith(str(COMPAT.relative_to(ROOT)))]
    private = private_reads(trees)
    print("control names repeated by hand (presets aside):",
          ", ".join(f"{page} {n}" for page, n in repeats.items()), f"- {sum(repeats.values())} in all")
    print(f"assignments to third-party attributes: {len(outside)} outside explorer/runtime/compat.py, {len(assignments)} in all")
    for line in assignments:
        print("   ", line)
    print(f"private third-party attributes read: {len(private)}")
    for line in private:
        print("   ", line)
    outside_compat = private_third_party(trees)
    print(f"private third-party attributes outside compat.py (Panel, Bokeh, param, HoloViews): {len(outside_compat)}")
    for line in outside_compat:
        print("   ", line)
    overrides = private_overrides(trees)
    print(f"private attributes of third-party classes set in a subclass: {len(overrides)}")
    for line in overrides:
        print("   ", line)
    print("largest classes (lines):", "; ".join(f"{name} {n}" for n, name in largest_classes(trees)))
    theory_report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
