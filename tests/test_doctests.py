"""Run the docstring examples of every core module as doctests.

The core is every module of ``explorer`` outside ``explorer.views``, ``explorer.cli`` and
``explorer.app``. A wrong example fails the suite, and the main entry point of each paper must
carry at least one example.
"""
import doctest
import importlib
import pkgutil

import pytest

import explorer

_NOT_CORE = ("explorer.views", "explorer.serving", "explorer.cli", "explorer.app")

# The main entry point of each paper: its module must carry at least one example.
ENTRY_POINT_MODULES = {
    "explorer.bootstrap.replica",  # [MO03]: solve_replica
    "explorer.svm_bootstrap.svm_replica",  # [MO03b]: solve_svm_replica
    "explorer.model_selection.selection",  # [Fis16]: select_hyperparameters
    "explorer.fast_bootstrap.bootstrap",  # [LSWV05]: fast_bootstrap
}


def _is_core(name: str) -> bool:
    return not any(name == prefix or name.startswith(prefix + ".") for prefix in _NOT_CORE)


def _core_modules() -> list[str]:
    names = ["explorer"]
    for info in pkgutil.walk_packages(explorer.__path__, prefix="explorer."):
        if _is_core(info.name):
            names.append(info.name)
    return sorted(names)


CORE_MODULES = _core_modules()


def test_entry_point_modules_are_core() -> None:
    assert ENTRY_POINT_MODULES <= set(CORE_MODULES)


@pytest.mark.parametrize("name", CORE_MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (see above)"
    if name in ENTRY_POINT_MODULES:
        assert result.attempted > 0, f"{name} is a paper's entry point and must carry a runnable example"
