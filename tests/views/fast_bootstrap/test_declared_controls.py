"""The fast-bootstrap controls are declared once, in the state (issue 38): the sidebar, its visibility rules, the
link, the parameters that start a recompute, the model's options, the paper's values and the settings JSON are
derived from the declarations, and they equal what the page listed by hand before (copied here as references)."""
import itertools
import json

import panel as pn
import param
import pytest

from explorer.fast_bootstrap.problem import MODELS, TABLE_1, TABLE_2
from explorer.views import fast_bootstrap as V
from explorer.views.common.state import declarations, links
from explorer.views.common.state.declarations import control
from explorer.views.fast_bootstrap import exports
from explorer.views.fast_bootstrap.state import RUNS
from tests.views.fast_bootstrap.settings import SMALL

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

#: The sidebar as the tab wrote it by hand: headings, the controls (by name), the upload and the reset button.
OLD_SIDEBAR = (
    "### Data", "dataset", "n_points", "upload", "series_csv", "series_column", "lags",
    "### Model", "model", "lengthscale", "wsf", "max_epochs", "n_init",
    "### Grids (Tables 1-2)", "full_start", "full_stop", "full_step", "full_replications", "fast_start", "fast_stop",
    "fast_step", "fast_replications", "log_complexity", "reset",
    "### F test, eq. (11)", "kappa0", "kappa1",
    "### Runs", "with_full", "with_replica", "replica_points", "auto_run", "seed")
#: The controls whose change made the state refresh (its hand-written watch list).
OLD_COMPUTE = {"dataset", "n_points", "series_csv", "series_column", "lags", "model", "full_start", "full_stop",
               "full_step", "full_replications", "fast_start", "fast_stop", "fast_step", "fast_replications",
               "log_complexity", "kappa0", "kappa1", "lengthscale", "wsf", "max_epochs", "n_init", "with_full",
               "with_replica", "replica_points", "auto_run", "seed"}
#: A small time series CSV (rows in time order).
SERIES_CSV = b"t,value\n" + b"".join(f"{i},{(7 * i) % 13}\n".encode() for i in range(60))


def _old_settings(state) -> dict:
    """The settings JSON as the exports wrote it by hand."""
    out = {"dataset": state.dataset, "model": state.model, **_old_options(state), "seed": int(state.seed),
           "full_grid": [state.full_start, state.full_stop, state.full_step],
           "full_replications": int(state.full_replications),
           "fast_grid": [state.fast_start, state.fast_stop, state.fast_step],
           "fast_replications": int(state.fast_replications), "log_complexity": bool(state.log_complexity),
           "kappa0": int(state.kappa0), "kappa1": int(state.kappa1)}
    if state.dataset in ("toy", "teacher"):
        out["n_points"] = int(state.n_points)
    if state.dataset == V.SERIES:
        file = state.series_file
        out.update(series_csv=state.series_csv, **({} if file is None else {"file": file.filename,
                                                                             "sha256": file.sha256}),
                   series_column=state.series_column, lags=int(state.lags))
    return out


def _old_options(state) -> dict:
    """The model's options as the state wrote them by hand."""
    if state.model == "ls-svm":
        return {"lengthscale": float(state.lengthscale) if state.lengthscale > 0 else None}
    if state.model == "rbfn":
        return {"wsf": float(state.wsf)}
    return {"max_epochs": int(state.max_epochs), "n_init": int(state.n_init)}


def _old_visible(state, name: str) -> bool:
    """Whether the tab showed the control ``name`` (its hand-written rules)."""
    series, model = state.dataset == V.SERIES, state.model
    rules = {"n_points": state.dataset in ("toy", "teacher"), "series_column": series, "lags": series,
             "series_csv": series and len(state.param.series_csv.objects) > 1, "lengthscale": model == "ls-svm",
             "with_replica": model == "ls-svm", "replica_points": model == "ls-svm", "wsf": model == "rbfn",
             "max_epochs": model == "mlp", "n_init": model == "mlp"}
    return rules.get(name, True)


def _sidebar(tab) -> tuple:
    """The sidebar's items: a heading's text, else the name of the control, upload or button it shows."""
    names = {id(widget): name for name, widget in tab.widgets.items()}
    names.update({id(tab.upload): "upload", id(tab.reset): "reset"})
    return tuple(item.object if isinstance(item, pn.pane.Markdown) else names[id(item)]
                 for item in tab.controls.objects)


def test_the_sidebar_is_the_one_written_by_hand():
    tab = V.FastBootstrapTab(state=V.FastBootstrapState())
    assert _sidebar(tab) == OLD_SIDEBAR
    assert tab.controls.css_classes == ["explorer-fastboot-controls"] and tab.controls.sizing_mode == "stretch_width"
    for name, widget in tab.widgets.items():  # the widget of the parameter's type, its label and CSS class
        assert widget.css_classes == [f"explorer-fastboot-{name.replace('_', '-')}"]
        assert widget.name == tab.state.param[name].label
    kinds = {name: type(widget).__name__ for name, widget in tab.widgets.items()}
    assert kinds["dataset"] == kinds["series_csv"] == "Select" and kinds["series_column"] == "TextInput"
    assert kinds["lengthscale"] == "FloatInput" and kinds["seed"] == "IntInput" and kinds["auto_run"] == "Checkbox"


@pytest.mark.parametrize("folder", [False, True])
def test_the_visible_controls_follow_the_old_rules(folder, tmp_path):
    if folder:
        (tmp_path / "laser.csv").write_bytes(SERIES_CSV)
    state = V.FastBootstrapState(data_dir=str(tmp_path) if folder else None)
    tab = V.FastBootstrapTab(state=state)
    for dataset, model in itertools.product(("toy", "teacher", "boston", V.SERIES), MODELS):
        state.param.update(dataset=dataset, model=model)  # changes, through the watchers
        shown = {name: widget.visible for name, widget in tab.widgets.items()}
        assert shown == {name: _old_visible(state, name) for name in tab.widgets}, (dataset, model)
        assert tab.upload.visible == (dataset == V.SERIES) and tab.runs["run-replica"].visible == (model == "ls-svm")
    assert not state.started  # showing and hiding computes nothing


def test_links_and_recomputes_follow_the_declarations():
    state = V.FastBootstrapState()
    sidebar = tuple(name for name in OLD_SIDEBAR if not name.startswith("#") and name not in ("upload", "reset"))
    assert links.link_parameters(state) == sidebar  # the URL carries what it carried, in the same order
    assert set(declarations.invalidating(state)) == OLD_COMPUTE
    # the settings JSON: what the fast bootstrap's result depends on, not the switches of the other jobs
    assert set(declarations.invalidating(state, "fast")) == OLD_COMPUTE - {"with_full", "with_replica",
                                                                             "replica_points", "auto_run"}


@pytest.mark.parametrize("settings", [{}, {"lengthscale": 0.3}, {"model": "rbfn", "wsf": 2.5},
                                      {"model": "mlp", "dataset": "teacher", "n_init": 2},
                                      {"dataset": "boston", "full_start": 4}])
def test_model_options_and_settings_json_equal_the_old_ones(settings):
    state = V.FastBootstrapState(**settings)
    assert state.model_options() == _old_options(state)
    assert [type(v) for v in state.model_options().values()] == [type(v) for v in _old_options(state).values()]
    assert json.loads(json.dumps(exports.settings(state))) == json.loads(json.dumps(_old_settings(state)))


@pytest.mark.parametrize("folder", [False, True])
def test_a_series_settings_json_equals_the_old_one(folder, tmp_path):
    if folder:
        (tmp_path / "laser.csv").write_bytes(SERIES_CSV)
        state = V.FastBootstrapState(data_dir=str(tmp_path), dataset=V.SERIES, series_csv="laser.csv", lags=4)
    else:
        state = V.FastBootstrapState()
        state.upload_series("mine.csv", SERIES_CSV)
    got = exports.settings(state)
    assert got == _old_settings(state) and got["sha256"] and got["lags"] == (4 if folder else 6)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("dataset", ["toy", V.SERIES])
def test_reset_to_paper_sets_the_paper_values(model, dataset):
    state = V.FastBootstrapState(model=model, dataset=dataset)
    state.param.update(full_start=3.0, full_replications=7, fast_step=2.0, log_complexity=not state.log_complexity,
                       kappa0=0, kappa1=3)
    state.reset_to_paper()
    paper = (TABLE_2 if dataset == V.SERIES else TABLE_1)[model]
    got = (state.full_start, state.full_stop, state.full_step, state.full_replications, state.fast_start,
           state.fast_stop, state.fast_step, state.fast_replications, state.log_complexity, state.kappa0, state.kappa1)
    assert got == (*paper.full_grid, paper.full_replications, *paper.fast_grid, paper.fast_replications,
                   paper.log_complexity, 1, 2)
    assert [type(v) for v in got] == [float] * 3 + [int] + [float] * 3 + [int, bool, int, int]


class _WithExtra(V.FastBootstrapState):
    extra = param.Integer(default=4, bounds=(1, 9), label="Extra", doc="A control declared once, for the test.",
                          metadata=control(RUNS, invalidates=("fast",)))


def test_a_control_declared_once_is_in_the_sidebar_link_settings_and_recomputes():
    state = _WithExtra(**{**SMALL, "with_full": False, "with_replica": False})
    tab = V.FastBootstrapTab(state=state)
    assert _sidebar(tab) == (*OLD_SIDEBAR, "extra")
    assert tab.widgets["extra"].css_classes == ["explorer-fastboot-extra"]
    assert links.link_parameters(state)[-1] == "extra" and exports.settings(state)["extra"] == 4
    state.refresh()
    assert state.wait(timeout=60) and state.fast is not None
    calls = []
    state.refresh = lambda: calls.append(True)  # the instance's own method, not a library's
    state.extra = 5
    assert calls == [True]
    state.close()
