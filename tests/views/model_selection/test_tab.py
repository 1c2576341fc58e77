"""The GP model-selection tab ([Fis16]) and its Experiments sub-panel, built without a server."""

import json

import pytest

from explorer.views import model_selection as V
from explorer.views.model_selection.figures import settings_text
from tests.views.model_selection.settings import small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

def test_tab_builds_without_a_server():
    pn = pytest.importorskip("panel")
    state = small_state()
    tab = V.SelectionTab(state=state)
    layout = pn.panel(tab)  # renders the tab: starts the jobs
    assert state.started
    assert state.wait(timeout=60)  # without a server the jobs' updates are applied by ``wait``
    assert layout.get_root() is not None
    assert "N = 32 training cases" in tab.status.object
    assert tab.cancel.disabled
    downloads = {d.filename: d for d in tab.downloads}
    data = state.dataset  # e.g. model-selection-criteria-curves_teacher.csv
    assert downloads[f"model-selection-criteria-curves_{data}.csv"].callback().getvalue().splitlines()[0].startswith(
        "criterion,")
    assert list(tab.tables["ranking"].object["kernel"]) != []
    # the settings behind the plain CSVs, as JSON beside them
    settings = json.loads(downloads[f"settings_model-selection_{data}.json"].callback().getvalue())
    assert settings == json.loads(settings_text(state)) and settings["settings"]["n_points"] == 32
    # the tables one above the other, the ranking says which way is better
    content = tab.content()
    headings = [o.object for o in content.select(pn.pane.Markdown) if str(o.object).startswith("####")]
    assert "#### Ranking of functional forms (rank 1 = lowest = best)" in headings


def test_a_figure_with_other_layers_is_drawn_anew_and_one_with_the_same_layers_in_place():
    """Given other layers, HoloViews would add renderers and move the legend of the figure on the page in two
    messages, which a browser still building that figure lays out before the legend's view exists ("cannot find a
    view for Legend"): the tab then shows a new figure, and updates the one shown only when the layers stay."""
    pn = pytest.importorskip("panel")
    from explorer.views.common.layout.widgets import layers
    state = small_state(auto_run=False)
    tab = V.SelectionTab(state=state)
    pn.panel(tab).get_root()
    empty = tab.plots["curves"].object
    assert [label for _, label in layers(empty[()])] == [""]  # no results yet: one empty curve
    state.param.update(auto_run=True)
    state.run()
    assert state.wait(timeout=60)
    drawn = tab.plots["curves"].object
    assert drawn is not empty  # the curves and their legend came: a new figure
    assert {label for _, label in layers(drawn[()])} >= {"evidence", "loo"}
    revision = tab.streams["curves"].revision
    state.curves = state.curves  # the same criteria again (e.g. a partial result followed by the final one)
    assert tab.plots["curves"].object is drawn and tab.streams["curves"].revision == revision + 1


#: A small experiment (as in test_experiments.py).
TINY = dict(repetitions=2, criteria=["evidence", "loo", "asc-beta-noise"], n_partitions=2, n_objects=4,
            n_restarts=1, max_iter=4)


def test_experiments_panel_builds_runs_and_hides_unused_controls():
    pn = pytest.importorskip("panel")
    tab = V.SelectionTab(state=small_state(auto_run=False, criteria=["evidence"], rank_kernels=["se"]),
                         experiments=V.SelectionExperimentState(**{**TINY, "experiment": "curves", "repetitions": 1}))
    root = pn.panel(tab).get_root()
    panel = tab.experiments_panel
    assert root is not None and tab.experiments.started and panel.cancel.disabled
    visible = {name for name, w in panel.widgets.items() if w.visible}
    assert {"parameter", "criteria", "repetitions"} <= visible and not {"teacher", "select_by", "data"} & visible
    panel.run.clicks += 1
    assert tab.experiments.wait(timeout=300) and tab.state.wait(timeout=300)  # Dask workers on a busy machine
    message, progress = panel.indicators.message["experiment"], panel.indicators.progress["experiment"]
    assert message.object == "experiment: done" and progress.value == 100
    assert message.css_classes == ["explorer-experiment-job-message"]  # the names the browser test and tour use
    assert list(panel.table.object["criterion"]) == TINY["criteria"]
    tab.experiments.param.update(experiment="hyperparameters", data="temperature")
    assert panel.upload.visible and panel.error.visible
    assert not panel.widgets["temperature_csv"].visible  # no data folder: no server file to choose
    download = next(d for d in panel.downloads if d.filename.endswith(".json"))
    assert download.callback().getvalue().startswith("{")
    # named when clicked: what the experiment is, on which data
    assert download.filename == "model-selection-experiment_hyperparameters_temperature.json"
