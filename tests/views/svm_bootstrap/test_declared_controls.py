"""The SVM page's controls are declared once, in its state (issue 38 item 1): the sidebar, the watch list, the link
and the settings JSON derived from the declarations equal what the page wrote by hand before."""
import json

import numpy as np
import param
import pytest

pn = pytest.importorskip("panel")

from explorer.views import svm_bootstrap as V  # noqa: E402
from explorer.views.common.files.uploads import UPLOAD, file_settings  # noqa: E402
from explorer.views.common.state import declarations  # noqa: E402
from explorer.views.common.state.declarations import control  # noqa: E402
from explorer.views.common.state.links import link_parameters  # noqa: E402

pytestmark = pytest.mark.usefixtures("empty_view_caches")

#: The controls as the tab listed them by hand before (also the link's parameters, in order).
OLD_CONTROLS = ("dataset", "target", "lengthscale", "curve_grid", "curve_mc_samples", "s_over_n", "mc_samples",
                "holdout", "test_index", "seed", "auto_mc")
#: The state's hand-written watch list before: every control but ``test_index``.
OLD_COMPUTE = ("dataset", "target", "lengthscale", "curve_grid", "curve_mc_samples", "s_over_n", "mc_samples",
               "holdout", "seed", "auto_mc")
#: The hand-written sidebar before: headings, the upload's line and the controls by name.
UPLOAD_LINE = "Upload a two-class CSV (header row, numeric inputs):"
OLD_SIDEBAR = ("### Data", "dataset", UPLOAD_LINE, "<upload>", "target", "### Kernel", "lengthscale",
               "### Learning curve", "curve_grid", "curve_mc_samples",
               "### Field at a test input", "s_over_n", "mc_samples", "holdout", "test_index",
               "### Monte-Carlo", "seed", "auto_mc")
OLD_KINDS = {"dataset": pn.widgets.Select, "target": pn.widgets.Select, "lengthscale": pn.widgets.FloatInput,
             "curve_grid": pn.widgets.MultiChoice, "curve_mc_samples": pn.widgets.IntInput,
             "s_over_n": pn.widgets.FloatInput, "mc_samples": pn.widgets.IntInput, "holdout": pn.widgets.IntInput,
             "test_index": pn.widgets.IntInput, "seed": pn.widgets.IntInput, "auto_mc": pn.widgets.Checkbox}


def _old_settings(state: V.SVMState) -> dict:
    """The settings JSON as ``figures.settings`` wrote it by hand before (the reference)."""
    out = {"dataset": state.dataset, "kernel": "squared_exponential", "lengthscale": float(state.lengthscale),
           "curve_grid": sorted(float(v) for v in state.curve_grid), "curve_mc_samples": int(state.curve_mc_samples),
           "s_over_n": float(state.s_over_n), "mc_samples": int(state.mc_samples), "holdout": int(state.holdout),
           "test_index": int(state.index), "seed": int(state.seed)}
    if state.dataset == UPLOAD:
        out.update(target=state.target, **file_settings(state.uploaded_file))
    return out


def _items(column: pn.Column, tab: V.SVMTab) -> list[str]:
    """The sidebar's items by what they are: a heading or line by its text, a control by its name."""
    names = {id(widget): name for name, widget in tab.widgets.items()}
    out = []
    for item in column.objects:
        if id(item) in names:
            out.append(names[id(item)])
        elif item is tab.upload:
            out.append("<upload>")
        else:
            out.append(item.object)
    return out


def _blobs(n: int = 40) -> str:
    rng = np.random.default_rng(4)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = rng.normal(size=(n, 2)) + 1.5 * y[:, None]
    return "x1,x2,label\n" + "\n".join(f"{a:.6f},{b:.6f},{'A' if c > 0 else 'B'}" for (a, b), c in zip(X, y))


def test_the_declared_sidebar_is_the_old_hand_written_one():
    tab = V.SVMTab(state=V.SVMState())
    column = tab.control_column()
    assert _items(column, tab) == list(OLD_SIDEBAR)
    assert column.css_classes == ["explorer-svm-controls"] and column.sizing_mode == "stretch_width"
    for name, kind in OLD_KINDS.items():
        widget = tab.widgets[name]
        assert type(widget) is kind, name
        assert widget.css_classes == [f"explorer-svm-{name.replace('_', '-')}"]
        assert widget.name == V.SVMState.param[name].label
    tab.state.close()


def test_the_target_column_shows_only_for_an_upload():
    state = V.SVMState()
    tab = V.SVMTab(state=state)
    assert not tab.widgets["target"].visible and tab.widgets["dataset"].visible
    state.upload_csv("blobs.csv", _blobs(), target="label")
    assert state.dataset == UPLOAD and tab.widgets["target"].visible
    state.dataset = "crabs"
    assert not tab.widgets["target"].visible
    assert all(tab.widgets[name].visible for name in OLD_CONTROLS if name != "target")
    state.close()


def test_links_and_watch_list_are_the_old_lists():
    state = V.SVMState()
    assert link_parameters(state) == OLD_CONTROLS
    assert declarations.invalidating(state) == OLD_COMPUTE
    assert declarations.view_options(state) == ("test_index",)  # the field figure redraws for it, nothing more
    assert declarations.invalidating(state, "curve") == ("dataset", "target", "lengthscale", "curve_grid",
                                                         "curve_mc_samples", "seed", "auto_mc")
    state.close()


def test_a_view_option_computes_nothing_and_a_setting_refreshes():
    state = V.SVMState(auto_mc=False, holdout=5)
    refreshes = []
    state.refresh = lambda: refreshes.append(1)  # the state's own method, on this instance only
    state._started = True
    state.test_index = 2
    assert refreshes == []
    state.lengthscale = 2.0
    assert refreshes == [1]
    state.close()


@pytest.mark.parametrize("upload", [False, True])
def test_the_settings_json_is_the_old_hand_written_one(upload):
    state = V.SVMState(curve_grid=[2.0, 0.5], lengthscale=2, holdout=5, test_index=3, seed=7)
    if upload:
        state.upload_csv("blobs.csv", _blobs(), target="label")
    got = V.settings(state)
    want = _old_settings(state)
    assert got == want
    assert json.loads(V.settings_text(state))["settings"] == json.loads(json.dumps(want))
    assert type(got["lengthscale"]) is float and got["curve_grid"] == [0.5, 2.0]
    if not upload:  # the same keys in the same order (an upload's target now follows the dataset)
        assert list(got) == list(want)
    state.close()


class _WiderState(V.SVMState):
    """The SVM state with one more control, declared once."""

    margin = param.Number(default=0.5, bounds=(0.0, 1.0), label="Margin", doc="A control added for the test.",
                          metadata=control("Kernel", invalidates=("problem",)))


def test_a_new_control_declared_once_is_in_the_sidebar_the_link_and_the_settings():
    state = _WiderState()
    tab = V.SVMTab(state=state)
    items = _items(tab.control_column(), tab)
    assert items[items.index("lengthscale") + 1] == "margin"
    assert type(tab.widgets["margin"]) is pn.widgets.FloatInput
    assert link_parameters(state)[-1] == "margin" and "margin" in declarations.invalidating(state, "problem")
    assert V.settings(state)["margin"] == 0.5
    state.close()
