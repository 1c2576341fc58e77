"""The numbers of issue 38 that ``benchmarks/house_metrics.py`` prints stay within their targets: the layer above
the core names each control once, replaces no third party's attribute outside ``explorer/serving/compat.py`` (three
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
    assert [a for a in assignments if not a.startswith("explorer/serving/compat.py")] == []
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
