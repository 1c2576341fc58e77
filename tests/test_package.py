"""The package installs anywhere (issue 37): one version, a wheel and an sdist, and the wheel working from a fresh venv.

The fast tests (default suite) check that the version is written in one place and that ``explorer --version`` prints
it. The ``package`` tests (``pytest -m package tests/test_package.py``, run by ``.ci/run``) build the sdist and the
wheel from it with ``python -m build``, install the wheel with its ``sklearn`` extra into a fresh virtual environment
(dependencies from the package index) and run it from a folder outside the checkout: ``explorer --version``, the
shipped data sets, ``explorer learning-curve --json`` (the same numbers as the checkout), ``import explorer.sklearn``
and ``explorer serve`` with its static files over HTTP.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest

import explorer
from explorer import datasets
from explorer.cli import main
from tests.conftest import free_port, wait_for_http

ROOT = Path(__file__).resolve().parents[1]
DIST_NAME = "resampling_explorer"  # the project name "resampling-explorer" as file names spell it
#: A quick learning curve: one S/N, a few hundred Monte-Carlo samples (about a second).
CURVE_ARGS = ("learning-curve", "--dataset", "boston", "--s-over-n", "1", "--mc-samples", "200", "--seed", "0",
              "--json")
#: Prints, for every shipped table, its shape and a digest of its numbers (compared between wheel and checkout).
DIGEST_SCRIPT = """
import hashlib, json
from explorer import datasets
shipped = [name for name in datasets.available() if name not in datasets.GENERATED]
def digest(d):
    return [list(d.inputs.shape), hashlib.sha256(d.inputs.tobytes() + d.targets.tobytes()).hexdigest()]
print(json.dumps({name: digest(datasets.load(name)) for name in shipped}))
"""


# ------------------------------------------------------------------ the version, in one place (default suite)

def test_version_is_written_once_in_explorer_init():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "explorer/__init__.py"
    init = (ROOT / "explorer" / "__init__.py").read_text(encoding="utf-8")
    assert re.findall(r'^__version__ = "([^"]+)"$', init, re.M) == [explorer.__version__]
    assert re.fullmatch(r"\d+\.\d+\.\d+([a-z]+\d+)?", explorer.__version__)


def test_cli_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"explorer {explorer.__version__}"


# ------------------------------------------------------------------ the built packages (marker `package`)

def _run(args, *, cwd: Path, timeout: float = 900, env: dict | None = None) -> str:
    """Run ``args`` in ``cwd`` and return its stdout; fail the test with its output if it exits non-zero."""
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))[:200]} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n"
                    f"{proc.stderr[-3000:]}")
    return proc.stdout


def _outside_env() -> dict:
    """The environment of a user outside the checkout: no PYTHONPATH (the checkout never on sys.path), one BLAS
    thread (as the CLI and the tests use), no server data folder or scheduler of ours."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "EXPLORER_DATA_DIR", "EXPLORER_SCHEDULER", "VIRTUAL_ENV"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "OPENBLAS_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """``python -m build`` of the checkout: the sdist, and the wheel built from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    try:
        import build  # noqa: F401  (the `test` extra installs it)
    except ImportError:
        pytest.fail("the `build` package is missing: pip install -e '.[test]' installs it")
    _run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=out)
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture(scope="module")
def venv_bin(dists, tmp_path_factory) -> Path:
    """A fresh virtual environment (no system site-packages) with the wheel and its ``sklearn`` extra installed."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", venv], cwd=venv)
    bin_ = venv / "bin"
    _run([bin_ / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{dists['wheel']}[sklearn]"],
         cwd=venv, env=_outside_env(), timeout=1800)
    return bin_


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory) -> Path:
    """A working folder outside the checkout."""
    folder = tmp_path_factory.mktemp("elsewhere")
    assert ROOT not in folder.parents
    return folder


def _tracked_files() -> list[str]:
    """The files git tracks in the checkout that exist in the work tree (empty without git)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return []
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def _linked_folders() -> list[Path]:
    """The folders under docs/ that are symlinks to folders of the tree (e.g. docs/notebooks -> ../notebooks)."""
    found = []
    for root, dirs, _ in os.walk(ROOT / "docs"):  # does not descend into the links
        found += [Path(root, d) for d in dirs if Path(root, d).is_symlink() and ROOT in Path(root, d).resolve().parents]
    return found


@pytest.mark.package
def test_sdist_holds_the_source_tree_the_tests_and_docs_need(dists):
    with tarfile.open(dists["sdist"]) as sdist:
        prefix = f"{DIST_NAME}-{explorer.__version__}/"
        names = {name.removeprefix(prefix) for name in sdist.getnames() if sdist.getmember(name).isfile()}
    needed = {"pyproject.toml", "README.md", "PKG-INFO", "explorer/__init__.py", "explorer/cli/__init__.py",
              "tests/conftest.py", "tests/test_package.py", "datasets/PROVENANCE.md", "datasets/boston.csv",
              "datasets/diamonds.csv.gz", "docs/linear_response.md", ".ci/run"}
    assert needed <= names, sorted(needed - names)
    assert any(name.startswith("notebooks/") and name.endswith(".ipynb") for name in names)
    missing = sorted(set(_tracked_files()) - names)  # everything git tracks (the whole tree a developer has)
    assert not missing, missing
    for link in _linked_folders():  # docs/notebooks -> ../notebooks: the files in both places
        source, copy = (path.relative_to(ROOT).as_posix() + "/" for path in (link.resolve(), link))
        expected = {copy + name.removeprefix(source) for name in names if name.startswith(source)}
        assert expected and expected <= names, (copy, sorted(expected - names))
    assert not [name for name in names if re.match(r"(\.venv|\.hypothesis|\.pytest_cache|dist|build)/", name)
                or "__pycache__" in name]


@pytest.mark.package
def test_wheel_holds_the_package_its_data_and_its_command(dists):
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        names = set(wheel.namelist())
        info = f"{DIST_NAME}-{explorer.__version__}.dist-info/"
        metadata = wheel.read(info + "METADATA").decode()
        entry_points = wheel.read(info + "entry_points.txt").decode()
    assert {"explorer/__init__.py", "explorer/cli/__main__.py", "explorer/app/__init__.py"} <= names
    shipped = {f"explorer/_data/{path.name}" for path in (ROOT / "datasets").iterdir() if path.is_file()}
    assert "explorer/_data/boston.csv" in shipped and shipped <= names, sorted(shipped - names)
    assert not [name for name in names if name.split("/")[0] in ("tests", "datasets", "notebooks", "benchmarks")]
    assert f"\nVersion: {explorer.__version__}\n" in metadata
    assert "Provides-Extra: sklearn" in metadata
    assert re.search(r"^explorer = explorer\.cli:run$", entry_points, re.M)


@pytest.mark.package
def test_installed_wheel_is_what_runs_outside_the_checkout(venv_bin, elsewhere):
    where = _run([venv_bin / "python", "-c", "import explorer, sys; print(explorer.__file__); print(sys.path)"],
                 cwd=elsewhere, env=_outside_env()).splitlines()
    assert Path(where[0]).is_relative_to(venv_bin.parent), where[0]
    assert str(ROOT) not in where[1]
    version = _run([venv_bin / "explorer", "--version"], cwd=elsewhere, env=_outside_env())
    assert version.strip() == f"explorer {explorer.__version__}"


@pytest.mark.package
def test_installed_wheel_loads_the_shipped_data_as_the_checkout_does(venv_bin, elsewhere):
    installed = json.loads(_run([venv_bin / "python", "-c", DIGEST_SCRIPT], cwd=elsewhere, env=_outside_env()))
    here = {name: [list(d.inputs.shape), hashlib.sha256(d.inputs.tobytes() + d.targets.tobytes()).hexdigest()]
            for name in datasets.available() if name not in datasets.GENERATED
            for d in [datasets.load(name)]}
    assert installed == here and "boston" in installed and "diamonds" in installed


@pytest.mark.package
def test_installed_learning_curve_matches_the_checkout_and_monte_carlo(venv_bin, elsewhere):
    installed = json.loads(_run([venv_bin / "explorer", *CURVE_ARGS], cwd=elsewhere, env=_outside_env()))
    checkout = json.loads(_run([sys.executable, "-m", "explorer.cli", *CURVE_ARGS], cwd=ROOT, env=_outside_env()))
    assert installed["problem"] == "boston" and installed["n"] == 506
    row, ref = installed["rows"][0], checkout["rows"][0]
    assert row["converged"] and row["mc_samples"] == 200
    for key in ("theory", "theory_approx", "mc_mean", "mc_se", "loo_limit"):  # same seed, same numbers
        assert row[key] == pytest.approx(ref[key], rel=1e-6), key
    # ADATAP against its own Monte-Carlo (an independent computation): within 4 SE plus its known 4 % bias at S = N
    assert abs(row["theory"] - row["mc_mean"]) < 4 * row["mc_se"] + 0.05 * row["mc_mean"]


@pytest.mark.package
def test_installed_wheel_imports_the_sklearn_front_door(venv_bin, elsewhere):
    out = _run([venv_bin / "python", "-c", "import explorer.sklearn as s, sklearn; print(s.__file__)"],
               cwd=elsewhere, env=_outside_env())
    assert Path(out.strip()).is_relative_to(venv_bin.parent)


def _static_urls(page: str, base: str) -> list[str]:
    """The page's scripts and stylesheets that the server serves itself (``static/...``)."""
    refs = re.findall(r'(?:src|href)="((?:\./)?static/[^"]+)"', page)
    return sorted({urllib.parse.urljoin(base, ref) for ref in refs})


def _fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, response.read()


@pytest.mark.package
def test_installed_serve_answers_with_its_page_and_static_files(venv_bin, elsewhere):
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    command = [venv_bin / "explorer", "serve", "--port", str(port), "--no-show", "--no-warm-up", "--workers", "1"]
    with tempfile.TemporaryFile() as log:  # a file, not a pipe: a chatty server never blocks on a full pipe
        proc = subprocess.Popen([str(c) for c in command], cwd=elsewhere, env=_outside_env(), stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            wait_for_http(url, proc, log=log)
            status, body = _fetch(url)
            page = body.decode()
            assert status == 200 and "<title>Resampling Explorer" in page
            statics = _static_urls(page, url)
            assert any("bokeh" in u and u.split("?")[0].endswith(".js") for u in statics), statics
            assert any("/static/extensions/panel/" in u for u in statics), statics
            for static in statics:
                status, content = _fetch(static)
                assert status == 200 and len(content) > 0, static
        finally:
            proc.terminate()  # SIGTERM: the server stops its loop and its Dask worker, and exits 0
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.seek(0)
        said = log.read().decode(errors="replace")
    assert proc.returncode == 0, said[-2000:]
    assert "Traceback" not in said, said[-3000:]
