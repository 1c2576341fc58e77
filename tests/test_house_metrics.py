"""The numbers of issue 38 that ``benchmarks/house_metrics.py`` prints stay within their targets: the layer above
the core names each control once, replaces no third party's attribute outside ``explorer/runtime/compat.py`` (three
at most there), reads at most three private attributes of a third party, and has no class over 300 lines. And the
script counts what it says it counts (a module written for the test)."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def metrics():
    spec = importlib.util.spec_from_file_location("house_metrics", ROOT / "benchmarks" / "house_metrics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_layer_above_the_core_keeps_within_the_targets_of_issue_38(metrics):
    trees = metrics._trees()
    assert sum(metrics.control_repeats(trees).values()) <= 20
    assignments = metrics.third_party_assignments(trees)
    assert [a for a in assignments if not a.startswith("explorer/runtime/compat.py")] == []
    assert len(assignments) <= 3, assignments
    assert len(metrics.private_reads(trees)) <= 3, metrics.private_reads(trees)
    assert max(n for n, _ in metrics.largest_classes(trees)) <= 300


def test_the_script_counts_replaced_methods_and_private_reads_of_a_third_party(metrics):
    source = '''
import panel as pn
from panel.viewable import MimeRenderMixin

def handler(*args):
    return None

def wrap(function):
    return function

class Page(pn.template.FastListTemplate):
    _template = "page.html"

MimeRenderMixin._on_msg = wrap(MimeRenderMixin._on_msg)
server = pn.serve({}, start=False)
server.app.resources = handler
kept = server._tornado
ours = pn.theme.Fast._resources
'''
    trees = {ROOT / "explorer" / "example.py": ast.parse(source)}
    assert [a.split(" ")[1] for a in metrics.third_party_assignments(trees)] == [
        "MimeRenderMixin._on_msg", "server.app.resources"]
    assert [r.split(" ")[0] for r in metrics.private_reads(trees)] == ["_on_msg", "_resources", "_tornado"]
    assert [o.split(" ")[0] for o in metrics.private_overrides(trees)] == ["Page._template"]


def test_the_theory_keeps_the_numbers_of_issue_47(metrics):
    trees = metrics._trees()
    assert len(metrics.s_to_S_places(trees)) == 1  # KernelProblem.sample_size
    assert len(metrics.low_rank_builders(trees)) == 1  # problems.build_problem
    assert metrics.long_theory_modules(trees) == []
    assert len(metrics.noise_messages(trees)) <= 2, metrics.noise_messages(trees)  # the one rule's, sklearn's own
    switches = metrics.path_switches(trees)
    assert not [s for s in switches if "/bootstrap/" in s or "/operators/" in s], switches
    assert len(switches) <= 9, switches  # the app's and CLI's choices of what to show (none in an equation)


def test_the_script_counts_switches_places_messages_and_builders(metrics):
    source = '''
from explorer.gp_bootstrap.paths import is_low_rank

def solve(problem, v):
    if problem.low_rank:
        return v * problem.n
    if isinstance(problem, LowRankRegressionProblem):
        raise ValueError(f"`noise_var` must be positive, got {v}.")
    return is_low_rank(problem)

def build(X):
    return LowRankRegressionProblem(nystrom_features(X))
'''
    path = ROOT / "explorer" / "gp_bootstrap" / "example.py"
    trees = {path: ast.parse(source)}
    assert [s.split(" ", 1)[1] for s in metrics.path_switches(trees)] == [
        ".low_rank", "isinstance LowRankRegressionProblem", "is_low_rank"]
    assert metrics.s_to_S_places(trees) == ["explorer/gp_bootstrap/example.py:6"]
    assert list(metrics.noise_messages(trees)) == ["`noise_var` must be positive, got {}."]
    assert metrics.low_rank_builders(trees) == ["explorer/gp_bootstrap/example.py:build"]
