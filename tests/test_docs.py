"""The documentation site (docs/): ``sphinx-build -W`` builds it offline with no warning, every public module has its
API page, every notebook its page, no page loads a script, stylesheet or font from the internet, and the examples the
pages show run. The build and the examples carry the ``docs`` marker (``pytest -m docs tests/test_docs.py``; .ci/run
installs ``.[docs]`` for it); the checks of the code's citations of docs/ run by default.
"""

from __future__ import annotations

import ast
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import explorer

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: A docstring's or comment's citation of a file of the documentation: ``docs/derivations/vg_mf.md`` and the like.
DOCS_PATH = re.compile(r"docs/[\w./-]+\.md")

#: Citations of notes that live outside the repository (the developers' shared folder); a reader of the code or of
#: the wheel has none of them.
OUTSIDE_NOTES = ("/work/shared", "VG_MF.md", "EQUATIONS.md", "LOW_RANK_NOTES")

#: Places outside the checkout: the developers' machine and the papers' folder beside the repository. Only the tests
#: may name a folder beside it, to read data files they skip without (``../shared/datasets``, the papers' text).
OUTSIDE_PATHS = ("/work/", "shared/seeds")

#: The text files a reader of the project reads, by suffix.
TEXT_SUFFIXES = {".py", ".md", ".rst", ".ipynb", ".txt", ".toml", ".cfg", ".json", ".yaml", ".yml"}


def _sources() -> list[Path]:
    return sorted((ROOT / "explorer").rglob("*.py"))


def test_every_docs_path_the_code_cites_exists():
    cited = {(path.relative_to(ROOT), match) for path in _sources()
             for match in DOCS_PATH.findall(path.read_text(encoding="utf-8"))}
    assert cited, "the code cites no docs/ page: the pattern or the tree changed"
    missing = sorted(f"{where}: {target}" for where, target in cited if not (ROOT / target).is_file())
    assert not missing, f"citations of docs/ pages that do not exist: {missing}"


def test_no_citation_of_notes_outside_the_repository():
    found = sorted(f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in _sources()
                   for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                   if any(note in line for note in OUTSIDE_NOTES))
    assert not found, ("cite the derivation pages in docs/derivations/ (part of the repository), not notes outside "
                       f"it: {found}")


def _text_files(folder: str) -> list[Path]:
    """The text files under ``folder`` of the checkout, without built or generated ones (docs/_build, docs/api/generated)."""
    skip = (DOCS / "_build", DOCS / "api" / "generated")
    return sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in TEXT_SUFFIXES and p.is_file()
                  and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts
                  and not any(p.is_relative_to(s) for s in skip))


def _lines_naming(paths, names) -> list[str]:
    return sorted(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}" for path in paths
                  for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                  if any(name in line for name in names))


def test_no_file_of_the_project_names_a_place_outside_it():
    """explorer/, docs/, notebooks/, benchmarks/ and the README cite the project's own pages (docs/derivations/...)
    and name no path outside the checkout; the tests cite no outside note either (their data paths are allowed)."""
    project = [p for folder in ("explorer", "docs", "notebooks", "benchmarks") for p in _text_files(folder)]
    found = _lines_naming(project + [ROOT / "README.md"], OUTSIDE_NOTES + OUTSIDE_PATHS)
    assert not found, f"cite docs/ (part of the repository), name no place outside it: {found}"
    tests = [p for p in _text_files("tests") if p != Path(__file__).resolve()]
    assert len(project) > 100 and len(tests) > 50, "the trees moved: the check reads too few files"
    found = _lines_naming(tests, OUTSIDE_NOTES)
    assert not found, f"tests cite docs/derivations/ pages, not notes outside the repository: {found}"


def _double_backticked_names(doc: str) -> set[str]:
    return set(re.findall(r"``([a-z_][a-z0-9_]*)``", doc))


@pytest.mark.parametrize("package", ["explorer", "explorer.gp_bootstrap", "explorer.svm_bootstrap",
                                     "explorer.model_selection", "explorer.fast_bootstrap", "explorer.views"])
def test_package_docstrings_name_modules_that_exist(package):
    """A package docstring that lists its modules by name (``replica``, ``blas``) names only modules of the tree: its
    own, those of its subpackages, or the shared ones at the top of the package."""
    init = ROOT / Path(*package.split(".")) / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    here = {m.name.rsplit(".", 1)[-1] for m in pkgutil.walk_packages([str(init.parent)], package + ".")}  # any depth below it
    top = {m.name for m in pkgutil.iter_modules(explorer.__path__)}
    named = _double_backticked_names(doc)
    assert named, f"{package}'s docstring names no module"
    unknown = sorted(name for name in named if name not in here and name not in top)
    assert not unknown, f"{package}'s docstring names modules that are not in the tree: {unknown}"


# -- the build (marker docs) ------------------------------------------------------------------------------------------

def _public_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(explorer.__path__, "explorer.")
                  if not any(part.startswith("_") for part in m.name.split(".")))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The site built from a copy of docs/ (the checkout is left as it is), with ``-W``: any warning fails."""
    pytest.importorskip("sphinx")
    pytest.importorskip("pydata_sphinx_theme")
    pytest.importorskip("myst_nb")
    pytest.importorskip("numpydoc")
    pytest.importorskip("sphinx_design")
    pytest.importorskip("sklearn")  # explorer.sklearn is part of the API reference
    work = tmp_path_factory.mktemp("docs")
    source = work / "docs"
    shutil.copytree(DOCS, source, symlinks=False,  # the notebooks' link is copied as the notebooks themselves
                    ignore=shutil.ignore_patterns("_build", "generated", ".ipynb_checkpoints", "*.html"))
    out = work / "html"
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(source),
                          str(out)], capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    seconds = time.perf_counter() - start
    assert run.returncode == 0, f"sphinx-build -W failed after {seconds:.0f} s:\n{run.stderr[-6000:]}"
    print(f"sphinx-build -W took {seconds:.1f} s")
    return out


@pytest.mark.docs
def test_build_has_a_page_per_public_module(built):
    modules = _public_modules()
    assert "explorer.sklearn" in modules and "explorer.views.gp_bootstrap.state" in modules
    missing = [m for m in ["explorer", *modules] if not (built / "api" / "generated" / f"{m}.html").is_file()]
    assert not missing, f"API pages missing: {missing}"
    page = (built / "api" / "generated" / "explorer.bootstrap.replica.html").read_text(encoding="utf-8")
    assert 'id="explorer.bootstrap.replica.solve_replica"' in page  # members are documented, not only listed


@pytest.mark.docs
def test_build_has_every_notebook_guide_and_derivation(built):
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    pages = [f"notebooks/{name}" for name in notebooks] + [
        "index", "notebooks", "linear_response", "derivations/index", "derivations/vg_mf", "derivations/svm_replica",
        "derivations/low_rank", "derivations/kernel_operators", *(f"user_guide/{name}" for name in
                                  ("index", "concepts", "tour", "command_line", "library", "sklearn", "serving", "scale",
                                   "glossary", "classroom"))]
    missing = [name for name in pages if not (built / f"{name}.html").is_file()]
    assert not missing, f"pages missing: {missing}"
    tour = (built / "user_guide" / "tour.html").read_text(encoding="utf-8")
    classroom = (built / "user_guide" / "classroom.html").read_text(encoding="utf-8")
    for shot in (DOCS / "screenshots").glob("*.png"):  # the tabs' in the tour, the class room's on its own page
        page, text = ("class room page", classroom) if shot.name.startswith("classroom-") else ("tour", tour)
        assert shot.name in text, f"the {page} does not show {shot.name}"
        assert (built / "_images" / shot.name).is_file()


#: What a page loads: <script src>, <link href> (stylesheets, preloads, icons), <img src>, and url(...) in CSS.
LOADS = re.compile(r"""<script[^>]*\ssrc="([^"]+)"|<link[^>]*\shref="([^"]+)"|<img[^>]*\ssrc="([^"]+)"|"""
                   r"""url\(\s*['"]?([^'")]+)""")


@pytest.mark.docs
def test_nothing_is_loaded_from_the_internet(built):
    remote = set()
    files = [*built.rglob("*.html"), *built.rglob("*.css"), *built.rglob("*.js")]
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".js":  # a script that loads another one names it in a string; look for a CDN host
            remote |= {f"{path.name}: {host}" for host in re.findall(r"https?://(?:cdn|fonts|ajax)[\w.-]*", text)}
            continue
        for groups in LOADS.findall(text):
            target = next(g for g in groups if g)
            if re.match(r"(https?:)?//", target):
                remote.add(f"{path.relative_to(built)}: {target}")
    assert not remote, f"assets loaded from the internet: {sorted(remote)[:20]}"
    page = (built / "derivations" / "vg_mf.html").read_text(encoding="utf-8")
    assert "_static/katex/katex.min.js" in page and (built / "_static" / "katex" / "katex.min.js").is_file()


def _python_blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.S)


@pytest.mark.docs
def test_the_scikit_learn_cell_runs_and_gives_intervals():
    pytest.importorskip("sklearn")
    import numpy as np

    fit, five, *_ = _python_blocks("user_guide/sklearn.md")
    assert len(five.strip().splitlines()) == 5
    namespace: dict[str, object] = {}
    exec(compile(fit, "docs/user_guide/sklearn.md", "exec"), namespace)   # gpr and X_test, defined on the page
    exec(compile(five, "docs/user_guide/sklearn.md", "exec"), namespace)
    low, high, mean, std = (namespace[k] for k in ("low", "high", "mean", "std"))
    assert low.shape == high.shape == (40,) and np.all(low < high)
    assert mean.shape == std.shape == (7,) and np.all(std > 0)


@pytest.mark.docs
def test_the_library_examples_run(one_blas_thread):
    """The low-rank and the fast-bootstrap examples of the library page agree with what they stand for (the dense
    example is the README's, which tests/test_readme.py runs)."""
    from explorer.bootstrap import replica

    blocks = _python_blocks("user_guide/library.md")
    assert len(blocks) == 3
    low_rank: dict[str, object] = {}
    exec(compile(blocks[1], "docs/user_guide/library.md", "exec"), low_rank)
    error = low_rank["curve"].errors[0]  # ADATAP on ΦΦᵀ within 4 standard errors of its Monte-Carlo plus 3 %
    assert low_rank["sol"].converged
    assert abs(replica.bootstrap_test_error(low_rank["sol"]) - error.value) < 4 * error.se + 0.03 * error.value
    fast: dict[str, object] = {}
    exec(compile(blocks[2], "docs/user_guide/library.md", "exec"), fast)
    res = fast["res"]  # both bootstraps select a complexity of the grid, the fast one with fewer models
    assert res.full.selected in res.full.grid and 0 < res.gain < 1
